"""DeepSeek's MLA layers with num_attention_heads 0: vLLM 0.33.0's
deepseek_v2.py sizes nothing by dividing by the head count on its MLA path,
so it builds every layer with 0 query heads and asks get_attn_backend with
num_heads 0 (seen in its own build: tests/selector/model_oracle.py). Its MHA
path divides by it, and DeepseekV2Config's own check takes the head count
modulo: both are refused."""

from __future__ import annotations

import pytest

from attn_select.selector.config import Capability, Kernels
from attn_select.selector.errors import UserError
from attn_select.selector.explain import Overrides, explain
from attn_select.selector.model import model_facts
from attn_select.selector.profiles import load_device


def _deepseek(**fields) -> dict:
    return {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "num_hidden_layers": 2,
            "vocab_size": 1000, "hidden_size": 1024, "intermediate_size": 1024, "moe_intermediate_size": 256,
            "n_routed_experts": 4, "n_shared_experts": 1, "num_experts_per_tok": 2, "first_k_dense_replace": 1,
            "n_group": 1, "topk_group": 1, "kv_lora_rank": 512, "q_lora_rank": 768, "qk_rope_head_dim": 64,
            "qk_nope_head_dim": 128, "v_head_dim": 128, "torch_dtype": "bfloat16", "num_attention_heads": 0,
            "num_key_value_heads": 0, **fields}


@pytest.mark.parametrize("tp", [1, 2])
def test_mla_layers_build_with_zero_query_heads(tp):
    f = model_facts(_deepseek(), name="ds0", capability=Capability(9, 0), tp=tp)
    (g,) = f.groups
    assert (g.attn.use_mla, g.attn.num_heads, g.attn.head_size, g.layers) == (True, 0, 576, (0, 1))
    assert (f.num_heads, f.head_size) == (0, 576)


def test_the_selection_runs_on_num_heads_zero():
    facts = model_facts(_deepseek(), name="ds0", capability=Capability(9, 0))
    (g,) = explain(facts, load_device("h100"), Kernels(), Overrides()).groups
    assert g.num_heads == 0 and g.selection.selected is not None and g.layer_error is None


@pytest.mark.parametrize("fields", [
    dict(qk_nope_head_dim=0, qk_rope_head_dim=0),  # plain MHA: hidden_size // num_attention_heads
    # not an MHA path: DeepseekV2Config's own check, hidden_size % num_attention_heads (ZeroDivisionError)
    dict(architectures=["DeepseekV2ForCausalLM"], model_type="deepseek_v2"),
])
def test_the_mha_path_and_deepseek_v2s_config_refuse_zero_heads(fields):
    with pytest.raises(UserError, match="num_attention_heads is 0"):
        model_facts(_deepseek(**fields), name="ds0", capability=Capability(9, 0))
