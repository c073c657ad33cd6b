"""ExaoneMoeForCausalLM (K-EXAONE): each layer's window as vLLM 0.33.0's
exaone_moe.py gives it. The expected windows are what vLLM's own build of
these configs gave each layer's Attention (tests/selector/model_oracle.py;
test_model_vs_vllm.py runs the same configs through it where vLLM is
installed)."""

from __future__ import annotations

import pytest

from attn_select.selector.config import Capability
from attn_select.selector.errors import UserError
from attn_select.selector.model import model_facts

LT = ["sliding_attention", "sliding_attention", "sliding_attention", "full_attention"]


def _exaone_moe(**fields) -> dict:
    return {"architectures": ["ExaoneMoeForCausalLM"], "model_type": "exaone_moe", "num_hidden_layers": 4,
            "vocab_size": 1000, "intermediate_size": 1024, "torch_dtype": "bfloat16", "hidden_size": 1024,
            "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 128, "num_experts": 4,
            "num_experts_per_tok": 2, "num_shared_experts": 1, "moe_intermediate_size": 256, **fields}


def _windows(config: dict) -> list:
    f = model_facts(config, name="exaone-moe", capability=Capability(9, 0))
    return [w for _, w in sorted((i, g.attn.sliding_window) for g in f.groups for i in g.layers)]


@pytest.mark.parametrize("fields,want", [
    # the scalar window on layer_types' sliding layers (configs before K-EXAONE 2.0)
    (dict(sliding_window=128, layer_types=LT), [128, 128, 128, None]),
    # a window per layer wins over the scalar one on every layer that is not full_attention
    (dict(sliding_window=128, layer_types=LT, sliding_windows=[64, 256, 512, 1024]), [64, 256, 512, None]),
    # no layer_types: ExaoneMoeConfig makes every fourth layer full
    (dict(sliding_window=128, sliding_windows=[64, 256, 512, 1024]), [64, 256, 512, None]),
    (dict(sliding_window=128), [128, 128, 128, None]),
    # null and 0 pass as they are (null: the model-level window, none with full layers present)
    (dict(sliding_window=128, layer_types=LT, sliding_windows=[None, 256, 0, 1024]), [None, 256, 0, None]),
    # any kind but full_attention is a sliding layer; a list that ends before the full layers is never read there
    (dict(sliding_window=128, layer_types=["chunked_attention", "sliding_attention", "full_attention",
                                           "full_attention"], sliding_windows=[64, 256]), [64, 256, None, None]),
])
def test_each_layer_takes_vllms_window(fields, want):
    assert _windows(_exaone_moe(**fields)) == want


@pytest.mark.parametrize("fields,message", [
    (dict(sliding_window=128, sliding_windows=[64]), "sliding_windows is a list of 1 for 4 layers"),
    (dict(sliding_window=128, sliding_windows=7), "sliding_windows is 7 for 4 layers"),
    (dict(sliding_window=128, layer_types=LT, sliding_windows=["64", 1, 1, 1]), "layer 0's sliding window is '64'"),
    (dict(sliding_window=None), "sliding_window is null"),
])
def test_what_vllm_cannot_build_is_refused(fields, message):
    with pytest.raises(UserError, match=message):
        _windows(_exaone_moe(**fields))
