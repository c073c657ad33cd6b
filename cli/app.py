"""The root command: global options, one sub-app per command, one error path.

Each command module holds one command and imports its heavy dependencies
inside the command function, so `attn-select explain` never pays for torch.
"""

from __future__ import annotations

import os
import sys

import typer

from attn_select.cli import __version__
from attn_select.cli.exit import ExitCode

app = typer.Typer(
    name="attn-select",
    help="See, check and test which attention backend vLLM 0.33.0 picks for a model on an NVIDIA GPU.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

_STATE = {"debug": False}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"attn-select {__version__} (selection logic of vLLM 0.33.0)")
        raise typer.Exit()


@app.callback()
def root(
    debug: bool = typer.Option(False, "--debug", help="Show Python tracebacks for errors."),
    no_color: bool = typer.Option(False, "--no-color", help="Plain output, no colour."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    _STATE["debug"] = debug
    if no_color:
        os.environ["NO_COLOR"] = "1"


def _register() -> None:
    # Imported here, not at the top, so that a broken optional command module
    # cannot stop the others from loading.
    from attn_select.cli import explain

    app.add_typer(explain.app)
    for name in ("run", "lock", "check", "matrix"):
        try:
            module = __import__(f"attn_select.cli.{name}", fromlist=["app"])
        except ModuleNotFoundError as exc:
            if exc.name != f"attn_select.cli.{name}":
                raise
            continue
        app.add_typer(module.app)


_register()


def main(argv: list[str] | None = None) -> int:
    """Console entry point: user errors become one line on stderr and exit 2.

    click handles usage errors itself in standalone mode (message, exit 2);
    everything else that escapes the command lands here.
    """
    from attn_select.selector.errors import UserError

    # attn-select validates only its own inputs with pydantic; scanning every
    # installed distribution for pydantic plugins costs ~10 ms per process
    # (typer's own adapters switch plugins off the same way).
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        app(args=argv, standalone_mode=True)
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else ExitCode.USAGE)
    except UserError as exc:
        if debug:
            raise
        typer.echo(f"error: {exc}", err=True)
        return ExitCode.USAGE
    except Exception as exc:
        if debug:
            raise
        typer.echo(
            f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)",
            err=True,
        )
        return ExitCode.INTERNAL
    return ExitCode.OK


if __name__ == "__main__":
    sys.exit(main())
