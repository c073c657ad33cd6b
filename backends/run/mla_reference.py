"""The float32 reference for MLA attention in its latent (absorbed) form.

An MLA layer caches one latent vector per token: ``kv_lora_rank`` dims of
compressed KV (``kv_c``) followed by ``qk_rope_head_dim`` rotary dims
(``k_pe``), one KV head shared by every query head. With the up-projections
absorbed into the query and the output (what vLLM's MLA decode path runs),
attention over the cache is plain MQA in which

- the key of a token is its whole latent vector (rank + rope dims),
- the value of a token is its first ``kv_lora_rank`` dims (the same memory),
- the query is the absorbed query [T, H, rank + rope],
- the output is [T, H, rank] (the up-projection to v_head_dim comes after).

An fp8 cache holds ``latent / kv_scale`` (vLLM's per-tensor ``layer._k_scale``,
used for K and V alike), so the reference dequantizes with that scale.

Causal alignment is bottom-right, as in ``reference.py``: the i-th of q_len
new tokens sits at ``seq_len - q_len + i`` and sees keys at positions <= that
(decode: q_len = 1 sees the whole sequence).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attn_select.backends.run.batch import Batch


@dataclass(frozen=True)
class MLAParams:
    """What changes an MLA layer's latent attention (shared by every MLA adapter).

    ``num_heads`` is per rank (DeepSeek-V3: 128 at tp 1, 16 at tp 8);
    ``scale`` is the softmax scale the model gives its MLA layer (vLLM:
    qk_head_dim ** -0.5, times the yarn mscale squared when rope scaling has
    ``mscale_all_dim``); ``kv_scale`` is the per-tensor fp8 cache scale
    (1.0 unless the checkpoint ships KV scales). ``qk_nope_head_dim`` and
    ``v_head_dim`` are the up-projected head sizes the MLA prefill runs with
    (DeepSeek-V3: 128 and 128, so q/k 192 and v 128); ``topk`` is a sparse
    layer's ``index_topk`` (DeepSeek-V3.2: 2048), None for dense MLA."""

    num_heads: int
    kv_lora_rank: int
    qk_rope_head_dim: int
    scale: float
    kv_scale: float = 1.0
    qk_nope_head_dim: int = 0
    v_head_dim: int = 0
    topk: int | None = None

    @property
    def latent_dim(self) -> int:
        """Dims per cached token (and per absorbed query head): 576 for DeepSeek-V3."""
        return self.kv_lora_rank + self.qk_rope_head_dim

    @property
    def num_kv_heads(self) -> int:
        return 1

    @property
    def head_size(self) -> int:
        return self.latent_dim

    @property
    def head_size_v(self) -> int:
        return self.kv_lora_rank


def dequantize_latent(latent: torch.Tensor, kv_scale: float) -> torch.Tensor:
    """float32 view of cached latents: fp8 values times the scale, others as they are."""
    f = latent.float()
    return f * kv_scale if latent.element_size() == 1 else f


def reference_mla_attention(q: torch.Tensor, latent_pages: torch.Tensor, batch: Batch,
                            p: MLAParams) -> torch.Tensor:
    """float32 [T, H, kv_lora_rank] for the absorbed query ``q`` [T, H, rank + rope].

    ``latent_pages`` is [num_pages, page_size, rank + rope] (or with a head dim
    of 1 before the last), read through the block table, so shuffled pages are
    read exactly where the kernels read them."""
    lat = latent_pages.reshape(latent_pages.shape[0], latent_pages.shape[1], -1)
    if lat.shape[-1] != p.latent_dim:
        raise ValueError(f"latent cache has {lat.shape[-1]} dims per token, expected {p.latent_dim}")
    out = torch.empty(q.shape[0], p.num_heads, p.kv_lora_rank, dtype=torch.float32, device=q.device)
    qsl = batch.query_start_loc_cpu.tolist()
    for r in range(batch.num_requests):
        s = int(batch.seq_lens_cpu[r])
        a, b = qsl[r], qsl[r + 1]
        pages = batch.block_table[r, :-(-s // batch.page_size)].long()
        kv = dequantize_latent(lat[pages].reshape(-1, p.latent_dim)[:s], p.kv_scale)  # [S, rank + rope]
        scores = torch.einsum("nhd,sd->hns", q[a:b].float(), kv) * p.scale
        qpos = torch.arange(s - (b - a), s, device=q.device)[:, None]
        kpos = torch.arange(s, device=q.device)[None, :]
        scores = scores.masked_fill(~(kpos <= qpos)[None], float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        out[a:b] = torch.einsum("hns,sd->nhd", probs, kv[:, :p.kv_lora_rank])
    return out


def mla_kv_bytes(batch: Batch, p: MLAParams, elem: int) -> int:
    """Cache bytes one MLA layer must read: every visible token's latent vector, once
    (K and V are the same memory: rank + rope dims, not K plus V)."""
    return int(batch.seq_lens_cpu.to(torch.int64).sum()) * p.latent_dim * elem


def mla_flops(batch: Batch, p: MLAParams) -> int:
    """Tensor FLOPs of one MLA layer's attention (decode: every query sees its whole
    sequence): per query head and visible key, 2 x (rank + rope) for the score and
    2 x rank for the value."""
    qsl = batch.query_start_loc_cpu.tolist()
    seq = batch.seq_lens_cpu.tolist()
    pairs = 0
    for r, s in enumerate(seq):
        n = qsl[r + 1] - qsl[r]
        pairs += n * s - n * (n - 1) // 2  # causal: token i of n sees s - n + 1 + i keys
    return pairs * p.num_heads * (2 * p.latent_dim + 2 * p.kv_lora_rank)
