"""vLLM's --quantization (EngineArgs.quantization) in the mirror: how the
given method meets the checkpoint's quantization_config in
ModelConfig._verify_quantization (the override hooks see the user's value;
otherwise the two must be equal), which config class get_quant_config then
builds for an unquantized checkpoint (online quantization, a config file in
the model folder, or a constructor that needs arguments), and that every
command takes the flag under vLLM's spellings. vLLM 0.33.0 sources:
vllm/config/model.py:1383-1485, model_executor/model_loader/weight_utils.py
:197-389, config/quantization.py:195-227; the same cases run against vLLM
itself in tests/selector/test_engine_config_vs_vllm.py (-k quantized_flag)."""

from __future__ import annotations

import json

import pytest

from attn_select.selector.config import Capability, Kernels
from attn_select.selector.engine_config import engine_config
from attn_select.selector.errors import UserError
from attn_select.selector.overrides import Overrides, field_for_flag
from attn_select.selector.profiles import load_model
from attn_select.selector.quant_methods import (METHODS, ONLINE, HummingRefusal, checkpoint_quant,
                                                flag_config_class, flag_method, kv_method_refuses_e5m2)

V100, T4, A100, H100 = Capability(7, 0), Capability(7, 5), Capability(8, 0), Capability(9, 0)
GPTQ = {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": True}
AWQ = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True}
LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 1024,
         "num_attention_heads": 8, "num_key_value_heads": 8, "num_hidden_layers": 2,
         "intermediate_size": 2048, "vocab_size": 1024, "torch_dtype": "bfloat16"}


def mismatch(checkpoint: str, flag: str) -> str:
    return (f"Quantization method specified in the model config ({checkpoint}) does not match the quantization "
            f"method specified in the `quantization` argument ({flag}).")


@pytest.mark.parametrize(("q", "model_type", "flag", "cap", "method"), [
    (None, "llama", "fp8", 90, "fp8"),
    (None, "llama", "FP8", 90, "fp8"),  # ModelConfig's validator lowers it
    (None, "llama", "marlin", 90, "marlin"),  # no checkpoint: refused later as unknown
    (GPTQ, "llama", "gptq_marlin", 90, "auto_gptq"),
    (GPTQ, "llama", "marlin", 90, "auto_gptq"),  # not a registered name, but AutoGPTQConfig takes it
    (AWQ, "llama", "awq_marlin", 90, "auto_awq"),
    (GPTQ, "llama", "moe_wna16", 90, "moe_wna16"),
    (AWQ, "llama", "moe_wna16", 75, "moe_wna16"),
    (GPTQ, "llama", "humming", 90, "humming"),  # placed first when given: claims any checkpoint
    ({"quant_method": "auto-round"}, "llama", "gptq", 90, "inc"),  # INCConfig ignores the flag
    ({"quant_method": "fp8"}, "llama", "deepseek_v4_fp8", 90, "deepseek_v4_fp8"),
    ({"quant_method": "fp8"}, "llama", "fp8", 90, "fp8"),
    ({"quant_method": "modelopt", "quantization": {"quant_algo": "FP8"}}, "llama", "fp8", 90, "modelopt"),
    ({"quant_method": "mxfp4"}, "gpt_oss", "mxfp4", 90, "gpt_oss_mxfp4"),
])
def test_the_method_the_flag_resolves_to(q, model_type, flag, cap, method):
    assert flag_method(flag, checkpoint_quant(q), model_type, cap) == method


@pytest.mark.parametrize(("q", "flag", "cap", "checkpoint"), [
    (GPTQ, "awq", 90, "gptq"),
    (GPTQ, "fp8", 90, "gptq"),
    (AWQ, "gptq", 90, "awq"),
    (AWQ, "moe_wna16", 70, "awq"),  # MoeWNA16Config takes AWQ only where AWQ runs (75)
    ({**GPTQ, "desc_act": True}, "moe_wna16", 90, "gptq"),
    ({**GPTQ, "bits": 3}, "moe_wna16", 90, "gptq"),
    ({"quant_method": "fp8"}, "fp8_per_tensor", 90, "fp8"),
    ({"quant_method": "compressed-tensors"}, "fp8", 90, "compressed-tensors"),
])
def test_a_flag_no_override_claims_must_equal_the_checkpoints_method(q, flag, cap, checkpoint):
    with pytest.raises(ValueError) as exc:
        flag_method(flag, checkpoint_quant(q), "llama", cap)
    assert str(exc.value) == mismatch(checkpoint, flag)


def test_humming_on_gpt_oss_mxfp4_has_its_own_refusal():
    with pytest.raises(HummingRefusal, match=r"^For gpt-oss model, use '--moe-backend humming' instead of "
                                             r"'--quantization humming'\.$"):
        flag_method("humming", checkpoint_quant({"quant_method": "mxfp4"}), "gpt_oss", 90)


@pytest.mark.parametrize(("method", "files", "cls"), [
    ("fp8", (), ONLINE),  # Fp8Config has no config file: online fp8_per_tensor
    ("fp8_per_block", (), ONLINE),
    ("mxfp4", (), ONLINE),  # not Mxfp4Config's 80 / bfloat16
    ("mxfp8", ("config.json",), ONLINE),  # no hf_quant_config.json: online
    ("experts_int8", (), METHODS["experts_int8"]),
    ("humming", (), METHODS["humming"]),
    ("gptq", ("config.json", "quantize_config.json"), METHODS["gptq"]),
    ("awq", ("config.json", "hf_quant_config.json"), METHODS["awq"]),  # it ends with quant_config.json
])
def test_the_class_an_unquantized_checkpoint_gets(method, files, cls):
    assert flag_config_class(method, files) == cls


@pytest.mark.parametrize(("method", "files", "kind", "message"), [
    ("gptq", ("config.json",), ValueError, "Cannot find the config file for gptq"),
    ("modelopt", ("config.json", "quantize_config.json"), ValueError, "Cannot find the config file for modelopt"),
    ("inc", ("config.json", "quantize_config.json"), ValueError, "Cannot find the config file for inc"),
    ("awq", ("quant_config.json", "quantize_config.json"), ValueError,
     "Found multiple config files for awq: ['quant_config.json', 'quantize_config.json']"),
    ("online", (), TypeError, "OnlineQuantizationConfig.__init__() missing 1 required positional argument: 'args'"),
    ("compressed-tensors", (), TypeError, "CompressedTensorsConfig.__init__() missing 3 required positional "
                                          "arguments: 'target_scheme_map', 'ignore', and 'quant_format'"),
])
def test_where_get_quant_config_refuses(method, files, kind, message):
    with pytest.raises(kind) as exc:
        flag_config_class(method, files)
    assert str(exc.value) == message


def _folder(tmp_path, config, **files):
    (tmp_path / "config.json").write_text(json.dumps(config))
    for name, content in files.items():
        (tmp_path / name).write_text(json.dumps(content))
    return str(tmp_path)


def test_online_mxfp4_runs_on_a_t4_where_an_mxfp4_checkpoint_does_not(tmp_path):
    model = load_model(_folder(tmp_path, LLAMA), capability=T4)
    ec = engine_config(model, Overrides(quantization="mxfp4", dtype="half"), T4, Kernels())
    assert ec.error is None
    assert [(s.field, s.old, s.new) for s in ec.trail] == [("model_config.quantization", None, "mxfp4")]
    checkpoint = load_model(_folder(tmp_path, {**LLAMA, "quantization_config": {"quant_method": "mxfp4"}}),
                            capability=T4)
    assert "Minimum capability: 80. Current capability: 75." in engine_config(
        checkpoint, Overrides(quantization="mxfp4"), T4, Kernels()).error


def test_the_flag_changes_no_selection_input(tmp_path):
    """vLLM 0.33.0 reads the KV-cache dtype default from the checkpoint's
    config, and online methods give Attention layers no KV-cache method: an
    accepted --quantization leaves every engine-config input as it was."""
    model = load_model(_folder(tmp_path, LLAMA), capability=H100)
    plain = engine_config(model, Overrides(), H100, Kernels())
    for flag in ("fp8", "fp8_per_tensor", "mxfp8", "experts_int8"):
        ec = engine_config(model, Overrides(quantization=flag), H100, Kernels())
        assert ec.error is None
        # the class built changes, but it gives Attention no KV-cache method
        assert not kv_method_refuses_e5m2(ec.quant_config_class, model.checkpoint_quant, use_mla=False)
        assert ec._replace(trail=(), quant_config_class=None) == plain._replace(trail=())


@pytest.mark.parametrize(("flag", "cap", "error"), [
    ("fp8", V100, "VllmConfig._get_quantization_config: The quantization method fp8 is not supported for the "
                  "current GPU. Minimum capability: 75. Current capability: 70."),
    ("awq", H100, "ModelConfig._verify_quantization: " + mismatch("auto_gptq", "awq").replace(
        "(auto_gptq)", "(gptq)")),
    ("gptq_marlin", V100, None),  # auto_gptq needs 6.0
])
def test_engine_config_on_a_gptq_or_plain_checkpoint(tmp_path, flag, cap, error):
    config = LLAMA if flag == "fp8" else {**LLAMA, "quantization_config": GPTQ}
    model = load_model(_folder(tmp_path, config), capability=cap)
    assert engine_config(model, Overrides(quantization=flag), cap, Kernels()).error == error


def test_the_dtype_check_uses_the_class_built(tmp_path):
    model = load_model(_folder(tmp_path, LLAMA), capability=H100, dtype="float32")
    assert engine_config(model, Overrides(quantization="fp8"), H100, Kernels()).error == (
        "VllmConfig._get_quantization_config: torch.float32 is not supported for quantization method fp8. "
        "Supported dtypes: [torch.bfloat16, torch.float16]")


def test_a_config_file_beside_config_json_is_found(tmp_path):
    model = load_model(_folder(tmp_path, LLAMA, **{"quantize_config.json": GPTQ}), capability=H100)
    assert engine_config(model, Overrides(quantization="gptq"), H100, Kernels()).error is None
    assert load_model(str(tmp_path / "config.json"), capability=H100).checkpoint_json == (
        "config.json", "quantize_config.json")


def test_a_profile_has_no_folder_to_look_in():
    model = load_model("llama-3.1-8b", capability=H100)
    with pytest.raises(UserError, match="--quantization gptq: the checkpoint has no quantization_config, so vLLM "
                                        "looks for quantize_config.json in the model folder"):
        engine_config(model, Overrides(quantization="gptq"), H100, Kernels())
    assert engine_config(model, Overrides(quantization="fp8"), H100, Kernels()).error is None


# --- the flag everywhere ----------------------------------------------------------


def test_vllms_spellings_set_the_field():
    assert field_for_flag("--quantization").name == "quantization"
    assert field_for_flag("-q").name == "quantization"


def test_a_serve_line_sets_it():
    from attn_select.selector import vllm_serve

    line = vllm_serve.parse_serve_line(vllm_serve.command_tokens(
        "vllm serve org/m -q fp8 --allow-deprecated-quantization", None))
    assert line.values == {"quantization": "fp8"}
    assert line.notes == ("not modelled, may change vLLM's selection: --allow-deprecated-quantization "
                          "(deprecated methods pass)",)
    assert vllm_serve.parse_serve_line(vllm_serve.command_tokens(
        "vllm serve org/m --quantization=awq_marlin", None)).values == {"quantization": "awq_marlin"}


HUMMING_ON_GPT_OSS = ("vLLM 0.33.0 refuses this engine config: ModelConfig._verify_quantization: For gpt-oss model, "
                      "use '--moe-backend humming' instead of '--quantization humming'.")


def test_explain_cli_refuses_with_vllms_words(capsys, tmp_path):
    from tests.cli.helpers import run

    folder = _folder(tmp_path, {**LLAMA, "quantization_config": GPTQ})
    rc, out, err = run(capsys, "explain", folder, "--device", "a100", "-q", "awq")
    assert rc == 2 and err.count("\n") == 1, err
    assert "vLLM 0.33.0 refuses this engine config: ModelConfig._verify_quantization: " + mismatch("gptq", "awq") in err
    rc, out, err = run(capsys, "explain", folder, "--device", "a100", "--quantization", "gptq_marlin")
    assert rc == 0, err
    # Mxfp4Config claims a gpt-oss checkpoint whatever the flag says; humming refuses it
    assert run(capsys, "explain", "gpt-oss-20b", "--device", "a100", "-q", "fp8")[0] == 0
    rc, out, err = run(capsys, "explain", "gpt-oss-20b", "--device", "a100", "-q", "humming")
    assert rc == 2 and HUMMING_ON_GPT_OSS in err, err


def test_deployments_file_lock_and_check(tmp_path, capsys):
    from tests.cli.helpers import run

    deps = tmp_path / "d.yaml"
    deps.write_text("deployments:\n  - name: oss\n    model: gpt-oss-20b\n    device: a100\n"
                    "    overrides: {quantization: gpt_oss_mxfp4}\n")
    lock = tmp_path / "x.lock"
    assert run(capsys, "lock", deps, "-o", lock)[0] == 0
    assert "quantization" in lock.read_text()
    assert run(capsys, "check", lock, "--deployments", deps)[0] == 0
    deps.write_text("deployments:\n  - name: oss\n    model: gpt-oss-20b\n    device: a100\n"
                    "    overrides: {quantization: humming}\n")
    rc, _, err = run(capsys, "lock", deps, "-o", tmp_path / "y.lock")
    assert rc == 2 and HUMMING_ON_GPT_OSS in err, err


@pytest.mark.parametrize("command", ["run", "tune"])
def test_run_and_tune_take_it(command, capsys):
    from tests.cli.helpers import run

    rc, _, err = run(capsys, command, "gpt-oss-20b", "--device", "cpu", "--capability", "8.0", "-q", "humming")
    assert rc == 2 and HUMMING_ON_GPT_OSS in err, err
