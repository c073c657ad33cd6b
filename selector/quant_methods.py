"""vLLM 0.33.0's quantization methods: the name a checkpoint's
``quantization_config`` resolves to, and the lowest GPU compute capability
each method's config class accepts.

vLLM refuses a deployment whose quantization method needs a newer GPU while
it builds the engine config (``VllmConfig._get_quantization_config``, after
the model's ``verify_and_update_config`` hook), before any attention layer
exists. The facts here are the inputs of that check; engine_config.py
applies it. Only the checkpoint's own method is modelled: ``--quantization``
(online quantization, or naming a method explicitly) is a flag attn-select
does not read (selector/vllm_serve.py's NOT_MODELLED).

Where each fact comes from (vLLM 0.33.0, paths under vllm/):
- the method names and their order: ``QuantizationMethods`` in
  model_executor/layers/quantization/__init__.py:15-47; the config class of
  each name: ``get_quantization_config``'s ``method_to_config``, same file
  :147-173 (awq/awq_marlin/auto_awq share AutoAWQConfig, gptq/gptq_marlin/
  auto_gptq share AutoGPTQConfig, mxfp8 is ModelOptMxFp8Config, the online
  shorthands are OnlineQuantizationConfig via ``_ONLINE_SHORTHANDS``).
- each class's ``get_min_capability``: the file named in the table's comment.
- the override order and the resolution: ``ModelConfig._verify_quantization``
  in config/model.py:1383-1457.
"""

from __future__ import annotations

from typing import Any

# name -> (min capability as vLLM's DeviceCapability.to_int(), its source)
# In QuantizationMethods' order: vLLM's "Unknown quantization method" message
# prints the list in this order.
MIN_CAPABILITY: dict[str, tuple[int, str]] = {
    "awq": (75, "AutoAWQConfig, quantization/auto_awq.py:233"),
    "auto_awq": (75, "AutoAWQConfig, quantization/auto_awq.py:233"),
    "fp8": (75, "Fp8Config, quantization/fp8.py:146"),
    "fbgemm_fp8": (80, "FBGEMMFp8Config, quantization/fbgemm_fp8.py:66"),
    "fp_quant": (100, "FPQuantConfig, quantization/fp_quant.py:63"),
    "modelopt": (80, "ModelOptFp8Config, quantization/modelopt.py:449"),
    "modelopt_fp4": (75, "ModelOptNvFp4Config, quantization/modelopt.py:772"),
    "modelopt_mxfp8": (80, "ModelOptMxFp8Config, quantization/modelopt.py:1231"),
    "modelopt_mixed": (75, "ModelOptMixedPrecisionConfig, quantization/modelopt.py:1647"),
    "auto_gptq": (60, "AutoGPTQConfig, quantization/auto_gptq.py:182"),
    "gptq": (60, "AutoGPTQConfig, quantization/auto_gptq.py:182"),
    "gptq_marlin": (60, "AutoGPTQConfig, quantization/auto_gptq.py:182"),
    "awq_marlin": (75, "AutoAWQConfig, quantization/auto_awq.py:233"),
    "humming": (75, "HummingConfig, quantization/humming.py:167"),
    "compressed-tensors": (70, "CompressedTensorsConfig, quantization/compressed_tensors/compressed_tensors.py:123"),
    "experts_int8": (80, "ExpertsInt8Config, quantization/experts_int8.py:42"),
    "quark": (70, "QuarkConfig, quantization/quark/quark.py:127"),
    "moe_wna16": (70, "MoeWNA16Config, quantization/moe_wna16.py:110"),
    "torchao": (75, "TorchAOConfig, quantization/torchao.py:160"),
    "inc": (60, "INCConfig, quantization/inc/inc.py:266"),
    "mxfp4": (80, "Mxfp4Config, quantization/mxfp4.py:71"),
    "gpt_oss_mxfp4": (80, "GptOssMxfp4Config inherits Mxfp4Config's, quantization/mxfp4.py:71,116"),
    # the CUDA class is models/deepseek_v41's DeepseekV4FP8Config(Fp8Config)
    "deepseek_v4_fp8": (75, "DeepseekV4FP8Config inherits Fp8Config's, models/deepseek_v41/quant_config.py:37"),
    "online": (75, "OnlineQuantizationConfig, quantization/online/base.py:209"),
    "fp8_per_tensor": (75, "OnlineQuantizationConfig, quantization/online/base.py:209"),
    "fp8_per_block": (75, "OnlineQuantizationConfig, quantization/online/base.py:209"),
    "fp8_per_channel": (75, "OnlineQuantizationConfig, quantization/online/base.py:209"),
    "int8_per_channel_weight_only": (75, "OnlineQuantizationConfig, quantization/online/base.py:209"),
    "nvfp4_per_token": (75, "OnlineQuantizationConfig, quantization/online/base.py:209"),
    "mxfp8": (80, "ModelOptMxFp8Config, quantization/modelopt.py:1231"),
}

# DEPRECATED_QUANTIZATION_METHODS (quantization/__init__.py:50-53): refused
# unless --allow-deprecated-quantization, which attn-select does not take.
DEPRECATED = frozenset({"fbgemm_fp8", "fp_quant"})

# The model types whose fp8 checkpoints DeepseekV4FP8Config claims on CUDA
# (models/deepseek_v41/quant_config.py:181-188).
_DEEPSEEK_V4_TYPES = frozenset({"deepseek_v4", "deepseek_v4_text", "deepseek_v41", "deepseek_v41_text"})


def _modelopt_algo(q: dict[str, Any]) -> str | None:
    """ModelOptQuantConfigBase._extract_modelopt_quant_algo: the upper-cased
    quant_algo of a modelopt* config, None for any other."""
    if not str(q.get("quant_method", "")).lower().startswith("modelopt"):
        return None
    if "quantization" in q:
        inner = q["quantization"]
        return str(inner.get("quant_algo", "")).upper() if isinstance(inner, dict) else None
    return str(q.get("quant_algo", "")).upper()


def _override(q: dict[str, Any], model_type: str) -> str | None:
    """The first override_quantization_method that claims the checkpoint, in
    _verify_quantization's override order, with no --quantization given (the
    overrides that need one, moe_wna16 and humming, never claim)."""
    method = str(q.get("quant_method", "")).lower()
    if method == "gptq":  # AutoGPTQConfig, reached first as "auto_gptq"
        return "auto_gptq"
    if method == "awq":  # AutoAWQConfig (declines on CPU only)
        return "auto_awq"
    if q.get("quant_method") == "auto-round":  # INCConfig
        return "inc"
    algo = _modelopt_algo(q)
    if algo is not None:
        if algo == "FP8":
            return "modelopt"
        if "NVFP4" in algo or "FP4" in algo:
            return "modelopt_fp4"
        if "MXFP8" in algo:
            return "modelopt_mxfp8"
        if algo == "MIXED_PRECISION":
            return "modelopt_mixed"
    if q.get("quant_method") in ("mxfp4", "gpt_oss_mxfp4") and model_type == "gpt_oss":
        return "gpt_oss_mxfp4"
    if q.get("quant_method") in ("fp8", "deepseek_v4_fp8") and model_type in _DEEPSEEK_V4_TYPES:
        return "deepseek_v4_fp8"
    return None


def resolved_method(q: dict[str, Any] | None, model_type: str) -> str | None:
    """model_config.quantization after _verify_quantization, from the
    checkpoint's (normalized) quantization config: an override's name, else
    its quant_method; None when unquantized or quant_method is empty."""
    if q is None:
        return None
    return _override(q, model_type) or (q.get("quant_method") or None)


def unknown_method_error(method: str) -> str | None:
    """ModelConfig._verify_quantization's refusal of a name vLLM does not register."""
    if method in MIN_CAPABILITY:
        return None
    return f"Unknown quantization method: {method}. Must be one of {list(MIN_CAPABILITY)}."


def capability_error(method: str, capability: int) -> str | None:
    """VllmConfig._get_quantization_config's refusal (config/vllm.py:925-936):
    the GPU's capability as ``major * 10 + minor`` below the method's minimum."""
    need = MIN_CAPABILITY[method][0]
    if capability >= need:
        return None
    return (f"The quantization method {method} is not supported for the current GPU. "
            f"Minimum capability: {need}. Current capability: {capability}.")
