"""TRITON_MLA: vLLM's Triton MLA decode kernel, the capability-agnostic
fallback.

Mirrors ``TritonMLABackend`` / ``TritonMLAMetadataBuilder`` /
``TritonMLAImpl`` (vllm/v1/attention/backends/mla/triton_mla.py).
"""

from __future__ import annotations

from attn_select.backends.mla.common import MLA_FP8_KV_CACHE_DTYPES, MLA_KV_CACHE_SHAPE
from attn_select.backends.spec import ANY_CAPABILITY, BackendSpec, MultipleOf

TRITON_MLA = BackendSpec(
    name="TRITON_MLA",
    vllm_class="vllm.v1.attention.backends.mla.triton_mla.TritonMLABackend",
    family="mla",
    summary="Triton MLA decode (any GPU; batch invariant)",
    head_sizes=(),  # overrides MLACommonBackend's list with "any"
    kv_cache_dtypes=MLA_FP8_KV_CACHE_DTYPES,
    # Its supports_block_size override (block_size % 16 == 0, None allowed)
    # decides exactly what the base divisibility rule decides for this list.
    kernel_block_sizes=(MultipleOf(16),),
    is_mla=True,
    capability=ANY_CAPABILITY,
    non_causal=True,  # non-causal blocks are flattened to single-token rows
    batch_invariance=True,
    pcp=True,
    dcp=True,
    # The builder sets no supports_non_causal_multi_token_dcp.
    non_causal_dcp=False,
    cudagraph_support="UNIFORM_BATCH",
    kv_cache_shape=MLA_KV_CACHE_SHAPE,
    # our own Triton MLA decode kernel (backends/run/mla_kernel.py), the peer of vLLM's decode_attention_fwd
    run_adapter="attn_select.backends.run.triton_mla:TritonMLAAdapter",
    run_stand_in="attn-select's own Triton MLA decode kernel, not vLLM's decode_attention_fwd",
)
