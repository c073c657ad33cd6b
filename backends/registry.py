"""Backend names -> specs, in vLLM 0.33.0's ``AttentionBackendEnum`` order,
restricted to the backends ``_get_backend_priorities`` can name on CUDA.

Listing or looking up a name imports only these declaration modules (pure
Python, no torch). Each spec's ``run_adapter`` is a dotted path resolved
only by ``attn-select run``.
"""

from __future__ import annotations

import difflib
from typing import TypeVar

from attn_select.backends.triton_flash_attn import TRITON_FLASH_ATTN
from attn_select.backends.triton_flashinfer import TRITON_FLASHINFER
from attn_select.backends.flash_attn import FLASH_ATTN
from attn_select.backends.flashinfer import FLASHINFER
from attn_select.backends.flex_attention import FLEX_ATTENTION
from attn_select.backends.mla import MLA_SPECS
from attn_select.backends.spec import BackendSpec
from attn_select.selector.errors import UserError, shown
from attn_select.backends.triton_attn import TRITON_ATTN
from attn_select.backends.turboquant import TURBOQUANT

# AttentionBackendEnum member order (vllm/v1/attention/backends/registry.py).
ENUM_ORDER: tuple[str, ...] = (
    "FLASH_ATTN",
    "TRITON_ATTN",
    "TRITON_FLASH_ATTN",
    "FLASHINFER",
    "TRITON_FLASHINFER",
    "FLASHINFER_MLA",
    "TOKENSPEED_MLA",
    "FLASHINFER_MLA_SPARSE",
    "FLASHINFER_MLA_SPARSE_SM120",
    "FLASHINFER_MLA_SPARSE_SM90",
    "TRITON_MLA",
    "CUTLASS_MLA",
    "FLASHMLA",
    "FLASHMLA_SPARSE",
    "FLASH_ATTN_MLA",
    "FLASH_ATTN_MLA_SPARSE",
    "FLASH_ATTN_MLA_SPARSE_FA4",
    "FLEX_ATTENTION",
    "TURBOQUANT",
)

_ALL = (FLASH_ATTN, TRITON_ATTN, TRITON_FLASH_ATTN, FLASHINFER, TRITON_FLASHINFER,
        FLEX_ATTENTION, TURBOQUANT, *MLA_SPECS)
BACKENDS: dict[str, BackendSpec] = {
    name: spec for name in ENUM_ORDER for spec in _ALL if spec.name == name
}
assert tuple(BACKENDS) == ENUM_ORDER, sorted(set(ENUM_ORDER) ^ set(BACKENDS))


T = TypeVar("T")


class UnknownBackend(UserError):
    """An unknown backend name; the message suggests the closest valid one."""


def closest(name: str, options: list[str] | tuple[str, ...]) -> str | None:
    if len(name) > 100:  # no backend name is that long; difflib on it would take seconds
        return None
    hits = difflib.get_close_matches(name.upper(), [o.upper() for o in options], n=1, cutoff=0.5)
    if not hits:
        return None
    return next(o for o in options if o.upper() == hits[0])


def lookup(table: dict[str, T], name: str, order: tuple[str, ...], what: str, error: type[UserError]) -> T:
    """``table[name]`` as vLLM's enum lookup reads a name (upper-cased), else
    ``error`` naming ``what``, the closest valid name and every valid one."""
    found = table.get(name.strip().upper())
    if found is not None:
        return found
    hint = closest(name, order)
    suggest = f"; did you mean {hint}?" if hint else ""
    raise error(f"unknown {what} {shown(name)}{suggest} Valid: {', '.join(order)}")


def get(name: str) -> BackendSpec:
    """The spec for ``name`` (case-insensitive, vLLM's enum spelling)."""
    return lookup(BACKENDS, name, ENUM_ORDER, "attention backend", UnknownBackend)
