"""SGLang's OWN server-argument resolution (the attention fields), run in the
Python of the environment that has SGLang installed; one JSON request on
stdin, one line per answer on stdout (prefixed ``ATTN_SELECT_SGLANG``).
Never imports attn_select: ``explain --engine sglang-installed`` executes
this file with that Python, and the differential test oracle
(tests/sglang_oracle/oracle.py) imports its ``Resolver``.

    /venv/bin/python sglang_resolution.py < request.json

Request::

    {"libcuda": path | null,     # load this libcuda.so.1 first (no driver here)
     "platform": true | false,   # stand in for torch.cuda's device queries and torch.version.cuda
     "cases": [{"config": {config.json mapping}} | {"folder": path},
                "capability": [9, 0], "cuda_version": "12.9", "gpu_memory_mib": 81920,
                "has_flashinfer": true | false | null,   # null: as installed
                "flags": {ServerArgs field: value}}]}

Answer, one line each as it is known (so the caller can bound the import
and every case separately): ``ATTN_SELECT_SGLANG_READY {"sglang_version",
"stand_ins"}`` once SGLang is imported, ``ATTN_SELECT_SGLANG_CASE {...}``
per case, in order (``Resolver.run_case``'s result); ``ATTN_SELECT_SGLANG_ERROR
{"sglang_version", "error", "trace"}`` when this release's code raises while
loading.

How each input reaches SGLang (the way a real server start does):

* A real ``ServerArgs(model_path=<folder>, **flags)`` runs the whole
  ``resolve_once()`` pipeline; the folder holds the model's config.json.
* The GPU, when stood in: ``torch.cuda`` answers the case's capability and
  memory (``is_available``, ``device_count``, ``get_device_capability``,
  ``get_device_name``, ``get_device_properties``, ``mem_get_info``;
  ``is_initialized`` False, so NVML is tried first and fails without a
  driver) and ``torch.version.cuda`` is the case's CUDA version, set after
  SGLang is imported (torchvision checks it against its own at import).
  ``libcuda.so.1`` is attn-select's stand-in, so sgl_kernel's extension
  modules load.
* FlashInfer: ``SGLANG_IS_FLASHINFER_AVAILABLE=false`` when the case says it
  is not installed (``is_flashinfer_available()`` then answers False, as it
  does when ``find_spec("flashinfer")`` fails); ``override_platform(
  has_flashinfer=True)`` when the case says it is and this Python lacks it.
* Every ``functools`` cache of SGLang's modules (the platform probes) is
  cleared before each case, and ``os.environ`` is restored (some hooks write
  SGLang env switches).

What comes back per case: the final value of every followed field
(``resolution_result``), the declarations that changed one (from SGLang's
own stash ``server_args._resolved_overrides``: walking it in order from the
raw input, each declaration that gives a followed field a different value
is one change), the exception SGLang raised (class and message), what
``get_default_attn_backend`` answered when ``_attention_backend_default``
consulted it, every message SGLang's loggers wrote during the resolution
(with the function that wrote it: SGLang's reasons), the (prefill, decode)
backends by SGLang's ``attention_backends_of``, and the platform facts
SGLang read (``get_platform()`` and ``torch.version.cuda``).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import logging
import os
import sys
import tempfile
import traceback
import types
from pathlib import Path

FOLLOWED = (
    "attention_backend", "prefill_attention_backend", "decode_attention_backend", "page_size",
    "kv_cache_dtype", "speculative_algorithm", "speculative_eagle_topk", "speculative_num_steps",
    "speculative_num_draft_tokens", "speculative_draft_attention_backend", "speculative_attention_mode",
    "prefill_kv_cache_dequant_dtype", "dsa_prefill_backend", "dsa_decode_backend",
    "mamba_radix_cache_strategy", "uses_mamba_radix_cache", "disable_overlap_schedule",
)
# The function whose call of get_default_attn_backend is the default rule
# (model overrides call it too, for their own decisions).
DEFAULT_RULE_CALLER = "_attention_backend_default"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


class StandInGPU:
    """The torch.cuda facts SGLang's probes read, for a requested device."""

    capability = (9, 0)
    memory = 80 << 30

    @classmethod
    def install(cls) -> None:
        import torch

        def props(device=None):
            return types.SimpleNamespace(
                name=cls.name(), total_memory=cls.memory, multi_processor_count=132,
                major=cls.capability[0], minor=cls.capability[1], gcnArchName="", uuid="0",
                L2_cache_size=50 << 20, warp_size=32, max_threads_per_multi_processor=2048,
                regs_per_multiprocessor=65536,
            )

        torch.cuda.is_available = lambda: True
        torch.cuda.device_count = lambda: 1
        torch.cuda.get_device_capability = lambda device=None: cls.capability
        torch.cuda.get_device_name = lambda device=None: cls.name()
        torch.cuda.get_device_properties = props
        torch.cuda.is_initialized = lambda: False
        torch.cuda.current_device = lambda: 0
        torch.cuda.mem_get_info = lambda device=None: (cls.memory, cls.memory)

    @classmethod
    def name(cls) -> str:
        return f"NVIDIA stand-in sm_{cls.capability[0]}{cls.capability[1]}"


class _Messages(logging.Handler):
    """SGLang's log records while a resolution runs: (function, level, text)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.records: list[list[str]] | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if self.records is not None:
            try:
                text = record.getMessage()
            except Exception:  # noqa: BLE001 - a badly formatted record is still a record
                text = str(record.msg)
            self.records.append([record.funcName, record.levelname, text])


class Resolver:
    """SGLang imported once with its stand-ins; resolution questions after.

    ``libcuda``: a libcuda.so.1 to load first (None: the real driver).
    ``platform``: stand in for the device queries and the CUDA version
    (False: the real GPU and torch's own CUDA version).
    """

    def __init__(self, libcuda: str | None = None, platform: bool = True) -> None:
        self.stand_ins: list[str] = []
        if libcuda is not None:
            import ctypes

            ctypes.CDLL(str(libcuda), mode=ctypes.RTLD_GLOBAL)
            self.stand_ins.append(f"libcuda.so.1: {libcuda} (no NVIDIA driver here; every driver call "
                                  "returns CUDA_ERROR_NO_DEVICE)")
        self.platform = platform
        if platform:
            StandInGPU.install()
            self.stand_ins.append("device queries: torch.cuda reports the requested capability and memory; "
                                  "name 'NVIDIA stand-in sm_XY', 132 SMs, 1 GPU; NVML fails, so SGLang "
                                  "falls back to these")
            self.stand_ins.append("torch.version.cuda: the requested CUDA version, set after SGLang's import")
        import torch
        from sglang.srt.arg_groups.overrides import resolution_result
        from sglang.srt.server_args import ServerArgs

        self.torch = torch
        self.torch_cuda = torch.version.cuda
        self.ServerArgs = ServerArgs
        self.resolution_result = resolution_result
        self._capture_messages()
        self._wrap_default_rule()
        self.environ = dict(os.environ)
        self.has_flashinfer_installed = importlib.util.find_spec("flashinfer") is not None
        self.tmp = tempfile.TemporaryDirectory(prefix="sglang-resolution-models-")
        self.dirs: dict[str, str] = {}

    # -- setup ------------------------------------------------------------

    def _capture_messages(self) -> None:
        # SGLang's loggers write to ours only (nothing reaches stderr), from INFO up
        self.messages = _Messages()
        root = logging.getLogger("sglang")
        root.handlers[:] = [self.messages]
        root.setLevel(logging.INFO)
        root.propagate = False
        logging.disable(logging.NOTSET)

    def _wrap_default_rule(self) -> None:
        """Replace get_default_attn_backend wherever SGLang imported it by
        name with a wrapper that records its answer and its caller."""
        from sglang.srt.arg_groups import model_override_base as base

        real = base.get_default_attn_backend
        self.default_calls: list[list[str]] = []
        calls = self.default_calls

        @functools.wraps(real)
        def recording(*args, **kwargs):
            answer = real(*args, **kwargs)
            calls.append([sys._getframe(1).f_code.co_name, answer])
            return answer

        for name, mod in list(sys.modules.items()):
            if mod is not None and name.startswith("sglang") and getattr(mod, "get_default_attn_backend", None) is real:
                setattr(mod, "get_default_attn_backend", recording)

    def _clear_caches(self) -> None:
        for name, mod in list(sys.modules.items()):
            if mod is None or not name.startswith("sglang"):
                continue
            for value in list(getattr(mod, "__dict__", {}).values()):
                if isinstance(value, functools._lru_cache_wrapper):
                    value.cache_clear()

    def model_dir(self, case: dict) -> str:
        """The case's model folder: its own, or its config.json written once."""
        if case.get("folder"):
            return case["folder"]
        text = json.dumps(case["config"], sort_keys=True)
        key = hashlib.sha256(text.encode()).hexdigest()[:16]
        if key not in self.dirs:
            folder = Path(self.tmp.name) / key
            folder.mkdir()
            (folder / "config.json").write_text(text)
            self.dirs[key] = str(folder)
        return self.dirs[key]

    # -- one case ---------------------------------------------------------

    def _set_platform(self, case: dict) -> list[str]:
        """The case's machine; the per-case stand-ins it needed."""
        os.environ.clear()
        os.environ.update(self.environ)
        used = []
        if self.platform:
            StandInGPU.capability = tuple(case["capability"])
            mem = case.get("gpu_memory_mib")
            StandInGPU.memory = int((mem if mem is not None else 80 * 1024) * (1 << 20))
            self.torch.version.cuda = case.get("cuda_version") or "12.9"
        wanted = case.get("has_flashinfer")
        self._flashinfer_override = None
        if wanted is False and self.has_flashinfer_installed:
            os.environ["SGLANG_IS_FLASHINFER_AVAILABLE"] = "false"
            used.append("SGLANG_IS_FLASHINFER_AVAILABLE=false (flashinfer installed, asked for without it)")
        elif wanted is True and not self.has_flashinfer_installed:
            from sglang.srt.runtime_context import override_platform

            self._flashinfer_override = override_platform(has_flashinfer=True)
            self._flashinfer_override.install()
            used.append("get_platform().has_flashinfer -> True via override_platform (flashinfer not installed "
                        "in this Python, asked for with it)")
        self._clear_caches()
        return used

    def _platform_seen(self) -> dict:
        from sglang.srt.runtime_context import get_platform

        p = get_platform()
        out = {"cuda_version": self.torch.version.cuda}
        for name in ("device_capability", "has_flashinfer"):
            try:
                value = getattr(p, name)
            except Exception as e:  # noqa: BLE001 - a probe that fails is an answer too
                value = f"{type(e).__name__}: {e}"
            out[name] = list(value) if isinstance(value, tuple) else value
        return out

    def run_case(self, case: dict) -> dict:
        result: dict = {"final": None, "backends": None, "changes": None, "error": None, "oracle_error": None,
                        "default_rule": None, "messages": [], "platform": None, "stand_ins": []}
        result["stand_ins"] = self._set_platform(case)
        try:
            try:
                args = self.ServerArgs(model_path=self.model_dir(case), **case.get("flags", {}))
            except Exception as e:  # noqa: BLE001 - the flags are not ServerArgs fields
                result["oracle_error"] = f"ServerArgs: {type(e).__name__}: {e}"
                return result
            del self.default_calls[:]
            self.messages.records = result["messages"]
            try:
                args.resolve_once()
            except Exception as e:  # noqa: BLE001 - SGLang's refusal is an answer
                result["error"] = {"kind": type(e).__name__, "message": str(e), "where": _raised_in(e)}
            finally:
                self.messages.records = None
            rule = [answer for caller, answer in self.default_calls if caller == DEFAULT_RULE_CALLER]
            result["default_rule"] = _plain(rule[-1]) if rule else None
            result["final"] = {f: _plain(self.resolution_result(args, f)) for f in FOLLOWED}
            result["backends"] = _prefill_decode(args)
            result["changes"] = _changes(args)
            result["platform"] = self._platform_seen()
            return result
        finally:
            if self._flashinfer_override is not None:
                self._flashinfer_override.restore()


def _raised_in(exc):
    """The SGLang function that raised ``exc`` (its innermost SGLang frame)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/sglang/" in f.filename.replace("\\", "/")]
    return frames[-1].name if frames else None


def _prefill_decode(args):
    """SGLang's own (prefill, decode) backends of the resolved fields, where
    this release has ``attention_backends_of``."""
    try:
        from sglang.srt.arg_groups.model_override_base import attention_backends_of, resolving_view
    except ImportError:
        return None
    return [_plain(b) for b in attention_backends_of(resolving_view(args))]


def _changes(args) -> list:
    raw = getattr(args, "_raw_input", None) or {}
    current = {f: raw.get(f, getattr(args, f, None)) for f in FOLLOWED}
    changes = []
    for source, declared in getattr(args, "_resolved_overrides", None) or ():
        for f, value in declared.items():  # in the order the declaration names them
            if f in current and value != current[f]:
                changes.append([source, f, _plain(current[f]), _plain(value)])
                current[f] = value
    return changes


def _plain(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def main() -> int:
    from answer_lines import serve  # beside this file: stdlib only

    def load(request):
        return Resolver(libcuda=request.get("libcuda"), platform=request.get("platform", True))

    def crashed(e):
        return {"final": None, "changes": None, "error": None, "default_rule": None, "messages": [],
                "platform": None, "stand_ins": [], "oracle_error": f"crash: {type(e).__name__}: {e}"}

    return serve("ATTN_SELECT_SGLANG", "sglang", load, lambda resolver, case: resolver.run_case(case), crashed)


if __name__ == "__main__":
    sys.exit(main())
