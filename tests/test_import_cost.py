"""The explain path must never import torch, triton or flashinfer: with a
device profile or a capability it runs on any machine in a fraction of a second.
Nor pydantic's Python layer (``pydantic.main``, ~35 ms): configs and profiles
are checked with pydantic-core schemas (selector/model/raw.py says why). Nor
rich's emoji table (rich markup parsed with emoji codes on imports it).
Ray (the fleet extra) is imported only by ``--ray``."""

import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("torch", "triton", "flashinfer", "numpy", "vllm", "pydantic.main", "rich._emoji_codes", "ray")

PROBE = """
import sys
from attn_select.cli.app import main
rc = main({argv!r})
heavy = sorted(m for m in {heavy!r} if m in sys.modules)
print("HEAVY=" + ",".join(heavy))
sys.exit(rc)
"""


def imported_heavy(argv: list[str]) -> tuple[int, str]:
    code = PROBE.format(argv=argv, heavy=HEAVY)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("HEAVY=")]
    assert line, out.stderr
    return out.returncode, line[-1].removeprefix("HEAVY=")


@pytest.mark.parametrize(
    "argv",
    [
        ["explain", "--capability", "9.0", "--head-size", "128"],
        ["explain", "llama-3.1-8b", "--device", "h100"],
        ["explain", "deepseek-v3", "--device", "b200", "--format", "json"],
        ["explain", "--capability", "10.0", "--head-size", "576", "--use-mla", "--format", "markdown"],
        ["profiles"],
    ],
)
def test_explain_imports_nothing_heavy(argv):
    rc, heavy = imported_heavy(argv)
    assert rc in (0, 1)
    assert heavy == ""


def test_check_without_ray_imports_no_ray():
    lock = Path(__file__).resolve().parents[1] / "profiles" / "lock" / "attn-select.lock"
    rc, heavy = imported_heavy(["check", str(lock)])
    assert rc == 0 and "ray" not in heavy.split(",")
