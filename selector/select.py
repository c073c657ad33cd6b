"""The selection loop: priorities, then validate each candidate, then pick.

Mirrors ``CudaPlatformBase.get_valid_backends`` and ``get_attn_backend_cls``
(vllm/platforms/cuda.py). An explicit backend is validated alone and never
falls back; otherwise the valid candidate with the lowest priority index wins.
Memoised on the frozen inputs, like vLLM's ``_cached_get_attn_backend``.
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

from attn_select.backends import registry
from attn_select.selector import reasons as R
from attn_select.selector.config import Capability, EngineContext, Kernels, Query, SelectorConfig
from attn_select.selector.priorities import backend_priorities
from attn_select.selector.validate import check, import_failure


class Candidate(NamedTuple):
    name: str
    priority: int  # index in the priority list; -1 for an explicit backend not in it
    reasons: tuple[str, ...]  # empty = valid

    @property
    def valid(self) -> bool:
        return not self.reasons


class Selection(NamedTuple):
    cfg: SelectorConfig
    cap: Capability
    kernels: Kernels
    ctx: EngineContext
    num_heads: int | None
    backend: str | None  # explicit --backend, if any
    candidates: tuple[Candidate, ...]  # every backend of the priority list, in order
    selected: str | None
    error: str | None  # vLLM's ValueError text when nothing (valid) was selected
    warning: str | None = None  # vLLM's "--block-size precluded ..." warning

    @property
    def priority_order(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.candidates if c.priority >= 0)


def _priorities(cfg: SelectorConfig, cap: Capability, num_heads: int | None) -> tuple[str, ...]:
    return backend_priorities(
        use_mla=cfg.use_mla,
        cap=cap,
        num_heads=num_heads,
        kv_cache_dtype=cfg.kv_cache_dtype,
        use_non_causal=cfg.use_non_causal,
        head_size=cfg.head_size,
        use_mm_prefix=cfg.use_mm_prefix,
    )


@cache
def select(
    cfg: SelectorConfig,
    cap: Capability,
    kernels: Kernels,
    ctx: EngineContext,
    num_heads: int | None = None,
    backend: str | None = None,
) -> Selection:
    q = Query(cfg, cap, kernels, ctx)
    order = _priorities(cfg, cap, num_heads)
    candidates = [
        Candidate(name, i, tuple(check(registry.BACKENDS[name], q)))
        for i, name in enumerate(order)
    ]

    if backend is not None:
        spec = registry.get(backend)
        name = spec.name
        if name in order:
            reasons = candidates[order.index(name)].reasons
        else:
            reasons = tuple(check(spec, q))
            candidates.append(Candidate(name, -1, reasons))
        if not reasons:
            return Selection(cfg, cap, kernels, ctx, num_heads, name, tuple(candidates), name, None)
        error = (
            R.selected_import_failure(name, reasons[0])
            if import_failure(spec, q) is not None
            else R.selected_invalid(name, list(reasons))
        )
        return Selection(cfg, cap, kernels, ctx, num_heads, name, tuple(candidates), None, error)

    valid = [c for c in candidates if c.valid]
    if not valid:
        error = R.no_valid_backend(
            cfg.vllm_repr(), [(c.name, list(c.reasons)) for c in candidates]
        )
        return Selection(cfg, cap, kernels, ctx, num_heads, None, tuple(candidates), None, error)

    chosen = valid[0]
    warning = None
    if cfg.block_size is not None:
        # vLLM compares the reasons with the literal single-reason list.
        excluded = [
            c.name for c in candidates
            if c.priority < chosen.priority and list(c.reasons) == [R.BLOCK_SIZE]
        ]
        if excluded:
            warning = R.block_size_precluded(cfg.block_size, excluded, chosen.name)
    return Selection(cfg, cap, kernels, ctx, num_heads, None, tuple(candidates), chosen.name, None, warning)
