"""Wrappers whose language model is another registered model's, as vLLM
0.33.0 builds them: MiMo-V2-Omni (mimo_v2_omni.py: MiMoV2FlashForCausalLM
over its own flat config) and DiffusionGemma (diffusion_gemma.py: Gemma-4's
layers over DiffusionGemmaTextConfig); and the sub-config fields such model
files read with no class default, which vLLM fails on. The numbers are
those of vLLM's own builds (test_model_vs_vllm's "mimo-v2-omni",
"diffusion-gemma", "voxtral hf-format" cases)."""

from __future__ import annotations

import pytest

from attn_select.selector.config import Capability
from attn_select.selector.errors import UserError
from attn_select.selector.model.facts import model_facts

from .model_cases_text import _MIMO_VISION, _mimo_v2_flash
from .test_model_vs_vllm import _diffusion_gemma, _gemma4_text, _voxtral_hf

_SAME_V = {"v_head_dim": 192, "swa_v_head_dim": 192}


def _facts(config: dict, capability=Capability(10, 0)):
    return model_facts(config, name="m", capability=capability)


def _layers(facts) -> dict[str, tuple]:
    return {g.name: tuple(g.layers) for g in facts.groups}


def _attn(facts, group: str):
    return next(g for g in facts.groups if g.name == group).attn


def test_mimo_v2_omni_builds_the_flash_text_models_layers():
    facts = _facts(_mimo_v2_flash(architectures=["MiMoV2OmniForCausalLM"], vision_config=_MIMO_VISION, **_SAME_V))
    assert _layers(facts) == {"full": (0, 5), "sliding": (1, 2, 3, 4)}
    assert _attn(facts, "sliding").sliding_window == 128 and _attn(facts, "sliding").has_sink


@pytest.mark.parametrize("vision,says", [
    (None, "reads config.vision_config,"),
    ({k: v for k, v in _MIMO_VISION.items() if k != "use_sink"},
     "'Mimo_VLVisionConfig' object has no attribute 'use_sink'"),
])
def test_mimo_v2_omni_without_what_its_vision_tower_reads_is_refused(vision, says):
    config = _mimo_v2_flash(architectures=["MiMoV2OmniForCausalLM"], **_SAME_V)
    if vision is not None:
        config["vision_config"] = vision
    with pytest.raises(UserError, match=says):
        _facts(config)


def test_diffusion_gemma_class_defaults():
    facts = _facts({"architectures": ["DiffusionGemmaForBlockDiffusion"], "model_type": "diffusion_gemma"})
    assert _layers(facts)["full"] == (5, 11, 17, 23, 29) and len(_layers(facts)["sliding"]) == 25
    full, sliding = _attn(facts, "full"), _attn(facts, "sliding")
    assert (full.head_size, full.num_kv_heads, sliding.head_size, sliding.sliding_window) == (512, 4, 256, 512)
    assert facts.is_diffusion and facts.runner == "generate"


def test_diffusion_gemma_all_bidirectional_halves_the_window_and_takes_the_global_kv_heads():
    facts = _facts(_diffusion_gemma(without=("layer_types",), num_hidden_layers=6, num_attention_heads=16,
                                    num_key_value_heads=8, num_global_key_value_heads=2,
                                    use_bidirectional_attention="all"))
    assert _layers(facts) == {"sliding": (0, 1, 2, 3, 4), "full": (5,)}
    assert _attn(facts, "sliding").sliding_window == 513
    assert (_attn(facts, "full").head_size, _attn(facts, "full").num_kv_heads) == (512, 2)


def test_diffusion_gemma_takes_the_global_kv_heads_even_with_attention_k_eq_v_false():
    facts = _facts(_diffusion_gemma(without=("layer_types",), attention_k_eq_v=False, num_global_key_value_heads=2))
    assert _attn(facts, "full").num_kv_heads == 2
    # Gemma-4's own class gates them on attention_k_eq_v
    gemma4 = _facts({**_gemma4_text(attention_k_eq_v=False, num_global_key_value_heads=2),
                     "architectures": ["Gemma4ForCausalLM"]})
    assert _attn(gemma4, "full").num_kv_heads == 4


def test_voxtral_with_a_hugging_face_audio_config_is_refused():
    config = _voxtral_hf()
    with pytest.raises(UserError, match="'VoxtralEncoderConfig' object has no attribute 'downsample_factor'"):
        _facts(config, Capability(9, 0))
    # then its audio tower's mel filters: what Mistral-format params.json gives besides
    config["audio_config"]["downsample_factor"] = 4
    with pytest.raises(UserError, match="no attribute 'window_size'"):
        _facts(config, Capability(9, 0))
    config["audio_config"]["window_size"] = 400
    with pytest.raises(UserError, match="no attribute 'sampling_rate'"):
        _facts(config, Capability(9, 0))
    config["audio_config"]["sampling_rate"] = 16000
    assert _layers(_facts(config, Capability(9, 0))) == {"full": (0, 1)}


def test_an_audio_config_that_is_no_mapping_is_refused():
    # VoxtralConfig's strict audio_config field refuses it (vLLM: "Validation error for field 'audio_config'")
    config = {"architectures": ["VoxtralForConditionalGeneration"], "model_type": "voxtral", "audio_config": [1]}
    with pytest.raises(UserError, match="field 'audio_config': Input should be a valid dictionary"):
        _facts(config, Capability(9, 0))
