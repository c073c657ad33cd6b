"""Step 3a: model-level facts (vllm/config/model.py,
model_arch_config_convertor.py): MLA, head size, KV heads, mm-prefix, ALiBi."""

from __future__ import annotations

from pydantic_core import ValidationError

from attn_select.selector.engines import VLLM_VERSION
from attn_select.selector.errors import UserError, shown
from attn_select.selector.model.hf_classes import HFView
from attn_select.selector.model.raw import LAX_INT


# ModelArchConfigConvertorBase.is_deepseek_mla: model types with MLA attention
_MLA_MODEL_TYPES = frozenset({
    "axk1", "deepseek_v2", "deepseek_v3", "deepseek_v32", "deepseek_v4", "deepseek_v41", "dots3_note",
    "deepseek_mtp", "k3_dspark", "glm5_next", "glm5_next_text", "glm_moe_dsa", "glm4_moe_lite",
    "glm4_moe_lite_mtp", "kimi_k2", "kimi_linear", "longcat_flash", "pangu_ultra_moe", "pangu_ultra_moe_mtp",
    "bailing_hybrid", "bailing_hybrid_mtp", "bailing_hybrid_v3_mtp", "hy_v4", "hy_v4_mtp",
})
# is_mm_prefix_lm fallback list (models with bidirectional attention over image tokens)
_MM_PREFIX_LM_MODEL_TYPES = frozenset({"bagel", "gemma3", "molmo2", "moondream3", "paligemma"})
# CONFIG_FIELD_ALIASES["total_num_kv_heads"], in lookup order
_KV_HEAD_NAMES = ("n_head_kv", "num_kv_heads", "num_key_value_heads", "multi_query_group_num",
                  "num_attention_groups")


def is_deepseek_mla(text: HFView) -> bool:
    """ModelArchConfigConvertorBase.is_deepseek_mla (DeepSeek-V4's compressed
    variant keys on head_dim; the rest on kv_lora_rank)."""
    if text.model_type in _MLA_MODEL_TYPES:
        if text.get("compress_ratios"):
            return text.get("head_dim") is not None
        return text.get("kv_lora_rank") is not None
    return False


def _per_layer_max(text: HFView, name: str, whole: int) -> int:
    """ModelArchitectureConfig.from_layers: a heterogeneous config
    (transformers' ``per_layer_config``) collapses a varying field to its
    largest per-layer value."""
    table = text.get("per_layer_config")
    n = text.get("num_hidden_layers")
    if not isinstance(table, dict) or not isinstance(n, int):
        return whole
    return max(table.get(i, {}).get(name, whole) for i in range(n))


# MODEL_ARCH_CONFIG_CONVERTORS (model_arch_config_convertor.py), keyed on
# hf_config.model_type: the convertors that change head size or KV heads
_FALCON_TYPES = frozenset({"falcon", "RefinedWeb", "RefinedWebModel"})  # FalconModelArchConfigConvertor
_MAMBA_TYPES = frozenset({"mamba", "falcon_mamba"})  # MambaModelArchConfigConvertor: no attention


def model_head_size(text: HFView, hf_model_type: str | None = None) -> int:
    """ModelArchConfigConvertorBase.get_head_size (VLLM_MLA_DISABLE unset),
    the largest layer's for a heterogeneous config; ``hf_model_type`` picks
    the convertor (default: the text config's own type)."""
    kind = hf_model_type or text.model_type
    if kind in _MAMBA_TYPES:
        return 0
    if kind == "zamba2":  # Zamba2ModelArchConfigConvertor.get_head_size
        return text.get("attention_head_dim", 0)
    return _per_layer_max(text, "head_dim", _whole_model_head_size(text))


def total_attention_heads(text: HFView) -> int:
    """ModelArchConfigConvertorBase.get_total_num_attention_heads, the largest
    layer's for a heterogeneous config (Step-3.5's sliding-layer head count)."""
    return _per_layer_max(text, "num_attention_heads", text.get("num_attention_heads") or 0)


def _whole_model_head_size(text: HFView) -> int:
    if is_deepseek_mla(text):
        if text.get("compress_ratios"):
            return text.get("head_dim")
        return text.get("kv_lora_rank") + (text.get("qk_rope_head_dim") or 0)
    head_dim = text.get("head_dim")
    if head_dim is not None and head_dim > 0:
        return head_dim
    if text.get("hidden_size_per_head") is not None:
        return text.get("hidden_size_per_head")
    # getattr(..., 0) as vLLM reads them: a null head count or width is kept,
    # and hidden_size // None fails there as here (WhisperConfig's
    # num_attention_heads: null nulls its encoder_attention_heads)
    heads = text.attrs.get("num_attention_heads", 0)
    if heads == 0:
        return 0
    return text.attrs.get("hidden_size", 0) // heads


def total_kv_heads(text: HFView, hf_model_type: str | None = None) -> int:
    """ModelArchConfigConvertorBase.get_total_num_kv_heads (the largest
    layer's for a heterogeneous config) or the model type's convertor."""
    kind = hf_model_type or text.model_type
    if kind in _MAMBA_TYPES:
        return 0
    if kind in _FALCON_TYPES and not text.get("new_decoder_architecture", False) and text.get("multi_query", False):
        return 1  # FalconModelArchConfigConvertor: multi-query without the new decoder
    if kind == "nemotron-nas":  # NemotronNasModelArchConfigConvertor: the first attention block's
        return _nemotron_nas_kv_heads(text)
    if kind == "dbrx":  # DbrxModelArchConfigConvertor: attn_config.kv_n_heads
        attn = text.get("attn_config")
        if isinstance(attn, dict) and "kv_n_heads" in attn:
            return attn["kv_n_heads"]
        return text.get("num_attention_heads") or 0
    return _per_layer_max(text, "num_key_value_heads", _whole_model_kv_heads(text))


def _nemotron_nas_kv_heads(text: HFView) -> int:
    """NemotronNasModelArchConfigConvertor.get_total_num_kv_heads: query
    heads // n_heads_in_group of the first block whose attention is not a
    no-op (vLLM raises when every block's is)."""
    for block in text.get("block_configs") or []:
        attention = block.get("attention") if isinstance(block, dict) else None
        if isinstance(attention, dict) and not attention.get("no_op"):
            group = attention.get("n_heads_in_group")
            if not isinstance(group, int) or group <= 0:
                raise UserError(f"block_configs attention n_heads_in_group is {group!r}; it needs a positive count")
            return (text.get("num_attention_heads") or 0) // group
    raise UserError("block_configs has no block with attention (every attention.no_op is true); "
                    "vLLM cannot find the number of KV heads")


def model_num_layers(text: HFView, hf_model_type: str | None = None) -> int:
    """ModelArchConfigConvertorBase.get_num_hidden_layers, or
    LongCatFlashModelArchConfigConvertor's: num_layers (the decoder layers;
    LongcatFlashConfig's num_hidden_layers counts both attention sub-layers)."""
    kind = hf_model_type or text.model_type
    if kind == "longcat_flash":
        return text.get("num_layers") or 0
    return text.get("num_hidden_layers") or 0


def check_kv_heads_not_left_null(text: HFView) -> None:
    """vLLM's get_total_num_kv_heads (getattr_iter) returns the first alias the
    config object has, null or not. A class that leaves num_key_value_heads
    null when config.json has none (NemotronConfig: hf_size_defaults.
    KV_HEADS_DEFAULTS) hands it a null, which ModelConfig's validation refuses."""
    if text.get("num_key_value_heads", 0) is None and "num_key_value_heads" in text.defaulted and not any(
            text.has(name) for name in _KV_HEAD_NAMES[:2]):
        raise UserError(f"config.json has no num_key_value_heads and {text.hf_class} leaves it null, so vLLM "
                        f"{VLLM_VERSION} fails validating the model config (total_num_kv_heads: Input should be a "
                        "valid integer); add num_key_value_heads")


def _whole_model_kv_heads(text: HFView) -> int:
    """First alias set (SGLang's get_total_num_kv_heads skips absent and null ones), else the query head
    count. vLLM's getattr_iter stops at a null one: ``check_kv_heads_not_left_null``."""
    for name in _KV_HEAD_NAMES:
        if text.has(name) and text.get(name) is not None:
            return text.get(name)
    return text.get("num_attention_heads") or 0


def is_mm_prefix_lm(hf: HFView, text: HFView, mm_inputs: bool) -> bool:
    """ModelArchConfigConvertor*.is_mm_prefix_lm; ``mm_inputs`` False is a
    deployment with multimodal inputs disabled (``--language-model-only`` or
    every modality limited to 0), which clears it."""
    if not mm_inputs:
        return False
    if hf.model_type in ("gemma4", "gemma4_text", "gemma4_unified", "gemma4_unified_text",
                         "diffusion_gemma", "diffusion_gemma_text"):
        return text.get("use_bidirectional_attention") == "vision"
    if hf.model_type == "deepseek_v4":
        return (hf.get("vision_n_layers") or 0) > 0
    if hf.model_type == "cohere_asr":
        return False
    if hf.has("is_mm_prefix_lm"):
        return bool(hf.get("is_mm_prefix_lm"))
    return hf.model_type in _MM_PREFIX_LM_MODEL_TYPES


def uses_alibi(text: HFView, architectures: list[str]) -> bool:
    """ModelConfig.uses_alibi."""
    attn_config = text.get("attn_config")
    return bool(
        text.get("alibi", False)
        or "BloomForCausalLM" in architectures
        or text.get("position_encoding_type", "") == "alibi"
        or (isinstance(attn_config, dict) and attn_config.get("alibi", False))
    )



# CONFIG_FIELD_ALIASES (transformers_utils/config.py), in getattr_iter's order;
# its last experts-per-token alias, top_k, is a generation parameter that
# PreTrainedConfig.__post_init__ pops, so no loaded config has it
_EXPERT_NAMES = ("num_experts", "moe_num_experts", "n_routed_experts", "num_local_experts")
_EXPERTS_PER_TOKEN_NAMES = ("num_experts_per_tok", "num_experts_per_token", "top_k_experts", "moe_topk",
                            "moe_top_k")


def _first_given(text: HFView, names: tuple[str, ...]) -> tuple[str | None, object]:
    """getattr_iter: the first of ``names`` the config has, even if null."""
    for name in names:
        if text.has(name):
            return name, text.get(name)
    return None, None


def check_expert_counts(text: HFView, where: str) -> None:
    """ModelArchitectureConfig (a pydantic dataclass: lax int fields) takes
    num_experts and num_experts_per_token from the convertor's
    get_num_experts (the first alias; a list's first entry; a falsy value
    is 0) and get_num_experts_per_token (a list's max; falsy is 0); a value
    pydantic cannot read as an integer refuses the model config."""
    checks = []
    name, value = _first_given(text, _EXPERT_NAMES)
    if isinstance(value, list):
        if not value:
            raise UserError(f"{where}: {name} is an empty list; vLLM {VLLM_VERSION} reads its first entry "
                            "(IndexError): give the expert count")
        value = value[0]
    checks.append((name, value or 0))
    name2, value2 = _first_given(text, _EXPERTS_PER_TOKEN_NAMES)
    if isinstance(value2, list):
        try:
            value2 = max(value2, default=0)
        except TypeError:
            raise UserError(f"{where}: {name2} mixes values vLLM {VLLM_VERSION} cannot compare (max of the list); "
                            "give a number") from None
    checks.append((name2, value2 or 0))
    for field, v in checks:
        try:
            LAX_INT.validate_python(v)
        except ValidationError as e:
            why = e.errors()[0]["msg"]
            raise UserError(f"{where}: {field} is {shown(v)}; vLLM {VLLM_VERSION}'s model architecture config "
                            f"needs an integer ({why}): fix {field}") from None
