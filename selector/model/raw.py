"""Step 1: the raw config.json fields attn-select reads, type-checked by
pydantic's validation engine, and the user error a wrong field becomes.

Why a core schema and not a ``BaseModel``: on explain's path (0.25 s in all)
a 60-field ``BaseModel`` costs ~35 ms to import pydantic's Python layer and
~20 ms to generate its schema on first use. The same engine, pydantic-core,
driven by a schema built here from ``FIELDS`` builds in well under a
millisecond and validates identically (lax mode: ``"32"`` and ``32.0`` become
32, ``"true"`` becomes True; the same error types, messages and locations).
``tests/selector/test_raw_schema.py`` checks that against the equivalent
``BaseModel`` on valid and invalid configs.

Lax here is only the shape of a field. The transformers config class vLLM
loads checks the fields it declares strictly (no coercion, null only where
its annotation allows it): ``hf_types.check_declared`` refuses those values
on the mapping as written, per class, when ``hf_view`` builds the class
view. A field the class does not declare (``sliding_window`` on Llama) is
kept by transformers as written and read by vLLM as the mirror reads it.

Fields that only some classes declare and that vLLM reads only for those
classes, or only through ``getattr`` and truthiness, are not listed at all:
a value of the wrong kind must not refuse a model whose class and model file
never read it (``use_sliding_window`` on SeedOss, ``kv_lora_rank`` on Llama,
``torch_dtype: 7``). They reach the class views as written; the declaring
classes check them strictly (``hf_types``) and each reader follows vLLM's
code: ``use_sliding_window`` and ``max_window_layers`` (Qwen2's family,
declared; FlintConfig's truthiness), ``sliding_window_pattern`` (the
Gemma-3 / Cohere2 / EmbeddingGemma2 ``__post_init__`` arithmetic), ``dtype`` / ``torch_dtype`` (``hf_dtype``), the MLA dims
(``kv_lora_rank is not None`` and arithmetic, ``model_level`` / ``layers``),
``attn_logit_softcapping`` (a truthiness, ``layers``), ``is_causal`` (a
truthiness in every vLLM model file that reads it), ``use_bidirectional_attention``
(a truthiness or ``== "all"``; Gemma's classes declare it) and
``full_attention_interval`` (Qwen3-Next-style classes' ``__post_init__``).
"""

from __future__ import annotations

from typing import Any

from pydantic_core import SchemaValidator, ValidationError
from pydantic_core import core_schema as cs

from attn_select.selector.errors import UserError, shown
from attn_select.selector.validation_errors import dotted, first_problem

# field -> kind; every field is optional and may be null. "config" is a
# nested config of the same shape (text_config of multimodal models).
FIELDS: dict[str, str] = {
    "architectures": "list[str]",
    "model_type": "str",
    # sizes
    "num_hidden_layers": "int",
    "num_attention_heads": "int",
    "num_key_value_heads": "int",
    "num_kv_heads": "int",
    "n_head_kv": "int",
    "multi_query_group_num": "int",
    "num_attention_groups": "int",
    "hidden_size": "int",
    "head_dim": "int",
    "hidden_size_per_head": "int",
    # windows and layer kinds
    "sliding_window": "int",
    "layer_types": "list[str]",
    "attn_output_gate": "bool",
    # encoder-decoder (Whisper)
    "d_model": "int",
    "encoder_layers": "int",
    "decoder_layers": "int",
    "encoder_attention_heads": "int",
    "decoder_attention_heads": "int",
    "is_encoder_decoder": "bool",
    # sub-configs and model-level switches
    "text_config": "config",
    "thinker_config": "config",  # Qwen2.5-Omni / Qwen3-Omni: holds the text_config
    "language_config": "config",  # DeepSeek-VL2 / -OCR: the text config
    "vision_config": "dict",
    "audio_config": "dict",  # Voxtral, Qwen2-Audio, Gemma-3n, ...: a sub-config class, or null
    "encoder_config": "dict",
    "quantization_config": "dict",
    "compression_config": "dict",
    "rswa_window": "int",
    "canvas_length": "int",
    "is_mm_prefix_lm": "bool",
    "vision_n_layers": "int",
    "alibi": "bool",
    "position_encoding_type": "str",
}

_REF = "config"

# pydantic's lax integer, as vLLM's pydantic dataclasses read an int field
# ("2048" and 2048.0 are 2048; 1.5, "x" and true are refused)
LAX_INT = SchemaValidator(cs.int_schema())

# The text model's own fields. A wrapper whose text model sits in a
# text_config mapping (Gemma3Config, LlavaConfig, ...) keeps top-level copies
# of them as written, and vLLM reads them off hf_text_config, never there:
# at the top of such a config they are not typed (a float layer count beside
# a text_config refuses nothing); the class still checks any it declares
# (hf_types).
TEXT_FIELDS = frozenset({
    "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "num_kv_heads", "n_head_kv",
    "multi_query_group_num", "num_attention_groups", "hidden_size", "head_dim", "hidden_size_per_head",
    "sliding_window", "layer_types", "attn_output_gate"})


def _kind_schema(kind: str) -> cs.CoreSchema:
    if kind == "int":
        return cs.int_schema()
    if kind == "str":
        return cs.str_schema()
    if kind == "bool":
        return cs.bool_schema()
    if kind == "float":
        return cs.float_schema()
    if kind == "list[str]":
        return cs.list_schema(cs.str_schema())
    if kind == "dict":
        return cs.dict_schema(cs.str_schema(), cs.any_schema())
    if kind == "config":
        return cs.definition_reference_schema(_REF)
    raise ValueError(f"unknown field kind {kind!r}")


_validators: dict[bool, SchemaValidator] = {}


def _raw_validator(wrapper: bool = False) -> SchemaValidator:
    """Built on first use; every field optional and nullable, unlisted keys
    kept untyped (``extra="allow"``), ``text_config`` the same shape again.
    ``wrapper``: the top level leaves TEXT_FIELDS untyped."""
    if wrapper not in _validators:
        fields = {
            name: cs.typed_dict_field(cs.nullable_schema(_kind_schema(kind)), required=False)
            for name, kind in FIELDS.items()
        }
        config = cs.typed_dict_schema(fields, extra_behavior="allow", cls_name="RawConfig", ref=_REF)
        top = cs.definition_reference_schema(_REF)
        if wrapper:
            top = cs.typed_dict_schema({k: v for k, v in fields.items() if k not in TEXT_FIELDS},
                                       extra_behavior="allow", cls_name="RawConfig")
        _validators[wrapper] = SchemaValidator(cs.definitions_schema(top, [config]))
    return _validators[wrapper]


def first_error(exc: ValidationError, data: Any) -> tuple[str, str, Any]:
    """(location as written in ``data``, message, offending input) of a
    validation error: ``text_config.layer_types[3]``, never pydantic's
    union-branch names (``use_bidirectional_attention.bool``)."""
    loc, msg, got, _ = first_problem(exc.errors(include_url=False), data)
    return dotted(loc), msg, got


# fields a config class takes and throws away (a property setter that ignores
# the value), so no value of them refuses anything: NemotronHConfig's
# num_hidden_layers is the length of layers_block_type (transformers 5.20)
_IGNORED_BY_CLASS: dict[str, tuple[str, ...]] = {"nemotron_h": ("num_hidden_layers",)}


def parse_raw(data: object, where: str) -> dict[str, Any]:
    """Type-check a config mapping; return the given fields (nested as dicts),
    with the values coerced to their kinds and unread fields as they were."""
    if not isinstance(data, dict):
        raise UserError(f"{where}: expected a JSON object with the model config, got {type(data).__name__}")
    ignored = {k: data[k] for k in _IGNORED_BY_CLASS.get(data.get("model_type"), ()) if k in data}  # type: ignore[arg-type]
    if ignored:
        data = {k: v for k, v in data.items() if k not in ignored}
    try:
        return {**_raw_validator(isinstance(data.get("text_config"), dict)).validate_python(data), **ignored}
    except ValidationError as exc:
        loc, msg, got = first_error(exc, data)
        raise UserError(f"{where}: field {loc!r}: {msg} (got {shown(got)}); fix the value in the config") from None
