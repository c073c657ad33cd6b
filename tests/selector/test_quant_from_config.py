"""A quantization config class's from_config refusals (selector/quant_from_config.py),
as the engine config reports them before the GPU capability check; each was
checked against vLLM 0.33.0 itself (test_engine_config_vs_vllm.py's
FROM_CONFIG cases)."""

from __future__ import annotations

import json

import pytest

from attn_select.selector.config import Capability, Kernels
from attn_select.selector.engine_config import engine_config
from attn_select.selector.errors import UserError
from attn_select.selector.overrides import Overrides
from attn_select.selector.profiles import load_model
from attn_select.selector.quant_from_config import from_config_errors

LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 1024,
         "num_attention_heads": 8, "num_key_value_heads": 8, "num_hidden_layers": 2,
         "intermediate_size": 2048, "vocab_size": 1024, "torch_dtype": "bfloat16"}
HOOK = "VllmConfig._get_quantization_config: "


def _error(q: dict, tmp_path, cap: Capability = Capability(9, 0)) -> str | None:
    (tmp_path / "config.json").write_text(json.dumps({**LLAMA, "quantization_config": q}))
    return engine_config(load_model(str(tmp_path), capability=cap), Overrides(), cap, Kernels()).error


@pytest.mark.parametrize("q,message", [
    ({"quant_method": "fp8", "activation_scheme": "x"}, "Unsupported activation scheme x"),
    ({"quant_method": "FP8"}, "Cannot find any of ['activation_scheme'] in the model's quantization config."),
    ({"quant_method": "fp8", "activation_scheme": "static", "weight_block_size": [128, 128]},
     "The block-wise quantization only supports dynamic activation scheme for now, but got static activation "
     "scheme."),
    ({"quant_method": "awq", "bits": 8, "group_size": 128, "zero_point": True},
     "Unsupported num_bits = 8. Supported: 4. For 8-bit AWQ, use Marlin backend by setting backend='awq:marlin' or "
     "backend='marlin'."),
    ({"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": False},
     "Unsupported quantization config: bits=4, sym=False"),
    ({"quant_method": "gptq", "bits": 0, "group_size": 128, "desc_act": False, "sym": True},
     "integer division or modulo by zero"),
    ({"quant_method": "moe_wna16", "bits": 4, "group_size": 128}, "moe_wna16 only support gptq and awq."),
    ({"quant_method": "modelopt", "quantization": {"quant_algo": "bogus"}},
     "ModelOpt currently only supports: ['FP8', 'FP8_PER_CHANNEL_PER_TOKEN', 'FP8_PB_WO', 'NVFP4', 'W4A16_NVFP4', "
     "'MXFP8', 'MIXED_PRECISION'] quantizations in vLLM. Please check the `hf_quant_config.json` file for your "
     "model's quant configuration."),
    ({"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION"}, "Cannot find the config file for modelopt_mixed"),
    ({"quant_method": "auto-round", "bits": 9, "group_size": 128},
     "Unsupported weight_bits: 9, currently only support {2, 3, 4, 5, 6, 7, 8}."),
    ({"quant_method": "compressed-tensors", "config_groups": 0}, "'int' object has no attribute 'items'"),
])
def test_the_class_vllm_builds_refuses_before_the_capability_check(q, message, tmp_path):
    # a V100: every method's minimum capability refusal would come after
    assert _error(q, tmp_path, Capability(7, 0)) == HOOK + message


@pytest.mark.parametrize("q", [
    {"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]},
    {"quant_method": "gptq", "bits": 8, "group_size": -1, "desc_act": True, "sym": True},
    {"quant_method": "awq", "bits": 4.0, "group_size": 128, "zero_point": False},
    {"quant_method": "modelopt", "quantization": {"quant_algo": "fp8", "group_size": "16"}},
])
def test_what_the_class_builds_is_not_refused(q, tmp_path):
    assert _error(q, tmp_path) is None


def test_only_the_class_vllm_builds_is_asked():
    # an fp8 config would fail AutoAWQConfig, which vLLM never builds for it
    errors = dict(from_config_errors({"quant_method": "fp8", "activation_scheme": "dynamic"}))
    assert "Fp8Config" not in errors and "AutoAWQConfig" in errors


def test_a_modelopt_producer_with_an_unknown_algo_is_refused_with_the_config(tmp_path):
    q = {"producer": {"name": "modelopt", "version": "0.31.0"}, "quantization": {"quant_algo": "bogus"}}
    with pytest.raises(UserError, match="Unknown ModelOpt quant algo: bogus"):
        _error(q, tmp_path)
