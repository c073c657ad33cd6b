"""The run plan: what vLLM would run per group, backend and batch shape,
decided once by the selector from the explanation."""

from __future__ import annotations

from attn_select.selector.explain import explain
from attn_select.selector.overrides import Overrides
from attn_select.selector.profiles import load_device, load_model
from attn_select.selector.config import Kernels
from attn_select.selector.run_plan import (
    NATIVE_DECODE, TRTLLM_GEN, XQA, Shape, plan_run, standard_shapes,
)

SHAPES = standard_shapes(2, 24)


def _plan(model: str, device: str, ov: Overrides = Overrides(), only=None, page: int = 16):
    dev = load_device(device)
    facts = load_model(model, tp=ov.tp, dtype="auto", capability=dev.capability)
    exp = explain(facts, dev, Kernels(), ov)
    return plan_run(exp, facts.dtype, "auto", SHAPES, page, only), exp


def _rows(plan, group=0, shape=0):
    return plan.groups[group].shapes[shape].rows


def test_hopper_llama_rows_follow_the_explanation():
    plan, exp = _plan("llama-3.1-8b", "h100")
    g = plan.groups[0]
    assert (g.selected, g.fa_version, g.flashinfer_decode) == ("FLASH_ATTN", 3, XQA)
    assert g.layers == 32 and g.attn.num_heads == 32 and g.attn.num_kv_heads == 8
    decode = _rows(plan)
    assert [(r.backend, r.variant) for r in decode][:5] == [
        ("FLASH_ATTN", ""), ("FLASHINFER", ""), ("FLASHINFER", NATIVE_DECODE), ("TRITON_ATTN", ""),
        ("FLEX_ATTENTION", "")]
    assert [r.backend for r in decode if r.selected] == ["FLASH_ATTN"]
    assert all(r.fa_version == 3 for r in decode)
    fi, native = decode[1], decode[2]
    assert fi.flashinfer.decode_api == XQA and native.flashinfer.decode_api is None
    assert fi.adapter == "attn_select.backends.run.flashinfer:FlashInferAdapter"
    # TURBOQUANT is a candidate with no adapter: listed, with the reason
    turbo = next(r for r in decode if r.backend == "TURBOQUANT")
    assert turbo.skip == "attn-select run has no adapter for this backend"
    # Hopper never prefills on trtllm-gen context
    assert not any(r.flashinfer.prefill_trtllm for sp in g.shapes for r in sp.rows)


def test_blackwell_prefill_on_trtllm_is_decided_per_shape():
    plan, _ = _plan("llama-3.1-8b", "b200")
    g = plan.groups[0]
    assert g.selected == "FLASHINFER" and g.flashinfer_decode == TRTLLM_GEN
    by_kind = {sp.shape.kind: sp for sp in g.shapes}
    fi = {kind: next(r for r in sp.rows if r.backend == "FLASHINFER" and not r.variant)
          for kind, sp in by_kind.items()}
    assert not fi["decode"].flashinfer.prefill_trtllm  # no prefills in the batch
    assert fi["prefill"].flashinfer.prefill_trtllm and fi["mixed"].flashinfer.prefill_trtllm
    # the native-decode comparison row exists only where the batch has decodes
    assert [r.variant for r in by_kind["prefill"].rows if r.backend == "FLASHINFER"] == [""]
    assert [r.variant for r in by_kind["mixed"].rows if r.backend == "FLASHINFER"] == ["", NATIVE_DECODE]


def test_use_trtllm_attention_off_leaves_no_trtllm_anywhere():
    plan, _ = _plan("llama-3.1-8b", "b200", Overrides(use_trtllm_attention=False))
    g = plan.groups[0]
    assert g.flashinfer_decode is None
    rows = [r for sp in g.shapes for r in sp.rows if r.backend == "FLASHINFER"]
    assert rows and all(r.flashinfer == (None, False) and not r.variant for r in rows)


def test_a_runnable_backend_outside_the_candidates_is_validated_by_the_selector():
    """An MLA group's candidates are the MLA backends; whether FLASH_ATTN (a
    runnable MHA backend) could serve it is the selector's own check."""
    from attn_select.selector.run_plan import _validity

    _, exp = _plan("deepseek-v3", "h100", Overrides(tp=8))
    g = exp.groups[0]
    assert "FLASH_ATTN" not in [c.name for c in g.selection.candidates]
    valid, why = _validity("FLASH_ATTN", g)
    assert not valid and "MLA not supported" in why
    first = g.selection.candidates[0]
    assert _validity(first.name, g) == (first.valid, "; ".join(first.reasons))


def test_invalid_backend_is_skipped_with_the_selectors_reasons():
    plan, _ = _plan("gemma-2-9b", "h100", Overrides(kv_cache_dtype="fp8"), only=("FLEX_ATTENTION",))
    (row,) = _rows(plan)
    assert row.skip.startswith("not valid for this config per the selector: ")
    assert "kv_cache_dtype not supported" in row.skip


def test_mla_groups_run_the_mla_backends_only():
    """An MLA group's rows are the MLA backends (those with an adapter first,
    then the other candidates, listed); no MHA backend."""
    plan, exp = _plan("deepseek-v3", "h100", Overrides(tp=8))
    g = plan.groups[0]
    assert g.attn.use_mla and g.fa_version is None and g.attn.num_heads == 16 and g.index_topk is None
    rows = {(r.backend, r.variant): r for r in _rows(plan)}
    assert rows[("TRITON_MLA", "")].skip is None
    assert rows[("TRITON_MLA", "")].adapter == "attn_select.backends.run.triton_mla:TritonMLAAdapter"
    assert rows[("FLASHMLA", "")].adapter == "attn_select.backends.run.flashmla:FlashMLAAdapter"
    assert rows[("FLASHMLA", "")].skip is None and rows[("FLASH_ATTN_MLA", "")].skip is None
    candidates = [c.name for c in exp.groups[0].selection.candidates]
    # CUTLASS_MLA has an adapter but is no Hopper candidate: the selector's own check rejects it
    assert {b for b, _ in rows} == {"TRITON_MLA", "CUTLASS_MLA", *candidates}
    assert rows[("CUTLASS_MLA", "")].skip.startswith("not valid for this config per the selector")
    assert rows[("FLASHINFER_MLA_SPARSE_SM90", "")].skip == "attn-select run has no adapter for this backend"
    assert not {"FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLEX_ATTENTION"} & {b for b, _ in rows}


def test_mla_rows_run_with_the_kernel_block_size_vllm_gives_their_backend():
    plan, _ = _plan("deepseek-v3", "h200")
    pages = {r.backend: r.page_size for r in _rows(plan) if not r.variant}
    assert pages["FLASHMLA"] == 64 and pages["FLASH_ATTN_MLA"] == 16 and pages["TRITON_MLA"] == 16
    assert pages["FLASHINFER_MLA"] == 32 and pages["CUTLASS_MLA"] == 128 and pages["FLASHMLA_SPARSE"] == 64
    # --block-size 128: kept where a kernel size declares it, else the largest exact kernel size dividing it
    plan, _ = _plan("deepseek-v3", "h200", Overrides(block_size=128), page=128)
    pages = {r.backend: r.page_size for r in _rows(plan) if not r.variant}
    assert pages["FLASHMLA"] == 64 and pages["FLASH_ATTN_MLA"] == 128 and pages["FLASHINFER_MLA"] == 64
    assert pages["CUTLASS_MLA"] == 128
    # MHA rows keep the plan's page size
    plan, _ = _plan("llama-3.1-8b", "h100")
    assert {r.page_size for r in _rows(plan)} == {None}


def test_mla_prefill_row_and_the_flashinfer_wrapper_row():
    from attn_select.selector.run_plan import MLA_PREFILL, MLA_WRAPPER

    plan, _ = _plan("deepseek-v3", "h200")
    by_kind = {sp.shape.kind: sp.rows for sp in plan.groups[0].shapes}
    assert not [r for r in by_kind["decode"] if r.backend == MLA_PREFILL]
    for kind in ("prefill", "mixed"):
        (pre,) = [r for r in by_kind[kind] if r.backend == MLA_PREFILL]
        assert (pre.variant, pre.mla_prefill, pre.fa_version, pre.skip) == ("FLASH_ATTN", "FLASH_ATTN", 3, None)
        assert pre.adapter == "attn_select.backends.run.mla_prefill:MLAPrefillFlashAttnAdapter" and not pre.selected
    (wrapper,) = [r for r in by_kind["decode"] if r.variant == MLA_WRAPPER]
    # FLASHINFER_MLA itself is SM100 only; its comparison row is not vLLM's path, so not skipped for it
    (fi,) = [r for r in by_kind["decode"] if r.backend == "FLASHINFER_MLA" and not r.variant]
    assert fi.skip and wrapper.skip is None and wrapper.page_size == 32
    assert {r.mla_prefill for r in by_kind["decode"]} == {"FLASH_ATTN"}  # the layer's, on every row
    # Blackwell: explain's choice (TRTLLM_RAGGED first only for 192/64/256 dims), here FLASH_ATTN;
    # an explicit choice without an adapter is listed with the reason
    plan, exp = _plan("deepseek-v3", "b200")
    (pre,) = [r for r in plan.groups[0].shapes[1].rows if r.backend == MLA_PREFILL]
    assert pre.mla_prefill == exp.groups[0].mla_prefill.selected == "FLASH_ATTN" and pre.skip is None
    plan, _ = _plan("deepseek-v3", "b200", Overrides(mla_prefill_backend="FLASHINFER"))
    (pre,) = [r for r in plan.groups[0].shapes[1].rows if r.backend == MLA_PREFILL]
    assert pre.mla_prefill == "FLASHINFER"
    assert pre.skip == "attn-select run has no adapter for vLLM's MLA prefill backend FLASHINFER"
    # --backend FLASHMLA keeps the prefill row (the backend whose prefills it runs)
    plan, _ = _plan("deepseek-v3", "h200", Overrides(backend="FLASHMLA"), only=("FLASHMLA",))
    assert [r.backend for r in plan.groups[0].shapes[1].rows] == ["FLASHMLA", MLA_PREFILL]


def test_sparse_mla_groups_carry_the_models_index_topk():
    plan, _ = _plan("deepseek-v3.2", "h200")
    g = plan.groups[0]
    assert g.attn.use_sparse and g.index_topk == 2048 and g.selected == "FLASH_ATTN_MLA_SPARSE"
    rows = {r.backend: r for r in _rows(plan) if not r.variant}
    assert rows["FLASH_ATTN_MLA_SPARSE"].skip is None and rows["FLASHMLA_SPARSE"].skip is None
    assert rows["FLASH_ATTN_MLA_SPARSE"].page_size == 64
    assert not [r for r in _rows(plan) if r.variant]  # the dense wrapper row compares nothing here


def test_a_plan_group_per_explanation_group():
    """Groups come from the explanation (which splits kv_cache_dtype skip
    layers off), not from the model's own group list."""
    plan, exp = _plan("gemma-3-27b", "h100")
    assert [g.name for g in plan.groups] == [g.name for g in exp.groups]
    assert [g.layers for g in plan.groups] == [len(g.group.layers) for g in exp.groups]


def test_only_restricts_the_rows():
    plan, _ = _plan("llama-3.1-8b", "h100", only=("TRITON_ATTN",))
    assert {r.backend for sp in plan.groups[0].shapes for r in sp.rows} == {"TRITON_ATTN"}
    assert plan.page_size == 16 and plan.kv_cache_dtype == "auto" and plan.model == "llama-3.1-8b"


def test_shape_facts():
    s = Shape("mixed", decodes=2, decode_context=10, prefills=1, prefill_new=4, prefill_context=3)
    assert (s.num_requests, s.num_tokens, s.kv_tokens()) == (3, 6, 2 * 11 + 7)
    assert s.describe() == "2 x 1 new on 10 + 1 x 4 new on 3"


def test_flash_attention_builder_facts_cover_the_models_fa_layers():
    """FlashAttention's builder turns AOT scheduling off when the model's
    FlashAttentionImpl layers differ in window (gpt-oss: sliding and full);
    the row carries those windows, the no-argument version and batch invariance."""
    plan, exp = _plan("gpt-oss-20b", "h100")
    windows = {g.group.attn.sliding_window for g in exp.groups}
    assert len(windows) == 2 and all(g.selected == "FLASH_ATTN" for g in plan.groups)
    for g in plan.groups:
        fa = next(r for r in g.shapes[0].rows if r.backend == "FLASH_ATTN")
        assert set(fa.flash_attn.layer_windows) == windows
        assert fa.flash_attn.version_noarg == exp.groups[0].fa_version_noarg.version == 3
        assert fa.flash_attn.batch_invariant is False
    plan, _ = _plan("llama-3.1-8b", "h100", Overrides(use_batch_invariant=True))
    fa = next(r for r in _rows(plan) if r.backend == "FLASH_ATTN")
    assert fa.flash_attn.layer_windows == (None,) and fa.flash_attn.batch_invariant is True
