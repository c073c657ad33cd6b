"""Where each key of a tile lies in a paged cache: one block-table read per
tile, per page or per key, whichever the tile and page sizes allow. Shared by
our Triton kernels (``triton_kernel.py``, ``mla_kernel.py``)."""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def key_pages(bt_row, t0, n_off, last, PAGE: tl.constexpr, BLOCK_N: tl.constexpr):
    """(physical page, slot in the page) of the keys ``t0 + n_off`` of a tile
    starting at key ``t0`` (tiles start at multiples of BLOCK_N). A tile
    within one page (PAGE a multiple of BLOCK_N): one block-table read, the
    page a scalar. A tile of whole pages (BLOCK_N a multiple of PAGE, e.g.
    page 16 under 64-key tiles): its BLOCK_N / PAGE entries as one short
    vector, each key picking its page from it. Otherwise one read per key.
    Pages are clamped to the one of ``last`` (the last key the caller reads)
    so every read stays in the request's block-table row."""
    if PAGE % BLOCK_N == 0:
        page = tl.load(bt_row + tl.minimum(t0, last) // PAGE).to(tl.int64)
        return page, t0 % PAGE + n_off
    elif BLOCK_N % PAGE == 0:
        NP: tl.constexpr = BLOCK_N // PAGE
        j = tl.arange(0, NP)
        pages = tl.load(bt_row + tl.minimum(t0 // PAGE + j, last // PAGE))
        # a select, not a reshape of [NP, PAGE] offsets: Triton 3.6 pipelines
        # no load whose addresses pass through a reshape
        mine = tl.sum(tl.where((n_off // PAGE)[:, None] == j[None, :], pages[None, :], 0), 1)
        return mine.to(tl.int64), n_off % PAGE
    else:
        pages = tl.load(bt_row + tl.minimum(t0 + n_off, last) // PAGE).to(tl.int64)
        return pages, (t0 + n_off) % PAGE
