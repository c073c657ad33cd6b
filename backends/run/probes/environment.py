"""Facts about the Python it runs in, for ``attn-select doctor``: package
versions (metadata), where modules would load from (``find_spec`` of
top-level names, which runs no package code), the files of vLLM's wheel that
decide its kernels, and the CUDA version torch was built with (read from
``torch/version.py``, not imported). Standard library only; never imports
attn_select or an engine. Prints one JSON line prefixed ATTN_SELECT_DOCTOR.

    python environment.py
"""

import glob
import importlib.util
import json
import os
import re
import sys

# distribution names, as pip installs them
PACKAGES = (
    "vllm", "sglang", "torch", "triton", "flashinfer-python", "flashinfer-cubin", "flashinfer-jit-cache",
    "flash-attn", "flash-attn-3", "flash-attn-4", "flash-mla", "nvidia-cutlass-dsl", "tokenspeed-mla",
    "nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime", "nvidia-cuda-runtime-cu13",
)
# top-level modules whose presence vLLM checks with find_spec
MODULES = ("vllm", "torch", "flashinfer", "flashinfer_cubin", "flashinfer_jit_cache", "flash_attn",
           "flash_attn_interface", "flash_mla", "tokenspeed_mla", "triton", "sglang")


def _version(name):
    import importlib.metadata as md

    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return None


def _module_dir(name):
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return list(spec.submodule_search_locations)[0]
    return spec.origin


def _torch_cuda(torch_dir):
    """torch.version.cuda without importing torch: torch/version.py assigns it."""
    if not torch_dir:
        return None
    try:
        with open(os.path.join(torch_dir, "version.py"), encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return None
    m = re.search(r"^cuda(?:\s*:[^=\n]*)?=\s*(?:'([^']*)'|\"([^\"]*)\"|None)", text, re.M)
    if m is None:
        return None
    return m.group(1) or m.group(2)


def _vllm_files(vllm_dir):
    if not vllm_dir:
        return {}
    fa = os.path.join(vllm_dir, "vllm_flash_attn")
    return {
        "fa2": sorted(os.path.basename(p) for p in glob.glob(os.path.join(fa, "_vllm_fa2_C*.so"))),
        "fa3": sorted(os.path.basename(p) for p in glob.glob(os.path.join(fa, "_vllm_fa3_C*.so"))),
        "fa4": os.path.exists(os.path.join(fa, "cute", "interface.py")),
        "flashmla": sorted(os.path.basename(p) for p in glob.glob(os.path.join(vllm_dir, "_flashmla_C*.so"))),
    }


def main():
    modules = {name: _module_dir(name) for name in MODULES}
    out = {
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "packages": {name: _version(name) for name in PACKAGES},
        "modules": modules,
        "torch_cuda": _torch_cuda(modules["torch"]),
        "vllm_files": _vllm_files(modules["vllm"]),
    }
    print("ATTN_SELECT_DOCTOR " + json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()
