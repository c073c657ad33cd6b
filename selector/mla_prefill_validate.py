"""One MLA prefill backend, one query -> the reasons it is invalid (empty = valid).

Mirrors ``MLAPrefillBackend.validate_configuration``
(vllm/v1/attention/backends/mla/prefill/base.py) check for check, in its
order, with the subclasses' additions (TokenSpeed's install hint, AITER's
batch-invariance check), and the ``except ImportError`` around it in both
callers. The inputs are all in the ``PrefillQuery``; nothing is probed.
"""

from __future__ import annotations

from attn_select.backends.mla.prefill.spec import PrefillBackendSpec
from attn_select.selector import reasons as R
from attn_select.selector.mla_prefill_config import PrefillQuery


def supports_compute_capability(spec: PrefillBackendSpec, q: PrefillQuery) -> bool:
    # The CUDA platform always reports a capability, so the base class's
    # "device capability not available" branch is never taken here.
    return not spec.rocm_only and spec.capability(q.cap)


def is_available(spec: PrefillBackendSpec, q: PrefillQuery) -> bool:
    if not spec.available_on_cuda:
        return False
    return spec.requires is None or bool(getattr(q.kernels, spec.requires))


def supports_mla_dimensions(spec: PrefillBackendSpec, q: PrefillQuery) -> bool:
    return not spec.mla_dimensions or q.cfg.mla_dimensions in spec.mla_dimensions


def validate(spec: PrefillBackendSpec, q: PrefillQuery) -> list[str]:
    """The reasons ``spec`` cannot serve ``q``, in vLLM's order."""
    out: list[str] = []
    if not supports_compute_capability(spec, q):
        out.append(R.prefill_compute_capability(q.cap.major, q.cap.minor))
    if q.cfg.dtype not in spec.dtypes:
        out.append(R.prefill_dtype(q.cfg.dtype))
    if not is_available(spec, q):
        out.append(spec.unavailable_reason)
    if not supports_mla_dimensions(spec, q):
        listed = spec.mla_dimensions if spec.lists_supported_dimensions else ()
        out.append(R.prefill_mla_dimensions(q.cfg.mla_dimensions, listed))
    if q.batch_invariant and not spec.batch_invariance:
        out.append(R.BATCH_INVARIANCE)
    return out


def import_fails(spec: PrefillBackendSpec, q: PrefillQuery) -> bool:
    """Whether importing the backend's module raises ImportError here."""
    return spec.imports_flash_attn and not (q.kernels.fa2 or q.kernels.fa3)


def check(spec: PrefillBackendSpec, q: PrefillQuery) -> list[str]:
    """What vLLM records for one backend: ["ImportError"] when its class
    cannot be imported, else ``validate``."""
    return [R.PREFILL_IMPORT_ERROR] if import_fails(spec, q) else validate(spec, q)
