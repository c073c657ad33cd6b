"""More cases for the config-parser differential (tests/selector/test_model_vs_vllm.py):
cut-down versions of published config.json files, each checked against vLLM 0.33.0's
own model build. See that module for what is compared.

Pooling, embedding, reranking and retrieval checkpoints, speech (ASR) and
encoder-decoder models; each case is named after the checkpoint it is cut
from (layer counts reduced, every other value as published)."""

from __future__ import annotations


# Sentence-Transformers files: a Pooling module makes vLLM run the model as a pooling model
_ST_MODULES = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
               {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]
_LAST = {"1_Pooling/config.json": {"word_embedding_dimension": 1024, "pooling_mode_cls_token": False,
                                   "pooling_mode_mean_tokens": False, "pooling_mode_lasttoken": True,
                                   "include_prompt": True}}
_QWEN3_06B = {"attention_bias": False, "attention_dropout": 0.0, "bos_token_id": 151643, "eos_token_id": 151643,
              "head_dim": 128, "hidden_act": "silu", "hidden_size": 1024, "intermediate_size": 3072,
              "max_position_embeddings": 32768, "max_window_layers": 28, "model_type": "qwen3",
              "num_attention_heads": 16, "num_hidden_layers": 3, "num_key_value_heads": 8, "rms_norm_eps": 1e-06,
              "rope_scaling": None, "rope_theta": 1000000, "sliding_window": None, "tie_word_embeddings": True,
              "torch_dtype": "bfloat16", "use_cache": True, "use_sliding_window": False, "vocab_size": 151669}
_LFM2_350M = {"architectures": ["Lfm2ForCausalLM"], "block_auto_adjust_ff_dim": True, "block_dim": 1024,
              "block_ff_dim": 6656, "block_ffn_dim_multiplier": 1.0, "block_mlp_init_scale": 1.0,
              "block_multiple_of": 256, "block_norm_eps": 1e-05, "block_out_init_scale": 1.0,
              "block_use_swiglu": True, "block_use_xavier_init": True, "bos_token_id": 1, "conv_L_cache": 3,
              "conv_bias": False, "conv_dim": 1024, "conv_dim_out": 1024, "conv_use_xavier_init": True,
              "eos_token_id": 7, "hidden_size": 1024, "initializer_range": 0.02,
              "layer_types": ["conv", "conv", "full_attention", "conv", "conv", "full_attention"],
              "max_position_embeddings": 128000, "model_type": "lfm2", "norm_eps": 1e-05, "num_attention_heads": 16,
              "num_heads": 16, "num_hidden_layers": 6, "num_key_value_heads": 8, "pad_token_id": 0,
              "rope_theta": 1000000.0, "torch_dtype": "bfloat16", "use_cache": True, "use_pos_enc": True,
              "vocab_size": 65536}


def _special(i: int, token: str) -> dict:
    return {"id": i, "content": token, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
            "special": True}


# A processor's files: ColQwen3 / ColQwen3.5 load the Qwen3-VL processor (tokenizer,
# image and video processors) while vLLM builds them; a three-token BPE tokenizer
# with Qwen's special tokens stands in for the published one (it changes no layer)
_QWEN_VL_PROCESSOR_FILES = {
    "tokenizer.json": {
        "version": "1.0", "truncation": None, "padding": None, "normalizer": None, "post_processor": None,
        "decoder": None,
        "added_tokens": [_special(i + 3, t) for i, t in enumerate((
            "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>",
            "<|video_pad|>"))],
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": {"<unk>": 0, "a": 1, "b": 2}, "merges": []}},
    "tokenizer_config.json": {"tokenizer_class": "Qwen2Tokenizer", "eos_token": "<|im_end|>",
                              "pad_token": "<|endoftext|>"},
    "preprocessor_config.json": {"image_processor_type": "Qwen2VLImageProcessorFast", "patch_size": 16,
                                 "temporal_patch_size": 2, "merge_size": 2,
                                 "size": {"shortest_edge": 65536, "longest_edge": 16777216},
                                 "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]},
    "video_preprocessor_config.json": {"video_processor_type": "Qwen3VLVideoProcessor", "patch_size": 16,
                                       "temporal_patch_size": 2, "merge_size": 2,
                                       "size": {"shortest_edge": 4096, "longest_edge": 25165824}},
}

_QWEN3VL_8B_TEXT = {"model_type": "qwen3_vl_text", "attention_bias": False, "attention_dropout": 0.0,
                    "head_dim": 128, "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02,
                    "intermediate_size": 12288, "max_position_embeddings": 262144, "num_attention_heads": 32,
                    "num_hidden_layers": 3, "num_key_value_heads": 8, "rms_norm_eps": 1e-06,
                    "rope_scaling": {"mrope_interleaved": True, "mrope_section": [24, 20, 20], "rope_type": "default"},
                    "rope_theta": 5000000, "torch_dtype": "bfloat16", "use_cache": True, "vocab_size": 151936}
_QWEN3VL_VISION = {"model_type": "qwen3_vl", "deepstack_visual_indexes": [0], "depth": 2,
                   "hidden_act": "gelu_pytorch_tanh",
                   "hidden_size": 1152, "in_channels": 3, "initializer_range": 0.02, "intermediate_size": 4304,
                   "num_heads": 16, "num_position_embeddings": 2304, "out_hidden_size": 4096, "patch_size": 16,
                   "spatial_merge_size": 2, "temporal_patch_size": 2}
_QWEN3VL_TOP = {"image_token_id": 151655, "video_token_id": 151656, "vision_start_token_id": 151652,
                "vision_end_token_id": 151653, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
_MODERNVBERT = {"model_type": "modernvbert", "torch_dtype": "float32", "image_token_id": 50407,
                "pixel_shuffle_factor": 4,
                "text_config": {"model_type": "modernbert", "hidden_size": 768, "intermediate_size": 1152,
                                "num_hidden_layers": 4, "num_attention_heads": 12, "global_attn_every_n_layers": 3,
                                "local_attention": 128, "max_position_embeddings": 8192, "vocab_size": 50368,
                                "pad_token_id": 50283, "bos_token_id": 50281, "eos_token_id": 50282,
                                "cls_token_id": 50281, "sep_token_id": 50282},
                "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 768, "image_size": 512,
                                  "patch_size": 16, "num_hidden_layers": 2, "intermediate_size": 3072,
                                  "num_attention_heads": 12}}


_QWEN35_TEXT = {"model_type": "qwen3_5_text", "hidden_size": 2048, "intermediate_size": 6144, "num_attention_heads": 8,
                "num_key_value_heads": 2, "head_dim": 256, "num_hidden_layers": 4, "vocab_size": 248320,
                "layer_types": ["linear_attention", "linear_attention", "linear_attention", "full_attention"],
                "full_attention_interval": 4, "attn_output_gate": True, "linear_conv_kernel_dim": 4,
                "linear_key_head_dim": 128, "linear_value_head_dim": 128, "linear_num_key_heads": 16,
                "linear_num_value_heads": 16,
                "rope_parameters": {"rope_type": "default", "rope_theta": 10000000, "partial_rotary_factor": 0.25,
                                    "mrope_section": [11, 11, 10], "mrope_interleaved": True},
                "max_position_embeddings": 262144, "dtype": "bfloat16"}
_QWEN35_VISION = {"model_type": "qwen3_5", "depth": 2, "hidden_size": 1024, "intermediate_size": 4096, "num_heads": 16,
                  "out_hidden_size": 2048, "patch_size": 16, "spatial_merge_size": 2, "temporal_patch_size": 2,
                  "num_position_embeddings": 2304, "deepstack_visual_indexes": [], "in_channels": 3}

_EMBEDDING_GEMMA2_TEXT = {
    "model_type": "embedding_gemma2_text", "attention_bias": False, "attention_dropout": 0.0, "bos_token_id": 2,
    "embedding_dim": 768, "eos_token_id": 1, "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh",
    "hidden_size": 512, "hidden_size_per_layer_input": 512, "intermediate_size": 2048,
    "max_position_embeddings": 262144, "num_attention_heads": 4, "num_hidden_layers": 6, "num_key_value_heads": 2,
    "pad_token_id": 0, "rms_norm_eps": 1e-06, "sliding_window": 512, "vocab_size": 262144}
_EMBEDDING_GEMMA2 = {
    "architectures": ["EmbeddingGemma2Model"], "model_type": "embedding_gemma2", "boi_token_id": 255999,
    "eoi_token_id": 258882, "image_token_id": 258880, "video_token_id": 258884, "boa_token_id": 256000,
    "eoa_token_index": 258883, "audio_token_id": 258881, "torch_dtype": "bfloat16"}


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
        {"name": "Qwen/Qwen3-Embedding-0.6B (Sentence-Transformers pooling; 3 layers)",
         "config": {**_QWEN3_06B, "architectures": ["Qwen3ForCausalLM"]},
         "files": {"modules.json": _ST_MODULES, **_LAST}},
        {"name": "Qwen/Qwen3-Reranker-0.6B as published (3 layers)",
         "config": {**_QWEN3_06B, "architectures": ["Qwen3ForCausalLM"]}},
        {"name": "intfloat/e5-mistral-7b-instruct (2 layers)", "config": {
            "architectures": ["MistralModel"], "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu",
            "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 14336,
            "max_position_embeddings": 32768, "model_type": "mistral", "num_attention_heads": 32,
            "num_hidden_layers": 2, "num_key_value_heads": 8, "pad_token_id": 2, "rms_norm_eps": 1e-05,
            "rope_theta": 10000.0, "sliding_window": 4096, "tie_word_embeddings": False, "torch_dtype": "float16",
            "use_cache": False, "vocab_size": 32000},
         "files": {"modules.json": _ST_MODULES[:2], "1_Pooling/config.json": {"pooling_mode_lasttoken": True}}},
        {"name": "BAAI/bge-multilingual-gemma2 (float32, 4 layers)", "config": {
            "architectures": ["Gemma2Model"], "attention_bias": False, "attention_dropout": 0.0,
            "attn_logit_softcapping": 50.0, "bos_token_id": 2, "eos_token_id": 1, "final_logit_softcapping": 30.0,
            "head_dim": 256, "hidden_act": "gelu_pytorch_tanh", "hidden_activation": "gelu_pytorch_tanh",
            "hidden_size": 3584, "initializer_range": 0.02, "intermediate_size": 14336,
            "max_position_embeddings": 8192, "model_type": "gemma2", "num_attention_heads": 16,
            "num_hidden_layers": 4, "num_key_value_heads": 8, "pad_token_id": 0, "query_pre_attn_scalar": 256,
            "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "sliding_window": 4096, "torch_dtype": "float32",
            "use_cache": True, "vocab_size": 256000},
         "files": {"modules.json": _ST_MODULES, "1_Pooling/config.json": {"pooling_mode_lasttoken": True}}},
        {"name": "Alibaba-NLP/gte-Qwen2-1.5B-instruct (float32, ST pooling; 3 layers)", "config": {
            "architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 151643,
            "eos_token_id": 151643, "hidden_act": "silu", "hidden_size": 1536, "initializer_range": 0.02,
            "intermediate_size": 8960, "max_position_embeddings": 131072, "max_window_layers": 21,
            "model_type": "qwen2", "num_attention_heads": 12, "num_hidden_layers": 3, "num_key_value_heads": 2,
            "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "sliding_window": 131072, "tie_word_embeddings": False,
            "torch_dtype": "float32", "use_cache": True, "use_sliding_window": False, "vocab_size": 151646},
         "files": {"modules.json": [{"idx": 0, "name": "0", "path": "",
                                     "type": "sentence_transformers.sentence_transformer.modules.transformer.Transformer"},
                                    {"idx": 1, "name": "1", "path": "1_Pooling",
                                     "type": "sentence_transformers.sentence_transformer.modules.pooling.Pooling"}],
                   "1_Pooling/config.json": {"pooling_mode_lasttoken": True}}},
        {"name": "Qwen/Qwen2.5-Math-RM-72B (3 layers)", "config": {
            "architectures": ["Qwen2ForRewardModel"], "attention_dropout": 0.0, "bos_token_id": 151643,
            "eos_token_id": 151645, "hidden_act": "silu", "hidden_size": 8192, "initializer_range": 0.02,
            "intermediate_size": 29568, "max_position_embeddings": 4096, "max_window_layers": 70,
            "model_type": "qwen2", "num_attention_heads": 64, "num_hidden_layers": 3, "num_key_value_heads": 8,
            "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "sliding_window": 4096, "tie_word_embeddings": False,
            "torch_dtype": "bfloat16", "use_cache": True, "use_sliding_window": False, "vocab_size": 152064}},
        {"name": "Qwen/Qwen2.5-Math-PRM-7B (3 layers)", "config": {
            "architectures": ["Qwen2ForProcessRewardModel"], "attention_dropout": 0.0, "bos_token_id": 151643,
            "eos_token_id": 151645, "hidden_act": "silu", "hidden_size": 3584, "initializer_range": 0.02,
            "intermediate_size": 18944, "max_position_embeddings": 4096, "max_window_layers": 28,
            "model_type": "qwen2", "num_attention_heads": 28, "num_hidden_layers": 3, "num_key_value_heads": 4,
            "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "sliding_window": 4096, "tie_word_embeddings": False,
            "torch_dtype": "bfloat16", "use_cache": True, "use_sliding_window": False, "vocab_size": 152064}},
        {"name": "microsoft/DialogRPT-updown (GPT2ForSequenceClassification; 2 layers)", "config": {
            "architectures": ["GPT2ForSequenceClassification"], "activation_function": "gelu_new",
            "attn_pdrop": 0.1, "bos_token_id": 50256, "embd_pdrop": 0.1, "eos_token_id": 50256,
            "initializer_range": 0.02, "layer_norm_epsilon": 1e-05, "model_type": "gpt2", "n_ctx": 1024,
            "n_embd": 1024, "n_head": 16, "n_layer": 2, "n_positions": 1024, "num_labels": 1, "pad_token_id": 50256,
            "resid_pdrop": 0.1, "vocab_size": 50257}},
        {"name": "FacebookAI/roberta-base (RobertaForMaskedLM; 2 layers)", "config": {
            "architectures": ["RobertaForMaskedLM"], "attention_probs_dropout_prob": 0.1, "bos_token_id": 0,
            "eos_token_id": 2, "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 768,
            "initializer_range": 0.02, "intermediate_size": 3072, "layer_norm_eps": 1e-05,
            "max_position_embeddings": 514, "model_type": "roberta", "num_attention_heads": 12,
            "num_hidden_layers": 2, "pad_token_id": 1, "type_vocab_size": 1, "vocab_size": 50265}},
        {"name": "FacebookAI/xlm-roberta-large-finetuned-conll03-english (2 layers)", "config": {
            "architectures": ["XLMRobertaForTokenClassification"], "attention_probs_dropout_prob": 0.1,
            "bos_token_id": 0, "eos_token_id": 2, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
            "hidden_size": 1024, "id2label": {"0": "B-LOC", "1": "B-MISC", "2": "B-ORG", "3": "I-LOC",
                                              "4": "I-MISC", "5": "I-ORG", "6": "I-PER", "7": "O"},
            "label2id": {"B-LOC": 0, "B-MISC": 1, "B-ORG": 2, "I-LOC": 3, "I-MISC": 4, "I-ORG": 5, "I-PER": 6,
                         "O": 7},
            "initializer_range": 0.02, "intermediate_size": 4096, "layer_norm_eps": 1e-05,
            "max_position_embeddings": 514, "model_type": "xlm-roberta", "num_attention_heads": 16,
            "num_hidden_layers": 2, "output_past": True, "pad_token_id": 1, "type_vocab_size": 1,
            "vocab_size": 250002}},
        {"name": "Alibaba-NLP/gte-reranker-modernbert-base (4 layers)", "config": {
            "architectures": ["ModernBertForSequenceClassification"], "attention_bias": False,
            "attention_dropout": 0.0, "bos_token_id": 50281, "classifier_activation": "gelu",
            "classifier_bias": False, "classifier_dropout": 0.0, "classifier_pooling": "mean",
            "cls_token_id": 50281, "decoder_bias": True, "deterministic_flash_attn": False, "embedding_dropout": 0.0,
            "eos_token_id": 50282, "global_attn_every_n_layers": 3, "global_rope_theta": 160000.0,
            "hidden_activation": "gelu", "hidden_size": 768, "initializer_cutoff_factor": 2.0,
            "initializer_range": 0.02, "intermediate_size": 1152, "layer_norm_eps": 1e-05,
            "local_attention": 128, "local_rope_theta": 10000.0, "max_position_embeddings": 8192,
            "mlp_bias": False, "mlp_dropout": 0.0, "model_type": "modernbert", "norm_bias": False,
            "norm_eps": 1e-05, "num_attention_heads": 12, "num_hidden_layers": 4, "pad_token_id": 50283,
            "position_embedding_type": "absolute", "sep_token_id": 50282, "torch_dtype": "float32",
            "vocab_size": 50368, "id2label": {"0": "LABEL_0"}, "label2id": {"LABEL_0": 0}}},
        {"name": "answerdotai/ModernBERT-large as token classifier (4 layers)", "config": {
            "architectures": ["ModernBertForTokenClassification"], "attention_bias": False, "bos_token_id": 50281,
            "cls_token_id": 50281, "eos_token_id": 50282, "global_attn_every_n_layers": 3,
            "global_rope_theta": 160000.0, "hidden_activation": "gelu", "hidden_size": 1024,
            "intermediate_size": 2624, "local_attention": 128, "local_rope_theta": 10000.0,
            "max_position_embeddings": 8192, "model_type": "modernbert", "num_attention_heads": 16,
            "num_hidden_layers": 4, "pad_token_id": 50283, "sep_token_id": 50282, "torch_dtype": "float32",
            "vocab_size": 50368, "id2label": {"0": "O", "1": "B-PER", "2": "I-PER"},
            "label2id": {"O": 0, "B-PER": 1, "I-PER": 2}}},
        {"name": "openai/whisper-large-v3 (2 encoder, 2 decoder layers)", "config": {
            "architectures": ["WhisperForConditionalGeneration"], "activation_function": "gelu",
            "apply_spec_augment": False, "bos_token_id": 50257, "d_model": 1280, "decoder_attention_heads": 20,
            "decoder_ffn_dim": 5120, "decoder_layers": 2, "decoder_start_token_id": 50258,
            "encoder_attention_heads": 20, "encoder_ffn_dim": 5120, "encoder_layers": 2, "eos_token_id": 50257,
            "is_encoder_decoder": True, "max_source_positions": 1500, "max_target_positions": 448,
            "model_type": "whisper", "num_hidden_layers": 2, "num_mel_bins": 128, "pad_token_id": 50256,
            "scale_embedding": False, "torch_dtype": "float16", "use_cache": True, "vocab_size": 51866}},
        {"name": "distil-whisper/distil-large-v3 (3 encoder layers, its 2 decoder layers)", "config": {
            "architectures": ["WhisperForConditionalGeneration"], "activation_function": "gelu",
            "bos_token_id": 50257, "d_model": 1280, "decoder_attention_heads": 20, "decoder_ffn_dim": 5120,
            "decoder_layers": 2, "decoder_start_token_id": 50258, "encoder_attention_heads": 20,
            "encoder_ffn_dim": 5120, "encoder_layers": 3, "eos_token_id": 50257, "is_encoder_decoder": True,
            "max_source_positions": 1500, "max_target_positions": 448, "model_type": "whisper",
            "num_hidden_layers": 3, "num_mel_bins": 128, "pad_token_id": 50256, "scale_embedding": False,
            "torch_dtype": "float16", "use_cache": True, "vocab_size": 51866}},
        {"name": "openai/whisper-tiny (float32)", "config": {
            "architectures": ["WhisperForConditionalGeneration"], "activation_function": "gelu", "d_model": 384,
            "decoder_attention_heads": 6, "decoder_ffn_dim": 1536, "decoder_layers": 4,
            "decoder_start_token_id": 50258, "encoder_attention_heads": 6, "encoder_ffn_dim": 1536,
            "encoder_layers": 4, "is_encoder_decoder": True, "max_source_positions": 1500,
            "max_target_positions": 448, "model_type": "whisper", "num_hidden_layers": 4, "num_mel_bins": 80,
            "pad_token_id": 50257, "scale_embedding": False, "torch_dtype": "float32", "vocab_size": 51865}},
        {"name": "jinaai/jina-reranker-v3 (JinaForRanking over Qwen3; 3 layers)",
         "config": {**_QWEN3_06B, "architectures": ["JinaForRanking"]}},
        {"name": "jinaai/jina-embeddings-v5-text-small (its Qwen3Config subclass as qwen3; 3 layers)",
         "config": {**_QWEN3_06B, "architectures": ["JinaEmbeddingsV5Model"],
                    "task_names": ["retrieval", "text-matching", "clustering", "classification"]}},
        {"name": "jinaai/jina-embeddings-v5-text-nano (EuroBERT encoder, is_decoder false; 3 layers)", "config": {
            "architectures": ["JinaEmbeddingsV5Model"], "model_type": "eurobert", "is_decoder": False,
            "hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 3, "num_attention_heads": 12,
            "num_key_value_heads": 12, "max_position_embeddings": 8192, "rms_norm_eps": 1e-05,
            "torch_dtype": "bfloat16", "vocab_size": 128256, "rope_theta": 250000.0}},
        {"name": "LiquidAI/LFM2-350M as Lfm2BidirectionalModel (6 layers)",
         "config": {**_LFM2_350M, "architectures": ["Lfm2BidirectionalModel"]}},
        {"name": "LiquidAI/LFM2-350M (full_attn_idxs, no layer_types) as Lfm2BidirectionalModel", "config": {
            **{k: v for k, v in _LFM2_350M.items() if k != "layer_types"}, "full_attn_idxs": [2, 5],
            "architectures": ["Lfm2BidirectionalModel"]}},
        {"name": "TomoroAI/tomoro-colqwen3-embed-8b (3 text layers)", "config": {
            "architectures": ["ColQwen3"], "model_type": "colqwen3", "embed_dim": 320, **_QWEN3VL_TOP,
            "text_config": _QWEN3VL_8B_TEXT, "vision_config": _QWEN3VL_VISION}, "files": _QWEN_VL_PROCESSOR_FILES},
        {"name": "OpenSearch-AI/Ops-Colqwen3-4B (3 text layers)", "config": {
            "architectures": ["OpsColQwen3Model"], "model_type": "ops_colqwen3", "dims": 2560, **_QWEN3VL_TOP,
            "text_config": {**_QWEN3VL_8B_TEXT, "hidden_size": 2560, "intermediate_size": 9728,
                            "num_key_value_heads": 8},
            "vision_config": {**_QWEN3VL_VISION, "hidden_size": 1024, "num_heads": 16, "out_hidden_size": 2560}},
         "files": _QWEN_VL_PROCESSOR_FILES},
        {"name": "nvidia/nemotron-colembed-vl-8b-v2 (3 text layers)", "config": {
            "architectures": ["Qwen3VLNemotronEmbedModel"], "model_type": "qwen3_vl_nemotron_embed", **_QWEN3VL_TOP,
            "text_config": _QWEN3VL_8B_TEXT, "vision_config": _QWEN3VL_VISION}, "files": _QWEN_VL_PROCESSOR_FILES},
        {"name": "ModernVBERT/colmodernvbert-merged (4 text layers)", "config": {
            "architectures": ["ColModernVBertForRetrieval"], **_MODERNVBERT}},
        {"name": "ModernVBERT/modernvbert (ModernVBertModel; 4 text layers)", "config": {
            "architectures": ["ModernVBertModel"], **_MODERNVBERT}},
        {"name": "vidore/colpali-v1.3-hf (3 text layers)", "config": {
            "architectures": ["ColPaliForRetrieval"], "embedding_dim": 128, "initializer_range": 0.02,
            "model_type": "colpali", "torch_dtype": "bfloat16",
            "vlm_config": {"architectures": ["PaliGemmaForConditionalGeneration"], "bos_token_id": 2,
                           "eos_token_id": 1, "hidden_size": 2048, "image_token_index": 257152,
                           "model_type": "paligemma", "pad_token_id": 0, "projection_dim": 2048,
                           "text_config": {"hidden_size": 2048, "intermediate_size": 16384, "model_type": "gemma",
                                           "num_attention_heads": 8, "num_hidden_layers": 3,
                                           "num_image_tokens": 1024, "num_key_value_heads": 1,
                                           "torch_dtype": "float32", "vocab_size": 257216},
                           "torch_dtype": "bfloat16",
                           "vision_config": {"hidden_size": 1152, "image_size": 448, "intermediate_size": 4304,
                                             "model_type": "siglip_vision_model", "num_attention_heads": 16,
                                             "num_hidden_layers": 2, "num_image_tokens": 1024,
                                             "num_positions": 1024, "patch_size": 14, "projection_dim": 2048}}}},
        {"name": "ColQwen3.5 (Qwen3.5-2B backbone, bidirectional contract; 4 text layers)",
         "capability": [10, 0],
         "config": {"architectures": ["ColQwen3_5"], "model_type": "qwen3_5",
                    "retrieval_attention_contract": "bidirectional",
                    "text_config": _QWEN35_TEXT, "vision_config": _QWEN35_VISION, "image_token_id": 248056,
                    "video_token_id": 248057, "vision_start_token_id": 248053, "vision_end_token_id": 248054,
                    "tie_word_embeddings": True, "torch_dtype": "bfloat16", "embed_dim": 128},
         "files": _QWEN_VL_PROCESSOR_FILES},
        {"name": "ColQwen3.5 (Qwen3.5-2B backbone, causal contract on text_config; 4 text layers)",
         "capability": [10, 0],
         "config": {"architectures": ["ColQwen3_5"], "model_type": "qwen3_5",
                    "text_config": {**_QWEN35_TEXT, "retrieval_attention_contract": "causal"},
                    "vision_config": _QWEN35_VISION, "image_token_id": 248056,
                    "video_token_id": 248057, "vision_start_token_id": 248053, "vision_end_token_id": 248054,
                    "tie_word_embeddings": True, "torch_dtype": "bfloat16", "embed_dim": 128},
         "files": _QWEN_VL_PROCESSOR_FILES},
        {"name": "EmbeddingGemma2 text-only (EmbeddingGemma2TextConfig defaults, 6 layers)",
         "config": {**_EMBEDDING_GEMMA2, "text_config": _EMBEDDING_GEMMA2_TEXT}},
        {"name": "EmbeddingGemma2 text-only (layer_types, global head 512 / 2 KV heads, float32)",
         "config": {**_EMBEDDING_GEMMA2, "torch_dtype": "float32", "text_config": {
             **_EMBEDDING_GEMMA2_TEXT, "num_hidden_layers": 4, "sliding_window": 1024, "global_head_dim": 512,
             "num_global_key_value_heads": 2,
             "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "sliding_attention"]}}},
    ]
