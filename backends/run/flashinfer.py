"""FLASHINFER run adapter (flashinfer-python), used the way vLLM 0.33.0 uses it.

Cache layout (``FlashInferBackend.supported_kv_cache_layouts``): HND,
[num_pages, 2, Hkv, page_size, D], on 10.x (B200/GB200/B300), where the
trtllm-gen kernels read head-major pages; NHD, [num_pages, 2, page_size, Hkv,
D], elsewhere. vLLM 0.33.0 itself packs K|V in the last dim of one
[num_pages, H or N, N or H, 2 * D] tensor and hands the kernels the two
halves; we keep FlashInfer's own [num_pages, 2, ...] form of the same page
interior (K and V each contiguous per page), which every FlashInfer entry
point takes as well.

``build(batch)`` once per step, decodes first, as vLLM's
``FlashInferMetadataBuilder.build``:

- decodes: the trtllm-API kernel vLLM fixed at builder init (the run plan's
  ``row.flashinfer.decode_api``): XQA (``xqa_batch_decode_with_kv_cache``)
  on SM90/12.x, trtllm-gen (``trtllm_batch_decode_with_kv_cache``) on 10.x,
  both fed the decode rows of the block table; else
  ``BatchDecodeWithPagedKVCacheWrapper(use_tensor_cores=True).plan()`` on
  FlashInfer's CSR page list (``paged_kv_csr``);
- prefills: trtllm-gen context (``trtllm_batch_context_with_kv_cache``) when
  vLLM's ``use_trtllm_attention(is_prefill=True)`` says so for this batch
  (``row.flashinfer.prefill_trtllm``, decided by the selector's run plan), else
  ``BatchPrefillWithPagedKVCacheWrapper(backend="auto").plan()`` (FlashInfer
  resolves fa3 on SM90, fa2 elsewhere), or, with sinks on SM90,
  ``BatchAttentionWithAttentionSinkWrapper`` as vLLM does.

``run`` calls the planned kernels for one layer. The inner kernel that ran
is reported (``kernel_name``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from attn_select.backends.run.adapter import Adapter, Unsupported, quantize_fp8
from attn_select.backends.run.batch import Batch
from attn_select.selector.run_plan import DEFAULT_WORKSPACE_BYTES, TRTLLM_GEN, XQA

WORKSPACE_BYTES = 256 * 1024 * 1024
TRTLLM_GEN_DECODE = "trtllm-gen decode"
TRTLLM_GEN_CONTEXT = "trtllm-gen context"


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
    decode_kernel: str | None  # "xqa" | "trtllm-gen decode" | "tensor-core decode (...)" | None: no decodes
    prefill_kernel: str | None
    decode: Any = None  # wrapper, or dict of XQA / trtllm-gen arguments
    prefill: Any = None  # wrapper, or dict of trtllm-gen context arguments
    prefill_sinks: bool = False
    counter: torch.Tensor | None = None  # trtllm-gen multi-CTA KV counters
    prefill_q_dtype: torch.dtype | None = None  # fp8 where vLLM quantizes the prefill query


class FlashInferAdapter(Adapter):
    name = "FLASHINFER"
    cuda_only = True

    def __init__(self, env, p, row=None):
        super().__init__(env, p, row)
        # Fixed before alloc_cache: the layout follows the GPU (vLLM's rule)
        # and whatever trtllm-gen part this adapter will run (which reads HND only).
        major = env.capability[0] if env.capability else None
        trtllm_gen = self._decode_api() == TRTLLM_GEN or self.row.flashinfer.prefill_trtllm
        self.kv_layout = "HND" if major == 10 or trtllm_gen else "NHD"
        # The paged wrappers, made once and re-planned every step, as vLLM's
        # builder keeps them (_get_decode_wrapper / _get_prefill_wrapper): a
        # new wrapper pins host buffers, which is not per-step work.
        self._wrappers: dict[str, Any] = {}

    def close(self) -> None:
        self._wrappers.clear()

    def _wrapper(self, key: str, make: Any) -> Any:
        w = self._wrappers.get(key)
        if w is None:
            w = self._wrappers[key] = make()
        return w

    def unavailable(self) -> str | None:
        if not self.env.is_cuda:
            return "FlashInfer needs a CUDA GPU"
        try:
            import flashinfer  # noqa: F401
        except Exception as e:
            return f"flashinfer not installed ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
        return None

    def alloc_cache(self, num_pages: int, page_size: int) -> torch.Tensor:
        if self.kv_layout == "NHD":
            return super().alloc_cache(num_pages, page_size)
        p = self.p
        if p.head_size != p.head_size_v:
            raise ValueError("this cache layout needs head_size == head_size_v")
        return torch.empty(num_pages, 2, p.num_kv_heads, page_size, p.head_size,
                           dtype=self.cache_torch_dtype(), device=self.env.device)

    def kv_views(self, cache: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self.kv_layout == "NHD":
            return super().kv_views(cache)
        # [P, Hkv, N, D] pages seen as [P, N, Hkv, D] (strided views, no copy)
        return cache[:, 0].transpose(1, 2), cache[:, 1].transpose(1, 2)

    def _workspace(self, key: str, nbytes: int = WORKSPACE_BYTES) -> torch.Tensor:
        ws = self.env.workspace.get(key)
        if ws is None or ws.numel() < nbytes:
            ws = torch.zeros(nbytes, dtype=torch.uint8, device=self.env.device)
            self.env.workspace[key] = ws
        return ws

    def _decode_api(self) -> str | None:
        """The trtllm-API decode kernel vLLM fixed at builder init; None for the
        native decode wrapper (also the plan's native-decode comparison row)."""
        return self.row.flashinfer.decode_api

    def build(self, batch: Batch) -> FIPlan:
        import flashinfer

        p, env = self.p, self.env
        kv_dtype = self.cache_torch_dtype()
        nd = batch.num_decodes
        plan = FIPlan(batch, None, None)
        dev = batch.device
        api = self._decode_api() if nd > 0 else None
        trtllm_prefill = batch.num_requests > nd and self.row.flashinfer.prefill_trtllm
        if api == TRTLLM_GEN:
            self._refuse_on_trtllm_gen("decode with trtllm-gen")
        if trtllm_prefill:
            self._refuse_on_trtllm_gen("run the prefills with trtllm-gen context")
        if api == TRTLLM_GEN or trtllm_prefill:
            plan.counter = self._counter(batch)
        if nd > 0:
            if p.has_sink and api is None:
                # FlashInferBackend.supports_sink: vLLM serves sinks through the
                # trtllm-API decode kernels only, never this decode wrapper
                # (which gave wrong results with sinks + sliding window here)
                raise Unsupported("vLLM never runs FlashInfer's native decode wrapper with sinks "
                                  "(supports_sink needs the trtllm decode kernels)")
            if api == XQA:
                self._refuse_soft_cap("decode with XQA")
                plan.decode = {
                    "block_tables": batch.block_table[:nd],
                    "seq_lens": batch.seq_lens[:nd],
                    "max_seq_len": int(batch.seq_lens_cpu[:nd].max()),
                }
                plan.decode_kernel = XQA
            elif api == TRTLLM_GEN:
                # build()'s FlashInferTrtllmAPIDecode: the decodes' rows of the
                # block table and their seq_lens (device), and the whole batch's
                # max_seq_len (common_attn_metadata.max_seq_len, not the decodes')
                plan.decode = {
                    "block_tables": batch.block_table[:nd],
                    "seq_lens": batch.seq_lens[:nd],
                    "max_seq_len": batch.max_seq_len,
                }
                plan.decode_kernel = TRTLLM_GEN_DECODE
            else:
                indptr, indices, last = paged_kv_csr(batch, 0, nd)
                w = self._wrapper("decode", lambda: flashinfer.BatchDecodeWithPagedKVCacheWrapper(
                    self._workspace("float"), self.kv_layout, use_tensor_cores=True))
                w.plan(indptr, indices.to(dev, non_blocking=True), last, p.num_heads, p.num_kv_heads,
                       p.head_size, batch.page_size, pos_encoding_mode="NONE", sm_scale=p.scale,
                       window_left=p.window_left, logits_soft_cap=p.soft_cap or 0.0,
                       q_data_type=env.dtype, kv_data_type=kv_dtype, o_data_type=env.dtype)
                plan.decode = w
                plan.decode_kernel = f"tensor-core decode ({_resolved(w)})"
        if trtllm_prefill:
            plan.prefill = self._context_args(batch)
            plan.prefill_kernel = TRTLLM_GEN_CONTEXT
        elif batch.num_requests > nd:
            indptr, indices, last = paged_kv_csr(batch, nd, batch.num_requests)
            qo = (batch.query_start_loc_cpu[nd:] - batch.query_start_loc_cpu[nd]).to(torch.int32)
            cap = env.capability or (0, 0)
            qdt = plan.prefill_q_dtype = self.prefill_q_dtype()
            if p.has_sink and cap == (9, 0):
                w = self._wrapper("sink prefill", lambda: flashinfer.BatchAttentionWithAttentionSinkWrapper(
                    self._workspace("float"), self.kv_layout, backend="auto", q_data_type=qdt,
                    kv_data_type=kv_dtype, head_dim_qk=p.head_size, head_dim_vo=p.head_size_v,
                    window_left=p.window_left))
                plan.prefill_sinks = True
                name = "attention-sink prefill"
            elif p.has_sink:
                raise Unsupported("FlashInfer prefill with sinks needs trtllm (SM100) or the SM90 sink wrapper")
            else:
                w = self._wrapper("prefill", lambda: flashinfer.BatchPrefillWithPagedKVCacheWrapper(
                    self._workspace("float"), self.kv_layout, backend="auto"))
                name = "paged prefill"
            w.plan(qo, indptr, indices.to(dev, non_blocking=True), last, p.num_heads, p.num_kv_heads,
                   p.head_size, batch.page_size, head_dim_vo=p.head_size_v, causal=True,
                   sm_scale=p.scale, window_left=p.window_left, logits_soft_cap=p.soft_cap or 0.0,
                   q_data_type=qdt, kv_data_type=kv_dtype, o_data_type=env.dtype)
            plan.prefill = w
            plan.prefill_kernel = f"{name} ({_resolved(w)})"
        return plan

    def prefill_q_dtype(self) -> torch.dtype:
        """vLLM's ``get_q_data_type(is_prefill=True)``: on an fp8 cache, SM90
        (native FA3) and 10.x take an fp8 query, quantized by the impl
        (``maybe_quant_query``); other GPUs (fa2 only) keep the model dtype.
        Decode is not touched: XQA takes the 16-bit query."""
        cap = self.env.capability or (0, 0)
        if self.fp8_cache and (cap == (9, 0) or cap[0] == 10):
            return self.cache_torch_dtype()
        return self.env.dtype

    def _refuse_soft_cap(self, what: str) -> None:
        """vLLM 0.33.0 still picks XQA / trtllm-gen for a soft-capped model and
        passes them no cap (explain warns): that step would ignore it."""
        if self.p.soft_cap:
            raise Unsupported(f"vLLM would {what} here, which takes no logits soft cap "
                              "(vLLM passes none, so the cap would be ignored)")

    def _refuse_on_trtllm_gen(self, what: str) -> None:
        """What attn-select run cannot reproduce of vLLM's trtllm-gen calls."""
        self._refuse_soft_cap(what)
        if self.fp8_cache:
            # On 10.x vLLM quantizes the query to fp8 first (scaled_fp8_quant with
            # the layer's q_scale, unless disable_flashinfer_q_quantization) and
            # folds q/k scales into bmm1_scale; we pass the 16-bit query as is.
            raise Unsupported(f"vLLM would {what} on an fp8 KV cache with an fp8-quantized query, "
                              "which attn-select run does not reproduce")

    def _counter(self, batch: Batch) -> torch.Tensor:
        """The zeroed multi-CTA KV counter buffer vLLM allocates once
        (``_get_multi_ctas_kv_counter_buffer``) and hands both trtllm-gen calls;
        without it FlashInfer allocates and zeroes one per call. Sized with
        FlashInfer's own rule for this batch's tokens (vLLM: its max batched
        tokens), the kernels reset it after each launch."""
        from flashinfer.utils import get_trtllm_gen_multi_ctas_kv_counter_bytes

        dev = self.env.device
        sms = torch.cuda.get_device_properties(dev).multi_processor_count if dev.type == "cuda" else 1
        nbytes = get_trtllm_gen_multi_ctas_kv_counter_bytes(batch.num_tokens, self.p.num_heads, sms)
        return self._workspace("trtllm-gen counter", nbytes)

    def _context_args(self, batch: Batch) -> dict[str, Any]:
        """build()'s TRTLLMPrefill for the prefill rows [num_decodes, B)."""
        nd, n = batch.num_decodes, batch.num_requests
        seq = batch.seq_lens[nd:]
        # cum_seq_lens_kv: vLLM fills it with the running sum of KV *pages* per
        # prefill (its comment: "cumulative sum of the number of KV cache
        # blocks"), not of tokens as FlashInfer's docstring words it; we pass
        # what vLLM passes. It is computed on the device, as vLLM does.
        cum_kv = torch.zeros(n - nd + 1, dtype=torch.int32, device=batch.device)
        cum_kv[1:] = torch.cumsum((seq + batch.page_size - 1) // batch.page_size, 0)
        q_lens = batch.query_start_loc_cpu[nd + 1:] - batch.query_start_loc_cpu[nd:-1]
        return {
            "block_tables": batch.block_table[nd:],
            "seq_lens": seq,
            "max_q_len": int(q_lens.max()),
            # vLLM passes the whole batch's max_seq_len, decodes included
            "max_kv_len": batch.max_seq_len,
            "batch_size": n - nd,
            "cum_seq_lens_q": batch.query_start_loc[nd:] - batch.query_start_loc[nd],
            "cum_seq_lens_kv": cum_kv,
        }

    def run(self, plan: FIPlan, q: torch.Tensor, cache: torch.Tensor, sinks: torch.Tensor | None,
            out: torch.Tensor) -> None:
        nd = plan.batch.num_decodes
        p = self.p
        if plan.decode is not None:
            if plan.decode_kernel == XQA:
                from flashinfer.decode import xqa_batch_decode_with_kv_cache

                xqa_batch_decode_with_kv_cache(
                    q[:nd], cache, self._workspace("xqa"), plan.decode["block_tables"],
                    plan.decode["seq_lens"], plan.decode["max_seq_len"], bmm1_scale=p.scale,
                    bmm2_scale=1.0, window_left=p.window_left, out=out[:nd], sinks=sinks, kv_layout="NHD")
            elif plan.decode_kernel == TRTLLM_GEN_DECODE:
                from flashinfer.decode import trtllm_batch_decode_with_kv_cache

                # FlashInferImpl.forward's trtllm-gen decode call: bmm1 = softmax
                # scale (q/k scales are 1 on a 16-bit cache), bmm2 = 1 (v scale),
                # one query token per request, no cap, the layer's sinks.
                trtllm_batch_decode_with_kv_cache(
                    query=q[:nd], kv_cache=cache, workspace_buffer=self._trtllm_workspace(),
                    **plan.decode, bmm1_scale=p.scale, bmm2_scale=1.0, window_left=p.window_left,
                    sinks=sinks, out=out[:nd], kv_layout="HND", backend=TRTLLM_GEN, q_len_per_req=1,
                    multi_ctas_kv_counter_buffer=plan.counter)
            else:
                plan.decode.run(q[:nd], cache, out=out[:nd], sinks=sinks)
        if plan.prefill is not None:
            if plan.prefill_kernel == TRTLLM_GEN_CONTEXT:
                from flashinfer.prefill import trtllm_batch_context_with_kv_cache

                # FlashInferImpl.forward's trtllm-gen context call; vLLM leaves
                # kv_layout at its default, "HND", which we spell out.
                trtllm_batch_context_with_kv_cache(
                    query=q[nd:], kv_cache=cache, workspace_buffer=self._trtllm_workspace(),
                    **plan.prefill, bmm1_scale=p.scale, bmm2_scale=1.0, window_left=p.window_left,
                    sinks=sinks, out=out[nd:], kv_layout="HND", multi_ctas_kv_counter_buffer=plan.counter)
            else:
                qp = q[nd:]
                if plan.prefill_q_dtype not in (None, qp.dtype):  # scales 1.0: no calibrated ones
                    qp = quantize_fp8(qp, plan.prefill_q_dtype)
                if plan.prefill_sinks:
                    plan.prefill.run(qp, cache, sinks, p.scale, out=out[nd:])
                else:
                    plan.prefill.run(qp, cache, out=out[nd:])

    def _trtllm_workspace(self) -> torch.Tensor:
        """vLLM's one trtllm workspace (``_get_trtllm_workspace_buffer``):
        VLLM_FLASHINFER_WORKSPACE_BUFFER_SIZE zeroed bytes."""
        return self._workspace("trtllm-gen", DEFAULT_WORKSPACE_BYTES)

    def kernel_name(self, plan: FIPlan) -> str:
        return " + ".join(k for k in (plan.decode_kernel, plan.prefill_kernel) if k)


def _resolved(wrapper: Any) -> str:
    """The inner backend FlashInfer's auto dispatch resolved to (fa2 / fa3 / cudnn)."""
    for attr in ("resolved_backend", "_backend"):
        v = getattr(wrapper, attr, None)
        if isinstance(v, str):
            return v
    return "auto"
