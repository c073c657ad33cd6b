"""More cases for the config-parser differential (tests/selector/test_model_vs_vllm.py):
cut-down versions of published config.json files, each checked against vLLM 0.33.0's
own model build. See that module for what is compared.

Pooling, embedding, reranking and retrieval checkpoints, speech (ASR) and
encoder-decoder models; each case is named after the checkpoint it is cut
from (layer counts reduced, every other value as published)."""

from __future__ import annotations


def cases() -> list[dict]:
    return [
        {"name": "google/siglip-so400m-patch14-384 (3 layers)", "config": {
            "architectures": ["SiglipModel"], "initializer_factor": 1.0, "model_type": "siglip",
            "text_config": {"hidden_act": "gelu_pytorch_tanh", "hidden_size": 1152, "intermediate_size": 4304,
                            "max_position_embeddings": 64, "model_type": "siglip_text_model",
                            "num_attention_heads": 16, "num_hidden_layers": 3, "vocab_size": 32000},
            "torch_dtype": "float32",
            "vision_config": {"hidden_size": 1152, "image_size": 384, "intermediate_size": 4304,
                              "model_type": "siglip_vision_model", "num_attention_heads": 16,
                              "num_hidden_layers": 3, "patch_size": 14}}},
        {"name": "google/siglip-base-patch16-224 (sparse sub-configs)", "config": {
            "architectures": ["SiglipModel"], "initializer_factor": 1.0, "model_type": "siglip",
            "text_config": {"model_type": "siglip_text_model"}, "torch_dtype": "float32",
            "vision_config": {"model_type": "siglip_vision_model", "patch_size": 16, "num_hidden_layers": 2}}},
        {"name": "openai/clip-vit-base-patch32 (2 layers)", "config": {
            "architectures": ["CLIPModel"], "initializer_factor": 1.0, "logit_scale_init_value": 2.6592,
            "model_type": "clip", "projection_dim": 512, "torch_dtype": "float32",
            "text_config": {"hidden_size": 512, "intermediate_size": 2048, "num_attention_heads": 8,
                            "num_hidden_layers": 2, "max_position_embeddings": 77, "model_type": "clip_text_model",
                            "projection_dim": 512, "vocab_size": 49408, "bos_token_id": 0, "eos_token_id": 2},
            "vision_config": {"hidden_size": 768, "intermediate_size": 3072, "num_attention_heads": 12,
                              "num_hidden_layers": 2, "image_size": 224, "patch_size": 32,
                              "model_type": "clip_vision_model", "projection_dim": 512}}},
        {"name": "laion/CLIP-ViT-H-14-laion2B-s32B-b79K (sparse, text 3 layers)", "config": {
            "architectures": ["CLIPModel"], "initializer_factor": 1.0, "logit_scale_init_value": 2.6592,
            "model_type": "clip", "projection_dim": 1024, "torch_dtype": "float32",
            "text_config": {"hidden_act": "gelu", "hidden_size": 1024, "intermediate_size": 4096,
                            "num_attention_heads": 16, "num_hidden_layers": 3},
            "vision_config": {"hidden_act": "gelu", "hidden_size": 1280, "intermediate_size": 5120,
                              "num_attention_heads": 16, "num_hidden_layers": 2, "patch_size": 14}}},
    ]
