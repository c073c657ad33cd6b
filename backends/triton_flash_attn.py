"""TRITON_FLASH_ATTN: vLLM 0.33.0's ``TritonFlashAttentionBackend``
(vllm/v1/attention/backends/triton_flash_attn.py), built by
``create_composite_attention_backend`` (composite.py) from two children:

* general child (variant 0): ``TritonAttentionBackend``, which serves the
  batches whose image tokens need bidirectional (mm_prefix) attention;
* causal child (variant 1): ``_FABackend``, a FlashAttentionBackend subclass
  limited to Hopper that also needs FA3 or FA4 to resolve.

The composite class derives from ``AttentionBackend``, not from either
child: every predicate it does not define keeps the base-class default. So
it supports no sinks, no per-head quant scales, decoder attention only, no
non-causal, no batch invariance, no PCP/DCP, even where both children do.
What it defines combines the children (``all(...)``, block-size
intersection, the first child's combination reason prefixed with its name).
"""

from __future__ import annotations

import math
from collections import Counter

from attn_select.backends.flash_attn import FLASH_ATTN, combination_reason as fa_combination
from attn_select.backends.spec import (
    BackendSpec,
    BlockSize,
    MultipleOf,
    Rule,
    resolve,
    rule,
)
from attn_select.backends.triton_attn import TRITON_ATTN
from attn_select.selector import fa_version as fa
from attn_select.selector.config import AttentionType, Capability, Query

CAUSAL_ROUTE_NEEDS_FA3_OR_FA4 = "causal route requires FlashAttention v3 or v4"

# create_composite_attention_backend(..., head_sizes=(256, 512)); no
# kernel_block_sizes and no device_major are given.
COMPOSITE_HEAD_SIZES = (256, 512)


# --- the causal child: _FABackend (a true FlashAttentionBackend subclass) -------


@rule("major 9 and >= 8.0 (Hopper only; Blackwell uses TRITON_FLASHINFER)")
def _fa_child_capability(q: Query) -> bool:
    return q.cap.major == 9 and q.cap >= Capability(8, 0)


def _fa_child_combination(q: Query) -> str | None:
    # FlashAttention's own reasons first, then the causal route's FA3/FA4 need.
    reason = fa_combination(q)
    if reason is not None:
        return reason
    version = fa.resolve_fa_version(
        q.cap, q.kernels, q.ctx,
        head_size=q.cfg.head_size,
        has_sinks=q.cfg.has_sink,
        kv_cache_block_size=q.cfg.block_size,
        supports_fa4_hd256=True,
    ).version
    if version not in (3, 4):
        return CAUSAL_ROUTE_NEEDS_FA3_OR_FA4
    return None


# get_name() is inherited, so reasons from this child read "FLASH_ATTN: ...".
FA_CAUSAL_CHILD = FLASH_ATTN._replace(
    vllm_class="vllm.v1.attention.backends.triton_flash_attn._FABackend",
    summary="FlashAttention restricted to Hopper, needing FA3/FA4 (TRITON_FLASH_ATTN's causal route)",
    capability=_fa_child_capability,
    combination=Rule(
        "FLASH_ATTN's reasons, then FA3/FA4 must resolve for head_size, sinks, block size",
        _fa_child_combination,
    ),
)

# (child, routing_policy.variant_uses_mm_prefix(variant)) for MMPrefixAttentionRouting.
CHILDREN: tuple[tuple[BackendSpec, bool], ...] = ((TRITON_ATTN, True), (FA_CAUSAL_CHILD, False))


# --- composite rules (CompositeAttentionBackend's overrides) ------------------------


def _both(check, q: Query) -> bool:
    return all(check(child, q) for child, _ in CHILDREN)


@rule("256 or 512, and both TRITON_ATTN and FLASH_ATTN accept it (512 needs FA4 supported)")
def _supports_head_size(q: Query) -> bool:
    return q.cfg.head_size in COMPOSITE_HEAD_SIZES and _both(BackendSpec.supports_head_size, q)


@rule("both TRITON_ATTN and FLASH_ATTN accept it (fp8 only where FLASH_ATTN allows)")
def _supports_kv_cache_dtype(q: Query) -> bool:
    return _both(BackendSpec.supports_kv_cache_dtype, q)


def intersect_block_sizes(
    first: tuple[BlockSize, ...], second: tuple[BlockSize, ...]
) -> tuple[BlockSize, ...]:
    """composite.py ``_intersect_kernel_block_sizes``: every pair that both
    allow, first child's order, without repeats."""
    out: list[BlockSize] = []
    seen: set[tuple[type, int]] = set()
    for lhs in first:
        for rhs in second:
            candidate: BlockSize | None = None
            if isinstance(lhs, MultipleOf) and isinstance(rhs, MultipleOf):
                candidate = MultipleOf(math.lcm(lhs.base, rhs.base))
            elif isinstance(lhs, MultipleOf):
                candidate = rhs if rhs % lhs.base == 0 else None
            elif isinstance(rhs, MultipleOf):
                candidate = lhs if lhs % rhs.base == 0 else None
            elif lhs == rhs:
                candidate = lhs
            if candidate is None:
                continue
            key = (type(candidate), candidate.base if isinstance(candidate, MultipleOf) else candidate)
            if key not in seen:
                seen.add(key)
                out.append(candidate)
    return tuple(out)


@rule("TRITON_ATTN's sizes intersected with FLASH_ATTN's (multiple of 16, or [64]/[128] as FLASH_ATTN)")
def _kernel_block_sizes(q: Query) -> tuple[BlockSize, ...]:
    (general, _), (causal, _) = CHILDREN
    return intersect_block_sizes(general.block_sizes(q), causal.block_sizes(q))


@rule("the intersection is non-empty and the block size is a multiple of one of its sizes")
def _supports_block_size(q: Query) -> bool:
    sizes = _kernel_block_sizes(q)
    if not sizes:
        return False
    block_size = q.cfg.block_size
    if block_size is None:
        return True
    return any(block_size % (s.base if isinstance(s, MultipleOf) else s) == 0 for s in sizes)


@rule("the mm_prefix route (TRITON_ATTN) supports mm_prefix")
def _supports_mm_prefix(q: Query) -> bool:
    return all(resolve(child.mm_prefix, q) for child, uses_mm in CHILDREN if uses_mm)


@rule("both children: TRITON_ATTN any, FLASH_ATTN route major 9 and >= 8.0")
def _supports_capability(q: Query) -> bool:
    return _both(BackendSpec.supports_capability, q)


def _combination(q: Query) -> str | None:
    for child, uses_mm in CHILDREN:
        if child.combination is None:
            continue
        # Only the mm_prefix route is asked with the selector's use_mm_prefix.
        use_mm = q.cfg.use_mm_prefix and uses_mm
        child_q = q if use_mm == q.cfg.use_mm_prefix else q._replace(
            cfg=q.cfg._replace(use_mm_prefix=use_mm)
        )
        reason = child.combination(child_q)
        if reason:
            return f"{child.name}: {reason}"
    return None


@rule("ImportError when neither _vllm_fa2_C nor _vllm_fa3_C is installed")
def _import_error(q: Query) -> str | None:
    # triton_flash_attn.py imports fa_utils (and flash_attn.py) before triton_attn.py.
    for child in (FA_CAUSAL_CHILD, TRITON_ATTN):
        if child.import_error is not None:
            failure = child.import_error(q)
            if failure is not None:
                return failure
    return None


# AttentionCGSupport values (vllm/v1/attention/backend.py); the composite takes the minimum.
CG_LEVELS = {"NEVER": 0, "UNIFORM_SINGLE_TOKEN_DECODE": 1, "UNIFORM_BATCH": 2, "ALWAYS": 3}


@rule("UNIFORM_SINGLE_TOKEN_DECODE (the routing's cap); NEVER with an unclamped sliding-window layer")
def _cudagraph_support(q: Query) -> str:
    routing = "NEVER" if q.ctx.unclamped_sliding_window else "UNIFORM_SINGLE_TOKEN_DECODE"
    levels = [resolve(child.cudagraph_support, q) for child, _ in CHILDREN] + [routing]
    return min(levels, key=CG_LEVELS.__getitem__)


# KVCacheLayout members in enum order, and vLLM's preference when no backend declares.
LAYOUT_ENUM_ORDER = ("LBHNC", "LBNHC", "LHBNC", "BLHNC", "BLNHC", "BHLNC")
DEFAULT_LAYOUT_PREFERENCE = ("LBNHC", "LBHNC", "BLNHC", "BLHNC", "BHLNC", "LHBNC")


def combined_kv_cache_layouts(
    declared: tuple[tuple[str, ...] | None, ...],
) -> tuple[str, ...]:
    """backends/utils.py ``get_supported_kv_cache_layouts`` over the children."""
    lists = [layouts for layouts in declared if layouts is not None] or [DEFAULT_LAYOUT_PREFERENCE]
    first = lists[0]
    if all(layouts == first for layouts in lists[1:]):
        return tuple(first)
    firsts = Counter(layouts[0] for layouts in lists)
    common = set.intersection(*map(set, lists))
    # sorted() is stable: ties keep the enum order.
    candidates = sorted(
        (name for name in LAYOUT_ENUM_ORDER if name in common),
        key=lambda name: firsts[name],
        reverse=True,
    )
    if not candidates:
        raise ValueError(f"No KV cache layout satisfies every supported set: {lists}.")
    return tuple(candidates)


TRITON_FLASH_ATTN = BackendSpec(
    name="TRITON_FLASH_ATTN",
    vllm_class="vllm.v1.attention.backends.triton_flash_attn.TritonFlashAttentionBackend",
    family="composite",
    summary=(
        "Hopper composite for PrefixLM models: Triton for batches with image "
        "(mm_prefix) spans, FlashAttention 3/4 for causal batches"
    ),
    head_sizes=_supports_head_size,
    dtypes=tuple(d for d in TRITON_ATTN.dtypes if d in FA_CAUSAL_CHILD.dtypes),
    kv_cache_dtypes=tuple(
        d for d in FA_CAUSAL_CHILD.kv_cache_dtypes if d in TRITON_ATTN.kv_cache_dtypes
    ),
    kv_cache_dtype_rule=_supports_kv_cache_dtype,
    kernel_block_sizes=_kernel_block_sizes,
    block_size_rule=_supports_block_size,
    mm_prefix=_supports_mm_prefix,
    # Base-class defaults: the composite does not override these.
    is_mla=False,
    sink=False,
    is_sparse=False,
    per_head_quant_scales=False,
    capability=_supports_capability,
    attn_types=(AttentionType.DECODER.value,),
    sliding_window=all(child.sliding_window for child, _ in CHILDREN),
    rswa=all(child.rswa for child, _ in CHILDREN),
    non_causal=False,
    non_causal_dcp=False,
    batch_invariance=False,
    kv_connector=True,
    pcp=False,
    dcp=False,
    device_cpu_query_lens_mismatch=False,
    combination=Rule(
        "first child reason, prefixed with its name: TRITON_ATTN's, then "
        "FLASH_ATTN's without mm_prefix plus the FA3/FA4 causal-route check",
        _combination,
    ),
    import_error=_import_error,
    cudagraph_support=_cudagraph_support,
    # Shared storage: customize_spec must give both children the same spec.
    kv_cache_shape=FLASH_ATTN.kv_cache_shape,
    kv_cache_layouts=combined_kv_cache_layouts(
        tuple(child.kv_cache_layouts for child, _ in CHILDREN)
    ),
    alibi_sqrt=False,
)
