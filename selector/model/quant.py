"""Quantization facts vLLM reads from the config: the quantization config
and what it makes of the KV-cache dtype."""

from __future__ import annotations

from typing import Any

from attn_select.selector.model.hf_classes import HFView


def _quant_config(hf: HFView, text: HFView) -> dict[str, Any] | None:
    """get_quantization_config: quantization_config, else compression_config,
    on the config and then on its text config; quant_method normalized."""
    for view in (hf, text):
        q = view.get("quantization_config")
        if q is None:
            q = view.get("compression_config")
        if q is not None:
            q = dict(q)
            producer = q.get("producer") or {}
            inner = q.get("quantization") or {}
            if (isinstance(producer, dict) and producer.get("name") == "modelopt") or (
                isinstance(inner, dict) and "modelopt_quant_config" in inner
            ):
                algo = str(inner.get("quant_algo", "")).upper()
                method = {"FP8": "modelopt", "FP8_PER_CHANNEL_PER_TOKEN": "modelopt", "FP8_PB_WO": "modelopt",
                          "NVFP4": "modelopt_fp4", "MIXED_PRECISION": "modelopt_mixed"}.get(algo)
                if method:
                    q["quant_method"] = method
            q["quant_method"] = str(q.get("quant_method", "")).lower().replace("compressed_tensors",
                                                                              "compressed-tensors")
            return q
    return None


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

