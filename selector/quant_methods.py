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

Also not modelled, as they refuse later or never on CUDA: the per-layer
scheme checks of compressed-tensors and Quark (``_check_scheme_supported``,
when the model's layers are built), the errors of a config class's own
``from_config`` (missing fields), and ``Platform.verify_quantization``
(CudaPlatform leaves ``supported_quantization`` empty, so every registered
name passes: platforms/interface.py:177, :1156-1161).

Where each fact comes from (vLLM 0.33.0, paths under vllm/):
- the method names and their order: ``QuantizationMethods`` in
  model_executor/layers/quantization/__init__.py:15-48; the config class of
  each name: ``get_quantization_config``'s ``method_to_config``, same file
  :156-185 (awq/awq_marlin/auto_awq share AutoAWQConfig, gptq/gptq_marlin/
  auto_gptq share AutoGPTQConfig, mxfp8 is ModelOptMxFp8Config, the online
  shorthands are OnlineQuantizationConfig via ``_ONLINE_SHORTHANDS``).
- each class's ``get_min_capability`` and ``get_supported_act_dtypes``: the
  lines in the table's ``source``.
- the override order and the resolution: ``ModelConfig._verify_quantization``
  in config/model.py:1383-1485; the capability check: config/vllm.py:916-947
  (``current_platform.get_device_capability()``, on CUDA NVML's or torch's
  (major, minor), platforms/cuda.py:764-771 and :1010-1012, as ``to_int()``,
  platforms/interface.py:128-134).
"""

from __future__ import annotations

from typing import Any, NamedTuple

class QuantMethod(NamedTuple):
    """What vLLM's config class for one method name says at engine-config time."""

    min_capability: int  # get_min_capability(), as DeviceCapability.to_int()
    act_dtypes: tuple[str, ...]  # get_supported_act_dtypes(), as torch names, in vLLM's order
    config_class: str  # the class get_quantization_config() maps the name to
    source: str  # file under model_executor/layers/quantization/: act-dtype line, capability line


HALF_BF16 = ("float16", "bfloat16")
BF16_HALF = ("bfloat16", "float16")
BF16 = ("bfloat16",)
BF16_HALF_FP8 = ("bfloat16", "float16", "float8_e4m3fn")
ALL3 = ("float32", "float16", "bfloat16")

# Every name vLLM 0.33.0 registers, in QuantizationMethods' order (vLLM's
# "Unknown quantization method" message prints the list in this order).
# deepseek_v4_fp8's CUDA class is models/deepseek_v41/quant_config.py:37,
# an Fp8Config that keeps Fp8Config's two answers; GptOssMxfp4Config
# (mxfp4.py:116) keeps Mxfp4Config's.
METHODS: dict[str, QuantMethod] = {
    "awq": QuantMethod(75, HALF_BF16, "AutoAWQConfig", "auto_awq.py:229,233"),
    "auto_awq": QuantMethod(75, HALF_BF16, "AutoAWQConfig", "auto_awq.py:229,233"),
    "fp8": QuantMethod(75, BF16_HALF, "Fp8Config", "fp8.py:142,146"),
    "fbgemm_fp8": QuantMethod(80, BF16_HALF, "FBGEMMFp8Config", "fbgemm_fp8.py:62,66"),
    "fp_quant": QuantMethod(100, BF16, "FPQuantConfig", "fp_quant.py:59,63"),
    "modelopt": QuantMethod(80, BF16_HALF, "ModelOptFp8Config", "modelopt.py:445,449"),
    "modelopt_fp4": QuantMethod(75, BF16_HALF_FP8, "ModelOptNvFp4Config", "modelopt.py:768,772"),
    "modelopt_mxfp8": QuantMethod(80, BF16, "ModelOptMxFp8Config", "modelopt.py:1227,1231"),
    "modelopt_mixed": QuantMethod(75, BF16_HALF, "ModelOptMixedPrecisionConfig", "modelopt.py:1643,1647"),
    "auto_gptq": QuantMethod(60, HALF_BF16, "AutoGPTQConfig", "auto_gptq.py:178,182"),
    "gptq": QuantMethod(60, HALF_BF16, "AutoGPTQConfig", "auto_gptq.py:178,182"),
    "gptq_marlin": QuantMethod(60, HALF_BF16, "AutoGPTQConfig", "auto_gptq.py:178,182"),
    "awq_marlin": QuantMethod(75, HALF_BF16, "AutoAWQConfig", "auto_awq.py:229,233"),
    "humming": QuantMethod(75, BF16_HALF, "HummingConfig", "humming.py:163,167"),
    "compressed-tensors": QuantMethod(70, ALL3, "CompressedTensorsConfig",
                                      "compressed_tensors/compressed_tensors.py:119,123"),
    "experts_int8": QuantMethod(80, BF16_HALF, "ExpertsInt8Config", "experts_int8.py:38,42"),
    "quark": QuantMethod(70, HALF_BF16, "QuarkConfig", "quark/quark.py:123,127"),
    "moe_wna16": QuantMethod(70, BF16_HALF, "MoeWNA16Config", "moe_wna16.py:106,110"),
    "torchao": QuantMethod(75, ALL3, "TorchAOConfig", "torchao.py:156,160"),
    "inc": QuantMethod(60, HALF_BF16, "INCConfig", "inc/inc.py:262,266"),
    "mxfp4": QuantMethod(80, BF16, "Mxfp4Config", "mxfp4.py:79,71"),
    "gpt_oss_mxfp4": QuantMethod(80, BF16, "GptOssMxfp4Config(Mxfp4Config)", "mxfp4.py:79,71,116"),
    "deepseek_v4_fp8": QuantMethod(75, BF16_HALF, "DeepseekV4FP8Config(Fp8Config)", "fp8.py:142,146"),
    "online": QuantMethod(75, BF16_HALF, "OnlineQuantizationConfig", "online/base.py:205,209"),
    "fp8_per_tensor": QuantMethod(75, BF16_HALF, "OnlineQuantizationConfig", "online/base.py:205,209"),
    "fp8_per_block": QuantMethod(75, BF16_HALF, "OnlineQuantizationConfig", "online/base.py:205,209"),
    "fp8_per_channel": QuantMethod(75, BF16_HALF, "OnlineQuantizationConfig", "online/base.py:205,209"),
    "int8_per_channel_weight_only": QuantMethod(75, BF16_HALF, "OnlineQuantizationConfig", "online/base.py:205,209"),
    "nvfp4_per_token": QuantMethod(75, BF16_HALF, "OnlineQuantizationConfig", "online/base.py:205,209"),
    "mxfp8": QuantMethod(80, BF16, "ModelOptMxFp8Config", "modelopt.py:1227,1231"),
}

# DEPRECATED_QUANTIZATION_METHODS (quantization/__init__.py:52-55): refused
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
    if method in METHODS:
        return None
    return f"Unknown quantization method: {method}. Must be one of {list(METHODS)}."


def capability_error(method: str, capability: int) -> str | None:
    """VllmConfig._get_quantization_config's refusal (config/vllm.py:926-936):
    the GPU's capability as ``major * 10 + minor`` below the method's minimum."""
    need = METHODS[method].min_capability
    if capability >= need:
        return None
    return (f"The quantization method {method} is not supported for the current GPU. "
            f"Minimum capability: {need}. Current capability: {capability}.")


def dtype_error(method: str, dtype: str) -> str | None:
    """The check right after it (config/vllm.py:937-943): the model's dtype
    must be one of the method's activation dtypes; vLLM prints torch dtypes."""
    supported = METHODS[method].act_dtypes
    if dtype in supported:
        return None
    shown = ", ".join(f"torch.{d}" for d in supported)
    return (f"torch.{dtype} is not supported for quantization method {method}. "
            f"Supported dtypes: [{shown}]")
