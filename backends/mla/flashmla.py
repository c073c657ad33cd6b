"""FLASHMLA: DeepSeek's FlashMLA dense decode kernel.

Mirrors ``FlashMLABackend`` / ``FlashMLAMetadataBuilder`` / ``FlashMLAImpl``
(vllm/v1/attention/backends/mla/flashmla.py) and the availability probes of
vllm/v1/attention/ops/flashmla.py. That ops module never fails to import: a
missing ``vllm._flashmla_C`` only turns its probes False, so the backend
reports it through ``supports_combination``.
"""

from __future__ import annotations

from attn_select.backends.mla.common import (
    MLA_FP8_KV_CACHE_DTYPES,
    MLA_HEAD_SIZES,
    MLA_KV_CACHE_SHAPE,
)
from attn_select.backends.spec import BackendSpec, CapabilityRange, rule
from attn_select.selector.config import Capability, Kernels, Query

FLASHMLA_C_MISSING = (
    "vllm._flashmla_C is not available, likely was not "
    "compiled due to insufficient nvcc version or a supported arch "
    "was not in the list of target arches to compile for."
)
# vllm._flashmla_extension_C ships in the same wheel as _flashmla_C; its own
# reason ("... not available, likely was not compiled due to a build
# error.") is not modelled separately.


def flashmla_dense_unsupported(cap: Capability, kernels: Kernels) -> str | None:
    """``is_flashmla_dense_supported()[1]``: the kernel and the 9.x family."""
    if not kernels.flashmla:
        return FLASHMLA_C_MISSING
    if not cap.is_family(90):
        return "FlashMLA Dense is only supported on Hopper devices."
    return None


def flashmla_sparse_unsupported(cap: Capability, kernels: Kernels) -> str | None:
    """``is_flashmla_sparse_supported()[1]``: the kernel and 9.x or 10.x."""
    if not kernels.flashmla:
        return FLASHMLA_C_MISSING
    if not (cap.is_family(90) or cap.is_family(100)):
        return "FlashMLA Sparse is only supported on Hopper and Blackwell DC devices."
    return None


@rule("vllm._flashmla_C imports and the GPU is 9.x (sparse: 9.x or 10.x)")
def _combination(q: Query) -> str | None:
    # FlashMLABackend.supports_combination asks the sparse probe when the
    # query is sparse (the backend itself is dense, so that also fails).
    if q.cfg.use_sparse:
        return flashmla_sparse_unsupported(q.cap, q.kernels)
    return flashmla_dense_unsupported(q.cap, q.kernels)


FLASHMLA = BackendSpec(
    name="FLASHMLA",
    vllm_class="vllm.v1.attention.backends.mla.flashmla.FlashMLABackend",
    family="mla",
    summary="FlashMLA dense decode (Hopper; 64-token pages)",
    head_sizes=MLA_HEAD_SIZES,
    kv_cache_dtypes=MLA_FP8_KV_CACHE_DTYPES,
    kernel_block_sizes=(64,),
    is_mla=True,
    # The class admits 9.x and 10.x; the kernel probe then rejects 10.x.
    capability=CapabilityRange(majors=(9, 10)),
    pcp=True,
    dcp=True,
    combination=_combination,
    cudagraph_support="UNIFORM_BATCH",
    kv_cache_shape=MLA_KV_CACHE_SHAPE,
    # vLLM's FlashMLA (flash_mla_with_kvcache; the fp8 extension with an fp8 cache)
    run_adapter="attn_select.backends.run.flashmla:FlashMLAAdapter",
)
