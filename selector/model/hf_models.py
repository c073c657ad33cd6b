"""transformers' model classes, as vLLM 0.33.0 reads them for an
architecture its own registry lacks (transformers_models.txt holds the
facts): the base model class a config without ``architectures`` gets, and
whether the Transformers modeling backend can wrap a named class."""

from __future__ import annotations

from functools import cache
from pathlib import Path

_DATA = Path(__file__).with_name("transformers_models.txt")


@cache
def _tables() -> tuple[dict[str, str], frozenset[str]]:
    base: dict[str, str] = {}
    classes: set[str] = set()
    for line in _DATA.read_text().splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "base":
            model_type, name = rest.split()
            base[model_type] = name
        elif kind == "class":
            prefix, *heads = rest.split()
            classes.update(prefix if head == "-" else prefix + head for head in heads)
    return base, frozenset(classes)


def base_model_class(model_type: object) -> str | None:
    """MODEL_MAPPING_NAMES[model_type]: what get_config writes into an empty
    ``architectures`` (transformers_utils/config.py), or None."""
    return _tables()[0].get(model_type) if isinstance(model_type, str) else None


def backend_can_wrap(arch: str) -> bool:
    """_try_resolve_transformers finds ``getattr(transformers, arch)`` and
    its attention can be routed through vLLM (model_executor/models/registry.py)."""
    return arch in _tables()[1]
