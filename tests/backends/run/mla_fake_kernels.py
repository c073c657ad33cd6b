"""Fakes of the MLA kernels' entry points the MLA run adapters call, for CPU tests.

Each fake has the parameter list of vLLM 0.33.0's (or FlashInfer
0.7.2.post1's) function, checked against the source files where they are
present (test_mla_vendor_fakes.py), makes the checks the real wrapper makes
before launching, records every call's arguments by name, and computes the
attention itself from exactly the arguments it is given, so a wrong
argument gives a wrong result as well as a failed assertion:

- ``FakeFlashMLA``: vllm/third_party/flashmla/flash_mla_interface.py
  (``FlashMLASchedMeta``, ``get_mla_metadata``, ``flash_mla_with_kvcache``,
  ``flash_mla_sparse_fwd``);
- ``FakeFlashMLAOps``: vllm/v1/attention/ops/flashmla.py's fp8 pair;
- ``FakeVllmFlashAttnMLA``: vllm/vllm_flash_attn with FA3's ``q_v`` and
  the non-paged varlen form (``cu_seqlens_k``) the MLA prefill uses;
- ``FakeFlashInferDecode`` / ``FakeFlashInferUtils`` / ``FakeFlashInferMLA``:
  ``trtllm_batch_decode_with_kv_cache_mla``, the counter-size helper and
  ``BatchMLAPagedAttentionWrapper`` with ``MLAPlanMetadata``;
- ``FakeCustomOps``: vllm/_custom_ops.py's two SM100 CUTLASS MLA ops.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Optional

import torch

from fa_fake_kernels import FakeVllmFlashAttn

FP8 = (torch.float8_e4m3fn, torch.float8_e5m2)


class Recorder:
    """``calls``: (entry point, {parameter: value}) per call, every parameter
    bound; ``passed``: entry point -> (positional count, keyword names) per call."""

    RECORDED: tuple[str, ...] = ()

    def __init__(self):
        self.calls: list[tuple[str, dict]] = []
        self.passed: dict[str, list[tuple[int, frozenset]]] = {}
        for name in self.RECORDED:
            setattr(self, name, self._wrap(name, getattr(self, name)))

    def _wrap(self, name, fn):
        @functools.wraps(fn)  # inspect.signature still reads fn's parameters
        def call(*args, **kwargs):
            self.passed.setdefault(name, []).append((len(args), frozenset(kwargs)))
            return fn(*args, **kwargs)

        return call

    def note(self, name: str, args: dict) -> None:
        args = dict(args)
        args.pop("self", None)
        self.calls.append((name, args))

    def of(self, name: str) -> list[dict]:
        return [a for n, a in self.calls if n == name]


def paged_latent_attention(q, k_cache, block_table, seqlens, dv, scale, causal, k_mult=1.0, q_mult=1.0):
    """FlashMLA's dense decode: q [B, s_q, H, D], k_cache [P, page, 1, D];
    request r's s_q queries are the last of its seqlens[r] keys (bottom-right
    causal when ``causal``). Returns (out [B, s_q, H, dv] float32, lse [B, H, s_q])."""
    b, s_q, h, d = q.shape
    assert k_cache.dim() == 4 and k_cache.shape[2] == 1 and k_cache.shape[3] == d
    page = k_cache.shape[1]
    out = torch.zeros(b, s_q, h, dv)
    lse = torch.full((b, h, s_q), float("-inf"))
    for r in range(b):
        n = int(seqlens[r])
        kv = k_cache[block_table[r, :-(-n // page)].long()].reshape(-1, d)[:n].float() * k_mult
        s = torch.einsum("qhd,kd->hqk", q[r].float() * q_mult, kv) * scale
        if causal:
            qpos = torch.arange(n - s_q, n)[:, None]
            s = s.masked_fill(~(torch.arange(n)[None] <= qpos)[None], float("-inf"))
        out[r] = torch.einsum("hqk,kd->qhd", torch.softmax(s, -1), kv[:, :dv])
        lse[r] = torch.logsumexp(s, -1)
    return out, lse


# -- FlashMLA (vllm.third_party.flashmla.flash_mla_interface) ---------------------


@dataclasses.dataclass
class FlashMLASchedMeta:
    @dataclasses.dataclass
    class Config:
        b: int
        s_q: int
        h_q: int
        page_block_size: int
        h_k: int
        causal: bool
        is_fp8_kvcache: bool
        topk: Optional[int]
        extra_page_block_size: Optional[int]
        extra_topk: Optional[int]
        enable_batch_invariant: bool

    have_initialized: bool = False
    config: Optional[Config] = None
    tile_scheduler_metadata: Optional[torch.Tensor] = None
    num_splits: Optional[torch.Tensor] = None


class FakeFlashMLA(Recorder):
    FlashMLASchedMeta = FlashMLASchedMeta
    RECORDED = ("get_mla_metadata", "flash_mla_with_kvcache", "flash_mla_sparse_fwd")

    def __init__(self):
        super().__init__()
        self.initialized = 0  # schedules made by a first call

    def get_mla_metadata(self, *args, **kwargs):
        self.note("get_mla_metadata", {"args": args, "kwargs": kwargs})
        return FlashMLASchedMeta(), None

    def flash_mla_with_kvcache(self, q, k_cache, block_table, cache_seqlens, head_dim_v, tile_scheduler_metadata,
                               num_splits=None, softmax_scale=None, causal=False, is_fp8_kvcache=False, indices=None,
                               attn_sink=None, extra_k_cache=None, extra_indices_in_kvcache=None, topk_length=None,
                               extra_topk_length=None, out=None, enable_batch_invariant=False):
        self.note("flash_mla_with_kvcache", locals())
        sched = tile_scheduler_metadata
        assert isinstance(sched, FlashMLASchedMeta), "tile_scheduler_metadata must be of type FlashMLASchedMeta"
        assert num_splits is None, "num_splits must be None"
        config = FlashMLASchedMeta.Config(q.shape[0], q.shape[1], q.shape[2], k_cache.shape[1], k_cache.shape[2],
                                          causal, is_fp8_kvcache, None if indices is None else indices.shape[-1],
                                          None, None, enable_batch_invariant)
        if not sched.have_initialized:
            sched.have_initialized, sched.config = True, config
            sched.tile_scheduler_metadata = torch.zeros(4, 8, dtype=torch.int32)
            sched.num_splits = torch.zeros(q.shape[0] + 1, dtype=torch.int32)
            self.initialized += 1
        else:
            assert sched.config == config, "inputs inconsistent with sched_meta"
        assert indices is None and attn_sink is None and topk_length is None, "dense attention only here"
        assert block_table is not None and cache_seqlens is not None
        assert q.dtype in (torch.bfloat16, torch.float16) and k_cache.dtype == q.dtype and not is_fp8_kvcache
        assert head_dim_v == 512 and q.shape[-1] == 576
        assert block_table.dtype == torch.int32 and cache_seqlens.dtype == torch.int32
        assert k_cache.shape[1] == 64, "FlashMLA's dense kernel reads 64-token pages"
        o, lse = paged_latent_attention(q, k_cache, block_table, cache_seqlens, head_dim_v, softmax_scale, causal)
        if out is not None:
            assert out.shape == o.shape and out.dtype == q.dtype and out.is_contiguous()
            out.copy_(o)
            return out, lse
        return o.to(q.dtype), lse

    def flash_mla_sparse_fwd(self, q, kv, indices, sm_scale, d_v=512, attn_sink=None, topk_length=None, out=None):
        self.note("flash_mla_sparse_fwd", locals())
        s_q, h_q, d = q.shape
        assert q.dtype == torch.bfloat16 and kv.dtype == torch.bfloat16 and d_v == 512
        assert h_q % 64 == 0, "the bf16 sparse kernel takes a multiple of 64 heads (vLLM pads)"
        assert kv.dim() == 3 and kv.shape[1] == 1 and kv.shape[2] == d
        assert indices.dtype == torch.int32 and indices.shape[:2] == (s_q, 1)
        s_kv = kv.shape[0]
        o = torch.zeros(s_q, h_q, d_v)
        lse = torch.full((s_q, h_q), float("-inf"))
        for t in range(s_q):
            idx = indices[t, 0]
            if topk_length is not None:
                assert topk_length.dtype == torch.int32
                idx = idx[:int(topk_length[t])]
            idx = idx[(idx >= 0) & (idx < s_kv)].long()
            rows = kv[idx, 0].float()
            s = q[t].float() @ rows.T * sm_scale
            o[t] = torch.softmax(s, -1) @ rows[:, :d_v]
            lse[t] = torch.logsumexp(s, -1)
        if out is not None:
            assert out.shape == (s_q, h_q, d_v) and out.is_contiguous()
            out.copy_(o)
            o = out
        return o.to(q.dtype) if out is None else o, lse.max(-1).values, lse


class FakeFlashMLAOps(Recorder):
    """vllm.v1.attention.ops.flashmla's dense fp8 pair."""

    RECORDED = ("get_mla_metadata_dense_fp8", "flash_mla_with_kvcache_fp8")

    def __init__(self, num_sm_parts=8):
        super().__init__()
        self.num_sm_parts = num_sm_parts
        self.issued: list[tuple[torch.Tensor, torch.Tensor]] = []

    def get_mla_metadata_dense_fp8(self, cache_seqlens: torch.Tensor, num_q_tokens_per_head_k: int,
                                   num_heads_k: int) -> tuple[torch.Tensor, torch.Tensor]:
        self.note("get_mla_metadata_dense_fp8", locals())
        tile = torch.arange(self.num_sm_parts * 8, dtype=torch.int32).view(-1, 8) + 100 * len(self.issued)
        splits = torch.arange(cache_seqlens.numel() + 1, dtype=torch.int32) + 7
        self.issued.append((tile.clone(), splits.clone()))
        return tile, splits

    def flash_mla_with_kvcache_fp8(self, q: torch.Tensor, k_cache: torch.Tensor, block_table: torch.Tensor,
                                   cache_seqlens: torch.Tensor, head_dim_v: int, tile_scheduler_metadata: torch.Tensor,
                                   num_splits: torch.Tensor, softmax_scale: float | None = None, causal: bool = False,
                                   descale_q: torch.Tensor | None = None,
                                   descale_k: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        self.note("flash_mla_with_kvcache_fp8", locals())
        assert q.dtype == torch.float8_e4m3fn and k_cache.dtype == torch.float8_e4m3fn
        assert descale_q.shape == (1,) and descale_k.shape == (1,)
        assert any(torch.equal(tile_scheduler_metadata.cpu(), t) and torch.equal(num_splits.cpu(), s)
                   for t, s in self.issued), "stale fp8 schedule"
        o, lse = paged_latent_attention(q, k_cache, block_table, cache_seqlens, head_dim_v, softmax_scale, causal,
                                        k_mult=float(descale_k), q_mult=float(descale_q))
        return o.to(torch.bfloat16), lse


# -- vllm.vllm_flash_attn with FA3's q_v ---------------------------------------------


def qv_attention(q, k, v, q_v, cu_q, lens, starts_k, get_kv, scale, causal):
    """Varlen attention with FA3's fused value query: score = q.k (+ q_v.v).
    ``get_kv(r, n)`` gives request r's n keys and values [n, Hkv, d]."""
    h = q.shape[1]
    out = torch.zeros(q.shape[0], h, v.shape[-1])
    lse = torch.full((h, q.shape[0]), float("-inf"))
    for r in range(len(lens)):
        a, b, n = int(cu_q[r]), int(cu_q[r + 1]), int(lens[r])
        if b == a or n == 0:
            continue
        kk, vv = get_kv(r, n)
        g = h // kk.shape[1]
        kk, vv = kk.float().repeat_interleave(g, 1), vv.float().repeat_interleave(g, 1)
        s = torch.einsum("qhd,khd->hqk", q[a:b].float(), kk)
        if q_v is not None:
            s = s + torch.einsum("qhd,khd->hqk", q_v[a:b].float(), vv)
        s = s * scale
        if causal:
            qpos = torch.arange(n - (b - a), n)[:, None]
            s = s.masked_fill(~(torch.arange(n)[None] <= qpos)[None], float("-inf"))
        p = torch.softmax(s, -1).nan_to_num(0.0)
        out[a:b] = torch.einsum("hqk,khd->qhd", p, vv)
        lse[:, a:b] = torch.logsumexp(s, -1)
    return out, lse


class FakeVllmFlashAttnMLA(FakeVllmFlashAttn):
    """FakeVllmFlashAttn whose kernel also takes FA3's q_v and non-paged
    varlen K/V (the wrapper, its parameter list and its checks: the parent's)."""

    def _varlen(self, q, k, v, max_seqlen_q, cu_seqlens_q, max_seqlen_k, cu_seqlens_k, seqused_k, q_v,
                softmax_scale, causal, alibi_slopes, block_table, out, scheduler_metadata, fa_version,
                output_scale, cp_world_size, return_softmax_lse, **rest):
        assert fa_version == 3, "MLA paths run FA3"
        assert alibi_slopes is None and output_scale is None and cp_world_size == 1
        assert q.dtype == k.dtype == v.dtype and (q_v is None or q_v.dtype == q.dtype), "FA3: one dtype"
        assert q.stride(-1) == 1 and k.stride(-1) == 1 and v.stride(-1) == 1 and (q_v is None or q_v.stride(-1) == 1)
        if scheduler_metadata is not None:
            assert any(torch.equal(scheduler_metadata.cpu(), m) for m in self.issued), "stale scheduler metadata"
        if block_table is not None:
            assert block_table.dtype == torch.int32 and seqused_k.dtype == torch.int32
            page = k.shape[1]

            def get_kv(r, n):
                used = block_table[r, :math.ceil(n / page)].long()
                assert (used >= 0).all(), "a block table entry below seqused_k is -1"
                return (k[used].reshape(-1, k.shape[-2], k.shape[-1])[:n],
                        v[used].reshape(-1, v.shape[-2], v.shape[-1])[:n])

            lens, starts = seqused_k, None
        else:
            assert cu_seqlens_k.dtype == torch.int32

            def get_kv(r, n):
                a = int(cu_seqlens_k[r])
                return k[a:a + n], v[a:a + n]

            lens = cu_seqlens_k[1:] - cu_seqlens_k[:-1]
            starts = cu_seqlens_k
        assert int(lens.max()) <= max_seqlen_k and int((cu_seqlens_q[1:] - cu_seqlens_q[:-1]).max()) <= max_seqlen_q
        o, lse = qv_attention(q, k, v, q_v, cu_seqlens_q, lens, starts, get_kv, softmax_scale, causal)
        if out is not None:
            out.copy_(o)
            o = out
        else:
            o = o.to(q.dtype)
        return (o, lse) if return_softmax_lse else o


# -- FlashInfer ------------------------------------------------------------------------------


class FakeFlashInferUtils(Recorder):
    RECORDED = ("get_trtllm_gen_multi_ctas_kv_counter_bytes",)

    def get_device_sm_count(self, device: torch.device) -> int:
        return 148

    def get_trtllm_gen_multi_ctas_kv_counter_bytes(self, batch_size: int, num_qo_heads: int, sm_count: int) -> int:
        self.note("get_trtllm_gen_multi_ctas_kv_counter_bytes", locals())
        return -(-max(batch_size * num_qo_heads, sm_count) // 8) * 8 * 4


class FakeFlashInferDecode(Recorder):
    RECORDED = ("trtllm_batch_decode_with_kv_cache_mla",)

    def trtllm_batch_decode_with_kv_cache_mla(
        self, query: torch.Tensor, kv_cache: torch.Tensor, workspace_buffer: torch.Tensor, qk_nope_head_dim: int,
        kv_lora_rank: int, qk_rope_head_dim: int, block_tables: torch.Tensor, seq_lens: Optional[torch.Tensor],
        max_seq_len: int, sparse_mla_top_k: int = 0, out: Optional[torch.Tensor] = None, bmm1_scale=1.0,
        bmm2_scale=1.0, sinks=None, skip_softmax_threshold_scale_factor: Optional[float] = None,
        enable_pdl: bool | None = None, backend: str = "auto", is_var_seq: bool = True,
        uses_shared_paged_kv_idx: bool = True, lse: Optional[torch.Tensor] = None, return_lse: bool = False,
        cute_dsl_impl: str = "auto", kv_scale_format: str = "auto", cum_seq_lens_q: Optional[torch.Tensor] = None,
        max_q_len: Optional[int] = None, multi_ctas_kv_counter_buffer: Optional[torch.Tensor] = None,
        sparse_mla_top_k_lens: Optional[torch.Tensor] = None, enable_dcp: bool = False, cp_world: int = 1,
        cp_rank: int = 0, causal_seqlens_kv_global: Optional[torch.Tensor] = None,
        use_fp16_softmax: Optional[bool] = None, return_lse_base=None,
    ):
        self.note("trtllm_batch_decode_with_kv_cache_mla", locals())
        assert kv_cache.dim() == 4 and kv_cache.shape[1] == 1, "[pages, 1, page, D]"
        assert query.dim() == 4 and query.shape[-1] == kv_lora_rank + qk_rope_head_dim
        assert workspace_buffer.dtype in (torch.int8, torch.uint8) and not return_lse
        fp8 = kv_cache.dtype in FP8
        assert (query.dtype in FP8) == fp8, "fp8 cache, fp8 query"
        # bmm1_scale carries q/k descales and the softmax scale; bmm2_scale the v descale
        o, _ = paged_latent_attention(query.float(), kv_cache.squeeze(1).unsqueeze(2), block_tables, seq_lens,
                                      kv_lora_rank, bmm1_scale, True)
        o = o * bmm2_scale
        return o.to(torch.bfloat16)


class MLAPlanMetadata:
    def __init__(self, qo_indptr=None, kv_indptr=None, kv_indices=None, kv_len_arr=None, cum_seq_lens_q=None,
                 block_tables=None, seq_lens=None, max_q_len=None):
        self.qo_indptr, self.kv_indptr, self.kv_indices, self.kv_len_arr = qo_indptr, kv_indptr, kv_indices, kv_len_arr

    @classmethod
    def csr(cls, qo_indptr: torch.Tensor, kv_indptr: torch.Tensor, kv_indices: torch.Tensor,
            kv_len_arr: torch.Tensor) -> "MLAPlanMetadata":
        return cls(qo_indptr=qo_indptr, kv_indptr=kv_indptr, kv_indices=kv_indices, kv_len_arr=kv_len_arr)


class FakeBatchMLAPagedAttentionWrapper:
    instances: list = []

    def __init__(self, float_workspace_buffer: torch.Tensor, use_cuda_graph: bool = False,
                 qo_indptr: Optional[torch.Tensor] = None, kv_indptr: Optional[torch.Tensor] = None,
                 kv_indices: Optional[torch.Tensor] = None, kv_len_arr: Optional[torch.Tensor] = None,
                 backend: str = "auto") -> None:
        self.plans: list[dict] = []
        self.runs: list[dict] = []
        self._planned_backend_name = None
        FakeBatchMLAPagedAttentionWrapper.instances.append(self)

    def plan(self, qo_indptr=None, kv_indptr=None, kv_indices=None, kv_len_arr=None, num_heads=None,
             head_dim_ckv=None, head_dim_kpe=None, page_size=None, causal=None, sm_scale=None, q_data_type=None,
             kv_data_type=None, use_profiler=False, *, metadata=None, cum_seq_lens_q=None, block_tables=None,
             seq_lens=None, max_q_len=None, query_layout=None, kv_cache_layout=None, lse_mode="none",
             output_dtype=None, output_scale="none", scale_mode="default", skip_softmax=False, enable_pdl=None,
             use_sinks=False) -> None:
        args = dict(locals())
        del args["self"]
        assert isinstance(metadata, MLAPlanMetadata) and qo_indptr is None, "canonical metadata form"
        self.plans.append(args)
        self._planned_backend_name = "fa3"

    def run(self, q_nope=None, q_pe=None, ckv_cache=None, kpe_cache=None, out=None, lse=None, return_lse=False,
            profiler_buffer=None, kv_len=None, page_table=None, return_lse_base_on_e=False, o_scale=None, *,
            query=None, kv_cache=None, ckv_scale=None, ckv_scale_arr=None, kpe_scale=None, sinks=None,
            skip_softmax_threshold_scale_factor=None, bmm1_scale=None, bmm2_scale=None):
        args = dict(locals())
        del args["self"]
        assert self.plans, "run before plan"
        assert q_nope is None and query is not None and kv_cache is not None, "structural packed form"
        self.runs.append(args)
        p = self.plans[-1]
        m = p["metadata"]
        page = p["page_size"]
        cu = m.qo_indptr
        out_ = torch.zeros(query.shape[0], query.shape[1], p["head_dim_ckv"])
        for r in range(len(m.kv_len_arr)):
            n = int(m.kv_len_arr[r])
            pages = m.kv_indices[int(m.kv_indptr[r]):int(m.kv_indptr[r + 1])].long()
            kv = kv_cache[pages].reshape(-1, kv_cache.shape[-1])[:n].float()
            a, b = int(cu[r]), int(cu[r + 1])
            s = torch.einsum("qhd,kd->hqk", query[a:b].float(), kv) * p["sm_scale"]
            if p["causal"]:
                qpos = torch.arange(n - (b - a), n)[:, None]
                s = s.masked_fill(~(torch.arange(n)[None] <= qpos)[None], float("-inf"))
            out_[a:b] = torch.einsum("hqk,kd->qhd", torch.softmax(s, -1), kv[:, :p["head_dim_ckv"]])
        assert page == kv_cache.shape[1]
        out.copy_(out_)
        return out


class FakeFlashInferMLA:
    BatchMLAPagedAttentionWrapper = FakeBatchMLAPagedAttentionWrapper
    MLAPlanMetadata = MLAPlanMetadata


# -- vllm._custom_ops (CUTLASS MLA, SM100) ----------------------------------------------


class FakeCustomOps(Recorder):
    RECORDED = ("sm100_cutlass_mla_decode", "sm100_cutlass_mla_get_workspace_size")

    def sm100_cutlass_mla_decode(self, out: torch.Tensor, lse: torch.Tensor, q_nope: torch.Tensor,
                                 q_pe: torch.Tensor, kv_c_and_k_pe_cache: torch.Tensor, seq_lens: torch.Tensor,
                                 page_table: torch.Tensor, workspace: torch.Tensor, scale: float,
                                 num_kv_splits: int) -> torch.Tensor:
        self.note("sm100_cutlass_mla_decode", locals())
        assert q_nope.dtype == q_pe.dtype == kv_c_and_k_pe_cache.dtype
        assert out.shape[1] == 128 and kv_c_and_k_pe_cache.shape[1] == 128
        q = torch.cat([q_nope.float(), q_pe.float()], -1).unsqueeze(1)
        o, _ = paged_latent_attention(q, kv_c_and_k_pe_cache.unsqueeze(2), page_table, seq_lens, 512, scale, True)
        out[:, :q.shape[2]] = o[:, 0].to(out.dtype)
        return out

    def sm100_cutlass_mla_get_workspace_size(self, max_seq_len: int, num_batches: int, sm_count: int,
                                             num_kv_splits: int) -> int:
        self.note("sm100_cutlass_mla_get_workspace_size", locals())
        return 1024
