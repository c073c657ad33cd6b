"""TRITON_FLASH_ATTN: vLLM 0.33.0's ``TritonFlashAttentionBackend``
(vllm/v1/attention/backends/triton_flash_attn.py), built by
``create_composite_attention_backend`` (here ``backends/composite.py``) from
two children with ``MMPrefixAttentionRouting``:

* general child (variant 0): ``TritonAttentionBackend``, which serves the
  batches whose image tokens need bidirectional (mm_prefix) attention;
* causal child (variant 1): ``_FABackend``, a FlashAttentionBackend subclass
  limited to Hopper that also needs FA3 or FA4 to resolve.
"""

from __future__ import annotations

from attn_select.backends.composite import MM_PREFIX_ROUTING, CompositeDocs, composite_spec
from attn_select.backends.flash_attn import FLASH_ATTN, combination_reason as fa_combination
from attn_select.backends.spec import Rule, rule
from attn_select.backends.triton_attn import TRITON_ATTN
from attn_select.selector import fa_version as fa
from attn_select.selector.config import Capability, Query

CAUSAL_ROUTE_NEEDS_FA3_OR_FA4 = "causal route requires FlashAttention v3 or v4"


# --- the causal child: _FABackend (a true FlashAttentionBackend subclass) -------


@rule("major 9 and >= 8.0 (Hopper only; Blackwell uses TRITON_FLASHINFER)")
def _fa_child_capability(q: Query) -> bool:
    return q.cap.major == 9 and q.cap >= Capability(8, 0)


def _fa_child_combination(q: Query) -> str | None:
    # FlashAttention's own reasons first, then the causal route's FA3/FA4 need.
    reason = fa_combination(q)
    if reason is not None:
        return reason
    version = fa.resolve_fa_version(
        q.cap, q.kernels, q.ctx,
        head_size=q.cfg.head_size,
        has_sinks=q.cfg.has_sink,
        kv_cache_block_size=q.cfg.block_size,
        supports_fa4_hd256=True,
    ).version
    if version not in (3, 4):
        return CAUSAL_ROUTE_NEEDS_FA3_OR_FA4
    return None


# get_name() is inherited, so reasons from this child read "FLASH_ATTN: ...".
FA_CAUSAL_CHILD = FLASH_ATTN._replace(
    vllm_class="vllm.v1.attention.backends.triton_flash_attn._FABackend",
    summary="FlashAttention restricted to Hopper, needing FA3/FA4 (TRITON_FLASH_ATTN's causal route)",
    capability=_fa_child_capability,
    combination=Rule(
        "FLASH_ATTN's reasons, then FA3/FA4 must resolve for head_size, sinks, block size",
        _fa_child_combination,
    ),
)


TRITON_FLASH_ATTN = composite_spec(
    TRITON_ATTN,
    FA_CAUSAL_CHILD,
    name="TRITON_FLASH_ATTN",
    vllm_class="vllm.v1.attention.backends.triton_flash_attn.TritonFlashAttentionBackend",
    summary=(
        "Hopper composite for PrefixLM models: Triton for batches with image "
        "(mm_prefix) spans, FlashAttention 3/4 for causal batches"
    ),
    docs=CompositeDocs(
        head_sizes="256 or 512, and both TRITON_ATTN and FLASH_ATTN accept it (512 needs FA4 supported)",
        kv_cache_dtypes="both TRITON_ATTN and FLASH_ATTN accept it (fp8 only where FLASH_ATTN allows)",
        kernel_block_sizes=(
            "TRITON_ATTN's sizes intersected with FLASH_ATTN's (multiple of 16, or [64]/[128] as FLASH_ATTN)"
        ),
        capability="both children: TRITON_ATTN any, FLASH_ATTN route major 9 and >= 8.0",
        mm_prefix="the mm_prefix route (TRITON_ATTN) supports mm_prefix",
        cudagraph_support=(
            "UNIFORM_SINGLE_TOKEN_DECODE (the routing's cap); NEVER with an unclamped sliding-window layer"
        ),
    ),
    routing=MM_PREFIX_ROUTING,
    # No kernel_block_sizes and no device_major: the children's sizes
    # intersected, and whatever capability both children take.
    head_sizes=(256, 512),
)
