"""CUTLASS_MLA run adapter: vLLM 0.33.0's ``sm100_cutlass_mla_decode``
(vllm/v1/attention/backends/mla/cutlass_mla.py, vllm/_custom_ops.py), on
compute capability 10.x only (``supports_compute_capability``: major == 10),
pages of 128 tokens (its only kernel block size).

- routing: the base builder (SINGLE_ONLY, reorder_batch_threshold 1): one new
  token per request;
- the impl pads the query to 128 heads (``q_pad_num_heads = MAX_HEADS``):
  the absorbed ql_nope is written into an (N, B, 512) view of a 128-head
  buffer and used transposed, q_pe copied into a (B, N, 64) view of another;
  with an fp8 cache the query is the fp8-quantized concat, split back;
- the shared workspace (128 MiB, grown to
  ``sm100_cutlass_mla_get_workspace_size(max_query_len x 128, num_reqs,
  SMs, num_kv_splits)``, vLLM's own arguments) and ``num_kv_splits = -1``
  (auto; FORCE_NUM_KV_SPLITS is not mirrored);
- ``sm100_cutlass_mla_decode(out [B, 128, 512], lse, q_nope, q_pe, cache,
  seq_lens, block_table, workspace, scale, num_kv_splits)``, bf16 output for
  an fp8 cache; the real heads are copied into the row's buffer;
- scales other than 1.0 raise, as vLLM's impl does.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attn_select.backends.run.adapter import Unsupported
from attn_select.backends.run.batch import Batch
from attn_select.backends.run.mla_routing import require_all_decodes
from attn_select.backends.run.mla_vllm import VllmMLAAdapter, sm_count

OPS = "vllm._custom_ops"
MAX_HEADS = 128
CUTLASS_PAGE = 128
INITIAL_WORKSPACE_BYTES = 128 * 1024 * 1024  # g_sm100_workspace
NUM_KV_SPLITS = -1  # auto-detect


@dataclass
class CutlassPlan:
    batch: Batch
    num_decodes: int
    block_table: torch.Tensor
    seq_lens: torch.Tensor
    out128: torch.Tensor  # [B, 128, 512]
    lse: torch.Tensor  # empty: no DCP
    q_nope_buf: torch.Tensor  # (N, B, rank) in a 128-head buffer
    q_pe_buf: torch.Tensor  # (B, N, rope) in a 128-head buffer


class CutlassMLAAdapter(VllmMLAAdapter):
    name = "CUTLASS_MLA"
    label = "vLLM's CUTLASS MLA (vllm._custom_ops)"

    def unavailable(self) -> str | None:
        why = self.needs_gpu()
        if why:
            return why
        cap = self.env.capability
        if cap is not None and cap[0] != 10:
            return (f"SM100 only: vLLM's CutlassMLABackend takes compute capability 10.x (sm100_cutlass_mla_decode), "
                    f"this GPU is {cap[0]}.{cap[1]}")
        if self.p.kv_scale != 1.0:
            return "CutlassMLAImpl does not support scaling for q and kv_latent yet"
        if self.p.num_heads > MAX_HEADS:
            return f"H must be <= {MAX_HEADS}, but got {self.p.num_heads}"
        return self.import_reason(OPS)

    def _workspace(self, nbytes: int) -> torch.Tensor:
        ws = self.env.workspace.get("cutlass_mla")
        if ws is None:
            ws = self.env.workspace["cutlass_mla"] = torch.empty(INITIAL_WORKSPACE_BYTES, dtype=torch.uint8,
                                                                 device=self.env.device)
        if ws.shape[0] < nbytes:
            ws.resize_(nbytes)
        return ws

    def build(self, batch: Batch) -> CutlassPlan:
        if batch.page_size != CUTLASS_PAGE:
            raise Unsupported(f"CUTLASS_MLA's kernel block size is {CUTLASS_PAGE} (got {batch.page_size})")
        require_all_decodes(batch, self.name, 1, require_uniform=True)
        ops = self.module(OPS)
        b, h, p = batch.num_requests, self.p.num_heads, self.p
        qsl = batch.query_start_loc_cpu
        max_query_len = int((qsl[1:] - qsl[:-1]).max())
        # SM100Workspace.ensure_size: vLLM passes max_query_len x block size as the sequence bound
        self._workspace(ops.sm100_cutlass_mla_get_workspace_size(max_query_len * CUTLASS_PAGE, b, sm_count(self.env),
                                                                 num_kv_splits=NUM_KV_SPLITS))
        dev = self.env.device
        out_dtype = torch.bfloat16 if self.fp8_cache else self.env.dtype
        # the 16-bit query's 128-head buffers (forward_impl's new_empty + resize_ to N heads)
        nope = torch.empty(MAX_HEADS * b * p.kv_lora_rank, dtype=self.env.dtype, device=dev)[:h * b * p.kv_lora_rank]
        pe = torch.empty(b * MAX_HEADS * p.qk_rope_head_dim, dtype=self.env.dtype, device=dev)[:b * h * p.qk_rope_head_dim]
        return CutlassPlan(batch, b, batch.block_table[:b], batch.seq_lens[:b],
                           torch.empty(b, MAX_HEADS, p.kv_lora_rank, dtype=out_dtype, device=dev),
                           torch.Tensor().to(dev), nope.view(h, b, p.kv_lora_rank), pe.view(b, h, p.qk_rope_head_dim))

    def run(self, plan: CutlassPlan, q: torch.Tensor, cache: torch.Tensor, sinks, out: torch.Tensor) -> None:
        rank = self.p.kv_lora_rank
        if self.fp8_cache:  # the fp8 concat, split back by forward_mqa
            q8 = self.quant_query(q)
            q_nope, q_pe = q8[..., :rank], q8[..., rank:]
        else:
            plan.q_nope_buf.copy_(q[..., :rank].transpose(0, 1))
            plan.q_pe_buf.copy_(q[..., rank:])
            q_nope, q_pe = plan.q_nope_buf.transpose(0, 1), plan.q_pe_buf
        ws = self.env.workspace["cutlass_mla"]
        self.module(OPS).sm100_cutlass_mla_decode(
            plan.out128, plan.lse, q_nope, q_pe, cache, plan.seq_lens, plan.block_table, ws, self.p.scale,
            NUM_KV_SPLITS)
        out.copy_(plan.out128[:, :self.p.num_heads])

    def kernel_name(self, plan: CutlassPlan) -> str:
        return (f"vLLM CUTLASS MLA (vllm._custom_ops sm100_cutlass_mla_decode, query in 128-head buffers; "
                f"real heads copied out), page {plan.batch.page_size}")
