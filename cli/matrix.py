"""`attn-select matrix`: vLLM 0.33.0's feature-support table for every
backend, read from the same declarations the selector uses."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from attn_select.cli import options as o

app = typer.Typer()


@app.command("matrix")
def matrix_cmd(
    capability: Annotated[Optional[str], typer.Option("--capability", help="Narrow to one GPU (X.Y): evaluate capability checks there and add its priority lists.")] = None,
    kernels: Annotated[Optional[str], typer.Option("--kernels", help=f"Installed kernels for capability rules (with --capability), comma-separated from {o.KERNEL_NAMES} (or none). Default: all.")] = None,
    fmt: o.FormatOpt = o.Format.text,
) -> None:
    """Feature-support table of every attention backend (dtypes, KV-cache
    dtypes, block sizes, head sizes, capability, sinks, sparse, MLA,
    multimodal prefix, attention types, CUDA graphs).

    A computed fact shows the rule's description. `--format markdown` is
    what docs/matrix.md holds.
    """
    from attn_select.cli.formats import render
    from attn_select.cli.inputs import parse_capability, resolve_kernels
    from attn_select.selector.errors import UserError
    from attn_select.selector.matrix import build_matrix

    cap = None
    if capability is not None:
        cap = parse_capability(capability)
    elif kernels is not None:
        raise UserError("--kernels only matters with --capability (it feeds capability rules)")
    kern = resolve_kernels(kernels, probed_device=False)
    typer.echo(render(build_matrix(cap, kern), fmt.value), nl=False)
