"""The MLA prefill row: an MLA layer's prefill requests through vLLM 0.33.0's
FLASH_ATTN MLA prefill backend (vllm/v1/attention/backends/mla/prefill/
flash_attn.py), in the sequence of ``MLACommonBaseImpl.forward_mha``
(mla_prefill_reference.py lists the steps and what is checked).

FlashAttention calls, on vLLM's build (``flash_attn_varlen_func`` of
vllm.vllm_flash_attn with ``fa_version`` = the row's, from
``get_flash_attn_version(head_size=nope + rope, head_size_v=v)``: FA3 on an
H200, which takes q/k of 192 and v of 128 as they are; a version that needs
V padded is not mirrored):

- new tokens (``run_prefill_new_tokens``): q, k, v, cu_seqlens_q =
  cu_seqlens_k = the prefills' query_start_loc, max_seqlen_q = max_seqlen_k
  = the longest prefill query, softmax_scale, causal=True,
  return_softmax_lse (when there is cached context), out=None,
  output_scale=None;
- each context chunk (``run_prefill_context_chunk``): the chunk's queries,
  its up-projected latents, cu_seqlens_q = the chunk's query offsets,
  cu_seqlens_k = its context offsets, their maxima, causal=False,
  return_softmax_lse=True, out=None, output_scale=None.

Ours, in torch (vLLM has its own kernels for them): the gather of a chunk's
latents through the block table into the workspace (vLLM:
``gather_and_maybe_dequant_cache``, dequantizing fp8 with k_scale), the
``kv_b_proj`` up-projection (a bf16 matmul with the random weight; vLLM runs
the checkpoint's GEMM, fp8 block-quantized for DeepSeek-V3), the k concat,
and the log-sum-exp merges (vLLM: ``merge_attn_states``). The row's time
is the whole of it per layer; its TFLOP/s count the attention FLOPs only.

Which requests: the batch's prefills (more than one new token). vLLM sends
them here when the decode backend's builder routes them to prefill (FLASHMLA
above 128 new tokens, TRITON_MLA, FLASHINFER_MLA and CUTLASS_MLA above 1;
FLASH_ATTN_MLA only above 512, so not the default 4 x 512 prefill) and, for
sparse MLA, when the longest prefill sequence fits in index_topk.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import torch

from attn_select.backends.run.adapter import RoutedElsewhere
from attn_select.backends.run.batch import Batch
from attn_select.backends.run.mla_prefill_reference import (
    CHUNKED_PREFILL_WORKSPACE_TOKENS, ContextChunk, merge_states, plan_context_chunks, up_project,
)
from attn_select.backends.run.mla_reference import dequantize_latent
from attn_select.backends.run.mla_vllm import VllmMLAAdapter

MODULE = "vllm.vllm_flash_attn"
# The keywords FlashAttnPrefillBackend passes flash_attn_varlen_func (through
# FA4MLAPrefillKernel, which forwards them), besides fa_version from its partial
PREFILL_KEYWORDS = frozenset((
    "q", "k", "v", "cu_seqlens_q", "cu_seqlens_k", "max_seqlen_q", "max_seqlen_k", "softmax_scale", "causal",
    "return_softmax_lse", "out", "output_scale", "fa_version",
))


@dataclass
class ChunkMeta:
    chunk: ContextChunk
    tokens: slice  # the chunk's query tokens, prefill-local
    slots: torch.Tensor  # int64 [context tokens], cache slot of each (page * page_size + offset)
    cu_seqlens_q: torch.Tensor  # int32, the chunk's query offsets
    cu_seq_lens: torch.Tensor  # int32, its context offsets
    max_query_len: int
    max_seq_len: int
    first_tokens: int  # query tokens of its first request (continuation_token_end - start)


@dataclass
class PrefillPlan:
    batch: Batch
    num_prefill_tokens: int
    query_start_loc: torch.Tensor  # int32 [P + 1], prefill-local
    max_query_len: int
    chunks: list[ChunkMeta] = field(default_factory=list)
    empty: list[slice] = field(default_factory=list)  # token slices of prefills without context
    fa_version: int = 3


class MLAPrefillFlashAttnAdapter(VllmMLAAdapter):
    name = "MLA prefill"
    label = "vLLM's FlashAttention (vllm.vllm_flash_attn)"

    def __init__(self, env, p, row=None, workspace_tokens: int = CHUNKED_PREFILL_WORKSPACE_TOKENS, **kw):
        super().__init__(env, p, row, **kw)
        self.workspace_tokens = workspace_tokens

    @property
    def version(self) -> int:
        return int(self.row.fa_version or 3)

    def unavailable(self) -> str | None:
        why = self.needs_gpu()
        if why:
            return why
        if not self.p.qk_nope_head_dim or not self.p.v_head_dim:
            return "the layer has no up-projected head sizes (qk_nope_head_dim, v_head_dim)"
        why = self.import_reason(MODULE)
        if why:
            return why
        mod = self.module(MODULE)
        if not mod.is_fa_version_supported(self.version):
            return f"vLLM's FA{self.version} is not built here ({mod.fa_version_unsupported_reason(self.version)})"
        cap = self.env.capability
        if self.version == 2 or (self.version == 3 and cap is not None and cap[0] != 9):
            # FlashAttnPrefillBackend.requires_v_padding: V padded to the qk head size
            return f"FA{self.version} pads V to the qk head size here (requires_v_padding), which is not mirrored"
        return None

    # -- once per step ------------------------------------------------------------

    def build(self, batch: Batch) -> PrefillPlan:
        d = batch.num_decodes
        if d == batch.num_requests:
            raise RoutedElsewhere("the batch has no prefill requests")
        topk = self.p.topk
        if topk is not None and int(batch.seq_lens_cpu[d:].max()) > topk:
            raise RoutedElsewhere(f"vLLM's sparse MLA runs prefills longer than index_topk ({topk}) through its "
                                  "sparse kernel, not dense MHA prefill")
        qsl = batch.query_start_loc_cpu.tolist()
        base = qsl[d]
        pq = [x - base for x in qsl[d:]]
        q_lens = [b - a for a, b in zip(pq, pq[1:])]
        seqs = batch.seq_lens_cpu[d:].tolist()
        ctx = [s - n for s, n in zip(seqs, q_lens)]
        dev = batch.device
        plan = PrefillPlan(batch, pq[-1], torch.tensor(pq, dtype=torch.int32).to(dev), max(q_lens),
                           fa_version=self.version)
        plan.empty = [slice(pq[i], pq[i + 1]) for i, c in enumerate(ctx) if c == 0]
        bt = batch.block_table_cpu[d:].long()
        page = batch.page_size
        for ch in plan_context_chunks(ctx, self.workspace_tokens, page):
            slots, cu = [], [0]
            for i, start, n in zip(ch.requests, ch.starts, ch.lengths):
                pos = torch.arange(start, start + n)
                slots.append(bt[i, pos // page] * page + pos % page)
                cu.append(cu[-1] + n)
            first, last = ch.requests[0], ch.requests[-1]
            tok = slice(pq[first], pq[last + 1])
            cq = [x - pq[first] for x in pq[first:last + 2]]
            plan.chunks.append(ChunkMeta(
                ch, tok, torch.cat(slots).to(dev), torch.tensor(cq, dtype=torch.int32).to(dev),
                torch.tensor(cu, dtype=torch.int32).to(dev), max(q_lens[first:last + 1]), max(ch.lengths),
                q_lens[first]))
        return plan

    # -- once per layer -------------------------------------------------------------

    def run(self, plan: PrefillPlan, q: torch.Tensor, cache: torch.Tensor, sinks, out: torch.Tensor, *,
            latent_new: torch.Tensor, w_kv_b: torch.Tensor) -> None:
        p = self.p
        fa = functools.partial(self.module(MODULE).flash_attn_varlen_func, fa_version=plan.fa_version)
        rank = p.kv_lora_rank
        k, v = up_project(latent_new[:, :rank], latent_new[:, rank:], w_kv_b, p)
        has_context = bool(plan.chunks)
        suffix = fa(q=q, k=k, v=v, cu_seqlens_q=plan.query_start_loc, cu_seqlens_k=plan.query_start_loc,
                    max_seqlen_q=plan.max_query_len, max_seqlen_k=plan.max_query_len, softmax_scale=p.scale,
                    causal=True, return_softmax_lse=has_context, out=None, output_scale=None)
        if not has_context:
            out.copy_(suffix[..., :p.v_head_dim])
            return
        s_out, s_lse = suffix
        c_out, c_lse = self._context(plan, fa, q, cache, w_kv_b)
        merge_states(c_out[..., :p.v_head_dim], c_lse, s_out[..., :p.v_head_dim], s_lse, out=out)

    def _context(self, plan: PrefillPlan, fa, q, cache, w_kv_b) -> tuple[torch.Tensor, torch.Tensor]:
        """``_compute_prefill_context``: every chunk's partial, folded into one per token."""
        p = self.p
        flat = cache.view(-1, p.latent_dim)
        acc_out = acc_lse = None
        for cm in plan.chunks:
            ws = flat[cm.slots]  # the workspace rows of this chunk
            if ws.element_size() == 1:
                ws = (dequantize_latent(ws, p.kv_scale)).to(self.env.dtype)
            k, v = up_project(ws[:, :p.kv_lora_rank], ws[:, p.kv_lora_rank:], w_kv_b, p)
            o, lse = fa(q=q[cm.tokens], k=k, v=v, cu_seqlens_q=cm.cu_seqlens_q, cu_seqlens_k=cm.cu_seq_lens,
                        max_seqlen_q=cm.max_query_len, max_seqlen_k=cm.max_seq_len, softmax_scale=p.scale,
                        causal=False, return_softmax_lse=True, out=None, output_scale=None)
            if acc_out is None:
                if len(plan.chunks) == 1 and not plan.empty:
                    return o, lse
                # init_mla_context_partial: prefills without context get (0, -inf)
                acc_out = torch.empty(q.shape[0], *o.shape[1:], dtype=o.dtype, device=o.device)
                acc_lse = torch.empty(lse.shape[0], q.shape[0], dtype=lse.dtype, device=lse.device)
                for sl in plan.empty:
                    acc_out[sl].zero_()
                    acc_lse[:, sl].fill_(float("-inf"))
            a, b = cm.tokens.start, cm.tokens.stop
            init = a
            if cm.chunk.continuation:
                # the first request's tokens already hold its earlier context: merge
                n = cm.first_tokens
                init = a + n
                merge_states(acc_out[a:init], acc_lse[:, a:init], o[:n], lse[:, :n],
                             out=acc_out[a:init], out_lse=acc_lse[:, a:init])
            if init < b:
                acc_out[init:b].copy_(o[init - a:])
                acc_lse[:, init:b].copy_(lse[:, init - a:])
        return acc_out, acc_lse

    def kernel_name(self, plan: PrefillPlan) -> str:
        n = len(plan.chunks)
        ctx = f" + {n} context chunk{'s' if n != 1 else ''} merged by log-sum-exp" if n else ""
        return (f"vLLM FA{plan.fa_version} varlen (vllm.vllm_flash_attn), MLA prefill backend FLASH_ATTN: new tokens "
                f"causal{ctx}; gather, kv_b_proj (bf16) and merges ours in torch; page {plan.batch.page_size}")
