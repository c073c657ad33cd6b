"""What differs between an MHA layer and an MLA layer in one checked step.

The runner's sequence is the same for both (alloc the backend's cache,
fill it, write the step's new tokens, build, run into a poisoned output,
compare with a float32 reference, then time); the tensors are not:

- MHA: per-head K and V, sinks, a [T, Hq, Dv] output, ``reference_attention``;
- MLA: one latent vector per token (kv_lora_rank + rope dims, one KV head,
  K and V the same memory), the absorbed query [T, H, rank + rope], a
  [T, H, rank] output, ``reference_mla_attention``.

Each kind also counts what one layer must read and compute, for the TB/s and
TFLOP/s a row reports.
"""

from __future__ import annotations

from typing import Any

import torch

from attn_select.backends.run.adapter import Adapter
from attn_select.backends.run.batch import Batch, random_inputs, write_new_tokens
from attn_select.backends.run.mla_check import random_mla_inputs, write_latents
from attn_select.backends.run.mla_reference import MLAParams, mla_flops, mla_kv_bytes, reference_mla_attention
from attn_select.backends.run.reference import AttnParams, reference_attention
from attn_select.selector.run_plan import GroupPlan


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


def layer_kind(g: GroupPlan) -> MHA | MLA:
    """The kernels' view of the group's layers (per-rank heads).

    MLA's softmax scale is ``qk_head_dim ** -0.5`` (nope + rope dims); vLLM
    also multiplies in the yarn mscale squared for DeepSeek's rope scaling,
    which the layer facts do not carry. The scale changes neither what is
    read nor the check (the reference uses the same one)."""
    a = g.attn
    if a.use_mla:
        scale = (a.qk_nope_head_dim + a.qk_rope_head_dim) ** -0.5
        return MLA(MLAParams(a.num_heads, a.kv_lora_rank, a.qk_rope_head_dim, scale))
    return MHA(AttnParams(
        num_heads=a.num_heads, num_kv_heads=a.num_kv_heads, head_size=a.head_size,
        head_size_v=a.head_size_v, scale=a.head_size ** -0.5, sliding_window=a.sliding_window,
        soft_cap=a.logits_soft_cap, has_sink=a.has_sink))
