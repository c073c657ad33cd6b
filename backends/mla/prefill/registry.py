"""MLA prefill backend names -> specs, in vLLM 0.33.0's ``MLAPrefillBackendEnum``
order (vllm/v1/attention/backends/mla/prefill/registry.py), every member:
an explicit ``attention_config.mla_prefill_backend`` may name any of them.

Declarations only (pure Python, no torch).
"""

from __future__ import annotations

from attn_select.backends.mla.prefill.aiter_flash_attn import ROCM_AITER_FA
from attn_select.backends.mla.prefill.cpu_sdpa import CPU
from attn_select.backends.mla.prefill.flash_attn import FLASH_ATTN
from attn_select.backends.mla.prefill.flashinfer import FLASHINFER
from attn_select.backends.mla.prefill.spec import PrefillBackendSpec
from attn_select.backends.mla.prefill.tokenspeed_mla import TOKENSPEED_MLA
from attn_select.backends.mla.prefill.trtllm_ragged import TRTLLM_RAGGED
from attn_select.backends.mla.prefill.zen_cpu_sdpa import ZEN_CPU
from attn_select.backends.registry import lookup
from attn_select.selector.errors import UserError

# The placeholder for a third-party backend: its value is None until
# register_mla_prefill_backend gives it a class, and attn-select registers none.
CUSTOM = PrefillBackendSpec(
    name="CUSTOM",
    vllm_class=None,
    summary="placeholder for a registered third-party backend (none registered)",
)

ENUM_ORDER: tuple[str, ...] = (
    "FLASH_ATTN",
    "FLASHINFER",
    "TRTLLM_RAGGED",
    "TOKENSPEED_MLA",
    "ROCM_AITER_FA",
    "CPU",
    "ZEN_CPU",
    "CUSTOM",
)

_ALL = (FLASH_ATTN, FLASHINFER, TRTLLM_RAGGED, TOKENSPEED_MLA, ROCM_AITER_FA, CPU, ZEN_CPU, CUSTOM)
PREFILL_BACKENDS: dict[str, PrefillBackendSpec] = {
    name: spec for name in ENUM_ORDER for spec in _ALL if spec.name == name
}
assert tuple(PREFILL_BACKENDS) == ENUM_ORDER, sorted(set(ENUM_ORDER) ^ set(PREFILL_BACKENDS))


class UnknownMLAPrefillBackend(UserError):
    """An unknown MLA prefill backend name; the message suggests the closest one."""


def get(name: str) -> PrefillBackendSpec:
    """The spec for ``name``. vLLM's field validator upper-cases the string
    and looks the member up, so any case works and "auto" is not a name."""
    return lookup(PREFILL_BACKENDS, name, ENUM_ORDER, "MLA prefill backend", UnknownMLAPrefillBackend)
