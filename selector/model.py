"""config.json -> ModelFacts, the way vLLM 0.33.0 derives each attention
layer's ``get_attn_backend`` inputs.

Three steps, each mirroring one part of what vLLM does with a checkpoint:

1. ``RawConfig`` (pydantic) type-checks the config.json fields we read.
2. ``HFView`` applies what the transformers config class does when it loads
   that JSON (class defaults, ``attribute_map``, ``__post_init__``: Qwen2's
   ``use_sliding_window`` gate, default ``layer_types`` ...), so we read the
   same attributes vLLM reads from ``hf_config`` / ``hf_text_config``.
3. Model-level facts (``ModelConfig`` and ``ModelArchConfigConvertorBase``)
   and per-layer facts: what each model file passes to ``Attention``,
   ``EncoderOnlyAttention``, ``CrossAttention`` or ``MLAAttention``, and what
   that layer class then passes to ``get_attn_backend``.

No transformers, no torch, no network; nothing in a model folder is executed.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pydantic import BaseModel, ConfigDict, ValidationError

from attn_select.selector.config import Capability
from attn_select.selector.errors import UserError
from attn_select.selector.model_facts import (
    AttentionGroup,
    LayerAttention,
    ModelFacts,
    OtherLayers,
)

# --------------------------------------------------------------------------
# 1. The raw fields, type-checked
# --------------------------------------------------------------------------


class RawConfig(BaseModel):
    """The config.json fields attn-select reads. Others are kept untyped.

    ``defer_build``: the validator is built on first use, so importing this
    module stays cheap for commands that never parse a config.
    """

    model_config = ConfigDict(extra="allow", defer_build=True)

    architectures: list[str] | None = None
    model_type: str | None = None
    torch_dtype: str | None = None
    dtype: str | None = None
    # sizes
    num_hidden_layers: int | None = None
    num_attention_heads: int | None = None
    num_key_value_heads: int | None = None
    num_kv_heads: int | None = None
    n_head_kv: int | None = None
    multi_query_group_num: int | None = None
    num_attention_groups: int | None = None
    hidden_size: int | None = None
    head_dim: int | None = None
    hidden_size_per_head: int | None = None
    # windows and layer kinds
    sliding_window: int | None = None
    use_sliding_window: bool | None = None
    max_window_layers: int | None = None
    layer_types: list[str] | None = None
    layers_block_type: list[str] | None = None  # Jamba-style hybrids
    hybrid_override_pattern: str | None = None  # Nemotron-H: one character per layer
    sliding_window_pattern: int | None = None
    full_attention_interval: int | None = None
    use_bidirectional_attention: bool | str | None = None
    is_causal: bool | None = None
    attn_logit_softcapping: float | None = None
    attn_output_gate: bool | None = None
    # MLA (DeepSeek)
    kv_lora_rank: int | None = None
    q_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    qk_nope_head_dim: int | None = None
    v_head_dim: int | None = None
    index_topk: int | None = None
    # encoder-decoder (Whisper)
    d_model: int | None = None
    encoder_layers: int | None = None
    decoder_layers: int | None = None
    encoder_attention_heads: int | None = None
    decoder_attention_heads: int | None = None
    is_encoder_decoder: bool | None = None
    # sub-configs and model-level switches
    text_config: RawConfig | None = None
    vision_config: dict[str, Any] | None = None
    encoder_config: dict[str, Any] | None = None
    quantization_config: dict[str, Any] | None = None
    compression_config: dict[str, Any] | None = None
    rswa_window: int | None = None
    canvas_length: int | None = None
    is_mm_prefix_lm: bool | None = None
    vision_n_layers: int | None = None
    alibi: bool | None = None
    position_encoding_type: str | None = None


def parse_raw(data: object, where: str) -> dict[str, Any]:
    """Type-check a config mapping; return the given fields (nested as dicts)."""
    if not isinstance(data, dict):
        raise UserError(f"{where}: expected a JSON object with the model config, got {type(data).__name__}")
    try:
        raw = RawConfig.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        raise UserError(
            f"{where}: field {loc!r}: {err['msg']} (got {err.get('input')!r}); fix the value in the config"
        ) from None
    return raw.model_dump(exclude_unset=True)


# --------------------------------------------------------------------------
# 2. What the transformers config class makes of those fields
# --------------------------------------------------------------------------


class HFView:
    """The attributes vLLM reads from one transformers config object
    (``hf_config`` or ``hf_text_config``), after the class defaults and
    ``__post_init__``. ``defaulted`` names the fields that came from class
    defaults rather than config.json."""

    __slots__ = ("model_type", "attrs", "defaulted", "hf_class")

    def __init__(self, model_type: str, attrs: dict[str, Any], defaulted: set[str], hf_class: str):
        self.model_type = model_type
        self.attrs = attrs
        self.defaulted = defaulted
        self.hf_class = hf_class

    def get(self, name: str, default: Any = None) -> Any:
        return self.attrs.get(name, default)

    def has(self, name: str) -> bool:
        return name in self.attrs


def _alternating(n: int, every: int, hit: str, other: str) -> list[str]:
    """transformers' default layer_types: ``other`` on every ``every``-th layer."""
    return [hit if (i + 1) % every else other for i in range(n)]


def _post_head_dim_and_kv(a: dict[str, Any]) -> None:
    # LlamaConfig / MistralConfig / GptOssConfig __post_init__
    if a.get("head_dim") is None and a.get("num_attention_heads"):
        a["head_dim"] = a["hidden_size"] // a["num_attention_heads"]
    if a.get("num_key_value_heads") is None:
        a["num_key_value_heads"] = a.get("num_attention_heads")


def _post_kv(a: dict[str, Any]) -> None:
    if a.get("num_key_value_heads") is None:
        a["num_key_value_heads"] = a.get("num_attention_heads")


def _post_qwen2(a: dict[str, Any]) -> None:
    # Qwen2Config / Qwen3Config: the window exists only with use_sliding_window,
    # and only layers from max_window_layers on slide.
    if not a.get("use_sliding_window"):
        a["sliding_window"] = None
    _post_kv(a)
    if a.get("layer_types") is None:
        sw, first = a.get("sliding_window"), a.get("max_window_layers", 28)
        a["layer_types"] = [
            "sliding_attention" if sw is not None and i >= first else "full_attention"
            for i in range(a["num_hidden_layers"])
        ]


def _post_qwen3_moe(a: dict[str, Any]) -> None:
    if not a.get("use_sliding_window"):
        a["sliding_window"] = None


def _post_gemma2(a: dict[str, Any]) -> None:
    if a.get("layer_types") is None:
        a["layer_types"] = _alternating(a["num_hidden_layers"], 2, "sliding_attention", "full_attention")


def _post_gemma3_text(a: dict[str, Any]) -> None:
    if a.get("use_bidirectional_attention") and a.get("sliding_window") is not None:
        a["sliding_window"] = a["sliding_window"] // 2 + 1  # transformers: exclusive bound for FA
    if a.get("layer_types") is None:
        every = a.get("sliding_window_pattern") or 6
        a["layer_types"] = _alternating(a["num_hidden_layers"], every, "sliding_attention", "full_attention")


def _post_gpt_oss(a: dict[str, Any]) -> None:
    _post_head_dim_and_kv(a)
    if a.get("layer_types") is None:
        a["layer_types"] = _alternating(a["num_hidden_layers"], 2, "sliding_attention", "full_attention")


def _post_qwen3_next(a: dict[str, Any]) -> None:
    if a.get("layer_types") is None:
        every = a.get("full_attention_interval") or 4
        a["layer_types"] = _alternating(a["num_hidden_layers"], every, "linear_attention", "full_attention")


def _post_deepseek(a: dict[str, Any]) -> None:
    _post_kv(a)
    # DeepseekV2/V3Config set head_dim to the rope part (for RoPE); vLLM's
    # get_head_size takes the MLA branch first, so this only shows without MLA.
    a["head_dim"] = a.get("qk_rope_head_dim")


@dataclass(frozen=True)
class _HFClass:
    """One transformers config class, reduced to what changes vLLM's view."""

    name: str
    defaults: dict[str, Any]
    post_init: Callable[[dict[str, Any]], None] | None = None
    attribute_map: dict[str, str] = field(default_factory=dict)
    text_config_type: str | None = None  # model_type of the text_config sub-config class


_LLAMA_SIZES = {"num_hidden_layers": 32, "num_attention_heads": 32, "hidden_size": 4096}
_DEEPSEEK_MLA = {"q_lora_rank": 1536, "kv_lora_rank": 512, "qk_rope_head_dim": 64,
                 "qk_nope_head_dim": 128, "v_head_dim": 128}

# transformers 5.x class defaults for the fields vLLM reads (vLLM 0.33.0 needs
# transformers >= 5.16.1). deepseek_v32 is registered by vLLM with
# transformers' DeepseekV3Config.
_HF_CLASSES: dict[str, _HFClass] = {
    "llama": _HFClass("LlamaConfig", {**_LLAMA_SIZES, "num_key_value_heads": None, "head_dim": None},
                      _post_head_dim_and_kv),
    "mistral": _HFClass("MistralConfig", {**_LLAMA_SIZES, "num_key_value_heads": 8, "head_dim": None,
                                          "sliding_window": 4096}, _post_head_dim_and_kv),
    "mixtral": _HFClass("MixtralConfig", {**_LLAMA_SIZES, "num_key_value_heads": 8, "head_dim": None,
                                          "sliding_window": None}, _post_kv),
    "phi3": _HFClass("Phi3Config", {"num_hidden_layers": 32, "num_attention_heads": 32, "hidden_size": 3072,
                                    "num_key_value_heads": None, "sliding_window": None}, _post_kv),
    "qwen2": _HFClass("Qwen2Config", {**_LLAMA_SIZES, "num_key_value_heads": 32, "use_sliding_window": False,
                                      "sliding_window": 4096, "max_window_layers": 28}, _post_qwen2),
    "qwen3": _HFClass("Qwen3Config", {**_LLAMA_SIZES, "num_key_value_heads": 32, "head_dim": 128,
                                      "use_sliding_window": False, "sliding_window": 4096,
                                      "max_window_layers": 28}, _post_qwen2),
    "qwen3_moe": _HFClass("Qwen3MoeConfig", {"num_hidden_layers": 24, "num_attention_heads": 32,
                                             "hidden_size": 2048, "num_key_value_heads": 4,
                                             "use_sliding_window": False, "sliding_window": 4096},
                          _post_qwen3_moe),
    "qwen3_next": _HFClass("Qwen3NextConfig", {"num_hidden_layers": 48, "num_attention_heads": 16,
                                               "hidden_size": 2048, "num_key_value_heads": 2, "head_dim": 256},
                           _post_qwen3_next),
    "gemma2": _HFClass("Gemma2Config", {"num_hidden_layers": 26, "num_attention_heads": 8, "hidden_size": 2304,
                                        "num_key_value_heads": 4, "head_dim": 256, "sliding_window": 4096,
                                        "attn_logit_softcapping": 50.0}, _post_gemma2),
    "gemma3_text": _HFClass("Gemma3TextConfig", {"num_hidden_layers": 26, "num_attention_heads": 8,
                                                 "hidden_size": 2304, "num_key_value_heads": 4, "head_dim": 256,
                                                 "sliding_window": 4096, "attn_logit_softcapping": None,
                                                 "use_bidirectional_attention": False}, _post_gemma3_text),
    "gemma3": _HFClass("Gemma3Config", {}, None, text_config_type="gemma3_text"),
    "gpt_oss": _HFClass("GptOssConfig", {"num_hidden_layers": 36, "num_attention_heads": 64, "hidden_size": 2880,
                                         "num_key_value_heads": 8, "head_dim": 64, "sliding_window": 128},
                        _post_gpt_oss),
    "deepseek_v2": _HFClass("DeepseekV2Config", {"num_hidden_layers": 30, "num_attention_heads": 32,
                                                 "hidden_size": 4096, "num_key_value_heads": 32, **_DEEPSEEK_MLA},
                            _post_deepseek),
    "deepseek_v3": _HFClass("DeepseekV3Config", {"num_hidden_layers": 61, "num_attention_heads": 128,
                                                 "hidden_size": 7168, "num_key_value_heads": 128, **_DEEPSEEK_MLA},
                            _post_deepseek),
    "bert": _HFClass("BertConfig", {"num_hidden_layers": 12, "num_attention_heads": 12, "hidden_size": 768}),
    "whisper": _HFClass(
        "WhisperConfig",
        {"encoder_layers": 4, "decoder_layers": 4, "encoder_attention_heads": 6,
         "decoder_attention_heads": 6, "d_model": 384, "is_encoder_decoder": True},
        None,
        attribute_map={"num_key_value_heads": "encoder_attention_heads",
                       "num_attention_heads": "encoder_attention_heads",
                       "hidden_size": "d_model", "num_hidden_layers": "encoder_layers"},
    ),
}
_HF_CLASSES["deepseek_v32"] = _HF_CLASSES["deepseek_v3"]


def hf_view(given: dict[str, Any], model_type: str | None, where: str) -> HFView:
    """The transformers config object vLLM would get for these fields."""
    if not model_type:
        raise UserError(
            f"{where}: no 'model_type'; transformers (and so vLLM) needs it to pick the config class"
        )
    cls = _HF_CLASSES.get(model_type)
    if cls is None:
        return HFView(model_type, dict(given), set(), "PreTrainedConfig")
    attrs = {**cls.defaults, **given}
    defaulted = set(cls.defaults) - set(given)
    for alias, target in cls.attribute_map.items():
        # attribute_map routes both writes and reads of the alias to the target
        if alias in given and target not in given:
            attrs[target] = given[alias]
            defaulted.discard(target)
        attrs[alias] = attrs[target]
        if target in defaulted:
            defaulted.add(alias)
        else:
            defaulted.discard(alias)
    if cls.post_init is not None:
        missing = [k for k in ("num_hidden_layers", "hidden_size") if attrs.get(k) is None and k in cls.defaults]
        if missing:
            raise UserError(f"{where}: {missing[0]} is null; give the model's value")
        cls.post_init(attrs)
        derived = attrs.get("layer_types")
        if "layer_types" not in given and derived and len(set(derived)) > 1:
            defaulted.add("layer_types")  # reported as derived by the class
        if given.get("sliding_window") is not None and attrs.get("sliding_window") is None:
            defaulted.add("sliding_window_dropped")
    return HFView(model_type, attrs, defaulted, cls.name)


# --------------------------------------------------------------------------
# 3a. Model-level facts (vllm/config/model.py, model_arch_config_convertor.py)
# --------------------------------------------------------------------------

# ModelArchConfigConvertorBase.is_deepseek_mla: model types with MLA attention
_MLA_MODEL_TYPES = frozenset({
    "axk1", "deepseek_v2", "deepseek_v3", "deepseek_v32", "deepseek_v4", "deepseek_v41", "dots3_note",
    "deepseek_mtp", "k3_dspark", "glm5_next", "glm5_next_text", "glm_moe_dsa", "glm4_moe_lite",
    "glm4_moe_lite_mtp", "kimi_k2", "kimi_linear", "longcat_flash", "pangu_ultra_moe", "pangu_ultra_moe_mtp",
    "bailing_hybrid", "bailing_hybrid_mtp", "bailing_hybrid_v3_mtp", "hy_v4", "hy_v4_mtp",
})
# is_mm_prefix_lm fallback list (models with bidirectional attention over image tokens)
_MM_PREFIX_LM_MODEL_TYPES = frozenset({"bagel", "gemma3", "molmo2", "moondream3", "paligemma"})
# CONFIG_FIELD_ALIASES["total_num_kv_heads"], in lookup order
_KV_HEAD_NAMES = ("n_head_kv", "num_kv_heads", "num_key_value_heads", "multi_query_group_num",
                  "num_attention_groups")
# _FLOAT16_NOT_SUPPORTED_MODELS
_FP16_UNSTABLE = {
    "gemma2": "Numerical instability. Please use bfloat16 or float32 instead.",
    "gemma3": "Numerical instability. Please use bfloat16 or float32 instead.",
    "gemma3_text": "Numerical instability. Please use bfloat16 or float32 instead.",
    "glm4": "Numerical instability. Please use bfloat16 or float32 instead.",
}


def is_deepseek_mla(text: HFView) -> bool:
    """ModelArchConfigConvertorBase.is_deepseek_mla (DeepSeek-V4's compressed
    variant keys on head_dim; the rest on kv_lora_rank)."""
    if text.model_type in _MLA_MODEL_TYPES:
        if text.get("compress_ratios"):
            return text.get("head_dim") is not None
        return text.get("kv_lora_rank") is not None
    return False


def model_head_size(text: HFView) -> int:
    """ModelArchConfigConvertorBase.get_head_size (VLLM_MLA_DISABLE unset)."""
    if is_deepseek_mla(text):
        if text.get("compress_ratios"):
            return text.get("head_dim")
        return text.get("kv_lora_rank") + (text.get("qk_rope_head_dim") or 0)
    head_dim = text.get("head_dim")
    if head_dim is not None and head_dim > 0:
        return head_dim
    if text.get("hidden_size_per_head") is not None:
        return text.get("hidden_size_per_head")
    heads = text.get("num_attention_heads") or 0
    if heads == 0:
        return 0
    return (text.get("hidden_size") or 0) // heads


def total_kv_heads(text: HFView) -> int:
    """ModelArchConfigConvertorBase.get_total_num_kv_heads: first alias set
    (getattr_iter skips absent ones), else the query head count."""
    for name in _KV_HEAD_NAMES:
        if text.has(name) and text.get(name) is not None:
            return text.get(name)
    return text.get("num_attention_heads") or 0


def is_mm_prefix_lm(hf: HFView, text: HFView, mm_inputs: bool) -> bool:
    """ModelArchConfigConvertor*.is_mm_prefix_lm; ``mm_inputs`` False is a
    deployment with multimodal inputs disabled (``--language-model-only`` or
    every modality limited to 0), which clears it."""
    if not mm_inputs:
        return False
    if hf.model_type in ("gemma4", "gemma4_text", "gemma4_unified", "gemma4_unified_text",
                         "diffusion_gemma", "diffusion_gemma_text"):
        return text.get("use_bidirectional_attention") == "vision"
    if hf.model_type == "deepseek_v4":
        return (hf.get("vision_n_layers") or 0) > 0
    if hf.model_type == "cohere_asr":
        return False
    if hf.has("is_mm_prefix_lm"):
        return bool(hf.get("is_mm_prefix_lm"))
    return hf.model_type in _MM_PREFIX_LM_MODEL_TYPES


def uses_alibi(text: HFView, architectures: list[str]) -> bool:
    """ModelConfig.uses_alibi."""
    attn_config = text.get("attn_config")
    return bool(
        text.get("alibi", False)
        or "BloomForCausalLM" in architectures
        or text.get("position_encoding_type", "") == "alibi"
        or (isinstance(attn_config, dict) and attn_config.get("alibi", False))
    )


# --------------------------------------------------------------------------
# dtype: ModelConfig's _get_and_verify_dtype / _resolve_auto_dtype
# --------------------------------------------------------------------------

# torch dtype names a config may carry -> our names (float64 stays, and only
# ever falls back under "auto")
_CONFIG_DTYPES = {"float16": "float16", "half": "float16", "bfloat16": "bfloat16", "float32": "float32",
                  "float": "float32", "float64": "float64", "double": "float64"}
# _STR_DTYPE_TO_TORCH_DTYPE: what --dtype accepts besides "auto"
_REQUEST_DTYPES = {"half": "float16", "float16": "float16", "float": "float32", "float32": "float32",
                   "bfloat16": "bfloat16"}


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
        raise UserError(
            f"unknown dtype {requested!r}; choose auto, float16 (half), bfloat16 or float32 (float)"
        )
    if dtype == "float16" and model_type in _FP16_UNSTABLE:
        raise UserError(
            f"The model type {model_type!r} does not support float16. Reason: {_FP16_UNSTABLE[model_type]}"
        )
    if dtype == config_dtype:
        return dtype, None
    how = "upcast" if dtype == "float32" else "downcast" if config_dtype == "float32" else "cast"
    on = f", capability {capability}" if capability is not None else ""
    return dtype, f"dtype: config {config_dtype} {how} to {dtype} ({requested}{on})"


def _config_dtype_name(value: str, where: str) -> str:
    name = value.strip().lower().removeprefix("torch.")
    if name not in _CONFIG_DTYPES:
        raise UserError(
            f"{where}: torch_dtype {value!r} is not a torch dtype vLLM can run; use bfloat16, float16 or float32"
        )
    return _CONFIG_DTYPES[name]


# safetensors dtype -> (precision level, min, max, resolution) for vLLM's
# common_broadcastable_dtype (is_lossless_cast); values from torch.finfo/iinfo.
_ST_DTYPES: dict[str, tuple[str, int, float, float, float]] = {
    "BOOL": ("bool", 0, 0, 1, 1),
    "U8": ("uint8", 1, 0, 255, 1), "I8": ("int8", 1, -128, 127, 1),
    "I16": ("int16", 1, -(2**15), 2**15 - 1, 1), "U16": ("uint16", 1, 0, 2**16 - 1, 1),
    "I32": ("int32", 1, -(2**31), 2**31 - 1, 1), "U32": ("uint32", 1, 0, 2**32 - 1, 1),
    "I64": ("int64", 1, -(2**63), 2**63 - 1, 1), "U64": ("uint64", 1, 0, 2**64 - 1, 1),
    "F8_E4M3": ("float8_e4m3fn", 2, -448.0, 448.0, 1.0), "F8_E5M2": ("float8_e5m2", 2, -57344.0, 57344.0, 1.0),
    "F16": ("float16", 2, -65504.0, 65504.0, 0.001), "BF16": ("bfloat16", 2, -3.3895e38, 3.3895e38, 0.01),
    "F32": ("float32", 2, -3.4028e38, 3.4028e38, 1e-06), "F64": ("float64", 2, -1.7977e308, 1.7977e308, 1e-15),
}


def _lossless(src: str, dst: str) -> bool:
    """vLLM is_lossless_cast on safetensors dtype names."""
    if src == dst:
        return True
    _, sl, smin, smax, sres = _ST_DTYPES[src]
    _, dl, dmin, dmax, dres = _ST_DTYPES[dst]
    if sl != dl:
        return sl < dl
    if sl == 2:
        return smin >= dmin and smax <= dmax and sres >= dres
    return smin >= dmin and smax <= dmax


def weights_dtype(folder: Path) -> str | None:
    """The dtype vLLM infers from the safetensors headers in ``folder`` when
    the config names none (get_safetensors_params_metadata +
    common_broadcastable_dtype). Reads only the JSON headers."""
    found: list[str] = []
    for path in sorted(folder.glob("*.safetensors")):
        try:
            with path.open("rb") as fh:
                (size,) = struct.unpack("<Q", fh.read(8))
                header = json.loads(fh.read(size))
        except (OSError, struct.error, ValueError):
            continue
        for key, info in header.items():
            st = info.get("dtype") if key != "__metadata__" and isinstance(info, dict) else None
            if st in _ST_DTYPES and st not in found:
                found.append(st)
    if not found:
        return None
    best = max(found, key=lambda d: sum(_lossless(s, d) for s in found))
    return _ST_DTYPES[best][0]


# --------------------------------------------------------------------------
# 3b. Per-layer facts: what each model file builds
# --------------------------------------------------------------------------


@dataclass
class _Ctx:
    """Model-level inputs every layer builder reads."""

    arch: str
    hf: HFView  # hf_config
    text: HFView  # hf_text_config
    tp: int
    cache_window: int | None  # cache_config.sliding_window
    mm_prefix: bool  # model_config.is_mm_prefix_lm
    per_head_scales: bool  # compressed-tensors kv_cache_scheme strategy "attn_head"
    use_mla: bool  # model_config.use_mla
    alibi: bool
    notes: list[str]


@dataclass
class _Stack:
    """One stack of layers as vLLM builds it: attention per layer (several
    per layer for encoder-decoder models), or a non-attention kind."""

    slots: list[tuple[int, LayerAttention | str]] = field(default_factory=list)

    def add(self, index: int, what: LayerAttention | str) -> None:
        self.slots.append((index, what))


def _per_rank(total: int, tp: int, what: str) -> int:
    # vLLM asserts total_num_heads % tp_size == 0 in every attention module
    if not isinstance(total, int) or total <= 0:
        raise UserError(f"the config gives {total!r} {what}; it needs a positive head count")
    if total % tp:
        raise UserError(f"tensor parallel size {tp} does not divide the {total} {what}; pick a divisor")
    return total // tp


def _kv_per_rank(total: int, tp: int) -> int:
    """KV heads per rank: partitioned when >= tp (must divide), replicated
    when fewer (tp must be a multiple); at least one (QKVParallelLinear)."""
    if not isinstance(total, int) or total <= 0:
        raise UserError(f"the config gives {total!r} key/value heads; it needs a positive count")
    if total >= tp and total % tp:
        raise UserError(f"tensor parallel size {tp} does not divide the {total} KV heads; pick a divisor")
    if total < tp and tp % total:
        raise UserError(f"tensor parallel size {tp} is not a multiple of the {total} KV heads; pick one that is")
    return max(1, total // tp)


def _hidden_over(t: HFView, heads: int) -> int:
    """hidden_size // heads, the fallback head size of most model files."""
    hidden = t.get("hidden_size")
    if not isinstance(hidden, int):
        raise UserError("the config has neither head_dim nor hidden_size; add the model's head_dim")
    return hidden // heads


def _check_head_size(head: int, where: str) -> int:
    if head <= 0:
        raise UserError(f"{where}: head size is {head}; set head_dim (or hidden_size and num_attention_heads)")
    return head


def _attention(ctx: _Ctx, heads: int, kv: int, head: int, *, window: int | None = None,
               attn_type: str = "decoder", sinks: bool = False, soft_cap: float | None = None,
               head_v: int | None = None) -> LayerAttention:
    """vllm ``Attention``: the per-layer window wins, else the model-level
    cache_config.sliding_window; sinks, mm-prefix and per-head scales as
    Attention.__init__ passes them to get_attn_backend."""
    return LayerAttention(
        head_size=head, head_size_v=head_v or head, num_heads=heads, num_kv_heads=kv,
        attn_type=attn_type, has_sink=sinks,
        sliding_window=window if window is not None else ctx.cache_window,
        logits_soft_cap=soft_cap, use_alibi=ctx.alibi, use_mm_prefix=ctx.mm_prefix,
        use_per_head_quant_scales=ctx.per_head_scales,
    )


def _bare(heads: int, kv: int, head: int, attn_type: str, soft_cap: float | None = None) -> LayerAttention:
    """``EncoderOnlyAttention`` / ``CrossAttention``: they call
    get_attn_backend with head size, dtype, cache dtype and attn_type only,
    so no window, sinks, mm-prefix or per-head scales reach the selection."""
    return LayerAttention(head_size=head, head_size_v=head, num_heads=heads, num_kv_heads=kv,
                          attn_type=attn_type, logits_soft_cap=soft_cap)


def _self_attention(ctx: _Ctx, causal: bool, heads: int, kv: int, head: int, *,
                    window: int | None = None, soft_cap: float | None = None) -> LayerAttention:
    """Models that read ``is_causal``: False builds EncoderOnlyAttention."""
    if causal:
        return _attention(ctx, heads, kv, head, window=window, soft_cap=soft_cap)
    if (window if window is not None else ctx.cache_window) is not None:
        _note(ctx, "is_causal false: EncoderOnlyAttention passes no sliding window to get_attn_backend")
    return _bare(heads, kv, head, "encoder_only", soft_cap)


def _note(ctx: _Ctx, text: str) -> None:
    if text not in ctx.notes:
        ctx.notes.append(text)


def _layer_types(ctx: _Ctx, n: int) -> list[str] | None:
    types = ctx.text.get("layer_types")
    if types and len(types) < n:
        raise UserError(f"layer_types has {len(types)} entries for {n} layers; give one per layer")
    return types or None


def _window_from_types(ctx: _Ctx, types: list[str] | None, i: int) -> int | None:
    if types and types[i] == "sliding_attention":
        return ctx.text.get("sliding_window")
    return None


def _mla(ctx: _Ctx, heads_total: int, sparse: bool) -> LayerAttention:
    """``MLAAttention``: head_size = kv_lora_rank + qk_rope_head_dim, one
    latent KV head, per-rank query heads; it passes use_mla, use_sparse and
    num_heads only (no window, sinks or mm-prefix). The cache holds one latent
    vector, so head_size_v = head_size."""
    t = ctx.text
    rank, rope = t.get("kv_lora_rank"), t.get("qk_rope_head_dim") or 0
    head = _check_head_size(rank + rope, "kv_lora_rank + qk_rope_head_dim")
    return LayerAttention(
        head_size=head, head_size_v=head, num_heads=_per_rank(heads_total, ctx.tp, "attention heads"),
        num_kv_heads=1, use_mla=True, use_sparse=sparse,
        qk_nope_head_dim=t.get("qk_nope_head_dim") or 0, qk_rope_head_dim=rope,
        v_head_dim=t.get("v_head_dim") or 0, kv_lora_rank=rank,
    )


def _n_layers(ctx: _Ctx) -> int:
    n = ctx.text.get("num_hidden_layers")
    if not isinstance(n, int) or n <= 0:
        raise UserError(f"num_hidden_layers is {n!r}; the config needs a positive layer count")
    return n


def _heads(ctx: _Ctx) -> int:
    heads = ctx.text.get("num_attention_heads")
    if not heads:
        raise UserError("the config has no num_attention_heads; add the model's query head count")
    return heads


def _llama(ctx: _Ctx) -> _Stack:
    """llama.py LlamaAttention (also Mistral, Phi-3 and the other Llama-class
    models): head_dim or hidden // heads; window only on layer_types'
    "sliding_attention" layers, else the model-level window."""
    t, n = ctx.text, _n_layers(ctx)
    total = _heads(ctx)
    heads, kv = _per_rank(total, ctx.tp, "attention heads"), _kv_per_rank(t.get("num_key_value_heads") or total, ctx.tp)
    head = _check_head_size(t.get("head_dim") or _hidden_over(t, total), "head_dim")
    types, causal = _layer_types(ctx, n), t.get("is_causal", True) is not False
    stack = _Stack()
    for i in range(n):
        stack.add(i, _self_attention(ctx, causal, heads, kv, head, window=_window_from_types(ctx, types, i)))
    return stack


def _plain(ctx: _Ctx, *, head_rule: str, reads_is_causal: bool) -> _Stack:
    """Models whose attention takes no per-layer window (Qwen2/Qwen3,
    Qwen3-MoE, Mixtral): every layer gets cache_config.sliding_window."""
    t, n = ctx.text, _n_layers(ctx)
    total = _heads(ctx)
    heads, kv = _per_rank(total, ctx.tp, "attention heads"), _kv_per_rank(t.get("num_key_value_heads") or total, ctx.tp)
    if head_rule == "hidden":  # qwen2.py: hidden_size // num_heads, head_dim ignored
        head = _hidden_over(t, total)
    elif head_rule == "none_only":  # mixtral.py: only a missing head_dim falls back
        head = t.get("head_dim") if t.get("head_dim") is not None else _hidden_over(t, total)
    else:  # qwen3 / qwen3_moe: head_dim or hidden // heads
        head = t.get("head_dim") or _hidden_over(t, total)
    _check_head_size(head, "head_dim")
    causal = not reads_is_causal or t.get("is_causal", True) is not False
    return _Stack([(i, _self_attention(ctx, causal, heads, kv, head)) for i in range(n)])


def _qwen2(ctx: _Ctx, head_rule: str) -> _Stack:
    t = ctx.text
    types = t.get("layer_types") or []
    # Qwen2Model asserts: sliding on only some layers is not supported
    if len(set(types)) > 1 and t.get("max_window_layers") != t.get("num_hidden_layers"):
        raise UserError(
            "vLLM 0.33.0 rejects this Qwen2-family config: sliding window on some but not all layers "
            f"(max_window_layers {t.get('max_window_layers')} < num_hidden_layers {t.get('num_hidden_layers')})"
        )
    return _plain(ctx, head_rule=head_rule, reads_is_causal=True)


def _gemma(ctx: _Ctx, soft_cap_from_config: bool, reads_is_causal: bool) -> _Stack:
    """gemma2.py / gemma3.py: config.head_dim; window on layer_types'
    sliding layers; Gemma-2 passes attn_logit_softcapping, Gemma-3 None."""
    t, n = ctx.text, _n_layers(ctx)
    heads = _per_rank(_heads(ctx), ctx.tp, "attention heads")
    kv = _kv_per_rank(t.get("num_key_value_heads"), ctx.tp)
    head = _check_head_size(t.get("head_dim") or 0, "head_dim")
    types = t.get("layer_types")
    if not types or len(types) < n:
        raise UserError(f"layer_types must list all {n} layers for {ctx.arch}")
    soft_cap = t.get("attn_logit_softcapping") if soft_cap_from_config else None
    causal = not reads_is_causal or t.get("is_causal", True) is not False
    return _Stack([
        (i, _self_attention(ctx, causal, heads, kv, head, window=_window_from_types(ctx, types, i),
                            soft_cap=soft_cap))
        for i in range(n)
    ])


def _gpt_oss(ctx: _Ctx) -> _Stack:
    """gpt_oss.py OAIAttention: sinks on every layer; the window on even
    layers (layer_idx % 2 == 0), whatever layer_types says; heads and KV
    heads are plain ``// tp`` (no floor of one)."""
    t, n, tp = ctx.text, _n_layers(ctx), ctx.tp
    heads = _per_rank(_heads(ctx), tp, "attention heads")
    kv_total = t.get("num_key_value_heads")
    kv = _kv_per_rank(kv_total, 1) // tp
    if kv == 0:
        raise UserError(
            f"tensor parallel size {tp} exceeds gpt-oss's {kv_total} KV heads; vLLM's OAIAttention "
            f"would get {kv_total} // {tp} = 0 KV heads per rank and fail"
        )
    head = _check_head_size(t.get("head_dim") or 0, "head_dim")
    window = t.get("sliding_window")
    return _Stack([
        (i, _attention(ctx, heads, kv, head, window=window if i % 2 == 0 else None, sinks=True)) for i in range(n)
    ])


def _qwen3_next(ctx: _Ctx) -> _Stack:
    """qwen3_next.py: layer_types "full_attention" -> Qwen3NextAttention
    (gated output: the q projection doubles, the head size does not),
    "linear_attention" -> Gated DeltaNet, not an attention backend."""
    t, n = ctx.text, _n_layers(ctx)
    total = _heads(ctx)
    heads, kv = _per_rank(total, ctx.tp, "attention heads"), _kv_per_rank(t.get("num_key_value_heads"), ctx.tp)
    # head_dim or hidden_size // (heads per rank): vLLM divides by the per-rank count
    head = _check_head_size(t.get("head_dim") or _hidden_over(t, heads), "head_dim")
    types = _layer_types(ctx, n) or []
    causal = t.get("is_causal", True) is not False
    stack = _Stack()
    for i in range(n):
        kind = types[i] if i < len(types) else None
        if kind == "full_attention":
            stack.add(i, _self_attention(ctx, causal, heads, kv, head))
        elif kind == "linear_attention":
            stack.add(i, "gated_deltanet")
        else:
            raise UserError(f"layer_types[{i}] is {kind!r}; Qwen3-Next layers are full_attention or linear_attention")
    if t.get("attn_output_gate", True):
        _note(ctx, "attention output gate: q_proj doubles its output; head size unchanged")
    return stack


def _deepseek(ctx: _Ctx) -> _Stack:
    """deepseek_v2.py DeepseekV2DecoderLayer: plain MHA when the qk dims are
    zero (or DeepSeek-V1), MLA when model_config.use_mla, else MHA over
    qk_nope + qk_rope with one KV head per query head."""
    t, n, tp = ctx.text, _n_layers(ctx), ctx.tp
    total = _heads(ctx)
    nope, rope = t.get("qk_nope_head_dim") or 0, t.get("qk_rope_head_dim") or 0
    stack = _Stack()
    if ctx.hf.model_type == "deepseek" or (nope == 0 and rope == 0):
        kv = _kv_per_rank(t.get("num_key_value_heads"), tp)
        head = _check_head_size(_hidden_over(t, total), "hidden_size // num_attention_heads")
        layer = _attention(ctx, _per_rank(total, tp, "attention heads"), kv, head)
        if ctx.hf.get("rswa_window") is not None:
            _note(ctx, "rswa_window: DeepseekAttention builds RSWAAttention (same selector inputs)")
    elif ctx.use_mla:
        layer = _mla(ctx, total, sparse=t.has("index_topk"))
    else:
        heads = _per_rank(total, tp, "attention heads")
        causal = t.get("is_causal", True) is not False
        layer = _self_attention(ctx, causal, heads, heads, _check_head_size(nope + rope, "qk_nope + qk_rope"))
    for i in range(n):
        stack.add(i, layer)
    return stack


def _deepseek_v32(ctx: _Ctx) -> _Stack:
    """vllm/models/deepseek_v32 (CUDA): DeepseekV32Attention is an
    MLAAttention with use_sparse=True on every layer."""
    if ctx.text.get("kv_lora_rank") is None:
        raise UserError("DeepSeek-V3.2 config has no kv_lora_rank; MLA needs it")
    layer = _mla(ctx, _heads(ctx), sparse=True)
    return _Stack([(i, layer) for i in range(_n_layers(ctx))])


def _bert(ctx: _Ctx) -> _Stack:
    """bert.py BertSelfAttention: EncoderOnlyAttention, hidden // heads,
    KV heads = query heads."""
    total = _heads(ctx)
    if ctx.text.get("position_embedding_type", "absolute") != "absolute":
        # bert.py BertEmbedding raises for anything else
        raise UserError("vLLM's BERT supports only position_embedding_type 'absolute'")
    heads = _per_rank(total, ctx.tp, "attention heads")
    head = _check_head_size(_hidden_over(ctx.text, total), "hidden_size // num_attention_heads")
    layer = _bare(heads, _kv_per_rank(total, ctx.tp), head, "encoder_only")
    return _Stack([(i, layer) for i in range(_n_layers(ctx))])


def _whisper(ctx: _Ctx) -> tuple[_Stack, _Stack]:
    """whisper.py: decoder layers hold a self-attention (``Attention``,
    DECODER) and a cross-attention (``CrossAttention``); encoder layers run
    ``MMEncoderAttention``, which picks its kernel through
    get_vit_attn_backend, not get_attn_backend."""
    t, tp = ctx.hf, ctx.tp
    d_model = t.get("d_model")
    dec_total = t.get("decoder_attention_heads")
    dec_heads = _per_rank(dec_total, tp, "decoder attention heads")
    kv = _kv_per_rank(dec_total, tp)
    if not isinstance(d_model, int):
        raise UserError(f"d_model is {d_model!r}; Whisper configs need the model width")
    head = _check_head_size(d_model // dec_total, "d_model // decoder_attention_heads")
    if head * dec_total != d_model:
        raise UserError(f"d_model {d_model} is not divisible by decoder_attention_heads {dec_total}")
    decoder = _Stack()
    for i in range(t.get("decoder_layers") or 0):
        decoder.add(i, _attention(ctx, dec_heads, kv, head))
        decoder.add(i, _bare(dec_heads, kv, head, "encoder_decoder"))
    encoder = _Stack([(i, "mm_encoder_attention") for i in range(t.get("encoder_layers") or 0)])
    _note(ctx, "encoder self-attention uses MMEncoderAttention (get_vit_attn_backend, not "
               "get_attn_backend): listed, not selected; layer numbers count within each stack")
    return decoder, encoder


def _generic(ctx: _Ctx) -> _Stack:
    """Architectures without a dedicated mirror: MLA by model type, else
    Llama-style attention from the config fields, non-attention layer_types
    listed as other layers."""
    t, n = ctx.text, _n_layers(ctx)
    _note(ctx, f"{ctx.arch} has no dedicated mirror here: layers derived from the config fields "
               "the way Llama-style vLLM models read them")
    if ctx.use_mla:
        layer = _mla(ctx, _heads(ctx), sparse=t.has("index_topk"))
        return _Stack([(i, layer) for i in range(n)])
    total = _heads(ctx)
    heads, kv = _per_rank(total, ctx.tp, "attention heads"), _kv_per_rank(total_kv_heads(t), ctx.tp)
    head = _check_head_size(model_head_size(t), "head size")
    causal = t.get("is_causal", True) is not False
    # which layers attend: Jamba's layers_block_type, Nemotron-H's pattern
    # string (one character per layer), else layer_types
    kinds: list[str] | None = None
    types = None
    if t.get("layers_block_type"):
        kinds = list(t.get("layers_block_type"))
    elif t.get("hybrid_override_pattern"):
        kinds = [_PATTERN_KINDS.get(ch, ch) for ch in t.get("hybrid_override_pattern")]
        n = len(kinds)
    else:
        types = _layer_types(ctx, n)
        kinds = types
    if kinds is not None and len(kinds) < n:
        raise UserError(f"the config lists {len(kinds)} layer kinds for {n} layers; give one per layer")
    stack = _Stack()
    for i in range(n):
        kind = kinds[i] if kinds else "full_attention"
        if kind in _ATTENTION_KINDS:
            stack.add(i, _self_attention(ctx, causal, heads, kv, head, window=_window_from_types(ctx, types, i)))
        else:
            stack.add(i, kind)
    return stack


# layer kinds that build an attention layer (layer_types, layers_block_type;
# "hybrid" is Zamba2's shared attention block)
_ATTENTION_KINDS = frozenset({"full_attention", "sliding_attention", "attention", "indexed_attention", "hybrid"})
# Nemotron-H hybrid_override_pattern characters (nemotron_h.py ALL_DECODER_LAYER_TYPES)
_PATTERN_KINDS = {"*": "attention", "M": "mamba", "-": "mlp", "E": "moe"}


# architectures[0] -> (layer builder, runner); the vLLM model file each mirrors
_ARCHS: dict[str, tuple[Callable[[_Ctx], Any], str]] = {
    "LlamaForCausalLM": (_llama, "generate"),
    "LLaMAForCausalLM": (_llama, "generate"),
    "MistralForCausalLM": (_llama, "generate"),
    "Ministral3ForCausalLM": (_llama, "generate"),
    "Phi3ForCausalLM": (_llama, "generate"),
    "InternLM3ForCausalLM": (_llama, "generate"),
    "LlamaModel": (_llama, "pooling"),
    "MistralModel": (_llama, "pooling"),
    "MixtralForCausalLM": (lambda c: _plain(c, head_rule="none_only", reads_is_causal=False), "generate"),
    "Qwen2ForCausalLM": (lambda c: _qwen2(c, "hidden"), "generate"),
    "Qwen2Model": (lambda c: _qwen2(c, "hidden"), "pooling"),
    "Qwen3ForCausalLM": (lambda c: _qwen2(c, "head_dim"), "generate"),
    "Qwen3MoeForCausalLM": (lambda c: _plain(c, head_rule="head_dim", reads_is_causal=False), "generate"),
    "Qwen3NextForCausalLM": (_qwen3_next, "generate"),
    "Gemma2ForCausalLM": (lambda c: _gemma(c, True, False), "generate"),
    "Gemma2Model": (lambda c: _gemma(c, True, False), "pooling"),
    "Gemma3ForCausalLM": (lambda c: _gemma(c, False, True), "generate"),
    "Gemma3ForConditionalGeneration": (lambda c: _gemma(c, False, True), "generate"),
    "GptOssForCausalLM": (_gpt_oss, "generate"),
    "DeepseekForCausalLM": (_deepseek, "generate"),
    "DeepseekV2ForCausalLM": (_deepseek, "generate"),
    "DeepseekV3ForCausalLM": (_deepseek, "generate"),
    "DeepseekV32ForCausalLM": (_deepseek_v32, "generate"),
    "GlmMoeDsaForCausalLM": (_deepseek_v32, "generate"),  # same CUDA module as DeepSeek-V3.2
    "BertModel": (_bert, "pooling"),
    "BertForMaskedLM": (_bert, "pooling"),
    "BertForSequenceClassification": (_bert, "pooling"),
    "BertForTokenClassification": (_bert, "pooling"),
    "WhisperForConditionalGeneration": (_whisper, "generate"),
}

# _SUFFIX_TO_DEFAULTS: the runner of an architecture vLLM's registry lacks
_POOLING_SUFFIXES = ("ForTextEncoding", "EmbeddingModel", "ForSequenceClassification", "ForTokenClassification",
                     "ForAudioClassification", "ForImageClassification", "ForVideoClassification",
                     "ClassificationModel", "ForRewardModeling", "RewardModel")
_GENERATE_SUFFIXES = ("ForCausalLM", "ForConditionalGeneration", "ChatModel", "LMHeadModel")


def _runner_by_suffix(arch: str) -> str:
    for suffix in _GENERATE_SUFFIXES:
        if arch.endswith(suffix):
            return "generate"
    for suffix in _POOLING_SUFFIXES:
        if arch.endswith(suffix):
            return "pooling"
    return "pooling" if arch.endswith("Model") else "generate"


# --------------------------------------------------------------------------
# Quantization facts vLLM reads from the config
# --------------------------------------------------------------------------


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


# --------------------------------------------------------------------------
# Putting it together
# --------------------------------------------------------------------------


def _group_base(attn: LayerAttention, encoder_decoder: bool) -> str:
    if attn.use_mla:
        return "sparse_mla" if attn.use_sparse else "mla"
    if attn.attn_type == "encoder_decoder":
        return "cross"
    if attn.attn_type in ("encoder_only", "encoder"):
        return "encoder"
    if attn.sliding_window is not None:
        return "sliding"
    return "decoder" if encoder_decoder else "full"


def group_layers(stacks: list[_Stack], encoder_decoder: bool) -> tuple[tuple[AttentionGroup, ...], tuple[OtherLayers, ...]]:
    """Layers whose LayerAttention is equal share one selection (vLLM's
    selector is cached on its inputs); order of first appearance."""
    attn_layers: dict[LayerAttention, list[int]] = {}
    other: dict[str, list[int]] = {}
    for stack in stacks:
        for index, what in stack.slots:
            bucket = other if isinstance(what, str) else attn_layers
            bucket.setdefault(what, []).append(index)
    groups, used = [], set()
    for attn, layers in attn_layers.items():
        name = base = _group_base(attn, encoder_decoder)
        if name in used:
            name = f"{base}-{attn.sliding_window}" if attn.sliding_window is not None else base
            n = 2
            while name in used:
                name, n = f"{base}-{n}", n + 1
        used.add(name)
        groups.append(AttentionGroup(name=name, layers=tuple(layers), attn=attn))
    return tuple(groups), tuple(OtherLayers(kind=k, layers=tuple(v)) for k, v in other.items())


def model_facts(
    data: object,
    *,
    name: str,
    where: str = "config.json",
    tp: int = 1,
    dtype: str = "auto",
    capability: Capability | None = None,
    weights: str | None = None,
    mm_inputs: bool = True,
    disable_sliding_window: bool = False,
    source: str | None = None,
    pooling_config: bool = False,
) -> ModelFacts:
    """A parsed config.json (a mapping) -> ModelFacts.

    ``weights`` is the dtype of the weight files, used only when the config
    names none (vLLM reads it from the safetensors headers). ``pooling_config``
    is a Sentence-Transformers pooling module next to the config, which makes
    vLLM run the model as a pooling model.
    """
    if not isinstance(tp, int) or tp < 1:
        raise UserError(f"tensor parallel size must be a positive integer, got {tp!r}")
    given = parse_raw(data, where)
    archs = given.get("architectures") or []
    if not archs:
        raise UserError(f"{where}: no 'architectures'; vLLM needs it to pick the model class")
    arch = archs[0]
    hf = hf_view(given, given.get("model_type"), where)
    text = hf
    if "text_config" in given:
        sub = given["text_config"] or {}
        cls = _HF_CLASSES.get(hf.model_type)
        sub_type = (cls.text_config_type if cls else None) or sub.get("model_type") or hf.model_type
        text = hf_view(sub, sub_type, f"{where} text_config")
    notes: list[str] = []

    # ModelConfig.__post_init__: sliding_window 0 means none; --disable-sliding-window
    if text.get("sliding_window") == 0:
        text.attrs["sliding_window"] = None
        notes.append("sliding_window 0 in config: vLLM treats it as no sliding window")
    if disable_sliding_window and text.get("sliding_window") is not None:
        text.attrs["sliding_window"] = None
        notes.append("--disable-sliding-window: hf_text_config.sliding_window set to None")

    # EngineArgs.create_engine_config: the model-level window only when no
    # layer_types or every layer slides, so it never overrides full layers
    layer_types = text.get("layer_types")
    cache_window = None
    if layer_types is None or all(t == "sliding_attention" for t in layer_types):
        cache_window = text.get("sliding_window")
    if cache_window is not None and layer_types is None:
        notes.append(f"sliding_window {cache_window} with no layer_types: cache_config.sliding_window "
                     "applies it to every layer")

    mla = is_deepseek_mla(text)
    use_mla = mla and text.get("is_causal", True) is not False
    quant = _quant_config(hf, text)
    kv_scheme, per_head = _kv_cache_facts(quant)

    builder, runner = _ARCHS.get(arch, (_generic, None))
    if runner is None:
        runner = _runner_by_suffix(arch)
    if pooling_config:
        runner = "pooling"
    ctx = _Ctx(arch=arch, hf=hf, text=text, tp=tp, cache_window=cache_window,
               mm_prefix=is_mm_prefix_lm(hf, text, mm_inputs), per_head_scales=per_head, use_mla=use_mla,
               alibi=uses_alibi(text, archs), notes=notes)
    built = builder(ctx)
    stacks = list(built) if isinstance(built, tuple) else [built]
    encoder_decoder = bool(hf.get("is_encoder_decoder") or text.get("is_encoder_decoder"))
    groups, others = group_layers(stacks, encoder_decoder)
    if not groups:
        raise UserError(f"{where}: no attention layers found for {arch}; nothing for vLLM to select")

    # model-level facts the selector's predicates read from model_config
    head_size = model_head_size(text)
    total_heads = text.get("num_attention_heads") or 0
    num_kv = 1 if use_mla else max(1, total_kv_heads(text) // tp)

    config_dtype, dtype_from = _find_config_dtype(hf, text, where, weights)
    if dtype_from:
        notes.append(dtype_from)
    resolved, dtype_note = resolve_dtype(config_dtype, hf.model_type, dtype, capability=capability,
                                         pooling=runner == "pooling")
    if dtype_note:
        notes.append(dtype_note)
    if capability is None:
        notes.append("dtype resolved for compute capability >= 8.0 (no device given)")
    if ctx.mm_prefix:
        notes.append(f"is_mm_prefix_lm ({hf.model_type}): every decoder layer passes use_mm_prefix")
    defaulted = sorted(k for k in (hf.defaulted | text.defaulted) & _REPORTED_DEFAULTS
                       if text.get(k, hf.get(k)) is not None)
    if defaulted:
        cls_name = text.hf_class if text is not hf else hf.hf_class
        notes.append(f"not in config.json, set by {cls_name} (class default or __post_init__): " + ", ".join(
            f"{k}={text.get(k, hf.get(k))}" for k in defaulted))
    for view in {id(hf): hf, id(text): text}.values():
        if "layer_types" in view.defaulted:
            kinds = sorted(set(view.get("layer_types")))
            notes.append(f"layer_types not in config.json: {view.hf_class} derives them ({', '.join(kinds)})")
        if "sliding_window_dropped" in view.defaulted:
            notes.append(f"sliding_window ignored: use_sliding_window is false ({view.hf_class})")
    if isinstance(hf.get("vision_config"), dict):
        notes.append("vision tower attention runs MMEncoderAttention (get_vit_attn_backend), "
                     "outside these groups")
    if arch == "DeepseekV32ForCausalLM":
        notes.append("DeepseekV32ForCausalLM turns --kv-cache-dtype bfloat16 into auto")
    if arch == "GlmMoeDsaForCausalLM":
        notes.append("GlmMoeDsaForCausalLM turns kv-cache dtype auto into fp8_e4m3 on SM10x")

    return ModelFacts(
        name=name, architecture=arch, model_type=hf.model_type, dtype=resolved,
        num_layers=text.get("num_hidden_layers") or 0, tp=tp, groups=groups, other_layers=others,
        head_size=head_size, num_heads=total_heads // tp, num_kv_heads=num_kv,
        attn_logit_softcapping=text.get("attn_logit_softcapping"),
        is_mm_prefix_lm=ctx.mm_prefix,
        rswa_window=int(hf.get("rswa_window")) if hf.get("rswa_window") is not None else None,
        is_diffusion=hf.get("canvas_length") is not None,
        kv_cache_scheme=kv_scheme, notes=tuple(notes), config_dtype=config_dtype, runner=runner,
        index_topk=text.get("index_topk"), source=source,
        architectures=tuple(str(a) for a in archs),
        config_attrs=_engine_attrs(hf), text_config_attrs=_engine_attrs(text),
    )


def _engine_attrs(view: HFView) -> tuple[tuple[str, object], ...]:
    """The ENGINE_CONFIG_KEYS this config object has (for the SGLang engine)."""
    from attn_select.selector.model_facts import ENGINE_CONFIG_KEYS, freeze_config_value

    return tuple((k, freeze_config_value(view.attrs[k])) for k in ENGINE_CONFIG_KEYS if k in view.attrs)


# defaulted fields worth a note (they change head sizes or windows)
_REPORTED_DEFAULTS = frozenset({
    "num_attention_heads", "num_key_value_heads", "head_dim", "sliding_window", "num_hidden_layers",
    "hidden_size", "attn_logit_softcapping", "kv_lora_rank", "qk_rope_head_dim", "encoder_attention_heads",
    "decoder_attention_heads", "d_model", "encoder_layers", "decoder_layers",
})


def _find_config_dtype(hf: HFView, text: HFView, where: str, weights: str | None) -> tuple[str, str | None]:
    """ModelArchConfigConvertorBase.get_torch_dtype: the config's dtype, then
    its text, vision and encoder configs', then the weights', else float32."""
    for view in (hf, text):
        for key in ("dtype", "torch_dtype"):
            value = view.get(key)
            if value is not None:
                return _config_dtype_name(value, where), None
    for sub in ("vision_config", "encoder_config"):
        cfg = hf.get(sub)
        if isinstance(cfg, dict):
            value = cfg.get("dtype") or cfg.get("torch_dtype")
            if isinstance(value, str):
                return _config_dtype_name(value, f"{where} {sub}"), None
    if weights is not None:
        return _config_dtype_name(weights, "weights"), f"dtype: config names none; weights are {weights}"
    return "float32", "dtype: neither config nor weights name one; vLLM's fallback float32 assumed"


# --------------------------------------------------------------------------
# Files and folders
# --------------------------------------------------------------------------


def read_config_json(path: Path) -> dict[str, Any]:
    """Parse a config.json; a syntax error names the file, line and column."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UserError(f"{path} is not UTF-8 text; pass the model's config.json") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None


def _has_pooling_module(folder: Path) -> bool:
    """get_pooling_config: a Sentence-Transformers modules.json with a Pooling module."""
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(modules, list) and any(
        isinstance(m, dict) and m.get("type") == "sentence_transformers.models.Pooling" for m in modules
    )


def facts_from_path(path: Path, *, name: str, **kwargs: Any) -> ModelFacts:
    """A config.json file, or a model folder holding one."""
    folder = path if path.is_dir() else path.parent
    file = path / "config.json" if path.is_dir() else path
    if not file.is_file():
        raise UserError(f"{path} has no config.json; pass the model folder or its config.json")
    data = read_config_json(file)
    weights = weights_dtype(folder) if isinstance(data, dict) and not _names_dtype(data) else None
    return model_facts(data, name=name, where=str(file), weights=weights,
                       pooling_config=_has_pooling_module(folder), source=str(file), **kwargs)


def _names_dtype(data: dict[str, Any]) -> bool:
    subs = [data] + [data.get(k) for k in ("text_config", "vision_config", "encoder_config")]
    return any(isinstance(s, dict) and (s.get("dtype") or s.get("torch_dtype")) for s in subs)
