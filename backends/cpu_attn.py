"""CPU_ATTN: vLLM's CPU attention backend
(vllm/v1/attention/backends/cpu_attn.py, ``CPUAttentionBackend``).

No CUDA priority list names it, but ``--attention-backend CPU_ATTN`` on a
CUDA GPU is still an ``AttentionBackendEnum`` member: ``get_attn_backend_cls``
imports the class and asks its own ``validate_configuration``, which has no
device check, so vLLM 0.33.0 selects it. Its kernels
(``torch.ops._C.cpu_attn_*``) are built only into vLLM's CPU wheel: on a
CUDA build the first metadata build (the startup profile run) fails. The
spec is here so explain answers what vLLM's selector answers; ``run`` has no
adapter for it.
"""

from __future__ import annotations

from attn_select.backends.flash_attn import import_error as fa_package_import_error
from attn_select.backends.spec import BackendSpec, MultipleOf, Rule
from attn_select.selector.config import AttentionType, Query

_FP8 = ("fp8", "fp8_e4m3", "fp8_e5m2")


def _cpu_cache_dtype(q: Query) -> bool:
    # supports_kv_cache_dtype: unquantized caches always; the fp8 ones only
    # when torch.cpu reports AMX tiles or AVX-512 (VL, BW and DQ) on the host
    # CPU. No device profile records the host, so it is taken as present: the
    # x86 servers NVIDIA GPUs are deployed in (Xeon since Skylake-SP, EPYC
    # since Zen 4) have AVX-512, as do the machines vLLM's selection is
    # checked on. A Grace (Arm) or pre-Zen 4 EPYC host would refuse fp8 here.
    return q.cfg.kv_cache_dtype in (None, "auto", "bfloat16", "float16", *_FP8)


CPU_ATTN = BackendSpec(
    name="CPU_ATTN",
    vllm_class="vllm.v1.attention.backends.cpu_attn.CPUAttentionBackend",
    family="cpu_attn",
    summary="vLLM's CPU backend: selectable on CUDA only by name; its kernels are not in the CUDA build",
    head_sizes=(32, 64, 80, 96, 112, 128, 160, 192, 224, 256, 512),
    dtypes=("float16", "bfloat16", "float32"),
    kv_cache_dtypes=("auto", *_FP8),
    kv_cache_dtype_rule=Rule("auto/bfloat16/float16; fp8/fp8_e4m3/fp8_e5m2 only on a host CPU with AMX or AVX-512 "
                             "(assumed: an x86 server CPU with AVX-512; a Grace or pre-Zen 4 EPYC host has neither)",
                             _cpu_cache_dtype),
    kernel_block_sizes=(MultipleOf(32),),
    attn_types=(AttentionType.DECODER.value, AttentionType.ENCODER.value, AttentionType.ENCODER_ONLY.value,
                AttentionType.ENCODER_DECODER.value),
    sliding_window=True,
    non_causal=True,
    kv_cache_layouts=("LBHNC",),
    kv_cache_shape="(num_blocks, num_kv_heads, block_size, 2 * head_size)",
    # cpu_attn.py imports vllm.model_executor.layers.attention, whose
    # mm_encoder_attention imports fa_utils -> vllm.vllm_flash_attn (as FLEX_ATTENTION)
    import_error=fa_package_import_error,
)
