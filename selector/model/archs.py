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
    _deepseek_v32,
    _deepseek_v41,
    _dots3_note,
    _encoder_only,
    _exaone_moe,
    _falcon,
    _flint,
    _gemma,
    _gemma4,
    _glm5_next,
    _gpt_oss,
    _granite,
    _hrm_text,
    _iquest_loopcoder,
    _hy_v4,
    _inkling,
    _kimi_linear,
    _llama,
    _llama4,
    _longcat_flash,
    _mimo_v2,
    _minicpm3,
    _minimax_m3,
    _modernbert,
    _plain,
    _qwen2,
    _qwen3_next,
    _qwen4_exp,
    _rnj1,
    _laguna,
    _step1,
    _step3p5,
    _step5,
    _whisper,
)
from attn_select.selector.model.layers_pooling import (
    _clip_text,
    _embedding_gemma2,
    _gemma1,
    _gpt2,
    _jina_v5,
    _lfm2,
    _openai_privacy_filter,
    _siglip_text,
)


# architectures[0] -> (layer builder, runner); the vLLM model file each mirrors
_ARCHS: dict[str, tuple[Callable[[_Ctx], Any], str]] = {
    "LlamaForCausalLM": (_llama, "generate"),
    "LLaMAForCausalLM": (_llama, "generate"),
    "Llama4ForCausalLM": (_llama4, "generate"),  # llama4.py
    "Llama4ForConditionalGeneration": (_llama4, "generate"),  # mllama4.py builds Llama4ForCausalLM
    "HrmTextForCausalLM": (_hrm_text, "generate"),  # hrm_text.py
    "Step3p5ForCausalLM": (_step3p5, "generate"),  # step3p5.py
    "Glm5NextForCausalLM": (_glm5_next, "generate"),  # vllm/models/glm5next
    "Step5ForCausalLM": (_step5, "generate"),  # vllm/models/step5: bypasses the selector
    "Step1ForCausalLM": (_step1, "generate"),  # step1.py
    "LagunaForCausalLM": (_laguna, "generate"),  # laguna.py
    "IQuestLoopCoderForCausalLM": (_iquest_loopcoder, "generate"),  # iquest_loopcoder.py
    "InklingForCausalLM": (_inkling, "generate"),  # vllm/models/inkling: bypasses the selector
    # the same text backbone with vision and audio towers beside it (no cross-modal fusion)
    "InklingForConditionalGeneration": (_inkling, "generate"),
    "MiniMaxM3SparseForCausalLM": (_minimax_m3, "generate"),  # vllm/models/minimax_m3
    "Qwen4ExpForCausalLM": (_qwen4_exp, "generate"),  # vllm/models/qwen4_exp
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
    "ExaoneMoeForCausalLM": (_exaone_moe, "generate"),  # exaone_moe.py (K-EXAONE)
    "GptOssForCausalLM": (_gpt_oss, "generate"),
    "Rnj1ForCausalLM": (_rnj1, "generate"),  # rnj1.py: Gemma-3 layers, chunked ones on TRITON_ATTN only
    "DeepseekForCausalLM": (_deepseek, "generate"),
    "DeepseekV2ForCausalLM": (_deepseek, "generate"),
    "DeepseekV3ForCausalLM": (_deepseek, "generate"),
    # registry.py: DeepseekV3ForCausalLM's class; is_causal false turns MLA off (ModelConfig.use_mla) and
    # its MHA path builds EncoderOnlyAttention over qk_nope + qk_rope
    "DeepseekV3BidirectionalModel": (_deepseek, "generate"),
    "DeepseekV32ForCausalLM": (_deepseek_v32, "generate"),
    "GlmMoeDsaForCausalLM": (_deepseek_v32, "generate"),  # same CUDA module as DeepSeek-V3.2
    "KimiLinearForCausalLM": (_kimi_linear, "generate"),  # vllm/models/kimi_k3 (CUDA)
    "HYV4ForCausalLM": (_hy_v4, "generate"),  # vllm/models/hy_v4 (CUDA)
    "FlintForCausalLM": (_flint, "generate"),  # vllm/models/flint
    "BailingMoeV2_5ForCausalLM": (_bailing_moe_v25, "generate"),  # bailing_moe_linear.py (bailing_hybrid)
    "BailingMoeV3ForCausalLM": (_bailing_moe_v3, "generate"),  # bailing_moe_v3.py (bailing_hybrid)
    "DeepseekV4ForCausalLM": (_deepseek_v4, "generate"),  # vllm/models/deepseek_v4: bypasses the selector
    # deepseek_v4/common/vl_model.py wraps the same text model (vision_n_layers > 0)
    "DeepseekV4ForConditionalGeneration": (_deepseek_v4, "generate"),
    "DeepseekV41ForCausalLM": (_deepseek_v41, "generate"),  # vllm/models/deepseek_v41: bypasses the selector
    "Dots3NoteForCausalLM": (_dots3_note, "generate"),  # vllm/models/dots3_note: fixed backends
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
    "MiMoV2FlashForCausalLM": (_mimo_v2, "generate"),  # mimo_v2.py
    "MiMoV2ForCausalLM": (_mimo_v2, "generate"),  # mimo_v2.py: a MiMoV2FlashForCausalLM subclass
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
    "OpenAIPrivacyFilterForTokenClassification": (_openai_privacy_filter, "pooling"),  # openai_privacy_filter.py
    # pooling / retrieval / speech wrappers (layers_pooling.py)
    "CLIPModel": (_clip_text, "pooling"),  # clip.py CLIPEmbeddingModel
    "SiglipModel": (_siglip_text, "pooling"),  # siglip.py SiglipEmbeddingModel
    "GPT2ForSequenceClassification": (_gpt2, "pooling"),  # gpt2.py
    # qwen2_rm.py: Qwen2Model layers under a token-classification pooler
    "Qwen2ForRewardModel": (lambda c: _qwen2(c, "hidden"), "pooling"),
    "Qwen2ForProcessRewardModel": (lambda c: _qwen2(c, "hidden"), "pooling"),
    "JinaForRanking": (lambda c: _qwen2(c, "head_dim"), "pooling"),  # jina.py: Qwen3Model layers
    "JinaEmbeddingsV5Model": (_jina_v5, "pooling"),  # jina.py
    "Lfm2BidirectionalModel": (_lfm2(bidirectional=True), "pooling"),  # lfm2.py
    # colqwen3.py ColQwen3Model: Qwen3VLForConditionalGeneration, whose text
    # model is Qwen3Model's layers over text_config
    **{arch: (lambda c: _qwen2(c, "head_dim"), "pooling") for arch in (
        "ColQwen3", "OpsColQwen3Model", "Qwen3VLNemotronEmbedModel")},
    # colqwen3_5.py: Qwen3_5ForConditionalGeneration's language model (is_causal per ColQwen3_5Config)
    "ColQwen3_5": (_qwen3_next, "pooling"),
    # colmodernvbert.py: ModernBertLayer over text_config
    "ColModernVBertForRetrieval": (_modernbert, "pooling"),
    "ModernVBertModel": (_modernbert, "pooling"),
    # colpali.py ColPaliModel: PaliGemma over vlm_config, its Gemma language model
    "ColPaliForRetrieval": (_gemma1, "pooling"),
    "EmbeddingGemma2Model": (_embedding_gemma2, "pooling"),  # embedding_gemma2.py
    # colbert.py: ColBERT heads over BertModel (HF_ColBERT), ModernBertModel, JinaRobertaModel
    # (bert_with_rope.py) and Lfm2Model (decoder Attention on its full_attention layers)
    "HF_ColBERT": (_bert, "pooling"),
    "ColBERTModernBertModel": (_modernbert, "pooling"),
    "ColBERTJinaRobertaModel": (_encoder_only, "pooling"),
    "ColBERTLfm2Model": (_lfm2(bidirectional=False), "pooling"),
}

# _SUFFIX_TO_DEFAULTS: the runner of an architecture vLLM's registry lacks
_POOLING_SUFFIXES = ("ForTextEncoding", "EmbeddingModel", "ForSequenceClassification", "ForTokenClassification",
                     "ForAudioClassification", "ForImageClassification", "ForVideoClassification",
                     "ClassificationModel", "ForRewardModeling", "RewardModel")
_GENERATE_SUFFIXES = ("ForCausalLM", "ForConditionalGeneration", "ChatModel", "LMHeadModel")


# Registered architectures named *Model whose classes vLLM's registry
# inspects as text generation models (is_text_generation_model, not
# is_pooling_model): the default runner is generate, whatever the suffix says
_GENERATE_DESPITE_SUFFIX = frozenset({
    "UltravoxModel", "MiDashengLMModel", "DFlashDraftModel", "DFlashMuseGlimmerAssistantModel",
    "MuseGlimmerAssistantModel", "DeepseekV3BidirectionalModel",
})


def _runner_by_suffix(arch: str) -> str:
    if arch in _GENERATE_DESPITE_SUFFIX:
        return "generate"
    for suffix in _GENERATE_SUFFIXES:
        if arch.endswith(suffix):
            return "generate"
    for suffix in _POOLING_SUFFIXES:
        if arch.endswith(suffix):
            return "pooling"
    return "pooling" if arch.endswith("Model") else "generate"


# Multimodal wrappers whose language model is another registered architecture,
# built by utils.init_vllm_registered_model over text_config: the architecture
# the wrapper names (its model file), or None where it names none, so that
# VllmConfig.with_hf_config takes text_config.architectures, else transformers'
# causal-LM class for the text config's model_type.
_LANGUAGE_MODEL: dict[str, str | None] = {
    # llava.py / mistral3.py: init_vllm_registered_model(hf_config=config.text_config), whose
    # architectures (else transformers' causal-LM class of its model type) pick the language model
    "LlavaForConditionalGeneration": None,
    "Mistral3ForConditionalGeneration": None,
    "LlavaOnevisionForConditionalGeneration": None,  # llava_onevision.py
    "LlavaNextVideoForConditionalGeneration": None,  # llava_next_video.py
    # init_vllm_registered_model(hf_config=config.text_config): the language model text_config names
    "LlavaNextForConditionalGeneration": None,  # llava_next.py
    "PixtralForConditionalGeneration": None,  # pixtral.py
    "InternVLChatModel": None,  # internvl.py (remote-code format)
    "H2OVLChatModel": None,  # h2ovl.py: InternVLChatModel's
    "NVLM_D": None,  # nvlm_d.py: InternVLChatModel's
    "SkyworkR1VChatModel": None,  # skyworkr1v.py
    "Eagle2_5_VLForConditionalGeneration": None,  # eagle2_5_vl.py
    "InternS1ForConditionalGeneration": None,  # interns1.py
    "InternVLForConditionalGeneration": None,  # internvl.py (HF format)
    "Blip2ForConditionalGeneration": None,  # blip2.py
    "Cohere2VisionForConditionalGeneration": None,  # cohere2_vision.py: text_config.architectures
    "Lfm2VlForConditionalGeneration": None,  # lfm2_vl.py: text_config.architectures
    "Step3VLForConditionalGeneration": None,  # step3_vl.py
    "DeepseekVLV2ForCausalLM": None,  # deepseek_vl2.py
    "DeepseekOCRForCausalLM": None,  # deepseek_ocr.py
    "DeepseekOCR2ForCausalLM": None,  # deepseek_ocr2.py
    "LightOnOCRForConditionalGeneration": None,  # lightonocr.py
    "VoxtralForConditionalGeneration": None,  # voxtral.py
    "Qwen2AudioForConditionalGeneration": "Qwen2ForCausalLM",  # qwen2_audio.py
    "AudioFlamingo3ForConditionalGeneration": "Qwen2ForCausalLM",  # audioflamingo3.py
    # qwen2_5_omni_thinker.py: the thinker's language model over thinker_config.text_config
    "Qwen2_5OmniModel": "Qwen2ForCausalLM",
    "Qwen2_5OmniForConditionalGeneration": "Qwen2ForCausalLM",
    "KimiK25ForConditionalGeneration": "DeepseekV2ForCausalLM",  # kimi_k25.py
    "BailingMoeV3VLForConditionalGeneration": "BailingMoeV3ForCausalLM",  # bailing_moe_v3_vl.py, over text_config
    # mimo_v2_omni.py: MiMoV2FlashForCausalLM over the same (flat) config, towers beside it
    "MiMoV2OmniForCausalLM": "MiMoV2FlashForCausalLM",
    # diffusion_gemma.py: Gemma4Model over text_config (attention_k_eq_v forced on: weights only)
    "DiffusionGemmaForBlockDiffusion": "Gemma4ForCausalLM",
    # vllm/models/minimax_m3: its text_config built as MiniMaxM3SparseForCausalLM
    "MiniMaxM3SparseForConditionalGeneration": "MiniMaxM3SparseForCausalLM",
    "IsaacForConditionalGeneration": "Qwen3ForCausalLM",  # isaac.py
    "Exaone4_5_ForConditionalGeneration": "Exaone4ForCausalLM",  # exaone4_5.py
    "Gemma3nForConditionalGeneration": "Gemma3nForCausalLM",  # gemma3n_mm.py
    "Glm5NextForConditionalGeneration": "Glm5NextForCausalLM",  # vllm/models/glm5next/common/model.py
    # minicpmv4_6.py builds Qwen3_5ForCausalLM over text_config (4.7 and the OCR model subclass it)
    "MiniCPMV4_6ForConditionalGeneration": "Qwen3_5ForCausalLM",
    "MiniCPMV4_7ForConditionalGeneration": "Qwen3_5ForCausalLM",
    "MiniCPMOcrForConditionalGeneration": "Qwen3_5ForCausalLM",
    # vllm/models/qwen4_exp/{nvidia,amd}/model.py: Qwen4ExpForCausalLM over hf_text_config
    "Qwen4ExpForConditionalGeneration": "Qwen4ExpForCausalLM",
    # vllm/models/kimi_k3/nvidia/model.py: init_vllm_registered_model(architectures=["KimiLinearForCausalLM"])
    "KimiK3ForConditionalGeneration": "KimiLinearForCausalLM",
    # speech models: the language model each builds over its text config
    "GraniteSpeechForConditionalGeneration": None,  # granite_speech.py: text_config.architectures
    "GraniteSpeechPlusForConditionalGeneration": None,  # granite_speech_plus.py: the same
    "GlmAsrForConditionalGeneration": "LlamaForCausalLM",  # glmasr.py
    "MossTranscribeDiarizeForConditionalGeneration": "Qwen3ForCausalLM",  # moss_transcribe_diarize.py
    "Qwen3ASRForConditionalGeneration": "Qwen3ForCausalLM",  # qwen3_asr.py over thinker_config.text_config
}

# transformers' MODEL_FOR_CAUSAL_LM_MAPPING_NAMES, for the text model types
# whose causal-LM class has its own builder here (any other falls to the
# generic derivation, whatever its name)
_CAUSAL_LM_OF_TYPE = {
    "llama": "LlamaForCausalLM", "mistral": "MistralForCausalLM", "ministral3": "Ministral3ForCausalLM",
    "mixtral": "MixtralForCausalLM", "phi3": "Phi3ForCausalLM", "qwen2": "Qwen2ForCausalLM",
    "qwen3": "Qwen3ForCausalLM", "qwen2_moe": "Qwen2MoeForCausalLM", "qwen3_moe": "Qwen3MoeForCausalLM",
    "qwen3_next": "Qwen3NextForCausalLM", "qwen3_5_text": "Qwen3_5ForCausalLM",
    "qwen3_5_moe_text": "Qwen3_5MoeForCausalLM", "gemma2": "Gemma2ForCausalLM", "gemma3_text": "Gemma3ForCausalLM",
    "gemma4_text": "Gemma4ForCausalLM", "cohere2": "Cohere2ForCausalLM", "cohere2_moe": "Cohere2MoeForCausalLM",
    "gpt_oss": "GptOssForCausalLM", "deepseek_v2": "DeepseekV2ForCausalLM", "deepseek_v3": "DeepseekV3ForCausalLM",
    "deepseek_v32": "DeepseekV32ForCausalLM", "glm_moe_dsa": "GlmMoeDsaForCausalLM", "falcon": "FalconForCausalLM",
    "granite": "GraniteForCausalLM", "granitemoe": "GraniteMoeForCausalLM",
    "granitemoeshared": "GraniteMoeSharedForCausalLM", "minicpm3": "MiniCPM3ForCausalLM",
    "longcat_flash": "LongcatFlashForCausalLM", "kimi_linear": "KimiLinearForCausalLM",
}


def language_model_arch(arch: str, text_view: Any) -> str:
    """The architecture whose layers vLLM builds for ``arch``: itself, or
    the language model a multimodal wrapper builds over text_config."""
    if arch == "PaliGemmaForConditionalGeneration":
        # paligemma.py sets text_config.architectures itself: Gemma for a gemma text config, else Gemma2
        return "GemmaForCausalLM" if text_view.model_type == "gemma" else "Gemma2ForCausalLM"
    if arch not in _LANGUAGE_MODEL:
        return arch
    named = _LANGUAGE_MODEL[arch]
    if named is not None:
        return named
    given = text_view.get("architectures")
    if given:
        return given[0]
    return _CAUSAL_LM_OF_TYPE.get(text_view.model_type, arch)
