"""The installed vLLM's own answer beside the mirror's: the request that
``backends/run/probes/vllm_selection.py`` answers in the engine's Python, built from the
mirror's explanation (same model, device, flags and groups), and every
difference between its answer and the mirror's. Pure: running the
subprocess is ``cli/installed_engine.py``'s.

Compared per group: the priority list, every backend's reasons, the choice,
vLLM's error and ``--block-size`` warning, ``get_flash_attn_version`` as the
FlashAttention layer calls it and with no arguments, and FlashInfer's
``use_trtllm_attention`` for a decode and a prefill where FLASHINFER is
valid; per deployment, the engine config (dtype, KV-cache dtype, a backend
or FlashAttention version a model hook sets, head size and heads).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from attn_select.selector.explain import ENGINE_VERSION, Explanation, GroupExplanation

if TYPE_CHECKING:
    from attn_select.selector.config import Capability
    from attn_select.selector.overrides import Overrides


class InstalledGroup(NamedTuple):
    """One attention group as the installed vLLM selects it."""

    name: str
    selector_config: dict[str, Any]
    priorities: tuple[str, ...]
    reasons: dict[str, tuple[str, ...]]  # backend -> reasons, () = valid
    selected: str | None
    error: str | None
    warning: str | None
    fa_version: Any  # get_flash_attn_version as the layer calls it (int, None, or an error text)
    fa_version_noarg: Any
    trtllm: dict[str, Any] | None  # {"decode": bool, "prefill": bool} where exposed
    crash: str | None = None  # this release's code raised for this group
    # An MLA group's prefill decision ({"exposed": False}: not in this release)
    mla_prefill: dict[str, Any] | None = None

    def mla_prefill_asked(self) -> bool:
        """Whether the layer asks for a prefill backend at all: a sparse impl
        without a dense-MHA prefill path never does."""
        p = self.mla_prefill or {}
        return not (p.get("sparse") and not p.get("dense_mha_prefill"))

    def mla_prefill_error(self) -> str | None:
        """get_mla_prefill_backend's error as the layer takes it: a sparse
        layer without an explicit choice goes on without a prefill backend."""
        p = self.mla_prefill or {}
        if p.get("sparse") and p.get("explicit") is None:
            return None
        return p.get("error")


class Change(NamedTuple):
    """One difference, structured: ``group`` None for the engine config."""

    group: str | None
    field: str
    mirror: Any
    installed: Any

    def text(self, version: str) -> str:
        where = "engine config" if self.group is None else f"group {self.group}"
        if self.field == "raised":
            return f"{where}: vLLM {version}'s selection code raised {self.installed}"
        return f"{where}: {self.field}: mirror {_show(self.mirror)}, vLLM {version} {_show(self.installed)}"


class InstalledExplanation(NamedTuple):
    """``explain --engine vllm-installed``: the installed vLLM's own answer
    and its differences from the mirror (``mirror``)."""

    mirror: Explanation
    engine_version: str
    python: str
    stand_ins: tuple[str, ...]
    engine_config: dict[str, Any] | None
    groups: tuple[InstalledGroup, ...]
    differences: tuple[str, ...]
    error: str | None = None  # the engine config vLLM refused, as "Type: message"
    warnings: tuple = ()
    changes: tuple[Change, ...] = ()  # the differences, structured

    @property
    def ok(self) -> bool:
        # an MLA prefill error fails the layer's construction, as a backend error does
        return self.error is None and all(g.selected is not None and g.crash is None and g.mla_prefill_error() is None
                                          for g in self.groups)


# --- the request ----------------------------------------------------------------


def _fa_call(g: GroupExplanation) -> dict[str, Any] | None:
    """The arguments FlashAttentionImpl.__init__ passes to get_flash_attn_version."""
    attn = g.group.attn if g.group else None
    if g.cfg.use_mla:
        return None
    return {"requires_alibi": bool(attn and attn.use_alibi), "head_size": g.cfg.head_size,
            "has_sinks": g.cfg.has_sink, "requires_softcap": bool(attn and attn.logits_soft_cap),
            "supports_fa4_hd256": True}


def _trtllm_inputs(g: GroupExplanation) -> dict[str, Any] | None:
    d = g.flashinfer
    if d is None or not getattr(d, "q_dtype_decode", ""):
        return None
    attn = g.group.attn if g.group else None
    return {"num_qo_heads": attn.num_heads if attn else (g.num_heads or 32),
            "num_kv_heads": attn.num_kv_heads if attn else 8,
            "q_dtype_decode": d.q_dtype_decode, "q_dtype_prefill": d.q_dtype_prefill, "has_sinks": g.cfg.has_sink}


def case_for(r: Explanation, folder: str, load: dict[str, Any] | None = None) -> dict[str, Any]:
    """One request case: the model folder vLLM reads, the device, the
    user's engine flags (``load``: how a pasted vllm serve line reads the
    model), and the groups with their per-layer inputs."""
    groups = []
    for g in r.groups:
        groups.append({
            "name": g.name,
            "selector_config": dict(g.cfg._asdict()),
            "num_heads": g.num_heads,
            "layer_kv_cache_dtype": g.group.attn.kv_cache_dtype if g.group else None,
            "fa_call": _fa_call(g) or {},
            "trtllm": _trtllm_inputs(g),
        })
    return {**engine_case(r.overrides, r.device.capability, folder, load), "groups": groups}


def engine_case(ov: Overrides, cap: Capability, folder: str, load: dict[str, Any] | None = None) -> dict[str, Any]:
    """A request case without groups: what vLLM needs to build its engine
    config (enough to hear a refusal the mirror predicts)."""
    load = load or {}
    return {
        "capability": [cap.major, cap.minor],
        "model": {"folder": folder},
        "engine_args": {"dtype": ov.dtype or "auto", "kv_cache_dtype": ov.kv_cache_dtype or "auto",
                        "block_size": ov.block_size, "attention_backend": ov.backend,
                        "quantization": ov.quantization,
                        "tensor_parallel_size": ov.tp, "flash_attn_version": ov.flash_attn_version,
                        "use_trtllm_attention": ov.use_trtllm_attention,
                        "mla_prefill_backend": ov.mla_prefill_backend,
                        "decode_context_parallel_size": ov.dcp_size,
                        "prefill_context_parallel_size": ov.pcp_size,
                        "disable_sliding_window": load.get("disable_sliding_window") or None,
                        "language_model_only": True if load.get("mm_inputs") is False else None,
                        "trust_remote_code": load.get("trust_remote_code") or None},
        "batch_invariant": bool(ov.use_batch_invariant),
        "groups": [],
    }


def refusal_message(error: str) -> str:
    """The message of the exception vLLM refused its engine config with:
    pydantic wraps a config's ValueError as "Value error, TEXT [type=...]"
    under a "N validation error for ..." line, and a field's own validation
    error as "TEXT [type=...]"; anything else is "Type: TEXT"."""
    for line in error.splitlines():
        line = line.strip()
        if line.startswith("Value error, "):
            return line.removeprefix("Value error, ").split(" [type=")[0]
    lines = error.splitlines()
    if lines and " validation error" in lines[0]:
        found = next((ln.strip().split(" [type=")[0] for ln in lines[1:] if " [type=" in ln), None)
        if found:
            return found
    first = error.splitlines()[0] if error else error
    return first.split(": ", 1)[1] if ": " in first else first


def kernels_request(kernels: Any) -> dict[str, bool]:
    return {n.replace("-", "_"): getattr(kernels, n.replace("-", "_")) for n in kernels.NAMES}


# --- the answer and the comparison --------------------------------------------------


def installed_group(raw: dict[str, Any]) -> InstalledGroup:
    fa = raw.get("fa_version") or {}
    return InstalledGroup(
        name=raw["name"], selector_config=raw.get("selector_config") or {},
        priorities=tuple(raw.get("priorities") or ()),
        reasons={k: tuple(v) for k, v in (raw.get("reasons") or {}).items()},
        selected=raw.get("selected"), error=raw.get("error"), warning=raw.get("warning"),
        fa_version=fa.get("layer"), fa_version_noarg=fa.get("noarg"), trtllm=raw.get("trtllm"),
        crash=raw.get("crash"), mla_prefill=raw.get("mla_prefill"),
    )


def _mirror_trtllm(r: Explanation, g: GroupExplanation, inputs: dict[str, Any]) -> dict[str, bool]:
    from attn_select.selector.flashinfer_dispatch import use_trtllm_attention

    out = {}
    for phase, is_prefill, tokens in (("decode", False, 8), ("prefill", True, 2048)):
        ok, _ = use_trtllm_attention(
            r.device.capability, r.kernels, r.ctx, num_qo_heads=inputs["num_qo_heads"],
            num_kv_heads=inputs["num_kv_heads"], dcp_world_size=r.ctx.dcp_size, kv_cache_dtype=g.cfg.kv_cache_dtype,
            q_dtype=inputs["q_dtype_prefill" if is_prefill else "q_dtype_decode"], is_prefill=is_prefill,
            force=r.ctx.use_trtllm_attention, has_sinks=inputs["has_sinks"], num_tokens=tokens)
        out[phase] = ok
    return out


def _show(v: Any) -> str:
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(str(x) for x in v) + "]" if v else "valid"
    return "None" if v is None else str(v)


def compare_group(r: Explanation, g: GroupExplanation, mine: InstalledGroup) -> list[Change]:
    """Every difference between the mirror's group and the installed vLLM's."""
    out: list[Change] = []

    def diff(what: str, mirror: Any, installed: Any) -> None:
        if mirror != installed:
            out.append(Change(g.name, what, mirror, installed))

    if mine.crash is not None:
        out.append(Change(g.name, "raised", None, mine.crash.splitlines()[0]))
        return out
    sel = g.selection
    for field in ("dtype", "kv_cache_dtype", "block_size"):
        diff(f"selector_config.{field}", getattr(g.cfg, field), mine.selector_config.get(field))
    diff("priority list", list(sel.priority_order), list(mine.priorities))
    ours = {c.name: tuple(c.reasons) for c in sel.candidates}
    for name in list(ours) + [n for n in mine.reasons if n not in ours]:
        if ours.get(name) != mine.reasons.get(name):
            diff(f"{name} reasons", ours.get(name, "absent"), mine.reasons.get(name, "absent"))
    diff("selected", sel.selected, mine.selected)
    diff("error", sel.error, mine.error)
    diff("--block-size warning", sel.warning, mine.warning)
    if not g.cfg.use_mla:
        from attn_select.selector.fa_version import resolve_fa_version

        call = _fa_call(g) or {}
        layer = resolve_fa_version(r.device.capability, r.kernels, r.ctx, **call).version
        diff("FA version (the layer's call)", layer, mine.fa_version)
    diff("FA version (no-argument call)", g.fa_version_noarg.version, mine.fa_version_noarg)
    inputs = _trtllm_inputs(g)
    if inputs is not None and mine.trtllm is not None:
        mirror = _mirror_trtllm(r, g, inputs)
        for phase in ("decode", "prefill"):
            diff(f"FlashInfer trtllm {phase}", mirror[phase], mine.trtllm.get(phase))
    elif inputs is not None and ours.get("FLASHINFER") == () and mine.reasons.get("FLASHINFER") == ():
        out.append(Change(g.name, "FlashInfer trtllm decision", "compared", "not exposed by this release"))
    return out + compare_mla_prefill(g, mine)


def compare_mla_prefill(g: GroupExplanation, mine: InstalledGroup) -> list[Change]:
    """The MLA layer's prefill decision against the installed vLLM's. A
    release without MLA prefill selection has nothing to compare: the report
    says so, and it is no difference."""
    p, theirs = g.mla_prefill, mine.mla_prefill
    if p is None or theirs is None or not theirs.get("exposed"):
        return []
    out: list[Change] = []

    def diff(what: str, mirror: Any, installed: Any) -> None:
        if mirror != installed:
            out.append(Change(g.name, f"MLA prefill {what}", mirror, installed))

    asked = p.skipped is None
    diff("asked by the layer", asked, mine.mla_prefill_asked())
    if not (asked and mine.mla_prefill_asked()):
        return out
    diff("selector config", p.cfg.vllm_repr(), theirs.get("selector_config"))
    diff("priority list", list(p.priority_order), list(theirs.get("priorities") or ()))
    ours = {c.name: tuple(c.reasons) for c in p.candidates}
    installed = {k: tuple(v) for k, v in (theirs.get("reasons") or {}).items()}
    for name in list(ours) + [n for n in installed if n not in ours]:
        if ours.get(name) != installed.get(name):
            diff(f"{name} reasons", ours.get(name, "absent"), installed.get(name, "absent"))
    diff("selected", p.selected, theirs.get("selected"))
    diff("error", p.error, mine.mla_prefill_error())
    return out


def compare_engine_config(r: Explanation, facts: dict[str, Any]) -> list[Change]:
    """The deployment-level facts: what the mirror's engine-config replay and
    model reading give against vLLM's create_engine_config()."""
    out = []
    m = r.model
    mirror = {
        "cache_dtype": r.ctx.cache_dtype,
        "flash_attn_version": r.ctx.flash_attn_version,
        "backend": next((s.new for s in reversed(r.engine_config_trail) if s.field == "attention_config.backend"),
                        r.overrides.backend),
    }
    if m is not None:
        mirror.update(dtype=m.dtype, head_size=m.head_size, num_heads=m.num_heads, num_kv_heads=m.num_kv_heads)
    for key, value in mirror.items():
        theirs = facts.get(key)
        if key == "backend" and value is not None:
            value = str(value)
        if value != theirs:
            out.append(Change(None, key, value, theirs))
    return out


def engine_config_failure(version: str, error: str) -> str:
    """vLLM refuses a config with a ValueError (a pydantic ValidationError around it for
    VllmConfig); any other exception is that release's code failing here, not a refusal."""
    kind = error.partition(":")[0]
    if kind in ("ValueError", "ValidationError"):
        return f"vLLM {version} refuses this engine config: {error}"
    return f"vLLM {version} fails building this engine config (its own code raised): {error}"


@dataclass(frozen=True)
class RefusalComparison:
    """--engine vllm-installed when the 0.33.0 mirror refuses the engine
    config: what the installed vLLM said to the same config. Without the
    mirror's engine config there are no per-layer inputs to send, so only
    the engine configs are compared."""

    mirror_error: str  # the mirror's one-line refusal
    version: str
    python: str
    installed_error: str | None  # None: the installed vLLM builds it
    stand_ins: tuple[str, ...] = ()

    @property
    def same(self) -> bool:
        return self.installed_error is not None

    def both_refuse(self) -> str:
        """The one-line error when the installed release refuses too."""
        assert self.installed_error is not None
        kind = self.installed_error.partition(":")[0]
        verb = "refuses" if kind in ("ValueError", "ValidationError") else "fails building (its own code raised)"
        return (f"vLLM {self.version} in {self.python} {verb} this engine config, as the vLLM {ENGINE_VERSION} "
                f"mirror refuses it: {refusal_message(self.installed_error)}")

    def text(self) -> str:
        """The report when the installed release builds what the mirror refuses."""
        lines = [f"engine      vLLM {self.version} in {self.python} (its own code), against the vLLM "
                 f"{ENGINE_VERSION} mirror",
                 f"answer      vLLM {self.version} builds this engine config",
                 f"mirror      {self.mirror_error}",
                 "",
                 f"1 difference from the vLLM {ENGINE_VERSION} mirror:",
                 f"  {self.difference()}. The per-layer selection is not compared: attn-select reads the layers "
                 f"through vLLM {ENGINE_VERSION}'s engine config, which it refuses"]
        lines += [f"stand-in    {s}" for s in self.stand_ins]
        return "\n".join(lines) + "\n"

    def difference(self) -> str:
        return f"engine config: vLLM {ENGINE_VERSION} refuses it, vLLM {self.version} builds it"

    def to_dict(self) -> dict[str, Any]:
        return dict(engine="vllm-installed", vllm_version=self.version, python=self.python,
                    mirror_version=ENGINE_VERSION, mirror_error=self.mirror_error,
                    installed_error=self.installed_error, stand_ins=list(self.stand_ins),
                    differences=[] if self.same else [self.difference()])


def refusal_comparison(mirror_error: str, answer: dict[str, Any], python: str) -> RefusalComparison:
    """The installed vLLM's answer to an engine-only case (``engine_case``)
    beside the mirror's refusal of it."""
    case = answer["cases"][0]
    return RefusalComparison(mirror_error, answer.get("vllm_version") or "?", python, case.get("error"),
                             tuple(answer.get("stand_ins") or ()))


def installed_explanation(r: Explanation, answer: dict[str, Any], python: str,
                          extra_stand_ins: tuple[str, ...] = ()) -> InstalledExplanation:
    """The report for one deployment from the runner's answer."""
    version = answer.get("vllm_version") or "?"
    case = answer["cases"][0]
    stand_ins = tuple(answer.get("stand_ins") or ()) + extra_stand_ins
    if case.get("error") is not None:
        return InstalledExplanation(r, version, python, stand_ins, None, (), (
            engine_config_failure(version, case["error"]),), error=case["error"])
    groups = tuple(installed_group(g) for g in case["groups"])
    changes = compare_engine_config(r, case["engine_config"])
    for g, mine in zip(r.groups, groups):
        changes += compare_group(r, g, mine)
    return InstalledExplanation(r, version, python, stand_ins, case["engine_config"], groups,
                                tuple(c.text(version) for c in changes), changes=tuple(changes))
