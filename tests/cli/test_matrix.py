"""`attn-select matrix` end to end; docs/matrix.md is its current output."""

from __future__ import annotations

import json
from pathlib import Path

from attn_select.backends import registry
from attn_select.cli.app import main
from attn_select.selector.config import Capability
from attn_select.selector.priorities import backend_priorities
from tests.cli.helpers import run

DOCS = Path(__file__).resolve().parents[2] / "docs" / "matrix.md"



def test_docs_matrix_is_current(capsys):
    """Regenerate with: attn-select matrix --format markdown > docs/matrix.md"""
    rc, out, _ = run(capsys, "matrix", "--format", "markdown")
    assert rc == 0
    assert DOCS.read_text() == out


def test_json_lists_every_backend_and_column(capsys):
    rc, out, _ = run(capsys, "matrix", "--format", "json")
    doc = json.loads(out)
    assert rc == 0 and doc["schema"] == "attn-select.matrix/1"
    assert [b["backend"] for b in doc["backends"]] == list(registry.ENUM_ORDER)
    keys = [c["key"] for c in doc["columns"]]
    for b in doc["backends"]:
        assert sorted(b["facts"]) == sorted(keys)  # JSON keys are sorted
        for fact in b["facts"].values():
            assert isinstance(fact["rule"], bool)
            if fact["rule"]:
                assert isinstance(fact["value"], str) and fact["value"]
    assert doc["capability"] is None and doc["priorities"] == [] and doc["unsupported"] == []


def test_capability_narrows_and_adds_priorities(capsys):
    rc, out, _ = run(capsys, "matrix", "--capability", "10.0", "--format", "json")
    doc = json.loads(out)
    assert rc == 0 and doc["capability"] == "10.0"
    shown = [b["backend"] for b in doc["backends"]] + doc["unsupported"]
    assert sorted(shown) == sorted(registry.ENUM_ORDER)
    mha = next(p for p in doc["priorities"] if p["label"] == "MHA")
    assert mha["backends"] == list(backend_priorities(use_mla=False, cap=Capability(10, 0)))
    assert mha["backends"][0] == "FLASHINFER"
    rc, md, _ = run(capsys, "matrix", "--capability", "10.0", "--format", "markdown")
    assert "## Priority order on 10.0" in md
    assert "- MHA: `FLASHINFER` > " in md


def test_text_has_a_block_per_backend(capsys):
    rc, out, _ = run(capsys, "matrix")
    assert rc == 0
    for name in registry.ENUM_ORDER:
        assert f"\n{name}  " in "\n" + out


def test_bad_capability_is_exit_2(capsys):
    rc, _, err = run(capsys, "matrix", "--capability", "nine")
    assert rc == 2 and err.startswith("error: --capability 'nine'") and err.count("\n") == 1


def test_kernels_needs_capability(capsys):
    rc, _, err = run(capsys, "matrix", "--kernels", "fa2")
    assert rc == 2 and "--kernels only matters with --capability" in err


def test_matrix_imports_nothing_heavy():
    import subprocess
    import sys

    code = (
        "import sys\nfrom attn_select.cli.app import main\n"
        "rc = main(['matrix', '--capability', '9.0', '--format', 'markdown'])\n"
        "heavy = [m for m in ('torch', 'triton', 'flashinfer', 'numpy', 'vllm') if m in sys.modules]\n"
        "print('HEAVY=' + ','.join(heavy))\nsys.exit(rc)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "HEAVY="
