"""Round 14 of the hostile-config campaign against vLLM 0.33.0: the answers
round 13 found different from vLLM's own build (not refusals), each case a
unit test here and a differential case run through vLLM's own code
(tests/selector/model_oracle.py; marker ``vllm``, skipped without a vLLM
0.33.0 python).

- DeepseekV3Config / YoutuConfig / Mistral4Config declare no head_dim: a
  config.json head_dim wins over the one __post_init__ derives.
- Glm4MoeLiteConfig: head_dim is an alias of qk_rope_head_dim, and its class
  defaults are MLA (kv_lora_rank 512).
- Cohere2ForCausalLM on a CohereConfig (model_type cohere): hidden // heads,
  no per-layer window ("v1" to commandr.py), the model-level one on all.
- A flat Qwen2.5-VL config.json: head_dim is not a text-class field, so it
  stays on the outer config and the model-level head size is hidden // heads.
- WhisperConfig's num_hidden_layers (an alias of encoder_layers) written as
  3.0 or "2": set as written, and whisper.py fails.
- BartConfig under a Whisper model: its attribute_map gives the sizes.
- Phi-3 / Phi-4-mini (llama.py) with a head_dim other than hidden // heads:
  the longrope factor lists no longer fit the rotated dimensions.
- Llava's text_config with a model type transformers has no class for.
- gpt-oss: a rope_scaling without one of the yarn keys gpt_oss.py reads.
- A model type whose config class holds one rope dict per layer type
  (Gemma-3 text, OLMo-3) under a model file that hands get_rope one dict.
- A negative MLA size (kv_lora_rank, qk_rope_head_dim, hidden_size): the
  attention's projection tensors cannot take it.
"""

from __future__ import annotations

import pytest

from attn_select.selector.config import Capability
from attn_select.selector.errors import UserError
from attn_select.selector.model.facts import model_facts

from .model_oracle_client import facts_agreeing_with_vllm, run_model_oracle
from .test_hostile_round13 import DROP, _base, _text

H100 = Capability(9, 0)
LLAMA = "profile llama-3.1-8b"
GLM = "glm-4.7-flash like (glm4_moe_lite MLA)"
PHI3 = "phi-3-medium-128k like (longrope, window)"
LLAVA = "llava-1.5 like (text_config llama)"
GPT_OSS = "gpt-oss-20b"
GEMMA3_TEXT = "google/gemma-3-270m cut to 8 layers"
UNHASHABLE = "unhashable type: 'dict'"

# (name, base, fields set on its text config, vLLM's refusal (a piece of its error) or None,
#  and where it builds: (model-level head size, model-level KV heads, the layers' head sizes))
CASES = [
    ("llama arch, model_type deepseek_v3, head_dim 96", LLAMA, {"model_type": "deepseek_v3", "head_dim": 96},
     None, (576, 1, {96})),
    ("llama arch, model_type deepseek_v3, no head_dim", LLAMA, {"model_type": "deepseek_v3", DROP: ("head_dim",)},
     None, (576, 1, {64})),
    ("llama arch, model_type youtu, head_dim 96", LLAMA, {"model_type": "youtu", "head_dim": 96},
     None, (96, 8, {96})),
    ("llama arch, model_type deepseek_v2, head_dim 96 (its own field, reset)", LLAMA,
     {"model_type": "deepseek_v2", "head_dim": 96}, None, (576, 1, {64})),
    ("llama arch, model_type glm4_moe_lite", LLAMA, {"model_type": "glm4_moe_lite", DROP: ("head_dim",)},
     None, (576, 1, {64})),
    ("glm-4.7-flash qk_rope_head_dim 32 + head_dim 64", GLM, {"qk_rope_head_dim": 32, "head_dim": 64},
     None, (576, 1, {576})),
    ("glm-4.7-flash without its MLA sizes (the class's)", GLM,
     {DROP: ("kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim", "q_lora_rank")},
     None, (576, 1, {576})),
    ("cohere2 arch, model_type cohere", "cohere2 command-r7b-like", {"model_type": "cohere", DROP: ("layer_types",)},
     None, None),
    ("cohere2 arch, model_type cohere, head_dim 64", "cohere2 command-r7b-like",
     {"model_type": "cohere", "head_dim": 64, DROP: ("layer_types",)}, None, None),
    ("qwen2.5-vl flat, head_dim 32", "qwen2.5-vl 7b-like", {"head_dim": 32}, None, None),
    ("whisper num_hidden_layers 3.0", "profile whisper-small", {"num_hidden_layers": 3.0},
     "cannot be interpreted as an integer", None),
    ("whisper num_hidden_layers '2'", "profile whisper-small", {"num_hidden_layers": "2"},
     "unsupported operand type", None),
    ("whisper num_hidden_layers 2 (an integer)", "profile whisper-small", {"num_hidden_layers": 2}, None, None),
    ("whisper model_type bart", "profile whisper-small", {"model_type": "bart"}, None, (64, 12, {64})),
    # Phi-3 (llama.py): the longrope factors sized from hidden // heads, the rotary embedding from head_dim
    ("phi-3-medium head_dim 32", PHI3, {"head_dim": 32}, "Attempting to broadcast", None),
    ("phi-3-medium head_dim 128 (as hidden // heads)", PHI3, {"head_dim": 128}, None, (128, 10, {128})),
    ("phi-4-mini head_dim 96", "phi-4-mini like", {"head_dim": 96}, "Attempting to broadcast", None),
    # MLA sizes the attention's projection tensors cannot take
    ("deepseek-v2-lite kv_lora_rank -1", "deepseek-v2-lite like", {"kv_lora_rank": -1}, "negative dimension", None),
    ("deepseek-v2-lite qk_rope_head_dim -64", "deepseek-v2-lite like", {"qk_rope_head_dim": -64},
     "step sign", None),
    ("kimi-k2 hidden_size -8", "kimi-k2 like", {"hidden_size": -8}, "negative dimension", None),
    # LlavaConfig builds text_config through AutoConfig: CONFIG_MAPPING[its model_type]
    ("llava text_config model_type bogus", LLAVA, {"model_type": "bogus_type"},
     "Unrecognized model type for subconfig", None),
    ("llava text_config model_type mistral", LLAVA, {"model_type": "mistral"}, None, None),
    # gpt_oss.py reads factor, original length and both betas off rope_parameters whatever the type
    ("gpt-oss yarn without betas", GPT_OSS, {"rope_scaling": {"rope_type": "yarn", "factor": 32.0}}, "beta_fast",
     None),
    ("gpt-oss linear rope", GPT_OSS, {"rope_scaling": {"rope_type": "linear", "factor": 2.0}},
     "original_max_position_embeddings", None),
    ("gpt-oss no rope_scaling (the class's yarn)", GPT_OSS, {DROP: ("rope_scaling",)}, None, (64, 8, {64})),
    ("gpt-oss rope_scaling null (the class's yarn)", GPT_OSS, {"rope_scaling": None}, None, (64, 8, {64})),
    ("gpt-oss yarn with betas, no original length (filled)", GPT_OSS,
     {"rope_scaling": {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0}}, None, None),
    # a config class whose rope is one dict per layer type, under a model file that hands get_rope one dict
    *[(f"gemma3_text as {arch}", GEMMA3_TEXT, {"architectures": [arch]}, UNHASHABLE, None)
      for arch in ("LlamaForCausalLM", "Gemma2ForCausalLM", "Qwen3ForCausalLM", "Exaone4ForCausalLM")],
    ("olmo3 as Exaone4ForCausalLM", "olmo3 like", {"architectures": ["Exaone4ForCausalLM"]}, UNHASHABLE, None),
    ("gemma3_text as Gemma3ForCausalLM", GEMMA3_TEXT, {"architectures": ["Gemma3ForCausalLM"]}, None, None),
    # the Transformers backend's OLMo-2 builds its rope the transformers way
    ("olmo3 as Olmo2ForCausalLM", "olmo3 like", {"architectures": ["Olmo2ForCausalLM"]}, None, None),
]


def _config(base: str, fields: dict) -> dict:
    return _text(_base(base), **fields)


@pytest.mark.parametrize("name,base,fields,refusal,built", CASES, ids=[c[0] for c in CASES])
def test_the_class_vllm_builds_on(name, base, fields, refusal, built):
    config = _config(base, fields)
    if refusal is not None:
        words = {"Attempting to broadcast": "fail to broadcast", "negative dimension": "negative dimension",
                 "step sign": "negative dimension", "Unrecognized model type for subconfig": "names no transformers "
                 "config class", "beta_fast": "KeyError: 'beta_fast'", "original_max_position_embeddings":
                 "KeyError: 'original_max_position_embeddings'", UNHASHABLE: "one dict per layer type"}.get(
                     refusal, "alias, not type-checked")
        with pytest.raises(UserError, match=words):
            model_facts(config, name="m", capability=H100)
        return
    f = model_facts(config, name="m", capability=H100)
    if built is not None:
        head, kv, layer_heads = built
        assert (f.head_size, f.num_kv_heads, {g.attn.head_size for g in f.groups}) == (head, kv, layer_heads)


def test_cohere_v1_layers_take_the_model_window():
    """commandr.py on a CohereConfig: hidden // heads, the model-level window
    on every layer (no + 1, no layer_types)."""
    config = _config("cohere2 command-r7b-like", {"model_type": "cohere", DROP: ("layer_types", "head_dim")})
    f = model_facts(config, name="m", capability=H100)
    text = config.get("text_config") or config
    assert {g.attn.head_size for g in f.groups} == {text["hidden_size"] // text["num_attention_heads"]}
    assert {g.attn.sliding_window for g in f.groups} == {text["sliding_window"]}


def test_flat_qwen25_vl_head_dim_stays_outside_the_text_config():
    f = model_facts(_config("qwen2.5-vl 7b-like", {"head_dim": 32}), name="m", capability=H100)
    base = _base("qwen2.5-vl 7b-like")
    assert f.head_size == base["hidden_size"] // base["num_attention_heads"] != 32


@pytest.fixture(scope="module")
def vllm_answers():
    cases = [{"config": _config(base, fields), "capability": [9, 0]} for _, base, fields, _, _ in CASES]
    return run_model_oracle(cases, 1800)


@pytest.mark.vllm
@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(CASES)), ids=[c[0] for c in CASES])
def test_against_vllm(vllm_answers, index):
    name, base, fields, refusal, _ = CASES[index]
    config = _config(base, fields)
    res = vllm_answers[index]
    f = facts_agreeing_with_vllm(res, lambda: model_facts(config, name="m", capability=H100), refusal, name)
    if f is not None:  # the model-level facts and the layers' selection inputs
        model = res["model"]
        assert (f.head_size, f.num_kv_heads, f.model_use_mla) == (
            model["head_size"], model["num_kv_heads"], model["use_mla"]), name
        theirs = {(c["head_size"], c["use_mla"], c["attn_type"], c["has_sliding_window"]) for c in res["calls"]}
        assert {(g.attn.head_size, g.attn.use_mla, g.attn.attn_type, g.attn.sliding_window is not None)
                for g in f.groups} == theirs, name
