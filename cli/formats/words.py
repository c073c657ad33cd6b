"""Counted nouns, the same way in every summary line of lock and check."""

from __future__ import annotations

_PLURALS = {"attention group": "attention groups", "deployment": "deployments", "difference": "differences",
            "SGLang resolution": "SGLang resolutions"}


def plural(n: int, word: str) -> str:
    """``1 deployment``, ``2 deployments``."""
    return f"{n} {word if n == 1 else _PLURALS.get(word, word + 's')}"


def selections(groups: int, sglang: int, of: tuple[int, int] | None = None) -> str:
    """What a lock holds: ``10 attention groups and 7 SGLang resolutions``;
    a kind with none is left out, unless both are none. With ``of``
    (failed groups, failed resolutions): ``2 of 10 attention groups ...``."""
    parts = []
    for failed, total, word in ((of[0] if of else None, groups, "attention group"),
                                (of[1] if of else None, sglang, "SGLang resolution")):
        if total or (word == "attention group" and not sglang):
            parts.append(plural(total, word) if failed is None else f"{failed} of {plural(total, word)}")
    return " and ".join(parts)
