"""TRITON_FLASH_ATTN (placeholder until the FlashAttention family lands)."""
from attn_select.backends.spec import BackendSpec
TRITON_FLASH_ATTN = BackendSpec(name="TRITON_FLASH_ATTN", vllm_class="vllm.v1.attention.backends.triton_flash_attn.TritonFlashAttentionBackend", family="composite")
