"""The config parser against vLLM 0.33.0 itself: the same config.json goes to
attn-select and to vLLM (tests/selector/model_oracle.py, run with a python
that has vllm==0.33.0, on CPU); every ``get_attn_backend`` call vLLM's layers
make, every attention module's sizes and the model-level facts must match.

Needs a venv with vLLM (ATTN_SELECT_VLLM_PYTHON, default /tmp/vllm-venv/bin/python);
skipped otherwise. Several minutes on two cores; ATTN_SELECT_MODEL_CASES=TEXT
runs only the cases whose name holds TEXT (e.g. "published " for
model_cases_published's).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from attn_select.selector.config import Capability
from attn_select.selector.errors import UserError
from attn_select.selector.model import facts_from_path, model_facts

from . import model_cases_archs, model_cases_pooling, model_cases_published, model_cases_text, model_cases_vlm
from .model_oracle_client import VLLM_PYTHON, facts_agreeing_with_vllm, run_model_oracle, vllm_python

pytestmark = [pytest.mark.vllm, pytest.mark.slow]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CONFIGS = HERE.parent / "fixtures" / "configs"


def _load(name: str) -> dict:
    return json.loads((CONFIGS / name / "config.json").read_text())


def _profile(name: str) -> tuple[dict, str | None]:
    import yaml

    data = yaml.safe_load((ROOT / "profiles" / "models" / f"{name}.yaml").read_text())
    return data["config"], data.get("weights_dtype")


def _cases() -> list[dict]:
    cases: list[dict] = []
    for folder in sorted(p.parent.name for p in CONFIGS.glob("*/config.json")):
        cases.append({"name": folder, "config": _load(folder)})
    for path in sorted((ROOT / "profiles" / "models").glob("*.yaml")):
        config, weights = _profile(path.stem)
        case = {"name": f"profile {path.stem}", "config": config}
        if weights is not None:  # a weights header with that dtype, as the published files have
            case["weights"] = {"w": {"bfloat16": "BF16", "float32": "F32"}[weights], "blocks": "U8"}
        if config["architectures"] == ["Qwen3NextForCausalLM"]:
            # its mamba ops filter Triton configs at import on sm90, which the
            # CPU stand-in for Triton cannot do; sm100 skips that filter
            case["capability"] = [10, 0]
        cases.append(case)
    llama = _load("llama-3.1-8b")
    deepseek_small = {**_load("deepseek-v3"), "num_hidden_layers": 4, "first_k_dense_replace": 1}
    qwen3 = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 1024, "head_dim": 128,
             "num_attention_heads": 16, "num_key_value_heads": 8, "num_hidden_layers": 8, "torch_dtype": "bfloat16",
             "vocab_size": 1000, "intermediate_size": 2048}
    cases += _gemma4_cases() + _popular_cases() + _more_cases() + _moe_and_mla_cases() + _hybrid_cases()
    cases += _registry_dense_cases() + _registry_moe_hybrid_cases() + _registry_newer_cases()
    cases += _transformers_backend_cases() + _multimodal_wrapper_cases() + _encoder_cases() + _embedding_cases()
    cases += model_cases_vlm.cases() + model_cases_text.cases() + model_cases_pooling.cases()
    cases += model_cases_archs.cases()
    cases += model_cases_published.cases()  # verbatim published config.json files (DeepSeek-V4's is a bypass case)
    cases += model_cases_published.variant_cases()
    cases += [
        {"name": "qwen2 use_sliding_window false", "config": {
            "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 3584, "head_dim": 64,
            "num_attention_heads": 28, "num_key_value_heads": 4, "num_hidden_layers": 4, "vocab_size": 1000,
            "intermediate_size": 2048, "use_sliding_window": False, "sliding_window": 32768,
            "max_window_layers": 28, "torch_dtype": "bfloat16"}},
        {"name": "qwen3 sliding from max_window_layers == layers", "config": {
            **qwen3, "use_sliding_window": True, "sliding_window": 4096, "max_window_layers": 8}},
        {"name": "llama per-layer layer_types", "config": {
            **llama, "num_hidden_layers": 6, "sliding_window": 512,
            "layer_types": ["sliding_attention", "full_attention"] * 3}},
        {"name": "llama all sliding layer_types", "config": {
            **llama, "num_hidden_layers": 4, "sliding_window": 256, "layer_types": ["sliding_attention"] * 4}},
        {"name": "llama is_causal false", "config": {**llama, "num_hidden_layers": 4, "is_causal": False}},
        {"name": "mistral sliding_window 0", "config": {
            **llama, "architectures": ["MistralForCausalLM"], "model_type": "mistral", "num_hidden_layers": 4,
            "sliding_window": 0}},
        {"name": "gemma3 text-only", "config": {
            **_load("gemma-3-27b-it")["text_config"], "architectures": ["Gemma3ForCausalLM"],
            "torch_dtype": "bfloat16", "num_hidden_layers": 12}},
        {"name": "gpt-oss all-full layer_types", "config": {
            **_load("gpt-oss-20b"), "num_hidden_layers": 4, "layer_types": ["full_attention"] * 4}},
        {"name": "deepseek is_causal false", "config": {**deepseek_small, "is_causal": False}},
        {"name": "llama on T4", "config": {**llama, "num_hidden_layers": 2}, "capability": [7, 5]},
        {"name": "gemma-2 on T4", "config": {**_profile("gemma-2-9b")[0], "num_hidden_layers": 4},
         "capability": [7, 5]},
        {"name": "llama float32 requested", "config": {**llama, "num_hidden_layers": 2}, "dtype": "float32"},
        {"name": "gemma3 --language-model-only", "config": {**_load("gemma-3-27b-it")}, "language_model_only": True},
        # AriaConfig / Glm4vConfig build a null or empty text_config from their
        # text class's defaults (32 Llama-like layers; 40 GLM layers, 2 KV heads)
        {"name": "aria text_config null", "config": {
            "architectures": ["AriaForConditionalGeneration"], "model_type": "aria", "torch_dtype": "bfloat16",
            "text_config": None, "vision_config": {"model_type": "idefics3_vision", "hidden_size": 64,
                                                   "intermediate_size": 128, "num_attention_heads": 4,
                                                   "num_hidden_layers": 1, "patch_size": 14}}},
        {"name": "glm4v text_config {}", "config": {
            "architectures": ["Glm4vForConditionalGeneration"], "model_type": "glm4v", "torch_dtype": "bfloat16",
            "text_config": {}, "vision_config": {"model_type": "glm4v", "depth": 1, "hidden_size": 64,
                                                 "intermediate_size": 128, "num_heads": 4, "out_hidden_size": 4096}}},
        {"name": "gemma-2 --disable-sliding-window", "config": {**_profile("gemma-2-9b")[0], "num_hidden_layers": 4},
         "disable_sliding_window": True},
        {"name": "mistral --disable-sliding-window", "config": {
            **llama, "architectures": ["MistralForCausalLM"], "model_type": "mistral", "num_hidden_layers": 2,
            "sliding_window": 4096}, "disable_sliding_window": True},
    ]
    return cases


def _gemma4_text(**fields) -> dict:
    """A small Gemma-4 text config shaped like google/gemma-4-31B-it's
    (head_dim 256 on sliding layers, global_head_dim 512 on full ones)."""
    text = {"model_type": "gemma4_text", "hidden_size": 1024, "intermediate_size": 2048, "num_hidden_layers": 8,
            "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "global_head_dim": 512,
            "sliding_window": 1024, "vocab_size": 1000, "vocab_size_per_layer_input": 1000,
            "hidden_size_per_layer_input": 0, "final_logit_softcapping": 30.0, "torch_dtype": "bfloat16",
            "layer_types": (["sliding_attention"] * 3 + ["full_attention"]) * 2,
            "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                                "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25,
                                                   "rope_theta": 1000000.0}}}
    return {**text, **fields}


def _diffusion_gemma(*, without: tuple[str, ...] = (), vision: dict | None = None, **text) -> dict:
    """DiffusionGemmaForBlockDiffusion over _gemma4_text's fields as a
    DiffusionGemmaTextConfig (no per-layer-input fields; ``without`` drops
    more), with ``text`` over them."""
    dropped = ("vocab_size_per_layer_input", "hidden_size_per_layer_input", *without)
    config = {"architectures": ["DiffusionGemmaForBlockDiffusion"], "model_type": "diffusion_gemma",
              "torch_dtype": "bfloat16", "text_config": {
                  **{k: v for k, v in _gemma4_text().items() if k not in dropped},
                  "model_type": "diffusion_gemma_text", **text}}
    if vision is not None:
        config["vision_config"] = vision
    return config


def _voxtral_hf(**audio) -> dict:
    """VoxtralForConditionalGeneration in Hugging Face format: transformers'
    VoxtralEncoderConfig as audio_config (``audio`` over it), a small Llama
    text_config."""
    return {"architectures": ["VoxtralForConditionalGeneration"], "model_type": "voxtral", "torch_dtype": "bfloat16",
            "audio_config": {"model_type": "voxtral_encoder", "hidden_size": 256, "num_hidden_layers": 2,
                             "num_attention_heads": 4, "intermediate_size": 512, "num_mel_bins": 128, **audio},
            "text_config": {"model_type": "llama", "hidden_size": 1024, "num_hidden_layers": 2,
                            "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 128,
                            "intermediate_size": 2048, "vocab_size": 1000}}


def _gemma4_cases() -> list[dict]:
    causal = ["Gemma4ForCausalLM"]
    k_eq_v = {"attention_k_eq_v": True, "num_global_key_value_heads": 2}
    vision = {"model_type": "gemma4_vision", "hidden_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2,
              "num_key_value_heads": 2, "head_dim": 32, "intermediate_size": 128}
    defaults = {k: v for k, v in _gemma4_text().items() if k not in ("layer_types", "global_head_dim")}
    return [
        {"name": "gemma4 31b-like k_eq_v vision-bidi", "config": {
            **_gemma4_text(**k_eq_v, use_bidirectional_attention="vision"), "architectures": causal}},
        {"name": "gemma4 e2b-like kv-shared", "config": {
            **_gemma4_text(num_kv_shared_layers=4, num_key_value_heads=1, hidden_size_per_layer_input=64),
            "architectures": causal}},
        {"name": "gemma4 multimodal", "config": {
            "architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4", "torch_dtype": "bfloat16",
            "text_config": _gemma4_text(**k_eq_v, use_bidirectional_attention="vision"),
            "vision_config": vision}},
        {"name": "gemma4 multimodal --language-model-only", "config": {
            "architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4", "torch_dtype": "bfloat16",
            "text_config": _gemma4_text(**k_eq_v, use_bidirectional_attention="vision"), "vision_config": vision},
         "language_model_only": True},
        {"name": "gemma4 class-default layer_types, all-bidirectional", "config": {
            **defaults, "num_hidden_layers": 7, "use_bidirectional_attention": "all", "architectures": causal}},
        {"name": "gemma4 unified (class-default vision bidirectional)", "config": {
            "architectures": ["Gemma4UnifiedForConditionalGeneration"], "model_type": "gemma4_unified",
            "torch_dtype": "bfloat16",
            "text_config": {**defaults, **k_eq_v, "model_type": "gemma4_unified_text", "num_hidden_layers": 6},
            "vision_config": {**vision, "model_type": "gemma4_unified_vision"}}},
        # diffusion_gemma.py: Gemma4Model over DiffusionGemmaTextConfig (no attention_k_eq_v field: the
        # full layers take num_global_key_value_heads); sm100, as the CPU oracle can import its Mamba ops there
        {"name": "diffusion-gemma class defaults", "capability": [10, 0], "config": {
            "architectures": ["DiffusionGemmaForBlockDiffusion"], "model_type": "diffusion_gemma"}},
        {"name": "diffusion-gemma 26b-a4b-like, all-bidirectional", "capability": [10, 0],
         "config": _diffusion_gemma(without=("layer_types",), num_hidden_layers=6, num_attention_heads=16,
                                    num_key_value_heads=8, num_global_key_value_heads=2,
                                    use_bidirectional_attention="all", num_experts=4, top_k_experts=2,
                                    moe_intermediate_size=256)},
        {"name": "diffusion-gemma attention_k_eq_v false, vision-bidirectional", "capability": [10, 0],
         "config": _diffusion_gemma(vision=vision, attention_k_eq_v=False, num_global_key_value_heads=2,
                                    use_bidirectional_attention="vision")},
        {"name": "gemma4 last layer forced full, no k_eq_v, soft cap", "config": {
            **_gemma4_text(num_global_key_value_heads=2, attn_logit_softcapping=50.0,
                           layer_types=["sliding_attention", "full_attention"] * 3 + ["sliding_attention"] * 2),
            "architectures": causal}},
    ]


def _popular_cases() -> list[dict]:
    """Small configs shaped like popular checkpoints' (layers and experts cut
    down): Qwen2.5-VL-7B, Qwen3-VL-8B, Llama-4-Scout, Mixtral-8x7B, Phi-4,
    Phi-4-mini, GLM-4.5, Kimi-K2, Qwen3.5."""
    return [{'name': 'qwen2.5-vl 7b-like',
             'config': {'architectures': ['Qwen2_5_VLForConditionalGeneration'],
                        'model_type': 'qwen2_5_vl',
                        'hidden_size': 512,
                        'intermediate_size': 1024,
                        'num_attention_heads': 8,
                        'num_key_value_heads': 2,
                        'num_hidden_layers': 4,
                        'vocab_size': 1000,
                        'max_position_embeddings': 128000,
                        'sliding_window': 32768,
                        'use_sliding_window': False,
                        'max_window_layers': 28,
                        'rope_scaling': {'type': 'mrope', 'mrope_section': [8, 12, 12]},
                        'rope_theta': 1000000.0,
                        'torch_dtype': 'bfloat16',
                        'image_token_id': 151655,
                        'video_token_id': 151656,
                        'vision_start_token_id': 151652,
                        'vision_config': {'depth': 1,
                                          'hidden_size': 64,
                                          'intermediate_size': 128,
                                          'num_heads': 2,
                                          'out_hidden_size': 512,
                                          'in_chans': 3,
                                          'patch_size': 14,
                                          'spatial_merge_size': 2,
                                          'temporal_patch_size': 2,
                                          'window_size': 112,
                                          'fullatt_block_indexes': [0],
                                          'hidden_act': 'silu',
                                          'tokens_per_second': 2}}},
            {'name': 'qwen3-vl 8b-like',
             'config': {'architectures': ['Qwen3VLForConditionalGeneration'],
                        'model_type': 'qwen3_vl',
                        'text_config': {'model_type': 'qwen3_vl_text',
                                        'hidden_size': 512,
                                        'intermediate_size': 1024,
                                        'num_attention_heads': 8,
                                        'num_key_value_heads': 2,
                                        'head_dim': 128,
                                        'num_hidden_layers': 4,
                                        'vocab_size': 1000,
                                        'max_position_embeddings': 262144,
                                        'rope_scaling': {'rope_type': 'default',
                                                         'mrope_section': [24, 20, 20],
                                                         'mrope_interleaved': True},
                                        'rope_theta': 5000000,
                                        'dtype': 'bfloat16',
                                        'tie_word_embeddings': False},
                        'vision_config': {'model_type': 'qwen3_vl',
                                          'depth': 2,
                                          'hidden_size': 64,
                                          'intermediate_size': 128,
                                          'num_heads': 2,
                                          'out_hidden_size': 512,
                                          'patch_size': 16,
                                          'spatial_merge_size': 2,
                                          'temporal_patch_size': 2,
                                          'num_position_embeddings': 2304,
                                          'deepstack_visual_indexes': [0],
                                          'hidden_act': 'gelu_pytorch_tanh',
                                          'in_channels': 3},
                        'image_token_id': 151655,
                        'video_token_id': 151656,
                        'vision_start_token_id': 151652,
                        'vision_end_token_id': 151653,
                        'tie_word_embeddings': False}},
            {'name': 'llama4 scout-like',
             'config': {'architectures': ['Llama4ForConditionalGeneration'],
                        'model_type': 'llama4',
                        'text_config': {'model_type': 'llama4_text',
                                        'hidden_size': 512,
                                        'intermediate_size': 1024,
                                        'intermediate_size_mlp': 2048,
                                        'num_attention_heads': 8,
                                        'num_key_value_heads': 2,
                                        'head_dim': 128,
                                        'num_hidden_layers': 4,
                                        'vocab_size': 1000,
                                        'attention_chunk_size': 8192,
                                        'interleave_moe_layer_step': 1,
                                        'num_local_experts': 4,
                                        'num_experts_per_tok': 1,
                                        'use_qk_norm': True,
                                        'attn_temperature_tuning': True,
                                        'floor_scale': 8192,
                                        'attn_scale': 0.1,
                                        'rope_scaling': {'factor': 16.0,
                                                         'high_freq_factor': 1.0,
                                                         'low_freq_factor': 1.0,
                                                         'original_max_position_embeddings': 8192,
                                                         'rope_type': 'llama3'},
                                        'rope_theta': 500000.0,
                                        'max_position_embeddings': 10485760,
                                        'torch_dtype': 'bfloat16'},
                        'vision_config': {'model_type': 'llama4_vision_model',
                                          'hidden_size': 64,
                                          'intermediate_size': 128,
                                          'num_attention_heads': 2,
                                          'num_hidden_layers': 1,
                                          'image_size': 336,
                                          'patch_size': 14,
                                          'pixel_shuffle_ratio': 0.5,
                                          'projector_input_dim': 128,
                                          'projector_output_dim': 512,
                                          'vision_output_dim': 64,
                                          'rope_theta': 10000,
                                          'multi_modal_projector_bias': False,
                                          'projector_dropout': 0.0,
                                          'vision_feature_layer': -1,
                                          'vision_feature_select_strategy': 'default'},
                        'boi_token_index': 200080,
                        'eoi_token_index': 200081,
                        'image_token_index': 200092,
                        'torch_dtype': 'bfloat16'}},
            {'name': 'mixtral 8x7b-like',
             'config': {'architectures': ['MixtralForCausalLM'],
                        'model_type': 'mixtral',
                        'hidden_size': 4096,
                        'intermediate_size': 1024,
                        'num_attention_heads': 32,
                        'num_key_value_heads': 8,
                        'num_hidden_layers': 2,
                        'vocab_size': 1000,
                        'num_local_experts': 4,
                        'num_experts_per_tok': 2,
                        'sliding_window': None,
                        'rope_theta': 1000000.0,
                        'torch_dtype': 'bfloat16'}},
            {'name': 'phi-4 like',
             'config': {'architectures': ['Phi3ForCausalLM'],
                        'model_type': 'phi3',
                        'hidden_size': 5120,
                        'intermediate_size': 1024,
                        'num_attention_heads': 40,
                        'num_key_value_heads': 10,
                        'num_hidden_layers': 2,
                        'vocab_size': 1000,
                        'max_position_embeddings': 16384,
                        'original_max_position_embeddings': 16384,
                        'rope_theta': 250000,
                        'rope_scaling': None,
                        'sliding_window': None,
                        'torch_dtype': 'bfloat16'}},
            {'name': 'phi-4-mini like',
             'config': {'architectures': ['Phi3ForCausalLM'],
                        'model_type': 'phi3',
                        'hidden_size': 3072,
                        'intermediate_size': 1024,
                        'num_attention_heads': 24,
                        'num_key_value_heads': 8,
                        'num_hidden_layers': 2,
                        'vocab_size': 1000,
                        'max_position_embeddings': 131072,
                        'original_max_position_embeddings': 4096,
                        'partial_rotary_factor': 0.75,
                        'rope_theta': 10000.0,
                        'rope_scaling': {'long_factor': [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
                                                         1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
                                                         1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
                                                         1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
                                         'short_factor': [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
                                                          1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
                                                          1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
                                                          1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
                                         'type': 'longrope'},
                        'sliding_window': 262144,
                        'torch_dtype': 'bfloat16'}},
            {'name': 'glm-4.5 like',
             'config': {'architectures': ['Glm4MoeForCausalLM'],
                        'model_type': 'glm4_moe',
                        'hidden_size': 512,
                        'intermediate_size': 1024,
                        'moe_intermediate_size': 256,
                        'num_attention_heads': 12,
                        'num_key_value_heads': 2,
                        'head_dim': 128,
                        'num_hidden_layers': 3,
                        'first_k_dense_replace': 1,
                        'n_routed_experts': 8,
                        'num_experts_per_tok': 2,
                        'n_shared_experts': 1,
                        'n_group': 1,
                        'topk_group': 1,
                        'routed_scaling_factor': 2.5,
                        'norm_topk_prob': True,
                        'partial_rotary_factor': 0.5,
                        'use_qk_norm': True,
                        'attention_bias': True,
                        'num_nextn_predict_layers': 1,
                        'vocab_size': 1000,
                        'rope_theta': 1000000,
                        'max_position_embeddings': 131072,
                        'torch_dtype': 'bfloat16'}},
            {'name': 'kimi-k2 like',
             'config': {'architectures': ['DeepseekV3ForCausalLM'],
                        'model_type': 'kimi_k2',
                        'hidden_size': 1024,
                        'intermediate_size': 2048,
                        'moe_intermediate_size': 256,
                        'num_attention_heads': 64,
                        'num_key_value_heads': 64,
                        'num_hidden_layers': 3,
                        'first_k_dense_replace': 1,
                        'n_routed_experts': 8,
                        'num_experts_per_tok': 2,
                        'n_shared_experts': 1,
                        'n_group': 1,
                        'topk_group': 1,
                        'routed_scaling_factor': 2.827,
                        'norm_topk_prob': True,
                        'topk_method': 'noaux_tc',
                        'scoring_func': 'sigmoid',
                        'q_lora_rank': 1536,
                        'kv_lora_rank': 512,
                        'qk_nope_head_dim': 128,
                        'qk_rope_head_dim': 64,
                        'v_head_dim': 128,
                        'vocab_size': 1000,
                        'rope_theta': 50000.0,
                        'max_position_embeddings': 131072,
                        'rope_scaling': {'beta_fast': 1.0,
                                         'beta_slow': 1.0,
                                         'factor': 32.0,
                                         'mscale': 1.0,
                                         'mscale_all_dim': 1.0,
                                         'original_max_position_embeddings': 4096,
                                         'type': 'yarn'},
                        'torch_dtype': 'bfloat16'}},
            {'name': 'qwen3.5 like',
             'capability': [10, 0],
             'config': {'architectures': ['Qwen3_5ForConditionalGeneration'],
                        'model_type': 'qwen3_5',
                        'text_config': {'model_type': 'qwen3_5_text',
                                        'hidden_size': 512,
                                        'intermediate_size': 1024,
                                        'num_attention_heads': 8,
                                        'num_key_value_heads': 2,
                                        'head_dim': 256,
                                        'num_hidden_layers': 4,
                                        'vocab_size': 1000,
                                        'layer_types': ['linear_attention', 'linear_attention', 'linear_attention',
                                                        'full_attention'],
                                        'full_attention_interval': 4,
                                        'attn_output_gate': True,
                                        'linear_conv_kernel_dim': 4,
                                        'linear_key_head_dim': 128,
                                        'linear_value_head_dim': 128,
                                        'linear_num_key_heads': 4,
                                        'linear_num_value_heads': 8,
                                        'rope_parameters': {'rope_type': 'default',
                                                            'rope_theta': 10000000,
                                                            'partial_rotary_factor': 0.25,
                                                            'mrope_section': [11, 11, 10],
                                                            'mrope_interleaved': True},
                                        'max_position_embeddings': 262144,
                                        'dtype': 'bfloat16'},
                        'vision_config': {'model_type': 'qwen3_5',
                                          'depth': 1,
                                          'hidden_size': 64,
                                          'intermediate_size': 128,
                                          'num_heads': 2,
                                          'out_hidden_size': 512,
                                          'patch_size': 16,
                                          'spatial_merge_size': 2,
                                          'temporal_patch_size': 2,
                                          'num_position_embeddings': 2304,
                                          'deepstack_visual_indexes': [],
                                          'in_channels': 3},
                        'image_token_id': 248056,
                        'video_token_id': 248057,
                        'vision_start_token_id': 248053,
                        'vision_end_token_id': 248054,
                        'tie_word_embeddings': False}}]


def _more_cases() -> list[dict]:
    """Cohere2 (Command-R7B shape: sliding_window + 1), OLMo-3, MiniMax-M2,
    Llama-4 text-only, Mistral-Small-3.1, EXAONE-4, Gemma-3n text-only."""
    return [{'name': 'cohere2 command-r7b-like',
             'config': {'architectures': ['Cohere2ForCausalLM'],
                        'model_type': 'cohere2',
                        'hidden_size': 512,
                        'intermediate_size': 1024,
                        'num_attention_heads': 8,
                        'num_key_value_heads': 2,
                        'num_hidden_layers': 8,
                        'vocab_size': 1000,
                        'sliding_window': 4096,
                        'sliding_window_pattern': 4,
                        'logit_scale': 0.25,
                        'rope_theta': 50000.0,
                        'torch_dtype': 'bfloat16'}},
            {'name': 'olmo3 like',
             'config': {'architectures': ['Olmo3ForCausalLM'],
                        'model_type': 'olmo3',
                        'hidden_size': 512,
                        'intermediate_size': 1024,
                        'num_attention_heads': 8,
                        'num_key_value_heads': 8,
                        'num_hidden_layers': 4,
                        'vocab_size': 1000,
                        'sliding_window': 4096,
                        'layer_types': ['sliding_attention', 'sliding_attention', 'sliding_attention', 'full_attention'],
                        'rope_theta': 500000,
                        'torch_dtype': 'bfloat16'}},
            {'name': 'minimax-m2 like',
             'config': {'architectures': ['MiniMaxM2ForCausalLM'],
                        'model_type': 'minimax_m2',
                        'hidden_size': 512,
                        'intermediate_size': 256,
                        'num_attention_heads': 8,
                        'num_key_value_heads': 2,
                        'head_dim': 128,
                        'num_hidden_layers': 2,
                        'vocab_size': 1000,
                        'num_local_experts': 4,
                        'num_experts_per_tok': 2,
                        'rotary_dim': 64,
                        'use_qk_norm': True,
                        'qk_norm_type': 'per_layer',
                        'scoring_func': 'sigmoid',
                        'use_routing_bias': True,
                        'rope_theta': 5000000,
                        'torch_dtype': 'bfloat16'}},
            {'name': 'llama4 text-only',
             'config': {'architectures': ['Llama4ForCausalLM'],
                        'model_type': 'llama4_text',
                        'hidden_size': 512,
                        'intermediate_size': 1024,
                        'intermediate_size_mlp': 2048,
                        'num_attention_heads': 8,
                        'num_key_value_heads': 2,
                        'head_dim': 128,
                        'num_hidden_layers': 4,
                        'vocab_size': 1000,
                        'attention_chunk_size': 8192,
                        'interleave_moe_layer_step': 1,
                        'num_local_experts': 4,
                        'num_experts_per_tok': 1,
                        'use_qk_norm': True,
                        'rope_theta': 500000.0,
                        'torch_dtype': 'bfloat16'}},
            {'name': 'mistral-small-3.1 like',
             'config': {'architectures': ['Mistral3ForConditionalGeneration'],
                        'model_type': 'mistral3',
                        'text_config': {'model_type': 'mistral',
                                        'hidden_size': 512,
                                        'intermediate_size': 1024,
                                        'num_attention_heads': 8,
                                        'num_key_value_heads': 2,
                                        'head_dim': 128,
                                        'num_hidden_layers': 2,
                                        'vocab_size': 1000,
                                        'sliding_window': None,
                                        'rope_theta': 1000000000.0},
                        'vision_config': {'model_type': 'pixtral',
                                          'hidden_size': 64,
                                          'intermediate_size': 128,
                                          'num_attention_heads': 2,
                                          'num_hidden_layers': 1,
                                          'head_dim': 32,
                                          'image_size': 224,
                                          'patch_size': 14},
                        'image_token_index': 10,
                        'spatial_merge_size': 2,
                        'multimodal_projector_bias': False,
                        'projector_hidden_act': 'gelu',
                        'vision_feature_layer': -1,
                        'torch_dtype': 'bfloat16'}},
            {'name': 'exaone4 like',
             'config': {'architectures': ['Exaone4ForCausalLM'],
                        'model_type': 'exaone4',
                        'hidden_size': 512,
                        'intermediate_size': 1024,
                        'num_attention_heads': 8,
                        'num_key_value_heads': 2,
                        'head_dim': 64,
                        'num_hidden_layers': 4,
                        'vocab_size': 1000,
                        'sliding_window': 4096,
                        'layer_types': ['sliding_attention', 'sliding_attention', 'sliding_attention', 'full_attention'],
                        'rope_theta': 1000000,
                        'torch_dtype': 'bfloat16'}},
            {'name': 'gemma3n text-only',
             'config': {'architectures': ['Gemma3nForCausalLM'],
                        'model_type': 'gemma3n_text',
                        'hidden_size': 256,
                        'intermediate_size': [512, 512, 512, 512, 512, 512],
                        'num_attention_heads': 4,
                        'num_key_value_heads': 1,
                        'head_dim': 64,
                        'num_hidden_layers': 6,
                        'vocab_size': 1000,
                        'vocab_size_per_layer_input': 1000,
                        'hidden_size_per_layer_input': 32,
                        'sliding_window': 512,
                        'num_kv_shared_layers': 2,
                        'layer_types': ['sliding_attention', 'sliding_attention', 'sliding_attention', 'full_attention',
                                        'sliding_attention', 'full_attention'],
                        'activation_sparsity_pattern': [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                        'laurel_rank': 8,
                        'altup_num_inputs': 4,
                        'final_logit_softcapping': 30.0,
                        'torch_dtype': 'bfloat16'}}]


def _moe_and_mla_cases() -> list[dict]:
    """Qwen3-VL-MoE, Phi-3.5-MoE (model-level window), DeepSeek-V2-Lite (MLA
    without q_lora_rank), Seed-OSS."""
    return [{'name': 'qwen3-vl-moe like',
             'config': {'architectures': ['Qwen3VLMoeForConditionalGeneration'],
                        'model_type': 'qwen3_vl_moe',
                        'text_config': {'model_type': 'qwen3_vl_moe_text',
                                        'hidden_size': 512,
                                        'intermediate_size': 1024,
                                        'moe_intermediate_size': 256,
                                        'num_attention_heads': 8,
                                        'num_key_value_heads': 2,
                                        'head_dim': 128,
                                        'num_hidden_layers': 2,
                                        'vocab_size': 1000,
                                        'num_experts': 4,
                                        'num_experts_per_tok': 2,
                                        'decoder_sparse_step': 1,
                                        'norm_topk_prob': True,
                                        'rope_scaling': {'rope_type': 'default',
                                                         'mrope_section': [24, 20, 20],
                                                         'mrope_interleaved': True},
                                        'rope_theta': 5000000,
                                        'dtype': 'bfloat16'},
                        'vision_config': {'model_type': 'qwen3_vl_moe',
                                          'depth': 2,
                                          'hidden_size': 64,
                                          'intermediate_size': 128,
                                          'num_heads': 2,
                                          'out_hidden_size': 512,
                                          'patch_size': 16,
                                          'spatial_merge_size': 2,
                                          'temporal_patch_size': 2,
                                          'num_position_embeddings': 2304,
                                          'deepstack_visual_indexes': [0],
                                          'hidden_act': 'gelu_pytorch_tanh',
                                          'in_channels': 3},
                        'image_token_id': 151655,
                        'video_token_id': 151656,
                        'vision_start_token_id': 151652,
                        'vision_end_token_id': 151653,
                        'tie_word_embeddings': False}},
            {'name': 'phi-3.5-moe like',
             'config': {'architectures': ['PhiMoEForCausalLM'],
                        'model_type': 'phimoe',
                        'hidden_size': 512,
                        'intermediate_size': 256,
                        'num_attention_heads': 8,
                        'num_key_value_heads': 2,
                        'num_hidden_layers': 2,
                        'vocab_size': 1000,
                        'num_local_experts': 4,
                        'num_experts_per_tok': 2,
                        'sliding_window': 131072,
                        'rope_theta': 10000.0,
                        'torch_dtype': 'bfloat16'}},
            {'name': 'deepseek-v2-lite like',
             'config': {'architectures': ['DeepseekV2ForCausalLM'],
                        'model_type': 'deepseek_v2',
                        'hidden_size': 512,
                        'intermediate_size': 1024,
                        'moe_intermediate_size': 256,
                        'num_attention_heads': 16,
                        'num_key_value_heads': 16,
                        'num_hidden_layers': 2,
                        'first_k_dense_replace': 1,
                        'n_routed_experts': 4,
                        'num_experts_per_tok': 2,
                        'n_shared_experts': 1,
                        'q_lora_rank': None,
                        'kv_lora_rank': 512,
                        'qk_nope_head_dim': 128,
                        'qk_rope_head_dim': 64,
                        'v_head_dim': 128,
                        'vocab_size': 1000,
                        'topk_method': 'greedy',
                        'n_group': 1,
                        'topk_group': 1,
                        'torch_dtype': 'bfloat16'}},
            {'name': 'seed-oss like',
             'config': {'architectures': ['SeedOssForCausalLM'],
                        'model_type': 'seed_oss',
                        'hidden_size': 512,
                        'intermediate_size': 1024,
                        'num_attention_heads': 8,
                        'num_key_value_heads': 2,
                        'head_dim': 128,
                        'num_hidden_layers': 2,
                        'vocab_size': 1000,
                        'attention_bias': True,
                        'rope_theta': 10000000.0,
                        'torch_dtype': 'bfloat16'}}]


def _hybrid_cases() -> list[dict]:
    """ERNIE-4.5-MoE, Qwen3.5-MoE (Gated DeltaNet + gated attention; sm100
    as for Qwen3-Next), Granite-4 hybrid (mamba + attention layer_types)."""
    return [{'name': 'ernie-4.5 moe like',
             'config': {'architectures': ['Ernie4_5_MoeForCausalLM'],
                        'model_type': 'ernie4_5_moe',
                        'hidden_size': 512,
                        'intermediate_size': 1024,
                        'moe_intermediate_size': 256,
                        'num_attention_heads': 8,
                        'num_key_value_heads': 2,
                        'num_hidden_layers': 2,
                        'vocab_size': 1000,
                        'moe_num_experts': 4,
                        'moe_k': 2,
                        'moe_layer_start_index': 1,
                        'moe_layer_interval': 1,
                        'use_bias': False,
                        'rope_theta': 500000,
                        'torch_dtype': 'bfloat16'}},
            {'name': 'qwen3.5-moe like',
             'capability': [10, 0],
             'config': {'architectures': ['Qwen3_5MoeForConditionalGeneration'],
                        'model_type': 'qwen3_5_moe',
                        'text_config': {'model_type': 'qwen3_5_moe_text',
                                        'hidden_size': 512,
                                        'moe_intermediate_size': 256,
                                        'shared_expert_intermediate_size': 256,
                                        'num_experts': 4,
                                        'num_experts_per_tok': 2,
                                        'num_attention_heads': 8,
                                        'num_key_value_heads': 2,
                                        'head_dim': 256,
                                        'num_hidden_layers': 4,
                                        'vocab_size': 1000,
                                        'layer_types': ['linear_attention', 'linear_attention', 'linear_attention',
                                                        'full_attention'],
                                        'full_attention_interval': 4,
                                        'attn_output_gate': True,
                                        'linear_conv_kernel_dim': 4,
                                        'linear_key_head_dim': 128,
                                        'linear_value_head_dim': 128,
                                        'linear_num_key_heads': 4,
                                        'linear_num_value_heads': 8,
                                        'rope_parameters': {'rope_type': 'default',
                                                            'rope_theta': 10000000,
                                                            'partial_rotary_factor': 0.25,
                                                            'mrope_section': [11, 11, 10],
                                                            'mrope_interleaved': True},
                                        'max_position_embeddings': 262144,
                                        'dtype': 'bfloat16'},
                        'vision_config': {'model_type': 'qwen3_5_moe',
                                          'depth': 1,
                                          'hidden_size': 64,
                                          'intermediate_size': 128,
                                          'num_heads': 2,
                                          'out_hidden_size': 512,
                                          'patch_size': 16,
                                          'spatial_merge_size': 2,
                                          'temporal_patch_size': 2,
                                          'num_position_embeddings': 2304,
                                          'deepstack_visual_indexes': [],
                                          'in_channels': 3},
                        'image_token_id': 248056,
                        'video_token_id': 248057,
                        'vision_start_token_id': 248053,
                        'vision_end_token_id': 248054,
                        'tie_word_embeddings': False}},
            {'name': 'granite-4 hybrid like',
             'config': {'architectures': ['GraniteMoeHybridForCausalLM'],
                        'model_type': 'granitemoehybrid',
                        'hidden_size': 512,
                        'intermediate_size': 1024,
                        'shared_intermediate_size': 1024,
                        'num_attention_heads': 8,
                        'num_key_value_heads': 2,
                        'num_hidden_layers': 4,
                        'vocab_size': 1000,
                        'layer_types': ['mamba', 'mamba', 'mamba', 'attention'],
                        'num_local_experts': 0,
                        'num_experts_per_tok': 0,
                        'mamba_n_heads': 16,
                        'mamba_d_head': 64,
                        'mamba_d_state': 128,
                        'mamba_n_groups': 1,
                        'mamba_expand': 2,
                        'mamba_d_conv': 4,
                        'mamba_chunk_size': 256,
                        'position_embedding_type': 'nope',
                        'attention_multiplier': 0.0078125,
                        'embedding_multiplier': 12,
                        'logits_scaling': 8,
                        'residual_multiplier': 0.22,
                        'torch_dtype': 'bfloat16'}}]


def _dense(arch: str, model_type: str, **fields) -> dict:
    """A small dense decoder config: 4 layers, vocab 1000, bfloat16, with
    the checkpoint's attention fields given in ``fields``."""
    return {"architectures": [arch], "model_type": model_type, "num_hidden_layers": 4, "vocab_size": 1000,
            "intermediate_size": 1024, "torch_dtype": "bfloat16", **fields}


def _registry_dense_cases() -> list[dict]:
    """Dense decoders of vLLM's registry, attention fields as the named
    checkpoints publish them (layers, vocab and MLP cut down). Not here:
    ExaoneForCausalLM, InternLM2ForCausalLM, MiniCPMForCausalLM,
    OrionForCausalLM, SolarForCausalLM, TeleChat2ForCausalLM and
    MiMoForCausalLM: transformers has no config class for their model types,
    so vLLM builds them only with the checkpoint's remote code."""
    return [
        {"name": "mistral-nemo like (head_dim 128 != hidden // heads)", "config": _dense(
            "MistralForCausalLM", "mistral", hidden_size=5120, num_attention_heads=32, num_key_value_heads=8,
            head_dim=128, sliding_window=None, rope_theta=1000000.0)},
        {"name": "mistral-small-24b like", "config": _dense(
            "MistralForCausalLM", "mistral", hidden_size=5120, num_attention_heads=32, num_key_value_heads=8,
            head_dim=128, sliding_window=None, rope_theta=100000000.0)},
        {"name": "qwen2.5-0.5b like", "config": _dense(
            "Qwen2ForCausalLM", "qwen2", hidden_size=896, num_attention_heads=14, num_key_value_heads=2,
            use_sliding_window=False, sliding_window=32768, max_window_layers=21, tie_word_embeddings=True)},
        {"name": "phi-3-medium-128k like (longrope, window)", "config": _dense(
            "Phi3ForCausalLM", "phi3", hidden_size=5120, num_attention_heads=40, num_key_value_heads=10,
            sliding_window=131072, max_position_embeddings=131072, original_max_position_embeddings=4096,
            rope_scaling={"type": "longrope", "long_factor": [1.0] * 64, "short_factor": [1.0] * 64})},
        {"name": "gemma-7b like", "config": _dense(
            "GemmaForCausalLM", "gemma", hidden_size=3072, num_attention_heads=16, num_key_value_heads=16,
            head_dim=256, hidden_act="gelu_pytorch_tanh")},
        {"name": "gemma-2b like (MQA)", "config": _dense(
            "GemmaForCausalLM", "gemma", hidden_size=2048, num_attention_heads=8, num_key_value_heads=1,
            head_dim=256, hidden_act="gelu_pytorch_tanh")},
        {"name": "falcon-7b like (multi_query, parallel_attn)", "config": _dense(
            "FalconForCausalLM", "falcon", hidden_size=4544, num_attention_heads=71, multi_query=True,
            new_decoder_architecture=False, parallel_attn=True, alibi=False, bias=False)},
        {"name": "falcon-40b like (new_decoder_architecture)", "config": _dense(
            "FalconForCausalLM", "falcon", hidden_size=8192, num_attention_heads=128, num_kv_heads=8,
            new_decoder_architecture=True, parallel_attn=True, alibi=False, bias=False)},
        {"name": "falcon-rw-1b like (alibi)", "config": _dense(
            "FalconForCausalLM", "falcon", hidden_size=2048, num_attention_heads=32, multi_query=False,
            new_decoder_architecture=False, parallel_attn=False, alibi=True, bias=True)},
        {"name": "bloom-560m like (alibi)", "config": {
            "architectures": ["BloomForCausalLM"], "model_type": "bloom", "hidden_size": 1024, "n_head": 16,
            "n_layer": 4, "vocab_size": 1000, "torch_dtype": "float16"}},
        {"name": "gpt2 like", "config": {
            "architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": 768, "n_head": 12, "n_layer": 4,
            "vocab_size": 1000, "n_positions": 1024}},
        {"name": "gpt-j-6b like", "config": {
            "architectures": ["GPTJForCausalLM"], "model_type": "gptj", "n_embd": 4096, "n_head": 16, "n_layer": 4,
            "rotary_dim": 64, "vocab_size": 1000, "torch_dtype": "float16"}},
        {"name": "opt-125m like", "config": _dense(
            "OPTForCausalLM", "opt", hidden_size=768, num_attention_heads=12, ffn_dim=3072,
            word_embed_proj_dim=768, do_layer_norm_before=True, torch_dtype="float16")},
        {"name": "stablelm-2-1.6b like", "config": _dense(
            "StableLmForCausalLM", "stablelm", hidden_size=2048, num_attention_heads=32, num_key_value_heads=32,
            partial_rotary_factor=0.25, use_qkv_bias=True)},
        {"name": "granite-3.1-8b like", "config": _dense(
            "GraniteForCausalLM", "granite", hidden_size=4096, num_attention_heads=32, num_key_value_heads=8,
            attention_multiplier=0.0078125, embedding_multiplier=12.0, residual_multiplier=0.22, logits_scaling=16.0)},
        {"name": "nemotron-mini-4b like", "config": _dense(
            "NemotronForCausalLM", "nemotron", hidden_size=3072, num_attention_heads=24, num_key_value_heads=8,
            head_dim=128, partial_rotary_factor=0.5, hidden_act="relu2")},
        {"name": "command-r like", "config": _dense(
            "CohereForCausalLM", "cohere", hidden_size=8192, num_attention_heads=64, num_key_value_heads=8,
            logit_scale=0.0625, use_qk_norm=False)},
        {"name": "glm-4-9b-0414 like", "config": _dense(
            "Glm4ForCausalLM", "glm4", hidden_size=4096, num_attention_heads=32, num_key_value_heads=2,
            head_dim=128, partial_rotary_factor=0.5, attention_bias=True)},
        {"name": "chatglm3-6b like", "config": {
            "architectures": ["ChatGLMModel"], "model_type": "chatglm", "hidden_size": 4096,
            "num_attention_heads": 32, "multi_query_attention": True, "multi_query_group_num": 2,
            "kv_channels": 128, "num_layers": 4, "padded_vocab_size": 1000, "ffn_hidden_size": 1024,
            "seq_length": 8192, "torch_dtype": "float16", "add_qkv_bias": True, "original_rope": True,
            "tie_word_embeddings": False}},
        {"name": "chatglm without multi_query_attention", "config": {
            "architectures": ["ChatGLMModel"], "model_type": "chatglm", "hidden_size": 2048,
            "num_attention_heads": 16, "multi_query_attention": False, "multi_query_group_num": 2,
            "num_layers": 2, "padded_vocab_size": 1000, "ffn_hidden_size": 1024, "seq_length": 2048,
            "torch_dtype": "float16", "original_rope": True, "tie_word_embeddings": False}},
        {"name": "ernie-4.5-0.3b like", "config": _dense(
            "Ernie4_5ForCausalLM", "ernie4_5", hidden_size=1024, num_attention_heads=16, num_key_value_heads=2,
            head_dim=128, use_bias=False, rope_theta=500000)},
        {"name": "minicpm3-4b like", "config": _dense(
            "MiniCPM3ForCausalLM", "minicpm3", hidden_size=2560, num_attention_heads=40, num_key_value_heads=40,
            qk_nope_head_dim=64, qk_rope_head_dim=32, q_lora_rank=768, kv_lora_rank=256, v_head_dim=64,
            scale_emb=12, dim_model_base=256, scale_depth=1.4)},
        {"name": "apertus-8b like", "config": _dense(
            "ApertusForCausalLM", "apertus", hidden_size=4096, num_attention_heads=32, num_key_value_heads=8,
            hidden_act="xielu")},
        {"name": "hy-v3 like", "config": _dense(
            "HYV3ForCausalLM", "hy_v3", hidden_size=4096, num_attention_heads=32, num_key_value_heads=8,
            head_dim=128, first_k_dense_replace=1, num_experts=4, num_experts_per_tok=2, num_shared_experts=1,
            expert_hidden_dim=256, route_norm=True)},
    ]


def _registry_moe_hybrid_cases() -> list[dict]:
    """MoE and hybrid (mamba / linear-attention) decoders of vLLM's
    registry, shaped like the named checkpoints (layers and experts cut).
    Not here: Step3p5ForCausalLM (vLLM reads Step-3.7 router fields its
    transformers config class does not default)."""
    return [
        {"name": "qwen1.5-moe-a2.7b like", "config": _dense(
            "Qwen2MoeForCausalLM", "qwen2_moe", hidden_size=2048, num_attention_heads=16, num_key_value_heads=16,
            num_experts=4, num_experts_per_tok=2, moe_intermediate_size=256, shared_expert_intermediate_size=512,
            use_sliding_window=False, sliding_window=32768, max_window_layers=21, decoder_sparse_step=1)},
        {"name": "qwen3-moe sliding window on", "config": _dense(
            "Qwen3MoeForCausalLM", "qwen3_moe", hidden_size=1024, num_attention_heads=16, num_key_value_heads=4,
            head_dim=128, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=256,
            use_sliding_window=True, sliding_window=4096, max_window_layers=4)},
        {"name": "olmoe-1b-7b like", "config": _dense(
            "OlmoeForCausalLM", "olmoe", hidden_size=2048, num_attention_heads=16, num_key_value_heads=16,
            num_experts=4, num_experts_per_tok=2, clip_qkv=None)},
        {"name": "granite-3.0-moe like", "config": _dense(
            "GraniteMoeForCausalLM", "granitemoe", hidden_size=1024, num_attention_heads=16,
            num_key_value_heads=8, num_local_experts=4, num_experts_per_tok=2, attention_multiplier=0.015625)},
        {"name": "granite moe shared like", "config": _dense(
            "GraniteMoeSharedForCausalLM", "granitemoeshared", hidden_size=1024, num_attention_heads=16,
            num_key_value_heads=8, num_local_experts=4, num_experts_per_tok=2, shared_intermediate_size=512,
            attention_multiplier=0.015625)},
        {"name": "dbrx like", "config": {
            "architectures": ["DbrxForCausalLM"], "model_type": "dbrx", "d_model": 1024, "n_heads": 16,
            "n_layers": 2, "max_seq_len": 32768, "vocab_size": 1000, "torch_dtype": "bfloat16",
            "attn_config": {"kv_n_heads": 8, "clip_qkv": 8, "rope_theta": 500000},
            "ffn_config": {"moe_num_experts": 4, "moe_top_k": 2, "ffn_hidden_size": 256}}},
        {"name": "jamba-mini like", "config": _dense(
            "JambaForCausalLM", "jamba", hidden_size=1024, num_attention_heads=16, num_key_value_heads=8,
            num_hidden_layers=8, attn_layer_period=8, attn_layer_offset=4, expert_layer_period=2,
            expert_layer_offset=1, num_experts=4, num_experts_per_tok=2, mamba_d_state=16, mamba_d_conv=4,
            mamba_expand=2, mamba_dt_rank=64)},
        {"name": "nemotron-h 8b like", "capability": [10, 0], "config": _dense(
            "NemotronHForCausalLM", "nemotron_h", hidden_size=1024, num_attention_heads=8, num_key_value_heads=2,
            head_dim=128, num_hidden_layers=6, hybrid_override_pattern="M-M*-", mamba_num_heads=16,
            mamba_head_dim=64, ssm_state_size=128, n_groups=8, conv_kernel=4, expand=2, chunk_size=128,
            mamba_hidden_act="silu", mlp_hidden_act="relu2")},
        # Nemotron-3: the layers named in layers_block_type (vLLM's model reads them
        # back through the config's hybrid_override_pattern property); a stale
        # num_hidden_layers is ignored
        {"name": "nemotron-3 nano like (layers_block_type)", "capability": [10, 0], "config": _dense(
            "NemotronHForCausalLM", "nemotron_h", hidden_size=1024, num_attention_heads=8, num_key_value_heads=2,
            head_dim=128, num_hidden_layers=52, mamba_num_heads=16, mamba_head_dim=64, ssm_state_size=128,
            n_groups=8, conv_kernel=4, expand=2, chunk_size=128, mamba_hidden_act="silu", mlp_hidden_act="relu2",
            layers_block_type=["linear_attention", "mlp", "linear_attention", "full_attention", "mlp",
                               "full_attention"])},
        {"name": "falcon-h1 like", "capability": [10, 0], "config": _dense(
            "FalconH1ForCausalLM", "falcon_h1", hidden_size=1024, num_attention_heads=8, num_key_value_heads=2,
            head_dim=128, mamba_d_ssm=1024, mamba_n_heads=16, mamba_d_head=64, mamba_d_state=128,
            mamba_n_groups=1, mamba_d_conv=4, mamba_expand=2, mamba_chunk_size=128)},
        # zamba2.py numbers its shared-block Attention modules attn.0, attn.1, ... in
        # hybrid-layer order; attn-select lists them by decoder layer ("renumber")
        {"name": "zamba2-1.2b like", "capability": [10, 0], "renumber": True, "config": {
            "architectures": ["Zamba2ForCausalLM"], "model_type": "zamba2", "hidden_size": 1024,
            "num_attention_heads": 16, "num_key_value_heads": 16, "num_hidden_layers": 6, "vocab_size": 1000,
            "intermediate_size": 1024, "torch_dtype": "bfloat16", "n_mamba_heads": 16, "mamba_headdim": 128,
            "mamba_d_state": 64, "mamba_ngroups": 1, "hybrid_layer_ids": [2, 5],
            "layers_block_type": ["mamba", "mamba", "hybrid", "mamba", "mamba", "hybrid"],
            "num_mem_blocks": 1, "use_shared_attention_adapter": False, "use_mem_rope": True}},
        {"name": "lfm2-1.2b like", "config": _dense(
            "Lfm2ForCausalLM", "lfm2", hidden_size=1024, num_attention_heads=16, num_key_value_heads=8,
            num_hidden_layers=6, conv_L_cache=3, conv_dim=1024, conv_dim_out=1024, conv_bias=False,
            block_dim=1024, block_ff_dim=1024, block_multiple_of=256, block_ffn_dim_multiplier=1.0,
            block_auto_adjust_ff_dim=True, norm_eps=1e-5,
            layer_types=["conv", "conv", "full_attention", "conv", "conv", "full_attention"])},
        {"name": "lfm2-moe like", "config": _dense(
            "Lfm2MoeForCausalLM", "lfm2_moe", hidden_size=1024, num_attention_heads=16, num_key_value_heads=8,
            num_hidden_layers=4, num_dense_layers=1, num_experts=4, num_experts_per_tok=2,
            moe_intermediate_size=256, layer_types=["conv", "full_attention", "conv", "full_attention"])},
        {"name": "glm-4.7-flash like (glm4_moe_lite MLA)", "config": _dense(
            "Glm4MoeLiteForCausalLM", "glm4_moe_lite", hidden_size=1024, num_attention_heads=20,
            num_key_value_heads=20, kv_lora_rank=512, q_lora_rank=768, qk_rope_head_dim=64, v_head_dim=256,
            qk_nope_head_dim=192, n_routed_experts=4, n_shared_experts=1, num_experts_per_tok=2,
            moe_intermediate_size=256, first_k_dense_replace=1, n_group=1, topk_group=1)},
        {"name": "exaone-moe like (sliding layer_types)", "config": _dense(
            "ExaoneMoeForCausalLM", "exaone_moe", hidden_size=1024, num_attention_heads=16, num_key_value_heads=4,
            head_dim=128, sliding_window=128, num_experts=4, num_experts_per_tok=2, num_shared_experts=1,
            moe_intermediate_size=256,
            layer_types=["sliding_attention", "sliding_attention", "sliding_attention", "full_attention"])},
        # DeepSeek-V3's MLA layers divide nothing by the head count: 0 query heads build, and ask with num_heads 0
        {"name": "deepseek-v3 like with 0 query heads (MLA)", "config": _dense(
            "DeepseekV3ForCausalLM", "deepseek_v3", hidden_size=1024, num_attention_heads=0, num_key_value_heads=0,
            kv_lora_rank=512, q_lora_rank=768, qk_rope_head_dim=64, qk_nope_head_dim=128, v_head_dim=128,
            moe_intermediate_size=256, n_routed_experts=4, n_shared_experts=1, num_experts_per_tok=2,
            first_k_dense_replace=1, n_group=1, topk_group=1)},
        # Rnj-1: chunked layers take sliding_window (and must run on TRITON_ATTN), the others none of their own
        {"name": "rnj1 like (chunked, sliding, full)", "config": _dense(
            "Rnj1ForCausalLM", "gemma3_text", hidden_size=1024, num_attention_heads=8, num_key_value_heads=4,
            head_dim=128, sliding_window=512,
            layer_types=["chunked_attention", "chunked_attention", "sliding_attention", "full_attention"],
            rope_parameters={"chunked_attention": {"rope_type": "default", "rope_theta": 10000.0}})},
        # K-EXAONE 2.0: a window per layer (sliding_windows; null and 0 as they are); without layer_types the
        # config class makes every fourth layer full; a kind other than full_attention is a sliding layer
        {"name": "exaone-moe like (sliding_windows)", "config": _dense(
            "ExaoneMoeForCausalLM", "exaone_moe", hidden_size=1024, num_attention_heads=16, num_key_value_heads=4,
            head_dim=128, sliding_window=128, num_experts=4, num_experts_per_tok=2, num_shared_experts=1,
            moe_intermediate_size=256, sliding_windows=[None, 256, 0, 1024])},
        {"name": "exaone-moe like (another layer kind)", "config": _dense(
            "ExaoneMoeForCausalLM", "exaone_moe", hidden_size=1024, num_attention_heads=16, num_key_value_heads=4,
            sliding_window=128, num_experts=4, num_experts_per_tok=2, num_shared_experts=1,
            moe_intermediate_size=256,
            layer_types=["chunked_attention", "sliding_attention", "full_attention", "full_attention"],
            sliding_windows=[64, 256])},
        {"name": "cohere2-moe like", "config": _dense(
            "Cohere2MoeForCausalLM", "cohere2_moe", hidden_size=1024, num_attention_heads=16,
            num_key_value_heads=4, head_dim=128, sliding_window=4096, num_experts=4, num_experts_per_tok=2,
            moe_intermediate_size=256,
            layer_types=["sliding_attention", "sliding_attention", "sliding_attention", "full_attention"])},
        {"name": "afmoe like (sliding every 4th full)", "config": _dense(
            "AfmoeForCausalLM", "afmoe", hidden_size=1024, num_attention_heads=16, num_key_value_heads=4,
            head_dim=128, sliding_window=1024, global_attn_every_n_layers=4, num_dense_layers=1, num_experts=4,
            num_experts_per_tok=2, num_shared_experts=1, moe_intermediate_size=256, score_func="sigmoid",
            route_norm=True, route_scale=1.0, n_group=1, topk_group=1, mup_enabled=False)},
        {"name": "granite swa like", "config": _dense(
            "GraniteSWAForCausalLM", "granite_swa", hidden_size=1024, num_attention_heads=16,
            num_key_value_heads=8, sliding_window=512,
            layer_types=["sliding_attention", "sliding_attention", "sliding_attention", "full_attention"])},
        {"name": "qwen2-moe use_sliding_window (alternate layers, no window in vLLM)", "config": _dense(
            "Qwen2MoeForCausalLM", "qwen2_moe", hidden_size=1024, num_attention_heads=16, num_key_value_heads=16,
            num_experts=4, num_experts_per_tok=2, moe_intermediate_size=256, shared_expert_intermediate_size=512,
            use_sliding_window=True, sliding_window=4096, max_window_layers=4)},
        {"name": "granite with layer_types, attention_sinks false", "config": _dense(
            "GraniteForCausalLM", "granite", hidden_size=1024, num_attention_heads=16, num_key_value_heads=8,
            sliding_window=512, attention_sinks=False,
            layer_types=["full_attention", "sliding_attention", "sliding_attention", "sliding_attention"])},
        {"name": "granite-moe swa class-default layer_types", "config": _dense(
            "GraniteMoeSWAForCausalLM", "granitemoe_swa", hidden_size=1024, num_attention_heads=16,
            num_key_value_heads=8, num_local_experts=4, num_experts_per_tok=2, shared_intermediate_size=512)},
    ]


def _qwen3_5_text(**fields) -> dict:
    """A Qwen3.5 text config (Qwen/Qwen3.5-27B's attention fields; layers,
    vocab and linear-attention heads cut)."""
    return {"model_type": "qwen3_5_text", "hidden_size": 1024, "intermediate_size": 2048,
            "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 256, "num_hidden_layers": 4,
            "vocab_size": 1000, "layer_types": ["linear_attention"] * 3 + ["full_attention"],
            "full_attention_interval": 4, "attn_output_gate": True, "linear_conv_kernel_dim": 4,
            "linear_key_head_dim": 128, "linear_value_head_dim": 128, "linear_num_key_heads": 16,
            "linear_num_value_heads": 16, "max_position_embeddings": 262144, "dtype": "bfloat16",
            "rope_parameters": {"rope_type": "default", "rope_theta": 10000000, "partial_rotary_factor": 0.25,
                                "mrope_section": [11, 11, 10], "mrope_interleaved": True}, **fields}


def _bailing_hybrid(**fields) -> dict:
    """BailingMoeV2_5ForCausalLM over BailingHybridConfig, attention fields
    shaped like inclusionAI/Ring-2.5-1T's (experts, layers, vocab cut)."""
    return {"architectures": ["BailingMoeV2_5ForCausalLM"], "model_type": "bailing_hybrid", "hidden_size": 1024,
            "intermediate_size": 2048, "moe_intermediate_size": 256, "num_attention_heads": 64,
            "num_key_value_heads": 8, "head_dim": 128, "kv_lora_rank": 512, "q_lora_rank": 1536,
            "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "num_experts": 4,
            "num_experts_per_tok": 2, "num_shared_experts": 1, "first_k_dense_replace": 1, "n_group": 1,
            "topk_group": 1, "vocab_size": 1000, "torch_dtype": "bfloat16", "use_bias": False, "use_qkv_bias": False,
            "linear_silu": False, "use_linear_silu": False, "partial_rotary_factor": 0.5, "group_norm_size": 8,
            "moe_shared_expert_intermediate_size": 256, "score_function": "sigmoid",
            "moe_router_enable_expert_bias": True, "use_qk_norm": True, "rope_theta": 6000000,
            "max_position_embeddings": 131072, **fields}


def _bailing_v3(**fields) -> dict:
    """BailingMoeV3ForCausalLM over the same BailingHybridConfig fields; its
    KDA layers need no_kda_lora and read short_conv_kernel_size."""
    return _bailing_hybrid(**{"architectures": ["BailingMoeV3ForCausalLM"], "no_kda_lora": True,
                              "short_conv_kernel_size": 4, **fields})


def _bailing_v3_vl(**text_fields) -> dict:
    """BailingMoeV3VLForConditionalGeneration: vLLM's BailingMoeV3VLConfig
    over _bailing_v3's text fields, a small vision tower beside them."""
    text = {k: v for k, v in _bailing_v3(**text_fields).items() if k != "architectures"}
    return {"architectures": ["BailingMoeV3VLForConditionalGeneration"], "model_type": "bailing_moe_v3_vl",
            "torch_dtype": "bfloat16", "text_config": text,
            "vision_config": {"depth": 2, "hidden_size": 256, "num_heads": 4, "intermediate_size": 512,
                              "out_hidden_size": 1024}}


def _registry_newer_cases() -> list[dict]:
    """Newer registry architectures, attention fields as the named
    checkpoints publish them. Not here: DeciLMForCausalLM (nemotron-nas),
    ExaoneForCausalLM, BailingMoe*/Sarvam*/Pangu*/Plamo3/Step1/TeleFLM/
    Param2MoE: their config classes are the checkpoints' remote code (no
    transformers class), which the oracle cannot load. DeepseekV4 is in
    _bypass_cases (its layers never call get_attn_backend)."""
    no_layer_types = {k: v for k, v in _qwen3_5_text().items() if k != "layer_types"}
    return [
        {"name": "qwen3.5 text-only (Qwen3_5ForCausalLM)", "capability": [10, 0],
         "config": {**_qwen3_5_text(), "architectures": ["Qwen3_5ForCausalLM"]}},
        {"name": "qwen3.5 text-only, class-default layer_types", "capability": [10, 0],
         "config": {**no_layer_types, "architectures": ["Qwen3_5ForCausalLM"], "num_hidden_layers": 8}},
        {"name": "qwen3.5-moe text-only", "capability": [10, 0], "config": _qwen3_5_text(
            model_type="qwen3_5_moe_text", architectures=["Qwen3_5MoeForCausalLM"], num_experts=4,
            num_experts_per_tok=2, moe_intermediate_size=256, shared_expert_intermediate_size=256)},
        # two MLA sub-layers per decoder layer; ModelConfig counts num_layers
        {"name": "longcat-flash-chat like", "config": {
            "architectures": ["LongcatFlashForCausalLM"], "model_type": "longcat_flash", "hidden_size": 1024,
            "num_layers": 2, "num_attention_heads": 64, "kv_lora_rank": 512, "q_lora_rank": 1536,
            "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "n_routed_experts": 4,
            "zero_expert_num": 2, "zero_expert_type": "identity", "moe_topk": 2, "ffn_hidden_size": 1024,
            "expert_ffn_hidden_size": 256, "vocab_size": 1000, "mla_scale_q_lora": True,
            "mla_scale_kv_lora": True, "routed_scaling_factor": 6.0, "torch_dtype": "bfloat16",
            "rope_theta": 10000000.0, "max_position_embeddings": 131072}},
        # the deepseek_v3 config vLLM makes from Mistral-Large-3's params.json
        {"name": "mistral-large-3 like", "config": {
            **_dense("MistralLarge3ForCausalLM", "deepseek_v3", hidden_size=1024, num_attention_heads=128,
                     num_key_value_heads=128, num_hidden_layers=3, first_k_dense_replace=1, n_routed_experts=4,
                     num_experts_per_tok=2, n_shared_experts=1, moe_intermediate_size=256, n_group=1,
                     topk_group=1, q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128,
                     qk_rope_head_dim=64, v_head_dim=128),
            "llama_4_scaling": {"original_max_position_embeddings": 8192, "beta": 0.1}}},
        {"name": "hyperclovax-seed like", "config": _dense(
            "HyperCLOVAXForCausalLM", "hyperclovax", hidden_size=4096, num_attention_heads=32,
            num_key_value_heads=8, head_dim=128, attention_multiplier=0.0078125, use_post_norm=True,
            embedding_multiplier=1.0, logits_scaling=1.0, residual_multiplier=1.0)},
        {"name": "laguna like", "config": _dense(
            "LagunaForCausalLM", "laguna", hidden_size=2048, num_attention_heads=48, num_key_value_heads=8,
            head_dim=128, sliding_window=512, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=256,
            shared_expert_intermediate_size=256,
            layer_types=["sliding_attention", "sliding_attention", "sliding_attention", "full_attention"])},
        # stepfun-ai/step3's text_config (num_attention_groups 1, share_q_dim, head_dim 256)
        {"name": "step3 text like", "config": {
            "architectures": ["Step3TextForCausalLM"], "model_type": "step3_text", "hidden_size": 1024,
            "intermediate_size": 2048, "num_attention_heads": 64, "num_attention_groups": 1, "num_hidden_layers": 4,
            "max_seq_len": 65536, "vocab_size": 1000, "rms_norm_eps": 1e-5, "moe_intermediate_size": 256,
            "moe_num_experts": 4, "moe_top_k": 2, "max_position_embedding": 65536, "share_expert_dim": 256,
            "share_q_dim": 2048, "head_dim": 256, "norm_expert_weight": False, "moe_layers_enum": "2,3",
            "rope_theta": 500000, "torch_dtype": "bfloat16"}},
        # inclusionAI Ring/Ling-2.5 (model_type bailing_hybrid): MLA on each
        # layer group's last layer, Bailing linear attention elsewhere
        {"name": "bailing_hybrid ring-2.5 like", "config": _bailing_hybrid(layer_group_size=4, num_hidden_layers=8)},
        {"name": "bailing_hybrid class-default layer_group_size", "config": _bailing_hybrid(num_hidden_layers=7)},
        # BailingMoeV3 (_is_kda_layer): each full group's last layer and all
        # layers past the last full group are MLA, the rest Kimi Delta Attention
        {"name": "bailing_hybrid v3, trailing layers MLA", "config": _bailing_v3(layer_group_size=4, num_hidden_layers=10)},
        {"name": "bailing_hybrid v3 class-default layer_group_size", "config": _bailing_v3(num_hidden_layers=8)},
        # bailing_moe_v3_vl.py builds BailingMoeV3ForCausalLM over text_config
        {"name": "bailing v3 vl", "config": _bailing_v3_vl(num_hidden_layers=7, layer_group_size=3)},
        # an HF-format Voxtral config with the three audio fields voxtral.py reads (Mistral format gives them)
        {"name": "voxtral hf-format with downsample_factor, window_size, sampling_rate",
         "config": _voxtral_hf(downsample_factor=4, window_size=400, sampling_rate=16000)},
        {"name": "olmo-hybrid like", "capability": [10, 0], "config": _dense(
            "OlmoHybridForCausalLM", "olmo_hybrid", hidden_size=1024, num_attention_heads=16,
            num_key_value_heads=16, linear_num_key_heads=8, linear_num_value_heads=8, linear_key_head_dim=128,
            linear_value_head_dim=128,
            layer_types=["linear_attention", "linear_attention", "linear_attention", "full_attention"])},
    ]


def _attention_free_cases() -> list[dict]:
    """Models vLLM builds without any attention layer (no get_attn_backend
    call): attn-select must say so (a UserError), not invent layers."""
    return [
        {"name": "mamba-130m like", "attention_free": True, "config": {
            "architectures": ["MambaForCausalLM"], "model_type": "mamba", "hidden_size": 768, "state_size": 16,
            "num_hidden_layers": 4, "expand": 2, "conv_kernel": 4, "vocab_size": 1000, "time_step_rank": 48,
            "use_bias": False, "use_conv_bias": True, "torch_dtype": "float32"}},
        {"name": "mamba-codestral like (mamba2)", "attention_free": True, "capability": [10, 0], "config": {
            "architectures": ["Mamba2ForCausalLM"], "model_type": "mamba2", "hidden_size": 4096, "num_heads": 128,
            "head_dim": 64, "n_groups": 8, "state_size": 128, "num_hidden_layers": 4, "expand": 2,
            "conv_kernel": 4, "chunk_size": 256, "vocab_size": 1000, "torch_dtype": "bfloat16"}},
    ]


def _dsv4(**fields) -> dict:
    """A small config shaped like deepseek-ai/DeepSeek-V4-Flash's (attention
    fields as published; layers, experts and vocab cut)."""
    return {"architectures": ["DeepseekV4ForCausalLM"], "model_type": "deepseek_v4", "hidden_size": 1024,
            "num_hidden_layers": 4, "num_attention_heads": 64, "num_key_value_heads": 1, "head_dim": 512,
            "qk_rope_head_dim": 64, "q_lora_rank": 1024, "o_lora_rank": 1024, "o_groups": 8, "sliding_window": 128,
            "index_n_heads": 64, "index_head_dim": 128, "index_topk": 512, "n_routed_experts": 4,
            "num_experts_per_tok": 2, "n_shared_experts": 1, "moe_intermediate_size": 256, "num_hash_layers": 1,
            "num_nextn_predict_layers": 1, "hc_mult": 4, "hc_sinkhorn_iters": 20, "hc_eps": 1e-6, "vocab_size": 1000,
            "torch_dtype": "bfloat16", "scoring_func": "sqrtsoftplus", "rope_theta": 10000,
            "compress_rope_theta": 160000, "max_position_embeddings": 65536, "swiglu_limit": 10.0, **fields}


def _bypass_cases() -> list[dict]:
    """Models whose attention layers vLLM builds without get_attn_backend:
    vLLM's build makes no call and no Attention / MLAAttention module;
    attn-select must say so (a UserError naming get_attn_backend)."""
    return [
        {"name": "deepseek-v4-flash like (compress_ratios)", "bypass": True,
         "config": _dsv4(compress_ratios=[0, 4, 128, 4, 0])},
        {"name": "deepseek-v4 layer_types, sm100", "bypass": True, "capability": [10, 0], "config": _dsv4(
            layer_types=["sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention",
                         "compressed_sparse_attention"])},
        {"name": "deepseek-v4 class-default layer_types, sm120", "bypass": True, "capability": [12, 0],
         "config": _dsv4()},
    ]


def _transformers_backend_cases() -> list[dict]:
    """Architectures vLLM 0.33.0 serves through its Transformers modeling
    backend (registry: ("transformers", "TransformersForCausalLM")): a layer
    gets a window only from layer_types, else cache_config's, for every layer;
    and multimodal wrappers whose text model is a nested text_config."""
    return [
        {"name": "starcoder2-3b like (transformers backend)", "config": _dense(
            "Starcoder2ForCausalLM", "starcoder2", hidden_size=1024, num_attention_heads=16, num_key_value_heads=2,
            sliding_window=4096, max_position_embeddings=16384)},
        {"name": "smollm3-3b like (transformers backend)", "config": _dense(
            "SmolLM3ForCausalLM", "smollm3", hidden_size=1024, num_attention_heads=16, num_key_value_heads=4,
            no_rope_layers=[1, 1, 1, 0], use_sliding_window=False, sliding_window=None, pad_token_id=0)},
        {"name": "smollm3 sliding on its NoPE layers", "config": _dense(
            "SmolLM3ForCausalLM", "smollm3", hidden_size=1024, num_attention_heads=16, num_key_value_heads=4,
            no_rope_layers=[1, 1, 1, 0], use_sliding_window=True, sliding_window=512, pad_token_id=0)},
        {"name": "olmo2-7b like (transformers backend)", "config": _dense(
            "Olmo2ForCausalLM", "olmo2", hidden_size=1024, num_attention_heads=16, num_key_value_heads=16)},
        {"name": "santacoder like (gpt_bigcode multi_query)", "config": {
            "architectures": ["GPTBigCodeForCausalLM"], "model_type": "gpt_bigcode", "n_embd": 1024, "n_head": 16,
            "n_layer": 2, "n_positions": 2048, "vocab_size": 1000, "multi_query": True, "torch_dtype": "float16"}},
        {"name": "pythia like (gpt_neox, transformers backend)", "config": _dense(
            "GPTNeoXForCausalLM", "gpt_neox", hidden_size=1024, num_attention_heads=16, rotary_pct=0.25,
            use_parallel_residual=True)},
        {"name": "phi-2 like (transformers backend)", "config": _dense(
            "PhiForCausalLM", "phi", hidden_size=1024, num_attention_heads=16, num_key_value_heads=16,
            partial_rotary_factor=0.4)},
        {"name": "vaultgemma like (soft cap, layer_types)", "config": _dense(
            "VaultGemmaForCausalLM", "vaultgemma", hidden_size=1024, num_attention_heads=4, num_key_value_heads=4,
            head_dim=256, attn_logit_softcapping=50.0, final_logit_softcapping=30.0, sliding_window=512,
            layer_types=["sliding_attention", "full_attention"] * 2, query_pre_attn_scalar=256)},
        {"name": "hunyuan dense v1 like (transformers backend)", "config": _dense(
            "HunYuanDenseV1ForCausalLM", "hunyuan_v1_dense", hidden_size=1024, num_attention_heads=16,
            num_key_value_heads=4, head_dim=128)},
        {"name": "glm-4-9b-hf like (transformers backend)", "config": _dense(
            "GlmForCausalLM", "glm", hidden_size=1024, num_attention_heads=16, num_key_value_heads=2, head_dim=128,
            partial_rotary_factor=0.5, pad_token_id=0)},
        {"name": "arcee afm like (transformers backend)", "config": _dense(
            "ArceeForCausalLM", "arcee", hidden_size=1024, num_attention_heads=16, num_key_value_heads=4)},
        {"name": "qwen2-vl-2b like (flat, use_sliding_window false)", "config": {
            "architectures": ["Qwen2VLForConditionalGeneration"], "model_type": "qwen2_vl", "torch_dtype": "bfloat16",
            "hidden_size": 1536, "num_attention_heads": 12, "num_key_value_heads": 2, "num_hidden_layers": 2,
            "intermediate_size": 1024, "vocab_size": 152000, "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]},
            "vision_config": {"depth": 2, "embed_dim": 256, "num_heads": 4, "hidden_size": 1536, "in_chans": 3,
                              "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2},
            "use_sliding_window": False, "sliding_window": 32768, "max_window_layers": 28}},
        {"name": "paligemma like (mm prefix)", "config": {
            "architectures": ["PaliGemmaForConditionalGeneration"], "model_type": "paligemma", "torch_dtype": "bfloat16",
            "image_token_index": 257152, "projection_dim": 2048, "hidden_size": 2048,
            "text_config": {"model_type": "gemma", "hidden_size": 1024, "num_attention_heads": 8,
                            "num_key_value_heads": 1, "head_dim": 256, "num_hidden_layers": 2,
                            "intermediate_size": 1024, "vocab_size": 257216},
            "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 256, "intermediate_size": 512,
                              "num_attention_heads": 4, "num_hidden_layers": 2, "image_size": 224, "patch_size": 14,
                              "projection_dim": 2048, "num_image_tokens": 256}}},
        # PaliGemma 2 and LLaVA-NeXT build the language model text_config names (Gemma2: its soft cap)
        {"name": "paligemma2 like (gemma2 text, soft cap 50)", "config": {
            "architectures": ["PaliGemmaForConditionalGeneration"], "model_type": "paligemma", "torch_dtype": "bfloat16",
            "image_token_index": 257152, "projection_dim": 1024, "hidden_size": 1024,
            "text_config": {"model_type": "gemma2", "hidden_size": 1024, "intermediate_size": 2048,
                            "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 128, "num_hidden_layers": 2,
                            "vocab_size": 257216, "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0,
                            "query_pre_attn_scalar": 128, "sliding_window": 4096},
            "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 64, "intermediate_size": 128,
                              "num_attention_heads": 2, "num_hidden_layers": 1, "patch_size": 14, "image_size": 224,
                              "projection_dim": 1024}}},
        {"name": "llava-next over gemma2 (text_config architectures)", "config": {
            "architectures": ["LlavaNextForConditionalGeneration"], "model_type": "llava_next",
            "torch_dtype": "bfloat16", "image_token_index": 32000, "image_grid_pinpoints": [[336, 672], [672, 336]],
            "text_config": {"architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2", "hidden_size": 1024,
                            "intermediate_size": 2048, "num_attention_heads": 8, "num_key_value_heads": 4,
                            "head_dim": 128, "num_hidden_layers": 2, "vocab_size": 257216,
                            "attn_logit_softcapping": 50.0, "query_pre_attn_scalar": 128, "sliding_window": 4096},
            "vision_config": {"model_type": "clip_vision_model", "hidden_size": 64, "intermediate_size": 128,
                              "num_attention_heads": 2, "num_hidden_layers": 2, "patch_size": 14, "image_size": 336,
                              "projection_dim": 64}}},
        {"name": "llava-next mistral like", "config": {
            "architectures": ["LlavaNextForConditionalGeneration"], "model_type": "llava_next",
            "torch_dtype": "bfloat16", "image_token_index": 32000, "image_grid_pinpoints": [[336, 672], [672, 336]],
            "vision_feature_layer": -2, "vision_feature_select_strategy": "default",
            "text_config": {"model_type": "mistral", "hidden_size": 1024, "num_attention_heads": 16,
                            "num_key_value_heads": 4, "num_hidden_layers": 2, "intermediate_size": 1024,
                            "vocab_size": 32064, "sliding_window": None},
            "vision_config": {"model_type": "clip_vision_model", "hidden_size": 256, "intermediate_size": 512,
                              "num_attention_heads": 4, "num_hidden_layers": 2, "image_size": 336,
                              "patch_size": 14, "projection_dim": 256}}},
        {"name": "llava-1.5 like (text_config llama)", "config": {
            "architectures": ["LlavaForConditionalGeneration"], "model_type": "llava", "torch_dtype": "float16",
            "image_token_index": 32000, "projector_hidden_act": "gelu", "vision_feature_layer": -2,
            "vision_feature_select_strategy": "default",
            "text_config": {"model_type": "llama", "hidden_size": 1024, "num_attention_heads": 16,
                            "num_key_value_heads": 16, "num_hidden_layers": 2, "intermediate_size": 1024,
                            "vocab_size": 32064},
            "vision_config": {"model_type": "clip_vision_model", "hidden_size": 256, "intermediate_size": 512,
                              "num_attention_heads": 4, "num_hidden_layers": 2, "image_size": 336,
                              "patch_size": 14, "projection_dim": 256}}},
    ]


def _multimodal_wrapper_cases() -> list[dict]:
    """Multimodal checkpoints whose language model is a nested text_config:
    InternVL-3 (HF format), Idefics3 / SmolVLM, Gemma-3 4B, Mistral-Small-3.1, and
    Kimi-VL (a DeepSeek-V3 MLA text_config)."""
    return [{'name': 'internvl3 hf like',
             'config': {'architectures': ['InternVLForConditionalGeneration'],
                        'model_type': 'internvl',
                        'torch_dtype': 'bfloat16',
                        'image_token_id': 151667,
                        'downsample_ratio': 0.5,
                        'projector_hidden_act': 'gelu',
                        'vision_feature_layer': -1,
                        'vision_feature_select_strategy': 'default',
                        'text_config': {'model_type': 'qwen2',
                                        'hidden_size': 1024,
                                        'num_attention_heads': 16,
                                        'num_key_value_heads': 2,
                                        'num_hidden_layers': 2,
                                        'intermediate_size': 1024,
                                        'vocab_size': 152000,
                                        'use_sliding_window': False,
                                        'sliding_window': 32768,
                                        'max_window_layers': 70},
                        'vision_config': {'model_type': 'internvl_vision',
                                          'hidden_size': 256,
                                          'intermediate_size': 512,
                                          'num_attention_heads': 4,
                                          'num_hidden_layers': 2,
                                          'image_size': [448, 448],
                                          'patch_size': [14, 14]}}},
            {'name': 'idefics3/smolvlm like',
             'config': {'architectures': ['Idefics3ForConditionalGeneration'],
                        'model_type': 'idefics3',
                        'torch_dtype': 'bfloat16',
                        'image_token_id': 49190,
                        'scale_factor': 4,
                        'text_config': {'model_type': 'llama',
                                        'hidden_size': 1024,
                                        'num_attention_heads': 16,
                                        'num_key_value_heads': 16,
                                        'num_hidden_layers': 2,
                                        'intermediate_size': 1024,
                                        'vocab_size': 49280},
                        'vision_config': {'model_type': 'idefics3_vision',
                                          'hidden_size': 256,
                                          'intermediate_size': 512,
                                          'num_attention_heads': 4,
                                          'num_hidden_layers': 2,
                                          'image_size': 512,
                                          'patch_size': 16}}},
            {'name': 'gemma3 4b mm like',
             'config': {'architectures': ['Gemma3ForConditionalGeneration'],
                        'model_type': 'gemma3',
                        'torch_dtype': 'bfloat16',
                        'mm_tokens_per_image': 256,
                        'image_token_index': 262144,
                        'text_config': {'model_type': 'gemma3_text',
                                        'hidden_size': 1024,
                                        'num_attention_heads': 8,
                                        'num_key_value_heads': 4,
                                        'head_dim': 256,
                                        'num_hidden_layers': 6,
                                        'intermediate_size': 1024,
                                        'vocab_size': 262208,
                                        'sliding_window': 1024,
                                        'query_pre_attn_scalar': 256},
                        'vision_config': {'model_type': 'siglip_vision_model',
                                          'hidden_size': 256,
                                          'intermediate_size': 512,
                                          'num_attention_heads': 4,
                                          'num_hidden_layers': 2,
                                          'image_size': 896,
                                          'patch_size': 14}}},
            {'name': 'mistral3 small-3.1 like',
             'config': {'architectures': ['Mistral3ForConditionalGeneration'],
                        'model_type': 'mistral3',
                        'torch_dtype': 'bfloat16',
                        'image_token_index': 10,
                        'multimodal_projector_bias': False,
                        'projector_hidden_act': 'gelu',
                        'spatial_merge_size': 2,
                        'vision_feature_layer': -1,
                        'text_config': {'model_type': 'mistral',
                                        'hidden_size': 1024,
                                        'num_attention_heads': 32,
                                        'num_key_value_heads': 8,
                                        'head_dim': 128,
                                        'num_hidden_layers': 2,
                                        'intermediate_size': 1024,
                                        'vocab_size': 131072,
                                        'sliding_window': None},
                        'vision_config': {'model_type': 'pixtral',
                                          'hidden_size': 256,
                                          'intermediate_size': 512,
                                          'num_attention_heads': 4,
                                          'num_hidden_layers': 2,
                                          'image_size': 1540,
                                          'patch_size': 14,
                                          'head_dim': 64}}},
            {'name': 'kimi-vl like',
             'config': {'architectures': ['KimiVLForConditionalGeneration'],
                        'model_type': 'kimi_vl',
                        'torch_dtype': 'bfloat16',
                        'media_placeholder_token_id': 163605,
                        'text_config': {'model_type': 'deepseek_v3',
                                        'hidden_size': 1024,
                                        'num_attention_heads': 16,
                                        'num_key_value_heads': 16,
                                        'num_hidden_layers': 2,
                                        'intermediate_size': 1024,
                                        'moe_intermediate_size': 256,
                                        'vocab_size': 163840,
                                        'kv_lora_rank': 512,
                                        'q_lora_rank': None,
                                        'qk_nope_head_dim': 128,
                                        'qk_rope_head_dim': 64,
                                        'v_head_dim': 128,
                                        'n_routed_experts': 4,
                                        'num_experts_per_tok': 2,
                                        'n_shared_experts': 1,
                                        'first_k_dense_replace': 1,
                                        'moe_layer_freq': 1,
                                        'n_group': 1,
                                        'topk_group': 1,
                                        'topk_method': 'noaux_tc',
                                        'scoring_func': 'sigmoid',
                                        'routed_scaling_factor': 2.446},
                        'vision_config': {'model_type': 'moonvit',
                                          'hidden_size': 256,
                                          'intermediate_size': 512,
                                          'num_attention_heads': 4,
                                          'num_hidden_layers': 2,
                                          'patch_size': 14,
                                          'init_pos_emb_height': 64,
                                          'init_pos_emb_width': 64,
                                          'merge_kernel_size': [2, 2]}}}]


def _encoder_cases() -> list[dict]:
    """Encoder-only embedding and classification models: RoBERTa, XLM-R
    (BGE-M3, multilingual-e5) and ModernBERT (sliding local layers)."""
    roberta = {"hidden_size": 256, "num_attention_heads": 4, "num_hidden_layers": 2, "intermediate_size": 512,
               "vocab_size": 1000, "type_vocab_size": 1, "pad_token_id": 1, "position_embedding_type": "absolute",
               "torch_dtype": "float32"}
    return [
        {"name": "roberta-base like", "config": {
            "architectures": ["RobertaModel"], "model_type": "roberta", "max_position_embeddings": 514, **roberta}},
        {"name": "xlm-roberta (bge-m3) like", "config": {
            "architectures": ["XLMRobertaModel"], "model_type": "xlm-roberta", "max_position_embeddings": 8194,
            **roberta}},
        {"name": "roberta cross-encoder like", "config": {
            "architectures": ["XLMRobertaForSequenceClassification"], "model_type": "xlm-roberta",
            "max_position_embeddings": 514, "num_labels": 1, **roberta}},
        {"name": "modernbert like", "config": {
            "architectures": ["ModernBertModel"], "model_type": "modernbert", "hidden_size": 256,
            "num_attention_heads": 4, "num_hidden_layers": 6, "intermediate_size": 512, "vocab_size": 1000,
            "global_attn_every_n_layers": 3, "local_attention": 128, "max_position_embeddings": 8192,
            "pad_token_id": 0, "torch_dtype": "float32"}},
    ]


def _embedding_cases() -> list[dict]:
    """Embedding / reward checkpoints of decoder models: EmbeddingGemma
    (Gemma3TextModel, bidirectional), a Llama bidirectional retriever, Voyage's
    bidirectional Qwen3, a Qwen3 reranker, a Qwen2 reward model, and the *Model names vLLM's
    registry maps to *ForCausalLM (default runner: generate)."""
    def dense(arch, model_type, **fields):
        return {**_dense(arch, model_type, **fields), "num_hidden_layers": 2}

    return [
        {"name": "embeddinggemma like (Gemma3TextModel)", "config": dense(
            "Gemma3TextModel", "gemma3_text", hidden_size=768, num_attention_heads=3, num_key_value_heads=1,
            head_dim=256, sliding_window=512, query_pre_attn_scalar=256, use_bidirectional_attention=True)},
        {"name": "llama bidirectional retriever like", "config": dense(
            "LlamaBidirectionalModel", "llama", hidden_size=1024, num_attention_heads=16, num_key_value_heads=8,
            pooling="avg")},
        {"name": "voyage qwen3 bidirectional like", "config": dense(
            "VoyageQwen3BidirectionalEmbedModel", "qwen3", hidden_size=1024, head_dim=128, num_attention_heads=16,
            num_key_value_heads=8, num_labels=1024)},
        {"name": "qwen3 reranker like", "config": dense(
            "Qwen3ForSequenceClassification", "qwen3", hidden_size=1024, head_dim=128, num_attention_heads=16,
            num_key_value_heads=8, num_labels=1)},
        {"name": "qwen2 reward model like", "config": dense(
            "Qwen2ForRewardModel", "qwen2", hidden_size=1024, num_attention_heads=16, num_key_value_heads=2,
            num_labels=1)},
        {"name": "LlamaModel", "config": dense(
            "LlamaModel", "llama", hidden_size=1024, num_attention_heads=16, num_key_value_heads=8)},
        {"name": "MistralModel", "config": dense(
            "MistralModel", "mistral", hidden_size=1024, num_attention_heads=16, num_key_value_heads=8,
            sliding_window=None)},
        {"name": "Qwen2Model", "config": dense(
            "Qwen2Model", "qwen2", hidden_size=1024, num_attention_heads=16, num_key_value_heads=2)},
        {"name": "Gemma2Model", "config": dense(
            "Gemma2Model", "gemma2", hidden_size=1024, num_attention_heads=8, num_key_value_heads=4, head_dim=256,
            sliding_window=4096, attn_logit_softcapping=50.0, query_pre_attn_scalar=256)},
    ]


def _rejected_cases() -> list[dict]:
    """Configs vLLM 0.33.0 refuses to build; ``rejects`` is part of vLLM's
    error. attn-select must refuse them too (a UserError), not list layers."""
    return [
        {"name": "qwen2 sliding from max_window_layers 2 (some layers only)", "config": _dense(
            "Qwen2ForCausalLM", "qwen2", hidden_size=896, num_attention_heads=14, num_key_value_heads=2,
            use_sliding_window=True, sliding_window=4096, max_window_layers=2),
         "rejects": "Sliding window for some but all layers is not supported"},
        {"name": "bailing_hybrid v3 without no_kda_lora", "config": _bailing_v3(no_kda_lora=False, num_hidden_layers=6),
         "rejects": "BailingMoeV3 KDA currently expects no_kda_lora=True"},
        # model files that read a sub-config field no config class defaults
        {"name": "mimo-v2-omni vision_config without use_sink", "config": model_cases_text._mimo_v2_flash(
            architectures=["MiMoV2OmniForCausalLM"], v_head_dim=192, swa_v_head_dim=192,
            vision_config={k: v for k, v in model_cases_text._MIMO_VISION.items() if k != "use_sink"}),
         "rejects": "'Mimo_VLVisionConfig' object has no attribute 'use_sink'"},
        {"name": "voxtral hf-format audio_config", "config": _voxtral_hf(),
         "rejects": "'VoxtralEncoderConfig' object has no attribute 'downsample_factor'"},
        {"name": "bailing v3 vl without no_kda_lora", "config": _bailing_v3_vl(no_kda_lora=False, num_hidden_layers=6),
         "rejects": "BailingMoeV3 KDA currently expects no_kda_lora=True"},
        # BailingMoeV3VLConfig checks the text config against its own schedule and M-RoPE split
        {"name": "bailing v3 vl layer_types off the schedule", "config": _bailing_v3_vl(
            num_hidden_layers=6, layer_group_size=3, layer_types=["full_attention"] * 6),
         "rejects": "Bailing V3 VL layer_types must match the layer_group_size schedule"},
        {"name": "bailing v3 vl conflicting M-RoPE sections", "config": _bailing_v3_vl(
            num_hidden_layers=6, mrope_section=[16, 24, 24]),
         "rejects": "Bailing V3 VL has conflicting M-RoPE sections"},
        # ModelConfig sets hf_text_config.sliding_window = None; Gemma4TextConfig declares it an int
        {"name": "gemma4 --disable-sliding-window", "config": {**_gemma4_text(), "architectures": ["Gemma4ForCausalLM"]},
         "disable_sliding_window": True, "rejects": "Validation error for field 'sliding_window'"},
        # JambaConfig.layers_block_type is a read-only property (period / offset)
        {"name": "jamba with an explicit layers_block_type", "config": _dense(
            "JambaForCausalLM", "jamba", hidden_size=1024, num_attention_heads=16, num_key_value_heads=8,
            num_hidden_layers=4, attn_layer_period=4, attn_layer_offset=2, num_experts=1, mamba_d_state=16,
            mamba_d_conv=4, mamba_expand=2, mamba_dt_rank=64,
            layers_block_type=["mamba", "mamba", "attention", "mamba"]),
         "rejects": "layers_block_type"},
        # Rnj1Attention gives a chunked layer's rotary embedding rope_parameters["chunked_attention"], else the whole
        # per-type mapping
        {"name": "rnj1 chunked layers without their rope entry", "config": _dense(
            "Rnj1ForCausalLM", "gemma3_text", hidden_size=1024, num_attention_heads=8, num_key_value_heads=4,
            head_dim=128, sliding_window=512, layer_types=["chunked_attention"] * 3 + ["full_attention"]),
         "rejects": "unhashable type: 'dict'"},
        # ExaoneMoeAttention reads sliding_windows[layer] for every layer that is not full_attention
        {"name": "exaone-moe with a short sliding_windows", "config": _dense(
            "ExaoneMoeForCausalLM", "exaone_moe", hidden_size=1024, num_attention_heads=16, num_key_value_heads=4,
            sliding_window=128, num_experts=4, num_experts_per_tok=2, num_shared_experts=1,
            moe_intermediate_size=256, sliding_windows=[64]),
         "rejects": "list index out of range"},
    ]


@pytest.fixture(scope="module")
def vllm_lacks() -> set[str]:
    """The packages some cases' builds import (``needs``) that the vLLM python
    cannot import: vllm==0.33.0 does not install them (README: ``pip install
    vllm==0.33.0 timm``)."""
    needed = sorted({c["needs"] for c in _cases() if "needs" in c})
    probe = "import importlib.util, sys; print(*[n for n in sys.argv[1:] if importlib.util.find_spec(n) is None])"
    out = subprocess.run([vllm_python(), "-c", probe, *needed], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return set(out.stdout.split())


def test_cases_that_need_more_than_vllm_ran(vllm_lacks):
    if vllm_lacks:
        names = [c["name"] for c in _cases() if c.get("needs") in vllm_lacks]
        pytest.skip(f"the vLLM python at {VLLM_PYTHON} cannot import {', '.join(sorted(vllm_lacks))}: "
                    f"{len(names)} cases not compared ({'; '.join(names)}); pip install it there")


@pytest.fixture(scope="module")
def oracle_all(vllm_lacks) -> list[tuple[dict, dict]]:
    cases = _cases() + _rejected_cases() + model_cases_archs.rejected_cases() + _attention_free_cases() + _bypass_cases()
    cases = [c for c in cases if c.get("needs") not in vllm_lacks]
    cases += model_cases_published.rejected_cases()
    only = os.environ.get("ATTN_SELECT_MODEL_CASES")  # a name substring: run just those cases (a subset to iterate on)
    if only:
        cases = [c for c in cases if only in c["name"]]
    return list(zip(cases, run_model_oracle(cases, 3000)))


@pytest.fixture(scope="module")
def oracle(oracle_all) -> list[tuple[dict, dict]]:
    return [(c, r) for c, r in oracle_all if not {"rejects", "attention_free", "bypass"} & c.keys()]


@pytest.mark.parametrize("flag,refusal", [
    ("attention_free", "no attention layers"),  # attention-free models: no layers in both
    ("bypass", "never calls get_attn_backend"),  # models whose layers bypass the selector: refused
])
def test_cases_without_selection_build_no_calls_in_vllm_and_are_refused(oracle_all, tmp_path, flag, refusal):
    for case, res in oracle_all:
        if flag not in case:
            continue
        assert res["error"] is None and not res["calls"], (case["name"], res["error"])
        # a bypassing model may still build Attention modules, each handed a fixed
        # backend (MiMo-V2's FLASH_ATTN_DIFFKV / TRITON_ATTN_DIFFKV layers)
        assert flag == "bypass" or not res["layers"], case["name"]
        with pytest.raises(UserError, match=refusal):
            _ours(case, tmp_path)


def test_rejected_cases_are_rejected_by_both(oracle_all, tmp_path):
    for case, res in oracle_all:
        if "rejects" not in case:
            continue
        facts_agreeing_with_vllm(res, lambda: _ours(case, tmp_path), case["rejects"], case["name"])


def _index(prefix: str) -> int:
    return int(re.findall(r"\d+", prefix)[0])


def _keyed(pairs) -> dict:
    """(layer index, attn_type, n-th such module of the layer) -> item: a
    decoder layer may hold several attention modules of one type
    (LongCat-Flash's self_attn.0 and self_attn.1)."""
    seen: dict[tuple, int] = {}
    out = {}
    for index, attn_type, item in pairs:
        n = seen.get((index, attn_type), 0)
        seen[(index, attn_type)] = n + 1
        out[(index, attn_type, n)] = item
    return out


def _our_layers(case: dict, f) -> dict:
    """(layer index, attn_type, n) -> LayerAttention; with ``renumber`` the
    attention layers count 0, 1, ... in order, as the model file names them."""
    pairs = sorted(((i, g.attn) for g in f.groups for i in g.layers), key=lambda pair: pair[0])
    if case.get("renumber"):
        pairs = [(n, a) for n, (_, a) in enumerate(pairs)]
    return _keyed((i, a.attn_type, a) for i, a in pairs)


def _ours(case: dict, tmp: Path):
    options = dict(capability=Capability(*case.get("capability", [9, 0])), dtype=case.get("dtype", "auto"),
                   mm_inputs=not case.get("language_model_only", False),
                   disable_sliding_window=case.get("disable_sliding_window", False),
                   trust_remote_code=case.get("trust_remote_code", False))
    if not case.get("weights") and not case.get("files"):
        return model_facts(case["config"], name=case["name"], **options)
    folder = tmp / re.sub(r"\W+", "_", case["name"])
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text(json.dumps(case["config"]))
    for rel, content in case.get("files", {}).items():  # the same extra files the oracle writes
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(content if isinstance(content, str) else json.dumps(content))
    if not case.get("weights"):
        return facts_from_path(folder, name=case["name"], **options)
    header = {n: {"dtype": dt, "shape": [1], "data_offsets": [0, 1]} for n, dt in case["weights"].items()}
    blob = json.dumps(header).encode()
    (folder / "model.safetensors").write_bytes(len(blob).to_bytes(8, "little") + blob + b"\0")
    return facts_from_path(folder, name=case["name"], **options)


def test_every_case_builds_in_vllm(oracle):
    failed = {c["name"]: r["error"] for c, r in oracle if r["error"]}
    assert not failed


def test_model_level_facts_match(oracle, tmp_path):
    for case, res in oracle:
        f, m = _ours(case, tmp_path), res["model"]
        ours = {"dtype": f.dtype, "head_size": f.head_size, "num_heads": f.num_heads, "num_kv_heads": f.num_kv_heads,
                "num_layers": f.num_layers, "is_mm_prefix_lm": f.is_mm_prefix_lm, "rswa_window": f.rswa_window,
                "is_diffusion": f.is_diffusion, "runner": f.runner,
                "attn_logit_softcapping": f.attn_logit_softcapping, "index_topk": f.index_topk}
        theirs = {k: m[k] for k in ours}
        assert ours == theirs, case["name"]


def test_get_attn_backend_calls_match(oracle, tmp_path):
    """Each layer's selector inputs, exactly as vLLM's layer classes pass them."""
    for case, res in oracle:
        f = _ours(case, tmp_path)
        ours = {}
        for key, a in _our_layers(case, f).items():
            ours[key] = {
                "head_size": a.head_size, "dtype": f.dtype, "use_mla": a.use_mla, "has_sink": a.has_sink,
                "use_sparse": a.use_sparse, "use_mm_prefix": a.use_mm_prefix,
                "use_per_head_quant_scales": a.use_per_head_quant_scales,
                "num_heads": a.num_heads if a.use_mla else None,
                "has_sliding_window": a.sliding_window is not None,
            }
        fields = next(iter(ours.values()))
        theirs = _keyed((_index(call["prefix"]), call["attn_type"], {k: call[k] for k in fields})
                        for call in res["calls"])
        assert ours == theirs, case["name"]


def test_attention_modules_match(oracle, tmp_path):
    """Sizes, windows, sinks and soft caps of the modules vLLM builds."""
    for case, res in oracle:
        f = _ours(case, tmp_path)
        by_key = _our_layers(case, f)
        assert len(res["layers"]) == len(by_key), case["name"]
        modules = _keyed((_index(layer["prefix"]), "decoder" if layer.get("mla") else layer["attn_type"], layer)
                         for layer in res["layers"])
        for key, layer in modules.items():
            a = by_key[key]
            assert (a.num_heads, a.num_kv_heads, a.head_size) == (
                layer["num_heads"], layer["num_kv_heads"], layer["head_size"]), (case["name"], layer)
            if layer.get("mla"):
                assert (a.kv_lora_rank, a.qk_rope_head_dim, a.qk_nope_head_dim, a.v_head_dim) == (
                    layer["kv_lora_rank"], layer["qk_rope_head_dim"], layer["qk_nope_head_dim"],
                    layer["v_head_dim"]), case["name"]
                continue
            assert a.head_size_v == layer["head_size_v"] and a.has_sink == layer["has_sink"], case["name"]
            assert (a.logits_soft_cap or 0) == (layer["logits_soft_cap"] or 0), case["name"]
            assert a.use_alibi == layer["alibi"], (case["name"], layer)  # ALiBi: FA2 only
            if layer["attn_type"] == "decoder":  # other layer classes keep the window out of selection
                assert a.sliding_window == layer["sliding_window"], (case["name"], layer)
