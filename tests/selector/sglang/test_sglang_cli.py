"""`attn-select explain --engine sglang|both`, lock and check with an engine,
end to end through the console entry point (no SGLang, no GPU)."""

import subprocess
import sys
from pathlib import Path

import pytest

from attn_select.cli.app import main
from tests.cli.helpers import doc, run




def test_sglang_json_fields(capsys):
    rc, d = doc(capsys, "explain", "llama-3.1-8b", "--device", "b200", "--engine", "sglang")
    assert rc == 0 and d["schema"] == "attn-select.explain-sglang/1"
    assert d["engine"] == {"name": "sglang", "version": "0.5.23"}
    assert d["attention_backend"] == "trtllm_mha" and d["page_size"] == 64
    assert d["page_size_source"] == "_mla_backend_page_constraints"
    assert d["default_rule"]["backend"] == "trtllm_mha"
    assert [t["source"] for t in d["trail"]] == ["_attention_backend_default", "_mla_backend_page_constraints"]
    assert d["device"]["cuda_version"] == "12.9" and d["device"]["cuda_version_source"] == "device profile b200"
    assert d["hybrid"] is False and d["error"] is None and d["ok"] is True


def test_dsa_json_reports_the_kv_rewrite(capsys):
    rc, d = doc(capsys, "explain", "deepseek-v3.2", "--device", "h100", "--engine", "sglang")
    assert d["attention_backend"] == "dsa" and d["page_size"] == 64
    assert d["kv_cache_dtype_rewrite"] == {"from": "auto", "to": "bfloat16", "source": "_dsa_kv_cache_dtype_default"}
    assert d["dsa_backends"] == {"prefill": "flashmla_sparse", "decode": "fa3"}


def test_sglang_text_report(capsys):
    rc, out, _ = run(capsys, "explain", "llama-3.1-8b", "--device", "h100", "--engine", "sglang",
                     "--kv-cache-dtype", "fp8_e5m2")
    assert rc == 0
    assert "engine SGLang 0.5.23" in out
    assert "_attention_backend_fa3_fp8_fallback" in out
    assert "attention backend  triton" in out


def test_flashinfer_absent_from_kernels(capsys):
    rc, d = doc(capsys, "explain", "llama-3.1-8b", "--device", "a100", "--engine", "sglang", "--kernels", "fa2")
    assert d["attention_backend"] == "triton" and d["device"]["has_flashinfer"] is False


def test_cuda_version_flag(capsys):
    rc, d = doc(capsys, "explain", "llama-3.1-8b", "--device", "b200", "--engine", "sglang", "--cuda-version", "12.6")
    assert d["attention_backend"] == "flashinfer" and d["device"]["cuda_version_source"] == "--cuda-version"


def test_speculative_flags(capsys):
    rc, d = doc(capsys, "explain", "llama-3.1-8b", "--device", "b200", "--engine", "sglang",
                "--speculative-algorithm", "EAGLE")
    assert d["attention_backend"] == "flashinfer"
    assert d["speculative"] == {"algorithm": "EAGLE", "num_steps": 5, "eagle_topk": 4, "num_draft_tokens": 8,
                                "draft_attention_backend": None}


def test_sglang_config_error_is_exit_1_with_its_text(capsys):
    rc, out, _ = run(capsys, "explain", "llama-3.1-8b", "--device", "rtx5090", "--engine", "sglang",
                     "--attention-backend", "trtllm_mha", "--kv-cache-dtype", "fp8_e4m3")
    assert rc == 1
    assert "ValueError: TRTLLM FMHAv2 prefill on SM120 does not support fp8_e4m3 KV cache or skip-softmax." in out
    rc, d = doc(capsys, "explain", "llama-3.1-8b", "--device", "a100", "--engine", "sglang",
                "--attention-backend", "trtllm_mha")
    assert rc == 1 and d["error"]["kind"] == "ValueError" and d["ok"] is False


@pytest.mark.parametrize("argv,needle", [
    (["--attention-backend", "fa9"], "unknown SGLang attention backend 'fa9'"),
    (["--page-size", "-4"], "--page-size must be a positive integer, got -4"),
    (["--page-size", "0"], "--page-size must be a positive integer, got 0"),
    (["--kv-cache-dtype", "fp8_inc"], "SGLang has no such KV-cache dtype"),
    (["--speculative-algorithm", "DFLASH"], "attn-select models EAGLE"),
    (["--cuda-version", "x"], "--cuda-version"),
    (["--backend", "FLASH_ATTN"], "--backend is a vLLM what-if"),
])
def test_bad_sglang_flags_are_one_line_exit_2(capsys, argv, needle):
    rc, out, err = run(capsys, "explain", "llama-3.1-8b", "--device", "h100", "--engine", "sglang", *argv)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and needle in err


def test_sglang_flag_with_vllm_engine_is_a_user_error(capsys):
    rc, _, err = run(capsys, "explain", "llama-3.1-8b", "--device", "h100", "--page-size", "64")
    assert rc == 2 and "--page-size is an SGLang flag" in err
    # --attention-backend is vLLM's flag too: with --engine vllm an SGLang name says so
    rc, _, err = run(capsys, "explain", "llama-3.1-8b", "--device", "h100", "--attention-backend", "fa3")
    assert rc == 2 and "'fa3' is an SGLang backend name" in err and "--engine sglang" in err


def test_engine_sglang_needs_a_model(capsys):
    rc, _, err = run(capsys, "explain", "--capability", "9.0", "--head-size", "128", "--engine", "sglang")
    assert rc == 2 and "needs a MODEL" in err


def test_both_on_a100_shows_fa2_against_flashinfer_with_both_reasons(capsys):
    rc, d = doc(capsys, "explain", "llama-3.1-8b", "--device", "a100", "--engine", "both")
    assert rc == 0 and d["schema"] == "attn-select.explain-both/1"
    row = d["rows"][0]
    assert row["vllm"]["backend"] == "FLASH_ATTN" and row["vllm"]["family"] == "FlashAttention 2"
    assert row["sglang"]["backend"] == "flashinfer"
    kernel_diffs = [x for x in d["differences"] if "kernels differ" in x]
    assert len(kernel_diffs) == 1
    line = kernel_diffs[0]
    assert "vLLM: FLASH_ATTN is the highest-priority valid backend" in line
    assert "FlashAttention 2" in line
    assert "SGLang: _attention_backend_default" in line and "flashinfer is installed" in line
    assert d["vllm"]["engine"]["name"] == "vllm" and d["sglang"]["engine"]["name"] == "sglang"


def test_both_text_table(capsys):
    rc, out, _ = run(capsys, "explain", "llama-3.1-8b", "--device", "h100", "--engine", "both")
    assert rc == 0
    assert "engines vLLM 0.33.0 and SGLang 0.5.23" in out
    assert "FlashAttention 3" in out and "page size differs" in out
    assert "kernels differ" not in out  # FA3 on both sides


def test_both_maps_kv_cache_dtype_names(capsys):
    rc, d = doc(capsys, "explain", "llama-3.1-8b", "--device", "h100", "--engine", "both", "--kv-cache-dtype", "fp8")
    assert d["sglang"]["kv_cache_dtype"] == "fp8_e4m3"
    assert d["vllm"]["groups"][0]["selector_config"]["kv_cache_dtype"] == "fp8"
    assert any("fp8 (vLLM's name) is SGLang's fp8_e4m3" in n for n in d["sglang"]["notes"])
    rc, d = doc(capsys, "explain", "llama-3.1-8b", "--device", "h100", "--engine", "both", "--kv-cache-dtype", "bf16")
    assert d["sglang"]["kv_cache_dtype"] == "bf16"
    assert d["vllm"]["groups"][0]["selector_config"]["kv_cache_dtype"] == "bfloat16"


def test_markdown_renders(capsys):
    rc, out, _ = run(capsys, "explain", "deepseek-v3", "--device", "b200", "--engine", "both", "--format", "markdown")
    assert "| group | layers | vLLM backend" in out and "`trtllm_mla`" in out
    rc, out, _ = run(capsys, "explain", "deepseek-v3", "--device", "b200", "--engine", "sglang", "--format", "markdown")
    assert "**Attention backend: `trtllm_mla`**" in out


DEPLOYMENTS = """
deployments:
  - name: llama-b200
    model: llama-3.1-8b
    device: b200
    engine: both
  - name: dsv32
    model: deepseek-v3.2
    device: h100
    engine: sglang
  - name: e5m2
    model: llama-3.1-8b
    device: h100
    engine: sglang
    sglang:
      kv_cache_dtype: fp8_e5m2
  - name: plain
    model: qwen3-8b
    device: h100
"""


def test_lock_and_check_with_engines(tmp_path, capsys):
    deps = tmp_path / "deps.yaml"
    deps.write_text(DEPLOYMENTS)
    lock = tmp_path / "lock.yaml"
    assert main(["lock", str(deps), "-o", str(lock)]) == 0
    text = lock.read_text()
    assert text.count("engine: sglang-0.5.23") == 3
    assert "attention_backend: triton" in text and "kv_cache_dtype: bfloat16" in text
    capsys.readouterr()
    assert main(["check", str(lock)]) == 0
    assert main(["check", str(lock), "--deployments", str(deps)]) == 0
    # An SGLang result changes: check reports it at its line.
    lock.write_text(text.replace("attention_backend: triton", "attention_backend: fa3"))
    capsys.readouterr()
    assert main(["check", str(lock)]) == 1
    out = capsys.readouterr().out
    assert "e5m2 / sglang" in out and "attention_backend" in out and "fa3 -> triton" in out


def test_lock_engine_option_and_recorded_version(tmp_path, capsys):
    deps = tmp_path / "deps.yaml"
    deps.write_text("deployments:\n  - name: a\n    model: llama-3.1-8b\n    device: a100\n")
    lock = tmp_path / "lock.yaml"
    assert main(["lock", str(deps), "-o", str(lock), "--engine", "sglang"]) == 0
    text = lock.read_text()
    assert "    engine: sglang\n" in text and "engine: sglang-0.5.23" in text and "groups: []" in text
    assert main(["check", str(lock)]) == 0
    assert main(["check", str(lock), "--deployments", str(deps), "--engine", "sglang"]) == 0
    # An older SGLang recorded in the lock is a difference.
    lock.write_text(text.replace("sglang-0.5.23", "sglang-0.5.22"))
    capsys.readouterr()
    assert main(["check", str(lock)]) == 1
    assert "sglang-0.5.22 -> sglang-0.5.23" in capsys.readouterr().out


def test_bad_sglang_value_in_deployments_is_reported_at_its_line(tmp_path, capsys):
    deps = tmp_path / "deps.yaml"
    deps.write_text("deployments:\n  - name: a\n    model: llama-3.1-8b\n    device: a100\n    engine: sglang\n"
                    "    sglang:\n      page_size: -1\n")
    assert main(["lock", str(deps)]) == 2
    err = capsys.readouterr().err
    assert f"{deps}:7" in err and "page-size must be a positive integer" in err


def test_vllm_path_imports_no_sglang_module():
    code = ("import sys\nfrom attn_select.cli.app import main\nrc = main(['explain', 'llama-3.1-8b', '--device', "
            "'h100'])\nprint('SGL=' + ','.join(m for m in sys.modules if m.startswith('attn_select.selector.sglang')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         cwd=Path(__file__).resolve().parents[3])
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("SGL=")][-1]
    assert line == "SGL=", line


def test_both_imports_nothing_heavy():
    code = ("import sys\nfrom attn_select.cli.app import main\nrc = main(['explain', 'llama-3.1-8b', '--device', "
            "'h100', '--engine', 'both'])\nprint('HEAVY=' + ','.join(m for m in ('torch', 'sglang', 'vllm', "
            "'flashinfer', 'triton') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("HEAVY=")][-1]
    assert line == "HEAVY=", line


def test_model_vllm_builds_without_a_selection_is_still_sglangs_to_resolve(tmp_path, capsys):
    """MiMo-V2-Flash (v head 128, head 192 on every layer) never reaches
    vLLM's get_attn_backend, so the vLLM engine refuses it; SGLang 0.5.23
    resolves it from the config alone (_mimo_v2_overrides: fa4 on SM100)."""
    import json

    from tests.selector.model_cases_text import _mimo_v2_flash

    (tmp_path / "config.json").write_text(json.dumps(_mimo_v2_flash()))
    rc, d = doc(capsys, "explain", str(tmp_path), "--device", "b200", "--engine", "sglang")
    assert rc == 0 and d["attention_backend"] == "fa4" and d["page_size"] == 128
    assert [t["source"] for t in d["trail"]] == ["_mimo_v2_overrides", "_fa4_page_constraint"]
    assert d["model"]["has_attention_sinks"] is True and d["model"]["has_asymmetric_kv"] is True
    rc, d = doc(capsys, "explain", str(tmp_path), "--device", "h100", "--engine", "sglang")
    assert rc == 0 and d["attention_backend"] == "fa3" and d["page_size"] == 1
    # the vLLM engine (and so --engine both) still says there is nothing to select
    rc, _, err = run(capsys, "explain", str(tmp_path), "--device", "b200")
    assert rc == 2 and "never calls get_attn_backend" in err
    deps = tmp_path / "deps.yaml"
    deps.write_text(f"deployments:\n  - name: mimo\n    model: {tmp_path}\n    device: b200\n    engine: sglang\n")
    lock = tmp_path / "lock.yaml"
    assert main(["lock", str(deps), "-o", str(lock)]) == 0
    assert "attention_backend: fa4" in lock.read_text()
