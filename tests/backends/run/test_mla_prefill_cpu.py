"""The MLA prefill row on the CPU: vLLM's context-chunk packing, the
log-sum-exp merge, the float32 prefill reference (checked against the
absorbed latent form, an independent computation), and the FLASH_ATTN
prefill adapter against a fake of vllm.vllm_flash_attn with vLLM 0.33.0's
parameter list (mla_fake_kernels.py)."""

from __future__ import annotations

import random

import pytest
import torch

from attn_select.backends.run.adapter import RoutedElsewhere, RunEnv
from attn_select.backends.run.batch import fill_random_, make_batch
from attn_select.backends.run.layer_kind import MLAPrefill
from attn_select.backends.run.mla_check import write_latents
from attn_select.backends.run.mla_prefill import PREFILL_KEYWORDS, MLAPrefillFlashAttnAdapter
from attn_select.backends.run.mla_prefill_reference import (
    ContextChunk, merge_states, plan_context_chunks, random_prefill_inputs, reference_mla_prefill,
)
from attn_select.backends.run.mla_reference import MLAParams, reference_mla_attention
from attn_select.backends.run.reference import relative_error
from attn_select.selector.run_plan import MLA_PREFILL, RowPlan, Shape

from mla_fake_kernels import FakeVllmFlashAttnMLA
from vllm_source import vllm_file

BF16 = torch.bfloat16
P = MLAParams(4, 512, 64, 192 ** -0.5, qk_nope_head_dim=128, v_head_dim=128)


# --- the chunk plan ------------------------------------------------------------------------


def test_chunks_split_a_request_at_page_aligned_lengths_and_continue_it():
    chunks = plan_context_chunks([45, 45], workspace_tokens=32, page_size=16)
    assert chunks == [ContextChunk(0, (0,), (32,)), ContextChunk(0, (32, 0), (13, 16)), ContextChunk(1, (16,), (29,))]
    assert [c.continuation for c in chunks] == [False, True, True]
    # requests without context take no chunk; everything fits: one chunk
    assert plan_context_chunks([0, 20, 0, 10], 64, 16) == [ContextChunk(1, (0,), (20,))] + [ContextChunk(3, (0,), (10,))]
    assert plan_context_chunks([1024] * 4, 64 * 1024, 64) == [ContextChunk(0, (0,) * 4, (1024,) * 4)]


def test_chunks_cover_every_context_token_once_within_the_workspace():
    rng = random.Random(5)
    for _ in range(200):
        page = rng.choice([16, 64])
        ws = page * rng.randint(1, 6)
        ctx = [rng.choice([0, rng.randint(1, 300)]) for _ in range(rng.randint(1, 5))]
        seen = {r: [] for r in range(len(ctx))}
        for c in plan_context_chunks(ctx, ws, page):
            assert sum(c.lengths) <= ws
            for r, start, n in zip(c.requests, c.starts, c.lengths):
                assert n > 0 and start % page == 0
                seen[r] += list(range(start, start + n))
        assert all(seen[r] == list(range(ctx[r])) for r in seen), (ctx, ws, page)


# --- the merge and the reference -------------------------------------------------------------


def _attend(q, k, v, scale):
    s = torch.einsum("nhd,shd->hns", q, k) * scale
    return torch.einsum("hns,shd->nhd", torch.softmax(s, -1), v), torch.logsumexp(s, -1)


def test_merging_two_partials_by_lse_is_attention_over_both_key_sets():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(5, 3, 8, generator=g) for _ in range(3))
    k, v = torch.randn(11, 3, 8, generator=g), torch.randn(11, 3, 8, generator=g)
    full, full_lse = _attend(q, k, v, 0.3)
    a, la = _attend(q, k[:4], v[:4], 0.3)
    b, lb = _attend(q, k[4:], v[4:], 0.3)
    out, lse = merge_states(a, la, b, lb)
    assert torch.allclose(out, full, atol=1e-5) and torch.allclose(lse, full_lse, atol=1e-5)
    # a side without keys (lse -inf) carries no weight
    out, _ = merge_states(torch.zeros_like(a), torch.full_like(la, float("-inf")), full, full_lse)
    assert torch.allclose(out, full, atol=1e-6)


def test_prefill_reference_equals_the_absorbed_latent_attention():
    """Up-projecting K/V (the prefill's form) or absorbing kv_b_proj into the
    query and the output (the decode's form) is the same attention."""
    p = MLAParams(2, 32, 8, 40 ** -0.5, qk_nope_head_dim=32, v_head_dim=16)
    batch = make_batch(Shape("prefill", prefills=2, prefill_new=5, prefill_context=9), 4, "cpu", seed=2)
    g = torch.Generator().manual_seed(3)
    cache = fill_random_(torch.empty(batch.num_pages, 4, p.latent_dim), g)
    inp = random_prefill_inputs(batch, p, torch.float32, g)
    write_latents(cache, batch, inp.latent_new)
    ref = reference_mla_prefill(inp, cache, batch, p)
    w = inp.w_kv_b.view(p.kv_lora_rank, p.num_heads, p.qk_nope_head_dim + p.v_head_dim)
    w_k, w_v = w[..., :p.qk_nope_head_dim], w[..., p.qk_nope_head_dim:]
    q_nope, q_pe = inp.q[..., :p.qk_nope_head_dim], inp.q[..., p.qk_nope_head_dim:]
    q_abs = torch.cat([torch.einsum("nhd,rhd->nhr", q_nope, w_k), q_pe], -1)
    latent_out = reference_mla_attention(q_abs, cache, batch, p)  # [n, H, rank]
    assert relative_error(ref, torch.einsum("nhr,rhd->nhd", latent_out, w_v)) < 1e-5


# --- the FLASH_ATTN prefill adapter ------------------------------------------------------------


def _adapter(fake, kv="auto", workspace=64 * 1024, p=P):
    env = RunEnv(torch.device("cpu"), (9, 0), BF16, kv)
    row = RowPlan(MLA_PREFILL, "FLASH_ATTN", fa_version=3, mla_prefill="FLASH_ATTN")
    return MLAPrefillFlashAttnAdapter(env, p, row, workspace_tokens=workspace,
                                      importer=lambda name: {"vllm.vllm_flash_attn": fake}[name])


def _check(a, shape, page=16, seed=0):
    batch = make_batch(shape, page, "cpu", seed=seed, spare_pages=2)
    kind = MLAPrefill(a.p)
    g = torch.Generator().manual_seed(seed)
    cache = fill_random_(a.alloc_cache(batch.num_pages, page), g)
    inp = kind.inputs(batch, BF16, g)
    kind.write(a, cache, batch, inp)
    plan = a.build(batch)
    out = kind.output(batch, BF16, torch.device("cpu"), float("nan"))
    kind.run(a, plan, inp, cache, out)
    assert not torch.isnan(out).any()
    return relative_error(out, kind.reference(a, cache, batch, inp)), plan, batch


def test_prefill_with_chunked_context_matches_the_reference_and_calls_fa_as_vllm():
    fake = FakeVllmFlashAttnMLA()
    a = _adapter(fake, workspace=32)
    assert a.unavailable() is None
    err, plan, batch = _check(a, Shape("prefill", prefills=2, prefill_new=5, prefill_context=45))
    assert err <= 2e-2 and len(plan.chunks) == 3
    suffix, *chunks = fake.calls
    assert suffix["causal"] and suffix["q"].shape == (10, 4, 192) and suffix["v"].shape == (10, 4, 128)
    assert suffix["cu_seqlens_q"].tolist() == suffix["cu_seqlens_k"].tolist() == [0, 5, 10]
    assert suffix["return_softmax_lse"] and suffix["fa_version"] == 3 and suffix["out"] is None
    assert [c["causal"] for c in chunks] == [False] * 3 and all(c["return_softmax_lse"] for c in chunks)
    assert chunks[1]["cu_seqlens_k"].tolist() == [0, 13, 29] and chunks[1]["cu_seqlens_q"].tolist() == [0, 5, 10]
    assert chunks[0]["q"].shape[0] == 5 and chunks[2]["max_seqlen_k"] == 29
    assert all(kw == (0, PREFILL_KEYWORDS) for kw in fake.passed["flash_attn_varlen_func"])
    assert "3 context chunks merged by log-sum-exp" in a.kernel_name(plan)
    path = vllm_file("vllm/v1/attention/backends/mla/prefill/flash_attn.py")
    if path is not None:  # the keywords vLLM's backend forwards (by name, into **kwargs)
        text = path.read_text()
        for kw in PREFILL_KEYWORDS - {"q", "k", "v", "fa_version"}:
            assert f"{kw}=" in text or f'kwargs["{kw}"]' in text, kw


def test_prefill_without_context_one_chunk_and_the_mixed_batchs_prefills():
    fake = FakeVllmFlashAttnMLA()
    a = _adapter(fake)
    err, plan, _ = _check(a, Shape("prefill", prefills=2, prefill_new=6, prefill_context=0))
    assert err <= 2e-2 and not plan.chunks and len(fake.calls) == 1 and not fake.calls[0]["return_softmax_lse"]
    err, plan, batch = _check(a, Shape("mixed", decodes=3, decode_context=20, prefills=2, prefill_new=4,
                                       prefill_context=30))
    assert err <= 2e-2 and len(plan.chunks) == 1 and plan.num_prefill_tokens == 8
    with pytest.raises(RoutedElsewhere, match="no prefill"):
        a.build(make_batch(Shape("decode", decodes=2, decode_context=9), 16, "cpu"))


def test_prefill_reads_an_fp8_cache_dequantized():
    a = _adapter(FakeVllmFlashAttnMLA(), kv="fp8", p=MLAParams(4, 512, 64, 192 ** -0.5, kv_scale=0.5,
                                                                qk_nope_head_dim=128, v_head_dim=128))
    err, *_ = _check(a, Shape("prefill", prefills=1, prefill_new=4, prefill_context=40))
    assert err <= 8e-2


def test_sparse_prefill_longer_than_index_topk_stays_on_the_sparse_kernel():
    p = MLAParams(4, 512, 64, 192 ** -0.5, qk_nope_head_dim=128, v_head_dim=128, topk=32)
    a = _adapter(FakeVllmFlashAttnMLA(), p=p)
    with pytest.raises(RoutedElsewhere, match="index_topk"):
        a.build(make_batch(Shape("prefill", prefills=1, prefill_new=4, prefill_context=40), 16, "cpu"))
    err, *_ = _check(a, Shape("prefill", prefills=1, prefill_new=4, prefill_context=20))
    assert err <= 2e-2


def test_prefill_says_why_it_cannot_run():
    a = _adapter(FakeVllmFlashAttnMLA(versions=(2,)))
    assert a.unavailable().startswith("vLLM's FA3 is not built here")
    env = RunEnv(torch.device("cpu"), (9, 0), BF16, "auto")
    assert MLAPrefillFlashAttnAdapter(env, P).unavailable() == \
        "vLLM's FlashAttention (vllm.vllm_flash_attn) needs a CUDA GPU"
