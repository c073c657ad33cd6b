"""attn-select run: real paged-KV attention steps through each backend.

Nothing here imports torch at package import; the adapters do, and they are
loaded only when ``attn-select run`` executes.

``ADAPTERS`` maps a backend name (vLLM's enum spelling) to the adapter class
that runs it, as "module:Class" (the registry's ``run_adapter`` would point
at the same modules).
"""

ADAPTERS: dict[str, str] = {
    "FLASH_ATTN": "attn_select.backends.run.flash_attn:FlashAttnAdapter",
    "FLASHINFER": "attn_select.backends.run.flashinfer:FlashInferAdapter",
    "TRITON_ATTN": "attn_select.backends.run.triton_attn:TritonAttnAdapter",
    "FLEX_ATTENTION": "attn_select.backends.run.flex_attention:FlexAttentionAdapter",
}
