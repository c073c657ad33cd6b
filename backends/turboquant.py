"""TURBOQUANT: TurboQuant KV-cache compression
(vllm/v1/attention/backends/turboquant_attn.py, ``TurboQuantAttentionBackend``).

It is last in every MHA priority list and only accepts its own
``turboquant_*`` cache dtypes, so it wins only when the user asks for one.
"""

from __future__ import annotations

from attn_select.backends.flash_attn import import_error as fa_package_import_error
from attn_select.backends.spec import BackendSpec, Rule
from attn_select.selector.config import Query


def _turboquant_cache_dtype(q: Query) -> bool:
    # Unlike the base class, None (no dtype given) is *not* supported.
    kv = q.cfg.kv_cache_dtype
    return kv is not None and kv.startswith("turboquant_")


def _positive_head_size(q: Query) -> bool:
    # The spec's head_size is the packed slot's effective size, so any
    # positive value is accepted.
    return q.cfg.head_size > 0


TURBOQUANT = BackendSpec(
    name="TURBOQUANT",
    vllm_class="vllm.v1.attention.backends.turboquant_attn.TurboQuantAttentionBackend",
    family="turboquant",
    summary="TurboQuant: Hadamard-rotated Lloyd-Max KV compression, K and V packed per slot",
    head_sizes=Rule("head_size > 0", _positive_head_size),
    kv_cache_dtypes=("turboquant_k8v4", "turboquant_4bit_nc", "turboquant_k3v4_nc", "turboquant_3bit_nc"),
    kv_cache_dtype_rule=Rule("turboquant_* only", _turboquant_cache_dtype),
    kernel_block_sizes=(16, 32, 64, 128),
    cudagraph_support="UNIFORM_BATCH",
    kv_cache_layouts=("LBNHC",),
    kv_cache_shape="(num_blocks, num_kv_heads, block_size, packed K+V slot bytes)",
    # turboquant_attn.py imports fa_utils, which imports vllm.vllm_flash_attn:
    # without the FA2/FA3 extensions the module fails to import.
    import_error=fa_package_import_error,
)
