"""The engine venv an engine-marked test runs against: its Python when it
holds the release the test needs (read from package metadata) and, on a
machine without the NVIDIA driver, a C compiler for the libcuda.so.1
stand-in is there; otherwise the test is skipped, saying why. For vLLM
(``vllm_python_or_skip``) and SGLang (``sglang_python_or_skip``)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest


def engine_python_or_skip(python: str, dist: str, title: str, version: str, env: str) -> str:
    if not Path(python).exists():
        pytest.skip(f"no {title} {version} venv at {python} (set {env}; see README.md, "
                    "'Running the tests that need an engine')")
    probe = subprocess.run([python, "-c", f"import importlib.metadata as m; print(m.version({dist!r}))"],
                           capture_output=True, text=True, timeout=60)
    if probe.returncode != 0 or probe.stdout.strip() != version:
        pytest.skip(f"{python} has no {dist}=={version}")
    if not any(os.path.exists(p) for p in ("/proc/driver/nvidia/gpus", "/dev/nvidia0")) and \
            not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no C compiler for the libcuda.so.1 stand-in")
    return python


def vllm_python_or_skip(python: str, version: str, env: str) -> str:
    return engine_python_or_skip(python, "vllm", "vLLM", version, env)


def sglang_python_or_skip(python: str, version: str, env: str) -> str:
    return engine_python_or_skip(python, "sglang", "SGLang", version, env)
