"""Facts of vLLM 0.33.0's model registry (model_executor/models/registry.py)
that decide how an architecture is served when attn-select has no mirror of
its model file: through the Transformers modeling backend, or not at all."""

from __future__ import annotations

from attn_select.selector.engines import VLLM_VERSION

# registry.py _TRANSFORMERS_SUPPORTED_MODELS (text generation): architectures
# vLLM 0.33.0 serves through its Transformers modeling backend, whose
# _create_attention_instances gives a layer a window only from layer_types
# (else cache_config's, to every layer) and the soft cap from
# attn_logit_softcapping: what the generic derivation reads too.
TRANSFORMERS_BACKEND = frozenset({
    "ArceeForCausalLM", "CwmForCausalLM", "FlexOlmoForCausalLM", "GlmForCausalLM", "GPTBigCodeForCausalLM",
    "GPTNeoXForCausalLM", "HunYuanDenseV1ForCausalLM", "HunYuanMoEV1ForCausalLM", "Jais2ForCausalLM",
    "Kolibri1ForCausalLM", "MellumForCausalLM", "NanbeigeForCausalLM", "OlmoForCausalLM", "Olmo2ForCausalLM",
    "Olmo3ForCausalLM", "PhiForCausalLM", "SeedOssForCausalLM", "SmolLM3ForCausalLM", "Starcoder2ForCausalLM",
    "VaultGemmaForCausalLM",
})

# registry.py _PREVIOUSLY_SUPPORTED_MODELS: architectures vLLM dropped, with
# the last version that had them. vLLM 0.33.0 no longer has a model file for
# them: it can only try its Transformers backend, else it raises.
_DROPPED: dict[str, str] = {
    "MotifForCausalLM": "0.10.2", "Phi3SmallForCausalLM": "0.9.2", "Phi4FlashForCausalLM": "0.10.2",
    "Phi4MultimodalForCausalLM": "0.12.0", "JAISLMHeadModel": "0.22.0", "ErnieModel": "0.23.0",
    "ErnieForSequenceClassification": "0.23.0", "ErnieForTokenClassification": "0.23.0",
    "InternLM2VEForCausalLM": "0.23.0", "QWenLMHeadModel": "0.23.0", "QwenVLForConditionalGeneration": "0.23.0",
    "InternLMForCausalLM": "0.23.0", "DonutForConditionalGeneration": "0.10.2",
    "MllamaForConditionalGeneration": "0.10.2", "XverseForCausalLM": "0.23.0", "Dots1ForCausalLM": "0.23.0",
    "BambaForCausalLM": "0.23.0", "MiniMaxForCausalLM": "0.23.0", "MiniMaxText01ForCausalLM": "0.23.0",
    "MiniMaxM1ForCausalLM": "0.23.0", "MiniMaxVL01ForConditionalGeneration": "0.23.0",
    "BaiChuanForCausalLM": "0.23.0", "BaichuanForCausalLM": "0.23.0", "AquilaModel": "0.24.0",
    "AquilaForCausalLM": "0.24.0", "Grok1ModelForCausalLM": "0.24.0", "Grok1ForCausalLM": "0.24.0",
    "TarsierForConditionalGeneration": "0.24.0", "Tarsier2ForConditionalGeneration": "0.23.0",
    "MantisForConditionalGeneration": "0.24.0", "MusicFlamingoForConditionalGeneration": "0.24.0",
    "AyaVisionForConditionalGeneration": "0.24.0", "TeleChatForCausalLM": "0.25.0",
    "PersimmonForCausalLM": "0.25.0", "FuyuForCausalLM": "0.25.0", "Plamo2ForCausalLM": "0.26.0",
    "OuroForCausalLM": "0.26.0", "ArcticForCausalLM": "0.28.0", "ChameleonForConditionalGeneration": "0.28.0",
    "Cheers": "0.28.0", "CheersForConditionalGeneration": "0.28.0", "Fairseq2LlamaForCausalLM": "0.28.0",
    "FireRedLIDForConditionalGeneration": "0.28.0", "GritLM": "0.28.0", "HCXVisionForCausalLM": "0.28.0",
    "MPTForCausalLM": "0.28.0", "MptForCausalLM": "0.28.0", "RWForCausalLM": "0.28.0",
    "StableLMEpochForCausalLM": "0.28.0", "PrithviGeoSpatialMAE": "0.28.0",
}


# registry.py _VLLM_MODELS: every architecture vLLM 0.33.0 has a model class
# for (its own files and the Transformers-backend entries). ModelRegistry
# resolves any other architecture through _try_resolve_transformers: the
# Transformers modeling backend, if transformers can build the model, else
# it raises.
REGISTERED = frozenset({
    "AXK1ForCausalLM", "AfmoeForCausalLM", "AliceAIForCausalLM", "Alpamayo2Super", "ApertusForCausalLM",
    "ArceeForCausalLM", "AriaForConditionalGeneration", "AudioFlamingo3ForConditionalGeneration",
    "BagelForConditionalGeneration", "BailingMoeForCausalLM", "BailingMoeV25MTPModel", "BailingMoeV2ForCausalLM",
    "BailingMoeV2_5ForCausalLM", "BailingMoeV3ForCausalLM", "BailingMoeV3MTPModel",
    "BailingMoeV3VLForConditionalGeneration", "BeamForCausalLM", "BeeForConditionalGeneration", "BertForMaskedLM",
    "BertForSequenceClassification", "BertForTokenClassification", "BertModel", "BertSpladeSparseEmbeddingModel",
    "BgeM3EmbeddingModel", "Blip2ForConditionalGeneration", "BloomForCausalLM", "CLIPModel",
    "ChatGLMForConditionalGeneration", "ChatGLMModel", "ClefFlashForJointSchema", "ClefOmniForJointSchema",
    "Cohere2ForCausalLM", "Cohere2MoeForCausalLM", "Cohere2VisionForConditionalGeneration",
    "CohereAsrForConditionalGeneration", "CohereCompassForConditionalGeneration", "CohereForCausalLM",
    "ColBERTJinaRobertaModel", "ColBERTLfm2Model", "ColBERTModernBertModel", "ColModernVBertForRetrieval",
    "ColPaliForRetrieval", "ColQwen3", "ColQwen3_5", "ColUltraVBertForRetrieval",
    "Cosmos3EdgeForConditionalGeneration", "Cosmos3ForConditionalGeneration", "CwmForCausalLM",
    "D3ForSequenceClassification", "DFlash2BeamDraftModel", "DFlash2DraftModel", "DFlashDraftModel",
    "DFlashLagunaForCausalLM", "DFlashMuseGlimmerAssistantModel", "DFlashQwen3XPressModel", "DSparkDraftModel",
    "DSparkV41DraftModel", "DbrxForCausalLM", "DeciLMForCausalLM", "DeepSeekMTPModel", "DeepSeekV4MTPModel",
    "DeepseekForCausalLM", "DeepseekOCR2ForCausalLM", "DeepseekOCRForCausalLM", "DeepseekV2ForCausalLM",
    "DeepseekV32ForCausalLM", "DeepseekV32MTPModel", "DeepseekV3BidirectionalModel", "DeepseekV3ForCausalLM",
    "DeepseekV41ForCausalLM", "DeepseekV4ForCausalLM", "DeepseekV4ForConditionalGeneration",
    "DeepseekVLV2ForCausalLM", "DiffusionGemmaForBlockDiffusion", "DomynEdgeForCausalLM", "DoryForCausalLM",
    "Dots3NoteForCausalLM", "Dots3NoteMTPModel", "DotsOCRForCausalLM", "Eagle2_5_VLForConditionalGeneration",
    "Eagle3DeepseekV2ForCausalLM", "Eagle3DeepseekV3ForCausalLM", "Eagle3LlamaForCausalLM",
    "Eagle3MiniMaxM2ForCausalLM", "Eagle3Qwen2_5vlForCausalLM", "Eagle3Qwen3ForCausalLM",
    "Eagle3Qwen3vlForCausalLM", "EagleCohereForCausalLM", "EagleDeepSeekMTPModel", "EagleLlama4ForCausalLM",
    "EagleLlamaForCausalLM", "EagleMiniCPMForCausalLM", "EagleMistralForCausalLM", "EagleMistralLarge3ForCausalLM",
    "EmbeddingGemma2Model", "Emu3ForConditionalGeneration", "Ernie4_5ForCausalLM", "Ernie4_5_MoeForCausalLM",
    "Ernie4_5_VLMoeForConditionalGeneration", "ErnieMTPModel", "Exaone4ForCausalLM",
    "Exaone4_5_ForConditionalGeneration", "Exaone4_5_MTP", "ExaoneForCausalLM", "ExaoneMoEForCausalLM",
    "ExaoneMoeForCausalLM", "ExaoneMoeMTP", "ExtractHiddenStatesModel", "FalconForCausalLM", "FalconH1ForCausalLM",
    "FalconMambaForCausalLM", "FireRedASR2ForConditionalGeneration", "FlexOlmoForCausalLM", "FlintForCausalLM",
    "FunASRForConditionalGeneration", "FunAudioChatForConditionalGeneration", "GLM4VForCausalLM",
    "GPT2ForSequenceClassification", "GPT2LMHeadModel", "GPTBigCodeForCausalLM", "GPTJForCausalLM",
    "GPTNeoXForCausalLM", "Gemma2ForCausalLM", "Gemma2Model", "Gemma3ForCausalLM", "Gemma3ForConditionalGeneration",
    "Gemma3TextModel", "Gemma3nForCausalLM", "Gemma3nForConditionalGeneration", "Gemma4DSparkModel",
    "Gemma4ForCausalLM", "Gemma4ForConditionalGeneration", "Gemma4MTPModel",
    "Gemma4UnifiedForConditionalGeneration", "GemmaForCausalLM", "Glm4ForCausalLM", "Glm4MoeForCausalLM",
    "Glm4MoeLiteForCausalLM", "Glm4MoeLiteMTPModel", "Glm4MoeMTPModel", "Glm4vForConditionalGeneration",
    "Glm4vMoeForConditionalGeneration", "Glm5NextForCausalLM", "Glm5NextForConditionalGeneration",
    "Glm5NextMTPModel", "GlmAsrForConditionalGeneration", "GlmForCausalLM", "GlmMoeDsaForCausalLM",
    "GlmOcrForConditionalGeneration", "GlmOcrMTPModel", "GptOssForCausalLM",
    "Granite4VisionForConditionalGeneration", "GraniteForCausalLM", "GraniteMoeForCausalLM",
    "GraniteMoeHybridForCausalLM", "GraniteMoeSWAForCausalLM", "GraniteMoeSharedForCausalLM",
    "GraniteSWAForCausalLM", "GraniteSpeechForConditionalGeneration", "GraniteSpeechPlusForConditionalGeneration",
    "GteModel", "GteNewForSequenceClassification", "GteNewModel", "H2OVLChatModel", "HCXVisionV2ForCausalLM",
    "HF_ColBERT", "HYV3ForCausalLM", "HYV3MTPModel", "HYV4ForCausalLM", "HYV4MTPModel", "HfMoondream",
    "HrmTextForCausalLM", "HunYuanDenseV1ForCausalLM", "HunYuanMoEV1ForCausalLM",
    "HunYuanVLForConditionalGeneration", "HyperCLOVAXForCausalLM", "IQuestCoderForCausalLM",
    "IQuestLoopCoderForCausalLM", "Idefics3ForConditionalGeneration", "InklingForCausalLM",
    "InklingForConditionalGeneration", "InklingMTPModel", "InternLM2ForCausalLM", "InternLM2ForRewardModel",
    "InternLM3ForCausalLM", "InternS1ForConditionalGeneration", "InternS1ProForConditionalGeneration",
    "InternS2MobiusForConditionalGeneration", "InternS2MobiusMTP", "InternS2PreviewForConditionalGeneration",
    "InternVLChatModel", "InternVLForConditionalGeneration", "IsaacForConditionalGeneration", "Jais2ForCausalLM",
    "JambaForCausalLM", "JambaForSequenceClassification", "JinaEmbeddingsV5Model", "JinaForRanking",
    "JinaVLForRanking", "K2HorizonForCausalLM", "K3DSparkModel", "KananaVForConditionalGeneration",
    "KeyeForConditionalGeneration", "KeyeVL1_5ForConditionalGeneration", "KimiK25ForConditionalGeneration",
    "KimiK3ForConditionalGeneration", "KimiK3MTPModel", "KimiLinearForCausalLM", "KimiVLForConditionalGeneration",
    "Kolibri1ForCausalLM", "LLaMAForCausalLM", "LagunaForCausalLM", "Lfm2BidirectionalModel", "Lfm2ForCausalLM",
    "Lfm2MoeForCausalLM", "Lfm2VlForConditionalGeneration", "LiLiCorrDraftModel",
    "LightOnOCRForConditionalGeneration", "Llama4ForCausalLM", "Llama4ForConditionalGeneration",
    "LlamaBidirectionalForSequenceClassification", "LlamaBidirectionalModel", "LlamaForCausalLM",
    "LlamaForCausalLMEagle3", "LlamaModel", "LlamaNemotronVLForSequenceClassification", "LlamaNemotronVLModel",
    "Llama_Nemotron_Nano_VL", "LlavaForConditionalGeneration", "LlavaNextForConditionalGeneration",
    "LlavaNextVideoForConditionalGeneration", "LlavaOnevision2ForConditionalGeneration",
    "LlavaOnevisionForConditionalGeneration", "LongCatFlashMTPModel", "LongcatFlashForCausalLM",
    "LongcatFlashNgramForCausalLM", "Mamba2ForCausalLM", "MambaForCausalLM", "MellumForCausalLM",
    "MiDashengLMModel", "MiMoForCausalLM", "MiMoMTPModel", "MiMoV2FlashForCausalLM", "MiMoV2ForCausalLM",
    "MiMoV2MTPModel", "MiMoV2OmniForCausalLM", "MiMoV2OmniMTPModel", "MiniCPM3ForCausalLM", "MiniCPMForCausalLM",
    "MiniCPMO", "MiniCPMOcrForConditionalGeneration", "MiniCPMV", "MiniCPMV4_6ForConditionalGeneration",
    "MiniCPMV4_7ForConditionalGeneration", "MiniMaxM2ForCausalLM", "MiniMaxM3MTP", "MiniMaxM3SparseForCausalLM",
    "MiniMaxM3SparseForConditionalGeneration", "Ministral3ForCausalLM", "Mistral3ForConditionalGeneration",
    "MistralForCausalLM", "MistralLarge3ForCausalLM", "MistralModel", "MixtralForCausalLM",
    "ModernBertForSequenceClassification", "ModernBertForTokenClassification", "ModernBertModel",
    "ModernVBertModel", "Molmo2ForConditionalGeneration", "MolmoForCausalLM", "Moondream3ForCausalLM",
    "MoonshotKimiaForCausalLM", "MossAudioModel", "MossTranscribeDiarizeForConditionalGeneration",
    "MuseGlimmerAssistantModel", "MuseGlimmerForCausalLM", "MuseGlimmerForConditionalGeneration",
    "MuseSparkDSparkModel", "MuseSparkForConditionalGeneration", "NVLM_D", "NanbeigeForCausalLM",
    "NemotronForCausalLM", "NemotronHForCausalLM", "NemotronHMTPModel", "NemotronHPuzzleForCausalLM",
    "NemotronH_Nano_Omni_Reasoning_V3", "NemotronH_Nano_VL_V2", "NemotronH_Omni_Reasoning_V3",
    "NemotronH_Super_Omni_Reasoning_V3", "NemotronParseForConditionalGeneration", "NomicBertModel",
    "OPTForCausalLM", "Olmo2ForCausalLM", "Olmo3ForCausalLM", "OlmoForCausalLM", "OlmoHybridForCausalLM",
    "OlmoeForCausalLM", "OpenAIPrivacyFilterForTokenClassification", "OpenCUAForConditionalGeneration",
    "OpenPanguMTPModel", "OpenPanguVLForConditionalGeneration", "OpenVLAForActionPrediction", "OpsColQwen3Model",
    "OrionForCausalLM", "Ovis", "Ovis2_5", "Ovis2_6ForCausalLM", "Ovis2_6_MoeForCausalLM", "PEagleDraftModel",
    "PaddleOCRVLForConditionalGeneration", "PaliGemmaForConditionalGeneration", "PanguEmbeddedForCausalLM",
    "PanguProMoEV2ForCausalLM", "PanguUltraMoEForCausalLM", "Param2MoEForCausalLM", "ParseAuxMTPModel",
    "PeagleLlamaForCausalLM", "PeagleQwen3ForCausalLM", "Phi3ForCausalLM", "Phi3VForCausalLM", "Phi4ForCausalLMV",
    "Phi4MMForCausalLM", "PhiForCausalLM", "PhiMoEForCausalLM", "PixtralForConditionalGeneration",
    "Plamo3ForCausalLM", "QianfanOCRForConditionalGeneration", "Qwen2AudioForConditionalGeneration",
    "Qwen2ForCausalLM", "Qwen2ForProcessRewardModel", "Qwen2ForRewardModel", "Qwen2Model", "Qwen2MoeForCausalLM",
    "Qwen2VLForConditionalGeneration", "Qwen2_5OmniForConditionalGeneration", "Qwen2_5OmniModel",
    "Qwen2_5_VLForConditionalGeneration", "Qwen3ASRForConditionalGeneration",
    "Qwen3ASRForcedAlignerForTokenClassification", "Qwen3ASRRealtimeGeneration", "Qwen3DSparkModel",
    "Qwen3ForCausalLM", "Qwen3MoeForCausalLM", "Qwen3NextForCausalLM", "Qwen3NextMTP", "Qwen3OmniDSparkModel",
    "Qwen3OmniMoeForConditionalGeneration", "Qwen3VLForConditionalGeneration", "Qwen3VLMoeForConditionalGeneration",
    "Qwen3VLNemotronEmbedModel", "Qwen3XPressModel", "Qwen3_5ForCausalLM", "Qwen3_5ForConditionalGeneration",
    "Qwen3_5MTP", "Qwen3_5MoeForCausalLM", "Qwen3_5MoeForConditionalGeneration", "Qwen3_5MoeMTP",
    "Qwen4ExpForCausalLM", "Qwen4ExpForConditionalGeneration", "Qwen4ExpMTP", "RForConditionalGeneration",
    "RadioMBartPrefixForCausalLM", "Rnj1ForCausalLM", "RobertaForMaskedLM", "RobertaForSequenceClassification",
    "RobertaForTokenClassification", "RobertaModel", "SarvamMLAForCausalLM", "SarvamMoEForCausalLM",
    "SeedOssForCausalLM", "SiglipModel", "SkyworkR1VChatModel", "SmolLM3ForCausalLM",
    "SmolVLMForConditionalGeneration", "SolarForCausalLM", "StableLmForCausalLM", "Starcoder2ForCausalLM",
    "Step1ForCausalLM", "Step3TextForCausalLM", "Step3VLForConditionalGeneration", "Step3p5ForCausalLM",
    "Step3p5MTP", "Step3p7ForConditionalGeneration", "Step5ForCausalLM", "Step5ForConditionalGeneration",
    "Step5MTP", "StepVLForConditionalGeneration", "TeleChat2ForCausalLM", "TeleChat3ForCausalLM",
    "TeleFLMForCausalLM", "Terratorch", "TransformersEmbeddingModel", "TransformersForCausalLM",
    "TransformersForMTP", "TransformersForSequenceClassification", "TransformersMoEEmbeddingModel",
    "TransformersMoEForCausalLM", "TransformersMoEForMTP", "TransformersMoEForSequenceClassification",
    "TransformersMultiModalEmbeddingModel", "TransformersMultiModalForCausalLM",
    "TransformersMultiModalForSequenceClassification", "TransformersMultiModalMoEForCausalLM", "UltravoxModel",
    "UnlimitedOCRForCausalLM", "VaultGemmaForCausalLM", "VibeVoiceAsrForConditionalGeneration",
    "VoxtralForConditionalGeneration", "VoxtralRealtimeGeneration", "VoyageQwen3BidirectionalEmbedModel",
    "WhisperForConditionalGeneration", "XLMRobertaForSequenceClassification", "XLMRobertaForTokenClassification",
    "XLMRobertaModel", "Zamba2ForCausalLM"
})


# registry.py _OOT_SUPPORTED_MODELS: architectures served by an out-of-tree plugin
_OUT_OF_TREE: dict[str, str] = {
    "BartModel": "https://github.com/vllm-project/bart-plugin",
    "BartForConditionalGeneration": "https://github.com/vllm-project/bart-plugin",
    "Florence2ForConditionalGeneration": "https://github.com/vllm-project/bart-plugin",
    "MBartForConditionalGeneration": "https://github.com/vllm-project/bart-plugin",
    "Nemotron3_5AsrForRNNT": "https://github.com/Sohaib-Ahmed21/vllm-nemotron-asr-plugin",
}

# config/model.py _SUFFIX_TO_DEFAULTS, in its order: _normalize_arch takes the
# first suffix an architecture ends with and tries each as its replacement
_SUFFIXES = ("ForCausalLM", "ForConditionalGeneration", "ChatModel", "LMHeadModel", "ForTextEncoding",
             "EmbeddingModel", "ForSequenceClassification", "ForTokenClassification", "ForAudioClassification",
             "ForImageClassification", "ForVideoClassification", "ClassificationModel", "ForRewardModeling",
             "RewardModel", "Model")


def _normalized(arch: str) -> str | None:
    """ModelRegistry._normalize_arch: a registered architecture the name
    becomes by swapping its suffix (GPT2ForTokenClassification ->
    GPT2LMHeadModel, converted), or None."""
    suffix = next((s for s in _SUFFIXES if arch.endswith(s)), None)
    if suffix is None:
        return None
    return next((arch.replace(suffix, other) for other in _SUFFIXES if arch.replace(suffix, other) in REGISTERED),
                None)


def _convert_of(arch: str) -> str:
    """The convert type _SUFFIX_TO_DEFAULTS gives an architecture ("none" for
    the generation suffixes and for a name no suffix matches)."""
    suffix = next((s for s in _SUFFIXES if arch.endswith(s)), None)
    return "none" if suffix is None or _SUFFIXES.index(suffix) < 4 else "converted"


def _remote_model(auto_map: object) -> bool:
    return isinstance(auto_map, dict) and any(str(k).startswith("AutoModel") for k in auto_map)


def resolve_architecture(archs: list[str], auto_map: object, trust_remote_code: bool = False) -> tuple[str, str]:
    """ModelRegistry.inspect_model_cls (model_executor/models/registry.py):
    (the architecture vLLM reports, the registered architecture whose model
    file builds it; the reported one itself on the Transformers backend).
    With no architecture registered, the Transformers backend is tried first
    for an unconverted first architecture; then each architecture as
    registered or normalized; then the Transformers backend again. It takes
    a transformers class it can wrap, or a remote AutoModel class in
    auto_map, which it loads only with ``trust_remote_code``
    (try_get_class_from_dynamic_module fails, with a warning, without it).
    Else ``UserError`` with _raise_for_unsupported's message."""
    from attn_select.selector.errors import UserError
    from attn_select.selector.model.hf_models import backend_can_wrap

    unregistered = all(a not in REGISTERED for a in archs)
    remote = _remote_model(auto_map)
    wraps = unregistered and ((remote and trust_remote_code) or backend_can_wrap(archs[0]))
    if wraps and _convert_of(archs[0]) == "none":
        return archs[0], archs[0]
    for arch in archs:
        found = arch if arch in REGISTERED else _normalized(arch)
        if found is not None:
            return arch, found
    if wraps:
        return archs[0], archs[0]
    why = (f"(vLLM {VLLM_VERSION}: not in its model registry, and transformers has no {archs[0]} class its "
           "Transformers modeling backend can use)")
    if unregistered and remote:
        why = (f"(vLLM {VLLM_VERSION}: not in its model registry, and transformers has no {archs[0]} class; "
               "config.json's auto_map names a remote AutoModel class, which vLLM loads only with "
               "trust_remote_code: pass --trust-remote-code)")
    for arch in archs:
        if arch in _DROPPED:
            raise UserError(f"Model architecture {arch} was supported in vLLM until v{_DROPPED[arch]}, and is not "
                            f"supported anymore {why}; use an older vLLM for it")
        if arch in _OUT_OF_TREE:
            raise UserError(f"Model architecture {arch} is not supported in-tree anymore {why}; install the plugin "
                            f"at {_OUT_OF_TREE[arch]} for it")
    raise UserError(f"Model architectures {archs!r} are not supported for now {why}; use an architecture vLLM "
                    "supports")


def dropped_note(arch: str) -> str | None:
    """A note when vLLM 0.33.0's registry lists the architecture as dropped."""
    version = _DROPPED.get(arch)
    if version is None:
        return None
    return (f"{arch} was supported in vLLM until v{version} and has no model file in {VLLM_VERSION}: vLLM can only try "
            "its Transformers backend (else it raises); these layers are a generic derivation, not verified")


# registry.py _TRANSFORMERS_BACKEND_MODELS: the backend's own classes, which a
# config.json may name as its architecture (the model type then picks the
# transformers modeling code)
BACKEND_CLASSES = frozenset({
    "TransformersForCausalLM", "TransformersMoEForCausalLM", "TransformersForMTP", "TransformersMoEForMTP",
    "TransformersMultiModalForCausalLM", "TransformersMultiModalMoEForCausalLM", "TransformersEmbeddingModel",
    "TransformersMoEEmbeddingModel", "TransformersMultiModalEmbeddingModel", "TransformersForSequenceClassification",
    "TransformersMoEForSequenceClassification", "TransformersMultiModalForSequenceClassification",
})


def transformers_backend(arch: str) -> bool:
    """vLLM builds this architecture with its Transformers modeling backend:
    listed for it in the registry, one of the backend's own classes, or absent
    from the registry (dropped, or never there: the backend is then all vLLM
    can try)."""
    return arch in TRANSFORMERS_BACKEND or arch in BACKEND_CLASSES or arch not in REGISTERED
