"""Putting it together: a parsed config.json -> ModelFacts (raw fields,
transformers view, model-level facts, dtype, quantization, the layers each
architecture builds, grouped the way vLLM's cached selector sees them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic_core import ValidationError

from attn_select.selector.config import Capability
from attn_select.selector.errors import WRONG_KIND, UserError, shown, wrong_kind
from attn_select.selector.model.archs import _ARCHS, _LANGUAGE_MODEL, _runner_by_suffix, language_model_arch
from attn_select.selector.model.dtype import _find_config_dtype, resolve_dtype
from attn_select.selector.model.hf_classes import _HF_CLASSES, HFView, flat_text, hf_view
from attn_select.selector.model.hf_models import base_model_class, keeps_text_config_dict
from attn_select.selector.model.hf_rope import check_max_len_factor, derived_max_len
from attn_select.selector.model.hf_size_defaults import NO_HEAD_DIM
from attn_select.selector.engines import VLLM_VERSION
from attn_select.selector.model.hf_subconfigs import auto_sub_class
from attn_select.selector.model.hf_types import check_declared, declared
from attn_select.selector.model.layers import NoVllmSelection, _Ctx, _generic, _Stack, soft_cap_value
from attn_select.selector.model.model_level import (
    check_expert_counts,
    check_kv_heads_not_left_null,
    is_deepseek_mla,
    is_mm_prefix_lm,
    model_head_size,
    model_num_layers,
    total_attention_heads,
    total_kv_heads,
    uses_alibi,
)
from attn_select.selector.model.quant import _kv_cache_facts, _quant_config, check_kv_cache_scheme, model_hook_quant
from attn_select.selector.quant_methods import checkpoint_quant, resolved_method
from attn_select.selector.model.raw import LAX_INT, parse_raw
from attn_select.selector.model.config_class import (
    SGLANG_LOADER,
    VLLM_LOADER,
    check_config_class,
    check_read_only_keys,
)
from attn_select.selector.model.remote_code import remote_module_problem
from attn_select.selector.model.layer_build import check_layer_build
from attn_select.selector.model.vllm_registry import dropped_note, resolve_architecture, transformers_backend
from attn_select.selector.model.vllm_runners import REGISTRY_RUNNERS
from attn_select.selector.model.vllm_config_reads import READS_TOP_CONFIG, WRAPPERS_WITH_VOCAB
from attn_select.selector.model_facts import (
    AttentionGroup,
    LayerAttention,
    ModelFacts,
    OtherLayers,
    as_hashable,
)


def _group_base(attn: LayerAttention, encoder_decoder: bool) -> str:
    if attn.use_mla:
        return "sparse_mla" if attn.use_sparse else "mla"
    if attn.attn_type == "encoder_decoder":
        return "cross"
    if attn.attn_type in ("encoder_only", "encoder"):
        return "encoder"
    if attn.chunk_lookback:
        return "chunked"
    if attn.sliding_window is not None:
        return "sliding"
    return "decoder" if encoder_decoder else "full"


def group_layers(stacks: list[_Stack], encoder_decoder: bool) -> tuple[tuple[AttentionGroup, ...], tuple[OtherLayers, ...]]:
    """Layers whose LayerAttention is equal share one selection (vLLM's
    selector is cached on its inputs); order of first appearance."""
    attn_layers: dict[LayerAttention, list[int]] = {}
    other: dict[str, list[int]] = {}
    for stack in stacks:
        for index, what in stack.slots:
            bucket = other if isinstance(what, str) else attn_layers
            bucket.setdefault(what, []).append(index)
    groups, used = [], set()
    for attn, layers in attn_layers.items():
        name = base = _group_base(attn, encoder_decoder)
        if name in used:
            name = f"{base}-{attn.sliding_window}" if attn.sliding_window is not None else base
            n = 2
            while name in used:
                name, n = f"{base}-{n}", n + 1
        used.add(name)
        groups.append(AttentionGroup(name=name, layers=tuple(layers), attn=attn))
    return tuple(groups), tuple(OtherLayers(kind=k, layers=tuple(v)) for k, v in other.items())


# VocabParallelEmbedding / ParallelLMHead pad the vocabulary to a multiple of
# this before splitting it across tensor-parallel ranks
_VOCAB_PADDING = 64


# model files that read config.head_dim as an attribute where their config class may have none
# (glm4_moe.py's decoder layer, also GLM-4.5V's language model; Glm4MoeConfig and Glm4vMoeTextConfig
# have no head_dim: checked through vLLM's build, as tests/selector/test_config_class_sizes.py does).
# Other files reading it guard the read (commandr.py: hasattr; falcon_h1.py: getattr) or have classes
# that always hold one.
_READS_HEAD_DIM = frozenset({"Glm4MoeForCausalLM", "Glm4vMoeForConditionalGeneration"})

# chatglm.py's ChatGLMBaseModel reads config.tie_word_embeddings unguarded, and vLLM's own ChatGLMConfig
# (model_type chatglm) does not set it: a config.json without the field fails the build (AttributeError)
_READS_TIE_WORD_EMBEDDINGS = frozenset({"ChatGLMModel", "ChatGLMForConditionalGeneration", "GLM4VForCausalLM"})
# Sub-config fields a model file reads at build with no default behind them,
# in the order it reads them: architecture -> (sub-config, whether the config
# class builds a default one when config.json has none, fields, the class that
# lacks them, what to do)
_VOXTRAL_AUDIO = ("audio_config", True, ("downsample_factor", "window_size", "sampling_rate"), "VoxtralEncoderConfig",
                  "vLLM serves Voxtral from its Mistral-format params.json (--config-format mistral), which gives "
                  "them")
_READS_SUBCONFIG_FIELD = {
    # voxtral.py: VoxtralForConditionalGeneration.__init__ (and the realtime subclass) reads
    # downsample_factor, its audio tower's mel filters window_size and sampling_rate
    "VoxtralForConditionalGeneration": _VOXTRAL_AUDIO,
    "VoxtralRealtimeGeneration": _VOXTRAL_AUDIO,
    # mimo_v2_omni.py MiMoVisionTransformer: every block reads vision_cfg.use_sink
    "MiMoV2OmniForCausalLM": ("vision_config", False, ("use_sink",), "Mimo_VLVisionConfig",
                              "add it to vision_config as the checkpoint's vision tower has it"),
}


def _check_subconfig_field(hf: HFView, model_arch: str, where: str) -> None:
    """The sub-config fields ``model_arch``'s model file reads without a
    default (_READS_SUBCONFIG_FIELD): the first one absent fails vLLM's build."""
    key, built_by_default, fields, cls, fix = _READS_SUBCONFIG_FIELD[model_arch]
    sub = hf.get(key)
    if sub is None and not built_by_default:
        raise UserError(f"{where}: {model_arch}'s model file reads config.{key}, which config.json does not give, "
                        f"so vLLM {VLLM_VERSION} fails building it (AttributeError: no attribute '{key}'); add the "
                        f"checkpoint's {key}")
    if sub is not None and not isinstance(sub, dict):
        return
    missing = next((f for f in fields if f not in (sub or {})), None)
    if missing is not None:
        raise UserError(f"{where}: {model_arch}'s model file reads config.{key}.{missing}, which config.json does "
                        f"not give and {cls} does not default, so vLLM {VLLM_VERSION} fails building it "
                        f"(AttributeError: '{cls}' object has no attribute '{missing}'); {fix}")


def _check_weight_storage(text: HFView, groups, dtype: str, where: str) -> None:
    """torch refuses a tensor of 2**63 bytes or more, even on the meta device
    vLLM builds on ("Storage size calculation overflowed"). A self-attention
    layer's fused QKV projection holds hidden_size x (heads x head size + KV
    heads x (head size + value head size)) elements of the model dtype, any
    other attention layer's output projection hidden_size x heads x value head
    size (MLA: v_head_dim); a quantized checkpoint packs them (not checked).
    A size that takes one there fails vLLM's build (vLLM 0.33.0 on Llama
    configs: hidden_size 2**40; 2**31 with one head of 2**31; checked)."""
    hidden = text.get("hidden_size")
    if not isinstance(hidden, int) or isinstance(hidden, bool) or hidden <= 0:
        return
    nbytes = 4 if dtype == "float32" else 2
    for g in groups:
        a = g.attn
        if a.use_mla or a.attn_type == "encoder_decoder":
            width, what = a.num_heads * (a.v_head_dim if a.use_mla else a.head_size_v), "output"
        else:
            width, what = a.num_heads * a.head_size + a.num_kv_heads * (a.head_size + a.head_size_v), "QKV"
        if hidden * width * nbytes >= 1 << 63:
            raise UserError(f"{where}: hidden_size {hidden} makes an attention {what} projection of "
                            f"{hidden * width} {dtype} elements, past the 2**63 bytes torch can allocate, so vLLM "
                            f"{VLLM_VERSION} fails building the model (Storage size calculation overflowed); give the "
                            "real sizes")


def _check_vocab_shards(text: Any, tp: int, engine: str) -> None:
    """The model's token embedding (VocabParallelEmbedding, built before
    its decoder layers) divides the padded vocabulary by the tensor-parallel
    size, and vLLM's divide() asserts it: a -tp that is no power of two
    (3, 6, ...) fails there unless it divides the padded size."""
    vocab = text.get("vocab_size")
    if engine == "sglang" or tp <= 1 or not isinstance(vocab, int) or isinstance(vocab, bool) or vocab <= 0:
        return
    padded = -(-vocab // _VOCAB_PADDING) * _VOCAB_PADDING
    if padded % tp:
        raise UserError(f"tensor parallel size {tp} does not divide the vocabulary: vLLM {VLLM_VERSION} pads "
                        f"vocab_size {vocab} to {padded} (a multiple of {_VOCAB_PADDING}) and splits it across the "
                        f"ranks, and fails building the token embedding (AssertionError: {padded} is not divisible "
                        f"by {tp}); pick a tensor-parallel size that divides {padded}")


_BIDIRECTIONAL_POOLING = ("avg", "cls", "last")
# model types whose get_text_config() is thinker_config.text_config, and that
# text config's model_type (the thinker's fixed text class)
_THINKER_TEXT = {"qwen2_5_omni": "qwen2_5_omni_text", "qwen3_omni_moe": "qwen3_omni_moe_text",
                 "qwen3_asr": "qwen3_asr_text"}


def _verify_and_update(arch: str, text: HFView, notes: list[str], hf: HFView | None = None) -> None:
    """model_executor/models/config.py MODELS_CONFIG_MAP: the per-architecture
    config updates vLLM makes before building the model, where they change
    what the attention layers are."""
    if arch == "Gemma3TextModel":  # Gemma3TextModelConfig (EmbeddingGemma)
        text.attrs["is_causal"] = not text.get("use_bidirectional_attention")
        if not text.attrs["is_causal"]:
            notes.append("Gemma3TextModel with use_bidirectional_attention: vLLM sets is_causal False "
                         "(encoder-only attention)")
    elif arch in ("LlamaBidirectionalModel", "LlamaBidirectionalForSequenceClassification"):
        # LlamaBidirectionalConfig: always bidirectional; its pooling must be named
        pooling = text.get("pooling")
        if pooling is None:
            raise UserError("this bidirectional model needs a 'pooling' field in its config.json "
                            "(avg, cls or last); vLLM assumes none")
        if pooling not in _BIDIRECTIONAL_POOLING:
            raise UserError(f"pooling {pooling!r} is not one vLLM supports (avg, cls or last)")
        text.attrs["is_causal"] = False
    elif arch == "VoyageQwen3BidirectionalEmbedModel":  # VoyageQwen3BidirectionalEmbedModelConfig
        text.attrs["is_causal"] = False
    elif arch == "JinaEmbeddingsV5Model" and not text.get("is_decoder", True):
        # JinaEmbeddingsV5ModelConfig: an encoder checkpoint (-nano) runs bidirectional
        text.attrs["is_causal"] = False
    elif arch == "ColQwen3_5":
        _colqwen3_5_contract(text, hf or text, notes)


def _colqwen3_5_contract(text: HFView, hf: HFView, notes: list[str]) -> None:
    """ColQwen3_5Config: the checkpoint must declare retrieval_attention_contract
    (on the config or its text config, one value, "causal" or "bidirectional");
    it sets is_causal on both configs."""
    views = [text] if hf is text else [hf, text]
    declared = [v.get("retrieval_attention_contract") for v in views
                if v.get("retrieval_attention_contract") is not None]
    if not declared:
        raise UserError("ColQwen3.5 checkpoints must declare retrieval_attention_contract as 'causal' or "
                        "'bidirectional'; vLLM refuses the config without it")
    if any(d not in ("causal", "bidirectional") for d in declared) or len(set(declared)) != 1:
        raise UserError("unsupported or conflicting ColQwen3.5 retrieval_attention_contract declarations: "
                        f"{declared!r}")
    for view in views:
        view.attrs["is_causal"] = declared[0] == "causal"
    if declared[0] == "bidirectional":
        notes.append("ColQwen3.5 retrieval_attention_contract bidirectional: is_causal False "
                     "(full-attention layers run encoder-only attention)")


def _sub(mapping: Any, key: str) -> Any:
    return mapping.get(key) if isinstance(mapping, dict) else None


def _text_view(given: dict, hf: HFView, where: str, notes: list[str], raw: dict,
               from_dict: bool = True) -> HFView:
    """hf_text_config, as transformers' get_text_config() gives it: the
    config itself, its text_config (Qwen-Omni: thinker_config's; ColPali:
    vlm_config's; DeepSeek-VL2: built from language_config), or, for a
    wrapper class that builds a missing text_config from its defaults, that.
    ``raw`` is ``given`` as written, before raw.py's coercions;
    ``from_dict``: transformers builds it from config.json (not a Mistral
    params.json, which vLLM converts into config objects itself)."""
    text = hf
    holder, holder_cls, text_where = given, _HF_CLASSES.get(hf.model_type), f"{where} text_config"
    raw_holder: Any = raw
    if hf.model_type in _THINKER_TEXT and isinstance(given.get("thinker_config"), dict):
        # Qwen2.5-Omni / Qwen3-Omni: get_text_config() is thinker_config.text_config
        holder, holder_cls = given["thinker_config"], None
        raw_holder = raw.get("thinker_config")
        text_where = f"{where} thinker_config.text_config"
    if hf.model_type == "colpali" and isinstance(given.get("vlm_config"), dict):
        # ColPaliConfig.get_text_config(): the text_config of vlm_config (a PaliGemmaConfig)
        holder = parse_raw(given["vlm_config"], f"{where} vlm_config")
        raw_holder = raw.get("vlm_config")
        holder_cls = _HF_CLASSES.get(holder.get("model_type") or "paligemma")
        text_where = f"{where} vlm_config.text_config"
    if hf.model_type == "deepseek_vl_v2" and "text_config" not in given:
        # vLLM's DeepseekVLV2Config (DeepSeek-VL2 / -OCR / -OCR-2): text_config is
        # DeepseekVLV2TextConfig(**language_config), a DeepseekV2Config whose
        # kv_lora_rank defaults to None (no MLA unless the config gives one)
        sub = dict(given.get("language_config") or {})
        sub.setdefault("kv_lora_rank", None)
        # checked as DeepseekVLV2TextConfig (kv_lora_rank int | None), built as DeepseekV2Config
        check_declared(raw.get("language_config"), "deepseek_vl_v2_text", f"{where} language_config")
        text = hf_view(sub, "deepseek_v2", f"{where} language_config")
    elif (popped := flat_text(hf.model_type, given)) is not None:
        text = hf_view(popped[1], popped[0], text_where)
    elif "text_config" in holder:
        sub = holder["text_config"] or {}
        if from_dict and holder_cls is not None and holder_cls.text_config_type is None \
                and holder_cls.text_default_type and isinstance(sub, dict) and sub.get("model_type") is not None:
            # LlavaConfig and its kin build text_config through AutoConfig's
            # CONFIG_MAPPING: a model type it lacks fails loading
            auto_sub_class(sub, "text_config", holder_cls.text_default_type, where)
        # a fixed text class, else the text_config's model_type, else the
        # wrapper class's default (CONFIG_MAPPING[text_config.get("model_type", ...)])
        sub_type = ((holder_cls.text_config_type if holder_cls else None) or sub.get("model_type")
                    or (holder_cls.text_default_type if holder_cls else None)
                    or _THINKER_TEXT.get(hf.model_type) or hf.model_type)
        text = hf_view(sub, sub_type, text_where, _sub(raw_holder, "text_config"))
    if "text_config" not in holder and holder_cls is not None and holder_cls.text_from_defaults:
        text = hf_view(dict(holder_cls.text_init), holder_cls.text_config_type or holder_cls.text_default_type,
                       text_where)
        notes.append(f"no text_config: {holder_cls.name} builds its text config from {text.hf_class}'s "
                     "defaults alone, not from the top-level fields")
    return text


def _check_text_arch_on_wrapper(model_arch: str, given: dict[str, Any], hf: HFView, text: HFView, where: str) -> None:
    """A text-only architecture whose vLLM model class reads its sizes off
    the top-level config (READS_TOP_CONFIG), on a wrapper config.json whose
    text model sits apart (a text_config, or the fields a flat Qwen2-VL
    config pops into one): the class reads the wrapper's own fields, and the
    wrapper has no vocab_size (WRAPPERS_WITH_VOCAB have one, and are left to
    the text view)."""
    if text is hf or model_arch not in READS_TOP_CONFIG or hf.model_type in WRAPPERS_WITH_VOCAB:
        return
    popped = flat_text(hf.model_type, given)
    top = set(given) - set(popped[1] if popped else ())
    if "vocab_size" in top:
        return
    raise UserError(f"{where}: architecture {model_arch} is a text-only model whose vLLM {VLLM_VERSION} class reads "
                    f"its sizes off the top-level config, here a {hf.hf_class} whose text model is a sub-config, so "
                    f"vLLM fails building it (AttributeError: '{hf.hf_class}' object has no attribute 'vocab_size'); "
                    "use the wrapper's own architecture, or a config.json of the text model alone")


def _first_head_size(built: Any) -> int | None:
    """The head size of the first attention layer of a one-stack model (the
    decoder-only files layer_build checks), else None."""
    if not isinstance(built, _Stack):
        return None
    return next((what.head_size for _, what in built.slots if isinstance(what, LayerAttention)), None)


def model_facts(
    data: object,
    *,
    name: str,
    where: str = "config.json",
    tp: int = 1,
    dtype: str = "auto",
    capability: Capability | None = None,
    weights: str | None = None,
    mm_inputs: bool = True,
    disable_sliding_window: bool = False,
    source: str | None = None,
    pooling_config: bool = False,
    engine: str = "vllm",
    mistral_format: bool = False,
    trust_remote_code: bool = False,
    code_folder: Path | None = None,
) -> ModelFacts:
    """A parsed config.json (a mapping) -> ModelFacts.

    ``engine`` "sglang": the facts are for SGLang's resolution, which reads
    the config, not vLLM's layers; a model vLLM builds without asking
    get_attn_backend (MiMo-V2-Flash, Inkling, ...) then parses, with no
    attention groups and a note, instead of being refused.

    ``weights`` is the dtype of the weight files, used only when the config
    names none (vLLM reads it from the safetensors headers). ``pooling_config``
    is a Sentence-Transformers pooling module next to the config, which makes
    vLLM run the model as a pooling model. ``mistral_format``: ``data`` is a
    converted params.json, which MistralConfigParser builds without AutoConfig.
    ``trust_remote_code`` is vLLM's --trust-remote-code: without it a config
    whose class or model class only the checkpoint's own code has is refused,
    as vLLM refuses it. ``code_folder``: the local model folder that remote
    code (auto_map's ``module.Class``) is loaded from, where a named module
    file that is not there fails vLLM's load; None for a Hugging Face id
    (vLLM downloads the files; not checked).

    parse_raw types the fields every model reads; a field only some config
    class or model file computes with ("sliding_window_pattern": "x",
    "per_layer_config": 5) can still hold a value of the wrong kind, where
    transformers or vLLM fail with a TypeError: that is a user error here.
    """
    try:
        return _model_facts(data, name=name, where=where, tp=tp, dtype=dtype, capability=capability,
                            weights=weights, mm_inputs=mm_inputs, disable_sliding_window=disable_sliding_window,
                            source=source, pooling_config=pooling_config, engine=engine,
                            mistral_format=mistral_format, trust_remote_code=trust_remote_code,
                            code_folder=code_folder)
    except WRONG_KIND as exc:
        raise wrong_kind(where, exc, "transformers and vLLM") from None


def _check_text_config_kept(data: object, model_type: str, where: str) -> None:
    """A text config class (Ministral3Config, LlamaConfig, ...) keeps a
    config.json text_config as the dict it is, so get_text_config() returns
    that dict, which ModelConfig's get_hf_text_config refuses."""
    if not isinstance(data, dict) or data.get("text_config") is None or not keeps_text_config_dict(model_type):
        return
    raise UserError(f"{where}: The text_config extracted from the model config does not have `num_attention_heads` "
                    f"attribute (the config class of model_type {model_type} has no text sub-config, so it keeps "
                    f"text_config as the plain mapping config.json gives, which vLLM {VLLM_VERSION}'s "
                    "get_hf_text_config reads as the text config); give the wrapper's model_type or move the "
                    "text fields to the top level")


def _fill_architectures(data: object, where: str, engine: str) -> tuple[object, str | None]:
    """get_config (transformers_utils/config.py): a config whose
    ``architectures`` is missing or empty (any falsy value: [], {}, "", null)
    gets transformers' base model class for its model_type, where it has one;
    without one ModelConfig's registry lookup refuses. SGLang fills in nothing."""
    if not isinstance(data, dict) or data.get("architectures"):
        return data, None
    if engine == "sglang":
        raise UserError(f"{where}: no 'architectures'; SGLang needs it to pick the model class")
    if not data.get("model_type"):
        raise UserError(f"{where}: no 'architectures' and no 'model_type'; transformers (and so vLLM) needs the "
                        "model type to pick the config class")
    base = base_model_class(data.get("model_type"))
    if base is None:
        raise UserError(f"{where}: no 'architectures', and transformers has no base model class for model_type "
                        f"{shown(data.get('model_type'))} to fill in, so vLLM {VLLM_VERSION} refuses it (No model "
                        "architectures are specified); add the model's architectures")
    note = (f"no 'architectures' in config.json: vLLM takes transformers' base model class for model_type "
            f"{data.get('model_type')}, {base}")
    return {**data, "architectures": [base]}, note


def _model_facts(
    data: object,
    *,
    name: str,
    where: str,
    tp: int,
    dtype: str,
    capability: Capability | None,
    weights: str | None,
    mm_inputs: bool,
    disable_sliding_window: bool,
    source: str | None,
    pooling_config: bool,
    engine: str,
    mistral_format: bool = False,
    trust_remote_code: bool = False,
    code_folder: Path | None = None,
) -> ModelFacts:
    if not isinstance(tp, int) or tp < 1:
        raise UserError(f"tensor parallel size must be a positive integer, got {tp!r}")
    loader = SGLANG_LOADER if engine == "sglang" else VLLM_LOADER
    remote_note = None if mistral_format else check_config_class(data, where, trust_remote_code, code_folder, loader)
    if not mistral_format and remote_note is None:
        check_read_only_keys(data, where, loader)
    data, base_note = _fill_architectures(data, where, engine)
    given = parse_raw(data, where)
    archs = given["architectures"]
    hf = hf_view(given, given.get("model_type"), where, data)
    if engine == "vllm" and not mistral_format:
        _check_text_config_kept(data, hf.model_type, where)
    notes: list[str] = [n for n in (remote_note, base_note) if n]
    text = _text_view(given, hf, where, notes, data, from_dict=not mistral_format)
    # The registry's Transformers backend loads auto_map's remote AutoModel classes (trusted) from
    # the model folder; one that does not load there (no file, not Python, no such class) loads
    # nothing (a warning), as if unnamed
    auto_map = hf.get("auto_map")
    unloadable: dict[str, str] = {}
    if engine == "vllm" and trust_remote_code and isinstance(auto_map, dict):
        for key, ref in auto_map.items():
            problem = remote_module_problem(ref, code_folder) if str(key).startswith("AutoModel") else None
            if problem:
                unloadable[key] = problem
        auto_map = {k: v for k, v in auto_map.items() if k not in unloadable}
    # ModelConfig.__post_init__ asks the registry for the model class first:
    # the architecture vLLM reports, and the registered one whose model file
    # builds it (GPT2ForTokenClassification: GPT2LMHeadModel's, converted)
    try:
        arch, model_arch = resolve_architecture(list(archs), auto_map, trust_remote_code or engine != "vllm")
    except UserError as exc:
        if unloadable:
            named = "; ".join(f"{k}: {why}" for k, why in unloadable.items())
            raise UserError(f"{exc}; auto_map's remote {named}, so vLLM {VLLM_VERSION} loads no model class "
                            "from it: put a file that defines it beside config.json") from None
        if engine != "sglang":
            raise
        # SGLang's own model registry decides what it serves (selector/sglang), not vLLM's: an
        # architecture vLLM does not build (MiniCPM-SALA) still gives SGLang its config's facts
        arch = model_arch = archs[0]
    _verify_and_update(arch, text, notes, hf)
    check_max_len_factor(text.attrs, text.model_type, where)

    # ModelConfig.__post_init__: sliding_window 0 means none; --disable-sliding-window
    if text.get("sliding_window") == 0:
        text.attrs["sliding_window"] = None
        notes.append("sliding_window 0 in config: vLLM treats it as no sliding window")
    window_given = text.get("sliding_window") is not None
    if disable_sliding_window and window_given:
        # ModelConfig.__post_init__ assigns hf_text_config.sliding_window = None
        # (config/model.py:917); a class whose strict dataclass declares the
        # field a plain int refuses the assignment, so vLLM fails there
        if declared(text.model_type).get("sliding_window") == ("int", False):
            raise UserError(f"{where}: --disable-sliding-window: Validation error for field 'sliding_window': "
                            "Field 'sliding_window' expected int, got NoneType (vLLM "
                            f"{VLLM_VERSION} sets hf_text_config.sliding_window to None, which {text.hf_class} "
                            "declares a plain int: StrictDataclassFieldValidationError); drop the flag")
        text.attrs["sliding_window"] = None
        notes.append("--disable-sliding-window: hf_text_config.sliding_window set to None")

    # EngineArgs.create_engine_config: the model-level window only when no
    # layer_types or every layer slides, so it never overrides full layers
    layer_types = text.get("layer_types")
    cache_window = None
    if layer_types is None or all(t == "sliding_attention" for t in layer_types):
        cache_window = text.get("sliding_window")
    if cache_window is not None and layer_types is None:
        notes.append(f"sliding_window {cache_window} with no layer_types: cache_config.sliding_window "
                     "applies it to every layer")

    # ModelConfig.use_mla: on the Transformers modeling backend any
    # kv_lora_rank but null (is_causal not read; whether the layers are then
    # MLAAttention is the modeling code's: layers._generic); vLLM's own model
    # files go by the MLA model-type list, causal only
    if transformers_backend(model_arch):
        use_mla = text.get("kv_lora_rank") is not None
    else:
        use_mla = is_deepseek_mla(text) and bool(text.get("is_causal", True))
    quant = model_hook_quant(_quant_config(hf, text, where), arch)
    if engine != "sglang" and transformers_backend(model_arch) and quant \
            and quant.get("quant_method") in ("mxfp4", "gpt_oss_mxfp4"):
        # TransformersBase.__init__ refuses these before building a layer
        raise UserError(f"{model_arch} is served by vLLM {VLLM_VERSION}'s Transformers modeling backend, which "
                        f"does not support {quant['quant_method']} quantization (NotImplementedError); name the "
                        "model's own architecture, or use a checkpoint in another format")
    kv_scheme, per_head = _kv_cache_facts(quant)

    # registry: a multimodal wrapper (even one named *Model) builds a generative model
    _, runner = _ARCHS.get(arch, (None, "generate" if arch in _LANGUAGE_MODEL else None))
    built_arch = language_model_arch(model_arch, text)  # a multimodal wrapper's language model
    builder = _ARCHS.get(built_arch, (_generic, None))[0]
    if dropped_note(arch):
        notes.append(dropped_note(arch))
    if runner is None:
        # vLLM asks its registry's model class first (is_pooling_model), the name suffix after
        runner = REGISTRY_RUNNERS.get(arch) or _runner_by_suffix(arch)
    if pooling_config:
        runner = "pooling"
    # VllmConfig: model_config.verify_with_parallel_config refuses, before any
    # layer is built, a tensor-parallel size that does not divide the model's
    # total attention heads (config/model.py:1557-1563)
    heads = total_attention_heads(text)
    if engine != "sglang" and tp > 1 and isinstance(heads, int) and heads % tp:
        raise UserError(f"tensor parallel size {tp} does not divide the {heads} attention heads; pick a divisor "
                        f"(vLLM {VLLM_VERSION}: Total number of attention heads ({heads}) must be divisible by "
                        f"tensor parallel size ({tp}).)")
    _check_vocab_shards(text, tp, engine)
    ctx = _Ctx(arch=built_arch, hf=hf, text=text, tp=tp, cache_window=cache_window,
               mm_prefix=is_mm_prefix_lm(hf, text, mm_inputs), per_head_scales=per_head, use_mla=use_mla,
               alibi=uses_alibi(text, archs), notes=notes,
               uncached_kv="fp8" if kv_scheme == "fp8" and quant and quant.get("quant_method") == "compressed-tensors"
               else "auto")
    if engine != "sglang":
        _check_text_arch_on_wrapper(model_arch, given, hf, text, where)
        check_kv_heads_not_left_null(text)
        if built_arch in _READS_HEAD_DIM and text.model_type in NO_HEAD_DIM and not text.has("head_dim"):
            raise UserError(f"{where}: {built_arch}'s model file reads config.head_dim, which config.json does not "
                            f"give and {text.model_type}'s config class does not have, so vLLM {VLLM_VERSION} fails "
                            f"building it (AttributeError: no attribute 'head_dim'); add head_dim")
        if model_arch in _READS_TIE_WORD_EMBEDDINGS and hf.model_type == "chatglm" \
                and not hf.has("tie_word_embeddings"):
            raise UserError(f"{where}: {model_arch}'s model file reads config.tie_word_embeddings, which config.json "
                            f"does not give and vLLM's ChatGLMConfig does not set, so vLLM {VLLM_VERSION} fails "
                            "building it (AttributeError); add tie_word_embeddings (false for ChatGLM and GLM-4)")
        if model_arch in _READS_SUBCONFIG_FIELD:
            _check_subconfig_field(hf, model_arch, where)
    try:
        built = builder(ctx)
    except NoVllmSelection as refusal:
        if engine != "sglang":
            raise
        built = None
        notes.append(f"vLLM's layers not read: {refusal}")
    if engine != "sglang":
        # the rotary embedding and the MLP split, built with each attention layer
        check_layer_build(built_arch, text.attrs, tp, where, _first_head_size(built), text.model_type)
    if built is None:
        groups, others = (), ()
    else:
        stacks = [built] if isinstance(built, _Stack) else list(built)  # one stack, or Whisper's pair
        encoder_decoder = bool(hf.get("is_encoder_decoder") or text.get("is_encoder_decoder"))
        groups, others = group_layers(stacks, encoder_decoder)
    if not groups and built is not None:
        kinds = sorted({o.kind for o in others})
        what = f" (its layers are {', '.join(kinds)})" if kinds else ""
        raise UserError(f"{where}: no attention layers found for {arch}{what}; vLLM builds no attention layer "
                        "and calls no attention backend for it, so there is nothing to select")
    check_kv_cache_scheme(quant, groups, where)
    index_topk = _index_topk(text.get("index_topk"), any(g.attn.use_sparse for g in groups), where)

    # model-level facts the selector's predicates read from model_config
    check_expert_counts(text, where)
    head_size = model_head_size(text, hf.model_type)
    total_heads = total_attention_heads(text)
    total_kv = total_kv_heads(text, hf.model_type)
    num_kv = 1 if use_mla else max(1, total_kv // tp)

    config_dtype, dtype_from = _find_config_dtype(hf, text, where, weights)
    if dtype_from:
        notes.append(dtype_from)
    resolved, dtype_note = resolve_dtype(config_dtype, hf.model_type, dtype, capability=capability,
                                         pooling=runner == "pooling")
    if dtype_note:
        notes.append(dtype_note)
    if engine != "sglang" and not quant:
        _check_weight_storage(text, groups, resolved, where)
    if capability is None:
        notes.append("dtype resolved for compute capability >= 8.0 (no device given)")
    if ctx.mm_prefix:
        notes.append(f"is_mm_prefix_lm ({hf.model_type}): every decoder layer passes use_mm_prefix")
    defaulted = sorted(k for k in (hf.defaulted | text.defaulted) & _REPORTED_DEFAULTS
                       if text.get(k, hf.get(k)) is not None)
    if defaulted:
        cls_name = text.hf_class if text is not hf else hf.hf_class
        notes.append(f"not in config.json, set by {cls_name} (class default or __post_init__): " + ", ".join(
            f"{k}={text.get(k, hf.get(k))}" for k in defaulted))
    for view in {id(hf): hf, id(text): text}.values():
        if "layer_types" in view.defaulted:
            kinds = sorted(set(view.get("layer_types")))
            notes.append(f"layer_types not in config.json: {view.hf_class} derives them ({', '.join(kinds)})")
        if "sliding_window_dropped" in view.defaulted:
            notes.append(f"sliding_window ignored: use_sliding_window is false ({view.hf_class})")
    if isinstance(hf.get("vision_config"), dict):
        notes.append("vision tower attention runs MMEncoderAttention (get_vit_attn_backend), "
                     "outside these groups")
    if arch == "DeepseekV32ForCausalLM":
        notes.append("DeepseekV32ForCausalLM turns --kv-cache-dtype bfloat16 into auto")
    if arch == "GlmMoeDsaForCausalLM":
        notes.append("GlmMoeDsaForCausalLM turns kv-cache dtype auto into fp8_e4m3 on SM10x")

    return ModelFacts(
        name=name, architecture=arch, model_type=hf.model_type, dtype=resolved,
        num_layers=model_num_layers(text, hf.model_type), tp=tp, groups=groups, other_layers=others,
        head_size=head_size, num_heads=total_heads // tp, num_kv_heads=num_kv,
        model_use_mla=use_mla, total_num_heads=total_heads, total_num_kv_heads=total_kv,
        attn_logit_softcapping=soft_cap_value(text.get("attn_logit_softcapping")),
        is_mm_prefix_lm=ctx.mm_prefix,
        rswa_window=int(hf.get("rswa_window")) if hf.get("rswa_window") is not None else None,
        is_diffusion=hf.get("canvas_length") is not None,
        kv_cache_scheme=kv_scheme, quantization=resolved_method(quant, hf.model_type),
        checkpoint_quant=checkpoint_quant(quant),
        notes=tuple(notes), config_dtype=config_dtype, runner=runner,
        index_topk=index_topk, source=source,
        mla_config_dims=tuple(as_hashable(text.get(k)) for k in _MLA_DIMS),
        mla_dims_absent=tuple(k for k in _MLA_DIMS if not text.has(k)), text_config_class=text.hf_class,
        derived_max_len=(None if runner == "pooling" or (disable_sliding_window and window_given)
                         else derived_max_len(text.attrs, text.model_type)),
        architectures=tuple(str(a) for a in archs),
        config_attrs=_engine_attrs(hf), text_config_attrs=_engine_attrs(text),
    )


def _index_topk(value: object, sparse: bool, where: str) -> object:
    """hf_text_config.index_topk as the selection reads it. A sparse MLA
    layer sizes its top-k buffers with it: an integer (``"2048"`` and
    ``2048.0`` read as 2048). Elsewhere only a forced sparse backend's checks
    read it, with ``int(...)`` and ``% 128``, and vLLM builds the model
    whatever it is (``[2048]``, ``"x"``): it is kept as written (a list or
    mapping wrapped hashable), and those checks fail on it as vLLM's do."""
    if value is None:
        return None
    if not sparse:
        return as_hashable(value)
    try:
        return LAX_INT.validate_python(value)
    except ValidationError as exc:
        problem = exc.errors(include_url=False)[0]["msg"]
        raise UserError(f"{where}: field 'index_topk': {problem} (got {shown(value)}); fix the value in the "
                        "config") from None


_MLA_DIMS = ("qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "kv_lora_rank")


def _engine_attrs(view: HFView) -> tuple[tuple[str, object], ...]:
    """The ENGINE_CONFIG_KEYS this config object has (for the SGLang engine)."""
    from attn_select.selector.model_facts import ENGINE_CONFIG_KEYS, freeze_config_value

    return tuple((k, freeze_config_value(view.attrs[k])) for k in ENGINE_CONFIG_KEYS if k in view.attrs)


# defaulted fields worth a note (they change head sizes or windows)
_REPORTED_DEFAULTS = frozenset({
    "num_attention_heads", "num_key_value_heads", "head_dim", "sliding_window", "num_hidden_layers",
    "hidden_size", "attn_logit_softcapping", "kv_lora_rank", "qk_rope_head_dim", "encoder_attention_heads",
    "decoder_attention_heads", "d_model", "encoder_layers", "decoder_layers",
})

