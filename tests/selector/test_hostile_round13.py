"""Round 13 of the hostile-config campaign against vLLM 0.33.0 (mutated
config.json files of 29 real bases, compared with vLLM's own model build):
the rope scaling type and rope_theta that vLLM's get_rope cannot build with.
Each case is a unit test and a differential case run through vLLM's own code
(tests/selector/model_oracle.py; marker ``vllm``, skipped without a vLLM
0.33.0 python)."""

from __future__ import annotations

import copy

import pytest

from attn_select.selector.config import Capability
from attn_select.selector.errors import UserError
from attn_select.selector.model.facts import model_facts

from .model_oracle_client import facts_agreeing_with_vllm, run_model_oracle
from .test_model_vs_vllm import _cases

H100 = Capability(9, 0)
UNKNOWN = "Unknown RoPE scaling type"
NOT_A_NUMBER = "rope_theta is"


def _base(name: str, layers: int = 4) -> dict:
    """A test_model_vs_vllm case's config, cut to a few layers (so vLLM builds it quickly)."""
    config = copy.deepcopy(next(c for c in _cases() if c["name"] == name)["config"])
    text = config["text_config"] if isinstance(config.get("text_config"), dict) else config
    old = text.get("num_hidden_layers")
    if isinstance(old, int) and old > layers:
        text["num_hidden_layers"] = layers
        if isinstance(text.get("layer_types"), list) and len(text["layer_types"]) == old:
            text["layer_types"] = text["layer_types"][:layers]
        if isinstance(text.get("first_k_dense_replace"), int) and text["first_k_dense_replace"] >= layers:
            text["first_k_dense_replace"] = 1
    return config


DROP = "-drop"  # a fields entry: the keys taken out


def _text(config: dict, **fields) -> dict:
    """``config`` with these fields set where its text model reads them (and the DROP keys taken out)."""
    config = copy.deepcopy(config)
    text = config["text_config"] if isinstance(config.get("text_config"), dict) else config
    for key in fields.pop(DROP, ()):
        text.pop(key, None)
    text.update(fields)
    return config


WEIRD = {"rope_type": "weird", "factor": 2.0}
# (name, base, fields set on its text config, vLLM's refusal: a piece of its error, or None when it builds)
CASES = [
    (f"{base} rope_scaling weird", base, {"rope_scaling": WEIRD}, UNKNOWN) for base in (
        "profile llama-3.1-8b", "profile mistral-7b", "profile qwen3-8b", "profile qwen3-30b-a3b",
        "profile gemma-2-9b", "qwen2.5-0.5b like", "mixtral 8x7b-like", "gemma-2b like (MQA)",
        "llava-1.5 like (text_config llama)", "cohere2 command-r7b-like", "exaone4 like", "minicpm3-4b like")
] + [
    ("llama rope_parameters weird", "profile llama-3.1-8b",
     {"rope_scaling": None, "rope_parameters": {"rope_type": "weird", "rope_theta": 500000.0}}, UNKNOWN),
    # olmo3's model file looks the type up itself: a KeyError, a refusal all the same
    ("olmo3 rope_scaling weird", "olmo3 like", {"rope_scaling": WEIRD}, "weird"),
    ("llama legacy type su, read as longrope", "profile llama-3.1-8b",
     {"rope_scaling": {"type": "su", "short_factor": [1.0] * 64, "long_factor": [1.0] * 64,
                       "original_max_position_embeddings": 4096}}, None),
    ("llama rope type ntk", "profile llama-3.1-8b", {"rope_scaling": {"rope_type": "ntk", "factor": 2.0}}, None),
    # Gemma-3's text model takes its rope per layer type (rope_parameters), not the outer rope_scaling
    ("gemma3 outer rope_scaling weird", "gemma3 4b mm like", {}, None),
] + [
    (f"{base} rope_theta '10000'", base, {"rope_theta": "10000"}, "unsupported operand type(s) for ** or pow()")
    for base in ("cohere2 command-r7b-like", "exaone4 like", "minicpm3-4b like", "olmo3 like")
] + [
    ("olmo3 rope_theta null", "olmo3 like", {"rope_theta": None}, "'NoneType' and 'Tensor'"),
    # llama.py reads config.sliding_window for a sliding layer; LlamaConfig has none of its own
    ("llama sliding layer_types, no sliding_window", "profile llama-3.1-8b",
     {"layer_types": ["sliding_attention", "full_attention"] * 2}, "has no attribute 'sliding_window'"),
    ("llama sliding layer_types with a sliding_window", "profile llama-3.1-8b",
     {"layer_types": ["sliding_attention", "full_attention"] * 2, "sliding_window": 1024}, None),
    ("mistral sliding layer_types, the class's window", "profile mistral-7b",
     {"layer_types": ["sliding_attention", "full_attention"] * 2}, None),
    # DeepSeek's attention: any rope type but default is deepseek_yarn, reading original_max_position_embeddings
    ("deepseek-v2-lite rope dynamic", "deepseek-v2-lite like",
     {"rope_scaling": {"rope_type": "dynamic", "factor": 2.0}}, "original_max_position_embeddings"),
    ("kimi-k2 rope weird", "kimi-k2 like", {"rope_scaling": WEIRD}, "original_max_position_embeddings"),
    ("glm-4.7-flash rope linear", "glm-4.7-flash like (glm4_moe_lite MLA)",
     {"rope_scaling": {"rope_type": "linear", "factor": 2.0}}, "original_max_position_embeddings"),
    ("deepseek-v2-lite rope dynamic with its original length", "deepseek-v2-lite like",
     {"rope_scaling": {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 4096}}, None),
    ("kimi-k2 rope weird with its original length", "kimi-k2 like",
     {"rope_scaling": {**WEIRD, "original_max_position_embeddings": 4096}}, None),
    ("deepseek-v2-lite rope yarn, transformers fills the original length", "deepseek-v2-lite like",
     {"rope_scaling": {"rope_type": "yarn", "factor": 2.0}}, None),
] + [
    # Olmo3Config / Exaone4Config: a 4096 window by default, layer_types every fourth layer full by default
    (f"{base} {what}", base, fields, None) for base in ("olmo3 like", "exaone4 like") for what, fields in (
        ("without sliding_window", {DROP: ("sliding_window",)}),
        ("without layer_types", {DROP: ("layer_types",)}),
        ("without either", {DROP: ("sliding_window", "layer_types")}))
] + [
    ("exaone4 null window, no layer_types", "exaone4 like", {"sliding_window": None, DROP: ("layer_types",)},
     "modulo by zero"),
    ("exaone4 pattern LLLG, no layer_types", "exaone4 like", {"sliding_window_pattern": "LLLG", DROP: ("layer_types",)},
     "%"),
    ("exaone4 pattern 2, no layer_types", "exaone4 like", {"sliding_window_pattern": 2, DROP: ("layer_types",)}, None),
]


def _config(base: str, fields: dict, name: str) -> dict:
    config = _base(base)
    if name.startswith("gemma3 outer"):
        return {**config, "rope_scaling": WEIRD}
    return _text(config, **fields)


@pytest.mark.parametrize("name,base,fields,refusal", CASES, ids=[c[0] for c in CASES])
def test_rope_that_get_rope_cannot_build_is_refused(name, base, fields, refusal):
    config = _config(base, fields, name)
    if refusal is None:
        assert model_facts(config, name="m", capability=H100).groups
        return
    with pytest.raises(UserError) as exc:
        model_facts(config, name="m", capability=H100)
    words = {UNKNOWN: UNKNOWN, "weird": UNKNOWN}.get(refusal, NOT_A_NUMBER if "Tensor" in refusal else refusal)
    if refusal == "original_max_position_embeddings":
        words = "KeyError: 'original_max_position_embeddings'"
    if refusal in ("modulo by zero", "%"):
        words = "sliding_window_pattern"
    assert words in str(exc.value)


def test_the_refusal_names_the_types_vllm_knows():
    with pytest.raises(UserError, match="use one of bailing_mrope, .*yarn, or leave rope_scaling out"):
        model_facts(_text(_base("profile llama-3.1-8b"), rope_scaling=WEIRD), name="m", capability=H100)


@pytest.fixture(scope="module")
def vllm_answers():
    cases = [{"config": _config(base, fields, name), "capability": [9, 0]} for name, base, fields, _ in CASES]
    return run_model_oracle(cases, 1800)


@pytest.mark.vllm
@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(CASES)), ids=[c[0] for c in CASES])
def test_against_vllm(vllm_answers, index):
    name, base, fields, refusal = CASES[index]
    config = _config(base, fields, name)
    res = vllm_answers[index]
    f = facts_agreeing_with_vllm(res, lambda: model_facts(config, name="m", capability=H100), refusal, name)
    if f is not None:  # and the layers' selection inputs, sliding windows among them
        theirs = {(c["head_size"], c["use_mla"], c["attn_type"], c["has_sliding_window"]) for c in res["calls"]}
        assert {(g.attn.head_size, g.attn.use_mla, g.attn.attn_type, g.attn.sliding_window is not None)
                for g in f.groups} == theirs, name
