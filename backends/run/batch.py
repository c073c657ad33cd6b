"""One engine step's batch, engine-neutral, plus a shuffled paged KV cache.

What a serving engine hands its attention backend for one forward step
(vLLM's ``CommonAttentionMetadata``, in our own words):

- ``query_start_loc``  int32 [B + 1]   token offsets of each request's new tokens
- ``seq_lens``         int32 [B]       tokens in the cache after this step (context + new)
- ``block_table``      int32 [B, P]    logical page -> physical page, per request
- ``slot_mapping``     int64 [T]       cache slot (page * page_size + offset) of each new token

Requests are ordered decodes first, then prefills, as vLLM's batch reorder
leaves them. Physical pages are a random permutation of the pool, so pages
of one request are neither contiguous nor in order: a backend that assumes
either gives a wrong answer.

torch is imported here; this module is only reached from ``attn-select run``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attn_select.selector.run_plan import Shape


@dataclass
class Batch:
    """Engine-neutral metadata of one step (see module docstring for shapes).
    ``*_cpu`` are host copies, as engines keep them for planning."""

    shape: Shape
    page_size: int
    num_pages: int  # pages in the pool (>= pages used)
    query_start_loc: torch.Tensor  # int32 [B + 1], device
    seq_lens: torch.Tensor  # int32 [B], device
    block_table: torch.Tensor  # int32 [B, P], device; unused entries point at page 0
    slot_mapping: torch.Tensor  # int64 [T], device
    query_start_loc_cpu: torch.Tensor  # int32 [B + 1]
    seq_lens_cpu: torch.Tensor  # int32 [B]
    block_table_cpu: torch.Tensor  # int32 [B, P]
    num_decodes: int  # requests with one new token, first in the batch
    num_decode_tokens: int

    @property
    def num_requests(self) -> int:
        return int(self.seq_lens_cpu.numel())

    @property
    def num_tokens(self) -> int:
        return int(self.query_start_loc_cpu[-1])

    @property
    def max_seq_len(self) -> int:
        return int(self.seq_lens_cpu.max())

    @property
    def max_query_len(self) -> int:
        q = self.query_start_loc_cpu
        return int((q[1:] - q[:-1]).max())

    @property
    def device(self) -> torch.device:
        return self.seq_lens.device


def make_batch(shape: Shape, page_size: int, device: torch.device | str, seed: int = 0,
               spare_pages: int = 0) -> Batch:
    """Block table over a shuffled page pool, ``slot_mapping`` for the new tokens.

    Every request gets ``ceil(seq_len / page_size)`` pages drawn from a random
    permutation of the pool; ``spare_pages`` unused pages are added to the pool
    so that the used pages are not simply the whole pool."""
    q_lens = [1] * shape.decodes + [shape.prefill_new] * shape.prefills
    ctx = [shape.decode_context] * shape.decodes + [shape.prefill_context] * shape.prefills
    return _paged_batch(shape, q_lens, ctx, page_size, device, seed, spare_pages)


def make_decode_batch(context_lens: list[int], page_size: int, device: torch.device | str, seed: int = 0,
                      spare_pages: int = 0) -> Batch:
    """Decode rows of the given cached lengths (one new token each, so ragged
    lengths), laid out as ``make_batch`` lays out one length."""
    shape = Shape("decode", decodes=len(context_lens), decode_context=max(context_lens))
    return _paged_batch(shape, [1] * len(context_lens), list(context_lens), page_size, device, seed, spare_pages)


def make_prefill_batch(q_lens: list[int], context_lens: list[int], page_size: int, device: torch.device | str,
                       seed: int = 0, spare_pages: int = 0) -> Batch:
    """Prefill rows of the given new and cached lengths (ragged chunks on
    ragged contexts), laid out as ``make_batch`` lays out one length."""
    if len(q_lens) != len(context_lens) or min(q_lens, default=0) < 1:
        raise ValueError("one new-token count (>= 1) per cached length")
    shape = Shape("prefill", prefills=len(q_lens), prefill_new=max(q_lens), prefill_context=max(context_lens))
    return _paged_batch(shape, list(q_lens), list(context_lens), page_size, device, seed, spare_pages)


def _paged_batch(shape: Shape, q_lens: list[int], ctx: list[int], page_size: int, device: torch.device | str,
                 seed: int, spare_pages: int) -> Batch:
    if page_size <= 0:
        raise ValueError("page size must be positive")
    g = torch.Generator().manual_seed(seed)
    seq = [c + n for c, n in zip(ctx, q_lens)]
    pages_per = [-(-s // page_size) for s in seq]
    used = sum(pages_per)
    num_pages = used + spare_pages + 1  # +1: page 0 stays a never-used pad page
    perm = torch.randperm(num_pages - 1, generator=g)[:used] + 1
    width = max(pages_per)
    bt = torch.zeros(len(seq), width, dtype=torch.int32)
    slots = []
    at = 0
    for i, (n_pages, s, n_new) in enumerate(zip(pages_per, seq, q_lens)):
        pages = perm[at:at + n_pages].to(torch.int32)
        at += n_pages
        bt[i, :n_pages] = pages
        pos = torch.arange(s - n_new, s)
        slots.append(pages[pos // page_size].to(torch.int64) * page_size + pos % page_size)
    qsl = torch.zeros(len(seq) + 1, dtype=torch.int32)
    qsl[1:] = torch.tensor(q_lens, dtype=torch.int32).cumsum(0)
    seq_t = torch.tensor(seq, dtype=torch.int32)
    slot_mapping = torch.cat(slots) if slots else torch.zeros(0, dtype=torch.int64)
    dev = torch.device(device)
    return Batch(
        shape=shape,
        page_size=page_size,
        num_pages=num_pages,
        query_start_loc=qsl.to(dev),
        seq_lens=seq_t.to(dev),
        block_table=bt.to(dev),
        slot_mapping=slot_mapping.to(dev),
        query_start_loc_cpu=qsl,
        seq_lens_cpu=seq_t,
        block_table_cpu=bt,
        num_decodes=shape.decodes,
        num_decode_tokens=shape.decodes,
    )


@dataclass
class StepInputs:
    """The per-layer tensors of one step: new tokens' Q/K/V and the model's sinks.

    - ``q``      [T, Hq, D]   activation dtype
    - ``k_new``  [T, Hkv, D]  activation dtype (written into the cache through slot_mapping)
    - ``v_new``  [T, Hkv, Dv]
    - ``sinks``  float32 [Hq] or None (gpt-oss learned sink logits)
    """

    q: torch.Tensor
    k_new: torch.Tensor
    v_new: torch.Tensor
    sinks: torch.Tensor | None


def random_inputs(batch: Batch, num_heads: int, num_kv_heads: int, head_size: int, head_size_v: int,
                  dtype: torch.dtype, has_sink: bool, generator: torch.Generator | None = None) -> StepInputs:
    """Fresh random Q/K/V for the new tokens (never zeros: they hide unwritten outputs)."""
    t, dev = batch.num_tokens, batch.device

    def rnd(*shape):
        return torch.randn(*shape, generator=generator, dtype=torch.float32, device="cpu").to(dev, dtype)

    sinks = None
    if has_sink:
        sinks = (torch.randn(num_heads, generator=generator) * 2.0).to(dev, torch.float32)
    return StepInputs(rnd(t, num_heads, head_size), rnd(t, num_kv_heads, head_size),
                      rnd(t, num_kv_heads, head_size_v), sinks)


def fill_random_(t: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """Fill a cache tensor with N(0, 1) values in its own dtype (in place)."""
    if t.element_size() == 1:  # fp8: torch draws no normals in it; draw in bf16, round once
        if t.is_cuda or generator is None:
            return t.copy_(torch.empty(t.shape, dtype=torch.bfloat16, device=t.device).normal_())
    elif t.is_cuda or generator is None:
        return t.normal_()
    return t.copy_(torch.randn(t.shape, generator=generator, dtype=torch.float32).to(t.dtype))


def write_new_tokens(k_pages: torch.Tensor, v_pages: torch.Tensor, batch: Batch, inputs: StepInputs) -> None:
    """Write the new tokens' K/V into the cache through ``slot_mapping``.

    ``k_pages``/``v_pages`` are [num_pages, page_size, Hkv, D] views of the
    backend's own cache tensor (any strides), so one writer serves every layout
    that keeps (token, head, dim) order inside a page."""
    page = batch.slot_mapping // batch.page_size
    off = batch.slot_mapping % batch.page_size
    k_pages[page, off] = inputs.k_new.to(k_pages.dtype)
    v_pages[page, off] = inputs.v_new.to(v_pages.dtype)


def poison_unread_slots(k_pages: torch.Tensor, v_pages: torch.Tensor, batch: Batch) -> None:
    """NaN in every K/V slot no request of ``batch`` reads (the stale slots of
    a request's last page, unused pages), through the backend's
    [num_pages, page_size, Hkv, D] views: a kernel's output must not see them."""
    keep = torch.zeros(batch.num_pages, batch.page_size, dtype=torch.bool)
    for r in range(batch.num_requests):
        pos = torch.arange(int(batch.seq_lens_cpu[r]))
        keep[batch.block_table_cpu[r, pos // batch.page_size].long(), pos % batch.page_size] = True
    keep = keep.to(k_pages.device)
    k_pages[~keep] = float("nan")
    v_pages[~keep] = float("nan")
