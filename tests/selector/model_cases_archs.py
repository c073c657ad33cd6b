"""Registry-wide cases for the config-parser differential
(tests/selector/test_model_vs_vllm.py): architectures of vLLM 0.33.0's model
registry the other case lists do not reach, each a cut-down config shaped like
a published checkpoint's (head counts, head sizes, windows, MLA sizes as
published; layers, experts and vocabularies cut).

Remote-code checkpoints (a model_type transformers does not know) ship their
configuration class beside config.json. ``_remote`` stands in for it: a
``PretrainedConfig`` subclass that keeps config.json's fields (and the
published class's ``attribute_map``, where it has one), named by the config's
``auto_map``; the oracle loads it with ``trust_remote_code``, as ``vllm serve
--trust-remote-code`` would. attn-select reads the same config.json.
"""

from __future__ import annotations

_STANDIN = '''from transformers import PretrainedConfig


class StandInConfig(PretrainedConfig):
    """The checkpoint's remote configuration class, reduced to config.json's fields."""

    model_type = {model_type!r}
    attribute_map = {attribute_map!r}
'''


def _remote(name: str, arch: str, model_type: str, *, attribute_map: dict | None = None, **fields) -> dict:
    config = {"architectures": [arch], "model_type": model_type, "torch_dtype": "bfloat16", **fields,
              "auto_map": {"AutoConfig": "configuration_standin.StandInConfig"}}
    source = _STANDIN.format(model_type=model_type, attribute_map=attribute_map or {})
    return {"name": name, "config": config, "trust_remote_code": True,
            "files": {"configuration_standin.py": source}}


def _text_remote_cases() -> list[dict]:
    return [
        # OrionStarAI/Orion-14B-Base
        _remote("orion-14b like", "OrionForCausalLM", "orion", hidden_size=5120, intermediate_size=15360,
                num_attention_heads=40, num_key_value_heads=40, num_hidden_layers=4, vocab_size=1000,
                max_position_embeddings=4096, rms_norm_eps=1e-5, rope_theta=10000.0, hidden_act="silu",
                tie_word_embeddings=False),
        # Tele-AI/TeleChat2-7B (n_head / n_layer / ffn_hidden_size, no KV-head field)
        _remote("telechat2-7b like", "TeleChat2ForCausalLM", "telechat",
                attribute_map={"num_hidden_layers": "n_layer", "num_attention_heads": "n_head"},
                hidden_size=4096, n_head=32, n_layer=4, ffn_hidden_size=12288, layer_norm_epsilon=1e-5,
                vocab_size=1000, apply_residual_connection_post_layernorm=False, tie_word_embeddings=False),
        # Tele-AI/TeleChat2-115B: grouped KV heads
        _remote("telechat2-115b like", "TeleChat2ForCausalLM", "telechat",
                attribute_map={"num_hidden_layers": "n_layer", "num_attention_heads": "n_head"},
                hidden_size=8192, n_head=64, num_key_value_heads=8, n_layer=4, ffn_hidden_size=40960,
                layer_norm_epsilon=1e-5, vocab_size=1000, tie_word_embeddings=False),
        # stepfun-ai Step-1 text (num_attention_groups: its KV heads)
        _remote("step1 like", "Step1ForCausalLM", "step1", hidden_size=4096, intermediate_size=11008,
                num_attention_heads=32, num_attention_groups=4, num_hidden_layers=4, vocab_size=1000,
                rms_norm_eps=1e-5, max_position_embeddings=16384, tie_word_embeddings=False),
        # LGAI-EXAONE/EXAONE-3.5-7.8B-Instruct (num_layers via the class's attribute_map)
        _remote("exaone-3.5-7.8b like", "ExaoneForCausalLM", "exaone",
                attribute_map={"num_hidden_layers": "num_layers"},
                hidden_size=4096, intermediate_size=14336, num_attention_heads=32, num_key_value_heads=8,
                num_layers=4, layer_norm_epsilon=1e-5, activation_function="silu", rope_theta=1000000.0,
                max_position_embeddings=32768, vocab_size=1000, tie_word_embeddings=False),
        # internlm/internlm2_5-7b-chat
        _remote("internlm2.5-7b like", "InternLM2ForCausalLM", "internlm2", hidden_size=4096,
                intermediate_size=14336, num_attention_heads=32, num_key_value_heads=8, num_hidden_layers=4,
                vocab_size=1000, max_position_embeddings=32768, rms_norm_eps=1e-5, rope_theta=1000000,
                rope_scaling={"type": "dynamic", "factor": 2.0}, bias=False, hidden_act="silu",
                tie_word_embeddings=False),
        # internlm/internlm2-7b-reward
        _remote("internlm2-7b-reward like", "InternLM2ForRewardModel", "internlm2", hidden_size=4096,
                intermediate_size=14336, num_attention_heads=32, num_key_value_heads=8, num_hidden_layers=4,
                vocab_size=1000, max_position_embeddings=32768, rms_norm_eps=1e-5, rope_theta=1000000,
                bias=False, hidden_act="silu", tie_word_embeddings=False),
        # internlm/internlm3-8b-instruct (head_dim 128 over 32 heads of a 4096 hidden)
        _remote("internlm3-8b like", "InternLM3ForCausalLM", "internlm3", hidden_size=4096,
                intermediate_size=10240, num_attention_heads=32, num_key_value_heads=2, head_dim=128,
                num_hidden_layers=4, vocab_size=1000, max_position_embeddings=32768, rms_norm_eps=1e-5,
                rope_theta=50000000, qkv_bias=False, bias=False, hidden_act="silu", tie_word_embeddings=False),
        # openbmb/MiniCPM-2B-sft-bf16
        _remote("minicpm-2b like", "MiniCPMForCausalLM", "minicpm", hidden_size=2304, intermediate_size=5760,
                num_attention_heads=36, num_key_value_heads=36, num_hidden_layers=4, vocab_size=1000,
                max_position_embeddings=4096, rms_norm_eps=1e-5, rope_theta=10000.0, dim_model_base=256,
                scale_depth=1.4, scale_emb=12, hidden_act="silu", tie_word_embeddings=True),
        # XiaomiMiMo/MiMo-7B-RL (Qwen2 layers, window fields off)
        _remote("mimo-7b like", "MiMoForCausalLM", "mimo", hidden_size=4096, intermediate_size=11008,
                num_attention_heads=32, num_key_value_heads=8, num_hidden_layers=4, vocab_size=1000,
                max_position_embeddings=32768, rms_norm_eps=1e-5, rope_theta=640000, sliding_window=32768,
                use_sliding_window=False, max_window_layers=36, attention_dropout=0.0, hidden_act="silu",
                num_nextn_predict_layers=1, tie_word_embeddings=False),
        # CofeAI/Tele-FLM (Llama layers, muP scaling)
        _remote("tele-flm like", "TeleFLMForCausalLM", "teleflm", hidden_size=8192, intermediate_size=21824,
                num_attention_heads=64, num_key_value_heads=64, num_hidden_layers=4, vocab_size=1000,
                max_position_embeddings=4096, rms_norm_eps=1e-5, use_mup=True, mup_scale_factor=32,
                output_mult=1.0, input_mult=1.0, hidden_act="silu", tie_word_embeddings=False),
        # deepseek-ai/deepseek-moe-16b-base
        _remote("deepseek-moe-16b like", "DeepseekForCausalLM", "deepseek", hidden_size=2048,
                intermediate_size=10944, moe_intermediate_size=1408, num_attention_heads=16,
                num_key_value_heads=16, num_hidden_layers=4, vocab_size=1000, n_routed_experts=8,
                n_shared_experts=2, num_experts_per_tok=2, first_k_dense_replace=1, moe_layer_freq=1,
                norm_topk_prob=False, scoring_func="softmax", max_position_embeddings=4096, rms_norm_eps=1e-6,
                rope_theta=10000, hidden_act="silu", tie_word_embeddings=False),
        # inclusionAI/Ling-lite-1.5
        _remote("ling-lite like", "BailingMoeForCausalLM", "bailing_moe", hidden_size=2048,
                intermediate_size=5632, moe_intermediate_size=1408, num_attention_heads=16,
                num_key_value_heads=4, head_dim=128, num_hidden_layers=4, vocab_size=1000, num_experts=8,
                num_shared_experts=2, num_experts_per_tok=2, first_k_dense_replace=0, norm_topk_prob=True,
                use_bias=False, use_qkv_bias=False, max_position_embeddings=32768, rms_norm_eps=1e-6,
                rope_theta=600000, hidden_act="silu", embedding_dropout=0.0, output_dropout=0.0,
                tie_word_embeddings=False),
        # inclusionAI/Ling-mini-2.0 (qk norm, partial rotary, expert groups)
        _remote("ling-mini-2.0 like", "BailingMoeV2ForCausalLM", "bailing_moe", hidden_size=2048,
                intermediate_size=5120, moe_intermediate_size=512, num_attention_heads=16, num_key_value_heads=4,
                head_dim=128, num_hidden_layers=4, vocab_size=1000, num_experts=8, num_shared_experts=1,
                num_experts_per_tok=2, first_k_dense_replace=1, norm_topk_prob=True, use_bias=False,
                use_qkv_bias=False, use_qk_norm=True, partial_rotary_factor=0.5, n_group=1, topk_group=1,
                routed_scaling_factor=2.5, score_function="sigmoid", moe_router_enable_expert_bias=True,
                max_position_embeddings=32768, rms_norm_eps=1e-6, rope_theta=600000, hidden_act="silu",
                embedding_dropout=0.0, output_dropout=0.0, tie_word_embeddings=False),
        # IQuestLab/IQuest-Coder-V1 (Llama layers)
        _remote("iquest-coder like", "IQuestCoderForCausalLM", "iquestcoder", hidden_size=5120,
                intermediate_size=27648, num_attention_heads=40, num_key_value_heads=8, head_dim=128,
                num_hidden_layers=4, vocab_size=1000, max_position_embeddings=131072, rms_norm_eps=1e-5,
                rope_theta=500000, hidden_act="silu", tie_word_embeddings=False),
        # IQuestLab/IQuest-Coder-V1-Loop (loops over the same layers; a loop window)
        _remote("iquest-loopcoder like", "IQuestLoopCoderForCausalLM", "iquestloopcoder", hidden_size=5120,
                intermediate_size=27648, num_attention_heads=40, num_key_value_heads=8, head_dim=128,
                num_hidden_layers=4, vocab_size=1000, max_position_embeddings=131072, rms_norm_eps=1e-5,
                rope_theta=500000, hidden_act="silu", loop_num=2, loop_window_size=64, sliding_window=None,
                max_window_layers=4, tie_word_embeddings=False),
        # Tele-AI TeleChat3 (registry: Llama layers)
        _remote("telechat3 like", "TeleChat3ForCausalLM", "telechat3", hidden_size=4096, intermediate_size=12288,
                num_attention_heads=32, num_key_value_heads=8, num_hidden_layers=4, vocab_size=1000,
                max_position_embeddings=32768, rms_norm_eps=1e-5, rope_theta=1000000, hidden_act="silu",
                tie_word_embeddings=False),
    ]


_PHI4MM_AUDIO = {
    "activation": "swish", "activation_checkpointing": {"interval": 1, "module": "transformer", "offload": False},
    "attention_dim": 1024, "attention_heads": 16, "batch_norm": False, "bias_in_glu": True, "causal": True,
    "chunk_size": -1, "cnn_layer_norm": True, "conv_activation": "swish", "conv_glu_type": "swish",
    "depthwise_multiplier": 1, "depthwise_seperable_out_channel": 1024, "dropout_rate": 0.0,
    "encoder_embedding_config": {"input_size": 80}, "ext_pw_kernel_size": 1, "ext_pw_out_channel": 1024,
    "input_layer": "nemo_conv", "input_size": 80, "kernel_size": 3, "left_chunk": 18, "linear_units": 1536,
    "nemo_conv_settings": {"conv_channels": 1024}, "num_blocks": 2,
    "relative_attention_bias_args": {"t5_bias_max_distance": 500, "type": "t5"}, "time_reduction": 8}


def _multimodal_remote_cases() -> list[dict]:
    return [
        # microsoft/Phi-3.5-vision-instruct (CLIP ViT-L/14-336 tower, Phi-3 language model)
        _remote("phi-3.5-vision like", "Phi3VForCausalLM", "phi3_v", hidden_size=3072, intermediate_size=8192,
                num_attention_heads=32, num_key_value_heads=32, num_hidden_layers=4, vocab_size=32064,
                max_position_embeddings=131072, original_max_position_embeddings=4096, rms_norm_eps=1e-5,
                rope_theta=10000.0, rope_scaling=None, sliding_window=262144, hidden_act="silu",
                embd_layer={"embedding_cls": "image", "hd_transform_order": "sub_glb", "projection_cls": "mlp",
                            "use_hd_transform": True, "with_learnable_separator": True},
                img_processor={"image_dim_out": 1024, "model_name": "openai/clip-vit-large-patch14-336",
                               "name": "clip_vision_model", "num_img_tokens": 144},
                tie_word_embeddings=False),
        # microsoft/Phi-4-multimodal-instruct (SigLIP tower, conformer audio, Phi-4-mini language model)
        _remote("phi-4-multimodal like", "Phi4MMForCausalLM", "phi4mm", hidden_size=3072, intermediate_size=8192,
                num_attention_heads=24, num_key_value_heads=8, num_hidden_layers=4, vocab_size=200064,
                max_position_embeddings=131072, original_max_position_embeddings=4096, rms_norm_eps=1e-5,
                partial_rotary_factor=0.75, rope_theta=10000.0, rope_scaling=None, sliding_window=262144,
                hidden_act="silu", img_processor=None,
                embd_layer={"audio_embd_layer": {"compression_rate": 8, "downsample_rate": 1,
                                                 "embedding_cls": "audio", "enable_gradient_checkpointing": True,
                                                 "projection_cls": "mlp", "use_conv_downsample": False,
                                                 "use_qformer": False},
                            "embedding_cls": "image",
                            "image_embd_layer": {"crop_size": 448, "embedding_cls": "tune_image",
                                                 "enable_gradient_checkpointing": True,
                                                 "hd_transform_order": "sub_glb",
                                                 "image_token_compression_cls": "avg_pool_2d",
                                                 "projection_cls": "mlp", "use_hd_transform": True,
                                                 "with_learnable_separator": True}},
                audio_processor={"config": _PHI4MM_AUDIO, "name": "cascades"},
                vision_lora={"dp": 0.0, "layer": "layers.*((self_attn\\.(qkv_proj|o_proj))|(mlp\\.(gate_up|down)_proj))",
                             "lora_alpha": 512, "r": 256},
                speech_lora={"dp": 0.01, "layer": "((layers.*self_attn\\.(qkv|o)_proj)|(layers.*mlp\\.(gate_up|down)_proj))",
                             "lora_alpha": 640, "r": 320},
                tie_word_embeddings=True),
    ]


def rejected_cases() -> list[dict]:
    """Dropped hybrids vLLM 0.33.0 can only try through its Transformers
    backend, which refuses their non-attention layers."""
    minimax = {  # MiniMaxAI/MiniMax-Text-01 (lightning attention with softmax attention every 8th layer), cut
        "architectures": ["MiniMaxText01ForCausalLM"], "model_type": "minimax", "hidden_size": 6144,
        "intermediate_size": 9216, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128,
        "num_hidden_layers": 8, "num_local_experts": 4, "num_experts_per_tok": 2, "vocab_size": 1000,
        "layer_types": ["linear_attention"] * 7 + ["full_attention"], "torch_dtype": "bfloat16"}
    bamba = {  # ibm-ai-platform/Bamba-9B (attention on layers 9, 18, 27), cut to 12 layers
        "architectures": ["BambaForCausalLM"], "model_type": "bamba", "hidden_size": 4096,
        "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 12,
        "attn_layer_indices": [9], "mamba_n_heads": 128, "mamba_d_head": 64, "mamba_n_groups": 1,
        "mamba_d_state": 128, "mamba_d_conv": 4, "mamba_expand": 2, "mamba_chunk_size": 256, "vocab_size": 1000,
        "torch_dtype": "bfloat16"}
    refusal = "does not dispatch through the Transformers attention interface"
    # no transformers class of that name: the registry raises before any backend is tried
    gone = "was supported in vLLM until v0.23.0"
    return [
        {"name": "minimax-text-01 like (dropped)", "config": minimax, "rejects": gone},
        {"name": "minimax-m1 like (dropped)", "config": {**minimax, "architectures": ["MiniMaxM1ForCausalLM"]},
         "rejects": gone},
        {"name": "minimax-text-01 under transformers' class name", "rejects": refusal,
         "config": {**minimax, "architectures": ["MiniMaxForCausalLM"]}},
        {"name": "bamba-9b like (dropped)", "config": bamba, "rejects": refusal},
        # its remote configuration class, but no remote AutoModel class in auto_map
        {**_remote("baichuan2-7b like (dropped)", "BaichuanForCausalLM", "baichuan", hidden_size=4096,
                   intermediate_size=11008, num_attention_heads=32, num_hidden_layers=4, vocab_size=1000,
                   max_position_embeddings=4096, rms_norm_eps=1e-6), "rejects": gone},
    ]


def cases() -> list[dict]:
    return _text_remote_cases() + _multimodal_remote_cases()
