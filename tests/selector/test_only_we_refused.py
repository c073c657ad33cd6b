"""Configs vLLM 0.33.0 builds that attn-select refused (found by the hostile
config.json campaign): an ``index_topk`` that is no number on a model without
sparse layers, and an ERNIE-4.5 config without the sizes its config class
defaults (Ernie4_5Config, Ernie4_5_MoeConfig). Plain tests, and the same
configs through vLLM's own engine config and model build
(tests/selector/model_oracle.py; marker ``vllm``, skipped without a vLLM
0.33.0 python).
"""

from __future__ import annotations

import pytest

from attn_select.selector.config import Capability, Kernels
from attn_select.selector.errors import UserError
from attn_select.selector.explain import explain
from attn_select.selector.model.facts import model_facts
from attn_select.selector.overrides import Overrides
from attn_select.selector.profiles import load_device

from . import model_cases_text
from .model_oracle_client import facts_agreeing_with_vllm, run_model_oracle

H100 = Capability(9, 0)
LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 1024,
         "num_attention_heads": 8, "num_key_value_heads": 8, "num_hidden_layers": 2, "intermediate_size": 2048,
         "vocab_size": 1000, "torch_dtype": "bfloat16"}
ERNIE_MOE = next(c["config"] for c in model_cases_text.cases() if c["name"].startswith("ernie-4.5-21b"))
# baidu/ERNIE-4.5-0.3B-PT's config.json, cut to 2 layers
ERNIE = {"architectures": ["Ernie4_5ForCausalLM"], "model_type": "ernie4_5", "hidden_size": 1024,
         "intermediate_size": 3072, "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 128,
         "num_hidden_layers": 2, "max_position_embeddings": 131072, "rms_norm_eps": 1e-5, "rope_theta": 500000,
         "use_bias": False, "tie_word_embeddings": True, "vocab_size": 1000, "torch_dtype": "bfloat16"}


def _without(config: dict, *keys: str, **fields) -> dict:
    return {**{k: v for k, v in config.items() if k not in keys}, **fields}


def _facts(config: dict):
    return model_facts(config, name="m", capability=H100)


# --- index_topk on a model without sparse layers ---------------------------------------


@pytest.mark.parametrize("value", [[2048], "x", {"k": 1}, True])
def test_index_topk_of_any_kind_is_kept_where_no_layer_is_sparse(value):
    f = _facts({**LLAMA, "index_topk": value})
    assert not any(g.attn.use_sparse for g in f.groups)
    assert str(f.index_topk) == str(value)  # kept as written (a list or mapping wrapped hashable)
    (g,) = explain(f, load_device("h100"), Kernels(), Overrides()).groups
    assert g.selection.selected == "FLASH_ATTN"


def test_a_sparse_backend_check_that_cannot_do_its_arithmetic_raises_as_vllm_does():
    f = _facts({**LLAMA, "index_topk": [2048]})
    with pytest.raises(UserError, match=r"FLASHINFER_MLA_SPARSE_SM120: TypeError: int\(\) argument"):
        explain(f, load_device("b200"), Kernels(), Overrides(backend="FLASHINFER_MLA_SPARSE_SM120"))


# --- ERNIE-4.5's class defaults --------------------------------------------------------


def test_ernie_moe_without_num_hidden_layers_takes_the_class_default():
    f = _facts(_without(ERNIE_MOE, "num_hidden_layers"))
    assert f.num_layers == 28 and [g.layers for g in f.groups] == [tuple(range(28))]
    assert any("num_hidden_layers=28" in n for n in f.notes)
    # and the KV heads: Ernie4_5_MoeConfig's 4, not the query heads
    assert _facts(_without(ERNIE_MOE, "num_key_value_heads")).num_kv_heads == 4


def test_dense_ernie_takes_its_class_defaults():
    assert _facts(_without(ERNIE, "num_hidden_layers")).num_layers == 18
    # head_dim 128 by default, hidden_size // heads only when null
    assert _facts(_without(ERNIE, "head_dim", hidden_size=2048)).head_size == 128
    assert _facts(_without(ERNIE, hidden_size=2048, head_dim=None)).head_size == 128
    assert _facts(_without(ERNIE, hidden_size=1024, num_attention_heads=4, num_key_value_heads=4,
                           head_dim=None)).head_size == 256
    assert _facts(_without(ERNIE, "num_key_value_heads")).num_kv_heads == 2


# --- against vLLM ----------------------------------------------------------------------


def _vllm_cases() -> list[dict]:
    return [
        {"name": "llama index_topk [2048]", "config": {**LLAMA, "index_topk": [2048]}},
        {"name": "llama index_topk 'x'", "config": {**LLAMA, "index_topk": "x"}},
        {"name": "ernie moe, no num_hidden_layers", "config": _without(ERNIE_MOE, "num_hidden_layers")},
        {"name": "ernie moe, no num_key_value_heads", "config": _without(ERNIE_MOE, "num_key_value_heads")},
        {"name": "ernie, no num_hidden_layers", "config": _without(ERNIE, "num_hidden_layers")},
        {"name": "ernie, no head_dim", "config": _without(ERNIE, "head_dim", hidden_size=2048)},
        {"name": "ernie, null head_dim", "config": _without(ERNIE, hidden_size=1024, num_attention_heads=4,
                                                            num_key_value_heads=4, head_dim=None)},
        {"name": "ernie, no num_key_value_heads", "config": _without(ERNIE, "num_key_value_heads")},
    ]


@pytest.fixture(scope="module")
def oracle():
    cases = _vllm_cases()
    return list(zip(cases, run_model_oracle(cases, timeout=1200)))


@pytest.mark.vllm
def test_vllm_builds_them_and_we_agree(oracle):
    for case, res in oracle:
        f = facts_agreeing_with_vllm(res, lambda: _facts(case["config"]), None)
        assert f.num_layers == res["model"]["num_layers"], case["name"]
        assert len(res["layers"]) == sum(len(g.layers) for g in f.groups), case["name"]
