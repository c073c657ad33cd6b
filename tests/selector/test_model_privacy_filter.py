"""OpenAIPrivacyFilterForTokenClassification (vLLM 0.33.0
openai_privacy_filter.py): EncoderOnlyAttention on every layer selects its
backend from head size, dtype, cache dtype and ENCODER_ONLY alone, although
the module it builds keeps gpt-oss's sinks and a sliding_window + 1 band.
The differential cannot hold this model (its module check compares sinks
with the selection's), so these facts are checked here."""

import pytest

from attn_select.selector.errors import UserError
from attn_select.selector.model import model_facts

# transformers' OpenAIPrivacyFilterConfig defaults, 2 layers
CONFIG = {"architectures": ["OpenAIPrivacyFilterForTokenClassification"], "model_type": "openai_privacy_filter",
          "num_hidden_layers": 2, "hidden_size": 640, "head_dim": 64, "num_attention_heads": 14,
          "num_key_value_heads": 2, "sliding_window": 128, "num_local_experts": 128, "vocab_size": 200064,
          "torch_dtype": "bfloat16"}


def _layers(facts):
    return sorted((i, g.attn) for g in facts.groups for i in g.layers)


def test_every_layer_encoder_only_without_sinks_or_window():
    f = model_facts(CONFIG, name="privacy-filter")
    assert f.runner == "pooling"
    layers = _layers(f)
    assert [i for i, _ in layers] == [0, 1]
    for _, a in layers:
        assert (a.attn_type, a.num_heads, a.num_kv_heads, a.head_size) == ("encoder_only", 14, 2, 64)
        assert not a.has_sink and a.sliding_window is None


def test_heads_split_plainly_over_tensor_parallel():
    (_, a), _ = _layers(model_facts(CONFIG, name="privacy-filter", tp=2))
    assert (a.num_heads, a.num_kv_heads) == (7, 1)
    # vLLM 0.33.0 builds the token embedding first: 200064 rows do not split over 7 ranks
    with pytest.raises(UserError, match="does not divide the vocabulary"):
        model_facts(CONFIG, name="privacy-filter", tp=7)
    # with a vocabulary they do split over (200704 = 7 x 64 x 448), QKVParallelLinear's 7 % 2
    with pytest.raises(UserError, match="KV heads"):
        model_facts({**CONFIG, "vocab_size": 200704}, name="privacy-filter", tp=7)


def test_null_window_is_refused():
    with pytest.raises(UserError, match="sliding_window"):
        model_facts({**CONFIG, "sliding_window": None}, name="privacy-filter")
