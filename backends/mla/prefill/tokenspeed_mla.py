"""TOKENSPEED_MLA MLA prefill: the TokenSpeed CuTe-DSL prefill kernel.

Mirrors ``TokenspeedMLAPrefillBackend`` (vllm/v1/attention/backends/mla/prefill/tokenspeed_mla.py):
the 10.x family, R1 dims, the ``tokenspeed_mla`` package. Its
``validate_configuration`` replaces the base class's "required dependencies
not available" with an install hint.
"""

from __future__ import annotations

from attn_select.backends.mla.prefill.flash_attn import R1
from attn_select.backends.mla.prefill.spec import PrefillBackendSpec
from attn_select.backends.mla.tokenspeed_mla import NOT_INSTALLED
from attn_select.backends.spec import CapabilityRange

TOKENSPEED_MLA = PrefillBackendSpec(
    name="TOKENSPEED_MLA",
    vllm_class="vllm.v1.attention.backends.mla.prefill.tokenspeed_mla.TokenspeedMLAPrefillBackend",
    summary="TokenSpeed CuTe-DSL MLA prefill (Blackwell 10.x, R1 dims)",
    backend_name="TOKENSPEED_MLA",
    capability=CapabilityRange(majors=(10,)),
    requires="tokenspeed_mla",
    # The same text as the decode backend's supports_combination hint.
    unavailable_reason=NOT_INSTALLED,
    mla_dimensions=(R1,),
)
