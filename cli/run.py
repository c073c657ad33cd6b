"""`attn-select run MODEL`: one real paged-KV forward step (decode, prefill,
mixed) through every attention backend that can execute here, checked against
a float32 reference and timed; confirms the backend `explain` selected.

Exit 0 when the selected backend ran and was correct in every group, 1 when
it failed, was wrong, or is not installed here (a warning instead with
--allow-missing), 2 for bad usage or no GPU. torch and the kernels are
imported only inside the command.
"""

from __future__ import annotations

import sys
from enum import Enum
from typing import Annotated, Any, Optional

import typer

from attn_select.cli.exit import ExitCode
from attn_select.cli.options import what_if_option
from attn_select.selector.errors import UserError

app = typer.Typer()


class RunFormat(str, Enum):
    text = "text"
    json = "json"


KINDS = ("decode", "prefill", "mixed")


@app.command("run")
def run_cmd(
    model: Annotated[str, typer.Argument(help="Built-in model profile, config.json, or a folder holding one.")],
    device: Annotated[Optional[str], typer.Option("--device", help="cuda (default: the visible GPU) or cpu (reference, FLEX_ATTENTION and TRITON_ATTN in Triton's interpreter, small shapes).")] = None,
    # explain's --tp and --dtype; run's own --kv-cache-dtype, --block-size and
    # --backend below take less (auto or fp8*) or mean more (a page size, a list)
    tp: Annotated[int, what_if_option("tp", own_panel=False)] = 1,
    dtype: Annotated[Optional[str], what_if_option("dtype", own_panel=False)] = None,
    kv_cache_dtype: Annotated[Optional[str], typer.Option("--kv-cache-dtype", help="vLLM --kv-cache-dtype (auto, fp8, ...).")] = None,
    block_size: Annotated[Optional[int], typer.Option("--block-size", help="Page size of the paged KV cache (default 16; passed to the selection when given).")] = None,
    # vLLM's --attention-backend is accepted under its own name too
    backend: Annotated[Optional[str], typer.Option("--backend", "--attention-backend", help="Run only these backends (comma-separated vLLM names); one name is also the selection's vLLM --attention-backend.")] = None,
    batch: Annotated[Optional[int], typer.Option("--batch", min=1, help="Decode requests (default 32; prefill keeps 4).")] = None,
    context: Annotated[Optional[int], typer.Option("--context", min=1, help="Cached tokens per decode request (default 4096).")] = None,
    shapes: Annotated[str, typer.Option("--shapes", help="Batch shapes to run: decode,prefill,mixed.")] = "decode,prefill,mixed",
    checks: Annotated[int, typer.Option("--checks", min=1, help="Fresh-input correctness checks per backend and shape.")] = 2,
    no_timing: Annotated[bool, typer.Option("--no-timing", help="Check correctness only.")] = False,
    build_span: Annotated[float, typer.Option("--build-span", min=0.0, help="Seconds over which every build is timed again at the end, for a steadier build cost c on a noisy host (0: only each row's own timing).")] = 20.0,
    capability: Annotated[Optional[str], typer.Option("--capability", help="With --device cpu: the GPU the selection is for (default 9.0).")] = None,
    allow_missing: Annotated[bool, typer.Option("--allow-missing", help="Selected backend not installed here: warn instead of exit 1.")] = False,
    fmt: Annotated[RunFormat, typer.Option("--format", "-f", help="Output format.")] = RunFormat.text,
) -> None:
    """Run one forward step through each attention backend and check it."""
    report = execute(model, device=device, tp=tp, dtype=dtype, kv_cache_dtype=kv_cache_dtype,
                     block_size=block_size, backend=backend, batch=batch, context=context, shapes=shapes,
                     checks=checks, timing=not no_timing, capability=capability, allow_missing=allow_missing,
                     build_span=build_span, progress=_stderr)
    if fmt is RunFormat.json:
        typer.echo(report.to_json())
    else:
        render_text(report)
    raise typer.Exit(report.exit_code)


def _stderr(msg: str) -> None:
    print(f"[run] {msg}", file=sys.stderr, flush=True)


def _parse_backends(text: str | None) -> tuple[str, ...] | None:
    if not text:
        return None
    from attn_select.backends import registry

    names = []
    for part in text.split(","):
        if part.strip():
            try:
                names.append(registry.get(part).name)
            except registry.UnknownBackend as e:
                raise UserError(str(e)) from None
    return tuple(names)


def _shapes(text: str, batch: int | None, context: int | None, cpu: bool):
    from attn_select.backends.run.batch import standard_shapes

    kinds = tuple(k.strip() for k in text.split(",") if k.strip())
    bad = [k for k in kinds if k not in KINDS]
    if bad or not kinds:
        raise UserError(f"--shapes: unknown batch shape {', '.join(bad) or '(none)'}; choose from {', '.join(KINDS)}")
    if cpu:  # the CPU path runs interpreters and eager kernels: keep it small
        batch = batch or 2
        context = context or 24
    out = standard_shapes(batch, context, kinds)
    if cpu:
        out = [s.__class__(**{**s.__dict__, "prefill_new": min(s.prefill_new, 8),
                              "prefills": min(s.prefills, 2)}) for s in out]
    return out


def execute(model: str, *, device: str | None = None, tp: int = 1, dtype: str | None = None,
            kv_cache_dtype: str | None = None, block_size: int | None = None, backend: str | None = None,
            batch: int | None = None, context: int | None = None, shapes: str = "decode,prefill,mixed",
            checks: int = 2, timing: bool = True, capability: str | None = None, allow_missing: bool = False,
            build_span: float = 20.0, progress=lambda m: None, facts: Any = None):
    """The command without the rendering: returns a RunReport with ``exit_code`` set.

    ``facts`` (a ModelFacts) replaces loading ``model`` (for scripts and tests)."""
    if device not in (None, "cuda", "cpu") and not str(device).startswith("cuda:"):
        raise UserError(f"--device must be cuda or cpu, got {device!r}")
    if block_size is not None and block_size <= 0:
        raise UserError(f"block size must be a positive integer, got {block_size}")
    from attn_select.selector.vllm_names import dtype_error, forced_dtype

    if dtype is not None and dtype_error(dtype):
        raise UserError(dtype_error(dtype))
    run_backends = _parse_backends(backend)
    _need_torch()
    cpu = device == "cpu"
    shape_list = _shapes(shapes, batch, context, cpu)
    if cpu and "triton" not in sys.modules:
        # On a CPU, Triton kernels run only in its interpreter, which must be
        # chosen before triton is imported; an explicit TRITON_INTERPRET wins.
        import os

        os.environ.setdefault("TRITON_INTERPRET", "1")

    import torch  # only now: the run path

    if not cpu and not torch.cuda.is_available():
        raise NoDevice("no CUDA device visible")
    from attn_select.selector.config import Capability
    from attn_select.selector.device import Device
    from attn_select.selector.explain import explain
    from attn_select.selector.overrides import Overrides

    if cpu:
        from attn_select.cli.inputs import parse_capability

        cap = parse_capability(capability or "9.0")
        dev = Device(name="cpu", capability=cap, source=f"cpu run; selection for SM{cap.to_int()}")
        torch_device = "cpu"
    else:
        torch_device = device or "cuda"
        major, minor = torch.cuda.get_device_capability(torch_device)
        dev = Device(name=torch.cuda.get_device_name(torch_device), capability=Capability(major, minor),
                     source="visible GPU (torch)")
    from attn_select.cli.inputs import resolve_kernels

    kern = resolve_kernels(None, probed_device=not cpu)
    if facts is None:
        try:
            from attn_select.selector.profiles import load_model
        except ImportError:
            raise UserError("model profiles are not available in this build") from None
        # vLLM's "auto" dtype depends on the GPU (no bfloat16 before 8.0).
        facts = load_model(model, tp=tp, dtype=dtype or "auto", capability=dev.capability)
    if kv_cache_dtype not in (None, "auto") and not kv_cache_dtype.startswith("fp8"):
        raise UserError(f"attn-select run supports --kv-cache-dtype auto or fp8*, got {kv_cache_dtype!r}")
    ov = Overrides(dtype=dtype, kv_cache_dtype=kv_cache_dtype, block_size=block_size,
                   backend=run_backends[0] if run_backends and len(run_backends) == 1 else None, tp=tp)
    exp = explain(facts, dev, kern, ov)

    from attn_select.backends.run.runner import RunOptions, run_model

    opts = RunOptions(device=torch_device, shapes=shape_list, page_size=block_size or 16, dtype=forced_dtype(dtype),
                      kv_cache_dtype=kv_cache_dtype or "auto", backends=run_backends, checks=checks,
                      timing=timing, build_span_s=build_span, progress=progress)
    if cpu:
        opts.time_budget_s = 0.2
    report = run_model(facts, exp, opts, device_name=dev.name, kernels_source=kern.source)
    if cpu:
        report.notes.append(f"CPU run: the selection is for SM{dev.capability.to_int()}; "
                            "CUDA-only backends are skipped")
    report.exit_code, report.summary = exit_status(report, allow_missing)
    return report


def _need_torch() -> None:
    """torch is the [run] extra: without it, say so before anything imports it."""
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        raise UserError("attn-select run needs torch, which the base install leaves out: "
                        "pip install 'attn-select[run]' (explain, lock, check and matrix need no torch)")


class NoDevice(UserError):
    """No CUDA device visible: exit 2 with one line."""


def exit_status(report, allow_missing: bool) -> tuple[int, str]:
    bad = [g for g in report.groups if g.verdict in ("failed", "wrong", "not-selected")]
    missing = [g for g in report.groups if g.verdict == "missing"]
    if bad:
        g = bad[0]
        return ExitCode.FINDINGS, f"{g.name}: selected backend {g.selected or '-'} {g.verdict}: {g.verdict_detail}"
    if missing:
        g = missing[0]
        text = f"{g.name}: selected backend {g.selected} not run here: {g.verdict_detail}"
        if allow_missing:
            return ExitCode.OK, "warning: " + text
        return ExitCode.FINDINGS, text
    return ExitCode.OK, "selected backend confirmed in every group"


def _fmt_us(x: float) -> str:
    return f"{x:,.1f}" if x < 1000 else f"{x:,.0f}"


def render_text(report, file=None) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    con = Console(file=file, highlight=False, soft_wrap=False, width=200 if file is None else 200)
    ceil = f"{report.copy_ceiling_tbs:.2f} TB/s" if report.copy_ceiling_tbs else "n/a"
    con.print(f"[bold]attn-select run[/bold] {escape(report.model)} on {escape(report.device)}"
              f" (SM {report.capability or '-'}), torch {report.torch}, {report.dtype}, kv {report.kv_cache_dtype},"
              f" page {report.page_size}, copy ceiling {ceil}")
    for kind, desc in report.shapes.items():
        con.print(f"  {kind}: {desc}")
    for g in report.groups:
        a = g.attention
        extras = []
        if a.get("sliding_window"):
            extras.append(f"window {a['sliding_window']}")
        if a.get("soft_cap"):
            extras.append(f"soft cap {a['soft_cap']}")
        if a.get("has_sink"):
            extras.append("sinks")
        sel = escape(g.selected or "none")
        fa = f", FA{g.fa_version}" if g.fa_version else ""
        fi = f", FlashInfer decode {g.flashinfer_decode}" if g.flashinfer_decode else ""
        con.print()
        con.print(f"[bold]group {escape(g.name)}[/bold]: {g.layers} layers, {a['num_heads']}/{a['num_kv_heads']} heads,"
                  f" head {a['head_size']}{', ' + ', '.join(extras) if extras else ''}; selected {sel}{fa}{fi}")
        t = Table(show_lines=False, header_style="bold")
        for col in ("shape", "backend", "status", "kernel / reason", "rel err", "us/layer",
                    "KV TB/s", "% ceil", "build c us", "L x t us", "first s"):
            t.add_column(col, no_wrap=col in ("shape", "backend", "status"),
                         justify="right" if col not in ("shape", "backend", "status", "kernel / reason") else "left")
        for r in g.rows:
            name = escape(r.label) + (" *" if r.selected else "")
            if r.status == "ran":
                err = f"{max(r.check.rel_errors):.1e}" if r.check else "-"
                status = "[green]ok[/green]" if r.correct else "[red]WRONG[/red]"
                detail = escape(r.kernel + (f" - {r.reason}" if r.reason else ""))
            else:
                err, status, detail = "-", ("[red]failed[/red]" if r.status == "failed" else "skipped"), escape(r.reason)
            pf = r.perf
            t.add_row(r.shape, name, status, detail, err,
                      _fmt_us(pf.per_layer_us) if pf else "-",
                      f"{pf.kv_read_tbs:.2f}" if pf else "-",
                      f"{100 * pf.ceiling_fraction:.0f}" if pf and pf.ceiling_fraction else "-",
                      _fmt_us(pf.build_us) if pf else "-",
                      _fmt_us(pf.num_layers * pf.per_layer_us) if pf else "-",
                      f"{pf.first_call_s:.1f}" if pf else "-")
        con.print(t)
        if g.fastest:
            con.print("fastest: " + ", ".join(f"{k} {escape(v)}" for k, v in g.fastest.items()))
        color = "green" if g.verdict == "confirmed" else "red"
        con.print(f"[{color}]{g.verdict}[/{color}]: {escape(g.verdict_detail)}")
    for n in report.notes:
        con.print(f"note: {escape(n)}")
    con.print(("[green]" if report.exit_code == 0 else "[red]") + escape(report.summary) + "[/]")
