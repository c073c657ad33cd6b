"""`attn-select run MODEL`: one real paged-KV forward step (decode, prefill,
mixed) through every attention backend that can execute here, checked against
a float32 reference and timed; confirms the backend `explain` selected.

Exit 0 when the selected backend ran and was correct in every group, 1 when
it failed, was wrong, or is not installed here (a warning instead with
--allow-missing), 2 for bad usage or no GPU. On a CPU (``--device cpu``) a
CUDA-only selection cannot run: exit 0 when every backend that ran was
correct, saying the selection was not confirmed (``cpu_status``). torch and
the kernels are imported only inside the command; the text report is
cli/formats/run_text.py.
"""

from __future__ import annotations

import contextlib
import re
import sys
import warnings
from enum import Enum
from typing import Annotated, Any, Iterator, Optional

import typer

from attn_select.cli.exit import ExitCode
from attn_select.cli.options import TrustRemoteCodeOpt, seconds, what_if_option
from attn_select.selector.errors import UserError

app = typer.Typer()


class RunFormat(str, Enum):
    text = "text"
    json = "json"
    junit = "junit"  # with --gpus or --ray: one test case per GPU / task


FANOUT = "Fan-out (several GPUs or a Ray cluster)"


KINDS = ("decode", "prefill", "mixed")


@app.command("run")
def run_cmd(
    ctx: typer.Context,
    model: Annotated[str, typer.Argument(help="Built-in model profile, config.json, or a folder holding one.")],
    device: Annotated[Optional[str], typer.Option("--device", help="cuda (default: the visible GPU) or cpu (reference, FLEX_ATTENTION and TRITON_ATTN in Triton's interpreter, small shapes).")] = None,
    # explain's --tp and --dtype; run's own --kv-cache-dtype, --block-size and
    # --backend below take less (auto or fp8*) or mean more (a page size, a list)
    tp: Annotated[int, what_if_option("tp", own_panel=False)] = 1,
    dtype: Annotated[Optional[str], what_if_option("dtype", own_panel=False)] = None,
    quantization: Annotated[Optional[str], what_if_option("quantization", own_panel=False)] = None,
    kv_cache_dtype: Annotated[Optional[str], typer.Option("--kv-cache-dtype", help="vLLM --kv-cache-dtype (auto, fp8, ...).")] = None,
    block_size: Annotated[Optional[int], typer.Option("--block-size", help="Page size of the paged KV cache (default 16; passed to the selection when given).")] = None,
    # vLLM's --attention-backend is accepted under its own name too
    backend: Annotated[Optional[str], typer.Option("--backend", "--attention-backend", help="Run only these backends (comma-separated vLLM names); one name is also the selection's vLLM --attention-backend.")] = None,
    batch: Annotated[Optional[int], typer.Option("--batch", min=1, help="Decode requests (default 32; prefill keeps 4).")] = None,
    context: Annotated[Optional[int], typer.Option("--context", min=1, help="Cached tokens per decode request (default 4096).")] = None,
    shapes: Annotated[str, typer.Option("--shapes", help="Batch shapes to run: decode,prefill,mixed.")] = "decode,prefill,mixed",
    checks: Annotated[int, typer.Option("--checks", min=1, max=100, help="Fresh-input correctness checks per backend and shape (at most 100: each is a whole step and its float32 reference).")] = 2,
    no_timing: Annotated[bool, typer.Option("--no-timing", help="Check correctness only.")] = False,
    build_span: Annotated[float, typer.Option("--build-span", click_type=seconds(0.0, infinite=False), help="Seconds over which every build is timed again at the end, for a steadier build cost c on a noisy host (0: only each row's own timing).")] = 20.0,
    capability: Annotated[Optional[str], typer.Option("--capability", help="With --device cpu: the GPU the selection is for (default 9.0).")] = None,
    trust_remote_code: TrustRemoteCodeOpt = False,
    allow_missing: Annotated[bool, typer.Option("--allow-missing", help="Selected backend not installed here: warn instead of exit 1.")] = False,
    fmt: Annotated[RunFormat, typer.Option("--format", "-f", help="Output format (junit: with --gpus or --ray).")] = RunFormat.text,
    gpus: Annotated[Optional[str], typer.Option("--gpus", help="all or 0,1,...: one worker per GPU of this node, in parallel, merged (docs/node.md).", rich_help_panel=FANOUT)] = None,
    ray: Annotated[Optional[str], typer.Option("--ray", help="Ray cluster address, auto or local: one task per GPU type, merged (docs/fleet.md; the fleet extra).", rich_help_panel=FANOUT)] = None,
    every_node: Annotated[bool, typer.Option("--every-node", help="With --ray: one task per node instead of per GPU type.", rich_help_panel=FANOUT)] = False,
    windows: Annotated[int, typer.Option("--windows", min=1, max=100, help="Timing windows per worker (at most 100: each times every backend and shape again); their spread is the run-to-run noise a slow GPU must exceed.", rich_help_panel=FANOUT)] = 3,
    worker_timeout: Annotated[float, typer.Option("--worker-timeout", click_type=seconds(1.0), help="Seconds before a worker is killed and reported as hung.", rich_help_panel=FANOUT)] = 1200.0,
    jit_cache: Annotated[Optional[str], typer.Option("--jit-cache", help="Folder the workers share their JIT caches in (default ~/.cache/attn-select/jit; variables the machine sets win).", rich_help_panel=FANOUT)] = None,
    fail_on_slow: Annotated[bool, typer.Option("--fail-on-slow", help="A GPU slower than its peers beyond the noise fails the run (exit 1).", rich_help_panel=FANOUT)] = False,
) -> None:
    """Run one forward step through each attention backend and check it."""
    if gpus is not None or ray is not None:
        from attn_select.cli.fanout import run_fanout

        run = dict(model=model, device=device, tp=tp, dtype=dtype, quantization=quantization, kv_cache_dtype=kv_cache_dtype,
                   block_size=block_size, backend=backend, batch=batch, context=context, shapes=shapes,
                   checks=checks, timing=not no_timing, capability=capability, allow_missing=allow_missing,
                   build_span=build_span, trust_remote_code=trust_remote_code)
        raise typer.Exit(run_fanout(run, gpus=gpus, ray=ray, every_node=every_node, windows=windows,
                                    timeout_s=worker_timeout, jit_cache=jit_cache, fail_on_slow=fail_on_slow,
                                    fmt=fmt.value))
    if fmt is RunFormat.junit or every_node:
        raise UserError("--format junit and --every-node are for fanned-out runs: add --gpus or --ray")
    from attn_select.cli.progress import run_progress

    with library_warnings(debug=_debug(ctx)), run_progress() as progress:
        report = execute(model, device=device, tp=tp, dtype=dtype, quantization=quantization,
                         kv_cache_dtype=kv_cache_dtype,
                         block_size=block_size, backend=backend, batch=batch, context=context, shapes=shapes,
                         checks=checks, timing=not no_timing, capability=capability, allow_missing=allow_missing,
                         build_span=build_span, progress=progress, trust_remote_code=trust_remote_code)
    if fmt is RunFormat.json:
        typer.echo(report.to_json())
    else:
        render_text(report)
    raise typer.Exit(report.exit_code)


def _debug(ctx: typer.Context) -> bool:
    return bool(ctx.find_root().params.get("debug"))


# Warnings the run path causes on purpose: flex_attention runs eagerly on a
# CPU (tiny shapes; torch.compile would add minutes of CPU compile).
EXPECTED_WARNINGS = ("flex_attention called without torch.compile",)


@contextlib.contextmanager
def library_warnings(debug: bool) -> Iterator[None]:
    """Keep torch's and Triton's warnings off stderr: the expected ones are
    dropped, any other is counted in one line at the end (``--debug`` shows
    them all as Python prints them)."""
    if debug:
        yield
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        for text in EXPECTED_WARNINGS:
            warnings.filterwarnings("ignore", message=re.escape(text))
        yield
    if caught:
        n = len(caught)
        print(f"note: {n} library warning{'s' if n != 1 else ''} hidden (--debug shows them)",
              file=sys.stderr, flush=True)


def parse_backends(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    from attn_select.backends import registry

    names = []
    for part in text.split(","):
        if part.strip():
            try:
                names.append(registry.get(part.strip()).name)  # "A, B": ours, a list
            except registry.UnknownBackend as e:
                raise UserError(str(e)) from None
    if not names:  # "" or ",": not every backend, which a missing --backend means
        raise UserError(f"--backend {text!r} names no backend; give vLLM backend names, comma-separated "
                        "(e.g. TRITON_ATTN,FLEX_ATTENTION), or leave --backend out to run every one")
    return tuple(names)


def _shapes(text: str, batch: int | None, context: int | None, cpu: bool):
    from attn_select.selector.run_plan import standard_shapes

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
            quantization: str | None = None, kv_cache_dtype: str | None = None, block_size: int | None = None, backend: str | None = None,
            batch: int | None = None, context: int | None = None, shapes: str = "decode,prefill,mixed",
            checks: int = 2, timing: bool = True, capability: str | None = None, allow_missing: bool = False,
            build_span: float = 20.0, progress=lambda m: None, facts: Any = None, trust_remote_code: bool = False):
    """The command without the rendering: returns a RunReport with ``exit_code`` set.

    ``facts`` (a ModelFacts) replaces loading ``model`` (for scripts and tests)."""
    check_run_device(device)
    if block_size is not None and block_size <= 0:
        raise UserError(f"block size must be a positive integer, got {block_size}")
    from attn_select.selector.vllm_names import dtype_error, forced_dtype

    if dtype is not None and dtype_error(dtype):
        raise UserError(dtype_error(dtype))
    run_backends = parse_backends(backend)
    _need_torch()
    cpu = device == "cpu"
    shape_list = _shapes(shapes, batch, context, cpu)
    dev, torch_device, kern = run_target(device, capability)
    from attn_select.selector.explain import explain
    from attn_select.selector.overrides import Overrides

    if facts is None:
        from attn_select.selector.profiles import load_model

        # vLLM's "auto" dtype depends on the GPU (no bfloat16 before 8.0).
        facts = load_model(model, tp=tp, dtype=dtype or "auto", capability=dev.capability,
                           trust_remote_code=trust_remote_code)
    if kv_cache_dtype not in (None, "auto") and not kv_cache_dtype.startswith("fp8"):
        raise UserError(f"attn-select run supports --kv-cache-dtype auto or fp8*, got {kv_cache_dtype!r}")
    # before planning: the plan itself lists every request's length (--batch 10**9 exhausts memory there)
    from attn_select.backends.run.tune_sweep import device_memory
    from attn_select.selector.tune_workload import cpu_run_size_error, run_size_error

    too_big = run_size_error(shape_list, block_size or 16, facts.groups, forced_dtype(dtype) or facts.dtype,
                             kv_cache_dtype or "auto", device_memory(torch_device))
    if too_big:
        raise UserError(too_big)
    if cpu and (too_slow := cpu_run_size_error(shape_list, facts.groups)):
        raise UserError(too_slow)
    ov = Overrides(dtype=dtype, quantization=quantization, kv_cache_dtype=kv_cache_dtype, block_size=block_size,
                   backend=run_backends[0] if run_backends and len(run_backends) == 1 else None, tp=tp)
    exp = explain(facts, dev, kern, ov)

    from attn_select.selector.run_plan import plan_run

    plan = plan_run(exp, forced_dtype(dtype) or facts.dtype, kv_cache_dtype or "auto", shape_list, block_size or 16,
                    run_backends)

    from attn_select.backends.run.runner import RunOptions, run_model

    opts = RunOptions(device=torch_device, checks=checks, timing=timing, build_span_s=build_span,
                      progress=progress)
    if cpu:
        opts.time_budget_s = 0.2
    report = run_model(plan, opts, device_name=dev.name, kernels_source=kern.source)
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


def run_target(device: str | None, capability: str | None):
    """(the selector's Device, the torch device, the kernels) for a run here.

    On a CPU the Triton interpreter is chosen first (before triton is
    imported; an explicit TRITON_INTERPRET wins) and the selection is for
    ``capability`` (default 9.0); on a GPU, for the visible GPU."""
    _need_torch()
    cpu = device == "cpu"
    if cpu and "triton" not in sys.modules:
        import os

        os.environ.setdefault("TRITON_INTERPRET", "1")

    import torch  # only now: the run path

    if not cpu and not torch.cuda.is_available():
        raise NoDevice(NO_DEVICE)
    from attn_select.selector.config import Capability
    from attn_select.selector.device import Device

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

    return dev, torch_device, resolve_kernels(None, probed_device=not cpu)


class NoDevice(UserError):
    """No CUDA device visible: exit 2 with one line."""


NO_DEVICE = ("no CUDA device visible; `run --device cpu` checks the kernels that run on a CPU "
             "(TRITON_ATTN, FLEX_ATTENTION), and `explain --device NAME` shows the selection for a GPU")


def check_run_device(device: str | None) -> None:
    """--device on run names a torch device; a device profile (explain's
    --device) gets told where it belongs."""
    if device is None or device in ("cuda", "cpu") or re.fullmatch(r"cuda:[0-9]{1,3}", device):
        return
    takes = "--device on run takes cuda, cuda:N or cpu"
    from attn_select.selector import profiles

    try:
        profile = profiles.load_device(device) if len(device) <= 64 else None
    except UserError:
        profile = None
    if profile is None:
        raise UserError(f"{takes}, got {device[:64]!r}")
    raise UserError(f"{takes}; {profile.profile} is a device profile for explain: use "
                    f"`explain --device {profile.profile}`, or `run --device cpu --capability {profile.capability}` "
                    "to check the kernels on the CPU for that GPU's selection")


def exit_status(report, allow_missing: bool) -> tuple[int, str]:
    bad = [g for g in report.groups if g.verdict in ("failed", "wrong", "not-selected")]
    missing = [g for g in report.groups if g.verdict == "missing"]
    if bad:
        g = bad[0]
        return ExitCode.FINDINGS, f"{g.name}: selected backend {g.selected or '-'} {g.verdict}: {g.verdict_detail}"
    if report.capability is None:  # a CPU run (the runner knows a capability only on a GPU)
        cpu = cpu_status(report)
        if cpu is not None:
            return cpu
    if missing:
        g = missing[0]
        text = f"{g.name}: selected backend {g.selected} not run here: {g.verdict_detail}"
        if allow_missing:
            return ExitCode.OK, "warning: " + text
        return ExitCode.FINDINGS, text
    return ExitCode.OK, "selected backend confirmed in every group"


def cpu_status(report) -> tuple[int, str] | None:
    """A CPU run's own verdict, or None to judge it as a GPU run is judged.

    A CPU checks the kernels that run on it (TRITON_ATTN in Triton's
    interpreter, FLEX_ATTENTION), not a CUDA-only selection: it passes when
    every backend that ran was correct and each group whose selected backend
    cannot run on a CPU had something run, and says the selection was not
    confirmed. A failure or a wrong result of any backend is a finding."""
    from attn_select.backends.run.adapter import runs_on_cpu
    from attn_select.backends.run.report import FAILED, RAN

    broken = [r for g in report.groups for r in g.rows
              if r.status == FAILED or (r.status == RAN and not r.correct)]
    if broken:
        r = broken[0]
        what = "failed" if r.status == FAILED else "was wrong"
        return ExitCode.FINDINGS, f"{r.group}/{r.shape}: {r.label} {what} on the CPU: {r.reason}"
    unconfirmed = [g for g in report.groups if g.verdict == "missing"]
    if not unconfirmed:
        return None
    from attn_select.backends import registry

    for g in unconfirmed:
        if runs_on_cpu(registry.BACKENDS[g.selected].run_adapter) or not any(r.status == RAN for r in g.rows):
            return None  # it could have run here, or nothing was checked: a GPU run's verdict
    ran = list(dict.fromkeys(r.label for g in report.groups for r in g.rows if r.status == RAN))

    why = "; ".join(f"{g.name}: {g.selected}: {g.verdict_detail}" for g in unconfirmed)
    # a GPU run confirms only a backend attn-select run has an adapter for
    gpu = all(registry.BACKENDS[g.selected].run_adapter is not None for g in unconfirmed)
    return ExitCode.OK, (f"every backend that runs on a CPU ran and was correct ({', '.join(ran)}); "
                         f"the selection was not confirmed ({why})" + (": run on a GPU to confirm it" if gpu else ""))


def render_text(report, file=None) -> None:
    """The text report on stdout at the terminal's width, or into ``file``
    (a log: wide, no colour)."""
    from attn_select.cli.formats.run_text import run_text

    if file is None:
        sys.stdout.write(run_text(report))
    else:
        file.write(run_text(report, width=200, stream=file))
