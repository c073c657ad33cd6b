"""FLEX_ATTENTION: torch ``flex_attention`` over the paged cache
(vllm/v1/attention/backends/flex_attention.py, ``FlexAttentionBackend``)."""

from __future__ import annotations

from attn_select.backends.flash_attn import import_error as fa_package_import_error
from attn_select.backends.spec import BackendSpec, MultipleOf

FLEX_ATTENTION = BackendSpec(
    name="FLEX_ATTENTION",
    vllm_class="vllm.v1.attention.backends.flex_attention.FlexAttentionBackend",
    family="flex_attention",
    summary="torch.nn.attention.flex_attention with a block mask over the page table",
    dtypes=("float16", "bfloat16", "float32"),
    kernel_block_sizes=(MultipleOf(16),),
    mm_prefix=True,
    attn_types=("decoder", "encoder_only"),
    sliding_window=True,
    rswa=True,
    non_causal=True,
    batch_invariance=True,
    cudagraph_support="ALWAYS",
    # Flex flattens the (block, token) axes into one token axis, which only
    # the LBNHC layout's strides allow as a zero-copy view.
    kv_cache_layouts=("LBNHC",),
    kv_cache_shape="(num_blocks, num_kv_heads, block_size, head_size + head_size_v)",
    run_adapter="attn_select.backends.run.flex_attention:FlexAttentionAdapter",
    run_stand_in="torch's flex_attention under attn-select's block mask and tiles, not vLLM's",
    # flex_attention.py imports vllm.model_executor.layers.attention, whose
    # mm_encoder_attention imports fa_utils -> vllm.vllm_flash_attn: without
    # the FA2/FA3 extensions the module fails to import.
    import_error=fa_package_import_error,
)
