"""vLLM's OWN attention-backend selection, run in the Python of the
environment that has vLLM installed; one JSON request on stdin, one JSON
answer on stdout (a line prefixed ``ATTN_SELECT_VLLM``). Never imports
attn_select: attn-select's ``--engine vllm-installed`` and ``check
--vllm-python`` execute this file with that Python, and the differential
test oracle (tests/vllm_oracle/oracle.py) imports its ``Selector``.

    /venv/bin/python vllm_selection.py < request.json

Request::

    {"libcuda": path | null,          # load this libcuda.so.1 first (no driver here)
     "platform": true | false,        # stand in for the device queries
     "kernels": {flag: bool} | null,  # stand in for what is installed (--kernels)
     "artifactory": bool | null,      # stand in for has_nvidia_artifactory() (no network)
     "cases": [{"capability": [9, 0],
                "model": {"folder": path} | null,
                "engine_args": {"dtype", "kv_cache_dtype", "block_size", "attention_backend",
                                "tensor_parallel_size", "flash_attn_version", "use_trtllm_attention",
                                "mla_prefill_backend", "decode_context_parallel_size",
                                "prefill_context_parallel_size",
                                "disable_sliding_window", "language_model_only", "quantization",
                                "trust_remote_code"},
                "batch_invariant": bool,
                "groups": [{"name", "selector_config": {...}, "num_heads", "layer_kv_cache_dtype",
                            "fa_call": {get_flash_attn_version kwargs},
                            "trtllm": {num_qo_heads, num_kv_heads, q_dtype_decode, q_dtype_prefill,
                                       has_sinks} | null}]}]}

Answer, one line each as it is known (so the caller can bound the import
and every case separately): ``ATTN_SELECT_VLLM_READY {"vllm_version",
"stand_ins"}`` once vLLM is imported, ``ATTN_SELECT_VLLM_CASE
{"engine_config", "groups": [{"selector_config", "priorities", "reasons",
"selected", "error", "warning", "fa_version", "trtllm", "mla_prefill"}], "error"}`` per case,
in order; ``ATTN_SELECT_VLLM_ERROR {"error", "trace"}`` when this release's
code raises while loading.

For a model, vLLM's ``EngineArgs(model=FOLDER, ...).create_engine_config()``
builds the config ``vllm serve FOLDER`` would (dtype, KV-cache dtype, a
backend or FlashAttention version set by the model's config hook, the user's
block size), and the cache dtype as Attention.__init__ leaves it (an llm-compressor
kv_cache_scheme makes "auto" fp8 there; no layer is built, so that one assignment is
made from vLLM's quant_config); each group's selector config is the one the layer passes, with
the engine-level fields (dtype, KV-cache dtype, block size, batch
invariance, DCP) taken from that config, and the selection runs inside
``set_current_vllm_config`` as at layer construction. The per-layer fields
(head size, sinks, sliding window, attention type, MLA, per-head scales)
come with the request.

Every stand-in used is listed in the answer: the libcuda.so.1 library (when
the machine has no NVIDIA driver), the device queries (a
``NonNvmlCudaPlatform`` subclass reporting the requested capability, and
placeholders for name, memory, SM count and GPU count), modules hidden
for ``--kernels``, and the functions replaced (``has_flashinfer``,
``has_nvidia_artifactory``). ``cutlass_mla`` allocates a CUDA workspace at
import; on a machine without a driver that one allocation goes to ``meta``.

An MLA group's ``mla_prefill`` is the layer's second decision, where the
release has it (``vllm/v1/attention/backends/mla/prefill/``; else
``{"exposed": false}``): ``get_mla_prefill_backend``'s selector config,
priority list, every candidate's reasons, choice or error
(``Selector.mla_prefill``), and what the layer reads before it asks: whether
the selected backend's impl is sparse and has a dense-MHA prefill path.
"""

from __future__ import annotations

import functools
import importlib.abc
import inspect
import logging
import os
import sys
import traceback

os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

# The backend names _get_backend_priorities can return on CUDA: only these
# are imported up front (others import lazily when asked for).
CUDA_BACKENDS = (
    "FLASH_ATTN", "TRITON_ATTN", "TRITON_FLASH_ATTN", "FLASHINFER", "TRITON_FLASHINFER",
    "FLASHINFER_MLA", "TOKENSPEED_MLA", "FLASHINFER_MLA_SPARSE", "FLASHINFER_MLA_SPARSE_SM120",
    "FLASHINFER_MLA_SPARSE_SM90", "TRITON_MLA", "CUTLASS_MLA", "FLASHMLA", "FLASHMLA_SPARSE",
    "FLASH_ATTN_MLA", "FLASH_ATTN_MLA_SPARSE", "FLASH_ATTN_MLA_SPARSE_FA4", "FLEX_ATTENTION",
    "TURBOQUANT",
)

# Extension modules whose import decides a kernels flag (decided at import time).
IMPORT_TIME_KERNELS = {
    "fa2": ("vllm.vllm_flash_attn._vllm_fa2_C",),
    "fa3": ("vllm.vllm_flash_attn._vllm_fa3_C",),
    "flashmla": ("vllm._flashmla_C", "vllm._flashmla_extension_C"),
    "flashinfer_python": ("flashinfer",),  # the package and its submodules
    "tokenspeed_mla": ("tokenspeed_mla",),
}
KERNEL_FLAGS = ("fa2", "fa3", "fa4", "flashinfer", "trtllm_cubins", "flashmla",
                "flashinfer_python", "tokenspeed_mla")


class _Hiding(importlib.abc.MetaPathFinder):
    """Wraps one ``sys.meta_path`` finder so that it does not see the hidden
    modules. With every finder wrapped, a hidden module is exactly a missing
    one: ``import`` raises ``ModuleNotFoundError`` and
    ``importlib.util.find_spec`` returns None."""

    def __init__(self, inner, hidden):
        self.inner = inner
        self.hidden = hidden

    def _is_hidden(self, fullname):
        return any(fullname == h or fullname.startswith(h + ".") for h in self.hidden)

    def find_spec(self, fullname, path=None, target=None):
        if self._is_hidden(fullname):
            return None
        find = getattr(self.inner, "find_spec", None)
        return find(fullname, path, target) if find is not None else None

    def invalidate_caches(self):
        inv = getattr(self.inner, "invalidate_caches", None)
        if inv is not None:
            inv()

    def __getattr__(self, name):
        # find_distributions (importlib.metadata) and anything else: the
        # wrapped finder's own. Package metadata is deliberately left visible.
        return getattr(self.inner, name)


def hide_modules(hidden):
    if hidden:
        sys.meta_path[:] = [_Hiding(f, tuple(hidden)) for f in sys.meta_path]


def hidden_for(kernels):
    """The modules to hide so that the import-time kernels are ``kernels``'."""
    if kernels is None:
        return ()
    return tuple(m for flag, mods in IMPORT_TIME_KERNELS.items() if not kernels.get(flag, True) for m in mods)


class Selector:
    """vLLM imported once with its stand-ins; selection questions after.

    ``libcuda``: a libcuda.so.1 to load first (None: the real driver).
    ``platform``: stand in for the device queries (False: the real GPU).
    ``kernels``: a kernels dict to stand in for what is installed (None: as installed).
    ``artifactory``: what has_nvidia_artifactory() answers (None: vLLM's own, which may
    send a request).
    """

    def __init__(self, libcuda=None, platform=True, kernels=None, artifactory=None, hidden=()):
        self.stand_ins = []
        self.kernels = dict(kernels) if kernels is not None else None
        hidden = tuple(hidden) or hidden_for(kernels)
        hide_modules(hidden)
        if hidden:
            self.stand_ins.append("hidden modules (--kernels): " + ", ".join(hidden))
        if libcuda is not None:
            import ctypes

            ctypes.CDLL(str(libcuda), mode=ctypes.RTLD_GLOBAL)
            self.stand_ins.append(f"libcuda.so.1: {libcuda} (no NVIDIA driver here; every driver call "
                                  "returns CUDA_ERROR_NO_DEVICE)")
        self.no_driver = libcuda is not None
        self._install_platform(platform)
        self._import_backends()
        self._install_kernel_switches(artifactory)
        self._no_retry_delay()
        if self.no_driver:
            self._triton_works()
        self._install_warning_capture()
        self._cache_clearers = []
        self._modules_seen = 0

    # -- setup ------------------------------------------------------------

    def _install_platform(self, stand_in):
        import vllm.platforms as platforms
        import vllm.platforms.cuda as cuda
        from vllm.platforms.interface import DeviceCapability

        self.cuda = cuda
        self.DeviceCapability = DeviceCapability
        self.platform_cls = None
        if not stand_in:
            return
        early = platforms._current_platform  # some releases resolve it while importing platforms.cuda

        class StandInPlatform(cuda.NonNvmlCudaPlatform):
            """The CUDA platform with the requested capability; placeholders
            for the properties that would need a driver."""

            capability = DeviceCapability(9, 0)

            @classmethod
            def get_device_capability(cls, device_id=0):
                return cls.capability

            @classmethod
            def get_device_name(cls, device_id=0):
                c = cls.capability
                return f"NVIDIA stand-in sm_{c.major}{c.minor}"

            @classmethod
            def get_device_total_memory(cls, device_id=0):
                return 80 << 30

            @classmethod
            def num_compute_units(cls, device_id=0):
                return 132

            @classmethod
            def device_count(cls):
                # An 8-GPU node, so tensor_parallel_size and dcp_size > 1 validate.
                return 8

        platforms._current_platform = StandInPlatform()
        self.platform_cls = StandInPlatform
        self.stand_ins.append("device queries: a NonNvmlCudaPlatform subclass reporting the requested "
                              "capability; name 'NVIDIA stand-in sm_XY', 80 GiB, 132 SMs, 8 GPUs")
        if early is not None:
            # modules that imported the early object by name get the stand-in too
            for mod_name, mod in list(sys.modules.items()):
                if mod_name.startswith("vllm") and getattr(mod, "current_platform", None) is early:
                    setattr(mod, "current_platform", platforms._current_platform)
            self.stand_ins.append(f"current_platform: this release had resolved {type(early).__name__} while "
                                  "importing; replaced by the stand-in wherever it was imported by name")

    def _import_backends(self):
        import torch

        from vllm.v1.attention.backends.registry import AttentionBackendEnum

        self.Enum = AttentionBackendEnum
        real_empty = torch.empty

        def empty_on_meta(*args, **kwargs):
            # cutlass_mla's module-level SM100 workspace: allocate on meta.
            if str(kwargs.get("device", "")).startswith("cuda"):
                kwargs["device"] = "meta"
            return real_empty(*args, **kwargs)

        for name in CUDA_BACKENDS:
            if name not in AttentionBackendEnum.__members__:
                continue  # not in this vLLM release
            torch.empty = empty_on_meta if (name == "CUTLASS_MLA" and self.no_driver) else real_empty
            try:
                AttentionBackendEnum[name].get_class()
            except (ImportError, OSError):
                pass  # recorded again, per question, by vLLM's own loop
            finally:
                torch.empty = real_empty
        if self.no_driver:
            self.stand_ins.append("cutlass_mla's import-time CUDA workspace: allocated on the meta device")

    def _install_kernel_switches(self, artifactory):
        import vllm.utils.flashinfer as fi

        self._fn_originals = {}
        self._fn_replacements = {}
        switches = self.kernels
        if switches is not None:
            @functools.cache
            def has_flashinfer():
                return switches["flashinfer"]

            self._fn_originals["has_flashinfer"] = fi.has_flashinfer
            self._fn_replacements["has_flashinfer"] = has_flashinfer
            self.stand_ins.append(f"vllm.utils.flashinfer.has_flashinfer() -> {switches['flashinfer']} (--kernels)")
        if hasattr(fi, "has_nvidia_artifactory") and (switches is not None or artifactory is not None):
            @functools.cache
            def has_nvidia_artifactory():
                return bool(switches["trtllm_cubins"] if switches is not None else artifactory)

            self._fn_originals["has_nvidia_artifactory"] = fi.has_nvidia_artifactory
            self._fn_replacements["has_nvidia_artifactory"] = has_nvidia_artifactory
            shown = switches["trtllm_cubins"] if switches is not None else bool(artifactory)
            self.stand_ins.append(f"vllm.utils.flashinfer.has_nvidia_artifactory() -> {shown} "
                                  "(no network request)")
        self._patch_imported_names()
        try:
            import vllm.vllm_flash_attn.flash_attn_interface as fai
        except ImportError:
            fai = None  # neither FA2 nor FA3: the package itself does not import
        self.fai = fai
        if fai is not None and hasattr(fai, "FA4_AVAILABLE"):
            self._fa4_real = (fai.FA4_AVAILABLE, fai.FA4_UNAVAILABLE_REASON)
            if switches is not None and not switches["fa4"]:
                self.stand_ins.append("FA4_AVAILABLE -> False (--kernels)")

    def _no_retry_delay(self):
        """get_config parses config.json through repo_utils.with_retry, which
        sleeps 2 s after any failure before its one retry ("a concurrent HF
        cache refresh"): every config transformers refuses cost 2 s idle. A
        local folder does not change between the two attempts, so the retry
        runs at once: the same calls and the same answer, without the wait."""
        try:
            import vllm.transformers_utils.repo_utils as repo_utils
        except ImportError:
            return
        real = getattr(repo_utils, "with_retry", None)
        if real is None or "retry_delay" not in inspect.signature(real).parameters:
            return

        @functools.wraps(real)
        def with_retry_now(*args, **kwargs):
            kwargs["retry_delay"] = 0
            return real(*args, **kwargs)

        for mod_name, mod in list(sys.modules.items()):
            if mod is not None and mod_name.startswith("vllm") and getattr(mod, "with_retry", None) is real:
                setattr(mod, "with_retry", with_retry_now)
        self.stand_ins.append("repo_utils.with_retry: its retry after a failed config parse runs without the "
                              "2 s delay (a local model folder)")

    def _triton_works(self):
        """Without a driver Triton finds no GPU and vLLM's HAS_TRITON is
        False, which changes engine-config decisions (the model runner);
        on a GPU machine it is True."""
        self._has_triton = True
        self._patch_has_triton()
        self.stand_ins.append("HAS_TRITON -> True (Triton finds no GPU without a driver; on a GPU machine it does)")

    def _patch_has_triton(self):
        if not getattr(self, "_has_triton", False):
            return
        for mod_name, mod in list(sys.modules.items()):
            if mod is not None and mod_name.startswith("vllm") and getattr(mod, "HAS_TRITON", None) is False:
                setattr(mod, "HAS_TRITON", True)

    def _patch_imported_names(self):
        """Replace the switched functions in every vLLM module that holds the
        original under any name."""
        self._patch_has_triton()
        if not self._fn_originals:
            return
        for mod_name, mod in list(sys.modules.items()):
            if mod is None or not mod_name.startswith("vllm"):
                continue
            d = getattr(mod, "__dict__", None)
            if not d:
                continue
            for attr, value in list(d.items()):
                for key, orig in self._fn_originals.items():
                    if value is orig:
                        setattr(mod, attr, self._fn_replacements[key])

    def _install_warning_capture(self):
        self.warnings = []
        selector = self

        class Capture(logging.Handler):
            def emit(self, record):
                msg = record.getMessage()
                if msg.startswith("--block-size"):
                    selector.warnings.append(msg)

        self._capture = Capture()
        self._attach_warning_capture()

    def _attach_warning_capture(self):
        """(Re)attach the capture to get_attn_backend_cls's logger: vLLM
        configures its loggers again while it builds an engine config
        (create_engine_config leaves vllm.platforms.cuda with no handler,
        level NOTSET, propagating), which drops the capture."""
        log = logging.getLogger("vllm.platforms.cuda")
        log.setLevel(logging.WARNING)
        log.propagate = False
        if self._capture not in log.handlers:
            log.addHandler(self._capture)

    # -- per question -----------------------------------------------------

    def clear_caches(self):
        """Empty every functools cache of vLLM's modules (several are keyed
        on less than the device), so one question cannot answer another."""
        if len(sys.modules) != self._modules_seen:
            self._modules_seen = len(sys.modules)
            self._patch_imported_names()
            clearers = []
            seen = set()

            def add(obj):
                if isinstance(obj, (classmethod, staticmethod)):
                    obj = obj.__func__
                if isinstance(obj, functools._lru_cache_wrapper) and id(obj) not in seen:
                    seen.add(id(obj))
                    clearers.append(obj.cache_clear)

            for mod_name, mod in list(sys.modules.items()):
                if mod is None or not mod_name.startswith("vllm"):
                    continue
                for value in list(getattr(mod, "__dict__", {}).values()):
                    add(value)
                    if isinstance(value, type) and value.__module__ == mod_name:
                        for member in list(value.__dict__.values()):
                            add(member)
            for fn in self._fn_replacements.values():
                add(fn)
            self._cache_clearers = clearers
        for clear in self._cache_clearers:
            clear()
        import vllm.envs as envs

        if getattr(envs, "_is_envs_cache_enabled", lambda: False)():
            envs.disable_envs_cache()

    def set_device(self, major, minor):
        if self.platform_cls is not None:
            self.platform_cls.capability = self.DeviceCapability(int(major), int(minor))

    def set_fa4(self, present):
        if self.fai is None or not hasattr(self, "_fa4_real"):
            return
        if present:
            self.fai.FA4_AVAILABLE, self.fai.FA4_UNAVAILABLE_REASON = self._fa4_real
        else:
            # What flash_attn_interface computes when cute/interface.py is absent.
            self.fai.FA4_AVAILABLE = False
            self.fai.FA4_UNAVAILABLE_REASON = "vllm.vllm_flash_attn.cute.interface not found"

    def capability(self):
        import vllm.platforms as platforms

        return platforms.current_platform.get_device_capability()

    def selector_config(self, sel):
        import torch

        from vllm.v1.attention.backend import AttentionType
        from vllm.v1.attention.selector import AttentionSelectorConfig

        fields = getattr(AttentionSelectorConfig, "_fields", None)
        values = {**sel, "dtype": getattr(torch, sel["dtype"]), "attn_type": AttentionType(sel["attn_type"])}
        if fields is not None:
            unknown = [k for k in values if k not in fields and values[k] not in (False, None)]
            if unknown:
                raise ValueError(f"this vLLM's AttentionSelectorConfig has no field(s) {unknown}")
            values = {k: v for k, v in values.items() if k in fields}
        return AttentionSelectorConfig(**values)

    def select(self, cfg, num_heads, backend):
        """priorities, every backend's reasons, the choice, the error and
        the --block-size warning, as get_attn_backend_cls gives them. Call
        inside ``set_current_vllm_config``."""
        import vllm.platforms as platforms

        current = platforms.current_platform
        cap = self.capability()
        result = {"priorities": None, "reasons": None, "selected": None, "error": None, "warning": None}
        prio_kwargs = dict(use_mla=cfg.use_mla, device_capability=cap, num_heads=num_heads,
                           kv_cache_dtype=cfg.kv_cache_dtype, use_non_causal=getattr(cfg, "use_non_causal", False),
                           head_size=cfg.head_size, use_mm_prefix=getattr(cfg, "use_mm_prefix", False))
        params = inspect.signature(self.cuda._get_backend_priorities).parameters
        priorities = self.cuda._get_backend_priorities(**{k: v for k, v in prio_kwargs.items() if k in params})
        result["priorities"] = [b.name for b in priorities]
        valid, invalid = current.get_valid_backends(device_capability=cap, attn_selector_config=cfg,
                                                    num_heads=num_heads)
        reasons = {b.name: [] for b in priorities}
        for b, (_, why) in invalid.items():
            reasons[b.name] = list(why)
        if backend is not None and backend not in reasons:
            # An explicit backend outside the priority list: its own check.
            try:
                reasons[backend] = list(self.Enum[backend].get_class().validate_configuration(
                    device_capability=cap, **cfg._asdict()))
            except (ImportError, OSError) as e:
                reasons[backend] = [f"{type(e).__name__}: {e}"]
        result["reasons"] = reasons
        self.warnings.clear()
        self._attach_warning_capture()
        try:
            path = current.get_attn_backend_cls(self.Enum[backend] if backend is not None else None,
                                                attn_selector_config=cfg, num_heads=num_heads)
            if backend is not None:
                result["selected"] = backend
            else:
                by_path = [c.backend.name for c in sorted(valid, key=lambda c: c.priority)
                           if self.cuda._backend_cls_path(c.backend_class) == path]
                result["selected"] = by_path[0] if by_path else f"<unknown class {path}>"
        except ValueError as e:
            result["error"] = str(e)
        result["warning"] = self.warnings[0] if self.warnings else None
        return result

    def fa_version(self, **kwargs):
        """get_flash_attn_version(**kwargs), with the arguments this release
        does not take left out; an import failure as its text."""
        try:
            from vllm.v1.attention.backends.fa_utils import get_flash_attn_version
        except ImportError as e:
            return f"ImportError: {e}"
        params = inspect.signature(get_flash_attn_version).parameters
        return get_flash_attn_version(**{k: v for k, v in kwargs.items() if k in params})

    def mla_prefill(self, vllm_config):
        """vLLM's MLA prefill selection for ``vllm_config``, read off its own
        code (None where this release has no MLA prefill selection).

        ``selected`` / ``error`` are ``get_mla_prefill_backend(vllm_config)``
        itself. The selector config and the priority list are not rebuilt:
        the auto path runs once more (explicit choice cleared) with
        ``_auto_select_mla_prefill_backend`` wrapped to record its config (its
        last argument in every release that has it) and every
        ``MLAPrefillBackendEnum.get_class`` answering a class that is never
        valid, so the loop walks the whole list. Every candidate (and the
        explicit one) is then validated with its real class, as the loop does
        (``ImportError`` -> ``["ImportError"]``)."""
        try:
            from vllm.v1.attention.backends.mla.prefill import selector as psel
            from vllm.v1.attention.backends.mla.prefill.registry import MLAPrefillBackendEnum
        except ImportError:
            return None
        attention = vllm_config.attention_config
        explicit = getattr(attention, "mla_prefill_backend", None)
        out = {"selector_config": None, "priorities": None, "reasons": None, "selected": None, "error": None,
               "explicit": None if explicit is None else explicit.name}
        cap = self.capability()

        # 1. The auto path with every candidate invalid: its config and whole list.
        class NeverValid:
            @classmethod
            def validate_configuration(cls, device_capability, selector_config):
                return ["attn-select: probing the priority list"]

        tried, seen = [], []
        real_auto = psel._auto_select_mla_prefill_backend
        real_get_class = MLAPrefillBackendEnum.get_class

        def recording(*args):
            seen.append(args[-1])
            return real_auto(*args)

        def probing_get_class(member):
            tried.append(member.name)
            return NeverValid

        if explicit is not None:
            object.__setattr__(attention, "mla_prefill_backend", None)
        psel._auto_select_mla_prefill_backend = recording
        MLAPrefillBackendEnum.get_class = probing_get_class
        try:
            real_auto.cache_clear()
            psel.get_mla_prefill_backend(vllm_config)
            raise RuntimeError("the probing pass found a valid MLA prefill backend")
        except ValueError:
            pass
        finally:
            MLAPrefillBackendEnum.get_class = real_get_class
            psel._auto_select_mla_prefill_backend = real_auto
            if explicit is not None:
                object.__setattr__(attention, "mla_prefill_backend", explicit)
            real_auto.cache_clear()
        cfg = seen[0]
        out["selector_config"] = repr(cfg)
        out["priorities"] = list(tried)

        # 2. Every candidate's (and the explicit one's) own check, as the loop runs it.
        reasons = {}
        names = list(tried)
        if explicit is not None and explicit.name not in names:
            names.append(explicit.name)
        for name in names:
            try:
                reasons[name] = list(MLAPrefillBackendEnum[name].get_class().validate_configuration(cap, cfg))
            except ImportError:
                reasons[name] = ["ImportError"]
            except ValueError:
                # CUSTOM with nothing registered: get_class raises before any
                # check, so it has no reasons (the real call below raises it).
                continue
        out["reasons"] = reasons

        # 3. The real call.
        try:
            chosen = psel.get_mla_prefill_backend(vllm_config)
        except ValueError as e:
            out["error"] = str(e)
        else:
            hits = []
            for member in MLAPrefillBackendEnum:
                try:
                    if member.get_class() is chosen:
                        hits.append(member.name)
                except (ImportError, ValueError):
                    pass
            out["selected"] = hits[0] if hits else f"<unknown class {chosen.__qualname__}>"
        return out

    def mla_layer(self, backend):
        """What an MLAAttention layer on ``backend`` reads before it asks for
        a prefill backend: whether its impl is sparse and whether impl and
        layer have a dense-MHA prefill path (the class attributes; an impl
        may turn the latter off per instance)."""
        impl = self.Enum[backend].get_class().get_impl_cls()
        try:
            from vllm.model_executor.layers.attention.mla_attention import MLAAttention

            layer_dense = getattr(MLAAttention, "supports_dense_mha_prefill", True)
        except ImportError:
            layer_dense = True
        return {"sparse": bool(getattr(impl, "is_sparse", False)),
                "dense_mha_prefill": bool(getattr(impl, "supports_dense_mha_prefill", True) and layer_dense)}

    def trtllm(self, spec, kv_cache_dtype, dcp, force):
        """FlashInfer's use_trtllm_attention for a decode and a prefill, where
        this release exposes it (None otherwise)."""
        import torch

        import vllm.utils.flashinfer as fi

        fn = getattr(fi, "use_trtllm_attention", None)
        if fn is None:
            return None
        params = inspect.signature(fn).parameters
        out = {}
        for phase, is_prefill, tokens in (("decode", False, 8), ("prefill", True, 2048)):
            q = spec["q_dtype_prefill" if is_prefill else "q_dtype_decode"]
            kwargs = dict(num_qo_heads=spec["num_qo_heads"], num_kv_heads=spec["num_kv_heads"], num_tokens=tokens,
                          max_seq_len=4096, dcp_world_size=dcp, kv_cache_dtype=kv_cache_dtype,
                          q_dtype=getattr(torch, q), is_prefill=is_prefill, force_use_trtllm=force,
                          has_sinks=spec["has_sinks"], has_spec=False)
            try:
                out[phase] = bool(fn(**{k: v for k, v in kwargs.items() if k in params}))
            except Exception as e:  # noqa: BLE001 - the release's own failure is an answer
                out[phase] = f"{type(e).__name__}: {e}"
        return out


# --------------------------------------------------------------------------
# Model cases: EngineArgs -> VllmConfig -> each group's selection
# --------------------------------------------------------------------------

def _engine_args(folder, args):
    from vllm.engine.arg_utils import EngineArgs

    fields = set(inspect.signature(EngineArgs).parameters)
    kwargs = dict(model=folder, skip_tokenizer_init=True, load_format="dummy",
                  dtype=args.get("dtype") or "auto", kv_cache_dtype=args.get("kv_cache_dtype") or "auto",
                  block_size=args.get("block_size"), attention_backend=args.get("attention_backend"),
                  tensor_parallel_size=args.get("tensor_parallel_size") or 1)
    # given only when the user gave them: EngineArgs' own defaults otherwise
    for key in ("decode_context_parallel_size", "prefill_context_parallel_size", "disable_sliding_window",
                "language_model_only", "quantization", "trust_remote_code"):
        if args.get(key) is not None:
            kwargs[key] = args[key]
    attention = {k: args[k] for k in ("flash_attn_version", "use_trtllm_attention", "mla_prefill_backend")
                 if args.get(k) is not None}
    if "attention_config" in fields:
        from vllm.config import AttentionConfig

        kwargs["attention_config"] = AttentionConfig(**attention)
    elif attention:
        raise ValueError(f"this vLLM has no attention_config for {sorted(attention)}")
    missing = [k for k, v in kwargs.items() if k not in fields and v is not None]
    if missing:
        raise ValueError(f"this vLLM's EngineArgs takes no {missing}")
    return EngineArgs(**{k: v for k, v in kwargs.items() if k in fields})


def _layer_cache_dtype(vc):
    """cache_config.cache_dtype once the model's Attention layers are built:
    Attention.__init__ sets an "auto" cache to "fp8" when the layer's quant
    config (llm-compressor's CompressedTensorsConfig) carries a
    kv_cache_scheme. No layer is built here, so that one assignment is made
    from vLLM's own quant_config; MLAAttention makes none."""
    cc = vc.cache_config
    scheme = getattr(getattr(vc, "quant_config", None), "kv_cache_scheme", None)
    if scheme is not None and cc.cache_dtype == "auto" and not vc.model_config.use_mla:
        return "fp8"
    return cc.cache_dtype


def _engine_facts(vc):
    mc, cc, ac, pc = vc.model_config, vc.cache_config, getattr(vc, "attention_config", None), vc.parallel_config
    backend = getattr(ac, "backend", None) if ac is not None else None
    return {
        "dtype": str(mc.dtype).removeprefix("torch."),
        "cache_dtype": _layer_cache_dtype(vc),
        "block_size": cc.block_size if getattr(cc, "user_specified_block_size", False) else None,
        "backend": backend.name if backend is not None else None,
        "flash_attn_version": getattr(ac, "flash_attn_version", None) if ac is not None else None,
        "use_mla": bool(mc.use_mla),
        "head_size": mc.get_head_size(),
        "num_heads": mc.get_num_attention_heads(pc),
        "num_kv_heads": mc.get_num_kv_heads(pc),
        "dcp_size": getattr(pc, "decode_context_parallel_size", 1),
        "pcp_size": getattr(pc, "prefill_context_parallel_size", 1),
    }


def run_case(selector, case):
    from vllm.config import set_current_vllm_config

    out = {"engine_config": None, "groups": [], "error": None}
    selector.set_device(*case["capability"])
    if selector.kernels is not None:
        selector.set_fa4(selector.kernels["fa4"])
    os.environ["VLLM_BATCH_INVARIANT"] = "1" if case.get("batch_invariant") else "0"
    selector.clear_caches()
    try:
        vc = _engine_args(case["model"]["folder"], case.get("engine_args", {})).create_engine_config()
    except Exception as e:  # noqa: BLE001 - vLLM's refusal is an answer
        out["error"] = f"{type(e).__name__}: {e}"
        return out
    facts = _engine_facts(vc)
    out["engine_config"] = facts
    selector.clear_caches()
    import vllm.envs as envs

    for g in case["groups"]:
        sel = dict(g["selector_config"])
        # the engine-level fields every layer takes from the config
        sel.update(dtype=facts["dtype"], kv_cache_dtype=g.get("layer_kv_cache_dtype") or facts["cache_dtype"],
                   block_size=facts["block_size"], use_batch_invariant=bool(envs.VLLM_BATCH_INVARIANT),
                   use_dcp=facts["dcp_size"] > 1,
                   # get_attn_backend's; a request's raw use_pcp what-if stays
                   use_pcp=bool(sel.get("use_pcp")) or facts["pcp_size"] > 1)
        res = {"name": g["name"], "selector_config": sel}
        try:
            with set_current_vllm_config(vc):
                cfg = selector.selector_config(sel)
                res.update(selector.select(cfg, g.get("num_heads"), facts["backend"]))
                res["fa_version"] = {"layer": selector.fa_version(**g.get("fa_call", {})),
                                     "noarg": selector.fa_version()}
                res["trtllm"] = None
                if g.get("trtllm") is not None and res.get("reasons", {}).get("FLASHINFER") == []:
                    ac = getattr(vc, "attention_config", None)
                    res["trtllm"] = selector.trtllm(g["trtllm"], sel["kv_cache_dtype"], facts["dcp_size"],
                                                    getattr(ac, "use_trtllm_attention", None))
                res["mla_prefill"] = None
                if cfg.use_mla and res.get("selected") in selector.Enum.__members__:
                    prefill = selector.mla_prefill(vc)
                    res["mla_prefill"] = {"exposed": False} if prefill is None else {
                        "exposed": True, **selector.mla_layer(res["selected"]), **prefill}
        except Exception as e:  # noqa: BLE001 - reported per group, the rest go on
            res["crash"] = f"{type(e).__name__}: {e}\n" + traceback.format_exc(limit=4)
        out["groups"].append(res)
    return out


def main():
    from answer_lines import serve  # beside this file: stdlib only

    def load(request):
        return Selector(libcuda=request.get("libcuda"), platform=request.get("platform", True),
                        kernels=request.get("kernels"), artifactory=request.get("artifactory"))

    def crashed(e):
        return {"engine_config": None, "groups": [], "error": f"{type(e).__name__}: {e}"}

    return serve("ATTN_SELECT_VLLM", "vllm", load, run_case, crashed)


if __name__ == "__main__":
    sys.exit(main())
