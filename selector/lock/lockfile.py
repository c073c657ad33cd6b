"""The lockfile: per deployment and attention group, the backend vLLM
0.33.0 selects, the FlashAttention version, the error/warning text and every
candidate's reasons, plus SGLang's resolution, with each deployment's inputs
embedded so ``check`` can recompute without the deployments file.
``make_lock`` is pure; ``dump_lock`` writes the same bytes wherever it runs.
"""

from __future__ import annotations

from typing import Annotated, Any, Optional

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator

from attn_select.backends import registry
from attn_select.selector.engines import SGLANG_VERSION, VLLM_VERSION
from attn_select.selector.errors import UserError
from attn_select.selector.explain import ENGINE, ENGINE_VERSION
from attn_select.selector.lock.deployments import _STRICT, DeploymentInputs, DeploymentName
from attn_select.selector.lock.yamlmarks import _MODELS, Located, _check_unique, load_yaml, validation_error

LOCK_SCHEMA = "attn-select.lock/1"


# --- lockfile -------------------------------------------------------------------

# Fields of a lock group compared by ``check`` when present, in file order.
GROUP_FIELDS = ("selected", "flash_attn_version", "error", "warning", "candidates",
                "mla_prefill_backend", "mla_prefill_error", "mla_prefill_candidates")
# The candidate maps (backend -> reasons, priority order): compared name by name.
CANDIDATE_FIELDS = ("candidates", "mla_prefill_candidates")


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
    # MLA groups whose layers ask for one: vLLM's second decision, the MLA prefill backend
    # (MLAPrefillBackendEnum names). Absent from other groups, and from locks written before it.
    mla_prefill_backend: Optional[str] = None
    mla_prefill_error: Optional[str] = None
    mla_prefill_candidates: Optional[dict[str, list[str]]] = None

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

    name: DeploymentName
    # what produced the entry ("vllm 0.33.0 (attn-select mirror)"); written by
    # lock --record-engine, read by people: check does not compare it
    produced_by: Optional[str] = None
    inputs: DeploymentInputs
    groups: list[LockGroup]
    sglang: Optional[SGLangLock] = None  # engine sglang / both


def produced_by(d: LockDeployment) -> str:
    """Which releases' mirrors produced a lock entry (lock --record-engine)."""
    parts = []
    if d.groups:
        parts.append(f"vllm {VLLM_VERSION} (attn-select mirror)")
    if d.sglang is not None:
        parts.append(f"sglang {SGLANG_VERSION} (attn-select mirror)")
    return ", ".join(parts) or "nothing"


class Engine(BaseModel):
    model_config = ConfigDict(**_STRICT)

    name: str
    version: str


class Lockfile(BaseModel):
    model_config = ConfigDict(**_STRICT, populate_by_name=True)

    schema_: str = Field(alias="schema")
    engine: Engine
    deployments: list[LockDeployment]

    @field_validator("deployments")
    @classmethod
    def _some(cls, value: list[LockDeployment]) -> list[LockDeployment]:
        # lock refuses a deployments file without one: an empty list is a hand edit that would pass vacuously
        if not value:
            raise ValueError("the lockfile locks no deployment; regenerate it: attn-select lock DEPLOYMENTS -o LOCKFILE")
        return value

    @field_validator("schema_")
    @classmethod
    def _schema(cls, value: str) -> str:
        if value != LOCK_SCHEMA:
            raise ValueError(f"unsupported lockfile schema {value!r}; this attn-select reads {LOCK_SCHEMA!r}")
        return value


_MODELS["Lockfile"] = Lockfile


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


# --- make_lock ------------------------------------------------------------------


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


LOCK_HEADER = (
    "# attn-select lockfile: per deployment and attention group, the backend\n"
    "# vLLM {version} selects, its FlashAttention version and every candidate's\n"
    "# reasons. Each deployment embeds its inputs; model paths are relative to\n"
    "# this file. Verify with `attn-select check FILE`; regenerate with\n"
    "# `attn-select lock DEPLOYMENTS -o FILE`. Fields deleted from a group are\n"
    "# not compared.\n"
)


def dump_lock(lock: Lockfile, model_paths: dict[str, str] | None = None, warnings: tuple[str, ...] = ()) -> str:
    """The lockfile text: fixed key order, no timestamps, pure-Python YAML
    emitter (byte-identical wherever it runs). ``warnings`` (another
    installed engine release) go in as comments after the header, so a
    reviewer of the lock sees them."""
    model_paths = model_paths or {}
    doc = {
        "schema": lock.schema_,
        "engine": {"name": lock.engine.name, "version": lock.engine.version},
        "deployments": [
            {
                "name": d.name,
                **({"produced_by": d.produced_by} if d.produced_by is not None else {}),
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
    notes = "".join(f"# warning: {w}\n" for w in warnings)
    return LOCK_HEADER.format(version=lock.engine.version) + notes + body
