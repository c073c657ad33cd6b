"""One module per output format; each has ``render(report) -> str`` that
dispatches on the report type. Formatters never compute, print or exit."""

from __future__ import annotations

import importlib


def render(report: object, fmt: str) -> str:
    """Render ``report`` in format ``fmt`` (text, json, markdown, junit, github)."""
    module = importlib.import_module(f"attn_select.cli.formats.{fmt}")
    return module.render(report)
