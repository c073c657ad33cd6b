"""Shared fixtures for the run-path tests: tiny shapes only (CI has 2 cores, no GPU)."""

import importlib.util
import os
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
