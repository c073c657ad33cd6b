"""ROCM_AITER_FA MLA prefill: AITER's FlashAttention varlen (ROCm MI300-series).

Mirrors ``AiterFlashAttnPrefillBackend`` (vllm/v1/attention/backends/mla/prefill/aiter_flash_attn.py).
On CUDA every check that matters fails: ``supports_compute_capability`` asks
``current_platform.is_rocm()`` first, and ``rocm_aiter_ops.is_enabled()`` is
not true off ROCm. It alone also rejects VLLM_BATCH_INVARIANT.
"""

from __future__ import annotations

from attn_select.backends.mla.prefill.spec import PrefillBackendSpec

ROCM_AITER_FA = PrefillBackendSpec(
    name="ROCM_AITER_FA",
    vllm_class="vllm.v1.attention.backends.mla.prefill.aiter_flash_attn.AiterFlashAttnPrefillBackend",
    summary="AITER FlashAttention varlen (ROCm only)",
    backend_name="ROCM_AITER_FA",
    rocm_only=True,
    available_on_cuda=False,
    batch_invariance=False,
)
