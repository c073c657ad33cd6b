"""selector/model/raw.py validates config.json with a pydantic-core schema
instead of a BaseModel (for explain's start-up time). This checks it accepts,
coerces and rejects exactly like the BaseModel it stands for (the shape only:
what transformers' classes refuse of it is test_hf_types.py's): the same output
(``model_dump(exclude_unset=True)``) on valid configs, the same first error
(location, message, input) on invalid ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional, Union

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from attn_select.selector.errors import UserError
from attn_select.selector.model.raw import FIELDS, parse_raw
from attn_select.selector.profiles import MODELS_DIR, _load_yaml

_TYPES: dict[str, Any] = {
    "int": int,
    "str": str,
    "bool": bool,
    "float": float,
    "bool|str": Union[bool, str],
    "list[str]": list[str],
    "dict": dict[str, Any],
}


class _Base(BaseModel):
    model_config = ConfigDict(extra="allow")


def _reference_model() -> type[BaseModel]:
    fields: dict[str, Any] = {}
    for name, kind in FIELDS.items():
        typ = "RawConfigRef" if kind == "config" else _TYPES[kind]
        fields[name] = (Optional[typ], None)
    model = create_model("RawConfigRef", __base__=_Base, **fields)
    model.model_rebuild(_types_namespace={"RawConfigRef": model})
    return model


REF = _reference_model()


def _reference(data: dict) -> dict:
    return REF.model_validate(data).model_dump(exclude_unset=True)


def _real_configs() -> list[dict]:
    out = [_load_yaml(p)["config"] for p in sorted(MODELS_DIR.glob("*.yaml"))]
    fixtures = Path(__file__).parent.parent / "fixtures" / "configs"
    out += [json.loads(p.read_text()) for p in sorted(fixtures.glob("*/config.json"))]
    return out


def test_every_field_kind_is_known():
    assert set(FIELDS.values()) <= set(_TYPES) | {"config"}


@pytest.mark.parametrize("config", _real_configs(), ids=lambda c: (c.get("architectures") or ["?"])[0])
def test_real_configs_parse_like_the_base_model(config):
    assert parse_raw(config, "x") == _reference(config)


# raw.py reads a field's shape laxly; the transformers class vLLM loads then
# refuses the coercions on the fields it declares (hf_types.check_declared,
# tests/selector/test_hf_types.py): each row says what becomes of it there.
LAX_SHAPE = [
    # LlamaConfig: "32" and 4096.0 refused (int fields), null head_dim accepted (int | None)
    {"num_attention_heads": "32", "hidden_size": 4096.0, "head_dim": None},
    # Qwen3Config refuses "true" (bool field), Gemma2Config the integer 30 (float field);
    # raw.py leaves both as written (only some classes declare them)
    {"use_sliding_window": "true", "is_causal": 0, "attn_logit_softcapping": 30},
    # FalconConfig refuses "no" (bool | None)
    {"alibi": "no"},
    {"layer_types": ["full_attention", "sliding_attention"]},
    # Gemma3TextConfig refuses the string (checked on text_config by its own class)
    {"text_config": {"num_key_value_heads": "8", "extra_key": [1, 2]}, "unknown": {"a": 1}},
    {"text_config": {"text_config": {"head_dim": 64}}},
    {"quantization_config": {"quant_method": "fp8"}, "vision_config": None},
]


# Fields only some classes declare: never typed here, whatever the model
# (the declaring class checks them; vLLM reads them only through those
# classes, getattr or truthiness: tests/selector/test_undeclared_fields.py)
UNTYPED = ["use_sliding_window", "max_window_layers", "torch_dtype", "dtype", "attn_logit_softcapping",
           "kv_lora_rank", "q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim",
           "sliding_window_pattern", "is_causal", "use_bidirectional_attention", "full_attention_interval"]


@pytest.mark.parametrize("field", UNTYPED)
def test_fields_only_some_classes_declare_are_kept_as_written(field):
    for value in ([], {}, "x", 7, 32.0, True):
        assert parse_raw({field: value, "text_config": {field: value}}, "x") == {
            field: value, "text_config": {field: value}}


@pytest.mark.parametrize("config", LAX_SHAPE)
def test_lax_shape_matches_the_base_model(config):
    assert parse_raw(config, "x") == _reference(config)


INVALID = [
    {"num_attention_heads": "many"},
    {"num_attention_heads": 32.5},
    {"hidden_size": [4096]},
    {"architectures": "LlamaForCausalLM"},
    {"layer_types": ["full", 3]},
    {"sliding_window": "maybe"},
    {"text_config": {"head_dim": "x"}},
    {"text_config": [1]},
    {"quantization_config": "fp8"},
    {"model_type": 5},
]


@pytest.mark.parametrize("config", INVALID)
def test_errors_match_the_base_model(config):
    from attn_select.selector.model.raw import _raw_validator

    with pytest.raises(ValidationError) as ref:
        REF.model_validate(config)
    err = ref.value.errors()[0]
    with pytest.raises(ValidationError) as core:
        _raw_validator().validate_python(config)
    ours = core.value.errors()[0]
    # A nested BaseModel also accepts an instance of itself; a config has none.
    assert (ours["loc"], ours["msg"], ours.get("input")) == (
        err["loc"], err["msg"].replace(" or instance of RawConfigRef", ""), err.get("input"))
    with pytest.raises(UserError, match=r"^cfg\.json: field '[^']+': .+ \(got .+\); fix the value in the config$"):
        parse_raw(config, "cfg.json")


@pytest.mark.parametrize("config,message", [
    # the path as written in the file, not pydantic's union branch (".bool") or item number (".1")
    ({"layer_types": ["full", 3]}, "field 'layer_types[1]': Input should be a valid string (got 3)"),
    ({"text_config": {"layer_types": [None]}}, "field 'text_config.layer_types[0]': Input should be a valid "
                                               "string (got null)"),
    ({"num_attention_heads": "many"}, "field 'num_attention_heads': Input should be a valid integer, unable to "
                                      "parse string as an integer (got 'many')"),
])
def test_errors_name_the_field_as_written(config, message):
    with pytest.raises(UserError) as exc:
        parse_raw(config, "cfg.json")
    assert str(exc.value) == f"cfg.json: {message}; fix the value in the config"


def test_a_huge_value_is_cut_short_in_the_error():
    with pytest.raises(UserError) as exc:
        parse_raw({"architectures": "A" * 1_000_000}, "cfg.json")
    assert len(str(exc.value)) < 200 and "AAAA\u2026" in str(exc.value)


def test_not_a_mapping():
    with pytest.raises(UserError, match="expected a JSON object"):
        parse_raw([1, 2], "cfg.json")


def test_a_wrappers_top_level_text_fields_are_kept_as_written():
    # vLLM reads a wrapper's text sizes off hf_text_config; the top-level
    # copies beside a text_config mapping stay as written, the nested ones are typed
    config = {"num_hidden_layers": 1.5, "head_dim": "x", "text_config": {"num_hidden_layers": "4"}}
    assert parse_raw(config, "x") == {**config, "text_config": {"num_hidden_layers": 4}}
    with pytest.raises(UserError, match="field 'num_hidden_layers'"):
        parse_raw({"num_hidden_layers": 1.5, "text_config": None}, "x")
