"""The deployments file: each deployment's inputs (model or raw selector
config, device or capability, what-if overrides, installed kernels, engine
and SGLang flags), as strict pydantic models read with line numbers.
"""

from __future__ import annotations

import typing
import unicodedata
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)

from attn_select.selector.config import SELECTOR_FIELDS, Capability, Kernels
from attn_select.selector.errors import UserError, shown
from attn_select.selector.explain import override_problem
from attn_select.selector.overrides import FIELDS, Overrides
from attn_select.selector.vllm_names import parse_max_model_len
from attn_select.selector.lock.yamlmarks import _MODELS, Located, _check_unique, load_yaml, validation_error

KERNELS_SOURCE = "deployment inputs"


_STRICT = ConfigDict(extra="forbid", strict=True, frozen=True)


def _check_value(name: str, value: Any) -> Any:
    """The values explain would reject later, rejected here with a line
    (the same check as explain's flags)."""
    problem = override_problem(name, value)
    if problem is not None:
        raise ValueError(problem)
    return value


class _ChecksValues(BaseModel):
    model_config = _STRICT

    @field_validator("*")
    @classmethod
    def _values(cls, value: Any, info: Any) -> Any:
        return _check_value(info.field_name, value)


_OVERRIDE_TYPES = typing.get_type_hints(Overrides)


# Each field's names in the file: its own, then vLLM's (tensor_parallel_size).
_KEYS = {f.name: f.keys for f in FIELDS}


class _OverridesValues(_ChecksValues):
    """The ``overrides:`` mapping also takes vLLM's names: a field under its
    vLLM flag's name (``tensor_parallel_size``, ``attention_backend``), an
    ``attention_config`` mapping with vLLM's AttentionConfig fields, and
    ``max_model_len`` as vLLM writes it (32k)."""

    @model_validator(mode="before")
    @classmethod
    def _vllm_names(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for name, keys in _KEYS.items():
            present = [k for k in keys if k in data]
            if len(present) > 1:
                raise ValueError(f"{' and '.join(present)} are one field; give one")
        if isinstance(data.get("max_model_len"), str):
            try:
                data["max_model_len"] = parse_max_model_len(data["max_model_len"])
            except ValueError as exc:  # the reason, under the field's name
                raise ValueError(f"max_model_len: {exc}") from None
        for key in _KEYS["backend"]:
            if isinstance(data.get(key), str) and data[key].lower() == "auto":
                del data[key]  # vLLM's "auto": automatic selection, nothing set
        if "attention_config" in data:
            data = _with_attention_config(data)
        return data


def _with_attention_config(data: dict[str, Any]) -> dict[str, Any]:
    from attn_select.selector.attention_config import attention_config_values

    try:
        values = attention_config_values(data.pop("attention_config"), "attention_config")
    except UserError as exc:
        raise ValueError(str(exc)) from None
    for name in values:
        given = [k for k in _KEYS[name] if k in data]
        if given and name == "backend":
            raise ValueError("attention_backend and attention_config.backend are mutually exclusive (vLLM's error)")
        if given:
            raise ValueError(f"{given[0]} and attention_config set the same value; give it once")
    return {**data, **values}


def _fields_model(title: str, names: tuple[str, ...], required: tuple[str, ...] = (),
                  base: type[BaseModel] = _ChecksValues) -> type[BaseModel]:
    """A strict pydantic model whose fields are ``Overrides`` fields: the YAML
    names are explain's what-if names (and vLLM's, where a field has them),
    with no second list of them."""
    spec: dict[str, Any] = {}
    defaults = Overrides._field_defaults
    for name in names:
        hint = _OVERRIDE_TYPES[name]
        keys = _KEYS[name]
        alias = {"validation_alias": AliasChoices(*keys)} if len(keys) > 1 else {}
        if name in required:
            non_null = tuple(a for a in typing.get_args(hint) if a is not type(None))
            spec[name] = (non_null[0] if len(non_null) == 1 else hint, Field(..., **alias))
        else:
            spec[name] = (hint, Field(defaults[name], **alias))
    return create_model(title, __base__=base, **spec)


OverridesModel = _fields_model("overrides", Overrides._fields, base=_OverridesValues)
# vLLM's AttentionSelectorConfig field names; head_size has no default there
# and none here (dtype defaults to bfloat16, kv_cache_dtype to auto, as explain).
SelectorModel = _fields_model("selector", SELECTOR_FIELDS, required=("head_size",))


def given(model: BaseModel) -> dict[str, Any]:
    """Fields written in the file, in declaration order."""
    return {n: getattr(model, n) for n in type(model).model_fields if n in model.model_fields_set}


def _check_sglang_value(name: str, value: Any) -> Any:
    """What explain --engine sglang rejects, rejected here with a line."""
    if value is None:
        return value
    from attn_select.selector.sglang.inputs import ServerFlags

    if name == "cuda_version":
        from attn_select.selector.sglang.platform import parse_cuda_version

        parse_cuda_version(str(value))  # ValueError says what is wrong
        return value
    try:
        ServerFlags(**{name: value}).validate()
    except UserError as exc:
        raise ValueError(str(exc)) from None
    return value


class SGLangFlagsModel(BaseModel):
    """SGLang's server flags of a deployment, under SGLang's field names."""

    model_config = _STRICT

    attention_backend: Optional[str] = None
    prefill_attention_backend: Optional[str] = None
    decode_attention_backend: Optional[str] = None
    page_size: Optional[int] = None
    kv_cache_dtype: Optional[str] = None  # default: overrides.kv_cache_dtype in SGLang's name, else auto
    speculative_algorithm: Optional[str] = None
    speculative_eagle_topk: Optional[int] = None
    speculative_num_steps: Optional[int] = None
    speculative_num_draft_tokens: Optional[int] = None
    enable_deterministic_inference: Optional[bool] = None
    cuda_version: Optional[str] = None  # default: the device profile's

    @field_validator("*")
    @classmethod
    def _values(cls, value: Any, info: Any) -> Any:
        return _check_sglang_value(info.field_name, value)


class DeploymentInputs(BaseModel):
    """What one deployment runs: model or raw selector config, device or
    capability, overrides, kernels. Paths are relative to the file."""

    model_config = ConfigDict(**_STRICT)

    model: Optional[str] = None
    # A Hugging Face id's cached snapshot: branch, tag or commit (default main).
    revision: Optional[str] = None
    # vLLM's --trust-remote-code: read a config whose config or model class is the checkpoint's own code.
    trust_remote_code: Optional[bool] = None
    selector: Optional[SelectorModel] = None  # type: ignore[valid-type]
    device: Optional[str] = None
    capability: Optional[Union[str, float, int]] = None
    kernels: Optional[list[str]] = None
    overrides: OverridesModel = Field(default_factory=OverridesModel)  # type: ignore[valid-type]
    # Which engine's selection is locked: vllm (default), sglang or both.
    engine: Optional[Literal["vllm", "sglang", "both"]] = None
    # SGLang's server flags (its names) for engine sglang / both.
    sglang: Optional[SGLangFlagsModel] = None  # type: ignore[valid-type]

    @field_validator("capability")
    @classmethod
    def _capability(cls, value: Any) -> Any:
        if value is None:
            return value
        try:
            return str(Capability.parse(str(value)))
        except ValueError:
            raise ValueError(f"{value!r} is not a compute capability; write it as X.Y, e.g. \"9.0\"") from None

    @field_validator("kernels")
    @classmethod
    def _kernels(cls, value: Any) -> Any:
        if value is not None:
            Kernels.from_names(value, source=KERNELS_SOURCE)  # ValueError names the unknown ones
        return value

    @model_validator(mode="after")
    def _one_of_each(self) -> DeploymentInputs:
        if (self.model is None) == (self.selector is None):
            raise ValueError("give exactly one of 'model' (profile or config path) or 'selector' (raw config)")
        if (self.device is None) == (self.capability is None):
            raise ValueError("give exactly one of 'device' (profile name) or 'capability' (X.Y)")
        if self.selector is not None:
            both = set(given(self.selector)) & set(given(self.overrides))
            if both:
                raise ValueError(f"{', '.join(sorted(both))} given in both 'selector' and 'overrides'")
        if self.engine in ("sglang", "both") and self.model is None:
            raise ValueError(f"engine {self.engine} needs 'model': SGLang resolves from the model's config")
        if self.revision is not None and self.model is None:
            raise ValueError("'revision' needs 'model' (a Hugging Face id in the local cache)")
        if self.trust_remote_code is not None and self.model is None:
            raise ValueError("'trust_remote_code' needs 'model' (vLLM's --trust-remote-code is about the model's "
                             "config.json)")
        if self.sglang is not None and self.engine not in ("sglang", "both"):
            raise ValueError("'sglang' flags need engine: sglang or engine: both")
        return self

    def overrides_value(self) -> Overrides:
        values = given(self.overrides)
        if self.selector is not None:
            values.update(given(self.selector))
        return Overrides(**values)

    def kernels_value(self) -> Kernels:
        if self.kernels is None:
            return Kernels(source=KERNELS_SOURCE)
        return Kernels.from_names(self.kernels, source=KERNELS_SOURCE)

    def as_yaml(self, model_path: str | None) -> dict[str, Any]:
        """Canonical form for the lockfile: fixed key order, only what is set."""
        out: dict[str, Any] = {}
        if self.model is not None:
            out["model"] = model_path if model_path is not None else self.model
        if self.revision is not None:
            out["revision"] = self.revision
        if self.trust_remote_code:
            out["trust_remote_code"] = True
        if self.selector is not None:
            out["selector"] = given(self.selector)
        if self.device is not None:
            out["device"] = self.device
        if self.capability is not None:
            out["capability"] = self.capability
        if self.kernels is not None:
            out["kernels"] = list(self.kernels)
        ov = given(self.overrides)
        if ov:
            out["overrides"] = ov
        if self.engine is not None and self.engine != "vllm":
            out["engine"] = self.engine
        if self.sglang is not None and given(self.sglang):
            out["sglang"] = given(self.sglang)
        return out


def _deployment_name(value: str) -> str:
    """A name heads its report lines, JUnit test cases and GitHub
    annotations: an empty one names nothing, and a line break or terminal
    escape in it splits or rewrites the CI log (XML cannot hold most
    controls at all). Printable characters only."""
    if not value.strip():
        raise ValueError("the deployment name is empty; give each deployment a name of its own")
    bad = next((c for c in value if unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp")
                or c in "\ufffe\uffff"), None)
    if bad is not None:
        raise ValueError(f"deployment name {shown(value)} holds the unprintable character U+{ord(bad):04X}; "
                         "write it with printable characters")
    return value


# Shared by deployments files and lockfiles (a hand-edited lock is read the same way).
DeploymentName = Annotated[str, AfterValidator(_deployment_name)]


class Deployment(DeploymentInputs):
    model_config = ConfigDict(**_STRICT)

    name: DeploymentName


class DeploymentsFile(BaseModel):
    model_config = ConfigDict(**_STRICT)

    deployments: list[Deployment]

    @field_validator("deployments")
    @classmethod
    def _some(cls, value: list[Deployment]) -> list[Deployment]:
        if not value:
            raise ValueError("no deployments; list at least one (name, model or selector, device or capability)")
        return value


_MODELS["DeploymentsFile"] = DeploymentsFile


def parse_deployments(text: str, source: str) -> tuple[DeploymentsFile, Located]:
    doc = load_yaml(text, source)
    data = doc.data
    if isinstance(data, list):  # a bare list of deployments is accepted too
        doc = Located({"deployments": data}, {("deployments",) + k: v for k, v in doc.lines.items()}, source)
    elif not isinstance(data, dict):
        raise doc.error((), "expected a mapping with a 'deployments' list")
    try:
        parsed = DeploymentsFile.model_validate(doc.data)
    except ValidationError as exc:
        raise validation_error(exc, doc) from None
    _check_unique([d.name for d in parsed.deployments], doc, ("deployments",), "name", "deployment name")
    return parsed, doc
