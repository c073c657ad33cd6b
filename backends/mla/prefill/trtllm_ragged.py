"""TRTLLM_RAGGED MLA prefill: FlashInfer's ``trtllm_ragged_attention_deepseek``.

Mirrors ``TrtllmRaggedPrefillBackend`` (vllm/v1/attention/backends/mla/prefill/trtllm_ragged.py):
the 10.x family, R1 dims or the 192/64/256 layout, available when
``flashinfer.prefill`` exports that function.
"""

from __future__ import annotations

from attn_select.backends.mla.prefill.flash_attn import QK192_V256, R1
from attn_select.backends.mla.prefill.spec import PrefillBackendSpec
from attn_select.backends.spec import CapabilityRange

TRTLLM_RAGGED = PrefillBackendSpec(
    name="TRTLLM_RAGGED",
    vllm_class="vllm.v1.attention.backends.mla.prefill.trtllm_ragged.TrtllmRaggedPrefillBackend",
    summary="TRT-LLM ragged DeepSeek prefill through FlashInfer (Blackwell 10.x)",
    backend_name="TRTLLM_RAGGED",
    capability=CapabilityRange(majors=(10,)),
    requires="flashinfer_python",
    mla_dimensions=(R1, QK192_V256),
)
