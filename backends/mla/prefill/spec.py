"""``PrefillBackendSpec``: every fact one MLA prefill backend declares, as data.

Field defaults are vLLM 0.33.0's ``MLAPrefillBackend`` base-class defaults
(vllm/v1/attention/backends/mla/prefill/base.py): any capability, fp16 and
bf16, always available, any MLA dims. Fields are listed in the order
``validate_configuration`` checks them.

These are not ``BackendSpec``s: the prefill backends are a registry of their
own (``MLAPrefillBackendEnum``) with their own, much shorter, check.
"""

from __future__ import annotations

from typing import NamedTuple

from attn_select.backends.spec import ANY_CAPABILITY, HALF_DTYPES, CapabilityRange
from attn_select.selector import reasons as R
from attn_select.selector.mla_prefill_config import MLADimensions


class PrefillBackendSpec(NamedTuple):
    """One member of vLLM's ``MLAPrefillBackendEnum``."""

    name: str  # the enum member: what attention_config.mla_prefill_backend names
    vllm_class: str | None  # the member's dotted class path; None = CUSTOM (nothing registered)
    summary: str = ""
    # get_name(): differs from the member's name for CPU / ZEN_CPU
    backend_name: str = ""

    # 1. supports_compute_capability. rocm_only: the backend asks
    #    current_platform.is_rocm() first, so it never supports a CUDA GPU.
    capability: CapabilityRange = ANY_CAPABILITY
    rocm_only: bool = False
    # 2. supports_dtype (supported_dtypes)
    dtypes: tuple[str, ...] = HALF_DTYPES
    # 3. is_available: the Kernels field whose package the check imports
    #    (None = nothing to import); available_on_cuda False = its check is
    #    False on the CUDA platform whatever is installed (ROCm AITER, zentorch).
    requires: str | None = None
    available_on_cuda: bool = True
    # The reason for 3. (TokenSpeed swaps in its install hint).
    unavailable_reason: str = R.PREFILL_DEPENDENCIES
    # 4. supports_mla_dimensions: empty = any. lists_supported_dimensions
    #    False = the backend overrides the predicate rather than declaring
    #    supported_mla_dimensions, so the reason names no list.
    mla_dimensions: tuple[MLADimensions, ...] = ()
    lists_supported_dimensions: bool = True
    # 5. an extra check of the subclass: rejects VLLM_BATCH_INVARIANT
    batch_invariance: bool = True

    # The backend's module imports vllm.v1.attention.backends.fa_utils, which
    # on CUDA imports vllm.vllm_flash_attn: without FA2 and FA3 the import
    # fails and vLLM records the reason "ImportError".
    imports_flash_attn: bool = False
