"""Resolution state: SGLang's declarations over the raw flags, with the trail.

SGLang never writes ``server_args`` during resolution; each pass *declares*
field values (``declare_resolution`` / ``run_post_process_pass``) and readers
see the last declaration over the raw input (``resolving_view``). ``State``
keeps the current value of every field attn-select follows and records each
declaration that changed one, under the source name SGLang records for it
(the pass's ``__qualname__`` or the hook's source string).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Step:
    """One declaration that changed a field."""

    source: str  # SGLang's declaration source, e.g. "_mla_backend_page_constraints"
    field: str
    old: object
    new: object
    why: str  # the rule, in words

    def text(self) -> str:
        return f"{self.source}: {self.field} {self.old!r} -> {self.new!r} ({self.why})"


class SGLangError(Exception):
    """What SGLang raises at configuration time: the exception class name and
    SGLang's exact message (``str(exc)``; empty for a bare ``assert``)."""

    def __init__(self, kind: str, message: str, source: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.source = source  # the SGLang function that raises

    def text(self) -> str:
        return f"{self.kind}: {self.message}" if self.message else self.kind


def raise_value(source: str, message: str) -> None:
    raise SGLangError("ValueError", message, source)


def check(condition: bool, source: str, message: str = "") -> None:
    """SGLang's ``assert condition, message``."""
    if not condition:
        raise SGLangError("AssertionError", message, source)


class State:
    """Current values (raw flags, then declarations) and the change trail."""

    def __init__(self, values: dict[str, object]) -> None:
        self._values = dict(values)
        self.raw = dict(values)
        self.trail: list[Step] = []

    def __getattr__(self, name: str) -> object:
        values = object.__getattribute__(self, "_values")
        try:
            return values[name]
        except KeyError:
            raise AttributeError(name) from None

    def get(self, name: str) -> object:
        return self._values[name]

    def snapshot(self) -> dict[str, object]:
        return dict(self._values)

    def declare(self, source: str, why: str, **fields: object) -> None:
        """``declare_resolution(server_args, source, **fields)``: later wins."""
        for name, new in fields.items():
            if name not in self._values:
                raise KeyError(f"{source}: {name} is not a field attn-select follows")
            old = self._values[name]
            if old != new:
                self.trail.append(Step(source, name, old, new, why))
            self._values[name] = new

    def steps(self, field: str) -> list[Step]:
        return [s for s in self.trail if s.field == field]
