"""Qwen's VL language models hand the rope dict to vLLM's get_rope, which
builds MRotaryEmbedding for an mrope_section and asserts the sections cover
half the rotated dimensions: a head size the sections do not fit (a text
config without head_dim, say) fails vLLM 0.33.0's build. And a class default
of vLLM's own config classes: Step3TextConfig's head_dim is 256. Each case is
a unit test and a differential case through vLLM's own build (marker
``vllm``)."""

from __future__ import annotations

import pytest

from attn_select.selector.config import Capability

from . import model_cases_vlm
from .model_oracle_client import builds_or_refuses, head_size_differential

H100 = Capability(9, 0)
ASSERTS = "AssertionError"


def _qwen3_vl_moe(**text) -> dict:
    text_config = {"model_type": "qwen3_vl_moe_text", "hidden_size": 512, "intermediate_size": 1024,
                   "moe_intermediate_size": 256, "num_attention_heads": 8, "num_key_value_heads": 2,
                   "num_hidden_layers": 2, "vocab_size": 1000, "num_experts": 4, "num_experts_per_tok": 2,
                   "decoder_sparse_step": 1, "norm_topk_prob": True, "rope_theta": 5000000, "dtype": "bfloat16",
                   "rope_scaling": {"rope_type": "default", "mrope_section": [24, 20, 20], "mrope_interleaved": True}}
    text_config.update(text)
    return {"architectures": ["Qwen3VLMoeForConditionalGeneration"], "model_type": "qwen3_vl_moe",
            "text_config": {k: v for k, v in text_config.items() if v is not None},
            "vision_config": {"model_type": "qwen3_vl_moe", "depth": 2, "hidden_size": 64, "intermediate_size": 128,
                              "num_heads": 2, "out_hidden_size": 512, "patch_size": 16, "spatial_merge_size": 2,
                              "temporal_patch_size": 2, "num_position_embeddings": 2304,
                              "deepstack_visual_indexes": [0], "hidden_act": "gelu_pytorch_tanh", "in_channels": 3},
            "image_token_id": 151655, "video_token_id": 151656, "vision_start_token_id": 151652,
            "vision_end_token_id": 151653, "tie_word_embeddings": False}


_QWEN2_5_VL = next(c["config"] for c in model_cases_vlm.cases() if c["name"] == "qwen2_5_vl flat")
_STEP3_TEXT = {"architectures": ["Step3TextForCausalLM"], "model_type": "step3_text", "hidden_size": 1024,
               "intermediate_size": 2048, "num_attention_heads": 64, "num_attention_groups": 1, "num_hidden_layers": 4,
               "max_seq_len": 65536, "vocab_size": 1000, "rms_norm_eps": 1e-05, "moe_intermediate_size": 256,
               "moe_num_experts": 4, "moe_top_k": 2, "max_position_embedding": 65536, "share_expert_dim": 256,
               "share_q_dim": 2048, "norm_expert_weight": False, "moe_layers_enum": "2,3", "rope_theta": 500000,
               "torch_dtype": "bfloat16"}

# (name, config, vLLM's head size where it builds, or a piece of its refusal)
CASES = [
    ("qwen3-vl-moe head_dim 128", _qwen3_vl_moe(head_dim=128), 128),
    # hidden 512 / 8 heads: 64, half of it 32 against the sections' 64
    ("qwen3-vl-moe without head_dim", _qwen3_vl_moe(), ASSERTS),
    ("qwen3-vl-moe head_dim 64, sections of 32", _qwen3_vl_moe(head_dim=64, rope_scaling={
        "rope_type": "default", "mrope_section": [12, 10, 10], "mrope_interleaved": True}), 64),
    ("qwen2.5-vl (published sizes)", _QWEN2_5_VL, 128),
    ("step3 text without head_dim (Step3TextConfig: 256)", _STEP3_TEXT, 256),
]


@pytest.mark.parametrize("name,config,want", CASES, ids=[c[0] for c in CASES])
def test_mrope_section(name, config, want):
    builds_or_refuses(config, want, "mrope_section .* half the rotated dimensions", H100)


# vLLM's own build of every case (marker ``vllm``)
vllm_answers, test_against_vllm = head_size_differential(CASES, H100)
