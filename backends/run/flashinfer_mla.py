"""FLASHINFER_MLA run adapter: two rows, one adapter (the row's variant picks).

FLASHINFER_MLA itself is what vLLM 0.33.0 runs
(vllm/v1/attention/backends/mla/flashinfer_mla.py): FlashInfer's
``trtllm_batch_decode_with_kv_cache_mla``, trtllm-gen's MLA decode, on
compute capability 10.x only (``supports_compute_capability``: major == 10).

- routing: the builder keeps the base reorder_batch_threshold of 1 (VARLEN):
  one new token per request, the rest to the MLA prefill backend;
- per layer (``FlashInferMLAImpl.forward_mqa``): the query viewed
  [num_decodes, q_len, H, 576] (fp8 with an fp8 cache, quantized with
  _q_scale), the cache with a head axis ``kv_cache.unsqueeze(1)``, the shared
  128 MiB int8 workspace, qk_nope_head_dim / kv_lora_rank / qk_rope_head_dim,
  block_tables, seq_lens, max_seq_len, ``bmm1_scale`` = scale (x q_scale x
  k_scale with fp8), ``bmm2_scale`` = 1 (x k_scale with fp8),
  return_lse=False, and ``backend="cute-dsl"`` for head counts trtllm-gen
  cannot tile, else, on 32/64-token pages, a persistent zeroed
  ``multi_ctas_kv_counter_buffer`` sized by
  ``get_trtllm_gen_multi_ctas_kv_counter_bytes(max batch, heads, SMs)``
  (vLLM's max batch: max_num_batched_tokens, 8192 for its API server on a
  large GPU). The output is copied into the row's buffer (vLLM passes no
  ``out``).

The comparison row (variant ``BatchMLAPagedAttentionWrapper``) is FlashInfer's
planned MLA wrapper, which vLLM 0.33.0 does not call for any backend (SGLang's
FlashInfer MLA backend does): ``plan()`` once per step with CSR metadata
(qo_indptr, kv_indptr, kv_indices, kv_len_arr), causal, the layer's scale,
on FlashInfer's own backend choice ("auto": its SM90 ranking), and
``run(query=absorbed q [T, H, 576], kv_cache=the latent cache, out=...)`` per
layer, on any GPU FlashInfer plans for, 16-bit caches only. The row names the
backend FlashInfer planned.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from attn_select.backends.run.adapter import Unsupported
from attn_select.backends.run.batch import Batch
from attn_select.backends.run.mla_routing import require_all_decodes
from attn_select.backends.run.mla_vllm import VllmMLAAdapter, sm_count
from attn_select.selector.run_plan import MLA_WRAPPER

DECODE = "flashinfer.decode"
UTILS = "flashinfer.utils"
MLA = "flashinfer.mla"
WORKSPACE_BYTES = 128 * 1024 * 1024  # FLASHINFER_MLA_WORKSPACE_BUFFER_SIZE
# _mla_counter_max_batch = max_num_batched_tokens or max_num_seqs: the
# OpenAI server's default batched-token budget on a >= 70 GiB GPU
MAX_NUM_BATCHED_TOKENS = 8192
QK_NOPE_DIMS = (64, 128, 192)  # FlashInferMLABackend.supports_combination
# The keywords FlashInferMLAImpl.forward_mqa passes (tests compare them with vLLM's source)
VLLM_KEYWORDS = frozenset((
    "query", "kv_cache", "workspace_buffer", "qk_nope_head_dim", "kv_lora_rank", "qk_rope_head_dim",
    "block_tables", "seq_lens", "max_seq_len", "bmm1_scale", "bmm2_scale", "return_lse",
))


def trtllm_gen_tiles(num_heads: int) -> bool:
    """trtllm-gen's MLA decode groups heads in tiles of 8 (<= 8), 16 (<= 32) or 64."""
    tile = 8 if num_heads <= 8 else 16 if num_heads <= 32 else 64
    return num_heads % min(num_heads, tile) == 0


@dataclass
class FIMLAPlan:
    batch: Batch
    num_decodes: int
    block_table: torch.Tensor
    seq_lens: torch.Tensor
    extra: dict
    wrapper: Any = None
    planned: str = ""


class FlashInferMLAAdapter(VllmMLAAdapter):
    name = "FLASHINFER_MLA"
    label = "FlashInfer"

    def __init__(self, env, p, row=None, **kw):
        super().__init__(env, p, row, **kw)
        self._wrapper: Any = None

    @property
    def wrapper_row(self) -> bool:
        return self.row.variant == MLA_WRAPPER

    def unavailable(self) -> str | None:
        why = self.needs_gpu()
        if why:
            return why
        if self.wrapper_row:
            if self.fp8_cache:
                return "the BatchMLAPagedAttentionWrapper comparison row runs a 16-bit cache only"
            return self.import_reason(MLA)
        cap = self.env.capability
        if cap is not None and cap[0] != 10:
            return (f"SM100 only: vLLM's FlashInferMLABackend takes compute capability 10.x (trtllm-gen MLA "
                    f"decode), this GPU is {cap[0]}.{cap[1]}")
        if self.p.qk_nope_head_dim and self.p.qk_nope_head_dim not in QK_NOPE_DIMS:
            return ("FlashInfer MLA kernel requires qk_nope_head_dim in [64, 128, 192], but got "
                    f"{self.p.qk_nope_head_dim}")
        return self.import_reason(DECODE) or self.import_reason(UTILS)

    def _workspace(self) -> torch.Tensor:
        key = "flashinfer_mla"
        ws = self.env.workspace.get(key)
        if ws is None:
            ws = self.env.workspace[key] = torch.zeros(WORKSPACE_BYTES, dtype=torch.int8, device=self.env.device)
        return ws

    def build(self, batch: Batch) -> FIMLAPlan:
        b = batch.num_requests
        if self.wrapper_row:
            return self._plan_wrapper(batch)
        if batch.page_size not in (32, 64):
            raise Unsupported(f"FLASHINFER_MLA's kernel block sizes are 32 and 64 (got {batch.page_size})")
        require_all_decodes(batch, self.name, 1, require_uniform=False)
        extra: dict = {}
        h = self.p.num_heads
        if not trtllm_gen_tiles(h):
            extra["backend"] = "cute-dsl"
        else:
            utils = self.module(UTILS)
            key = "flashinfer_mla_counter"
            nbytes = utils.get_trtllm_gen_multi_ctas_kv_counter_bytes(MAX_NUM_BATCHED_TOKENS, h, sm_count(self.env))
            buf = self.env.workspace.get(key)
            if buf is None or buf.numel() < nbytes:
                buf = self.env.workspace[key] = torch.zeros(nbytes, dtype=torch.uint8, device=self.env.device)
            extra["multi_ctas_kv_counter_buffer"] = buf
        return FIMLAPlan(batch, b, batch.block_table[:b], batch.seq_lens[:b], extra)

    def _plan_wrapper(self, batch: Batch) -> FIMLAPlan:
        mla = self.module(MLA)
        if self._wrapper is None:  # one wrapper, planned again every step
            self._wrapper = mla.BatchMLAPagedAttentionWrapper(self._workspace().view(torch.uint8), backend="auto")
        wrapper = self._wrapper
        pages = -(-batch.seq_lens_cpu // batch.page_size)
        kv_indptr = torch.zeros(batch.num_requests + 1, dtype=torch.int32)
        kv_indptr[1:] = pages.cumsum(0)
        kv_indices = torch.cat([batch.block_table_cpu[r, :int(n)] for r, n in enumerate(pages.tolist())])
        dev = batch.device
        meta = mla.MLAPlanMetadata.csr(qo_indptr=batch.query_start_loc, kv_indptr=kv_indptr.to(dev),
                                       kv_indices=kv_indices.to(dev), kv_len_arr=batch.seq_lens)
        wrapper.plan(metadata=meta, num_heads=self.p.num_heads, head_dim_ckv=self.p.kv_lora_rank,
                     head_dim_kpe=self.p.qk_rope_head_dim, page_size=batch.page_size, causal=True,
                     sm_scale=self.p.scale, q_data_type=self.env.dtype, kv_data_type=self.cache_torch_dtype())
        planned = getattr(wrapper, "_planned_backend_name", None) or "?"
        return FIMLAPlan(batch, batch.num_requests, batch.block_table, batch.seq_lens, {}, wrapper, planned)

    def run(self, plan: FIMLAPlan, q: torch.Tensor, cache: torch.Tensor, sinks, out: torch.Tensor) -> None:
        if plan.wrapper is not None:
            plan.wrapper.run(query=q, kv_cache=cache, out=out)
            return
        fp8 = self.fp8_cache
        query = self.quant_query(q) if fp8 else q
        query = query.view(plan.num_decodes, -1, q.shape[-2], q.shape[-1])
        q_scale, k_scale = 1.0, float(self.p.kv_scale)  # layer._q_scale_float, _k_scale_float
        bmm1 = self.p.scale * (q_scale * k_scale if fp8 else 1.0)
        bmm2 = 1.0 * (k_scale if fp8 else 1.0)
        o = self.module(DECODE).trtllm_batch_decode_with_kv_cache_mla(
            query=query, kv_cache=cache.unsqueeze(1), workspace_buffer=self._workspace(),
            qk_nope_head_dim=self.p.qk_nope_head_dim, kv_lora_rank=self.p.kv_lora_rank,
            qk_rope_head_dim=self.p.qk_rope_head_dim, block_tables=plan.block_table, seq_lens=plan.seq_lens,
            max_seq_len=plan.batch.max_seq_len, bmm1_scale=bmm1, bmm2_scale=bmm2, return_lse=False, **plan.extra)
        out.copy_(o.view(-1, o.shape[-2], o.shape[-1]))

    def kernel_name(self, plan: FIMLAPlan) -> str:
        if plan.wrapper is not None:
            return (f"FlashInfer BatchMLAPagedAttentionWrapper ({plan.planned} backend), a comparison: vLLM's "
                    f"FLASHINFER_MLA calls trtllm_batch_decode_with_kv_cache_mla on SM100; page {plan.batch.page_size}")
        how = "cute-dsl" if plan.extra.get("backend") == "cute-dsl" else "auto (trtllm-gen)"
        return (f"FlashInfer trtllm_batch_decode_with_kv_cache_mla ({how}; output copied into the row's buffer), "
                f"page {plan.batch.page_size}")

    def close(self) -> None:
        super().close()
        self._wrapper = None
