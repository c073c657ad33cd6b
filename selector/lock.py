"""Deployments and lockfiles: the inputs of a CI gate and what it expects.

A *deployments file* names each deployment's inputs (model or raw selector
config, device or capability, what-if overrides, installed kernels). A
*lockfile* records, per deployment and attention group, the backend vLLM
0.33.0 selects, the FlashAttention version, the error/warning text and every
candidate's reasons, and embeds each deployment's inputs so ``check`` can
recompute without the deployments file.

Reading keeps YAML node marks so every bad value is reported as
``file:line: problem``. ``make_lock`` and ``compare`` are pure. The
``Evaluator`` shares work across deployments: equal inputs are explained
once, models and devices are loaded once.
"""

from __future__ import annotations

import difflib
import os
import typing
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Annotated, Any, Literal, Optional, Union

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, create_model, field_validator, model_validator

from attn_select.backends import registry
from attn_select.selector.config import (
    DTYPES,
    KV_CACHE_DTYPES,
    SELECTOR_FIELDS,
    AttentionType,
    Capability,
    Kernels,
)
from attn_select.selector.device import Device
from attn_select.selector.errors import UserError
from attn_select.selector.explain import ENGINE, ENGINE_VERSION, Explanation, Overrides, explain

LOCK_SCHEMA = "attn-select.lock/1"
KERNELS_SOURCE = "deployment inputs"

Loc = tuple[Union[str, int], ...]


class BadInput(UserError):
    """A deployments file or lockfile problem, as ``file:line: problem``."""


# --- YAML with line numbers ---------------------------------------------------

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # same nodes and marks, faster


@dataclass(frozen=True)
class Located:
    """Parsed YAML plus the 1-based line of every mapping key and item."""

    data: Any
    lines: dict[Loc, int]
    source: str

    def line(self, loc: Loc) -> int:
        """The line of ``loc``, or of its nearest ancestor that exists."""
        loc = tuple(loc)
        while loc not in self.lines and loc:
            loc = loc[:-1]
        return self.lines.get(loc, 1)

    def error(self, loc: Loc, problem: str) -> BadInput:
        where = dotted(loc)
        return BadInput(f"{self.source}:{self.line(loc)}: {where + ': ' if where else ''}{problem}")


def dotted(loc: Loc) -> str:
    """('deployments', 2, 'overrides', 'tp') -> 'deployments[2].overrides.tp'."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def load_yaml(text: str, source: str) -> Located:
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        problem = exc.problem or exc.context or "invalid YAML"
        if exc.problem and exc.context and exc.context_mark is not None:
            # Where the unfinished construct began, often the line to fix.
            problem += f" ({exc.context} started at line {exc.context_mark.line + 1})"
        raise BadInput(f"{source}:{line}: YAML syntax error: {problem}") from None
    except yaml.YAMLError as exc:
        raise BadInput(f"{source}:1: YAML error: {str(exc).splitlines()[0]}") from None
    if root is None:
        raise BadInput(f"{source}:1: the file is empty")
    lines: dict[Loc, int] = {}
    scalars = yaml.constructor.SafeConstructor()

    def build(node: yaml.Node, loc: Loc) -> Any:
        lines.setdefault(loc, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            out: dict[Any, Any] = {}
            for knode, vnode in node.value:
                kline = knode.start_mark.line + 1
                if not isinstance(knode, yaml.ScalarNode) or knode.tag == "tag:yaml.org,2002:merge":
                    raise BadInput(f"{source}:{kline}: only plain scalar keys are supported")
                key = scalars.construct_object(knode)
                if key in out:
                    raise BadInput(f"{source}:{kline}: {dotted(loc + (key,))}: duplicate key {key!r}")
                lines[loc + (key,)] = kline
                out[key] = build(vnode, loc + (key,))
            return out
        if isinstance(node, yaml.SequenceNode):
            return [build(item, loc + (i,)) for i, item in enumerate(node.value)]
        return scalars.construct_object(node)

    return Located(build(root, ()), lines, source)


def validation_error(exc: ValidationError, doc: Located) -> BadInput:
    """The first pydantic error as one ``file:line: where: problem`` line."""
    err = exc.errors(include_url=False)[0]
    # Keep the part of pydantic's loc that names real keys/items (it appends
    # union-branch and validator names, which are not in the file).
    loc: Loc = ()
    node = doc.data
    for part in err["loc"]:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        elif err["type"] in ("missing", "extra_forbidden") and isinstance(node, dict):
            pass  # the missing / unknown key itself
        else:
            break
        loc += (part,)
    kind = err["type"]
    if kind == "extra_forbidden":
        problem = f"unknown field {loc[-1]!r}"
        allowed = _allowed_keys(exc, err)
        hint = difflib.get_close_matches(str(loc[-1]), allowed, n=1, cutoff=0.6)
        if hint:
            problem += f"; did you mean {hint[0]!r}?"
        elif allowed:
            problem += f" (allowed: {', '.join(allowed)})"
    elif kind == "missing":
        problem = f"missing required field {loc[-1]!r}"
    else:
        msg = err["msg"].removeprefix("Value error, ")
        problem = msg if kind == "value_error" else f"{msg} (got {err['input']!r})"
    where = loc if kind != "missing" else loc[:-1]
    return BadInput(f"{doc.source}:{doc.line(loc)}: {dotted(where) + ': ' if where else ''}{problem}")


def _allowed_keys(exc: ValidationError, err: dict) -> list[str]:
    """The field names of the mapping that held an unknown key."""
    model = exc.title and _MODELS.get(exc.title)
    for part in err["loc"][:-1]:
        if model is None:
            return []
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part)
        model = _model_in(field.annotation) if field is not None else None
    return [] if model is None else [f.alias or n for n, f in model.model_fields.items()]


def _model_in(hint: Any) -> type[BaseModel] | None:
    """The pydantic model inside Optional[...] / list[...], if any."""
    if isinstance(hint, type) and issubclass(hint, BaseModel):
        return hint
    for arg in typing.get_args(hint):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


# --- deployments ----------------------------------------------------------------

_STRICT = ConfigDict(extra="forbid", strict=True, frozen=True)


def _check_value(name: str, value: Any) -> Any:
    """The values explain would reject later, rejected here with a line."""
    if value is None:
        return value
    if name == "backend":
        try:
            registry.get(value)
        except UserError as exc:
            raise ValueError(str(exc)) from None
    elif name == "dtype" and value not in DTYPES:
        raise ValueError(f"unknown dtype {value!r}; choose from {', '.join(DTYPES)}")
    elif name == "kv_cache_dtype" and value not in KV_CACHE_DTYPES:
        raise ValueError(f"unknown KV-cache dtype {value!r}; choose from {', '.join(KV_CACHE_DTYPES)}")
    elif name == "attn_type" and value not in {t.value for t in AttentionType}:
        raise ValueError(
            f"unknown attention type {value!r}; choose from {', '.join(t.value for t in AttentionType)}"
        )
    elif name in ("block_size", "head_size", "tp", "num_heads", "dcp_size") and value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value}")
    elif name == "flash_attn_version" and value not in (2, 3, 4):
        raise ValueError(f"flash_attn_version must be 2, 3 or 4, got {value}")
    return value


class _ChecksValues(BaseModel):
    model_config = _STRICT

    @field_validator("*")
    @classmethod
    def _values(cls, value: Any, info: Any) -> Any:
        return _check_value(info.field_name, value)


_OVERRIDE_TYPES = typing.get_type_hints(Overrides)


def _fields_model(title: str, names: tuple[str, ...], required: tuple[str, ...] = ()) -> type[BaseModel]:
    """A strict pydantic model whose fields are ``Overrides`` fields: the YAML
    names are explain's what-if names, with no second list of them."""
    spec: dict[str, Any] = {}
    defaults = {f.name: f.default for f in fields(Overrides)}
    for name in names:
        hint = _OVERRIDE_TYPES[name]
        if name in required:
            non_null = tuple(a for a in typing.get_args(hint) if a is not type(None))
            spec[name] = (non_null[0] if len(non_null) == 1 else hint, ...)
        else:
            spec[name] = (hint, defaults[name])
    return create_model(title, __base__=_ChecksValues, **spec)


OverridesModel = _fields_model("overrides", tuple(f.name for f in fields(Overrides)))
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
        if self.sglang is not None and self.engine not in ("sglang", "both"):
            raise ValueError("'sglang' flags need engine: sglang or engine: both")
        return self

    def engine_value(self, default: str = "vllm") -> str:
        return self.engine or default

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


class Deployment(DeploymentInputs):
    model_config = ConfigDict(**_STRICT)

    name: str


def _check_unique(names: list[str], doc: Located, loc: Loc, key: str, what: str) -> None:
    """Names must be unique: the second use is reported at its line."""
    seen: set[str] = set()
    for i, n in enumerate(names):
        if n in seen:
            raise doc.error(loc + (i, key), f"duplicate {what} {n!r}")
        seen.add(n)


class DeploymentsFile(BaseModel):
    model_config = ConfigDict(**_STRICT)

    deployments: list[Deployment] = Field(min_length=1)


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


# --- lockfile -------------------------------------------------------------------

# Fields of a lock group compared by ``check`` when present, in file order.
GROUP_FIELDS = ("selected", "flash_attn_version", "error", "warning", "candidates")


def _backend_name(value: Any) -> Any:
    if value is not None:
        try:
            registry.get(value)
        except UserError as exc:
            raise ValueError(str(exc)) from None
    return value


# A backend name of vLLM's enum; an unknown one is reported at its own line.
BackendName = Annotated[str, AfterValidator(_backend_name)]


class LockGroup(BaseModel):
    """One attention group's expected selection. Fields left out of the
    file are not compared."""

    model_config = ConfigDict(**_STRICT)

    group: str
    selected: Optional[BackendName] = None
    flash_attn_version: Optional[int] = None
    error: Optional[str] = None
    warning: Optional[str] = None
    candidates: Optional[dict[BackendName, list[str]]] = None  # backend -> reasons, priority order

    def present(self) -> tuple[str, ...]:
        return tuple(f for f in GROUP_FIELDS if f in self.model_fields_set)


# Fields of an SGLang lock section compared by ``check`` when present, in file order.
SGLANG_FIELDS = ("attention_backend", "prefill_backend", "decode_backend", "page_size", "kv_cache_dtype",
                 "default_rule", "error")


def sglang_engine_id() -> str:
    from attn_select.selector.sglang import ENGINE as SGL, ENGINE_VERSION as SGL_VERSION

    return f"{SGL}-{SGL_VERSION}"


class SGLangLock(BaseModel):
    """SGLang's resolution for one deployment (one per server, not per
    group). Fields left out of the file are not compared."""

    model_config = ConfigDict(**_STRICT)

    engine: str  # "sglang-0.5.23"
    attention_backend: Optional[str] = None
    prefill_backend: Optional[str] = None
    decode_backend: Optional[str] = None
    page_size: Optional[int] = None
    kv_cache_dtype: Optional[str] = None
    default_rule: Optional[str] = None  # the default rule's answer, when consulted
    error: Optional[str] = None  # "ValueError: <SGLang's text>"

    def present(self) -> tuple[str, ...]:
        return tuple(f for f in SGLANG_FIELDS if f in self.model_fields_set)


class LockDeployment(BaseModel):
    model_config = ConfigDict(**_STRICT)

    name: str
    inputs: DeploymentInputs
    groups: list[LockGroup]
    sglang: Optional[SGLangLock] = None  # engine sglang / both


class Engine(BaseModel):
    model_config = ConfigDict(**_STRICT)

    name: str
    version: str


class Lockfile(BaseModel):
    model_config = ConfigDict(**_STRICT, populate_by_name=True)

    schema_: str = Field(alias="schema")
    engine: Engine
    deployments: list[LockDeployment]

    @field_validator("schema_")
    @classmethod
    def _schema(cls, value: str) -> str:
        if value != LOCK_SCHEMA:
            raise ValueError(f"unsupported lockfile schema {value!r}; this attn-select reads {LOCK_SCHEMA!r}")
        return value


# Top-level models by the title pydantic puts on their errors.
_MODELS: dict[str, type[BaseModel]] = {"DeploymentsFile": DeploymentsFile, "Lockfile": Lockfile}


def parse_lockfile(text: str, source: str) -> tuple[Lockfile, Located]:
    doc = load_yaml(text, source)
    if not isinstance(doc.data, dict):
        raise doc.error((), "expected a mapping (schema, engine, deployments); is this an attn-select lockfile?")
    try:
        lock = Lockfile.model_validate(doc.data)
    except ValidationError as exc:
        raise validation_error(exc, doc) from None
    _check_unique([d.name for d in lock.deployments], doc, ("deployments",), "name", "deployment name")
    for i, d in enumerate(lock.deployments):
        _check_unique([g.group for g in d.groups], doc, ("deployments", i, "groups"), "group", "group")
    return lock, doc


# --- evaluation -----------------------------------------------------------------


def _model_ref(spec: str, base_dir: Path) -> tuple[str, bool]:
    """(what to load, is_path): a file or folder next to the deployments
    file is a path; anything else goes to the profile loader as a name."""
    candidate = Path(spec) if os.path.isabs(spec) else base_dir / spec
    if candidate.exists():
        return str(candidate.resolve()), True
    return spec, False


def relative_model_path(spec: str, from_dir: Path, to_dir: Path) -> str:
    """A deployment's model path re-expressed relative to the lockfile's
    folder (profile names unchanged), so check finds it from there."""
    target, is_path = _model_ref(spec, from_dir)
    if not is_path or os.path.isabs(spec):
        return spec
    return Path(os.path.relpath(target, to_dir.resolve())).as_posix()


class Evaluator:
    """Recomputes deployments, sharing work: one model load per (spec, tp),
    one device load per name, one explanation per distinct input."""

    def __init__(self, default_engine: str | None = None) -> None:
        self._models: dict[tuple[str, int, Capability], Any] = {}
        self._devices: dict[str, Device] = {}
        self._groups: dict[tuple[Any, ...], tuple[LockGroup, ...]] = {}
        self._sglang: dict[tuple[Any, ...], SGLangLock] = {}
        self.default_engine = default_engine or "vllm"  # for deployments that name none

    def _model(self, spec: str, tp: int, cap: Capability) -> Any:
        # The capability matters to the model: vLLM's "auto" dtype falls
        # back to float16 where bfloat16 is unsupported.
        key = (spec, tp, cap)
        if key not in self._models:
            from attn_select.selector.profiles import load_model

            self._models[key] = load_model(spec, tp=tp, capability=cap)
        return self._models[key]

    def _device(self, inputs: DeploymentInputs) -> Device:
        if inputs.capability is not None:
            cap = Capability.parse(inputs.capability)
            return Device(name=f"SM{cap.to_int()}", capability=cap, source=f"capability {cap}")
        name = inputs.device
        if name not in self._devices:
            from attn_select.selector.profiles import load_device

            self._devices[name] = load_device(name)
        return self._devices[name]

    def groups(self, inputs: DeploymentInputs, base_dir: Path, doc: Located, loc: Loc) -> tuple[LockGroup, ...]:
        """The lock groups these inputs give now. Problems with the inputs
        (unknown profile, bad value) are reported at their line in ``doc``."""
        ov = inputs.overrides_value()
        kernels = inputs.kernels_value()
        model_spec = None
        if inputs.model is not None:
            model_spec, _ = _model_ref(inputs.model, base_dir)
        try:
            device = self._device(inputs)
        except UserError as exc:
            raise doc.error(loc + ("device",), str(exc)) from None
        key = (model_spec, device, kernels, ov)
        hit = self._groups.get(key)
        if hit is not None:
            return hit
        try:
            model = self._model(model_spec, ov.tp, device.capability) if model_spec is not None else None
        except UserError as exc:
            raise doc.error(loc + ("model",), str(exc)) from None
        try:
            report = explain(model, device, kernels, ov)
        except UserError as exc:
            raise doc.error(loc, str(exc)) from None
        self._groups[key] = lock_groups(report)
        return self._groups[key]

    def evaluate(
        self, inputs: DeploymentInputs, base_dir: Path, doc: Located, loc: Loc
    ) -> tuple[tuple[LockGroup, ...], SGLangLock | None]:
        """vLLM's groups and/or SGLang's section, as the deployment's engine says."""
        engine = inputs.engine_value(self.default_engine)
        if engine in ("sglang", "both") and inputs.model is None:
            raise doc.error(loc, f"engine {engine} needs 'model': SGLang resolves from the model's config")
        groups = self.groups(inputs, base_dir, doc, loc) if engine in ("vllm", "both") else ()
        sgl = self.sglang(inputs, base_dir, doc, loc) if engine in ("sglang", "both") else None
        return groups, sgl

    def sglang(self, inputs: DeploymentInputs, base_dir: Path, doc: Located, loc: Loc) -> SGLangLock:
        """SGLang's resolution for these inputs now."""
        from attn_select.selector.sglang.explain import explain_sglang, sglang_kv_cache_dtype
        from attn_select.selector.sglang.inputs import ServerFlags

        ov = inputs.overrides_value()
        flags_in = given(inputs.sglang) if inputs.sglang is not None else {}
        cuda = flags_in.pop("cuda_version", None)
        kernels = inputs.kernels_value()
        model_spec, _ = _model_ref(inputs.model, base_dir)  # type: ignore[arg-type]
        try:
            device = self._device(inputs)
        except UserError as exc:
            raise doc.error(loc + ("device",), str(exc)) from None
        try:
            if flags_in.get("kv_cache_dtype") is None:
                flags_in["kv_cache_dtype"] = sglang_kv_cache_dtype(ov.kv_cache_dtype, "both")[0]
            if flags_in.get("enable_deterministic_inference") is None:
                flags_in.pop("enable_deterministic_inference", None)
            flags = ServerFlags(tp_size=ov.tp, **flags_in)
        except UserError as exc:
            raise doc.error(loc + ("overrides", "kv_cache_dtype"), str(exc)) from None
        key = (model_spec, device, kernels, flags, cuda)
        hit = self._sglang.get(key)
        if hit is not None:
            return hit
        try:
            model = self._model(model_spec, ov.tp, device.capability)
        except UserError as exc:
            raise doc.error(loc + ("model",), str(exc)) from None
        try:
            report = explain_sglang(model, device, kernels, flags, cuda)
        except UserError as exc:
            raise doc.error(loc, str(exc)) from None
        self._sglang[key] = sglang_lock(report)
        return self._sglang[key]


# --- make_lock ------------------------------------------------------------------


def lock_groups(report: Explanation) -> tuple[LockGroup, ...]:
    """Every field of every group of one explanation, candidates in
    priority order."""
    out = []
    for g in report.groups:
        sel = g.selection
        out.append(
            LockGroup(
                group=g.name,
                selected=sel.selected,
                flash_attn_version=g.fa_version.version,
                error=sel.error,
                warning=sel.warning,
                candidates={c.name: list(c.reasons) for c in sel.candidates},
            )
        )
    return tuple(out)


def sglang_lock(report: Any) -> SGLangLock:
    """Every field of SGLang's resolution for one deployment."""
    r = report.resolution
    rule = r.default_rule.backend if r.default_rule is not None else None
    if r.error is not None:
        return SGLangLock(engine=sglang_engine_id(), default_rule=rule, error=r.error.text())
    return SGLangLock(
        engine=sglang_engine_id(),
        attention_backend=r.attention_backend,
        prefill_backend=r.prefill_backend,
        decode_backend=r.decode_backend,
        page_size=r.page_size,
        kv_cache_dtype=r.final["kv_cache_dtype"],
        default_rule=rule,
        error=None,
    )


def make_lock(entries: list[tuple[str, DeploymentInputs, tuple[LockGroup, ...]]]
              | list[tuple[str, DeploymentInputs, tuple[LockGroup, ...], SGLangLock | None]]) -> Lockfile:
    """The lockfile for evaluated deployments, in the given order; an entry
    may carry SGLang's section as a fourth item."""
    deployments = []
    for entry in entries:
        name, inputs, groups = entry[0], entry[1], entry[2]
        sgl = entry[3] if len(entry) > 3 else None  # type: ignore[misc]
        extra = {"sglang": sgl} if sgl is not None else {}
        deployments.append(LockDeployment(name=name, inputs=inputs, groups=list(groups), **extra))
    return Lockfile(
        schema=LOCK_SCHEMA,
        engine=Engine(name=ENGINE, version=ENGINE_VERSION),
        deployments=deployments,
    )


def lock_deployments(
    deployments: DeploymentsFile, doc: Located, base_dir: Path, lock_dir: Path, engine: str | None = None
) -> tuple[Lockfile, dict[str, str]]:
    """Evaluate every deployment; the lockfile plus each model path
    re-expressed relative to ``lock_dir`` (for ``dump_lock``). ``engine`` is
    the engine of deployments that name none (recorded in their inputs)."""
    ev = Evaluator(default_engine=engine)
    entries, paths = [], {}
    for i, d in enumerate(deployments.deployments):
        dumped = d.model_dump(exclude={"name"}, exclude_unset=True)
        if d.engine is None and engine not in (None, "vllm"):
            dumped["engine"] = engine
        inputs = DeploymentInputs.model_validate(dumped)
        groups, sgl = ev.evaluate(d, base_dir, doc, ("deployments", i))
        entries.append((d.name, inputs, groups, sgl))
        if d.model is not None:
            paths[d.name] = relative_model_path(d.model, base_dir, lock_dir)
    return make_lock(entries), paths


LOCK_HEADER = (
    "# attn-select lockfile: per deployment and attention group, the backend\n"
    "# vLLM {version} selects, its FlashAttention version and every candidate's\n"
    "# reasons. Each deployment embeds its inputs; model paths are relative to\n"
    "# this file. Verify with `attn-select check FILE`; regenerate with\n"
    "# `attn-select lock DEPLOYMENTS -o FILE`. Fields deleted from a group are\n"
    "# not compared.\n"
)


def dump_lock(lock: Lockfile, model_paths: dict[str, str] | None = None) -> str:
    """The lockfile text: fixed key order, no timestamps, pure-Python YAML
    emitter (byte-identical wherever it runs)."""
    model_paths = model_paths or {}
    doc = {
        "schema": lock.schema_,
        "engine": {"name": lock.engine.name, "version": lock.engine.version},
        "deployments": [
            {
                "name": d.name,
                "inputs": d.inputs.as_yaml(model_paths.get(d.name)),
                "groups": [{f: getattr(g, f) for f in ("group",) + g.present()} for g in d.groups],
                **({"sglang": {f: getattr(d.sglang, f) for f in ("engine",) + d.sglang.present()}}
                   if d.sglang is not None else {}),
            }
            for d in lock.deployments
        ],
    }
    body = yaml.dump(
        doc, Dumper=yaml.SafeDumper, sort_keys=False, default_flow_style=False,
        allow_unicode=True, width=100_000, indent=2,
    )
    return LOCK_HEADER.format(version=lock.engine.version) + body


# --- compare --------------------------------------------------------------------


@dataclass(frozen=True)
class Diff:
    """One difference between the lock and now. ``loc`` points into the
    lockfile (for its line); ``detail`` says why, in words."""

    deployment: str
    group: str | None
    field: str
    locked: Any
    new: Any
    loc: Loc
    detail: str | None = None

    def message(self) -> str:
        """``field: locked -> new`` on one line, reasons as ``valid`` or
        ``invalid (reason; reason)``."""
        return f"{self.field}: {show_value(self.field, self.locked)} -> {show_value(self.field, self.new)}"


ABSENT = "(absent)"


def show_value(field: str, value: Any) -> str:
    if value is None:
        return "null"
    if field.startswith("candidates.") and isinstance(value, list):
        return "valid" if not value else "invalid (" + "; ".join(value) + ")"
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {v}" for k, v in value.items()) + "}"
    return str(value)


@dataclass(frozen=True)
class Recomputed:
    """One deployment evaluated now. The input views are set when the inputs
    come from a deployments file: then a changed input is a diff too."""

    groups: tuple[LockGroup, ...]
    inputs_locked: dict[str, Any] | None = None
    inputs_now: dict[str, Any] | None = None
    sglang: SGLangLock | None = None


def _selected_detail(locked: str | None, new: LockGroup) -> str | None:
    """Why the locked backend is no longer the one selected."""
    cands = new.candidates or {}
    if locked is None:
        return None
    if locked not in cands:
        return f"{locked} is no longer a candidate; priority order now: {' > '.join(cands)}"
    reasons = cands[locked]
    if reasons:
        return f"{locked} is now invalid: {'; '.join(reasons)}"
    if new.selected is not None:
        return (
            f"{locked} is still valid, but {new.selected} now comes before it "
            f"(priority order: {' > '.join(cands)})"
        )
    return None


def compare_group(deployment: str, locked: LockGroup, new: LockGroup, loc: Loc) -> list[Diff]:
    """Only the fields present in the locked group; reasons as ordered
    lists, texts exactly."""
    out: list[Diff] = []
    for name in locked.present():
        if name == "candidates":
            out += _compare_candidates(deployment, locked, new, loc)
            continue
        old_v, new_v = getattr(locked, name), getattr(new, name)
        if old_v != new_v:
            detail = _selected_detail(old_v, new) if name == "selected" else None
            out.append(Diff(deployment, locked.group, name, old_v, new_v, loc + (name,), detail))
    return out


def _compare_candidates(deployment: str, locked: LockGroup, new: LockGroup, loc: Loc) -> list[Diff]:
    out: list[Diff] = []
    old_c, new_c = locked.candidates or {}, new.candidates or {}
    base = loc + ("candidates",)
    for name in list(old_c) + [n for n in new_c if n not in old_c]:
        old_r, new_r = old_c.get(name, ABSENT), new_c.get(name, ABSENT)
        if old_r != new_r:
            out.append(Diff(deployment, locked.group, f"candidates.{name}", old_r, new_r, base + (name,)))
    if set(old_c) == set(new_c) and list(old_c) != list(new_c):
        out.append(Diff(deployment, locked.group, "candidates (priority order)", list(old_c), list(new_c), base))
    return out


def compare_deployment(locked: LockDeployment, now: Recomputed, loc: Loc) -> list[Diff]:
    out: list[Diff] = []
    name = locked.name
    if now.inputs_locked is not None and now.inputs_now is not None:
        old_in, new_in = now.inputs_locked, now.inputs_now
        for key in list(old_in) + [k for k in new_in if k not in old_in]:
            if old_in.get(key, ABSENT) != new_in.get(key, ABSENT):
                out.append(Diff(name, None, f"inputs.{key}", old_in.get(key, ABSENT),
                                new_in.get(key, ABSENT), loc + ("inputs", key)))
    by_name = {g.group: g for g in now.groups}
    for i, g in enumerate(locked.groups):
        gloc = loc + ("groups", i)
        if g.group not in by_name:
            out.append(Diff(name, g.group, "group", "present", ABSENT, gloc + ("group",),
                            f"the deployment now has groups: {', '.join(by_name) or 'none'}"))
            continue
        out += compare_group(name, g, by_name[g.group], gloc)
    locked_names = {g.group for g in locked.groups}
    for g in now.groups:
        if g.group not in locked_names:
            out.append(Diff(name, g.group, "group", ABSENT, "present", loc + ("groups",),
                            f"new attention group; it selects {g.selected or 'nothing'}"))
    out += compare_sglang(name, locked.sglang, now.sglang, loc + ("sglang",))
    return out


def compare_sglang(name: str, locked: SGLangLock | None, now: SGLangLock | None, loc: Loc) -> list[Diff]:
    """The SGLang section: only the fields present in the lock."""
    if locked is None and now is None:
        return []
    if locked is None or now is None:
        return [Diff(name, "sglang", "sglang", "present" if locked else ABSENT, "present" if now else ABSENT, loc,
                     "the deployment's engine changed; run attn-select lock")]
    out = []
    if locked.engine != now.engine:
        out.append(Diff(name, "sglang", "engine", locked.engine, now.engine, loc + ("engine",),
                        "the lock was made for another SGLang version; regenerate it"))
    for f in locked.present():
        old_v, new_v = getattr(locked, f), getattr(now, f)
        if old_v != new_v:
            out.append(Diff(name, "sglang", f, old_v, new_v, loc + (f,)))
    return out


def compare(locked: Lockfile, now: dict[str, Recomputed]) -> list[Diff]:
    """Every difference between the lock and the deployments evaluated now.
    Deployments only in ``now`` are new; those missing from it were removed."""
    out: list[Diff] = []
    if (locked.engine.name, locked.engine.version) != (ENGINE, ENGINE_VERSION):
        out.append(Diff("(lockfile)", None, "engine", f"{locked.engine.name} {locked.engine.version}",
                        f"{ENGINE} {ENGINE_VERSION}", ("engine",),
                        "the lock was made for another engine version; regenerate it"))
    for i, d in enumerate(locked.deployments):
        loc: Loc = ("deployments", i)
        if d.name not in now:
            out.append(Diff(d.name, None, "deployment", "present", ABSENT, loc + ("name",),
                            "not in the deployments file"))
            continue
        out += compare_deployment(d, now[d.name], loc)
    names = {d.name for d in locked.deployments}
    for name in now:
        if name not in names:
            out.append(Diff(name, None, "deployment", ABSENT, "present", ("deployments",),
                            "new deployment; run attn-select lock to add it"))
    return out


# --- check ----------------------------------------------------------------------


@dataclass(frozen=True)
class CheckReport:
    """What ``attn-select check`` found, for every output format."""

    lockfile: str  # as given on the command line (annotations point at it)
    inputs: str  # "embedded" or the deployments file
    cases: tuple[tuple[str, str], ...]  # (deployment, group) checked, lock order then new
    diffs: tuple[Diff, ...]
    lines: tuple[int, ...]  # lockfile line of each diff

    @property
    def ok(self) -> bool:
        return not self.diffs

    def failed_cases(self) -> set[tuple[str, str | None]]:
        return {(d.deployment, d.group) for d in self.diffs}


def accept_command(r: CheckReport) -> str:
    """The command that rewrites the lock to accept what check found."""
    deployments = "DEPLOYMENTS" if r.inputs == "embedded" else r.inputs
    return f"attn-select lock {deployments} -o {r.lockfile}"


def inputs_view(inputs: DeploymentInputs, base_dir: Path, engine: str | None = None) -> dict[str, Any]:
    """The inputs with the model resolved, so a lock and a deployments file
    in different folders compare equal when they name the same file; a
    deployment naming no engine runs ``engine`` (check --engine)."""
    spec = None if inputs.model is None else _model_ref(inputs.model, base_dir)[0]
    view = inputs.as_yaml(spec)
    if inputs.engine is None and engine not in (None, "vllm"):
        view["engine"] = engine
    return view


def run_check(
    lock: Lockfile,
    lock_doc: Located,
    lock_dir: Path,
    deployments: tuple[DeploymentsFile, Located, Path] | None = None,
    engine: str | None = None,
) -> CheckReport:
    """Recompute every deployment (from the lock's embedded inputs, or from
    a deployments file matched by name) and compare with the lock."""
    ev = Evaluator(default_engine=engine)
    now: dict[str, Recomputed] = {}
    if deployments is None:
        for i, d in enumerate(lock.deployments):
            groups, sgl = ev.evaluate(d.inputs, lock_dir, lock_doc, ("deployments", i, "inputs"))
            now[d.name] = Recomputed(groups, sglang=sgl)
        inputs = "embedded"
    else:
        dep_file, dep_doc, dep_dir = deployments
        locked_inputs = {d.name: d.inputs for d in lock.deployments}
        for i, d in enumerate(dep_file.deployments):
            groups, sgl = ev.evaluate(d, dep_dir, dep_doc, ("deployments", i))
            old = locked_inputs.get(d.name)
            now[d.name] = Recomputed(
                groups,
                None if old is None else inputs_view(old, lock_dir, engine),
                inputs_view(d, dep_dir, engine),
                sglang=sgl,
            )
        inputs = dep_doc.source
    diffs = compare(lock, now)
    cases: list[tuple[str, str]] = []
    for d in lock.deployments:
        cases += [(d.name, g.group) for g in d.groups] + ([(d.name, "sglang")] if d.sglang is not None else [])
    seen = set(cases)
    for name, r in now.items():
        cases += [(name, g.group) for g in r.groups if (name, g.group) not in seen]
        if r.sglang is not None and (name, "sglang") not in seen:
            cases.append((name, "sglang"))
    return CheckReport(
        lockfile=lock_doc.source,
        inputs=inputs,
        cases=tuple(cases),
        diffs=tuple(diffs),
        lines=tuple(lock_doc.line(d.loc) for d in diffs),
    )
