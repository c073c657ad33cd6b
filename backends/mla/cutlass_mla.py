"""CUTLASS_MLA: vLLM's SM100 CUTLASS MLA decode kernel.

Mirrors ``CutlassMLABackend`` / ``CutlassMLAMetadataBuilder`` /
``CutlassMLAImpl`` (vllm/v1/attention/backends/mla/cutlass_mla.py). The
kernel is in vllm._C, always present; importing the module allocates a
128 MiB CUDA workspace, which does not affect the declarations.
"""

from __future__ import annotations

from attn_select.backends.mla.common import (
    MLA_FP8_KV_CACHE_DTYPES,
    MLA_HEAD_SIZES,
    MLA_KV_CACHE_SHAPE,
)
from attn_select.backends.spec import BackendSpec, CapabilityRange

CUTLASS_MLA = BackendSpec(
    name="CUTLASS_MLA",
    vllm_class="vllm.v1.attention.backends.mla.cutlass_mla.CutlassMLABackend",
    family="mla",
    summary="CUTLASS SM100 MLA decode (Blackwell 10.x, 128-token pages)",
    head_sizes=MLA_HEAD_SIZES,
    kv_cache_dtypes=MLA_FP8_KV_CACHE_DTYPES,
    kernel_block_sizes=(128,),
    is_mla=True,
    capability=CapabilityRange(majors=(10,)),
    pcp=True,
    dcp=True,
    cudagraph_support="UNIFORM_SINGLE_TOKEN_DECODE",
    kv_cache_shape=MLA_KV_CACHE_SHAPE,
    # vllm._custom_ops.sm100_cutlass_mla_decode (SM100)
    run_adapter="attn_select.backends.run.cutlass_mla:CutlassMLAAdapter",
)
