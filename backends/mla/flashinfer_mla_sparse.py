"""FLASHINFER_MLA_SPARSE (trtllm-gen, 10.x) and FLASHINFER_MLA_SPARSE_SM120.

Both classes live in vllm/v1/attention/backends/mla/flashinfer_mla_sparse.py:
``FlashInferMLASparseTRTLLMBackend`` and ``FlashInferMLASparseSM120Backend``
over ``_FlashInferMLASparseBackendBase`` (head sizes 512/576, MLA, sparse).
Impls: ``FlashInferMLASparseImpl`` (DCP) and, imported lazily,
``FlashInferMLASparseSM120Impl`` (flashinfer_mla_sparse_sm120.py, no DCP).

The module imports sparse_mla_attention.py, which imports fa_utils, so it
fails to import without any FlashAttention build.

Model dims are read as plain attributes of hf_text_config here (not
getattr with a default): a model whose config has no such attribute (a
non-MLA model given the backend explicitly) makes vLLM's selection raise
AttributeError, refused here as such. ``None`` dims are compared as Python
would compare them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attn_select.backends.mla.common import (
    DS_MLA_ROW_BYTES,
    MLA_KV_CACHE_SHAPE,
    fa_utils_import_error,
    has_flashinfer_sparse_mla_sm120,
)
from attn_select.backends.spec import BackendSpec, CapabilityRange, MultipleOf, rule
from attn_select.selector import reasons as R
from attn_select.selector.config import Query
from attn_select.selector.engines import VLLM_VERSION
from attn_select.selector.errors import UserError

# _FlashInferMLASparseBackendBase.get_supported_head_sizes: 576 = 512 NoPE +
# 64 RoPE, 512 = NoPE only (qk_rope_head_dim == 0).
SPARSE_HEAD_SIZES = (512, 576)
# The SM10 kernel's qk_nope_head_dim values for rope-carrying models.
SM10_QK_NOPE_HEAD_DIMS = (128, 192)
# The one no-rope shape FlashInfer ships: (qk_nope_head_dim, kv_lora_rank).
NOPE_SHAPE = (256, 512)
SM120_INDEX_TOPK = 2048


def index_topk_op(name: str, topk: object, op: Callable[[Any], Any], what: str) -> Any:
    """``op`` (the arithmetic a sparse backend's check does) on the model's
    index_topk as config.json gives it. A model without sparse layers keeps
    any value (vLLM builds it); where Python cannot do that arithmetic on it
    ([2048], "x"), vLLM's check raises, and so does this, as a user error."""
    raw = getattr(topk, "value", topk)  # a list or mapping arrives wrapped hashable
    try:
        return op(raw)
    except (TypeError, ValueError) as exc:
        raise UserError(f"vLLM {VLLM_VERSION}'s selection code raises for {name}: {type(exc).__name__}: {exc} "
                        f"(its check computes {what} on the config's index_topk, {raw!r}); write index_topk as an "
                        "integer, or choose another backend") from None


def trtllm_sparse_combination(q: Query, name: str) -> str | None:
    """``FlashInferMLASparseTRTLLMBackend.supports_combination``, whose
    messages carry ``cls.get_name()`` (the FA4 subclass reuses it)."""
    ctx = q.ctx
    if ctx.pcp_size > 1 and ctx.dcp_size > 1:
        return (
            f"{name} does not support combined PCP+DCP; "
            "use FLASHMLA_SPARSE, which gathers each DCP KV shard before "
            "running the rank-local PCP prefill queries"
        )
    if q.cfg.kv_cache_dtype == "fp8_ds_mla":
        return f"{name} SM10 does not support fp8_ds_mla kv-cache dtype"
    if not ctx.has_model:
        return None
    absent = next((a for a in ("qk_nope_head_dim", "qk_rope_head_dim", "kv_lora_rank") if a in ctx.mla_dims_absent),
                  None)
    # only for a config class modelled with its defaults: one read from
    # config.json alone may have the attribute from its own class
    if absent is not None and ctx.text_config_class not in ("", "PreTrainedConfig"):
        raise UserError(f"vLLM {VLLM_VERSION}'s selection code raises for {name}: AttributeError: "
                        f"'{ctx.text_config_class}' object has no attribute '{absent}' (its supports_combination "
                        "reads the model's MLA dims as plain attributes, which this config has none of); choose a "
                        "backend for the model's attention layers")
    nope = ctx.mla_qk_nope_head_dim
    rank = ctx.mla_kv_lora_rank
    if ctx.mla_qk_rope_head_dim == 0:
        if (nope, rank) != NOPE_SHAPE:
            return (
                "FlashInfer native no-rope MLA requires "
                "qk_nope_head_dim=256 and kv_lora_rank=512, but got "
                f"qk_nope_head_dim={nope}, "
                f"kv_lora_rank={rank}"
            )
    elif nope not in SM10_QK_NOPE_HEAD_DIMS:
        return (
            "FlashInfer MLA Sparse kernel requires qk_nope_head_dim "
            f"in [128, 192], but got {nope}"
        )
    if ctx.mla_index_topk is None:
        return "FlashInfer MLA Sparse requires model with index_topk config"
    return None


@rule("no PCP+DCP, no fp8_ds_mla; model: qk_nope 128/192 (or NoPE 256/512) and index_topk")
def _trtllm_combination(q: Query) -> str | None:
    return trtllm_sparse_combination(q, "FLASHINFER_MLA_SPARSE")


FLASHINFER_MLA_SPARSE = BackendSpec(
    name="FLASHINFER_MLA_SPARSE",
    vllm_class=(
        "vllm.v1.attention.backends.mla.flashinfer_mla_sparse."
        "FlashInferMLASparseTRTLLMBackend"
    ),
    family="mla",
    summary="FlashInfer trtllm-gen sparse MLA (Blackwell 10.x, DeepSeek-V3.2)",
    head_sizes=SPARSE_HEAD_SIZES,
    kv_cache_dtypes=("auto", "float16", "bfloat16", "fp8", "fp8_e4m3"),
    kernel_block_sizes=(MultipleOf(32),),
    is_mla=True,
    is_sparse=True,
    capability=CapabilityRange(majors=(10,)),
    pcp=True,
    dcp=True,
    combination=_trtllm_combination,
    import_error=fa_utils_import_error,
    cudagraph_support="UNIFORM_BATCH",
    kv_cache_shape=MLA_KV_CACHE_SHAPE,
)


SM120_KV_CACHE_DTYPES = ("auto", "fp8", "fp8_e4m3", "fp8_ds_mla")


@rule("FlashInfer sparse MLA decode API; bf16; auto/fp8/fp8_ds_mla KV; model index_topk == 2048")
def _sm120_combination(q: Query) -> str | None:
    # FlashInferMLASparseSM120Backend.supports_combination repeats the dtype
    # and KV-dtype checks, so those reasons can appear twice.
    if not has_flashinfer_sparse_mla_sm120(q.kernels):
        return (
            "FLASHINFER_MLA_SPARSE_SM120 requires FlashInfer's "
            "sparse MLA decode API"
        )
    if q.cfg.dtype != "bfloat16":
        return R.DTYPE
    kv = q.cfg.kv_cache_dtype
    if kv is not None and kv not in SM120_KV_CACHE_DTYPES:
        return R.KV_CACHE_DTYPE
    if not q.ctx.has_model:
        return None
    topk = q.ctx.mla_index_topk
    if topk is None:
        return (
            "FLASHINFER_MLA_SPARSE_SM120 requires a model with "
            "index_topk config"
        )
    if index_topk_op("FLASHINFER_MLA_SPARSE_SM120", topk, int, "int(index_topk)") != SM120_INDEX_TOPK:
        return (
            "FLASHINFER_MLA_SPARSE_SM120 requires index_topk=2048; "
            f"got {topk}"
        )
    return None


FLASHINFER_MLA_SPARSE_SM120 = BackendSpec(
    name="FLASHINFER_MLA_SPARSE_SM120",
    vllm_class=(
        "vllm.v1.attention.backends.mla.flashinfer_mla_sparse."
        "FlashInferMLASparseSM120Backend"
    ),
    family="mla",
    summary="FlashInfer sparse MLA decode for SM120 (fp8_ds_mla cache)",
    head_sizes=SPARSE_HEAD_SIZES,
    dtypes=("bfloat16",),
    kv_cache_dtypes=SM120_KV_CACHE_DTYPES,
    kernel_block_sizes=(MultipleOf(64),),
    is_mla=True,
    is_sparse=True,
    capability=CapabilityRange(majors=(12,)),
    pcp=True,
    dcp=False,  # FlashInferMLASparseSM120Impl keeps MLAAttentionImpl's False
    combination=_sm120_combination,
    import_error=fa_utils_import_error,
    # Inherits _FlashInferMLASparseBackendBase's FlashInferMLASparseMetadataBuilder.
    cudagraph_support="UNIFORM_BATCH",
    # auto/fp8/fp8_e4m3 are rewritten to fp8_ds_mla after selection.
    kv_cache_shape=(
        f"{MLA_KV_CACHE_SHAPE}; fp8_ds_mla rows of {DS_MLA_ROW_BYTES['fp8_ds_mla']} bytes"
    ),
    # FlashInferMLASparseSM120Impl: no dense-MHA prefill path, top-k MQA only.
    dense_mha_prefill=False,
)
