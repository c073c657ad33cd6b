"""Composite backends (placeholder)."""
from attn_select.backends.spec import BackendSpec
TRITON_FLASH_ATTN = BackendSpec(name="TRITON_FLASH_ATTN", vllm_class="vllm.v1.attention.backends.triton_flash_attn.TritonFlashAttentionBackend", family="composite")
TRITON_FLASHINFER = BackendSpec(name="TRITON_FLASHINFER", vllm_class="vllm.v1.attention.backends.triton_flashinfer.TritonFlashInferBackend", family="composite")
