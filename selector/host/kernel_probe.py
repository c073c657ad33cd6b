"""Live probes of this machine, run once at a command's edge and printed
with the result: the visible GPU, and which kernels vLLM would find
installed.

Neither initializes CUDA in this process nor imports torch/vLLM/FlashInfer:
the GPU comes from ``nvidia-smi`` (only when the NVIDIA driver is present),
the kernels from ``importlib.util.find_spec`` and the files of vLLM's wheel.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import shutil
import subprocess
from typing import Callable

from attn_select.selector.config import Capability, Kernels
from attn_select.selector.device import Device
from attn_select.selector.doctor import env_flag

_DRIVER_MARKERS = ("/proc/driver/nvidia/gpus", "/dev/nvidia0", "/dev/nvidiactl")


def driver_present() -> bool:
    """Cheap test that costs nothing on a machine without an NVIDIA driver."""
    return any(os.path.exists(p) for p in _DRIVER_MARKERS)


def probe_gpu() -> Device | None:
    """The first visible GPU, or None. Honours CUDA_VISIBLE_DEVICES."""
    if not driver_present():
        return None
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip() in ("", "-1"):
        return None
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    index = (visible.split(",")[0].strip() if visible else "0") or "0"
    try:
        out = subprocess.run(
            [smi, f"--id={index}", "--query-gpu=name,compute_cap,memory.total",
             "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout.strip().splitlines()
    except (OSError, subprocess.SubprocessError):
        return None
    if not out:
        return None
    name, cap, mem_mib = (p.strip() for p in out[0].split(",")[:3])
    try:
        capability = Capability.parse(cap)
        memory = round(float(mem_mib) / 1024, 1)
    except ValueError:
        return None
    return Device(name=name, capability=capability, memory_gib=memory,
                  source=f"nvidia-smi probe, GPU {index}")


def _spec_dir(module: str) -> str | None:
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def flashinfer_nvcc() -> str | None:
    # vLLM's _flashinfer_nvcc_path: CUDA_HOME / CUDA_PATH, else nvcc's own
    # prefix, else /usr/local/cuda.
    cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if not cuda_home:
        nvcc = shutil.which("nvcc")
        cuda_home = os.path.dirname(os.path.dirname(nvcc)) if nvcc else "/usr/local/cuda"
    return shutil.which(os.path.join(cuda_home, "bin", "nvcc"))


def probe_kernels() -> Kernels | None:
    """What vLLM would find installed here, or None when vLLM is not installed
    (then the caller uses the default: what vLLM's wheel ships)."""
    vllm_dir = _spec_dir("vllm")
    if vllm_dir is None:
        return None
    return kernels_in(vllm_dir, lambda name: importlib.util.find_spec(name) is not None)


def kernels_in(vllm_dir: str, has_module: Callable[[str], bool], where: str = "the installed vLLM") -> Kernels:
    """The kernels vLLM installed in ``vllm_dir`` would find, with
    ``has_module`` telling whether a top-level module is importable in its
    Python (doctor asks another Python; this one asks find_spec).
    ``where`` names that vLLM in the source the report prints."""
    fa_dir = os.path.join(vllm_dir, "vllm_flash_attn")
    fa2 = bool(glob.glob(os.path.join(fa_dir, "_vllm_fa2_C*.so")))
    fa3 = bool(glob.glob(os.path.join(fa_dir, "_vllm_fa3_C*.so")))
    fa4 = os.path.exists(os.path.join(fa_dir, "cute", "interface.py"))
    flashmla = bool(glob.glob(os.path.join(vllm_dir, "_flashmla_C*.so")))
    cubin = (
        env_flag(os.environ, "VLLM_HAS_FLASHINFER_CUBIN")
        or has_module("flashinfer_cubin")
    )
    # has_flashinfer: the package, plus cubins or a JIT toolchain (nvcc + ninja).
    flashinfer = has_module("flashinfer") and (
        cubin or (flashinfer_nvcc() is not None and shutil.which("ninja") is not None)
    )
    # has_nvidia_artifactory: pre-downloaded cubins, else an HTTP request we
    # do not make; ATTN_SELECT_OFFLINE=1 says the node is air-gapped.
    offline = os.environ.get("ATTN_SELECT_OFFLINE", "0").lower() in ("1", "true")
    trtllm = cubin or not offline
    # the renderers put the source in parentheses: it holds none of its own
    source = f"probe of {where}" + ("" if cubin else "; trtllm cubins assumed reachable")
    return Kernels(fa2=fa2, fa3=fa3, fa4=fa4, flashinfer=flashinfer,
                   trtllm_cubins=trtllm, flashmla=flashmla, source=source,
                   flashinfer_python=has_module("flashinfer"),
                   tokenspeed_mla=has_module("tokenspeed_mla"))
