"""YAML with line numbers: parsed data plus the line of every key and item.

Reading (``safe_yaml``: bounded, aliases counted) keeps YAML node marks so
every bad value is reported as ``file:line: problem``, pydantic's errors
included.
"""

from __future__ import annotations

import difflib
import typing
from dataclasses import dataclass
from typing import Any, Union

from pydantic import BaseModel, ValidationError

from attn_select.selector import safe_yaml
from attn_select.selector.errors import UserError, shown
from attn_select.selector.validation_errors import dotted, first_problem


Loc = tuple[Union[str, int], ...]


class BadInput(UserError):
    """A deployments file or lockfile problem, as ``file:line: problem``."""


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


def load_yaml(text: str, source: str) -> Located:
    """A deployments file or lockfile, parsed within safe_yaml's bounds."""
    try:
        data, lines = safe_yaml.load(text, source)
    except UserError as exc:
        raise BadInput(str(exc)) from None
    return Located(data, lines, source)


def validation_error(exc: ValidationError, doc: Located) -> BadInput:
    """The first pydantic error as one ``file:line: where: problem`` line,
    ``where`` the keys and items as written in the file (not pydantic's
    union-branch and validator names)."""
    errors = exc.errors(include_url=False)
    loc, msg, got, kind = first_problem(errors, doc.data)
    if kind == "extra_forbidden":
        problem = f"unknown field {shown(loc[-1])}"
        allowed = _allowed_keys(exc, errors[0])
        hint = difflib.get_close_matches(str(loc[-1])[:100], allowed, n=1, cutoff=0.6)
        if hint:
            problem += f"; did you mean {hint[0]!r}?"
        elif allowed:
            problem += f" (allowed: {', '.join(allowed)})"
    elif kind == "missing":
        problem = f"missing required field {loc[-1]!r}"
    else:
        msg = msg.removeprefix("Value error, ")
        problem = msg if kind == "value_error" else f"{msg} (got {shown(got)})"
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
