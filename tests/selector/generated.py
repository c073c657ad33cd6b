"""The check every generated table shares: its tool, run again with the
engine's python, writes the stored file byte for byte."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def assert_regenerates(python: str, name: str) -> None:
    """tests/tools/NAME.py, run with ``python``, prints selector/model/NAME.py as stored."""
    out = subprocess.run([python, str(ROOT / "tests" / "tools" / f"{name}.py")],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    stored = (ROOT / "selector" / "model" / f"{name}.py").read_text(encoding="utf-8")
    assert out.stdout == stored, f"regenerate selector/model/{name}.py with tests/tools/{name}.py"
