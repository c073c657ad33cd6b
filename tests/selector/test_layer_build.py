"""vLLM 0.33.0's failures while building a Llama-style model's decoder layers
(selector/model/layer_build.py): the rotary embedding's arithmetic on rope
values that are no numbers (a null or string rope_theta, a null yarn factor,
an integer linear factor), and an intermediate_size the tensor-parallel size
does not divide; and, on loading any config class, the arithmetic transformers'
validate_rope does on yarn and llama3 rope values. Plain tests, and the same configs through vLLM's own build
(tests/selector/model_oracle.py; marker ``vllm``, skipped without a vLLM
0.33.0 python).
"""

from __future__ import annotations

import pytest

from attn_select.selector.config import Capability
from attn_select.selector.errors import UserError
from attn_select.selector.model.facts import model_facts
from tests.cli.helpers import run

from .model_oracle_client import facts_agreeing_with_vllm, run_model_oracle

H100 = Capability(9, 0)
LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 1024,
         "num_attention_heads": 8, "num_key_value_heads": 8, "num_hidden_layers": 2, "intermediate_size": 2048,
         "vocab_size": 1024, "torch_dtype": "bfloat16", "max_position_embeddings": 8192}
QWEN2 = {**LLAMA, "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2"}
QWEN3 = {**LLAMA, "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "head_dim": 128}
MISTRAL = {**LLAMA, "architectures": ["MistralForCausalLM"], "model_type": "mistral"}
def _with(base: dict, **fields) -> dict:
    return {**base, **fields}


_YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}
# other model files that build the same rotary embedding (and, but for the MoE ones, the same MLP split)
OTHERS = {
    "phi3": _with(LLAMA, architectures=["Phi3ForCausalLM"], model_type="phi3"),
    "gemma": _with(LLAMA, architectures=["GemmaForCausalLM"], model_type="gemma", head_dim=128),
    "gemma2": _with(LLAMA, architectures=["Gemma2ForCausalLM"], model_type="gemma2", head_dim=128),
    "granite": _with(LLAMA, architectures=["GraniteForCausalLM"], model_type="granite"),
    "olmo2": _with(LLAMA, architectures=["Olmo2ForCausalLM"], model_type="olmo2"),
    "mixtral": _with(LLAMA, architectures=["MixtralForCausalLM"], model_type="mixtral", num_local_experts=4,
                     num_experts_per_tok=2),
    "qwen2_moe": _with(LLAMA, architectures=["Qwen2MoeForCausalLM"], model_type="qwen2_moe", num_experts=4,
                       num_experts_per_tok=2, moe_intermediate_size=512, shared_expert_intermediate_size=1024),
    "qwen3_moe": _with(LLAMA, architectures=["Qwen3MoeForCausalLM"], model_type="qwen3_moe", num_experts=4,
                       num_experts_per_tok=2, moe_intermediate_size=512, head_dim=128),
}


# (name, config, tensor parallel size, a piece of vLLM's error or None where it builds)
CASES = [
    ("rope_theta string", _with(LLAMA, rope_theta="10000"), 1, "for ** or pow(): 'str' and 'Tensor'"),
    ("rope_theta null (qwen3)", _with(QWEN3, rope_theta=None), 1, "for ** or pow(): 'NoneType' and 'Tensor'"),
    ("rope_theta string (mistral)", _with(MISTRAL, rope_theta="10000"), 1, "'str' and 'Tensor'"),
    ("rope_parameters rope_theta string", _with(LLAMA, rope_parameters={"rope_type": "default", "rope_theta": "1e4"}),
     1, "'str' and 'Tensor'"),
    ("rope_parameters' rope_theta wins over a string one", _with(LLAMA, rope_theta="x", rope_parameters={
        "rope_type": "default", "rope_theta": 10000.0}), 1, None),
    ("rope_theta true", _with(LLAMA, rope_theta=True), 1, None),
    ("yarn factor null", _with(LLAMA, rope_scaling={**_YARN, "factor": None}), 1,
     "'<=' not supported between instances of 'NoneType' and 'int'"),
    ("yarn factor null (qwen3)", _with(QWEN3, rope_scaling={**_YARN, "factor": None}), 1, "'NoneType' and 'int'"),
    ("yarn factor string", _with(LLAMA, rope_scaling={**_YARN, "factor": "4"}), 1, "'str' and 'int'"),
    ("yarn factor int", _with(LLAMA, rope_scaling={**_YARN, "factor": 4}), 1, None),
    ("yarn beta_fast null", _with(LLAMA, rope_scaling={**_YARN, "beta_fast": None}), 1, "TypeError"),
    ("linear factor null", _with(LLAMA, rope_scaling={"rope_type": "linear", "factor": None}), 1,
     "'NoneType' object is not iterable"),
    ("linear factor int", _with(LLAMA, rope_scaling={"rope_type": "linear", "factor": 4}), 1,
     "'int' object is not iterable"),
    # 2.0, not 4.0: vLLM caches rotary embeddings by their parameters, and 4.0 == 4 would hand the
    # later int-factor cases of the same process this one's embedding
    ("linear factor float", _with(LLAMA, rope_scaling={"rope_type": "linear", "factor": 2.0}), 1, None),
    ("dynamic factor null", _with(LLAMA, rope_scaling={"rope_type": "dynamic", "factor": None}), 1,
     "unsupported operand type(s) for *: 'NoneType' and 'int'"),
    ("tp 4, intermediate_size 2050", _with(LLAMA, intermediate_size=2050), 4, "AssertionError"),
    ("tp 4, intermediate_size 2050 (qwen2)", _with(QWEN2, intermediate_size=2050), 4, "AssertionError"),
    ("tp 2, intermediate_size 2049 (mistral)", _with(MISTRAL, intermediate_size=2049), 2, "AssertionError"),
    ("tp 2, intermediate_size 2049 (qwen3)", _with(QWEN3, intermediate_size=2049), 2, "AssertionError"),
    ("tp 4, intermediate_size 2112", _with(LLAMA, intermediate_size=2112), 4, None),
    *[(f"rope_theta string ({n})", _with(c, rope_theta="x"), 1, "'str' and 'Tensor'") for n, c in OTHERS.items()],
    *[(f"linear factor int ({n})", _with(c, rope_scaling={"rope_type": "linear", "factor": 4}), 1,
       "'int' object is not iterable") for n, c in OTHERS.items() if n not in ("olmo2", "phi3")],
    ("linear factor int (olmo2)", _with(OTHERS["olmo2"], rope_scaling={"rope_type": "linear", "factor": 4}), 1,
     None),
    *[(f"tp 2, intermediate_size 2049 ({n})", _with(c, intermediate_size=2049), 2,
       None if n.endswith("moe") else "AssertionError") for n, c in OTHERS.items()],
    # get_rope's range check of the rotated fraction
    ("partial_rotary_factor 1.5", _with(LLAMA, partial_rotary_factor=1.5), 1, "must be between 0.0 and 1.0"),
    ("partial_rotary_factor 0.0", _with(LLAMA, partial_rotary_factor=0.0), 1, "must be between 0.0 and 1.0"),
    ("partial_rotary_factor string", _with(LLAMA, partial_rotary_factor="0.5"), 1, "'<=' not supported"),
    ("partial_rotary_factor in rope_parameters", _with(LLAMA, rope_parameters={
        "rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 1.5}), 1, "between 0.0 and 1.0"),
    ("partial_rotary_factor null", _with(LLAMA, partial_rotary_factor=None), 1, None),
    ("partial_rotary_factor 0.5", _with(LLAMA, partial_rotary_factor=0.5), 1, None),
    *[(f"partial_rotary_factor 1.5 ({n})", _with(c, partial_rotary_factor=1.5), 1,
       None if n == "olmo2" else "between 0.0 and 1.0") for n, c in OTHERS.items()],
]
_LLAMA3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
           "original_max_position_embeddings": 4096}
MIXTRAL = {**LLAMA, "architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "num_local_experts": 4,
           "num_experts_per_tok": 2}
# transformers' validate_rope (every config class with rope parameters, on loading): the arithmetic its
# yarn and llama3 validators do on the values, where a value of the wrong kind otherwise only warns
LOAD_CASES = [
    ("yarn original_max_position_embeddings null", _with(LLAMA, rope_scaling={
        **_YARN, "original_max_position_embeddings": None}), 1, "unsupported operand type(s) for /"),
    ("yarn original_max_position_embeddings null (mixtral)", _with(MIXTRAL, rope_scaling={
        **_YARN, "original_max_position_embeddings": None}), 1, "unsupported operand type(s) for /"),
    ("yarn original_max_position_embeddings 0", _with(LLAMA, rope_scaling={
        **_YARN, "original_max_position_embeddings": 0}), 1, "division by zero"),
    ("yarn beta_slow string", _with(QWEN3, rope_scaling={**_YARN, "beta_slow": "1"}), 1, "'<' not supported"),
    ("llama3 low_freq_factor null", _with(LLAMA, rope_scaling={**_LLAMA3, "low_freq_factor": None}), 1,
     "'<=' not supported between instances of 'float' and 'NoneType'"),
    ("llama3 original_max_position_embeddings string", _with(LLAMA, rope_scaling={
        **_LLAMA3, "original_max_position_embeddings": "4096"}), 1, "'>=' not supported"),
    ("llama3", _with(LLAMA, rope_scaling=_LLAMA3), 1, None),
    ("yarn without original_max_position_embeddings", _with(MIXTRAL, rope_scaling={"rope_type": "yarn",
                                                                                    "factor": 4.0}), 1, None),
]


def _facts(config: dict, tp: int = 1):
    return model_facts(config, name="m", capability=H100, tp=tp)


@pytest.mark.parametrize("name,config,tp,refusal", CASES, ids=[c[0] for c in CASES])
def test_refused_where_vllm_fails_building_the_layers(name, config, tp, refusal):
    if refusal is None:
        assert _facts(config, tp).groups
        return
    with pytest.raises(UserError, match="cannot build the model's attention layers|does not divide intermediate"):
        _facts(config, tp)


@pytest.mark.parametrize("name,config,tp,refusal", LOAD_CASES, ids=[c[0] for c in LOAD_CASES])
def test_refused_where_transformers_fails_validating_the_rope(name, config, tp, refusal):
    if refusal is None:
        assert _facts(config, tp).groups
        return
    with pytest.raises(UserError, match=r"transformers' validate_rope\), so vLLM 0.33.0 cannot load the config"):
        _facts(config, tp)


def test_the_refusal_is_one_line_naming_the_value_and_what_to_do(tmp_path, capsys):
    import json

    path = tmp_path / "config.json"
    path.write_text(json.dumps(_with(LLAMA, rope_scaling={"rope_type": "linear", "factor": 4})))
    rc, out, err = run(capsys, "explain", path, "--device", "h100")
    assert rc == 2 and not out and len(err.strip().splitlines()) == 1
    assert "the linear rope factor is 4" in err and "4.0, not 4" in err and "Traceback" not in err
    path.write_text(json.dumps(_with(LLAMA, intermediate_size=2050)))
    rc, _, err = run(capsys, "explain", path, "--device", "h100", "-tp", "4")
    assert rc == 2 and "tensor parallel size 4 does not divide intermediate_size 2050" in err


@pytest.fixture(scope="module")
def oracle():
    cases = [{"config": c, "tensor_parallel_size": tp} for _, c, tp, _ in CASES + LOAD_CASES]
    return run_model_oracle(cases, timeout=1200)


@pytest.mark.vllm
def test_against_vllm(oracle):
    for (name, config, tp, refusal), res in zip(CASES + LOAD_CASES, oracle):
        facts_agreeing_with_vllm(res, lambda: _facts(config, tp), refusal)
