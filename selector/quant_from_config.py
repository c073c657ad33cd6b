"""What a quantization config class's ``from_config`` (and the ``__init__``
it calls) refuses in a checkpoint's quantization_config, vLLM 0.33.0.

``get_quant_config`` builds the class of model_config.quantization from the
checkpoint's (normalized) quantization_config while VllmConfig is built,
before the GPU capability and activation dtype are checked
(model_executor/model_loader/weight_utils.py:197-256, config/vllm.py). A
class that raises there refuses the deployment: the texts below are the
exceptions' own, without the exception type, as vLLM's config validation
reports them (engine_config.py prefixes the hook). Each checker mirrors
one class, its checks in their order; a check the class leaves to layer
build time, or one of a field no attention input depends on that raises
only later, is not here. Paths under vllm/model_executor/layers/quantization/.
"""

from __future__ import annotations

from typing import Any, Callable

_Checker = Callable[[dict[str, Any]], "str | None"]


def _missing(keys: list[str]) -> str:
    # QuantizationConfig.get_from_keys (base_config.py:185-192)
    return f"Cannot find any of {keys} in the model's quantization config."


def _first(q: dict[str, Any], keys: list[str]) -> tuple[bool, Any]:
    return next(((True, q[k]) for k in keys if k in q), (False, None))


def _py_type(value: Any) -> str:
    return f"<class '{type(value).__name__}'>"


def _floor_div(numerator: int, value: Any) -> str | None:
    """The TypeError / ZeroDivisionError text Python raises for ``numerator // value``."""
    if isinstance(value, (int, float)):  # bool is an int
        if value != 0:
            return None
        return "float floor division by zero" if isinstance(value, float) else "integer division or modulo by zero"
    return f"unsupported operand type(s) for //: 'int' and '{type(value).__name__}'"


def _fp8(q: dict[str, Any]) -> str | None:
    """Fp8Config.from_config / __init__ (fp8.py:95-175)."""
    found, scheme = _first(q, ["activation_scheme"])
    if not found:
        return _missing(["activation_scheme"])
    if "fp8" not in q.get("quant_method", ""):
        return ("The `fp8` quantization method no longer supports online quantization. Please use "
                "`--quantization fp8_per_tensor` instead. See "
                "https://docs.vllm.ai/en/stable/features/quantization/online/")
    if scheme not in ("static", "dynamic"):
        return f"Unsupported activation scheme {scheme}"
    block = q.get("weight_block_size")
    if block is not None:
        if not hasattr(block, "__len__"):
            return f"object of type '{type(block).__name__}' has no len()"
        if len(block) != 2:
            return ("The quantization block size of weight must have 2 dimensions, but got "
                    f"{len(block)} dimensions")
        if scheme != "dynamic":
            return ("The block-wise quantization only supports dynamic activation scheme for now, but got "
                    f"{scheme} activation scheme.")
    return None


def _awq(q: dict[str, Any]) -> str | None:
    """AutoAWQConfig.from_config / __init__ (auto_awq.py:186-260): the 4-bit
    type map only."""
    for keys in (["w_bit", "bits"], ["q_group_size", "group_size"], ["zero_point"]):
        if not _first(q, keys)[0]:
            return _missing(keys)
    bits = _first(q, ["w_bit", "bits"])[1]
    error = _floor_div(32, bits)
    if error is not None:
        return error
    if bits != 4:
        return (f"Unsupported num_bits = {bits}. Supported: 4. For 8-bit AWQ, use Marlin backend by setting "
                "backend='awq:marlin' or backend='marlin'.")
    return None


def _desc_act_error(desc_act: Any, group_size: Any, dynamic: Any) -> str | None:
    """normalize_and_validate_gptq_desc_act (utils/gptq_utils.py:23-50)."""
    base = desc_act
    if desc_act and group_size == -1:
        desc_act = False
    if desc_act:
        return ("GPTQ group activation ordering (desc_act=True) is no longer supported. Use a checkpoint with "
                "static activation ordering or desc_act=False.")
    if not isinstance(dynamic, dict):
        return f"'{type(dynamic).__name__}' object has no attribute 'items'"
    for pattern, overrides in dynamic.items():
        if pattern.startswith("-:") or not isinstance(overrides, dict):
            continue
        if overrides.get("desc_act", base) and overrides.get("group_size", group_size) != -1:
            return ("GPTQ group activation ordering (desc_act=True) is no longer supported, but is enabled by "
                    f"dynamic rule {pattern!r}. Use a checkpoint with static activation ordering or "
                    "desc_act=False.")
    return None


def _hashable(value: Any) -> bool:
    return not isinstance(value, (list, dict))


def _gptq(q: dict[str, Any]) -> str | None:
    """AutoGPTQConfig.from_config / __init__ (auto_gptq.py:104-211): the
    (bits, sym) type map (4 or 8 bits, symmetric)."""
    dynamic = q.get("dynamic", {})
    dynamic = {} if dynamic is None else dynamic
    for key in ("bits", "group_size", "desc_act", "sym"):
        if key not in q:
            return _missing([key])
    bits, sym = q["bits"], q["sym"]
    error = _desc_act_error(q["desc_act"], q["group_size"], dynamic) or _floor_div(32, bits)
    if error is not None:
        return error
    if not (_hashable(bits) and _hashable(sym)):
        return f"unhashable type: '{type(sym if _hashable(bits) else bits).__name__}'"
    if (bits, sym) not in {(4, True), (8, True)}:
        return f"Unsupported quantization config: bits={bits}, sym={sym}"
    return None


def _moe_wna16(q: dict[str, Any]) -> str | None:
    """MoeWNA16Config.from_config / __init__ (moe_wna16.py:53-142), but the
    AWQ capability check (engine_config's, with the GPU)."""
    for key in ("quant_method", "bits", "group_size"):
        if key not in q:
            return _missing([key])
    method = q["quant_method"]
    if method == "gptq":
        if "sym" not in q:
            return _missing(["sym"])
    elif method in ("awq", "awq_marlin"):
        if "zero_point" not in q:
            return _missing(["zero_point"])
    else:
        return "moe_wna16 only support gptq and awq."
    error = _floor_div(8, q["bits"])
    if error is None and method == "gptq":
        error = _desc_act_error(q.get("desc_act", False), q["group_size"], q.get("dynamic") or {})
    return error


def _online(q: dict[str, Any]) -> str | None:
    """OnlineQuantizationConfig.from_config (online/base.py:219-224): never from a checkpoint."""
    return ("OnlineQuantizationConfig does not support loading from a checkpoint config. "
            "Use quantization_config or quantization='fp8_per_tensor'/'fp8_per_block' instead.")


def _torchao(q: dict[str, Any]) -> str | None:
    """TorchAOConfig.from_config (torchao.py:171-179) imports torchao first,
    which vLLM 0.33.0 does not install."""
    return ("Please install torchao>=0.10.0 via `pip install torchao>=0.10.0` to use torchao "
            "quantization.")


# modelopt.py:160 QUANT_ALGOS, in its order
_MODELOPT_ALGOS = ["FP8", "FP8_PER_CHANNEL_PER_TOKEN", "FP8_PB_WO", "NVFP4", "W4A16_NVFP4", "MXFP8",
                   "MIXED_PRECISION"]


def _modelopt(q: dict[str, Any], default_mxfp8: bool = False) -> str | None:
    """ModelOptQuantConfigBase.from_config (modelopt.py:324-408), before the
    subclass's _from_config; ModelOptMxFp8Config first makes a config with
    neither a quantization section nor a quant_algo an MXFP8 one."""
    if default_mxfp8 and "quantization" not in q and not q.get("quant_algo"):
        q = {"quantization": {"quant_algo": "MXFP8", "kv_cache_quant_algo": q.get("kv_cache_quant_algo"),
                              "exclude_modules": q.get("ignored_layers", []) or []}}
    if "quantization" in q:
        inner = q["quantization"]
        if not isinstance(inner, dict):
            return "Expected 'quantization' to be a dictionary in config"
        algo, kv = inner.get("quant_algo"), inner.get("kv_cache_quant_algo")
        group, exclude = inner.get("group_size"), inner.get("exclude_modules", [])
    else:
        algo = q.get("quant_algo")
        scheme = q.get("kv_cache_scheme")
        kv = "FP8" if isinstance(scheme, dict) and scheme.get("type") == "float" and scheme.get("num_bits") == 8 \
            else None
        exclude, group = q.get("ignore", q.get("exclude_modules", [])), q.get("group_size")
    if not algo:
        return "Missing 'quant_algo' in quantization config"
    if kv is not None and not isinstance(kv, str):
        return f"kv_cache_quant_algo must be a string, got {_py_type(kv)}"
    if not isinstance(exclude, list):
        return f"exclude_modules must be a list, got {_py_type(exclude)}"
    if group is not None and not isinstance(group, int):
        try:
            int(group)
        except (ValueError, TypeError):
            return f"group_size must be an integer, got {_py_type(group)}"
    if str(algo).upper() not in _MODELOPT_ALGOS:
        return (f"ModelOpt currently only supports: {_MODELOPT_ALGOS} quantizations in vLLM. Please check the "
                "`hf_quant_config.json` file for your model's quant configuration.")
    return None


def _modelopt_fp8(q: dict[str, Any]) -> str | None:
    """ModelOptFp8Config: the base checks, then its own quant_algo
    (modelopt.py:415-432: the LINEAR_ALGOS rows owned by "modelopt")."""
    error = _modelopt(q)
    if error is not None:
        return error
    inner = q["quantization"] if "quantization" in q else q
    algo = str(inner.get("quant_algo")).upper()
    owned = ("FP8", "FP8_PER_CHANNEL_PER_TOKEN", "FP8_PB_WO")
    if algo not in owned:
        return f"Unsupported ModelOpt FP8 quant_algo for vLLM: {algo}. Supported: {' / '.join(owned)}."
    return None


def _modelopt_mixed(q: dict[str, Any]) -> str | None:
    """ModelOptMixedPrecisionConfig: the base checks, then its _from_config
    (modelopt.py:1667-1690): the quantized_layers map, read inside the
    quantization section when there is one."""
    error = _modelopt(q)
    if error is not None:
        return error
    layers = q["quantization"].get("quantized_layers", {}) if "quantization" in q else q.get("quantized_layers", {})
    if not layers:
        return ("MIXED_PRECISION quant_algo requires a non-empty 'quantized_layers' mapping in the quantization "
                "config.")
    return None


def _modelopt_mxfp8(q: dict[str, Any]) -> str | None:
    """ModelOptMxFp8Config: the base checks (MXFP8 by default), then its
    __init__ (modelopt.py:1210-1220): a quant_algo without MXFP8 in it is
    no serialized MXFP8 checkpoint."""
    error = _modelopt(q, default_mxfp8=True)
    if error is not None:
        return error
    inner = q["quantization"] if "quantization" in q else q
    if ("quantization" in q or q.get("quant_algo")) and "MXFP8" not in str(inner.get("quant_algo")).upper():
        return "MXFP8 quantization requires a serialized checkpoint. Dynamic quantization is not supported."
    return None


def _group_size_error(group_size: Any) -> str | None:
    """INCConfigParser._normalize_group_size (inc/config_parser.py:217-236)."""
    if isinstance(group_size, list):
        if len(group_size) != 2 or not all(isinstance(v, int) for v in group_size):
            return f"INC block-wise FP8 requires group_size to be a 2-D integer sequence, but found {group_size!r}."
        return None
    if not isinstance(group_size, int):
        return f"INC group_size must be an int or a 2-D integer sequence, but found {type(group_size).__name__}."
    return None


def _inc(q: dict[str, Any]) -> str | None:
    """INCConfig.from_config / __init__ (inc/inc.py:71-110, 274-305): bits
    and group_size required, the bit widths it packs (its other sets print in
    an order Python's string hashing picks, so they are not compared here)."""
    for key in ("bits", "group_size"):
        if key not in q:
            return _missing([key])
    error = _group_size_error(q["group_size"])
    if error is not None:
        return error
    bits = q["bits"]
    if not _hashable(bits):
        return f"unhashable type: '{type(bits).__name__}'"
    if bits not in {2, 3, 4, 5, 6, 7, 8}:
        return f"Unsupported weight_bits: {bits}, currently only support {{2, 3, 4, 5, 6, 7, 8}}."
    return None


def _quark(q: dict[str, Any]) -> str | None:
    """QuarkConfig.from_config (quark/quark.py:269-306), its first steps:
    an export section, and a layer_quant_config for a kv_cache_group."""
    export = q.get("export")
    if export is None:
        return "The export key should be included in the configurations of Quark quantized model"
    if not isinstance(export, dict):
        return f"'{type(export).__name__}' object has no attribute 'get'"
    group = export.get("kv_cache_group")
    if not hasattr(group, "__len__"):
        return f"object of type '{type(group).__name__}' has no len()"
    if len(group) and not isinstance(q.get("layer_quant_config"), dict):
        return f"'{type(q.get('layer_quant_config')).__name__}' object has no attribute 'keys'"
    return None


# compressed-tensors utils.py:43-50: the formats whose activations are quantized
_ACT_FORMATS = ("naive-quantized", "int-quantized", "float-quantized", "nvfp4-pack-quantized")


def _compressed_tensors(q: dict[str, Any]) -> str | None:
    """CompressedTensorsConfig.from_config (compressed_tensors/compressed_tensors.py:235-385):
    the config groups' shape, weights present, and the assertion that an
    activation-quantized format without input_activations has float weights
    (QuantizationArgs' own field validation is not modelled)."""
    if "config_groups" not in q:
        return None
    groups = q["config_groups"]
    if not isinstance(groups, dict):
        return f"'{type(groups).__name__}' object has no attribute 'items'"
    for group in groups.values():
        if not isinstance(group, dict) or not isinstance(group.get("targets"), list) or not all(
                isinstance(t, str) for t in group["targets"]):
            return None  # fails in ways not modelled here
        targets = group["targets"]
        if len(targets) == 1 and targets[0].endswith("Attention"):
            continue  # attention quantization rides on the KV-cache scheme: the group is dropped
        for _ in targets:
            weights = group.get("weights")
            if not isinstance(weights, dict):
                return "Input should be a valid dictionary or instance of QuantizationArgs"
            if weights.get("actorder") in ("group", "dynamic"):
                return (f"Compressed-tensors group/dynamic activation ordering (actorder={weights['actorder']!r}) "
                        "is no longer supported. Use a checkpoint with static/weight activation ordering or without "
                        "activation ordering.")
            fmt = group.get("format") if group.get("format") is not None else q.get("format")
            if (fmt in _ACT_FORMATS or group.get("input_activations")) and not group.get("input_activations") \
                    and weights.get("type", "int") != "float":
                # an assert inside VllmConfig's validation: pydantic reports "Assertion failed, "
                return ("Assertion failed (the format quantizes activations but the group gives no "
                        "input_activations, so its weights must be type float)")
    return None


_CHECKERS: dict[str, _Checker] = {
    "Fp8Config": _fp8,
    "DeepseekV4FP8Config(Fp8Config)": _fp8,
    "AutoAWQConfig": _awq,
    "AutoGPTQConfig": _gptq,
    "MoeWNA16Config": _moe_wna16,
    "OnlineQuantizationConfig": _online,
    "TorchAOConfig": _torchao,
    "ModelOptFp8Config": _modelopt_fp8,
    "ModelOptNvFp4Config": _modelopt,
    "ModelOptMixedPrecisionConfig": _modelopt_mixed,
    "ModelOptMxFp8Config": _modelopt_mxfp8,
    "INCConfig": _inc,
    "QuarkConfig": _quark,
    "CompressedTensorsConfig": _compressed_tensors,
}


def from_config_errors(q: dict[str, Any] | None) -> tuple[tuple[str, str], ...]:
    """(config class, its refusal) for every modelled class whose
    from_config refuses the normalized checkpoint quantization config ``q``."""
    if not q:
        return ()
    out = []
    for cls, check in _CHECKERS.items():
        error = check(q)
        if error is not None:
            out.append((cls, error))
    return tuple(out)
