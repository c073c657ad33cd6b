"""FLASHINFER (placeholder until the FlashInfer family lands)."""
from attn_select.backends.spec import BackendSpec
FLASHINFER = BackendSpec(name="FLASHINFER", vllm_class="vllm.v1.attention.backends.flashinfer.FlashInferBackend", family="flashinfer")
