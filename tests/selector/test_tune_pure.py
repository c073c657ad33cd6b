"""tune's pure parts: the settings and their validation through explain,
workload parsing, the memory estimate, the recommendation, the sweep driver
(with a fake measure of run_model's signature) and the cache."""

from __future__ import annotations

import pytest

from attn_select.cli.inputs import resolve_kernels
from attn_select.selector.errors import UserError
from attn_select.selector.explain import explain
from attn_select.selector.overrides import Overrides
from attn_select.selector.profiles import load_device, load_model
from attn_select.selector.run_plan import Shape
from attn_select.selector.tune_plan import plan_sweep, run_sweep
from attn_select.selector.tune_result import (
    OK, WRONG, PointResult, ResultCache, best_per_point, cache_key, recommend,
)
from attn_select.selector.tune_settings import DEFAULT_LABEL, Setting, candidate_settings, stand_ins, validate
from attn_select.selector.tune_workload import deployment_kv_bytes, parse_workload, point_bytes, token_elements

H200 = load_device("h200")
KERN = resolve_kernels(None, probed_device=False)


def _explain_for(facts):
    return lambda ov: explain(facts, H200, KERN, ov)


def test_candidates_cover_each_variant_and_start_with_vllms_default():
    labels = [s.label for s in candidate_settings(use_mla=False)]
    assert labels[0] == DEFAULT_LABEL
    assert {"FLASH_ATTN fa2", "FLASH_ATTN fa3", "FLASHINFER trtllm on", "FLASHINFER trtllm off",
            "TRITON_ATTN", "FLEX_ATTENTION"} <= set(labels)
    mla = [s.backend for s in candidate_settings(use_mla=True)[1:]]
    assert "TRITON_MLA" in mla and "FLASHMLA" in mla and "FLASH_ATTN" not in mla


def test_settings_print_as_vllm_flags():
    s = Setting("x", backend="FLASHINFER", use_trtllm_attention=False)
    assert s.vllm_flags() == ["--attention-backend FLASHINFER", "--attention-config '{\"use_trtllm_attention\": false}'"]
    assert Setting(DEFAULT_LABEL).vllm_flags() == [] and Setting(DEFAULT_LABEL).is_default


def test_validation_drops_what_vllm_rejects_with_its_reason():
    """gpt-oss has sinks: FA2, FlashInfer's native path and flex are not valid for it."""
    facts = load_model("gpt-oss-20b", capability=H200.capability)
    kept, dropped = validate(candidate_settings(False), _explain_for(facts), Overrides())
    why = {d.setting.label: d.reason for d in dropped}
    assert "attention sinks not supported" in why["FLASH_ATTN fa2"]
    assert "attention sinks not supported" in why["FLEX_ATTENTION"]
    assert "FLASHINFER trtllm off" in why
    assert {s.label for s, _ in kept} >= {DEFAULT_LABEL, "FLASHINFER trtllm on", "TRITON_ATTN"}


def test_fp8_kv_drops_fa2_for_llama():
    facts = load_model("llama-3.1-8b", capability=H200.capability)
    kept, dropped = validate(candidate_settings(False), _explain_for(facts), Overrides(kv_cache_dtype="fp8"))
    assert "FLASH_ATTN fa2" in {d.setting.label for d in dropped}
    assert "FLASH_ATTN fa3" in {s.label for s, _ in kept}


@pytest.mark.parametrize("text, kind, dims", [
    ("decode:32x4096", "decode", (32, 4096)),
    ("decode:8x4k@2.5", "decode", (8, 4096)),
    ("prefill:4x512/1024", "prefill", (4, 512, 1024)),
    ("prefill:2x128", "prefill", (2, 128, 0)),
])
def test_workload_items(text, kind, dims):
    (item,) = parse_workload(text)
    s = item.shape
    assert s.kind == kind
    got = (s.decodes, s.decode_context) if kind == "decode" else (s.prefills, s.prefill_new, s.prefill_context)
    assert got == dims
    assert item.weight == (2.5 if "@" in text else 1.0)


@pytest.mark.parametrize("text", ["decode:32", "decode:0x4096", "decode:32x4096/8", "mixed:1x2",
                                  "prefill:4x0/8", "decode:axb", "decode:4x4096@-1", "decode:99999x99999"])
def test_bad_workload_items_are_user_errors(text):
    with pytest.raises(UserError) as e:
        parse_workload(text)
    assert "\n" not in str(e.value)


SWEEP_TOO_LARGE = ("the sweep has 16,384 points (64 batches x 64 contexts + 0 workload shapes, x 4 page sizes "
                   "x 1 KV dtypes), more than 4,096; give fewer values")


def test_a_sweep_past_max_points_is_refused_where_the_bound_is():
    """The count sat in cli/tune.py, away from MAX_POINTS (cli/ holds no logic)."""
    from attn_select.selector.tune_workload import MAX_POINTS, check_sweep_size

    check_sweep_size(32, 32, 0, 4, 1)  # exactly MAX_POINTS: taken
    assert 32 * 32 * 4 == MAX_POINTS
    with pytest.raises(UserError) as e:
        check_sweep_size(64, 64, 0, 4, 1)
    assert str(e.value) == SWEEP_TOO_LARGE
    with pytest.raises(UserError, match=r"^the sweep has 4,100 points \(32 batches x 32 contexts \+ 1 workload"):
        check_sweep_size(32, 32, 1, 1, 4)


def test_tune_says_the_same_of_a_sweep_too_large(capsys):
    from attn_select.cli.app import main

    values = ",".join(map(str, range(1, 65)))
    rc = main(["tune", "llama-3.1-8b", "--device", "cpu", "--batches", values, "--contexts", values,
               "--page-sizes", "16,32,64,128", "--kv-cache-dtypes", "auto", "--workload", "decode:1x16"])
    err = capsys.readouterr().err
    assert rc == 2 and err == "error: " + SWEEP_TOO_LARGE.replace("+ 0 workload", "+ 1 workload").replace(
        "16,384", "16,388") + "\n"


def test_workload_yaml_file(tmp_path):
    f = tmp_path / "mix.yaml"
    f.write_text("workload:\n  - {decode: 32x4096, weight: 0.9}\n  - {prefill: 4x512/1024, weight: 0.1}\n")
    items = parse_workload(str(f))
    assert [(i.shape.kind, i.weight) for i in items] == [("decode", 0.9), ("prefill", 0.1)]
    f.write_text("workload:\n  - {decode: 32xx4096}\n")
    with pytest.raises(UserError, match="item 1"):
        parse_workload(str(f))


def test_memory_estimate_grows_with_the_cache_and_skips_what_does_not_fit():
    small, big = Shape("decode", decodes=1, decode_context=1024), Shape("decode", decodes=256, decode_context=65536)
    elems = token_elements(False, 8, 128, 128)
    assert point_bytes(big, 16, elems, 2) > 100 * 2**30 > point_bytes(small, 16, elems, 2)
    facts = load_model("llama-3.1-8b", capability=H200.capability)
    sp = plan_sweep(facts, _explain_for(facts), candidate_settings(False)[:2], Overrides(), [small, big], (16,),
                    ("auto",), memory_bytes=139 * 2**30)
    assert {t.shape for t in sp.tasks} == {small}
    assert all("does not fit" in r.reason for r in sp.skipped) and len(sp.skipped) == 2


def test_points_no_deployment_reaches_are_skipped_by_the_whole_models_cache():
    # 256 x 16k fits one layer's run on an H200 (~17 GiB) but llama's 32 layers need ~512 GiB of KV cache
    fits, too_big = Shape("decode", decodes=32, decode_context=16384), Shape("decode", decodes=256,
                                                                              decode_context=16384)
    facts = load_model("llama-3.1-8b", capability=H200.capability)
    elems = token_elements(False, 8, 128, 128)
    assert point_bytes(too_big, 16, elems, 2) < 0.85 * 139 * 2**30
    assert 500 * 2**30 < deployment_kv_bytes(too_big, 16, facts.groups, 2) < 520 * 2**30
    sp = plan_sweep(facts, _explain_for(facts), candidate_settings(False)[:2], Overrides(), [fits, too_big], (16,),
                    ("auto",), memory_bytes=139 * 2**30)
    assert {t.shape for t in sp.tasks} == {fits}
    assert len(sp.skipped) == 2 and all("no deployment reaches it" in r.reason and "32 attention layers" in r.reason
                                        for r in sp.skipped)


def test_a_sliding_window_layer_holds_its_window_not_the_context():
    facts = load_model("gpt-oss-20b", capability=H200.capability)
    sliding = [g for g in facts.groups if g.attn.sliding_window]
    full = [g for g in facts.groups if not g.attn.sliding_window]
    assert sliding and full
    shape = Shape("decode", decodes=8, decode_context=65536)
    a = sliding[0].attn
    elems = token_elements(False, a.num_kv_heads, a.head_size, a.head_size_v)
    # per request and layer: the window plus the page being filled, against the whole context
    held = 8 * (a.sliding_window + 16)
    assert deployment_kv_bytes(shape, 16, sliding, 2) == (
        len(sliding[0].layers) * (-(-held // 16) + 8) * 16 * 2 * elems)
    assert deployment_kv_bytes(shape, 16, full, 2) == (
        len(full[0].layers) * (-(-8 * 65537 // 16) + 8) * 16 * 2 * elems)


def _pt(setting, us, status=OK, point="decode 32x4096", repeats=(), backend="FLASH_ATTN"):
    return PointResult(point=point, kind="decode", batch=32, context=4096, new_tokens=1, page_size=16,
                       kv_cache_dtype="auto", setting=setting, status=status, per_layer_us=us,
                       step_us=us * 32 + 10, repeats_us=list(repeats), backends=[backend])


def test_the_stand_ins_are_the_backends_run_measures_with_our_own_kernel():
    assert set(stand_ins()) == {"TRITON_ATTN", "FLEX_ATTENTION", "TRITON_MLA"}


def test_a_faster_stand_in_is_reported_but_the_fastest_of_vllms_kernels_is_recommended():
    res = [_pt(DEFAULT_LABEL, 151.0, repeats=[150.5]), _pt("TRITON_ATTN", 120.0, backend="TRITON_ATTN"),
           _pt("FLASHINFER trtllm off", 129.0, backend="FLASHINFER")]
    rec = recommend(res, WL, SETTINGS, DEFAULT_LABEL, stand_ins())
    assert rec.recommend and rec.best[0] == "FLASHINFER trtllm off"
    assert rec.margin == pytest.approx((151 * 32 - 129 * 32) / (151 * 32 + 10))
    assert "TRITON_ATTN measured" in rec.stand_in_note and "not recommended" in rec.stand_in_note
    best = best_per_point(res, DEFAULT_LABEL, stand_ins())[0]
    assert best.fastest == "TRITON_ATTN" and "unified_attention" in best.fastest_stand_in
    # without the stand-in map (a caller that knows none), the stand-in would have won
    assert recommend(res, WL, SETTINGS, DEFAULT_LABEL).best[0] == "TRITON_ATTN"


def test_only_stand_ins_measured_is_said_so():
    # a CPU sweep: vLLM's default (FLASH_ATTN) cannot run, only our TRITON_ATTN did
    res = [_pt(DEFAULT_LABEL, 0, status="skipped"), _pt("TRITON_ATTN", 120.0, backend="TRITON_ATTN")]
    res[0].per_layer_us = res[0].step_us = None
    rec = recommend(res, WL, SETTINGS, DEFAULT_LABEL, stand_ins())
    assert not rec.recommend and rec.text.startswith("only stand-ins ran correctly")
    rec = recommend(res[:1], WL, SETTINGS, DEFAULT_LABEL, stand_ins())
    assert rec.text.startswith("no configuration ran correctly")


def test_a_stand_in_default_gets_no_recommendation():
    # gemma-3 on Hopper: vLLM's default is TRITON_ATTN, which run measures with our kernel
    res = [_pt(DEFAULT_LABEL, 151.0, repeats=[150.5], backend="TRITON_ATTN"),
           _pt("FLASH_ATTN fa3", 100.0)]
    rec = recommend(res, WL, SETTINGS, DEFAULT_LABEL, stand_ins())
    assert not rec.recommend and "stand-in" in rec.text and "FLASH_ATTN fa3" in rec.text
    assert "vLLM's default here runs TRITON_ATTN" in rec.stand_in_note


def test_a_cached_point_from_before_the_backends_field_names_them_from_its_kernels(tmp_path):
    import json

    cache = ResultCache(tmp_path)
    r = _pt("TRITON_ATTN", 120.0, backend="TRITON_ATTN")
    r.kernels = "TRITON_ATTN: attn-select paged kernel (decode tiles 16x128); FLASH_ATTN: vLLM FA3"
    cache.put("ab" * 16, r)
    f = tmp_path / "ab" / ("ab" * 16 + ".json")
    data = json.loads(f.read_text())
    del data["backends"]
    f.write_text(json.dumps(data))
    assert cache.get("ab" * 16).backends == ["TRITON_ATTN", "FLASH_ATTN"]


SETTINGS = {s.label: s for s in candidate_settings(False)}
WL = [("decode 32x4096", 1.0)]


def test_a_win_beyond_the_noise_is_recommended_in_vllm_flags():
    res = [_pt(DEFAULT_LABEL, 151.0, repeats=[152.0, 150.5]), _pt("FLASHINFER trtllm off", 129.0)]
    rec = recommend(res, WL, SETTINGS, DEFAULT_LABEL)
    assert rec.recommend and rec.flags == ["--attention-backend FLASHINFER",
                                           "--attention-config '{\"use_trtllm_attention\": false}'"]
    assert rec.margin > rec.noise
    assert best_per_point(res, DEFAULT_LABEL)[0].fastest == "FLASHINFER trtllm off"


def test_a_win_within_the_noise_is_not():
    res = [_pt(DEFAULT_LABEL, 100.0, repeats=[110.0]), _pt("TRITON_ATTN", 97.0)]
    rec = recommend(res, WL, SETTINGS, DEFAULT_LABEL)
    assert not rec.recommend and "within noise" in rec.text


def test_a_wrong_result_is_never_the_winner():
    res = [_pt(DEFAULT_LABEL, 100.0, repeats=[100.5]), _pt("TRITON_ATTN", 10.0, status=WRONG)]
    rec = recommend(res, WL, SETTINGS, DEFAULT_LABEL)
    assert rec.best[0] == DEFAULT_LABEL and not rec.recommend
    assert best_per_point(res, DEFAULT_LABEL)[0].fastest == DEFAULT_LABEL


def test_a_page_size_win_adds_block_size():
    res = [_pt(DEFAULT_LABEL, 100.0, repeats=[100.2]), _pt(DEFAULT_LABEL, 80.0)]
    res[1].page_size = 64
    rec = recommend(res, WL, SETTINGS, DEFAULT_LABEL)
    assert rec.recommend and rec.flags == ["--block-size 64"]


class FakeReport:
    """A RunReport's shape, as run_model returns it for a selected-only plan."""

    def __init__(self, plan, us):
        from types import SimpleNamespace as NS

        self.groups = []
        for g in plan.groups:
            rows = [NS(backend=r.backend, variant=r.variant, status="ran", reason="", kernel="k", correct=True,
                       check=NS(rel_errors=[1e-3]),
                       perf=NS(per_layer_us=us, step_us=us * g.layers + 5, build_us=5.0, kv_bytes=1000,
                               first_call_s=0.1)) for sp in g.shapes for r in sp.rows]
            self.groups.append(NS(selected=g.selected, layers=g.layers, rows=rows))


def test_the_sweep_shares_same_kernel_points_repeats_the_default_and_caches(tmp_path):
    facts = load_model("llama-3.1-8b", capability=H200.capability)
    settings = candidate_settings(False)
    sp = plan_sweep(facts, _explain_for(facts), settings, Overrides(), [Shape("decode", decodes=8, decode_context=1024)],
                    (16,), ("auto",), memory_bytes=139 * 2**30)
    calls = []

    def measure(plan, check):
        calls.append((plan.groups[0].selected, check))
        return FakeReport(plan, 100.0 + len(calls))

    cache = ResultCache(tmp_path)
    res = run_sweep(sp, facts, measure, cache, {"gpu": "fake"}, repeats=3)
    by = {r.setting: r for r in res}
    assert len(by[DEFAULT_LABEL].repeats_us) == 2  # timed 3 times
    assert by["FLASH_ATTN fa3"].same_as == DEFAULT_LABEL  # vLLM's default is FA3 here
    assert "same kernels as vLLM default" in by["FLASH_ATTN fa3"].reason
    assert by["FLASH_ATTN fa3"].per_layer_us == by[DEFAULT_LABEL].per_layer_us
    first = len(calls)
    assert first == 3 + len(sp.tasks) - 2  # the default's repeats; fa3 not run again
    again = run_sweep(sp, facts, measure, cache, {"gpu": "fake"}, repeats=3)
    assert len(calls) == first and all(r.cached for r in again)
    run_sweep(sp, facts, measure, cache, {"gpu": "other"}, repeats=3)
    assert len(calls) > first  # another GPU: another key


def test_past_the_time_limit_runs_are_skipped_and_a_rerun_goes_on_from_the_cache(tmp_path):
    from attn_select.selector.tune_plan import OUT_OF_TIME

    facts = load_model("llama-3.1-8b", capability=H200.capability)
    sp = plan_sweep(facts, _explain_for(facts), candidate_settings(False), Overrides(),
                    [Shape("decode", decodes=8, decode_context=1024), Shape("decode", decodes=32, decode_context=1024)],
                    (16,), ("auto",), memory_bytes=139 * 2**30)
    calls = []

    def measure(plan, check):
        calls.append(plan.groups[0].selected)
        return FakeReport(plan, 100.0)

    cache = ResultCache(tmp_path)
    budget = iter([False, False])  # two tasks in time, then the clock has run out
    res = run_sweep(sp, facts, measure, cache, {"gpu": "fake"}, repeats=1, out_of_time=lambda: next(budget, True))
    late = [r for r in res if r.reason.startswith(OUT_OF_TIME)]
    measured = [r for r in res if r.status == "ok"]
    assert len(measured) >= 2 and late and all(r.status == "skipped" and r.per_layer_us is None for r in late)
    assert len(calls) == 2
    # the same sweep again, time to spare: the two finished runs come from the cache, the rest run
    again = run_sweep(sp, facts, measure, cache, {"gpu": "fake"}, repeats=1)
    assert not any(r.reason.startswith(OUT_OF_TIME) for r in again)
    assert sum(r.cached and not r.same_as for r in again) == 2
    # out of time from the start (--max-seconds 0): the cache's report, nothing measured
    n = len(calls)
    only_cached = run_sweep(sp, facts, measure, cache, {"gpu": "fake"}, repeats=1, out_of_time=lambda: True)
    assert len(calls) == n and not any(r.reason.startswith(OUT_OF_TIME) for r in only_cached)
    assert len(calls) - 2 == sum(not r.cached and not r.same_as for r in again if r.status == "ok") > 0


def test_cache_keys_change_with_every_fact():
    k = cache_key(env={"gpu": "a"}, shape="s", setting="x")
    assert k == cache_key(setting="x", shape="s", env={"gpu": "a"})
    assert k != cache_key(env={"gpu": "b"}, shape="s", setting="x")


def test_an_mla_model_sweeps_its_mla_backends():
    """DeepSeek-V3 on Hopper: vLLM's default (FLASH_ATTN_MLA) and the other MLA
    backends run has adapters for are tasks; a sparse backend is dropped."""
    facts = load_model("deepseek-v3", tp=8, capability=H200.capability)
    sp = plan_sweep(facts, _explain_for(facts), candidate_settings(True), Overrides(tp=8),
                    [Shape("decode", decodes=8, decode_context=1024)], (16,), ("auto",), memory_bytes=139 * 2**30)
    labels = [t.setting.label for t in sp.tasks]
    assert DEFAULT_LABEL in labels and "TRITON_MLA" in labels
    assert not [r for r in sp.skipped if r.setting == DEFAULT_LABEL]
    dropped = {d.setting.label: d.reason for d in sp.dropped[(16, "auto")]}
    assert "FLASHMLA_SPARSE" in dropped  # DeepSeek-V3 is not a sparse model

def test_a_default_out_of_time_is_not_called_a_failure():
    res = [_pt(DEFAULT_LABEL, 100.0), _pt("TRITON_ATTN", 90.0)]
    res[0].step_us = res[0].per_layer_us = None
    res[0].status, res[0].reason = "skipped", "past --max-seconds: not measured; run again with the same cache"
    rec = recommend(res, WL, SETTINGS, DEFAULT_LABEL)
    assert not rec.recommend and "was not measured in time" in rec.text and "did not run correctly" not in rec.text


def test_settings_picks_labels_or_whole_backends_and_keeps_the_default():
    from attn_select.selector.tune_settings import only_settings

    all_ = candidate_settings(False)
    picked = only_settings(all_, "FLASHINFER, triton_attn")
    assert [s.label for s in picked] == [DEFAULT_LABEL, "FLASHINFER trtllm on", "FLASHINFER trtllm off", "TRITON_ATTN"]
    assert [s.label for s in only_settings(all_, "FLASH_ATTN fa2")] == [DEFAULT_LABEL, "FLASH_ATTN fa2"]
    assert only_settings(all_, None) == all_


@pytest.mark.parametrize("bad", ["FLASHMLA", "", "FLASHINFER,nope"])
def test_settings_names_what_it_does_not_know(bad):
    from attn_select.selector.tune_settings import only_settings

    with pytest.raises(UserError) as e:
        only_settings(candidate_settings(False), bad)
    assert "--settings" in str(e.value) and "\n" not in str(e.value)
