"""The vLLM vocabularies attn-select writes down (--dtype's choices,
AttentionConfig's fields, the CacheDType literal) against vLLM 0.33.0's own
source text, read with ``ast`` (no vLLM import). Skipped when the source is
absent (ATTN_SELECT_VLLM_SRC: the folder that holds ``vllm/``)."""

from __future__ import annotations

import ast

import pytest

from attn_select.selector.config import KV_CACHE_DTYPES
from attn_select.selector.overrides import ATTENTION_CONFIG_FIELDS
from attn_select.selector.vllm_names import VLLM_ATTENTION_CONFIG_FIELDS, VLLM_DTYPES
from tests.vllm_source import vllm_source


SRC = vllm_source()
pytestmark = [pytest.mark.vllm,
              pytest.mark.skipif(not SRC.exists(), reason="vLLM source tree not found")]


def _literal(rel: str, name: str) -> tuple[object, ...]:
    for node in ast.parse((SRC / rel).read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == name:
            return tuple(ast.literal_eval(e) for e in node.value.slice.elts)
    raise AssertionError(f"{rel}: no {name}")


def _class_fields(rel: str, name: str) -> tuple[str, ...]:
    for node in ast.parse((SRC / rel).read_text()).body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return tuple(s.target.id for s in node.body if isinstance(s, ast.AnnAssign))
    raise AssertionError(f"{rel}: no class {name}")


def test_dtype_choices_are_model_dtype():
    assert VLLM_DTYPES == _literal("config/model.py", "ModelDType")


def test_kv_cache_dtypes_are_cache_dtype():
    assert KV_CACHE_DTYPES == _literal("config/cache.py", "CacheDType")


def test_attention_config_fields_are_vllms():
    assert VLLM_ATTENTION_CONFIG_FIELDS == _class_fields("config/attention.py", "AttentionConfig")
    assert set(ATTENTION_CONFIG_FIELDS) <= set(VLLM_ATTENTION_CONFIG_FIELDS)
