"""``--engine vllm-installed`` against the vLLM 0.33.0 that attn-select
mirrors: on every built-in model profile x device profile, vLLM's own
selection code (run by backends/run/probes/vllm_selection.py in that venv, with the
stand-ins a CPU machine needs) and the mirror agree, zero differences,
down to each MLA layer's prefill backend (auto, and each one given
explicitly on an H100 and a B200).

Needs a venv with vllm==0.33.0 (``ATTN_SELECT_VLLM_PYTHON``, default
/tmp/vllm-venv/bin/python) and a C compiler; skipped without them. One
subprocess answers every case (one vLLM import). Run it with
``pytest -m vllm tests/test_vllm_installed.py``.
"""

from __future__ import annotations

import os

import pytest

from attn_select.selector.engines import VLLM_VERSION
from tests.installed_vllm import vllm_python_or_skip

pytestmark = [pytest.mark.vllm, pytest.mark.slow]

PYTHON = os.environ.get("ATTN_SELECT_VLLM_PYTHON", "/tmp/vllm-venv/bin/python")
# vLLM 0.33.0's MLAPrefillBackendEnum members that run on CUDA
PREFILL_BACKENDS = ("FLASH_ATTN", "FLASHINFER", "TRTLLM_RAGGED", "TOKENSPEED_MLA")

def _vllm_python() -> str:
    return vllm_python_or_skip(PYTHON, VLLM_VERSION, "ATTN_SELECT_VLLM_PYTHON")


def test_every_profile_on_every_device_agrees_with_the_mirror(tmp_path):
    from attn_select.cli import installed_engine as ie
    from attn_select.selector import profiles
    from attn_select.selector.engine_config import engine_config
    from attn_select.selector.errors import UserError
    from attn_select.selector.explain import explain
    from attn_select.selector.overrides import Overrides
    from attn_select.selector.vllm_installed import case_for, engine_case, installed_explanation, refusal_message

    python = _vllm_python()
    kernels = ie.installed_kernels(python)
    mirrors, cases, refusals = [], [], {}
    for model in profiles.model_profile_names():
        for device in profiles.device_profile_names():
            dev = profiles.load_device(device)
            facts = profiles.load_model(model, capability=dev.capability)
            folder = ie.model_folder(model, str(tmp_path))
            try:
                r = explain(facts, dev, kernels, Overrides())
            except UserError:
                # the mirror says vLLM refuses this engine config: vLLM must, with the same words
                refused = engine_config(facts, Overrides(), dev.capability, kernels).error
                assert refused is not None, (model, device)
                refusals[(model, device)] = refused.split(": ", 1)[1]
                mirrors.append((model, device, None))
                cases.append(engine_case(Overrides(), dev.capability, folder))
                continue
            mirrors.append((model, device, r))
            cases.append(case_for(r, folder))
    # The MLA prefill choice given explicitly, valid or not (vLLM's explicit path).
    for device in ("h100", "b200"):
        dev = profiles.load_device(device)
        facts = profiles.load_model("deepseek-v3", capability=dev.capability)
        for name in PREFILL_BACKENDS:
            r = explain(facts, dev, kernels, Overrides(mla_prefill_backend=name))
            mirrors.append((f"deepseek-v3 --mla-prefill-backend {name}", device, r))
            cases.append(case_for(r, ie.model_folder("deepseek-v3", str(tmp_path))))
    answer = ie.run_selection(python, cases, live=False, kernels=None, artifactory=kernels.trtllm_cubins)
    assert answer["vllm_version"] == VLLM_VERSION
    assert any("libcuda.so.1" in s for s in answer["stand_ins"]) or os.path.exists("/dev/nvidia0")
    differences = []
    prefill_compared = prefill_expected = 0
    for (model, device, r), case in zip(mirrors, answer["cases"]):
        if r is None:
            theirs = refusal_message(case["error"]) if case.get("error") else "(vLLM builds the engine config)"
            if theirs != refusals[(model, device)]:
                differences.append(f"{model} on {device}: the mirror refuses: {refusals[(model, device)]}; "
                                   f"vLLM {VLLM_VERSION}: {theirs}")
            continue
        one = {**answer, "cases": [case]}
        report = installed_explanation(r, one, python)
        assert len(report.groups) == len(r.groups) or report.error, (model, device)
        differences += [f"{model} on {device}: {d}" for d in report.differences]
        for g, mine in zip(r.groups, report.groups):
            prefill_expected += g.mla_prefill is not None
            prefill_compared += g.mla_prefill is not None and bool((mine.mla_prefill or {}).get("exposed"))
    assert len(mirrors) == len(profiles.model_profile_names()) * len(profiles.device_profile_names()) \
        + 2 * len(PREFILL_BACKENDS)
    # vLLM 0.33.0 has MLA prefill selection: every MLA layer's choice was compared
    assert prefill_expected > 2 * len(PREFILL_BACKENDS) and prefill_compared == prefill_expected
    assert not differences, "\n".join(differences)
    # vLLM 0.33.0 refuses gpt-oss's mxfp4 (min capability 80) on a T4: the refusal path was compared
    assert {("gpt-oss-20b", "t4"), ("gpt-oss-120b", "t4")} <= set(refusals)

