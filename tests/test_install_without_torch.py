"""torch is the [run] extra: without it explain, lock, check and matrix work,
and run says in one line to install the extra (exit 2).

Two checks: a python where importing torch fails (fast, always), and a fresh
virtualenv with a plain `pip install .` of this checkout, which must not
pull torch at all (slow: it builds the package and installs its four
dependencies from the configured index)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DEPLOYMENTS = ROOT / "profiles" / "lock" / "deployments.yaml"

# As on a machine without torch: `import torch` fails and importlib finds no
# spec (a None entry in sys.modules is Python's own "not importable" mark).
NO_TORCH = "import sys\nsys.modules['torch'] = None\n"


def commands(tmp: Path) -> list[tuple[list[str], int]]:
    lock = tmp / "attn-select.lock"
    return [
        (["explain", "llama-3.1-8b", "--device", "h100"], 0),
        (["explain", "--capability", "9.0", "--head-size", "128", "--format", "json"], 0),
        (["lock", str(DEPLOYMENTS), "-o", str(lock)], 0),
        (["check", str(lock)], 0),
        (["matrix", "--format", "json"], 0),
    ]


def assert_run_asks_for_the_extra(rc: int, out: str, err: str) -> None:
    assert rc == 2 and out == "", (rc, out, err)
    assert err.count("\n") == 1 and "pip install 'attn-select[run]'" in err, err


def test_without_torch_the_gate_works_and_run_asks_for_the_extra(tmp_path):
    probe = NO_TORCH + "import sys\nfrom attn_select.cli.app import main\nsys.exit(main(sys.argv[1:]))\n"
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120"}
    for argv, expected in commands(tmp_path):
        out = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True,
                             timeout=120, env=env)
        assert out.returncode == expected, (argv, out.stderr[-2000:])
    out = subprocess.run([sys.executable, "-c", probe, "run", "llama-3.1-8b", "--device", "cpu"],
                         capture_output=True, text=True, timeout=120, env=env)
    assert_run_asks_for_the_extra(out.returncode, out.stdout, out.stderr)


def _copy_checkout(dest: Path) -> Path:
    """The checkout's tracked and new files, without .git, venvs or builds, so
    pip's build leaves nothing in the working tree."""
    skip = {".git", ".venv", "build", "dist", "__pycache__", ".pytest_cache"}
    shutil.copytree(ROOT, dest, ignore=lambda d, names: [n for n in names if n in skip or n.endswith(".egg-info")])
    return dest


@pytest.mark.slow
def test_a_fresh_virtualenv_with_pip_install_dot_has_no_torch(tmp_path):
    src = _copy_checkout(tmp_path / "src")
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    install = subprocess.run([str(py), "-m", "pip", "install", "-q", str(src)], capture_output=True, text=True,
                             timeout=900)
    if install.returncode != 0:
        pytest.fail(f"pip install . failed (needs the package index for typer, rich, pydantic, pyyaml and "
                    f"setuptools):\n{install.stderr[-3000:]}")
    has_torch = subprocess.run([str(py), "-c", "import importlib.util as u; print(u.find_spec('torch') is not None)"],
                               capture_output=True, text=True, timeout=60)
    assert has_torch.stdout.strip() == "False", "pip install . pulled torch"
    exe = env_dir / "bin" / "attn-select"
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120"}
    env.pop("PYTHONPATH", None)
    for argv, expected in commands(tmp_path):
        out = subprocess.run([str(exe), *argv], capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
        assert out.returncode == expected, (argv, out.stderr[-2000:])
    out = subprocess.run([str(exe), "run", "llama-3.1-8b", "--device", "cpu"], capture_output=True, text=True,
                         timeout=120, env=env, cwd=tmp_path)
    assert_run_asks_for_the_extra(out.returncode, out.stdout, out.stderr)
