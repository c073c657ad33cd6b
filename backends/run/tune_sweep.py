"""``attn-select tune``'s sweep: every accepted setting on every point, each
point run and checked exactly as ``attn-select run`` runs it.

Per (page size, KV dtype): the settings go through the selector
(``selector.tune_settings.validate``); per point, each accepted setting's
plan is ``plan_run`` with that setting's overrides, cut to the backend vLLM
selects under it (``only=`` and ``selected_only``), and run by ``run_model``.
A point two settings run the same kernels for is run once (the later one
says whose result it shares). vLLM's default is timed ``repeats`` times: the
spread is the run-to-run noise the recommendation must beat. Finished points
are cached (``selector.tune_result.ResultCache``).
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import os
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from attn_select.backends.run.adapter import runs_on_cpu
from attn_select.backends.run.report import FAILED, RAN, RunReport
from attn_select.backends.run.runner import RunOptions, run_model
from attn_select.selector.overrides import Overrides
from attn_select.selector.run_plan import Shape, plan_run, selected_backends, selected_only
from attn_select.selector.tune_result import (
    FAILED as P_FAILED, OK, SKIPPED, WRONG, PointResult, ResultCache, cache_key, point_name,
)
from attn_select.selector.tune_settings import Dropped, Setting, validate
from attn_select.selector.tune_workload import point_bytes, token_elements

PACKAGES = ("torch", "triton", "flashinfer-python", "flashinfer-cubin", "vllm-flash-attn", "attn-select")


@dataclass
class Task:
    setting: Setting
    exp: Any  # the selector's Explanation under the setting
    shape: Shape
    page_size: int
    kv_cache_dtype: str


@dataclass
class SweepPlan:
    tasks: list[Task] = field(default_factory=list)
    skipped: list[PointResult] = field(default_factory=list)  # decided before running
    dropped: dict[tuple[int, str], list[Dropped]] = field(default_factory=dict)  # per (page, kv)
    memory_bytes: int | None = None
    notes: list[str] = field(default_factory=list)


def environment(device: torch.device) -> dict[str, object]:
    """What a cached result is only valid for: the GPU, its driver, the
    package versions."""
    versions = {}
    for p in PACKAGES:
        try:
            versions[p] = importlib.metadata.version(p)
        except importlib.metadata.PackageNotFoundError:
            versions[p] = None
    env: dict[str, object] = dict(packages=versions, torch_cuda=torch.version.cuda)
    if device.type == "cuda":
        env["gpu"] = torch.cuda.get_device_name(device)
        driver = getattr(torch._C, "_cuda_getDriverVersion", None)
        env["driver"] = driver() if driver else None
    else:
        env["gpu"] = "cpu"
        env["threads"] = torch.get_num_threads()
    return env


def device_memory(device: torch.device) -> int:
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).total_memory
    try:  # a CPU run: a quarter of RAM, the rest is the machine's
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 4
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def _shape_result(shape: Shape, page: int, kv: str, setting: str, **kw: object) -> PointResult:
    batch = shape.decodes or shape.prefills
    ctx = shape.decode_context if shape.kind == "decode" else shape.prefill_context
    new = 1 if shape.kind == "decode" else shape.prefill_new
    return PointResult(point=point_name(shape.kind, batch, ctx, new), kind=shape.kind, batch=batch, context=ctx,
                       new_tokens=new, page_size=page, kv_cache_dtype=kv, setting=setting, **kw)  # type: ignore[arg-type]


def plan_sweep(facts: Any, explain_for: Callable[[Overrides], Any], candidates: list[Setting], base: Overrides,
               shapes: list[Shape], pages: tuple[int, ...], kvs: tuple[str, ...], device: torch.device,
               memory_bytes: int | None = None) -> SweepPlan:
    """The tasks to run, the settings vLLM rejects, the points that do not fit."""
    out = SweepPlan(memory_bytes=memory_bytes if memory_bytes is not None else device_memory(device))
    budget = int(out.memory_bytes * 0.85)  # the allocator's and the kernels' workspaces take the rest
    cpu = device.type != "cuda"
    for page in pages:
        for kv in kvs:
            ov = base._replace(block_size=page if len(pages) > 1 or page != 16 else base.block_size,
                               kv_cache_dtype=None if kv == "auto" else kv)
            kept, dropped = validate(candidates, explain_for, ov)
            out.dropped[(page, kv)] = dropped
            elem = 1 if kv.startswith("fp8") else torch.empty(0, dtype=getattr(torch, facts.dtype)).element_size()
            for shape in shapes:
                need = max(point_bytes(shape, page, token_elements(g.attn.use_mla, g.attn.num_kv_heads,
                                                                   g.attn.head_size, g.attn.head_size_v), elem)
                           for g in facts.groups)
                for s, exp in kept:
                    if need > budget:
                        out.skipped.append(_shape_result(shape, page, kv, s.label, reason=(
                            f"does not fit: needs about {need / 2**30:.0f} GiB, "
                            f"{budget / 2**30:.0f} GiB usable here")))
                        continue
                    chosen = selected_backends(exp)
                    if cpu and not all(runs_on_cpu(b) for b in chosen):
                        out.skipped.append(_shape_result(shape, page, kv, s.label, reason=(
                            f"{', '.join(chosen)}: CUDA-only, not runnable on a CPU")))
                        continue
                    out.tasks.append(Task(s, exp, shape, page, kv))
    return out


def _signature(plan) -> tuple:
    return tuple((g.name, tuple(r for sp in g.shapes for r in sp.rows)) for g in plan.groups)


def point_from_report(rep: RunReport, base: PointResult) -> PointResult:
    """One PointResult from a run of the selected rows only: ok only when
    every group's selected backend ran and was correct."""
    r = dataclasses.replace(base)
    rows = [(g, row) for g in rep.groups for row in g.rows if row.backend == g.selected and not row.variant]
    if len(rows) != len(rep.groups) or not rows:
        r.status, r.reason = SKIPPED, "the selected backend was not run"
        return r
    r.kernels = "; ".join(dict.fromkeys(f"{row.backend}: {row.kernel}" for _, row in rows if row.kernel))
    for _, row in rows:
        if row.status == FAILED:
            r.status, r.reason = P_FAILED, row.reason
            return r
        if row.status != RAN:
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
        r.kv_read_tbs = sum(n * p.kv_bytes for n, p in perfs) / (time_us * 1e-6) / 1e12
        r.first_call_s = sum(p.first_call_s for _, p in perfs)
    return r


def run_sweep(sp: SweepPlan, facts: Any, opts: RunOptions, cache: ResultCache, device_name: str,
              repeats: int = 3, env_facts: dict[str, object] | None = None,
              on_task: Callable[[int, int, str], None] = lambda done, total, what: None) -> list[PointResult]:
    """Run every task of ``sp`` (cached ones are read back), in order."""
    env_facts = env_facts if env_facts is not None else environment(torch.device(opts.device))
    results: list[PointResult] = list(sp.skipped)
    seen: dict[tuple, PointResult] = {}
    total = len(sp.tasks)
    for i, t in enumerate(sp.tasks):
        what = f"{t.setting.label} on {t.shape.describe()} (page {t.page_size}, kv {t.kv_cache_dtype})"
        on_task(i, total, what)
        base = _shape_result(t.shape, t.page_size, t.kv_cache_dtype, t.setting.label)
        plan = selected_only(plan_run(t.exp, t.exp.overrides.dtype or facts.dtype, t.kv_cache_dtype, [t.shape],
                                      t.page_size, selected_backends(t.exp)))
        sig = (t.page_size, t.kv_cache_dtype, t.shape, _signature(plan))
        if sig in seen and not t.setting.is_default:
            prev = seen[sig]
            r = dataclasses.replace(prev, setting=t.setting.label, repeats_us=[],
                                    reason=f"runs the same kernels as {prev.setting}")
            results.append(r)
            continue
        key = cache_key(env=env_facts, model=repr(facts), shape=repr(t.shape), page=t.page_size,
                        kv=t.kv_cache_dtype, plan=repr(plan), checks=opts.checks, repeats=repeats if t.setting.is_default else 1,
                        timing=opts.timing)
        r = cache.get(key)
        if r is None:
            rep = run_model(plan, opts, device_name=device_name)
            r = point_from_report(rep, base)
            if t.setting.is_default and r.ok:
                for _ in range(max(0, repeats - 1)):
                    again = point_from_report(run_model(plan, dataclasses.replace(opts, checks=1),
                                                        device_name=device_name), base)
                    if again.ok:
                        r.repeats_us.append(again.per_layer_us)  # type: ignore[arg-type]
            cache.put(key, r)
        r.setting = t.setting.label
        seen.setdefault(sig, r)
        results.append(r)
    on_task(total, total, "done")
    return results
