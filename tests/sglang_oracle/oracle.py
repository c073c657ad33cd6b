"""Differential oracle: SGLang 0.5.23's OWN server-argument resolution, run on a
CPU-only machine, JSON cases in, JSON results out.

Run it with the python of a venv that has ``sglang==0.5.23`` installed (never
with attn-select's python; this file never imports attn_select):

    /tmp/sglang-venv/bin/python tests/sglang_oracle/oracle.py < cases.json > results.json

Input: a JSON list of cases::

    {"config": {a config.json mapping},
     "capability": [9, 0], "cuda_version": "12.9", "has_flashinfer": true,
     "gpu_memory_mib": 81920 | null,
     "flags": {ServerArgs field: value}}   # attention_backend, page_size, ...

Output: a JSON list, one result per case, in order::

    {"final": {field: resolution_result(server_args, field) for each followed field},
     "changes": [[source, field, old, new], ...],   # declarations that changed a followed field
     "error": {"kind": exception class name, "message": str(exc)} | null,
     "oracle_error": null | why the case could not be put to SGLang}

How each input reaches SGLang (the way a real server start does):

* A real ``ServerArgs(model_path=<folder>, **flags)`` runs the whole
  ``resolve_once()`` pipeline; the folder holds the case's config.json
  (written once per distinct config).
* The GPU: ``torch.cuda`` is stood in for (``is_available``, ``device_count``,
  ``get_device_capability``, ``get_device_name``, ``get_device_properties``,
  ``mem_get_info``, ``is_initialized`` False so NVML is tried first and fails
  without a driver); the capability and memory are the case's.
  ``libcuda.so.1`` is the vLLM oracle's stand-in (``tests/vllm_oracle``),
  so sgl_kernel's extension modules load.
* The CUDA version: ``torch.version.cuda`` is set to the case's value after
  SGLang is imported (torchvision checks it against its own at import).
* FlashInfer: ``SGLANG_IS_FLASHINFER_AVAILABLE=false`` when the case says it
  is not installed: ``is_flashinfer_available()`` then answers False, as it does
  when ``find_spec("flashinfer")`` fails.
* Every ``functools`` cache of SGLang's modules (the platform probes) is
  cleared before each case, and ``os.environ`` is restored (some hooks write
  SGLang env switches).

Changes are computed from SGLang's own declaration stash
(``server_args._resolved_overrides``): walking it in order from the raw input,
each declaration that gives a followed field a different value is one change.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import json
import logging
import os
import sys
import tempfile
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
FOLLOWED = (
    "attention_backend", "prefill_attention_backend", "decode_attention_backend", "page_size",
    "kv_cache_dtype", "speculative_algorithm", "speculative_eagle_topk", "speculative_num_steps",
    "speculative_num_draft_tokens", "speculative_draft_attention_backend", "speculative_attention_mode",
    "prefill_kv_cache_dequant_dtype", "dsa_prefill_backend", "dsa_decode_backend",
    "mamba_radix_cache_strategy", "uses_mamba_radix_cache", "disable_overlap_schedule",
)

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


class FakeGPU:
    """The torch.cuda facts SGLang's probes read."""

    capability = (9, 0)
    memory = 80 << 30

    @classmethod
    def install(cls) -> None:
        import torch

        def props(device=None):
            return types.SimpleNamespace(
                name="NVIDIA oracle", total_memory=cls.memory, multi_processor_count=132,
                major=cls.capability[0], minor=cls.capability[1], gcnArchName="", uuid="0",
                L2_cache_size=50 << 20, warp_size=32, max_threads_per_multi_processor=2048,
                regs_per_multiprocessor=65536,
            )

        torch.cuda.is_available = lambda: True
        torch.cuda.device_count = lambda: 1
        torch.cuda.get_device_capability = lambda device=None: cls.capability
        torch.cuda.get_device_name = lambda device=None: "NVIDIA oracle"
        torch.cuda.get_device_properties = props
        torch.cuda.is_initialized = lambda: False
        torch.cuda.current_device = lambda: 0
        torch.cuda.mem_get_info = lambda device=None: (cls.memory, cls.memory)


class Oracle:
    def __init__(self) -> None:
        sys.path.insert(0, str(HERE.parent / "vllm_oracle"))
        from build_libcuda_stub import build  # stdlib-only sibling helper

        ctypes.CDLL(str(build()), mode=ctypes.RTLD_GLOBAL)
        FakeGPU.install()
        import torch
        from sglang.srt.arg_groups.overrides import resolution_result
        from sglang.srt.server_args import ServerArgs

        self.torch = torch
        self.ServerArgs = ServerArgs
        self.resolution_result = resolution_result
        logging.disable(logging.CRITICAL)
        self.environ = dict(os.environ)
        self.tmp = tempfile.TemporaryDirectory(prefix="sglang-oracle-models-")
        self.dirs: dict[str, str] = {}

    def _clear_caches(self) -> None:
        for name, mod in list(sys.modules.items()):
            if mod is None or not name.startswith("sglang"):
                continue
            for value in list(getattr(mod, "__dict__", {}).values()):
                if isinstance(value, functools._lru_cache_wrapper):
                    value.cache_clear()

    def _model_dir(self, config: dict) -> str:
        text = json.dumps(config, sort_keys=True)
        key = hashlib.sha256(text.encode()).hexdigest()[:16]
        if key not in self.dirs:
            folder = Path(self.tmp.name) / key
            folder.mkdir()
            (folder / "config.json").write_text(text)
            self.dirs[key] = str(folder)
        return self.dirs[key]

    def run_case(self, case: dict) -> dict:
        result: dict = {"final": None, "changes": None, "error": None, "oracle_error": None}
        os.environ.clear()
        os.environ.update(self.environ)
        if not case.get("has_flashinfer", True):
            os.environ["SGLANG_IS_FLASHINFER_AVAILABLE"] = "false"
        FakeGPU.capability = tuple(case["capability"])
        mem = case.get("gpu_memory_mib")
        FakeGPU.memory = int((mem if mem is not None else 80 * 1024) * (1 << 20))
        self.torch.version.cuda = case.get("cuda_version", "12.9")
        self._clear_caches()
        try:
            args = self.ServerArgs(model_path=self._model_dir(case["config"]), **case.get("flags", {}))
        except Exception as e:  # the flags are not ServerArgs fields
            result["oracle_error"] = f"ServerArgs: {type(e).__name__}: {e}"
            return result
        try:
            args.resolve_once()
        except Exception as e:
            result["error"] = {"kind": type(e).__name__, "message": str(e)}
        result["final"] = {f: _plain(self.resolution_result(args, f)) for f in FOLLOWED}
        raw = getattr(args, "_raw_input", None) or {}
        current = {f: raw.get(f, getattr(args, f, None)) for f in FOLLOWED}
        changes = []
        for source, declared in getattr(args, "_resolved_overrides", None) or ():
            for f, value in declared.items():  # in the order the declaration names them
                if f in current and value != current[f]:
                    changes.append([source, f, _plain(current[f]), _plain(value)])
                    current[f] = value
        result["changes"] = changes
        return result


def _plain(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def main() -> int:
    cases = json.load(sys.stdin)
    # Everything SGLang, torch or C code prints goes to stderr.
    real_stdout = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    oracle = Oracle()
    results = []
    for case in cases:
        try:
            results.append(oracle.run_case(case))
        except BaseException as e:  # noqa: BLE001 - one bad case must not lose the rest
            results.append({"final": None, "changes": None, "error": None,
                            "oracle_error": f"crash: {type(e).__name__}: {e}"})
    json.dump(results, real_stdout)
    real_stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
