"""FLASH_ATTN MLA prefill: vLLM's FlashAttention varlen (FA3 on Hopper, FA4
on Blackwell, FA2 elsewhere) over the up-projected K/V.

Mirrors ``FlashAttnPrefillBackend`` (vllm/v1/attention/backends/mla/prefill/flash_attn.py).
``is_flash_attn_varlen_func_available()`` is True on CUDA, so it is always
available; its module imports ``fa_utils`` (hence vllm_flash_attn). It
overrides ``supports_mla_dimensions`` with its own list instead of declaring
``supported_mla_dimensions``, so its dims reason lists nothing.
"""

from __future__ import annotations

from attn_select.backends.mla.prefill.spec import PrefillBackendSpec
from attn_select.selector.mla_prefill_config import MLADimensions

# DeepSeek R1 / V3 (and V3.2's dense prefill): 128 + 64, V 128.
R1 = MLADimensions(128, 64, 128)
# The 192 + 64 / V 256 layout that Blackwell's priority list special-cases.
QK192_V256 = MLADimensions(192, 64, 256)

FLASH_ATTN = PrefillBackendSpec(
    name="FLASH_ATTN",
    vllm_class="vllm.v1.attention.backends.mla.prefill.flash_attn.FlashAttnPrefillBackend",
    summary="FlashAttention varlen with a separate V head dim (vllm_flash_attn)",
    backend_name="FLASH_ATTN",
    mla_dimensions=(
        R1,
        QK192_V256,
        MLADimensions(64, 64, 128),
        # GLM5Next NoPE: qk 256 + 0, V 256, on the same kernels as 192/64/256.
        MLADimensions(256, 0, 256),
    ),
    lists_supported_dimensions=False,
    imports_flash_attn=True,
)
