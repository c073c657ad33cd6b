"""Comparing a lockfile with the deployments evaluated now: every
difference as a ``Diff`` that points at its lockfile line. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from attn_select.selector.explain import ENGINE, ENGINE_VERSION
from attn_select.selector.lock.lockfile import CANDIDATE_FIELDS, LockDeployment, Lockfile, LockGroup, SGLangLock
from attn_select.selector.lock.yamlmarks import Loc


@dataclass(frozen=True)
class Diff:
    """One difference between the lock and now. ``loc`` points into the
    lockfile (for its line); ``detail`` says why, in words."""

    deployment: str
    group: str | None
    field: str
    locked: Any
    new: Any
    loc: Loc
    detail: str | None = None

    def message(self) -> str:
        """``field: locked -> new`` on one line, reasons as ``valid`` or
        ``invalid (reason; reason)``."""
        return f"{self.field}: {show_value(self.field, self.locked)} -> {show_value(self.field, self.new)}"


ABSENT = "(absent)"
# The group a deployment's SGLang resolution is reported under, among
# check's cases and differences.
SGLANG_CASE = "sglang"


def show_value(field: str, value: Any) -> str:
    if value is None:
        return "null"
    if field.partition(".")[0] in CANDIDATE_FIELDS and isinstance(value, list):
        return "valid" if not value else "invalid (" + "; ".join(value) + ")"
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {v}" for k, v in value.items()) + "}"
    return str(value)


@dataclass(frozen=True)
class Recomputed:
    """One deployment evaluated now. The input views are set when the inputs
    come from a deployments file: then a changed input is a diff too."""

    groups: tuple[LockGroup, ...]
    inputs_locked: dict[str, Any] | None = None
    inputs_now: dict[str, Any] | None = None
    sglang: SGLangLock | None = None


def _selected_detail(locked: str | None, new: LockGroup) -> str | None:
    """Why the locked backend is no longer the one selected."""
    cands = new.candidates or {}
    if locked is None or not cands:  # no candidates now: the group's error says why
        return None
    if locked not in cands:
        return f"{locked} is no longer a candidate; priority order now: {' > '.join(cands)}"
    reasons = cands[locked]
    if reasons:
        return f"{locked} is now invalid: {'; '.join(reasons)}"
    if new.selected is not None:
        return (
            f"{locked} is still valid, but {new.selected} now comes before it "
            f"(priority order: {' > '.join(cands)})"
        )
    return None


def compare_group(deployment: str, locked: LockGroup, new: LockGroup, loc: Loc) -> list[Diff]:
    """Only the fields present in the locked group; reasons as ordered
    lists, texts exactly."""
    out: list[Diff] = []
    for name in locked.present():
        if name in CANDIDATE_FIELDS:
            out += _compare_candidates(deployment, locked, new, loc, name)
            continue
        old_v, new_v = getattr(locked, name), getattr(new, name)
        if old_v != new_v:
            detail = _selected_detail(old_v, new) if name == "selected" else None
            out.append(Diff(deployment, locked.group, name, old_v, new_v, loc + (name,), detail))
    return out


def _compare_candidates(deployment: str, locked: LockGroup, new: LockGroup, loc: Loc, field: str) -> list[Diff]:
    out: list[Diff] = []
    old_c, new_c = getattr(locked, field) or {}, getattr(new, field) or {}
    base = loc + (field,)
    for name in list(old_c) + [n for n in new_c if n not in old_c]:
        old_r, new_r = old_c.get(name, ABSENT), new_c.get(name, ABSENT)
        if old_r != new_r:
            out.append(Diff(deployment, locked.group, f"{field}.{name}", old_r, new_r, base + (name,)))
    if set(old_c) == set(new_c) and list(old_c) != list(new_c):
        out.append(Diff(deployment, locked.group, f"{field} (priority order)", list(old_c), list(new_c), base))
    return out


def compare_deployment(locked: LockDeployment, now: Recomputed, loc: Loc) -> list[Diff]:
    out: list[Diff] = []
    name = locked.name
    if now.inputs_locked is not None and now.inputs_now is not None:
        old_in, new_in = now.inputs_locked, now.inputs_now
        for key in list(old_in) + [k for k in new_in if k not in old_in]:
            if old_in.get(key, ABSENT) != new_in.get(key, ABSENT):
                out.append(Diff(name, None, f"inputs.{key}", old_in.get(key, ABSENT),
                                new_in.get(key, ABSENT), loc + ("inputs", key)))
    by_name = {g.group: g for g in now.groups}
    for i, g in enumerate(locked.groups):
        gloc = loc + ("groups", i)
        if g.group not in by_name:
            out.append(Diff(name, g.group, "group", "present", ABSENT, gloc + ("group",),
                            f"the deployment now has groups: {', '.join(by_name) or 'none'}"))
            continue
        out += compare_group(name, g, by_name[g.group], gloc)
    locked_names = {g.group for g in locked.groups}
    for g in now.groups:
        if g.group not in locked_names:
            out.append(Diff(name, g.group, "group", ABSENT, "present", loc + ("groups",),
                            f"new attention group; it selects {g.selected or 'nothing'}"))
    out += compare_sglang(name, locked.sglang, now.sglang, loc + ("sglang",))
    return out


def compare_sglang(name: str, locked: SGLangLock | None, now: SGLangLock | None, loc: Loc) -> list[Diff]:
    """The SGLang section: only the fields present in the lock."""
    if locked is None and now is None:
        return []
    if locked is None or now is None:
        return [Diff(name, SGLANG_CASE, "sglang", "present" if locked else ABSENT, "present" if now else ABSENT, loc,
                     "the deployment's engine changed; run attn-select lock")]
    out = []
    if locked.engine != now.engine:
        out.append(Diff(name, SGLANG_CASE, "engine", locked.engine, now.engine, loc + ("engine",),
                        "the lock was made for another SGLang version; regenerate it"))
    for f in locked.present():
        old_v, new_v = getattr(locked, f), getattr(now, f)
        if old_v != new_v:
            out.append(Diff(name, SGLANG_CASE, f, old_v, new_v, loc + (f,)))
    return out


def compare(locked: Lockfile, now: dict[str, Recomputed]) -> list[Diff]:
    """Every difference between the lock and the deployments evaluated now.
    Deployments only in ``now`` are new; those missing from it were removed."""
    out: list[Diff] = []
    if (locked.engine.name, locked.engine.version) != (ENGINE, ENGINE_VERSION):
        out.append(Diff("(lockfile)", None, "engine", f"{locked.engine.name} {locked.engine.version}",
                        f"{ENGINE} {ENGINE_VERSION}", ("engine",),
                        "the lock was made for another engine version; regenerate it"))
    for i, d in enumerate(locked.deployments):
        loc: Loc = ("deployments", i)
        if d.name not in now:
            out.append(Diff(d.name, None, "deployment", "present", ABSENT, loc + ("name",),
                            "not in the deployments file"))
            continue
        out += compare_deployment(d, now[d.name], loc)
    names = {d.name for d in locked.deployments}
    for name in now:
        if name not in names:
            out.append(Diff(name, None, "deployment", ABSENT, "present", ("deployments",),
                            "new deployment; run attn-select lock to add it"))
    return out
