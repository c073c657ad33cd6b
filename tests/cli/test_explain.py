"""`attn-select explain` end to end through the console entry point."""

import json

import pytest

from tests.cli.helpers import doc, run




def selected(d, group=0):
    return d["groups"][group]["selected"]


def test_llama_on_h100_is_flash_attn_3(capsys):
    rc, d = doc(capsys, "explain", "llama-3.1-8b", "--device", "h100")
    assert rc == 0
    assert selected(d) == "FLASH_ATTN"
    assert d["groups"][0]["flash_attn_version"]["version"] == 3
    assert len(d["groups"][0]["selector_config"]) == 18


def test_llama_on_b200_is_flashinfer(capsys):
    rc, d = doc(capsys, "explain", "llama-3.1-8b", "--device", "b200")
    assert rc == 0 and selected(d) == "FLASHINFER"
    assert d["groups"][0]["priority_order"][0] == "FLASHINFER"


def test_llama_on_a100_is_flash_attn_2(capsys):
    rc, d = doc(capsys, "explain", "llama-3.1-8b", "--device", "a100")
    assert rc == 0 and selected(d) == "FLASH_ATTN"
    assert d["groups"][0]["flash_attn_version"]["version"] == 2


def test_llama_on_t4_falls_to_a_backend_without_flash_attn(capsys):
    # FA needs >= 8.0 and FlashInfer's floor is 8.0 in 0.33.0: Triton is next.
    rc, d = doc(capsys, "explain", "llama-3.1-8b", "--device", "t4")
    assert rc == 0 and selected(d) == "TRITON_ATTN"
    reasons = {c["backend"]: c["reasons"] for c in d["groups"][0]["candidates"]}
    assert "compute capability not supported" in reasons["FLASH_ATTN"]
    assert "compute capability not supported" in reasons["FLASHINFER"]


def test_gemma3_has_two_groups(capsys):
    rc, d = doc(capsys, "explain", "gemma-3-27b", "--device", "h100")
    assert rc == 0
    names = [g["name"] for g in d["groups"]]
    assert len(names) == 2
    assert {g["selector_config"]["has_sliding_window"] for g in d["groups"]} == {True, False}


@pytest.mark.parametrize("device", ["h100", "b200"])
def test_deepseek_v3_is_mla(capsys, device):
    rc, d = doc(capsys, "explain", "deepseek-v3", "--device", device)
    assert rc == 0
    assert d["groups"][0]["selector_config"]["use_mla"] is True
    assert selected(d).endswith("MLA")


def test_invalid_explicit_backend_prints_vllms_text_and_exits_1(capsys):
    rc, out, err = run(capsys, "explain", "gpt-oss-20b", "--device", "a100", "--backend", "FLASHINFER",
                       "--format", "json")
    d = json.loads(out)
    assert rc == 1
    err_text = d["groups"][0]["error"]
    assert err_text.startswith(
        "Selected backend AttentionBackendEnum.FLASHINFER is not valid for this configuration. Reason: ['")


@pytest.mark.parametrize("device, order", [("h100", ["FLASH_ATTN"]),
                                           ("b200", ["FLASH_ATTN", "TRTLLM_RAGGED", "FLASHINFER", "TOKENSPEED_MLA"])])
def test_deepseek_v3_shows_its_mla_prefill_backend(capsys, monkeypatch, device, order):
    rc, d = doc(capsys, "explain", "deepseek-v3", "--device", device)
    p = d["groups"][0]["mla_prefill"]
    assert rc == 0 and p["selected"] == "FLASH_ATTN" and p["priority_order"] == order
    assert p["selector_config"] == {"dtype": "bfloat16", "mla_dimensions": {
        "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128}}
    monkeypatch.setenv("COLUMNS", "100")
    rc, out, _ = run(capsys, "explain", "deepseek-v3", "--device", device)
    assert "prefill_config dtype=bfloat16 qk_nope_head_dim=128 qk_rope_head_dim=64 v_head_dim=128" in out
    assert "prefill     FLASH_ATTN  (first valid in priority order; vLLM checks no further)" in out
    assert max(len(line) for line in out.splitlines() if "prefill" in line) <= 100


def test_invalid_mla_prefill_backend_prints_vllms_text_and_exits_1(capsys):
    rc, d = doc(capsys, "explain", "deepseek-v3", "--device", "h100", "--mla-prefill-backend", "flashinfer")
    assert rc == 1 and d["ok"] is False
    assert d["groups"][0]["mla_prefill"]["error"] == (
        "Selected MLA prefill backend FLASHINFER is not valid for this configuration. "
        "Reason: ['compute capability 9.0 not supported']")
    rc, out, _ = run(capsys, "explain", "deepseek-v3", "--device", "h100", "--mla-prefill-backend", "flashinfer",
                     "--format", "markdown")
    assert rc == 1 and "**Error:** Selected MLA prefill backend FLASHINFER" in out


def test_valid_mla_prefill_backend_is_explicit(capsys):
    rc, d = doc(capsys, "explain", "deepseek-v3", "--device", "b200", "--mla-prefill-backend", "trtllm_ragged")
    p = d["groups"][0]["mla_prefill"]
    assert rc == 0 and p["backend"] == "TRTLLM_RAGGED" and p["selected"] == "TRTLLM_RAGGED"
    assert d["overrides"] == {"mla_prefill_backend": "trtllm_ragged"}


@pytest.mark.parametrize("argv, needle", [
    (["deepseek-v3", "--device", "h100", "--mla-prefill-backend", "FLASH_ATN"], "did you mean FLASH_ATTN?"),
    (["deepseek-v3", "--device", "h100", "--mla-prefill-backend", "auto"], "unknown MLA prefill backend 'auto'"),
    (["--capability", "9.0", "--head-size", "576", "--use-mla", "--mla-prefill-backend", "FLASH_ATTN"],
     "--mla-prefill-backend needs a MODEL"),
])
def test_bad_mla_prefill_backend_is_one_line_exit_2(capsys, argv, needle):
    rc, out, err = run(capsys, "explain", *argv)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2 and len(lines) == 1 and needle in lines[0] and "Traceback" not in err


def test_non_mla_json_has_no_mla_prefill_key(capsys):
    rc, d = doc(capsys, "explain", "gemma-3-27b", "--device", "h100")
    assert rc == 0 and all("mla_prefill" not in g for g in d["groups"])
    rc, d = doc(capsys, "explain", "--capability", "9.0", "--head-size", "576", "--use-mla")
    assert d["groups"][0]["mla_prefill"] is None  # no model: nothing to read the dims from


def test_raw_selector_config_without_model(capsys):
    rc, d = doc(capsys, "explain", "--capability", "8.0", "--head-size", "576", "--use-mla",
                "--num-heads", "16")
    assert rc in (0, 1)
    assert d["model"] is None
    assert d["groups"][0]["selector_config"]["use_mla"] is True
    assert d["groups"][0]["num_heads"] == 16


def test_text_output_names_the_choice(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "160")
    rc, out, _ = run(capsys, "explain", "llama-3.1-8b", "--device", "h100")
    assert rc == 0
    assert "selected    FLASH_ATTN" in out
    assert "FlashAttention 3" in out


def test_markdown_output(capsys):
    rc, out, _ = run(capsys, "explain", "llama-3.1-8b", "--device", "h100", "--format", "markdown")
    assert rc == 0 and "**Selected: `FLASH_ATTN`**" in out and "| 0 | `FLASH_ATTN` | selected |" in out


def test_json_is_deterministic(capsys):
    a = run(capsys, "explain", "gemma-3-27b", "--device", "b200", "--format", "json")[1]
    b = run(capsys, "explain", "gemma-3-27b", "--device", "b200", "--format", "json")[1]
    assert a == b


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["explain", "llama-3.1-8b", "--device", "h1000"], "h100"),  # closest profile
        (["explain", "lama-3.1-8b", "--device", "h100"], "llama-3.1-8b"),
        (["explain", "llama-3.1-8b", "--device", "h100", "--backend", "FLASHINFR"], "FLASHINFER"),
        (["explain", "--capability", "9.0", "--head-size", "0"], "--head-size must be a positive integer"),
        (["explain", "--capability", "9.0", "--head-size", "-64"], "--head-size must be a positive integer"),
        (["explain", "--capability", "9.0", "--head-size", "128", "--dtype", "fp64"], "dtype"),
        (["explain", "--capability", "9.0", "--head-size", "128", "--kv-cache-dtype", "int3"], "KV-cache dtype"),
        (["explain", "--capability", "nine", "--head-size", "128"], "capability"),
        (["explain", "--capability", "9.0"], "--head-size"),
        (["explain", "--capability", "9.0", "--head-size", "128", "--kernels", "fa5"], "fa5"),
        (["explain", "--device", "h100", "--capability", "9.0", "--head-size", "128"], "either"),
    ],
)
def test_bad_input_is_one_line_exit_2(capsys, argv, needle):
    rc, out, err = run(capsys, *argv)
    assert rc == 2
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert needle in lines[0]
    assert "Traceback" not in err


def test_no_gpu_and_no_device_is_exit_2(capsys, monkeypatch):
    import attn_select.selector.host.kernel_probe as probe

    monkeypatch.setattr(probe, "probe_gpu", lambda: None)
    rc, out, err = run(capsys, "explain", "llama-3.1-8b")
    assert rc == 2 and "h100" in err and "--capability" in err
