"""TRITON_ATTN: vLLM's unified Triton paged-attention backend
(vllm/v1/attention/backends/triton_attn.py, ``TritonAttentionBackend``)."""

from __future__ import annotations

from attn_select.backends.spec import ALL_ATTN_TYPES, BackendSpec, MultipleOf, Rule
from attn_select.selector.config import Query


def _head_size_at_least_32(q: Query) -> bool:
    return q.cfg.head_size >= 32


def _block_size_multiple_of_16(q: Query) -> bool:
    # Overrides supports_block_size: a plain modulo test, no kernel-size list.
    return q.cfg.block_size is None or q.cfg.block_size % 16 == 0


TRITON_ATTN = BackendSpec(
    name="TRITON_ATTN",
    vllm_class="vllm.v1.attention.backends.triton_attn.TritonAttentionBackend",
    family="triton_attn",
    summary="vLLM's own Triton unified attention kernel (prefill, decode and mixed in one launch)",
    head_sizes=Rule("head_size >= 32", _head_size_at_least_32),
    dtypes=("float16", "bfloat16", "float32"),
    kv_cache_dtypes=(
        "auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2",
        "int4_per_token_head", "int8_per_token_head", "fp8_per_token_head",
    ),
    kernel_block_sizes=(MultipleOf(16),),
    block_size_rule=Rule("multiple of 16", _block_size_multiple_of_16),
    mm_prefix=True,
    sink=True,
    attn_types=ALL_ATTN_TYPES,
    sliding_window=True,
    rswa=True,
    non_causal=True,
    batch_invariance=True,
    alibi_sqrt=True,
    cudagraph_support="ALWAYS",
    kv_cache_shape="(num_blocks, num_kv_heads, block_size, head_size + head_size_v)",
    run_adapter="attn_select.backends.run.triton_attn:TritonAttnAdapter",
    run_stand_in="attn-select's own Triton paged kernel, not vLLM's unified_attention",
)
