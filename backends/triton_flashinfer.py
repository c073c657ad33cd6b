"""TRITON_FLASHINFER: vLLM 0.33.0's ``TritonFlashInferBackend``
(vllm/v1/attention/backends/triton_flashinfer.py), built by
``create_composite_attention_backend`` (here ``backends/composite.py``) with
``MMPrefixAttentionRouting``: TRITON_ATTN (variant 0) serves the batches with
image-mask prefixes, FLASHINFER (variant 1) the causal ones, on one shared
cache. Unlike TRITON_FLASH_ATTN it gives an explicit kernel block size (64)
and a device major (10, Blackwell).
"""

from __future__ import annotations

from attn_select.backends.composite import MM_PREFIX_ROUTING, CompositeDocs, composite_spec
from attn_select.backends.flashinfer import FLASHINFER
from attn_select.backends.triton_attn import TRITON_ATTN

TRITON_FLASHINFER = composite_spec(
    TRITON_ATTN,
    FLASHINFER,
    name="TRITON_FLASHINFER",
    vllm_class="vllm.v1.attention.backends.triton_flashinfer.TritonFlashInferBackend",
    summary=(
        "TRITON_ATTN for batches with image-mask prefixes, FLASHINFER for causal "
        "ones; Blackwell (10.x), head size 256/512"
    ),
    docs=CompositeDocs(
        head_sizes="256 or 512, and both children's head sizes",
        kv_cache_dtypes="both children's KV-cache dtypes",
        kernel_block_sizes="64 where both children accept it",
        capability="10.x, and both children's capability checks",
        mm_prefix="the image-mask child (TRITON_ATTN) supports mm-prefix",
        cudagraph_support=(
            "min(children, routing): NEVER with an unclamped sliding window, "
            "else UNIFORM_SINGLE_TOKEN_DECODE"
        ),
    ),
    routing=MM_PREFIX_ROUTING,
    head_sizes=(256, 512),
    kernel_block_sizes=(64,),
    device_major=10,
)
