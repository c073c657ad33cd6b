"""JSON a user hands us (config.json, params.json, hf_quant_config.json,
modules.json, safetensors headers, JSON option values), read within bounds:
every problem is one ``UserError`` naming the file, never a crash or a hang.

Python's json module parses what vLLM parses, but left alone it recurses
once per nesting level (100,000 ``[`` end in RecursionError), converts
integers of any length (and raises ValueError past 4,300 digits), and reads
a file whole whatever its size. Here:

- files: regular files only (a FIFO would block), at most ``MAX_FILE_BYTES``;
- nesting: at most ``MAX_DEPTH`` levels (real configs nest five or six);
- integers: at most ``MAX_INT_DIGITS`` digits (2**64 has 20).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from attn_select.selector.errors import UserError, shown

MAX_FILE_BYTES = 8 << 20  # a config.json is a few KB; the largest real ones (label maps) stay under 2 MB
MAX_DEPTH = 64
MAX_INT_DIGITS = 20


def os_problem(exc: OSError, path: object) -> str:
    """An OSError while reading ``path``, in words: which file, and why."""
    name = exc.filename if exc.filename is not None else path
    return f"cannot read {shown(str(name)) if len(str(name)) > 200 else name}: {exc.strerror or exc}"


def read_bytes(path: Path | str, what: str, limit: int = MAX_FILE_BYTES) -> bytes:
    """A regular file's bytes, at most ``limit`` of them, or a user error
    (missing, unreadable, a folder or device, too large)."""
    try:
        info = os.stat(path)
        if stat.S_ISDIR(info.st_mode):
            raise UserError(f"{what} is a folder, not a file: {path}")
        if not stat.S_ISREG(info.st_mode):
            raise UserError(f"{what} is not a regular file: {path}")
        if info.st_size > limit:
            raise UserError(too_large(path, what, limit))
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except FileNotFoundError:
        raise UserError(f"{what} not found: {path}") from None
    except OSError as exc:
        raise UserError(os_problem(exc, path)) from None
    except ValueError:  # a NUL in the name: the OS cannot look it up
        raise UserError(f"{what} {shown(str(path))} is not a file name: it holds a NUL character") from None
    if len(data) > limit:  # grew since the stat
        raise UserError(too_large(path, what, limit))
    return data


def too_large(path: object, what: str, limit: int) -> str:
    return f"{what} {path} is larger than {limit >> 20} MiB, more than any real one; is it the right file?"


class _IntTooLong(ValueError):
    def __init__(self, digits: str) -> None:
        super().__init__(digits)
        self.digits = digits


def _int(text: str) -> int:
    if len(text) - text.startswith("-") > MAX_INT_DIGITS:
        raise _IntTooLong(text)
    return int(text)


def loads(data: bytes | str, where: str) -> Any:
    """Parse JSON text; ``where`` (a file name) starts every error."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            raise UserError(f"{where} is not UTF-8 text; JSON files are") from None
    try:
        value = json.loads(data, parse_int=_int)
    except _IntTooLong as exc:
        digits = len(exc.digits.lstrip("-"))
        raise UserError(
            f"{where}: an integer of {digits:,} digits ({exc.digits[:12]}\u2026); "
            f"attn-select reads integers of at most {MAX_INT_DIGITS} digits"
        ) from None
    except RecursionError:
        raise UserError(nested_too_deeply(where)) from None
    except json.JSONDecodeError as exc:
        raise UserError(f"{where}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    except ValueError as exc:  # what json.loads raises besides its decode errors
        raise UserError(f"{where}: invalid JSON: {shown(str(exc))}") from None
    if not _within_depth(value, MAX_DEPTH):
        raise UserError(nested_too_deeply(where))
    return value


def nested_too_deeply(where: str) -> str:
    return f"{where}: JSON nested more than {MAX_DEPTH} levels deep; a model config nests a few levels"


def read_json(path: Path | str, what: str = "", limit: int = MAX_FILE_BYTES) -> Any:
    """A JSON file, read and parsed within the bounds above."""
    return loads(read_bytes(path, what or "file", limit), str(path))


def _within_depth(value: Any, limit: int) -> bool:
    """Whether no list or object in ``value`` lies more than ``limit`` levels
    down (the top level is 1). Iterative: the value may be 1,000 deep."""
    stack = [(value, 1)] if isinstance(value, (dict, list)) else []
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return False
        children = item.values() if isinstance(item, dict) else item
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return True
