"""`attn-select profiles`: the built-in model and device profiles, with the
facts that identify each (a model's architecture, heads, head size and
layers; a device's GPU and compute capability)."""

from __future__ import annotations

import typer

from attn_select.cli.options import TextOrJson, TextOrJsonOpt

app = typer.Typer()


@app.command("profiles")
def profiles_cmd(
    fmt: TextOrJsonOpt = TextOrJson.text,
) -> None:
    """List the built-in model profiles (MODEL) and device profiles (--device NAME)."""
    from attn_select.cli.formats import render
    from attn_select.selector.profiles import list_profiles

    typer.echo(render(list_profiles(), fmt.value), nl=False)
