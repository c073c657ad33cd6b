"""dtype: ModelConfig's _get_and_verify_dtype / _resolve_auto_dtype, and
ModelArchConfigConvertorBase.get_torch_dtype (which dtype the config names)."""

from __future__ import annotations

from attn_select.selector.config import Capability
from attn_select.selector.errors import UserError
from attn_select.selector.model.hf_classes import HFView
from attn_select.selector.model.hf_dtype import NotADtype, config_dtype


# torch dtype names a config may carry -> our names (float64 stays, and only
# ever falls back under "auto")
_CONFIG_DTYPES = {"float16": "float16", "half": "float16", "bfloat16": "bfloat16", "float32": "float32",
                  "float": "float32", "float64": "float64", "double": "float64"}
# _STR_DTYPE_TO_TORCH_DTYPE: what --dtype accepts besides "auto"
_REQUEST_DTYPES = {"half": "float16", "float16": "float16", "float": "float32", "float32": "float32",
                   "bfloat16": "bfloat16"}
# _FLOAT16_NOT_SUPPORTED_MODELS
_FP16_UNSTABLE = {
    "gemma2": "Numerical instability. Please use bfloat16 or float32 instead.",
    "gemma3": "Numerical instability. Please use bfloat16 or float32 instead.",
    "gemma3_text": "Numerical instability. Please use bfloat16 or float32 instead.",
    "glm4": "Numerical instability. Please use bfloat16 or float32 instead.",
}


def supported_dtypes(cap: Capability) -> tuple[str, ...]:
    """CudaPlatform.supported_dtypes, in preference order."""
    if cap >= Capability(8, 0):
        return ("bfloat16", "float16", "float32")
    if cap >= Capability(6, 0):
        return ("float16", "float32")
    return ("float32",)


def resolve_dtype(
    config_dtype: str, model_type: str, requested: str = "auto", *,
    capability: Capability | None = None, pooling: bool = False,
) -> tuple[str, str | None]:
    """The activation dtype vLLM runs with, and a note when it differs from
    the config's. ``capability`` None assumes compute capability >= 8.0."""
    cap = capability or Capability(8, 0)
    want = requested.strip().lower()
    if want == "auto":
        supported = [d for d in supported_dtypes(cap) if not (d == "float16" and model_type in _FP16_UNSTABLE)]
        preferred = "float16" if pooling and "float16" in supported else supported[0]
        cand = preferred if config_dtype == "float32" else config_dtype
        if cand in supported:
            dtype = cand
        else:
            dtype = preferred  # vLLM warns: the device does not support cand
    elif want in _REQUEST_DTYPES:
        dtype = _REQUEST_DTYPES[want]
    else:
        from attn_select.selector.vllm_names import dtype_error

        raise UserError(dtype_error(requested) or f"unknown dtype {requested!r}")
    if dtype == "float16" and model_type in _FP16_UNSTABLE:
        raise UserError(
            f"The model type {model_type!r} does not support float16. Reason: {_FP16_UNSTABLE[model_type]}"
        )
    if dtype == config_dtype:
        return dtype, None
    how = "upcast" if dtype == "float32" else "downcast" if config_dtype == "float32" else "cast"
    on = f", capability {capability}" if capability is not None else ""
    return dtype, f"dtype: config {config_dtype} {how} to {dtype} ({requested}{on})"


def _config_dtype_name(value: object, where: str) -> str:
    """Our name for a config object's dtype (hf_dtype.config_dtype's answer,
    or a weights dtype): a float type's, another torch dtype's own name
    (int8, float8_e4m3fn: vLLM runs none, so --dtype auto falls back), or a
    non-dtype as written."""
    if isinstance(value, str) and not isinstance(value, NotADtype):
        return _CONFIG_DTYPES.get(value, value)
    if isinstance(value, NotADtype):
        return f"{value} (no dtype)"
    raise UserError(f"{where}: dtype {value!r} is not a torch dtype")


def _find_config_dtype(hf: HFView, text: HFView, where: str, weights: str | None) -> tuple[str, str | None]:
    """ModelArchConfigConvertorBase.get_torch_dtype: the config object's
    dtype (hf_view folded torch_dtype into it), then its text, vision and
    encoder configs', then the weights', else float32. Any value but null
    counts (a 7 or a false too: vLLM reads it and falls back from it)."""
    for view in (hf, text):
        value = view.get("dtype")
        if value is not None:
            return _config_dtype_name(value, where), None
    for sub in ("vision_config", "encoder_config"):
        cfg = hf.get(sub)
        if isinstance(cfg, dict):
            value = config_dtype(cfg, f"{where} {sub}")
            if value is not None:
                return _config_dtype_name(value, f"{where} {sub}"), None
    if weights is not None:
        return _config_dtype_name(weights, "weights"), f"dtype: config names none; weights are {weights}"
    return "float32", "dtype: neither config nor weights name one; vLLM's fallback float32 assumed"
