"""One module per output format; each has ``render(report) -> str`` that
dispatches on the report type. Formatters never compute, print or exit.

Dispatch is by the report class's name, so a format module imports the
selector modules behind a report (lock, matrix) only when it renders one:
``explain`` never pays for the CI-gate code.
"""

from __future__ import annotations

import importlib
from typing import Callable


def render(report: object, fmt: str) -> str:
    """Render ``report`` in format ``fmt`` (text, json, markdown, junit, github)."""
    module = importlib.import_module(f"attn_select.cli.formats.{fmt}")
    return module.render(report)


def by_report_type(fmt: str, **renderers: Callable[[object], str]) -> Callable[[object], str]:
    """``render`` for one format: report class name -> function."""

    def render(report: object) -> str:
        fn = renderers.get(type(report).__name__)
        if fn is None:
            raise TypeError(f"no {fmt} format for {type(report).__name__}")
        return fn(report)

    return render
