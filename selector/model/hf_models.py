"""transformers' model and config classes, as vLLM 0.33.0 reads them
(transformers_models.txt holds the facts): the base model class a config
without ``architectures`` gets, whether the Transformers modeling backend can
wrap a named class, the model types a sub-config may name, and the
sub-config classes of the multimodal configs with their declared fields."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import NamedTuple

_DATA = Path(__file__).with_name("transformers_models.txt")
_STRICT = Path(__file__).with_name("transformers_strict.txt")


class SubClass(NamedTuple):
    """One sub-config class: its declared fields (hf_types spec), the class
    defaults and attribute_map aliases of the sizes validate_architecture
    reads, and whether it has its own hidden-size check."""

    name: str
    model_type: str
    spec: str
    defaults: dict[str, int]
    aliases: dict[str, str]
    hidden_over_heads: bool


class _Tables(NamedTuple):
    base: dict[str, str]
    classes: frozenset[str]
    config_types: frozenset[str]
    subs: dict[str, SubClass]
    text: dict[str, str]
    composite: dict[str, tuple[tuple[str, str | None, str | None], ...]]
    textsub: frozenset[str]


def _sub(rest: str) -> SubClass:
    name, model_type, *tokens = rest.split()
    spec = " ".join(t for t in tokens if t[0] not in "@~!")
    defaults = {k: int(v) for k, _, v in (t[1:].partition("=") for t in tokens if t[0] == "@")}
    aliases = {k: v for k, _, v in (t[1:].partition("=") for t in tokens if t[0] == "~")}
    return SubClass(name, model_type, spec, defaults, aliases, "!hidden_over_heads" in tokens)


@cache
def _tables() -> _Tables:
    base: dict[str, str] = {}
    classes: set[str] = set()
    others: set[str] = set()
    subs: dict[str, SubClass] = {}
    text: dict[str, str] = {}
    composite: dict[str, tuple[tuple[str, str | None, str | None], ...]] = {}
    textsub: set[str] = set()
    for line in _DATA.read_text().splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "base":
            model_type, name = rest.split()
            base[model_type] = name
        elif kind == "class":
            prefix, *heads = rest.split()
            classes.update(prefix if head == "-" else prefix + head for head in heads)
        elif kind == "config":
            others.add(rest.strip())
        elif kind == "sub":
            sub = _sub(rest)
            subs[sub.name] = sub
        elif kind == "text":
            model_type, _, spec = rest.partition(" ")
            text[model_type] = spec
        elif kind == "composite":
            model_type, *entries = rest.split()
            keyed = []
            for entry in entries:
                key, _, target = entry.partition("=")
                auto = target.startswith("auto:")
                keyed.append((key, None if auto else target, target[5:] if auto else None))
            composite[model_type] = tuple(keyed)
        elif kind == "textsub":
            textsub.add(rest.strip())
    return _Tables(base, frozenset(classes), frozenset(base) | frozenset(others), subs, text, composite,
                   frozenset(textsub))


def base_model_class(model_type: object) -> str | None:
    """MODEL_MAPPING_NAMES[model_type]: what get_config writes into an empty
    ``architectures`` (transformers_utils/config.py), or None."""
    return _tables().base.get(model_type) if isinstance(model_type, str) else None


def backend_can_wrap(arch: str) -> bool:
    """_try_resolve_transformers finds ``getattr(transformers, arch)`` and
    its attention can be routed through vLLM (model_executor/models/registry.py)."""
    return arch in _tables().classes


def is_config_type(model_type: str) -> bool:
    """``model_type in CONFIG_MAPPING`` (with vLLM's registrations)."""
    return model_type in _tables().config_types


# vLLM 0.33.0's _CONFIG_REGISTRY (transformers_utils/config.py): HFConfigParser
# registers the class of a config.json's own model_type with AutoConfig before
# loading it (only the top-level one: a sub-config's model_type is not)
VLLM_CONFIG_REGISTRY = frozenset({
    "RefinedWeb", "RefinedWebModel", "alpamayo2_super", "bagel", "bailing_moe_v3_vl", "beam", "chatglm", "colqwen3",
    "deepseek_v32", "deepseek_v41", "deepseek_vl_v2", "dory", "dots3_note", "eagle", "flint", "funaudiochat",
    "hy_v4", "hyperclovax", "inkling_mm_model", "inkling_model", "isaac", "k3_dspark", "kimi_k2", "kimi_k25",
    "kimi_k3", "kimi_linear", "kimi_vl", "midashenglm", "minimax_m3_mtp", "minimax_m3_vl", "moondream3",
    "moss_transcribe_diarize", "muse_spark", "muse_spark_audio", "muse_spark_dspark", "muse_spark_text",
    "muse_spark_vision", "musespark1x_text", "openvla", "ops_colqwen3", "ovis", "qwen3_asr",
    "qwen3_vl_nemotron_embed", "speculators", "step3_text", "step3_vl", "step3p5", "step5", "step5_vl",
    "ultravbert", "ultravox", "unlimited-ocr", "unlimited_ocr",
})


def keeps_text_config_dict(model_type: str) -> bool:
    """Whether the config class of ``model_type`` (a top-level one vLLM
    loads) keeps a config.json text_config as the dict it is given, which
    get_text_config() then returns."""
    return top_level_config_type(model_type) and model_type not in _tables().textsub


def top_level_config_type(model_type: str) -> bool:
    """Whether vLLM's get_config has a config class for a config.json's own
    model_type: transformers' CONFIG_MAPPING or vLLM's _CONFIG_REGISTRY."""
    return is_config_type(model_type) or model_type in VLLM_CONFIG_REGISTRY


@cache
def _strict_table() -> dict[str, dict[str, tuple[str, bool]]]:
    """model type -> field -> (kind, null allowed), from transformers_strict.txt."""
    table: dict[str, dict[str, tuple[str, bool]]] = {}
    for line in _STRICT.read_text().splitlines():
        kind, _, rest = line.partition(" ")
        if kind != "strict":
            continue
        token, *model_types = rest.split()
        name, _, field_kind = token.rstrip("?").partition(":")
        for model_type in model_types:
            table.setdefault(model_type, {})[name] = (field_kind or "int", token.endswith("?"))
    return table


def strict_fields(model_type: str) -> dict[str, tuple[str, bool]]:
    """The common fields the strict class of ``model_type`` declares, with their kinds ({} if none)."""
    return _strict_table().get(model_type, {})


def text_spec(model_type: str) -> str:
    """The declared-field spec of a text config class hf_types does not list ("" if none)."""
    return _tables().text.get(model_type, "")


def sub_configs(model_type: str | None) -> tuple[tuple[str, str | None, str | None], ...]:
    """(key, fixed class name or None, AutoConfig's default model type) for
    each non-text sub-config the class of ``model_type`` builds."""
    return _tables().composite.get(model_type or "", ())


def sub_class(name: str | None = None, model_type: str | None = None) -> SubClass | None:
    """A described sub-config class, by class name or by its model type."""
    subs = _tables().subs
    if name is not None:
        return subs.get(name)
    return next((s for s in subs.values() if s.model_type == model_type), None)
