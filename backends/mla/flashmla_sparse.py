"""FLASHMLA_SPARSE: FlashMLA's sparse MLA kernels (DeepSeek-V3.2, GLM NoPE).

Mirrors ``FlashMLASparseBackend`` / ``FlashMLASparseMetadataBuilder`` /
``FlashMLASparseImpl`` (vllm/v1/attention/backends/mla/flashmla_sparse.py).
Its module imports sparse_mla_attention.py, hence fa_utils. Unlike FLASHMLA
it does not ask whether ``vllm._flashmla_C`` is present at selection time.

After selection ``MLAAttention`` rewrites a quantized KV dtype other than
nvfp4_ds_mla to fp8_ds_mla (see common.canonical_sparse_mla_kv_cache_dtype).
"""

from __future__ import annotations

from attn_select.backends.mla.common import (
    DS_MLA_ROW_BYTES,
    MLA_KV_CACHE_SHAPE,
    canonical_sparse_mla_kv_cache_dtype,
    device_capability_repr,
    fa_utils_import_error,
)
from attn_select.backends.spec import BackendSpec, BlockSize, CapabilityRange, MultipleOf, rule
from attn_select.selector.config import Query, is_quantized_kv_cache

# KV dtypes the 512-wide NoPE path serves on SM90 (None = unspecified).
NOPE_512_KV_CACHE_DTYPES = (None, "auto", "bfloat16", "float16", "fp8_ds_mla")
# vLLM reads qk_rope_head_dim with getattr(..., 64).
_QK_ROPE_MISSING = 64


@rule("64 when the KV cache is quantized on the 10.x family, else any multiple of 64")
def _kernel_block_sizes(q: Query) -> tuple[BlockSize, ...]:
    # get_supported_kernel_block_sizes(kv_cache_spec). validate_configuration
    # calls it without a spec (multiple of 64); both accept the same sizes.
    kv = q.cfg.kv_cache_dtype
    if kv is not None and is_quantized_kv_cache(kv) and q.cap.is_family(100):
        return (64,)
    return (MultipleOf(64),)


@rule("head 512 only for NoPE models with bf16/fp8_ds_mla KV on 9.x; nvfp4_ds_mla only on 10.x")
def _combination(q: Query) -> str | None:
    # FlashMLASparseBackend.supports_combination, check for check.
    kv = q.cfg.kv_cache_dtype
    if q.cfg.head_size == 512:
        if kv in NOPE_512_KV_CACHE_DTYPES and q.cap.major == 9:
            if q.ctx.has_model:
                rope = q.ctx.mla_qk_rope_head_dim
                if rope is None:
                    rope = _QK_ROPE_MISSING
                if rope != 0:
                    return (
                        "FLASHMLA_SPARSE supports head_size 512 only for "
                        "rope-free (NoPE) models"
                    )
        else:
            return (
                "FLASHMLA_SPARSE supports head_size 512 only with bf16 or "
                "fp8_ds_mla kv-cache on SM90 (NoPE), got "
                f"kv_cache_dtype={kv}, "
                f"capability={device_capability_repr(q.cap)}"
            )
    if kv == "nvfp4_ds_mla" and q.cap.major != 10:
        return (
            f"FLASHMLA_SPARSE only supports the {kv} kv-cache "
            "dtype on SM100 (Blackwell)"
        )
    return None


@rule("no for a NoPE model (qk_rope_head_dim 0) on an fp8_ds_mla cache, else yes")
def _dense_mha_prefill(q: Query) -> bool:
    # FlashMLASparseImpl.__init__: a NoPE model on fp8_ds_mla keeps the 576-wide
    # DeepSeek rows, too wide for the kv_lora_rank workspace dense-MHA prefill
    # gathers into. It sees the KV dtype after the fp8_ds_mla rewrite.
    kv = q.cfg.kv_cache_dtype
    if kv is not None:
        kv = canonical_sparse_mla_kv_cache_dtype("FLASHMLA_SPARSE", kv)
    return not (kv == "fp8_ds_mla" and q.ctx.mla_qk_rope_head_dim == 0)


FLASHMLA_SPARSE = BackendSpec(
    name="FLASHMLA_SPARSE",
    vllm_class="vllm.v1.attention.backends.mla.flashmla_sparse.FlashMLASparseBackend",
    family="mla",
    summary="FlashMLA sparse MLA (Hopper and Blackwell 10.x; fp8_ds_mla / nvfp4_ds_mla)",
    head_sizes=(576, 512),
    dtypes=("bfloat16",),
    # "fp8" is an alias for fp8_ds_mla; nvfp4_ds_mla is SM100 only.
    kv_cache_dtypes=("auto", "bfloat16", "fp8_ds_mla", "fp8", "nvfp4_ds_mla"),
    kernel_block_sizes=_kernel_block_sizes,
    is_mla=True,
    is_sparse=True,
    capability=CapabilityRange(majors=(9, 10)),
    pcp=True,
    dcp=True,
    combination=_combination,
    import_error=fa_utils_import_error,
    cudagraph_support="UNIFORM_BATCH",
    kv_cache_shape=(
        f"{MLA_KV_CACHE_SHAPE}; fp8_ds_mla rows of {DS_MLA_ROW_BYTES['fp8_ds_mla']} bytes, "
        f"nvfp4_ds_mla rows of {DS_MLA_ROW_BYTES['nvfp4_ds_mla']} bytes"
    ),
    dense_mha_prefill=_dense_mha_prefill,
    # vLLM's FlashMLA sparse kernel on a bf16 cache (flash_mla_sparse_fwd)
    run_adapter="attn_select.backends.run.flashmla:FlashMLASparseAdapter",
)
