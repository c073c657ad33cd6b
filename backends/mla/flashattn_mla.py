"""FLASH_ATTN_MLA: FlashAttention 3's MLA path on Hopper.

Mirrors ``FlashAttnMLABackend`` / ``FlashAttnMLAMetadataBuilder`` /
``FlashAttnMLAImpl`` (vllm/v1/attention/backends/mla/flashattn_mla.py).
The module imports fa_utils, so it fails to import without any FA build.
"""

from __future__ import annotations

from attn_select.backends.mla.common import (
    MLA_HEAD_SIZES,
    MLA_KV_CACHE_SHAPE,
    fa_utils_import_error,
)
from attn_select.backends.spec import BackendSpec, CapabilityRange, MultipleOf, rule
from attn_select.selector.config import Query
from attn_select.selector.fa_version import fa_supports_mla

FA_MLA_UNSUPPORTED = "FlashAttention MLA not supported on this device"


@rule("FA3 is installed and the GPU is 9.x (flash_attn_supports_mla)")
def _combination(q: Query) -> str | None:
    if not fa_supports_mla(q.cap, q.kernels):
        return FA_MLA_UNSUPPORTED
    return None


FLASH_ATTN_MLA = BackendSpec(
    name="FLASH_ATTN_MLA",
    vllm_class="vllm.v1.attention.backends.mla.flashattn_mla.FlashAttnMLABackend",
    family="mla",
    summary="FlashAttention 3 MLA (Hopper 9.x; bf16/fp16 KV only)",
    head_sizes=MLA_HEAD_SIZES,
    kv_cache_dtypes=("auto", "float16", "bfloat16"),
    kernel_block_sizes=(MultipleOf(16),),
    is_mla=True,
    capability=CapabilityRange(majors=(9,)),
    batch_invariance=True,
    pcp=True,
    dcp=True,
    combination=_combination,
    import_error=fa_utils_import_error,
    cudagraph_support="UNIFORM_BATCH",
    kv_cache_shape=MLA_KV_CACHE_SHAPE,
    # vLLM's FA3 with its separate value input (q_v)
    run_adapter="attn_select.backends.run.flashattn_mla:FlashAttnMLAAdapter",
)
