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
from attn_select.selector.engines import VLLM_VERSION

app = typer.Typer(
    name="attn-select",
    help=f"See, check and test which attention backend vLLM {VLLM_VERSION} picks for a model on an NVIDIA GPU.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

def _version(value: bool) -> None:
    if value:
        typer.echo(f"attn-select {__version__} (selection logic of vLLM {VLLM_VERSION})")
        raise typer.Exit()


@app.callback()
def root(
    debug: bool = typer.Option(False, "--debug", help="Show Python tracebacks for errors."),
    no_color: bool = typer.Option(False, "--no-color", help="Plain output, no colour."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    # --debug is read from argv by main(), which handles the errors that
    # escape typer; here it is only declared.
    if no_color:
        os.environ["NO_COLOR"] = "1"


COMMANDS = ("explain", "run", "lock", "check", "matrix", "doctor")
_registered: set[str] = set()


def _register(names: tuple[str, ...] = COMMANDS) -> None:
    """Add the named commands' sub-apps to the root app (once each).

    typer builds every registered command's parameters on each call, so a
    call registers only the command it runs; root --help registers all.
    """
    for name in names:
        if name in _registered:
            continue
        module = __import__(f"attn_select.cli.{name}", fromlist=["app"])
        app.add_typer(module.app)
        _registered.add(name)


def _command(argv: list[str]) -> str | None:
    """The subcommand named in argv (after any root options), if it is ours."""
    for arg in argv:
        if not arg.startswith("-"):
            return arg if arg in COMMANDS else None
    return None


def _no_pydantic_plugins() -> None:
    """Switch pydantic's plugins off, and skip loading the loader module.

    attn-select validates only its own inputs, and typer's adapters turn
    plugins off the same way. With PYDANTIC_DISABLE_PLUGINS set, pydantic's
    ``plugin._loader.get_plugins()`` returns nothing, but importing that
    module still imports ``importlib.metadata`` (~20 ms, a tenth of explain's
    budget). A stand-in module answers ``get_plugins()`` itself while plugins
    are disabled and hands any other use to the real module.
    """
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    name = "pydantic.plugin._loader"
    if name in sys.modules:
        return
    import types

    def real() -> types.ModuleType:
        if sys.modules.get(name) is stand_in:
            del sys.modules[name]
        import importlib

        return importlib.import_module(name)

    def get_plugins():  # same contract as pydantic's
        if os.environ.get("PYDANTIC_DISABLE_PLUGINS") in ("__all__", "1", "true"):
            return ()
        return real().get_plugins()

    def other(attr: str):
        # The import system probes dunders (__path__, ...): a plain module has none.
        if attr.startswith("__"):
            raise AttributeError(attr)
        return getattr(real(), attr)  # anything else pydantic asks for: the real module

    stand_in = types.ModuleType(name)
    stand_in.get_plugins = get_plugins
    stand_in.__getattr__ = other
    sys.modules[name] = stand_in


def main(argv: list[str] | None = None) -> int:
    """Console entry point: user errors become one line on stderr and exit 2.

    click handles usage errors itself in standalone mode (message, exit 2);
    everything else that escapes the command lands here.
    """
    from attn_select.selector.errors import UserError

    _no_pydantic_plugins()
    args = list(argv if argv is not None else sys.argv[1:])
    debug = "--debug" in args
    command = _command(args)
    _register((command,) if command else COMMANDS)
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
