"""MLA prefill as vLLM 0.33.0 computes it (``MLACommonBaseImpl.forward_mha``,
vllm/model_executor/layers/attention/mla_attention.py), the pieces that are
ours: the inputs, the context-chunk plan, the log-sum-exp merge, and the
float32 reference.

Prefill tokens do not take the absorbed path. Per layer vLLM

1. up-projects the new tokens' latents with ``kv_b_proj``:
   kv_c [n, rank] -> k_nope, v [n, H, nope], [n, H, v]; k = k_nope ++ k_pe
   (the rope part shared by every head): q/k of nope + rope dims (192 for
   DeepSeek-V3) and v of ``v_head_dim`` (128);
2. runs the new tokens causally against themselves (``run_prefill_new_tokens``:
   varlen, cu_seqlens_q = cu_seqlens_k = the prefills' query_start_loc), with
   the log-sum-exp when there is cached context;
3. for each context chunk (the cached tokens, packed into a workspace of at
   most ``chunked_prefill_workspace_size`` rows): gathers the chunk's latents
   from the paged cache (dequantizing fp8 with the layer's k scale),
   up-projects them the same way and runs the chunk's queries against them
   unmasked (``run_prefill_context_chunk``), returning the log-sum-exp;
4. merges the context partials and then the new-token partial by their
   log-sum-exp (``merge_attn_states``).

What is checked: random N(0, 1) latents in the cache and for the new
tokens, a random ``kv_b_proj`` weight (the per-rank slice, [rank, H x (nope
+ v)], N(0, 1 / rank) so that k and v are N(0, 1)), and a random query of
nope + rope dims. The reference up-projects every latent of each prefill
sequence in float32 and runs one dense causal attention over the whole
sequence, so the chunk plan, the gathers through the block table, the
varlen offsets and the merge must all be right for the row to pass.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attn_select.backends.run.batch import Batch
from attn_select.backends.run.mla_reference import MLAParams, dequantize_latent

# MLACommonMetadataBuilder.determine_chunked_prefill_workspace_size:
# min(max(8 x max_model_len, 4 x max_num_seqs x block_size), 64 K), rounded up
# to the block size. Every model this runs (DeepSeek-V3/V3.2, Kimi-K2:
# max_model_len >= 128 K) gets the 64 K cap.
CHUNKED_PREFILL_WORKSPACE_TOKENS = 64 * 1024


@dataclass
class MLAPrefillInputs:
    """One MLA layer's per-step tensors for the prefill tokens."""

    q: torch.Tensor  # [Tp, H, nope + rope], the prefill tokens' queries (activation dtype)
    latent_new: torch.Tensor  # [T, rank + rope], every new token's latent (written to the cache)
    w_kv_b: torch.Tensor  # [rank, H x (nope + v)], kv_b_proj's weight (per rank), activation dtype

    def prefill_latents(self, batch: Batch) -> torch.Tensor:
        return self.latent_new[batch.num_decode_tokens:]


def random_prefill_inputs(batch: Batch, p: MLAParams, dtype: torch.dtype,
                          generator: torch.Generator | None = None) -> MLAPrefillInputs:
    dev = batch.device
    tp = batch.num_tokens - batch.num_decode_tokens

    def rnd(*shape, std=1.0):
        return (torch.randn(*shape, generator=generator, dtype=torch.float32) * std).to(dev, dtype)

    qk = p.qk_nope_head_dim + p.qk_rope_head_dim
    return MLAPrefillInputs(
        q=rnd(tp, p.num_heads, qk),
        latent_new=rnd(batch.num_tokens, p.latent_dim),
        w_kv_b=rnd(p.kv_lora_rank, p.num_heads * (p.qk_nope_head_dim + p.v_head_dim), std=p.kv_lora_rank ** -0.5))


@dataclass(frozen=True)
class ContextChunk:
    """One workspace-full of cached context: the prefill requests ``first`` ..
    ``first + len(lengths) - 1``, request i's cached tokens ``starts[i]`` ..
    ``starts[i] + lengths[i] - 1``. ``continuation``: the first request's
    context began in an earlier chunk (its partial is merged, not replaced)."""

    first: int
    starts: tuple[int, ...]
    lengths: tuple[int, ...]

    @property
    def continuation(self) -> bool:
        return self.starts[0] > 0

    @property
    def requests(self) -> range:
        return range(self.first, self.first + len(self.lengths))


def plan_context_chunks(context_lens: list[int], workspace_tokens: int, page_size: int) -> list[ContextChunk]:
    """vLLM's packing (``plan_mla_context_chunks``, no DCP): requests with
    context fill a chunk in order until the workspace is full; a request
    that does not fit is split at a page-aligned length (at most the
    workspace rounded down to pages, and short of its whole remainder), its
    rest starting the next chunk. Requests without context take no chunk."""
    max_chunk = workspace_tokens // page_size * page_size
    if max_chunk <= 0:
        raise ValueError(f"workspace of {workspace_tokens} tokens holds no page of {page_size}")
    chunks: list[ContextChunk] = []
    r, start, n = 0, 0, len(context_lens)
    while r < n:
        if context_lens[r] == 0:
            r += 1
            continue
        first, starts, lengths, rows = r, [], [], 0
        while r < n and context_lens[r] > 0:
            remaining = context_lens[r] - start
            if rows + remaining > workspace_tokens:
                longest = min(max_chunk, (remaining - 1) // page_size * page_size)
                split = min(longest, (workspace_tokens - rows) // page_size * page_size)
                if split > 0:
                    starts.append(start)
                    lengths.append(split)
                    start += split
                break
            rows += remaining
            starts.append(start)
            lengths.append(remaining)
            r += 1
            start = 0
        chunks.append(ContextChunk(first, tuple(starts), tuple(lengths)))
    return chunks


def merge_states(o_a: torch.Tensor, lse_a: torch.Tensor, o_b: torch.Tensor, lse_b: torch.Tensor,
                 out: torch.Tensor | None = None, out_lse: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Two partial attentions over disjoint keys, merged by their log-sum-exp
    (natural log): o [n, H, d], lse [H, n] (FlashAttention's layout). A side
    with lse -inf (no keys) carries no weight. Computed in float32; ``out``
    gets the result in its own dtype."""
    la, lb = lse_a.float().transpose(0, 1), lse_b.float().transpose(0, 1)  # [n, H]
    m = torch.maximum(la, lb)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    wa, wb = torch.exp(la - m), torch.exp(lb - m)
    total = wa + wb
    merged = (o_a.float() * wa[..., None] + o_b.float() * wb[..., None]) / total.clamp_min(1e-30)[..., None]
    lse = (m + torch.log(total)).transpose(0, 1)
    if out is not None:
        out.copy_(merged)
        merged = out
    if out_lse is not None:
        out_lse.copy_(lse)
        lse = out_lse
    return merged, lse


def up_project(kv_c: torch.Tensor, k_pe: torch.Tensor, w_kv_b: torch.Tensor, p: MLAParams) -> tuple[torch.Tensor, torch.Tensor]:
    """kv_b_proj and the k concat: (k [n, H, nope + rope], v [n, H, v]) in kv_c's dtype."""
    kv = (kv_c @ w_kv_b).view(-1, p.num_heads, p.qk_nope_head_dim + p.v_head_dim)
    k_nope, v = kv.split([p.qk_nope_head_dim, p.v_head_dim], dim=-1)
    k = torch.empty(kv.shape[0], p.num_heads, p.qk_nope_head_dim + p.qk_rope_head_dim, dtype=kv.dtype,
                    device=kv.device)
    k[..., :p.qk_nope_head_dim] = k_nope
    k[..., p.qk_nope_head_dim:] = k_pe.reshape(-1, 1, p.qk_rope_head_dim)
    return k, v


def reference_mla_prefill(inp: MLAPrefillInputs, latent_pages: torch.Tensor, batch: Batch, p: MLAParams) -> torch.Tensor:
    """float32 [Tp, H, v] for the prefill requests: one dense causal attention
    per request over its whole sequence, up-projected in float32 (cached
    context from the cache, dequantized; the new tokens from their latents,
    as vLLM's forward_mha takes them)."""
    lat = latent_pages.reshape(latent_pages.shape[0], latent_pages.shape[1], -1)
    w = inp.w_kv_b.float()
    qsl = batch.query_start_loc_cpu.tolist()
    base = qsl[batch.num_decodes]
    out = torch.empty(inp.q.shape[0], p.num_heads, p.v_head_dim, dtype=torch.float32, device=inp.q.device)
    for r in range(batch.num_decodes, batch.num_requests):
        s = int(batch.seq_lens_cpu[r])
        a, b = qsl[r], qsl[r + 1]
        ctx = s - (b - a)
        pages = batch.block_table[r, :-(-s // batch.page_size)].long()
        cached = dequantize_latent(lat[pages].reshape(-1, p.latent_dim)[:ctx], p.kv_scale)
        seq = torch.cat([cached, inp.latent_new[a:b].float()])  # [s, rank + rope]
        k, v = up_project(seq[:, :p.kv_lora_rank], seq[:, p.kv_lora_rank:], w, p)
        q = inp.q[a - base:b - base].float()
        scores = torch.einsum("nhd,shd->hns", q, k) * p.scale
        qpos = torch.arange(ctx, s, device=q.device)[:, None]
        kpos = torch.arange(s, device=q.device)[None, :]
        scores = scores.masked_fill(~(kpos <= qpos)[None], float("-inf"))
        out[a - base:b - base] = torch.einsum("hns,shd->nhd", torch.softmax(scores, -1), v)
    return out


def prefill_pairs(batch: Batch) -> int:
    """(query, visible key) pairs of the prefill requests (causal)."""
    qsl = batch.query_start_loc_cpu.tolist()
    pairs = 0
    for r in range(batch.num_decodes, batch.num_requests):
        s = int(batch.seq_lens_cpu[r])
        n = qsl[r + 1] - qsl[r]
        pairs += n * s - n * (n - 1) // 2
    return pairs


def prefill_context_tokens(batch: Batch) -> int:
    qsl = batch.query_start_loc_cpu.tolist()
    return sum(int(batch.seq_lens_cpu[r]) - (qsl[r + 1] - qsl[r]) for r in range(batch.num_decodes, batch.num_requests))


def prefill_flops(batch: Batch, p: MLAParams) -> int:
    """Attention FLOPs of the prefill tokens: per head and visible key, 2 x (nope + rope) + 2 x v
    (the up-projections are not counted)."""
    return prefill_pairs(batch) * p.num_heads * 2 * (p.qk_nope_head_dim + p.qk_rope_head_dim + p.v_head_dim)


def prefill_max(batch: Batch) -> tuple[int, int]:
    """(longest prefill query, longest prefill sequence)."""
    qsl = batch.query_start_loc_cpu.tolist()
    rs = range(batch.num_decodes, batch.num_requests)
    return (max((qsl[r + 1] - qsl[r] for r in rs), default=0),
            max((int(batch.seq_lens_cpu[r]) for r in rs), default=0))

