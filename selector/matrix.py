"""The feature-support table of every backend, read off the backend
declarations the selector itself uses (``backends/registry.py``).

Nothing here states a fact about a backend: each cell is one ``BackendSpec``
field turned into text. A field holding a ``Rule`` shows the rule's ``doc``
(what vLLM computes, in words), so the table and the selector cannot drift
apart. Modelled on the tables in vLLM's docs/design/attention_backends.md.

With a capability, the table narrows to one GPU: capability checks are
evaluated for it (a ``CapabilityRange`` directly, a ``Rule`` on a bare
selector config with every kernel installed), and the priority lists of
``selector/priorities.py`` for that GPU are added.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from attn_select.backends import registry
from attn_select.backends.spec import BackendSpec, Rule
from attn_select.selector.config import (
    Capability,
    EngineContext,
    Kernels,
    Query,
    SelectorConfig,
)
from attn_select.selector.explain import ENGINE_VERSION
from attn_select.selector.priorities import backend_priorities


def _yes_no(value: object) -> tuple[str, object]:
    return ("yes" if value else "no"), bool(value)


def _names(value: object, empty: str = "any") -> tuple[str, object]:
    items = [str(v) for v in value]  # MultipleOf prints "multiple of 16"
    return (", ".join(items) if items else empty), items


def _text(value: object) -> tuple[str, object]:
    return str(value), str(value)


@dataclass(frozen=True)
class Column:
    """One column: which ``BackendSpec`` field(s) it shows and how.

    ``fields`` lists the spec fields consulted, first set one wins: a
    backend that overrides a check with a Rule (``kv_cache_dtype_rule``)
    shows that Rule instead of the list it replaces.
    """

    key: str  # JSON key
    title: str  # table header
    fields: tuple[str, ...]
    fmt: Callable[[object], tuple[str, object]]  # static value -> (text, JSON value)


COLUMNS: tuple[Column, ...] = (
    Column("dtypes", "dtypes", ("dtypes",), _names),
    Column("kv_cache_dtypes", "KV-cache dtypes", ("kv_cache_dtype_rule", "kv_cache_dtypes"), _names),
    Column("kernel_block_sizes", "kernel block sizes", ("kernel_block_sizes",), _names),
    Column("head_sizes", "head sizes", ("head_sizes",), _names),
    Column("compute_capability", "compute capability", ("capability",), _text),
    Column("sink", "sinks", ("sink",), _yes_no),
    Column("sparse", "sparse", ("is_sparse",), _yes_no),
    Column("mla", "MLA", ("is_mla",), _yes_no),
    Column("mm_prefix", "multimodal prefix", ("mm_prefix",), _yes_no),
    Column("attn_types", "attention types", ("attn_types",), _names),
    Column("cudagraph_support", "CUDA graphs", ("cudagraph_support",), _text),
)


@dataclass(frozen=True)
class Cell:
    text: str  # what the table shows
    value: object  # JSON value: list / bool / str, or the rule's doc
    rule: bool  # True when the fact is computed (a Rule): ``text`` is its doc
    field: str  # the BackendSpec field it came from


def cell(spec: BackendSpec, column: Column) -> Cell:
    for name in column.fields:
        value = getattr(spec, name)
        if value is None:
            continue
        if isinstance(value, Rule):
            return Cell(value.doc, value.doc, True, name)
        text, plain = column.fmt(value)
        return Cell(text, plain, False, name)
    raise ValueError(f"{spec.name}: no value for column {column.key}")  # a spec field was removed


@dataclass(frozen=True)
class Row:
    backend: str
    vllm_class: str
    summary: str
    cells: tuple[Cell, ...]  # one per COLUMNS entry


@dataclass(frozen=True)
class PriorityList:
    """One branch of ``_get_backend_priorities`` for the chosen GPU."""

    label: str  # the inputs that select this branch, e.g. "MHA, use_mm_prefix=True"
    backends: tuple[str, ...]


@dataclass(frozen=True)
class FeatureMatrix:
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    capability: Capability | None = None
    # With a capability: backends whose capability check fails there.
    unsupported: tuple[Row, ...] = ()
    priorities: tuple[PriorityList, ...] = ()
    engine_version: str = ENGINE_VERSION


def probe_query(spec: BackendSpec, cap: Capability, kernels: Kernels) -> Query:
    """The bare query a capability Rule is evaluated on: no model, the
    backend's own kind (MLA or not, sparse or not), its first head size."""
    head = spec.head_sizes[0] if isinstance(spec.head_sizes, tuple) and spec.head_sizes else 128
    cfg = SelectorConfig(
        head_size=head,
        dtype=spec.dtypes[0] if spec.dtypes else "bfloat16",
        kv_cache_dtype="auto",
        block_size=None,
        use_mla=spec.is_mla,
        use_sparse=spec.is_sparse,
    )
    return Query(cfg, cap, kernels, EngineContext())


def supports_capability(spec: BackendSpec, cap: Capability, kernels: Kernels) -> bool:
    # A CapabilityRange reads only the capability, so the probe matters to Rules alone.
    return bool(spec.supports_capability(probe_query(spec, cap, kernels)))


# Inputs that pick a branch of _get_backend_priorities, as keyword arguments.
# Each is shown only where it gives a list different from its base.
_PRIORITY_VARIANTS: tuple[tuple[str, dict[str, object]], ...] = (
    ("MHA", {"use_mla": False}),
    ("MHA, use_mm_prefix=True", {"use_mla": False, "use_mm_prefix": True}),
    ("MHA, use_non_causal=True", {"use_mla": False, "use_non_causal": True}),
    ("MLA", {"use_mla": True}),
    ("MLA, num_heads=16", {"use_mla": True, "num_heads": 16}),
    ("MLA, kv_cache_dtype=fp8", {"use_mla": True, "kv_cache_dtype": "fp8"}),
    ("MLA, head_size=512", {"use_mla": True, "head_size": 512}),
)


def priority_lists(cap: Capability) -> tuple[PriorityList, ...]:
    base = {
        mla: backend_priorities(use_mla=mla, cap=cap) for mla in (False, True)
    }
    out = []
    for label, kwargs in _PRIORITY_VARIANTS:
        order = backend_priorities(cap=cap, **kwargs)
        is_base = len(kwargs) == 1
        if is_base or order != base[bool(kwargs["use_mla"])]:
            out.append(PriorityList(label, order))
    return tuple(out)


def build_matrix(capability: Capability | None = None, kernels: Kernels | None = None) -> FeatureMatrix:
    """The table for every registered backend, in vLLM's enum order.
    Reads ``registry.BACKENDS`` at call time."""
    kernels = kernels or Kernels()
    rows, unsupported = [], []
    for spec in registry.BACKENDS.values():
        row = Row(spec.name, spec.vllm_class, spec.summary, tuple(cell(spec, c) for c in COLUMNS))
        if capability is not None and not supports_capability(spec, capability, kernels):
            unsupported.append(row)
        else:
            rows.append(row)
    return FeatureMatrix(
        columns=COLUMNS,
        rows=tuple(rows),
        capability=capability,
        unsupported=tuple(unsupported),
        priorities=priority_lists(capability) if capability is not None else (),
    )
