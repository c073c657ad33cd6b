"""vLLM 0.33.0's quantization refusals in the mirror: the method a
checkpoint resolves to (model_config.quantization), the min-capability table,
where the refusals sit among the engine-config steps, and what every command
that goes through explain does with them. The facts come from
vllm/config/model.py _verify_quantization, vllm/config/vllm.py
_get_quantization_config and each config class's get_min_capability (see
selector/quant_methods.py); tests/selector/test_engine_config_vs_vllm.py
checks the same cases against vLLM itself."""

from __future__ import annotations

import ast
import json

import pytest

from attn_select.selector.config import Capability, Kernels
from attn_select.selector.device import Device
from attn_select.selector.engine_config import engine_config
from attn_select.selector.errors import UserError
from attn_select.selector.explain import Overrides, explain
from attn_select.selector.profiles import load_model
from attn_select.selector.quant_methods import METHODS, capability_error, dtype_error, resolved_method
from tests.selector.test_engine_config import gemma4, llama
from tests.vllm_source import vllm_source

T4, A100, V100, B200 = Capability(7, 5), Capability(8, 0), Capability(7, 0), Capability(10, 0)
MXFP4_ON_T4 = ("The quantization method gpt_oss_mxfp4 is not supported for the current GPU. "
               "Minimum capability: 80. Current capability: 75.")


@pytest.mark.parametrize(("q", "model_type", "method"), [
    ({"quant_method": "awq"}, "llama", "auto_awq"),
    ({"quant_method": "gptq"}, "llama", "auto_gptq"),
    ({"quant_method": "auto-round"}, "llama", "inc"),
    ({"quant_method": "modelopt", "quantization": {"quant_algo": "FP8"}}, "llama", "modelopt"),
    ({"quant_method": "modelopt", "quantization": {"quant_algo": "NVFP4"}}, "llama", "modelopt_fp4"),
    ({"quant_method": "modelopt", "quantization": {"quant_algo": "MXFP8"}}, "llama", "modelopt_mxfp8"),
    ({"quant_method": "modelopt_mixed", "quant_algo": "mixed_precision"}, "llama", "modelopt_mixed"),
    ({"quant_method": "mxfp4"}, "gpt_oss", "gpt_oss_mxfp4"),
    ({"quant_method": "mxfp4"}, "llama", "mxfp4"),  # only a gpt_oss model type is claimed
    ({"quant_method": "fp8"}, "deepseek_v4", "deepseek_v4_fp8"),
    ({"quant_method": "fp8"}, "llama", "fp8"),
    ({"quant_method": "compressed-tensors"}, "llama", "compressed-tensors"),
    ({"quant_method": ""}, "llama", None),
])
def test_the_method_a_checkpoint_resolves_to(q, model_type, method):
    assert resolved_method(q, model_type) == method


def test_unquantized_is_none():
    assert resolved_method(None, "llama") is None


def test_the_table_holds_every_method_vllm_registers_in_its_order():
    """QuantizationMethods' Literal, read from the source (the unknown-method
    message prints the list in this order)."""
    init = vllm_source() / "model_executor" / "layers" / "quantization" / "__init__.py"
    if not init.exists():
        pytest.skip("vLLM 0.33.0's source is not unpacked (tests/vllm_source.py)")
    tree = ast.parse(init.read_text())
    literal = next(n.value for n in tree.body if isinstance(n, ast.Assign)
                   and getattr(n.targets[0], "id", None) == "QuantizationMethods")
    names = [e.value for e in literal.slice.elts]
    assert names == list(METHODS)


def test_capability_is_compared_as_major_times_ten_plus_minor():
    assert capability_error("fp8", 75) is None
    assert capability_error("fp8", 70) == ("The quantization method fp8 is not supported for the current GPU. "
                                           "Minimum capability: 75. Current capability: 70.")
    assert capability_error("fp_quant", 90) is not None and capability_error("fp_quant", 103) is None


def test_the_activation_dtype_check_prints_torch_dtypes_in_vllms_order():
    assert dtype_error("gpt_oss_mxfp4", "bfloat16") is None
    assert dtype_error("gpt_oss_mxfp4", "float16") == (
        "torch.float16 is not supported for quantization method gpt_oss_mxfp4. Supported dtypes: [torch.bfloat16]")
    assert dtype_error("auto_gptq", "float32").endswith("Supported dtypes: [torch.float16, torch.bfloat16]")
    assert dtype_error("compressed-tensors", "float32") is None


def test_capability_is_checked_before_the_dtype():
    fp16 = llama(quantization="gpt_oss_mxfp4")._replace(dtype="float16")
    assert "Minimum capability: 80" in engine_config(fp16, Overrides(), T4, Kernels()).error
    assert engine_config(fp16, Overrides(), A100, Kernels()).error == (
        "VllmConfig._get_quantization_config: torch.float16 is not supported for quantization method "
        "gpt_oss_mxfp4. Supported dtypes: [torch.bfloat16]")


def test_a_gpu_below_the_minimum_refuses_and_one_at_it_does_not():
    m = llama(quantization="gpt_oss_mxfp4")
    assert engine_config(m, Overrides(), T4, Kernels()).error == \
        "VllmConfig._get_quantization_config: " + MXFP4_ON_T4
    assert engine_config(m, Overrides(), A100, Kernels()).error is None
    assert engine_config(llama(), Overrides(), V100, Kernels()).error is None  # unquantized: no check


def test_unknown_and_deprecated_methods_refuse_on_any_gpu():
    err = engine_config(llama(quantization="bitsandbytes"), Overrides(), B200, Kernels()).error
    assert err.startswith("ModelConfig._verify_quantization: Unknown quantization method: bitsandbytes. "
                          "Must be one of ['awq', 'auto_awq', 'fp8', ")
    err = engine_config(llama(quantization="fbgemm_fp8"), Overrides(), B200, Kernels()).error
    assert err.endswith("set `--allow-deprecated-quantization`.', 'fbgemm_fp8')")


def test_the_model_config_refusal_comes_before_the_model_hook_and_the_hook_before_capability():
    diffusion = gemma4("DiffusionGemmaForBlockDiffusion")
    flashinfer = Overrides(backend="FLASHINFER")
    assert "Unknown quantization method" in engine_config(
        diffusion._replace(quantization="nope"), flashinfer, T4, Kernels()).error
    # vLLM runs the model's verify_and_update_config before _get_quantization_config
    assert "FlashInfer does not support DiffusionGemma" in engine_config(
        diffusion._replace(quantization="mxfp4"), flashinfer, T4, Kernels()).error


def test_the_profiles_resolve_as_vllm_does():
    assert load_model("gpt-oss-20b", capability=A100).quantization == "gpt_oss_mxfp4"
    assert load_model("deepseek-v3", capability=A100).quantization == "fp8"
    assert load_model("llama-3.1-8b", capability=A100).quantization is None


def test_explain_refuses_gpt_oss_on_a_t4_with_vllms_words():
    dev = Device(name="T4", capability=T4, source="test")
    with pytest.raises(UserError, match="refuses this engine config: VllmConfig._get_quantization_config: "
                                        "The quantization method gpt_oss_mxfp4 is not supported"):
        explain(load_model("gpt-oss-20b", capability=T4), dev, Kernels(), Overrides())


def test_a_config_json_read_from_disk_carries_its_method(tmp_path):
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 1024,
              "num_attention_heads": 8, "num_key_value_heads": 8, "num_hidden_layers": 2,
              "intermediate_size": 2048, "vocab_size": 1024, "torch_dtype": "bfloat16",
              "quantization_config": {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "FP8"}}}
    (tmp_path / "config.json").write_text(json.dumps(config))
    m = load_model(str(tmp_path / "config.json"), capability=T4)
    assert m.quantization == "modelopt"
    assert "Minimum capability: 80. Current capability: 75." in engine_config(m, Overrides(), T4, Kernels()).error


# --- every command that goes through explain: one line, exit 2 ------------------------


def _one_line_refusal(rc: int, err: str) -> None:
    assert rc == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert "vLLM 0.33.0 refuses this engine config: VllmConfig._get_quantization_config: " + MXFP4_ON_T4 in err


def test_explain_cli(capsys):
    from tests.cli.helpers import run

    rc, out, err = run(capsys, "explain", "gpt-oss-20b", "--device", "t4")
    _one_line_refusal(rc, err)
    assert out == ""
    assert run(capsys, "explain", "gpt-oss-20b", "--device", "a100")[0] == 0


def test_lock_names_the_deployment_and_check_refuses_too(tmp_path, capsys):
    from tests.cli.helpers import run

    deps = tmp_path / "d.yaml"
    deps.write_text("deployments:\n  - name: oss\n    model: gpt-oss-20b\n    device: a100\n")
    lock = tmp_path / "x.lock"
    assert run(capsys, "lock", deps, "-o", lock)[0] == 0
    # the same deployment on a T4: lock refuses at the deployment's line
    deps.write_text("deployments:\n  - name: oss\n    model: gpt-oss-20b\n    device: t4\n")
    rc, out, err = run(capsys, "lock", deps, "-o", tmp_path / "t4.lock")
    _one_line_refusal(rc, err)
    assert err.startswith(f"error: {deps}:2: ") and not (tmp_path / "t4.lock").exists()
    rc, out, err = run(capsys, "check", lock, "--deployments", deps)
    _one_line_refusal(rc, err)


@pytest.mark.parametrize("command", ["run", "tune"])
def test_run_and_tune_plan_through_the_same_refusal(command, capsys):
    from tests.cli.helpers import run

    rc, _, err = run(capsys, command, "gpt-oss-20b", "--device", "cpu", "--capability", "7.5")
    _one_line_refusal(rc, err)
