"""A text-only architecture on a wrapper config.json (a text_config beside a
vision tower: someone serving a VLM's language model alone by renaming the
architecture). Most of vLLM 0.33.0's text model classes read their sizes off
the top-level config (selector/model/vllm_config_reads.py, generated
from vLLM's own classes), which is the wrapper there, and fail; the few that
read the text config (Qwen2ForCausalLM) build. Each case is a unit test and a
differential case run through vLLM's own build (marker ``vllm``)."""

from __future__ import annotations

import copy

import pytest

from attn_select.selector.config import Capability
from attn_select.selector.errors import UserError
from attn_select.selector.model.facts import model_facts
from attn_select.selector.model.vllm_config_reads import READS_TOP_CONFIG

from .generated import assert_regenerates
from .model_oracle_client import facts_agreeing_with_vllm, run_model_oracle, vllm_python
from .test_hostile_round13 import _base

H100 = Capability(9, 0)
LLAVA = "llava-1.5 like (text_config llama)"
GEMMA3 = "gemma3 4b mm like"
QWEN25VL = "qwen2.5-vl 7b-like"  # flat: the wrapper pops its text fields into the text class
NO_VOCAB = "object has no attribute 'vocab_size'"


def _as(base: str, arch: str | None, **top) -> dict:
    config = copy.deepcopy(_base(base))
    if arch is None:
        config.pop("architectures", None)
    else:
        config["architectures"] = [arch]
    config.update(top)
    return config


# (name, config, vLLM's refusal (a piece of its error) or None where it builds)
CASES = [
    (f"{base} as {arch}", _as(base, arch), NO_VOCAB)
    for base in (LLAVA, GEMMA3, QWEN25VL) for arch in ("LlamaForCausalLM", "MistralForCausalLM")
] + [
    ("gemma3 as Gemma3ForCausalLM", _as(GEMMA3, "Gemma3ForCausalLM"), NO_VOCAB),
    # no architectures: transformers' base class Gemma3Model, which vLLM normalizes to gemma3.py's text class
    ("gemma3 without architectures", _as(GEMMA3, None), NO_VOCAB),
    ("gemma3 as Gemma3TextModel", _as(GEMMA3, "Gemma3TextModel"), "use_bidirectional_attention"),
    # qwen2.py reads hf_config.get_text_config()
    ("llava as Qwen2ForCausalLM", _as(LLAVA, "Qwen2ForCausalLM"), None),
    # controls: the wrapper's own architecture, and a text config at the top
    ("llava as itself", _as(LLAVA, "LlavaForConditionalGeneration"), None),
    ("llava without architectures", _as(LLAVA, None), None),
    ("qwen2.5-vl without architectures", _as(QWEN25VL, None), None),
]


@pytest.mark.parametrize("name,config,refusal", CASES, ids=[c[0] for c in CASES])
def test_text_arch_on_a_wrapper(name, config, refusal):
    if refusal is None:
        assert model_facts(config, name="m", capability=H100).groups
        return
    with pytest.raises(UserError, match="reads its sizes off the top-level config") as exc:
        model_facts(config, name="m", capability=H100)
    assert "\n" not in str(exc.value)


def test_the_table_knows_both_kinds():
    assert {"LlamaForCausalLM", "MistralForCausalLM", "Gemma3ForCausalLM", "BertModel"} <= READS_TOP_CONFIG
    assert "Qwen2ForCausalLM" not in READS_TOP_CONFIG


@pytest.fixture(scope="module")
def vllm_answers():
    return run_model_oracle([{"config": c, "capability": [9, 0]} for _, c, _ in CASES], 1800)


@pytest.mark.vllm
@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(CASES)), ids=[c[0] for c in CASES])
def test_against_vllm(vllm_answers, index):
    name, config, refusal = CASES[index]
    facts_agreeing_with_vllm(vllm_answers[index], lambda: model_facts(config, name="m", capability=H100), refusal,
                             name)


@pytest.mark.vllm
@pytest.mark.slow
def test_the_generated_table_is_vllms():
    assert_regenerates(vllm_python(), "vllm_config_reads")
