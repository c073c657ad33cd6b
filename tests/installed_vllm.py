"""The vLLM venv an engine-marked test runs against: its Python when it holds
the release the test needs (read from package metadata) and, on a machine
without the NVIDIA driver, a C compiler for the libcuda.so.1 stand-in is
there; otherwise the test is skipped, saying why."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest


def vllm_python_or_skip(python: str, version: str, env: str) -> str:
    if not Path(python).exists():
        pytest.skip(f"no vLLM {version} venv at {python} (set {env}; see README.md, "
                    "'Running the tests that need an engine')")
    probe = subprocess.run([python, "-c", "import importlib.metadata as m; print(m.version('vllm'))"],
                           capture_output=True, text=True, timeout=60)
    if probe.returncode != 0 or probe.stdout.strip() != version:
        pytest.skip(f"{python} has no vllm=={version}")
    if not any(os.path.exists(p) for p in ("/proc/driver/nvidia/gpus", "/dev/nvidia0")) and \
            not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no C compiler for the libcuda.so.1 stand-in")
    return python
