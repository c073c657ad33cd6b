"""A pydantic validation error in the user's terms: the path of keys and
items as written in their file (``text_config.layer_types[3]``), without
the union-branch and validator names pydantic appends to its locations
(``use_bidirectional_attention.bool``), and one message for all branches
of a union ("Input should be a valid boolean or a valid string").
"""

from __future__ import annotations

from typing import Any, Union

Loc = tuple[Union[str, int], ...]


def dotted(loc: Loc) -> str:
    """('deployments', 2, 'overrides', 'tp') -> 'deployments[2].overrides.tp'."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def data_loc(loc: Loc, data: Any, *, last_key: bool = False) -> Loc:
    """The longest start of pydantic's ``loc`` that names keys and items of
    ``data``; with ``last_key``, one more key that ``data`` lacks (a missing
    or unknown field)."""
    out: Loc = ()
    node = data
    for part in loc:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        elif last_key and isinstance(node, dict):
            return out + (part,)
        else:
            break
        out += (part,)
    return out


def _expected(msg: str) -> str:
    """'Input should be a valid boolean, unable to interpret input' -> 'a valid boolean'."""
    return msg.removeprefix("Input should be ").split(", unable")[0]


def first_problem(errors: list[dict[str, Any]], data: Any) -> tuple[Loc, str, Any, str]:
    """(path in ``data``, message, offending input, error type) of the first
    error; the branches of a union failing at the same path give one
    message naming every kind the value may have."""
    first = errors[0]
    path = data_loc(first["loc"], data, last_key=first["type"] in ("missing", "extra_forbidden"))
    same = [e for e in errors if data_loc(e["loc"], data) == path and e["type"] not in ("missing", "extra_forbidden")]
    msg = first["msg"]
    if len(same) > 1 and all(e["msg"].startswith("Input should be ") for e in same):
        kinds = list(dict.fromkeys(_expected(e["msg"]) for e in same))
        msg = "Input should be " + " or ".join(kinds)
    return path, msg, first.get("input"), first["type"]
