"""``--engine sglang-installed`` against the SGLang 0.5.23 that attn-select
mirrors: on every built-in model profile x device profile, SGLang's own
resolution (run by backends/run/probes/sglang_resolution.py in that venv,
with the stand-ins a CPU machine needs) and the mirror agree, zero
differences, with FlashInfer installed and without it.

Needs a venv with sglang==0.5.23 (``ATTN_SELECT_SGLANG_PYTHON``, default
/tmp/sglang-venv/bin/python) and a C compiler; skipped without them. One
subprocess answers every case (one SGLang import). Run it with
``pytest -m sglang tests/test_sglang_installed.py``.
"""

from __future__ import annotations

import os

import pytest

from attn_select.selector.engines import SGLANG_VERSION
from tests.installed_vllm import sglang_python_or_skip

pytestmark = [pytest.mark.sglang, pytest.mark.slow]

PYTHON = os.environ.get("ATTN_SELECT_SGLANG_PYTHON", "/tmp/sglang-venv/bin/python")


def test_every_profile_on_every_device_agrees_with_the_mirror(tmp_path):
    from attn_select.cli import installed_engine as ie
    from attn_select.selector import profiles
    from attn_select.selector.config import Kernels
    from attn_select.selector.errors import UserError
    from attn_select.selector.sglang.explain import explain_sglang
    from attn_select.selector.sglang.inputs import ServerFlags
    from attn_select.selector.sglang_installed import case_for, installed_explanation

    python = sglang_python_or_skip(PYTHON, SGLANG_VERSION, "ATTN_SELECT_SGLANG_PYTHON")
    installed = ie.sglang_environment(python)["flashinfer"]
    mirrors, cases, out_of_scope = [], [], []
    for model in profiles.model_profile_names():
        folder = ie.model_folder(model, str(tmp_path))
        for device in profiles.device_profile_names():
            dev = profiles.load_device(device)
            facts = profiles.load_model(model, capability=dev.capability)
            for flashinfer in {installed, False}:
                kern = Kernels(flashinfer_python=flashinfer, source="test")
                try:
                    r = explain_sglang(facts, dev, kern, ServerFlags())
                except UserError as e:  # an architecture whose rules the mirror does not model
                    out_of_scope.append((model, str(e)))
                    break
                mirrors.append((model, device, flashinfer, r))
                cases.append(case_for(r, folder))
    answer = ie.run_resolution(python, cases, live=False)
    assert answer["sglang_version"] == SGLANG_VERSION
    assert any("libcuda.so.1" in s for s in answer["stand_ins"]) or os.path.exists("/dev/nvidia0")
    differences = []
    for (model, device, flashinfer, r), case in zip(mirrors, answer["cases"]):
        report = installed_explanation(r, {**answer, "cases": [case]}, python)
        where = f"{model} on {device}{'' if flashinfer else ' without flashinfer'}"
        differences += [f"{where}: {d}" for d in report.differences]
    assert len(answer["cases"]) == len(mirrors)
    # the grid reaches several of SGLang's default-rule branches, not one answer
    assert len({c["final"]["attention_backend"] for c in answer["cases"]}) >= 4
    # every profile is in scope: a model that drops out must be noticed here
    assert not out_of_scope, out_of_scope
    assert len({m for m, *_ in mirrors}) == len(profiles.model_profile_names())
    assert not differences, "\n".join(differences)
