"""vLLM's ``--attention-config`` (an ``AttentionConfig`` as JSON, or a
mapping in a deployments file) -> the ``Overrides`` fields it sets.

The fields attn-select mirrors are named in ``Overrides``' metadata
(``attention_config=``); a field vLLM has but attn-select does not model is
a one-line error naming it, an unknown one is vLLM's own pydantic wording
("Unexpected keyword argument"). Values are checked by pydantic-core with the
types vLLM declares, so a value vLLM's validator coerces (``3.0``,
``"true"``) is taken the same way and one it rejects fails with its text.
"""

from __future__ import annotations

import difflib
from typing import Any

from attn_select.selector.errors import UserError
from attn_select.selector.overrides import ATTENTION_CONFIG_FIELDS, FIELDS, Overrides
from attn_select.selector.vllm_names import VLLM_ATTENTION_CONFIG_FIELDS

_FLAGS = {f.name: f.flag for f in FIELDS}
_ECHO = 60  # characters of an offending value shown in an error


def _schema() -> Any:
    from pydantic_core import core_schema as cs

    def opt(schema: Any) -> Any:
        return cs.typed_dict_field(cs.nullable_schema(schema), required=False)

    # the types of vLLM's AttentionConfig fields (backend: checked against the
    # registry below, as vLLM's before-validator maps the name to its enum)
    return cs.typed_dict_schema({
        "backend": opt(cs.str_schema()),
        "flash_attn_version": opt(cs.literal_schema([2, 3, 4])),
        "use_trtllm_attention": opt(cs.bool_schema()),
        "use_non_causal": cs.typed_dict_field(cs.bool_schema(), required=False),
        "mla_prefill_backend": opt(cs.str_schema()),
    }, extra_behavior="ignore")


def _first_error(exc: Any, where: str) -> UserError:
    err = exc.errors(include_url=False)[0]
    loc = ".".join(str(p) for p in err["loc"])
    field = f"{loc}: " if loc else ""
    return UserError(f"{where}: validation error for AttentionConfig: {field}{err['msg'][:200]}")


def attention_config_values(data: object, where: str) -> dict[str, object]:
    """The Overrides fields an AttentionConfig sets (JSON text or a mapping);
    values equal to vLLM's defaults set nothing. One-line UserError otherwise."""
    from pydantic_core import SchemaValidator, ValidationError
    from pydantic_core import core_schema as cs

    as_object = SchemaValidator(cs.dict_schema(cs.str_schema(), cs.any_schema()))
    try:
        given = as_object.validate_json(data) if isinstance(data, (str, bytes)) else as_object.validate_python(data)
    except ValidationError as exc:
        raise _first_error(exc, where) from None
    for key in given:
        if key not in VLLM_ATTENTION_CONFIG_FIELDS:
            close = difflib.get_close_matches(key, VLLM_ATTENTION_CONFIG_FIELDS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise UserError(f"{where}: validation error for AttentionConfig: {key[:_ECHO]}: "
                            f"Unexpected keyword argument{hint}")
        if key not in ATTENTION_CONFIG_FIELDS:
            raise UserError(f"{where}: attention_config.{key} is a vLLM AttentionConfig field that attn-select "
                            f"does not model; it reads {', '.join(ATTENTION_CONFIG_FIELDS)}")
    try:
        values = SchemaValidator(_schema()).validate_python(given)
    except ValidationError as exc:
        raise _first_error(exc, where) from None
    backend = values.get("backend")
    if isinstance(backend, str):
        from attn_select.backends import registry

        # vLLM's validator: "auto" is automatic selection; __post_init__ makes
        # the MiniMax-M3 decode-kernel aliases automatic selection too
        if backend.lower() == "auto" or registry.is_auto_alias(backend):  # as written, as vLLM
            values["backend"] = None
        else:
            try:
                registry.get(backend)
            except registry.UnknownBackend as exc:
                raise UserError(f"{where}: attention_config.backend: {exc}") from None
    prefill = values.get("mla_prefill_backend")
    if isinstance(prefill, str):  # vLLM's enum has no "auto" for it
        from attn_select.backends.mla.prefill import registry as prefill_registry

        try:
            prefill_registry.get(prefill)
        except UserError as exc:
            raise UserError(f"{where}: attention_config.mla_prefill_backend: {exc}") from None
    out = {}
    for key, value in values.items():
        if value is None or (key == "use_non_causal" and value is False):
            continue  # vLLM's default: sets nothing
        out[ATTENTION_CONFIG_FIELDS[key]] = value
    return out


def with_attention_config(ov: Overrides, data: object, where: str, given_flags: dict[str, str] | None = None) -> Overrides:
    """``ov`` with an AttentionConfig's fields added. A field also given as a
    flag is an error, worded as vLLM words it for the backend.

    ``given_flags`` names how each field of ``ov`` was given (default: its
    attn-select flag)."""
    values = attention_config_values(data, where)
    defaults = Overrides._field_defaults
    for name in values:
        if getattr(ov, name) == defaults[name]:
            continue
        if name == "backend":
            raise UserError("attention_backend and attention_config.backend are mutually exclusive "
                            f"(vLLM's error): give the backend once ({where})")
        flag = (given_flags or {}).get(name, _FLAGS[name])
        key = next(k for k, v in ATTENTION_CONFIG_FIELDS.items() if v == name)
        raise UserError(f"{flag} and {where} {key} set the same value; give it once")
    return ov._replace(**values)
