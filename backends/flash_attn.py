"""FLASH_ATTN (placeholder until the FlashAttention family lands)."""
from attn_select.backends.spec import BackendSpec
FLASH_ATTN = BackendSpec(name="FLASH_ATTN", vllm_class="vllm.v1.attention.backends.flash_attn.FlashAttentionBackend", family="flash_attn")
