"""The model facts SGLang 0.5.23's resolution reads from its ``ModelConfig``
(``sglang/srt/configs/model_config.py``), derived from attn-select's parsed
config (``ModelFacts``: the same parse the vLLM engine uses).

SGLang keys these on the *architectures* list, not on ``model_type``:
``_derive_model_shapes`` picks MLA by architecture name,
``has_asymmetric_kv`` compares K and V head dims, ``_detect_attention_sinks``
looks for the sink archs and flags, ``is_deepseek_dsa`` wants a DeepSeek-family
architectures[0] with ``index_topk``.
"""

from __future__ import annotations

from dataclasses import dataclass

from attn_select.selector.errors import WRONG_KIND, wrong_kind
from attn_select.selector.model_facts import ModelFacts

# _derive_model_shapes: architectures that run AttentionArch.MLA (any entry of
# the list matches), in the order of its branches.
_MLA_ARCHS = frozenset({
    "DeepseekV2ForCausalLM", "DeepseekV32ForCausalLM", "DeepseekV3ForCausalLM",
    "DeepseekV3ForCausalLMNextN", "Glm4MoeLiteForCausalLM", "Glm4MoeLiteForCausalLMNextN",
    "GlmMoeDsaForCausalLM", "GlmMoeDsaForCausalLMNextN", "Glm5NextForConditionalGeneration",
    "Glm5NextForConditionalGenerationNextN", "LongcatFlashForCausalLM", "LongcatFlashForCausalLMNextN",
    "HYV4ForCausalLM", "HYV4ForCausalLMNextN", "DotsVLMForCausalLM", "Dots3NoteForCausalLM",
    "Dots3NoteForCausalLMNextN", "MistralLarge3ForCausalLM", "MistralLarge3ForCausalLMEagle",
    "KimiK25ForConditionalGeneration", "Eagle3DeepseekV2ForCausalLM", "GigaChat35ForCausalLM",
    "GigaChat35ForCausalLMNextN",
    # later branches
    "MiniCPM3ForCausalLM", "KimiVLForConditionalGeneration", "KimiLinearForCausalLM",
    "KimiK3LinearForCausalLM", "KimiK3ForConditionalGeneration", "BailingMoeV2_5ForCausalLM",
    "BailingMoeV3ForCausalLM", "BailingMoeV3VLForConditionalGeneration", "SarvamMLAForCausalLM",
})
# Branches that run MHA although a later MLA test would match, and the
# conditional MLA ones.
_V4_ARCHS = ("DeepseekV4ForCausalLM", "DeepseekV4ForCausalLMNextN", "DeepseekV4ForCausalLMDSpark")
_PURE_SSM = ("Mamba2ForCausalLM", "MambaForCausalLM", "FalconMambaForCausalLM")

# model_config.SWA_SINK_ARCHS and MIMO_V2_MODEL_ARCHS
_SWA_SINK_ARCHS = frozenset({
    "GptOssForCausalLM", "GraniteSWAForCausalLM", "GraniteMoeSWAForCausalLM",
    "IQuestQ1ForCausalLM", "IQuestQ1MTP",
})
_MIMO_V2_ARCHS = ("MiMoV2ForCausalLM", "MiMoV2FlashForCausalLM", "MiMoV2MTP")

# is_deepseek_dsa: architectures[0] in these and hf_config.index_topk set
_DSA_ARCHS = frozenset({
    "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "DeepseekV3ForCausalLMNextN",
    "MistralLarge3ForCausalLM", "PixtralForConditionalGeneration", "GlmMoeDsaForCausalLM",
    "GlmMoeDsaForCausalLMNextN", "Glm5NextForConditionalGenerationNextN",
    "Glm5NextForConditionalGeneration", "LongcatFlashForCausalLM", "LongcatFlashForCausalLMNextN",
    "Dots3NoteForCausalLM", "Dots3NoteForCausalLMNextN", "HYV4ForCausalLM", "HYV4ForCausalLMNextN",
})

# is_encoder_decoder_model and the multimodal archs the Qwen3-VL rule reads
_ENCODER_DECODER = ("WhisperForConditionalGeneration", "MllamaForConditionalGeneration",
                    "MossVLForConditionalGeneration")
_QWEN3_VL_MM_ARCHS = ("Qwen3VLForConditionalGeneration", "Qwen3VLMoeForConditionalGeneration")


@dataclass(frozen=True)
class SGLangModel:
    """What the resolution passes read from ``ModelConfig`` / ``hf_config``."""

    architectures: tuple[str, ...]
    model_type: str
    use_mla: bool  # model_config.attention_arch == AttentionArch.MLA
    head_dim: int
    v_head_dim: int
    swa_head_dim: int
    swa_v_head_dim: int
    has_attention_sinks: bool
    is_deepseek_dsa: bool
    index_kpool: int = 1  # get_dsa_index_kpool
    dsa_learnable_sink: bool = False  # hf_config.learnable_sink (DSA rules)
    sliding_window_pattern: object = None  # hf_config.sliding_window_pattern (Exaone)
    layer_types: tuple = ()  # hf_config.layer_types (Granite hybrid)
    minicpm_sparse: bool = False  # hf_config.has_minicpm_sparse_attention
    minicpm_lightning: bool = False  # hf_config.has_lightning_layers
    is_multimodal: bool = False  # Qwen3-VL override only
    mamba_chunk_size: int | None = None  # hf_config.mamba_chunk_size (None: FLA's 64)

    @property
    def arch(self) -> str:
        return self.architectures[0]

    @property
    def has_asymmetric_kv(self) -> bool:
        return self.head_dim != self.v_head_dim or self.swa_head_dim != self.swa_v_head_dim

    @property
    def is_encoder_decoder(self) -> bool:
        return any(a in self.architectures for a in _ENCODER_DECODER)

    @property
    def is_whisper(self) -> bool:
        return "WhisperForConditionalGeneration" in self.architectures

    def describe(self) -> str:
        bits = ["MLA" if self.use_mla else "MHA"]
        if self.is_deepseek_dsa:
            bits.append("DSA (index_topk)")
        if self.has_attention_sinks:
            bits.append("attention sinks")
        if self.has_asymmetric_kv and not self.use_mla:
            bits.append(f"K/V head dims {self.head_dim}/{self.v_head_dim}"
                        + (f", SWA {self.swa_head_dim}/{self.swa_v_head_dim}"
                           if (self.swa_head_dim, self.swa_v_head_dim) != (self.head_dim, self.v_head_dim) else ""))
        if self.is_encoder_decoder:
            bits.append("encoder-decoder")
        return ", ".join(bits)


def _uses_mla(archs: tuple[str, ...], hf: dict, text: dict) -> bool:
    if any(a in _MLA_ARCHS for a in archs):
        return True
    if "PixtralForConditionalGeneration" in archs and text.get("kv_lora_rank") is not None:
        return True
    if any(a in _V4_ARCHS for a in archs):
        return False
    if "DeepseekVL2ForCausalLM" in archs and text.get("use_mla", True):
        return True
    if "BailingMoeForCausalLMNextN" in archs and text.get("kv_lora_rank") is not None:
        return True
    return False


# MiniCPMHybridConfig (model_type minicpm_sala) derives its sparse and
# lightning flags from mixer_types (default ["minicpm4"]) and sparse_config;
# any other config carries them as plain attributes, if at all.
_MIXER_ALIASES = {"minicpm4": "minicpm4", "minicpm": "minicpm4", "standard": "minicpm4", "attention": "minicpm4",
                  "attn": "minicpm4", "lightning": "lightning-attn", "lightning_attn": "lightning-attn",
                  "lightning-attn": "lightning-attn"}


def _mixer_types(hf: dict) -> list[str]:
    given = hf.get("mixer_types") or ("minicpm4",)
    return [_MIXER_ALIASES.get(str(t), str(t)) for t in given]


def _minicpm_sparse(model_type: str, hf: dict) -> bool:
    if model_type == "minicpm_sala":
        return hf.get("sparse_config") is not None and "minicpm4" in _mixer_types(hf)
    return bool(hf.get("has_minicpm_sparse_attention", False))


def _minicpm_lightning(model_type: str, hf: dict) -> bool:
    if model_type == "minicpm_sala":
        return "lightning-attn" in _mixer_types(hf)
    return bool(hf.get("has_lightning_layers", False))


def sglang_model(facts: ModelFacts) -> SGLangModel:
    """ModelFacts -> the facts SGLang's resolution reads; a field SGLang
    computes with that holds a value of the wrong kind is a user error."""
    try:
        return _sglang_model(facts)
    except WRONG_KIND as exc:
        raise wrong_kind(facts.source or facts.name, exc, "SGLang would") from None


def _sglang_model(facts: ModelFacts) -> SGLangModel:
    archs = facts.architectures or (facts.architecture,)
    hf = dict(facts.config_attrs)
    text = dict(facts.text_config_attrs) if facts.text_config_attrs else hf
    pure_ssm = any(a in _PURE_SSM for a in archs)
    # _derive_model_shapes: head_dim from hf_text_config, else hidden/heads
    head = text.get("head_dim")
    if head is None:
        heads = text.get("num_attention_heads")
        head = 0 if pure_ssm or not heads else int(text.get("hidden_size") or 0) // int(heads)
    v_head = text.get("v_head_dim")
    if not v_head:
        v_head = head
    swa_head = text.get("swa_head_dim")
    if swa_head is None:
        swa_head = head
    swa_v = text.get("swa_v_head_dim")
    if swa_v is None:
        swa_v = swa_head
    if any(a in _V4_ARCHS for a in archs) or "Glm4MoeForCausalLMNextN" in archs:
        v_head, swa_v = head, swa_head  # those branches make V as wide as K
    if any(a in _SWA_SINK_ARCHS for a in archs):
        sinks = True
    elif any(a in _MIMO_V2_ARCHS for a in archs):
        sinks = bool(text.get("add_swa_attention_sink_bias") or text.get("add_full_attention_sink_bias"))
    else:
        sinks = bool(text.get("learnable_sink", False))
    dsa = archs[0] in _DSA_ARCHS and hf.get("index_topk") is not None
    return SGLangModel(
        architectures=tuple(archs),
        model_type=facts.model_type,
        use_mla=_uses_mla(tuple(archs), hf, text),
        head_dim=int(head), v_head_dim=int(v_head), swa_head_dim=int(swa_head), swa_v_head_dim=int(swa_v),
        has_attention_sinks=sinks,
        is_deepseek_dsa=dsa,
        index_kpool=int(hf.get("index_kpool", 1)),
        dsa_learnable_sink=bool(hf.get("learnable_sink", False)),
        sliding_window_pattern=hf.get("sliding_window_pattern"),
        layer_types=tuple(hf.get("layer_types") or ()),
        minicpm_sparse=_minicpm_sparse(facts.model_type, hf),
        minicpm_lightning=_minicpm_lightning(facts.model_type, hf),
        is_multimodal=any(a in _QWEN3_VL_MM_ARCHS for a in archs),
        mamba_chunk_size=hf.get("mamba_chunk_size"),
    )
