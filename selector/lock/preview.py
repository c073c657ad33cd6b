"""The upgrade preview (``attn-select check LOCK --vllm-python PATH``):
every locked vLLM deployment evaluated by another vLLM's own selection code
and compared with the lock, so the report says which deployments would
change backend, FlashAttention version, KV-cache layout, FlashInfer kernel
or MLA prefill backend, and why (the reasons of the backend that lost).

Deployments on SGLang only, and raw selector configs (no model), have no
vLLM engine config to build: they are recomputed by the mirror, as plain
``check`` does, and said so.

Running that vLLM is injected (``RunSelection``, ``ModelFolder``): the
command wires in ``cli/installed_engine.py``'s subprocess, so this module
only decides what to ask and compares the answers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from attn_select.selector.config import Kernels
from attn_select.selector.installed import EngineWarning
from attn_select.selector.lock.check import CheckReport
from attn_select.selector.lock.compare import Diff, Recomputed, compare
from attn_select.selector.lock.evaluate import Evaluator, model_ref
from attn_select.selector.lock.lockfile import Lockfile, LockGroup
from attn_select.selector.lock.yamlmarks import Located

# (the runner's cases, the --kernels to stand in for) -> the runner's answer
RunSelection = Callable[[list[dict[str, Any]], Kernels], dict[str, Any]]
# (model spec, load options) -> the folder the installed vLLM reads
ModelFolder = Callable[[str, dict[str, Any]], str]


def _lock_group(mirror_group: Any, raw: dict[str, Any], locked: LockGroup | None = None) -> LockGroup:
    """The installed vLLM's answer for one group, as the lock records groups."""
    from attn_select.selector.vllm_installed import installed_group

    mine = installed_group(raw)
    pre = mine.mla_prefill or {}
    # an MLA layer's prefill decision, as lock_groups records it, where this release exposes it
    prefill = dict(
        mla_prefill_backend=pre.get("selected"), mla_prefill_error=mine.mla_prefill_error(),
        mla_prefill_candidates={k: list(v) for k, v in (pre.get("reasons") or {}).items()},
    ) if pre.get("exposed") and mine.mla_prefill_asked() else {}
    if not pre.get("exposed") and locked is not None:
        # a release without MLA prefill selection has no answer there: no difference either
        prefill = {f: getattr(locked, f) for f in locked.present() if f.startswith("mla_prefill")}
    fa = mine.fa_version
    return LockGroup(
        group=mine.name, selected=mine.selected,
        # MLA layers do not run FLASH_ATTN: the lock has no version for them
        flash_attn_version=None if mirror_group.cfg.use_mla or not isinstance(fa, int) else fa,
        error=mine.error if mine.crash is None else f"vLLM raised: {mine.crash.splitlines()[0]}",
        warning=mine.warning,
        candidates={k: list(v) for k, v in mine.reasons.items()},
        **prefill,
    )


def _layout_and_kernel_diffs(name: str, r: Any, report: Any, lock_loc: tuple, recorded: set[str]) -> list[Diff]:
    """What the lock does not record: the KV-cache layout that follows a
    changed backend, FlashInfer's trtllm decision, and an MLA layer's prefill
    backend in a group locked without it (``recorded``: the groups whose lock
    has ``mla_prefill_backend``, compared with the lock itself)."""
    from attn_select.backends import registry

    out = []
    for i, (g, mine) in enumerate(zip(r.groups, report.groups)):
        old, new = g.selection.selected, mine.selected
        if old != new and old is not None and new is not None and new in registry.BACKENDS:
            a, b = registry.BACKENDS[old].kv_cache_shape, registry.BACKENDS[new].kv_cache_shape
            if a != b:
                out.append(Diff(name, g.name, "kv_cache_layout", f"{old} {a}", f"{new} {b}", lock_loc + ("groups", i),
                                "the KV-cache layout follows the backend (shapes as attn-select declares them)"))
    for c in report.changes:
        prefill = c.field.startswith("MLA prefill") and c.group not in recorded
        if c.group is None or c.field.startswith("FlashInfer trtllm") or prefill:
            out.append(Diff(name, c.group, c.field if c.group else f"engine config {c.field}", c.mirror, c.installed,
                            lock_loc, f"the {r.engine_version} mirror's answer -> vLLM {report.engine_version}'s "
                            "(not recorded in the lock)"))
    return out


def preview_check(lock: Lockfile, doc: Located, lock_dir: Path, engine: str | None, *, python: str, version: str,
                  run_selection: RunSelection, model_folder: ModelFolder) -> CheckReport:
    """The preview of ``lock`` against vLLM ``version`` installed in ``python``."""
    from attn_select.selector.vllm_installed import (
        case_for, engine_config_failure, installed_explanation, kernels_request,
    )

    ev = Evaluator(default_engine=engine)
    now: dict[str, Recomputed] = {}
    todo: list[tuple[int, Any, Any, str]] = []  # (index, deployment, mirror explanation, model spec)
    mirrored: list[str] = []
    for i, d in enumerate(lock.deployments):
        loc = ("deployments", i, "inputs")
        inputs = d.inputs
        kind = ev.engine_for(inputs)
        if kind == "sglang" or inputs.model is None:
            groups, sgl = ev.evaluate(inputs, lock_dir, doc, loc)
            now[d.name] = Recomputed(groups, sglang=sgl)
            mirrored.append(d.name)
            continue
        spec, _ = model_ref(inputs.model, lock_dir)
        r = ev.explanation(inputs, lock_dir, doc, loc)
        sgl = ev.sglang(inputs, lock_dir, doc, loc) if kind == "both" else None
        todo.append((i, d, r, spec))
        now[d.name] = Recomputed((), sglang=sgl)
    # one subprocess per set of kernels (what is installed is decided at import)
    by_kernels: dict[tuple, list[tuple[int, Any, Any, str]]] = {}
    for item in todo:
        key = tuple(sorted(kernels_request(item[2].kernels).items()))
        by_kernels.setdefault(key, []).append(item)
    extra: list[Diff] = []
    stand_ins: list[str] = []
    for key, items in by_kernels.items():
        cases = [case_for(r, model_folder(spec, {"revision": d.inputs.revision}),
                          {"trust_remote_code": d.inputs.trust_remote_code}) for _, d, r, spec in items]
        answer = run_selection(cases, items[0][2].kernels)
        stand_ins += [s for s in answer.get("stand_ins", []) if s not in stand_ins]
        for (i, d, r, _), case in zip(items, answer["cases"]):
            report = installed_explanation(r, {**answer, "cases": [case]}, python)
            if case.get("error") is not None:
                # no group gets to select: the failure is the one difference, not every candidate
                failure = engine_config_failure(version, case["error"])
                groups = tuple(g.model_copy(update=dict(selected=None, error=failure)) for g in d.groups)
            else:
                locked = {g.group: g for g in d.groups}
                groups = tuple(_lock_group(g, raw, locked.get(g.name)) for g, raw in zip(r.groups, case["groups"]))
            now[d.name] = Recomputed(groups, sglang=now[d.name].sglang)
            recorded = {g.group for g in d.groups if "mla_prefill_backend" in g.present()}
            extra += _layout_and_kernel_diffs(d.name, r, report, ("deployments", i), recorded)
    diffs = [x for x in compare(lock, now) if x.deployment != "(lockfile)"] + extra
    order = {d.name: i for i, d in enumerate(lock.deployments)}
    diffs.sort(key=lambda x: order.get(x.deployment, len(order)))
    cases: list[tuple[str, str]] = []
    for d in lock.deployments:
        cases += [(d.name, g.group) for g in d.groups] + ([(d.name, "sglang")] if d.sglang is not None else [])
    warnings = [EngineWarning("preview", "vllm", f"upgrade preview: every vLLM deployment evaluated by vLLM {version}'s "
                              f"own selection code ({python}), compared with the lock made by vLLM "
                              f"{lock.engine.version}'s mirror")]
    warnings += [EngineWarning("stand-in", "vllm", f"stand-in: {s}") for s in stand_ins]
    if mirrored:
        warnings.append(EngineWarning("preview", "vllm", "recomputed by the mirror, not by the installed vLLM "
                                      f"(SGLang only, or no model): {', '.join(mirrored)}"))
    return CheckReport(lockfile=doc.source, inputs="embedded", cases=tuple(cases), diffs=tuple(diffs),
                       lines=tuple(doc.line(x.loc) for x in diffs), warnings=tuple(warnings))
