"""FLASH_ATTN_MLA_SPARSE (FA3, Hopper) and FLASH_ATTN_MLA_SPARSE_FA4
(FA4 decode + FlashInfer trtllm-gen prefill, Blackwell 10.x).

Both classes live in vllm/v1/attention/backends/mla/flashattn_mla_sparse.py:
``FlashAttnMLASparseBackend`` (its own AttentionBackend) and
``FlashAttnMLASparseFA4Backend``, a subclass of
``FlashInferMLASparseTRTLLMBackend`` that ends its ``supports_combination``
with the parent's checks. The module imports fa_utils and
sparse_mla_attention.py, so it fails to import without any FA build.
"""

from __future__ import annotations

from attn_select.backends.mla.common import (
    MLA_KV_CACHE_SHAPE,
    fa_utils_import_error,
    has_flashinfer,
)
from attn_select.backends.mla.flashattn_mla import FA_MLA_UNSUPPORTED
from attn_select.backends.mla.flashinfer_mla_sparse import index_topk_op, trtllm_sparse_combination
from attn_select.backends.spec import BackendSpec, CapabilityRange, MultipleOf, rule
from attn_select.selector.config import Capability, Kernels, Query
from attn_select.selector.fa_version import fa_supports_mla

FA3_SPARSE_KV_CACHE_DTYPES = (None, "auto", "float16", "bfloat16")


@rule("bf16/fp16 KV; FA3 on 9.x; model: no DCP and an index_topk")
def _fa3_combination(q: Query) -> str | None:
    # FlashAttnMLASparseBackend.supports_combination, check for check. It
    # reads the config with get_current_vllm_config_or_none, which is always
    # set while get_attn_backend runs.
    if q.cfg.kv_cache_dtype not in FA3_SPARSE_KV_CACHE_DTYPES:
        return "FlashAttention MLA Sparse currently supports only FP16/BF16 KV cache"
    if not fa_supports_mla(q.cap, q.kernels):
        return FA_MLA_UNSUPPORTED
    if q.ctx.has_model:
        if q.ctx.dcp_size > 1:
            return "FlashAttention MLA Sparse does not support DCP for now"
        if q.ctx.mla_index_topk is None:
            return "FlashAttention MLA Sparse requires model with index_topk"
    return None


FLASH_ATTN_MLA_SPARSE = BackendSpec(
    name="FLASH_ATTN_MLA_SPARSE",
    vllm_class=(
        "vllm.v1.attention.backends.mla.flashattn_mla_sparse.FlashAttnMLASparseBackend"
    ),
    family="mla",
    summary="FlashAttention 3 sparse MLA (Hopper 9.x; bf16/fp16 KV only)",
    head_sizes=(),  # any
    kv_cache_dtypes=("auto", "float16", "bfloat16"),
    kernel_block_sizes=(MultipleOf(64),),
    is_mla=True,
    is_sparse=True,
    capability=CapabilityRange(majors=(9,)),
    pcp=True,
    dcp=False,  # FlashAttnMLASparseImpl keeps MLAAttentionImpl's False
    combination=_fa3_combination,
    import_error=fa_utils_import_error,
    cudagraph_support="UNIFORM_BATCH",
    kv_cache_shape=MLA_KV_CACHE_SHAPE,
    # vLLM's FA3 over the top-k rows as one-token pages
    run_adapter="attn_select.backends.run.flashattn_mla:FlashAttnMLASparseAdapter",
)


# vllm_flash_attn's FA4_UNAVAILABLE_REASON when cute/interface.py is missing.
FA4_NOT_FOUND = "vllm.vllm_flash_attn.cute.interface not found"


def fa4_unavailable(cap: Capability, kernels: Kernels) -> str | None:
    """``_fa4_cute_mla_available``: "FA4 unavailable: " + vLLM's
    ``fa_version_unsupported_reason(4)``. The later cute-DSL import of
    ``_flash_attn_fwd`` is assumed to succeed whenever FA4 is installed."""
    if not kernels.fa4:
        return f"FA4 unavailable: FA4 is unavailable due to: {FA4_NOT_FOUND}"
    if not (cap.is_family(90) or cap.is_family(100) or cap.is_family(110)):
        return (
            "FA4 unavailable: FA4 is only supported on devices with compute "
            "capability 9.x, 10.x, or 11.x"
        )
    return None


FA4_INDEX_TOPK_TILE = 128
FA4_DIMS = (512, 64)  # (kv_lora_rank, qk_rope_head_dim)


def fa4_head_counts(dcp_size: int) -> tuple[int, ...]:
    """Gathered query-head counts the FA4 kernel takes; 128 only without DCP
    (128 gathered heads take FA's prefill kernel, unvalidated under DCP)."""
    return (8, 16, 32, 64) if dcp_size > 1 else (8, 16, 32, 64, 128)


@rule("FlashInfer and FA4 present; model: index_topk % 128, dims (512, 64), 8-128 gathered heads; then FLASHINFER_MLA_SPARSE's checks")
def _fa4_combination(q: Query) -> str | None:
    # FlashAttnMLASparseFA4Backend.supports_combination, check for check.
    ctx = q.ctx
    if not has_flashinfer(q.kernels):
        return "FA4 sparse MLA runs its prefill batches on FlashInfer's kernel"
    reason = fa4_unavailable(q.cap, q.kernels)
    if reason is not None:
        return reason
    if ctx.has_model:
        topk = ctx.mla_index_topk
        if topk is None or index_topk_op("FLASHATTN_MLA_SPARSE", topk, lambda t: t % FA4_INDEX_TOPK_TILE,
                                         "index_topk % 128") != 0:
            return f"FA4 sparse MLA requires index_topk % 128 == 0, got {topk}"
        dims = (ctx.mla_kv_lora_rank, ctx.mla_qk_rope_head_dim)
        if dims != FA4_DIMS:
            return (
                "FA4 sparse MLA requires (kv_lora_rank, qk_rope_head_dim) "
                f"== (512, 64), got {dims}"
            )
        heads = ctx.model_num_heads
        counts = fa4_head_counts(ctx.dcp_size)
        # An unknown per-rank head count (context built without it) skips
        # this check; vLLM always knows it.
        if heads is not None and heads * ctx.dcp_size not in counts:
            return (
                f"FA4 sparse MLA requires {counts} gathered query heads, "
                f"got num_heads={heads} * dcp_size={ctx.dcp_size}"
            )
    return trtllm_sparse_combination(q, "FLASH_ATTN_MLA_SPARSE_FA4")


FLASH_ATTN_MLA_SPARSE_FA4 = BackendSpec(
    name="FLASH_ATTN_MLA_SPARSE_FA4",
    vllm_class=(
        "vllm.v1.attention.backends.mla.flashattn_mla_sparse."
        "FlashAttnMLASparseFA4Backend"
    ),
    family="mla",
    summary="FA4 sparse MLA decode + FlashInfer trtllm-gen prefill (Blackwell 10.x, bf16 KV)",
    head_sizes=(576,),  # 512 latent + 64 RoPE
    dtypes=("bfloat16",),
    kv_cache_dtypes=("auto", "bfloat16"),  # the qv kernel takes no descales
    kernel_block_sizes=(MultipleOf(64),),
    is_mla=True,
    is_sparse=True,
    capability=CapabilityRange(majors=(10,)),  # FlashInferMLASparseTRTLLMBackend's
    pcp=True,
    dcp=True,  # FlashAttnMLASparseFA4Impl inherits FlashInferMLASparseImpl's
    combination=_fa4_combination,
    import_error=fa_utils_import_error,
    cudagraph_support="UNIFORM_BATCH",  # the trtllm-gen builder's
    kv_cache_shape=MLA_KV_CACHE_SHAPE,
)
