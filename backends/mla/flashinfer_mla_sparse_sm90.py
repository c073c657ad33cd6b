"""FLASHINFER_MLA_SPARSE_SM90: FlashInfer's BatchMLAPagedAttentionWrapper
(FA2/FA3 paths) as a sparse MLA backend on Hopper.

Mirrors ``FlashInferMLASparseSM90Backend`` / ``FlashInferMLASparseSM90Builder``
/ ``FlashInferMLASparseSM90Impl``
(vllm/v1/attention/backends/mla/flashinfer_mla_sparse_sm90.py). Its module
imports sparse_mla_attention.py, hence fa_utils.

kv_lora_rank and qk_rope_head_dim are read as plain attributes of
hf_text_config (no default); ``None`` compares as Python would.
"""

from __future__ import annotations

from attn_select.backends.mla.common import (
    MLA_KV_CACHE_SHAPE,
    fa_utils_import_error,
    has_flashinfer_sm90_nope_mla,
)
from attn_select.backends.spec import BackendSpec, CapabilityRange, MultipleOf, rule
from attn_select.selector.config import Query

SM90_KV_LORA_RANK = 512
SM90_QK_ROPE_HEAD_DIMS = (0, 64)  # NoPE models and DeepSeek-style rope MLA


@rule("FlashInfer SM90 MLA API; sparse; model kv_lora_rank 512 and qk_rope_head_dim 0 or 64")
def _combination(q: Query) -> str | None:
    # FlashInferMLASparseSM90Backend.supports_combination, check for check.
    if not has_flashinfer_sm90_nope_mla(q.kernels):
        return (
            "FLASHINFER_MLA_SPARSE_SM90 requires FlashInfer with SM90 "
            "MLA support (ckv_scale_arr in "
            "BatchMLAPagedAttentionWrapper.run, FlashInfer >= 0.6.18)"
        )
    if not q.cfg.use_sparse:
        return "FLASHINFER_MLA_SPARSE_SM90 requires sparse MLA"
    if not q.ctx.has_model:
        return None
    if q.ctx.mla_kv_lora_rank != SM90_KV_LORA_RANK:
        return "FLASHINFER_MLA_SPARSE_SM90 requires kv_lora_rank=512"
    if q.ctx.mla_qk_rope_head_dim not in SM90_QK_ROPE_HEAD_DIMS:
        return "FLASHINFER_MLA_SPARSE_SM90 requires qk_rope_head_dim in (0, 64)"
    return None


FLASHINFER_MLA_SPARSE_SM90 = BackendSpec(
    name="FLASHINFER_MLA_SPARSE_SM90",
    vllm_class=(
        "vllm.v1.attention.backends.mla.flashinfer_mla_sparse_sm90."
        "FlashInferMLASparseSM90Backend"
    ),
    family="mla",
    summary="FlashInfer paged MLA wrapper as sparse MLA on Hopper (NoPE and rope 64)",
    head_sizes=(512, 576),  # ckv 512 + kpe 0 or 64
    dtypes=("bfloat16",),
    kv_cache_dtypes=("auto", "bfloat16", "fp8", "fp8_e4m3"),
    kernel_block_sizes=(MultipleOf(64),),
    is_mla=True,
    is_sparse=True,
    capability=CapabilityRange(majors=(9,)),
    pcp=True,
    dcp=False,  # FlashInferMLASparseSM90Impl keeps MLAAttentionImpl's False
    combination=_combination,
    import_error=fa_utils_import_error,
    # The builder inherits FlashInferMLASparseMetadataBuilder's level.
    cudagraph_support="UNIFORM_BATCH",
    # Also its (unused) get_kv_cache_shape: (num_blocks, block_size, head_size).
    kv_cache_shape=MLA_KV_CACHE_SHAPE,
)
