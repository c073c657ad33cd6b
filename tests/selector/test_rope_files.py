"""Model files whose rotary embedding reads the config's rope: gpt-oss's
attention, DeepSeek's (MLA or not), Qwen's VL language models and Falcon's
rotary branch compute their frequencies as rope_theta ** (...), which fails
on a string or a null (TypeError), and get_rope refuses a scaling type it has
no embedding for. vLLM 0.33.0 fails building such a model; attn-select
refuses it with one line. Falcon with ALiBi builds no rotary embedding. Each
case is a unit test and a differential case through vLLM's own build (marker
``vllm``)."""

from __future__ import annotations

import pytest

from attn_select.selector.config import Capability

from .model_oracle_client import builds_or_refuses, head_size_differential

H100 = Capability(9, 0)
POW = "for ** or pow()"

_DEEPSEEK_V2_LITE = {
    "architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2", "hidden_size": 512,
    "intermediate_size": 1024, "moe_intermediate_size": 256, "num_attention_heads": 16, "num_key_value_heads": 16,
    "num_hidden_layers": 2, "first_k_dense_replace": 1, "n_routed_experts": 4, "num_experts_per_tok": 2,
    "n_shared_experts": 1, "q_lora_rank": None, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 1000, "topk_method": "greedy", "n_group": 1,
    "topk_group": 1, "torch_dtype": "bfloat16"}
_GPT_OSS = {
    "architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "attention_bias": True, "head_dim": 64,
    "hidden_size": 2880, "intermediate_size": 2880, "layer_types": ["sliding_attention", "full_attention"],
    "max_position_embeddings": 131072, "num_attention_heads": 64, "num_experts_per_tok": 4, "num_hidden_layers": 2,
    "num_key_value_heads": 8, "num_local_experts": 4, "rms_norm_eps": 1e-05, "sliding_window": 128,
    "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0, "original_max_position_embeddings": 4096,
                     "rope_type": "yarn", "truncate": False}, "tie_word_embeddings": False, "vocab_size": 1000,
    "torch_dtype": "bfloat16"}
_FALCON_40B = {"architectures": ["FalconForCausalLM"], "model_type": "falcon", "num_hidden_layers": 2,
               "vocab_size": 1000, "intermediate_size": 1024, "torch_dtype": "bfloat16", "hidden_size": 8192,
               "num_attention_heads": 128, "num_kv_heads": 8, "new_decoder_architecture": True, "parallel_attn": True,
               "alibi": False, "bias": False}
_QWEN2_5_VL = {
    "architectures": ["Qwen2_5_VLForConditionalGeneration"], "model_type": "qwen2_5_vl", "hidden_size": 512,
    "intermediate_size": 1024, "num_attention_heads": 8, "num_key_value_heads": 2, "num_hidden_layers": 2,
    "vocab_size": 1000, "max_position_embeddings": 128000, "rope_theta": 1000000.0, "torch_dtype": "bfloat16",
    "image_token_id": 151655, "video_token_id": 151656, "vision_start_token_id": 151652,
    "vision_config": {"depth": 1, "hidden_size": 64, "intermediate_size": 128, "num_heads": 2, "out_hidden_size": 512,
                      "in_chans": 3, "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2,
                      "window_size": 112, "fullatt_block_indexes": [0], "hidden_act": "silu", "tokens_per_second": 2}}

# (name, config, vLLM's head size where it builds, or a piece of its refusal)
CASES = [
    ("deepseek-v2-lite rope_theta null", {**_DEEPSEEK_V2_LITE, "rope_theta": None}, POW),
    ("deepseek-v2-lite rope_theta '10000'", {**_DEEPSEEK_V2_LITE, "rope_theta": "10000"}, POW),
    ("deepseek-v2-lite rope_theta 10000", {**_DEEPSEEK_V2_LITE, "rope_theta": 10000}, 576),
    ("gpt-oss rope_theta '150000'", {**_GPT_OSS, "rope_theta": "150000"}, POW),
    ("gpt-oss rope_theta 150000", {**_GPT_OSS, "rope_theta": 150000}, 64),
    ("falcon-40b rope_theta '10000'", {**_FALCON_40B, "rope_theta": "10000"}, POW),
    ("falcon alibi rope_theta '10000' (no rotary)", {**_FALCON_40B, "alibi": True, "rope_theta": "10000"}, 64),
    ("qwen2.5-vl rope_theta null", {**_QWEN2_5_VL, "rope_theta": None}, POW),
    ("qwen2.5-vl rope type 'weird'", {**_QWEN2_5_VL, "rope_scaling": {"rope_type": "weird", "factor": 2.0}},
     "Unknown RoPE scaling type weird"),
    ("qwen2.5-vl", _QWEN2_5_VL, 64),
]


@pytest.mark.parametrize("name,config,want", CASES, ids=[c[0] for c in CASES])
def test_rope_read_by_the_model_file(name, config, want):
    builds_or_refuses(config, want, "rope_theta|scaling type", H100, mentions="vLLM")


# vLLM's own build of every case (marker ``vllm``)
vllm_answers, test_against_vllm = head_size_differential(CASES, H100)
