"""Backend names -> specs, in vLLM 0.33.0's ``AttentionBackendEnum`` order,
restricted to the backends ``_get_backend_priorities`` can name on CUDA, and
CPU_ATTN, which no CUDA list names but ``--attention-backend`` can (vLLM
validates it with its own checks and selects it). The enum's other members
(ROCm, XPU, CPU MLA, model-specific backends) are names vLLM knows and
attn-select does not model: ``get`` refuses them as such.

Listing or looking up a name imports only these declaration modules (pure
Python, no torch). Each spec's ``run_adapter`` is a dotted path resolved
only by ``attn-select run``.
"""

from __future__ import annotations

import difflib
from typing import TypeVar

from attn_select.backends.cpu_attn import CPU_ATTN
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
    "CPU_ATTN",
    "TURBOQUANT",
)

# Every AttentionBackendEnum member, in its order: the names vLLM's
# validator accepts and lists when it refuses one ("Valid options are").
VLLM_ENUM_NAMES: tuple[str, ...] = tuple("""
    FLASH_ATTN FLASH_ATTN_DIFFKV TRITON_ATTN TRITON_ATTN_DIFFKV TRITON_FLASH_ATTN ROCM_ATTN
    ROCM_SEGMENTED_ATTN ROCM_AITER_MLA ROCM_AITER_TRITON_MLA ROCM_AITER_FA ROCM_AITER_MLA_SPARSE
    XPU_MLA_SPARSE TORCH_SDPA FLASHINFER TRITON_FLASHINFER FLASHINFER_MLA TOKENSPEED_MLA
    FLASHINFER_MLA_SPARSE FLASHINFER_MLA_SPARSE_SM120 FLASHINFER_MLA_SPARSE_SM90 TRITON_MLA
    CUTLASS_MLA FLASHMLA FLASHMLA_SPARSE FLASHMLA_SPARSE_DSV4 FLASHINFER_MLA_SPARSE_DSV4
    ROCM_FLASHMLA_SPARSE_DSV4 FLASHMLA_SPARSE_DSV41 FLASHINFER_MLA_SPARSE_DSV41
    ROCM_FLASHMLA_SPARSE_DSV41 FLASHMLA_MEGA_ATTN_DSV41 B12X FLASH_ATTN_MLA FLASH_ATTN_MLA_SPARSE
    FLASH_ATTN_MLA_SPARSE_FA4 MINIMAX_M3_SPARSE CUTLASS_MSA TRITON_MSA STEP5_DSA NO_ATTENTION
    FLEX_ATTENTION HPC_ATTN ROCM_AITER_UNIFIED_ATTN CPU_ATTN CPU_MLA AMX_MLA TURBOQUANT ROCM_OCTAVE
    ULTRAQUANT CUSTOM""".split())
# AttentionConfig.__post_init__ reads these two as MiniMax-M3's sparse decode
# kernel choice and sets backend None (automatic selection for every dense
# layer): in an --attention-config mapping. --attention-backend assigns the
# member after the config is built, so there they stay explicit backends.
AUTO_ALIASES = ("CUTLASS_MSA", "TRITON_MSA")

_ALL = (FLASH_ATTN, TRITON_ATTN, TRITON_FLASH_ATTN, FLASHINFER, TRITON_FLASHINFER,
        FLEX_ATTENTION, CPU_ATTN, TURBOQUANT, *MLA_SPECS)
BACKENDS: dict[str, BackendSpec] = {
    name: spec for name in ENUM_ORDER for spec in _ALL if spec.name == name
}
assert tuple(BACKENDS) == ENUM_ORDER, sorted(set(ENUM_ORDER) ^ set(BACKENDS))
assert set(ENUM_ORDER) <= set(VLLM_ENUM_NAMES)


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
    found = table.get(name.upper())
    if found is not None:
        return found
    if name != name.strip() and name.strip().upper() in table:
        raise error(_padded(name, what))
    hint = closest(name, order)
    suggest = f"; did you mean {hint}?" if hint else ""
    raise error(f"unknown {what} {shown(name)}{suggest}; valid: {', '.join(order)}")


def _padded(name: str, what: str) -> str:
    return (f"unknown {what} {shown(name)}: vLLM upper-cases the name and looks it up as written; "
            "write it without the spaces around it")


def is_auto_alias(name: str | None) -> bool:
    """Whether vLLM's AttentionConfig.__post_init__ turns this backend into automatic selection."""
    return name is not None and name.upper() in AUTO_ALIASES


def get(name: str) -> BackendSpec:
    """The spec for ``name`` (case-insensitive, vLLM's enum spelling). A name
    outside vLLM's enum gets vLLM's refusal (with the closest name); one of
    the enum's members attn-select does not model says so."""
    upper = name.upper()  # vLLM: AttentionBackendEnum[value.upper()], no stripping
    found = BACKENDS.get(upper)
    if found is not None:
        return found
    if name != name.strip() and name.strip().upper() in VLLM_ENUM_NAMES:
        raise UnknownBackend(_padded(name, "attention backend"))
    if upper in VLLM_ENUM_NAMES:
        raise UnknownBackend(f"{upper} is a member of vLLM's AttentionBackendEnum that attn-select does not model "
                             "(on a CUDA GPU vLLM would import its class and run its own checks); choose one of "
                             f"{', '.join(ENUM_ORDER)}")
    hint = closest(name, ENUM_ORDER)
    suggest = f" (did you mean {hint}?)" if hint else ""
    raise UnknownBackend(f"Unknown attention backend: {shown(name)}. Valid options are: "
                         f"{', '.join(VLLM_ENUM_NAMES)}{suggest}")
