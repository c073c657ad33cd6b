"""A config.json key that vLLM's config class computes as a read-only
property (FalconConfig's head_dim, MiniCPM3Config's logits_scaling) fails
transformers' from_dict, so vLLM 0.33.0 cannot load the config
(selector/model/hf_read_only_keys.py, generated from vLLM's own classes;
found by the hostile-config campaign, round 13). The differential cases run
vLLM's own build (tests/selector/model_oracle.py; marker ``vllm``)."""

from __future__ import annotations

import copy

import pytest

from attn_select.selector.config import Capability
from attn_select.selector.errors import UserError
from attn_select.selector.model.facts import model_facts

from .generated import assert_regenerates
from .model_oracle_client import facts_agreeing_with_vllm, run_model_oracle, vllm_python
from .test_model_vs_vllm import _cases

H100 = Capability(9, 0)


def _base(name: str) -> dict:
    return copy.deepcopy(next(c for c in _cases() if c["name"] == name)["config"])


FALCON = "falcon-7b like (multi_query, parallel_attn)"
# (name, base, fields added, vLLM's refusal or None)
CASES = [
    ("falcon head_dim", FALCON, {"head_dim": 64}, "property 'head_dim' of 'FalconConfig' object has no setter"),
    ("falcon rotary", FALCON, {"rotary": True}, "property 'rotary' of 'FalconConfig' object has no setter"),
    ("minicpm3 logits_scaling", "minicpm3-4b like", {"logits_scaling": 1.0},
     "property 'logits_scaling' of 'MiniCPM3Config' object has no setter"),
    ("jamba layers_block_type", "jamba-mini like", {"layers_block_type": ["mamba", "attention"]},
     "property 'layers_block_type' of 'JambaConfig' object has no setter"),
    ("falcon-h1 layers_block_type", "falcon-h1 like", {"layers_block_type": ["attention"]},
     "property 'layers_block_type' of 'FalconH1Config' object has no setter"),
    # the class takes these itself: they load
    ("falcon", FALCON, {}, None),
    ("falcon alibi", FALCON, {"alibi": False}, None),
]


def _config(base: str, fields: dict) -> dict:
    return {**_base(base), **fields}


@pytest.mark.parametrize("name,base,fields,refusal", CASES, ids=[c[0] for c in CASES])
def test_a_read_only_key_is_refused(name, base, fields, refusal):
    config = _config(base, fields)
    if refusal is None:
        assert model_facts(config, name="m", capability=H100).groups
        return
    with pytest.raises(UserError, match=f"sets {next(iter(fields))}, which .* computes itself.*leave"):
        model_facts(config, name="m", capability=H100)


def test_a_trusted_remote_class_standing_in_is_not_checked_with_the_known_class(tmp_path):
    (tmp_path / "configuration_falcon2.py").write_text("from transformers import PretrainedConfig\n"
                                                       "class F(PretrainedConfig):\n    model_type = 'falcon'\n")
    config = _config(FALCON, {"head_dim": 64, "auto_map": {"AutoConfig": "configuration_falcon2.F"}})
    facts = model_facts(config, name="m", capability=H100, trust_remote_code=True, code_folder=tmp_path)
    assert any("remote AutoConfig" in n for n in facts.notes)


@pytest.fixture(scope="module")
def vllm_answers():
    return run_model_oracle([{"config": _config(base, fields), "capability": [9, 0]}
                             for _, base, fields, _ in CASES], 1200)


@pytest.mark.vllm
@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(CASES)), ids=[c[0] for c in CASES])
def test_against_vllm(vllm_answers, index):
    name, base, fields, refusal = CASES[index]
    config = _config(base, fields)
    facts_agreeing_with_vllm(vllm_answers[index], lambda: model_facts(config, name="m", capability=H100), refusal,
                             name)


@pytest.mark.vllm
@pytest.mark.slow
def test_the_generated_table_is_vllms():
    assert_regenerates(vllm_python(), "hf_read_only_keys")


@pytest.mark.sglang
@pytest.mark.slow
def test_sglang_refuses_them_too():
    """SGLang's get_config builds the same transformers class (5.19): a read-only key fails its parse too."""
    from .sglang.helpers import sglang_answers

    cases = [c for c in CASES if c[1] in (FALCON, "minicpm3-4b like")]
    answers = sglang_answers([(_config(base, fields), {}) for _, base, fields, _ in cases])
    for (name, base, fields, refusal), res in zip(cases, answers):
        config = _config(base, fields)
        if refusal is None:
            assert res["error"] is None or res["error"]["where"] != "parse", (name, res["error"])
            model_facts(config, name="m", capability=H100, engine="sglang")
            continue
        assert res["error"] and refusal in res["error"]["message"], (name, res["error"])
        with pytest.raises(UserError, match="SGLang 0.5.23 refuses it"):
            model_facts(config, name="m", capability=H100, engine="sglang")
