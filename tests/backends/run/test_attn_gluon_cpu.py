"""TRITON_ATTN's Gluon prefill kernel on the CPU: its schedule emulated in
torch (``attn_gluon_emulation``) in the launcher's place, through the
adapter's real build (the ``tl`` kernel's work list) and merge kernel (under
the interpreter), against the float32 reference, on ragged prefills with
context, pages 8 / 16 / 64, every launch shape, split blocks and NaN in every
slot no request reads; the rule that picks Gluon or ``tl``; the fallback
when a Gluon launch fails; the shared-memory model. The kernel itself is
compiled for sm_90 by test_attn_gluon_sm90_codegen.py and timed on the H200
(benchmarks/run_gluon_prefill.py)."""

from __future__ import annotations

import functools
from dataclasses import replace

import pytest
import torch

from attn_select.backends.run import attn_gluon
from attn_select.backends.run import triton_attn as ta
from attn_select.backends.run.adapter import RunEnv
from attn_select.backends.run.attn_gluon import PREFILL_VARIANTS, PrefillTiles, prefill_smem_bytes
from attn_select.backends.run.batch import (
    fill_random_, make_prefill_batch, poison_unread_slots, random_inputs, write_new_tokens,
)
from attn_select.backends.run.reference import AttnParams, reference_attention, relative_error, tolerance
from attn_select.backends.run.triton_attn import PREFILL_CONFIG, TritonAttnAdapter, gluon_prefill_unavailable
from attn_select.backends.run.triton_mla import SMEM_LIMIT
from tests.backends.run.attn_gluon_emulation import emulate_launch
from tests.backends.run.conftest import load_benchmark, needs_interpreter

TIGHT = 2e-5  # float32 everywhere and P kept in float32: the schedule's error is summation order
GQA4 = AttnParams(8, 2, 64, 64, 64 ** -0.5)  # 4 query heads a KV head: 32 tokens a 128-row tile
GQA3 = AttnParams(6, 2, 64, 64, 64 ** -0.5)  # 3 heads padded to 4: a padding row in every token
MHA = AttnParams(2, 2, 64, 64, 64 ** -0.5)  # one head a KV head: 128 tokens a tile


@pytest.fixture
def emulated(monkeypatch):
    """The launcher replaced by the schedule's emulation, P kept in float32."""
    monkeypatch.setattr(attn_gluon, "launch", functools.partial(emulate_launch, p_dtype=torch.float32))


def run_case(p, q_lens, ctx, page, tiles, cfg=None, dtype=torch.float32, seed=0):
    ad = TritonAttnAdapter(RunEnv(torch.device("cpu"), None, dtype, "auto"), p)
    batch = make_prefill_batch(q_lens, ctx, page, "cpu", seed=seed, spare_pages=3)
    gen = torch.Generator().manual_seed(seed + 1)
    cache = fill_random_(ad.alloc_cache(batch.num_pages, page), gen)
    k, v = ad.kv_views(cache)
    inp = random_inputs(batch, p.num_heads, p.num_kv_heads, p.head_size, p.head_size_v, dtype, False, gen)
    write_new_tokens(k, v, batch, inp)
    ref = reference_attention(inp.q, k, v, batch, p)
    poison_unread_slots(k, v, batch)
    plan = ad.build(batch, cfg, gluon=tiles)
    out = torch.full_like(inp.q, float("nan"))
    ad.run(plan, inp.q, cache, None, out)
    assert not torch.isnan(out).any(), "unwritten output elements (or a stale NaN slot reached them)"
    return relative_error(out, ref), plan, ad


V = {t.label: t for t in PREFILL_VARIANTS}
SPLIT = replace(PREFILL_CONFIG, min_split_tokens=128)
CASES = {
    # name: (params, new tokens, cached tokens, page, tiles, cfg)
    "2 buffers, producer warp, page 16, ragged chunks on ragged contexts": (
        GQA4, [40, 7, 70], [100, 0, 33], 16, V["g128x128x2ow"], None),
    "default shape (3 buffers, producer warp), page 64 (two boxes a tile)": (
        GQA4, [40, 7, 70], [100, 0, 33], 64, V["g128x128x3ow"], None),
    "64-key tiles, 3 buffers, no producer, page 16, from empty (the ring wraps)": (
        GQA4, [200], [0], 16, V["g128x64x3o"], None),
    "64-key tiles, 4 buffers, producer warp, page 64 (one box a tile), long context": (
        GQA4, [45, 90], [300, 129], 64, PrefillTiles(128, 64, 4, warp_spec=True), None),
    "one tile at a time, page 8 (sixteen boxes a tile)": (GQA4, [33, 64], [500, 17], 8, V["g128x128x2s"], None),
    "one tile at a time, producer warp, page 16 (not a driver shape)": (
        GQA4, [33, 64], [200, 17], 16, PrefillTiles(128, 128, 2, overlap=False, warp_spec=True), None),
    "default shape, page 16 (the ring of 3 wraps)": (
        GQA4, [300, 64], [129, 17], 16, V["g128x128x3ow"], None),
    "64-row tiles (one warpgroup, 16 tokens), page 16": (GQA4, [40, 7, 70], [100, 0, 33], 16, V["g64x64x3o"], None),
    "ping-pong halves, page 16, ragged chunks (a half past the request's tokens)": (
        GQA4, [40, 7, 70], [100, 0, 33], 16, V["g128x128x3owp"], None),
    "ping-pong halves, page 64, 3 heads a KV head (padding rows), split over the context": (
        GQA3, [20, 9], [700, 200], 64, V["g128x128x3owp"], SPLIT),
    "3 heads a KV head (padding rows), page 16": (GQA3, [40, 9], [50, 200], 16, V["g128x128x2ow"], None),
    "one head a KV head (128 tokens a tile), page 64": (MHA, [150, 20], [70, 300], 64, V["g128x64x3o"], None),
    "a single-block request split over its context (merge kernel), page 16": (
        GQA4, [20], [700], 16, V["g128x128x2ow"], SPLIT),
    "split with empty splits, no producer, page 16": (
        GQA4, [10], [250], 16, V["g128x64x3o"], replace(PREFILL_CONFIG, min_split_tokens=64)),
}


@needs_interpreter
@pytest.mark.parametrize("name", list(CASES))
def test_gluon_prefill_schedule_matches_the_reference(name, emulated):
    p, q_lens, ctx, page, tiles, cfg = CASES[name]
    err, plan, ad = run_case(p, q_lens, ctx, page, tiles, cfg, seed=len(name))
    assert err < TIGHT, (name, err)
    assert plan.gluon == tiles and plan.block_q * ta._next_pow2(p.group) == tiles.block_m
    assert "Gluon paged prefill kernel" in ad.kernel_name(plan)
    if cfg is not None:
        assert plan.max_splits > 1 and plan.num_split_tokens > 0, "the case must split"


@needs_interpreter
def test_gluon_prefill_schedule_in_bf16_with_p_rounded_as_the_kernel(monkeypatch):
    monkeypatch.setattr(attn_gluon, "launch", emulate_launch)  # P in the cache dtype
    err, _, _ = run_case(GQA4, [40, 70], [100, 33], 16, V["g128x128x2ow"], dtype=torch.bfloat16, seed=2)
    assert err < tolerance("bfloat16"), err


def test_the_work_list_is_the_tl_kernels():
    """The Gluon plan's work list is the one the tl kernel gets for the same blocks."""
    batch = make_prefill_batch([40, 7, 70], [100, 0, 33], 16, "cpu", seed=1)
    ad = TritonAttnAdapter(RunEnv(torch.device("cpu"), None, torch.float32, "auto"), GQA4)
    g = ad.build(batch, gluon=V["g128x128x2ow"])
    t = ad.build(batch)
    assert t.gluon is None and t.cfg is PREFILL_CONFIG
    assert torch.equal(g.work, t.work) and g.block_q == t.block_q == 32


def test_gluon_tiles_refuse_a_batch_with_decodes():
    from attn_select.backends.run.batch import make_batch
    from attn_select.selector.run_plan import Shape

    batch = make_batch(Shape("mixed", decodes=2, decode_context=21, prefills=1, prefill_new=40, prefill_context=4),
                       16, "cpu")
    ad = TritonAttnAdapter(RunEnv(torch.device("cpu"), None, torch.float32, "auto"), GQA4)
    with pytest.raises(ValueError, match="prefill-only"):
        ad.build(batch, gluon=V["g128x128x2ow"])



def _rule(monkeypatch, p=GQA4, kv_elem=2, page=16, cap=(9, 0), is_cuda=True, version="3.6.0", kernel=""):
    import sys

    monkeypatch.setitem(sys.modules, "triton", type("T", (), {"__version__": version})())
    if kernel:
        monkeypatch.setenv("ATTN_SELECT_ATTN_KERNEL", kernel)
    else:
        monkeypatch.delenv("ATTN_SELECT_ATTN_KERNEL", raising=False)
    try:
        return gluon_prefill_unavailable(is_cuda, cap, kv_elem, p, page)
    finally:
        monkeypatch.undo()


def test_rule_takes_the_llama_prefill_and_says_why_not_otherwise(monkeypatch):
    llama = AttnParams(32, 8, 128, 128, 128 ** -0.5)
    assert _rule(monkeypatch, llama) is None
    assert _rule(monkeypatch, llama, page=64) is None
    assert "no GPU" in _rule(monkeypatch, is_cuda=False)
    assert "sm_90" in _rule(monkeypatch, cap=(10, 0))
    assert "Triton 3.9.0" in _rule(monkeypatch, version="3.9.0")
    assert "fp8" in _rule(monkeypatch, kv_elem=1)
    assert "head size 256" in _rule(monkeypatch, AttnParams(8, 2, 256, 256, 0.1))
    assert "soft cap" in _rule(monkeypatch, AttnParams(8, 2, 64, 64, 0.1, soft_cap=30.0))
    assert "sliding window" in _rule(monkeypatch, AttnParams(8, 2, 64, 64, 0.1, sliding_window=128))
    assert "sinks" in _rule(monkeypatch, AttnParams(8, 2, 64, 64, 0.1, has_sink=True))
    assert "page 12" in _rule(monkeypatch, page=12)
    assert "page 48" in _rule(monkeypatch, page=48)
    assert _rule(monkeypatch, kernel="tl") == "ATTN_SELECT_ATTN_KERNEL=tl"
    # measured on a GPU at heads 128 and 64: taken at both by default (no ATTN_SELECT_ATTN_KERNEL);
    # "gluon" there, the setting old drivers pass, changes nothing
    assert _rule(monkeypatch, AttnParams(32, 8, 64, 64, 64 ** -0.5)) is None
    assert _rule(monkeypatch, llama, kernel="gluon") is None
    assert "fp8" in _rule(monkeypatch, kv_elem=1, kernel="gluon")


@needs_interpreter
def test_a_failed_gluon_launch_falls_back_to_tl_and_the_name_says_why(monkeypatch):
    """The rule says Gluon (faked), its launch raises: the same plan runs on the
    tl kernel, correct, and every later build takes tl with the reason."""
    monkeypatch.setattr(ta, "gluon_prefill_unavailable", lambda *a, **k: None)

    def broken(*a, **k):
        raise RuntimeError("no sm_90 here")

    monkeypatch.setattr(attn_gluon, "launch", broken)
    p = GQA4
    ad = TritonAttnAdapter(RunEnv(torch.device("cpu"), None, torch.float32, "auto"), p)
    batch = make_prefill_batch([40, 7], [30, 0], 16, "cpu", seed=3)
    gen = torch.Generator().manual_seed(4)
    cache = fill_random_(ad.alloc_cache(batch.num_pages, 16), gen)
    k, v = ad.kv_views(cache)
    inp = random_inputs(batch, p.num_heads, p.num_kv_heads, p.head_size, p.head_size_v, torch.float32, False, gen)
    write_new_tokens(k, v, batch, inp)
    plan = ad.build(batch)
    assert plan.gluon == attn_gluon.DEFAULT_PREFILL_TILES
    out = torch.full_like(inp.q, float("nan"))
    ad.run(plan, inp.q, cache, None, out)
    assert relative_error(out, reference_attention(inp.q, k, v, batch, p)) < 2e-3
    assert plan.gluon is None and "Gluon not used: its launch failed (RuntimeError: no sm_90 here)" in ad.kernel_name(plan)
    later = ad.build(batch)
    assert later.gluon is None and "its launch failed" in ad.kernel_name(later)


def test_cpu_prefill_names_the_reason_and_decode_names_none():
    ad = TritonAttnAdapter(RunEnv(torch.device("cpu"), None, torch.float32, "auto"), GQA4)
    plan = ad.build(make_prefill_batch([40], [10], 16, "cpu"))
    assert plan.gluon is None and ad.kernel_name(plan).endswith("; Gluon not used: no GPU (Gluon has no interpreter))")
    from attn_select.backends.run.batch import make_decode_batch

    assert "Gluon" not in ad.kernel_name(ad.build(make_decode_batch([40, 9], 16, "cpu")))


def test_the_rule_halves_blocks_for_ping_pong_only_where_their_tokens_halve():
    """A ping-pong half takes half a block's tokens: 128 rows of 128 heads (one token a block)
    run the one-partition shape, with the rest of the default's tiles."""
    from attn_select.backends.run.attn_gluon import DEFAULT_PREFILL_TILES, rule_tiles

    assert DEFAULT_PREFILL_TILES.pingpong
    for g_pad in (1, 2, 4, 8, 16, 32, 64):
        assert rule_tiles(g_pad) == DEFAULT_PREFILL_TILES
    one = rule_tiles(128)
    assert not one.pingpong and one.warp_spec and (one.block_m, one.block_n, one.stages) == (128, 128, 3)
    assert one.num_warps == 8


def test_every_launch_shape_fits_the_shared_memory_of_a_block():
    for t in PREFILL_VARIANTS:
        assert prefill_smem_bytes(t) + 64 * t.stages <= SMEM_LIMIT, t
        # 16 rows a consumer warp; a ping-pong launch's own warps are the producer's 4 (each half adds 4)
        assert t.num_warps == (4 if t.pingpong else t.block_m // 16), t
    assert len({t.label for t in PREFILL_VARIANTS}) == len(PREFILL_VARIANTS)
    assert PrefillTiles(128, 128, 3).block_m == 128 and prefill_smem_bytes(PrefillTiles(128, 128, 3)) == 229376


@needs_interpreter
@pytest.mark.parametrize("kind", ["tl", "g128x64x3o"])
def test_the_h200_drivers_check_runs_each_kind(kind, emulated):
    """run_gluon_prefill.py's check of one kind, on the CPU (the emulation in
    the Gluon launcher's place, the tl kernel under the interpreter): its
    adapter builds the kind's plan, and a correct kernel passes."""
    drv = load_benchmark("run_gluon_prefill")
    batch = make_prefill_batch([40, 7], [30, 0], 16, "cpu", seed=5)
    row = drv._check_batch(kind, batch, torch.device("cpu"), seed=6, poison=True)
    assert row["ok"] and row["unwritten"] == 0, row
    assert ("Gluon paged prefill kernel" in row["kernel"]) == (kind != "tl"), row


def test_launch_binds_every_kernel_parameter(monkeypatch):
    """attn_gluon.launch's arguments, bound to the kernel's own parameter list
    (the launch itself needs an sm_90 GPU): every one given once, the grid
    the work list's items x the KV heads, the constexprs of the tiles."""
    kernel = attn_gluon.attn_gluon_prefill_kernel
    seen = {}

    class Grid:
        def __getitem__(self, grid):
            def call(*args, **kwargs):
                names = [p.name for p in kernel.params]
                bound = dict(zip(names, args), **{k: v for k, v in kwargs.items() if k in names})
                seen.update(grid=grid, bound=bound, extra={k: v for k, v in kwargs.items() if k not in names},
                            missing=[n for n in names if n not in bound])
            return call

    monkeypatch.setattr(attn_gluon, "attn_gluon_prefill_kernel", Grid())
    p = GQA4
    ad = TritonAttnAdapter(RunEnv(torch.device("cpu"), None, torch.bfloat16, "auto"), p)
    batch = make_prefill_batch([40, 7], [30, 0], 16, "cpu", seed=3)
    tiles = V["g128x128x2ow"]
    plan = ad.build(batch, gluon=tiles)
    cache = ad.alloc_cache(batch.num_pages, 16)
    q = torch.zeros(batch.num_tokens, p.num_heads, p.head_size, dtype=torch.bfloat16)
    ad._launch_gluon(plan, q, cache, torch.empty_like(q))
    assert seen["missing"] == [] and seen["extra"] == {"num_warps": 8}
    assert seen["grid"] == (plan.num_items, p.num_kv_heads)
    b = seen["bound"]
    assert (b["G"], b["G_PAD"], b["BLOCK_Q"], b["HEAD"], b["PAGE"]) == (4, 4, 32, 64, 16)
    assert (b["BLOCK_N"], b["STAGES"], b["OVERLAP"], b["WARP_SPEC"]) == (128, 2, True, True)
    assert b["stride_w"] == plan.work.stride(0) and b["kv_desc"].block_shape == [16, 64]


def test_ping_pong_tiles_are_only_the_shape_its_kernel_has():
    assert PrefillTiles(128, 128, 3, warp_spec=True, pingpong=True).label == "g128x128x3owp"
    for bad in (dict(warp_spec=False), dict(overlap=False), dict(block_m=64)):
        with pytest.raises(ValueError, match="ping-pong"):
            PrefillTiles(**{**dict(block_m=128, block_n=128, stages=3, warp_spec=True, pingpong=True), **bad})


def test_a_ping_pong_launch_passes_its_register_cap_and_refuses_one_token_blocks(monkeypatch):
    """The ping-pong launch: 4 warps of its own (the producer), PINGPONG set,
    ptxas held to 168 registers at launch (12 warps x 168 fit the SM); one
    token a block (128 heads a KV head) cannot be halved, and is refused
    before any launch (the adapter's rule falls back to tl on the error)."""
    seen = {}

    class Grid:
        def __getitem__(self, grid):
            return lambda *a, **k: seen.update(k)

    monkeypatch.setattr(attn_gluon, "attn_gluon_prefill_kernel", Grid())
    tiles = V["g128x128x3owp"]
    ad = TritonAttnAdapter(RunEnv(torch.device("cpu"), None, torch.bfloat16, "auto"), GQA4)
    batch = make_prefill_batch([40, 7], [30, 0], 16, "cpu", seed=3)
    plan = ad.build(batch, gluon=tiles)
    q = torch.zeros(batch.num_tokens, GQA4.num_heads, GQA4.head_size, dtype=torch.bfloat16)
    ad._launch_gluon(plan, q, ad.alloc_cache(batch.num_pages, 16), torch.empty_like(q))
    assert (seen["num_warps"], seen["maxnreg"], seen["PINGPONG"]) == (4, attn_gluon.PINGPONG_MAXNREG, True)
    cache = torch.zeros(4, 2, 16, 1, 64, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="do not halve"):
        attn_gluon.launch(q, cache, q, None, None, None, batch.block_table, plan.work, 1, 1, 128, 128, 1, 0.1, 16,
                          tiles)


def test_the_drivers_fa3_row_is_runs_plan_of_llama_on_sm90():
    drv = load_benchmark("run_gluon_prefill")
    for page in (16, 64):
        row = drv.fa_row("prefill8k", page, device="cpu")
        assert row.backend == "FLASH_ATTN" and row.fa_version == 3 and row.skip is None, row
