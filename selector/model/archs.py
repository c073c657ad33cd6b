"""Which layer builder and which runner (generate / pooling) vLLM uses for
an architecture: the model registry, reduced to the architectures mirrored
in ``layers``, and the suffix rule for the rest."""

from __future__ import annotations

from typing import Any, Callable

from attn_select.selector.model.layers import (
    _Ctx,
    _attention_free,
    _bailing_moe_v25,
    _bailing_moe_v3,
    _bert,
    _bert_with_rope,
    _chatglm,
    _cohere2,
    _decilm,
    _deepseek,
    _deepseek_v4,
    _encoder_only,
    _deepseek_v32,
    _falcon,
    _flint,
    _gemma,
    _gemma4,
    _gpt_oss,
    _granite,
    _hy_v4,
    _kimi_linear,
    _llama,
    _longcat_flash,
    _minicpm3,
    _modernbert,
    _plain,
    _qwen2,
    _qwen3_next,
    _whisper,
)


# architectures[0] -> (layer builder, runner); the vLLM model file each mirrors
_ARCHS: dict[str, tuple[Callable[[_Ctx], Any], str]] = {
    "LlamaForCausalLM": (_llama, "generate"),
    "LLaMAForCausalLM": (_llama, "generate"),
    "MistralForCausalLM": (_llama, "generate"),
    "Ministral3ForCausalLM": (_llama, "generate"),
    "Phi3ForCausalLM": (_llama, "generate"),
    "InternLM3ForCausalLM": (_llama, "generate"),
    # registry: LlamaModel / MistralModel / Qwen2Model / Gemma2Model build the
    # *ForCausalLM class, not a pooling one, so the default runner is generate
    "LlamaModel": (_llama, "generate"),
    "MistralModel": (_llama, "generate"),
    "MixtralForCausalLM": (lambda c: _plain(c, head_rule="none_only", reads_is_causal=False), "generate"),
    "Qwen2ForCausalLM": (lambda c: _qwen2(c, "hidden"), "generate"),
    "Qwen2Model": (lambda c: _qwen2(c, "hidden"), "generate"),
    "Qwen3ForCausalLM": (lambda c: _qwen2(c, "head_dim"), "generate"),
    # qwen2_5_vl.py builds its language model as Qwen2ForCausalLM over text_config
    "Qwen2_5_VLForConditionalGeneration": (lambda c: _qwen2(c, "hidden"), "generate"),
    "Qwen2VLForConditionalGeneration": (lambda c: _qwen2(c, "hidden"), "generate"),  # qwen2_vl.py: the same
    "Qwen3MoeForCausalLM": (lambda c: _plain(c, head_rule="head_dim", reads_is_causal=False), "generate"),
    "Qwen3NextForCausalLM": (_qwen3_next, "generate"),
    "Gemma2ForCausalLM": (lambda c: _gemma(c, True, False), "generate"),
    "Gemma2Model": (lambda c: _gemma(c, True, False), "generate"),
    "Gemma3ForCausalLM": (lambda c: _gemma(c, False, True), "generate"),
    "Gemma3TextModel": (lambda c: _gemma(c, False, True), "pooling"),  # gemma3.py Gemma3Model
    # llama.py; LlamaBidirectionalConfig makes every layer encoder-only
    "LlamaBidirectionalModel": (_llama, "pooling"),
    # voyage.py: Qwen3Model layers, made bidirectional by its config update
    "VoyageQwen3BidirectionalEmbedModel": (lambda c: _qwen2(c, "head_dim"), "pooling"),
    "LlamaBidirectionalForSequenceClassification": (_llama, "pooling"),
    "Gemma3ForConditionalGeneration": (lambda c: _gemma(c, False, True), "generate"),
    "Gemma4ForCausalLM": (_gemma4, "generate"),
    "Gemma4ForConditionalGeneration": (_gemma4, "generate"),  # gemma4_mm.py builds Gemma4ForCausalLM
    "Gemma4UnifiedForConditionalGeneration": (_gemma4, "generate"),  # gemma4_unified.py: the same
    "Cohere2ForCausalLM": (_cohere2, "generate"),  # commandr.py CohereForCausalLM
    # cohere2_moe.py Cohere2MoeAttention: the same sliding_window + 1 on layer_types' sliding layers
    "Cohere2MoeForCausalLM": (_cohere2, "generate"),
    "GptOssForCausalLM": (_gpt_oss, "generate"),
    "DeepseekForCausalLM": (_deepseek, "generate"),
    "DeepseekV2ForCausalLM": (_deepseek, "generate"),
    "DeepseekV3ForCausalLM": (_deepseek, "generate"),
    "DeepseekV32ForCausalLM": (_deepseek_v32, "generate"),
    "GlmMoeDsaForCausalLM": (_deepseek_v32, "generate"),  # same CUDA module as DeepSeek-V3.2
    "KimiLinearForCausalLM": (_kimi_linear, "generate"),
    "HYV4ForCausalLM": (_hy_v4, "generate"),  # vllm/models/hy_v4 (CUDA)
    "FlintForCausalLM": (_flint, "generate"),  # vllm/models/flint  # vllm/models/kimi_k3 (CUDA)
    "BailingMoeV2_5ForCausalLM": (_bailing_moe_v25, "generate"),  # bailing_moe_linear.py (bailing_hybrid)
    "BailingMoeV3ForCausalLM": (_bailing_moe_v3, "generate"),  # bailing_moe_v3.py (bailing_hybrid)
    "DeepseekV4ForCausalLM": (_deepseek_v4, "generate"),  # vllm/models/deepseek_v4: bypasses the selector
    # deepseek_v4/common/vl_model.py wraps the same text model (vision_n_layers > 0)
    "DeepseekV4ForConditionalGeneration": (_deepseek_v4, "generate"),
    "FalconForCausalLM": (_falcon, "generate"),  # falcon.py
    "GraniteForCausalLM": (lambda c: _granite(c, "head_dim"), "generate"),  # granite.py
    "GraniteSWAForCausalLM": (lambda c: _granite(c, "head_dim"), "generate"),  # granite.py
    "GraniteMoeForCausalLM": (lambda c: _granite(c, "hidden"), "generate"),  # granitemoe.py
    # granitemoeshared.py builds granitemoe.py's GraniteMoeAttention
    "GraniteMoeSharedForCausalLM": (lambda c: _granite(c, "hidden"), "generate"),
    "GraniteMoeSWAForCausalLM": (lambda c: _granite(c, "hidden"), "generate"),
    # qwen2_moe.py: hidden // heads, no per-layer window, is_causal not read
    "Qwen2MoeForCausalLM": (lambda c: _plain(c, head_rule="hidden", reads_is_causal=False), "generate"),
    "ChatGLMModel": (_chatglm, "generate"),  # chatglm.py ChatGLMForCausalLM
    "ChatGLMForConditionalGeneration": (_chatglm, "generate"),
    "MiniCPM3ForCausalLM": (_minicpm3, "generate"),  # minicpm3.py
    # mistral_large_3.py: DeepseekV3ForCausalLM over the deepseek_v3 config vLLM
    # makes from a Mistral-format params.json
    "MistralLarge3ForCausalLM": (_deepseek, "generate"),
    "LongcatFlashForCausalLM": (_longcat_flash, "generate"),  # longcat_flash.py
    "DeciLMForCausalLM": (_decilm, "generate"),  # nemotron_nas.py
    # qwen3_5.py Qwen3_5ForCausalLM: Qwen3-Next's attention / Gated DeltaNet layers
    "Qwen3_5ForCausalLM": (_qwen3_next, "generate"),
    "Qwen3_5MoeForCausalLM": (_qwen3_next, "generate"),
    "MambaForCausalLM": (_attention_free("mamba"), "generate"),  # mamba.py
    "FalconMambaForCausalLM": (_attention_free("mamba"), "generate"),  # mamba.py
    "Mamba2ForCausalLM": (_attention_free("mamba2"), "generate"),  # mamba2.py
    "BertModel": (_bert, "pooling"),
    "BertForMaskedLM": (_bert, "pooling"),
    "BertForSequenceClassification": (_bert, "pooling"),
    "BertForTokenClassification": (_bert, "pooling"),
    "BertSpladeSparseEmbeddingModel": (_bert, "pooling"),
    # roberta.py (RobertaEmbeddingModel / ForSequenceClassification / ForTokenClassification):
    # BertModel's layers, or JinaRobertaModel's for rotary positions; any position type
    **{arch: (_encoder_only, "pooling") for arch in (
        "RobertaModel", "RobertaForMaskedLM", "XLMRobertaModel", "BgeM3EmbeddingModel",
        "RobertaForSequenceClassification", "XLMRobertaForSequenceClassification",
        "RobertaForTokenClassification", "XLMRobertaForTokenClassification")},
    # bert_with_rope.py (remote-code configs: NomicBertConfig, NewConfig, GteConfig)
    **{arch: (_bert_with_rope, "pooling") for arch in (
        "NomicBertModel", "GteModel", "GteNewModel", "GteNewForSequenceClassification")},
    # modernbert.py
    **{arch: (_modernbert, "pooling") for arch in (
        "ModernBertModel", "ModernBertForSequenceClassification", "ModernBertForTokenClassification")},
    "WhisperForConditionalGeneration": (_whisper, "generate"),
}

# _SUFFIX_TO_DEFAULTS: the runner of an architecture vLLM's registry lacks
_POOLING_SUFFIXES = ("ForTextEncoding", "EmbeddingModel", "ForSequenceClassification", "ForTokenClassification",
                     "ForAudioClassification", "ForImageClassification", "ForVideoClassification",
                     "ClassificationModel", "ForRewardModeling", "RewardModel")
_GENERATE_SUFFIXES = ("ForCausalLM", "ForConditionalGeneration", "ChatModel", "LMHeadModel")


def _runner_by_suffix(arch: str) -> str:
    for suffix in _GENERATE_SUFFIXES:
        if arch.endswith(suffix):
            return "generate"
    for suffix in _POOLING_SUFFIXES:
        if arch.endswith(suffix):
            return "pooling"
    return "pooling" if arch.endswith("Model") else "generate"

