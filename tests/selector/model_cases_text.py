"""More cases for the config-parser differential (tests/selector/test_model_vs_vllm.py):
cut-down versions of published config.json files, each checked against vLLM 0.33.0's
own model build. See that module for what is compared."""

from __future__ import annotations


def _mimo_v2_flash(**fields) -> dict:
    """XiaomiMiMo/MiMo-V2-Flash's config.json, cut to 6 layers (full attention
    on layers 0 and 5, sliding elsewhere, as its hybrid_layer_pattern starts)
    and 4 experts; attention fields as published."""
    return {
        "architectures": ["MiMoV2FlashForCausalLM"], "model_type": "mimo_v2_flash", "hidden_size": 4096,
        "intermediate_size": 16384, "moe_intermediate_size": 2048, "num_hidden_layers": 6,
        "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 192, "v_head_dim": 128,
        "swa_num_attention_heads": 64, "swa_num_key_value_heads": 8, "swa_head_dim": 192, "swa_v_head_dim": 128,
        "partial_rotary_factor": 0.334, "rope_theta": 5000000, "swa_rope_theta": 10000, "sliding_window": 128,
        "sliding_window_size": 128, "hybrid_layer_pattern": [0, 1, 1, 1, 1, 0], "moe_layer_freq": [0, 1, 1, 1, 1, 1],
        "add_swa_attention_sink_bias": True, "add_full_attention_sink_bias": False, "attention_bias": False,
        "n_routed_experts": 4, "num_experts_per_tok": 2, "n_shared_experts": None, "routed_scaling_factor": None,
        "scoring_func": "sigmoid", "topk_method": "noaux_tc", "n_group": 1, "topk_group": 1, "norm_topk_prob": True,
        "layernorm_epsilon": 1e-5, "attention_value_scale": 0.707, "hidden_act": "silu",
        "max_position_embeddings": 262144, "vocab_size": 1000, "tie_word_embeddings": False,
        "torch_dtype": "bfloat16", **fields}


def _mimo_cases() -> list[dict]:
    same_v = {"v_head_dim": 192, "swa_v_head_dim": 192}
    return [
        # v head 128 != head 192 on every layer: MiMoV2Attention binds a *_DIFFKV backend itself
        {"name": "mimo-v2-flash cut to 6 layers", "bypass": True, "config": _mimo_v2_flash()},
        {"name": "mimo-v2-flash cut to 6 layers, fp8 block weights", "bypass": True, "config": _mimo_v2_flash(
            quantization_config={"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
                                 "weight_block_size": [128, 128]})},
        # equal K/V head sizes: each layer asks get_attn_backend (sinks + window on the swa layers)
        {"name": "mimo-v2-flash cut to 6 layers, v head = head", "config": _mimo_v2_flash(**same_v)},
        {"name": "mimo-v2-flash v head = head, no swa sinks, sm100", "capability": [10, 0],
         "config": _mimo_v2_flash(**same_v, add_swa_attention_sink_bias=False)},
        # MiMo-V2.5-Pro-like sizes (128 heads, 8 KV heads on both kinds) under MiMoV2ForCausalLM
        {"name": "mimo-v2.5-pro like (MiMoV2ForCausalLM), v head = head", "config": _mimo_v2_flash(
            architectures=["MiMoV2ForCausalLM"], hidden_size=6144, num_attention_heads=128, num_key_value_heads=8,
            swa_num_attention_heads=128, swa_num_key_value_heads=8, **same_v)},
    ]


def cases() -> list[dict]:
    return _mimo_cases()
