"""FLASH_ATTN's run adapter calls vLLM's own FlashAttention build as vLLM 0.33.0 does.

Against ``FakeVllmFlashAttn`` (fa_fake_kernels.py): vllm.vllm_flash_attn's
``flash_attn_varlen_func`` and ``get_scheduler_metadata`` with the parameter
lists of vLLM 0.33.0's flash_attn_interface.py (compared with that file where
it is present), the wrapper's own checks, every call's arguments recorded, and
attention computed from those arguments. What is asserted is what
FlashAttentionMetadataBuilder.build and FlashAttentionImpl.forward pass
(vllm/v1/attention/backends/flash_attn.py) for decode, prefill and mixed
batches, sliding windows, soft cap, sinks and an fp8 KV cache.

What these tests cannot show: that the real kernels accept these tensors and
compute this; that is the GPU run (BENCHMARKS.md).
"""

from __future__ import annotations

import ast
import inspect
import os
from pathlib import Path

import pytest
import torch

from attn_select.backends.run.adapter import RunEnv
from attn_select.backends.run.batch import fill_random_, make_batch, random_inputs, write_new_tokens
from attn_select.backends.run.flash_attn import (
    IMPLS, VLLM_FORWARD_KEYWORDS, FlashAttnAdapter, builder_facts, vllm_max_num_seqs,
)
from attn_select.backends.run.reference import AttnParams, reference_attention, relative_error
from attn_select.selector.run_plan import FlashAttentionBuild, RowPlan, Shape

from fa_fake_kernels import DEFAULT_FA_VERSION, FakeVllmFlashAttn, metadata_len

H200, B200 = (9, 0), (10, 0)
PAGE = 4
SHAPES = {
    "decode": Shape("decode", decodes=3, decode_context=17),
    "prefill": Shape("prefill", prefills=2, prefill_new=7, prefill_context=6),
    "mixed": Shape("mixed", decodes=2, decode_context=13, prefills=1, prefill_new=5, prefill_context=11),
    # more tokens than vLLM's default max_cudagraph_capture_size (512): no split bound
    "long prefill": Shape("prefill", prefills=2, prefill_new=300, prefill_context=5),
}
GQA = AttnParams(4, 2, 8, 8, 8 ** -0.5)  # Llama's shape, small
WINDOW = AttnParams(4, 2, 8, 8, 8 ** -0.5, sliding_window=6)
SOFTCAP = AttnParams(4, 2, 8, 8, 8 ** -0.5, soft_cap=5.0)
SINKS = AttnParams(6, 2, 8, 8, 8 ** -0.5, sliding_window=6, has_sink=True)  # gpt-oss's sliding layers
DIFF_V = AttnParams(4, 2, 8, 4, 8 ** -0.5)  # head_size_v != head_size
FP8_TOL = 8e-2


def _run(p, shape="decode", fa_version=3, noarg=None, windows=None, kv="auto", cap=H200, versions=(2, 3),
         page=PAGE, batch_invariant=None, builds=1, dtype=torch.float32):
    """One step through the vllm_flash_attn path; returns (error, adapter, plan, fake, batch, inputs, cache)."""
    env = RunEnv(torch.device("cpu"), cap, dtype, kv)
    # the run plan's row: the builder facts default to this group's own (a standalone row)
    build = FlashAttentionBuild(noarg, tuple(windows) if windows is not None else (), bool(batch_invariant))
    row = RowPlan("FLASH_ATTN", fa_version=fa_version, flash_attn=build)
    fake = FakeVllmFlashAttn(versions)
    a = FlashAttnAdapter(env, p, row, impls=(IMPLS[0],), importer=lambda name: fake)
    b = make_batch(SHAPES[shape], page, "cpu", seed=7, spare_pages=2)
    cache = a.alloc_cache(b.num_pages, page)
    fill_random_(cache, torch.Generator().manual_seed(1))
    k, v = a.kv_views(cache)
    inp = random_inputs(b, p.num_heads, p.num_kv_heads, p.head_size, p.head_size_v, dtype, p.has_sink,
                        torch.Generator().manual_seed(2))
    write_new_tokens(k, v, b, inp)
    for _ in range(builds):
        plan = a.build(b)
    out = torch.full((b.num_tokens, p.num_heads, p.head_size_v), float("nan"), dtype=dtype)
    a.run(plan, inp.q, cache, inp.sinks, out)
    assert fake.calls[-1]["out"] is out
    ref = reference_attention(inp.q, k, v, b, p, inp.sinks)
    return relative_error(out, ref), a, plan, fake, b, inp, cache


# --- the fake has vLLM 0.33.0's parameter lists ---------------------------------------------


def _interface_file() -> Path | None:
    """vLLM 0.33.0's flash_attn_interface.py, where a source tree or an install is here."""
    roots = [os.environ.get("ATTN_SELECT_VLLM_SRC", ""), "/work/vllm-src", "/tmp/vsrc"]
    roots += [str(p.parent) for p in Path("/tmp/vllm-venv/lib").glob("python3*/site-packages/vllm")]
    for root in roots:
        if root and (f := Path(root) / "vllm" / "vllm_flash_attn" / "flash_attn_interface.py").exists():
            return f
    return None


def _real_parameters(path: Path, name: str) -> list[tuple[str, object]]:
    """(name, default or inspect.Parameter.empty) of ``name``'s parameters, from the file's AST."""
    tree = ast.parse(path.read_text())
    consts = {"torch": torch}
    for node in tree.body:  # module-level constants such as DEFAULT_FA_VERSION
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    consts[t.id] = node.value.value
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    args = fn.args
    assert not (args.posonlyargs or args.kwonlyargs or args.vararg or args.kwarg), "layout changed"
    defaults = [inspect.Parameter.empty] * (len(args.args) - len(args.defaults)) + [
        eval(compile(ast.Expression(d), str(path), "eval"), consts) for d in args.defaults]
    return [(a.arg, d) for a, d in zip(args.args, defaults)]


def _fake_parameters(fn) -> list[tuple[str, object]]:
    return [(n, p.default) for n, p in inspect.signature(fn).parameters.items()]


@pytest.mark.parametrize("name", ["flash_attn_varlen_func", "get_scheduler_metadata"])
def test_fake_has_the_parameters_of_vllm_0_33_0(name):
    real = _interface_file()
    if real is None:
        pytest.skip("vLLM 0.33.0's flash_attn_interface.py not found; the fake's signature is the fixture")
    assert _fake_parameters(getattr(FakeVllmFlashAttn(), name)) == _real_parameters(real, name)
    if name == "flash_attn_varlen_func":
        assert dict(_real_parameters(real, name))["fa_version"] == DEFAULT_FA_VERSION


# The keywords FlashAttentionMetadataBuilder._get_scheduler_metadata passes.
VLLM_SCHEDULER_KEYWORDS = frozenset((
    "batch_size", "max_seqlen_q", "max_seqlen_k", "num_heads_q", "num_heads_kv", "headdim", "cache_seqlens",
    "qkv_dtype", "cu_seqlens_q", "page_size", "causal", "window_size", "num_splits",
))


def test_the_adapter_passes_vllms_keywords_and_only_those():
    _, _, _, fake, _, _, _ = _run(GQA)
    assert fake.passed["flash_attn_varlen_func"] == [(0, VLLM_FORWARD_KEYWORDS)]
    assert fake.passed["get_scheduler_metadata"] == [(0, VLLM_SCHEDULER_KEYWORDS)]
    # vLLM's None-valued keywords on this path (no ALiBi, per-sequence causal, sinks, mask)
    assert {k for k in VLLM_FORWARD_KEYWORDS if fake.calls[-1][k] is None} == {
        "alibi_slopes", "dynamic_causal", "s_aux", "mask_mod", "aux_tensors"}


# --- decode, prefill, mixed ---------------------------------------------------------------------


@pytest.mark.parametrize("shape", ["decode", "prefill", "mixed"])
def test_step_metadata_goes_to_the_kernel_as_vllm_passes_it(shape):
    err, a, plan, fake, b, inp, cache = _run(GQA, shape)
    assert err < 1e-5
    call = fake.calls[-1]
    assert call["fa_version"] == 3 and call["causal"] is True and call["alibi_slopes"] is None
    assert call["cu_seqlens_q"] is b.query_start_loc and call["seqused_k"] is b.seq_lens
    assert call["block_table"] is b.block_table and call["cu_seqlens_k"] is None
    assert call["max_seqlen_q"] == (SHAPES[shape].prefill_new if SHAPES[shape].prefills else 1)
    assert call["max_seqlen_k"] == int(b.seq_lens_cpu.max())
    assert call["softmax_scale"] == GQA.scale and call["window_size"] == [-1, -1] and call["softcap"] == 0
    assert call["s_aux"] is None and call["dynamic_causal"] is None and call["mask_mod"] is None
    assert call["q"] is inp.q  # bf16/fp32 cache: the query goes in as it is
    # K and V: vLLM's split of one [num_blocks, block_size, Hkv, D + Dv] tensor
    assert call["k"].data_ptr() == cache.data_ptr()
    assert call["v"].data_ptr() == cache.data_ptr() + GQA.head_size * cache.element_size()
    assert call["k"].stride() == call["v"].stride() == cache.stride()


@pytest.mark.parametrize("shape", ["decode", "prefill", "mixed"])
def test_scheduler_metadata_inputs(shape):
    _, a, plan, fake, b, _, _ = _run(GQA, shape)
    assert len(fake.schedules) == 1
    s = fake.schedules[0]
    assert s["batch_size"] == b.num_requests and s["max_seqlen_q"] == b.max_query_len
    assert s["max_seqlen_k"] == b.max_seq_len and s["num_heads_q"] == 4 and s["num_heads_kv"] == 2
    assert s["headdim"] == 8 and s["cache_seqlens"] is b.seq_lens and s["cu_seqlens_q"] is b.query_start_loc
    assert s["qkv_dtype"] == torch.float32  # the KV cache spec's dtype
    assert s["page_size"] == PAGE and s["causal"] is True and s["window_size"] == (-1, -1)
    assert s["num_splits"] == 32 == fake.calls[-1]["num_splits"]
    # what vLLM leaves at its defaults, has_softcap and headdim_v included
    assert (s["headdim_v"], s["cu_seqlens_k_new"], s["cache_leftpad"], s["max_seqlen_k_new"], s["has_softcap"],
            s["pack_gqa"], s["sm_margin"]) == (None, None, None, 0, False, None, 0)


def test_scheduler_metadata_lives_in_the_builders_persistent_buffer():
    _, a, plan, fake, b, _, _ = _run(GQA, "mixed", builds=2)
    meta = fake.calls[-1]["scheduler_metadata"]
    n = metadata_len(b.num_requests)
    assert meta.shape == (n,) and torch.equal(meta, fake.issued[-1])
    buf = a._metadata_buf
    # 1 + round_up(max(max_num_seqs 1024, capture 512), 4) * 4 slots, past the schedule zeroed
    assert buf.shape == (4097,) and meta.data_ptr() == buf.data_ptr() and int(buf[n:].abs().sum()) == 0
    # a later, smaller step leaves no stale entries behind
    small = make_batch(SHAPES["decode"], PAGE, "cpu", seed=3)
    a.build(make_batch(Shape("decode", decodes=9, decode_context=5), PAGE, "cpu", seed=4))
    a.build(small)
    assert torch.equal(buf[: metadata_len(3)], fake.issued[-1]) and int(buf[metadata_len(3):].abs().sum()) == 0


def test_split_bound_follows_the_cuda_graph_capture_size():
    # vLLM's build: max_num_splits (32) when the step fits max_cudagraph_capture_size (512 tokens), else 0
    _, _, plan, fake, b, _, _ = _run(GQA, "prefill")
    assert b.num_tokens <= 512 and plan.num_splits == 32 == fake.schedules[0]["num_splits"]
    err, a, plan, fake, b, _, _ = _run(GQA, "long prefill")
    assert err < 1e-5 and b.num_tokens > 512
    assert plan.num_splits == 0 == fake.calls[-1]["num_splits"] == fake.schedules[0]["num_splits"]
    assert a.kernel_name(plan) == "vLLM FA3 (vllm.vllm_flash_attn), AOT schedule"


def test_labels_name_vllms_build_and_no_other_version():
    _, a, plan, _, _, _, _ = _run(GQA)
    assert a.kernel_name(plan) == "vLLM FA3 (vllm.vllm_flash_attn), AOT schedule, max 32 splits"
    assert "would use" not in a.kernel_name(plan)


# --- sliding window, soft cap, sinks ---------------------------------------------------------------


def test_sliding_window_on_every_layer_goes_to_the_scheduler_too():
    err, a, plan, fake, _, _, _ = _run(WINDOW, "mixed", windows=(6,))
    assert err < 1e-5
    assert fake.calls[-1]["window_size"] == [5, 0] and fake.schedules[0]["window_size"] == (5, 0)


@pytest.mark.parametrize("p", [WINDOW, GQA], ids=["sliding group", "full group"])
def test_a_model_mixing_windows_has_no_aot_schedule_but_keeps_the_split_bound(p):
    # gpt-oss / Gemma-2: sliding and full layers -> two window configs -> aot_schedule off at the first
    # build; max_num_splits was set at init and stays
    err, a, plan, fake, _, _, _ = _run(p, "decode", windows=(6, None))
    assert err < 1e-5 and fake.schedules == [] and fake.calls[-1]["scheduler_metadata"] is None
    assert fake.calls[-1]["num_splits"] == 32
    assert fake.calls[-1]["window_size"] == ([5, 0] if p.sliding_window else [-1, -1])
    assert a.kernel_name(plan) == "vLLM FA3 (vllm.vllm_flash_attn), max 32 splits"
    assert a.builder.why_not_aot == "the model's layers have different sliding windows"


def test_soft_cap_goes_to_the_kernel_not_to_the_scheduler():
    err, _, _, fake, _, _, _ = _run(SOFTCAP, "mixed")
    assert err < 1e-5 and fake.calls[-1]["softcap"] == 5.0 and fake.schedules[0]["has_softcap"] is False


def test_sinks_go_in_as_s_aux():
    err, _, _, fake, _, inp, _ = _run(SINKS, "mixed", windows=(6, None))
    assert err < 1e-5 and fake.calls[-1]["s_aux"] is inp.sinks and fake.calls[-1]["window_size"] == [5, 0]


def test_sinks_go_in_the_model_dtype_converted_once():
    # vLLM's sink parameter is made under the model's default dtype (make_attention_sink); FA3 takes
    # bf16 sinks only, and refused the run's float32 ones on the H200 ("We only support bf16 dtype for S aux")
    err, a, plan, fake, _, inp, cache = _run(SINKS, "mixed", windows=(6, None), dtype=torch.bfloat16)
    assert inp.sinks.dtype == torch.float32 and err < 2e-2
    s_aux = fake.calls[-1]["s_aux"]
    assert s_aux.dtype == torch.bfloat16 and torch.equal(s_aux, inp.sinks.to(torch.bfloat16))
    out = torch.empty(plan.batch.num_tokens, SINKS.num_heads, SINKS.head_size_v, dtype=torch.bfloat16)
    a.run(plan, inp.q, cache, inp.sinks, out)  # the next layer: the same converted tensor, no new cast
    assert fake.calls[-1]["s_aux"] is s_aux


def test_head_size_v_other_than_head_size_splits_the_cache_there():
    err, a, _, fake, _, _, cache = _run(DIFF_V, "mixed")
    assert err < 1e-5 and cache.shape[-1] == 12
    assert fake.calls[-1]["k"].shape[-1] == 8 and fake.calls[-1]["v"].shape[-1] == 4


# --- fp8 KV cache ------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", ["decode", "prefill", "mixed"])
def test_fp8_cache_fa3_gets_an_fp8_query_and_b_by_hkv_descales(shape):
    err, a, plan, fake, b, inp, cache = _run(GQA, shape, kv="fp8")
    assert 1e-4 < err < FP8_TOL  # the query's rounding to e4m3 shows, within fp8's tolerance
    call = fake.calls[-1]
    assert cache.dtype == torch.float8_e4m3fn and call["q"].dtype == torch.float8_e4m3fn
    for name in ("q_descale", "k_descale", "v_descale"):
        d = call[name]
        assert d.shape == (b.num_requests, 2) and d.dtype == torch.float32 and d.stride() == (0, 0)
        assert torch.all(d == 1.0)  # the layer's scales without calibrated ones
    assert fake.schedules[0]["qkv_dtype"] == torch.float8_e4m3fn
    assert a.kernel_name(plan).endswith("(fp8 KV, fp8 query)")


def test_descales_are_passed_on_a_bf16_cache_too():
    # FlashAttentionImpl.forward expands the layer's scales whatever the cache dtype; FA3 reads them for fp8 only
    _, _, _, fake, b, _, _ = _run(GQA, "decode")
    assert all(fake.calls[-1][n].shape == (b.num_requests, 2) for n in ("q_descale", "k_descale", "v_descale"))


def test_fp8_cache_vllm_fa4_on_sm90_keeps_the_query_and_on_sm100_quantizes_it():
    err, a, plan, fake, _, inp, _ = _run(GQA, "mixed", fa_version=4, noarg=4, kv="fp8", versions=(2, 3, 4))
    call = fake.calls[-1]
    assert call["q"] is inp.q and call["q_descale"] is None and call["k_descale"] is not None
    assert err < 1e-5  # the reference reads the same fp8 cache: only the query could differ
    assert a.kernel_name(plan) == "vLLM FA4 (vllm.vllm_flash_attn) (fp8 KV, float32 query)"
    err, _, plan, fake, _, _, _ = _run(GQA, "mixed", fa_version=4, noarg=4, kv="fp8", cap=B200, versions=(2, 4))
    assert plan.quant_q and fake.calls[-1]["q"].dtype == torch.float8_e4m3fn and 1e-4 < err < FP8_TOL


# --- other FA versions through vLLM's build -------------------------------------------------------------


def test_fa2_through_vllms_build_pages_of_16_no_schedule_no_split_bound():
    # what vLLM runs on Ampere / Ada, or with attention_config.flash_attn_version=2
    err, a, plan, fake, _, _, _ = _run(GQA, "mixed", fa_version=2, noarg=2, page=16, versions=(2,))
    call = fake.calls[-1]
    assert err < 1e-5 and call["fa_version"] == 2 and fake.schedules == []
    assert call["scheduler_metadata"] is None and call["num_splits"] == 0 and call["k_descale"] is not None
    assert a.kernel_name(plan) == "vLLM FA2 (vllm.vllm_flash_attn)"


def test_fa4_on_blackwell_has_no_aot_schedule():
    err, a, plan, fake, _, _, _ = _run(SINKS, "decode", fa_version=4, noarg=4, cap=B200, versions=(2, 4))
    assert err < 1e-5 and fake.schedules == [] and fake.calls[-1]["num_splits"] == 0
    assert a.kernel_name(plan) == "vLLM FA4 (vllm.vllm_flash_attn)"


def test_batch_invariance_turns_the_schedule_off_and_splits_to_one():
    _, _, plan, fake, _, _, _ = _run(GQA, "decode", batch_invariant=True)
    assert fake.schedules == [] and plan.num_splits == 1 == fake.calls[-1]["num_splits"]


def test_a_vllm_build_without_the_version_vllm_would_use_is_passed_over():
    env = RunEnv(torch.device("cpu"), H200, torch.float32, "auto")
    a = FlashAttnAdapter(env, GQA, RowPlan("FLASH_ATTN", fa_version=3), impls=(IMPLS[0],),
                         importer=lambda name: FakeVllmFlashAttn(versions=(2,)))
    assert a.unavailable().startswith("no FlashAttention build runs here (vllm.vllm_flash_attn: has no FA3 here")


# --- vLLM's builder facts --------------------------------------------------------------------------------


def test_builder_facts():
    f = builder_facts(3, (None,), H200)
    assert (f.aot_schedule, f.aot_window, f.max_num_splits, f.max_cudagraph_size, f.metadata_slots) == \
        (True, (-1, -1), 32, 512, 4097)
    assert f.splits(512) == 32 and f.splits(513) == 0
    assert builder_facts(3, (None,), H200, max_num_seqs=256).metadata_slots == 2049
    assert builder_facts(4, (None,), B200).max_cudagraph_size == 1024
    f = builder_facts(2, (4096, None), (8, 0))
    assert (f.aot_schedule, f.max_num_splits, f.metadata_slots) == (False, 0, 0)
    assert builder_facts(3, (4096,), H200).aot_window == (4095, 0)
    assert not builder_facts(3, (128, None), H200).aot_schedule


def test_vllm_default_max_num_seqs():
    assert vllm_max_num_seqs(139.8, "NVIDIA H200") == 1024
    assert vllm_max_num_seqs(79.2, "NVIDIA A100-SXM4-80GB") == 256
    assert vllm_max_num_seqs(44.4, "NVIDIA L40S") == 256
    assert vllm_max_num_seqs(119.7, "NVIDIA GB10", (12, 1)) == 256
    assert vllm_max_num_seqs(None) == 1024
