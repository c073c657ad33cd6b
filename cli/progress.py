"""`attn-select run`'s progress on stderr: a live line on a terminal, plain
"[run] ..." lines elsewhere (a CI log keeps every step, readable as text).

The runner reports free-text steps (a row starting, a JIT compile still
running, the spread build timing) through one callable; this module only
shows them. The live line is transient: the report on stdout stays clean.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Callable, Iterator


@contextlib.contextmanager
def run_progress(stream=None) -> Iterator[Callable[[str], None]]:
    """A ``progress(msg)`` callable for the runner, live while the block runs.

    Live only when ``stream`` (default stderr) is a terminal (FORCE_COLOR
    does not make a log live); NO_COLOR keeps it but drops its colours."""
    stream = sys.stderr if stream is None else stream
    if not getattr(stream, "isatty", lambda: False)():
        yield lambda msg: print(f"[run] {msg}", file=stream, flush=True)
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from attn_select.cli.color import forced

    console = Console(file=stream, no_color=forced() is False, highlight=False, emoji=False)
    columns = (SpinnerColumn(), TimeElapsedColumn(), TextColumn("[bold]run[/bold]  {task.description}"))
    with Progress(*columns, console=console, transient=True, refresh_per_second=8) as bar:
        task = bar.add_task("loading torch, the model and the selection", total=None)
        # The runner's threads (the JIT ticker) call this too: Progress.update locks.
        yield lambda msg: bar.update(task, description=escape(msg))
