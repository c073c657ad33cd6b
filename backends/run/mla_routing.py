"""Which requests of a step an MLA backend's decode path gets, as vLLM's
MLA builders split them (``split_decodes_and_prefills`` in
vllm/v1/attention/backends/utils.py, called by ``MLACommonMetadataBuilder.build``
and ``SparseMLACommonMetadataBuilder.build`` with the builder's
``reorder_batch_threshold`` and, unless its query-length support is VARLEN,
``require_uniform``).

The batch is ordered decodes first, as vLLM's reorder leaves it; a request
counts as a decode when its new tokens are at most the threshold (with
``require_uniform``: when they equal the first request's). The rest go to the
MLA prefill backend (``forward_mha``).
"""

from __future__ import annotations

from attn_select.backends.run.adapter import RoutedElsewhere
from attn_select.backends.run.batch import Batch


def decode_split(batch: Batch, threshold: int, require_uniform: bool) -> int:
    """The number of leading requests the builder treats as decodes (no PCP:
    short extends count as decodes)."""
    qsl = batch.query_start_loc_cpu.tolist()
    q = [b - a for a, b in zip(qsl, qsl[1:])]
    n = len(q)
    if not q:
        return 0
    if max(q) <= threshold and (not require_uniform or threshold <= 1):
        return n
    if q[0] > threshold:
        return 0
    if require_uniform:
        if all(x == q[0] or x == 0 for x in q):
            return n  # a padded uniform batch: all decodes
        is_prefill = [x != q[0] and x != 0 for x in q]
    else:
        is_prefill = [x > threshold for x in q]
    return is_prefill.index(True) if any(is_prefill) else n


def require_all_decodes(batch: Batch, backend: str, threshold: int, require_uniform: bool) -> None:
    """Raise RoutedElsewhere unless the builder sends every request of ``batch``
    to the decode path (the only path an MLA decode adapter runs)."""
    decodes = decode_split(batch, threshold, require_uniform)
    if decodes == batch.num_requests:
        return
    alike = ", the same number in every request" if require_uniform and threshold > 1 else ""
    raise RoutedElsewhere(
        f"vLLM's {backend} builder sends {batch.num_requests - decodes} of these {batch.num_requests} "
        f"requests to the MLA prefill backend (its decode path takes at most {threshold} new "
        f"token{'s' if threshold != 1 else ''}{alike}; "
        "the MLA prefill row runs them)")
