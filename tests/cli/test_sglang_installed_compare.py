"""The installed-SGLang comparison without an SGLang: the runner's answer
is made from the mirror's own resolution (what an SGLang that agrees would
say), then changed field by field; each change must be listed, and the
report rendered in every format, through the command line too."""

from __future__ import annotations

import json
import os

import pytest

from attn_select.selector import profiles
from attn_select.selector.config import Kernels
from attn_select.selector.sglang.explain import explain_sglang
from attn_select.selector.sglang.inputs import ServerFlags
from attn_select.selector.sglang_installed import case_for, installed_explanation
from tests.cli.helpers import run


def agreeing_answer(e, version: str = "0.5.24") -> dict:
    """What an SGLang that agrees with the mirror answers for ``e``."""
    r, p = e.resolution, e.platform
    case = {
        "final": dict(r.final), "backends": [r.prefill_backend, r.decode_backend],
        "changes": [[s.source, s.field, s.old, s.new] for s in r.trail],
        "error": None if r.error is None else {"kind": r.error.kind, "message": r.error.message,
                                               "where": r.error.source},
        "oracle_error": None, "default_rule": None if r.default_rule is None else r.default_rule.backend,
        "messages": [["_attention_backend_default", "INFO", "Attention backend not specified."]],
        "platform": {"device_capability": list(p.device_capability), "cuda_version": p.cuda_text() + ".1",
                     "has_flashinfer": p.has_flashinfer},
        "stand_ins": [],
    }
    return {"sglang_version": version, "stand_ins": ["device queries: test"], "cases": [case]}


def mirror(model: str = "llama-3.1-8b", device: str = "h100", **flags):
    dev = profiles.load_device(device)
    return explain_sglang(profiles.load_model(model, capability=dev.capability), dev, Kernels(), ServerFlags(**flags))


@pytest.fixture
def llama_h100():
    return mirror()


def test_an_agreeing_answer_has_no_differences(llama_h100):
    rep = installed_explanation(llama_h100, agreeing_answer(llama_h100), "/venv/bin/python")
    assert rep.differences == () and rep.ok
    assert rep.installed.resolution.attention_backend == "fa3" and rep.engine_version == "0.5.24"
    # SGLang's logged reason is the why of the step its function declared
    assert rep.installed.resolution.trail[0].why == "Attention backend not specified."
    case = case_for(llama_h100, "/models/llama")
    assert case["capability"] == [9, 0] and case["flags"] == {} and case["folder"] == "/models/llama"


@pytest.mark.parametrize("change, expected", [
    (lambda c: c["final"].update(attention_backend="triton"), "attention_backend: mirror fa3, SGLang 0.5.24 triton"),
    (lambda c: c.update(backends=["fa3", "flashinfer"]), "decode backend: mirror fa3, SGLang 0.5.24 flashinfer"),
    (lambda c: c.update(default_rule=None), "default rule: mirror fa3, SGLang 0.5.24 None"),
    (lambda c: c["changes"].pop(), "trail: mirror _page_size_default: page_size -> 1, SGLang 0.5.24 "),
    (lambda c: c["changes"].__setitem__(1, ["_other_pass", "page_size", None, 1]),
     "trail: mirror _page_size_default: page_size -> 1, SGLang 0.5.24 _other_pass: page_size -> 1"),
    (lambda c: c.update(error={"kind": "ValueError", "message": "no", "where": "x"}),
     "error: mirror None, SGLang 0.5.24 ValueError: no"),
    (lambda c: c["platform"].update(cuda_version="12.8"), "platform: CUDA version (torch.version.cuda): mirror 12.9"),
    (lambda c: c["platform"].update(has_flashinfer=False), "platform: flashinfer available: mirror True"),
    (lambda c: c.update(oracle_error="ServerArgs: TypeError: unexpected keyword"),
     "SGLang could not be given the case: mirror None, SGLang 0.5.24 ServerArgs: TypeError"),
])
def test_each_kind_of_difference_is_listed(llama_h100, change, expected):
    answer = agreeing_answer(llama_h100)
    change(answer["cases"][0])
    rep = installed_explanation(llama_h100, answer, "/venv/bin/python")
    assert any(expected in d for d in rep.differences), rep.differences


def test_an_error_on_both_sides_compares_the_error_only():
    m = mirror(kv_cache_dtype="nvfp4")  # SGLang refuses nvfp4 on Hopper
    assert m.resolution.error is not None
    answer = agreeing_answer(m)
    assert installed_explanation(m, answer, "/venv/bin/python").differences == ()
    answer["cases"][0]["error"]["message"] = "another text"
    rep = installed_explanation(m, answer, "/venv/bin/python")
    assert [c.field for c in rep.changes] == ["error"] and not rep.ok


def test_a_device_without_memory_is_told_of_a_small_gpu():
    m = mirror(device="h100")
    from dataclasses import replace

    m = replace(m, platform=replace(m.platform, gpu_memory_mib=None))
    assert case_for(m, "/m")["gpu_memory_mib"] == 24576.0
    rep = installed_explanation(m, agreeing_answer(m), "/venv/bin/python")
    assert any(s.startswith("GPU memory: 24 GiB") for s in rep.stand_ins)


@pytest.fixture
def fake_runner(monkeypatch):
    """The CLI with its runner answering from the mirror (or ``edit`` of it)."""
    from attn_select.cli import installed_engine as ie

    edits = []

    def fake_run(python, cases, *, live, timeout=None):
        assert len(cases) == 1 and not live
        answer = agreeing_answer(mirror(device="h100"))
        for edit in edits:
            edit(answer["cases"][0])
        assert cases[0]["capability"] == [9, 0] and cases[0]["has_flashinfer"] is True
        return answer

    monkeypatch.setattr(ie, "engine_python", lambda python, engine="vllm": (python or "/venv/bin/python", "0.5.24"))
    monkeypatch.setattr(ie, "sglang_environment", lambda python: {"flashinfer": True, "torch_cuda": "12.9"})
    monkeypatch.setattr(ie, "run_resolution", fake_run)
    return edits


ARGS = ("explain", "llama-3.1-8b", "--device", "h100", "--engine", "sglang-installed")


def test_the_command_line_renders_sglang_own_answer(fake_runner, capsys):
    rc, out, _ = run(capsys, *ARGS)
    assert rc == 0
    text = " ".join(out.split())
    assert "engine SGLang 0.5.24, its own resolution code" in text
    assert "stand-in device queries: test" in text
    assert "default rule fa3 (SGLang's get_default_attn_backend)" in text
    assert "prefill / decode fa3 / fa3" in text and "page size 1 (set by _page_size_default)" in text
    assert "Attention backend not specified." in text  # SGLang's reason, in the trail and the log
    assert "0 differences from the SGLang 0.5.23 mirror" in text


def test_every_format_lists_the_differences(fake_runner, capsys):
    fake_runner.append(lambda c: c["final"].update(attention_backend="triton"))
    rc, out, _ = run(capsys, *ARGS)
    assert rc == 0 and "1 difference from the SGLang 0.5.23 mirror" in out
    assert "attention_backend: mirror fa3, SGLang 0.5.24 triton" in " ".join(out.split())
    rc, out, _ = run(capsys, *ARGS, "--format", "json")
    doc = json.loads(out)
    assert doc["schema"] == "attn-select.explain-sglang-installed/1" and doc["engine"]["version"] == "0.5.24"
    assert doc["resolution"]["attention_backend"] == "triton" and doc["explain"]["attention_backend"] == "fa3"
    assert doc["differences"] == ["attention_backend: mirror fa3, SGLang 0.5.24 triton"]
    assert doc["stand_ins"] == ["device queries: test"] and doc["messages"][0]["function"] == "_attention_backend_default"
    rc, out, _ = run(capsys, *ARGS, "--format", "markdown")
    assert "## Differences from the SGLang 0.5.23 mirror" in out and "- attention_backend: mirror fa3" in out


def test_sglang_refusing_is_exit_1(fake_runner, capsys):
    fake_runner.append(lambda c: c.update(error={"kind": "ValueError", "message": "no", "where": "_check"}))
    rc, out, _ = run(capsys, *ARGS)
    assert rc == 1 and "ValueError: no" in out and "raised by _check" in out


def test_the_probe_follows_the_mirror_fields():
    """sglang_resolution.py runs without attn_select, so it has its own list
    of followed fields: it must be the mirror's."""
    import importlib.util

    from attn_select.backends.run.probes import FOLDER
    from attn_select.selector.sglang.resolve import FOLLOWED_FIELDS

    spec = importlib.util.spec_from_file_location("sglang_resolution_probe", FOLDER / "sglang_resolution.py")
    probe = importlib.util.module_from_spec(spec)
    environ = dict(os.environ)
    try:
        spec.loader.exec_module(probe)  # standard library only at import; it sets SGLang's offline switches
    finally:
        os.environ.clear()
        os.environ.update(environ)
    assert probe.FOLLOWED == FOLLOWED_FIELDS
