"""Facts of vLLM 0.33.0's model registry (model_executor/models/registry.py)
that decide how an architecture is served when attn-select has no mirror of
its model file: through the Transformers modeling backend, or not at all."""

from __future__ import annotations

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


def dropped_note(arch: str) -> str | None:
    """A note when vLLM 0.33.0's registry lists the architecture as dropped."""
    version = _DROPPED.get(arch)
    if version is None:
        return None
    return (f"{arch} was supported in vLLM until v{version} and has no model file in 0.33.0: vLLM can only try "
            "its Transformers backend (else it raises); these layers are a generic derivation, not verified")


def transformers_backend(arch: str) -> bool:
    """vLLM builds this architecture with its Transformers modeling backend:
    listed for it in the registry, or dropped from it (the backend is then
    all vLLM can try)."""
    return arch in TRANSFORMERS_BACKEND or arch in _DROPPED
