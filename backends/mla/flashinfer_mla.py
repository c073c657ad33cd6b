"""FLASHINFER_MLA: FlashInfer's trtllm-gen MLA decode on the 10.x family.

Mirrors ``FlashInferMLABackend`` / ``FlashInferMLAMetadataBuilder`` /
``FlashInferMLAImpl`` (vllm/v1/attention/backends/mla/flashinfer_mla.py).
"""

from __future__ import annotations

from attn_select.backends.mla.common import (
    MLA_FP8_KV_CACHE_DTYPES,
    MLA_HEAD_SIZES,
    MLA_KV_CACHE_SHAPE,
    flashinfer_import_error,
)
from attn_select.backends.spec import BackendSpec, CapabilityRange, rule
from attn_select.selector.config import Query

# The kernel's supported qk_nope_head_dim values.
QK_NOPE_HEAD_DIMS = (64, 128, 192)
# vLLM reads the attribute with getattr(..., 1): a model without it fails.
_QK_NOPE_MISSING = 1


@rule("the model's qk_nope_head_dim is 64, 128 or 192")
def _combination(q: Query) -> str | None:
    # FlashInferMLABackend.supports_combination: only with a model config.
    if not q.ctx.has_model:
        return None
    nope = q.ctx.mla_qk_nope_head_dim
    if nope is None:
        nope = _QK_NOPE_MISSING
    if nope not in QK_NOPE_HEAD_DIMS:
        return (
            "FlashInfer MLA kernel requires qk_nope_head_dim "
            f"in [64, 128, 192], but got {nope}"
        )
    return None


FLASHINFER_MLA = BackendSpec(
    name="FLASHINFER_MLA",
    vllm_class="vllm.v1.attention.backends.mla.flashinfer_mla.FlashInferMLABackend",
    family="mla",
    summary="FlashInfer trtllm-gen MLA decode (Blackwell 10.x)",
    head_sizes=MLA_HEAD_SIZES,
    kv_cache_dtypes=MLA_FP8_KV_CACHE_DTYPES,
    kernel_block_sizes=(32, 64),
    is_mla=True,
    capability=CapabilityRange(majors=(10,)),
    non_causal=True,
    non_causal_dcp=True,  # builder: supports_non_causal_multi_token_dcp
    pcp=True,
    dcp=True,
    combination=_combination,
    import_error=flashinfer_import_error,
    cudagraph_support="ALWAYS",
    kv_cache_shape=MLA_KV_CACHE_SHAPE,
    # trtllm_batch_decode_with_kv_cache_mla (SM100); its comparison row on SM90 too
    run_adapter="attn_select.backends.run.flashinfer_mla:FlashInferMLAAdapter",
)
