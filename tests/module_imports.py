"""What a source file imports, for the layering tests: every import at any
depth of the file (function-level ones included), read from its syntax tree."""

from __future__ import annotations

import ast
from pathlib import Path


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) for every import in ``path``; ``from M import x`` is
    ``M.x``, since x may be a module too (``from attn_select.backends import registry``)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            out += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return out
