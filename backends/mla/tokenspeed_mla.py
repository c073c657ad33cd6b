"""TOKENSPEED_MLA: the TokenSpeed CuTe-DSL MLA decode kernel (10.x, FP8 KV).

Mirrors ``TokenspeedMLABackend`` / ``TokenspeedMLAMetadataBuilder`` /
``TokenspeedMLAImpl`` (vllm/v1/attention/backends/mla/tokenspeed_mla.py).
The ``tokenspeed_mla`` package is imported inside ``supports_combination``,
so its absence is a reason, not an import failure.
"""

from __future__ import annotations

from attn_select.backends.mla.common import MLA_HEAD_SIZES, MLA_KV_CACHE_SHAPE
from attn_select.backends.spec import BackendSpec, CapabilityRange, rule
from attn_select.selector.config import Query

NOT_INSTALLED = (
    "tokenspeed_mla package is not installed. "
    "Install it with: `uv pip install tokenspeed-mla`"
)
# The kernel is shape-specialised for DeepSeek R1: (qk_nope, qk_rope, v).
R1_DIMS = (128, 64, 128)
# vLLM reads each dim with getattr(..., 0).
_MISSING_DIM = 0


def _dim(value: int | None) -> int:
    return _MISSING_DIM if value is None else value


@rule("tokenspeed_mla imports; the model has DeepSeek R1 MLA dims (128, 64, 128)")
def _combination(q: Query) -> str | None:
    # TokenspeedMLABackend.supports_combination, check for check.
    if not q.kernels.tokenspeed_mla:
        return NOT_INSTALLED
    if not q.ctx.has_model:
        return None
    dims = (
        _dim(q.ctx.mla_qk_nope_head_dim),
        _dim(q.ctx.mla_qk_rope_head_dim),
        _dim(q.ctx.mla_v_head_dim),
    )
    if dims != R1_DIMS:
        return (
            "tokenspeed_mla requires DeepSeek R1 MLA dimensions "
            "(qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128), "
            f"got ({dims[0]}, {dims[1]}, {dims[2]})"
        )
    return None


TOKENSPEED_MLA = BackendSpec(
    name="TOKENSPEED_MLA",
    vllm_class="vllm.v1.attention.backends.mla.tokenspeed_mla.TokenspeedMLABackend",
    family="mla",
    summary="TokenSpeed CuTe-DSL MLA decode (Blackwell 10.x, FP8 KV cache only)",
    head_sizes=MLA_HEAD_SIZES,
    # FP8 only: the impl raises for an unquantized cache.
    kv_cache_dtypes=("fp8", "fp8_e4m3"),
    kernel_block_sizes=(32, 64),
    is_mla=True,
    capability=CapabilityRange(majors=(10,)),
    non_causal=True,
    non_causal_dcp=True,  # builder: supports_non_causal_multi_token_dcp
    pcp=True,
    dcp=True,
    combination=_combination,
    cudagraph_support="UNIFORM_BATCH",
    kv_cache_shape=MLA_KV_CACHE_SHAPE,
)
