"""A multimodal config's vision / audio / encoder sub-configs, built as
transformers 5.20 builds them when vLLM 0.33.0 loads the config
(selector/model/hf_subconfigs.py): a fixed class or AutoConfig by the
mapping's model_type, the class's strict declared fields, a string dtype
read with getattr(torch, ...), and validate_architecture. Found by the
hostile-config campaign (11 configs vLLM refused, the mirror answered);
the last test runs the same configs through vLLM itself (model_oracle.py),
skipped without it."""

from __future__ import annotations

import pytest

from attn_select.selector.errors import UserError
from attn_select.selector.model.facts import model_facts

from . import model_cases_pooling, model_cases_vlm
from .model_oracle_client import facts_agreeing_with_vllm, run_model_oracle

_BY_NAME = {c["name"]: c["config"] for c in model_cases_vlm.cases() + model_cases_pooling.cases()}
QWEN2_VL = _BY_NAME["qwen2_vl flat"]  # vision_config: Qwen2VLVisionConfig (fixed)
QWEN2_5_VL = _BY_NAME["qwen2_5_vl flat"]
ONEVISION = _BY_NAME["llava-onevision-qwen2-7b-ov-hf cut to 4 layers"]  # AutoConfig, siglip_vision_model
QWEN2_AUDIO = _BY_NAME["qwen2-audio-7b-instruct cut to 4 layers"]  # AutoConfig, qwen2_audio_encoder
BLIP2 = _BY_NAME["blip2-opt-2.7b cut to 4 layers"]
COSMOS3 = _BY_NAME["cosmos3 (qwen3-vl text) cut to 4 layers"]  # its __post_init__ forces qwen3_vl_vision
CLIP = _BY_NAME["openai/clip-vit-base-patch32 (2 layers)"]
GRANITE_SPEECH = _BY_NAME["granite_speech GraniteSpeechForConditionalGeneration (class defaults, 2 text layers)"]


def _sub(config: dict, key: str, drop: tuple = (), **fields) -> dict:
    return {**config, key: {**{k: v for k, v in config[key].items() if k not in drop}, **fields}}


def _facts(config: dict):
    return model_facts(config, name="m")


# (name, config, vLLM's words in its refusal, or None where vLLM builds it)
CASES = [
    ("qwen2_vl vision embed_dim 32.0", _sub(QWEN2_VL, "vision_config", embed_dim=32.0), "embed_dim"),
    ("qwen2_vl vision num_heads true", _sub(QWEN2_VL, "vision_config", num_heads=True), "num_heads"),
    ("qwen2_vl vision model_type 'x' (a fixed class reads none)", _sub(QWEN2_VL, "vision_config", model_type="x"),
     None),
    ("qwen2_5_vl vision out_hidden_size 'x'", _sub(QWEN2_5_VL, "vision_config", out_hidden_size="x"),
     "out_hidden_size"),
    ("qwen2_5_vl vision head_dim 'x' beside embed_dim 64", _sub(QWEN2_5_VL, "vision_config", head_dim="x",
                                                                  embed_dim=64), "validate_architecture"),
    ("qwen2_5_vl vision head_dim 4 x 16 heads = embed_dim 64",
     _sub(QWEN2_5_VL, "vision_config", head_dim=4, embed_dim=64, num_heads=16), None),
    ("llava_onevision vision model_type 'x'", _sub(ONEVISION, "vision_config", model_type="x"),
     "Unrecognized model type for subconfig: x"),
    ("llava_onevision vision model_type {}", _sub(ONEVISION, "vision_config", model_type={}),
     "Cannot resolve `vision_config`"),
    ("llava_onevision vision hidden_size 32.0", _sub(ONEVISION, "vision_config", hidden_size=32.0), "hidden_size"),
    ("llava_onevision vision patch_size [14, 'x']", _sub(ONEVISION, "vision_config", patch_size=[14, "x"]),
     "patch_size"),
    ("llava_onevision vision model_type clip_vision_model, hidden 64 / 5 heads",
     _sub(ONEVISION, "vision_config", model_type="clip_vision_model", hidden_size=64, num_attention_heads=5),
     "validate_architecture"),
    ("qwen2_audio audio encoder_attention_heads 'x'", _sub(QWEN2_AUDIO, "audio_config", encoder_attention_heads="x"),
     "encoder_attention_heads"),
    ("qwen2_audio audio_config 'x'", {**QWEN2_AUDIO, "audio_config": "x"}, "Validation error for field 'audio_config'"),
    ("qwen2_audio audio_config null (class defaults)", {**QWEN2_AUDIO, "audio_config": None}, None),
    ("blip-2 vision torch_dtype '32'", _sub(BLIP2, "vision_config", torch_dtype="32"), "has no attribute '32'"),
    ("cosmos3 vision model_type 0 (forced to qwen3_vl_vision)", _sub(COSMOS3, "vision_config", model_type=0), None),
    ("clip vision hidden_size 100 / 12 heads", _sub(CLIP, "vision_config", hidden_size=100), "validate_architecture"),
    ("granite_speech text num_attention_heads 32.0", _sub(GRANITE_SPEECH, "text_config", num_attention_heads=32.0),
     "num_attention_heads"),
]


@pytest.mark.parametrize("config,words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_sub_configs_are_built_as_transformers_builds_them(config, words):
    if words is None:
        assert _facts(config).groups
        return
    with pytest.raises(UserError) as info:
        _facts(config)
    assert "\n" not in str(info.value)


def test_the_refusals_name_the_sub_config_and_carry_transformers_words():
    with pytest.raises(UserError, match=r"vision_config: embed_dim is the number 32\.0; .* needs an integer"):
        _facts(CASES[0][1])
    with pytest.raises(UserError, match="Unrecognized model type for subconfig: 'x'"):
        _facts(CASES[6][1])
    with pytest.raises(UserError, match=r"The embed_dim \(64\) is not a multiple of the number of attention heads"):
        _facts(CASES[4][1])


@pytest.fixture(scope="module")
def vllm_answers() -> list[dict]:
    return run_model_oracle([{"config": c, "capability": [9, 0]} for _, c, _ in CASES], 900)


@pytest.mark.vllm
@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(CASES)), ids=[c[0] for c in CASES])
def test_against_vllm(vllm_answers, index):
    _, config, words = CASES[index]
    facts_agreeing_with_vllm(vllm_answers[index], lambda: _facts(config), words)
