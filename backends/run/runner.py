"""``attn-select run``: for each attention group, one real forward step per
batch shape through every backend that can execute here, checked against the
float32 reference and timed.

Per (group, shape, backend): skipped (no adapter / not valid for this config
per the selector / not installed / not runnable here), failed (one-line
error: import error, JIT failure, CUDA OOM, ...), or ran (relative errors,
first-call time, per-layer device time, KV-read bandwidth, build cost,
projection). A failure in one backend never stops the others; GPU memory is
freed between backends.
"""

from __future__ import annotations

import gc
import importlib
import math
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from attn_select.backends.run.adapter import Adapter, RoutedElsewhere, RunEnv, Unsupported
from attn_select.backends.run.batch import Batch, fill_random_, make_batch
from attn_select.backends.run.harness import (
    HostTiming, SpreadHostTimer, Ticker, copy_ceiling, host_probes, host_samples, summarize, time_device,
)
from attn_select.backends.run.layer_kind import MHA, MLA, layer_kind
from attn_select.backends.run.mla_reference import MLAParams
from attn_select.backends.run.reference import AttnParams, relative_error, tolerance
from attn_select.backends.run.report import (
    FAILED, RAN, ROUTED_ELSEWHERE, BackendRow, Check, GroupRun, Perf, RunReport, SKIPPED, fastest_per_shape,
)
from attn_select.selector.run_plan import MLA_PREFILL, GroupPlan, RowPlan, RunPlan

DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}


@dataclass
class RunOptions:
    """How to run the plan here: the device, how much to check and time.
    What to run (shapes, page size, backends, dtypes) is the plan's."""

    device: str = "cuda"
    checks: int = 2  # fresh-input checks per backend and shape
    timing: bool = True
    time_budget_s: float = 1.5  # device time spent timing one row
    settle_s: float = 0.3  # back-to-back replays before a row's timed windows (GPU clocks settle)
    build_span_s: float = 20.0  # c's extra samples are spread over this long at the end (GPU runs)
    timed_cache_bytes: int = 1 << 30  # distinct layer caches cycled in a timed window (beats the L2)
    progress: Callable[[str], None] = field(default=lambda msg: None)
    seed: int = 0


def one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    msg = text[0] if text else ""
    if isinstance(e, torch.cuda.OutOfMemoryError):
        return "CUDA out of memory: " + msg[:160]
    return f"{type(e).__name__}: {msg}"[:240]


def load_adapter(row: RowPlan, env: RunEnv, p: AttnParams | MLAParams) -> Adapter:
    """The row's adapter class (``module:Class`` from the backend's spec), built."""
    assert row.adapter is not None, row.backend
    module, cls = row.adapter.split(":")
    return getattr(importlib.import_module(module), cls)(env, p, row)


def _free(device: torch.device) -> None:
    gc.collect()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.empty_cache()


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def run_backend(row: BackendRow, adapter: Adapter, batch: Batch, kind: MHA | MLA, env: RunEnv,
                opts: RunOptions, num_layers: int, ceiling: float | None, seed: int,
                timer: SpreadHostTimer | None = None) -> bool:
    """Fill ``row``: checks with fresh inputs, then timing. Raises nothing.

    Returns True when ``timer`` took the adapter (its build is timed again at
    the end of the run, and the timer closes it then)."""
    dev = env.device
    tol = tolerance(str(env.dtype).removeprefix("torch."), env.kv_cache_dtype)
    errors: list[float] = []
    unwritten = 0
    first_s = 0.0
    plan = None
    try:
        for c in range(max(1, opts.checks)):
            gen = torch.Generator().manual_seed(seed * 1000 + c)
            cache = adapter.alloc_cache(batch.num_pages, batch.page_size)
            fill_random_(cache, gen)
            inp = kind.inputs(batch, env.dtype, gen)
            kind.write(adapter, cache, batch, inp)
            out = kind.output(batch, env.dtype, dev, float("nan"))  # poisoned: unwritten elements show
            if c == 0:
                with Ticker(env.progress, f"{row.label} {row.group}/{row.shape}") as t:
                    plan = adapter.build(batch)
                    kind.run(adapter, plan, inp, cache, out)
                    _sync(dev)
                first_s = t.elapsed_s
                row.kernel = adapter.kernel_name(plan)
            else:
                plan = adapter.build(batch)
                kind.run(adapter, plan, inp, cache, out)
                _sync(dev)
            unwritten += int(torch.isnan(out).sum())
            ref = kind.reference(adapter, cache, batch, inp)
            errors.append(relative_error(out, ref))
            del cache, out, ref
        row.check = Check(errors, tol, unwritten)
        row.status = RAN
        if not row.check.ok:
            row.reason = (f"wrong result: rel. error {max(errors):.2e} > {tol:.0e}" if unwritten == 0
                          else f"wrong result: {unwritten} output elements never written")
        if opts.timing:
            row.perf, samples = _time(adapter, plan, batch, kind, env, opts, num_layers, ceiling, first_s)
            if timer is not None and samples:
                timer.add(lambda: adapter.build(batch), samples, _final_build(row.perf, adapter))
                return True
    except RoutedElsewhere as e:
        row.status, row.reason = SKIPPED, f"{ROUTED_ELSEWHERE}{e}"
    except Unsupported as e:
        row.status, row.reason = SKIPPED, f"not runnable here: {e}"
    except Exception as e:  # one backend's failure must not stop the others
        row.status, row.reason = FAILED, one_line(e)
        if row.check is not None:  # failed while timing: keep the check
            row.reason = "timing failed: " + row.reason
    finally:
        plan = None
        _free(dev)
    return False


def _build_fields(build: HostTiming, num_layers: int, per_layer_us: float) -> dict[str, Any]:
    """The Perf fields that follow from the build timing: c, its median and
    CPU time, and the step projection c + L x t with c's share of it."""
    step = build.min_us + num_layers * per_layer_us
    return dict(build_us=build.min_us, build_median_us=build.median_us, build_cpu_us=build.cpu_min_us,
                build_samples=build.samples, step_us=step, build_share=build.min_us / step if step else 0.0)


def _final_build(perf: Perf, adapter: Adapter) -> Callable:
    def done(build: HostTiming, span_s: float) -> None:
        for name, value in _build_fields(build, perf.num_layers, perf.per_layer_us).items():
            setattr(perf, name, value)
        perf.build_span_s = round(span_s, 1)
        adapter.close()
    return done


def _time(adapter: Adapter, plan: Any, batch: Batch, kind: MHA | MLA, env: RunEnv, opts: RunOptions,
          num_layers: int, ceiling: float | None, first_s: float) -> tuple[Perf, list]:
    dev = env.device
    elem = torch.empty(0, dtype=adapter.cache_torch_dtype()).element_size()
    n = max(1, min(num_layers, math.ceil(opts.timed_cache_bytes / max(1, kind.layer_bytes(batch, elem)))))
    if dev.type != "cuda":
        n = 1
    caches = []
    for _ in range(n):
        c = adapter.alloc_cache(batch.num_pages, batch.page_size)
        fill_random_(c)
        caches.append(c)
    gen = torch.Generator().manual_seed(opts.seed + 7)
    inp = kind.inputs(batch, env.dtype, gen)
    out = kind.output(batch, env.dtype, dev, 0.0)

    def step_layers():
        for c in caches:
            kind.run(adapter, plan, inp, c, out)

    cuda = dev.type == "cuda"
    t = time_device(step_layers, dev, calls=max(1, 8 // n) if cuda else 1, max_seconds=opts.time_budget_s,
                    samples=50 if cuda else 3, settle_s=opts.settle_s if cuda else 0.0)
    per_layer = t.median_us / n
    # c is timed with the timed caches freed, the same state for every row
    del caches
    _free(dev)
    # the CPU path checks more than it times
    quick = {} if cuda else dict(repeats=3, warmup=0, rounds=1, threads=None)
    samples = host_samples(lambda: adapter.build(batch), dev, **quick)
    nbytes = kind.kv_bytes(batch, elem)
    bw = nbytes / (per_layer * 1e-6)
    perf = Perf(per_layer_us=per_layer, min_us=t.min_us / n, method=t.method, samples=t.samples,
                layers_timed=n, first_call_s=first_s, host_probe_us=host_probes(dev) if cuda else None,
                kv_bytes=nbytes, kv_read_tbs=bw / 1e12, ceiling_fraction=(bw / ceiling) if ceiling else None,
                num_layers=num_layers, tflops=kind.flops(batch) / (per_layer * 1e-6) / 1e12,
                **_build_fields(summarize(samples), num_layers, per_layer))
    return perf, samples


def run_group(g: GroupPlan, env: RunEnv, opts: RunOptions, page_size: int, ceiling: float | None,
              timer: SpreadHostTimer | None = None) -> GroupRun:
    a = g.attn
    out = GroupRun(
        name=g.name, layers=g.layers,
        attention=dict(num_heads=a.num_heads, num_kv_heads=a.num_kv_heads, head_size=a.head_size,
                       head_size_v=a.head_size_v, sliding_window=a.sliding_window, soft_cap=a.logits_soft_cap,
                       has_sink=a.has_sink, use_mla=a.use_mla),
        selected=g.selected, selection_error=g.selection_error,
        fa_version=g.fa_version, flashinfer_decode=g.flashinfer_decode)
    for si, sp in enumerate(g.shapes):
        # one batch per page size: an MLA row runs with its backend's kernel block size
        batches: dict[int, Batch] = {}
        # a backend's rows (its variants too) share one seed: the same inputs
        backend_index = {name: i for i, name in enumerate(dict.fromkeys(r.backend for r in sp.rows))}
        for plan_row in sp.rows:
            bi = backend_index[plan_row.backend]
            row = BackendRow(group=g.name, shape=sp.shape.kind, backend=plan_row.backend,
                             variant=plan_row.variant, selected=plan_row.selected)
            out.rows.append(row)
            if plan_row.skip is not None:
                row.reason = plan_row.skip
                continue
            kind = layer_kind(g, plan_row)
            try:
                adapter = load_adapter(plan_row, env, kind.p)
                missing = adapter.unavailable()
            except Exception as e:
                adapter, missing = None, f"adapter failed to load: {one_line(e)}"
            if missing:
                row.reason = missing
                continue
            page = plan_row.page_size or page_size
            if page not in batches:
                batches[page] = make_batch(sp.shape, page, env.device, seed=opts.seed + si, spare_pages=64)
            env.progress(f"{g.name}/{sp.shape.kind}: {row.label}")
            if not run_backend(row, adapter, batches[page], kind, env, opts, g.layers, ceiling,
                               seed=opts.seed + 31 * si + bi, timer=timer):
                adapter.close()
            del adapter
            _free(env.device)
        del batches
    # the MLA prefill row computes a different part of the step: no contender
    out.fastest = fastest_per_shape([r for r in out.rows if r.backend != MLA_PREFILL])
    _verdict(out)
    return out


def _verdict(g: GroupRun) -> None:
    if g.selected is None:
        g.verdict, g.verdict_detail = "not-selected", g.selection_error or "explain selected no backend"
        return
    mine = [r for r in g.rows if r.backend == g.selected and not r.variant]
    if not mine:
        g.verdict, g.verdict_detail = "missing", f"{g.selected} was not run (filtered out)"
        return
    # shapes whose requests vLLM sends elsewhere (the MLA prefill backend) confirm nothing either way
    mine = [r for r in mine if not r.routed_elsewhere] or mine
    failed = [r for r in mine if r.status == FAILED]
    wrong = [r for r in mine if r.status == RAN and not r.correct]
    skipped = [r for r in mine if r.status == SKIPPED]
    if failed:
        g.verdict, g.verdict_detail = "failed", f"{failed[0].shape}: {failed[0].reason}"
    elif wrong:
        g.verdict, g.verdict_detail = "wrong", f"{wrong[0].shape}: {wrong[0].reason}"
    elif skipped:
        g.verdict, g.verdict_detail = "missing", skipped[0].reason
    else:
        kernels = sorted({r.kernel for r in mine if r.kernel})
        g.verdict, g.verdict_detail = "confirmed", f"{g.selected} ran and was correct ({'; '.join(kernels)})"


def make_env(opts: RunOptions, dtype_name: str, kv_cache_dtype: str, progress: Callable[[str], None]) -> RunEnv:
    dev = torch.device(opts.device)
    cap = torch.cuda.get_device_capability(dev) if dev.type == "cuda" else None
    return RunEnv(device=dev, capability=cap, dtype=DTYPES[dtype_name], kv_cache_dtype=kv_cache_dtype,
                  progress=progress)


def run_model(plan: RunPlan, opts: RunOptions, device_name: str, kernels_source: str = "") -> RunReport:
    """Every group of the plan, every shape, every row."""
    env = make_env(opts, plan.dtype, plan.kv_cache_dtype, opts.progress)
    ceiling = copy_ceiling(env.device) if opts.timing else None
    shapes = plan.groups[0].shapes if plan.groups else ()
    rep = RunReport(
        model=plan.model, device=device_name,
        capability=f"{env.capability[0]}.{env.capability[1]}" if env.capability else None,
        torch=torch.__version__, dtype=plan.dtype, kv_cache_dtype=plan.kv_cache_dtype, page_size=plan.page_size,
        shapes={sp.shape.kind: sp.shape.describe() for sp in shapes},
        copy_ceiling_tbs=ceiling / 1e12 if ceiling else None, kernels_source=kernels_source)
    timer = SpreadHostTimer(env.device) if env.device.type == "cuda" and opts.timing and opts.build_span_s > 0 else None
    for g in plan.groups:
        rep.groups.append(run_group(g, env, opts, plan.page_size, ceiling, timer))
    if timer is not None and timer.jobs:
        opts.progress(f"build cost c: {len(timer.jobs)} builds timed again, spread over {opts.build_span_s:.0f} s")
        try:
            timer.finish(opts.build_span_s)
            rep.notes.append(f"build cost c: the fastest of each build's host runs (torch at one thread), "
                             f"timed with its row and again in passes spread over {opts.build_span_s:.0f} s")
        except Exception as e:  # keep each row's first figure
            rep.notes.append(f"spread build timing failed ({one_line(e)}); c is from the samples taken before it")
    env.workspace.clear()
    _free(env.device)
    return rep
