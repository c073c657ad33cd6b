"""FLASHMLA and FLASHMLA_SPARSE run adapters: DeepSeek's FlashMLA as vLLM
0.33.0 builds and calls it (vllm/v1/attention/backends/mla/flashmla.py,
flashmla_sparse.py, vllm/v1/attention/ops/flashmla.py and the vendored
vllm/third_party/flashmla/flash_mla_interface.py).

FLASHMLA, dense decode, pages of 64 tokens (its only kernel block size):

- routing: the builder's reorder_batch_threshold is 128 with uniform query
  lengths (QueryLenSupport.UNIFORM): a batch runs here when every request
  has the same number (<= 128) of new tokens; mixed and 512-token prefill
  batches send their prefills to the MLA prefill backend;
- build (``FlashMLAMetadataBuilder._build_decode``): the decode rows' block
  table and sequence lengths, num_q_tokens_per_head_k = max query length x
  heads, and ``get_mla_metadata(seq_lens, that, 1, is_fp8_kvcache=...)``,
  which in 0.33.0's interface returns an empty ``FlashMLASchedMeta``: the
  tile schedule is computed inside the first layer's kernel call and reused
  by the step's other layers (so the build cost c is small and layer 0 pays
  the schedule). With an fp8 cache the builder also calls
  ``get_mla_metadata_dense_fp8`` (on the device) and, under full CUDA graphs
  (vLLM's default FULL_AND_PIECEWISE), copies its two tensors into
  persistent buffers of (num_SMs, 8) and (max_num_seqs + 1) int32;
- per layer (``FlashMLAImpl.forward_mqa``): the query [B, q_len, H, 576]
  (``reshape_query_for_spec_decode``), the cache with a head axis of 1, and
  ``flash_mla_with_kvcache(..., head_dim_v=kv_lora_rank, softmax_scale,
  causal=True, is_fp8_kvcache=False)``; with an fp8 cache the fp8 query and
  ``flash_mla_with_kvcache_fp8(..., descale_q=_q_scale, descale_k=_k_scale)``.

Our one addition: ``out=`` (the interface's own output argument) points the
bf16 kernel at the row's poisoned output buffer, so every element is checked
and no copy is timed that vLLM does not make (vLLM hands the returned tensor
to its v up-projection). The fp8 op has no output argument: its result is
copied into the buffer, and the row says so.

The fp8 entry points live in vllm.v1.attention.ops.flashmla, which needs
vLLM itself; where only vLLM's kernels are present (the H200's kernel pack)
the adapter calls the same ``torch.ops._flashmla_extension_C`` ops that file
wraps, with its arguments in its order.

FLASHMLA_SPARSE with a bf16 cache (``FlashMLASparseImpl._forward_bf16_kv``):
the absorbed query is concatenated into a head-padded workspace (the bf16
kernel wants a multiple of 64 heads), the top-k lists are converted to rows
of the flat cache view (``mla_sparse.topk_to_rows``, done once per step
here), and ``flash_mla_sparse_fwd(q, kv [rows, 1, 576], indices [T, 1, topk],
scale, topk_length=valid counts)`` runs every token; the output's real heads
are kept. Prefill requests go to dense MHA prefill when the longest prefill
sequence fits in index_topk (``_use_dense_mha_prefill``), else through the
same kernel. vLLM's fp8 sparse cache is fp8_ds_mla (656-byte tokens with
per-128 scales), which attn-select run does not write.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from attn_select.backends.run.adapter import RoutedElsewhere, Unsupported
from attn_select.backends.run.batch import Batch
from attn_select.backends.run.flash_attn import vllm_max_num_seqs
from attn_select.backends.run.mla_routing import decode_split, require_all_decodes
from attn_select.backends.run.mla_vllm import VllmMLAAdapter, sm_count, total_memory_gib, why_not

INTERFACE = "vllm.third_party.flashmla.flash_mla_interface"
OPS = "vllm.v1.attention.ops.flashmla"
EXTENSION = "vllm._flashmla_extension_C"
FLASHMLA_PAGE = 64  # FlashMLABackend.get_supported_kernel_block_sizes
FLASHMLA_DECODE_THRESHOLD = 128  # FlashMLAMetadataBuilder.reorder_batch_threshold (UNIFORM)
# Heads -> reorder_batch_threshold of the sparse builders (FlashMLASparse on SM90
# and FlashAttnMLASparse), default 256; FlashMLASparse on SM100 has its own.
SPARSE_THRESHOLDS_SM90 = {16: 128, 32: 128, 64: 256, 128: 256}
SPARSE_THRESHOLDS_SM100 = {8: 128, 16: 128, 32: 128, 64: 256, 128: 1024}
SPARSE_PREFILL_HEAD_PAD = 64  # FlashMLASparseImpl.prefill_padding


class _ExtensionFp8Ops:
    """vllm.v1.attention.ops.flashmla's two fp8 wrappers, over the torch ops
    they call, for a site with vLLM's kernels but not vLLM."""

    def __init__(self, ops: Any):
        self.ops = ops

    def get_mla_metadata_dense_fp8(self, cache_seqlens, num_q_tokens_per_head_k, num_heads_k):
        return self.ops.get_mla_decoding_metadata_dense_fp8(cache_seqlens, num_q_tokens_per_head_k, num_heads_k)

    def flash_mla_with_kvcache_fp8(self, q, k_cache, block_table, cache_seqlens, head_dim_v, tile_scheduler_metadata,
                                   num_splits, softmax_scale=None, causal=False, descale_q=None, descale_k=None):
        if softmax_scale is None:
            softmax_scale = q.shape[-1] ** (-0.5)
        return self.ops.fwd_kvcache_mla_fp8(q, k_cache, head_dim_v, cache_seqlens, block_table, softmax_scale, causal,
                                            tile_scheduler_metadata, num_splits, descale_q, descale_k)


def extension_ops() -> Any:
    """The op namespace ``vllm._flashmla_extension_C`` registers when it loads."""
    return torch.ops._flashmla_extension_C


@dataclass
class FlashMLAPlan:
    batch: Batch
    num_decodes: int
    block_table: torch.Tensor
    seq_lens: torch.Tensor
    sched: Any  # FlashMLASchedMeta
    fp8: bool = False
    source: str = ""


class FlashMLAAdapter(VllmMLAAdapter):
    name = "FLASHMLA"
    label = "vLLM's FlashMLA"

    def __init__(self, env, p, row=None, **kw):
        super().__init__(env, p, row, **kw)
        self._fp8_ops: Any = None
        self._fp8_source = ""
        self._cg_tile: torch.Tensor | None = None
        self._cg_splits: torch.Tensor | None = None

    def unavailable(self) -> str | None:
        why = self.needs_gpu()
        if why:
            return why
        cap = self.env.capability
        if cap is not None and cap[0] != 9:
            return "FlashMLA Dense is only supported on Hopper devices."  # is_flashmla_dense_supported
        why = self.import_reason(INTERFACE)
        if why:
            return why
        if self.fp8_cache:
            return self._resolve_fp8()
        return None

    def _resolve_fp8(self) -> str | None:
        try:
            ops = self.module(OPS)
            self._fp8_ops, self._fp8_source = ops, OPS
            return None
        except Exception as e:
            first = why_not(e)
        try:
            self.module(EXTENSION)
            self._fp8_ops = _ExtensionFp8Ops(extension_ops())
            self._fp8_source = "torch.ops._flashmla_extension_C"
            return None
        except Exception as e:
            return (f"vLLM's FlashMLA fp8 decode is not importable: {OPS}: {first}; {EXTENSION}: {why_not(e)}")

    # -- once per step ------------------------------------------------------------

    def build(self, batch: Batch) -> FlashMLAPlan:
        self.check_page(batch.page_size, (FLASHMLA_PAGE,))
        require_all_decodes(batch, self.name, FLASHMLA_DECODE_THRESHOLD, require_uniform=True)
        if self.row.flash_attn.batch_invariant and not self.fp8_cache:
            raise Unsupported("VLLM_BATCH_INVARIANT's one-partition FlashMLA schedule is not mirrored")
        iface = self.module(INTERFACE)
        b = batch.num_requests
        qsl = batch.query_start_loc_cpu
        max_query_len = int((qsl[1:] - qsl[:-1]).max())
        per_head_k = max_query_len * self.p.num_heads // 1  # one KV head: MQA
        seq_lens = batch.seq_lens[:b]
        sched, _ = iface.get_mla_metadata(seq_lens, per_head_k, 1, is_fp8_kvcache=self.fp8_cache)
        plan = FlashMLAPlan(batch, b, batch.block_table[:b], seq_lens, sched, self.fp8_cache)
        if self.fp8_cache:
            if self._fp8_ops is None and self._resolve_fp8() is not None:
                raise Unsupported(self._resolve_fp8() or "")
            tile, splits = self._fp8_ops.get_mla_metadata_dense_fp8(seq_lens, per_head_k, 1)
            sched.tile_scheduler_metadata = self._persist("tile", tile)
            sched.num_splits = self._persist("splits", splits)
            plan.source = self._fp8_source
        return plan

    def _persist(self, which: str, t: torch.Tensor) -> torch.Tensor:
        """The builder's full-CUDA-graph buffers: (num_SMs, 8) zeros for the tile
        schedule, max_num_seqs + 1 for the split counts; the step's rows are copied in."""
        if which == "tile":
            if self._cg_tile is None:
                self._cg_tile = torch.zeros(sm_count(self.env), 8, dtype=torch.int32, device=self.env.device)
            buf = self._cg_tile
        else:
            if self._cg_splits is None:
                mem, name = total_memory_gib(self.env)
                self._cg_splits = torch.empty(vllm_max_num_seqs(mem, name, self.env.capability) + 1,
                                              dtype=torch.int32, device=self.env.device)
            buf = self._cg_splits
        n = t.size(0)
        if n > buf.size(0):
            raise RuntimeError(f"FlashMLA fp8 metadata has {n} rows; vLLM's persistent buffer holds {buf.size(0)}")
        buf[:n].copy_(t)
        return buf[:n]

    # -- once per layer -------------------------------------------------------------

    def run(self, plan: FlashMLAPlan, q: torch.Tensor, cache: torch.Tensor, sinks, out: torch.Tensor) -> None:
        b, h, rank = plan.num_decodes, self.p.num_heads, self.p.kv_lora_rank
        k_cache = cache.unsqueeze(-2)  # add the head dim of 1
        if plan.fp8:
            q8 = self.quant_query(q).view(b, -1, h, q.shape[-1])
            o, _ = self._fp8_ops.flash_mla_with_kvcache_fp8(
                q=q8, k_cache=k_cache, block_table=plan.block_table, cache_seqlens=plan.seq_lens,
                head_dim_v=rank, tile_scheduler_metadata=plan.sched.tile_scheduler_metadata,
                num_splits=plan.sched.num_splits, softmax_scale=self.p.scale, causal=True,
                descale_q=self.scale("q").reshape(1), descale_k=self.scale("k").reshape(1))
            out.copy_(o.reshape(out.shape))
            return
        iface = self.module(INTERFACE)
        iface.flash_mla_with_kvcache(
            q=q.view(b, -1, h, q.shape[-1]), k_cache=k_cache, block_table=plan.block_table,
            cache_seqlens=plan.seq_lens, head_dim_v=rank, tile_scheduler_metadata=plan.sched,
            softmax_scale=self.p.scale, causal=True, is_fp8_kvcache=False, out=out.view(b, -1, h, rank))

    def kernel_name(self, plan: FlashMLAPlan) -> str:
        if plan.fp8:
            return (f"vLLM FlashMLA fp8 decode ({plan.source} fwd_kvcache_mla_fp8: fp8 query and cache, "
                    f"descales; output copied into the row's buffer), page {plan.batch.page_size}")
        return (f"vLLM FlashMLA dense decode ({INTERFACE.rsplit('.', 1)[0]} flash_mla_with_kvcache, "
                f"schedule made by layer 0's call), page {plan.batch.page_size}")

    def close(self) -> None:
        super().close()
        self._cg_tile = self._cg_splits = None


def sparse_decode_threshold(num_heads: int, capability: tuple[int, int] | None, table: dict[int, int] | None = None) -> int:
    t = table if table is not None else (SPARSE_THRESHOLDS_SM100 if capability and capability[0] == 10
                                         else SPARSE_THRESHOLDS_SM90)
    return t.get(num_heads, 1024 if t is SPARSE_THRESHOLDS_SM100 else 256)


def require_sparse_mqa(batch: Batch, backend: str, threshold: int, require_uniform: bool, topk: int,
                       prefill_backend: str | None) -> None:
    """Sparse MLA runs every token through its sparse kernel unless the batch
    has prefill requests that vLLM sends to dense MHA prefill: the layer has
    an MLA prefill backend (``prefill_backend``) and the longest prefill
    sequence fits in index_topk (``_use_dense_mha_prefill``; the masked-MHA
    path is SM100 and FA4 only)."""
    decodes = decode_split(batch, threshold, require_uniform)
    if decodes == batch.num_requests or prefill_backend is None:
        return
    if int(batch.seq_lens_cpu[decodes:].max()) <= topk:
        raise RoutedElsewhere(
            f"vLLM's {backend} sends the {batch.num_requests - decodes} prefill requests (sequences of at most "
            f"index_topk {topk} tokens) to dense MHA prefill (the MLA prefill row runs them)")


@dataclass
class SparsePlan:
    batch: Batch
    num_tokens: int
    q_pad: torch.Tensor | None = None  # [T, round_up(H, 64), 576], the head-padded query workspace


class FlashMLASparseAdapter(VllmMLAAdapter):
    name = "FLASHMLA_SPARSE"
    label = "vLLM's FlashMLA (sparse)"

    def __init__(self, env, p, row=None, **kw):
        super().__init__(env, p, row, **kw)
        self._q_pad: torch.Tensor | None = None

    def unavailable(self) -> str | None:
        why = self.needs_gpu()
        if why:
            return why
        cap = self.env.capability
        if cap is not None and cap[0] not in (9, 10):
            return "FlashMLA Sparse is only supported on Hopper and Blackwell DC devices."
        if self.fp8_cache:
            return ("vLLM's fp8 cache for FLASHMLA_SPARSE is fp8_ds_mla (656-byte tokens: fp8 NoPE with per-128 "
                    "scales, bf16 RoPE), a layout attn-select run does not write")
        if self.p.topk is None:
            return "sparse MLA needs the model's index_topk"
        return self.import_reason(INTERFACE)

    def build(self, batch: Batch) -> SparsePlan:
        if batch.page_size % FLASHMLA_PAGE:
            raise Unsupported(f"vLLM's sparse MLA reads pages of a multiple of {FLASHMLA_PAGE} tokens "
                              f"(got {batch.page_size})")
        thr = sparse_decode_threshold(self.p.num_heads, self.env.capability)
        require_sparse_mqa(batch, self.name, thr, True, self.p.topk or 0, self.row.mla_prefill)
        t = batch.num_tokens
        heads = -(-self.p.num_heads // SPARSE_PREFILL_HEAD_PAD) * SPARSE_PREFILL_HEAD_PAD
        if self._q_pad is None or self._q_pad.shape[0] < t or self._q_pad.shape[1] != heads:
            # vLLM's q_concat workspace; the padded heads are never read back
            self._q_pad = torch.zeros(t, heads, self.p.latent_dim, dtype=self.env.dtype, device=self.env.device)
        return SparsePlan(batch, t, self._q_pad[:t])

    def run(self, plan: SparsePlan, q, cache, sinks, out, *, rows: torch.Tensor, counts: torch.Tensor) -> None:
        iface = self.module(INTERFACE)
        h = self.p.num_heads
        plan.q_pad[:, :h].copy_(q)  # ops.concat_mla_q into the workspace
        kv = _flat_rows(cache, plan.batch.page_size).view(-1, 1, cache.shape[-1])
        indices = rows.view(plan.num_tokens, 1, -1)
        # vLLM passes out=None and keeps the real heads of the result; the
        # output argument (ours) writes in place where no head is padded
        in_place = plan.q_pad.shape[1] == h
        o, _, _ = iface.flash_mla_sparse_fwd(plan.q_pad, kv, indices, self.p.scale, topk_length=counts,
                                             out=out if in_place else None)
        if not in_place:
            out.copy_(o[:, :h])

    def kernel_name(self, plan: SparsePlan) -> str:
        pad = plan.q_pad.shape[1]
        heads = f"query padded to {pad} heads, real heads copied out" if pad != self.p.num_heads else "output in place"
        return (f"vLLM FlashMLA sparse (flash_mla_sparse_fwd, bf16 cache, top-{self.p.topk} rows; {heads}), "
                f"page {plan.batch.page_size}")

    def close(self) -> None:
        super().close()
        self._q_pad = None


def _flat_rows(cache: torch.Tensor, page_size: int) -> torch.Tensor:
    """``flat_kv_row_view``: [rows, D] over the paged cache, block b's token i at
    row b x rows_per_block + i (a contiguous cache: rows_per_block = page size)."""
    num_blocks, _, d = cache.shape
    if cache.stride(0) % d:
        raise ValueError("block stride is not a whole number of rows")
    stride_rows = cache.stride(0) // d
    return cache.as_strided(((num_blocks - 1) * stride_rows + page_size, d), (d, 1))
