"""FLASHINFER run adapter (flashinfer-python), used the way vLLM 0.33.0 uses it.

Cache layout: NHD, [num_pages, 2, page_size, Hkv, D] (vLLM's FlashInfer layout
off SM100).

``build(batch)`` once per step: the block table becomes FlashInfer's CSR page
list (``paged_kv_indptr`` int32 [B + 1], ``paged_kv_indices`` int32 [pages],
``paged_kv_last_page_len`` int32 [B]), split at ``num_decodes`` (decodes come
first), then

- decodes: XQA (``xqa_batch_decode_with_kv_cache``) when vLLM's rules pick the
  trtllm-API decode kernel on this GPU (SM90 with trtllm cubins), else
  ``BatchDecodeWithPagedKVCacheWrapper(use_tensor_cores=True).plan()``;
- prefills: ``BatchPrefillWithPagedKVCacheWrapper(backend="auto").plan()``
  (FlashInfer resolves fa3 on SM90, fa2 elsewhere), or, with sinks on SM90,
  ``BatchAttentionWithAttentionSinkWrapper`` as vLLM does.

``run`` calls the planned wrappers for one layer. The inner kernel that ran
is reported (``kernel_name``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from attn_select.backends.run.adapter import Adapter, Unsupported
from attn_select.backends.run.batch import Batch

WORKSPACE_BYTES = 256 * 1024 * 1024


def paged_kv_csr(batch: Batch, start: int, stop: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Block table rows [start, stop) -> (indptr, indices, last_page_len), CPU int32.

    indptr[i+1] - indptr[i] = pages of request i; indices lists them in order;
    last_page_len = tokens in each request's last page (1..page_size)."""
    seq = batch.seq_lens_cpu[start:stop].to(torch.int64)
    ps = batch.page_size
    n_pages = (seq + ps - 1) // ps
    indptr = torch.zeros(stop - start + 1, dtype=torch.int32)
    indptr[1:] = torch.cumsum(n_pages, 0)
    bt = batch.block_table_cpu[start:stop]
    used = torch.arange(bt.shape[1])[None, :] < n_pages[:, None]
    indices = bt[used].to(torch.int32)
    last = ((seq - 1) % ps + 1).to(torch.int32)
    return indptr, indices, last


@dataclass
class FIPlan:
    batch: Batch
    decode_kernel: str | None  # "xqa" | "tc-decode (fa2/fa3...)" | None when no decodes
    prefill_kernel: str | None
    decode: Any = None  # wrapper, or dict of XQA arguments
    prefill: Any = None
    prefill_sinks: bool = False


class FlashInferAdapter(Adapter):
    name = "FLASHINFER"

    def __init__(self, env, p, force_native_decode: bool = False):
        super().__init__(env, p)
        self.force_native_decode = force_native_decode

    def unavailable(self) -> str | None:
        if not self.env.is_cuda:
            return "FlashInfer needs a CUDA GPU"
        try:
            import flashinfer  # noqa: F401
        except Exception as e:
            return f"flashinfer not installed ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
        return None

    def _workspace(self, key: str) -> torch.Tensor:
        ws = self.env.workspace.get(key)
        if ws is None:
            ws = torch.zeros(WORKSPACE_BYTES, dtype=torch.uint8, device=self.env.device)
            self.env.workspace[key] = ws
        return ws

    def uses_xqa(self, batch: Batch) -> bool:
        return (batch.num_decodes > 0 and self.env.trtllm_decode == "xqa" and not self.force_native_decode)

    def build(self, batch: Batch) -> FIPlan:
        import flashinfer

        p, env = self.p, self.env
        kv_dtype = self.cache_torch_dtype()
        nd = batch.num_decodes
        plan = FIPlan(batch, None, None)
        dev = batch.device
        if nd > 0:
            if p.has_sink and not self.uses_xqa(batch):
                # FlashInferBackend.supports_sink: vLLM serves sinks through the
                # trtllm-API decode kernels only, never this decode wrapper
                # (which gave wrong results with sinks + sliding window here)
                raise Unsupported("vLLM never runs FlashInfer's native decode wrapper with sinks "
                                  "(supports_sink needs the trtllm decode kernels)")
            if self.uses_xqa(batch):
                if p.soft_cap:
                    # vLLM still picks XQA here and its call passes no cap:
                    # its decode would ignore the model's soft cap
                    raise Unsupported("vLLM would decode with XQA here, which takes no logits soft cap "
                                      "(vLLM passes none, so the cap would be ignored)")
                plan.decode = {
                    "block_tables": batch.block_table[:nd],
                    "seq_lens": batch.seq_lens[:nd],
                    "max_seq_len": int(batch.seq_lens_cpu[:nd].max()),
                }
                plan.decode_kernel = "xqa"
            else:
                indptr, indices, last = paged_kv_csr(batch, 0, nd)
                w = flashinfer.BatchDecodeWithPagedKVCacheWrapper(
                    self._workspace("float"), "NHD", use_tensor_cores=True)
                w.plan(indptr, indices.to(dev, non_blocking=True), last, p.num_heads, p.num_kv_heads,
                       p.head_size, batch.page_size, pos_encoding_mode="NONE", sm_scale=p.scale,
                       window_left=p.window_left, logits_soft_cap=p.soft_cap or 0.0,
                       q_data_type=env.dtype, kv_data_type=kv_dtype, o_data_type=env.dtype)
                plan.decode = w
                plan.decode_kernel = f"tensor-core decode ({_resolved(w)})"
        if batch.num_requests > nd:
            indptr, indices, last = paged_kv_csr(batch, nd, batch.num_requests)
            qo = (batch.query_start_loc_cpu[nd:] - batch.query_start_loc_cpu[nd]).to(torch.int32)
            cap = env.capability or (0, 0)
            if p.has_sink and cap == (9, 0):
                w = flashinfer.BatchAttentionWithAttentionSinkWrapper(
                    self._workspace("float"), "NHD", backend="auto", q_data_type=env.dtype,
                    kv_data_type=kv_dtype, head_dim_qk=p.head_size, head_dim_vo=p.head_size_v,
                    window_left=p.window_left)
                plan.prefill_sinks = True
                name = "attention-sink prefill"
            elif p.has_sink:
                raise Unsupported("FlashInfer prefill with sinks needs trtllm (SM100) or the SM90 sink wrapper")
            else:
                w = flashinfer.BatchPrefillWithPagedKVCacheWrapper(self._workspace("float"), "NHD", backend="auto")
                name = "paged prefill"
            w.plan(qo, indptr, indices.to(dev, non_blocking=True), last, p.num_heads, p.num_kv_heads,
                   p.head_size, batch.page_size, head_dim_vo=p.head_size_v, causal=True,
                   sm_scale=p.scale, window_left=p.window_left, logits_soft_cap=p.soft_cap or 0.0,
                   q_data_type=env.dtype, kv_data_type=kv_dtype, o_data_type=env.dtype)
            plan.prefill = w
            plan.prefill_kernel = f"{name} ({_resolved(w)})"
        return plan

    def run(self, plan: FIPlan, q: torch.Tensor, cache: torch.Tensor, sinks: torch.Tensor | None,
            out: torch.Tensor) -> None:
        nd = plan.batch.num_decodes
        p = self.p
        if plan.decode is not None:
            if plan.decode_kernel == "xqa":
                from flashinfer.decode import xqa_batch_decode_with_kv_cache

                xqa_batch_decode_with_kv_cache(
                    q[:nd], cache, self._workspace("xqa"), plan.decode["block_tables"],
                    plan.decode["seq_lens"], plan.decode["max_seq_len"], bmm1_scale=p.scale,
                    bmm2_scale=1.0, window_left=p.window_left, out=out[:nd], sinks=sinks, kv_layout="NHD")
            else:
                plan.decode.run(q[:nd], cache, out=out[:nd], sinks=sinks)
        if plan.prefill is not None:
            if plan.prefill_sinks:
                plan.prefill.run(q[nd:], cache, sinks, p.scale, out=out[nd:])
            else:
                plan.prefill.run(q[nd:], cache, out=out[nd:])

    def kernel_name(self, plan: FIPlan) -> str:
        return " + ".join(k for k in (plan.decode_kernel, plan.prefill_kernel) if k)


def _resolved(wrapper: Any) -> str:
    """The inner backend FlashInfer's auto dispatch resolved to (fa2 / fa3 / cudnn)."""
    for attr in ("resolved_backend", "_backend"):
        v = getattr(wrapper, attr, None)
        if isinstance(v, str):
            return v
    return "auto"
