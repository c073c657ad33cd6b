"""Evaluating deployments now: explain (and SGLang's resolution) for each
deployment's inputs, as lock groups. The ``Evaluator`` shares work across
deployments: equal inputs are explained once, models and devices are
loaded once.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from attn_select.selector.config import Capability
from attn_select.selector.device import Device
from attn_select.selector.errors import UserError, shown
from attn_select.selector.explain import Explanation, explain
from attn_select.selector.lock.deployments import DeploymentInputs, DeploymentsFile, given
from attn_select.selector.lock.lockfile import Lockfile, LockGroup, SGLangLock, make_lock, sglang_engine_id
from attn_select.selector.lock.yamlmarks import Loc, Located


def model_ref(spec: str, base_dir: Path) -> tuple[str, bool]:
    """(what to load, is_path): a file or folder next to the deployments
    file is a path; anything else goes to the profile loader as a name."""
    candidate = _candidate(spec, base_dir)
    try:
        exists = candidate.exists()
        # a symbolic link that loops or points nowhere is still a path the
        # user wrote: the model loader says what is wrong with it
        link = not exists and candidate.is_symlink()
    except (OSError, ValueError):  # too long, a folder we may not enter, a NUL: not a path
        exists = link = False
    if link:
        return str(candidate), True
    if exists:
        try:
            return str(candidate.resolve()), True
        except (OSError, RuntimeError):  # a link in the path loops (Python < 3.13 raises RuntimeError)
            return str(candidate), True
    return spec, False


def _candidate(spec: str, base_dir: Path) -> Path:
    return Path(spec) if os.path.isabs(spec) else base_dir / spec


def _check_model_name(spec: str, base_dir: Path) -> None:
    """A model that is no file or folder next to the deployments file (or
    lockfile) must be a profile: otherwise say which path is missing, so a
    local model folder that vanished is reported as missing, not as an
    unknown profile."""
    from attn_select.selector import profiles

    if profiles.has_model_profile(spec):
        return
    where = _candidate(spec, base_dir)
    try:
        where = where.resolve()
    except (OSError, ValueError, RuntimeError):  # RuntimeError: a symlink loop, Python < 3.13
        pass
    from attn_select.selector.errors import cut

    if profiles.is_hub_id(spec):
        raise UserError(f"no file or folder {cut(str(where), 200)} exists (model paths are relative to this file), "
                        f"and no built-in profile comes from a Hugging Face repo {spec!r}; attn-select does not "
                        "download: restore the folder or fix the path")
    if profiles.looks_like_path(spec):
        raise UserError(f"the model folder or file {cut(str(where), 200)} does not exist (model paths are relative "
                        "to this file); restore it or fix the path")
    profiles.load_model_profile(spec, also=f", and no file or folder {cut(str(where), 200)} exists")


def relative_model_path(spec: str, from_dir: Path, to_dir: Path) -> str:
    """A deployment's model path re-expressed relative to the lockfile's
    folder (profile names unchanged), so check finds it from there."""
    target, is_path = model_ref(spec, from_dir)
    if not is_path or os.path.isabs(spec):
        return spec
    try:
        where = to_dir.resolve()
    except (OSError, RuntimeError):  # a link in it loops (RuntimeError before Python 3.13): as written
        where = Path(os.path.abspath(to_dir))
    return Path(os.path.relpath(target, where)).as_posix()


class Evaluator:
    """Recomputes deployments, sharing work: one model load per (spec, tp),
    one device load per name, one explanation per distinct input."""

    def __init__(self, default_engine: str | None = None) -> None:
        self._models: dict[tuple[Any, ...], Any] = {}
        self._devices: dict[str, Device] = {}
        self._groups: dict[tuple[Any, ...], tuple[LockGroup, ...]] = {}
        self._sglang: dict[tuple[Any, ...], SGLangLock] = {}
        self.default_engine = default_engine or "vllm"  # for deployments that name none

    def _model(self, spec: str, tp: int, cap: Capability, base_dir: Path, revision: str | None = None,
               engine: str = "vllm", trust_remote_code: bool = False) -> Any:
        # The capability matters to the model: vLLM's "auto" dtype falls
        # back to float16 where bfloat16 is unsupported. The SGLang engine's
        # facts keep models vLLM refuses to select for (load_model's engine).
        key = (spec, tp, cap, revision, engine, trust_remote_code)
        if key not in self._models:
            from attn_select.selector.profiles import load_model

            from attn_select.selector import hub_cache

            # neither a path here nor a cached hub id: it must be a profile
            if not model_ref(spec, base_dir)[1] and hub_cache.find_cached(spec, revision) is None:
                _check_model_name(spec, base_dir)
            self._models[key] = load_model(spec, tp=tp, capability=cap, revision=revision, engine=engine,
                                           trust_remote_code=trust_remote_code)
        return self._models[key]

    def _device(self, inputs: DeploymentInputs) -> Device:
        if inputs.capability is not None:
            cap = Capability.parse(inputs.capability)
            return Device(name=f"SM{cap.to_int()}", capability=cap, source=f"capability {cap}")
        name = inputs.device
        if name not in self._devices:
            from attn_select.selector.profiles import load_device

            self._devices[name] = load_device(name)
        return self._devices[name]

    def _inputs(self, inputs: DeploymentInputs, base_dir: Path, doc: Located, loc: Loc) -> tuple[Any, ...]:
        """(model spec or None, device, kernels, overrides) of these inputs."""
        model_spec = None
        if inputs.model is not None:
            model_spec, _ = model_ref(inputs.model, base_dir)
        try:
            device = self._device(inputs)
        except UserError as exc:
            raise doc.error(loc + ("device",), str(exc)) from None
        return model_spec, device, inputs.kernels_value(), inputs.overrides_value()

    def explanation(self, inputs: DeploymentInputs, base_dir: Path, doc: Located, loc: Loc) -> Any:
        """The mirror's explanation for these inputs now. Problems with the
        inputs (unknown profile, bad value) are reported at their line in ``doc``."""
        model_spec, device, kernels, ov = self._inputs(inputs, base_dir, doc, loc)
        try:
            model = (self._model(model_spec, ov.tp, device.capability, base_dir, inputs.revision,
                                 trust_remote_code=bool(inputs.trust_remote_code))
                     if model_spec is not None else None)
        except UserError as exc:
            raise doc.error(loc + ("model",), str(exc)) from None
        try:
            return explain(model, device, kernels, ov)
        except UserError as exc:
            raise doc.error(loc, str(exc)) from None

    def groups(self, inputs: DeploymentInputs, base_dir: Path, doc: Located, loc: Loc) -> tuple[LockGroup, ...]:
        """The lock groups these inputs give now (one explanation per
        distinct input)."""
        model_spec, device, kernels, ov = self._inputs(inputs, base_dir, doc, loc)
        key = (model_spec, inputs.revision, bool(inputs.trust_remote_code), device, kernels, ov)
        hit = self._groups.get(key)
        if hit is not None:
            return hit
        self._groups[key] = lock_groups(self.explanation(inputs, base_dir, doc, loc))
        return self._groups[key]

    def engine_for(self, inputs: DeploymentInputs, default: str | None = None) -> str:
        """The engine a deployment runs: its own ``engine:``, else ``default``
        (check: what the lock records for it), else the Evaluator's (--engine).
        Under a default of ``both`` a raw ``selector:`` config is locked for
        vLLM only: SGLang resolves from a model's config, and there is none."""
        if inputs.engine is not None:
            return inputs.engine
        engine = default or self.default_engine
        return "vllm" if engine == "both" and inputs.model is None else engine

    def evaluate(
        self, inputs: DeploymentInputs, base_dir: Path, doc: Located, loc: Loc, default: str | None = None
    ) -> tuple[tuple[LockGroup, ...], SGLangLock | None]:
        """vLLM's groups and/or SGLang's section, as the deployment's engine says."""
        engine = self.engine_for(inputs, default)
        if engine == "sglang" and inputs.model is None:
            name = getattr(inputs, "name", None)
            raise doc.error(loc, f"deployment {shown(name) + ' ' if name else ''}has a raw 'selector' config, which "
                                 "only vLLM reads (SGLang resolves from a model's config): give it engine: vllm, "
                                 "or lock with --engine both")
        groups = self.groups(inputs, base_dir, doc, loc) if engine in ("vllm", "both") else ()
        sgl = self.sglang(inputs, base_dir, doc, loc) if engine in ("sglang", "both") else None
        return groups, sgl

    def sglang(self, inputs: DeploymentInputs, base_dir: Path, doc: Located, loc: Loc) -> SGLangLock:
        """SGLang's resolution for these inputs now."""
        from attn_select.selector.sglang.explain import explain_sglang, sglang_kv_cache_dtype
        from attn_select.selector.sglang.inputs import ServerFlags

        ov = inputs.overrides_value()
        flags_in = given(inputs.sglang) if inputs.sglang is not None else {}
        cuda = flags_in.pop("cuda_version", None)
        kernels = inputs.kernels_value()
        model_spec, _ = model_ref(inputs.model, base_dir)  # type: ignore[arg-type]
        try:
            device = self._device(inputs)
        except UserError as exc:
            raise doc.error(loc + ("device",), str(exc)) from None
        try:
            if flags_in.get("kv_cache_dtype") is None:
                flags_in["kv_cache_dtype"] = sglang_kv_cache_dtype(ov.kv_cache_dtype, "both")[0]
            if flags_in.get("enable_deterministic_inference") is None:
                flags_in.pop("enable_deterministic_inference", None)
            flags = ServerFlags(tp_size=ov.tp, **flags_in)
        except UserError as exc:
            raise doc.error(loc + ("overrides", "kv_cache_dtype"), str(exc)) from None
        key = (model_spec, inputs.revision, bool(inputs.trust_remote_code), device, kernels, flags, cuda)
        hit = self._sglang.get(key)
        if hit is not None:
            return hit
        try:
            model = self._model(model_spec, ov.tp, device.capability, base_dir, inputs.revision, "sglang",
                                bool(inputs.trust_remote_code))
        except UserError as exc:
            raise doc.error(loc + ("model",), str(exc)) from None
        try:
            report = explain_sglang(model, device, kernels, flags, cuda)
        except UserError as exc:
            raise doc.error(loc, str(exc)) from None
        self._sglang[key] = sglang_lock(report)
        return self._sglang[key]


def lock_groups(report: Explanation) -> tuple[LockGroup, ...]:
    """Every field of every group of one explanation, candidates in
    priority order."""
    out = []
    for g in report.groups:
        sel = g.selection
        pre = g.mla_prefill
        prefill = {} if pre is None or pre.skipped is not None else dict(
            mla_prefill_backend=pre.selected,
            mla_prefill_error=pre.error,
            mla_prefill_candidates={c.name: list(c.reasons) for c in pre.candidates},
        )
        out.append(
            LockGroup(
                group=g.name,
                selected=sel.selected,
                flash_attn_version=g.fa_version.version,
                error=sel.error,
                warning=sel.warning,
                candidates={c.name: list(c.reasons) for c in sel.candidates},
                **prefill,
            )
        )
    return tuple(out)


def sglang_lock(report: Any) -> SGLangLock:
    """Every field of SGLang's resolution for one deployment."""
    r = report.resolution
    rule = r.default_rule.backend if r.default_rule is not None else None
    if r.error is not None:
        return SGLangLock(engine=sglang_engine_id(), default_rule=rule, error=r.error.text())
    return SGLangLock(
        engine=sglang_engine_id(),
        attention_backend=r.attention_backend,
        prefill_backend=r.prefill_backend,
        decode_backend=r.decode_backend,
        page_size=r.page_size,
        kv_cache_dtype=r.final["kv_cache_dtype"],
        default_rule=rule,
        error=None,
    )


def lock_deployments(
    deployments: DeploymentsFile, doc: Located, base_dir: Path, lock_dir: Path, engine: str | None = None
) -> tuple[Lockfile, dict[str, str]]:
    """Evaluate every deployment; the lockfile plus each model path
    re-expressed relative to ``lock_dir`` (for ``dump_lock``). ``engine`` is
    the engine of deployments that name none (recorded in their inputs)."""
    ev = Evaluator(default_engine=engine)
    entries, paths = [], {}
    for i, d in enumerate(deployments.deployments):
        groups, sgl = ev.evaluate(d, base_dir, doc, ("deployments", i))
        dumped = d.model_dump(exclude={"name"}, exclude_unset=True)
        if d.engine is None and ev.engine_for(d) != "vllm":
            dumped["engine"] = ev.engine_for(d)
        inputs = DeploymentInputs.model_validate(dumped)
        entries.append((d.name, inputs, groups, sgl))
        if d.model is not None:
            paths[d.name] = relative_model_path(d.model, base_dir, lock_dir)
    return make_lock(entries), paths
