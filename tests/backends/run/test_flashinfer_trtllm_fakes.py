"""FLASHINFER's run adapter on CPU against a fake ``flashinfer`` package.

Each fake has the parameter names of the FlashInfer 0.7.2.post1 entry point
it stands for (``trtllm_batch_decode_with_kv_cache``,
``trtllm_batch_context_with_kv_cache``, ``xqa_batch_decode_with_kv_cache``,
the three wrappers), checks the dtypes, shapes and layout vLLM 0.33.0 hands
them, and computes attention itself from the cache it is given, read in the
layout it is told (HND: [P, 2, Hkv, N, D]; NHD: [P, 2, N, Hkv, D]) through
the block table / page list, lengths and offsets it is given. So a wrong
layout, block table row, seq_len, cum_seq_lens or decode/prefill split gives
a wrong result against the float32 reference.

What these tests cannot show: that the real kernels on a 10.x GPU accept
these tensors and compute this; that needs a Blackwell GPU.
"""

from __future__ import annotations

import math
import sys
import types

import pytest
import torch

from attn_select.backends.run import flashinfer as fimod
from attn_select.backends.run.adapter import RunEnv, Unsupported
from attn_select.backends.run.batch import fill_random_, make_batch, random_inputs, write_new_tokens
from attn_select.backends.run.flashinfer import FlashInferAdapter
from attn_select.backends.run.reference import AttnParams, reference_attention, relative_error
from attn_select.selector.run_plan import TRTLLM_GEN, FlashInferKernels, RowPlan, Shape, prefills_on_trtllm

PAGE = 4
SHAPES = {
    "decode": Shape("decode", decodes=3, decode_context=17),
    "prefill": Shape("prefill", prefills=2, prefill_new=7, prefill_context=6),
    # decodes and prefills end at different lengths (14 vs 16, 22 vs 9): a
    # mixed-up seq_lens slice or max_seq_len shows
    "mixed": Shape("mixed", decodes=2, decode_context=13, prefills=2, prefill_new=5, prefill_context=11),
    "mixed-long-decodes": Shape("mixed", decodes=2, decode_context=21, prefills=1, prefill_new=6,
                                prefill_context=3),
}
GQA = AttnParams(4, 2, 8, 8, 8 ** -0.5)
WINDOW_SINKS = AttnParams(6, 2, 8, 8, 8 ** -0.5, sliding_window=6, has_sink=True)
SOFTCAP = AttnParams(4, 2, 8, 8, 8 ** -0.5, soft_cap=5.0)
B200, H200 = (10, 0), (9, 0)


def _attend(q, k_hnd, v_hnd, q_starts, kv_lens, page_lists, scale, left, softcap, sinks):
    """Paged attention from the fake's own arguments: queries [T, Hq, D],
    pages [P, Hkv, N, D], request r's queries q_starts[r]:q_starts[r+1] sit at
    the last positions of its kv_lens[r] keys (bottom-right causal)."""
    hkv, ps = k_hnd.shape[1], k_hnd.shape[2]
    g = q.shape[1] // hkv
    out = torch.empty(q.shape[0], q.shape[1], v_hnd.shape[-1])
    for r, n in enumerate(kv_lens):
        a, b = int(q_starts[r]), int(q_starts[r + 1])
        pages = page_lists[r][: math.ceil(n / ps)].long()
        k = k_hnd[pages].permute(0, 2, 1, 3).reshape(-1, hkv, k_hnd.shape[-1])[:n].float().repeat_interleave(g, 1)
        v = v_hnd[pages].permute(0, 2, 1, 3).reshape(-1, hkv, v_hnd.shape[-1])[:n].float().repeat_interleave(g, 1)
        s = torch.einsum("qhd,khd->hqk", q[a:b].float(), k) * scale
        if softcap:
            s = softcap * torch.tanh(s / softcap)
        qpos = torch.arange(n - (b - a), n)[:, None]
        kpos = torch.arange(n)[None]
        ok = kpos <= qpos
        if left >= 0:
            ok &= kpos >= qpos - left
        s = s.masked_fill(~ok, float("-inf"))
        if sinks is not None:
            p = torch.softmax(torch.cat([s, sinks.float()[:, None, None].expand(-1, b - a, 1)], -1), -1)[..., :-1]
        else:
            p = torch.softmax(s, -1)
        out[a:b] = torch.einsum("hqk,khd->qhd", p, v)
    return out


def _split(kv_cache, layout, hkv):
    """The fake's view of one combined cache tensor as HND K and V pages."""
    assert kv_cache.dim() == 5 and kv_cache.shape[1] == 2 and kv_cache.stride(-1) == 1
    k, v = kv_cache.unbind(1)
    if layout == "NHD":
        assert kv_cache.shape[3] == hkv, f"not an NHD cache: {tuple(kv_cache.shape)}"
        return k.transpose(1, 2), v.transpose(1, 2)
    assert layout == "HND" and kv_cache.shape[2] == hkv, f"not an HND cache: {tuple(kv_cache.shape)}"
    return k, v


def _int32(t, n=None, device=None):
    assert t.dtype == torch.int32 and t.is_contiguous(), (t.dtype, t.stride())
    if n is not None:
        assert t.shape[0] == n, (tuple(t.shape), n)
    if device is not None:
        assert t.device == device
    return t


def _workspace(ws):
    assert ws.dtype == torch.uint8 and ws.is_contiguous()


def _sinks_ok(sinks, hq):
    assert sinks is None or (sinks.dtype == torch.float32 and tuple(sinks.shape) == (hq,))


def fake_flashinfer(p: AttnParams, page: int, log: list):
    """The fake package; ``log`` gets (entry point, facts) per call."""
    hkv = p.num_kv_heads

    def counter_ok(buf, rows):
        assert buf is not None and buf.dtype == torch.uint8 and buf.is_contiguous()
        assert buf.numel() >= get_trtllm_gen_multi_ctas_kv_counter_bytes(rows, p.num_heads, 1)
        assert int(buf.count_nonzero()) == 0  # zeroed at allocation; the kernels reset it

    def trtllm_batch_decode_with_kv_cache(
            query, kv_cache, workspace_buffer, block_tables, seq_lens, max_seq_len, bmm1_scale=1.0,
            bmm2_scale=1.0, window_left=-1, out=None, out_dtype=None, o_sf_scale=None, o_sf_vec_size=None,
            sinks=None, kv_layout="HND", enable_pdl=None, backend="auto", q_len_per_req=1, o_scale=1.0,
            mask=None, max_q_len=None, cum_seq_lens_q=None, skip_softmax_threshold_scale_factor=None,
            kv_cache_sf=None, uses_shared_paged_kv_idx=True, lse=None, return_lse=False, bmm1_scale_log2=None,
            multi_ctas_kv_counter_buffer=None, enable_block_sparse_attention=False, cp_world=1, cp_rank=0,
            causal_seqlens_kv_global=None, bf16q_fp8kv_transform_mode=None, request_order=None,
            request_order_plan=None):
        k, v = _split(kv_cache, kv_layout, hkv)
        assert kv_layout == "HND" and backend == "trtllm-gen" and kv_cache.shape[3] == page
        assert q_len_per_req == 1 and max_q_len is None and cum_seq_lens_q is None and mask is None
        b = block_tables.shape[0]
        _int32(block_tables, device=query.device)
        _int32(seq_lens, b, query.device)
        assert query.is_contiguous() and query.shape[0] == b * q_len_per_req
        assert out is not None and out.shape == query.shape and out.dtype == query.dtype
        assert max_seq_len >= int(seq_lens.max())
        _workspace(workspace_buffer)
        _sinks_ok(sinks, query.shape[1])
        counter_ok(multi_ctas_kv_counter_buffer, b)
        log.append(("trtllm-gen decode", dict(batch_size=b, max_seq_len=max_seq_len)))
        o = _attend(query, k, v, torch.arange(b + 1), seq_lens.tolist(), block_tables, bmm1_scale, window_left,
                    None, sinks)
        out.copy_(o * bmm2_scale)
        return out

    def trtllm_batch_context_with_kv_cache(
            query, kv_cache, workspace_buffer, block_tables, seq_lens, max_q_len, max_kv_len, bmm1_scale,
            bmm2_scale, batch_size, cum_seq_lens_q, cum_seq_lens_kv, window_left=-1, out=None, out_dtype=None,
            o_sf_scale=None, o_sf_vec_size=None, kv_layout="HND", enable_pdl=None, sinks=None, kv_cache_sf=None,
            skip_softmax_threshold_scale_factor=None, uses_shared_paged_kv_idx=True, causal=True, lse=None,
            return_lse=False, multi_ctas_kv_counter_buffer=None, use_fp16_softmax=None, uses_spcompress=None,
            backend="trtllm-gen"):
        k, v = _split(kv_cache, kv_layout, hkv)
        assert kv_layout == "HND" and backend == "trtllm-gen" and causal and kv_cache.shape[3] == page
        dev = query.device
        _int32(block_tables, device=dev)
        assert block_tables.shape[0] == batch_size
        _int32(seq_lens, batch_size, dev)
        _int32(cum_seq_lens_q, batch_size + 1, dev)
        _int32(cum_seq_lens_kv, batch_size + 1, dev)
        q_lens = cum_seq_lens_q[1:] - cum_seq_lens_q[:-1]
        assert int(cum_seq_lens_q[0]) == 0 and int(cum_seq_lens_q[-1]) == query.shape[0]
        assert max_q_len == int(q_lens.max()) and max_kv_len >= int(seq_lens.max())
        assert bool((q_lens <= seq_lens).all())
        # what vLLM's build() puts there: the running sum of each prefill's pages
        pages = (seq_lens.long() + page - 1) // page
        assert cum_seq_lens_kv.tolist() == [0] + torch.cumsum(pages, 0).tolist()
        assert query.is_contiguous() and out is not None and out.shape == query.shape
        _workspace(workspace_buffer)
        _sinks_ok(sinks, query.shape[1])
        counter_ok(multi_ctas_kv_counter_buffer, batch_size)
        log.append(("trtllm-gen context", dict(batch_size=batch_size, max_kv_len=max_kv_len)))
        o = _attend(query, k, v, cum_seq_lens_q, seq_lens.tolist(), block_tables, bmm1_scale, window_left, None,
                    sinks)
        out.copy_(o * bmm2_scale)
        return out

    def xqa_batch_decode_with_kv_cache(
            query, kv_cache, workspace_buffer, block_tables, seq_lens, max_seq_len, bmm1_scale=1.0,
            bmm2_scale=1.0, window_left=-1, out=None, sinks=None, kv_layout="NHD", enable_pdl=None,
            q_len_per_req=1, o_scale=1.0, mask=None, kv_cache_sf=None, q_cu_seq_lens=None):
        k, v = _split(kv_cache, kv_layout, hkv)
        b = block_tables.shape[0]
        _int32(seq_lens, b)
        assert query.element_size() > 1, "XQA on SM90 takes the 16-bit query"
        log.append(("xqa", dict(kv_layout=kv_layout, max_seq_len=max_seq_len, batch_size=b)))
        out.copy_(_attend(query, k, v, torch.arange(b + 1), seq_lens.tolist(), block_tables, bmm1_scale,
                          window_left, None, sinks) * bmm2_scale)
        return out

    def get_trtllm_gen_multi_ctas_kv_counter_bytes(batch_size, num_qo_heads, sm_count):
        return -(-max(batch_size * num_qo_heads, sm_count) // 8) * 8 * 4

    class _Wrapper:
        """The paged wrappers: plan() on FlashInfer's CSR page list, run()
        reads the cache in the layout given to the constructor."""

        kind = "?"

        def _init(self, float_workspace_buffer, kv_layout, **facts):
            _workspace(float_workspace_buffer)
            self.kv_layout = kv_layout
            self.facts = dict(kv_layout=kv_layout, **facts)
            self.resolved_backend = "fa2"
            self.q_dtype = None

        def _plan(self, qo_indptr, indptr, indices, last, num_qo_heads, num_kv_heads, head_dim, page_size,
                  sm_scale, window_left, logits_soft_cap, q_data_type=None):
            if isinstance(q_data_type, torch.dtype):  # the kernels are compiled for this query dtype
                self.q_dtype = q_data_type
            assert (num_qo_heads, num_kv_heads, head_dim, page_size) == (p.num_heads, hkv, p.head_size, page)
            _int32(indptr)
            _int32(indices)
            _int32(last, indptr.shape[0] - 1)
            self.qo = qo_indptr
            self.pages = [indices[int(indptr[i]):int(indptr[i + 1])] for i in range(indptr.shape[0] - 1)]
            self.kv_lens = [(len(pg) - 1) * page + int(last[i]) for i, pg in enumerate(self.pages)]
            self.scale, self.left, self.cap = sm_scale, window_left, logits_soft_cap

        def _run(self, q, cache, sinks, out):
            assert self.q_dtype in (None, q.dtype), f"planned for a {self.q_dtype} query, given {q.dtype}"
            k, v = _split(cache, self.kv_layout, hkv)
            log.append((self.kind, self.facts))
            out.copy_(_attend(q, k, v, self.qo, self.kv_lens, self.pages, self.scale, self.left, self.cap, sinks))
            return out

    class BatchDecodeWithPagedKVCacheWrapper(_Wrapper):
        kind = "decode wrapper"

        def __init__(self, float_workspace_buffer, kv_layout="NHD", use_cuda_graph=False, use_tensor_cores=False,
                     paged_kv_indptr_buffer=None, paged_kv_indices_buffer=None,
                     paged_kv_last_page_len_buffer=None, backend="auto", jit_args=None):
            self._init(float_workspace_buffer, kv_layout, use_tensor_cores=use_tensor_cores)

        def plan(self, indptr, indices, last_page_len, num_qo_heads, num_kv_heads, head_dim, page_size,
                 pos_encoding_mode="NONE", window_left=-1, logits_soft_cap=None, q_data_type="float16",
                 kv_data_type=None, o_data_type=None, data_type=None, sm_scale=None, rope_scale=None,
                 rope_theta=None, non_blocking=True, block_tables=None, seq_lens=None, fixed_split_size=None,
                 disable_split_kv=False):
            self._plan(torch.arange(indptr.shape[0]), indptr, indices, last_page_len, num_qo_heads, num_kv_heads,
                       head_dim, page_size, sm_scale, window_left, logits_soft_cap, q_data_type)

        def run(self, q, paged_kv_cache, *args, q_scale=None, k_scale=None, v_scale=None, out=None, lse=None,
                return_lse=False, enable_pdl=None, window_left=None, sinks=None, q_len_per_req=None,
                skip_softmax_threshold_scale_factor=None, kv_cache_sf=None):
            return self._run(q, paged_kv_cache, sinks, out)

    class BatchPrefillWithPagedKVCacheWrapper(_Wrapper):
        kind = "prefill wrapper"

        def __init__(self, float_workspace_buffer, kv_layout="NHD", use_cuda_graph=False, qo_indptr_buf=None,
                     paged_kv_indptr_buf=None, paged_kv_indices_buf=None, paged_kv_last_page_len_buf=None,
                     custom_mask_buf=None, mask_indptr_buf=None, backend="auto", jit_args=None, jit_kwargs=None,
                     variant_owns_mask=False):
            self._init(float_workspace_buffer, kv_layout, backend=backend)

        def plan(self, qo_indptr, paged_kv_indptr, paged_kv_indices, paged_kv_last_page_len, num_qo_heads,
                 num_kv_heads, head_dim_qk, page_size, head_dim_vo=None, custom_mask=None,
                 packed_custom_mask=None, causal=False, pos_encoding_mode="NONE", use_fp16_qk_reduction=False,
                 sm_scale=None, window_left=-1, logits_soft_cap=None, rope_scale=None, rope_theta=None,
                 q_data_type="float16", kv_data_type=None, o_data_type=None, non_blocking=True):
            assert causal and head_dim_vo == p.head_size_v
            self._plan(_int32(qo_indptr), paged_kv_indptr, paged_kv_indices, paged_kv_last_page_len, num_qo_heads,
                       num_kv_heads, head_dim_qk, page_size, sm_scale, window_left, logits_soft_cap, q_data_type)

        def run(self, q, paged_kv_cache, *args, q_scale=None, k_scale=None, v_scale=None, out=None, lse=None,
                return_lse=False, lse_base="log2", lse_layout="NH", enable_pdl=None, window_left=None,
                sinks=None, kv_cache_sf=None, skip_softmax_threshold_scale_factor=None, use_fp16_softmax=None,
                uses_spcompress=None):
            return self._run(q, paged_kv_cache, sinks, out)

    class BatchAttentionWithAttentionSinkWrapper(BatchPrefillWithPagedKVCacheWrapper):
        kind = "sink wrapper"

        def __init__(self, float_workspace_buffer, kv_layout="NHD", use_cuda_graph=False, qo_indptr_buf=None,
                     paged_kv_indptr_buf=None, paged_kv_indices_buf=None, paged_kv_last_page_len_buf=None,
                     custom_mask_buf=None, mask_indptr_buf=None, backend="auto", pos_encoding_mode="NONE",
                     use_fp16_qk_reduction=False, q_data_type=torch.bfloat16, kv_data_type=torch.bfloat16,
                     head_dim_qk=128, head_dim_vo=128, window_left=-1):
            self._init(float_workspace_buffer, kv_layout, backend=backend)
            self.sink_q_dtype = q_data_type  # fixed at construction: plan() has no query dtype here

        def plan(self, *a, q_data_type=None, **kw):
            super().plan(*a, q_data_type=self.sink_q_dtype, **kw)

        def run(self, q, paged_kv_cache, *args, out=None, **kw):
            sinks, scale = args
            assert scale == self.scale
            return self._run(q, paged_kv_cache, sinks, out)

    pkg = types.ModuleType("flashinfer")
    pkg.__path__ = []
    pkg.BatchDecodeWithPagedKVCacheWrapper = BatchDecodeWithPagedKVCacheWrapper
    pkg.BatchPrefillWithPagedKVCacheWrapper = BatchPrefillWithPagedKVCacheWrapper
    pkg.BatchAttentionWithAttentionSinkWrapper = BatchAttentionWithAttentionSinkWrapper
    subs = {
        "decode": dict(trtllm_batch_decode_with_kv_cache=trtllm_batch_decode_with_kv_cache,
                       xqa_batch_decode_with_kv_cache=xqa_batch_decode_with_kv_cache),
        "prefill": dict(trtllm_batch_context_with_kv_cache=trtllm_batch_context_with_kv_cache),
        "utils": dict(get_trtllm_gen_multi_ctas_kv_counter_bytes=get_trtllm_gen_multi_ctas_kv_counter_bytes),
    }
    mods = {"flashinfer": pkg}
    for name, attrs in subs.items():
        m = types.ModuleType(f"flashinfer.{name}")
        m.__dict__.update(attrs)
        setattr(pkg, name, m)
        mods[f"flashinfer.{name}"] = m
    return mods


@pytest.fixture
def fake(monkeypatch):
    """Installs the fake package for one test; returns (install(p), log)."""
    log: list = []
    # small workspaces: the fakes never use them, CI has little memory
    monkeypatch.setattr(fimod, "WORKSPACE_BYTES", 4096)
    monkeypatch.setattr(fimod, "DEFAULT_WORKSPACE_BYTES", 8192)

    def install(p: AttnParams) -> None:
        for name, mod in fake_flashinfer(p, PAGE, log).items():
            monkeypatch.setitem(sys.modules, name, mod)

    return install, log


def _row(decode, prefill_trtllm, force_native=False) -> RowPlan:
    """The run plan's FLASHINFER row: vLLM's trtllm-API decode (None on the
    native-decode comparison row) and this batch's context choice."""
    return RowPlan("FLASHINFER", flashinfer=FlashInferKernels(None if force_native else decode, prefill_trtllm))


def _run(p, shape, cap, decode, prefill_trtllm, *, force_native=False, kv="auto", seed=3, checks=2):
    """One adapter through the runner's sequence (alloc, views, write, build,
    run) twice with fresh inputs, as run_backend does; relative error and the plan."""
    env = RunEnv(torch.device("cpu"), cap, torch.float32, kv)
    a = FlashInferAdapter(env, p, _row(decode, prefill_trtllm, force_native))
    b = make_batch(shape, PAGE, "cpu", seed=seed, spare_pages=5)
    errs = []
    for c in range(checks):
        gen = torch.Generator().manual_seed(seed * 10 + c)
        cache = a.alloc_cache(b.num_pages, PAGE)
        fill_random_(cache, gen)
        k, v = a.kv_views(cache)
        inp = random_inputs(b, p.num_heads, p.num_kv_heads, p.head_size, p.head_size_v, torch.float32, p.has_sink,
                            gen)
        write_new_tokens(k, v, b, inp)
        plan = a.build(b)
        out = torch.full_like(inp.q, float("nan"))
        a.run(plan, inp.q, cache, inp.sinks, out)
        assert not torch.isnan(out).any(), "unwritten output"
        errs.append(relative_error(out, reference_attention(inp.q, k, v, b, p, inp.sinks)))
    return max(errs), a, plan, cache, b


# --- SM100: what vLLM runs -----------------------------------------------------


@pytest.mark.parametrize("p", [GQA, WINDOW_SINKS], ids=["gqa", "window+sinks"])
@pytest.mark.parametrize("kind", list(SHAPES))
def test_blackwell_runs_trtllm_gen_decode_and_context(fake, kind, p):
    install, log = fake
    install(p)
    err, a, plan, cache, b = _run(p, SHAPES[kind], B200, "trtllm-gen", True)
    assert err < 1e-5
    assert a.kv_layout == "HND" and tuple(cache.shape) == (b.num_pages, 2, p.num_kv_heads, PAGE, p.head_size)
    expected = {"decode": "trtllm-gen decode", "prefill": "trtllm-gen context"}.get(
        kind, "trtllm-gen decode + trtllm-gen context")
    assert a.kernel_name(plan) == expected
    names = [n for n, _ in log]
    assert set(names) == set(expected.split(" + ")) and len(names) == 2 * len(expected.split(" + "))
    for name, facts in log:  # vLLM's sizes: decode rows / prefill rows, the whole batch's max_seq_len
        assert facts["batch_size"] == (b.num_decodes if name.endswith("decode") else b.num_requests - b.num_decodes)
        assert facts.get("max_seq_len", facts.get("max_kv_len")) == b.max_seq_len


def test_blackwell_native_decode_variant_plans_the_wrapper_on_the_hnd_cache(fake):
    """The comparison row: FlashInfer's own decode wrapper, on the HND cache
    vLLM allocates on 10.x; prefills still run trtllm-gen context."""
    install, log = fake
    install(GQA)
    err, a, plan, _, _ = _run(GQA, SHAPES["mixed"], B200, "trtllm-gen", True, force_native=True)
    assert err < 1e-5
    assert a.kernel_name(plan) == "tensor-core decode (fa2) + trtllm-gen context"
    assert log[0] == ("decode wrapper", {"kv_layout": "HND", "use_tensor_cores": True})
    assert log[1][0] == "trtllm-gen context"


def test_blackwell_prefill_on_the_wrapper_when_vllms_rule_says_so(fake):
    """use_trtllm_attention(is_prefill=True) False (e.g. forced off): the
    paged prefill wrapper, planned for the HND cache, beside trtllm-gen decode."""
    install, log = fake
    install(GQA)
    err, a, plan, _, _ = _run(GQA, SHAPES["mixed"], B200, "trtllm-gen", False)
    assert err < 1e-5
    assert a.kernel_name(plan) == "trtllm-gen decode + paged prefill (fa2)"
    assert log[1] == ("prefill wrapper", {"kv_layout": "HND", "backend": "auto"})


@pytest.mark.parametrize("kind, what", [("decode", "decode with trtllm-gen"),
                                        ("prefill", "run the prefills with trtllm-gen context")])
def test_trtllm_gen_refuses_a_soft_capped_model(fake, kind, what):
    install, _ = fake
    install(SOFTCAP)
    with pytest.raises(Unsupported, match=f"vLLM would {what} here, which takes no logits soft cap"):
        _run(SOFTCAP, SHAPES[kind], B200, "trtllm-gen", True)


def test_trtllm_gen_refuses_an_fp8_cache(fake):
    install, _ = fake
    install(GQA)
    with pytest.raises(Unsupported, match="fp8-quantized query"):
        _run(GQA, SHAPES["decode"], B200, "trtllm-gen", True, kv="fp8")


@pytest.mark.parametrize("p", [GQA, WINDOW_SINKS], ids=["gqa", "window+sinks"])
def test_hopper_fp8_cache_quantizes_the_prefill_query_only(fake, p):
    """vLLM's get_q_data_type on SM90 with an fp8 cache: XQA decode keeps the
    16-bit query, the native (FA3) prefill and the sink wrapper take fp8."""
    install, log = fake
    install(p)
    err, a, plan, cache, _ = _run(p, SHAPES["mixed"], H200, "xqa", False, kv="fp8")
    assert cache.dtype == torch.float8_e4m3fn and plan.prefill_q_dtype == torch.float8_e4m3fn
    assert 1e-4 < err < 8e-2  # the prefill query's rounding shows, within fp8's tolerance
    assert log[0][0] == "xqa" and log[1][0] in ("prefill wrapper", "sink wrapper")


def test_fp8_cache_keeps_the_model_dtype_query_where_prefill_is_fa2_only(fake):
    install, _ = fake
    install(GQA)
    err, _, plan, _, _ = _run(GQA, SHAPES["prefill"], (8, 9), None, False, kv="fp8")
    assert plan.prefill_q_dtype == torch.float32 and err < 1e-5


def test_layout_follows_the_gpu_and_the_trtllm_gen_parts():
    """HND on 10.x (vLLM's supported_kv_cache_layouts), and wherever a
    trtllm-gen part runs; NHD otherwise."""
    def layout(cap, decode=None, prefill=False, force_native=False):
        env = RunEnv(torch.device("cpu"), cap, torch.float32, "auto")
        return FlashInferAdapter(env, GQA, _row(decode, prefill, force_native)).kv_layout

    assert layout(B200) == layout((10, 3), "trtllm-gen", True, force_native=True) == "HND"
    assert layout(None, "trtllm-gen") == layout(None, None, True) == "HND"
    assert layout(H200) == layout(H200, "xqa") == layout(None, "trtllm-gen", force_native=True) == "NHD"
    assert layout((12, 0), "xqa") == "NHD"


def test_the_fakes_catch_a_wrong_layout(fake, monkeypatch):
    """Guard on the fakes themselves: an NHD cache handed to trtllm-gen fails."""
    install, _ = fake
    install(GQA)
    monkeypatch.setattr(FlashInferAdapter, "alloc_cache", lambda self, n, ps: torch.empty(
        n, 2, ps, self.p.num_kv_heads, self.p.head_size))
    monkeypatch.setattr(FlashInferAdapter, "kv_views", lambda self, c: (c[:, 0], c[:, 1]))
    with pytest.raises(AssertionError, match="not an HND cache"):
        _run(GQA, Shape("decode", decodes=2, decode_context=9), B200, "trtllm-gen", True)


# --- SM90: unchanged -----------------------------------------------------------


@pytest.mark.parametrize("kind", list(SHAPES))
def test_hopper_xqa_and_wrappers_on_nhd_as_before(fake, kind):
    install, log = fake
    install(WINDOW_SINKS)
    err, a, plan, cache, b = _run(WINDOW_SINKS, SHAPES[kind], H200, "xqa", False)
    assert err < 1e-5
    assert a.kv_layout == "NHD" and tuple(cache.shape) == (b.num_pages, 2, PAGE, 2, 8)
    names = [n for n, _ in log]
    if b.num_decodes:
        # XQA keeps its NHD call and the decodes' own max_seq_len
        assert log[0] == ("xqa", dict(kv_layout="NHD", max_seq_len=int(b.seq_lens_cpu[:b.num_decodes].max()),
                                      batch_size=b.num_decodes))
    if b.num_requests > b.num_decodes:
        assert ("sink wrapper", {"kv_layout": "NHD", "backend": "auto"}) in log
    assert not any(n.startswith("trtllm-gen") for n in names)


def test_hopper_native_decode_and_prefill_wrappers_on_nhd(fake):
    install, log = fake
    install(GQA)
    err, a, plan, _, _ = _run(GQA, SHAPES["mixed"], H200, None, False)
    assert err < 1e-5 and a.kernel_name(plan) == "tensor-core decode (fa2) + paged prefill (fa2)"
    assert log[:2] == [("decode wrapper", {"kv_layout": "NHD", "use_tensor_cores": True}),
                       ("prefill wrapper", {"kv_layout": "NHD", "backend": "auto"})]


# --- the plan's fact: does vLLM prefill with trtllm-gen for this batch? ------


def _gexp(cap, kv="auto", ctx_kw=None, kernels_kw=None, p=GQA):
    from attn_select.selector.config import Capability, EngineContext, Kernels, SelectorConfig
    from attn_select.selector.flashinfer_dispatch import flashinfer_dispatch

    cfg = SelectorConfig(p.head_size, "bfloat16", kv, None, has_sink=p.has_sink)
    c, k, ctx = Capability(*cap), Kernels(**(kernels_kw or {})), EngineContext(**(ctx_kw or {}))
    fi = flashinfer_dispatch(cfg, c, k, ctx, num_qo_heads=p.num_heads, num_kv_heads=p.num_kv_heads,
                             has_sinks=p.has_sink)
    return types.SimpleNamespace(selection=types.SimpleNamespace(cfg=cfg, cap=c, kernels=k, ctx=ctx), flashinfer=fi)


def test_prefills_on_trtllm_follows_use_trtllm_attention():
    mixed, decode = SHAPES["mixed"], SHAPES["decode"]
    assert prefills_on_trtllm(_gexp(B200), GQA, mixed, 16)
    assert prefills_on_trtllm(_gexp((10, 3)), GQA, SHAPES["prefill"], 16)
    assert not prefills_on_trtllm(_gexp(B200), GQA, decode, 16)  # no prefills
    assert not prefills_on_trtllm(_gexp(H200), GQA, mixed, 16)  # prefill trtllm is 10.x only
    assert not prefills_on_trtllm(_gexp(B200, ctx_kw=dict(use_trtllm_attention=False)), GQA, mixed, 16)
    assert not prefills_on_trtllm(_gexp(B200, kernels_kw=dict(trtllm_cubins=False)), GQA, mixed, 16)


def test_runner_hands_each_row_its_plan(monkeypatch):
    """run_group builds each row's adapter with that row of the plan (the
    adapter's layout follows it) without running anything on the CPU."""
    from attn_select.backends.run import runner
    from attn_select.selector.model_facts import LayerAttention
    from attn_select.selector.run_plan import GroupPlan, ShapePlan

    seen = []
    monkeypatch.setattr(FlashInferAdapter, "unavailable", lambda self: None)
    monkeypatch.setattr(runner, "run_backend", lambda row, adapter, batch, *a, **kw: seen.append(
        (row.shape, row.variant, adapter.row.flashinfer.prefill_trtllm, adapter.kv_layout)))
    adapter = "attn_select.backends.run.flashinfer:FlashInferAdapter"
    decode = RowPlan("FLASHINFER", selected=True, adapter=adapter,
                     flashinfer=FlashInferKernels(TRTLLM_GEN, False))
    native = decode._replace(variant="native decode", selected=False,
                             flashinfer=FlashInferKernels(None, False))
    prefill = decode._replace(flashinfer=FlashInferKernels(TRTLLM_GEN, True))
    g = GroupPlan("g", 2, LayerAttention(8, 8, 4, 2), "FLASHINFER", None, None, TRTLLM_GEN,
                  (ShapePlan(SHAPES["decode"], (decode, native)), ShapePlan(SHAPES["prefill"], (prefill,))))
    env = RunEnv(torch.device("cpu"), B200, torch.float32, "auto")
    runner.run_group(g, env, runner.RunOptions(device="cpu", timing=False), 16, None)
    assert seen == [("decode", "", False, "HND"), ("decode", "native decode", False, "HND"),
                    ("prefill", "", True, "HND")]


def test_paged_wrappers_are_made_once_and_planned_every_step(fake, monkeypatch):
    """vLLM's builder keeps its wrappers and re-plans them per step; so does
    the adapter (the build cost c is then plan(), not wrapper construction)."""
    install, _ = fake
    install(GQA)
    made: list[str] = []
    fi = sys.modules["flashinfer"]
    for name in ("BatchDecodeWithPagedKVCacheWrapper", "BatchPrefillWithPagedKVCacheWrapper"):
        cls = getattr(fi, name)

        class Counted(cls):
            def __init__(self, *a, _n=name, **k):
                made.append(_n)
                super().__init__(*a, **k)

        monkeypatch.setattr(fi, name, Counted)
    err, a, plan, _, b = _run(GQA, SHAPES["mixed"], H200, None, False, checks=3)
    assert err < 1e-5
    assert sorted(made) == ["BatchDecodeWithPagedKVCacheWrapper", "BatchPrefillWithPagedKVCacheWrapper"]
    again = a.build(b)
    assert again.decode is plan.decode and again.prefill is plan.prefill and len(made) == 2
    a.close()
    a.build(b)
    assert len(made) == 4
