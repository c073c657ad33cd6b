"""The upgrade preview (``check LOCK --vllm-python``) against an older vLLM
from the registry, run for real: vLLM 0.27.0's own selection code over a
lock made by the 0.33.0 mirror. The differences it must list, each with the
deployment and group it concerns and why, are known from reading both
releases' sources: 0.27.0 has no FLASHINFER_MLA_SPARSE_SM90 backend, its
FLASHINFER rejects attention sinks, and it gives Gemma-2 on Blackwell
FlashAttention 4 where 0.33.0 keeps 2.

Needs a venv with vllm==0.27.0 (``ATTN_SELECT_VLLM_027_PYTHON``, default
/tmp/vllm-027/bin/python) and a C compiler on a machine without the NVIDIA
driver; skipped without them. Run it with
``pytest -m vllm tests/test_vllm_upgrade_preview.py``.
"""

from __future__ import annotations

import os

import pytest

from tests.cli.helpers import run
from tests.installed_vllm import vllm_python_or_skip

pytestmark = [pytest.mark.vllm, pytest.mark.slow]

PYTHON = os.environ.get("ATTN_SELECT_VLLM_027_PYTHON", "/tmp/vllm-027/bin/python")
OLD = "0.27.0"

DEPLOYMENTS = """\
deployments:
  - name: gemma-2-9b@b200
    model: gemma-2-9b
    device: b200
  - name: gpt-oss-20b@h100
    model: gpt-oss-20b
    device: h100
  - name: deepseek-v3.2@h100
    model: deepseek-v3.2
    device: h100
  - name: llama-8b@h100
    model: llama-3.1-8b
    device: h100
"""


def _old_vllm() -> str:
    return vllm_python_or_skip(PYTHON, OLD, "ATTN_SELECT_VLLM_027_PYTHON")


def test_the_preview_lists_and_explains_each_deployment_that_changes(tmp_path, capsys):
    python = _old_vllm()
    deps = tmp_path / "deployments.yaml"
    deps.write_text(DEPLOYMENTS)
    lock = tmp_path / "upgrade.lock"
    assert run(capsys, "lock", deps, "-o", lock)[0] == 0
    rc, out, err = run(capsys, "check", lock, "--vllm-python", python, "--format", "json")
    assert rc == 1, err
    import json

    doc = json.loads(out)
    found = {(d["deployment"], d["group"], d["field"]): (d["locked"], d["new"]) for d in doc["differences"]}
    assert found[("gemma-2-9b@b200", "full", "flash_attn_version")] == (2, 4)
    assert found[("gpt-oss-20b@h100", "full", "candidates.FLASHINFER")][1] == ["attention sinks not supported"]
    assert found[("deepseek-v3.2@h100", "sparse_mla", "candidates.FLASHINFER_MLA_SPARSE_SM90")] == ([], "(absent)")
    assert not any(d == "llama-8b@h100" for d, _, _ in found)  # unchanged in 0.27.0
    assert any(f"vLLM {OLD}'s own selection code" in w["message"] for w in doc["warnings"])


def test_a_config_the_mirror_refuses_is_asked_of_the_installed_release(capsys):
    """bitsandbytes left vLLM's registry after 0.27.0: the 0.33.0 mirror refuses
    it, vLLM 0.27.0's own engine config builds it, and the report says so."""
    python = _old_vllm()
    code, out, _ = run(capsys, "explain", "llama-3.1-8b", "--device", "h100", "-q", "bitsandbytes",
                       "--engine", "vllm-installed", "--vllm-python", python)
    assert code == 1
    assert f"answer      vLLM {OLD} builds this engine config" in out
    assert "mirror      vLLM 0.33.0 refuses this engine config" in out and "bitsandbytes" in out
    assert f"1 difference from the vLLM 0.33.0 mirror:\n  engine config: vLLM 0.33.0 refuses it, vLLM {OLD} builds it" \
        in out
    assert "stand-in    libcuda.so.1" in out or "/dev/nvidia0" not in out
