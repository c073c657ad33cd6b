"""YAML a user hands us (deployments files, lockfiles; the built-in
profiles are read the same way), parsed within bounds, with the line of
every key and item: every problem is one ``UserError`` as ``file:line:
problem``, never a crash or a hang.

PyYAML composes a whole document before it builds a value, so a 400-byte
"billion laughs" file (aliases of aliases) composes instantly and then
explodes, and an alias inside its own anchor (``&a [*a]``) makes a cycle.
Here values are built straight from libyaml's parse events, which come one
at a time, so every bound stops the parse where it is crossed:

- at most ``MAX_NODES`` values in all, an alias counting every value of
  what it repeats (the values themselves are shared, never copied);
- at most ``MAX_DEPTH`` levels of nesting;
- an alias inside its own anchor is an error, not a cycle;
- integers of at most ``MAX_INT_DIGITS`` digits;
- only plain scalar keys, no duplicates, no ``<<`` merge keys, one document;
- scalars built by PyYAML's safe constructor (no Python tags), its errors
  (an impossible date) reported at their line; a mapping or list may carry
  no tag but the plain ones (``!!python/object/apply`` on a list is an
  error, not a list).
"""

from __future__ import annotations

import re
from typing import Any, Union

import yaml

from attn_select.selector.errors import UserError
from attn_select.selector.validation_errors import dotted

Loc = tuple[Union[str, int], ...]

MAX_FILE_BYTES = 16 << 20
MAX_NODES = 100_000  # the example lockfile (8 deployments) holds 228 values; one of 3,000 about 85,000
MAX_DEPTH = 64
MAX_INT_DIGITS = 20

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the same events and marks, faster
_INT_TAG = "tag:yaml.org,2002:int"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_DIGITS = re.compile(r"[0-9]")
_OPEN = object()  # an anchor whose value is still being built


def read_text(path: str, what: str) -> str:
    """A YAML file's text (at most ``MAX_FILE_BYTES``, a regular file), or a
    one-line user error: missing, a folder, a FIFO or device, too large, not
    UTF-8 (with the line of the first bad byte)."""
    from attn_select.selector.safe_json import read_bytes

    data = read_bytes(path, what, MAX_FILE_BYTES)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1  # where to look, as every other error of the file says
        raise UserError(f"{path}:{line}: the {what} is not UTF-8 text (byte 0x{data[exc.start]:02x}); "
                        "save it as UTF-8") from None


def load(text: str, source: str) -> tuple[Any, dict[Loc, int]]:
    """(value, 1-based line of every mapping key and sequence item)."""
    builder = _Builder(source)
    try:
        for event in yaml.parse(text, Loader=_Loader):
            builder.feed(event)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        problem = exc.problem or exc.context or "invalid YAML"
        if exc.problem and exc.context and exc.context_mark is not None:
            # Where the unfinished construct began, often the line to fix.
            problem += f" ({exc.context} started at line {exc.context_mark.line + 1})"
        raise UserError(f"{source}:{line}: YAML syntax error: {problem}") from None
    except yaml.YAMLError as exc:
        raise UserError(f"{source}:1: YAML error: {str(exc).splitlines()[0]}") from None
    if not builder.documents:
        raise UserError(f"{source}:1: the file is empty")
    return builder.root, builder.lines


class _Frame:
    """A mapping or sequence being built."""

    __slots__ = ("value", "loc", "anchor", "nodes_before", "key")

    def __init__(self, value: Any, loc: Loc, anchor: str | None, nodes_before: int) -> None:
        self.value = value
        self.loc = loc
        self.anchor = anchor
        self.nodes_before = nodes_before
        self.key: Any = _OPEN  # a mapping's key waiting for its value (_OPEN: none)


class _Builder:
    """Python values from parse events, within the bounds above."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.lines: dict[Loc, int] = {}
        self.stack: list[_Frame] = []
        self.anchors: dict[str, Any] = {}  # name -> (value, values in it) or _OPEN
        self.nodes = 0
        self.aliased = 0  # of them, values that aliases repeat
        self.documents = 0
        self.root: Any = None
        self.resolver = yaml.resolver.Resolver()
        self.scalars = yaml.constructor.SafeConstructor()

    def error(self, event: yaml.Event, problem: str, loc: Loc | None = None) -> UserError:
        where = dotted(loc) if loc else ""
        return UserError(f"{self.source}:{event.start_mark.line + 1}: {where + ': ' if where else ''}{problem}")

    def feed(self, event: yaml.Event) -> None:
        if isinstance(event, yaml.DocumentStartEvent):
            self.documents += 1
            if self.documents > 1:
                raise self.error(event, "a second YAML document ('---'); the file holds one")
        elif isinstance(event, yaml.ScalarEvent):
            self._scalar_event(event)
        elif isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            self._start(event)
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            frame = self.stack.pop()
            if frame.anchor is not None:
                self.anchors[frame.anchor] = (frame.value, self.nodes - frame.nodes_before)
            self._put(frame.value, event)
        elif isinstance(event, yaml.AliasEvent):
            self._alias(event)

    # --- where the next value goes ---

    def _next_loc(self, event: yaml.Event, is_key: bool = False) -> Loc:
        """The location of the value that starts with ``event``; a mapping
        key must be a plain scalar."""
        if not self.stack:
            return ()
        top = self.stack[-1]
        if isinstance(top.value, list):
            return top.loc + (len(top.value),)
        if top.key is _OPEN:
            if not is_key:
                raise self.error(event, "only plain scalar keys are supported")
            return top.loc
        return top.loc + (top.key,)

    def _count(self, event: yaml.Event, n: int, loc: Loc) -> None:
        self.nodes += n
        if isinstance(event, yaml.AliasEvent):
            self.aliased += n
        if self.nodes > MAX_NODES:
            if self.aliased:
                raise self.error(event, f"more than {MAX_NODES:,} values (aliases of aliases expand to more than "
                                        "any deployments file or lockfile holds); write the values out", loc)
            raise self.error(event, f"more than {MAX_NODES:,} values, more than attn-select reads from one file; "
                                    "split it into several files", loc)

    def _put(self, value: Any, event: yaml.Event) -> None:
        if not self.stack:
            self.root = value
            return
        top = self.stack[-1]
        if isinstance(top.value, list):
            top.value.append(value)
        else:
            top.value[top.key] = value
            top.key = _OPEN

    # --- events ---

    def _start(self, event: yaml.CollectionStartEvent) -> None:
        loc = self._next_loc(event)
        if event.tag not in (None, "!", _MAP_TAG, _SEQ_TAG):
            # a tag on a mapping or list (!!python/object/apply:os.system [...]) would
            # otherwise be dropped silently and the list read as data
            raise self.error(event, f"the YAML tag {event.tag!r} is not read here; write plain values", loc)
        self._count(event, 1, loc)
        if len(self.stack) >= MAX_DEPTH:
            raise self.error(event, f"YAML nested more than {MAX_DEPTH} levels deep", loc)
        self.lines.setdefault(loc, event.start_mark.line + 1)
        if event.anchor is not None:
            self.anchors[event.anchor] = _OPEN
        value: Any = {} if isinstance(event, yaml.MappingStartEvent) else []
        self.stack.append(_Frame(value, loc, event.anchor, self.nodes))

    def _scalar_event(self, event: yaml.ScalarEvent) -> None:
        top = self.stack[-1] if self.stack else None
        is_key = top is not None and isinstance(top.value, dict) and top.key is _OPEN
        loc = self._next_loc(event, is_key=is_key)
        value = self._scalar(event, loc, is_key)
        if event.anchor is not None:
            self.anchors[event.anchor] = (value, 1)
        if is_key:
            assert top is not None
            line = event.start_mark.line + 1
            if value in top.value:
                raise UserError(f"{self.source}:{line}: {dotted(top.loc + (value,))}: duplicate key {value!r}")
            top.key = value
            self.lines[top.loc + (value,)] = line
            return
        self._count(event, 1, loc)
        self.lines.setdefault(loc, event.start_mark.line + 1)
        self._put(value, event)

    def _alias(self, event: yaml.AliasEvent) -> None:
        loc = self._next_loc(event)
        found = self.anchors.get(event.anchor)
        if found is None:
            raise self.error(event, f"found undefined alias {event.anchor!r}", loc)
        if found is _OPEN:
            raise self.error(event, f"a recursive YAML alias: *{event.anchor} is inside its own anchor", loc)
        value, nodes = found
        self._count(event, nodes, loc)
        self.lines.setdefault(loc, event.start_mark.line + 1)
        self._put(value, event)

    def _scalar(self, event: yaml.ScalarEvent, loc: Loc, is_key: bool) -> Any:
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.resolver.resolve(yaml.ScalarNode, event.value, event.implicit)
        if is_key and tag == _MERGE_TAG:
            raise self.error(event, "only plain scalar keys are supported")
        if tag == _INT_TAG and len(_DIGITS.findall(event.value)) > MAX_INT_DIGITS:
            digits = len(_DIGITS.findall(event.value))
            raise self.error(event, f"an integer of {digits:,} digits; attn-select reads integers of at most "
                                    f"{MAX_INT_DIGITS} digits", loc)
        node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
        try:
            return self.scalars.construct_object(node)
        except (yaml.YAMLError, ValueError, OverflowError, TypeError) as exc:
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise self.error(event, problem, loc) from None
        finally:
            self.scalars.constructed_objects.clear()  # its cache of every node built: not needed here
