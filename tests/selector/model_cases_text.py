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


def _llama4_scout_text(**fields) -> dict:
    """meta-llama/Llama-4-Scout-17B-16E's text_config as a text-only
    Llama4ForCausalLM, cut to 8 layers and 4 experts (no_rope_layers [] as
    published: the class puts a NoPE layer every 4th layer)."""
    return {
        "architectures": ["Llama4ForCausalLM"], "model_type": "llama4_text", "attention_bias": False,
        "attention_chunk_size": 8192, "attn_scale": 0.1, "attn_temperature_tuning": True, "floor_scale": 8192,
        "head_dim": 128, "hidden_act": "silu", "hidden_size": 5120, "interleave_moe_layer_step": 1,
        "intermediate_size": 8192, "intermediate_size_mlp": 16384, "max_position_embeddings": 10485760,
        "no_rope_layers": [], "num_attention_heads": 40, "num_experts_per_tok": 1, "num_hidden_layers": 8,
        "num_key_value_heads": 8, "num_local_experts": 4, "rms_norm_eps": 1e-05,
        "rope_scaling": {"factor": 16.0, "high_freq_factor": 1.0, "low_freq_factor": 1.0,
                         "original_max_position_embeddings": 8192, "rope_type": "llama3"},
        "rope_theta": 500000.0, "use_qk_norm": True, "vocab_size": 1000, "torch_dtype": "bfloat16", **fields}


def _llama4_cases() -> list[dict]:
    return [
        # RoPE layers: ChunkedLocalAttention (selection from head size / dtype only); NoPE layers: Attention
        {"name": "llama-4-scout text cut to 8 layers", "config": _llama4_scout_text()},
        # Maverick: MoE every other layer, explicit no_rope_layers
        {"name": "llama-4-maverick text cut to 4 layers", "config": _llama4_scout_text(
            interleave_moe_layer_step=2, num_hidden_layers=4, no_rope_layers=[1, 1, 1, 0],
            rope_scaling=None, use_qk_norm=False)},
        {"name": "llama-4 text without attention_chunk_size", "config": _llama4_scout_text(
            attention_chunk_size=None, num_hidden_layers=4)},
        {"name": "llama-4-scout text cut to 4 layers, sm100", "capability": [10, 0],
         "config": _llama4_scout_text(num_hidden_layers=4)},
    ]


def _hrm_text_cases() -> list[dict]:
    hrm = {"architectures": ["HrmTextForCausalLM"], "model_type": "hrm_text", "hidden_size": 1536,
           "intermediate_size": 4096, "num_attention_heads": 12, "head_dim": 128, "H_cycles": 2, "L_cycles": 3,
           "max_position_embeddings": 2048, "rms_norm_eps": 1e-6, "prefix_lm": True, "vocab_size": 1000,
           "torch_dtype": "bfloat16"}
    return [
        # HrmTextConfig: num_hidden_layers 2 per stack -> 2 * 2 * (3 + 1) = 16 attention slots
        {"name": "hrm-text (class sizes) 2 layers per stack", "config": {**hrm, "num_hidden_layers": 2}},
        # a saved config carries num_layers_per_stack and the expanded num_hidden_layers
        {"name": "hrm-text saved config, 1 layer per stack, 1 x (1 + 1) cycles", "config": {
            **hrm, "num_layers_per_stack": 1, "num_hidden_layers": 2, "H_cycles": 1, "L_cycles": 1,
            "num_attention_heads": 16, "hidden_size": 2048}},
    ]


def _step3p5_flash(n: int = 8, **fields) -> dict:
    """stepfun-ai/Step-3.5-Flash's config.json (model_type step3p5, remote-code
    field names that Step3p7TextConfig reads), cut to n layers plus its 3 MTP
    layers, whose entries trail layer_types and the per-layer rope lists."""
    padded = n + 3
    types = (["full_attention"] + ["sliding_attention"] * 3) * (padded // 4 + 1)
    return {
        "architectures": ["Step3p5ForCausalLM"], "model_type": "step3p5", "hidden_size": 4096,
        "intermediate_size": 11264, "num_hidden_layers": n, "num_attention_heads": 64, "num_attention_groups": 8,
        "head_dim": 128, "max_position_embeddings": 262144, "vocab_size": 1000, "rms_norm_eps": 1e-5,
        "moe_intermediate_size": 1280, "moe_num_experts": 4, "moe_top_k": 2, "share_expert_dim": 1280,
        "moe_layers_enum": ",".join(str(i) for i in range(3, padded)), "num_nextn_predict_layers": 3,
        "sliding_window": 512, "layer_types": types[:padded],
        "attention_other_setting": {"attention_type": "sliding_attention", "num_attention_heads": 96,
                                    "num_attention_groups": 8, "head_dim": 128, "true_head_dim": 128},
        "use_head_wise_attn_gate": True, "use_moe_router_bias": True, "need_fp32_gate": True,
        "moe_router_activation": "sigmoid", "moe_router_scaling_factor": 3.0, "norm_expert_weight": True,
        "rope_theta": [5000000.0 if t == "full_attention" else 10000.0 for t in types[:padded]],
        "partial_rotary_factors": [0.5 if t == "full_attention" else 1.0 for t in types[:padded]],
        "yarn_only_types": ["full_attention"],
        "rope_scaling": {"rope_type": "llama3", "factor": 2.0, "original_max_position_embeddings": 131072,
                         "low_freq_factor": 1.0, "high_freq_factor": 32.0},
        "torch_dtype": "bfloat16", **fields}


def _step_cases() -> list[dict]:
    return [
        {"name": "step-3.5-flash cut to 8 layers", "config": _step3p5_flash()},
        {"name": "step-3.5-flash, sliding heads from num_sliding_attention_heads", "config": _step3p5_flash(
            n=4, attention_other_setting=None, num_sliding_attention_heads=32)},
        {"name": "step-3.5-flash without sliding_window", "config": _step3p5_flash(n=4, sliding_window=None)},
    ]


def _llg(n: int, every: int = 4) -> list[str]:
    """layer_types with a full-attention layer closing every ``every`` layers."""
    return ["full_attention" if (i + 1) % every == 0 else "sliding_attention" for i in range(n)]


def _native_llama_like_cases() -> list[dict]:
    """Registry models whose attention is Llama-style with a layer_types window."""
    return [
        {"name": "exaone-4.0-32b cut to 8 layers", "config": {
            "architectures": ["Exaone4ForCausalLM"], "model_type": "exaone4", "hidden_size": 5120,
            "intermediate_size": 27392, "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
            "num_hidden_layers": 8, "sliding_window": 4096, "sliding_window_pattern": "LLLG", "layer_types": _llg(8),
            "rope_scaling": {"factor": 16.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                             "original_max_position_embeddings": 8192, "rope_type": "llama3"},
            "rope_theta": 1000000, "max_position_embeddings": 131072, "rms_norm_eps": 1e-5, "vocab_size": 1000,
            "tie_word_embeddings": False, "torch_dtype": "bfloat16"}},
        {"name": "exaone-4.0-1.2b cut to 4 layers (all global)", "config": {
            "architectures": ["Exaone4ForCausalLM"], "model_type": "exaone4", "hidden_size": 2048,
            "intermediate_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64,
            "num_hidden_layers": 4, "sliding_window": None, "sliding_window_pattern": None,
            "layer_types": ["full_attention"] * 4, "rope_theta": 1000000, "max_position_embeddings": 65536,
            "rms_norm_eps": 1e-5, "vocab_size": 1000, "tie_word_embeddings": True, "torch_dtype": "bfloat16"}},
        {"name": "k-exaone-236b-a23b cut to 8 layers", "config": {
            "architectures": ["ExaoneMoEForCausalLM"], "model_type": "exaone_moe", "hidden_size": 6144,
            "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_attention_heads": 64,
            "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 8, "sliding_window": 128,
            "sliding_window_pattern": "LLLG", "layer_types": _llg(8),
            "mlp_layer_types": ["dense"] + ["sparse"] * 7, "first_k_dense_replace": 1, "num_experts": 4,
            "num_experts_per_tok": 2, "num_shared_experts": 1, "norm_topk_prob": True, "routed_scaling_factor": 2.5,
            "n_group": 1, "topk_group": 1, "rope_theta": 1000000, "max_position_embeddings": 262144,
            "rms_norm_eps": 1e-5, "vocab_size": 1000, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}},
        # MuseGlimmerTextConfig: full attention on every 4th layer counted from the last
        {"name": "muse-glimmer text (class sizes) cut to 8 layers", "config": {
            "architectures": ["MuseGlimmerForCausalLM"], "model_type": "muse_glimmer_text", "hidden_size": 6656,
            "intermediate_size": 19968, "num_hidden_layers": 8, "num_attention_heads": 32, "num_key_value_heads": 2,
            "head_dim": 128, "sliding_window": 2048, "final_logit_softcapping": 20.0, "qk_scale_factor": 3.87,
            "vocab_size": 1000, "torch_dtype": "bfloat16"}},
        {"name": "muse-glimmer text cut to 6 layers, explicit layer_types", "config": {
            "architectures": ["MuseGlimmerForCausalLM"], "model_type": "muse_glimmer_text", "hidden_size": 6656,
            "intermediate_size": 19968, "num_hidden_layers": 6, "num_attention_heads": 32, "num_key_value_heads": 2,
            "head_dim": 128, "sliding_window": 2048, "layer_types": _llg(6, 3), "vocab_size": 1000,
            "torch_dtype": "bfloat16"}},
        {"name": "phi-3.5-moe-instruct cut to 4 layers", "config": {
            "architectures": ["PhiMoEForCausalLM"], "model_type": "phimoe", "hidden_size": 4096,
            "intermediate_size": 6400, "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 4,
            "num_local_experts": 4, "num_experts_per_tok": 2, "sliding_window": 131072, "max_position_embeddings": 131072,
            "original_max_position_embeddings": 4096, "rope_theta": 10000.0, "rms_norm_eps": 1e-5,
            "attention_bias": True, "lm_head_bias": True, "vocab_size": 1000, "torch_dtype": "bfloat16",
            "rope_scaling": {"type": "longrope", "short_factor": [1.0] * 64, "long_factor": [1.0] * 64,
                             "short_mscale": 1.243163121016122, "long_mscale": 1.243163121016122}}},
        {"name": "minimax-m2 cut to 4 layers", "config": {
            "architectures": ["MiniMaxM2ForCausalLM"], "model_type": "minimax_m2", "hidden_size": 3072,
            "intermediate_size": 1536, "num_attention_heads": 48, "num_key_value_heads": 8, "head_dim": 128,
            "num_hidden_layers": 4, "rotary_dim": 64, "rope_theta": 5000000, "max_position_embeddings": 196608,
            "num_local_experts": 4, "num_experts_per_tok": 2, "scoring_func": "sigmoid", "use_qk_norm": True,
            "qk_norm_type": "per_layer", "use_routing_bias": True, "attn_type_list": [1, 1, 1, 1],
            "rms_norm_eps": 1e-6, "vocab_size": 1000, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}},
        {"name": "solar-open-100b cut to 4 layers", "config": {
            "architectures": ["SolarForCausalLM"], "model_type": "solar_open", "hidden_size": 4096,
            "intermediate_size": 10240, "moe_intermediate_size": 1280, "num_attention_heads": 64,
            "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 4, "n_routed_experts": 4,
            "n_shared_experts": 1, "num_experts_per_tok": 2, "first_k_dense_replace": 0, "n_group": 1,
            "topk_group": 1, "norm_topk_prob": True, "routed_scaling_factor": 1.0, "rope_theta": 1000000,
            "max_position_embeddings": 131072, "rms_norm_eps": 1e-5, "vocab_size": 1000, "torch_dtype": "bfloat16"}},
    ]


def _transformers_backend_text_cases() -> list[dict]:
    """Registry architectures vLLM serves through its Transformers modeling backend."""
    return [
        {"name": "hunyuan-a13b-instruct cut to 4 layers", "config": {
            "architectures": ["HunYuanMoEV1ForCausalLM"], "model_type": "hunyuan_v1_moe", "hidden_size": 4096,
            "intermediate_size": 3072, "moe_intermediate_size": 3072, "num_attention_heads": 32,
            "num_key_value_heads": 8, "head_dim": 128, "attention_head_dim": 128, "num_hidden_layers": 4,
            "num_experts": 4, "moe_topk": 2, "num_shared_expert": 1, "use_qk_norm": True, "rope_theta": 10000.0,
            "rope_scaling": {"alpha": 1000.0, "beta_fast": 32, "beta_slow": 1, "factor": 1.0, "mscale": 1.0,
                             "mscale_all_dim": 1.0, "type": "dynamic"},
            "max_position_embeddings": 32768, "rms_norm_eps": 1e-5, "vocab_size": 1000, "torch_dtype": "bfloat16"}},
        {"name": "cwm cut to 8 layers", "config": {
            "architectures": ["CwmForCausalLM"], "model_type": "cwm", "hidden_size": 6144, "intermediate_size": 21504,
            "num_attention_heads": 48, "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 8,
            "sliding_window": 8192, "layer_types": _llg(8), "rope_theta": 1000000.0,
            "rope_scaling": {"factor": 16.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                             "original_max_position_embeddings": 8192, "rope_type": "llama3"},
            "max_position_embeddings": 131072, "rms_norm_eps": 1e-5, "vocab_size": 1000, "torch_dtype": "bfloat16"}},
        {"name": "olmo-3-7b cut to 8 layers", "config": {
            "architectures": ["Olmo3ForCausalLM"], "model_type": "olmo3", "hidden_size": 4096,
            "intermediate_size": 11008, "num_attention_heads": 32, "num_key_value_heads": 32, "num_hidden_layers": 8,
            "sliding_window": 4096, "layer_types": _llg(8), "rope_theta": 500000, "max_position_embeddings": 65536,
            "rms_norm_eps": 1e-6, "vocab_size": 1000, "torch_dtype": "bfloat16"}},
        {"name": "olmo-1b-hf cut to 4 layers", "config": {
            "architectures": ["OlmoForCausalLM"], "model_type": "olmo", "hidden_size": 2048,
            "intermediate_size": 8192, "num_attention_heads": 16, "num_key_value_heads": 16, "num_hidden_layers": 4,
            "clip_qkv": None, "rope_theta": 10000.0, "max_position_embeddings": 2048, "vocab_size": 1000,
            "torch_dtype": "float32"}},
        {"name": "flexolmo-7x7b cut to 4 layers", "config": {
            "architectures": ["FlexOlmoForCausalLM"], "model_type": "flex_olmo", "hidden_size": 4096,
            "intermediate_size": 11008, "num_attention_heads": 32, "num_key_value_heads": 32, "num_hidden_layers": 4,
            "num_experts": 4, "num_experts_per_tok": 2, "rope_theta": 500000, "max_position_embeddings": 4096,
            "rms_norm_eps": 1e-6, "vocab_size": 100352, "pad_token_id": 100277, "torch_dtype": "bfloat16"}},
        {"name": "seed-oss-36b cut to 4 layers", "config": {
            "architectures": ["SeedOssForCausalLM"], "model_type": "seed_oss", "hidden_size": 5120,
            "intermediate_size": 27648, "num_attention_heads": 80, "num_key_value_heads": 8, "head_dim": 128,
            "num_hidden_layers": 4, "attention_bias": True, "attention_out_bias": False, "rope_theta": 10000000.0,
            "max_position_embeddings": 524288, "rms_norm_eps": 1e-6, "vocab_size": 1000, "torch_dtype": "bfloat16"}},
        {"name": "jais-2 (Jais2Config sizes) cut to 4 layers", "config": {
            "architectures": ["Jais2ForCausalLM"], "model_type": "jais2", "hidden_size": 3328,
            "intermediate_size": 26624, "num_attention_heads": 26, "num_hidden_layers": 4, "hidden_act": "relu2",
            "attention_bias": True, "mlp_bias": True, "vocab_size": 1000, "torch_dtype": "bfloat16"}},
        # Kolibri1Config: window 513, full attention on every 5th layer (class-derived layer_types)
        {"name": "kolibri-1 (class sizes) cut to 10 layers", "config": {
            "architectures": ["Kolibri1ForCausalLM"], "model_type": "kolibri1", "num_hidden_layers": 10,
            "num_experts": 4, "num_experts_per_tok": 2, "vocab_size": 1000, "torch_dtype": "bfloat16"}},
        # not in the registry: vLLM falls back to the Transformers backend; JetMoeConfig
        # maps head_dim to kv_channels and sets the query heads to KV heads x experts per token
        {"name": "jetmoe-8b cut to 4 layers", "config": {
            "architectures": ["JetMoeForCausalLM"], "model_type": "jetmoe", "hidden_size": 2048,
            "num_hidden_layers": 4, "num_key_value_heads": 16, "kv_channels": 128, "intermediate_size": 5632,
            "num_local_experts": 8, "num_experts_per_tok": 2, "max_position_embeddings": 4096, "vocab_size": 1000,
            "torch_dtype": "bfloat16"}},
        {"name": "mellum sliding layers cut to 4 layers", "config": {
            "architectures": ["MellumForCausalLM"], "model_type": "mellum", "hidden_size": 2304,
            "intermediate_size": 7168, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
            "num_hidden_layers": 4, "sliding_window": 1024, "layer_types": _llg(4),
            "mlp_layer_types": ["sparse"] * 4, "num_experts": 4, "num_experts_per_tok": 2, "vocab_size": 1000,
            "torch_dtype": "bfloat16"}},
    ]


def _glm5_next_text(**fields) -> dict:
    """Glm5NextTextConfig class sizes (NoPE MLA; rope_parameters, which the
    MLA layer asserts, DSA indexer) as a text-only Glm5NextForCausalLM, cut to 8 layers."""
    return {"architectures": ["Glm5NextForCausalLM"], "model_type": "glm5_next_text", "hidden_size": 4096,
            "intermediate_size": 12288, "moe_intermediate_size": 2048, "num_hidden_layers": 8,
            "num_attention_heads": 64, "num_key_value_heads": 64, "n_shared_experts": 1, "n_routed_experts": 4,
            "num_experts_per_tok": 2, "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 0,
            "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0},
            "qk_nope_head_dim": 256, "v_head_dim": 256, "index_topk": 2048, "index_head_dim": 128,
            "index_n_heads": 32, "index_kpool": 4, "index_kpool_always_select_tail": True,
            "indexer_rope_interleave": False, "mhc": False, "mla_use_nope": False, "scoring_func": "sigmoid",
            "topk_method": "noaux_tc", "vocab_size": 1000,
            "torch_dtype": "bfloat16", **fields}


def _glm5_next_cases() -> list[dict]:
    return [
        # class-derived layer_types: linear attention except every 4th layer (sparse MLA)
        {"name": "glm-5-next text cut to 8 layers", "config": _glm5_next_text()},
        {"name": "glm-5-next text, explicit layer_types", "config": _glm5_next_text(num_hidden_layers=4,
            layer_types=["linear_attention", "full_attention", "linear_attention", "full_attention"])},
    ]


def _minimax_m3_cases() -> list[dict]:
    # vLLM registers only the multimodal minimax_m3_vl config class: a text-only
    # MiniMaxM3SparseForCausalLM reads its layers from that class's text_config
    text = {"hidden_size": 6144, "intermediate_size": 3072, "num_hidden_layers": 4, "num_attention_heads": 64,
            "num_key_value_heads": 4, "head_dim": 128, "num_local_experts": 4, "num_experts_per_tok": 2,
            "rotary_dim": 64, "partial_rotary_factor": 0.5, "rope_theta": 5000000, "vocab_size": 1000,
            "sparse_attention_config": {"sparse_attention_freq": [0, 1, 1, 1], "sparse_num_index_heads": 4,
                                        "sparse_index_dim": 128, "sparse_block_size": 128, "sparse_topk_blocks": 16,
                                        "sparse_local_block": 1}}
    cfg = {"architectures": ["MiniMaxM3SparseForCausalLM"], "model_type": "minimax_m3_vl", "torch_dtype": "bfloat16"}
    return [
        {"name": "minimax-m3 text (MiniMaxM3TextConfig sizes) cut to 4 layers", "config": {**cfg, "text_config": text}},
        {"name": "minimax-m3 text, dense and sparse layers alternating", "config": {**cfg, "text_config": {
            **text, "sparse_attention_config": {**text["sparse_attention_config"],
                                                "sparse_attention_freq": [0, 1, 0, 1]}}}},
    ]


def _mla_and_moe_cases() -> list[dict]:
    return [
        # AXK1Config sizes (DeepSeek-V3-style MLA on every layer)
        {"name": "a.x-k1 (AXK1Config sizes) cut to 4 layers", "config": {
            "architectures": ["AXK1ForCausalLM"], "model_type": "axk1", "hidden_size": 7168,
            "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_hidden_layers": 4,
            "num_attention_heads": 64, "num_key_value_heads": 64, "n_shared_experts": 1, "n_routed_experts": 4,
            "num_experts_per_tok": 2, "n_group": 1, "topk_group": 1, "kv_lora_rank": 512, "q_lora_rank": 1536,
            "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128, "rope_interleave": True,
            "mlp_layer_types": ["dense", "sparse", "sparse", "sparse"], "vocab_size": 1000,
            "torch_dtype": "bfloat16"}},
        {"name": "ernie-4.5-21b-a3b cut to 4 layers", "config": {
            "architectures": ["Ernie4_5_MoeForCausalLM"], "model_type": "ernie4_5_moe", "hidden_size": 2560,
            "intermediate_size": 12288, "moe_intermediate_size": 1536, "num_attention_heads": 20,
            "num_key_value_heads": 4, "head_dim": 128, "num_hidden_layers": 4, "moe_num_experts": 4, "moe_k": 2,
            "moe_layer_start_index": 1, "moe_layer_interval": 1, "moe_num_shared_experts": 2,
            "use_bias": False, "rope_theta": 500000, "max_position_embeddings": 131072, "rms_norm_eps": 1e-5,
            "tie_word_embeddings": True, "vocab_size": 1000, "torch_dtype": "bfloat16"}},
    ]


def _bypass_text_cases() -> list[dict]:
    """Text models whose attention never asks get_attn_backend (attn-select refuses them)."""
    return [
        # InklingModelConfig's sizes; local (sliding) layers 0-2, global layer 3
        {"name": "inkling text (class sizes) cut to 4 layers", "bypass": True, "config": {
            "architectures": ["InklingForCausalLM"], "model_type": "inkling_model", "hidden_size": 1536,
            "num_hidden_layers": 4, "num_attention_heads": 12, "num_key_value_heads": 4, "head_dim": 128,
            "swa_num_attention_heads": 12, "swa_num_key_value_heads": 4, "swa_head_dim": 128,
            "sliding_window_size": 512, "local_layer_ids": [0, 1, 2], "n_shared_experts": 1,
            "shared_expert_sink": True, "n_routed_experts": 4, "num_experts_per_tok": 2, "vocab_size": 1000,
            "torch_dtype": "bfloat16"}},
    ]


def _unregistered_mla_cases() -> list[dict]:
    """Architectures vLLM 0.33.0's registry lacks: served through the Transformers
    backend, where a kv_lora_rank alone makes every layer MLAAttention."""
    return [
        # transformers' YoutuConfig sizes (Youtu-LLM 2B), layers cut
        {"name": "youtu-llm-2b (class sizes) cut to 4 layers", "config": {
            "architectures": ["YoutuForCausalLM"], "model_type": "youtu", "vocab_size": 128256, "hidden_size": 2048,
            "intermediate_size": 6144, "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 16,
            "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64, "v_head_dim": 128,
            "qk_nope_head_dim": 128, "max_position_embeddings": 131072, "tie_word_embeddings": True,
            "rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"}, "rope_interleave": True,
            "torch_dtype": "bfloat16"}},
        # transformers' Mistral4Config sizes, layers cut
        {"name": "mistral4 (class sizes) cut to 4 layers", "config": {
            "architectures": ["Mistral4ForCausalLM"], "model_type": "mistral4", "vocab_size": 131072,
            "hidden_size": 4096, "intermediate_size": 12288, "moe_intermediate_size": 2048, "num_hidden_layers": 4,
            "num_attention_heads": 32, "num_key_value_heads": 32, "n_shared_experts": 1, "n_routed_experts": 128,
            "kv_lora_rank": 256, "q_lora_rank": 1024, "qk_rope_head_dim": 64, "v_head_dim": 128,
            "qk_nope_head_dim": 64, "num_experts_per_tok": 4, "first_k_dense_replace": 0,
            "max_position_embeddings": 1048576, "rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"},
            "rope_interleave": True, "torch_dtype": "bfloat16"}},
    ]


def cases() -> list[dict]:
    return (_mimo_cases() + _llama4_cases() + _hrm_text_cases() + _step_cases() + _native_llama_like_cases()
            + _transformers_backend_text_cases() + _glm5_next_cases() + _minimax_m3_cases() + _mla_and_moe_cases()
            + _bypass_text_cases() + _unregistered_mla_cases())
