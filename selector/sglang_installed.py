"""The installed SGLang's own resolution beside the mirror's: the request
that ``backends/run/probes/sglang_resolution.py`` answers in the engine's
Python, built from the mirror's explanation (same model, device, CUDA
version, FlashInfer and server flags), SGLang's answer as a ``Resolution``
(so it renders as ``--engine sglang`` does), and every difference between
the two. Pure: running the subprocess is ``cli/installed_engine.py``'s.

Compared: the platform facts SGLang read (capability, CUDA version,
FlashInfer), the error SGLang raises (class and exact text), then, when
neither raises, the final value of every followed field, the prefill and
decode backends, the default rule's answer (or that it was not consulted),
and the trail: every declaration that changed a followed field, as
(source, field, new value), in order. The mirror's "why" of each step is
attn-select's wording and is not compared; SGLang's own reasons are the
messages its resolution logged, shown with the step of the function that
wrote them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from attn_select.selector.sglang.default_rule import DefaultRule
from attn_select.selector.sglang.explain import SGLangExplanation
from attn_select.selector.sglang.resolve import FOLLOWED_FIELDS, Resolution
from attn_select.selector.sglang.state import SGLangError, Step

# A device profile without memory: the mirror applies no memory rule, and a
# real SGLang always knows its memory, so it is told of a small GPU, where
# no such rule applies either (the differential test's choice).
UNKNOWN_MEMORY_MIB = 24576.0


class Change(NamedTuple):
    """One difference between the mirror and the installed SGLang."""

    field: str
    mirror: Any
    installed: Any

    def text(self, version: str) -> str:
        return f"{self.field}: mirror {_show(self.mirror)}, SGLang {version} {_show(self.installed)}"


@dataclass(frozen=True)
class InstalledResolution(Resolution):
    """SGLang's own answer in the mirror's shape; the prefill and decode
    backends are SGLang's ``attention_backends_of`` where it has one."""

    backends: tuple[object, object] | None = None

    @property
    def prefill_backend(self) -> object:
        return super().prefill_backend if self.backends is None else self.backends[0]

    @property
    def decode_backend(self) -> object:
        return super().decode_backend if self.backends is None else self.backends[1]


@dataclass(frozen=True)
class SGLangInstalledExplanation:
    """``explain --engine sglang-installed``: the installed SGLang's own
    resolution (``installed``, rendered like the mirror's) and its
    differences from the mirror (``mirror``)."""

    mirror: SGLangExplanation
    installed: SGLangExplanation
    engine_version: str
    python: str
    stand_ins: tuple[str, ...]
    messages: tuple[tuple[str, str, str], ...]  # every (function, level, text) SGLang logged
    changes: tuple[Change, ...]
    warnings: tuple = field(default=())

    @property
    def differences(self) -> tuple[str, ...]:
        return tuple(c.text(self.engine_version) for c in self.changes)

    @property
    def ok(self) -> bool:
        return self.installed.resolution.ok


# --- the request ----------------------------------------------------------------


def case_for(e: SGLangExplanation, folder: str) -> dict[str, Any]:
    """One request case: the model folder SGLang reads, the machine the
    mirror assumed, and the server flags given."""
    p = e.platform
    memory = p.gpu_memory_mib if p.gpu_memory_mib is not None else UNKNOWN_MEMORY_MIB
    return {"folder": folder, "capability": list(p.device_capability), "cuda_version": p.cuda_text(),
            "gpu_memory_mib": memory, "has_flashinfer": p.has_flashinfer, "flags": e.flags.given()}


# --- the answer -------------------------------------------------------------------


def _reasons(messages: list, source: str) -> str:
    """What the function behind a declaration logged, as one text."""
    func = source.rsplit(".", 1)[-1]
    return " ".join(text for fn, _, text in messages if fn == func)


def installed_resolution(mirror: Resolution, raw: dict[str, Any]) -> InstalledResolution:
    """SGLang's answer for one case as a ``Resolution``."""
    messages = raw.get("messages") or []
    trail = tuple(Step(src, f, old, new, _reasons(messages, src)) for src, f, old, new in raw.get("changes") or ()
                  if f in FOLLOWED_FIELDS)
    err = raw.get("error")
    error = None if err is None else SGLangError(err["kind"], err["message"], err.get("where") or "resolve_once")
    answered = raw.get("default_rule")
    rule = None if answered is None else DefaultRule(answered, "SGLang's get_default_attn_backend")
    skipped = None if rule is not None else "SGLang's _attention_backend_default did not call get_default_attn_backend"
    backends = raw.get("backends")
    return InstalledResolution(mirror.flags, mirror.platform, mirror.model, rule, skipped, dict(raw["final"]),
                               trail, error, tuple(backends) if backends else None)


# --- the comparison -----------------------------------------------------------------


def _show(v: Any) -> str:
    return "None" if v is None else str(v)


def compare(mirror: SGLangExplanation, raw: dict[str, Any], installed: Resolution | None) -> list[Change]:
    """Every difference between the mirror's resolution and SGLang's answer."""
    out: list[Change] = []

    def diff(what: str, ours: Any, theirs: Any) -> None:
        if ours != theirs:
            out.append(Change(what, ours, theirs))

    if raw.get("oracle_error"):
        return [Change("SGLang could not be given the case", None, raw["oracle_error"].splitlines()[0])]
    p, seen = mirror.platform, raw.get("platform") or {}
    diff("platform: device capability", list(p.device_capability), seen.get("device_capability"))
    diff("platform: CUDA version (torch.version.cuda)", p.cuda_text(), _major_minor(seen.get("cuda_version")))
    diff("platform: flashinfer available", p.has_flashinfer, seen.get("has_flashinfer"))
    r = mirror.resolution
    assert installed is not None
    ours_error = None if r.error is None else r.error.text()
    theirs_error = None if installed.error is None else installed.error.text()
    diff("error", ours_error, theirs_error)
    if r.error is not None or installed.error is not None:
        return out  # the fields stop where each raised
    for name in FOLLOWED_FIELDS:
        diff(name, r.final.get(name), installed.final.get(name))
    diff("prefill backend", r.prefill_backend, installed.prefill_backend)
    diff("decode backend", r.decode_backend, installed.decode_backend)
    diff("default rule", None if r.default_rule is None else r.default_rule.backend,
         None if installed.default_rule is None else installed.default_rule.backend)
    ours = [(s.source, s.field, s.new) for s in r.trail]
    theirs = [(s.source, s.field, s.new) for s in installed.trail]
    if ours != theirs:
        diff("trail", _steps(ours, theirs), _steps(theirs, ours))
    return out


def _major_minor(text: Any) -> Any:
    """``torch.version.cuda`` as SGLang reads it (major.minor)."""
    if not isinstance(text, str):
        return text
    return ".".join(text.split(".")[:2])


def _steps(mine: list, other: list) -> str:
    """The steps of one side the other lacks, as ``source: field -> new``."""
    only = [s for s in mine if s not in other] or mine
    return "; ".join(f"{src}: {f} -> {_show(new)}" for src, f, new in only) or "no step"


def installed_explanation(mirror: SGLangExplanation, answer: dict[str, Any], python: str) -> SGLangInstalledExplanation:
    """The report for one deployment from the runner's answer."""
    version = answer.get("sglang_version") or "?"
    raw = answer["cases"][0]
    stand_ins = tuple(answer.get("stand_ins") or ()) + tuple(raw.get("stand_ins") or ())
    if mirror.platform.gpu_memory_mib is None:
        stand_ins += (f"GPU memory: {UNKNOWN_MEMORY_MIB / 1024:g} GiB (the device names none; the mirror applies "
                      "no memory rule, and none applies at this size)",)
    resolution = installed_resolution(mirror.resolution, raw) if raw.get("final") is not None else None
    changes = compare(mirror, raw, resolution)
    if resolution is None:  # SGLang could not be given the case: its error is the answer
        resolution = replace(mirror.resolution, error=SGLangError("attn-select", changes[0].installed, "the runner"),
                             trail=(), default_rule=None, default_rule_skipped="SGLang did not resolve")
    messages = tuple(tuple(m) for m in raw.get("messages") or ())
    return SGLangInstalledExplanation(mirror, replace(mirror, engine_version=version, resolution=resolution), version,
                                      python, stand_ins, messages, tuple(changes))
