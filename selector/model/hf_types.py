"""The types transformers 5.x config classes declare for the config.json
fields attn-select reads, and the user error for a value they refuse.

transformers' config classes are ``huggingface_hub`` strict dataclasses: on
``from_dict`` / ``from_pretrained`` (how vLLM 0.33.0 loads every config) each
declared field is checked with ``isinstance``, no coercion. So ``"32"``,
``32.0`` and ``true`` are refused for an ``int`` field (a bool is refused
even though it is an int subclass), ``1`` and ``"true"`` for a ``bool`` one,
``50`` for a ``float`` one, and null where the annotation has no ``None``.
A field a class does not declare is kept as written, unchecked: raw.py's lax
reading stands for those (vLLM computes with them as the mirror does).

The table below was established by loading one config per class, field and
value kind through vLLM's own ``HFConfigParser`` in the vLLM 0.33.0
environment (transformers 5.20.2). Classes vLLM registers itself (chatglm,
flint, colqwen3, deepseek_vl_v2's top level...) are not strict and are not
listed; deepseek_v32 loads as transformers' DeepseekV3Config.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from attn_select.selector.errors import UserError, cut

# model type -> field -> (kind, null allowed), for the fields its class checks
_DECLARED: dict[str, dict[str, tuple[str, bool]]] = {}


def parse_spec(spec: str) -> dict[str, tuple[str, bool]]:
    """field -> (kind, null allowed) from ``_declare``'s spec syntax."""
    fields: dict[str, tuple[str, bool]] = {}
    for token in spec.split():
        name, _, kind = token.rstrip("?").partition(":")
        fields[name] = (kind or "int", token.endswith("?"))
    return fields


def _declare(spec: str, *model_types: str) -> None:
    """``spec``: space-separated field names; a bare name is an int, ":bool",
    ":float", ":dict", ":str" and ":list" name the other kinds (":num" an int
    or float, ":intlist" an int or a list of ints), ":a|b" a choice of
    strings (a Literal), a trailing "?" allows null."""
    fields = parse_spec(spec)
    for model_type in model_types:
        _DECLARED[model_type] = fields


_SIZES = "num_hidden_layers num_attention_heads hidden_size"
_MLA = "kv_lora_rank qk_rope_head_dim qk_nope_head_dim"
_declare(_SIZES, "bert", "clip_text_model", "modernbert", "opt", "roberta", "siglip_text_model", "xlm-roberta")
_declare("hidden_size", "bloom", "paligemma")
_declare("d_model", "dbrx")  # attribute_map: hidden_size, an int
_declare(f"{_SIZES} num_key_value_heads? head_dim?", "eurobert", "llama")
_declare(f"{_SIZES} num_key_value_heads? head_dim? sliding_window?", "afmoe")
_declare(f"{_SIZES} num_key_value_heads head_dim? sliding_window?", "mistral", "mixtral")
_declare(f"{_SIZES} num_key_value_heads? sliding_window?", "cohere2", "granite_swa", "granitemoe_swa", "phi3")
_declare(f"{_SIZES} num_key_value_heads? head_dim sliding_window? sliding_window_pattern", "cohere2_moe")
_declare(f"{_SIZES} num_key_value_heads head_dim", "llama4_text")
# the Gated DeltaNet sizes too (checked by loading each class with "x", 1.5, true, null, {})
_declare(f"{_SIZES} num_key_value_heads head_dim linear_num_value_heads linear_num_key_heads linear_key_head_dim "
         "linear_value_head_dim linear_conv_kernel_dim", "qwen3_5_moe_text", "qwen3_5_text", "qwen3_next")
_declare(f"{_SIZES} num_key_value_heads head_dim use_bidirectional_attention:bool?", "gemma")
_declare(f"{_SIZES} num_key_value_heads head_dim sliding_window? attn_logit_softcapping:float? "
         "use_bidirectional_attention:bool?", "gemma2", "gemma3_text")
_declare(f"{_SIZES} num_key_value_heads head_dim sliding_window", "embedding_gemma2_text", "gemma3n_text")
_declare(f"{_SIZES} num_key_value_heads head_dim sliding_window use_bidirectional_attention:all|vision?",
         "gemma4_text", "gemma4_unified_text")
_declare(f"{_SIZES} num_key_value_heads head_dim sliding_window?", "gpt_oss", "kolibri1", "muse_glimmer_text",
         "step3p5")
_declare(f"{_SIZES} num_key_value_heads head_dim sliding_window v_head_dim", "mimo_v2_flash")
_declare("num_attention_heads hidden_size num_key_value_heads head_dim sliding_window?", "nemotron_h")
_declare(f"{_SIZES} head_dim", "hrm_text")
_declare(f"{_SIZES} head_dim?", "nomic_bert")
_declare(f"{_SIZES} num_key_value_heads", "jamba", "lfm2")
_declare(f"{_SIZES} num_key_value_heads?", "zamba2")
_declare("num_hidden_layers hidden_size num_key_value_heads", "jetmoe")
_declare(f"{_SIZES} num_kv_heads? alibi:bool?", "falcon")
_declare(f"{_SIZES} num_key_value_heads? head_dim? {_MLA} q_lora_rank? v_head_dim", "deepseek_v2")
# vLLM's DeepseekVLV2TextConfig (DeepSeek-VL2 / -OCR language_config): DeepseekV2Config, kv_lora_rank nullable
_declare(f"{_SIZES} num_key_value_heads? head_dim? kv_lora_rank? qk_rope_head_dim qk_nope_head_dim q_lora_rank? "
         "v_head_dim", "deepseek_vl_v2_text")
_declare(f"{_SIZES} num_key_value_heads? {_MLA} q_lora_rank? v_head_dim?", "deepseek_v3", "deepseek_v32",
         "mistral4", "kimi_k2")
_declare(f"{_SIZES} num_key_value_heads? head_dim? {_MLA} q_lora_rank? v_head_dim?", "minicpm3")
_declare(f"{_SIZES} num_key_value_heads {_MLA} q_lora_rank? v_head_dim?", "youtu")
_declare(f"{_SIZES} num_key_value_heads? head_dim {_MLA} v_head_dim", "bailing_hybrid")
_declare(f"num_attention_heads hidden_size num_key_value_heads? head_dim {_MLA} q_lora_rank v_head_dim",
         "longcat_flash")
_declare(f"{_SIZES} num_key_value_heads head_dim {_MLA} q_lora_rank v_head_dim index_topk", "glm5_next_text")
_declare(f"{_SIZES} num_key_value_heads? sliding_window? use_sliding_window:bool max_window_layers",
         "qwen2", "qwen2_5_omni_text", "qwen2_moe")
_declare(f"{_SIZES} num_key_value_heads? head_dim sliding_window? use_sliding_window:bool max_window_layers",
         "qwen3")
_declare(f"{_SIZES} num_key_value_heads sliding_window? use_sliding_window:bool", "qwen3_moe")
_declare(f"{_SIZES} num_key_value_heads? sliding_window? use_sliding_window:bool", "smollm3")
_declare(f"{_SIZES} num_key_value_heads? sliding_window? use_sliding_window:bool? max_window_layers?",
         "qwen2_5_vl_text", "qwen2_vl_text")
_declare(f"{_SIZES} num_key_value_heads sliding_window?", "qwen3_omni_moe_text")
_declare(f"{_SIZES} num_key_value_heads? head_dim", "qwen3_vl_text")
_declare("d_model encoder_layers decoder_layers encoder_attention_heads decoder_attention_heads", "whisper")
_declare(f"{_SIZES} num_key_value_heads? head_dim?", "ernie4_5")
_declare(f"{_SIZES} num_key_value_heads?", "ernie4_5_moe")
# Text classes the mirror reads with raw.py's lax reading alone (no class
# defaults modelled): their declared sizes are checked all the same.
_declare(f"{_SIZES} num_key_value_heads?", "apertus", "flex_olmo", "olmo", "olmo2")
_declare(f"{_SIZES} num_key_value_heads? head_dim?", "arcee", "hunyuan_v1_moe", "jais2", "seed_oss")
_declare(f"{_SIZES} num_key_value_heads? sliding_window?", "olmo3")
_declare(f"{_SIZES} num_key_value_heads", "glm4_moe")
_declare(f"{_SIZES} num_key_value_heads head_dim", "minimax_m2", "solar_open")
_declare(f"{_SIZES} num_key_value_heads sliding_window?", "exaone4", "phimoe")
_declare(f"{_SIZES} num_key_value_heads sliding_window", "exaone_moe")
_declare(f"{_SIZES} num_key_value_heads head_dim sliding_window?", "mellum")
_declare(f"{_SIZES} num_key_value_heads head_dim sliding_window", "cwm")

# Two fields nearly every transformers text class declares, checked like the
# sizes: tie_word_embeddings (a bool) and rope_parameters (a mapping or null).
# Not the vLLM-registered classes (step3p5), nor the classes without them.
_NO_TIE = frozenset({"clip_text_model", "embedding_gemma2_text", "nomic_bert", "qwen2_5_vl_text", "qwen2_vl_text",
                     "qwen3_omni_moe_text", "qwen3_vl_text", "siglip_text_model", "deepseek_vl_v2_text", "step3p5"})
_NO_ROPE = frozenset({"bert", "bloom", "cohere2_moe", "glm5_next_text", "jamba", "nemotron_h", "opt", "paligemma",
                      "roberta", "whisper", "xlm-roberta"})
for _type in list(_DECLARED):
    if _type not in _NO_TIE:
        _DECLARED[_type] = {**_DECLARED[_type], "tie_word_embeddings": ("bool", False),
                            **({} if _type in _NO_ROPE else {"rope_parameters": ("dict", True)})}

# max_position_embeddings, an int (not null) on every class above but these
# (found by reading each class's annotations in transformers 5.20.2, and
# loading a float, a bool and null into several: all refused)
_NO_MAX_POSITIONS = frozenset({"bloom", "dbrx", "paligemma", "whisper", "step3p5"})
for _type in list(_DECLARED):
    if _type not in _NO_MAX_POSITIONS:
        _DECLARED[_type] = {**_DECLARED[_type], "max_position_embeddings": ("int", False)}
# WhisperConfig's own position and input sizes, and BERT-family token types
_DECLARED["whisper"] = {**_DECLARED["whisper"], "max_source_positions": ("int", False),
                        "max_target_positions": ("int", False), "num_mel_bins": ("int", False),
                        "is_encoder_decoder": ("bool", False)}
for _type in ("bert", "nomic_bert", "roberta", "xlm-roberta"):
    _DECLARED[_type] = {**_DECLARED[_type], "type_vocab_size": ("int", False)}


def declared(model_type: str) -> dict[str, tuple[str, bool]]:
    """field -> (kind, null allowed) for the fields the class checks: the
    table above, else transformers_models.txt's text classes."""
    if model_type in _DECLARED:
        return _DECLARED[model_type]
    from attn_select.selector.model.hf_models import text_spec

    return parse_spec(text_spec(model_type))


_NEEDS = {"int": "an integer", "bool": "true or false", "float": "a number with a decimal point", "dict": "a mapping",
          "str": "a string", "list": "a list", "num": "a number", "intlist": "an integer or a list of integers"}


def _needs(kind: str) -> str:
    return _NEEDS.get(kind) or " or ".join(json.dumps(choice) for choice in kind.split("|"))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _fits(value: Any, kind: str) -> bool:
    if kind == "int":
        return _is_int(value)
    if kind == "num":  # int | float: a bool is neither
        return _is_int(value) or isinstance(value, float)
    if kind == "intlist":  # int | list[int] | tuple[int, ...]
        return _is_int(value) or (isinstance(value, list) and all(_is_int(v) for v in value))
    if kind == "list":
        return isinstance(value, list)
    if kind == "str":
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "float":
        return isinstance(value, float)
    if kind == "dict":
        return isinstance(value, dict)
    return isinstance(value, str) and value in kind.split("|")


def _described(value: Any) -> str:
    """The value as the user wrote it in JSON, with its kind."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return "the string " + json.dumps(cut(value))
    if isinstance(value, int):
        return f"the integer {cut(str(value))}"
    if isinstance(value, float):
        return f"the number {cut(repr(value))}"
    return f"a {'list' if isinstance(value, list) else 'mapping' if isinstance(value, dict) else 'value'}"


def _fix(value: Any, kind: str) -> str:
    """What to write instead, where the value says it."""
    if value is None:
        return "give the model's value" + (" or drop the field" if kind == "bool" else "")
    if kind == "int":
        if isinstance(value, float) and value.is_integer() and abs(value) < 1e18:
            return f"write {int(value)}"
        if isinstance(value, str) and value.strip().lstrip("-").isdigit() and len(value) < 30:
            return f"write {int(value)}"
    if kind == "bool":
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return f"write {value.strip().lower()}"
        if isinstance(value, int) and not isinstance(value, bool) and value in (0, 1):
            return f"write {'true' if value else 'false'}"
    if kind == "float":
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 1e15:
            return f"write {value}.0"
        if isinstance(value, str):
            try:
                return f"write {float(value)!r}" if len(value) < 30 else "fix the value"
            except ValueError:
                pass
    return "fix the value"


def check_declared(raw: Mapping[str, Any] | None, model_type: str, where: str) -> None:
    """A user error for the first field of ``raw`` (the mapping as written
    in config.json) that the transformers class for ``model_type`` refuses:
    the table above (or transformers_models.txt's text classes), then the
    common fields transformers_strict.txt lists for the class."""
    from attn_select.selector.model.hf_models import strict_fields

    check_fields(raw, {**strict_fields(model_type), **declared(model_type)}, where)


def check_fields(raw: Mapping[str, Any] | None, fields: Mapping[str, tuple[str, bool]], where: str) -> None:
    """The strict dataclass check of ``fields`` on the mapping as written."""
    if not isinstance(raw, Mapping):
        return
    for name, (kind, nullable) in fields.items():
        if name not in raw:
            continue
        value = raw[name]
        if (value is None and nullable) or (value is not None and _fits(value, kind)):
            continue
        raise UserError(f"{where}: {name} is {_described(value)}; transformers (and so vLLM) needs "
                        f"{_needs(kind)}{'' if value is not None else ' here'}: {_fix(value, kind)}")
