"""TRITON_ATTN (Triton interpreter) and FLEX_ATTENTION (eager) on CPU, on tiny
paged batches, against the float32 reference: GQA, sliding window, soft cap,
sinks, decode / prefill / mixed, split-KV and unsplit."""

from dataclasses import replace

import pytest
import torch

from attn_select.backends.run.adapter import RunEnv
from attn_select.backends.run.batch import fill_random_, make_batch, random_inputs, write_new_tokens
from attn_select.selector.run_plan import Shape
from attn_select.backends.run.reference import AttnParams, reference_attention, relative_error
from tests.backends.run.conftest import needs_interpreter

SHAPES = {
    "decode": Shape("decode", decodes=3, decode_context=29),
    "prefill": Shape("prefill", prefills=2, prefill_new=9, prefill_context=6),
    "mixed": Shape("mixed", decodes=2, decode_context=21, prefills=1, prefill_new=7, prefill_context=4),
}
PARAMS = {
    "gqa": AttnParams(4, 2, 16, 16, 0.25),
    "window+sinks": AttnParams(6, 2, 16, 16, 0.25, sliding_window=5, has_sink=True),
    "softcap+mqa": AttnParams(4, 1, 32, 32, 32 ** -0.5, soft_cap=2.0),
}


def _check(adapter_cls, p, shape, seed, dtype=torch.float32, kv_cache_dtype="auto", page=4, **build_kw):
    env = RunEnv(torch.device("cpu"), None, dtype, kv_cache_dtype)
    a = adapter_cls(env, p)
    assert a.unavailable() is None
    b = make_batch(shape, page, "cpu", seed=seed, spare_pages=3)
    gen = torch.Generator().manual_seed(seed)
    cache = a.alloc_cache(b.num_pages, page)
    fill_random_(cache, gen)
    k, v = a.kv_views(cache)
    inp = random_inputs(b, p.num_heads, p.num_kv_heads, p.head_size, p.head_size_v, dtype, p.has_sink, gen)
    write_new_tokens(k, v, b, inp)
    plan = a.build(b, **build_kw)
    out = torch.full_like(inp.q, float("nan"))
    a.run(plan, inp.q, cache, inp.sinks, out)
    assert not torch.isnan(out).any(), "unwritten output elements"
    ref = reference_attention(inp.q, k, v, b, p, inp.sinks)
    return relative_error(out, ref), plan


@needs_interpreter
@pytest.mark.parametrize("pname", list(PARAMS))
@pytest.mark.parametrize("kind", list(SHAPES))
def test_triton_kernel_matches_reference(pname, kind):
    from attn_select.backends.run.triton_attn import KernelConfig, TritonAttnAdapter

    # both tile paths compiled, tiny target/min split so decode rows really take
    # the split-KV + merge path
    cfg = KernelConfig(block_m=16, block_n=16, num_stages=1, small_m=16, small_n=16, small_stages=1,
                       num_warps=4, target_programs=64, min_split_tokens=8)
    err, plan = _check(TritonAttnAdapter, PARAMS[pname], SHAPES[kind], seed=11, cfg=cfg)
    assert err < 1e-4
    if kind == "decode":
        assert plan.max_splits > 1 and plan.num_split_tokens == 3


@needs_interpreter
@pytest.mark.parametrize("pname", list(PARAMS))
@pytest.mark.parametrize("fused", [False, True])
@pytest.mark.parametrize("tokens, folded", [(16, 2), (8, 4)])
def test_triton_kernel_folded_tail_matches_reference(pname, fused, tokens, folded):
    """fold_tail: 32 + 1 keys in 16-key splits are 2 splits (the new token's key dealt to the
    last), not 3 with a last split of one key, and the kernel deals the 3 tiles out as 1 and 2;
    in 8-key splits 4, not 5, over 3 tiles: one split has none (its partial is empty)."""
    from attn_select.backends.run.triton_attn import KernelConfig, TritonAttnAdapter

    cfg = KernelConfig(block_m=0, block_n=0, num_stages=0, small_m=16, small_n=16, small_stages=1, num_warps=4,
                       target_programs=64, min_split_tokens=tokens, fused_merge_max=(1 << 30) if fused else 0,
                       fold_tail=4)
    shape = Shape("decode", decodes=3, decode_context=32)
    err, plan = _check(TritonAttnAdapter, PARAMS[pname], shape, seed=5, cfg=cfg)
    assert err < 1e-4 and plan.max_splits == folded and (plan.counters is not None) == fused
    err, plan = _check(TritonAttnAdapter, PARAMS[pname], shape, seed=5, cfg=replace(cfg, fold_tail=0))
    assert err < 1e-4 and plan.max_splits == folded + 1


@needs_interpreter
@pytest.mark.parametrize("pname", list(PARAMS))
@pytest.mark.parametrize("kind", ["decode", "mixed"])
def test_triton_kernel_fused_merge_matches_reference(pname, kind):
    """fused_merge_max: the last split of each block merges the partials in the same
    launch (no merge kernel), sinks / window / soft cap included; the counters
    are back at zero afterwards, so the next layer's launch counts from zero."""
    from attn_select.backends.run import triton_kernel as tk
    from attn_select.backends.run.triton_attn import KernelConfig, TritonAttnAdapter

    cfg = KernelConfig(**SMALL_TILES, target_programs=64, min_split_tokens=8, fused_merge_max=1 << 30)
    launched = []
    orig = tk.merge_splits_kernel
    tk.merge_splits_kernel = _Recorder(orig, launched)
    try:
        err, plan = _check(TritonAttnAdapter, PARAMS[pname], LONG if kind == "mixed" else SHAPES[kind], seed=17,
                           cfg=cfg)
    finally:
        tk.merge_splits_kernel = orig
    assert err < 1e-4
    assert plan.max_splits > 1 and plan.counters is not None and not launched
    assert plan.counters.tolist() == torch.zeros_like(plan.counters).tolist()


class _Recorder:
    """A stand-in for a launched jit function that records launches (kernel[grid](...))."""

    def __init__(self, fn, log):
        self.fn, self.log = fn, log

    def __getitem__(self, grid):
        def launch(*args, **kw):
            self.log.append(grid)
            return self.fn[grid](*args, **kw)
        return launch


@needs_interpreter
@pytest.mark.parametrize("chunk", [4, 8])
@pytest.mark.parametrize("pname", list(PARAMS))
def test_triton_kernel_chunked_in_kernel_merge(pname, chunk):
    """merge_chunk: the last split merges the others a chunk at a time (6
    splits here: the last chunk of 4, and the one chunk of 8, partly past the
    splits; its own split inside a chunk, left out of it)."""
    from attn_select.backends.run.triton_attn import KernelConfig, TritonAttnAdapter

    cfg = KernelConfig(**SMALL_TILES, target_programs=64, min_split_tokens=8, fused_merge_max=1 << 30,
                       merge_chunk=chunk)
    err, plan = _check(TritonAttnAdapter, PARAMS[pname], LONG, seed=19, cfg=cfg)
    assert err < 1e-4 and plan.counters is not None
    assert plan.max_splits == 6


@needs_interpreter
@pytest.mark.parametrize("kv", ["fp8", "fp8_e5m2"])
def test_triton_kernel_fused_merge_on_an_fp8_cache(kv):
    """The in-kernel merge after the fp8 scales are applied (v_scale on the partials)."""
    from attn_select.backends.run.triton_attn import KernelConfig

    cfg = KernelConfig(**SMALL_TILES, target_programs=64, min_split_tokens=8, fused_merge_max=1 << 30)
    err, plan = _check_scaled(PARAMS["window+sinks"], LONG, 7, kv, (0.37, 2.5), cfg)
    assert err < 2e-2 and plan.max_splits > 1 and plan.counters is not None


def test_unsplit_plans_have_no_counters():
    """No split block, nothing to count: the fused config launches no merge either way."""
    pytest.importorskip("triton")
    from attn_select.backends.run.triton_attn import KernelConfig, TritonAttnAdapter

    a = TritonAttnAdapter(RunEnv(torch.device("cpu"), None, torch.float32, "auto"), PARAMS["gqa"])
    b = make_batch(SHAPES["decode"], 4, "cpu", seed=1, spare_pages=3)
    cfg = KernelConfig(**SMALL_TILES, target_programs=1, min_split_tokens=1 << 20, fused_merge_max=1 << 30)
    plan = a.build(b, cfg)
    assert plan.num_split_tokens == 0 and plan.counters is None


@needs_interpreter
@pytest.mark.parametrize("page", [4, 16, 32])  # 16-key tiles of whole pages, of one page, within a page
@pytest.mark.parametrize("pname", list(PARAMS))
def test_triton_kernel_page_vector_matches_reference(pname, page):
    """page_vector: each tile's block-table entries read once a page (or once a
    tile), on decode splits, unmasked and masked key loops and prefill blocks."""
    from attn_select.backends.run.triton_attn import KernelConfig, TritonAttnAdapter

    cfg = KernelConfig(**SMALL_TILES, target_programs=64, min_split_tokens=8, page_vector=True)
    err, plan = _check(TritonAttnAdapter, PARAMS[pname], LONG, seed=23, page=page, cfg=cfg)
    assert err < 1e-4 and plan.max_splits > 1


@needs_interpreter
def test_triton_kernel_reads_an_fp8_cache():
    """--kv-cache-dtype fp8: the cache holds float8_e4m3fn; the reference reads
    the same rounded values, so only the kernel's own error remains."""
    from attn_select.backends.run.triton_attn import TritonAttnAdapter

    p = PARAMS["gqa"]
    err, _ = _check(TritonAttnAdapter, p, SHAPES["mixed"], 5, dtype=torch.bfloat16, kv_cache_dtype="fp8")
    assert err < 2e-2


# contexts longer than a 16-key tile: blocks get whole tiles before their first
# query position, which the kernel runs without the causal mask
LONG = Shape("mixed", decodes=2, decode_context=45, prefills=2, prefill_new=20, prefill_context=37)
# the first query row's last visible key (context + 1) on a tile edge, and one key past it: an
# unmasked loop that ran one tile too far would let a row see a future key
EDGES = [Shape("mixed", decodes=2, decode_context=c, prefills=2, prefill_new=20, prefill_context=c) for c in (46, 47)]
SMALL_TILES = dict(block_m=16, block_n=16, num_stages=1, small_m=16, small_n=16, small_stages=1, num_warps=4)


def _check_scaled(p, shape, seed, kv_cache_dtype, scales, cfg=None):
    """An fp8 cache holding x / scale (vLLM's per-tensor k / v scales): the
    reference reads the stored values times the scales."""
    from attn_select.backends.run.triton_attn import TritonAttnAdapter

    env = RunEnv(torch.device("cpu"), None, torch.bfloat16, kv_cache_dtype)
    a = TritonAttnAdapter(env, p)
    a.kv_scales = scales
    b = make_batch(shape, 4, "cpu", seed=seed, spare_pages=3)
    gen = torch.Generator().manual_seed(seed)
    cache = a.alloc_cache(b.num_pages, 4)
    fill_random_(cache, gen)
    k, v = a.kv_views(cache)
    inp = random_inputs(b, p.num_heads, p.num_kv_heads, p.head_size, p.head_size_v, torch.bfloat16, p.has_sink, gen)
    write_new_tokens(k, v, b, inp)
    plan = a.build(b, cfg)
    out = torch.full_like(inp.q, float("nan"))
    a.run(plan, inp.q, cache, inp.sinks, out)
    assert not torch.isnan(out).any(), "unwritten output elements"
    ref = reference_attention(inp.q, k.float() * scales[0], v.float() * scales[1], b, p, inp.sinks)
    return relative_error(out, ref), plan


@needs_interpreter
@pytest.mark.parametrize("kv", ["fp8", "fp8_e5m2"])
@pytest.mark.parametrize("pname", list(PARAMS))
def test_triton_kernel_dequantizes_an_fp8_cache_with_its_scales(pname, kv):
    """fp8 tiles widened in the kernel, k_scale in the score scale, v_scale in
    the output: every path (split decode + merge, unmasked and masked key
    loops, prefill blocks) with window / sinks / soft cap, scales far from 1."""
    from attn_select.backends.run.triton_attn import KernelConfig

    cfg = KernelConfig(**SMALL_TILES, target_programs=64, min_split_tokens=8)
    err, plan = _check_scaled(PARAMS[pname], LONG, 7, kv, (0.37, 2.5), cfg)
    assert err < 2e-2
    assert plan.max_splits > 1 and plan.num_split_tokens == 2


@needs_interpreter
@pytest.mark.parametrize("fp8_dot", [1, 2])
@pytest.mark.parametrize("pname", list(PARAMS))
def test_triton_kernel_fp8_dots_on_an_e4m3_cache(pname, fp8_dot):
    """Q.K (and with 2 also P.V) as fp8 dots: the query rounded to e4m3 (and the
    probabilities, times 256), as the fp8-query kernels of vLLM do. Every path
    again; the error is that rounding's (here ~3e-2 for Q.K alone, ~8e-2 with
    P.V over these 45-65 keys, where few terms average it out: run's fp8
    check on the real shape decides whether a table entry may use 2), and the
    rounding is real: the result is not the fp16 dots' to the bit."""
    from attn_select.backends.run.triton_attn import KernelConfig

    cfg = KernelConfig(**SMALL_TILES, target_programs=64, min_split_tokens=8, fp8_dot=fp8_dot)
    err, plan = _check_scaled(PARAMS[pname], LONG, 7, "fp8", (0.37, 2.5), cfg)
    exact, _ = _check_scaled(PARAMS[pname], LONG, 7, "fp8", (0.37, 2.5),
                             KernelConfig(**SMALL_TILES, target_programs=64, min_split_tokens=8))
    assert err < (5e-2 if fp8_dot == 1 else 1e-1) and err != exact
    assert plan.max_splits > 1 and plan.num_split_tokens == 2


@needs_interpreter
def test_triton_kernel_e5m2_keeps_the_fp16_dots():
    """fp8_dot is for e4m3 only: an e5m2 cache ignores it (the same result as without)."""
    from attn_select.backends.run.triton_attn import KernelConfig

    base = dict(**SMALL_TILES, target_programs=64, min_split_tokens=8)
    a, _ = _check_scaled(PARAMS["gqa"], SHAPES["decode"], 3, "fp8_e5m2", (0.5, 2.0), KernelConfig(**base, fp8_dot=2))
    b, _ = _check_scaled(PARAMS["gqa"], SHAPES["decode"], 3, "fp8_e5m2", (0.5, 2.0), KernelConfig(**base))
    assert a == b


@needs_interpreter
def test_triton_kernel_scales_matter():
    """The scales are applied: a kernel that ignored them would miss the reference by far."""
    from attn_select.backends.run.triton_attn import KernelConfig

    cfg = KernelConfig(**SMALL_TILES, target_programs=64, min_split_tokens=8)
    err, _ = _check_scaled(PARAMS["gqa"], SHAPES["decode"], 3, "fp8", (3.0, 0.5), cfg)
    assert err < 2e-2
    from attn_select.backends.run import triton_attn as ta

    orig = ta.TritonAttnAdapter._scales
    try:  # the same run with the scales left at 1.0 in the kernel
        ta.TritonAttnAdapter._scales = lambda self, dev: torch.ones(2)
        wrong, _ = _check_scaled(PARAMS["gqa"], SHAPES["decode"], 3, "fp8", (3.0, 0.5), cfg)
    finally:
        ta.TritonAttnAdapter._scales = orig
    assert wrong > 0.3


@needs_interpreter
@pytest.mark.parametrize("shape", [LONG, *EDGES], ids=["long", "edge", "edge+1"])
@pytest.mark.parametrize("pname", list(PARAMS))
def test_triton_kernel_unmasked_key_tiles(pname, shape):
    """Long contexts: whole key tiles before a block's first query run without
    the mask (bf16 activations in float32 here), the rest with it."""
    from attn_select.backends.run.triton_attn import KernelConfig, TritonAttnAdapter

    cfg = KernelConfig(**SMALL_TILES, target_programs=1, min_split_tokens=1 << 20)
    err, plan = _check(TritonAttnAdapter, PARAMS[pname], shape, seed=13, cfg=cfg)
    assert err < 1e-4 and plan.num_split_tokens == 0


def test_fill_random_draws_an_fp8_cache_with_and_without_a_generator():
    for gen in (None, torch.Generator().manual_seed(0)):
        t = fill_random_(torch.empty(64, 16, dtype=torch.float8_e4m3fn), gen)
        f = t.float()
        assert torch.isfinite(f).all() and 0.5 < f.std() < 1.5


@needs_interpreter
@pytest.mark.parametrize("kind", list(SHAPES))
def test_triton_kernel_default_configs(kind):
    """The shipped decode-only / prefill-only / mixed configs (one tile path or both)."""
    from attn_select.backends.run.triton_attn import (
        DECODE_CONFIG, MIXED_CONFIG, PREFILL_CONFIG, TritonAttnAdapter,
    )

    err, plan = _check(TritonAttnAdapter, PARAMS["window+sinks"], SHAPES[kind], seed=2)
    assert err < 1e-4
    assert plan.cfg == {"decode": DECODE_CONFIG, "prefill": PREFILL_CONFIG, "mixed": MIXED_CONFIG}[kind]


@needs_interpreter
def test_triton_kernel_fp8_decode_config():
    """The fp8 cache's decode entry of the table, on an fp8 cache."""
    from attn_select.backends.run.triton_attn import FP8_DECODE_CONFIG

    err, plan = _check_scaled(PARAMS["window+sinks"], SHAPES["decode"], 4, "fp8", (0.8, 1.7))
    assert err < 2e-2 and plan.cfg == FP8_DECODE_CONFIG


@needs_interpreter
def test_triton_kernel_unsplit_path():
    from attn_select.backends.run.triton_attn import KernelConfig, TritonAttnAdapter

    cfg = KernelConfig(block_m=0, block_n=0, num_stages=0, small_m=16, small_n=16, small_stages=1, num_warps=4,
                       target_programs=1, min_split_tokens=1 << 20)
    err, plan = _check(TritonAttnAdapter, PARAMS["window+sinks"], SHAPES["decode"], seed=3, cfg=cfg)
    assert err < 1e-4 and plan.num_split_tokens == 0


def test_triton_work_list():
    from attn_select.backends.run.triton_attn import KernelConfig, plan_work

    cfg = KernelConfig(block_m=16, block_n=16, num_stages=1, small_m=16, small_n=16, small_stages=1, num_warps=4,
                       target_programs=8, min_split_tokens=10)
    q_lens = torch.tensor([1, 1, 20])
    seq = torch.tensor([40, 5, 30])
    work, red_tok, red_ns, max_s = plan_work(q_lens, seq, block_q=8, small_q=2, num_kv_heads=1, cfg=cfg)
    # the 2 decodes alone are 2 programs, 8 wanted: request 0 gets 4 splits (40 tokens / 10),
    # request 1 one (5 tokens); request 2 (20 tokens > small_q) gets 3 query blocks of 8, the last
    # (longest under the causal mask) first
    assert work[0].tolist() == [0, 0, 0, 0, 1, 2, 2, 2]
    assert work[2].tolist() == [0, 1, 2, 3, 0, 0, 0, 0]
    assert work[1].tolist() == [0, 0, 0, 0, 0, 16, 8, 0]
    assert work[4].tolist() == [0, 0, 0, 0, 1, 1, 1, 1]  # request 0 is split: its token has partial row 0
    # each item carries its request's offsets: first token in the batch, new tokens, cached tokens
    assert work[5].tolist() == [0, 0, 0, 0, 1, 2, 2, 2]
    assert work[6].tolist() == [1, 1, 1, 1, 1, 20, 20, 20]
    assert work[7].tolist() == [39, 39, 39, 39, 4, 10, 10, 10]
    assert red_tok.tolist() == [0] and red_ns.tolist() == [4] and max_s == 4


@pytest.mark.parametrize("pname", list(PARAMS))
@pytest.mark.parametrize("kind", list(SHAPES))
def test_flex_attention_matches_reference(pname, kind):
    pytest.importorskip("torch.nn.attention.flex_attention")
    from attn_select.backends.run.flex_attention import FlexAttentionAdapter

    err, _ = _check(FlexAttentionAdapter, PARAMS[pname], SHAPES[kind], seed=5)
    assert err < 1e-4


def test_flex_attention_refuses_a_cache_past_its_int32_offsets():
    pytest.importorskip("torch.nn.attention.flex_attention")
    import dataclasses

    from attn_select.backends.run.adapter import Unsupported
    from attn_select.backends.run.flex_attention import INT32_OFFSETS, FlexAttentionAdapter

    p = AttnParams(32, 8, 128, 128, 128 ** -0.5)
    a = FlexAttentionAdapter(RunEnv(torch.device("cpu"), None, torch.float32, "auto"), p)
    b = make_batch(SHAPES["decode"], 16, "cpu", seed=1)
    per_page = 16 * 8 * 256  # vLLM's layout: a token holds K and V of every KV head
    a.build(dataclasses.replace(b, num_pages=(INT32_OFFSETS - 1) // per_page))  # the last size that fits
    with pytest.raises(Unsupported, match="vllm#50427"):
        a.build(dataclasses.replace(b, num_pages=INT32_OFFSETS // per_page))


def test_flashinfer_csr_from_block_table():
    from attn_select.backends.run.flashinfer import paged_kv_csr

    b = make_batch(Shape("mixed", decodes=2, decode_context=9, prefills=1, prefill_new=3, prefill_context=2), 4,
                   "cpu", seed=2)
    indptr, indices, last = paged_kv_csr(b, 0, 3)
    assert indptr.tolist() == [0, 3, 6, 8]  # 10, 10, 5 tokens on pages of 4
    assert last.tolist() == [2, 2, 1]
    assert indices.tolist() == b.block_table[0, :3].tolist() + b.block_table[1, :3].tolist() + b.block_table[2, :2].tolist()
    indptr2, _, _ = paged_kv_csr(b, 2, 3)  # the prefill part alone
    assert indptr2.tolist() == [0, 2]


def test_flashinfer_native_decode_refuses_sinks(monkeypatch):
    """vLLM serves sinks with FlashInfer only through the trtllm-API decode
    (FlashInferBackend.supports_sink): the native-decode comparison row is
    skipped for a sink model, while XQA still builds."""
    import sys
    import types

    from attn_select.backends.run.adapter import Unsupported
    from attn_select.backends.run.flashinfer import FlashInferAdapter

    monkeypatch.setitem(sys.modules, "flashinfer", types.ModuleType("flashinfer"))
    from attn_select.selector.run_plan import FlashInferKernels, RowPlan

    env = RunEnv(torch.device("cpu"), (9, 0), torch.bfloat16, "auto")
    b = make_batch(SHAPES["decode"], 4, "cpu", seed=1)
    sinks = PARAMS["window+sinks"]
    xqa = RowPlan("FLASHINFER", flashinfer=FlashInferKernels("xqa"))
    native = RowPlan("FLASHINFER", "native decode", flashinfer=FlashInferKernels(None))
    with pytest.raises(Unsupported, match="never runs FlashInfer's native decode wrapper with sinks"):
        FlashInferAdapter(env, sinks, native).build(b)
    plan = FlashInferAdapter(env, sinks, xqa).build(b)
    assert plan.decode_kernel == "xqa" and plan.prefill is None


def test_host_timing_reports_the_fastest_run_and_restores_gc():
    import gc
    import time

    from attn_select.backends.run.harness import time_host

    delays = iter([0.004] + [0.001] * 8 + [0.003] * 4)
    t = time_host(lambda: time.sleep(next(delays)), torch.device("cpu"), repeats=6, warmup=1, rounds=2, pause_s=0)
    assert t.samples == 12
    assert 900 <= t.min_us < 2900 and t.min_us <= t.median_us
    assert t.cpu_min_us < 500  # a sleeping thread uses no CPU
    assert gc.isenabled()


def test_host_probes_time_both_fixed_workloads():
    from attn_select.backends.run.harness import host_probes

    probes = host_probes(torch.device("cpu"))
    assert set(probes) == {"python", "launch"}
    assert all(v > 0 for v in probes.values())
    # 3,000 interpreter iterations take tens of microseconds, not nanoseconds or seconds
    assert 5 < probes["python"] < 100_000


def test_spread_host_timer_times_every_build_again_over_the_span():
    import time

    from attn_select.backends.run.harness import SpreadHostTimer

    timer = SpreadHostTimer(torch.device("cpu"), repeats=4, warmup=0)
    got = {}
    # a build whose first samples were taken in a slow spell: the spread passes find its real cost
    timer.add(lambda: time.sleep(0.001), [(9000.0, 50.0)] * 3, lambda t, span: got.__setitem__("a", (t, span)))
    timer.add(lambda: time.sleep(0.002), [], lambda t, span: got.__setitem__("b", (t, span)))
    t0 = time.perf_counter()
    timer.finish(span_s=0.3, min_passes=3)
    assert time.perf_counter() - t0 >= 0.3 and timer.jobs == []
    a, span = got["a"]
    assert a.samples == 3 + 3 * 4 and 900 <= a.min_us < 2900 and a.median_us < 9000 and span >= 0.3
    b, _ = got["b"]
    assert b.samples == 3 * 4 and 1900 <= b.min_us < 3900


def test_spread_host_timer_reports_what_it_has_when_a_build_fails():
    from attn_select.backends.run.harness import SpreadHostTimer

    timer = SpreadHostTimer(torch.device("cpu"), repeats=2, warmup=0)
    got = []

    def broken():
        raise RuntimeError("device lost")

    timer.add(broken, [(120.0, 110.0)], lambda t, span: got.append(t.min_us))
    with pytest.raises(RuntimeError):
        timer.finish(span_s=0.0, min_passes=1)
    assert got == [120.0] and timer.jobs == []


def test_runner_hands_each_timed_build_to_the_spread_timer_and_closes_it_after(monkeypatch):
    from attn_select.backends.run import runner
    from attn_select.backends.run.harness import SpreadHostTimer
    from attn_select.selector.model_facts import LayerAttention
    from attn_select.selector.run_plan import GroupPlan, RowPlan, ShapePlan

    opts = runner.RunOptions(device="cpu", checks=1, time_budget_s=0.01)
    env = runner.make_env(opts, "float32", "auto", lambda m: None)
    timer = SpreadHostTimer(torch.device("cpu"), repeats=2, warmup=0)
    closed = []
    real_load = runner.load_adapter

    loaded = []

    def load(row, env, p):
        a = real_load(row, env, p)
        a.close = lambda: closed.append(row.backend)
        loaded.append(a)
        return a

    monkeypatch.setattr(runner, "load_adapter", load)
    row_plan = RowPlan("FLEX_ATTENTION", adapter="attn_select.backends.run.flex_attention:FlexAttentionAdapter")
    plan = GroupPlan("full", 3, LayerAttention(16, 16, 4, 2), None, None, None, None,
                     (ShapePlan(SHAPES["decode"], (row_plan,)),))
    g = runner.run_group(plan, env, opts, 4, None, timer)
    row = next(r for r in g.rows if r.backend == "FLEX_ATTENTION")
    assert row.status == "ran" and row.perf.build_samples == 3 and row.perf.build_span_s is None
    assert closed == [] and len(timer.jobs) == 1  # kept open: its build is timed again at the end
    # the adapter keeps its own row of the plan; the env it shares is frozen
    assert loaded[0].row is row_plan and loaded[0].env is env
    with pytest.raises(AttributeError):
        env.kv_cache_dtype = "fp8"
    timer.finish(span_s=0.05, min_passes=2)
    p = row.perf
    assert p.build_samples == 3 + 2 * 2 and p.build_span_s >= 0.05 and closed == ["FLEX_ATTENTION"]
    assert p.step_us == pytest.approx(p.build_us + 3 * p.per_layer_us)


def test_triton_decode_table_keeps_the_decodes_in_one_wave():
    """The table's decode entries on the Llama-3.1-8B decode (32 x 4096, 8 KV
    heads): 256 programs fit the 396 slots, so no split and no merge kernel;
    one request is cut until its programs fill them (bounded by 256-token
    splits); the mixed entry cuts the same decodes in 3."""
    from attn_select.backends.run.triton_attn import DECODE_CONFIG, FP8_DECODE_CONFIG, MIXED_CONFIG, plan_work

    for cfg in (DECODE_CONFIG, FP8_DECODE_CONFIG):
        work, red_tok, _, max_s = plan_work([1] * 32, [4097] * 32, 0, 4, 8, cfg)
        assert max_s == 1 and red_tok.numel() == 0 and work.shape[1] == 32
        # 8 x 17 = 136 programs (of 396 allowed), the last of one key. The bf16 table folds that key
        # into the last of 16 splits (136 programs are past fold_programs 132); fp8's has no fold
        _, red_tok, _, max_s = plan_work([1], [4097], 0, 4, 8, cfg)
        assert max_s == (16 if cfg is DECODE_CONFIG else 17) and red_tok.tolist() == [0]
        assert plan_work([1], [4097], 0, 4, 8, replace(cfg, fold_tail=0))[3] == 17
        # a tail past a quarter split keeps its own
        assert plan_work([1], [4096 + 65], 0, 4, 8, replace(cfg, fold_tail=4))[3] == 17
        # 7 KV heads: 119 programs, within one an SM: not folded
        assert plan_work([1], [4097], 0, 4, 7, DECODE_CONFIG)[3] == 17
        _, _, _, max_s = plan_work([1] * 8, [32769] * 8, 0, 4, 8, cfg)
        assert max_s == 6  # 8 x 8 x 6 = 384 <= 396
    _, _, _, max_s = plan_work([1] * 32 + [512] * 4, [4097] * 32 + [1536] * 4, 32, 4, 8, MIXED_CONFIG)
    assert max_s == 3


def test_triton_table_merges_few_splits_in_kernel():
    """The decode grid's rule: a split plan merges in the attention launch while
    its most splits x the value head size stays within fused_merge_max (640 for
    bf16: 5 splits of head 128, 10 of head 64, 2 of head 256); fp8 up to 768,
    mixed batches never."""
    from attn_select.backends.run.triton_attn import (
        DECODE_CONFIG, FP8_DECODE_CONFIG, MIXED_CONFIG, PREFILL_CONFIG, merges_in_kernel,
    )

    cases = {(1, 128): False, (3, 128): True, (5, 128): True, (6, 128): False, (17, 128): False,
             (6, 64): True, (10, 64): True, (12, 64): False, (2, 256): True, (3, 256): False}
    assert {k: merges_in_kernel(DECODE_CONFIG, *k) for k in cases} == cases
    assert merges_in_kernel(FP8_DECODE_CONFIG, 6, 128) and not merges_in_kernel(FP8_DECODE_CONFIG, 7, 128)
    assert not any(merges_in_kernel(c, 3, 128) for c in (MIXED_CONFIG, PREFILL_CONFIG))


@pytest.mark.parametrize("n, kv, head_v, want, folded", [
    # 1 request x 8 KV heads, 512 + 1 keys: 128-key splits, 40 programs, at most few_programs: cut again
    # in 64-key ones at head 128 (9 splits, 72 programs; folded: 8)
    (1, 8, 128, 9, 8),
    (8, 1, 128, 9, 8),    # 8 x 1 (GQA 8): the same
    (1, 8, 64, 5, 4),     # head 64: the few-program cut is 128 keys, as the short one
    (32, 1, 128, 3, 4),   # 32 rows: 160 programs past short_programs: 256-key splits (folded: 128 fit, 128-key),
                          # 96 or 128 programs: past few_programs
    (8, 8, 128, 2, 2),    # 64 rows: 320 programs, past short_programs: 256-key splits, 3 of them, 192
                          # programs past fold_programs: the one-key tail folded (the fine cut: 256 programs)
    (1, 8, 256, 9, 8),    # head 256: 5 splits would merge in a second launch (not measured so): 256-key splits,
                          # 24 programs, then the few-program cut's 64-key ones
])
def test_triton_table_cuts_short_contexts_finer_for_few_rows(n, kv, head_v, want, folded):
    from attn_select.backends.run.triton_attn import DECODE_CONFIG, plan_work

    _, red_tok, _, max_s = plan_work([1] * n, [513] * n, 0, 4, kv, DECODE_CONFIG, head_v=head_v)
    assert max_s == want and red_tok.numel() == n
    # folded at any program count: the new token's key in the last split, not one of its own
    always = replace(DECODE_CONFIG, fold_programs=0)
    assert plan_work([1] * n, [513] * n, 0, 4, kv, always, head_v=head_v)[3] == folded
    # a long context keeps 256-key splits (128-key ones would be 33, past the in-kernel merge); 17
    # of them on 8 KV heads are 136 programs, folded into 16
    _, _, _, max_s = plan_work([1], [4097], 0, 4, 8, DECODE_CONFIG, head_v=head_v)
    assert max_s == 16


def test_few_split_tokens_by_value_head():
    from attn_select.backends.run.triton_attn import DECODE_CONFIG, few_split_tokens

    got = {h: few_split_tokens(DECODE_CONFIG, h) for h in (32, 64, 80, 96, 128, 256, 512)}
    assert got == {32: 256, 64: 128, 80: 64, 96: 64, 128: 64, 256: 64, 512: 64}


@pytest.mark.parametrize("n, kv, head_v, ctx, want", [
    (1, 1, 128, 4097, 64),   # 17 programs: 64-key splits, up to the 64 a request
    (1, 1, 64, 4097, 33),    # head 64: 128-key splits
    (1, 1, 256, 4097, 64),
    (8, 1, 128, 513, 9),     # 40 programs
    (1, 8, 128, 4097, 16),   # 17 x 8 = 136 programs (folded to 16): past few_programs, as it was
    (8, 1, 128, 4097, 16),   # 128 programs: as it was
    (1, 1, 128, 32769, 64),  # 64 splits already: nothing finer within the cap
    (2, 4, 128, 1025, 16),   # 8 rows x 5 256-key splits = 40 programs: 64-key ones, 17 a request, 136
                             # programs past fold_programs: the one-key tail folded, 16
])
def test_triton_table_cuts_plans_of_few_programs_finer(n, kv, head_v, ctx, want):
    from attn_select.backends.run.triton_attn import DECODE_CONFIG, plan_work

    got = plan_work([1] * n, [ctx] * n, 0, 4, kv, DECODE_CONFIG, head_v=head_v)[3]
    off = plan_work([1] * n, [ctx] * n, 0, 4, kv, replace(DECODE_CONFIG, few_programs=0), head_v=head_v)[3]
    assert got == want and (got > off) == (want != off), (got, off)


@needs_interpreter
def test_triton_build_counts_in_kernel_merges_only_where_the_table_says():
    from attn_select.backends.run.triton_attn import DECODE_CONFIG, TritonAttnAdapter

    a = TritonAttnAdapter(RunEnv(torch.device("cpu"), None, torch.float32, "auto"), AttnParams(8, 8, 128, 128, 0.1))
    few = make_batch(Shape("decode", decodes=2, decode_context=512), 16, "cpu", seed=1)
    many = make_batch(Shape("decode", decodes=1, decode_context=4096), 16, "cpu", seed=1)
    p_few, p_many = a.build(few), a.build(many)
    assert p_few.cfg == p_many.cfg == DECODE_CONFIG
    assert p_few.max_splits == 5 and p_few.counters is not None and "merged in-kernel" in a.kernel_name(p_few)
    assert p_many.max_splits == 16 and p_many.counters is None and "merged in-kernel" not in a.kernel_name(p_many)
    # 2 x 5 x 8 = 80 programs, within one an SM: nothing folded, so no tile dealing in the launch (and
    # past few_programs: not cut again); 17 x 8 = 136 past 132: the one-key tail folded into 16 splits
    assert not p_few.folded and p_many.folded
    # one request: 40 programs, at most few_programs: 64-key splits, 9, past the in-kernel merge
    p_one = a.build(make_batch(Shape("decode", decodes=1, decode_context=512), 16, "cpu", seed=1))
    assert p_one.max_splits == 9 and p_one.counters is None and not p_one.folded


def test_triton_plan_work_says_whether_it_folded():
    from attn_select.backends.run.triton_attn import DECODE_CONFIG, FP8_DECODE_CONFIG, planned_work

    assert planned_work([1], [4097], 0, 4, 8, DECODE_CONFIG)[4]  # 136 programs: 17 -> 16 splits
    assert not planned_work([1], [513], 0, 4, 8, DECODE_CONFIG)[4]  # 40 programs: below fold_programs
    assert not planned_work([1], [4096 + 65], 0, 4, 8, DECODE_CONFIG)[4]  # past 132, but no tail to fold
    assert not planned_work([1], [4097], 0, 4, 8, FP8_DECODE_CONFIG)[4]  # the fp8 entry never folds


def _work_list_vectorized(q_lens, seq_lens, block_q, small_q, num_kv_heads, cfg, max_splits=64):
    """The work list as torch tensor arithmetic (how plan_work was first
    written): the definition the plain-Python plan_work must reproduce."""
    small = q_lens <= small_q if small_q > 0 else torch.zeros_like(q_lens, dtype=torch.bool)
    n_blocks = torch.where(small, torch.ones_like(q_lens), (q_lens + max(block_q, 1) - 1) // max(block_q, 1))
    splittable = small | (n_blocks == 1)
    base = int(small.sum() if bool(small.any()) else n_blocks.sum()) * num_kv_heads
    want = max(1, cfg.target_programs // max(1, base))
    by_len = (seq_lens + cfg.min_split_tokens - 1) // cfg.min_split_tokens
    cut = torch.where(splittable, by_len.clamp(max=min(want, max_splits)).clamp(min=1), torch.ones_like(n_blocks))
    if cfg.fold_tail and int(cut[splittable].sum()) * num_kv_heads > cfg.fold_programs:
        # a decode's tail of at most a 1 / fold_tail split joins the split before, once the plan
        # cut without folding has more split programs than fold_programs
        tail = seq_lens - (by_len - 1) * cfg.min_split_tokens
        by_len = torch.where(small & (by_len > 1) & (tail <= cfg.min_split_tokens // cfg.fold_tail), by_len - 1, by_len)
    nsplit = torch.where(splittable, by_len.clamp(max=min(want, max_splits)).clamp(min=1), torch.ones_like(n_blocks))
    items = n_blocks * nsplit
    req = torch.repeat_interleave(torch.arange(len(q_lens)), items)
    within = torch.arange(int(items.sum())) - torch.repeat_interleave(torch.cumsum(items, 0) - items, items)
    ns_item = nsplit[req]
    split_q = torch.where(nsplit > 1, q_lens, torch.zeros_like(q_lens))
    part_base = torch.cumsum(split_q, 0) - split_q
    block = n_blocks[req] - 1 - within // ns_item  # last block first
    tok0 = torch.cumsum(q_lens, 0) - q_lens
    work = torch.stack([req, block * block_q, within % ns_item, ns_item, part_base[req], tok0[req], q_lens[req],
                        (seq_lens - q_lens)[req]])
    red_req = torch.repeat_interleave(torch.arange(len(q_lens)), split_q)
    red_token = (torch.cumsum(q_lens, 0) - q_lens)[red_req] + torch.arange(int(split_q.sum())) - part_base[red_req]
    return work, red_token, nsplit[red_req], int(nsplit.max())


def test_triton_work_list_matches_its_vectorized_definition_on_random_batches():
    import random

    from attn_select.backends.run.triton_attn import KernelConfig, plan_work

    rng = random.Random(0)
    for _ in range(300):
        n = rng.randint(1, 40)
        q = torch.tensor([rng.choice([1, 1, 2, rng.randint(1, 700)]) for _ in range(n)])
        seq = q + torch.tensor([rng.randint(0, 9000) for _ in range(n)])
        cfg = KernelConfig(block_m=64, block_n=64, num_stages=1, small_m=16, small_n=64, small_stages=1,
                           num_warps=4, target_programs=rng.choice([1, 64, 528, 4096]),
                           min_split_tokens=rng.choice([16, 256, 1 << 20]), fold_tail=rng.choice([0, 2, 4]),
                           fold_programs=rng.choice([0, 8, 132, 1 << 20]))
        block_q, small_q = rng.choice([0, 16, 64]), rng.choice([0, 1, 2, 4])
        if block_q == 0:  # a decode-only config is only given decode batches
            q = q.clamp(max=max(small_q, 1))
            small_q = max(small_q, 1)
        hkv = rng.randint(1, 8)
        work, red_token, red_nsplit, max_splits = plan_work(q, seq, block_q, small_q, hkv, cfg)
        w_work, w_token, w_nsplit, w_max = _work_list_vectorized(q, seq, block_q, small_q, hkv, cfg)
        assert work.dtype == red_token.dtype == red_nsplit.dtype == torch.int32
        assert work.tolist() == w_work.tolist() and max_splits == w_max
        assert red_token.tolist() == w_token.tolist() and red_nsplit.tolist() == w_nsplit.tolist()


def test_new_kv_scales_go_into_the_same_device_tensor():
    # a CUDA graph captured earlier holds the tensor's address: new scales must be copied into it
    pytest.importorskip("triton")
    from attn_select.backends.run.triton_attn import TritonAttnAdapter

    a = TritonAttnAdapter(RunEnv(torch.device("cpu"), None, torch.bfloat16, "fp8"), PARAMS["gqa"])
    first = a._scales(torch.device("cpu"))
    assert first.tolist() == [1.0, 1.0]
    a.kv_scales = (0.5, 2.0)
    again = a._scales(torch.device("cpu"))
    assert again is first and again.tolist() == [0.5, 2.0]


def test_fp8_decode_widens_v_where_the_plan_leaves_shared_memory_for_it():
    """The table's fp8 decode entry takes ``widen_v`` (108 KB: two programs an SM) for a plan
    of one split or at most two programs an SM, at head 128 (where it was measured); a plan
    whose splits were chosen for three programs an SM keeps the entry as it is."""
    from attn_select.backends.run.batch import make_decode_batch
    from attn_select.backends.run.reference import AttnParams
    from attn_select.backends.run.triton_attn import (
        FP8_DECODE_CONFIG, FP8_DECODE_WIDE_V, TritonAttnAdapter, fp8_decode_widens,
    )

    assert fp8_decode_widens(1, 2048) and fp8_decode_widens(17, 136) and fp8_decode_widens(3, 264)
    assert not fp8_decode_widens(6, 384) and not fp8_decode_widens(49, 392)
    assert FP8_DECODE_WIDE_V.widen_v and not FP8_DECODE_CONFIG.widen_v

    def cfg_of(params, contexts, kv="fp8"):
        ad = TritonAttnAdapter(RunEnv(torch.device("cpu"), None, torch.float32, kv), params)
        return ad.build(make_decode_batch(contexts, 16, "cpu")).cfg

    llama = AttnParams(32, 8, 128, 128, 128 ** -0.5)
    # (batches of fewer than 132 rows, or of more than 528, take the one-warp entry: the next test)
    assert cfg_of(llama, [4096] * 32) is FP8_DECODE_WIDE_V  # 256 programs, one split
    assert cfg_of(llama, [4096] * 20) is FP8_DECODE_CONFIG  # 2 splits x 160 rows: 320 programs
    assert cfg_of(llama, [4096] * 16 + [40]) is FP8_DECODE_WIDE_V  # 136 rows, (16 x 2 + 1) x 8 = 264 programs
    assert cfg_of(AttnParams(32, 8, 64, 64, 0.125), [4096] * 32) is FP8_DECODE_CONFIG  # not measured at 64
    assert not cfg_of(llama, [4096] * 32, kv="auto").widen_v  # a bf16 cache: its own entry


def test_fp8_decode_takes_one_warp_programs_below_the_sms_and_past_their_unsplit_fill():
    """At head 128 the fp8 decode runs in one-warp programs for fewer (request, KV head) rows than
    the 132 SMs, or more than 528 (its 1056 programs unsplit), and in the four-warp entry between."""
    from attn_select.backends.run.batch import make_decode_batch
    from attn_select.backends.run.reference import AttnParams
    from attn_select.backends.run.triton_attn import (
        FP8_DECODE_CONFIG, FP8_DECODE_ONE_WARP, FP8_DECODE_WIDE_V, TritonAttnAdapter, fp8_decode_one_warp,
    )

    assert [fp8_decode_one_warp(r) for r in (1, 8, 64, 131, 132, 256, 528, 529, 1024, 2048)] == [
        True, True, True, True, False, False, False, True, True, True]
    assert FP8_DECODE_ONE_WARP.num_warps == 1 and FP8_DECODE_ONE_WARP.widen_v
    assert FP8_DECODE_ONE_WARP.fused_merge_max == 0  # its splits merge in the merge kernel

    def plan_of(params, contexts, kv="fp8"):
        ad = TritonAttnAdapter(RunEnv(torch.device("cpu"), None, torch.float32, kv), params)
        return ad.build(make_decode_batch(contexts, 16, "cpu"))

    llama = AttnParams(32, 8, 128, 128, 128 ** -0.5)
    # (steps of at most 2**18 rows x cached keys take bf16's entry: the next test)
    one = plan_of(llama, [65536])  # 8 rows: 64-key splits, capped at 64
    assert one.cfg is FP8_DECODE_ONE_WARP and one.max_splits == 64 and one.counters is None
    assert plan_of(llama, [8192] * 8).max_splits == 16  # 64 rows x 16 = the 1056 programs' cap
    many = plan_of(llama, [512] * 128)  # 1024 rows: unsplit
    assert many.cfg is FP8_DECODE_ONE_WARP and many.max_splits == 1
    assert plan_of(llama, [4096] * 32).cfg is FP8_DECODE_WIDE_V  # 256 rows: the four-warp entry
    assert plan_of(AttnParams(32, 8, 64, 64, 0.125), [512]).cfg is FP8_DECODE_CONFIG  # not measured at 64
    assert plan_of(llama, [512], kv="auto").cfg.num_warps == 4  # a bf16 cache: its own entry
    given = TritonAttnAdapter(RunEnv(torch.device("cpu"), None, torch.float32, "fp8"), llama)
    assert given.build(make_decode_batch([512], 16, "cpu"), FP8_DECODE_CONFIG).cfg is FP8_DECODE_CONFIG


def test_fp8_decode_steps_of_few_keys_take_bf16s_entry_with_v_widened():
    """At head 128 an fp8 decode step of at most 2**18 (request, KV head) rows x cached keys runs bf16's
    decode entry (its split rules included) with V widened."""
    from attn_select.backends.run.batch import make_decode_batch
    from attn_select.backends.run.reference import AttnParams
    from attn_select.backends.run.triton_attn import (
        DECODE_CONFIG, FP8_DECODE_ONE_WARP, FP8_DECODE_SMALL, FP8_DECODE_WIDE_V, TritonAttnAdapter,
        fp8_decode_small_step,
    )

    assert [fp8_decode_small_step(r, c) for r, c in ((8, 512), (64, 4096), (256, 512), (256, 4096), (1024, 512),
                                                     (8, 32768), (8, 32769), (16, 32768))] == [
        True, True, True, False, False, True, False, False]
    assert FP8_DECODE_SMALL.widen_v and FP8_DECODE_SMALL.small_n == DECODE_CONFIG.small_n
    assert FP8_DECODE_SMALL.few_programs == DECODE_CONFIG.few_programs  # its split rules come along

    def plan_of(params, contexts, kv="fp8"):
        ad = TritonAttnAdapter(RunEnv(torch.device("cpu"), None, torch.float32, kv), params)
        return ad.build(make_decode_batch(contexts, 16, "cpu"))

    llama = AttnParams(32, 8, 128, 128, 128 ** -0.5)
    one = plan_of(llama, [512])  # 8 rows: bf16's few-program cut, 64-key splits (9 of 513 keys)
    assert one.cfg is FP8_DECODE_SMALL and one.max_splits == 9
    assert plan_of(llama, [4096] * 8).cfg is FP8_DECODE_SMALL  # 64 rows x 4096 keys: 2**18
    assert plan_of(llama, [512] * 32).cfg is FP8_DECODE_SMALL  # 256 rows x 512
    assert plan_of(llama, [4096] * 32).cfg is FP8_DECODE_WIDE_V  # 256 rows x 4096: the four-warp entry
    assert plan_of(llama, [512] * 128).cfg is FP8_DECODE_ONE_WARP  # 1024 rows x 512
    assert plan_of(llama, [32768]).cfg is FP8_DECODE_SMALL  # 8 rows x 32768 keys: 2**18
    assert plan_of(llama, [32768] * 2).cfg is FP8_DECODE_ONE_WARP  # 16 rows x 32768: fewer rows than SMs
    assert plan_of(llama, [512], kv="auto").cfg is DECODE_CONFIG  # a bf16 cache: its own entry


@needs_interpreter
@pytest.mark.parametrize("kv", ["fp8", "fp8_e5m2"])
def test_triton_kernel_small_fp8_decode_step_matches_reference(kv):
    """bf16's entry on an fp8 cache (FP8_DECODE_SMALL) as the table picks it (head 128, 6 rows of
    150 keys: split and merged in-kernel), against the float32 reference on the scaled cache."""
    from attn_select.backends.run.triton_attn import FP8_DECODE_SMALL

    p = AttnParams(8, 2, 128, 128, 128 ** -0.5, sliding_window=40, has_sink=True)
    err, plan = _check_scaled(p, Shape("decode", decodes=3, decode_context=150), 6, kv, (0.8, 1.7))
    assert plan.cfg is FP8_DECODE_SMALL and plan.max_splits > 1 and plan.counters is not None
    assert err < 2e-2


@needs_interpreter
@pytest.mark.parametrize("kv", ["fp8", "fp8_e5m2"])
def test_triton_kernel_one_warp_fp8_decode_matches_reference(kv):
    """The table's one-warp fp8 entry (head 128, 6 rows), split and merged by the merge kernel, against
    the float32 reference on the scaled cache. Given, not picked: the table takes it past 2**18 rows x
    cached keys (the test above), ten times this step's work under the interpreter."""
    from attn_select.backends.run.triton_attn import FP8_DECODE_ONE_WARP

    p = AttnParams(8, 2, 128, 128, 128 ** -0.5, sliding_window=40, has_sink=True)
    err, plan = _check_scaled(p, Shape("decode", decodes=3, decode_context=4200), 6, kv, (0.8, 1.7),
                              cfg=FP8_DECODE_ONE_WARP)
    assert plan.cfg is FP8_DECODE_ONE_WARP and plan.max_splits > 1
    assert err < 2e-2
