"""`attn-select tune MODEL`: which vLLM attention setting is fastest for a
workload on this GPU, measured.

Every setting vLLM accepts for the model (selector/tune_settings.py) runs on
every point of a batch x context grid and the workload's shapes, each point
checked as `run` checks it (backends/run/tune_sweep.py); the recommendation
(selector/tune_result.py) is printed in vLLM's own flags, only when its win
beats the noise measured in the same sweep. Exit 0 when the sweep ran, 1
when a setting was wrong at some point or vLLM's default failed, 2 for bad
usage. Text report and terminal plot: cli/formats/tune_text.py; PNG/SVG:
cli/tune_plot.py (matplotlib, the ``[plot]`` extra).
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from attn_select.cli.exit import ExitCode
from attn_select.cli.options import TextOrJson, TextOrJsonOpt, TrustRemoteCodeOpt, seconds, what_if_option
from attn_select.selector.errors import UserError

app = typer.Typer()


# The CPU path runs the interpreters: one point, a tiny one.
CPU_BATCHES, CPU_CONTEXTS = (2,), (24,)
CPU_WORKLOAD = "decode:2x24"
GPU_WORKLOAD = "decode:32x4096,prefill:4x512/1024"


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "attn-select" / "tune"


@dataclass
class TuneReport:
    model: str
    device: str
    dtype: str
    settings: list[dict]  # the accepted settings (tune_settings.Setting.to_dict)
    dropped: list[dict]  # {setting, page_size, kv_cache_dtype, reason}
    points: list[Any]  # PointResult
    best: list[Any]  # PointBest
    recommendation: Any  # Recommendation
    default_label: str
    jit_s: float = 0.0  # first calls (JIT compile, autotune), apart from the timings
    notes: list[str] = field(default_factory=list)
    exit_code: int = 0
    stand_ins: dict[str, str] = field(default_factory=dict)  # backend -> what run executes instead of vLLM's

    def to_json(self) -> str:
        from attn_select.selector.tune_result import SCHEMA

        data = dict(schema=SCHEMA, model=self.model, device=self.device, dtype=self.dtype,
                    default=self.default_label, settings=self.settings, dropped=self.dropped,
                    points=[asdict(p) for p in self.points], best=[asdict(b) for b in self.best],
                    recommendation=asdict(self.recommendation), jit_s=self.jit_s, notes=self.notes,
                    exit_code=self.exit_code, stand_ins=self.stand_ins)
        return json.dumps(data, indent=2, default=str)


@app.command("tune")
def tune_cmd(
    ctx: typer.Context,
    model: Annotated[str, typer.Argument(help="Built-in model profile, config.json, or a folder holding one.")],
    device: Annotated[Optional[str], typer.Option("--device", help="cuda (default: the visible GPU) or cpu (TRITON_ATTN and FLEX_ATTENTION in Triton's interpreter, a tiny sweep).")] = None,
    tp: Annotated[int, what_if_option("tp", own_panel=False)] = 1,
    dtype: Annotated[Optional[str], what_if_option("dtype", own_panel=False)] = None,
    quantization: Annotated[Optional[str], what_if_option("quantization", own_panel=False)] = None,
    batches: Annotated[Optional[str], typer.Option("--batches", help="Batch sizes of the grid (default 1,8,32,128,256; cpu 2).")] = None,
    contexts: Annotated[Optional[str], typer.Option("--contexts", help="Context lengths of the grid (default 1k,4k,16k,64k; cpu 24).")] = None,
    page_sizes: Annotated[str, typer.Option("--page-sizes", help="Page sizes (vLLM --block-size) to sweep, e.g. 16,64.")] = "16",
    kv_cache_dtypes: Annotated[str, typer.Option("--kv-cache-dtypes", help="KV dtypes to sweep, e.g. auto,fp8.")] = "auto",
    settings: Annotated[Optional[str], typer.Option("--settings", help="Compare only these settings (labels, or backend names for all their variants), e.g. FLASHINFER,FLASH_ATTN; vLLM's default always runs.")] = None,
    workload: Annotated[Optional[str], typer.Option("--workload", help="Traffic mix: decode:BxC,prefill:BxN/C (@W weights) or a YAML file (docs/tune.md). Default decode:32x4096,prefill:4x512/1024.")] = None,
    repeats: Annotated[int, typer.Option("--repeats", min=1, max=100, help="Timings of vLLM's default per point (at most 100): their spread is the noise a win must beat.")] = 3,
    checks: Annotated[int, typer.Option("--checks", min=1, max=100, help="Fresh-input correctness checks per point (at most 100).")] = 1,
    capability: Annotated[Optional[str], typer.Option("--capability", help="With --device cpu: the GPU the selection is for (default 9.0).")] = None,
    trust_remote_code: TrustRemoteCodeOpt = False,
    plot: Annotated[Optional[Path], typer.Option("--plot", help="Write the plots to FILE.png and FILE.svg (needs the \\[plot] extra).")] = None,
    cache_dir: Annotated[Optional[Path], typer.Option("--cache-dir", help="Where finished points are kept (default $XDG_CACHE_HOME/attn-select/tune).")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Measure every point again; keep nothing.")] = False,
    max_seconds: Annotated[Optional[float], typer.Option("--max-seconds", click_type=seconds(0, infinite=False), help="Measure no new run after this many seconds; the rest are listed as not measured, and a re-run goes on from the cache (0: report from the cache only).")] = None,
    fmt: TextOrJsonOpt = TextOrJson.text,
) -> None:
    """Measure which vLLM attention setting is fastest for a workload here."""
    from attn_select.cli.run import library_warnings

    if plot is not None and plot.name in ("", ".", ".."):  # Path("") is "."; it has no name to add .png to
        raise UserError(f"--plot {str(plot)!r}: give a file name for the plots (e.g. --plot llama: llama.png, llama.svg)")
    if plot is not None:
        from attn_select.cli.tune_plot import require_matplotlib

        require_matplotlib()  # before the sweep, not after it
        _check_plot_folder(plot)
    with library_warnings(debug=bool(ctx.find_root().params.get("debug"))), tune_progress() as progress:
        report = execute(model, device=device, tp=tp, dtype=dtype, quantization=quantization, batches=batches, contexts=contexts,
                         page_sizes=page_sizes, kv_cache_dtypes=kv_cache_dtypes, settings=settings, workload=workload,
                         repeats=repeats, checks=checks, capability=capability,
                         cache_dir=None if no_cache else (cache_dir or default_cache_dir()), progress=progress,
                         max_seconds=max_seconds, trust_remote_code=trust_remote_code)
    if plot is not None:
        from attn_select.cli.tune_plot import save_plots

        written = save_plots(report, plot)
        report.notes.append("plots: " + ", ".join(str(p) for p in written))
    if fmt is TextOrJson.json:
        typer.echo(report.to_json())
    else:
        from attn_select.cli.formats.tune_text import tune_text

        sys.stdout.write(tune_text(report))
    raise typer.Exit(report.exit_code)


def _check_plot_folder(plot: Path) -> None:
    """--plot's folder must be there to write in before the sweep starts: a
    sweep can take hours, and a bad path was only found when it ended."""
    import os

    folder = plot.parent
    from attn_select.selector.errors import cut

    try:
        is_dir = folder.is_dir()
    except (OSError, ValueError):
        is_dir = False
    if not is_dir:
        raise UserError(f"--plot {cut(str(plot))}: {cut(str(folder))} is not an existing folder; "
                        "create it or give another path")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UserError(f"--plot {cut(str(plot))}: cannot write in the folder {cut(str(folder))}; "
                        "give another path")


class tune_progress:
    """A rich progress bar with an ETA over the sweep's tasks on a terminal;
    plain "[tune] ..." lines elsewhere. Yields (on_task, message)."""

    def __enter__(self):
        stream = sys.stderr
        self._bar = None
        if not stream.isatty():
            def on_task(done, total, what):
                if done < total:
                    print(f"[tune] {done + 1}/{total} {what}", file=stream, flush=True)
            return on_task, (lambda msg: None)
        from rich.console import Console
        from rich.markup import escape
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        console = Console(file=stream, highlight=False, emoji=False)
        self._bar = Progress(BarColumn(), MofNCompleteColumn(), TextColumn("eta"), TimeRemainingColumn(),
                             TextColumn("{task.description}"), console=console, transient=True)
        self._bar.__enter__()
        task = self._bar.add_task("selecting", total=None)

        def on_task(done, total, what):
            self._bar.update(task, completed=done, total=total, description=escape(what))

        return on_task, (lambda msg: self._bar.update(task, description=escape(msg)))

    def __exit__(self, *exc):
        if self._bar is not None:
            self._bar.__exit__(*exc)
        return False


def _kv_dtypes(text: str) -> tuple[str, ...]:
    from attn_select.selector.config import KV_CACHE_DTYPES
    from attn_select.selector.errors import shown

    vals = tuple(dict.fromkeys(v.strip() for v in text.split(",") if v.strip()))
    unknown = [v for v in vals if v not in KV_CACHE_DTYPES]  # "fp8xyz" passed as fp8* and swept nothing
    if unknown:
        raise UserError(f"--kv-cache-dtypes: unknown KV-cache dtype {shown(unknown[0])}; vLLM's are "
                        f"{', '.join(KV_CACHE_DTYPES)}")
    bad = [v for v in vals if v != "auto" and not v.startswith("fp8")]
    if not vals or bad:
        raise UserError(f"--kv-cache-dtypes: attn-select run supports auto or fp8*, got {', '.join(bad) or '(none)'}")
    return vals


def execute(model: str, *, device: str | None = None, tp: int = 1, dtype: str | None = None,
            quantization: str | None = None, batches: str | None = None, contexts: str | None = None, page_sizes: str = "16",
            kv_cache_dtypes: str = "auto", settings: str | None = None, workload: str | None = None,
            repeats: int = 3, checks: int = 1,
            capability: str | None = None, cache_dir: Path | None = None, progress=None,
            facts: Any = None, memory_bytes: int | None = None, max_seconds: float | None = None,
            trust_remote_code: bool = False) -> TuneReport:
    """The command without the rendering (tests and scripts call it)."""
    from attn_select.cli.run import check_run_device
    from attn_select.selector.tune_workload import (
        DEFAULT_BATCHES, DEFAULT_CONTEXTS, check_sweep_size, grid, parse_ints, parse_workload,
    )
    from attn_select.selector.vllm_names import dtype_error, forced_dtype

    check_run_device(device)
    if max_seconds is not None and not math.isfinite(max_seconds):
        raise UserError(f"--max-seconds {max_seconds}: give a number of seconds")
    if dtype is not None and dtype_error(dtype):  # vLLM's --dtype names, as run and explain take them
        raise UserError(dtype_error(dtype))
    cpu = device == "cpu"
    # an empty value is refused as such (it had been the default, silently)
    bs = parse_ints(batches, "batches") if batches is not None else (CPU_BATCHES if cpu else DEFAULT_BATCHES)
    cs = parse_ints(contexts, "contexts") if contexts is not None else (CPU_CONTEXTS if cpu else DEFAULT_CONTEXTS)
    pages = parse_ints(page_sizes, "page-sizes")
    kvs = _kv_dtypes(kv_cache_dtypes)
    items = parse_workload(workload if workload is not None else (CPU_WORKLOAD if cpu else GPU_WORKLOAD))
    check_sweep_size(len(bs), len(cs), len(items), len(pages), len(kvs))
    shapes = list(dict.fromkeys(grid(bs, cs) + [it.shape for it in items]))
    on_task, message = progress or ((lambda d, t, w: None), (lambda m: None))

    from attn_select.cli.run import NoDevice, run_target

    try:
        dev, torch_device, kern = run_target(device, capability)
    except NoDevice:
        raise NoDevice("no CUDA device visible; `tune --device cpu` runs a tiny sweep of the kernels that run "
                       "on a CPU (TRITON_ATTN, FLEX_ATTENTION)") from None
    from attn_select.selector.explain import explain
    from attn_select.selector.overrides import Overrides

    if facts is None:
        from attn_select.selector.profiles import load_model

        facts = load_model(model, tp=tp, dtype=dtype or "auto", capability=dev.capability,
                           trust_remote_code=trust_remote_code)

    from attn_select.backends import registry
    from attn_select.backends.run.adapter import runs_on_cpu
    from attn_select.backends.run.runner import RunOptions
    from attn_select.backends.run.tune_sweep import device_memory, environment, measure
    from attn_select.selector.tune_plan import OUT_OF_TIME, plan_sweep, point_of, run_sweep
    from attn_select.selector.tune_result import ResultCache, best_per_point, recommend
    from attn_select.selector.tune_settings import DEFAULT_LABEL, candidate_settings, only_settings, stand_ins

    use_mla = any(g.attn.use_mla for g in facts.groups)
    candidates = only_settings(candidate_settings(use_mla), settings)
    base = Overrides(dtype=dtype, tp=tp, quantization=quantization)
    # vLLM's default engine config refused (a quantization method this GPU
    # cannot run): no setting can run either; one line, as explain says it
    explain(facts, dev, kern, base)
    sp = plan_sweep(facts, lambda ov: explain(facts, dev, kern, ov), candidates, base, shapes, pages, kvs,
                    memory_bytes if memory_bytes is not None else device_memory(torch_device),
                    runs_here=(lambda b: runs_on_cpu(registry.BACKENDS[b].run_adapter)) if cpu else (lambda b: True))
    opts = RunOptions(device=torch_device, checks=checks, timing=True, build_span_s=0.0, progress=message)
    if cpu:
        opts.time_budget_s = 0.2
    deadline = None if max_seconds is None else time.monotonic() + max_seconds
    results = run_sweep(sp, facts, lambda plan, check: measure(plan, opts, dev.name, check), ResultCache(cache_dir),
                        environment(torch_device), repeats=repeats, checks=checks, on_task=on_task,
                        out_of_time=lambda: deadline is not None and time.monotonic() > deadline)
    # the settings vLLM accepted somewhere in the sweep (they have results)
    accepted = {s.label: s for s in candidates if any(r.setting == s.label for r in results)}
    wl = [(point_of(it.shape), it.weight) for it in items]
    ours = stand_ins()
    rec = recommend(results, wl, accepted, DEFAULT_LABEL, ours)
    dropped = [dict(setting=d.setting.label, page_size=p, kv_cache_dtype=k, reason=d.reason)
               for (p, k), ds in sp.dropped.items() for d in ds]
    report = TuneReport(model=facts.name, device=dev.name, dtype=forced_dtype(dtype) or facts.dtype,
                        settings=[s.to_dict() for s in candidates if s.label in accepted], dropped=dropped,
                        points=results, best=best_per_point(results, DEFAULT_LABEL, ours), recommendation=rec,
                        stand_ins=ours, default_label=DEFAULT_LABEL,
                        jit_s=sum(r.first_call_s or 0.0 for r in results if not r.cached and not r.same_as))
    if cpu:
        report.notes.append(f"CPU sweep: the selection is for SM{dev.capability.to_int()}; CUDA-only settings "
                            "are skipped and CPU timings say nothing about a GPU")
    late = sum(r.reason.startswith(OUT_OF_TIME) for r in results)
    if late:
        again = ("run the same command again to measure them (finished points come from the cache)"
                 if cache_dir is not None else "with --no-cache nothing was kept: a re-run measures every point")
        report.notes.append(f"{late} run{'s' if late != 1 else ''} not measured: the sweep passed --max-seconds "
                            f"{max_seconds:g}; {again}")
    cached = sum(r.cached for r in results)
    if cached:
        report.notes.append(f"{cached} point{'s' if cached != 1 else ''} read from the cache")
    # a wrong result anywhere is a finding; a failure only of vLLM's default
    # (another setting's failure, e.g. out of memory, leaves it out of the ranking)
    broken = [r for r in results if r.status == "wrong" or (r.setting == DEFAULT_LABEL and r.status == "failed")]
    report.exit_code = ExitCode.FINDINGS if broken else ExitCode.OK
    if broken:
        r = broken[0]
        report.notes.append(f"{r.setting} {r.status} on {r.point}: {r.reason}")
    return report
