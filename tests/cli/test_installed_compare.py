"""The installed-vLLM comparison and the upgrade preview without a vLLM:
the runner's answer is made from the mirror's own explanation (what a vLLM
that agrees would say), then changed field by field; each change must be
listed, rendered in every format, and reach ``check --vllm-python``'s diff."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attn_select.selector import profiles
from attn_select.selector.config import Kernels
from attn_select.selector.explain import explain
from attn_select.selector.overrides import Overrides
from attn_select.selector.vllm_installed import case_for, installed_explanation
from tests.cli.helpers import run

EXAMPLE = Path(__file__).resolve().parents[2] / "profiles" / "lock" / "deployments.yaml"


def agreeing_answer(r, version: str = "0.31.0") -> dict:
    """What a vLLM that agrees with the mirror answers for ``r``."""
    from attn_select.selector.fa_version import resolve_fa_version
    from attn_select.selector.vllm_installed import _fa_call, _mirror_trtllm, _trtllm_inputs

    groups = []
    for g in r.groups:
        sel = g.selection
        inputs = _trtllm_inputs(g)
        groups.append({
            "name": g.name, "selector_config": dict(g.cfg._asdict()),
            "priorities": list(sel.priority_order), "reasons": {c.name: list(c.reasons) for c in sel.candidates},
            "selected": sel.selected, "error": sel.error, "warning": sel.warning,
            "fa_version": {"layer": None if g.cfg.use_mla else
                           resolve_fa_version(r.device.capability, r.kernels, r.ctx, **_fa_call(g)).version,
                           "noarg": g.fa_version_noarg.version},
            "trtllm": _mirror_trtllm(r, g, inputs) if inputs else None,
            "mla_prefill": agreeing_prefill(g),
        })
    m = r.model
    backend = next((s.new for s in reversed(r.engine_config_trail) if s.field == "attention_config.backend"),
                   r.overrides.backend)
    facts = {"dtype": m.dtype, "cache_dtype": r.ctx.cache_dtype, "block_size": None,
             "backend": None if backend is None else str(backend),
             "flash_attn_version": r.ctx.flash_attn_version, "use_mla": False, "head_size": m.head_size,
             "num_heads": m.num_heads, "num_kv_heads": m.num_kv_heads, "dcp_size": 1}
    return {"vllm_version": version, "stand_ins": ["device queries: test"],
            "cases": [{"engine_config": facts, "groups": groups, "error": None}]}


def agreeing_prefill(g) -> dict | None:
    """An MLA group's prefill decision as a vLLM that agrees reports it."""
    from attn_select.backends import registry

    p = g.mla_prefill
    if p is None:
        return None
    sparse = registry.BACKENDS[g.selection.selected].is_sparse
    return {"exposed": True, "sparse": sparse, "dense_mha_prefill": p.skipped is None,
            "selector_config": p.cfg.vllm_repr(), "priorities": list(p.priority_order),
            "reasons": {c.name: list(c.reasons) for c in p.candidates}, "selected": p.selected,
            "error": p.error, "explicit": p.backend}


@pytest.fixture
def llama_h100():
    dev = profiles.load_device("h100")
    return explain(profiles.load_model("llama-3.1-8b", capability=dev.capability), dev, Kernels(), Overrides())


def test_an_agreeing_answer_has_no_differences(llama_h100):
    rep = installed_explanation(llama_h100, agreeing_answer(llama_h100), "/venv/bin/python")
    assert rep.differences == () and rep.ok
    case = case_for(llama_h100, "/models/llama")
    assert case["capability"] == [9, 0] and case["groups"][0]["fa_call"]["head_size"] == 128


@pytest.mark.parametrize("change, expected", [
    (lambda g, f: g.update(selected="FLASHINFER"), "selected: mirror FLASH_ATTN, vLLM 0.31.0 FLASHINFER"),
    (lambda g, f: g["reasons"].update(FLASH_ATTN=["head_size not supported"]),
     "FLASH_ATTN reasons: mirror valid, vLLM 0.31.0 [head_size not supported]"),
    (lambda g, f: g.update(priorities=["FLASHINFER", "FLASH_ATTN", "TRITON_ATTN", "FLEX_ATTENTION", "TURBOQUANT"]),
     "priority list"),
    (lambda g, f: g["fa_version"].update(layer=2), "FA version (the layer's call): mirror 3, vLLM 0.31.0 2"),
    (lambda g, f: g["trtllm"].update(decode=False), "FlashInfer trtllm decode: mirror True, vLLM 0.31.0 False"),
    (lambda g, f: f.update(cache_dtype="fp8"), "engine config: cache_dtype: mirror auto, vLLM 0.31.0 fp8"),
    (lambda g, f: g.update(crash="AttributeError: no such thing"), "selection code raised AttributeError"),
])
def test_each_kind_of_difference_is_listed(llama_h100, change, expected):
    answer = agreeing_answer(llama_h100)
    change(answer["cases"][0]["groups"][0], answer["cases"][0]["engine_config"])
    rep = installed_explanation(llama_h100, answer, "/venv/bin/python")
    assert any(expected in d for d in rep.differences), rep.differences


@pytest.fixture
def deepseek_h100():
    dev = profiles.load_device("h100")
    return explain(profiles.load_model("deepseek-v3", capability=dev.capability), dev, Kernels(), Overrides())


def test_an_mla_group_compares_its_prefill_decision(deepseek_h100):
    answer = agreeing_answer(deepseek_h100)
    prefill = answer["cases"][0]["groups"][0]["mla_prefill"]
    assert prefill is not None and prefill["selected"] is not None
    assert installed_explanation(deepseek_h100, answer, "/venv/bin/python").differences == ()
    mirror_choice = prefill["selected"]
    prefill.update(selected="FLASHINFER" if mirror_choice != "FLASHINFER" else "FLASH_ATTN")
    prefill["reasons"]["TRTLLM_RAGGED"] = ["ImportError"]
    rep = installed_explanation(deepseek_h100, answer, "/venv/bin/python")
    assert any(f"MLA prefill selected: mirror {mirror_choice}, vLLM 0.31.0" in d for d in rep.differences)
    assert any("MLA prefill TRTLLM_RAGGED reasons" in d for d in rep.differences), rep.differences


def test_a_release_without_mla_prefill_selection_is_said_not_a_difference(deepseek_h100):
    from attn_select.cli.formats import render

    answer = agreeing_answer(deepseek_h100)
    answer["cases"][0]["groups"][0]["mla_prefill"] = {"exposed": False}
    rep = installed_explanation(deepseek_h100, answer, "/venv/bin/python")
    assert rep.differences == ()
    assert "this release has no MLA prefill selection" in " ".join(render(rep, "text").split())
    assert "no MLA prefill selection" in render(rep, "markdown")


def test_the_installed_text_shows_the_prefill_table(deepseek_h100):
    from attn_select.cli.formats import render

    answer = agreeing_answer(deepseek_h100)
    text = render(installed_explanation(deepseek_h100, answer, "/venv/bin/python"), "text")
    prefill = answer["cases"][0]["groups"][0]["mla_prefill"]
    assert "prefill backend" in text and f"prefill     {prefill['selected']}" in text
    assert "0 differences from the vLLM 0.33.0 mirror" in text


def test_a_refused_engine_config_is_a_difference(llama_h100):
    answer = agreeing_answer(llama_h100)
    answer["cases"][0] = {"engine_config": None, "groups": [], "error": "ValueError: nope"}
    rep = installed_explanation(llama_h100, answer, "/venv/bin/python")
    assert not rep.ok and rep.differences == ("vLLM 0.31.0 refuses this engine config: ValueError: nope",)


def test_every_format_renders_it(llama_h100):
    from attn_select.cli.formats import render

    answer = agreeing_answer(llama_h100)
    answer["cases"][0]["groups"][0]["selected"] = "FLASHINFER"
    rep = installed_explanation(llama_h100, answer, "/venv/bin/python")
    text = render(rep, "text")
    assert "engine vLLM 0.31.0, its own selection code" in text and "stand-in device queries: test" in text
    assert "1 difference from the vLLM 0.33.0 mirror" in text
    doc = json.loads(render(rep, "json"))
    assert doc["schema"] == "attn-select.explain-vllm-installed/1" and len(doc["differences"]) == 1
    assert "## Differences from the vLLM 0.33.0 mirror" in render(rep, "markdown")


def test_upgrade_preview_lists_and_explains_per_deployment(tmp_path, capsys, monkeypatch):
    """check --vllm-python with a runner that moves llama-8b to FLASHINFER
    with FA2 and turns off trtllm decode: each shows in the diff."""
    from attn_select.cli import installed_engine as ie

    deps = tmp_path / "deployments.yaml"
    deps.write_text(EXAMPLE.read_text())
    lock = tmp_path / "attn-select.lock"
    assert run(capsys, "lock", deps, "-o", lock)[0] == 0

    import attn_select.selector.vllm_installed as vi

    asked = {}  # id of each request case -> the mirror's explanation it was made from
    real_case_for = vi.case_for

    def recording_case_for(r, folder, load=None):
        case = real_case_for(r, folder, load)
        asked[id(case)] = r
        return case

    def fake_run(python, cases, **kwargs):
        out = []
        for case in cases:
            r = asked[id(case)]
            one = agreeing_answer(r)["cases"][0]
            if r.model.name == "llama-3.1-8b" and r.overrides.kv_cache_dtype is None:
                g = one["groups"][0]
                g["reasons"]["FLASH_ATTN"] = ["compute capability not supported"]
                g.update(selected="FLASHINFER")
                g["fa_version"]["layer"] = 2
                g["trtllm"] = {"decode": False, "prefill": False}
            out.append(one)
        return {"vllm_version": "0.31.0", "stand_ins": ["device queries: test"], "cases": out}

    monkeypatch.setattr(vi, "case_for", recording_case_for)
    monkeypatch.setattr(ie, "engine_python", lambda python: (python, "0.31.0"))
    monkeypatch.setattr(ie, "run_selection", fake_run)
    rc, out, err = run(capsys, "check", lock, "--vllm-python", "/venv/bin/python")
    assert rc == 1, err
    assert "upgrade preview: every vLLM deployment evaluated by vLLM 0.31.0's own selection code" in out
    assert "FAIL  llama-8b / full" in out
    assert "selected" in out and "FLASH_ATTN -> FLASHINFER" in out
    assert "FLASH_ATTN is now invalid: compute capability not supported" in out  # explained
    assert "flash_attn_version" in out and "3 -> 2" in out
    assert "kv_cache_layout" in out
    assert "FlashInfer trtllm decode" in out
    fails = [ln.split("  ")[1] for ln in out.splitlines() if ln.startswith("FAIL")]
    assert fails == ["llama-8b / full"]  # the other deployments agree


def test_the_preview_tells_a_refusal_from_a_crash_of_the_installed_release():
    from attn_select.selector.vllm_installed import engine_config_failure as _engine_config_failure

    assert _engine_config_failure("0.27.0", "ValueError: bad") == "vLLM 0.27.0 refuses this engine config: ValueError: bad"
    assert _engine_config_failure("0.27.0", "ValidationError: 1 validation error").startswith("vLLM 0.27.0 refuses")
    assert _engine_config_failure("0.27.0", "TypeError: type 'array.array' is not subscriptable") == (
        "vLLM 0.27.0 fails building this engine config (its own code raised): "
        "TypeError: type 'array.array' is not subscriptable")


def test_a_failed_engine_config_is_one_difference_per_group_not_every_candidate():
    from attn_select.selector.lock.compare import compare_group
    from attn_select.selector.lock.lockfile import LockGroup

    locked = LockGroup(group="mla", selected="FLASH_ATTN_MLA", error=None,
                       candidates={"FLASH_ATTN_MLA": [], "TRITON_MLA": []}, mla_prefill_backend="FLASH_ATTN")
    failed = locked.model_copy(update=dict(selected=None, error="vLLM 0.27.0 fails building this engine config"))
    diffs = compare_group("ds", locked, failed, ("deployments", 0, "groups", 0))
    assert [d.field for d in diffs] == ["selected", "error"] and diffs[0].detail is None


def _fake_release(monkeypatch, error):
    """The installed-engine plumbing answering an engine-only case as a release
    that refuses with ``error``, or builds it (None)."""
    from attn_select.cli import installed_engine as ie

    asked = []
    monkeypatch.setattr(ie, "engine_python", lambda python, engine="vllm": ("/venv/bin/python", "0.27.0"))

    def run_selection(python, cases, **kw):
        asked.append(cases)
        return {"vllm_version": "0.27.0", "stand_ins": ["libcuda.so.1: a stand-in"],
                "cases": [{"error": error, "engine_config": None if error else {}, "groups": []}]}

    monkeypatch.setattr(ie, "run_selection", run_selection)
    return asked


def test_a_refusal_of_the_mirror_asks_the_installed_release_which_builds_it(monkeypatch, capsys):
    from tests.cli.helpers import run

    asked = _fake_release(monkeypatch, None)
    code, out, _ = run(capsys, "explain", "llama-3.1-8b", "--device", "h100", "-q", "bitsandbytes",
                       "--engine", "vllm-installed", "--kernels", "fa3")
    assert code == 1
    assert len(asked) == 1 and asked[0][0]["groups"] == []  # the engine config alone: no per-layer inputs
    assert asked[0][0]["engine_args"]["quantization"] == "bitsandbytes"
    assert "answer      vLLM 0.27.0 builds this engine config" in out
    assert "engine config: vLLM 0.33.0 refuses it, vLLM 0.27.0 builds it" in out
    assert "stand-in    libcuda.so.1: a stand-in" in out
    code, doc_out, _ = run(capsys, "explain", "llama-3.1-8b", "--device", "h100", "-q", "bitsandbytes",
                           "--engine", "vllm-installed", "--kernels", "fa3", "--format", "json")
    import json

    doc = json.loads(doc_out)
    assert code == 1 and doc["installed_error"] is None and len(doc["differences"]) == 1


def test_a_refusal_both_releases_make_is_one_line_and_exit_2(monkeypatch, capsys):
    from tests.cli.helpers import run

    _fake_release(monkeypatch, "ValidationError: 1 validation error for ModelConfig\n  Value error, Unknown "
                               "quantization method: bitsandbytes. [type=value_error]")
    code, out, err = run(capsys, "explain", "llama-3.1-8b", "--device", "h100", "-q", "bitsandbytes",
                         "--engine", "vllm-installed", "--kernels", "fa3")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "vLLM 0.27.0 in /venv/bin/python refuses this engine config, as the vLLM 0.33.0 mirror refuses it: " \
           "Unknown quantization method: bitsandbytes." in err
