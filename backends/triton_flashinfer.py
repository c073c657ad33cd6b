"""TRITON_FLASHINFER (placeholder until the FlashInfer family lands)."""
from attn_select.backends.spec import BackendSpec
TRITON_FLASHINFER = BackendSpec(name="TRITON_FLASHINFER", vllm_class="vllm.v1.attention.backends.triton_flashinfer.TritonFlashInferBackend", family="composite")
