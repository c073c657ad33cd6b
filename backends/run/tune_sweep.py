"""``attn-select tune``'s measuring: one run of a plan (the selector's
``RunPlan``, cut to the rows vLLM runs under one setting) by ``run_model``,
and the facts of this host a cached result is valid for. The sweep itself is
planned and driven by ``selector/tune_plan.py``.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import os

import torch

from attn_select.backends.run.report import RunReport
from attn_select.backends.run.runner import RunOptions, run_model
from attn_select.selector.run_plan import RunPlan

PACKAGES = ("torch", "triton", "flashinfer-python", "flashinfer-cubin", "vllm-flash-attn", "attn-select")


def environment(device: str) -> dict[str, object]:
    """What a cached result is only valid for: the GPU, its driver, the
    package versions."""
    versions = {}
    for p in PACKAGES:
        try:
            versions[p] = importlib.metadata.version(p)
        except importlib.metadata.PackageNotFoundError:
            versions[p] = None
    env: dict[str, object] = dict(packages=versions, torch_cuda=torch.version.cuda)
    dev = torch.device(device)
    if dev.type == "cuda":
        env["gpu"] = torch.cuda.get_device_name(dev)
        driver = getattr(torch._C, "_cuda_getDriverVersion", None)  # CUDA builds only
        env["driver"] = driver() if driver else None
    else:
        env["gpu"] = "cpu"
        env["threads"] = torch.get_num_threads()
    return env


def device_memory(device: str) -> int:
    """Bytes the sweep may plan for: the GPU's memory, or a quarter of RAM."""
    dev = torch.device(device)
    if dev.type == "cuda":
        return torch.cuda.get_device_properties(dev).total_memory
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 4
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def measure(plan: RunPlan, opts: RunOptions, device_name: str, check: bool = True) -> RunReport:
    """One run of ``plan``: checked ``opts.checks`` times and timed, or (a
    repeat for the noise) checked once and timed."""
    return run_model(plan, opts if check else dataclasses.replace(opts, checks=1), device_name=device_name)
