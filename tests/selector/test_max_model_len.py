"""--max-model-len against the model's maximum, as vLLM 0.33.0's
ModelConfig checks it (_get_and_verify_max_len): above the derived maximum
(the smallest length key, model_max_length when set, times a rope factor not
already applied) and above model_max_length, the engine config is refused
unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. The texts and limits are checked
against vLLM's own engine config in test_engine_config_vs_vllm.py."""

import pytest

from attn_select.selector.errors import UserError
from attn_select.selector.explain import EngineConfigRefusal, check_max_model_len
from attn_select.selector.model import model_facts
from tests.cli.helpers import run

LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 1024,
         "num_attention_heads": 16, "num_key_value_heads": 4, "num_hidden_layers": 2, "intermediate_size": 2048,
         "vocab_size": 1024, "max_position_embeddings": 8192, "torch_dtype": "bfloat16"}


def _derived(config: dict, **kw):
    return model_facts(config, name="m", **kw).derived_max_len


def test_the_smallest_length_key_times_a_factor_not_already_applied():
    assert _derived(LLAMA) == ("max_position_embeddings", 8192.0, None)
    assert _derived({**LLAMA, "seq_length": 4096}) == ("seq_length", 4096.0, None)
    assert _derived({**LLAMA, "rope_scaling": {"rope_type": "linear", "factor": 2.0}})[1] == 16384.0
    llama3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
              "original_max_position_embeddings": 8192}
    assert _derived({**LLAMA, "rope_scaling": llama3})[1] == 8192.0  # already scaled
    assert _derived({**LLAMA, "model_max_length": 16384}) == ("model_max_length", 16384.0, 16384)


def test_the_config_class_default_stands_in_for_a_length_config_json_leaves_out():
    """vLLM reads the lengths off the built config object: LlamaConfig's max_position_embeddings
    defaults to 2048, GPT2Config's n_positions to 1024 (max_position_embeddings is its alias)."""
    no_length = {k: v for k, v in LLAMA.items() if k != "max_position_embeddings"}
    assert _derived(no_length) == ("max_position_embeddings", 2048.0, None)
    assert _derived({**no_length, "seq_length": 4096}) == ("max_position_embeddings", 2048.0, None)
    assert _derived({**no_length, "seq_length": 1024}) == ("seq_length", 1024.0, None)
    gpt2 = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": 256, "n_head": 4, "n_layer": 2,
            "vocab_size": 100}
    # both names read n_positions; vLLM names the first of its keys with the smallest length
    assert _derived(gpt2) == ("max_position_embeddings", 1024.0, None)
    assert _derived({**gpt2, "n_positions": 512}) == ("max_position_embeddings", 512.0, None)
    assert _derived({**gpt2, "max_position_embeddings": 4096}) == ("max_position_embeddings", 4096.0, None)
    with pytest.raises(EngineConfigRefusal, match="max_position_embeddings=2048.0"):
        check_max_model_len(model_facts(no_length, name="m"), 4096)


def test_generated_defaults_are_the_classes_by_their_own_names():
    from attn_select.selector.model.hf_max_len_defaults import MAX_LEN_ALIASES, MAX_LEN_DEFAULTS

    assert len(MAX_LEN_DEFAULTS) > 250 and MAX_LEN_DEFAULTS["llama"] == {"max_position_embeddings": 2048}
    # an alias is never stored under its own name, and what it reads is
    for model_type, aliases in MAX_LEN_ALIASES.items():
        own = MAX_LEN_DEFAULTS.get(model_type, {})
        assert not set(aliases) & set(own), model_type
    assert MAX_LEN_DEFAULTS["rwkv"] == {"context_length": 1024}


@pytest.mark.vllm
@pytest.mark.slow
def test_generated_defaults_are_vllms_config_classes():
    from .generated import assert_regenerates
    from .model_oracle_client import vllm_python

    assert_regenerates(vllm_python(), "hf_max_len_defaults")


def test_not_derived_where_the_class_or_the_tokenizer_decides():
    # a model type whose config class is not known here (the checkpoint's own code)
    remote = {**{k: v for k, v in LLAMA.items() if k != "max_position_embeddings"}, "model_type": "orion_x"}
    from attn_select.selector.model.hf_rope import derived_max_len

    assert derived_max_len(remote, "orion_x") is None
    assert _derived({**LLAMA, "sliding_window": 1024}, disable_sliding_window=True) is None
    assert model_facts(LLAMA, name="m", pooling_config=True).derived_max_len is None


def test_a_longer_max_model_len_is_refused_in_vllms_words():
    f = model_facts(LLAMA, name="m")
    for ok in (None, -1, 1, 8192):
        check_max_model_len(f, ok)
    with pytest.raises(EngineConfigRefusal) as e:
        check_max_model_len(f, 8193)
    assert ("User-specified max_model_len (8193) is greater than the derived max_model_len "
            "(max_position_embeddings=8192.0 or model_max_length=None in model's config.json). To allow overriding "
            "this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1") in str(e.value)
    assert isinstance(e.value, UserError)
    # model_max_length above the derived length lets it through up to itself
    g = model_facts({**LLAMA, "model_max_length": 16384}, name="m")
    check_max_model_len(g, 16384)
    with pytest.raises(EngineConfigRefusal):
        check_max_model_len(g, 16385)


def test_explain_refuses_it_with_one_line_and_exit_2(capsys):
    rc, out, err = run(capsys, "explain", "llama-3.1-8b", "--device", "h100", "--max-model-len", "200000")
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and "max_position_embeddings=131072.0" in err and "Traceback" not in err
    rc, out, _ = run(capsys, "explain", "llama-3.1-8b", "--device", "h100", "--max-model-len", "128K")
    assert rc == 0 and "--max-model-len 131072: no effect on the selection" in out
