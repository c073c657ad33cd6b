"""TRITON_FLASHINFER: vLLM's composite of TRITON_ATTN (image-mask prefixes)
and FLASHINFER (causal queries) on one shared cache
(vllm/v1/attention/backends/triton_flashinfer.py, built by
``create_composite_attention_backend`` in composite.py with
``MMPrefixAttentionRouting``, head sizes (256, 512), kernel block size 64,
device major 10).

The composite class derives from ``AttentionBackend``, not from either
child, so a predicate it does not override takes the base default (no
sinks, no non-causal, decoder only, no batch invariance). The predicates
it does override combine the children, and those are computed here from the
TRITON_ATTN and FLASHINFER specs themselves.
"""

from __future__ import annotations

from collections import Counter

from attn_select.backends.flashinfer import FLASHINFER
from attn_select.backends.spec import BackendSpec, BlockSize, Rule, resolve
from attn_select.backends.triton_attn import TRITON_ATTN
from attn_select.selector.config import Query

# create_composite_attention_backend(general, causal, ...): variant 0 serves
# image-mask (mm-prefix) batches, variant 1 the causal ones.
GENERAL, CAUSAL = TRITON_ATTN, FLASHINFER
CHILDREN = (GENERAL, CAUSAL)
HEAD_SIZES = (256, 512)
KERNEL_BLOCK_SIZES = (64,)
DEVICE_MAJOR = 10

# AttentionCGSupport values, for the composite builder's min().
CG_LEVEL = {"NEVER": 0, "UNIFORM_SINGLE_TOKEN_DECODE": 1, "UNIFORM_BATCH": 2, "ALWAYS": 3}

# vllm/v1/attention/backends/utils.py _DEFAULT_LAYOUT_PREFERENCE, and the
# KVCacheLayout enum order used to break priority ties.
DEFAULT_LAYOUT_PREFERENCE = ("LBNHC", "LBHNC", "BLNHC", "BLHNC", "BHLNC", "LHBNC")
LAYOUT_ENUM_ORDER = ("LBHNC", "LBNHC", "LHBNC", "BLHNC", "BLNHC", "BHLNC")


def _with_block_size(q: Query, block_size: int | None) -> Query:
    return Query(q.cfg._replace(block_size=block_size), q.cap, q.kernels, q.ctx)


def _kernel_block_sizes(q: Query) -> tuple[BlockSize, ...]:
    # The declared sizes that every child's supports_block_size accepts.
    return tuple(
        size for size in KERNEL_BLOCK_SIZES
        if all(child.supports_block_size(_with_block_size(q, size)) for child in CHILDREN)
    )


def _block_size(q: Query) -> bool:
    # bool(sizes) and the base multiple-of test over those sizes.
    sizes = _kernel_block_sizes(q)
    if not sizes:
        return False
    bs = q.cfg.block_size
    return bs is None or any(bs % size == 0 for size in sizes)


def _head_size(q: Query) -> bool:
    return q.cfg.head_size in HEAD_SIZES and all(c.supports_head_size(q) for c in CHILDREN)


def _kv_cache_dtype(q: Query) -> bool:
    return all(c.supports_kv_cache_dtype(q) for c in CHILDREN)


def _capability(q: Query) -> bool:
    return q.cap.major == DEVICE_MAJOR and all(c.supports_capability(q) for c in CHILDREN)


def _mm_prefix(q: Query) -> bool:
    # Only the image-mask variant (the general one) must support mm-prefix.
    return bool(resolve(GENERAL.mm_prefix, q))


def _combination(q: Query) -> str | None:
    for variant, child in enumerate(CHILDREN):
        if child.combination is None:
            continue
        child_cfg = q.cfg._replace(use_mm_prefix=q.cfg.use_mm_prefix and variant == 0)
        reason = child.combination(Query(child_cfg, q.cap, q.kernels, q.ctx))
        if reason:
            return f"{child.name}: {reason}"
    return None


def _routing_cudagraph_support(q: Query) -> str:
    """``MMPrefixAttentionRouting.get_cudagraph_support``."""
    return "NEVER" if q.ctx.unclamped_sliding_window else "UNIFORM_SINGLE_TOKEN_DECODE"


def _cudagraph_support(q: Query) -> str:
    levels = [str(resolve(c.cudagraph_support, q)) for c in CHILDREN]
    levels.append(_routing_cudagraph_support(q))
    return min(levels, key=CG_LEVEL.__getitem__)


def merge_kv_cache_layouts(declared: list[tuple[str, ...] | None]) -> tuple[str, ...]:
    """``get_supported_kv_cache_layouts``: the layouts every backend accepts,
    most preferred first. Raises ValueError when none fits all."""
    lists = [d for d in declared if d is not None] or [DEFAULT_LAYOUT_PREFERENCE]
    if all(d == lists[0] for d in lists[1:]):
        return lists[0]
    firsts = Counter(d[0] for d in lists)
    common = set.intersection(*(set(d) for d in lists))
    # Stable sort: equal priorities keep the KVCacheLayout enum order.
    out = sorted(
        (layout for layout in LAYOUT_ENUM_ORDER if layout in common),
        key=lambda layout: firsts[layout],
        reverse=True,
    )
    if not out:
        raise ValueError(
            f"No KV cache layout satisfies every supported set: {[list(d) for d in lists]}."
        )
    return tuple(out)


def _kv_cache_layouts(q: Query) -> tuple[str, ...]:
    return merge_kv_cache_layouts([resolve(c.kv_cache_layouts, q) for c in CHILDREN])


TRITON_FLASHINFER = BackendSpec(
    name="TRITON_FLASHINFER",
    vllm_class="vllm.v1.attention.backends.triton_flashinfer.TritonFlashInferBackend",
    family="composite",
    summary=(
        "TRITON_ATTN for batches with image-mask prefixes, FLASHINFER for causal "
        "ones; Blackwell (10.x), head size 256/512"
    ),
    head_sizes=Rule("256 or 512, and both children's head sizes", _head_size),
    dtypes=tuple(d for d in GENERAL.dtypes if d in CAUSAL.dtypes),
    kv_cache_dtypes=tuple(d for d in GENERAL.kv_cache_dtypes if d in CAUSAL.kv_cache_dtypes),
    kv_cache_dtype_rule=Rule("both children's KV-cache dtypes", _kv_cache_dtype),
    kernel_block_sizes=Rule("64 where both children accept it", _kernel_block_sizes),
    block_size_rule=Rule("some kernel block size, and a multiple of it", _block_size),
    mm_prefix=Rule("the image-mask child (TRITON_ATTN) supports mm-prefix", _mm_prefix),
    capability=Rule("10.x, and both children's capability checks", _capability),
    # supports_sliding_window / supports_rswa: all children.
    sliding_window=GENERAL.sliding_window and CAUSAL.sliding_window,
    rswa=GENERAL.rswa and CAUSAL.rswa,
    # supports_pcp, supports_dcp, supports_device_cpu_query_lens_mismatch:
    # overridden to False; the rest stay AttentionBackend's defaults.
    pcp=False,
    dcp=False,
    device_cpu_query_lens_mismatch=False,
    combination=Rule(
        "each child's supports_combination, prefixed with the child's name", _combination
    ),
    # Importing the composite module imports flashinfer.py.
    import_error=CAUSAL.import_error,
    cudagraph_support=Rule(
        "min(children, routing): NEVER with an unclamped sliding window, "
        "else UNIFORM_SINGLE_TOKEN_DECODE",
        _cudagraph_support,
    ),
    kv_cache_shape="(num_blocks, num_kv_heads, block_size, head_size + head_size_v)",
    kv_cache_layouts=Rule("the children's layouts merged (10.x: LBHNC, BLHNC)", _kv_cache_layouts),
)
