"""Whether output is coloured: one rule for every writer (rich consoles, the
run progress line, and click's echo, which strips colour off a pipe unless
told otherwise). No rich import here: the root command reads it too."""

from __future__ import annotations

import os
import sys


def forced() -> bool | None:
    """True under FORCE_COLOR, False under NO_COLOR (which --no-color sets;
    it wins over FORCE_COLOR), None when neither: a terminal decides. Empty
    values count as unset, as both conventions say (no-color.org,
    force-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return None


def use_color(stream=None) -> bool:
    """Colour and styles for ``stream`` (default stdout)."""
    decided = forced()
    if decided is not None:
        return decided
    stream = sys.stdout if stream is None else stream
    return bool(getattr(stream, "isatty", lambda: False)())
