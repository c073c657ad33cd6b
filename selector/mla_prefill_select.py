"""The MLA prefill backend choice: explicit or by priority, then what the
MLA layer does with the answer.

Mirrors three pieces of vLLM 0.33.0:

- ``get_mla_prefill_backend`` (vllm/v1/attention/backends/mla/prefill/selector.py):
  an explicit ``attention_config.mla_prefill_backend`` is validated alone and
  raises ``ValueError`` when invalid; otherwise
- ``Platform.get_mla_prefill_backend_cls`` (vllm/platforms/interface.py)
  validates the priority list in order and returns the first valid backend,
  or raises ``ValueError`` naming every reason;
- ``MLAAttention.__init__`` (model_executor/layers/attention/mla_attention.py):
  a sparse layer whose attention impl has no dense-MHA prefill path never
  asks, and a sparse layer that gets the ``ValueError`` without an explicit
  choice logs a warning and prefills through the top-k MQA path instead.

vLLM stops at the first valid candidate; every candidate's reasons are
computed here anyway (``validate_configuration`` is pure), so the report can
show why each later one would or would not serve.
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

from attn_select.backends.mla.prefill import registry
from attn_select.selector import reasons as R
from attn_select.selector.config import Capability, Kernels
from attn_select.selector.mla_prefill_config import MLAPrefillSelectorConfig, PrefillQuery
from attn_select.selector.mla_prefill_validate import check
from attn_select.selector.priorities import mla_prefill_priorities


class PrefillCandidate(NamedTuple):
    name: str  # MLAPrefillBackendEnum member
    priority: int  # index in the priority list; -1 for an explicit backend not in it
    reasons: tuple[str, ...]  # empty = valid

    @property
    def valid(self) -> bool:
        return not self.reasons


class MLAPrefillSelection(NamedTuple):
    cfg: MLAPrefillSelectorConfig
    cap: Capability
    backend: str | None  # explicit attention_config.mla_prefill_backend, if any
    candidates: tuple[PrefillCandidate, ...]  # the priority list in order (+ an explicit outsider)
    selected: str | None
    error: str | None  # vLLM's ValueError text: the layer, and the engine, fail to build
    warning: str | None = None  # what vLLM logs when a sparse layer goes without one
    # Why the layer never asks for a prefill backend (then no candidates), or None.
    skipped: str | None = None

    @property
    def priority_order(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.candidates if c.priority >= 0)


@cache
def select_mla_prefill(
    cfg: MLAPrefillSelectorConfig,
    cap: Capability,
    kernels: Kernels,
    batch_invariant: bool = False,
    backend: str | None = None,
) -> MLAPrefillSelection:
    """``get_mla_prefill_backend`` on the CUDA platform. An error is returned
    in ``error``, never raised; an unknown ``backend`` name raises UserError."""
    q = PrefillQuery(cfg, cap, kernels, batch_invariant)
    order = mla_prefill_priorities(cap, cfg.mla_dimensions)
    candidates = [
        PrefillCandidate(name, i, tuple(check(registry.PREFILL_BACKENDS[name], q)))
        for i, name in enumerate(order)
    ]

    def done(selected: str | None, error: str | None, name: str | None = None) -> MLAPrefillSelection:
        return MLAPrefillSelection(cfg, cap, name, tuple(candidates), selected, error)

    if backend is not None:
        spec = registry.get(backend)
        name = spec.name
        if spec.vllm_class is None:
            # get_class() raises ValueError before any check runs; the
            # selector catches only ImportError, so it propagates.
            return done(None, R.mla_prefill_unregistered(name), name)
        if name in order:
            reasons = candidates[order.index(name)].reasons
        else:
            reasons = tuple(check(spec, q))
            candidates.append(PrefillCandidate(name, -1, reasons))
        if reasons:
            return done(None, R.mla_prefill_selected_invalid(name, list(reasons)), name)
        return done(name, None, name)

    chosen = next((c for c in candidates if c.valid), None)
    if chosen is None:
        error = R.no_valid_mla_prefill_backend(
            cfg.vllm_repr(), [(c.name, list(c.reasons)) for c in candidates]
        )
        return done(None, error)
    return done(chosen.name, None)


def layer_mla_prefill(
    cfg: MLAPrefillSelectorConfig,
    cap: Capability,
    kernels: Kernels,
    batch_invariant: bool,
    backend: str | None,
    attention_backend: str,
    sparse: bool,
    dense_mha_prefill: bool,
) -> MLAPrefillSelection:
    """What one ``MLAAttention`` layer ends up with, given its attention
    backend, whether that impl is sparse and whether it has a dense-MHA
    prefill path."""
    if sparse and not dense_mha_prefill:
        # The layer never calls the selector, whatever was asked for.
        return MLAPrefillSelection(
            cfg, cap, backend, (), None, None, warning=R.SPARSE_NO_DENSE_PREFILL,
            skipped=f"{attention_backend}: no dense-MHA prefill path",
        )
    sel = select_mla_prefill(cfg, cap, kernels, batch_invariant, backend)
    if sel.error is not None and sparse and backend is None:
        # MLAAttention catches the ValueError for a sparse layer without an
        # explicit choice and goes on without a prefill backend.
        return sel._replace(error=None, warning=R.SPARSE_NO_PREFILL_BACKEND)
    return sel
