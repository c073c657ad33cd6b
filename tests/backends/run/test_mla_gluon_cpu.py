"""TRITON_MLA's Gluon kernel on the CPU: its schedule emulated in torch
(``mla_gluon_emulation``) in the launcher's place, through the adapter's real
build / split / merge path, against the float32 latent reference; the rule
that picks Gluon or ``tl``; the shared-memory model of the launch shapes.
The kernel itself is compiled for sm_90 by test_mla_gluon_sm90_codegen.py
and timed on the H200 (.gpu-drv driver, BENCHMARKS.md)."""

from __future__ import annotations

import functools

import pytest
import torch

from attn_select.backends.run import mla_gluon
from attn_select.backends.run.adapter import RunEnv
from attn_select.backends.run.batch import fill_random_
from attn_select.backends.run.mla_check import check_mla_decode, random_mla_inputs, write_latents
from attn_select.backends.run.mla_gluon import GLUON_VARIANTS, WS_TILES, WSC_TILES, GluonTiles, gluon_smem_bytes
from attn_select.backends.run.mla_reference import MLAParams, reference_mla_attention
from attn_select.backends.run.reference import relative_error
from attn_select.backends.run.triton_mla import SMEM_LIMIT, TritonMLAAdapter, gluon_unavailable
from tests.backends.run.conftest import needs_interpreter
from tests.backends.run.mla_gluon_emulation import _WsShared, emulate_launch
from tests.backends.run.test_triton_mla_cpu import DEEPSEEK_SCALE, TIGHT, decode_batch


def _adapter(p, kv="bfloat16", dtype=torch.float32):
    return TritonMLAAdapter(RunEnv(torch.device("cpu"), None, dtype, kv), p)


@pytest.fixture
def emulated(monkeypatch):
    """The launcher replaced by the schedule's emulation, P kept in float32 (exact up to summation order)."""
    monkeypatch.setattr(mla_gluon, "launch", functools.partial(emulate_launch, p_dtype=torch.float32))


CASES = {
    # (params, context lengths, page, tiles, splits)
    "128 heads (two groups), page 64, 64-key tiles, 2 buffers, 2 splits": (
        MLAParams(128, 512, 64, DEEPSEEK_SCALE), [300, 129], 64, GluonTiles(64, 2), 2),
    "64 heads, page 16 (four copies a tile), ragged ends, 3 splits": (
        MLAParams(64, 512, 64, DEEPSEEK_SCALE), [200, 64, 17], 16, GluonTiles(64, 2), 3),
    "64 heads, page 64 holding two 32-key tiles, 3 buffers, 4 splits (some empty)": (
        MLAParams(64, 512, 64, DEEPSEEK_SCALE), [260, 5, 70], 64, GluonTiles(32, 3), 4),
    "128 heads, page 8 under 32-key tiles, 4 buffers (the ring wraps), 2 splits": (
        MLAParams(128, 512, 64, DEEPSEEK_SCALE), [333, 31], 8, GluonTiles(32, 4), 2),
    "one tile at a time, 128 heads, page 64, 64-key tiles, 2 buffers, 3 splits (one empty)": (
        MLAParams(128, 512, 64, DEEPSEEK_SCALE), [300, 100], 64, GluonTiles(64, 2, overlap=False), 3),
    "one tile at a time, 64 heads, page 16, 32-key tiles, 3 buffers, 2 splits": (
        MLAParams(64, 512, 64, DEEPSEEK_SCALE), [250, 33], 16, GluonTiles(32, 3, overlap=False), 2),
    # the warp-specialised form: pairs of 64-key blocks, one a warpgroup
    "warp-specialised, 128 heads, page 64, 2 splits (an odd block count: a masked second block)": (
        MLAParams(128, 512, 64, DEEPSEEK_SCALE), [300, 129], 64, WS_TILES, 2),
    "warp-specialised, 64 heads, page 16 (four copies a half), ragged ends, 3 splits": (
        MLAParams(64, 512, 64, DEEPSEEK_SCALE), [200, 64, 17], 16, WS_TILES, 3),
    "warp-specialised, 64 heads, page 8, 7 splits (empty ones)": (
        MLAParams(64, 512, 64, DEEPSEEK_SCALE), [5, 70, 400], 8, WS_TILES, 7),
    "warp-specialised, 128 heads, page 64, one split, several pairs (the ring wraps)": (
        MLAParams(128, 512, 64, DEEPSEEK_SCALE), [600, 255], 64, WS_TILES, 1),
    "warp-specialised, late halves in 4 chunks, 128 heads, page 64, 2 splits": (
        MLAParams(128, 512, 64, DEEPSEEK_SCALE), [300, 129], 64, WSC_TILES, 2),
    "warp-specialised, late halves in 4 chunks, 64 heads, page 16, 3 splits": (
        MLAParams(64, 512, 64, DEEPSEEK_SCALE), [200, 64, 17], 16, WSC_TILES, 3),
}


@needs_interpreter
@pytest.mark.parametrize("name", list(CASES))
def test_gluon_schedule_matches_the_latent_reference(name, emulated):
    p, ctx, page, tiles, splits = CASES[name]
    r = check_mla_decode(decode_batch(ctx, page, seed=len(name)), p, "cpu", torch.float32, "bfloat16", seed=3,
                         tolerance_override=TIGHT, tiles=tiles, num_splits=splits)
    assert r.unwritten == 0
    assert max(r.errors) < TIGHT, (name, r.errors)
    assert r.plan.num_splits == splits and r.plan.tiles == tiles


def test_gluon_schedule_one_split_writes_output_and_log_sum_exp(emulated):
    p = MLAParams(64, 512, 64, DEEPSEEK_SCALE)
    batch = decode_batch([150, 40], 64, seed=5)
    ad = _adapter(p)
    gen = torch.Generator().manual_seed(1)
    cache = fill_random_(ad.alloc_cache(batch.num_pages, batch.page_size), gen)
    inp = random_mla_inputs(batch, p, torch.float32, gen)
    write_latents(cache, batch, inp.latent_new, p.kv_scale)
    out = torch.full((2, 64, 512), float("nan"))
    lse = torch.full((2, 64), float("nan"))
    plan = ad.build(batch, tiles=GluonTiles(64, 2), num_splits=1)
    ad.run(plan, inp.q, cache, None, out, lse)
    assert relative_error(out, reference_mla_attention(inp.q, cache, batch, p)) < TIGHT
    lat = cache.reshape(-1, 576)
    for r in range(2):
        s = int(batch.seq_lens_cpu[r])
        pages = batch.block_table[r, :-(-s // 64)].long()
        kv = cache[pages].reshape(-1, 576)[:s].float()
        want = torch.logsumexp(inp.q[r].float() @ kv.T * p.scale, dim=-1)
        torch.testing.assert_close(lse[r], want, rtol=1e-5, atol=1e-5)
    assert lat.shape[0] == batch.num_pages * 64


@needs_interpreter
def test_gluon_schedule_keeps_stale_nan_slots_out_of_the_output(emulated):
    """Slots past a request's last key may hold anything (NaN included): the
    kernel zeroes their value rows in the landed tile and masks their scores."""
    p = MLAParams(64, 512, 64, DEEPSEEK_SCALE)
    batch = decode_batch([100, 37], 16, seed=2)
    ad = _adapter(p)
    gen = torch.Generator().manual_seed(4)
    cache = fill_random_(ad.alloc_cache(batch.num_pages, batch.page_size), gen)
    inp = random_mla_inputs(batch, p, torch.float32, gen)
    write_latents(cache, batch, inp.latent_new, p.kv_scale)
    poisoned = cache.clone().fill_(float("nan"))
    for r in range(batch.num_requests):
        s = int(batch.seq_lens_cpu[r])
        for k in range(s):
            pg = int(batch.block_table[r, k // 16])
            poisoned[pg, k % 16] = cache[pg, k % 16]
    out = torch.full((2, 64, 512), float("nan"))
    plan = ad.build(batch, tiles=GluonTiles(64, 2), num_splits=2)
    ad.run(plan, inp.q, poisoned, None, out)
    assert relative_error(out, reference_mla_attention(inp.q, cache, batch, p)) < TIGHT


@needs_interpreter
def test_gluon_schedule_with_bf16_p_is_within_the_runs_tolerance(monkeypatch):
    """The serving dtypes: bf16 query, cache and P (the kernel's shared P tile)."""
    monkeypatch.setattr(mla_gluon, "launch", emulate_launch)
    p = MLAParams(128, 512, 64, DEEPSEEK_SCALE)
    r = check_mla_decode(decode_batch([400, 90], 64, seed=9), p, "cpu", torch.bfloat16, "bfloat16", seed=2,
                         tiles=GluonTiles(64, 2), num_splits=2)
    assert r.ok, r.errors


@needs_interpreter
@pytest.mark.parametrize("seed,tiles", [(1, WS_TILES), (2, WS_TILES), (3, WSC_TILES), (4, WSC_TILES)])
def test_warp_specialised_schedule_holds_in_other_orders(seed, tiles, monkeypatch):
    """The two warpgroups and the copies in flight in other legal orders (the
    emulation's scheduler seed): every read still finds its block or P in the
    slot, no barrier runs a phase ahead of its waiter, nothing deadlocks."""
    monkeypatch.setattr(mla_gluon, "launch", functools.partial(emulate_launch, p_dtype=torch.float32,
                                                              ws_seed=1000 * seed))
    p = MLAParams(64, 512, 64, DEEPSEEK_SCALE)
    r = check_mla_decode(decode_batch([450, 130], 16, seed=seed), p, "cpu", torch.float32, "bfloat16", seed=seed,
                         tolerance_override=TIGHT, tiles=tiles, num_splits=2)
    assert max(r.errors) < TIGHT, r.errors


@needs_interpreter
def test_warp_specialised_schedule_with_bf16_p_is_within_the_runs_tolerance(monkeypatch):
    """bf16 P (warpgroup 0's P0 rounded, rescaled by c1, rounded again), bf16 cache and query."""
    monkeypatch.setattr(mla_gluon, "launch", emulate_launch)
    p = MLAParams(128, 512, 64, DEEPSEEK_SCALE)
    r = check_mla_decode(decode_batch([400, 90], 64, seed=9), p, "cpu", torch.bfloat16, "bfloat16", seed=2,
                         tiles=WS_TILES, num_splits=2)
    assert r.ok, r.errors


def test_warp_specialised_emulation_catches_a_stale_slot_and_a_phase_run_ahead():
    """The checks the schedule's emulation relies on do fire."""
    sh = _WsShared(torch.zeros(64 * 4, 576), torch.arange(4), 255, 64, 512, lc=4)
    sh.issue_own(0, 1, True)
    sh.land(0)
    with pytest.raises(AssertionError, match=r"holds blocks \[1, 1, 1, 1\]"):
        sh.half(0, 2)
    sh.issue_late(0, 1, True)
    sh.land(0)  # the first of 4 chunks: the half is not whole yet
    with pytest.raises(AssertionError, match=r"holds blocks \[1, None, None, None\]"):
        sh.half(1, 1)
    sh.arrive("c0")
    sh.arrive("c0")
    sh.arrive("c0")  # three phases done where the waiter of the first expects one
    with pytest.raises(AssertionError, match="3 completions"):
        sh.ready("c0", 0, 1)
    sh.arrive("l")
    assert not sh.ready("l", 0, 1)  # two arrivals a phase: one is not enough


def test_the_warp_specialised_launch_takes_only_its_shape():
    with pytest.raises(ValueError, match="64-key blocks in 2 buffers"):
        mla_gluon.launch(None, None, None, None, None, None, None, None, 64, 1, 1.0, 64, 512,
                         GluonTiles(32, 2, schedule="ws"))


def test_every_gluon_variant_fits_shared_memory():
    for t in GLUON_VARIANTS:
        assert gluon_smem_bytes(t) <= SMEM_LIMIT, t
    # the query, two 64-key tiles and P: 224 KiB
    assert gluon_smem_bytes(GluonTiles(64, 2)) == (64 * 576 + 2 * 64 * 576 + 64 * 64) * 2
    # warp-specialised: the query and two 64-key buffers; P in the rope slots
    assert gluon_smem_bytes(WS_TILES) == gluon_smem_bytes(WSC_TILES) == (64 * 576 + 2 * 64 * 576) * 2
    assert WS_TILES in GLUON_VARIANTS and mla_gluon.DEFAULT_GLUON_TILES.schedule == "ws"


def test_gluon_rule_says_why_not(monkeypatch):
    import triton

    monkeypatch.delenv("ATTN_SELECT_MLA_KERNEL", raising=False)
    monkeypatch.setattr(triton, "__version__", "3.6.0")
    ok = dict(is_cuda=True, capability=(9, 0), kv_elem=2, num_heads=128, page_size=64, rank=512, rope=64)
    assert gluon_unavailable(**ok) is None
    assert gluon_unavailable(**{**ok, "page_size": 16}) is None
    assert "no GPU" in gluon_unavailable(**{**ok, "is_cuda": False})
    assert "sm_90" in gluon_unavailable(**{**ok, "capability": (10, 0)})
    assert "fp8" in gluon_unavailable(**{**ok, "kv_elem": 1})
    assert "16 heads" in gluon_unavailable(**{**ok, "num_heads": 16})
    assert "96 heads" in gluon_unavailable(**{**ok, "num_heads": 96})
    assert "page 1" in gluon_unavailable(**{**ok, "page_size": 1})
    assert "powers of two" in gluon_unavailable(**{**ok, "rank": 96})
    monkeypatch.setenv("ATTN_SELECT_MLA_KERNEL", "tl")
    assert "ATTN_SELECT_MLA_KERNEL" in gluon_unavailable(**ok)
    monkeypatch.delenv("ATTN_SELECT_MLA_KERNEL")
    monkeypatch.setattr(triton, "__version__", "3.9.0")
    assert "3.9.0" in gluon_unavailable(**ok)


def test_cpu_build_takes_tl_and_names_the_reason():
    p = MLAParams(128, 512, 64, DEEPSEEK_SCALE)
    ad = _adapter(p)
    plan = ad.build(decode_batch([100], 64))
    assert not isinstance(plan.tiles, GluonTiles)
    assert "Gluon not used: no GPU" in ad.kernel_name(plan)


def test_a_rule_chosen_gluon_launch_that_fails_falls_back_to_tl(monkeypatch):
    """The rule's Gluon launch raising (e.g. no compile on this Triton build) runs
    the same step on tl and says so; explicit Gluon tiles raise instead."""
    import attn_select.backends.run.triton_mla as tm

    p = MLAParams(64, 512, 64, DEEPSEEK_SCALE)
    ad = _adapter(p)
    monkeypatch.setattr(tm, "gluon_unavailable", lambda *a: None)

    def broken(*a, **k):
        raise RuntimeError("PassManager::run failed")

    ran = []
    monkeypatch.setattr(mla_gluon, "launch", broken)
    monkeypatch.setattr(TritonMLAAdapter, "_launch", lambda self, plan, tiles, *a: ran.append(tiles))
    batch = decode_batch([100], 64)
    plan = ad.build(batch)
    assert isinstance(plan.tiles, GluonTiles)
    q = torch.zeros(1, 64, 576)
    out = torch.zeros(1, 64, 512)
    ad.run(plan, q, ad.alloc_cache(batch.num_pages, 64), None, out)
    assert ran and not isinstance(ran[0], GluonTiles)
    assert "Gluon not used: its launch failed (RuntimeError: PassManager::run failed)" in ad.kernel_name(plan)
    assert not isinstance(ad.build(batch).tiles, GluonTiles)  # later steps too
    with pytest.raises(RuntimeError, match="PassManager"):
        ad.run(ad.build(batch, tiles=GluonTiles(64, 2)), q, ad.alloc_cache(batch.num_pages, 64), None, out)


@pytest.mark.parametrize("env, schedule",
                         [("", "ws"), ("ws", "ws"), ("wsc", "wsc"), ("shared", "shared"), ("bogus", "ws")])
def test_the_env_names_the_gluon_schedule_run_takes(monkeypatch, env, schedule):
    """ATTN_SELECT_MLA_KERNEL=ws / wsc / shared puts that schedule in the rule's
    place (the GPU driver confirms one through `run` this way); other values
    leave the default, the warp-specialised one."""
    import attn_select.backends.run.triton_mla as tm

    monkeypatch.setenv("ATTN_SELECT_MLA_KERNEL", env)
    monkeypatch.setattr(tm, "gluon_unavailable", lambda *a: None)
    plan = _adapter(MLAParams(128, 512, 64, DEEPSEEK_SCALE)).build(decode_batch([100], 64))
    assert isinstance(plan.tiles, GluonTiles) and plan.tiles.schedule == schedule
