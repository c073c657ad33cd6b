"""The MLA run adapters of vLLM's kernels (FLASHMLA, FLASH_ATTN_MLA, the sparse
pair, FLASHINFER_MLA and its wrapper comparison row, CUTLASS_MLA) on the CPU,
against fakes of their entry points (mla_fake_kernels.py) whose parameter
lists are compared with vLLM 0.33.0's (and FlashInfer's) source files where
those are on this machine, else stand as the fixture. The fakes compute
attention from exactly the arguments they get, so each test checks the
result against the float32 reference as well as the arguments vLLM passes
(the keyword sets are read from vLLM's call sites when its source is here).

What these tests cannot show: that the real kernels accept these tensors and
compute this. That is the GPU test (test_mla_vendor_gpu.py) and the H200
driver (benchmarks/run_h200_mla.sh).
"""

from __future__ import annotations

import pytest
import torch

from attn_select.backends.run import flashmla as fm
from attn_select.backends.run.adapter import RoutedElsewhere, RunEnv, Unsupported
from attn_select.backends.run.batch import fill_random_, make_batch
from attn_select.backends.run.cutlass_mla import CutlassMLAAdapter
from attn_select.backends.run.flashattn_mla import (
    FlashAttnMLAAdapter, FlashAttnMLASparseAdapter, VLLM_MLA_KEYWORDS, VLLM_MLA_SPARSE_KEYWORDS,
)
from attn_select.backends.run.flashinfer_mla import VLLM_KEYWORDS as FI_KEYWORDS, FlashInferMLAAdapter
from attn_select.backends.run.layer_kind import MLA, MLASparse
from attn_select.backends.run.mla_reference import MLAParams, reference_mla_attention
from attn_select.backends.run.reference import relative_error
from attn_select.selector.run_plan import MLA_WRAPPER, FlashAttentionBuild, RowPlan, Shape

from mla_fake_kernels import (
    FakeCustomOps, FakeFlashInferDecode, FakeFlashInferMLA, FakeFlashInferUtils, FakeFlashMLA, FakeFlashMLAOps,
    FakeVllmFlashAttnMLA,
)
from vllm_source import call_keywords, call_positional_count, fake_parameters, flashinfer_file, real_parameters, \
    same_parameters, vllm_file

BF16 = torch.bfloat16
H200, B200 = (9, 0), (10, 0)
SCALE = 192 ** -0.5
DSV3 = dict(kv_lora_rank=512, qk_rope_head_dim=64, scale=SCALE, qk_nope_head_dim=128, v_head_dim=128)
DECODE = Shape("decode", decodes=3, decode_context=100)
FP8_TOL, BF16_TOL = 8e-2, 2e-2


def params(heads=16, **kw) -> MLAParams:
    return MLAParams(heads, **{**DSV3, **kw})


def importer(mods: dict):
    def imp(name):
        if name not in mods:
            raise ModuleNotFoundError(f"No module named '{name}'")
        return mods[name]

    return imp


def env(cap=H200, kv="auto") -> RunEnv:
    return RunEnv(torch.device("cpu"), cap, BF16, kv)


def check(adapter, shape, page, *, layers=2, seed=0, sparse=False):
    """One step: fill, write, build once, run ``layers`` layers; (error, plan, batch, inputs, outputs)."""
    batch = make_batch(shape, page, "cpu", seed=seed, spare_pages=3)
    kind = MLASparse(adapter.p) if sparse else MLA(adapter.p)
    gen = torch.Generator().manual_seed(seed)
    cache = adapter.alloc_cache(batch.num_pages, page)
    fill_random_(cache, gen)
    inp = kind.inputs(batch, BF16, gen)
    kind.write(adapter, cache, batch, inp)
    plan = adapter.build(batch)
    outs = []
    for _ in range(layers):
        out = kind.output(batch, BF16, torch.device("cpu"), float("nan"))
        kind.run(adapter, plan, inp, cache, out)
        outs.append(out)
    assert not any(torch.isnan(o).any() for o in outs), "an output element was never written"
    ref = kind.reference(adapter, cache, batch, inp)
    return max(relative_error(o, ref) for o in outs), plan, batch, inp, outs


# --- the fakes have the real parameter lists --------------------------------------------------

SIGNATURES = [
    (FakeFlashMLA().flash_mla_with_kvcache, "vllm", "vllm/third_party/flashmla/flash_mla_interface.py",
     "flash_mla_with_kvcache"),
    (FakeFlashMLA().get_mla_metadata, "vllm", "vllm/third_party/flashmla/flash_mla_interface.py", "get_mla_metadata"),
    (FakeFlashMLA().flash_mla_sparse_fwd, "vllm", "vllm/third_party/flashmla/flash_mla_interface.py",
     "flash_mla_sparse_fwd"),
    (FakeFlashMLAOps().get_mla_metadata_dense_fp8, "vllm", "vllm/v1/attention/ops/flashmla.py",
     "get_mla_metadata_dense_fp8"),
    (FakeFlashMLAOps().flash_mla_with_kvcache_fp8, "vllm", "vllm/v1/attention/ops/flashmla.py",
     "flash_mla_with_kvcache_fp8"),
    (FakeVllmFlashAttnMLA().flash_attn_varlen_func, "vllm", "vllm/vllm_flash_attn/flash_attn_interface.py",
     "flash_attn_varlen_func"),
    (FakeVllmFlashAttnMLA().get_scheduler_metadata, "vllm", "vllm/vllm_flash_attn/flash_attn_interface.py",
     "get_scheduler_metadata"),
    (FakeCustomOps().sm100_cutlass_mla_decode, "vllm", "vllm/_custom_ops.py", "sm100_cutlass_mla_decode"),
    (FakeCustomOps().sm100_cutlass_mla_get_workspace_size, "vllm", "vllm/_custom_ops.py",
     "sm100_cutlass_mla_get_workspace_size"),
    (FakeFlashInferDecode().trtllm_batch_decode_with_kv_cache_mla, "flashinfer", "flashinfer/mla/_core.py",
     "trtllm_batch_decode_with_kv_cache_mla"),
    (FakeFlashInferUtils().get_trtllm_gen_multi_ctas_kv_counter_bytes, "flashinfer", "flashinfer/utils.py",
     "get_trtllm_gen_multi_ctas_kv_counter_bytes"),
    (FakeFlashInferMLA.BatchMLAPagedAttentionWrapper.__init__, "flashinfer", "flashinfer/mla/_batch_mla/_wrapper.py",
     "BatchMLAPagedAttentionWrapper.__init__"),
    (FakeFlashInferMLA.BatchMLAPagedAttentionWrapper.plan, "flashinfer", "flashinfer/mla/_batch_mla/_wrapper.py",
     "BatchMLAPagedAttentionWrapper.plan"),
    (FakeFlashInferMLA.BatchMLAPagedAttentionWrapper.run, "flashinfer", "flashinfer/mla/_batch_mla/_wrapper.py",
     "BatchMLAPagedAttentionWrapper.run"),
    (FakeFlashInferMLA.MLAPlanMetadata.csr, "flashinfer", "flashinfer/mla/_batch_mla/_contracts.py",
     "MLAPlanMetadata.csr"),
]


@pytest.mark.parametrize("fake,where,rel,name", SIGNATURES, ids=[s[3] for s in SIGNATURES])
def test_fake_has_the_real_parameter_list(fake, where, rel, name):
    path = vllm_file(rel) if where == "vllm" else flashinfer_file(rel)
    if path is None:
        pytest.skip(f"{rel} not on this machine; the fake's parameter list is the fixture")
    assert not same_parameters(fake_parameters(fake), real_parameters(path, name))


def vllm_keywords(rel: str, callee: str, within: str, fixture: frozenset) -> frozenset:
    """The keywords vLLM's call site passes: read from its source when present, else the fixture
    (which the source, when present, must equal)."""
    path = vllm_file(rel)
    if path is None:
        return fixture
    (kw,) = set(call_keywords(path, callee, within))
    assert kw == fixture, (callee, sorted(kw ^ fixture))
    return kw


FLASHMLA_PY = "vllm/v1/attention/backends/mla/flashmla.py"
FLASHMLA_KEYWORDS = frozenset(("q", "k_cache", "block_table", "cache_seqlens", "head_dim_v",
                               "tile_scheduler_metadata", "softmax_scale", "causal", "is_fp8_kvcache"))
FLASHMLA_FP8_KEYWORDS = frozenset(("q", "k_cache", "block_table", "cache_seqlens", "head_dim_v",
                                   "tile_scheduler_metadata", "num_splits", "softmax_scale", "causal",
                                   "descale_q", "descale_k"))


# --- FLASHMLA ---------------------------------------------------------------------------------


def flashmla(kv="auto", heads=16, cap=H200, mods=None, **pkw):
    fake, ops = FakeFlashMLA(), FakeFlashMLAOps()
    m = {fm.INTERFACE: fake, fm.OPS: ops} if mods is None else mods(fake, ops)
    a = fm.FlashMLAAdapter(env(cap, kv), params(heads, **pkw), RowPlan("FLASHMLA"), importer=importer(m))
    return a, fake, ops


def test_flashmla_bf16_decode_as_vllm_builds_and_calls_it():
    a, fake, _ = flashmla()
    assert a.unavailable() is None
    err, plan, batch, inp, outs = check(a, DECODE, 64)
    assert err <= BF16_TOL
    (md,) = fake.of("get_mla_metadata")
    assert md["args"][1:] == (16, 1) and md["kwargs"] == {"is_fp8_kvcache": False}
    assert torch.equal(md["args"][0], batch.seq_lens)
    assert fake.passed["get_mla_metadata"][0] == (3, frozenset({"is_fp8_kvcache"}))
    path = vllm_file(FLASHMLA_PY)
    if path is not None:  # the builder's call: three positional arguments and is_fp8_kvcache
        assert call_positional_count(path, "get_mla_metadata", "FlashMLAMetadataBuilder") == [3]
        assert call_keywords(path, "get_mla_metadata", "FlashMLAMetadataBuilder") == [frozenset({"is_fp8_kvcache"})]
        assert call_positional_count(path, "get_mla_metadata_dense_fp8", "FlashMLAMetadataBuilder") == [3]
    calls = fake.of("flash_mla_with_kvcache")
    assert len(calls) == 2 and fake.initialized == 1  # layer 0 made the schedule, layer 1 reused it
    for c in calls:
        assert c["tile_scheduler_metadata"] is plan.sched and c["num_splits"] is None
        assert c["block_table"].data_ptr() == batch.block_table.data_ptr() and c["head_dim_v"] == 512
        assert c["causal"] and not c["is_fp8_kvcache"] and c["softmax_scale"] == SCALE
        assert c["q"].shape == (3, 1, 16, 576) and c["k_cache"].shape[1:] == (64, 1, 576)
    kw = vllm_keywords(FLASHMLA_PY, "flash_mla_with_kvcache", "FlashMLAImpl", FLASHMLA_KEYWORDS)
    assert fake.passed["flash_mla_with_kvcache"][0] == (0, kw | {"out"})  # out: ours, the row's buffer
    assert "page 64" in a.kernel_name(plan)


def test_flashmla_takes_uniform_multi_token_queries_and_routes_the_rest():
    a, fake, _ = flashmla()
    spec = Shape("prefill", prefills=3, prefill_new=4, prefill_context=60)  # 4 <= 128, uniform: decode path
    err, plan, *_ = check(a, spec, 64, layers=1)
    assert err <= BF16_TOL and plan.sched.config.s_q == 4
    assert fake.of("get_mla_metadata")[-1]["args"][1] == 4 * 16  # max query length x heads
    for shape in (Shape("mixed", decodes=2, decode_context=30, prefills=1, prefill_new=4, prefill_context=9),
                  Shape("prefill", prefills=1, prefill_new=129, prefill_context=0)):
        with pytest.raises(RoutedElsewhere, match="FLASHMLA builder sends"):
            a.build(make_batch(shape, 64, "cpu"))
    with pytest.raises(Unsupported, match="64"):
        a.build(make_batch(DECODE, 16, "cpu"))


def test_flashmla_fp8_decode_quantizes_the_query_and_passes_the_descales():
    a, fake, ops = flashmla("fp8", kv_scale=0.5)
    assert a.unavailable() is None
    err, plan, batch, inp, _ = check(a, DECODE, 64)
    assert err <= FP8_TOL
    assert fake.of("get_mla_metadata")[-1]["kwargs"] == {"is_fp8_kvcache": True}
    (md,) = ops.of("get_mla_metadata_dense_fp8")
    assert torch.equal(md["cache_seqlens"], batch.seq_lens) and md["num_q_tokens_per_head_k"] == 16
    assert md["num_heads_k"] == 1
    c = ops.of("flash_mla_with_kvcache_fp8")[-1]
    # the builder's persistent full-CUDA-graph buffers: (SMs, 8) and (max_num_seqs + 1)
    assert a._cg_tile.shape == (132, 8) and a._cg_splits.shape == (1025,)
    assert c["tile_scheduler_metadata"].data_ptr() == a._cg_tile.data_ptr()
    assert c["num_splits"].data_ptr() == a._cg_splits.data_ptr() and c["num_splits"].numel() == 4
    assert c["q"].dtype == torch.float8_e4m3fn and c["k_cache"].dtype == torch.float8_e4m3fn
    assert float(c["descale_q"]) == 1.0 and float(c["descale_k"]) == 0.5 and c["descale_k"].shape == (1,)
    kw = vllm_keywords(FLASHMLA_PY, "flash_mla_with_kvcache_fp8", "FlashMLAImpl", FLASHMLA_FP8_KEYWORDS)
    assert ops.passed["flash_mla_with_kvcache_fp8"][0] == (0, kw)
    assert "copied" in a.kernel_name(plan)


def test_flashmla_fp8_without_vllm_calls_the_extension_ops_in_the_wrappers_order(monkeypatch):
    """Where vLLM's ops module cannot import (the kernel pack), the same torch ops run."""
    class Positional:
        def __init__(self, ops):
            self.ops = ops

        def get_mla_decoding_metadata_dense_fp8(self, cache_seqlens, num_q_tokens_per_head_k, num_heads_k):
            return self.ops.get_mla_metadata_dense_fp8(cache_seqlens, num_q_tokens_per_head_k, num_heads_k)

        def fwd_kvcache_mla_fp8(self, q, k_cache, head_dim_v, cache_seqlens, block_table, softmax_scale, causal,
                                tile, splits, descale_q, descale_k):
            return self.ops.flash_mla_with_kvcache_fp8(q, k_cache, block_table, cache_seqlens, head_dim_v, tile,
                                                       splits, softmax_scale, causal, descale_q, descale_k)

    ops = FakeFlashMLAOps()
    monkeypatch.setattr(fm, "extension_ops", lambda: Positional(ops))
    a, fake, _ = flashmla("fp8", mods=lambda fake, _: {fm.INTERFACE: fake, fm.EXTENSION: object()})
    assert a.unavailable() is None
    err, plan, *_ = check(a, DECODE, 64, layers=1)
    assert err <= FP8_TOL and "torch.ops._flashmla_extension_C" in a.kernel_name(plan)


def test_flashmla_says_why_it_cannot_run():
    a, *_ = flashmla(mods=lambda fake, ops: {})
    assert a.unavailable().startswith("vLLM's FlashMLA is not importable: vllm.third_party.flashmla")
    a, *_ = flashmla(cap=B200)
    assert a.unavailable() == "FlashMLA Dense is only supported on Hopper devices."
    a, *_ = flashmla("fp8", mods=lambda fake, ops: {fm.INTERFACE: fake})
    assert "fp8 decode is not importable" in a.unavailable()
    real = fm.FlashMLAAdapter(env(), params())
    assert real.unavailable() == "vLLM's FlashMLA needs a CUDA GPU"


# --- FLASH_ATTN_MLA ---------------------------------------------------------------------------


def fa_mla(noarg=3, batch_invariant=False, versions=(2, 3), kv="auto", **pkw):
    fake = FakeVllmFlashAttnMLA(versions)
    row = RowPlan("FLASH_ATTN_MLA", flash_attn=FlashAttentionBuild(noarg, (None,), batch_invariant))
    return FlashAttnMLAAdapter(env(kv=kv), params(**pkw), row, importer=importer({"vllm.vllm_flash_attn": fake})), fake


FA_MLA_PY = "vllm/v1/attention/backends/mla/flashattn_mla.py"


def test_flash_attn_mla_decode_as_vllm_builds_and_calls_it():
    a, fake = fa_mla()
    assert a.unavailable() is None
    err, plan, batch, inp, _ = check(a, DECODE, 16)
    assert err <= BF16_TOL
    (s,) = fake.schedules
    assert (s["batch_size"], s["max_seqlen_q"], s["max_seqlen_k"]) == (3, 1, batch.max_seq_len)
    assert (s["num_heads_q"], s["num_heads_kv"], s["headdim"], s["headdim_v"]) == (16, 1, 64, 512)
    assert s["qkv_dtype"] == BF16 and s["page_size"] == 16 and s["causal"] and s["num_splits"] == 32
    assert torch.equal(s["cu_seqlens_q"], batch.query_start_loc)
    path = vllm_file(FA_MLA_PY)
    if path is not None:  # the builder's keywords
        assert set(call_keywords(path, "get_scheduler_metadata", "FlashAttnMLAMetadataBuilder")) == {frozenset(s) - {
            "cu_seqlens_k_new", "cache_leftpad", "max_seqlen_k_new", "window_size", "has_softcap", "pack_gqa",
            "sm_margin"}}
    # the persistent buffer: 1 + round_up(max(1024, 512), 4) x 4 slots, the step's schedule at its head
    buf = a._metadata_buf
    assert buf.numel() == 1 + 1024 * 4 and plan.scheduler_metadata.data_ptr() == buf.data_ptr()
    assert not buf[plan.scheduler_metadata.numel():].any()
    c = fake.calls[-1]
    assert c["q"].shape == (3, 16, 64) and c["q_v"].shape == (3, 16, 512)  # q_pe and ql_nope
    assert c["k"].shape == (batch.num_pages, 16, 1, 64) and c["v"].shape == (batch.num_pages, 16, 1, 512)
    assert c["v"].data_ptr() == c["k"].data_ptr() - 512 * 2  # both views of the one latent cache
    assert c["fa_version"] == 3 and c["causal"] and c["num_splits"] == 32 and not c["return_softmax_lse"]
    assert c["seqused_k"] is plan.seq_lens and c["block_table"].data_ptr() == batch.block_table.data_ptr()
    kw = vllm_keywords(FA_MLA_PY, "flash_attn_varlen_func", "FlashAttnMLAImpl", VLLM_MLA_KEYWORDS)
    assert fake.passed["flash_attn_varlen_func"][0] == (0, kw | {"out"})
    assert a.kernel_name(plan).startswith("vLLM FA3 MLA") and "AOT schedule" in a.kernel_name(plan)


@pytest.mark.parametrize("shape", [Shape("prefill", prefills=2, prefill_new=8, prefill_context=24),
                                   Shape("mixed", decodes=2, decode_context=24, prefills=2, prefill_new=8,
                                         prefill_context=24)], ids=["prefill", "mixed"])
def test_flash_attn_mla_runs_whole_batches_up_to_512_new_tokens(shape):
    a, fake = fa_mla(heads=4)
    err, plan, *_ = check(a, shape, 16, layers=1)
    assert err <= BF16_TOL and plan.max_query_len == 8 and fake.calls[-1]["max_seqlen_q"] == 8
    with pytest.raises(RoutedElsewhere, match="FLASH_ATTN_MLA builder sends 1 of these"):
        a.build(make_batch(Shape("mixed", decodes=1, decode_context=4, prefills=1, prefill_new=513), 16, "cpu"))


def test_flash_attn_mla_split_bound_and_schedule_follow_the_builder():
    a, fake = fa_mla(noarg=2)  # no AOT scheduling: no metadata, FA3's own split heuristic
    _, plan, *_ = check(a, DECODE, 16, layers=1)
    assert plan.scheduler_metadata is None and plan.num_splits == 0 and not fake.schedules
    a, fake = fa_mla(batch_invariant=True)
    _, plan, *_ = check(a, DECODE, 16, layers=1)
    assert plan.num_splits == 1 and fake.schedules[-1]["num_splits"] == 1


def test_flash_attn_mla_says_why_it_cannot_run():
    a, _ = fa_mla(kv="fp8")
    assert a.unavailable() == "FlashAttnMLA V1 with FP8 KV cache not yet supported"
    a, _ = fa_mla(versions=(2,))
    assert a.unavailable() == "FlashAttention MLA not supported on this device (FA3 is unavailable (fake))"
    b = FlashAttnMLAAdapter(env(), params(), importer=importer({}))
    assert b.unavailable().startswith("vLLM's FlashAttention (vllm.vllm_flash_attn) is not importable")


# --- sparse MLA -------------------------------------------------------------------------------


FA_SPARSE_PY = "vllm/v1/attention/backends/mla/flashattn_mla_sparse.py"
SPARSE_DECODE = Shape("decode", decodes=3, decode_context=40)


def test_flash_attn_mla_sparse_reads_each_tokens_top_k_rows():
    fake = FakeVllmFlashAttnMLA()
    a = FlashAttnMLASparseAdapter(env(), params(topk=16), RowPlan("FLASH_ATTN_MLA_SPARSE"),
                                  importer=importer({"vllm.vllm_flash_attn": fake}))
    assert a.unavailable() is None
    err, plan, batch, inp, _ = check(a, SPARSE_DECODE, 64, sparse=True)
    assert err <= BF16_TOL
    c = fake.calls[-1]
    assert c["block_table"] is inp.rows and c["seqused_k"] is inp.counts and inp.counts.tolist() == [16, 16, 16]
    assert c["cu_seqlens_q"].tolist() == [0, 1, 2, 3] and c["max_seqlen_q"] == 1 and c["max_seqlen_k"] == 16
    assert c["k"].shape[1:] == (1, 1, 64) and c["v"].shape[1:] == (1, 1, 512) and c["fa_version"] == 3
    kw = vllm_keywords(FA_SPARSE_PY, "flash_attn_varlen_func", "FlashAttnMLASparseImpl", VLLM_MLA_SPARSE_KEYWORDS)
    assert fake.passed["flash_attn_varlen_func"][0] == (0, kw | {"out"})
    # prefill tokens whose sequences outgrow index_topk stay on the sparse kernel (causality in the lists)
    err, *_ = check(a, Shape("prefill", prefills=2, prefill_new=8, prefill_context=24), 64, layers=1, sparse=True)
    assert err <= BF16_TOL
    # a prefill of at most index_topk tokens goes to dense MHA prefill, where the layer has a prefill backend
    long = make_batch(Shape("prefill", prefills=1, prefill_new=130), 64, "cpu")
    b = FlashAttnMLASparseAdapter(env(), params(topk=256), RowPlan("FLASH_ATTN_MLA_SPARSE", mla_prefill="FLASH_ATTN"),
                                  importer=importer({"vllm.vllm_flash_attn": fake}))
    with pytest.raises(RoutedElsewhere, match="dense MHA prefill"):
        b.build(long)
    c = FlashAttnMLASparseAdapter(env(), params(topk=256), RowPlan("FLASH_ATTN_MLA_SPARSE", mla_prefill=None),
                                  importer=importer({"vllm.vllm_flash_attn": fake}))
    assert c.build(long).num_tokens == 130  # no prefill backend: every token on the sparse kernel


@pytest.mark.parametrize("heads", [16, 64])
def test_flashmla_sparse_pads_the_query_to_64_heads(heads):
    fake = FakeFlashMLA()
    a = fm.FlashMLASparseAdapter(env(), params(heads, topk=16), importer=importer({fm.INTERFACE: fake}))
    assert a.unavailable() is None
    err, plan, batch, inp, outs = check(a, SPARSE_DECODE, 64, sparse=True, layers=1)
    assert err <= BF16_TOL
    c = fake.of("flash_mla_sparse_fwd")[-1]
    assert c["q"].shape == (3, 64, 576) and c["kv"].shape == (batch.num_pages * 64, 1, 576)
    assert c["indices"].shape == (3, 1, 16) and c["topk_length"] is inp.counts and c["sm_scale"] == SCALE
    assert (c["out"] is outs[0]) == (heads == 64)
    path = vllm_file("vllm/v1/attention/backends/mla/flashmla_sparse.py")
    if path is not None:
        assert set(call_keywords(path, "flash_mla_sparse_fwd", "FlashMLASparseImpl")) == {frozenset(("topk_length", "out"))}
        assert set(call_positional_count(path, "flash_mla_sparse_fwd", "FlashMLASparseImpl")) == {4}
    assert fake.passed["flash_mla_sparse_fwd"][0] == (4, frozenset(("topk_length", "out")))


def test_sparse_adapters_say_why_they_cannot_run():
    a = fm.FlashMLASparseAdapter(env(kv="fp8"), params(topk=16), importer=importer({fm.INTERFACE: FakeFlashMLA()}))
    assert "fp8_ds_mla" in a.unavailable()
    b = FlashAttnMLASparseAdapter(env(), params(), importer=importer({}))
    assert b.unavailable() == "FlashAttention MLA Sparse requires model with index_topk"


# --- FLASHINFER_MLA (SM100) and its comparison row ------------------------------------------


def flashinfer(cap=B200, kv="auto", variant="", heads=16, **pkw):
    dec, utils = FakeFlashInferDecode(), FakeFlashInferUtils()
    mods = {"flashinfer.decode": dec, "flashinfer.utils": utils, "flashinfer.mla": FakeFlashInferMLA}
    a = FlashInferMLAAdapter(env(cap, kv), params(heads, **pkw), RowPlan("FLASHINFER_MLA", variant),
                             importer=importer(mods))
    return a, dec, utils


def test_flashinfer_mla_trtllm_decode_call_path():
    a, dec, utils = flashinfer()
    assert a.unavailable() is None
    err, plan, batch, inp, _ = check(a, DECODE, 32)
    assert err <= BF16_TOL
    c = dec.of("trtllm_batch_decode_with_kv_cache_mla")[-1]
    assert c["query"].shape == (3, 1, 16, 576) and c["kv_cache"].shape[1:] == (1, 32, 576)
    assert (c["qk_nope_head_dim"], c["kv_lora_rank"], c["qk_rope_head_dim"]) == (128, 512, 64)
    assert c["bmm1_scale"] == SCALE and c["bmm2_scale"] == 1.0 and c["max_seq_len"] == batch.max_seq_len
    assert c["workspace_buffer"].numel() == 128 * 1024 * 1024 and c["workspace_buffer"].dtype == torch.int8
    (n,) = utils.of("get_trtllm_gen_multi_ctas_kv_counter_bytes")
    assert (n["batch_size"], n["num_qo_heads"], n["sm_count"]) == (8192, 16, 132)
    assert c["multi_ctas_kv_counter_buffer"].numel() == -(-8192 * 16 // 8) * 8 * 4
    path = vllm_file("vllm/v1/attention/backends/mla/flashinfer_mla.py")
    if path is not None:
        (kw,) = set(call_keywords(path, "trtllm_batch_decode_with_kv_cache_mla", "FlashInferMLAImpl"))
        assert kw == FI_KEYWORDS | {"**"}
    assert dec.passed["trtllm_batch_decode_with_kv_cache_mla"][0] == (0, FI_KEYWORDS | {"multi_ctas_kv_counter_buffer"})
    with pytest.raises(RoutedElsewhere):
        a.build(make_batch(Shape("prefill", prefills=1, prefill_new=2, prefill_context=3), 32, "cpu"))


def test_flashinfer_mla_fp8_scales_and_cute_dsl_head_counts():
    a, dec, _ = flashinfer(kv="fp8", kv_scale=0.5)
    err, *_ = check(a, DECODE, 64, layers=1)
    c = dec.of("trtllm_batch_decode_with_kv_cache_mla")[-1]
    assert err <= FP8_TOL and c["query"].dtype == torch.float8_e4m3fn
    assert c["bmm1_scale"] == pytest.approx(SCALE * 0.5) and c["bmm2_scale"] == 0.5
    a, dec, utils = flashinfer(heads=24)  # 24 heads: no trtllm-gen tile; vLLM asks for cute-dsl
    err, *_ = check(a, DECODE, 32, layers=1)
    c = dec.of("trtllm_batch_decode_with_kv_cache_mla")[-1]
    assert err <= BF16_TOL and c["backend"] == "cute-dsl" and c["multi_ctas_kv_counter_buffer"] is None


def test_flashinfer_mla_is_sm100_only():
    a, *_ = flashinfer(cap=H200)
    assert a.unavailable().startswith("SM100 only: vLLM's FlashInferMLABackend takes compute capability 10.x")
    a, *_ = flashinfer(qk_nope_head_dim=96)
    assert a.unavailable() == "FlashInfer MLA kernel requires qk_nope_head_dim in [64, 128, 192], but got 96"


def test_the_wrapper_comparison_row_plans_csr_metadata_and_runs_the_absorbed_query():
    FakeFlashInferMLA.BatchMLAPagedAttentionWrapper.instances.clear()
    a, *_ = flashinfer(cap=H200, variant=MLA_WRAPPER)
    assert a.unavailable() is None
    err, plan, batch, inp, outs = check(a, Shape("mixed", decodes=2, decode_context=40, prefills=1, prefill_new=5,
                                                 prefill_context=20), 32)
    assert err <= BF16_TOL
    (w,) = FakeFlashInferMLA.BatchMLAPagedAttentionWrapper.instances  # one wrapper, planned per step
    p = w.plans[-1]
    m = p["metadata"]
    pages = (-(-batch.seq_lens_cpu // 32)).tolist()
    assert m.kv_indptr.tolist() == [0, *torch.tensor(pages).cumsum(0).tolist()]
    assert m.kv_indices.tolist() == [x for r, n in enumerate(pages) for x in batch.block_table_cpu[r, :n].tolist()]
    assert (p["num_heads"], p["head_dim_ckv"], p["head_dim_kpe"], p["page_size"]) == (16, 512, 64, 32)
    assert p["causal"] and p["sm_scale"] == SCALE and p["q_data_type"] == BF16 and p["kv_data_type"] == BF16
    assert w.runs[-1]["out"] is outs[-1]
    assert "fa3 backend" in a.kernel_name(plan) and "comparison" in a.kernel_name(plan)
    b, *_ = flashinfer(cap=H200, variant=MLA_WRAPPER, kv="fp8")
    assert "16-bit cache only" in b.unavailable()


# --- CUTLASS_MLA (SM100) ---------------------------------------------------------------------


@pytest.mark.parametrize("kv", ["auto", "fp8"])
def test_cutlass_mla_call_path(kv):
    ops = FakeCustomOps()
    a = CutlassMLAAdapter(env(B200, kv), params(), RowPlan("CUTLASS_MLA"), importer=importer({"vllm._custom_ops": ops}))
    assert a.unavailable() is None
    err, plan, batch, *_ = check(a, DECODE, 128, layers=1)
    assert err <= (FP8_TOL if kv == "fp8" else BF16_TOL)
    (ws,) = ops.of("sm100_cutlass_mla_get_workspace_size")
    assert (ws["max_seq_len"], ws["num_batches"], ws["sm_count"], ws["num_kv_splits"]) == (128, 3, 132, -1)
    c = ops.of("sm100_cutlass_mla_decode")[-1]
    assert c["out"].shape == (3, 128, 512) and c["out"].dtype == BF16 and c["num_kv_splits"] == -1
    assert c["q_nope"].shape == (3, 16, 512) and c["q_pe"].shape == (3, 16, 64) and c["scale"] == SCALE
    assert ops.passed["sm100_cutlass_mla_decode"][0] == (10, frozenset())
    path = vllm_file("vllm/v1/attention/backends/mla/cutlass_mla.py")
    if path is not None:
        assert set(call_positional_count(path, "sm100_cutlass_mla_decode", "CutlassMLAImpl")) == {10}


def test_cutlass_mla_says_why_it_cannot_run():
    ops = {"vllm._custom_ops": FakeCustomOps()}
    assert CutlassMLAAdapter(env(H200), params(), importer=importer(ops)).unavailable().startswith("SM100 only")
    assert CutlassMLAAdapter(env(B200), params(kv_scale=0.5), importer=importer(ops)).unavailable() == \
        "CutlassMLAImpl does not support scaling for q and kv_latent yet"


# --- the references ---------------------------------------------------------------------------


def test_sparse_reference_with_every_token_listed_is_the_dense_reference():
    p = params(4, topk=64)
    kind = MLASparse(p)
    batch = make_batch(Shape("mixed", decodes=2, decode_context=20, prefills=1, prefill_new=6, prefill_context=10),
                       16, "cpu", seed=3)
    gen = torch.Generator().manual_seed(1)
    cache = fill_random_(torch.empty(batch.num_pages, 16, 576, dtype=BF16), gen)
    inp = kind.inputs(batch, BF16, gen)
    assert inp.counts.tolist() == [21, 21, 11, 12, 13, 14, 15, 16]  # all visible tokens: fewer than top-k
    dense = reference_mla_attention(inp.q, cache, batch, p)
    assert relative_error(kind.reference(None, cache, batch, inp), dense) < 1e-5
