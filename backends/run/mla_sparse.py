"""Sparse MLA (DeepSeek-V3.2's sparse attention, ``index_topk``) on the run
path: the indexer's top-k lists, their conversion to cache rows, and the
float32 reference restricted to them.

vLLM 0.33.0's layout (``SparseMLACommonImpl.forward_mqa``,
vllm/model_executor/layers/attention/sparse_mla_attention.py):

- the layer's indexer writes, per query token, ``index_topk`` int32
  *request-local* token positions into ``topk_indices_buffer``
  [num_tokens, topk]; -1 marks an unused slot (a sequence shorter than
  topk). A token selects only positions it may see (<= its own position), so
  causality lives in the lists, not in the kernels.
- per layer, ``triton_convert_req_index_to_global_index`` (sparse_utils.py)
  turns them into rows of the flat cache view ``flat_kv_row_view``:
  ``block_table[req, pos // page] * rows_per_block + pos % page``, the valid
  rows compacted to the front (-1 after them), with each token's count of
  valid rows (``return_valid_counts``).

Here the lists are random (each query token draws ``min(topk, visible)``
distinct visible positions and scatters them among its ``topk`` slots, -1
elsewhere, so the compaction is exercised), drawn fresh with every check's
inputs. The conversion to rows is ours, in torch, once per step with the
inputs: vLLM converts per layer in a Triton kernel, so the rows' per-layer
time is the attention kernel alone (plus the query copy vLLM makes there).
The reference reads the request-local lists through the block table itself,
not the converted rows, so a wrong conversion shows as a wrong result.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attn_select.backends.run.batch import Batch
from attn_select.backends.run.mla_check import random_mla_inputs
from attn_select.backends.run.mla_reference import MLAParams, dequantize_latent


@dataclass
class SparseMLAInputs:
    """One sparse MLA layer's per-step tensors."""

    q: torch.Tensor  # [T, H, rank + rope], the absorbed query
    latent_new: torch.Tensor  # [T, rank + rope], the new tokens' latents
    topk: torch.Tensor  # int32 [T, topk], request-local positions, -1 unused (the indexer's output)
    rows: torch.Tensor  # int32 [T, topk], cache rows, valid ones first, -1 after
    counts: torch.Tensor  # int32 [T], valid rows per token


def token_positions(batch: Batch) -> tuple[list[int], list[int]]:
    """(request, position in its sequence) of every new token."""
    qsl = batch.query_start_loc_cpu.tolist()
    req, pos = [], []
    for r, s in enumerate(batch.seq_lens_cpu.tolist()):
        n = qsl[r + 1] - qsl[r]
        req += [r] * n
        pos += list(range(s - n, s))
    return req, pos


def random_topk(batch: Batch, topk: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """int32 [T, topk] request-local positions: each token's ``min(topk,
    position + 1)`` distinct visible positions in random slots, -1 elsewhere."""
    _, pos = token_positions(batch)
    out = torch.full((len(pos), topk), -1, dtype=torch.int32)
    for t, p in enumerate(pos):
        k = min(topk, p + 1)
        chosen = torch.randperm(p + 1, generator=generator)[:k].to(torch.int32)
        slots = torch.randperm(topk, generator=generator)[:k]
        out[t, slots] = chosen
    return out.to(batch.device)


def topk_to_rows(batch: Batch, topk: torch.Tensor, rows_per_block: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """(rows, counts): what ``triton_convert_req_index_to_global_index``
    returns with ``return_valid_counts`` for a cache whose blocks are
    ``rows_per_block`` rows apart (a contiguous cache: the page size)."""
    stride = rows_per_block or batch.page_size
    req, _ = token_positions(batch)
    req_t = torch.tensor(req, dtype=torch.long, device=topk.device)
    valid = topk >= 0
    pos = topk.clamp_min(0).long()
    pages = batch.block_table.long()[req_t[:, None], pos // batch.page_size]
    rows = torch.where(valid, pages * stride + pos % batch.page_size, torch.full_like(pos, -1))
    order = torch.argsort((~valid).to(torch.int8), dim=1, stable=True)  # valid first, in their order
    return rows.gather(1, order).to(torch.int32), valid.sum(1).to(torch.int32)


def random_sparse_inputs(batch: Batch, p: MLAParams, dtype: torch.dtype,
                         generator: torch.Generator | None = None) -> SparseMLAInputs:
    if p.topk is None:
        raise ValueError("sparse MLA inputs need the layer's index_topk")
    base = random_mla_inputs(batch, p, dtype, generator)
    topk = random_topk(batch, p.topk, generator)
    rows, counts = topk_to_rows(batch, topk)
    return SparseMLAInputs(base.q, base.latent_new, topk, rows, counts)


def reference_sparse_mla_attention(q: torch.Tensor, latent_pages: torch.Tensor, batch: Batch, p: MLAParams,
                                   topk: torch.Tensor) -> torch.Tensor:
    """float32 [T, H, rank]: each token attends to exactly the positions of its
    top-k list (read through the block table), nothing else."""
    lat = latent_pages.reshape(latent_pages.shape[0], latent_pages.shape[1], -1)
    req, _ = token_positions(batch)
    bt = batch.block_table.long()
    out = torch.empty(q.shape[0], p.num_heads, p.kv_lora_rank, dtype=torch.float32, device=q.device)
    for t, r in enumerate(req):
        idx = topk[t][topk[t] >= 0].long()
        kv = dequantize_latent(lat[bt[r, idx // batch.page_size], idx % batch.page_size], p.kv_scale)  # [k, D]
        probs = torch.softmax(q[t].float() @ kv.T * p.scale, dim=-1)  # [H, k]
        out[t] = probs @ kv[:, :p.kv_lora_rank]
    return out


def selected_tokens(batch: Batch, topk: int) -> int:
    """Latents all of the step's tokens select together: min(topk, visible) each."""
    _, pos = token_positions(batch)
    return sum(min(topk, x + 1) for x in pos)


def sparse_kv_bytes(batch: Batch, p: MLAParams, elem: int) -> int:
    """Cache bytes one sparse layer reads: every token's selected latents."""
    return selected_tokens(batch, p.topk or 0) * p.latent_dim * elem


def sparse_flops(batch: Batch, p: MLAParams) -> int:
    """Per query head and selected key: 2 x (rank + rope) for the score, 2 x rank for the value."""
    return selected_tokens(batch, p.topk or 0) * p.num_heads * (2 * p.latent_dim + 2 * p.kv_lora_rank)
