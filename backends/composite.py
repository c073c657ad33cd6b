"""vLLM 0.33.0's ``create_composite_attention_backend``
(vllm/v1/attention/backends/composite.py) as one function: two child
declarations and a routing policy in, the composite's ``BackendSpec`` out.

vLLM builds ``TRITON_FLASH_ATTN`` and ``TRITON_FLASHINFER`` with that one
function, so they are built here with this one. Its class derives from
``AttentionBackend``, not from either child: every predicate it does not
override keeps the base-class default (no sinks, no per-head quant scales,
decoder only, no non-causal, no batch invariance), even where both children
do better. What it overrides combines the children, as below.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Callable, NamedTuple

from attn_select.backends.spec import (
    BackendSpec,
    BlockSize,
    MultipleOf,
    Rule,
    fits_kernel_block_sizes,
    resolve,
)
from attn_select.selector.config import Query


class CompositeRouting(NamedTuple):
    """A ``CompositeAttentionRouting`` policy, as the facts selection reads:
    its ``get_cudagraph_support`` and which variants ``variant_uses_mm_prefix``
    (variant 0 is the general child, 1 the causal one)."""

    name: str
    cudagraph_support: Callable[[Query], str]  # an AttentionCGSupport member name
    mm_prefix_variants: tuple[int, ...]

    def variant_uses_mm_prefix(self, variant: int) -> bool:
        return variant in self.mm_prefix_variants


def _mm_prefix_cudagraph_support(q: Query) -> str:
    # A layer whose sliding window is not clamped to the image span can route
    # a decode step to the image child, so no captured graph is safe.
    return "NEVER" if q.ctx.unclamped_sliding_window else "UNIFORM_SINGLE_TOKEN_DECODE"


# MMPrefixAttentionRouting: image masks to variant 0, causal queries to variant 1.
MM_PREFIX_ROUTING = CompositeRouting(
    name="MMPrefixAttentionRouting",
    cudagraph_support=_mm_prefix_cudagraph_support,
    mm_prefix_variants=(0,),
)


class CompositeDocs(NamedTuple):
    """What the composite's table cells say (``matrix``, docs/matrix.md). The
    declaring module words them: they name what its children make of a rule
    (say, which head sizes need FA4), which the builder cannot know."""

    head_sizes: str
    kv_cache_dtypes: str
    kernel_block_sizes: str
    capability: str
    mm_prefix: str
    cudagraph_support: str


# AttentionCGSupport values (vllm/v1/attention/backend.py); the composite's
# builder takes the minimum over both children and the routing.
CG_LEVELS = {"NEVER": 0, "UNIFORM_SINGLE_TOKEN_DECODE": 1, "UNIFORM_BATCH": 2, "ALWAYS": 3}

# KVCacheLayout members in enum order (vllm/v1/kv_cache_layout.py), and
# utils.py's _DEFAULT_LAYOUT_PREFERENCE for when no backend declares any.
LAYOUT_ENUM_ORDER = ("LBHNC", "LBNHC", "LHBNC", "BLHNC", "BLNHC", "BHLNC")
DEFAULT_LAYOUT_PREFERENCE = ("LBNHC", "LBHNC", "BLNHC", "BLHNC", "BHLNC", "LHBNC")


def intersect_block_sizes(
    first: tuple[BlockSize, ...], second: tuple[BlockSize, ...]
) -> tuple[BlockSize, ...]:
    """``_intersect_kernel_block_sizes``: every pair of sizes both allow, in
    the first child's order, each once."""
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
            # 64 and MultipleOf(64) are different sizes: the key keeps the type.
            value = candidate.base if isinstance(candidate, MultipleOf) else candidate
            key = (type(candidate), value)
            if key not in seen:
                seen.add(key)
                out.append(candidate)
    return tuple(out)


def merge_kv_cache_layouts(declared: list[tuple[str, ...] | None]) -> tuple[str, ...]:
    """utils.py ``get_supported_kv_cache_layouts``: the layouts every backend
    accepts, most preferred first. Raises ValueError when none fits all."""
    lists = [layouts for layouts in declared if layouts is not None] or [DEFAULT_LAYOUT_PREFERENCE]
    first = lists[0]
    if all(layouts == first for layouts in lists[1:]):
        return tuple(first)
    firsts = Counter(layouts[0] for layouts in lists)
    common = set.intersection(*map(set, lists))
    # sorted() is stable: equal priorities keep the enum order.
    candidates = sorted(
        (layout for layout in LAYOUT_ENUM_ORDER if layout in common),
        key=lambda layout: firsts[layout],
        reverse=True,
    )
    if not candidates:
        raise ValueError(
            f"No KV cache layout satisfies every supported set: {[list(d) for d in lists]}."
        )
    return tuple(candidates)


def _with_block_size(q: Query, block_size: int | None) -> Query:
    return q._replace(cfg=q.cfg._replace(block_size=block_size))


def composite_spec(
    general: BackendSpec,
    causal: BackendSpec,
    *,
    name: str,
    vllm_class: str,
    summary: str,
    docs: CompositeDocs,
    routing: CompositeRouting = MM_PREFIX_ROUTING,
    head_sizes: tuple[int, ...] = (),
    kernel_block_sizes: tuple[int, ...] = (),
    device_major: int | None = None,
) -> BackendSpec:
    """The ``CompositeAttentionBackend`` that
    ``create_composite_attention_backend(general, causal, ...)`` returns."""
    if general.vllm_class == causal.vllm_class:
        return general  # vLLM composes a backend with itself into itself
    children = (general, causal)

    def supports_head_size(q: Query) -> bool:
        return (not head_sizes or q.cfg.head_size in head_sizes) and all(
            child.supports_head_size(q) for child in children
        )

    def supports_kv_cache_dtype(q: Query) -> bool:
        return all(child.supports_kv_cache_dtype(q) for child in children)

    def supported_kernel_block_sizes(q: Query) -> tuple[BlockSize, ...]:
        if kernel_block_sizes:
            # An explicit list keeps the sizes each child's supports_block_size takes.
            return tuple(
                size for size in kernel_block_sizes
                if all(child.supports_block_size(_with_block_size(q, size)) for child in children)
            )
        return intersect_block_sizes(general.block_sizes(q), causal.block_sizes(q))

    def supports_block_size(q: Query) -> bool:
        sizes = supported_kernel_block_sizes(q)
        return bool(sizes) and fits_kernel_block_sizes(q.cfg.block_size, sizes)

    def supports_mm_prefix(q: Query) -> bool:
        return all(
            not routing.variant_uses_mm_prefix(variant) or resolve(child.mm_prefix, q)
            for variant, child in enumerate(children)
        )

    def supports_capability(q: Query) -> bool:
        return (device_major is None or q.cap.major == device_major) and all(
            child.supports_capability(q) for child in children
        )

    def combination(q: Query) -> str | None:
        for variant, child in enumerate(children):
            if child.combination is None:
                continue  # AttentionBackend.supports_combination: no reason
            # Only a child that serves image masks is asked with use_mm_prefix.
            use_mm_prefix = q.cfg.use_mm_prefix and routing.variant_uses_mm_prefix(variant)
            reason = child.combination(q._replace(cfg=q.cfg._replace(use_mm_prefix=use_mm_prefix)))
            if reason:
                return f"{child.name}: {reason}"
        return None

    def import_error(q: Query) -> str | None:
        # Both of vLLM's composite modules import the causal child's module
        # before the general one's: its failure is the one raised.
        for child in (causal, general):
            failure = child.import_error(q) if child.import_error is not None else None
            if failure is not None:
                return failure
        return None

    def cudagraph_support(q: Query) -> str:
        levels = [resolve(child.cudagraph_support, q) for child in children]
        levels.append(routing.cudagraph_support(q))
        return min(levels, key=CG_LEVELS.__getitem__)

    def kv_cache_layouts(q: Query) -> tuple[str, ...]:
        return merge_kv_cache_layouts([resolve(child.kv_cache_layouts, q) for child in children])

    return BackendSpec(
        name=name,
        vllm_class=vllm_class,
        family="composite",
        summary=summary,
        head_sizes=Rule(docs.head_sizes, supports_head_size),
        dtypes=tuple(d for d in general.dtypes if d in causal.dtypes),
        kv_cache_dtypes=tuple(d for d in general.kv_cache_dtypes if d in causal.kv_cache_dtypes),
        kv_cache_dtype_rule=Rule(docs.kv_cache_dtypes, supports_kv_cache_dtype),
        kernel_block_sizes=Rule(docs.kernel_block_sizes, supported_kernel_block_sizes),
        block_size_rule=Rule(
            "some kernel block size remains, and the block size is a multiple of one",
            supports_block_size,
        ),
        mm_prefix=Rule(docs.mm_prefix, supports_mm_prefix),
        capability=Rule(docs.capability, supports_capability),
        sliding_window=all(child.sliding_window for child in children),
        rswa=all(child.rswa for child in children),
        pcp=False,
        dcp=False,
        device_cpu_query_lens_mismatch=False,
        combination=Rule(
            f"the first reason of {general.name}, then {causal.name}, prefixed with its "
            "name; only the routing's image-mask child is asked with use_mm_prefix",
            combination,
        ),
        import_error=Rule(f"{causal.name}'s import failure, then {general.name}'s", import_error),
        cudagraph_support=Rule(docs.cudagraph_support, cudagraph_support),
        # customize_spec demands one KV spec for both children, and the
        # composite takes only KV dtypes both take: the general child's view.
        kv_cache_shape=general.kv_cache_shape,
        kv_cache_layouts=Rule(
            "the children's layouts merged (get_supported_kv_cache_layouts)", kv_cache_layouts
        ),
    )
