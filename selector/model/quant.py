"""Quantization facts vLLM reads from the config: the quantization config
and what it makes of the KV-cache dtype."""

from __future__ import annotations

from typing import Any

from attn_select.selector.engines import VLLM_VERSION
from attn_select.selector.errors import UserError, shown
from attn_select.selector.model.hf_classes import HFView


def check_quant_shape(q: dict[str, Any], where: str, prefix: str = "quantization_config.") -> None:
    """The parts of a quantization config that vLLM calls ``.get`` on must
    be objects, and a user error otherwise (vLLM itself fails with an
    AttributeError): ``producer`` (_normalize_quantization_config reads
    ``producer.name``), ``quant_method`` a string, and a ModelOpt config's
    ``quantization`` block (ModelOpt's from_config: "Expected 'quantization'
    to be a dictionary")."""
    producer = q.get("producer", {})
    if not isinstance(producer, dict):
        raise UserError(f"{where}: field '{prefix}producer' is {shown(producer)}; it must be an object such as "
                        '{"name": "modelopt", "version": "..."}, whose name vLLM reads')
    method = q.get("quant_method", "")
    if not isinstance(method, str):
        raise UserError(f"{where}: field '{prefix}quant_method' is {shown(method)}; it must be a string such as "
                        '"fp8" or "modelopt"')
    inner = q.get("quantization", {})
    modelopt = (producer.get("name") == "modelopt" or method.lower().startswith("modelopt")
                or (isinstance(inner, dict) and "modelopt_quant_config" in inner))
    if modelopt and not isinstance(inner, dict):
        raise UserError(f"{where}: field '{prefix}quantization' is {shown(inner)}; a ModelOpt config's "
                        'quantization block must be an object such as {"quant_algo": "FP8"}')


def _quant_config(hf: HFView, text: HFView, where: str = "config.json") -> dict[str, Any] | None:
    """get_quantization_config: quantization_config, else compression_config,
    on the config and then on its text config; quant_method normalized."""
    for view, at in ((hf, ""), (text, "text_config.")):
        q = view.get("quantization_config")
        key = "quantization_config"
        if q is None:
            q, key = view.get("compression_config"), "compression_config"
        if q is not None:
            check_quant_shape(q, where, f"{at if text is not hf else ''}{key}.")
            q = dict(q)
            producer = q.get("producer", {})
            inner = q.get("quantization", {})
            if (isinstance(producer, dict) and producer.get("name") == "modelopt") or (
                isinstance(inner, dict) and "modelopt_quant_config" in inner
            ):
                algo = str(inner.get("quant_algo", "")).upper()
                method = {"FP8": "modelopt", "FP8_PER_CHANNEL_PER_TOKEN": "modelopt", "FP8_PB_WO": "modelopt",
                          "NVFP4": "modelopt_fp4", "MIXED_PRECISION": "modelopt_mixed"}.get(algo)
                if method:
                    q["quant_method"] = method
                elif inner.get("quant_algo") is not None:
                    # _normalize_quantization_config's own refusal (model_arch_config_convertor.py:256-270)
                    raise UserError(f"{where}: {at}{key}: Unknown ModelOpt quant algo: {inner.get('quant_algo')} "
                                    f"(vLLM {VLLM_VERSION} maps a ModelOpt producer's FP8, FP8_PER_CHANNEL_PER_TOKEN, "
                                    "FP8_PB_WO, NVFP4 or MIXED_PRECISION); fix quant_algo")
            q["quant_method"] = str(q.get("quant_method", "")).lower().replace("compressed_tensors",
                                                                              "compressed-tensors")
            return q
    return None


# architectures whose MODELS_CONFIG_MAP hook (verify_and_update_model_config,
# run by ModelConfig.__post_init__ before _verify_quantization) rewrites the
# checkpoint's quant_method: KimiK3ForConditionalGenerationConfig sends
# compressed-tensors mxfp4-pack-quantized experts to Mxfp4Config
# (vllm/model_executor/models/config.py:492-522)
_MXFP4_PACK_TO_MXFP4 = frozenset({"KimiK3ForConditionalGeneration", "KimiK3MTPModel"})


def model_hook_quant(q: dict[str, Any] | None, architecture: str) -> dict[str, Any] | None:
    """The quantization config as the architecture's model hook leaves it."""
    if (q is not None and architecture in _MXFP4_PACK_TO_MXFP4 and q.get("quant_method") == "compressed-tensors"
            and q.get("format") == "mxfp4-pack-quantized"):
        return {**q, "quant_method": "mxfp4"}
    return q


def _kv_cache_facts(q: dict[str, Any] | None) -> tuple[str | None, bool]:
    """(the cache dtype "auto" becomes, per-head scales) from the checkpoint's
    quantization config: ModelOpt via get_kv_cache_quant_algo_string,
    compressed-tensors via Attention's kv_cache_scheme -> "fp8"."""
    if not q:
        return None, False
    method = q["quant_method"]
    if method.startswith("modelopt"):
        inner = q.get("quantization", q)
        algo = (inner.get("kv_cache_scheme") or q.get("kv_cache_scheme") or inner.get("kv_cache_quant_algo")
                or q.get("kv_cache_quant_algo"))
        if isinstance(algo, dict):
            if algo.get("dynamic") is False and algo.get("num_bits") == 8 and algo.get("type") == "float":
                algo = "fp8"
            elif algo.get("num_bits") == 4 and algo.get("type") == "float":
                algo = "nvfp4"
            else:
                return None, False
        if isinstance(algo, str):
            return {"fp8": "fp8_e4m3", "nvfp4": "nvfp4"}.get(algo.lower()), False
        return None, False
    if method == "compressed-tensors":
        scheme = q.get("kv_cache_scheme")
        if isinstance(scheme, dict):
            return "fp8", scheme.get("strategy") == "attn_head"
    return None, False



# CompressedTensorsKVCacheMethod.validate_kv_cache_scheme: the strategies it takes
_CT_KV_STRATEGIES = ("tensor", "attn_head")


def check_kv_cache_scheme(q: dict[str, Any] | None, groups: tuple, where: str) -> None:
    """A compressed-tensors kv_cache_scheme vLLM cannot build attention
    layers with: every ``Attention`` (not MLAAttention) gets a
    CompressedTensorsKVCacheMethod, whose __init__ validates the scheme
    (a mapping; type float, 8 bits; strategy tensor or attn_head;
    symmetric). The engine config takes any scheme that is not null."""
    if not q or q.get("quant_method") != "compressed-tensors" or q.get("kv_cache_scheme") is None:
        return
    if not any(not g.attn.use_mla for g in groups):
        return
    scheme = q["kv_cache_scheme"]
    fail = (f"so vLLM {VLLM_VERSION} fails building the attention layers "
            "(CompressedTensorsKVCacheMethod.validate_kv_cache_scheme)")
    if not isinstance(scheme, dict):
        why = f"kv_cache_scheme is {shown(scheme)}, not a mapping"
    elif scheme.get("type") != "float" or scheme.get("num_bits") != 8:
        why = (f"kv_cache_scheme has type {shown(scheme.get('type'))} and num_bits {shown(scheme.get('num_bits'))}; "
               "only type float with 8 bits is supported")
    elif scheme.get("strategy") not in _CT_KV_STRATEGIES:
        why = f"kv_cache_scheme strategy is {shown(scheme.get('strategy'))}; only tensor or attn_head is supported"
    elif not scheme.get("symmetric"):
        why = f"kv_cache_scheme symmetric is {shown(scheme.get('symmetric'))}; only a symmetric scale is supported"
    else:
        return
    raise UserError(f"{where}: quantization_config {why}, {fail}; fix the checkpoint's kv_cache_scheme")
