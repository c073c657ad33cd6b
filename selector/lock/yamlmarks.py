"""YAML with line numbers: parsed data plus the line of every key and item.

Reading keeps YAML node marks so every bad value is reported as
``file:line: problem``, pydantic's errors included.
"""

from __future__ import annotations

import difflib
import typing
from dataclasses import dataclass
from typing import Any, Union

import yaml
from pydantic import BaseModel, ValidationError

from attn_select.selector.errors import UserError


Loc = tuple[Union[str, int], ...]


class BadInput(UserError):
    """A deployments file or lockfile problem, as ``file:line: problem``."""


_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # same nodes and marks, faster


@dataclass(frozen=True)
class Located:
    """Parsed YAML plus the 1-based line of every mapping key and item."""

    data: Any
    lines: dict[Loc, int]
    source: str

    def line(self, loc: Loc) -> int:
        """The line of ``loc``, or of its nearest ancestor that exists."""
        loc = tuple(loc)
        while loc not in self.lines and loc:
            loc = loc[:-1]
        return self.lines.get(loc, 1)

    def error(self, loc: Loc, problem: str) -> BadInput:
        where = dotted(loc)
        return BadInput(f"{self.source}:{self.line(loc)}: {where + ': ' if where else ''}{problem}")


def dotted(loc: Loc) -> str:
    """('deployments', 2, 'overrides', 'tp') -> 'deployments[2].overrides.tp'."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def load_yaml(text: str, source: str) -> Located:
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        problem = exc.problem or exc.context or "invalid YAML"
        if exc.problem and exc.context and exc.context_mark is not None:
            # Where the unfinished construct began, often the line to fix.
            problem += f" ({exc.context} started at line {exc.context_mark.line + 1})"
        raise BadInput(f"{source}:{line}: YAML syntax error: {problem}") from None
    except yaml.YAMLError as exc:
        raise BadInput(f"{source}:1: YAML error: {str(exc).splitlines()[0]}") from None
    if root is None:
        raise BadInput(f"{source}:1: the file is empty")
    lines: dict[Loc, int] = {}
    scalars = yaml.constructor.SafeConstructor()

    def build(node: yaml.Node, loc: Loc) -> Any:
        lines.setdefault(loc, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            out: dict[Any, Any] = {}
            for knode, vnode in node.value:
                kline = knode.start_mark.line + 1
                if not isinstance(knode, yaml.ScalarNode) or knode.tag == "tag:yaml.org,2002:merge":
                    raise BadInput(f"{source}:{kline}: only plain scalar keys are supported")
                key = scalars.construct_object(knode)
                if key in out:
                    raise BadInput(f"{source}:{kline}: {dotted(loc + (key,))}: duplicate key {key!r}")
                lines[loc + (key,)] = kline
                out[key] = build(vnode, loc + (key,))
            return out
        if isinstance(node, yaml.SequenceNode):
            return [build(item, loc + (i,)) for i, item in enumerate(node.value)]
        return scalars.construct_object(node)

    return Located(build(root, ()), lines, source)


def validation_error(exc: ValidationError, doc: Located) -> BadInput:
    """The first pydantic error as one ``file:line: where: problem`` line."""
    err = exc.errors(include_url=False)[0]
    # Keep the part of pydantic's loc that names real keys/items (it appends
    # union-branch and validator names, which are not in the file).
    loc: Loc = ()
    node = doc.data
    for part in err["loc"]:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        elif err["type"] in ("missing", "extra_forbidden") and isinstance(node, dict):
            pass  # the missing / unknown key itself
        else:
            break
        loc += (part,)
    kind = err["type"]
    if kind == "extra_forbidden":
        problem = f"unknown field {loc[-1]!r}"
        allowed = _allowed_keys(exc, err)
        hint = difflib.get_close_matches(str(loc[-1]), allowed, n=1, cutoff=0.6)
        if hint:
            problem += f"; did you mean {hint[0]!r}?"
        elif allowed:
            problem += f" (allowed: {', '.join(allowed)})"
    elif kind == "missing":
        problem = f"missing required field {loc[-1]!r}"
    else:
        msg = err["msg"].removeprefix("Value error, ")
        problem = msg if kind == "value_error" else f"{msg} (got {err['input']!r})"
    where = loc if kind != "missing" else loc[:-1]
    return BadInput(f"{doc.source}:{doc.line(loc)}: {dotted(where) + ': ' if where else ''}{problem}")


def _allowed_keys(exc: ValidationError, err: dict) -> list[str]:
    """The field names of the mapping that held an unknown key."""
    model = exc.title and _MODELS.get(exc.title)
    for part in err["loc"][:-1]:
        if model is None:
            return []
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part)
        model = _model_in(field.annotation) if field is not None else None
    return [] if model is None else [f.alias or n for n, f in model.model_fields.items()]


def _model_in(hint: Any) -> type[BaseModel] | None:
    """The pydantic model inside Optional[...] / list[...], if any."""
    if isinstance(hint, type) and issubclass(hint, BaseModel):
        return hint
    for arg in typing.get_args(hint):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


# Top-level models by the title pydantic puts on their errors; deployments.py
# and lockfile.py add theirs where they define them.
_MODELS: dict[str, type[BaseModel]] = {}


def _check_unique(names: list[str], doc: Located, loc: Loc, key: str, what: str) -> None:
    """Names must be unique: the second use is reported at its line."""
    seen: set[str] = set()
    for i, n in enumerate(names):
        if n in seen:
            raise doc.error(loc + (i, key), f"duplicate {what} {n!r}")
        seen.add(n)
