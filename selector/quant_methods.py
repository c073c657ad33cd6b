"""vLLM 0.33.0's quantization methods: the name a checkpoint's
``quantization_config`` resolves to, and the lowest GPU compute capability
each method's config class accepts.

vLLM refuses a deployment whose quantization method needs a newer GPU while
it builds the engine config (``VllmConfig._get_quantization_config``, after
the model's ``verify_and_update_config`` hook), before any attention layer
exists. The facts here are the inputs of that check; engine_config.py
applies it. ``--quantization`` (online quantization, or naming a method
explicitly) is resolved against the checkpoint here too (``flag_method``,
``flag_config_class``); it changes no attention-selection input in vLLM
0.33.0, only which of these refusals apply.

Why --quantization changes no selection input: ``resolve_kv_cache_dtype_string``
reads the checkpoint's own quantization config (utils/torch_utils.py:498-516),
not the flag; an accepted flag on a quantized checkpoint resolves to the
method the checkpoint already had or to one of its overrides' classes built
from the same config; and the online config (OnlineQuantizationConfig,
online/base.py:388-411) gives an Attention layer no quantization method, so
no KV-cache scheme, per-head scales or FlashInfer query quantization comes
from it (``is_quantized_kv_cache`` reads the cache dtype alone).

Also not modelled, as they refuse later or never on CUDA: the per-layer
scheme checks of compressed-tensors and Quark (``_check_scheme_supported``,
when the model's layers are built), the ``from_config`` errors of a config
file found in the model folder (a checkpoint's own quantization_config is
checked: quant_from_config.py, for the classes it lists), ModelOpt's
producer check of such a file (weight_utils.py:380-388),
``--quantization-config`` and
``--allow-deprecated-quantization`` (not read), and
``Platform.verify_quantization`` (CudaPlatform leaves
``supported_quantization`` empty, so every registered name passes:
platforms/interface.py:177, :1156-1161).

Modelled here but applied when the layers are built: "fp8_e5m2 kv-cache is
not supported with fp8 checkpoints." (``_init_kv_cache_quant``,
model_executor/layers/attention/attention.py:157-221), raised by an
Attention or MLAAttention layer whose kv_cache_dtype is fp8_e5m2 when its
quantization config gives it a KV-cache method (``kv_method_refuses_e5m2``;
explain.py applies it after each group's selection and refuses the
deployment when it is the first layer to fail). Quark's ``exclude`` list, which
would give an excluded Attention layer no method, is not read.

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

from attn_select.selector.quant_from_config import from_config_errors


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

# OnlineQuantizationConfig's own answers (online/base.py:205,209), which
# get_quant_config builds for an online name on a checkpoint with no
# quantization config, whatever class the name maps to (fp8 -> Fp8Config,
# mxfp4 -> Mxfp4Config, mxfp8 -> ModelOptMxFp8Config).
ONLINE = METHODS["online"]

# _ONLINE_SHORTHANDS (config/quantization.py:195-227): the names
# get_quant_config turns into an OnlineQuantizationConfig when the checkpoint
# has no quantization config ("online" itself is not one of them).
ONLINE_SHORTHANDS = ("fp8_per_tensor", "fp8_per_block", "fp8_per_channel", "mxfp8", "mxfp4",
                     "int8_per_channel_weight_only", "nvfp4_per_token")

# get_config_filenames() of each name's class, where not empty: on a
# checkpoint without a quantization config, get_quant_config looks for a
# *.json in the model folder whose name ends with one of these
# (auto_gptq.py:187, auto_awq.py:238, moe_wna16.py:115, modelopt.py:309,
# inc/inc.py:271; mxfp8 is ModelOptMxFp8Config).
CONFIG_FILENAMES: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("auto_gptq", "gptq", "gptq_marlin", "moe_wna16"), ("quantize_config.json",)),
    **dict.fromkeys(("awq", "auto_awq", "awq_marlin"), ("quantize_config.json", "quant_config.json")),
    **dict.fromkeys(("modelopt", "modelopt_fp4", "modelopt_mxfp8", "modelopt_mixed", "mxfp8"),
                    ("hf_quant_config.json",)),
    "inc": ("quantization_config.json",),
}

# The classes whose constructor needs arguments: get_quant_config calls
# quant_cls() for a name with no config file names on a checkpoint without a
# quantization config, and Python refuses (the positional parameters of each
# __init__: compressed_tensors.py, quark/quark.py, torchao.py, online/base.py).
NEEDS_ARGS: dict[str, tuple[str, tuple[str, ...]]] = {
    "compressed-tensors": ("CompressedTensorsConfig", ("target_scheme_map", "ignore", "quant_format")),
    "quark": ("QuarkConfig", ("quant_config",)),
    "torchao": ("TorchAOConfig", ("torchao_config",)),
    "online": ("OnlineQuantizationConfig", ("args",)),
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


class CheckpointQuant(NamedTuple):
    """What the override_quantization_method hooks read of a checkpoint's
    (normalized) quantization config."""

    quant_method: str  # quant_cfg["quant_method"], as the parser normalized it
    modelopt_algo: str | None  # _extract_modelopt_quant_algo: None unless quant_method is modelopt*
    wna16_gptq: bool  # MoeWNA16Config.is_moe_wna16_compatible's GPTQ half
    wna16_awq_bits: bool  # its AWQ half but the capability: awq with bits == 4
    # The checkpoint declares a KV-cache quantization the way its config class
    # reads it: compressed-tensors' kv_cache_scheme is not None
    # (compressed_tensors.py:267), ModelOpt's kv_cache_quant_method is set
    # (ModelOptQuantConfigBase.from_config, modelopt.py:326-377).
    kv_quant_declared: bool = False
    # ModelOptNvFp4Config / ModelOptMxFp8Config._from_config: the fields a
    # nested "quantization" section must have, that it lacks (the format's
    # name first: ("NVFP4", "exclude_modules")); () when none is missing
    modelopt_missing: tuple[str, ...] = ()
    # (config class, its from_config refusal) for the classes that cannot be
    # built from this config (quant_from_config.py)
    from_config_errors: tuple[tuple[str, str], ...] = ()
    # a modelopt_mixed config carries its per-layer quantized_layers map
    # (else get_quant_config reads hf_quant_config.json from the folder)
    mixed_layers: bool = False


def _gptq_act_order_ok(q: dict[str, Any]) -> bool:
    """normalize_and_validate_gptq_desc_act does not raise
    (quantization/utils/gptq_utils.py:23-50): no desc_act unless one group
    per channel, also in the dynamic rules that are not exclusions."""
    group_size = q.get("group_size")
    base = q.get("desc_act", False)
    if base and group_size != -1:
        return False
    dynamic = q.get("dynamic") or {}
    if not isinstance(dynamic, dict):
        return True
    for pattern, rule in dynamic.items():
        if str(pattern).startswith("-:") or not isinstance(rule, dict):
            continue
        if rule.get("desc_act", base) and rule.get("group_size", group_size) != -1:
            return False
    return True


def _kv_quant_declared(q: dict[str, Any], method: str) -> bool:
    if method == "compressed-tensors":
        return q.get("kv_cache_scheme") is not None
    if _modelopt_algo(q) is None:
        return False
    inner = q.get("quantization")
    if "quantization" in q:  # the nested (hf_quant_config.json) form: any algo string
        return isinstance(inner, dict) and bool(inner.get("kv_cache_quant_algo"))
    scheme = q.get("kv_cache_scheme")  # the flat form: only an 8-bit float scheme reads as "FP8"
    return isinstance(scheme, dict) and scheme.get("type") == "float" and scheme.get("num_bits") == 8


def _modelopt_missing(q: dict[str, Any], algo: str | None) -> tuple[str, ...]:
    """The required fields an NVFP4 / MXFP8 ModelOpt config's "quantization"
    section lacks (modelopt.py: NVFP4 group_size, kv_cache_quant_algo,
    exclude_modules; MXFP8 the last two), after the format's name."""
    inner = q.get("quantization")
    if algo is None or not isinstance(inner, dict):
        return ()
    if "NVFP4" in algo:
        name, need = "NVFP4", ("group_size", "kv_cache_quant_algo", "exclude_modules")
    elif "MXFP8" in algo:
        name, need = "MXFP8", ("kv_cache_quant_algo", "exclude_modules")
    else:
        return ()
    missing = tuple(k for k in need if k not in inner)
    return (name, *missing) if missing else ()


def checkpoint_quant(q: dict[str, Any] | None) -> CheckpointQuant | None:
    if q is None:
        return None
    method = str(q.get("quant_method", ""))
    algo = _modelopt_algo(q)
    return CheckpointQuant(
        quant_method=method, modelopt_algo=algo,
        wna16_gptq=method.lower() == "gptq" and q.get("bits") in (4, 8) and _gptq_act_order_ok(q),
        wna16_awq_bits=method.lower() == "awq" and q.get("bits") == 4,
        kv_quant_declared=_kv_quant_declared(q, method),
        modelopt_missing=_modelopt_missing(q, algo),
        from_config_errors=from_config_errors(q),
        mixed_layers="quantized_layers" in q,
    )


class HummingRefusal(ValueError):
    """HummingConfig.override_quantization_method's own refusal."""


def _claim(ck: CheckpointQuant, model_type: str, user: str | None, capability: int | None) -> str | None:
    """The first override_quantization_method that claims the checkpoint, in
    _verify_quantization's order (config/model.py:1396-1450), given the
    --quantization value ``user`` (None: not given). ``capability`` is the
    GPU's (major * 10 + minor; None: none known), which MoeWNA16Config
    compares with AWQ's minimum."""
    method = ck.quant_method
    if user == "humming":  # placed first when given (model.py:1418-1419)
        if model_type == "gpt_oss" and method == "mxfp4":
            raise HummingRefusal("For gpt-oss model, use '--moe-backend humming' instead of "
                                 "'--quantization humming'.")
        return "humming"
    if method.lower() == "gptq" and user in (None, "gptq", "gptq_marlin", "auto_gptq", "marlin"):
        return "auto_gptq"  # AutoGPTQConfig, reached first as "auto_gptq"
    if method.lower() == "awq" and user in (None, "awq", "awq_marlin", "auto_awq", "marlin"):
        return "auto_awq"  # AutoAWQConfig (declines on CPU only)
    if method == "auto-round":  # INCConfig, whatever --quantization says
        return "inc"
    if user == "moe_wna16":
        awq_ok = ck.wna16_awq_bits and (-1 if capability is None else capability) >= METHODS["awq"].min_capability
        if ck.wna16_gptq or awq_ok:
            return "moe_wna16"
    algo = ck.modelopt_algo
    if algo is not None:
        if algo == "FP8":
            return "modelopt"
        if "NVFP4" in algo or "FP4" in algo:
            return "modelopt_fp4"
        if "MXFP8" in algo:
            return "modelopt_mxfp8"
        if algo == "MIXED_PRECISION":
            return "modelopt_mixed"
    if method in ("mxfp4", "gpt_oss_mxfp4") and model_type == "gpt_oss":
        return "gpt_oss_mxfp4"
    if method in ("fp8", "deepseek_v4_fp8") and (model_type in _DEEPSEEK_V4_TYPES or user == "deepseek_v4_fp8"):
        return "deepseek_v4_fp8"
    return None


def resolved_method(q: dict[str, Any] | None, model_type: str) -> str | None:
    """model_config.quantization after _verify_quantization, from the
    checkpoint's (normalized) quantization config with no --quantization: an
    override's name, else its quant_method; None when unquantized or
    quant_method is empty."""
    ck = checkpoint_quant(q)
    if ck is None:
        return None
    return _claim(ck, model_type, None, None) or (ck.quant_method or None)


def flag_method(flag: str, ck: CheckpointQuant | None, model_type: str, capability: int | None) -> str:
    """model_config.quantization with ``--quantization flag`` given (lowered,
    as ModelConfig's validator does): the checkpoint's claiming override,
    else the flag, which must then equal the checkpoint's quant_method.
    Raises ValueError with vLLM's message."""
    user = flag.lower()
    if ck is None:
        return user
    claimed = _claim(ck, model_type, user, capability)
    if claimed is not None:
        return claimed
    method = ck.quant_method or None
    if user != method:
        raise ValueError(f"Quantization method specified in the model config ({method}) does not match the "
                         f"quantization method specified in the `quantization` argument ({user}).")
    return user


def flag_config_class(method: str, checkpoint_json: tuple[str, ...]) -> QuantMethod:
    """The class get_quant_config builds for --quantization ``method`` on a
    checkpoint with no quantization config (weight_utils.py:319-389), from
    the names of the *.json files in the model folder; its answers feed the
    capability and dtype checks. Raises ValueError or TypeError with vLLM's
    message where it refuses."""
    if method in ONLINE_SHORTHANDS and method not in ("mxfp4", "mxfp8"):
        return ONLINE  # quantization_config already desugared: returned before any file is read
    names = CONFIG_FILENAMES.get(method, ())
    if not names:
        if method == "fp8" or method in ONLINE_SHORTHANDS:
            return ONLINE
        if method in NEEDS_ARGS:
            cls, params = NEEDS_ARGS[method]
            quoted = [f"'{p}'" for p in params]
            listed = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + f", and {quoted[-1]}"
            noun = "argument" if len(params) == 1 else "arguments"
            raise TypeError(f"{cls}.__init__() missing {len(params)} required positional {noun}: {listed}")
        return METHODS[method]
    found = [n for n in checkpoint_json if any(n.endswith(x) for x in names)]
    if not found:
        if method in ONLINE_SHORTHANDS:
            return ONLINE
        raise ValueError(f"Cannot find the config file for {method}")
    if len(found) > 1:
        raise ValueError(f"Found multiple config files for {method}: {found}")
    return METHODS[method]


def unknown_method_error(method: str) -> str | None:
    """ModelConfig._verify_quantization's refusal of a name vLLM does not register."""
    if method in METHODS:
        return None
    return f"Unknown quantization method: {method}. Must be one of {list(METHODS)}."


def capability_error(method: str, capability: int, cls: QuantMethod | None = None) -> str | None:
    """VllmConfig._get_quantization_config's refusal (config/vllm.py:926-936):
    the GPU's capability as ``major * 10 + minor`` below the minimum of the
    class get_quant_config built (``cls``; default: the method's own)."""
    need = (cls or METHODS[method]).min_capability
    if capability >= need:
        return None
    return (f"The quantization method {method} is not supported for the current GPU. "
            f"Minimum capability: {need}. Current capability: {capability}.")


def dtype_error(method: str, dtype: str, cls: QuantMethod | None = None) -> str | None:
    """The check right after it (config/vllm.py:937-943): the model's dtype
    must be one of the class's activation dtypes; vLLM prints torch dtypes."""
    supported = (cls or METHODS[method]).act_dtypes
    if dtype in supported:
        return None
    shown = ", ".join(f"torch.{d}" for d in supported)
    return (f"torch.{dtype} is not supported for quantization method {method}. "
            f"Supported dtypes: [{shown}]")


# The config classes whose get_quant_method gives an Attention layer a
# KV-cache method (should_load_quant_weights true), and whether MLAAttention
# gets one too. MLAAttention subclasses neither Attention nor the reverse
# (attention.py:229, mla_attention.py:426); only the ModelOpt base checks both.
# The rest give attention layers None (auto_awq.py, auto_gptq.py via
# gptq_utils.get_linear_quant_method, fbgemm_fp8.py, fp_quant.py, humming.py,
# experts_int8.py, moe_wna16.py, torchao.py, inc/inc.py, online/base.py;
# Mxfp4Config explicitly, mxfp4.py:108-112).
class _KVMethod(NamedTuple):
    mla_too: bool  # MLAAttention gets the method as well
    if_declared: bool  # only when the checkpoint declares a KV-cache quantization (kv_quant_declared)
    where: str


_KV_METHOD_CLASSES: dict[str, _KVMethod] = {
    "Fp8Config": _KVMethod(False, False, "fp8.py:206-207"),
    "DeepseekV4FP8Config(Fp8Config)": _KVMethod(False, False, "fp8.py:206-207 via super()"),
    "ModelOptFp8Config": _KVMethod(True, False, "modelopt.py:232-233"),
    "ModelOptNvFp4Config": _KVMethod(True, False, "modelopt.py:232-233"),
    "ModelOptMxFp8Config": _KVMethod(True, False, "modelopt.py:232-233"),
    "ModelOptMixedPrecisionConfig": _KVMethod(False, True,
                                              "modelopt.py:1849-1851, when kv_cache_quant_method is set"),
    "CompressedTensorsConfig": _KVMethod(False, True, "compressed_tensors.py:213-214; attention.py:205-217"),
    "QuarkConfig": _KVMethod(False, False, "quark/quark.py:257-258, 205-206"),
}

E5M2_REFUSAL = "fp8_e5m2 kv-cache is not supported with fp8 checkpoints."  # a ValueError


def kv_method_refuses_e5m2(config_class: str | None, ck: CheckpointQuant | None, use_mla: bool) -> bool:
    """Whether ``_init_kv_cache_quant`` refuses a layer built with
    kv_cache_dtype fp8_e5m2 under the quantization config class
    ``config_class`` (None: unquantized): the class gives the layer a KV-cache
    method, unless it is compressed-tensors' and the checkpoint declares no
    kv_cache_scheme (weight-only compressed-tensors keeps fp8_e5m2)."""
    kv = _KV_METHOD_CLASSES.get(config_class or "")
    if kv is None or (use_mla and not kv.mla_too):
        return False
    return not kv.if_declared or (ck is not None and ck.kv_quant_declared)
