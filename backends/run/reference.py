"""The float32 reference every backend's output is compared with.

Computed per request from K/V gathered out of the paged cache through the
block table (so it reads exactly what the backends read), in float32:

- bottom-right causal alignment: the i-th of q_len new tokens sits at position
  ``seq_len - q_len + i`` and sees keys at positions <= that;
- sliding window W (vLLM's ``sliding_window``): keys at positions > pos - W;
- soft cap c: scores become ``c * tanh(s / c)`` after scaling;
- sinks: one learned logit per query head joins the softmax denominator and
  contributes no value (gpt-oss);
- GQA: query head h reads KV head ``h // (Hq / Hkv)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attn_select.backends.run.batch import Batch


@dataclass(frozen=True)
class AttnParams:
    """What changes the attention function (not the kernel): shared by all adapters."""

    num_heads: int
    num_kv_heads: int
    head_size: int
    head_size_v: int
    scale: float
    sliding_window: int | None = None  # tokens, None = full
    soft_cap: float | None = None
    has_sink: bool = False

    @property
    def group(self) -> int:
        return self.num_heads // self.num_kv_heads

    @property
    def window_left(self) -> int:
        """FlashInfer/FlashAttention convention: keys at pos - window_left .. pos; -1 = full."""
        return -1 if self.sliding_window is None else self.sliding_window - 1


def reference_attention(q: torch.Tensor, k_pages: torch.Tensor, v_pages: torch.Tensor, batch: Batch,
                        p: AttnParams, sinks: torch.Tensor | None = None) -> torch.Tensor:
    """float32 [T, Hq, Dv] output for ``q`` [T, Hq, D] against the paged cache.

    ``k_pages`` [num_pages, page_size, Hkv, D], ``v_pages`` [num_pages, page_size, Hkv, Dv]
    (views of a backend's cache, after the new tokens were written)."""
    out = torch.empty(q.shape[0], p.num_heads, p.head_size_v, dtype=torch.float32, device=q.device)
    qsl = batch.query_start_loc_cpu.tolist()
    for r in range(batch.num_requests):
        s = int(batch.seq_lens_cpu[r])
        a, b = qsl[r], qsl[r + 1]
        n_pages = -(-s // batch.page_size)
        pages = batch.block_table[r, :n_pages].long()
        k = k_pages[pages].reshape(-1, p.num_kv_heads, p.head_size)[:s].float()  # [S, Hkv, D]
        v = v_pages[pages].reshape(-1, p.num_kv_heads, p.head_size_v)[:s].float()
        k = k.repeat_interleave(p.group, dim=1)  # [S, Hq, D]
        v = v.repeat_interleave(p.group, dim=1)
        qr = q[a:b].float()  # [n, Hq, D]
        scores = torch.einsum("nhd,shd->hns", qr, k) * p.scale
        if p.soft_cap:
            scores = p.soft_cap * torch.tanh(scores / p.soft_cap)
        qpos = torch.arange(s - (b - a), s, device=q.device)[:, None]
        kpos = torch.arange(s, device=q.device)[None, :]
        visible = kpos <= qpos
        if p.sliding_window is not None:
            visible &= kpos > qpos - p.sliding_window
        scores = scores.masked_fill(~visible[None], float("-inf"))
        if sinks is not None:
            sink = sinks.float()[:, None, None].expand(-1, b - a, 1)
            probs = torch.softmax(torch.cat([scores, sink], dim=-1), dim=-1)[..., :-1]
        else:
            probs = torch.softmax(scores, dim=-1)
        out[a:b] = torch.einsum("hns,shd->nhd", probs, v)
    return out


def relative_error(out: torch.Tensor, ref: torch.Tensor) -> float:
    """||out - ref|| / ||ref|| over all elements; NaN/inf anywhere gives inf."""
    o = out.float()
    if not torch.isfinite(o).all():
        return float("inf")
    return float(torch.linalg.vector_norm(o - ref) / torch.linalg.vector_norm(ref).clamp_min(1e-30))


# Per-dtype tolerance on the relative error (bf16 operands land between 1e-3 and 1e-2).
TOLERANCE = {"float32": 2e-3, "float16": 5e-3, "bfloat16": 2e-2}


def tolerance(dtype_name: str, kv_cache_dtype: str = "auto") -> float:
    base = TOLERANCE.get(dtype_name, 2e-2)
    if kv_cache_dtype.startswith("fp8"):
        return max(base, 8e-2)
    return base
