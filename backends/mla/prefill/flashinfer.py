"""FLASHINFER MLA prefill: FlashInfer's ``BatchPrefillWithRaggedKVCacheWrapper``.

Mirrors ``FlashInferPrefillBackend`` (vllm/v1/attention/backends/mla/prefill/flashinfer.py):
the 10.x family, DeepSeek R1 dims, available when that wrapper imports from
the flashinfer package (no cubins needed to import it).
"""

from __future__ import annotations

from attn_select.backends.mla.prefill.flash_attn import R1
from attn_select.backends.mla.prefill.spec import PrefillBackendSpec
from attn_select.backends.spec import CapabilityRange

FLASHINFER = PrefillBackendSpec(
    name="FLASHINFER",
    vllm_class="vllm.v1.attention.backends.mla.prefill.flashinfer.FlashInferPrefillBackend",
    summary="FlashInfer ragged-KV prefill wrapper (Blackwell 10.x, R1 dims)",
    backend_name="FLASHINFER",
    capability=CapabilityRange(majors=(10,)),
    requires="flashinfer_python",
    mla_dimensions=(R1,),
)
