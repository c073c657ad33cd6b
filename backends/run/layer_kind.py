"""What differs between an MHA layer and an MLA layer in one checked step.

The runner's sequence is the same for both (alloc the backend's cache,
fill it, write the step's new tokens, build, run into a poisoned output,
compare with a float32 reference, then time); the tensors are not:

- MHA: per-head K and V, sinks, a [T, Hq, Dv] output, ``reference_attention``;
- MLA: one latent vector per token (kv_lora_rank + rope dims, one KV head,
  K and V the same memory), the absorbed query [T, H, rank + rope], a
  [T, H, rank] output, ``reference_mla_attention``;
- sparse MLA (``attn.use_sparse``, DeepSeek-V3.2): the same, plus each
  token's top-k list (random, vLLM's request-local layout) and its cache
  rows, and a reference restricted to the listed tokens;
- the MLA prefill row: the prefill requests' up-projected attention
  (q/k nope + rope, v ``v_head_dim``) with a random ``kv_b_proj`` weight, a
  [Tp, H, v] output, ``reference_mla_prefill``.

Each kind also counts what one layer must read and compute, for the TB/s and
TFLOP/s a row reports.
"""

from __future__ import annotations

from typing import Any

import torch

from attn_select.backends.run.adapter import Adapter
from attn_select.backends.run.batch import Batch, random_inputs, write_new_tokens
from attn_select.backends.run.mla_check import random_mla_inputs, write_latents
from attn_select.backends.run.mla_prefill_reference import (
    prefill_context_tokens, prefill_flops, random_prefill_inputs, reference_mla_prefill,
)
from attn_select.backends.run.mla_reference import MLAParams, mla_flops, mla_kv_bytes, reference_mla_attention
from attn_select.backends.run.mla_sparse import (
    random_sparse_inputs, reference_sparse_mla_attention, sparse_flops, sparse_kv_bytes,
)
from attn_select.backends.run.reference import AttnParams, reference_attention
from attn_select.selector.run_plan import MLA_PREFILL, GroupPlan, RowPlan


def _visible_keys(batch: Batch, window: int | None) -> list[int]:
    """Per query token, the keys it attends to (bottom-right causal, window-limited)."""
    qsl = batch.query_start_loc_cpu.tolist()
    out = []
    for r, s in enumerate(batch.seq_lens_cpu.tolist()):
        n = qsl[r + 1] - qsl[r]
        for i in range(n):
            keys = s - n + 1 + i
            out.append(min(keys, window) if window is not None else keys)
    return out


class MHA:
    """Multi-head (and grouped-query) attention over separate K and V."""

    def __init__(self, p: AttnParams):
        self.p = p

    def inputs(self, batch: Batch, dtype: torch.dtype, gen: torch.Generator | None) -> Any:
        p = self.p
        return random_inputs(batch, p.num_heads, p.num_kv_heads, p.head_size, p.head_size_v, dtype, p.has_sink, gen)

    def write(self, adapter: Adapter, cache: Any, batch: Batch, inp: Any) -> None:
        k, v = adapter.kv_views(cache)
        write_new_tokens(k, v, batch, inp)

    def output(self, batch: Batch, dtype: torch.dtype, device: torch.device, fill: float) -> torch.Tensor:
        return torch.full((batch.num_tokens, self.p.num_heads, self.p.head_size_v), fill, dtype=dtype, device=device)

    def run(self, adapter: Adapter, plan: Any, inp: Any, cache: Any, out: torch.Tensor) -> None:
        adapter.run(plan, inp.q, cache, inp.sinks, out)

    def reference(self, adapter: Adapter, cache: Any, batch: Batch, inp: Any) -> torch.Tensor:
        k, v = adapter.kv_views(cache)
        return reference_attention(inp.q, k, v, batch, self.p, inp.sinks)

    def layer_bytes(self, batch: Batch, elem: int) -> int:
        """One layer's whole cache (every page of the pool)."""
        p = self.p
        return batch.num_pages * batch.page_size * p.num_kv_heads * (p.head_size + p.head_size_v) * elem

    def kv_bytes(self, batch: Batch, elem: int) -> int:
        """KV bytes one layer must read: each request's visible keys (window-limited), K and V."""
        p = self.p
        seq = batch.seq_lens_cpu.to(torch.int64)
        qsl = batch.query_start_loc_cpu.to(torch.int64)
        q = qsl[1:] - qsl[:-1]
        vis = seq if p.sliding_window is None else torch.minimum(seq, q + p.sliding_window - 1)
        return int(vis.sum()) * p.num_kv_heads * (p.head_size + p.head_size_v) * elem

    def flops(self, batch: Batch) -> int:
        """QK and PV tensor FLOPs: per query head and visible key, 2 x D + 2 x Dv."""
        p = self.p
        return sum(_visible_keys(batch, p.sliding_window)) * p.num_heads * 2 * (p.head_size + p.head_size_v)


class MLA:
    """Multi-head latent attention in its absorbed form (vLLM's MLA decode)."""

    def __init__(self, p: MLAParams):
        self.p = p

    def inputs(self, batch: Batch, dtype: torch.dtype, gen: torch.Generator | None) -> Any:
        return random_mla_inputs(batch, self.p, dtype, gen)

    def write(self, adapter: Adapter, cache: Any, batch: Batch, inp: Any) -> None:
        write_latents(cache, batch, inp.latent_new, self.p.kv_scale)

    def output(self, batch: Batch, dtype: torch.dtype, device: torch.device, fill: float) -> torch.Tensor:
        return torch.full((batch.num_tokens, self.p.num_heads, self.p.kv_lora_rank), fill, dtype=dtype, device=device)

    def run(self, adapter: Adapter, plan: Any, inp: Any, cache: Any, out: torch.Tensor) -> None:
        adapter.run(plan, inp.q, cache, None, out)

    def reference(self, adapter: Adapter, cache: Any, batch: Batch, inp: Any) -> torch.Tensor:
        return reference_mla_attention(inp.q, cache, batch, self.p)

    def layer_bytes(self, batch: Batch, elem: int) -> int:
        return batch.num_pages * batch.page_size * self.p.latent_dim * elem

    def kv_bytes(self, batch: Batch, elem: int) -> int:
        return mla_kv_bytes(batch, self.p, elem)

    def flops(self, batch: Batch) -> int:
        return mla_flops(batch, self.p)


class MLASparse(MLA):
    """Sparse MLA: each token attends to its own top-k list of cached tokens."""

    def inputs(self, batch: Batch, dtype: torch.dtype, gen: torch.Generator | None) -> Any:
        return random_sparse_inputs(batch, self.p, dtype, gen)

    def run(self, adapter: Adapter, plan: Any, inp: Any, cache: Any, out: torch.Tensor) -> None:
        adapter.run(plan, inp.q, cache, None, out, rows=inp.rows, counts=inp.counts)

    def reference(self, adapter: Adapter, cache: Any, batch: Batch, inp: Any) -> torch.Tensor:
        return reference_sparse_mla_attention(inp.q, cache, batch, self.p, inp.topk)

    def kv_bytes(self, batch: Batch, elem: int) -> int:
        return sparse_kv_bytes(batch, self.p, elem)

    def flops(self, batch: Batch) -> int:
        return sparse_flops(batch, self.p)


class MLAPrefill(MLA):
    """The prefill requests of an MLA layer, as vLLM's MLA prefill backend runs them."""

    def inputs(self, batch: Batch, dtype: torch.dtype, gen: torch.Generator | None) -> Any:
        return random_prefill_inputs(batch, self.p, dtype, gen)

    def output(self, batch: Batch, dtype: torch.dtype, device: torch.device, fill: float) -> torch.Tensor:
        tokens = batch.num_tokens - batch.num_decode_tokens
        return torch.full((tokens, self.p.num_heads, self.p.v_head_dim), fill, dtype=dtype, device=device)

    def run(self, adapter: Adapter, plan: Any, inp: Any, cache: Any, out: torch.Tensor) -> None:
        adapter.run(plan, inp.q, cache, None, out, latent_new=inp.prefill_latents(plan.batch), w_kv_b=inp.w_kv_b)

    def reference(self, adapter: Adapter, cache: Any, batch: Batch, inp: Any) -> torch.Tensor:
        return reference_mla_prefill(inp, cache, batch, self.p)

    def kv_bytes(self, batch: Batch, elem: int) -> int:
        """The cached context the prefill gathers (the new tokens come from activations)."""
        return prefill_context_tokens(batch) * self.p.latent_dim * elem

    def flops(self, batch: Batch) -> int:
        return prefill_flops(batch, self.p)


def layer_kind(g: GroupPlan, row: RowPlan | None = None) -> MHA | MLA:
    """The kernels' view of the group's layers (per-rank heads), for ``row``.

    MLA's softmax scale is ``qk_head_dim ** -0.5`` (nope + rope dims); vLLM
    also multiplies in the yarn mscale squared for DeepSeek's rope scaling,
    which the layer facts do not carry. The scale changes neither what is
    read nor the check (the reference uses the same one). The MLA prefill
    runs with the same scale (vLLM gives its prefill backend the layer's)."""
    a = g.attn
    if a.use_mla:
        scale = (a.qk_nope_head_dim + a.qk_rope_head_dim) ** -0.5
        p = MLAParams(a.num_heads, a.kv_lora_rank, a.qk_rope_head_dim, scale, qk_nope_head_dim=a.qk_nope_head_dim,
                      v_head_dim=a.v_head_dim, topk=g.index_topk if a.use_sparse else None)
        if row is not None and row.backend == MLA_PREFILL:
            return MLAPrefill(p)
        return MLASparse(p) if a.use_sparse else MLA(p)
    return MHA(AttnParams(
        num_heads=a.num_heads, num_kv_heads=a.num_kv_heads, head_size=a.head_size,
        head_size_v=a.head_size_v, scale=a.head_size ** -0.5, sliding_window=a.sliding_window,
        soft_cap=a.logits_soft_cap, has_sink=a.has_sink))
