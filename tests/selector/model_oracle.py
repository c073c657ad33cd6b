"""Differential oracle for the config parser: what vLLM 0.33.0 itself derives
from a config.json, on a CPU-only machine. Never imports attn_select.

Run with the python of a venv holding ``vllm==0.33.0`` (see
/work/shared/VLLM-ON-CPU.md):

    /tmp/vllm-venv/bin/python tests/selector/model_oracle.py < cases.json > results.json

Input: a JSON list of ``{"config": {config.json}, "capability": [9, 0],
"dtype": "auto", "weights": {tensor: safetensors dtype} (optional),
"language_model_only": false, "disable_sliding_window": false, "kv_cache_dtype": "auto" (optional),
"tensor_parallel_size": 1 (optional; the model is built as rank 0 of that many: the one-process TP
group reports that world size, which is all a layer's __init__ reads),
"files": {name: JSON or text}
(optional, written beside config.json), "trust_remote_code": false (for a config whose
auto_map names a configuration file among "files")}``. Output, one per case: ``{"model": {ModelConfig facts},
"calls": [every get_attn_backend call, with the calling layer's prefix],
"layers": [attributes of every Attention / MLAAttention module],
"error": null | text}``.

How: ``EngineArgs(model=FOLDER).create_engine_config()`` builds what
``vllm serve FOLDER`` would (cache_config.sliding_window included); the model
class is then instantiated on the ``meta`` device in a one-process gloo group
(tensor parallel size 1), with ``get_attn_backend`` replaced, wherever it was
imported by name, by a recorder that returns TRITON_ATTN / TRITON_MLA so the
layers finish building. The device is a ``NonNvmlCudaPlatform`` with the
case's capability, and libcuda.so.1 the driver stand-in from
tests/vllm_oracle/build_libcuda_stub.py.
"""

from __future__ import annotations

import ctypes
import inspect
import json
import os
import socket
import sys
import tempfile
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("VLLM_USE_V2_MODEL_RUNNER", "1")


def _setup():
    sys.path.insert(0, str(HERE.parent / "vllm_oracle"))
    from build_libcuda_stub import build

    ctypes.CDLL(str(build()), mode=ctypes.RTLD_GLOBAL)
    import vllm.platforms as platforms
    import vllm.platforms.cuda as cuda
    from vllm.platforms.interface import DeviceCapability

    class OraclePlatform(cuda.NonNvmlCudaPlatform):
        capability = DeviceCapability(9, 0)

        @classmethod
        def get_device_capability(cls, device_id: int = 0):
            return cls.capability

        @classmethod
        def get_device_name(cls, device_id: int = 0) -> str:
            return "NVIDIA oracle"

        @classmethod
        def get_device_total_memory(cls, device_id: int = 0) -> int:
            return 80 << 30

        @classmethod
        def num_compute_units(cls, device_id: int = 0) -> int:
            return 132

        @classmethod
        def device_count(cls) -> int:
            return 8

        @classmethod
        def current_device(cls):
            import torch

            return torch.device("cuda", 0)

    platforms._current_platform = OraclePlatform()
    return OraclePlatform, DeviceCapability


def _caller_prefix() -> str | None:
    """The ``prefix`` of the layer whose __init__ called get_attn_backend."""
    frame = inspect.currentframe()
    frame = frame.f_back if frame else None
    while frame is not None:
        local = frame.f_locals
        prefix = local.get("prefix")
        if isinstance(prefix, str) and prefix:
            return prefix
        kwargs = local.get("kwargs")
        if isinstance(kwargs, dict) and isinstance(kwargs.get("prefix"), str) and kwargs["prefix"]:
            return kwargs["prefix"]
        frame = frame.f_back
    return None


def main() -> None:
    # vLLM logs to stdout: keep the real stdout for the results only
    results_out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    platform_cls, DeviceCapability = _setup()
    import torch

    import vllm.v1.attention.selector as selector
    from vllm.config import set_current_vllm_config
    from vllm.distributed import init_distributed_environment, initialize_model_parallel
    from vllm.distributed import parallel_state
    from vllm.distributed.parallel_state import destroy_model_parallel
    from torch.overrides import TorchFunctionMode

    class _CudaToMeta(TorchFunctionMode):
        """Tensors a layer allocates on "cuda" explicitly go to "meta"."""

        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            dev = kwargs.get("device")
            if dev is not None and (isinstance(dev, int) or str(dev).startswith("cuda")):
                kwargs["device"] = "meta"
            return func(*args, **kwargs)
    from vllm.engine.arg_utils import EngineArgs
    from vllm.model_executor.layers.attention import Attention, MLAAttention
    from vllm.model_executor.layers.attention_layer_base import AttentionLayerBase
    from vllm.model_executor.model_loader.utils import get_model_architecture, initialize_model
    from vllm.utils.torch_utils import set_default_torch_dtype
    from vllm.v1.attention.backends.registry import AttentionBackendEnum

    calls: list[dict] = []
    real = selector.get_attn_backend

    def record(head_size, dtype, kv_cache_dtype, use_mla=False, has_sink=False, use_sparse=False,
               use_mm_prefix=False, use_per_head_quant_scales=False, attn_type=None, num_heads=None,
               has_sliding_window=False):
        calls.append({
            "prefix": _caller_prefix(), "head_size": head_size, "dtype": str(dtype).removeprefix("torch."),
            "kv_cache_dtype": kv_cache_dtype, "use_mla": use_mla, "has_sink": has_sink, "use_sparse": use_sparse,
            "use_mm_prefix": use_mm_prefix, "use_per_head_quant_scales": use_per_head_quant_scales,
            "attn_type": str(getattr(attn_type, "value", attn_type) or "decoder"), "num_heads": num_heads,
            "has_sliding_window": has_sliding_window,
        })
        name = "FLASHMLA_SPARSE" if use_sparse else "TRITON_MLA" if use_mla else "TRITON_ATTN"
        return AttentionBackendEnum[name].get_class()

    import vllm.utils.torch_utils as torch_utils

    real_aux_stream = torch_utils.aux_stream

    def no_stream():  # shared-expert side stream: needs a driver, used only at run time
        return None

    def on_cpu(fn):
        """Build-time values a layer reads back as Python numbers (ALiBi
        slopes, XIELU's scalars) cannot come from "meta" tensors: compute
        them on the CPU."""
        if getattr(fn, "_oracle_on_cpu", False):
            return fn

        def wrapped(*args, **kwargs):
            with torch.device("cpu"):
                return fn(*args, **kwargs)

        wrapped._oracle_on_cpu = True
        return wrapped

    def patch_recorder() -> None:
        for mod in list(sys.modules.values()):
            if getattr(mod, "get_attn_backend", None) is real:
                mod.get_attn_backend = record
            if getattr(mod, "aux_stream", None) is real_aux_stream:
                mod.aux_stream = no_stream
            if callable(getattr(mod, "_make_dual_stream", None)):  # Cohere2-MoE's run-time stream
                mod._make_dual_stream = lambda *args, **kwargs: None
            name = getattr(mod, "__name__", "") or ""
            if name.startswith("vllm.model_executor.models."):
                for attr in ("_get_alibi_slopes", "_get_step_alibi_slopes"):  # step1.py has its own
                    if callable(getattr(mod, attr, None)):
                        setattr(mod, attr, on_cpu(getattr(mod, attr)))
        activation = sys.modules.get("vllm.model_executor.layers.activation")
        if activation is not None and hasattr(activation, "XIELU"):
            activation.XIELU.__init__ = on_cpu(activation.XIELU.__init__)
        if activation is not None and hasattr(activation, "GeluAndMulSparse"):  # Gemma-3n's icdf(...).item()
            activation.GeluAndMulSparse.__init__ = on_cpu(activation.GeluAndMulSparse.__init__)

    from vllm.triton_utils import triton

    class _NoStream:  # DeepSeek-V4's aux GEMM streams (torch.cuda.Stream): need a driver, used only at run time
        def __init__(self, *args, **kwargs):
            pass

    torch.cuda.Stream = _NoStream

    if not hasattr(triton, "set_allocator"):  # a run-time scratch allocator (OLMo-Hybrid's GDN); not on CPU
        triton.set_allocator = lambda allocator: None

    cases = json.load(sys.stdin)
    results = []
    distributed = workspace = False
    with tempfile.TemporaryDirectory(prefix="model-oracle-") as tmp:
        for i, case in enumerate(cases):
            out: dict = {"model": None, "calls": [], "layers": [], "error": None}
            results.append(out)
            folder = Path(tmp) / f"m{i}"
            folder.mkdir()
            (folder / "config.json").write_text(json.dumps(case["config"]))
            for rel, content in case.get("files", {}).items():  # e.g. a Sentence-Transformers modules.json
                (folder / rel).parent.mkdir(parents=True, exist_ok=True)
                (folder / rel).write_text(content if isinstance(content, str) else json.dumps(content))
            if case.get("weights"):  # safetensors header only: vLLM reads dtypes from it
                header = {n: {"dtype": dt, "shape": [1], "data_offsets": [0, 1]} for n, dt in case["weights"].items()}
                blob = json.dumps(header).encode()
                (folder / "model.safetensors").write_bytes(len(blob).to_bytes(8, "little") + blob + b"\0")
            platform_cls.capability = DeviceCapability(*case.get("capability", [9, 0]))
            calls.clear()
            # each case is its own `vllm serve`: the Transformers backend's MLA
            # fallback sets VLLM_MLA_DISABLE=1 for the process it runs in
            os.environ.pop("VLLM_MLA_DISABLE", None)
            try:
                # a case that ships a tokenizer (a processor a model's init loads needs it) gets it read
                with_tokenizer = "tokenizer.json" in case.get("files", {})
                # a remote-code config (its configuration_*.py among "files") needs trust_remote_code
                args = EngineArgs(model=str(folder), skip_tokenizer_init=not with_tokenizer, load_format="dummy",
                                  trust_remote_code=case.get("trust_remote_code", False),
                                  dtype=case.get("dtype", "auto"), max_model_len=case.get("max_model_len"),
                                  kv_cache_dtype=case.get("kv_cache_dtype") or "auto",
                                  language_model_only=case.get("language_model_only", False),
                                  tensor_parallel_size=case.get("tensor_parallel_size") or 1,
                                  disable_sliding_window=case.get("disable_sliding_window", False))
                vc = args.create_engine_config()
                mc, pc = vc.model_config, vc.parallel_config
                text = mc.hf_text_config
                out["model"] = {
                    "architecture": mc.architecture, "dtype": str(mc.dtype).removeprefix("torch."),
                    "head_size": mc.get_head_size(), "num_heads": mc.get_num_attention_heads(pc),
                    "num_kv_heads": mc.get_num_kv_heads(pc), "num_layers": mc.get_total_num_hidden_layers(),
                    "use_mla": mc.use_mla, "is_mm_prefix_lm": mc.is_mm_prefix_lm, "rswa_window": mc.rswa_window,
                    "is_diffusion": mc.is_diffusion, "runner": mc.runner_type,
                    "attn_logit_softcapping": getattr(text, "attn_logit_softcapping", None),
                    "cache_sliding_window": vc.cache_config.sliding_window,
                    "index_topk": getattr(text, "index_topk", None),
                }
                with set_current_vllm_config(vc):
                    if not distributed:
                        sock = socket.socket()
                        sock.bind(("127.0.0.1", 0))
                        port = sock.getsockname()[1]
                        sock.close()
                        init_distributed_environment(world_size=1, rank=0, local_rank=0, backend="gloo",
                                                     distributed_init_method=f"tcp://127.0.0.1:{port}")
                        distributed = True
                    # groups depend on the model (the expert-parallel group exists only for MoE)
                    destroy_model_parallel()
                    initialize_model_parallel(1, 1)
                    tp = case.get("tensor_parallel_size") or 1
                    if tp > 1:  # rank 0 of tp ranks, as far as building the layers goes
                        parallel_state._TP.world_size = tp
                        parallel_state._TP.rank_in_group = 0
                    if not workspace:  # sparse MLA impls reserve scratch at build time
                        from vllm.v1.worker.workspace import init_workspace_manager

                        init_workspace_manager(torch.device("meta"))
                        workspace = True
                    get_model_architecture(mc)  # imports the model file, so the patches reach it
                    patch_recorder()
                    with set_default_torch_dtype(mc.dtype), torch.device("meta"), _CudaToMeta():
                        model = initialize_model(vc)
                        patch_recorder()  # modules imported while building
                out["calls"] = list(calls)
                for name, m in model.named_modules():
                    if isinstance(m, Attention):
                        impl = getattr(m, "impl", None)
                        out["layers"].append({
                            "prefix": m.layer_name, "num_heads": m.num_heads, "num_kv_heads": m.num_kv_heads,
                            "head_size": m.head_size, "head_size_v": m.head_size_v,
                            "sliding_window": m.sliding_window, "has_sink": m.has_sink,
                            "attn_type": str(getattr(m.attn_type, "value", m.attn_type)),
                            "logits_soft_cap": getattr(impl, "logits_soft_cap", None),
                            # ALiBi slopes handed to the impl: FlashAttention then needs FA2
                            "alibi": getattr(impl, "alibi_slopes", None) is not None,
                        })
                    elif isinstance(m, MLAAttention):
                        out["layers"].append({
                            "prefix": m.layer_name, "num_heads": m.num_heads, "num_kv_heads": m.num_kv_heads,
                            "head_size": m.head_size, "mla": True, "kv_lora_rank": m.kv_lora_rank,
                            "qk_rope_head_dim": m.qk_rope_head_dim, "qk_nope_head_dim": m.qk_nope_head_dim,
                            "v_head_dim": m.v_head_dim,
                        })
                    elif (isinstance(m, AttentionLayerBase) and hasattr(m, "kv_lora_rank")
                          and hasattr(m, "attn_backend")):
                        # a model's own MLA layer class that selects its backend itself
                        # (Kimi-K3's MultiHeadLatentAttention): one latent KV head, as its KV spec says
                        out["layers"].append({
                            "prefix": m.layer_name, "num_heads": getattr(m, "num_local_heads", m.num_heads),
                            "num_kv_heads": 1, "head_size": m.head_size, "mla": True, "kv_lora_rank": m.kv_lora_rank,
                            "qk_rope_head_dim": m.qk_rope_head_dim, "qk_nope_head_dim": m.qk_nope_head_dim,
                            "v_head_dim": m.v_head_dim,
                        })
                del model
            except Exception as exc:  # the case's config is one vLLM rejects
                out["error"] = f"{type(exc).__name__}: {exc}"
                out["trace"] = traceback.format_exc()[-3000:]
                out["calls"] = list(calls)
    json.dump(results, results_out)
    results_out.flush()


if __name__ == "__main__":
    main()
