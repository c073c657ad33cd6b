"""Which layer builder and which runner (generate / pooling) vLLM uses for
an architecture: the model registry, reduced to the architectures mirrored
in ``layers``, and the suffix rule for the rest."""

from __future__ import annotations

from typing import Any, Callable

from attn_select.selector.model.layers import (
    _Ctx,
    _bert,
    _cohere2,
    _deepseek,
    _deepseek_v32,
    _gemma,
    _gemma4,
    _gpt_oss,
    _llama,
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
    "LlamaModel": (_llama, "pooling"),
    "MistralModel": (_llama, "pooling"),
    "MixtralForCausalLM": (lambda c: _plain(c, head_rule="none_only", reads_is_causal=False), "generate"),
    "Qwen2ForCausalLM": (lambda c: _qwen2(c, "hidden"), "generate"),
    "Qwen2Model": (lambda c: _qwen2(c, "hidden"), "pooling"),
    "Qwen3ForCausalLM": (lambda c: _qwen2(c, "head_dim"), "generate"),
    # qwen2_5_vl.py builds its language model as Qwen2ForCausalLM over text_config
    "Qwen2_5_VLForConditionalGeneration": (lambda c: _qwen2(c, "hidden"), "generate"),
    "Qwen3MoeForCausalLM": (lambda c: _plain(c, head_rule="head_dim", reads_is_causal=False), "generate"),
    "Qwen3NextForCausalLM": (_qwen3_next, "generate"),
    "Gemma2ForCausalLM": (lambda c: _gemma(c, True, False), "generate"),
    "Gemma2Model": (lambda c: _gemma(c, True, False), "pooling"),
    "Gemma3ForCausalLM": (lambda c: _gemma(c, False, True), "generate"),
    "Gemma3ForConditionalGeneration": (lambda c: _gemma(c, False, True), "generate"),
    "Gemma4ForCausalLM": (_gemma4, "generate"),
    "Gemma4ForConditionalGeneration": (_gemma4, "generate"),  # gemma4_mm.py builds Gemma4ForCausalLM
    "Gemma4UnifiedForConditionalGeneration": (_gemma4, "generate"),  # gemma4_unified.py: the same
    "Cohere2ForCausalLM": (_cohere2, "generate"),  # commandr.py CohereForCausalLM
    "GptOssForCausalLM": (_gpt_oss, "generate"),
    "DeepseekForCausalLM": (_deepseek, "generate"),
    "DeepseekV2ForCausalLM": (_deepseek, "generate"),
    "DeepseekV3ForCausalLM": (_deepseek, "generate"),
    "DeepseekV32ForCausalLM": (_deepseek_v32, "generate"),
    "GlmMoeDsaForCausalLM": (_deepseek_v32, "generate"),  # same CUDA module as DeepSeek-V3.2
    "BertModel": (_bert, "pooling"),
    "BertForMaskedLM": (_bert, "pooling"),
    "BertForSequenceClassification": (_bert, "pooling"),
    "BertForTokenClassification": (_bert, "pooling"),
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

