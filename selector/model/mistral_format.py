"""Mistral format: a params.json -> the HF-style config dict vLLM 0.33.0
builds from it (MistralConfigParser.parse and configs/mistral.py
adapt_config_dict), so the rest of the parser reads it like a config.json.

vLLM takes this path for a model folder holding consolidated*.safetensors
and a params.json, even when a config.json sits beside them; that
config.json then only fills the keys the converted dict lacks.

vLLM builds a plain ``PreTrainedConfig`` from the result (no model class
defaults): the converted dict keeps vLLM's ``model_type`` ("transformer",
"pixtral", "voxtral", "deepseek_v3", "mamba"). Imported only when a folder
is in Mistral format.
"""

from __future__ import annotations

import copy
from typing import Any, NamedTuple

from attn_select.selector.errors import UserError
from attn_select.selector.model.hf_classes import check_layer_count

# _remap_general_mistral_args: Mistral key -> HF key (renamed when present)
_RENAMED = (
    ("dim", "hidden_size"), ("norm_eps", "rms_norm_eps"), ("n_kv_heads", "num_key_value_heads"),
    ("n_layers", "num_hidden_layers"), ("n_heads", "num_attention_heads"), ("hidden_dim", "intermediate_size"),
)

# _remap_moe_args (Mistral-Large-3 only): moe.<key> -> top-level HF key
_MOE_RENAMED = (
    ("route_every_n", "moe_layer_freq"), ("first_k_dense_replace", "first_k_dense_replace"),
    ("num_experts_per_tok", "num_experts_per_tok"), ("num_experts", "n_routed_experts"),
    ("expert_hidden_dim", "moe_intermediate_size"), ("routed_scale", "routed_scaling_factor"),
    ("num_shared_experts", "n_shared_experts"), ("num_expert_groups", "n_group"),
    ("num_expert_groups_per_tok", "topk_group"),
)

# _remap_mistral_yarn_args: yarn.<key> -> (rope_parameters key, cast)
_YARN_RENAMED = (
    ("factor", "factor", float), ("original_max_position_embeddings", "original_max_position_embeddings", int),
    ("beta", "beta_fast", float), ("alpha", "beta_slow", float),
)

_LLAMA4_SCALING_KEYS = ("original_max_position_embeddings", "beta")


class MistralConversion(NamedTuple):
    config: dict[str, Any]  # the HF-style dict (config.json keys already filled in)
    # get_config reads hf_quant_config.json only when params.json gave no
    # quantization_config (it looks at the converted params dict, not at
    # the keys config.json filled in)
    params_quantization: dict[str, Any] | None


def hf_config_from_params(params: object, config_json: dict[str, Any], where: str) -> MistralConversion:
    """vLLM's MistralConfigParser.parse + adapt_config_dict, on parsed JSON.

    ``config_json`` is the folder's config.json ({} when absent): vLLM passes
    it as ``defaults``, set only where the converted dict has no key.
    ``params["dtype"]`` must already hold the weights' dtype when params.json
    names none (the parser infers it from the safetensors headers first).
    """
    if not isinstance(params, dict):
        raise UserError(f"{where}: expected a JSON object (Mistral params.json)")
    cfg = copy.deepcopy(params)
    try:
        _max_position(cfg, config_json)
        _general(cfg)
        check_layer_count(cfg.get("num_hidden_layers"), "n_layers", where)  # before per-layer lists
        _sliding_window(cfg, where)
        if cfg.get("quantization"):
            _quantization(cfg, where)
        params_quant = cfg.get("quantization_config")
        if cfg.get("qk_nope_head_dim"):
            _mla_without_moe(cfg)
        _architecture(cfg, where)
        if cfg.get("yarn"):
            _yarn(cfg, where)
        if cfg.get("llama_4_scaling"):
            _check_llama4_scaling(cfg, where)
        multimodal = cfg.get("multimodal") or {}
        _require_dict(multimodal, "multimodal", where)
        vision = multimodal.get("vision_encoder_args") or cfg.get("vision_encoder")
        audio = bool((multimodal.get("whisper_model_args") or {}).get("encoder_args"))
        if vision and audio:  # adapt_config_dict asserts
            raise UserError(f"{where}: has both a vision encoder and a Whisper audio encoder; "
                            "vLLM's Mistral format allows one")
        if vision:
            cfg = _vision(cfg)
        if audio:
            cfg = _audio(cfg, where)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        # a params.json shape vLLM's converter does not expect (it would fail too)
        raise UserError(f"{where}: unsupported Mistral params.json ({type(exc).__name__}: {exc})") from None
    # adapt_config_dict: defaults (the folder's config.json) fill missing keys only
    for key, value in config_json.items():
        cfg.setdefault(key, copy.deepcopy(value))
    return MistralConversion(cfg, params_quant)


def _require_dict(value: object, key: str, where: str) -> None:
    if not isinstance(value, dict):
        raise UserError(f"{where}: '{key}' must be a JSON object, got {type(value).__name__}")


def _max_position(cfg: dict[str, Any], config_json: dict[str, Any]) -> None:
    """MistralConfigParser.parse: no max_position_embeddings -> the HF
    config's text config value (_maybe_retrieve_max_pos_from_hf), else 128000."""
    if cfg.get("max_position_embeddings") is not None:
        return
    # (vLLM loads config.json through transformers, which needs a model_type,
    # and then reads the class default when the key is absent; RoPE only)
    text = config_json.get("text_config") if isinstance(config_json.get("text_config"), dict) else config_json
    found = text.get("max_position_embeddings") if config_json.get("model_type") else None
    cfg["max_position_embeddings"] = found or 128_000


def _general(cfg: dict[str, Any]) -> None:
    """_remap_general_mistral_args: Mistral names -> HF names, and the keys
    it always sets (model_type "transformer" unless params.json names one;
    dtype None when params.json names none)."""
    max_seq_default = cfg.get("max_position_embeddings", 128_000)  # read before any renaming
    for old, new in _RENAMED:
        if old in cfg:
            cfg[new] = cfg.pop(old)
    cfg["model_type"] = cfg.pop("model_type", "transformer")
    cfg["hidden_act"] = cfg.pop("activation", "silu")
    cfg["tie_word_embeddings"] = cfg.pop("tied_embeddings", False)
    cfg["max_seq_len"] = cfg.pop("max_seq_len", max_seq_default)
    cfg["max_position_embeddings"] = cfg.pop("max_position_embeddings", 128_000)
    cfg["dtype"] = cfg.pop("dtype", None)


def _sliding_window(cfg: dict[str, Any], where: str) -> None:
    """_remap_mistral_sliding_window: a list (one entry per layer of a
    repeating pattern, null = full attention) becomes layer_types plus the
    one window; an int makes every layer sliding."""
    window = cfg.get("sliding_window")
    if not window:  # null, 0, [] : no remap (0 later means no window)
        return
    if isinstance(window, list):
        n_layers = cfg["num_hidden_layers"]
        if not isinstance(n_layers, int):
            raise UserError(f"{where}: n_layers must be an integer, got {n_layers!r}")
        windows = {w for w in window if w is not None}
        if len(windows) > 1:  # vLLM asserts one window size
            raise UserError(f"{where}: sliding_window {window} has {len(windows)} window sizes; "
                            "vLLM's Mistral format allows one (null entries are full attention)")
        if n_layers % len(window):
            # vLLM repeats the pattern n_layers // len(pattern) times, leaving
            # layer_types shorter than the model
            raise UserError(f"{where}: sliding_window pattern of {len(window)} does not divide "
                            f"n_layers {n_layers}; vLLM would build too few layer_types")
        pattern = ["full_attention" if w is None else "sliding_attention" for w in window]
        cfg["layer_types"] = pattern * (n_layers // len(window))
        cfg["sliding_window"] = next((w for w in window if w), None)
    elif isinstance(window, int) and not isinstance(window, bool) and cfg.get("layer_types") is None:
        cfg["layer_types"] = ["sliding_attention"] * cfg["num_hidden_layers"]
    else:
        raise UserError(f"{where}: unsupported sliding_window {window!r}; vLLM's Mistral format takes an "
                        "integer (without layer_types) or a per-layer list")


def _quantization(cfg: dict[str, Any], where: str) -> None:
    """_remap_mistral_quantization_args: fp8_e4m3 weights -> quant_method
    fp8 (dynamic activations for qscheme_act NO_SCALES, else static);
    compressed-tensors passes through under its canonical name."""
    quant = cfg.pop("quantization")
    _require_dict(quant, "quantization", where)
    if quant.get("qformat_weight") == "fp8_e4m3":
        act = quant.get("qscheme_act")
        if act not in ("NO_SCALES", "TENSOR", None):
            raise UserError(f"{where}: quantization qscheme_act {act!r}; vLLM supports NO_SCALES and TENSOR")
        cfg["quantization_config"] = {"quant_method": "fp8",
                                      "activation_scheme": "dynamic" if act == "NO_SCALES" else "static"}
    elif str(quant.get("quant_method", "")).lower().replace("_", "-") == "compressed-tensors":
        cfg["quantization_config"] = {**quant, "quant_method": "compressed-tensors"}
    else:
        raise UserError(f"{where}: unknown quantization {quant!r}; vLLM's Mistral format takes "
                        "qformat_weight fp8_e4m3 or quant_method compressed-tensors")


def _mla_without_moe(cfg: dict[str, Any]) -> None:
    """_remap_mistral_mla_args: an MLA model without a moe section gets a
    one-expert, one-shared-expert moe covering every layer as dense, which
    makes it a Mistral-Large-3 (DeepSeek-V3 layout) below."""
    if cfg.get("moe"):
        return
    cfg["moe"] = {
        "num_experts": 1, "first_k_dense_replace": cfg.get("num_hidden_layers"), "route_every_n": 1,
        "num_shared_experts": 1, "expert_hidden_dim": cfg.get("intermediate_size"), "num_experts_per_tok": 1,
        "routed_scale": 1.0, "renorm_strategy": "WEIGHTS", "use_load_balancing_bias": False,
        "num_expert_groups": 1, "num_expert_groups_per_tok": 1,
    }


def _architecture(cfg: dict[str, Any], where: str) -> None:
    """adapt_config_dict: model_type mamba -> Mamba2ForCausalLM; a moe with
    shared experts -> MistralLarge3ForCausalLM (model_type deepseek_v3, moe
    keys renamed by _remap_moe_args); another moe -> MixtralForCausalLM;
    else MistralForCausalLM."""
    moe = cfg.get("moe")
    if moe:
        _require_dict(moe, "moe", where)
    if cfg.get("model_type") == "mamba":
        cfg["architectures"] = ["Mamba2ForCausalLM"]
    elif moe and (moe.get("num_shared_experts") or 0) > 0:
        for old, new in _MOE_RENAMED:
            if old in moe:
                cfg[new] = moe.pop(old)
        cfg.update(topk_method=None, norm_topk_prob=True, scoring_func="softmax")
        cfg["model_type"] = "deepseek_v3"
        cfg["architectures"] = ["MistralLarge3ForCausalLM"]
        if "llama_4_scaling" not in cfg:  # vLLM asserts
            raise UserError(f"{where}: Mistral-Large-3 layout (moe with shared experts) needs llama_4_scaling")
        _check_llama4_scaling(cfg, where)
    elif moe:
        cfg["architectures"] = ["MixtralForCausalLM"]
    else:
        cfg["architectures"] = ["MistralForCausalLM"]


def _check_llama4_scaling(cfg: dict[str, Any], where: str) -> None:
    """adapt_config_dict asserts llama_4_scaling names both keys."""
    scaling = cfg["llama_4_scaling"]
    _require_dict(scaling, "llama_4_scaling", where)
    missing = [k for k in _LLAMA4_SCALING_KEYS if k not in scaling]
    if missing:
        raise UserError(f"{where}: llama_4_scaling lacks {', '.join(missing)}")


def _yarn(cfg: dict[str, Any], where: str) -> None:
    """_remap_mistral_yarn_args: yarn -> rope_parameters (RoPE only; no
    attention-selection input depends on it). apply_scale false is an
    explicit attention_factor 1."""
    yarn = cfg["yarn"] = dict(cfg["yarn"])  # vLLM pops the used keys from it
    rope: dict[str, Any] = {"rope_type": "yarn", "mscale_all_dim": 1}
    theta = cfg.pop("rope_theta", None)
    if theta:
        rope["rope_theta"] = theta
    for old, new, cast in _YARN_RENAMED:
        if old in yarn:
            rope[new] = cast(yarn.pop(old))
    if not yarn.pop("apply_scale", True):
        rope["attention_factor"] = 1.0
    if yarn:  # vLLM asserts every yarn key is used
        raise UserError(f"{where}: unknown yarn keys {sorted(yarn)}")
    cfg["rope_parameters"] = rope


def _vision(cfg: dict[str, Any]) -> dict[str, Any]:
    """_remap_mistral_vision_args: PixtralForConditionalGeneration with the
    text model as text_config; vision_config is the whole multimodal section
    when there is one, else vision_encoder."""
    vision = cfg.pop("multimodal") if cfg.get("multimodal") else cfg.pop("vision_encoder")
    out: dict[str, Any] = {"model_type": "pixtral", "architectures": ["PixtralForConditionalGeneration"],
                           "text_config": cfg, "vision_config": vision}
    if cfg.get("quantization_config"):
        out["quantization_config"] = cfg["quantization_config"]
    return out


def _audio(cfg: dict[str, Any], where: str) -> dict[str, Any]:
    """_remap_mistral_audio_args: Voxtral (VoxtralRealtimeGeneration when the
    Whisper encoder is causal) with the text model as text_config and a
    WhisperConfig from encoder_args as audio_config (only the keys vLLM
    sets; WhisperConfig's class defaults are not repeated here)."""
    whisper = cfg["multimodal"].pop("whisper_model_args")
    enc = whisper["encoder_args"]
    factor = whisper["downsample_args"]["downsample_factor"]
    causal = bool(enc.get("causal"))
    if causal:
        cfg["projection_size"] = factor * enc["dim"]
    pool = factor if causal else 1
    audio_enc = enc["audio_encoding_args"]
    audio = {
        "model_type": "whisper", "num_mel_bins": audio_enc["num_mel_bins"], "window_size": audio_enc["window_size"],
        "sampling_rate": audio_enc["sampling_rate"], "hop_length": audio_enc["hop_length"],
        "downsample_factor": factor, "d_model": enc["dim"], "encoder_layers": enc["n_layers"],
        "encoder_ffn_dim": enc["hidden_dim"], "encoder_attention_heads": enc["n_heads"],
        "encoder_head_dim": enc["head_dim"], "vocab_size": enc["vocab_size"], "is_encoder_decoder": False,
        "is_causal": enc.get("causal", False), "sliding_window": enc.get("sliding_window"),
        "block_pool_size": pool, "pos_embed": enc.get("pos_embed", "sinusoidal"),
        "global_log_mel_max": audio_enc.get("global_log_mel_max"),
        "max_position_embeddings": pool * cfg["max_position_embeddings"],
    }
    if enc.get("max_source_positions") is not None:
        audio["max_source_positions"] = enc["max_source_positions"]
    out: dict[str, Any] = {"model_type": "voxtral",
                           "architectures": ["VoxtralRealtimeGeneration" if causal else "VoxtralForConditionalGeneration"],
                           "text_config": cfg, "audio_config": audio}
    if cfg.get("quantization_config"):
        out["quantization_config"] = cfg["quantization_config"]
    return out
