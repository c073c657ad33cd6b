"""`attn-select doctor`: what this machine and the Python that runs vLLM
have that changes attention selection, in the spirit of `vllm collect-env`."""

from __future__ import annotations

from typing import Annotated

import typer

from attn_select.cli import options as o

app = typer.Typer()


@app.command("doctor")
def doctor_cmd(
    vllm_python: o.VllmPythonOpt = None,
    probe_network: Annotated[bool, typer.Option("--probe-network", help="Send one HEAD request (5 s timeout) to FlashInfer's cubin repository to see whether the trtllm paths could download their cubins. Off by default: doctor sends nothing.")] = False,
    import_timeout: Annotated[float, typer.Option("--import-timeout", click_type=o.seconds(1), help="Seconds each import test may take (the first includes importing torch).")] = 240,
    fmt: o.TextOrJsonOpt = o.TextOrJson.text,
) -> None:
    """Report the GPUs, driver, CUDA, torch, the engine and kernel packages
    (vLLM, SGLang, FlashInfer, flash-attn, FlashMLA, Triton), which
    FlashAttention builds import and why the others do not, FlashInfer's JIT
    prerequisites, the trtllm cubins, the environment variables that change
    selection, and the --kernels value explain would assume.

    Examines this Python, or the one given by --vllm-python. Exit 0; 2 for
    bad input.
    """
    from attn_select.selector.host.doctor_probe import diagnose
    from attn_select.cli.formats import render

    report = diagnose(vllm_python, probe_network, import_timeout)
    typer.echo(render(report, fmt.value), nl=False)
