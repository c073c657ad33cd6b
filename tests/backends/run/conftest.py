"""Shared fixtures for the run-path tests: tiny shapes only (CI has 2 cores, no GPU)."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

# Triton decides at @triton.jit time whether to interpret; our kernel module is
# imported lazily, so setting this before any test runs is enough.
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")


def interpreter_ready() -> bool:
    """TRITON_INTERPRET=1 needs triton and numpy."""
    return importlib.util.find_spec("triton") is not None and importlib.util.find_spec("numpy") is not None


needs_interpreter = pytest.mark.skipif(not interpreter_ready(), reason="Triton interpreter needs triton and numpy")


BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"


def load_benchmark(name: str):
    """A script of benchmarks/ (not a package) as a module, for its CPU smoke tests."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def nvidia_tools_missing() -> str | None:
    """Why the installed Triton cannot compile for sm_90 here (None: it can):
    the codegen tests read SASS, which needs its ptxas and nvdisasm."""
    try:
        bindir = load_benchmark("mla_aot_report").nvidia_tools()
    except ImportError:
        return "no Triton"
    if not (bindir / "ptxas").exists() or not (bindir / "nvdisasm").exists():
        return "Triton without its NVIDIA backend tools"
    return None


def gluon_compile_missing() -> str | None:
    """Why the Gluon kernels' sm_90 compile cannot run here (None: it can):
    they are written against one Triton release's Gluon API."""
    from attn_select.backends.run.gluon_gate import GLUON_TRITON

    try:
        import triton
    except ImportError:
        return "no Triton"
    if not triton.__version__.startswith(GLUON_TRITON):
        return (f"installed Triton {triton.__version__}; the Gluon kernel targets {'/'.join(GLUON_TRITON)}x's API "
                f"(put a Triton 3.6 wheel's folder first on PYTHONPATH to run this)")
    return nvidia_tools_missing()


def compile_in_child(code: str, *args: str, timeout: float):
    """Run ``code`` (which prints one JSON line last) in a child Python with
    benchmarks/ as its first argument, and return that line parsed. A child,
    because this directory's tests run Triton's interpreter
    (TRITON_INTERPRET=1), under which triton.jit gives functions the compiler
    cannot take."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    r = subprocess.run([sys.executable, "-c", code, str(BENCHMARKS), *args], env=env, capture_output=True,
                       text=True, timeout=timeout)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.splitlines()[-1])
