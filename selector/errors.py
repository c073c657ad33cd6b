"""The one exception type for user mistakes, and how its message is shown.

The CLI prints a ``UserError`` as one line (``one_line``) and exits 2;
``--debug`` shows the traceback. A message that echoes what the user gave
shows it with ``shown``: a 1 MB field must not become a 1 MB error line.
"""

from __future__ import annotations

import re


class UserError(Exception):
    """Bad input: the message says what is wrong and what to do."""


# What computing with a config value of the wrong kind raises (a field only
# one config class or model file reads, which no schema types): the
# engines fail on it too, so it is the user's input, not our bug.
WRONG_KIND = (TypeError, ValueError, KeyError, AttributeError, IndexError, ZeroDivisionError)


def wrong_kind(where: str, exc: BaseException, who: str) -> UserError:
    """The user error for a WRONG_KIND exception while reading a config."""
    return UserError(f"{where}: a field holds a value of the wrong kind ({type(exc).__name__}: "
                     f"{cut(str(exc), 120)}); {who} fail on it too: check the config's values")


SHOWN_CHARS = 80  # of an echoed value, before the ellipsis
LINE_CHARS = 800  # of a whole error line


def cut(text: str, limit: int = SHOWN_CHARS) -> str:
    """``text`` cut to ``limit`` characters, the cut marked with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)`` for an error message, cut short: a long string keeps
    its opening quote and ends in an ellipsis, a long list or mapping shows
    its start; null, true and false are written as in JSON and YAML. Never
    builds the whole repr of a huge string."""
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, str) and len(value) > limit:
        return repr(value[:limit])[:-1] + "\u2026"
    try:
        text = repr(value)
    except RecursionError:  # a value nested past the interpreter's limit
        text = f"<{type(value).__name__} nested too deeply to show>"
    return cut(text, limit)


_BREAKS = re.compile(r"\s*[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]\s*")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # what a terminal would act on
_LONG_TOKEN = re.compile(r"\S{%d,}" % (SHOWN_CHARS + 40))


def one_line(message: str) -> str:
    """An error message as one bounded line: line breaks become spaces,
    other control characters (a NUL, a terminal escape) are written as
    ``\\xNN``, a run of more than 120 non-space characters (a value no
    message cut) is cut to 80, and the whole line to 800 characters, keeping
    its end (what to do)."""
    text = _BREAKS.sub(" ", message)
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", text)
    text = _LONG_TOKEN.sub(lambda m: cut(m.group(0)), text)
    if len(text) > LINE_CHARS:
        tail = LINE_CHARS // 3
        text = text[: LINE_CHARS - tail - 1] + "\u2026" + text[-tail:]
    return text
