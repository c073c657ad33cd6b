"""Models of vLLM 0.33.0 whose layers run backends they fix themselves
(DeepSeek-V4.1, Dots3Note, Inkling's multimodal model) are refused with
what they run instead of a selection, and BailingMoeV3VL builds its text
model's layers (bailing_moe_v3_vl.py: BailingMoeV3ForCausalLM over
text_config) under its config class's checks. The vLLM builds behind them:
test_model_vs_vllm's "bailing v3 vl" cases; the fixed-backend models were
read from the source (the CPU oracle cannot build them)."""

from __future__ import annotations

import pytest

from attn_select.selector.config import Capability
from attn_select.selector.errors import UserError
from attn_select.selector.model.facts import model_facts
from attn_select.selector.model.layers import NoVllmSelection

from .test_model_vs_vllm import _bailing_v3_vl

_SIZES = {"hidden_size": 1024, "num_attention_heads": 16, "num_key_value_heads": 4, "num_hidden_layers": 4,
          "vocab_size": 1000, "intermediate_size": 2048, "torch_dtype": "bfloat16"}


def _facts(config: dict):
    return model_facts(config, name="m", capability=Capability(9, 0))


@pytest.mark.parametrize("arch,model_type,sizes,says", [
    ("DeepseekV41ForCausalLM", "deepseek_v4", _SIZES, "_select_dsv4_attn_cls"),
    ("Dots3NoteForCausalLM", "dots3_note", _SIZES, "Dots3NotePaddedSparseBackend"),
    # InklingMMConfig computes its sizes from its sub-configs (read-only properties)
    ("InklingForConditionalGeneration", "inkling_mm_model", {}, "InklingAttention"),
])
def test_a_model_with_fixed_backends_has_no_selection(arch, model_type, sizes, says):
    with pytest.raises(NoVllmSelection) as err:
        _facts({"architectures": [arch], "model_type": model_type, **sizes})
    assert says in str(err.value) and arch in str(err.value)


def _mla_layers(facts) -> list[int]:
    return sorted(i for g in facts.groups if g.name == "mla" for i in g.layers)


@pytest.mark.parametrize("layers,group,mla", [
    (7, 3, [2, 5, 6]),  # each group's last layer, and the layer past the last full group
    (6, 3, [2, 5]),
    (10, 5, [4, 9]),
])
def test_bailing_v3_vl_builds_mla_on_its_text_configs_schedule(layers, group, mla):
    facts = _facts(_bailing_v3_vl(num_hidden_layers=layers, layer_group_size=group))
    assert _mla_layers(facts) == mla
    assert facts.runner == "generate"


def test_bailing_v3_vl_layer_types_on_the_schedule_pass():
    types = ["linear_attention", "linear_attention", "full_attention"] * 2
    assert _mla_layers(_facts(_bailing_v3_vl(num_hidden_layers=6, layer_group_size=3, layer_types=types))) == [2, 5]
    legacy = ["mamba", "conv", "attention"] * 2  # layers_block_type's old names
    assert _mla_layers(_facts(_bailing_v3_vl(num_hidden_layers=6, layer_group_size=3,
                                             layers_block_type=legacy))) == [2, 5]


@pytest.mark.parametrize("fields,says", [
    ({"layer_types": ["full_attention"] * 6}, "must match the layer_group_size schedule"),
    ({"layers_block_type": ["attention"] * 6}, "must match the layer_group_size schedule"),
    ({"layer_types": ["linear_attention", "linear_attention", "full_attention"] * 2,
      "layers_block_type": ["attention"] * 6}, "conflicting layer_types and layers_block_type"),
    ({"layer_group_size": 0}, "layer_group_size must be positive"),
    ({"mrope_section": [16, 24, 24]}, "conflicting M-RoPE sections"),
    ({"rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [8, 12, 12]}},
     "conflicting M-RoPE sections"),
    ({"no_kda_lora": False}, "no_kda_lora"),
    ({"num_hidden_layers": 10**9}, "at most 10,000 layers"),  # refused before any schedule is built
])
def test_bailing_v3_vl_refuses_what_its_config_class_refuses(fields, says):
    with pytest.raises(UserError, match=says):
        _facts(_bailing_v3_vl(**{"num_hidden_layers": 6, "layer_group_size": 3, **fields}))


def test_bailing_v3_vl_takes_a_top_level_mrope_split_the_text_config_repeats():
    config = _bailing_v3_vl(num_hidden_layers=6, layer_group_size=3, mrope_section=[16, 24, 24])
    config["mrope_section"] = [16, 24, 24]
    assert _mla_layers(_facts(config)) == [2, 5]


def test_bailing_v3_vl_mrope_section_that_is_no_list_is_refused():
    with pytest.raises(UserError, match="mrope_section must be a list"):
        _facts({**_bailing_v3_vl(num_hidden_layers=6), "mrope_section": 5})
