"""Head sizes and KV head counts as vLLM 0.33.0 reads them: a config
class's fixed head_dim or num_key_value_heads default (selector/model/
hf_size_defaults.py, generated from transformers 5.20's classes), and where
its Transformers modeling backend builds the model, a head_dim of 0
(transformers' attention scales by head_dim ** -0.5), the backend's own
class names as a config.json's architecture, and the quantization the
backend refuses. Each case is a unit test and a differential case run
through vLLM's own build (marker ``vllm``)."""

from __future__ import annotations

import copy

import pytest

from attn_select.selector.config import Capability
from attn_select.selector.errors import UserError
from attn_select.selector.model.facts import model_facts
from attn_select.selector.model.hf_size_defaults import HEAD_DIM_DEFAULTS, KV_HEADS_DEFAULTS, NO_HEAD_DIM

from .generated import assert_regenerates
from .model_oracle_client import head_size_differential, vllm_python
from .test_hostile_round13 import _base

H100 = Capability(9, 0)
ZERO = "0.0 cannot be raised to a negative power"


def _sized(arch: str, model_type: str, **fields) -> dict:
    """A small config of this architecture and model type; ``fields`` set or, as None, drop keys."""
    config = {"architectures": [arch], "model_type": model_type, "hidden_size": 512, "num_attention_heads": 8,
              "num_key_value_heads": 8, "num_hidden_layers": 2, "intermediate_size": 1024, "vocab_size": 200000,
              "max_position_embeddings": 4096, "rope_theta": 10000.0, "torch_dtype": "bfloat16"}
    for key, value in fields.items():
        if value is None:
            config.pop(key, None)
        else:
            config[key] = value
    return config


def _dropped(base: str, key: str) -> dict:
    config = copy.deepcopy(_base(base))
    config.pop(key)
    return config


def _as(base: str, arch: str) -> dict:
    config = copy.deepcopy(_base(base))
    config["architectures"] = [arch]
    return config


# (name, config, vLLM's head size where it builds, or a piece of its refusal)
CASES = [
    # a fixed class default where config.json has no head_dim (hidden // heads would be 64)
    ("cwm without head_dim", _sized("CwmForCausalLM", "cwm"), 128),
    ("seed_oss without head_dim", _sized("SeedOssForCausalLM", "seed_oss"), 128),
    ("mellum without head_dim", _sized("MellumForCausalLM", "mellum"), 128),
    ("vaultgemma without head_dim", _sized("VaultGemmaForCausalLM", "vaultgemma"), 256),
    ("glm without head_dim", _sized("GlmForCausalLM", "glm"), 128),
    ("seed_oss head_dim 32", _sized("SeedOssForCausalLM", "seed_oss", head_dim=32), 32),
    # a fixed KV head default where config.json has none (the query heads would be 8)
    ("cwm without num_key_value_heads", _sized("CwmForCausalLM", "cwm", num_key_value_heads=None), 128),
    ("glm4 without num_key_value_heads", _sized("Glm4ForCausalLM", "glm4", num_key_value_heads=None), 128),
    ("granite_swa without num_key_value_heads",
     _sized("GraniteSWAForCausalLM", "granite_swa", num_key_value_heads=None), 64),
    ("qwen3 without num_key_value_heads", _sized("Qwen3ForCausalLM", "qwen3", num_key_value_heads=None,
                                                 num_attention_heads=32, hidden_size=4096), 128),
    # glm4_moe.py reads config.head_dim, which Glm4MoeConfig does not have; commandr.py guards its read
    ("glm-4.5 without head_dim", _dropped("glm-4.5 like", "head_dim"), "no attribute 'head_dim'"),
    ("cohere without head_dim", _sized("CohereForCausalLM", "cohere"), 64),
    # NemotronConfig leaves it null: vLLM's model config refuses the null
    ("nemotron without num_key_value_heads", _sized("NemotronForCausalLM", "nemotron", num_key_value_heads=None),
     "total_num_kv_heads"),
    # head_dim 0: the modeling code's softmax scale fails, but where it never reads head_dim
    ("olmo3 head_dim 0", _sized("Olmo3ForCausalLM", "olmo3", head_dim=0), ZERO),
    ("phi head_dim 0", _sized("PhiForCausalLM", "phi", head_dim=0), ZERO),
    ("seed_oss head_dim 0", _sized("SeedOssForCausalLM", "seed_oss", head_dim=0), ZERO),
    ("smollm3 head_dim 0", _sized("SmolLM3ForCausalLM", "smollm3", head_dim=0), ZERO),
    ("llama as TransformersForCausalLM head_dim 0", _sized("TransformersForCausalLM", "llama", head_dim=0), ZERO),
    ("starcoder2 head_dim 0", _sized("Starcoder2ForCausalLM", "starcoder2", head_dim=0), 64),
    ("gpt_neox head_dim 0", _sized("GPTNeoXForCausalLM", "gpt_neox", head_dim=0), 64),
    ("gpt_neox head_dim -1", _sized("GPTNeoXForCausalLM", "gpt_neox", head_dim=-1), 64),
    ("gpt_bigcode head_dim -1", _sized("GPTBigCodeForCausalLM", "gpt_bigcode", head_dim=-1), 64),
    ("gpt_bigcode without num_key_value_heads",
     _sized("GPTBigCodeForCausalLM", "gpt_bigcode", num_key_value_heads=None), 64),
    ("starcoder2 head_dim -1", _sized("Starcoder2ForCausalLM", "starcoder2", head_dim=-1), "negative dimension"),
    ("llama head_dim 0 on its own model file", _sized("LlamaForCausalLM", "llama", head_dim=0), 64),
    # the backend's own classes as the architecture
    ("llama as TransformersForCausalLM", _sized("TransformersForCausalLM", "llama"), 64),
    ("kimi-k2 as TransformersForCausalLM", _as("kimi-k2 like", "TransformersForCausalLM"), 576),
    ("gpt-oss as TransformersForCausalLM", _as("profile gpt-oss-20b", "TransformersForCausalLM"), "MXFP4"),
    ("gpt-oss on its own model file", _base("profile gpt-oss-20b"), 64),
]


@pytest.mark.parametrize("name,config,want", CASES, ids=[c[0] for c in CASES])
def test_backend_head_size(name, config, want):
    if isinstance(want, int):
        assert model_facts(config, name="m", capability=H100).head_size == want
        return
    with pytest.raises(UserError) as exc:
        model_facts(config, name="m", capability=H100)
    assert "\n" not in str(exc.value)
    words = {"MXFP4": "mxfp4", "total_num_kv_heads": "num_key_value_heads"}.get(want, "head_dim")
    assert words in str(exc.value)


@pytest.mark.parametrize("model_type,arch,kv", [
    ("cwm", "CwmForCausalLM", 8), ("glm4", "Glm4ForCausalLM", 2), ("granite_swa", "GraniteSWAForCausalLM", 4),
    ("qwen3", "Qwen3ForCausalLM", 32)])
def test_a_fixed_kv_head_default_is_the_models(model_type, arch, kv):
    assert KV_HEADS_DEFAULTS[model_type] == kv
    extra = dict(num_attention_heads=32, hidden_size=4096) if kv == 32 else {}
    f = model_facts(_sized(arch, model_type, num_key_value_heads=None, **extra), name="m", capability=H100)
    assert f.total_num_kv_heads == kv
    assert any("num_key_value_heads" in n and "not in config.json" in n for n in f.notes)


def test_gpt_bigcode_keeps_a_given_kv_head_count():
    """GPTBigCodeConfig declares no num_key_value_heads: multi_query's one KV head is its
    __post_init__'s, and a config.json count is set after it (the differential cases hold 8)."""
    given = model_facts(_sized("GPTBigCodeForCausalLM", "gpt_bigcode"), name="m", capability=H100)
    multi_query = model_facts(_sized("GPTBigCodeForCausalLM", "gpt_bigcode", num_key_value_heads=None), name="m",
                              capability=H100)
    assert (given.num_kv_heads, multi_query.num_kv_heads) == (8, 1)


def test_the_backend_classes_are_noted_as_the_backend():
    f = model_facts(_sized("TransformersForCausalLM", "llama"), name="m", capability=H100)
    assert any("Transformers modeling backend itself" in n for n in f.notes)


def test_the_table_has_the_classes_with_a_fixed_default():
    assert {"cwm": 128, "seed_oss": 128, "vaultgemma": 256, "qwen3": 128}.items() <= HEAD_DIM_DEFAULTS.items()
    assert "llama" not in HEAD_DIM_DEFAULTS and "olmo3" not in HEAD_DIM_DEFAULTS  # derived from the sizes
    assert KV_HEADS_DEFAULTS["nemotron"] is None and "llama" not in KV_HEADS_DEFAULTS
    assert {"glm4_moe", "cohere"} <= NO_HEAD_DIM and not {"llama", "cwm", "qwen3"} & NO_HEAD_DIM


# vLLM's own build of every case (marker ``vllm``)
vllm_answers, test_against_vllm = head_size_differential(CASES, H100, 1800)


@pytest.mark.vllm
@pytest.mark.slow
def test_the_generated_table_is_vllms():
    assert_regenerates(vllm_python(), "hf_size_defaults")
