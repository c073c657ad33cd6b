"""The root command: global options, one sub-app per command, one error path.

Each command module holds one command and imports its heavy dependencies
inside the command function, so `attn-select explain` never pays for torch.
"""

from __future__ import annotations

import errno
import io
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
    # --install-completion / --show-completion (typer imports its completion
    # code either way; the two options cost no import)
    add_completion=True,
    # -h as well as --help, on every command (click hands the setting down)
    context_settings={"help_option_names": ["-h", "--help"]},
)

def _version(value: bool) -> None:
    if value:
        typer.echo(f"attn-select {__version__} (selection logic of vLLM {VLLM_VERSION})")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    debug: bool = typer.Option(False, "--debug", help="Show Python tracebacks for errors (also after the command)."),
    no_color: bool = typer.Option(False, "--no-color", help="Plain output, no colour (also after the command; NO_COLOR too). FORCE_COLOR colours output that is not a terminal."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    # --debug is read from argv by main(), which handles the errors that
    # escape typer; here it is only declared.
    if no_color:
        os.environ["NO_COLOR"] = "1"
    _echo_color(ctx)


def _echo_color(ctx: typer.Context) -> None:
    """click's echo strips colour codes off a pipe: under FORCE_COLOR it must
    keep them (the subcommands' contexts inherit this)."""
    from attn_select.cli.color import forced

    ctx.color = forced()


COMMANDS = ("explain", "run", "tune", "lock", "check", "matrix", "profiles", "doctor")
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


# The root's switches, also accepted after the subcommand (`explain X --debug`).
ROOT_SWITCHES = ("--debug", "--no-color")


def hoist_root_switches(args: list[str]) -> list[str]:
    """``args`` with the root switches given after the subcommand moved before
    it, where click reads them. Nothing after a ``--`` moves: that is another
    program's command line."""
    at = next((i for i, a in enumerate(args) if not a.startswith("-")), None)
    if at is None:
        return args
    end = args.index("--", at) if "--" in args[at:] else len(args)
    moved = [a for a in args[at + 1:end] if a in ROOT_SWITCHES]
    if not moved:
        return args
    rest = [a for a in args[at + 1:end] if a not in ROOT_SWITCHES]
    return args[:at] + moved + [args[at]] + rest + args[end:]


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


def _usage_error_types() -> tuple[type[BaseException], type[BaseException]]:
    """click's UsageError and Abort: vendored in typer 0.28, click's own before."""
    try:
        from typer._click.exceptions import UsageError
        from typer.exceptions import Abort
    except ImportError:  # typer < 0.28 runs on click
        from click.exceptions import Abort, UsageError  # type: ignore[no-redef]
    return UsageError, Abort


def usage_error_line(exc: BaseException, command: str | None, args: list[str] | None = None) -> str:
    """A click usage error (unknown option, bad value, missing argument) as
    the same one line as every other error, with where to read more."""
    from attn_select.selector.errors import one_line

    message = exc.format_message() if hasattr(exc, "format_message") else str(exc)  # type: ignore[union-attr]
    short = getattr(exc, "option_name", None)
    if isinstance(short, str) and len(short) == 2 and short[0] == "-" and short[1] != "-" and args:
        # click reads "-pcp" as the short options -p -c -p and names only "-p";
        # the word as typed is what the user can find and fix (vllm serve's -pcp, -dcp, -tp)
        before = args[: args.index("--")] if "--" in args else args
        typed = next((a for a in before if a.startswith(short) and len(a) > 2 and not a.startswith("--")
                      and "=" not in a), None)
        if typed is not None:
            message = message.replace(f"option: {short}", f"option: {typed}", 1)
    message = one_line(message).rstrip(".")
    if message[:2].istitle():  # "No such option" -> "no such option", as our own messages read
        message = message[0].lower() + message[1:]
    where = "attn-select" + (f" {command}" if command else "")
    return f"error: {message} (see {where} --help)"


def main(argv: list[str] | None = None) -> int:
    """Console entry point: every error is one line on stderr.

    typer runs in non-standalone mode, so its usage errors (unknown option,
    bad value, missing argument) come back here instead of being drawn as a
    box: they exit 2 like every other input error. ``typer.Exit`` gives its
    code back; anything else that escapes a command lands here too.
    """
    from attn_select.selector.errors import UserError, one_line

    _no_pydantic_plugins()
    if sys.stdout is None:  # started with standard output closed (>&-)
        sys.stdout = _ClosedStdout()
        _hold_descriptor_1()
    args = hoist_root_switches(list(argv if argv is not None else sys.argv[1:]))
    debug = "--debug" in args
    command = _command(args)
    _register((command,) if command else COMMANDS)
    usage_error, abort = _usage_error_types()
    try:
        code = app(args=args, prog_name="attn-select", standalone_mode=False)
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else ExitCode.USAGE)
    except usage_error as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":
            return ExitCode.USAGE  # the help is already printed, as in standalone mode
        typer.echo(usage_error_line(exc, command, args), err=True)
        return ExitCode.USAGE
    except abort:
        typer.echo("aborted", err=True)
        return ExitCode.FINDINGS
    except UserError as exc:
        if debug:
            raise
        typer.echo(f"error: {one_line(str(exc))}", err=True)
        return ExitCode.USAGE
    except Exception as exc:
        if debug:
            raise
        if isinstance(exc, OSError) and _stdout_failed(exc):
            # > /dev/full, a full disk or quota, a lost terminal: the report could not be written
            typer.echo(f"error: cannot write the report to standard output: {exc.strerror or exc}", err=True)
            return ExitCode.USAGE
        if isinstance(exc, ModuleNotFoundError) and _is_dependency(exc.name):
            # a broken install (seen on a machine where pydantic_core was not carried over): say
            # what is missing, not "internal error"
            dist = _DISTRIBUTIONS[exc.name.partition(".")[0]]
            typer.echo(f"error: attn-select needs the Python package {dist!r}, which is not installed here: "
                       f"pip install {dist} (or reinstall attn-select)", err=True)
            return ExitCode.USAGE
        typer.echo(
            f"internal error: {type(exc).__name__}: {one_line(str(exc))} (rerun with --debug for the traceback)",
            err=True,
        )
        return ExitCode.INTERNAL
    return code if isinstance(code, int) else ExitCode.OK


class _ClosedStdout(io.TextIOBase):
    """Standard output when the process started with it closed: Python sets
    sys.stdout to None and click's echo then writes nothing, so the report
    was lost with exit 0. Writing here fails as a write to /dev/full does,
    and the same error path says so; a command that writes nothing to
    standard output (lock -o FILE) still succeeds."""

    encoding = "utf-8"  # click takes a stream with these as a text stream as it is
    errors = "strict"

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "it is closed")

    def flush(self) -> None:
        pass  # nothing was written, so nothing is lost; the interpreter flushes at exit


def _hold_descriptor_1() -> None:
    """With descriptor 1 closed, the next file opened (lock -o's lockfile, a
    cache entry) would get it, and a subprocess left to inherit standard
    output would write into that file: /dev/null holds the number instead."""
    try:
        os.fstat(1)
        return  # open after all (Python saw it closed for another reason)
    except OSError:
        pass
    fd = os.open(os.devnull, os.O_WRONLY)
    if fd != 1:
        os.dup2(fd, 1)
        os.close(fd)


def _stdout_failed(exc: OSError) -> bool:
    """Whether ``exc`` came from writing standard output (typer handles a
    closed pipe itself): it names no file, and stdout cannot be flushed.
    Standard output is then swapped for a sink, so that the interpreter's
    own flush at exit does not fail a second time."""
    if exc.filename is not None:
        return False
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    else:
        # the failed write may have left nothing buffered: its frames say
        tb = exc.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        code = tb.tb_frame.f_code if tb is not None else None
        if code is None or code.co_name not in ("write", "echo", "flush", "print", "_write_buffer"):
            return False
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives until exit
    return True


# attn-select's own dependencies (pyproject's [project].dependencies and theirs), by import name
_DISTRIBUTIONS = {"pydantic": "pydantic", "pydantic_core": "pydantic-core", "typer": "typer", "click": "click",
                  "rich": "rich", "yaml": "pyyaml", "annotated_types": "annotated-types",
                  "typing_inspection": "typing-inspection", "typing_extensions": "typing-extensions",
                  "markdown_it": "markdown-it-py", "pygments": "pygments", "shellingham": "shellingham"}


def _is_dependency(name: str | None) -> bool:
    """Whether a missing module is one of attn-select's required packages (an optional GPU package
    missing is a reason in the run report, never this error)."""
    return bool(name) and name.partition(".")[0] in _DISTRIBUTIONS


if __name__ == "__main__":
    sys.exit(main())
