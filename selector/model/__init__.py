"""config.json -> ModelFacts, the way vLLM 0.33.0 derives each attention
layer's ``get_attn_backend`` inputs.

Three steps, each mirroring one part of what vLLM does with a checkpoint:

1. ``parse_raw`` type-checks the config.json fields we read with
   pydantic-core (``raw``).
2. ``HFView`` applies what the transformers config class does when it loads
   that JSON (class defaults, ``attribute_map``, ``__post_init__``: Qwen2's
   ``use_sliding_window`` gate, default ``layer_types`` ...), so we read the
   same attributes vLLM reads from ``hf_config`` / ``hf_text_config``
   (``hf_classes``).
3. Model-level facts (``ModelConfig`` and ``ModelArchConfigConvertorBase``:
   ``model_level``, ``dtype``, ``quant``) and per-layer facts: what each
   model file passes to ``Attention``, ``EncoderOnlyAttention``,
   ``CrossAttention`` or ``MLAAttention``, and what that layer class then
   passes to ``get_attn_backend`` (``layers``, picked per architecture by
   ``archs``).

``facts.model_facts`` puts the steps together for a parsed config;
``files.facts_from_path`` reads one from a config.json or a model folder.

No transformers, no torch, no network; nothing in a model folder is executed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from attn_select.selector.model.dtype import resolve_dtype, supported_dtypes
from attn_select.selector.model.facts import group_layers, model_facts
from attn_select.selector.model.hf_classes import HFView, hf_view
from attn_select.selector.model.model_level import (
    is_deepseek_mla,
    is_mm_prefix_lm,
    model_head_size,
    total_kv_heads,
    uses_alibi,
)
from attn_select.selector.model.raw import parse_raw

if TYPE_CHECKING:
    from attn_select.selector.model.files import facts_from_path, read_config_json, weights_dtype

__all__ = [
    "HFView",
    "facts_from_path",
    "group_layers",
    "hf_view",
    "is_deepseek_mla",
    "is_mm_prefix_lm",
    "model_facts",
    "model_head_size",
    "parse_raw",
    "read_config_json",
    "resolve_dtype",
    "supported_dtypes",
    "total_kv_heads",
    "uses_alibi",
    "weights_dtype",
]

# ``files`` (and json, struct) loads on first use: explain with a built-in
# profile reads no file, so it never imports them.
_FROM_FILES = frozenset({"facts_from_path", "read_config_json", "weights_dtype"})


def __getattr__(name: str) -> Any:
    if name in _FROM_FILES:
        from attn_select.selector.model import files

        return getattr(files, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
