"""FLASH_ATTN_MLA and FLASH_ATTN_MLA_SPARSE run adapters: vLLM's FlashAttention
3 build with its separate value input, as vLLM 0.33.0 calls it
(vllm/v1/attention/backends/mla/flashattn_mla.py, flashattn_mla_sparse.py,
vllm/vllm_flash_attn/flash_attn_interface.py).

FA3 takes MLA's absorbed attention as a 64-dim query/key (the rope parts)
plus a fused value query: ``q = q_pe``, ``k = k_pe cache``, ``v = kv_c
cache`` (the latent's first kv_lora_rank dims) and ``q_v = ql_nope``; the
score is q_pe . k_pe + ql_nope . kv_c and the value kv_c, which is the latent
attention of mla_reference.py over the same cache memory.

FLASH_ATTN_MLA (bf16/fp16 cache only: vLLM's impl raises "FlashAttnMLA V1
with FP8 KV cache not yet supported"):

- routing: reorder_batch_threshold 512 with variable query lengths (VARLEN):
  every request of at most 512 new tokens takes the decode path, so the
  default prefill (4 x 512) and mixed batches run here whole;
- build (``FlashAttnMLAMetadataBuilder._build_decode``): the split bound is
  ``flash_attn_max_num_splits_for_cuda_graph`` (32) when vLLM's no-argument
  FA version is 3 (AOT scheduling) under full CUDA graphs and the step's
  decode tokens fit ``max_cudagraph_capture_size``, else 0;
  VLLM_BATCH_INVARIANT makes it 1. With AOT scheduling,
  ``get_scheduler_metadata(batch_size, max_seqlen_q, max_seqlen_k,
  num_heads_q=H, num_heads_kv=1, headdim=qk_rope_head_dim, cache_seqlens,
  qkv_dtype=the cache dtype, headdim_v=kv_lora_rank, page_size,
  cu_seqlens_q, causal=True, num_splits)`` is copied into the builder's
  persistent buffer (1 + round_up(max(max_num_seqs, capture size), 4) x 4
  int32), the rest zeroed;
- per layer (``FlashAttnMLAImpl.forward_mqa``): ``flash_attn_varlen_func``
  with the keywords of ``VLLM_MLA_KEYWORDS`` and ``fa_version=3``.

FLASH_ATTN_MLA_SPARSE (bf16/fp16 cache): every token is its own sequence of
one query (cu_seqlens_q = 0, 1, ..., T from a persistent arange) over pages
of one token: the flat cache rows of its top-k list are its block table
(``block_table = rows``, ``seqused_k = valid counts``, ``max_seqlen_k =
topk``), causal=True, no scheduler metadata. Prefill requests go to dense MHA
prefill when their longest sequence fits in index_topk.

Our one addition to vLLM's keywords: ``out=``, the interface's output
argument, so FA3 writes into the row's poisoned output buffer (vLLM takes the
returned tensor into its v up-projection; no copy is timed).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attn_select.backends.run.adapter import Unsupported
from attn_select.backends.run.batch import Batch
from attn_select.backends.run.flash_attn import builder_facts, vllm_max_num_seqs
from attn_select.backends.run.flashmla import _flat_rows, require_sparse_mqa, sparse_decode_threshold
from attn_select.backends.run.mla_routing import require_all_decodes
from attn_select.backends.run.mla_vllm import VllmMLAAdapter, total_memory_gib

MODULE = "vllm.vllm_flash_attn"
FA_MLA_DECODE_THRESHOLD = 512  # FlashAttnMLAMetadataBuilder.reorder_batch_threshold (VARLEN)
# The keywords FlashAttnMLAImpl.forward_mqa passes (tests compare them with vLLM's source)
VLLM_MLA_KEYWORDS = frozenset((
    "q", "k", "v", "q_v", "max_seqlen_q", "cu_seqlens_q", "max_seqlen_k", "seqused_k", "block_table",
    "softmax_scale", "causal", "return_softmax_lse", "fa_version", "scheduler_metadata", "num_splits",
    "cp_world_size", "cp_rank", "cp_tot_seqused_k",
))
# FlashAttnMLASparseImpl._forward_mqa_kernel's keywords
VLLM_MLA_SPARSE_KEYWORDS = frozenset((
    "q", "k", "v", "q_v", "max_seqlen_q", "cu_seqlens_q", "max_seqlen_k", "seqused_k", "block_table",
    "softmax_scale", "causal", "fa_version",
))
OURS = frozenset(("out",))


class _FA3MLA(VllmMLAAdapter):
    label = "vLLM's FlashAttention (vllm.vllm_flash_attn)"

    def unavailable(self) -> str | None:
        why = self.needs_gpu()
        if why:
            return why
        if self.fp8_cache:
            return "FlashAttnMLA V1 with FP8 KV cache not yet supported"  # FlashAttnMLAImpl.__init__
        why = self.import_reason(MODULE)
        if why:
            return why
        mod = self.module(MODULE)
        if not mod.is_fa_version_supported(3):
            # flash_attn_supports_mla: FA3 on a 9.x GPU
            reason = mod.fa_version_unsupported_reason(3)
            return "FlashAttention MLA not supported on this device" + (f" ({reason})" if reason else "")
        cap = self.env.capability
        if cap is not None and cap[0] != 9:
            return "FlashAttention MLA not supported on this device (FA3's MLA path is 9.x only)"
        return None

    def split(self, q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(ql_nope, q_pe): vLLM hands the impl the two parts; here views of the absorbed query."""
        rank = self.p.kv_lora_rank
        return q[..., :rank], q[..., rank:]


@dataclass
class FAMLAPlan:
    batch: Batch
    num_decodes: int
    cu_seqlens_q: torch.Tensor
    seq_lens: torch.Tensor
    block_table: torch.Tensor
    max_query_len: int
    max_seq_len: int
    num_splits: int
    scheduler_metadata: torch.Tensor | None


class FlashAttnMLAAdapter(_FA3MLA):
    name = "FLASH_ATTN_MLA"

    def __init__(self, env, p, row=None, **kw):
        super().__init__(env, p, row, **kw)
        mem, gpu = total_memory_gib(env)
        self.max_num_seqs = vllm_max_num_seqs(mem, gpu, env.capability)
        # no-argument get_flash_attn_version() == 3: AOT scheduling and the CUDA-graph split bound
        noarg = self.row.flash_attn.version_noarg or 3
        self.facts = builder_facts(noarg, (None,), env.capability, self.max_num_seqs)
        self._metadata_buf: torch.Tensor | None = None

    def build(self, batch: Batch) -> FAMLAPlan:
        require_all_decodes(batch, self.name, FA_MLA_DECODE_THRESHOLD, require_uniform=False)
        if batch.page_size % 16:
            raise Unsupported(f"FLASH_ATTN_MLA's kernel block size is a multiple of 16 (got {batch.page_size})")
        b = batch.num_requests
        qsl = batch.query_start_loc_cpu
        max_query_len = int((qsl[1:] - qsl[:-1]).max())
        f = self.facts
        num_splits = f.max_num_splits if batch.num_tokens <= f.max_cudagraph_size else 0  # all decode tokens
        if self.row.flash_attn.batch_invariant:
            num_splits = 1
        plan = FAMLAPlan(batch, b, batch.query_start_loc[:b + 1], batch.seq_lens[:b], batch.block_table[:b],
                         max_query_len, batch.max_seq_len, num_splits, None)
        if f.aot_schedule:
            mod = self.module(MODULE)
            meta = mod.get_scheduler_metadata(
                batch_size=b, max_seqlen_q=max_query_len, max_seqlen_k=batch.max_seq_len,
                num_heads_q=self.p.num_heads, num_heads_kv=1, headdim=self.p.qk_rope_head_dim,
                cache_seqlens=plan.seq_lens, qkv_dtype=self.cache_torch_dtype(), headdim_v=self.p.kv_lora_rank,
                page_size=batch.page_size, cu_seqlens_q=plan.cu_seqlens_q, causal=True, num_splits=num_splits)
            plan.scheduler_metadata = self._store(meta)
        return plan

    def _store(self, meta: torch.Tensor) -> torch.Tensor:
        n = meta.shape[0]
        if self._metadata_buf is None:
            slots = max(self.facts.metadata_slots, n)
            self._metadata_buf = torch.zeros(slots, dtype=torch.int32, device=meta.device)
        buf = self._metadata_buf
        if n > buf.shape[0]:
            raise RuntimeError(f"Scheduler metadata size {n} exceeds buffer size {buf.shape[0]}")
        buf[:n] = meta
        buf[n:] = 0  # stale entries would let thread blocks overwrite the output
        return buf[:n]

    def run(self, plan: FAMLAPlan, q: torch.Tensor, cache: torch.Tensor, sinks, out: torch.Tensor) -> None:
        q_nope, q_pe = self.split(q)
        rank = self.p.kv_lora_rank
        self.module(MODULE).flash_attn_varlen_func(
            q=q_pe, k=cache[..., rank:].unsqueeze(-2), v=cache[..., :rank].unsqueeze(-2), q_v=q_nope,
            max_seqlen_q=max(plan.max_query_len, 1), cu_seqlens_q=plan.cu_seqlens_q, max_seqlen_k=plan.max_seq_len,
            seqused_k=plan.seq_lens, block_table=plan.block_table, softmax_scale=self.p.scale, causal=True,
            return_softmax_lse=False, fa_version=3, scheduler_metadata=plan.scheduler_metadata,
            num_splits=plan.num_splits, cp_world_size=1, cp_rank=0, cp_tot_seqused_k=None, out=out)

    def kernel_name(self, plan: FAMLAPlan) -> str:
        label = "vLLM FA3 MLA (vllm.vllm_flash_attn, q_v = ql_nope, v = kv_c)"
        if plan.scheduler_metadata is not None:
            label += ", AOT schedule"
        if plan.num_splits:
            label += f", max {plan.num_splits} splits"
        return label + f", page {plan.batch.page_size}"

    def close(self) -> None:
        super().close()
        self._metadata_buf = None


@dataclass
class FASparsePlan:
    batch: Batch
    num_tokens: int
    cu_seqlens_q: torch.Tensor


class FlashAttnMLASparseAdapter(_FA3MLA):
    name = "FLASH_ATTN_MLA_SPARSE"

    def __init__(self, env, p, row=None, **kw):
        super().__init__(env, p, row, **kw)
        self._cu: torch.Tensor | None = None

    def unavailable(self) -> str | None:
        if self.fp8_cache:
            return "FlashAttention MLA Sparse currently supports only FP16/BF16 KV cache"
        if self.p.topk is None:
            return "FlashAttention MLA Sparse requires model with index_topk"
        return super().unavailable()

    def build(self, batch: Batch) -> FASparsePlan:
        if batch.page_size % 64:
            raise Unsupported(f"FLASH_ATTN_MLA_SPARSE's kernel block size is a multiple of 64 (got {batch.page_size})")
        require_sparse_mqa(batch, self.name, sparse_decode_threshold(self.p.num_heads, (9, 0)), False,
                           self.p.topk or 0, self.row.mla_prefill)
        t = batch.num_tokens
        if self._cu is None or self._cu.numel() < t + 1:
            # FlashAttnMLASparseImpl.cu_seqlens_q_buffer: arange over the top-k buffer's rows
            self._cu = torch.arange(t + 1, dtype=torch.int32, device=self.env.device)
        return FASparsePlan(batch, t, self._cu[:t + 1])

    def run(self, plan: FASparsePlan, q, cache, sinks, out, *, rows: torch.Tensor, counts: torch.Tensor) -> None:
        q_nope, q_rope = self.split(q)
        rank = self.p.kv_lora_rank
        kv_rows = _flat_rows(cache, plan.batch.page_size)
        self.module(MODULE).flash_attn_varlen_func(
            q=q_rope, k=kv_rows[:, rank:].unsqueeze(1).unsqueeze(1), v=kv_rows[:, :rank].unsqueeze(1).unsqueeze(1),
            q_v=q_nope, max_seqlen_q=1, cu_seqlens_q=plan.cu_seqlens_q, max_seqlen_k=rows.shape[1],
            seqused_k=counts, block_table=rows, softmax_scale=self.p.scale, causal=True, fa_version=3, out=out)

    def kernel_name(self, plan: FASparsePlan) -> str:
        return (f"vLLM FA3 sparse MLA (vllm.vllm_flash_attn, top-{self.p.topk} rows as one-token pages), "
                f"page {plan.batch.page_size}")

    def close(self) -> None:
        super().close()
        self._cu = None
