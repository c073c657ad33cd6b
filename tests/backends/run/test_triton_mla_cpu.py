"""TRITON_MLA: our Triton MLA decode kernel under the Triton interpreter, the
latent (absorbed) float32 reference, the launch table and split rule.

Kernel checks use float32 activations over a bf16 or fp8 latent cache where
they can: the interpreter then computes in float32 and the only error left
is summation order (~1e-6), so a 1e-5 bound catches one key missed or
counted twice, a wrong page, a wrong scale or a bad merge (each costs 1e-2
or more on these shapes). One check runs the serving path proper (bf16
activations, bf16 output) against the run's bf16 tolerance."""

from __future__ import annotations

import pytest
import torch

from attn_select.backends.run.adapter import RunEnv, Unsupported
from attn_select.backends.run.batch import Batch, Shape, fill_random_, make_batch, make_decode_batch
from attn_select.backends.run.mla_check import check_mla_decode, random_mla_inputs, write_latents
from attn_select.backends.run.mla_reference import MLAParams, mla_flops, mla_kv_bytes, reference_mla_attention
from attn_select.backends.run.reference import AttnParams, reference_attention, relative_error
from attn_select.backends.run.triton_mla import (
    SMEM_LIMIT, TILES, MLATiles, TritonMLAAdapter, choose_splits, choose_tiles, smem_bytes,
)
from tests.backends.run.conftest import needs_interpreter

DEEPSEEK_SCALE = 0.1352  # 192 ** -0.5 times yarn's mscale squared (DeepSeek-V3)
TIGHT = 1e-5


def decode_batch(context_lens: list[int], page_size: int, seed: int = 0, spare_pages: int = 5) -> Batch:
    """Decode rows with the given cached lengths (one new token each) over a
    shuffled page pool, on the CPU."""
    return make_decode_batch(context_lens, page_size, "cpu", seed=seed, spare_pages=spare_pages)


def _check(p, batch, kv="bfloat16", dtype=torch.float32, **kw):
    r = check_mla_decode(batch, p, "cpu", dtype, kv, seed=3, tolerance_override=TIGHT, **kw)
    assert r.unwritten == 0, "output elements never written"
    return r


# -- the reference -----------------------------------------------------------


def test_latent_reference_matches_the_mha_reference_on_the_same_views():
    """The latent form is MQA with K = the latent, V = its first rank dims:
    reference.py's independent MHA reference must agree (decode and causal prefill)."""
    p = MLAParams(4, 32, 16, 0.3)
    env = RunEnv(torch.device("cpu"), None, torch.float32, "auto")
    ad = TritonMLAAdapter(env, p)
    for shape in (Shape("decode", decodes=3, decode_context=21), Shape("prefill", prefills=2, prefill_new=5,
                                                                       prefill_context=7)):
        b = make_batch(shape, 8, "cpu", seed=2, spare_pages=3)
        gen = torch.Generator().manual_seed(1)
        cache = fill_random_(ad.alloc_cache(b.num_pages, 8), gen)
        inp = random_mla_inputs(b, p, torch.float32, gen)
        write_latents(cache, b, inp.latent_new)
        k, v = ad.kv_views(cache)
        mha = reference_attention(inp.q, k, v, b, AttnParams(4, 1, 48, 32, 0.3))
        assert relative_error(reference_mla_attention(inp.q, cache, b, p), mha) < 1e-6


def test_latent_reference_dequantizes_an_fp8_cache_with_the_scale():
    p = MLAParams(4, 32, 16, 0.3, kv_scale=0.25)
    b = decode_batch([9, 30], 8)
    q = torch.randn(2, 4, 48, generator=torch.Generator().manual_seed(0))
    fp8 = fill_random_(torch.empty(b.num_pages, 8, 48, dtype=torch.float8_e4m3fn), torch.Generator().manual_seed(1))
    real = fp8.float() * 0.25
    ref = reference_mla_attention(q, real, b, MLAParams(4, 32, 16, 0.3))
    assert torch.equal(reference_mla_attention(q, fp8, b, p), ref)


def test_mla_bytes_and_flops_of_the_issue_shape():
    b = make_batch(Shape("decode", decodes=32, decode_context=4096), 64, "cpu")
    p = MLAParams(128, 512, 64, DEEPSEEK_SCALE)
    assert mla_kv_bytes(b, p, 2) == 32 * 4097 * 576 * 2  # K and V are the same 576 dims
    assert mla_flops(b, p) == 32 * 4097 * 128 * (2 * 576 + 2 * 512)


# -- the launch table and split rule -------------------------------------------


def test_every_table_entry_fits_shared_memory():
    for (group, elem), t in TILES.items():
        assert t.block_h == group and t.block_n >= 16 and t.num_stages >= 1
        assert t.ctas_per_sm * smem_bytes(t, 576, elem) <= 228 * 1024, (group, elem)
        assert smem_bytes(t, 576, elem) <= SMEM_LIMIT, (group, elem, smem_bytes(t, 576, elem))
        assert not (t.split_v and elem == 2), "a 16-bit tile's one load is pipelined for both dots"


def test_tiles_cover_every_head_count_in_as_few_groups_as_the_table_allows():
    assert choose_tiles(8, 2).block_h == 16  # DeepSeek-V2-Lite at tp 2: 8 heads, 8 masked rows
    assert choose_tiles(16, 2).block_h == 16  # DeepSeek-V3 at tp 8
    assert choose_tiles(32, 1).block_h == 32
    assert choose_tiles(64, 2).block_h == 64  # Kimi-K2 at tp 1
    assert choose_tiles(128, 2).block_h == 64  # DeepSeek-V3 at tp 1: 2 groups
    assert choose_tiles(16, 1) is TILES[(16, 1)]


def test_split_rule_on_the_h200_shapes():
    t16, t64 = MLATiles(16, 32, 5, 4, 2, 256), MLATiles(64, 32, 5, 8, 1, 256)  # 2 programs per SM, and 1
    assert choose_splits(32, 1, 4097, t16, 132) == 8  # 256 programs in 264 slots
    assert choose_splits(32, 2, 4097, t64, 132) == 2  # 128 programs on 132 SMs
    assert choose_splits(1, 2, 131072, t64, 132) == 63  # one long request: 126 programs, within 5% of full
    assert choose_splits(1, 1, 131072, t16, 132) >= 100
    assert choose_splits(8, 1, 4097, t16, 132) == 15  # capped at 16 (splits of 256 keys), 15 within 5 points
    assert choose_splits(32, 1, 300, t16, 132) == 1  # short contexts: a split is never under 256 keys
    assert choose_splits(256, 2, 4097, t64, 132) == 1  # the batch alone fills the GPU


def test_build_keeps_vllm_decode_metadata_and_refuses_prefill_tokens():
    p = MLAParams(16, 64, 16, 0.2)
    ad = TritonMLAAdapter(RunEnv(torch.device("cpu"), None, torch.bfloat16, "auto"), p, sm_count=132)
    b = make_batch(Shape("decode", decodes=32, decode_context=4096), 64, "cpu")
    plan = ad.build(b)
    assert TILES[(16, 2)].ctas_per_sm == 1  # one program per SM: 4 splits fill 132 SMs with 128 programs
    assert plan.num_splits == 4 and plan.head_groups == 1
    assert plan.block_table.data_ptr() == b.block_table.data_ptr() and torch.equal(plan.seq_lens, b.seq_lens)
    assert plan.part_o.shape == (32, 16, 4, 64) and plan.part_lse.shape == (32, 16, 4)
    assert "split-KV 4" in ad.kernel_name(plan)
    mixed = make_batch(Shape("mixed", decodes=2, decode_context=9, prefills=1, prefill_new=4, prefill_context=3),
                       16, "cpu")
    with pytest.raises(Unsupported, match="prefill"):
        ad.build(mixed)


def test_unavailable_says_why(monkeypatch):
    p = MLAParams(16, 512, 64, 0.1)

    def why(device, cap, kv):
        return TritonMLAAdapter(RunEnv(torch.device(device), cap, torch.bfloat16, kv), p, sm_count=1).unavailable()

    assert "fp8_e5m2" in why("cpu", None, "fp8_e5m2")  # e5m2: not a dtype the kernel stores (nor in vLLM's list)
    assert "SM89" in why("cuda", (8, 0), "fp8")
    assert why("cuda", (9, 0), "fp8") is None
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    assert "TRITON_INTERPRET" in why("cpu", None, "auto")


def test_a_launch_that_does_not_fit_falls_back_to_smaller_tiles(monkeypatch):
    from triton.runtime.errors import OutOfResources

    p = MLAParams(16, 64, 16, 0.2)
    ad = TritonMLAAdapter(RunEnv(torch.device("cpu"), None, torch.bfloat16, "auto"), p)
    plan = ad.build(decode_batch([40], 16), tiles=MLATiles(16, 64, 3, 4, 1, 256))
    tried = []

    def launch(plan, tiles, *args):
        tried.append(tiles)
        if tiles.block_n > 32:
            raise OutOfResources(300000, SMEM_LIMIT, "shared memory")

    monkeypatch.setattr(ad, "_launch", launch)
    ad.run(plan, None, None, None, None)
    # two stages less is one key buffer less (the block-table read shares the stages)
    assert [(t.block_n, t.num_stages) for t in tried] == [(64, 3), (64, 1), (32, 3)]
    assert "16 heads x 32 keys per tile, 3 stages" in ad.kernel_name(plan)
    tried.clear()
    ad.run(plan, None, None, None, None)  # remembered: straight to what fits
    assert [(t.block_n, t.num_stages) for t in tried] == [(32, 3)]


# -- the kernel under the interpreter -----------------------------------------

CASES = {
    # name: (params, context lengths, page size, kv dtype, build overrides)
    "bf16 cache, page 16, one split, tiles cross pages": (
        MLAParams(16, 512, 64, DEEPSEEK_SCALE), [37, 80, 5], 16, "bfloat16", dict(num_splits=1)),
    "bf16 cache, page 64, 3 splits, 16 heads in a 32-row group": (
        MLAParams(16, 512, 64, DEEPSEEK_SCALE), [130, 64, 9], 64, "bfloat16",
        dict(num_splits=3, tiles=MLATiles(32, 32, 2, 4, 1, 256))),
    "fp8 cache scaled 0.5, page 16, 4 splits, one tile per page": (
        MLAParams(16, 512, 64, DEEPSEEK_SCALE, kv_scale=0.5), [70, 33], 16, "fp8",
        dict(num_splits=4, tiles=MLATiles(16, 16, 2, 4, 1, 256))),
    "fp8 cache scaled 2, page 64, 8 heads (masked rows), one split": (
        MLAParams(8, 512, 64, DEEPSEEK_SCALE, kv_scale=2.0), [100, 1], 64, "fp8", dict(num_splits=1)),
    "page 48 (not a power of two), 2 splits": (
        MLAParams(16, 512, 64, DEEPSEEK_SCALE), [95, 50], 48, "bfloat16",
        dict(num_splits=2, tiles=MLATiles(16, 32, 2, 4, 1, 256))),
    "128 heads: two 64-head groups, 2 splits": (
        MLAParams(128, 512, 64, DEEPSEEK_SCALE), [75, 40], 64, "bfloat16", dict(num_splits=2)),
    "8 splits on short rows: empty splits weigh nothing": (
        MLAParams(16, 512, 64, DEEPSEEK_SCALE), [20, 3], 16, "bfloat16",
        dict(num_splits=8, tiles=MLATiles(16, 16, 1, 4, 1, 256))),
    "fp8 cache scaled 0.5, no pipeline (num_stages 1), page 16, 3 splits": (
        MLAParams(16, 512, 64, DEEPSEEK_SCALE, kv_scale=0.5), [90, 40, 7], 16, "fp8",
        dict(num_splits=3, tiles=MLATiles(16, 32, 1, 8, 1, 256))),
    "fp8 cache scaled 0.5, value loaded apart, page 16 (tiles cross pages), 3 splits": (
        MLAParams(16, 512, 64, DEEPSEEK_SCALE, kv_scale=0.5), [90, 40, 7], 16, "fp8",
        dict(num_splits=3, tiles=MLATiles(16, 32, 5, 4, 1, 256, split_v=True))),
    "bf16 cache, page 64, one split, 32-row group, 64-key tiles": (
        MLAParams(16, 512, 64, DEEPSEEK_SCALE), [130, 63], 64, "bfloat16",
        dict(num_splits=1, tiles=MLATiles(32, 64, 5, 8, 1, 256))),
    "fp8 cache, 128 heads (two staged-query groups), page 64, 64-key tiles, 2 splits": (
        MLAParams(128, 512, 64, DEEPSEEK_SCALE, kv_scale=0.5), [150, 40], 64, "fp8",
        dict(num_splits=2, tiles=MLATiles(64, 64, 5, 8, 1, 256))),
    "fp8 cache scaled 2, 64 heads (the query staged through memory), page 64, 2 splits": (
        MLAParams(64, 512, 64, DEEPSEEK_SCALE, kv_scale=2.0), [100, 30], 64, "fp8",
        dict(num_splits=2, tiles=MLATiles(64, 32, 5, 8, 1, 256))),
    "rank 96 + rope 24 (padded dims), 2 splits": (
        MLAParams(16, 96, 24, 0.1), [45, 30], 16, "bfloat16", dict(num_splits=2)),
    # tiles of whole pages: the tile's block-table entries read as one vector
    "page 16 under 64-key tiles, block-table entries as a vector, 3 splits": (
        MLAParams(16, 512, 64, DEEPSEEK_SCALE), [200, 64, 17], 16, "bfloat16",
        dict(num_splits=3, tiles=MLATiles(16, 64, 5, 8, 1, 256))),
    "fp8 cache scaled 2, page 8 under 32-key tiles (vector), value loaded apart, 2 splits": (
        MLAParams(16, 512, 64, DEEPSEEK_SCALE, kv_scale=2.0), [81, 30], 8, "fp8",
        dict(num_splits=2, tiles=MLATiles(16, 32, 5, 4, 2, 256, split_v=True))),
    "128 heads, page 32 under 64-key tiles (vector), 2 splits": (
        MLAParams(128, 512, 64, DEEPSEEK_SCALE), [100, 31], 32, "bfloat16",
        dict(num_splits=2, tiles=MLATiles(64, 64, 3, 8, 1, 256))),
    # keys-major scores and dims-major output (S^T = K Q^T, O^T += V^T P^T)
    "transposed dots, 128 heads, page 16 under 32-key tiles, 3 splits": (
        MLAParams(128, 512, 64, DEEPSEEK_SCALE), [90, 33, 5], 16, "bfloat16",
        dict(num_splits=3, tiles=MLATiles(64, 32, 7, 8, 1, 256, transposed=True))),
    "transposed dots, 16 heads in a 64-row group, fp8 cache scaled 2, page 64, one split": (
        MLAParams(16, 512, 64, DEEPSEEK_SCALE, kv_scale=2.0), [70, 64], 64, "fp8",
        dict(num_splits=1, tiles=MLATiles(64, 32, 5, 8, 1, 256, transposed=True))),
    # pages that neither hold nor split into tiles: one entry per key
    "page 24 under 32-key tiles (one entry per key), 2 splits": (
        MLAParams(16, 512, 64, DEEPSEEK_SCALE), [77, 40], 24, "bfloat16",
        dict(num_splits=2, tiles=MLATiles(16, 32, 3, 4, 1, 256))),
}


@needs_interpreter
@pytest.mark.parametrize("name", list(CASES))
def test_mla_kernel_matches_the_latent_reference(name):
    p, ctx, page, kv, kw = CASES[name]
    r = _check(p, decode_batch(ctx, page, seed=len(name)), kv, **kw)
    assert max(r.errors) < TIGHT, (name, r.errors)
    assert r.plan.num_splits == kw["num_splits"]


@needs_interpreter
def test_mla_kernel_on_the_serving_path_bf16_with_table_defaults():
    """bf16 query and output, tiles and splits from the table (this is what `run` does)."""
    p = MLAParams(16, 512, 64, DEEPSEEK_SCALE)
    b = make_batch(Shape("decode", decodes=3, decode_context=50), 16, "cpu", seed=4, spare_pages=4)
    r = check_mla_decode(b, p, "cpu", torch.bfloat16, "auto", seed=5)
    assert r.ok and max(r.errors) < 1e-2, r.errors  # bf16 output rounding is ~3e-3
    assert r.plan.tiles == TILES[(16, 2)]


@needs_interpreter
def test_mla_kernel_returns_the_log_sum_exp_split_or_not():
    p = MLAParams(16, 64, 16, 0.2)
    b = decode_batch([60, 17], 16, seed=9)
    ad = TritonMLAAdapter(RunEnv(torch.device("cpu"), None, torch.float32, "bfloat16"), p)
    gen = torch.Generator().manual_seed(2)
    cache = fill_random_(ad.alloc_cache(b.num_pages, 16), gen)
    inp = random_mla_inputs(b, p, torch.float32, gen)
    write_latents(cache, b, inp.latent_new)
    want = []
    for r in range(2):
        s = int(b.seq_lens[r])
        kv = cache[b.block_table[r, :-(-s // 16)].long()].reshape(-1, 80)[:s].float()
        want.append(torch.logsumexp(inp.q[r] @ kv.T * 0.2, dim=-1))
    want = torch.stack(want)
    for ns in (1, 3):
        for tiles in (MLATiles(16, 16, 1, 4, 1, 256), MLATiles(16, 32, 3, 4, 1, 256)):  # page 16: one page, two
            out = torch.full((2, 16, 64), float("nan"))
            lse = torch.full((2, 16), float("nan"))
            ad.run(ad.build(b, num_splits=ns, tiles=tiles), inp.q, cache, None, out, lse=lse)
            assert torch.allclose(lse, want, atol=1e-4), (ns, tiles)
            assert relative_error(out, reference_mla_attention(inp.q, cache, b, p)) < TIGHT, (ns, tiles)


@needs_interpreter
@pytest.mark.parametrize("q_mult", [3.0e4, 1.0e-6])
def test_fp8_cache_query_scale_is_folded_exactly(q_mult):
    """With an fp8 cache the dots run in fp16 on the GPU: the query is scaled
    by a power of two into fp16's range and the inverse goes into the score
    scale. A query far outside fp16's range (or deep in its subnormals) must
    give the reference's output; an exponent off by one would not."""
    p = MLAParams(16, 512, 64, 0.1 / q_mult, kv_scale=0.5)
    b = decode_batch([70, 20], 16, seed=4)
    ad = TritonMLAAdapter(RunEnv(torch.device("cpu"), None, torch.float32, "fp8"), p)
    gen = torch.Generator().manual_seed(6)
    cache = fill_random_(ad.alloc_cache(b.num_pages, 16), gen)
    inp = random_mla_inputs(b, p, torch.float32, gen)
    write_latents(cache, b, inp.latent_new, p.kv_scale)
    q = inp.q * q_mult
    out = torch.full((2, 16, 512), float("nan"))
    ad.run(ad.build(b, num_splits=2, tiles=TILES[(16, 1)]), q, cache, None, out)
    ref = reference_mla_attention(q, cache, b, p)
    assert relative_error(out, ref) < TIGHT


def test_the_kernels_cache_dtypes_are_the_ones_vllm_accepts_for_triton_mla():
    """The adapter keeps its own list (the run layer reads no declaration);
    it must not drift from vLLM's TritonMLABackend list."""
    from attn_select.backends.mla.triton_mla import TRITON_MLA
    from attn_select.backends.run.triton_mla import SUPPORTED_KV_CACHE_DTYPES

    assert SUPPORTED_KV_CACHE_DTYPES == TRITON_MLA.kv_cache_dtypes
