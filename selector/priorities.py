"""The only place that orders backends: vLLM 0.33.0's
``_get_backend_priorities`` (vllm/platforms/cuda.py), one branch per branch,
and the MLA prefill backends' order of ``Platform.get_mla_prefill_backend_cls``
(vllm/platforms/interface.py, which the CUDA platform does not override).

The list index is the priority (0 = most preferred). Capability and the
other inputs are explicit arguments; nothing is read from a platform.
"""

from __future__ import annotations

from functools import cache

from attn_select.selector.config import Capability, is_quantized_kv_cache
from attn_select.selector.mla_prefill_config import MLADimensions


@cache
def backend_priorities(
    use_mla: bool,
    cap: Capability,
    num_heads: int | None = None,
    kv_cache_dtype: str | None = None,
    use_non_causal: bool = False,
    head_size: int | None = None,
    use_mm_prefix: bool = False,
) -> tuple[str, ...]:
    if use_mla:
        return _mla_priorities(cap, num_heads, kv_cache_dtype, head_size)
    # SM100 family defaults to FlashInfer (TRTLLM causal kernels), but its
    # non-causal cutlass path (dflash attention) is known to have problems,
    # so non-causal on 10.x falls through to the FlashAttention-first list.
    if cap.major == 10 and not use_non_causal:
        return (
            # PrefixLM (mm_prefix) models: the Triton+FlashInfer composite first.
            *(("TRITON_FLASHINFER",) if use_mm_prefix else ()),
            "FLASHINFER",
            "FLASH_ATTN",
            "TRITON_ATTN",
            "FLEX_ATTENTION",
            "TURBOQUANT",
        )
    return (
        # Hopper PrefixLM: the Triton+FlashAttention composite first.
        *(("TRITON_FLASH_ATTN",) if cap.major == 9 and use_mm_prefix else ()),
        "FLASH_ATTN",
        "FLASHINFER",
        "TRITON_ATTN",
        "FLEX_ATTENTION",
        "TURBOQUANT",
    )


def _mla_priorities(
    cap: Capability,
    num_heads: int | None,
    kv_cache_dtype: str | None,
    head_size: int | None,
) -> tuple[str, ...]:
    if cap.major == 10:
        # Sparse MLA order on Blackwell: benchmarks in vllm-project/vllm#35807.
        if kv_cache_dtype is not None and is_quantized_kv_cache(kv_cache_dtype):
            # FlashInfer is preferred for an fp8 KV cache.
            sparse = ("FLASHINFER_MLA_SPARSE", "FLASHMLA_SPARSE")
        elif num_heads is not None and num_heads <= 16:
            # BF16 KV at low head counts: FA4 first, then FlashInfer
            # (FlashMLA pads heads, wasting work).
            sparse = ("FLASH_ATTN_MLA_SPARSE_FA4", "FLASHINFER_MLA_SPARSE", "FLASHMLA_SPARSE")
        else:
            sparse = ("FLASHMLA_SPARSE", "FLASHINFER_MLA_SPARSE")
        return (
            "FLASHINFER_MLA",
            # R1 dims + FP8 KV only (its supports_combination rejects the
            # rest); behind FLASHINFER_MLA: wins past bs~8, regresses at bs<=2.
            "TOKENSPEED_MLA",
            "CUTLASS_MLA",
            "FLASH_ATTN_MLA",
            "FLASHMLA",
            "TRITON_MLA",
            *sparse,
        )
    if cap.major == 12:
        return ("TRITON_MLA", "FLASHINFER_MLA_SPARSE_SM120")
    # Hopper and older: the SM90 FlashInfer sparse kernel goes first for
    # head_size 512 (its specialised shape) and last otherwise.
    sparse_tail = ["FLASH_ATTN_MLA_SPARSE", "FLASHMLA_SPARSE"]
    if head_size == 512:
        sparse_tail.insert(0, "FLASHINFER_MLA_SPARSE_SM90")
    else:
        sparse_tail.append("FLASHINFER_MLA_SPARSE_SM90")
    return ("FLASH_ATTN_MLA", "FLASHMLA", "FLASHINFER_MLA", "TRITON_MLA", *sparse_tail)


# The MLA dims for which Blackwell prefers TRT-LLM's ragged kernel over FlashAttention.
_TRTLLM_FIRST_DIMS = MLADimensions(192, 64, 256)


@cache
def mla_prefill_priorities(cap: Capability, mla_dimensions: MLADimensions) -> tuple[str, ...]:
    """MLA prefill backends in the order vLLM tries them (the first valid wins)."""
    if cap.major == 10:
        if mla_dimensions == _TRTLLM_FIRST_DIMS:
            return ("TRTLLM_RAGGED", "FLASH_ATTN", "FLASHINFER", "TOKENSPEED_MLA")
        return ("FLASH_ATTN", "TRTLLM_RAGGED", "FLASHINFER", "TOKENSPEED_MLA")
    # Hopper (SM90) and older, and 11.x / 12.x: FlashAttention alone.
    return ("FLASH_ATTN",)


def all_priority_names() -> tuple[str, ...]:
    """Every backend name any branch can return, in first-seen order."""
    seen: dict[str, None] = {}
    for major in (7, 8, 9, 10, 12):
        cap = Capability(major, 0)
        for mla in (False, True):
            for mm in (False, True):
                for nc in (False, True):
                    for heads in (None, 8, 128):
                        for kv in (None, "fp8"):
                            for hs in (None, 512):
                                for n in backend_priorities(mla, cap, heads, kv, nc, hs, mm):
                                    seen.setdefault(n, None)
    return tuple(seen)
