"""FLEX_ATTENTION run adapter: torch ``flex_attention`` over the paged cache.

Our own mapping (not torch's experimental paged module): the whole page pool
is one long KV sequence ``[1, Hkv, num_pages * page_size, D]`` (a strided
view of the cache, no copy), and a block mask whose KV block is exactly one
page tells the kernel which pages each query block may touch:

- queries are laid out request by request, each request padded to a multiple
  of ``Q_BLOCK`` rows, so every query block belongs to one request;
- ``kv_indices`` of a query block = that request's pages from the block table
  (only those up to the block's last visible position);
- ``mask_mod`` maps a physical KV index back to (request, logical position)
  through the inverse page table and applies same-request, causal
  (bottom-right) and sliding-window tests; ``score_mod`` applies the soft cap;
- sinks: flex returns the log-sum-exp, and ``out * sigmoid(lse - sink)`` is
  exactly softmax with one extra zero-value logit.

Cache layout: [2, num_pages, page_size, Hkv, D] (vLLM's FlexAttention layout).
On CUDA the kernel is ``torch.compile``d (its compile is the JIT time); on
CPU flex runs eagerly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from attn_select.backends.run.adapter import HostStaging, SeparateKVAdapter, Unsupported
from attn_select.backends.run.batch import Batch

Q_BLOCK = 16
# flex's Triton template computes K/V offsets in int32 (vllm-project/vllm#50427): past this many
# elements in one layer's cache it reads out of bounds (a crash, or a silently wrong output)
INT32_OFFSETS = 2**31

_compiled: dict[str, Any] = {}


def _flex():
    from torch.nn.attention.flex_attention import flex_attention

    return flex_attention


def _compiled_flex():
    if "flex" not in _compiled:
        import torch._dynamo

        torch._dynamo.config.cache_size_limit = max(torch._dynamo.config.cache_size_limit, 64)
        if hasattr(torch._dynamo.config, "recompile_limit"):
            torch._dynamo.config.recompile_limit = max(torch._dynamo.config.recompile_limit, 64)
        _compiled["flex"] = torch.compile(_flex(), fullgraph=True, dynamic=False)
    return _compiled["flex"]


@dataclass
class FlexPlan:
    """Per-step metadata.

    - ``dest``      int32 [T]     padded row of each new token
    - ``row_req``   int32 [Tpad]  request of each padded row (-1: padding)
    - ``row_pos``   int32 [Tpad]  absolute position of each padded row (-1: padding)
    - ``page_req``  int32 [num_pages]  request owning each physical page (-1: unused)
    - ``page_lpos`` int32 [num_pages]  first logical position held by each physical page
    - ``block_mask``: BlockMask with BLOCK_SIZE (Q_BLOCK, page_size)
    """

    batch: Batch
    num_rows: int
    dest: torch.Tensor
    row_req: torch.Tensor
    row_pos: torch.Tensor
    page_req: torch.Tensor
    page_lpos: torch.Tensor
    block_mask: Any


class FlexAttentionAdapter(SeparateKVAdapter):
    name = "FLEX_ATTENTION"

    def __init__(self, env, p, row=None):
        super().__init__(env, p, row)
        self.staging = HostStaging()

    def unavailable(self) -> str | None:
        try:
            from torch.nn.attention.flex_attention import BlockMask, flex_attention  # noqa: F401
        except Exception as e:
            return f"torch flex_attention not importable ({type(e).__name__})"
        return None


    def build(self, batch: Batch) -> FlexPlan:
        from torch.nn.attention.flex_attention import BlockMask

        p = self.p
        ps = batch.page_size
        # vLLM 0.33.0's flex layout interleaves K and V per token (LBNHC), so one token spans both
        elems = batch.num_pages * ps * p.num_kv_heads * (p.head_size + p.head_size_v)
        if elems >= INT32_OFFSETS:
            raise Unsupported(f"a cache of {batch.num_pages} pages x {ps} tokens x {p.num_kv_heads} KV heads x "
                              f"{p.head_size + p.head_size_v} is {elems:,} elements, past the 2^31 that flex's "
                              "int32 K/V offsets reach (vllm-project/vllm#50427: a crash or a wrong output)")
        qsl = batch.query_start_loc_cpu.to(torch.int64)
        q_lens = qsl[1:] - qsl[:-1]
        seq = batch.seq_lens_cpu.to(torch.int64)
        padded = (q_lens + Q_BLOCK - 1) // Q_BLOCK * Q_BLOCK
        row_start = torch.cumsum(padded, 0) - padded
        n_rows = int(padded.sum())
        B = len(q_lens)
        tok_req = torch.repeat_interleave(torch.arange(B), q_lens)
        tok_in_req = torch.arange(int(q_lens.sum())) - qsl[:-1][tok_req]
        dest = row_start[tok_req] + tok_in_req
        row_req = torch.full((n_rows,), -1, dtype=torch.int32)
        row_pos = torch.full((n_rows,), -1, dtype=torch.int32)
        row_req[dest] = tok_req.to(torch.int32)
        row_pos[dest] = (seq[tok_req] - q_lens[tok_req] + tok_in_req).to(torch.int32)

        n_pages = (seq + ps - 1) // ps
        bt = batch.block_table_cpu.to(torch.int64)
        page_req = torch.full((batch.num_pages,), -1, dtype=torch.int32)
        page_lpos = torch.zeros(batch.num_pages, dtype=torch.int32)
        used = torch.arange(bt.shape[1])[None, :] < n_pages[:, None]
        page_req[bt[used]] = torch.arange(B)[:, None].expand_as(bt)[used].to(torch.int32)
        page_lpos[bt[used]] = (torch.arange(bt.shape[1])[None, :].expand_as(bt)[used] * ps).to(torch.int32)

        # Query blocks: each belongs to one request; it may read that request's pages
        # up to the one holding its last query position.
        nqb_req = padded // Q_BLOCK
        qb_req = torch.repeat_interleave(torch.arange(B), nqb_req)
        qb_idx = torch.arange(int(nqb_req.sum())) - (torch.cumsum(nqb_req, 0) - nqb_req)[qb_req]
        last_pos = (seq - q_lens)[qb_req] + torch.minimum((qb_idx + 1) * Q_BLOCK, q_lens[qb_req]) - 1
        kv_num = (last_pos // ps + 1).to(torch.int32)
        # [nqb, num_pages]: torch sizes the KV-block axis from this width; entries past kv_num are ignored
        kv_idx = torch.zeros(len(qb_req), batch.num_pages, dtype=torch.int32)
        kv_idx[:, : bt.shape[1]] = bt[qb_req].to(torch.int32)

        row_req_d, row_pos_d, page_req_d, page_lpos_d, kv_num_d, kv_idx_d, dest_d = self.staging.upload(
            [row_req, row_pos, page_req, page_lpos, kv_num, kv_idx, dest], batch.device)
        window = p.sliding_window

        def mask_mod(b, h, q_idx, kv_idx):
            page = kv_idx // ps
            lpos = page_lpos_d[page] + kv_idx % ps
            qpos = row_pos_d[q_idx]
            ok = (page_req_d[page] == row_req_d[q_idx]) & (lpos <= qpos)
            if window is not None:
                ok = ok & (lpos > qpos - window)
            return ok

        args = dict(BLOCK_SIZE=(Q_BLOCK, ps), mask_mod=mask_mod, seq_lengths=(n_rows, batch.num_pages * ps))
        try:  # forward only: skip the transposed (backward) block lists where torch allows it
            block_mask = BlockMask.from_kv_blocks(kv_num_d[None, None], kv_idx_d[None, None],
                                                  compute_q_blocks=False, **args)
        except TypeError:
            block_mask = BlockMask.from_kv_blocks(kv_num_d[None, None], kv_idx_d[None, None], **args)
        return FlexPlan(batch, n_rows, dest_d, row_req_d, row_pos_d, page_req_d, page_lpos_d, block_mask)

    def run(self, plan: FlexPlan, q: torch.Tensor, cache: torch.Tensor, sinks: torch.Tensor | None,
            out: torch.Tensor) -> None:
        p = self.p
        ps = plan.batch.page_size
        n_kv = plan.batch.num_pages * ps
        # [1, Hkv, num_pages * page_size, D] views of the pool, no copy
        k = cache[0].view(n_kv, p.num_kv_heads, p.head_size).permute(1, 0, 2).unsqueeze(0)
        v = cache[1].view(n_kv, p.num_kv_heads, p.head_size_v).permute(1, 0, 2).unsqueeze(0)
        if k.dtype != q.dtype:
            k, v = k.to(q.dtype), v.to(q.dtype)
        qp = q.new_zeros(plan.num_rows, p.num_heads, p.head_size)
        qp[plan.dest] = q
        qp = qp.permute(1, 0, 2).unsqueeze(0)  # [1, Hq, Tpad, D]
        cap = p.soft_cap
        score_mod = None
        if cap:
            def score_mod(score, b, h, q_idx, kv_idx):
                return cap * torch.tanh(score / cap)

        fn = _compiled_flex() if q.is_cuda else _flex()
        kwargs: dict[str, Any] = dict(score_mod=score_mod, block_mask=plan.block_mask, scale=p.scale,
                                      enable_gqa=p.num_heads != p.num_kv_heads)
        if q.is_cuda:
            kwargs["kernel_options"] = {"FORCE_USE_FLEX_ATTENTION": True, "BLOCK_M": Q_BLOCK, "BLOCK_N": ps}
        if sinks is not None:
            res, lse = _with_lse(fn, qp, k, v, kwargs)
            res = res * torch.sigmoid(lse.float() - sinks.float()[None, :, None]).unsqueeze(-1).to(res.dtype)
        else:
            res = fn(qp, k, v, **kwargs)
        out.copy_(res[0].permute(1, 0, 2)[plan.dest])

    def kernel_name(self, plan: FlexPlan) -> str:  # noqa: D102
        mode = "torch.compile" if plan.batch.device.type == "cuda" else "eager"
        return f"flex_attention ({mode}, block mask {Q_BLOCK}x{plan.batch.page_size})"


def _with_lse(fn, q, k, v, kwargs):
    """flex_attention's output and natural-log LSE (AuxRequest where torch has it)."""
    try:
        from torch.nn.attention.flex_attention import AuxRequest
    except ImportError:
        return fn(q, k, v, return_lse=True, **kwargs)
    res, aux = fn(q, k, v, return_aux=AuxRequest(lse=True), **kwargs)
    return res, aux.lse
