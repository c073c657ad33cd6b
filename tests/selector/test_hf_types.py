"""transformers' config classes check the fields they declare strictly
(huggingface_hub strict dataclasses, how vLLM 0.33.0 loads every config):
attn-select refuses what they refuse, with a one-line error naming the
field, what it holds and what it must be, and accepts what they accept.

Each case was checked by loading the same config.json through vLLM 0.33.0's
HFConfigParser (transformers 5.20.2); the reason is in the case's id."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attn_select.selector.errors import LINE_CHARS, UserError
from attn_select.selector.model.facts import model_facts
from attn_select.selector.model.hf_types import declared
from attn_select.selector.profiles import MODELS_DIR, _load_yaml

_FIXTURES = Path(__file__).parent.parent / "fixtures" / "configs"


def _fixture(name: str) -> dict:
    return json.loads((_FIXTURES / name / "config.json").read_text())


def _profile(name: str) -> dict:
    return _load_yaml(MODELS_DIR / f"{name}.yaml")["config"]


LLAMA = _fixture("llama-3.1-8b")
GEMMA3 = _fixture("gemma-3-27b-it")
DSV3 = _fixture("deepseek-v3")
WHISPER = _fixture("whisper-small")
QWEN3 = _profile("qwen3-8b")
GEMMA2 = _profile("gemma-2-9b")
MISTRAL = _profile("mistral-7b")
DSV32 = _profile("deepseek-v3.2")
QWEN2 = {**{k: v for k, v in QWEN3.items() if k != "head_dim"}, "architectures": ["Qwen2ForCausalLM"],
         "model_type": "qwen2"}
FALCON = {"architectures": ["FalconForCausalLM"], "model_type": "falcon", "hidden_size": 4544,
          "num_attention_heads": 71, "num_hidden_layers": 2, "vocab_size": 1000, "torch_dtype": "bfloat16"}
GEMMA4_TEXT = {"architectures": ["Gemma4ForCausalLM"], "model_type": "gemma4_text", "torch_dtype": "bfloat16"}


def _with(base: dict, **fields) -> dict:
    return {**base, **fields}


def _text(base: dict, **fields) -> dict:
    return {**base, "text_config": {**base["text_config"], **fields}}


REFUSED = [
    # an int field: a string, a float (even a whole one), a bool (an int subclass), null without "| None"
    ("string-int", _with(LLAMA, num_attention_heads="32"),
     'config.json: num_attention_heads is the string "32"; transformers (and so vLLM) needs an integer: write 32'),
    ("float-int", _with(LLAMA, hidden_size=4096.0),
     "config.json: hidden_size is the number 4096.0; transformers (and so vLLM) needs an integer: write 4096"),
    ("float-kv-heads", _with(LLAMA, num_key_value_heads=8.0),
     "config.json: num_key_value_heads is the number 8.0; transformers (and so vLLM) needs an integer: write 8"),
    ("bool-int", _with(LLAMA, head_dim=True),
     "config.json: head_dim is true; transformers (and so vLLM) needs an integer: fix the value"),
    ("null-int", _with(GEMMA2, head_dim=None),
     "config.json: head_dim is null; transformers (and so vLLM) needs an integer here: give the model's value"),
    ("string-window", _with(MISTRAL, sliding_window="4096"),
     'config.json: sliding_window is the string "4096"; transformers (and so vLLM) needs an integer: write 4096'),
    ("qwen3-max-window-layers", _with(QWEN3, max_window_layers="36"),
     'config.json: max_window_layers is the string "36"; transformers (and so vLLM) needs an integer: write 36'),
    ("mla-rank", _with(DSV3, kv_lora_rank=512.0),
     "config.json: kv_lora_rank is the number 512.0; transformers (and so vLLM) needs an integer: write 512"),
    ("whisper-d-model", _with(WHISPER, d_model="768"),
     'config.json: d_model is the string "768"; transformers (and so vLLM) needs an integer: write 768'),
    # a bool field: a string, 0 / 1, null without "| None"
    ("string-bool", _with(QWEN2, use_sliding_window="true"),
     'config.json: use_sliding_window is the string "true"; transformers (and so vLLM) needs true or false: '
     "write true"),
    ("int-bool", _with(QWEN3, use_sliding_window=1),
     "config.json: use_sliding_window is the integer 1; transformers (and so vLLM) needs true or false: write true"),
    ("null-bool", _with(QWEN3, use_sliding_window=None),
     "config.json: use_sliding_window is null; transformers (and so vLLM) needs true or false here: give the "
     "model's value or drop the field"),
    ("falcon-alibi", _with(FALCON, alibi="no"),
     'config.json: alibi is the string "no"; transformers (and so vLLM) needs true or false: fix the value'),
    ("gemma2-bidirectional-string", _with(GEMMA2, use_bidirectional_attention="all"),
     'config.json: use_bidirectional_attention is the string "all"; transformers (and so vLLM) needs true or '
     "false: fix the value"),
    # a float field: an integer is refused (isinstance(50, float) is False)
    ("int-float", _with(GEMMA2, attn_logit_softcapping=50),
     "config.json: attn_logit_softcapping is the integer 50; transformers (and so vLLM) needs a number with a "
     "decimal point: write 50.0"),
    # a Literal field
    ("gemma4-bidirectional-bool", _with(GEMMA4_TEXT, use_bidirectional_attention=True),
     'config.json: use_bidirectional_attention is true; transformers (and so vLLM) needs "all" or "vision": '
     "fix the value"),
    # a text_config is checked by its own class
    ("gemma3-text-heads", _text(GEMMA3, num_attention_heads="32"),
     'config.json text_config: num_attention_heads is the string "32"; transformers (and so vLLM) needs an '
     "integer: write 32"),
    ("gemma3-text-kv-heads", _text(GEMMA3, num_key_value_heads="16"),
     'config.json text_config: num_key_value_heads is the string "16"; transformers (and so vLLM) needs an '
     "integer: write 16"),
    ("gemma3-text-softcap", _text(GEMMA3, attn_logit_softcapping=50),
     "config.json text_config: attn_logit_softcapping is the integer 50; transformers (and so vLLM) needs a "
     "number with a decimal point: write 50.0"),
]


@pytest.mark.parametrize("config,message", [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_refused_like_transformers(config, message):
    with pytest.raises(UserError) as exc:
        model_facts(config, name="m")
    assert str(exc.value) == message


ACCEPTED = [
    # null where the annotation has "| None"
    ("llama-null-head-dim", _with(LLAMA, head_dim=None)),
    ("llama-null-kv-heads", _with(LLAMA, num_key_value_heads=None)),
    ("gemma2-null-softcap", _with(GEMMA2, attn_logit_softcapping=None)),
    ("mistral-null-window", _with(MISTRAL, sliding_window=None)),
    ("dsv3-null-q-lora", _with(DSV3, q_lora_rank=None)),
    ("gemma2-float-softcap", _with(GEMMA2, attn_logit_softcapping=50.0)),
    ("gemma2-bool-bidirectional", _with(GEMMA2, use_bidirectional_attention=False)),
    ("gemma4-literal", _with(GEMMA4_TEXT, use_bidirectional_attention="vision")),
    # fields LlamaConfig does not declare are kept as written: raw.py reads them laxly
    ("llama-undeclared-window", _with(LLAMA, sliding_window="4096")),
    ("llama-undeclared-softcap", _with(LLAMA, attn_logit_softcapping=50)),
    ("llama-undeclared-is-causal", _with(LLAMA, is_causal=0)),
    # vLLM loads deepseek_v32 with DeepseekV3Config, which has no index_topk
    ("dsv32-undeclared-index-topk", _with(DSV32, index_topk="2048")),
]


@pytest.mark.parametrize("config", [c[1] for c in ACCEPTED], ids=[c[0] for c in ACCEPTED])
def test_accepted_like_transformers(config):
    model_facts(config, name="m")


def test_a_huge_value_is_cut_short():
    with pytest.raises(UserError) as exc:
        model_facts(_with(LLAMA, num_attention_heads="3" * 1_000_000), name="m")
    assert len(str(exc.value)) < 250 and "\n" not in str(exc.value) and len(str(exc.value)) < LINE_CHARS


def test_every_declared_kind_is_checked():
    kinds = {kind for mt in ("llama", "qwen2", "gemma2", "gemma4_text") for kind, _ in declared(mt).values()}
    assert kinds == {"int", "bool", "float", "dict", "all|vision"}
    assert declared("llama")["head_dim"] == ("int", True) and declared("gemma2")["head_dim"] == ("int", False)
    assert declared("chatglm") == {}  # vLLM's own config class: not strict


def test_deepseek_ocr_language_config_allows_null_kv_lora_rank():
    # vLLM's DeepseekVLV2TextConfig re-declares kv_lora_rank as int | None; the rest is DeepseekV2Config's
    lang = {"num_hidden_layers": 2, "num_attention_heads": 10, "hidden_size": 1280, "kv_lora_rank": None}
    base = {"architectures": ["DeepseekOCRForCausalLM"], "model_type": "deepseek_vl_v2", "torch_dtype": "bfloat16"}
    model_facts({**base, "language_config": lang}, name="m")
    with pytest.raises(UserError, match=r"^config.json language_config: num_attention_heads is the string \"10\""):
        model_facts({**base, "language_config": {**lang, "num_attention_heads": "10"}}, name="m")


def _text_case(model_type: str) -> dict:
    from tests.selector import model_cases_text

    return next(c["config"] for c in model_cases_text.cases() if c["config"].get("model_type") == model_type)


# Found by the hostile-config campaign against vLLM 0.33.0's create_engine_config:
# each refusal is transformers' StrictDataclassFieldValidationError there.
@pytest.mark.parametrize("model_type, field, value", [
    ("mellum", "hidden_size", 32.0), ("seed_oss", "hidden_size", None), ("flex_olmo", "num_key_value_heads", True),
    ("minimax_m2", "head_dim", False), ("ernie4_5_moe", "hidden_size", False), ("cwm", "sliding_window", None),
    ("glm4_moe", "num_key_value_heads", "8"), ("olmo3", "num_attention_heads", 32.0),
])
def test_text_classes_read_loosely_before_check_their_declared_sizes(model_type, field, value):
    with pytest.raises(UserError, match=f"{field} is .*transformers \\(and so vLLM\\) needs"):
        model_facts(_with(_text_case(model_type), **{field: value}), name="m")


@pytest.mark.parametrize("config, value", [
    (LLAMA, 1), (LLAMA, "true"), (GEMMA2, 0), (_profile("phi-3-mini"), "x"), (DSV3, None),
])
def test_tie_word_embeddings_is_a_bool_for_every_transformers_class(config, value):
    with pytest.raises(UserError, match="tie_word_embeddings is"):
        model_facts(_with(config, tie_word_embeddings=value), name="m")
    model_facts(_with(config, tie_word_embeddings=False), name="m")


@pytest.mark.parametrize("value", [7, "default", [], True])
def test_rope_parameters_is_a_mapping_or_null(value):
    with pytest.raises(UserError, match="rope_parameters is .* needs a mapping"):
        model_facts(_with(LLAMA, rope_parameters=value), name="m")
    model_facts(_with(LLAMA, rope_parameters=None), name="m")


def test_llama_hidden_size_must_be_a_multiple_of_the_heads_whatever_head_dim_says():
    # LlamaConfig.validate_architecture; vLLM 0.33.0 cannot load such a config
    with pytest.raises(UserError, match=r"hidden size \(4096\) is not a multiple of the number of attention heads \(24\) "
                                        r"\(LlamaConfig.validate_architecture\)"):
        model_facts(_with(LLAMA, num_attention_heads=24, num_key_value_heads=2, head_dim=128), name="m")
    model_facts(_with(LLAMA, hidden_size=3072, num_attention_heads=24, num_key_value_heads=2, head_dim=128), name="m")
    # Qwen3Config has no such rule: an explicit head_dim stands
    model_facts(_with(QWEN3, num_attention_heads=24, num_key_value_heads=8), name="m")
