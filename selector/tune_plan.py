"""``attn-select tune``'s sweep, planned and driven: every setting vLLM
accepts on every point, each point run and checked exactly as
``attn-select run`` runs it. Pure: no torch; the measuring is a callable
(``backends/run/tune_sweep.measure``).

Per (page size, KV dtype): the settings go through the selector
(``tune_settings.validate``); per point, each accepted setting's plan is
``plan_run`` with that setting's overrides, cut to the backend vLLM selects
under it (``only=`` and ``selected_only``). A point two settings run the same
kernels for is run once (the later one says whose result it shares). vLLM's
default is timed ``repeats`` times: the spread is the run-to-run noise the
recommendation must beat. Finished points are cached (``ResultCache``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable

from attn_select.selector.overrides import Overrides
from attn_select.selector.run_plan import (
    FLASH_ATTN_IMPLS, FlashAttentionBuild, FlashInferKernels, RowPlan, RunPlan, Shape, plan_run, selected_backends,
    selected_only,
)
from attn_select.selector.tune_result import (
    FAILED, OK, SKIPPED, WRONG, PointResult, ResultCache, cache_key, point_name,
)
from attn_select.selector.tune_settings import Dropped, Setting, validate
from attn_select.selector.tune_workload import (
    USABLE_MEMORY, deployment_kv_bytes, kv_element_bytes, peak_point_bytes,
)


@dataclass
class Task:
    setting: Setting
    plan: RunPlan  # only the rows vLLM runs under the setting
    shape: Shape
    page_size: int
    kv_cache_dtype: str


@dataclass
class SweepPlan:
    tasks: list[Task] = field(default_factory=list)
    skipped: list[PointResult] = field(default_factory=list)  # decided before running
    dropped: dict[tuple[int, str], list[Dropped]] = field(default_factory=dict)  # per (page, kv)
    memory_bytes: int = 0


def point_of(shape: Shape) -> str:
    """The point's name in results and workloads, e.g. "decode 32x4096"."""
    return shape_result(shape, 0, "", "").point


OUT_OF_TIME = "past --max-seconds"


def shape_result(shape: Shape, page: int, kv: str, setting: str, **kw: object) -> PointResult:
    batch = shape.decodes or shape.prefills
    ctx = shape.decode_context if shape.kind == "decode" else shape.prefill_context
    new = 1 if shape.kind == "decode" else shape.prefill_new
    return PointResult(point=point_name(shape.kind, batch, ctx, new), kind=shape.kind, batch=batch, context=ctx,
                       new_tokens=new, page_size=page, kv_cache_dtype=kv, setting=setting, **kw)  # type: ignore[arg-type]


def plan_sweep(facts: Any, explain_for: Callable[[Overrides], Any], candidates: list[Setting], base: Overrides,
               shapes: list[Shape], pages: tuple[int, ...], kvs: tuple[str, ...], memory_bytes: int,
               runs_here: Callable[[str], bool] = lambda backend: True) -> SweepPlan:
    """The tasks to run, the settings vLLM rejects (per page and KV dtype),
    and the points that do not fit in ``memory_bytes`` or cannot run here
    (``runs_here(backend)``: False for a CUDA-only backend on a CPU)."""
    out = SweepPlan(memory_bytes=memory_bytes)
    budget = int(memory_bytes * USABLE_MEMORY)
    for page in pages:
        for kv in kvs:
            # a swept page size is user-given (it takes part in selection, as --block-size does)
            ov = base._replace(block_size=None if pages == (16,) else page,
                               kv_cache_dtype=None if kv == "auto" else kv)
            kept, dropped = validate(candidates, explain_for, ov)
            out.dropped[(page, kv)] = dropped
            elem = kv_element_bytes(kv, facts.dtype)
            for shape in shapes:
                too_big = _too_big(shape, page, facts.groups, elem, budget)
                for s, exp in kept:
                    if too_big:
                        out.skipped.append(shape_result(shape, page, kv, s.label, reason=too_big))
                        continue
                    chosen = selected_backends(exp)
                    plan = selected_only(plan_run(exp, exp.overrides.dtype or facts.dtype, kv, [shape], page,
                                                  chosen))
                    why = next((f"{r.backend}: {r.skip}" for g in plan.groups for sp_ in g.shapes
                                for r in sp_.rows if r.skip), None)
                    if why is None and not all(runs_here(b) for b in chosen):
                        why = f"{', '.join(chosen)}: CUDA-only, not runnable on a CPU"
                    if why is not None:
                        out.skipped.append(shape_result(shape, page, kv, s.label, reason=why))
                        continue
                    out.tasks.append(Task(s, plan, shape, page, kv))
    return out


def _too_big(shape: Shape, page: int, groups: Any, elem: int, budget: int) -> str | None:
    """Why a point is not measured for its size: its run does not fit, or no
    deployment of the model reaches it (one layer's run might fit, the
    model's cache for all its layers would not)."""
    need = peak_point_bytes(shape, page, groups, elem)
    if need > budget:
        return f"does not fit: needs about {need / 2**30:.1f} GiB, {budget / 2**30:.1f} GiB usable here"
    whole = deployment_kv_bytes(shape, page, groups, elem)
    if whole > budget:
        return (f"no deployment reaches it: the KV cache of all {sum(len(g.layers) for g in groups)} attention "
                f"layers needs about {whole / 2**30:.1f} GiB, {budget / 2**30:.1f} GiB usable here (weights not "
                "counted)")
    return None


def point_from_report(rep: Any, base: PointResult) -> PointResult:
    """One PointResult from a RunReport of the selected rows only: ok only
    when every group's selected backend ran and was correct."""
    r = dataclasses.replace(base)
    rows = [(g, row) for g in rep.groups for row in g.rows if row.backend == g.selected and not row.variant]
    if not rows or len(rows) != len(rep.groups):
        r.status, r.reason = SKIPPED, "the selected backend was not run"
        return r
    r.kernels = "; ".join(dict.fromkeys(f"{row.backend}: {row.kernel}" for _, row in rows if row.kernel))
    r.backends = [row.backend for _, row in rows]
    for _, row in rows:
        if row.status == "failed":
            r.status, r.reason = FAILED, row.reason
            return r
        if row.status != "ran":
            r.status, r.reason = SKIPPED, row.reason
            return r
    errors = [e for _, row in rows if row.check for e in row.check.rel_errors]
    r.rel_error = max(errors) if errors else None
    bad = [row for _, row in rows if not row.correct]
    r.status = WRONG if bad else OK
    if bad:
        r.reason = bad[0].reason
    perfs = [(g.layers, row.perf) for g, row in rows]
    if all(p is not None for _, p in perfs):
        layers = sum(n for n, _ in perfs)
        time_us = sum(n * p.per_layer_us for n, p in perfs)
        r.per_layer_us = time_us / layers
        r.step_us = sum(p.step_us for _, p in perfs)
        r.build_us = sum(p.build_us for _, p in perfs)
        r.kv_read_tbs = sum(n * p.kv_bytes for n, p in perfs) / (time_us * 1e-6) / 1e12 if time_us else None
        r.first_call_s = sum(p.first_call_s for _, p in perfs)
    return r


def signature(plan: RunPlan) -> tuple:
    """What a plan runs: per group its rows, without the facts only other
    backends read (FLASH_ATTN ignores FlashInfer's kernels and the reverse)."""
    def row(r: RowPlan) -> RowPlan:
        if r.backend != "FLASHINFER":
            r = r._replace(flashinfer=FlashInferKernels())
        if r.backend not in FLASH_ATTN_IMPLS:
            r = r._replace(fa_version=None, flash_attn=FlashAttentionBuild())
        return r
    return tuple((g.name, tuple(row(r) for sp in g.shapes for r in sp.rows)) for g in plan.groups)


def run_sweep(sp: SweepPlan, facts: Any, measure: Callable[[RunPlan, bool], Any], cache: ResultCache,
              env_facts: dict[str, object], repeats: int = 3, checks: int = 1,
              on_task: Callable[[int, int, str], None] = lambda done, total, what: None,
              out_of_time: Callable[[], bool] = lambda: False) -> list[PointResult]:
    """Run every task of ``sp`` in order (cached ones are read back).
    ``measure(plan, check)`` returns the RunReport of one run of ``plan``
    (``check`` False: a repeat, timed with one correctness check). Once
    ``out_of_time()`` says so, tasks not in the cache are skipped, saying
    why: a re-run with the same cache goes on from there."""
    results: list[PointResult] = list(sp.skipped)
    seen: dict[tuple, PointResult] = {}
    total = len(sp.tasks)
    for i, t in enumerate(sp.tasks):
        on_task(i, total, f"{t.setting.label} on {t.shape.describe()} (page {t.page_size}, kv {t.kv_cache_dtype})")
        sig = (t.page_size, t.kv_cache_dtype, t.shape, signature(t.plan))
        if sig in seen and not t.setting.is_default:
            prev = seen[sig]
            results.append(dataclasses.replace(prev, setting=t.setting.label, repeats_us=[], same_as=prev.setting,
                                               reason=f"runs the same kernels as {prev.setting}"))
            continue
        n = repeats if t.setting.is_default else 1
        key = cache_key(env=env_facts, model=repr(facts), plan=repr(t.plan), checks=checks, repeats=n)
        r = cache.get(key)
        if r is None and out_of_time():
            results.append(shape_result(t.shape, t.page_size, t.kv_cache_dtype, t.setting.label, reason=(
                f"{OUT_OF_TIME}: not measured; run again with the same cache to measure it")))
            continue
        if r is None:
            base = shape_result(t.shape, t.page_size, t.kv_cache_dtype, t.setting.label)
            r = point_from_report(measure(t.plan, True), base)
            for _ in range(n - 1 if r.ok else 0):
                again = point_from_report(measure(t.plan, False), base)
                if again.ok:
                    r.repeats_us.append(again.per_layer_us)  # type: ignore[arg-type]
            cache.put(key, r)
        r.setting = t.setting.label
        seen.setdefault(sig, r)
        results.append(r)
    on_task(total, total, "done")
    return results
