"""Step 2: what the transformers config class makes of the raw fields
(class defaults, ``attribute_map``, ``__post_init__``), reduced to the
attributes vLLM reads from ``hf_config`` / ``hf_text_config``."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Callable, Mapping, NamedTuple

from attn_select.selector.engines import VLLM_VERSION
from attn_select.selector.errors import UserError, shown
from attn_select.selector.model.hf_dtype import config_dtype
from attn_select.selector.model.hf_rope import check_rope
from attn_select.selector.model.hf_size_defaults import HEAD_DIM_DEFAULTS, KV_HEADS_DEFAULTS
from attn_select.selector.model.hf_subconfigs import check_subconfigs
from attn_select.selector.model.hf_types import check_declared


class HFView:
    """The attributes vLLM reads from one transformers config object
    (``hf_config`` or ``hf_text_config``), after the class defaults and
    ``__post_init__``. ``defaulted`` names the fields that came from class
    defaults rather than config.json."""

    __slots__ = ("model_type", "attrs", "defaulted", "hf_class")

    def __init__(self, model_type: str, attrs: dict[str, Any], defaulted: set[str], hf_class: str):
        self.model_type = model_type
        self.attrs = attrs
        self.defaulted = defaulted
        self.hf_class = hf_class

    def get(self, name: str, default: Any = None) -> Any:
        return self.attrs.get(name, default)

    def has(self, name: str) -> bool:
        return name in self.attrs


# Far above any real model (a few hundred layers at most), and low enough
# that building every layer's facts stays well under a second: a config that
# claims 100,000,000 layers is refused instead of filling memory.
MAX_LAYERS = 10_000
# Layer counts, under every name a config class or a layer builder reads
# them by (HRM-Text multiplies the last three).
_LAYER_COUNTS = ("num_hidden_layers", "num_layers", "n_layer", "n_layers", "decoder_layers", "encoder_layers",
                 "vision_n_layers", "num_layers_per_stack", "H_cycles", "L_cycles")


def check_layer_count(n: Any, field: str, where: str = "") -> None:
    """A user error when a layer count is past MAX_LAYERS."""
    if isinstance(n, int) and n > MAX_LAYERS:
        raise UserError(f"{where + ': ' if where else ''}{field} is {n:,}; attn-select reads models of at most "
                        f"{MAX_LAYERS:,} layers (real ones have a few hundred): fix the config")


def _check_layer_counts(attrs: Mapping[str, Any], where: str) -> None:
    for name in _LAYER_COUNTS:
        check_layer_count(attrs.get(name), name, where)


def _alternating(n: int, every: int, hit: Any, other: Any) -> list[Any]:
    """transformers' default per-layer lists (layer_types, no_rope_layers):
    ``other`` on every ``every``-th layer, ``hit`` elsewhere."""
    return [hit if (i + 1) % every else other for i in range(n)]


def _post_head_dim_and_kv(a: dict[str, Any]) -> None:
    # LlamaConfig / MistralConfig / GptOssConfig __post_init__
    if a.get("head_dim") is None and a.get("num_attention_heads"):
        a["head_dim"] = a["hidden_size"] // a["num_attention_heads"]
    if a.get("num_key_value_heads") is None:
        a["num_key_value_heads"] = a.get("num_attention_heads")


def _post_kv(a: dict[str, Any]) -> None:
    if a.get("num_key_value_heads") is None:
        a["num_key_value_heads"] = a.get("num_attention_heads")


def _post_qwen2(a: dict[str, Any]) -> None:
    # Qwen2Config / Qwen3Config: the window exists only with use_sliding_window,
    # and only layers from max_window_layers on slide.
    if not a.get("use_sliding_window"):
        a["sliding_window"] = None
    _post_kv(a)
    if a.get("layer_types") is None:
        sw, first = a.get("sliding_window"), a.get("max_window_layers", 28)
        a["layer_types"] = [
            "sliding_attention" if sw is not None and i >= first else "full_attention"
            for i in range(a["num_hidden_layers"])
        ]


def _post_qwen3_moe(a: dict[str, Any]) -> None:
    if not a.get("use_sliding_window"):
        a["sliding_window"] = None


def _post_gemma2(a: dict[str, Any]) -> None:
    if a.get("layer_types") is None:
        a["layer_types"] = _alternating(a["num_hidden_layers"], 2, "sliding_attention", "full_attention")


def _post_gemma3_text(a: dict[str, Any]) -> None:
    if a.get("use_bidirectional_attention") and a.get("sliding_window") is not None:
        a["sliding_window"] = a["sliding_window"] // 2 + 1  # transformers: exclusive bound for FA
    if a.get("layer_types") is None:
        # kwargs.get("sliding_window_pattern", 6): a 0, null or list fails as in transformers
        every = a.get("sliding_window_pattern", 6)
        a["layer_types"] = _alternating(a["num_hidden_layers"], every, "sliding_attention", "full_attention")


def _post_gemma4_text(a: dict[str, Any], kv_heads_gated: bool = True) -> None:
    """Gemma4TextConfig.__post_init__: "all"-bidirectional halves the window
    (is_causal False, which gemma4.py never reads); 5:1 layer_types with the
    last layer forced full; ``per_layer_config`` overrides for the full
    layers (head_dim = global_head_dim, default 512; KV heads =
    num_global_key_value_heads only with attention_k_eq_v). transformers pops
    global_head_dim / num_global_key_value_heads, so they are no attributes."""
    if a.get("use_bidirectional_attention") == "all":
        a["is_causal"] = False
        if a.get("sliding_window") is not None:
            a["sliding_window"] = a["sliding_window"] // 2 + 1
    _last_full_layer_types(a, 6)
    global_head = a.pop("global_head_dim", None)
    global_kv = a.pop("num_global_key_value_heads", None)
    override: dict[str, Any] = {"head_dim": 512 if global_head is None else global_head}
    if (a.get("attention_k_eq_v") or not kv_heads_gated) and global_kv is not None:
        override["num_key_value_heads"] = global_kv
    _full_layer_table(a, override)


def _post_diffusion_gemma_text(a: dict[str, Any]) -> None:
    """DiffusionGemmaTextConfig.__post_init__ is Gemma4TextConfig's, with
    num_global_key_value_heads on the full layers whatever config.json says
    of attention_k_eq_v (the class declares no such field, and
    diffusion_gemma.py forces it on before building; checked against a vLLM
    build with attention_k_eq_v false)."""
    _post_gemma4_text(a, kv_heads_gated=False)


def _last_full_layer_types(a: dict[str, Any], every: int) -> None:
    """Gemma-4-style layer_types: every ``every``-th layer full unless given,
    the last layer forced full either way."""
    if a.get("layer_types") is None:
        a["layer_types"] = _alternating(a["num_hidden_layers"], every, "sliding_attention", "full_attention")
    else:
        a["layer_types"] = list(a["layer_types"])
    if a["layer_types"] and a["layer_types"][-1] != "full_attention":
        a["layer_types"][-1] = "full_attention"


def _full_layer_table(a: dict[str, Any], override: dict[str, Any]) -> None:
    """per_layer_config as {layer: fields}: the given one (config.json keys
    are strings; a list counts from 0), else ``override`` on every full layer."""
    table = a.get("per_layer_config")
    if table is None:
        table = {i: dict(override) for i, kind in enumerate(a["layer_types"]) if kind == "full_attention"}
    elif isinstance(table, dict):
        table = {int(k): dict(v) for k, v in table.items()}
    else:
        table = {i: dict(v) for i, v in enumerate(table)}
    a["per_layer_config"] = table


def _post_every_fourth_full(a: dict[str, Any], every: Any) -> None:
    # Olmo3Config: (i + 1) % 4; Exaone4Config: % sliding_window_pattern, which it sets to 0 when
    # sliding_window is null (then a ZeroDivisionError, as a non-integer pattern fails the modulo)
    _post_kv(a)
    if a.get("layer_types") is not None:
        return
    if not isinstance(every, int) or every == 0:
        raise UserError(f"config.json has no layer_types, and the config class computes them as (layer + 1) % "
                        f"sliding_window_pattern with a pattern of {every!r} (0 when sliding_window is null), which "
                        "fails, so transformers cannot load the config; give layer_types, or a sliding_window and "
                        "an integer sliding_window_pattern")
    a["layer_types"] = _alternating(a["num_hidden_layers"], every, "sliding_attention", "full_attention")


def _post_cohere2(a: dict[str, Any]) -> None:
    # Cohere2Config: head_dim hidden // heads, unless config.json gives one:
    # head_dim is no field of the class, so the given value is set after
    # __post_init__ (PreTrainedConfig's kwargs); layer_types from the
    # legacy sliding_window_pattern (default 4, every 4th layer full)
    _post_kv(a)
    if "head_dim" not in a:
        a["head_dim"] = a["hidden_size"] // a["num_attention_heads"]
    if a.get("layer_types") is None:
        every = a.pop("sliding_window_pattern", 4)  # kwargs.pop(..., 4)
        a["layer_types"] = _alternating(a["num_hidden_layers"], every, "sliding_attention", "full_attention")


def _post_gpt_oss(a: dict[str, Any]) -> None:
    _post_head_dim_and_kv(a)
    if a.get("layer_types") is None:
        a["layer_types"] = _alternating(a["num_hidden_layers"], 2, "sliding_attention", "full_attention")


def _post_qwen3_next(a: dict[str, Any]) -> None:
    if a.get("layer_types") is None:
        every = a.get("full_attention_interval") or 4
        a["layer_types"] = _alternating(a["num_hidden_layers"], every, "linear_attention", "full_attention")


def _post_deepseek(a: dict[str, Any]) -> None:
    _post_kv(a)
    # DeepseekV2Config sets head_dim to the rope part (for RoPE) over its own
    # declared head_dim field; vLLM's get_head_size takes the MLA branch first,
    # so this only shows without MLA.
    a["head_dim"] = a.get("qk_rope_head_dim")


def _post_deepseek_v3(a: dict[str, Any]) -> None:
    _post_kv(a)
    # DeepseekV3Config / YoutuConfig declare no head_dim field: __post_init__
    # sets it to the rope part, then PreTrainedConfig.__post_init__ sets the
    # undeclared config.json keys, so a given head_dim (even null) wins
    # (DeepseekV3Config(head_dim=96).head_dim == 96, transformers 5.20)
    if "head_dim" not in a:
        a["head_dim"] = a.get("qk_rope_head_dim")


def _post_mistral4(a: dict[str, Any]) -> None:
    _post_kv(a)
    # Mistral4Config.__post_init__: head_dim is the whole query-key width,
    # unless config.json gives one (an undeclared key, set after, as V3's)
    if "head_dim" not in a:
        a["head_dim"] = (a.get("qk_nope_head_dim") or 0) + (a.get("qk_rope_head_dim") or 0)


def _post_qwen2_moe(a: dict[str, Any]) -> None:
    # Qwen2MoeConfig.__post_init__: the window becomes 0 (vLLM: none) without
    # use_sliding_window; layer_types slide on odd-numbered layers below
    # max_window_layers (qwen2_moe.py reads no per-layer window)
    if not a.get("use_sliding_window"):
        a["sliding_window"] = None
    _post_kv(a)
    if a.get("layer_types") is None:
        first = a.get("max_window_layers", 28)
        a["layer_types"] = [
            "sliding_attention" if (i + 1) % 2 and i < first and a.get("use_sliding_window") else "full_attention"
            for i in range(a["num_hidden_layers"])
        ]


def _post_jamba(a: dict[str, Any]) -> None:
    # JambaConfig.layers_block_type is a property of the period and offset (a
    # config.json that sets it is refused on loading: config_class.check_read_only_keys)
    period, offset = a.get("attn_layer_period", 8), a.get("attn_layer_offset", 4)
    a["layers_block_type"] = ["attention" if i % period == offset else "mamba" for i in range(a["num_hidden_layers"])]
    _post_kv(a)


def _post_granite_swa(a: dict[str, Any]) -> None:
    # GraniteSWAConfig / GraniteMoeSWAConfig: every fourth layer (i % 4 == 0) full
    _post_kv(a)
    if a.get("layer_types") is None:
        a["layer_types"] = ["full_attention" if i % 4 == 0 else "sliding_attention"
                            for i in range(a["num_hidden_layers"])]


def _post_afmoe(a: dict[str, Any]) -> None:
    # AfmoeConfig.__post_init__: every global_attn_every_n_layers-th layer full
    if a.get("layer_types") is None:
        every = a.get("global_attn_every_n_layers") or 4
        a["layer_types"] = _alternating(a["num_hidden_layers"], every, "sliding_attention", "full_attention")
    _post_kv(a)


def _post_zamba2(a: dict[str, Any]) -> None:
    # Zamba2Config.__post_init__: the shared attention block runs on the
    # concatenated (2 * hidden) stream; its default layer pattern
    a["attention_hidden_size"] = 2 * a["hidden_size"]
    a["attention_head_dim"] = 2 * a["hidden_size"] // a["num_attention_heads"]
    _post_kv(a)
    if a.get("layers_block_type") is None:
        a["layers_block_type"] = (["linear_attention"] + (["linear_attention"] * 5 + ["hybrid"]) * 7
                                  + ["linear_attention"] * 4 + ["hybrid"] + ["linear_attention"] * 3
                                  + ["hybrid"] + ["linear_attention"] * 2)


def _post_nemotron_h(a: dict[str, Any]) -> None:
    # NemotronHConfig: num_hidden_layers is a property, the length of the
    # layer list (a stale num_hidden_layers in config.json is ignored). The
    # list is layers_block_type (alias layer_types), else the legacy
    # hybrid_override_pattern, else the class default of four layers.
    if a.get("layers_block_type") is None and isinstance(a.get("layer_types"), list):
        a["layers_block_type"] = a["layer_types"]
    pattern = a.get("hybrid_override_pattern")
    kinds = a.get("layers_block_type")
    if isinstance(kinds, list) and kinds:
        a["num_hidden_layers"] = len(kinds)
    elif pattern:
        a["num_hidden_layers"] = len(pattern)
    else:
        a["layers_block_type"] = ["linear_attention", "moe", "full_attention", "mlp"]
        a["num_hidden_layers"] = 4


def _post_cohere2_moe(a: dict[str, Any]) -> None:
    # Cohere2MoeConfig.__post_init__: layer_types per sliding_window_pattern,
    # the first first_k_dense_replace layers per prefix_dense_sliding_window_pattern
    _post_kv(a)
    if a.get("layer_types") is None:
        dense = a.pop("first_k_dense_replace", 0) or 0
        prefix_every = a.get("prefix_dense_sliding_window_pattern") or 1
        every = a.get("sliding_window_pattern", 4)
        a["layer_types"] = (_alternating(dense, prefix_every, "sliding_attention", "full_attention")
                            + _alternating(a["num_hidden_layers"] - dense, every, "sliding_attention",
                                           "full_attention"))


def _post_n_embed(a: dict[str, Any]) -> None:
    # BloomConfig / FalconConfig: the legacy ``n_embed`` keyword sets hidden_size
    if a.get("n_embed") is not None:
        a["hidden_size"] = a.pop("n_embed")


def _post_smollm3(a: dict[str, Any]) -> None:
    # SmolLM3Config.__post_init__: every no_rope_layer_interval-th layer has no
    # RoPE; with use_sliding_window those NoPE layers are the sliding ones
    _post_kv(a)
    n = a["num_hidden_layers"]
    if a.get("no_rope_layers") is None:
        a["no_rope_layers"] = _alternating(n, a.get("no_rope_layer_interval", 4), 1, 0)
    if a.get("layer_types") is None:
        sliding = a.get("use_sliding_window") and a.get("sliding_window") is not None
        a["layer_types"] = ["sliding_attention" if sliding and not a["no_rope_layers"][i] else "full_attention"
                            for i in range(n)]


def _post_modernbert(a: dict[str, Any]) -> None:
    # ModernBertConfig: every global_attn_every_n_layers-th layer (from 0)
    # global, the rest sliding; sliding_window is the property local_attention // 2
    every = a.get("global_attn_every_n_layers", 3)
    if a.get("layer_types") is None:
        a["layer_types"] = ["sliding_attention" if i % every else "full_attention"
                            for i in range(a["num_hidden_layers"])]
    a["sliding_window"] = a["local_attention"] // 2


def _post_flint(a: dict[str, Any]) -> None:
    # vllm/models/flint/configs.py FlintConfig: the window only with
    # use_sliding_window; layer_types default all full, one per layer
    if not a.get("use_sliding_window", True):
        a["sliding_window"] = None
    n = a["num_hidden_layers"]
    if not a.get("layer_types"):
        a["layer_types"] = ["full_attention"] * n
    if len(a["layer_types"]) != n:
        raise UserError(f"layer_types has {len(a['layer_types'])} entries but num_hidden_layers is {n}")


def _post_gpt_bigcode(a: dict[str, Any]) -> None:
    # GPTBigCodeConfig.__post_init__: one KV head with multi_query (its default). The class declares
    # no num_key_value_heads: a config.json one (even null) is set after, and wins
    # (GPTBigCodeConfig(num_key_value_heads=8).num_key_value_heads == 8, transformers 5.20)
    if "num_key_value_heads" not in a:
        a["num_key_value_heads"] = 1 if a.get("multi_query", True) else a.get("n_head")


def _post_falcon(a: dict[str, Any]) -> None:
    # FalconConfig.__post_init__; head_dim is its property hidden // heads
    _post_n_embed(a)
    if a.get("num_kv_heads") is None:
        a["num_kv_heads"] = a.get("num_attention_heads")
    if a.get("num_attention_heads"):
        a["head_dim"] = a["hidden_size"] // a["num_attention_heads"]


def _post_dbrx(a: dict[str, Any]) -> None:
    # DbrxConfig.__post_init__: KV heads come from attn_config (default 1)
    attn = a.get("attn_config")
    kv = attn.get("kv_n_heads", 1) if isinstance(attn, dict) else 1
    a["attn_config"] = {**(attn if isinstance(attn, dict) else {}), "kv_n_heads": kv}
    a["num_key_value_heads"] = kv


def _post_minicpm3(a: dict[str, Any]) -> None:
    # MiniCPM3Config.__post_init__: head_dim is the rotary part; qk_head_dim
    # the full query/key width
    a["head_dim"] = a.get("qk_rope_head_dim")
    a["qk_head_dim"] = (a.get("qk_nope_head_dim") or 0) + (a.get("qk_rope_head_dim") or 0)
    if a.get("v_head_dim") is None:
        a["v_head_dim"] = a["hidden_size"] // a["num_attention_heads"]
    if a.get("head_dim") is None:
        a["head_dim"] = a["hidden_size"] // a["num_attention_heads"]
    _post_kv(a)


def _post_longcat_flash(a: dict[str, Any]) -> None:
    _post_kv(a)
    a["num_hidden_layers"] = 2 * a["num_layers"] if isinstance(a.get("num_layers"), int) else None


# PreTrainedConfig.validate_layer_type, which transformers runs on every
# config class (remote code too): each entry one of these kinds, after the
# legacy names are remapped, and one entry per layer. A config that fails it
# never loads, so vLLM cannot serve it.
_LAYER_KINDS = frozenset({
    "full_attention", "sliding_attention", "chunked_attention", "window_attention", "indexed_attention",
    "compressed_sparse_attention", "heavily_compressed_attention", "minimax_m3_sparse", "conv", "moe", "hybrid",
    "hybrid_sliding", "reference_sliding_attention", "linear_attention"})
_MLP_KINDS = frozenset({"sparse", "dense"})
_LEGACY_KINDS = MappingProxyType({"mamba": "linear_attention", "attention": "full_attention",
                                  "deepseek_sparse_attention": "indexed_attention",
                                  "qwen_sparse_attention": "indexed_attention"})
# classes that replace validate_layer_type with their own rule
_OWN_LAYER_CHECK = frozenset({"nemotron_h", "deepseek_v4", "neomme", "resnet"})


def _check_remappable(raw: Mapping[str, Any] | None, where: str) -> None:
    """PreTrainedConfig.__post_init__ runs remap_legacy_layer_types on every
    class: layer_types and mtp_layer_types, when not null, are iterated and
    each entry looked up in the legacy-name table (a wrapper keeps a
    top-level copy as written, so this is where one fails)."""
    if not isinstance(raw, Mapping):
        return
    for field in ("layer_types", "mtp_layer_types"):
        value = raw.get(field)
        if value is None or isinstance(value, (str, list, dict)) and all(
                not isinstance(v, (list, dict)) for v in value):
            continue
        what = (f"'{type(value).__name__}' object is not iterable" if not isinstance(value, (list, dict))
                else f"unhashable type: '{next(type(v).__name__ for v in value if isinstance(v, (list, dict)))}'")
        raise UserError(f"{where}: {field} is {shown(value)}; transformers remaps its legacy layer names on every "
                        f"config (TypeError: {what}), so vLLM {VLLM_VERSION} cannot load the config: give one layer "
                        "kind string per layer")


def _transformers_class(model_type: str) -> bool:
    """transformers 5.20's own config class loads the model type in vLLM (not
    one of vLLM's own classes, whose __post_init__ may rename layer kinds first)."""
    from attn_select.selector.model.hf_models import VLLM_CONFIG_REGISTRY, is_config_type

    return is_config_type(model_type) and model_type not in VLLM_CONFIG_REGISTRY


def _check_layer_lists(attrs: Mapping[str, Any], model_type: str, where: str, kinds_known: bool = True) -> None:
    """transformers' layer_types / mlp_layer_types check, as it runs after
    __post_init__ (mlp_layer_types only once layer_types is given).
    ``kinds_known``: the entries are as the class leaves them; a class not
    modelled here may fold its own names in first (vLLM's HYV4Config turns
    "sparse" into "deepseek_sparse_attention"), so only the count is checked."""
    if model_type in _OWN_LAYER_CHECK:
        return
    n = attrs.get("num_hidden_layers")
    for field, kinds in (("layer_types", _LAYER_KINDS), ("mlp_layer_types", _MLP_KINDS)):
        types = attrs.get(field)
        if not isinstance(types, list) or "num_hidden_layers" not in attrs:
            return
        bad = next((t for t in types if _LEGACY_KINDS.get(t, t) not in kinds), None) if kinds_known else None
        if bad is not None:
            raise UserError(f"{where}: {field} entry {bad!r} is not a layer kind transformers knows "
                            f"({', '.join(sorted(kinds))}), so vLLM {VLLM_VERSION} cannot load the config; "
                            "fix the entry")
        if isinstance(n, int) and len(types) != n:
            raise UserError(f"{where}: {field} has {len(types)} entries for {n} layers (transformers refuses a "
                            f"config whose num_hidden_layers is not the length of {field}, so vLLM "
                            f"{VLLM_VERSION} cannot load it); give one per layer")


# Classes whose validate_architecture (run by transformers' strict dataclass
# after __post_init__) refuses a hidden size that is not a multiple of the
# query heads, whatever head_dim says (transformers 5.20: every config class
# whose own validate_architecture tests hidden_size % num_attention_heads).
_HIDDEN_OVER_HEADS = frozenset({
    "llama", "gemma2", "gemma3_text", "gemma3n_text", "deepseek_v2", "eurobert", "clip_text_model", "hrm_text",
    "minicpm3", "muse_glimmer_text", "muse_spark_text", "arcee", "aria_text", "cwm", "jais2", "gpt_neox",
    "hyperclovax", "vaultgemma", "higgs_audio_v2", "deepseek_ocr2_text", "cosmos3_edge_text", "canary_decoder",
    "t5_gemma_module", "t5gemma2_text", "t5gemma2_decoder", "unlimited_ocr_text", "esmc", "ultrabert",
    "altclip_text_model", "chinese_clip_text_model", "clipseg_text_model", "metaclip_2_text_model"})


def _check_architecture(attrs: Mapping[str, Any], model_type: str, rule: str, where: str) -> None:
    """The validate_architecture rules of the classes modelled here that
    read attention sizes; a config that fails one never loads in vLLM."""
    if model_type not in _HIDDEN_OVER_HEADS:
        return
    hidden, heads = attrs.get("hidden_size"), attrs.get("num_attention_heads")
    if not isinstance(hidden, int) or not isinstance(heads, int):
        return  # the declared types refused these already
    if heads == 0 or hidden % heads:
        why = ("num_attention_heads is 0" if heads == 0 else
               f"the hidden size ({hidden}) is not a multiple of the number of attention heads ({heads})")
        raise UserError(f"{where}: {why} ({rule}), so vLLM {VLLM_VERSION} cannot load "
                        "the config; fix hidden_size or num_attention_heads")


class _HFClass(NamedTuple):
    """One transformers config class, reduced to what changes vLLM's view."""

    name: str
    defaults: dict[str, Any]
    post_init: Callable[[dict[str, Any]], None] | None = None
    # A NamedTuple default is shared by every instance: a read-only empty map.
    attribute_map: Mapping[str, str] = MappingProxyType({})
    text_config_type: str | None = None  # model_type of the text_config sub-config class
    # model_type a text_config without one gets (wrappers that pick the text
    # class by the text_config's own model_type, defaulting to this one)
    text_default_type: str | None = None
    # a config without a text_config section: the wrapper class builds its
    # text_config from its defaults alone (True), not from the top-level fields
    text_from_defaults: bool = False
    # SubConfigSpec.init_kwargs: what that default text config is built with
    text_init: Mapping[str, Any] = MappingProxyType({})


_LLAMA_SIZES = {"num_hidden_layers": 32, "num_attention_heads": 32, "hidden_size": 4096}
_BERT_SIZES = {"num_hidden_layers": 12, "num_attention_heads": 12, "hidden_size": 768}
# GPT2Config's sizes and the attribute_map that gives them the common names
# (GPT-2, GPT-J, GPTBigCode and Nomic-BERT's GPT2Config subclass)
_GPT2_SIZES = {"n_embd": 768, "n_layer": 12, "n_head": 12}
_GPT2_NAMES = MappingProxyType({"hidden_size": "n_embd", "num_attention_heads": "n_head",
                                "num_hidden_layers": "n_layer"})
# Qwen2_5_VLTextConfig and Qwen2VLTextConfig default alike
_QWEN2_VL_TEXT = {"num_hidden_layers": 80, "num_attention_heads": 64, "hidden_size": 8192,
                  "num_key_value_heads": 8, "use_sliding_window": False, "sliding_window": 4096,
                  "max_window_layers": 80}
_DEEPSEEK_MLA = {"q_lora_rank": 1536, "kv_lora_rank": 512, "qk_rope_head_dim": 64,
                 "qk_nope_head_dim": 128, "v_head_dim": 128}

# transformers 5.x class defaults for the fields vLLM reads (vLLM 0.33.0 needs
# transformers >= 5.16.1). deepseek_v32 is registered by vLLM with
# transformers' DeepseekV3Config.
_HF_CLASSES: dict[str, _HFClass] = {
    "llama": _HFClass("LlamaConfig", {**_LLAMA_SIZES, "num_key_value_heads": None, "head_dim": None},
                      _post_head_dim_and_kv),
    "mistral": _HFClass("MistralConfig", {**_LLAMA_SIZES, "num_key_value_heads": 8, "head_dim": None,
                                          "sliding_window": 4096}, _post_head_dim_and_kv),
    "mixtral": _HFClass("MixtralConfig", {**_LLAMA_SIZES, "num_key_value_heads": 8, "head_dim": None,
                                          "sliding_window": None}, _post_kv),
    "phi3": _HFClass("Phi3Config", {"num_hidden_layers": 32, "num_attention_heads": 32, "hidden_size": 3072,
                                    "num_key_value_heads": None, "sliding_window": None}, _post_kv),
    "qwen2": _HFClass("Qwen2Config", {**_LLAMA_SIZES, "num_key_value_heads": 32, "use_sliding_window": False,
                                      "sliding_window": 4096, "max_window_layers": 28}, _post_qwen2),
    "qwen3": _HFClass("Qwen3Config", {**_LLAMA_SIZES, "num_key_value_heads": 32, "head_dim": 128,
                                      "use_sliding_window": False, "sliding_window": 4096,
                                      "max_window_layers": 28}, _post_qwen2),
    # Qwen2_5_VLConfig pops a flat (hub-style) config's text fields into a
    # Qwen2_5_VLTextConfig: same use_sliding_window gate as Qwen2Config
    "qwen2_5_vl_text": _HFClass("Qwen2_5_VLTextConfig", _QWEN2_VL_TEXT, _post_qwen2),
    "qwen2_vl_text": _HFClass("Qwen2VLTextConfig", _QWEN2_VL_TEXT, _post_qwen2),
    "qwen3_moe": _HFClass("Qwen3MoeConfig", {"num_hidden_layers": 24, "num_attention_heads": 32,
                                             "hidden_size": 2048, "num_key_value_heads": 4,
                                             "use_sliding_window": False, "sliding_window": 4096},
                          _post_qwen3_moe),
    "qwen3_next": _HFClass("Qwen3NextConfig", {"num_hidden_layers": 48, "num_attention_heads": 16,
                                               "hidden_size": 2048, "num_key_value_heads": 2, "head_dim": 256},
                           _post_qwen3_next),
    "gemma2": _HFClass("Gemma2Config", {"num_hidden_layers": 26, "num_attention_heads": 8, "hidden_size": 2304,
                                        "num_key_value_heads": 4, "head_dim": 256, "sliding_window": 4096,
                                        "attn_logit_softcapping": 50.0}, _post_gemma2),
    "gemma3_text": _HFClass("Gemma3TextConfig", {"num_hidden_layers": 26, "num_attention_heads": 8,
                                                 "hidden_size": 2304, "num_key_value_heads": 4, "head_dim": 256,
                                                 "sliding_window": 4096, "attn_logit_softcapping": None,
                                                 "use_bidirectional_attention": False}, _post_gemma3_text),
    # SubConfigSpec(Gemma3TextConfig): no text_config -> Gemma3TextConfig()
    "gemma3": _HFClass("Gemma3Config", {}, None, text_config_type="gemma3_text", text_from_defaults=True),
    "gemma4_text": _HFClass("Gemma4TextConfig", {"num_hidden_layers": 30, "num_attention_heads": 8,
                                                 "hidden_size": 2304, "num_key_value_heads": 4, "head_dim": 256,
                                                 "sliding_window": 512, "attention_k_eq_v": False,
                                                 "num_kv_shared_layers": 0, "use_bidirectional_attention": None},
                            _post_gemma4_text),
    "gemma4": _HFClass("Gemma4Config", {}, None, text_config_type="gemma4_text"),
    # Gemma4UnifiedTextConfig: Gemma4TextConfig's __post_init__, other defaults
    "gemma4_unified_text": _HFClass("Gemma4UnifiedTextConfig", {"num_hidden_layers": 30, "num_attention_heads": 8,
                                                                 "hidden_size": 2304, "num_key_value_heads": 4,
                                                                 "head_dim": 256, "sliding_window": 1024,
                                                                 "attention_k_eq_v": False, "num_kv_shared_layers": 0,
                                                                 "use_bidirectional_attention": "vision"},
                                    _post_gemma4_text),
    "gemma4_unified": _HFClass("Gemma4UnifiedConfig", {}, None, text_config_type="gemma4_unified_text"),
    # DiffusionGemmaTextConfig: Gemma4TextConfig's __post_init__ and sizes; num_global_key_value_heads
    # always reaches the full layers (_post_diffusion_gemma_text)
    "diffusion_gemma_text": _HFClass("DiffusionGemmaTextConfig", {"num_hidden_layers": 30, "num_attention_heads": 8,
                                                                   "hidden_size": 2304, "num_key_value_heads": 4,
                                                                   "head_dim": 256, "sliding_window": 512,
                                                                   "use_bidirectional_attention": None},
                                     _post_diffusion_gemma_text),
    "diffusion_gemma": _HFClass("DiffusionGemmaConfig", {"canvas_length": 256}, None,
                                text_config_type="diffusion_gemma_text", text_from_defaults=True),
    "cohere2": _HFClass("Cohere2Config", {"num_hidden_layers": 40, "num_attention_heads": 64, "hidden_size": 8192,
                                          "num_key_value_heads": None, "sliding_window": 4096}, _post_cohere2),
    "gpt_oss": _HFClass("GptOssConfig", {"num_hidden_layers": 36, "num_attention_heads": 64, "hidden_size": 2880,
                                         "num_key_value_heads": 8, "head_dim": 64, "sliding_window": 128},
                        _post_gpt_oss),
    "deepseek_v2": _HFClass("DeepseekV2Config", {"num_hidden_layers": 30, "num_attention_heads": 32,
                                                 "hidden_size": 4096, "num_key_value_heads": None, **_DEEPSEEK_MLA},
                            _post_deepseek),
    "deepseek_v3": _HFClass("DeepseekV3Config", {"num_hidden_layers": 61, "num_attention_heads": 128,
                                                 "hidden_size": 7168, "num_key_value_heads": 128, **_DEEPSEEK_MLA},
                            _post_deepseek_v3),
    # Glm4MoeLiteConfig: DeepSeek's MLA sizes of its own; head_dim is an
    # attribute_map alias of qk_rope_head_dim (a given head_dim sets the rope part)
    "glm4_moe_lite": _HFClass("Glm4MoeLiteConfig", {"num_hidden_layers": 47, "num_attention_heads": 20,
                                                    "hidden_size": 2048, "num_key_value_heads": 20,
                                                    "q_lora_rank": 768, "kv_lora_rank": 512, "qk_rope_head_dim": 64,
                                                    "qk_nope_head_dim": 192, "v_head_dim": 256},
                              attribute_map={"head_dim": "qk_rope_head_dim"}),
    # YoutuConfig / Mistral4Config (not in vLLM's registry: its Transformers
    # backend serves them, MLA from kv_lora_rank); YoutuConfig's __post_init__
    # sets head_dim to the rope part as DeepSeek-V3's does
    "youtu": _HFClass("YoutuConfig", {"num_hidden_layers": 32, "num_attention_heads": 16, "hidden_size": 2048,
                                      "num_key_value_heads": 16, **_DEEPSEEK_MLA}, _post_deepseek_v3),
    "mistral4": _HFClass("Mistral4Config", {"num_hidden_layers": 36, "num_attention_heads": 32, "hidden_size": 4096,
                                            "num_key_value_heads": 32, "q_lora_rank": 1024, "kv_lora_rank": 256,
                                            "qk_rope_head_dim": 64, "qk_nope_head_dim": 64, "v_head_dim": 128},
                         _post_mistral4),
    "qwen2_moe": _HFClass("Qwen2MoeConfig", {"num_hidden_layers": 24, "num_attention_heads": 16,
                                             "hidden_size": 2048, "num_key_value_heads": 16,
                                             "use_sliding_window": False, "sliding_window": 4096,
                                             "max_window_layers": 28}, _post_qwen2_moe),
    "jamba": _HFClass("JambaConfig", {"num_hidden_layers": 32, "num_attention_heads": 32, "hidden_size": 4096,
                                      "num_key_value_heads": 8, "attn_layer_period": 8, "attn_layer_offset": 4,
                                      "sliding_window": None}, _post_jamba),
    # GraniteSWAConfig's own sizes (transformers 5.20): 24 layers, 20 heads, 4 KV heads; a null
    # num_key_value_heads becomes the query heads (__post_init__)
    "granite_swa": _HFClass("GraniteSWAConfig", {"num_hidden_layers": 24, "num_attention_heads": 20,
                                                 "hidden_size": 2560, "num_key_value_heads": 4,
                                                 "sliding_window": 128, "layer_types": None}, _post_granite_swa),
    "granitemoe_swa": _HFClass("GraniteMoeSWAConfig", {"num_hidden_layers": 32, "num_attention_heads": 32,
                                                       "hidden_size": 4096, "num_key_value_heads": None,
                                                       "sliding_window": 128, "layer_types": None},
                               _post_granite_swa),
    "afmoe": _HFClass("AfmoeConfig", {"num_hidden_layers": 32, "num_attention_heads": 16, "hidden_size": 2048,
                                      "num_key_value_heads": 16, "head_dim": 128, "sliding_window": 1024,
                                      "global_attn_every_n_layers": 4}, _post_afmoe),
    "zamba2": _HFClass("Zamba2Config", {"num_hidden_layers": 54, "num_attention_heads": 32, "hidden_size": 2560,
                                        "num_key_value_heads": None, "layers_block_type": None}, _post_zamba2),
    "nemotron_h": _HFClass("NemotronHConfig", {"num_attention_heads": 32, "hidden_size": 4096,
                                               "num_key_value_heads": 8, "head_dim": 128, "sliding_window": None},
                           _post_nemotron_h),
    "cohere2_moe": _HFClass("Cohere2MoeConfig", {"num_hidden_layers": 40, "num_attention_heads": 64,
                                                 "hidden_size": 8192, "num_key_value_heads": None, "head_dim": 128,
                                                 "sliding_window": 4096, "sliding_window_pattern": 4,
                                                 "prefix_dense_sliding_window_pattern": 1}, _post_cohere2_moe),
    # GPT-2 / GPT-J / BLOOM / DBRX name their sizes differently: attribute_map
    "gpt2": _HFClass("GPT2Config", _GPT2_SIZES, attribute_map=_GPT2_NAMES),
    "flint": _HFClass("FlintConfig", {"num_hidden_layers": 49, "num_attention_heads": 32, "num_key_value_heads": 4,
                                      "head_dim": 128, "use_sliding_window": True, "sliding_window": 513},
                      _post_flint),
    "smollm3": _HFClass("SmolLM3Config", {"num_hidden_layers": 36, "num_attention_heads": 16, "hidden_size": 2048,
                                          "num_key_value_heads": 4, "use_sliding_window": False,
                                          "sliding_window": None}, _post_smollm3),
    "gpt_bigcode": _HFClass("GPTBigCodeConfig", {**_GPT2_SIZES, "n_positions": 1024, "multi_query": True},
                            _post_gpt_bigcode,
                            attribute_map={**_GPT2_NAMES, "max_position_embeddings": "n_positions"}),
    "gptj": _HFClass("GPTJConfig", {"n_embd": 4096, "n_layer": 28, "n_head": 16}, attribute_map=_GPT2_NAMES),
    "bloom": _HFClass("BloomConfig", {"hidden_size": 64, "n_layer": 2, "n_head": 8}, _post_n_embed,
                      attribute_map={"num_hidden_layers": "n_layer", "num_attention_heads": "n_head"}),
    "falcon": _HFClass("FalconConfig", {"hidden_size": 4544, "num_hidden_layers": 32, "num_attention_heads": 71,
                                        "num_kv_heads": None, "alibi": False, "new_decoder_architecture": False,
                                        "multi_query": True, "parallel_attn": True}, _post_falcon),
    "dbrx": _HFClass("DbrxConfig", {"d_model": 2048, "n_heads": 16, "n_layers": 24, "attn_config": None},
                     _post_dbrx, attribute_map={"num_attention_heads": "n_heads", "hidden_size": "d_model",
                                                "num_hidden_layers": "n_layers"}),
    "minicpm3": _HFClass("MiniCPM3Config", {"hidden_size": 2560, "num_hidden_layers": 62, "num_attention_heads": 40,
                                            "num_key_value_heads": 40, "head_dim": None, "kv_lora_rank": 256,
                                            "q_lora_rank": 768, "qk_nope_head_dim": 64, "qk_rope_head_dim": 32,
                                            "v_head_dim": None}, _post_minicpm3),
    # vLLM's own ChatGLMConfig (transformers_utils/configs/chatglm.py): n_head_kv
    # aliases multi_query_group_num, so the model-level KV heads read it even
    # when multi_query_attention is off
    "chatglm": _HFClass("ChatGLMConfig", {"num_layers": 28, "hidden_size": 4096, "kv_channels": 128,
                                          "num_attention_heads": 32, "multi_query_attention": False,
                                          "multi_query_group_num": 1},
                        attribute_map={"num_hidden_layers": "num_layers", "n_head_kv": "multi_query_group_num"}),
    "bert": _HFClass("BertConfig", _BERT_SIZES),
    "roberta": _HFClass("RobertaConfig", _BERT_SIZES),
    "xlm-roberta": _HFClass("XLMRobertaConfig", _BERT_SIZES),
    # the checkpoint's NomicBertConfig (a GPT2Config); vLLM's NomicBertModelConfig
    # copies n_embd / n_layer into hidden_size / num_hidden_layers
    "nomic_bert": _HFClass("NomicBertConfig", _GPT2_SIZES, attribute_map=_GPT2_NAMES),
    "modernbert": _HFClass("ModernBertConfig", {"num_hidden_layers": 22, "num_attention_heads": 12,
                                                "hidden_size": 768, "local_attention": 128}, _post_modernbert),
    "whisper": _HFClass(
        "WhisperConfig",
        {"encoder_layers": 4, "decoder_layers": 4, "encoder_attention_heads": 6,
         "decoder_attention_heads": 6, "d_model": 384, "is_encoder_decoder": True},
        None,
        attribute_map={"num_key_value_heads": "encoder_attention_heads",
                       "num_attention_heads": "encoder_attention_heads",
                       "hidden_size": "d_model", "num_hidden_layers": "encoder_layers"},
    ),
}
# BartConfig / MBartConfig (no vLLM model file of their own in 0.33.0; the
# bart plugin serves them), as a whisper.py model's config: the sizes under
# Whisper's names. No KV-head alias, so vLLM's KV heads are the encoder heads.
for _type, _name in (("bart", "BartConfig"), ("mbart", "MBartConfig")):
    _HF_CLASSES[_type] = _HFClass(
        _name, {"encoder_layers": 12, "decoder_layers": 12, "encoder_attention_heads": 16,
                "decoder_attention_heads": 16, "d_model": 1024, "is_encoder_decoder": True},
        attribute_map={"num_attention_heads": "encoder_attention_heads", "hidden_size": "d_model",
                       "num_hidden_layers": "encoder_layers"})
# Qwen3_5TextConfig / Qwen3_5MoeTextConfig.__post_init__: layer_types from
# full_attention_interval (default 4), as Qwen3NextConfig; the multimodal
# Qwen3_5Config / Qwen3_5MoeConfig hold them as text_config
_HF_CLASSES["qwen3_5_text"] = _HFClass("Qwen3_5TextConfig", {
    "num_hidden_layers": 32, "num_attention_heads": 16, "hidden_size": 4096, "num_key_value_heads": 4,
    "head_dim": 256}, _post_qwen3_next)
_HF_CLASSES["qwen3_5_moe_text"] = _HFClass("Qwen3_5MoeTextConfig", {
    "num_hidden_layers": 40, "num_attention_heads": 16, "hidden_size": 2048, "num_key_value_heads": 2,
    "head_dim": 256}, _post_qwen3_next)
_HF_CLASSES["qwen3_5"] = _HFClass("Qwen3_5Config", {}, None, text_config_type="qwen3_5_text")
_HF_CLASSES["qwen3_5_moe"] = _HFClass("Qwen3_5MoeConfig", {}, None, text_config_type="qwen3_5_moe_text")
# LongcatFlashConfig: num_layers counts decoder layers, each with two MLA
# sub-layers; its num_hidden_layers property is 2 * num_layers
_HF_CLASSES["longcat_flash"] = _HFClass("LongcatFlashConfig", {
    "num_layers": 28, "num_attention_heads": 64, "hidden_size": 6144, "num_key_value_heads": None,
    **_DEEPSEEK_MLA}, _post_longcat_flash)
# EXAONE-3.x: no transformers class; vLLM needs the checkpoint's remote
# configuration_exaone.py, whose ExaoneConfig maps num_hidden_layers to
# num_layers (default 32) and defaults KV heads to the query heads. Mirrored
# from that file; the attribute_map is checked against a vLLM build with a
# stand-in class (tests/selector/model_cases_archs.py), the defaults are not.
_HF_CLASSES["exaone"] = _HFClass("ExaoneConfig", {
    "num_layers": 32, "num_attention_heads": 32, "hidden_size": 2048, "num_key_value_heads": None},
    _post_kv, attribute_map={"num_hidden_layers": "num_layers"})
# Olmo3Config / Exaone4Config: a 4096-key window by default, and layer_types,
# when config.json gives none, from a pattern of every fourth layer full
_HF_CLASSES["olmo3"] = _HFClass("Olmo3Config", {
    **_LLAMA_SIZES, "num_key_value_heads": None, "sliding_window": 4096}, lambda a: _post_every_fourth_full(a, 4))
_HF_CLASSES["exaone4"] = _HFClass("Exaone4Config", {
    **_LLAMA_SIZES, "num_key_value_heads": 32, "sliding_window": 4096},
    lambda a: _post_every_fourth_full(a, 0 if a.get("sliding_window") is None else a.get("sliding_window_pattern", 4)))
# ExaoneMoeConfig (K-EXAONE): Exaone4Config's sizes, window and layer_types rule
_HF_CLASSES["exaone_moe"] = _HFClass("ExaoneMoeConfig", {
    **_LLAMA_SIZES, "num_key_value_heads": 32, "sliding_window": 4096},
    lambda a: _post_every_fourth_full(a, 0 if a.get("sliding_window") is None else a.get("sliding_window_pattern", 4)))
# TeleChat2 (model_type telechat): the checkpoint's remote TelechatConfig names
# its layers and heads n_layer / n_head (attribute_map); telechat2.py reads
# them through that map (checked against a vLLM build with a stand-in class)
_HF_CLASSES["telechat"] = _HFClass("TelechatConfig", {}, attribute_map={
    "num_hidden_layers": "n_layer", "num_attention_heads": "n_head"})
# BambaConfig.layers_block_type (a property): attention on attn_layer_indices, mamba elsewhere
_HF_CLASSES["bamba"] = _HFClass("BambaConfig", {"num_hidden_layers": 32, "num_attention_heads": 32,
                                                "hidden_size": 4096, "num_key_value_heads": 8},
                                lambda a: a.__setitem__("layers_block_type", [
                                    "attention" if i in (a.get("attn_layer_indices") or ()) else "mamba"
                                    for i in range(a["num_hidden_layers"])]))
_HF_CLASSES["deepseek_v32"] = _HF_CLASSES["deepseek_v3"]
# vLLM's _CONFIG_REGISTRY loads kimi_k2 as DeepseekV3Config (transformers_utils/config.py:141)
_HF_CLASSES["kimi_k2"] = _HF_CLASSES["deepseek_v3"]
# Jais2Config: LlamaConfig's __post_init__ (head_dim, KV heads), its own sizes
_HF_CLASSES["jais2"] = _HFClass("Jais2Config", {"num_hidden_layers": 32, "num_attention_heads": 26,
                                                "hidden_size": 3328, "num_key_value_heads": None, "head_dim": None},
                                _post_head_dim_and_kv)
def _post_bailing_hybrid(a: dict[str, Any]) -> None:
    # BailingHybridConfig.__post_init__: the linear layers take config.json's
    # head_dim, then head_dim becomes qk_rope_head_dim (what a model file
    # reading config.head_dim sees: MistralForCausalLM on such a config)
    a["linear_head_dim"] = a.get("head_dim")
    _post_kv(a)
    a["head_dim"] = a.get("qk_rope_head_dim")


# BailingHybridConfig (Ring/Ling-2.5): MLA sizes and layer_group_size
# default in the class; KV heads default to the query heads
_HF_CLASSES["bailing_hybrid"] = _HFClass("BailingHybridConfig", {
    "num_hidden_layers": 42, "num_attention_heads": 32, "hidden_size": 2560, "num_key_value_heads": 32,
    "head_dim": 128, "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128,
    "layer_group_size": 6}, _post_bailing_hybrid)


def bailing_v3_linear_layers(n: int, group: int) -> list[bool]:
    """BailingMoeV3's layer schedule (bailing_moe_v3.py _is_kda_layer, and
    the layer_types BailingMoeV3VLConfig rebuilds from it): linear attention
    on every layer of a full group but its last; MLA on each group's last
    layer and on every layer past the last full group. ``group`` > 0."""
    grouped = n // group * group
    return [(i + 1) % group != 0 and i < grouped for i in range(n)]


def _post_bailing_moe_v3_vl(a: dict[str, Any]) -> None:
    """vLLM's BailingMoeV3VLConfig and the BailingMoeV3TextConfig it builds
    text_config with (transformers_utils/configs/bailing_moe_v3_vl.py): the
    top-level M-RoPE split (default [12, 10, 10]) must match one the text
    config names, and layer_types / layers_block_type must be the schedule
    layer_group_size gives (the class rebuilds it; the model file reads
    layer_group_size alone)."""
    section = a.get("mrope_section") or [12, 10, 10]
    if not isinstance(section, list):
        raise UserError(f"Bailing V3 VL's mrope_section must be a list (the M-RoPE split, default [12, 10, 10]); "
                        f"the config gives {shown(section)}")
    text = a.get("text_config")
    if not isinstance(text, dict):
        return
    rope = text.get("rope_parameters") or text.get("rope_scaling") or {}
    for named in (text.get("mrope_section"), rope.get("mrope_section") if isinstance(rope, dict) else None):
        if isinstance(named, list) and named != section:
            raise UserError(f"Bailing V3 VL has conflicting M-RoPE sections: text={named}, top-level={section} "
                            f"(vLLM {VLLM_VERSION}'s BailingMoeV3VLConfig); give one split")
    n, group = text.get("num_hidden_layers", 20), text.get("layer_group_size", 5)
    if not (isinstance(n, int) and isinstance(group, int)) or isinstance(group, bool) or not 0 <= n <= MAX_LAYERS:
        return  # the text class's own checks speak for these (a layer count past MAX_LAYERS among them)
    if group <= 0:
        raise UserError(f"Bailing V3 VL layer_group_size must be positive, got {group}")
    expected = ["linear_attention" if linear else "full_attention" for linear in bailing_v3_linear_layers(n, group)]
    types, blocks = text.get("layer_types"), text.get("layers_block_type")
    if isinstance(blocks, list):
        legacy = {"attention": "full_attention", "mamba": "linear_attention", "conv": "linear_attention"}
        blocks = [legacy.get(b, b) if isinstance(b, str) else b for b in blocks]
        if types is not None and types != blocks:
            raise UserError("Bailing V3 VL has conflicting layer_types and layers_block_type; give one of them")
        types = blocks
    if types is not None and types != expected:
        raise UserError(f"Bailing V3 VL layer_types must match the layer_group_size schedule (vLLM {VLLM_VERSION} "
                        f"rebuilds them from layer_group_size {group}: full attention on each group's last layer "
                        "and on every layer past the last full group); drop layer_types or make them match")


# vLLM's own class; text_config's model_type (bailing_hybrid) picks the text class
_HF_CLASSES["bailing_moe_v3_vl"] = _HFClass("BailingMoeV3VLConfig", {}, _post_bailing_moe_v3_vl)


def _post_mimo_v2_flash(a: dict[str, Any]) -> None:
    # MiMoV2FlashConfig.__post_init__: full attention on layer 0 and every
    # 6th layer; a given sliding_window_size sets sliding_window to size + 1
    if a.get("layer_types") is None:
        a["layer_types"] = ["full_attention" if i == 0 or not (i + 1) % 6 else "sliding_attention"
                            for i in range(a["num_hidden_layers"])]
    if a.get("sliding_window_size") is not None:
        a["sliding_window"] = a["sliding_window_size"] + 1


_HF_CLASSES["mimo_v2_flash"] = _HFClass("MiMoV2FlashConfig", {
    "num_hidden_layers": 48, "num_attention_heads": 64, "hidden_size": 4096, "num_key_value_heads": 4,
    "head_dim": 192, "v_head_dim": 128, "sliding_window": 129}, _post_mimo_v2_flash)


def _post_llama4_text(a: dict[str, Any]) -> None:
    # Llama4TextConfig.__post_init__: an empty or missing no_rope_layers gets
    # a NoPE layer every no_rope_layer_interval layers; layer_types follow it
    _post_head_dim_and_kv(a)
    if not a.get("no_rope_layers"):
        a["no_rope_layers"] = _alternating(a["num_hidden_layers"], a.get("no_rope_layer_interval", 4), 1, 0)
    if a.get("layer_types") is None:
        a["layer_types"] = ["chunked_attention" if r else "full_attention" for r in a["no_rope_layers"]]


_HF_CLASSES["llama4_text"] = _HFClass("Llama4TextConfig", {
    "num_hidden_layers": 48, "num_attention_heads": 40, "hidden_size": 5120, "num_key_value_heads": 8,
    "head_dim": 128, "no_rope_layer_interval": 4, "attention_chunk_size": 8192}, _post_llama4_text)
_HF_CLASSES["llama4"] = _HFClass("Llama4Config", {}, None, text_config_type="llama4_text")


def _post_hrm_text(a: dict[str, Any]) -> None:
    # HrmTextConfig.__post_init__: without num_layers_per_stack, the given
    # num_hidden_layers is the per-stack count, and num_hidden_layers becomes
    # one slot per (recurrence step, layer): per_stack * H_cycles * (L_cycles + 1)
    if a.get("num_layers_per_stack") is None:
        a["num_layers_per_stack"] = a["num_hidden_layers"]
        a["num_hidden_layers"] = a["num_layers_per_stack"] * a["H_cycles"] * (a["L_cycles"] + 1)


_HF_CLASSES["hrm_text"] = _HFClass("HrmTextConfig", {
    "num_hidden_layers": 16, "num_attention_heads": 12, "hidden_size": 1536, "head_dim": 128,
    "H_cycles": 2, "L_cycles": 3, "num_layers_per_stack": None}, _post_hrm_text)


def _post_step3p5(a: dict[str, Any]) -> None:
    """Step3p7TextConfig.__post_init__ (model_type step3p5): MTP entries that
    pad layer_types past num_hidden_layers move to mtp_layer_types; sliding
    layers' head count comes from num_sliding_attention_heads, else the
    remote-code attention_other_setting (popped), else num_attention_heads,
    and becomes a per_layer_config override where it differs."""
    n, mtp = a["num_hidden_layers"], a.get("num_nextn_predict_layers") or 0
    types = a.get("layer_types")
    if mtp and isinstance(types, list) and len(types) == n + mtp:
        a["layer_types"], a["mtp_layer_types"] = types[:n], types[n:]
    if a.get("layer_types") is None:
        a["layer_types"] = ["full_attention"] * n
    other = a.pop("attention_other_setting", None)
    if a.get("num_sliding_attention_heads") is None:
        heads = a["num_attention_heads"]
        a["num_sliding_attention_heads"] = other.get("num_attention_heads", heads) if other else heads
    if a.get("per_layer_config") is None:
        table = {i: {"num_attention_heads": a["num_sliding_attention_heads"]}
                 for i, kind in enumerate(a["layer_types"]) if kind == "sliding_attention"
                 and a["num_sliding_attention_heads"] != a["num_attention_heads"]}
        a["per_layer_config"] = table or None


_HF_CLASSES["step3p5"] = _HFClass("Step3p7TextConfig", {
    "num_hidden_layers": 45, "num_attention_heads": 64, "hidden_size": 4096, "num_key_value_heads": 8,
    "head_dim": 128, "sliding_window": None, "num_sliding_attention_heads": None},
    _post_step3p5, attribute_map={"num_attention_groups": "num_key_value_heads"})


def _post_muse_glimmer_text(a: dict[str, Any]) -> None:
    # MuseGlimmerTextConfig.__post_init__: full attention on every 4th layer
    # counted from the last one, sliding elsewhere
    if a.get("layer_types") is None:
        n = a["num_hidden_layers"]
        a["layer_types"] = ["full_attention" if (n - 1 - i) % 4 == 0 else "sliding_attention" for i in range(n)]


_HF_CLASSES["muse_glimmer_text"] = _HFClass("MuseGlimmerTextConfig", {
    "num_hidden_layers": 52, "num_attention_heads": 32, "hidden_size": 6656, "num_key_value_heads": 2,
    "head_dim": 128, "sliding_window": 2048}, _post_muse_glimmer_text)
_HF_CLASSES["muse_glimmer"] = _HFClass("MuseGlimmerConfig", {}, None, text_config_type="muse_glimmer_text")


def _post_kolibri1(a: dict[str, Any]) -> None:
    # Kolibri1Config.__post_init__: full attention on every 5th layer
    if a.get("layer_types") is None:
        a["layer_types"] = _alternating(a["num_hidden_layers"], 5, "sliding_attention", "full_attention")


_HF_CLASSES["kolibri1"] = _HFClass("Kolibri1Config", {
    "num_hidden_layers": 50, "num_attention_heads": 48, "hidden_size": 2560, "num_key_value_heads": 4,
    "head_dim": 128, "sliding_window": 513}, _post_kolibri1)


def _post_glm5_next_text(a: dict[str, Any]) -> None:
    # Glm5NextTextConfig.__post_init__: linear attention except every 4th
    # layer (indexed_attention); "full_attention" reads as indexed_attention;
    # head_dim is forced to qk_rope_head_dim
    _post_kv(a)
    if a.get("layer_types") is None:
        a["layer_types"] = _alternating(a["num_hidden_layers"], 4, "linear_attention", "indexed_attention")
    a["layer_types"] = ["indexed_attention" if k == "full_attention" else k for k in a["layer_types"]]
    a["head_dim"] = a.get("qk_rope_head_dim")


_HF_CLASSES["glm5_next_text"] = _HFClass("Glm5NextTextConfig", {
    "num_hidden_layers": 45, "num_attention_heads": 64, "hidden_size": 4096, "num_key_value_heads": 64,
    "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 0, "qk_nope_head_dim": 256, "v_head_dim": 256,
    "index_topk": 2048}, _post_glm5_next_text)
_HF_CLASSES["glm5_next"] = _HFClass("Glm5NextConfig", {}, None, text_config_type="glm5_next_text")
# vLLM's KimiVLConfig (transformers_utils/configs/kimi_vl.py) builds its text_config
# as DeepseekV2Config whatever model_type the section names (deepseek_v3 in
# the published checkpoints), and from DeepseekV2Config's defaults when absent
_HF_CLASSES["kimi_vl"] = _HFClass("KimiVLConfig", {}, None, text_config_type="deepseek_v2", text_from_defaults=True)


def _post_jetmoe(a: dict[str, Any]) -> None:
    # JetMoeConfig.__post_init__: the query heads are always KV heads x experts per token
    a["num_attention_heads"] = a["num_key_value_heads"] * a["num_experts_per_tok"]


_HF_CLASSES["jetmoe"] = _HFClass("JetMoeConfig", {
    "num_hidden_layers": 12, "hidden_size": 2048, "num_key_value_heads": 16, "kv_channels": 128,
    "num_experts_per_tok": 2}, _post_jetmoe, attribute_map={"head_dim": "kv_channels"})
# flat config.json: the text fields sit at the top level (text = hf_config view);
# Qwen2VLConfig / Qwen2_5_VLConfig.__post_init__ pop them into the text class
_POPS_FLAT_TEXT = {"qwen2_vl": "qwen2_vl_text", "qwen2_5_vl": "qwen2_5_vl_text"}
# what they pop: the text class's __init__ parameters and the rope keys
# (Qwen2VLTextConfig and Qwen2_5_VLTextConfig have the same ones, transformers
# 5.20). Any other key, head_dim among them, stays on the outer config, so
# vLLM's hf_text_config never sees it.
_FLAT_TEXT_KEYS = frozenset({
    "transformers_version", "architectures", "output_hidden_states", "return_dict", "dtype",
    "chunk_size_feed_forward", "is_encoder_decoder", "id2label", "label2id", "problem_type", "vocab_size",
    "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
    "hidden_act", "max_position_embeddings", "initializer_range", "rms_norm_eps", "use_cache",
    "use_sliding_window", "sliding_window", "max_window_layers", "layer_types", "attention_dropout",
    "rope_parameters", "bos_token_id", "eos_token_id", "pad_token_id", "rope_scaling", "rope_theta"})


def _flat_text_type(model_type: str, config: Mapping[str, Any]) -> str | None:
    """The text class a Qwen2-VL / Qwen2.5-VL config.json written flat (no
    text_config, or a null one) pops its text fields into; None for any other."""
    if model_type not in _POPS_FLAT_TEXT or config.get("text_config") is not None:
        return None
    return _POPS_FLAT_TEXT[model_type]


def flat_text(model_type: str, given: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """(text model type, text fields) of a flat Qwen2-VL / Qwen2.5-VL
    config.json: the fields the wrapper's __post_init__ pops into its text
    class, and the dtype it copies there (torch_dtype first). None for any
    other config."""
    text_type = _flat_text_type(model_type, given)
    if text_type is None:
        return None
    fields = {k: v for k, v in given.items() if k in _FLAT_TEXT_KEYS}
    fields["dtype"] = given.get("torch_dtype", given.get("dtype"))
    return text_type, fields


_HF_CLASSES["qwen2_5_vl"] = _HFClass("Qwen2_5_VLConfig", _QWEN2_VL_TEXT, _post_qwen2,
                                     text_config_type="qwen2_5_vl_text")
_HF_CLASSES["qwen2_vl"] = _HFClass("Qwen2VLConfig", _QWEN2_VL_TEXT, _post_qwen2,
                                   text_config_type="qwen2_vl_text")

# CLIPConfig / SiglipConfig hold the text tower's sizes in text_config
# (CLIPTextConfig / SiglipTextConfig defaults; hub configs often list only some)
_HF_CLASSES["clip"] = _HFClass("CLIPConfig", {}, None, text_config_type="clip_text_model")
_HF_CLASSES["clip_text_model"] = _HFClass("CLIPTextConfig", {
    "num_hidden_layers": 12, "num_attention_heads": 8, "hidden_size": 512})
_HF_CLASSES["siglip"] = _HFClass("SiglipConfig", {}, None, text_config_type="siglip_text_model")
_HF_CLASSES["siglip_text_model"] = _HFClass("SiglipTextConfig", _BERT_SIZES)
# jina-embeddings-v5's remote JinaEmbeddingsV5Config subclasses Qwen3Config unchanged
_HF_CLASSES["jina_embeddings_v5"] = _HF_CLASSES["qwen3"]._replace(name="JinaEmbeddingsV5Config")
# Ernie4_5Config (ERNIE-4.5-0.3B's sizes): head_dim defaults to 128, hidden_size // heads only when null
_HF_CLASSES["ernie4_5"] = _HFClass("Ernie4_5Config", {"num_hidden_layers": 18, "num_attention_heads": 16,
                                                       "hidden_size": 1024, "num_key_value_heads": 2, "head_dim": 128},
                                   _post_head_dim_and_kv)
# Ernie4_5_MoeConfig (ERNIE-4.5-21B-A3B's sizes): no head_dim field; __post_init__ only sets
# moe_layer_end_index, which changes no attention layer
_HF_CLASSES["ernie4_5_moe"] = _HFClass("Ernie4_5_MoeConfig", {"num_hidden_layers": 28, "num_attention_heads": 20,
                                                               "hidden_size": 2560, "num_key_value_heads": 4},
                                       attribute_map=MappingProxyType({"num_experts": "moe_num_experts",
                                                                       "num_experts_per_tok": "moe_k"}))
# EuroBertConfig (jina-embeddings-v5-text-nano's encoder): Llama's head_dim / KV defaults
_HF_CLASSES["eurobert"] = _HFClass("EuroBertConfig", {**_BERT_SIZES, "num_key_value_heads": None, "head_dim": None},
                                   _post_head_dim_and_kv)


def _post_lfm2(a: dict[str, Any]) -> None:
    # Lfm2Config.__post_init__: without layer_types, attention on the
    # full_attn_idxs layers (default: every layer), short convolutions elsewhere
    if a.get("layer_types") is None:
        n = a["num_hidden_layers"]
        idxs = a.get("full_attn_idxs")
        idxs = range(n) if idxs is None else idxs
        a["layer_types"] = ["full_attention" if i in idxs else "conv" for i in range(n)]


_HF_CLASSES["lfm2"] = _HFClass("Lfm2Config", {"num_hidden_layers": 32, "num_attention_heads": 32,
                                               "hidden_size": 2560, "num_key_value_heads": 8}, _post_lfm2)
# vLLM's ColQwen3Config (and its ops_colqwen3 / qwen3_vl_nemotron_embed
# subclasses) is a Qwen3VLConfig: text_config is a Qwen3VLTextConfig
for _type in ("colqwen3", "ops_colqwen3", "qwen3_vl_nemotron_embed"):
    _HF_CLASSES[_type] = _HFClass("ColQwen3Config", {}, None, text_config_type="qwen3_vl_text")
# ModernVBertConfig: text_config via AutoConfig, default model_type modernbert
_HF_CLASSES["modernvbert"] = _HFClass("ModernVBertConfig", {}, None, text_default_type="modernbert")
# GemmaConfig (PaliGemma's default text config; hub text_configs often omit head_dim)
_HF_CLASSES["gemma"] = _HFClass("GemmaConfig", {"num_hidden_layers": 28, "num_attention_heads": 16,
                                                 "hidden_size": 3072, "num_key_value_heads": 16, "head_dim": 256})
_HF_CLASSES["paligemma"] = _HFClass("PaliGemmaConfig", {}, None, text_default_type="gemma")


def _post_embedding_gemma2_text(a: dict[str, Any]) -> None:
    """EmbeddingGemma2TextConfig.__post_init__: layer_types every
    sliding_window_pattern-th (default 6) layer full, the last forced full;
    per_layer_config gives full layers global_head_dim (default 512) and
    num_global_key_value_heads (default 1) KV heads; the window is kept as given."""
    every = a.pop("sliding_window_pattern", 6)
    if every < 1:
        raise UserError(f"sliding_window_pattern is {every!r}; EmbeddingGemma2TextConfig needs a positive integer "
                        "(transformers raises ValueError, so vLLM cannot load the config)")
    _last_full_layer_types(a, every)
    global_head = a.pop("global_head_dim", None)
    global_kv = a.pop("num_global_key_value_heads", None)
    _full_layer_table(a, {"head_dim": 512 if global_head is None else global_head,
                          "num_key_value_heads": 1 if global_kv is None else global_kv})


_HF_CLASSES["embedding_gemma2_text"] = _HFClass("EmbeddingGemma2TextConfig", {
    "num_hidden_layers": 24, "num_attention_heads": 4, "hidden_size": 512, "num_key_value_heads": 2,
    "head_dim": 256, "sliding_window": 512}, _post_embedding_gemma2_text)
# EmbeddingGemma2Config: text_config None -> EmbeddingGemma2TextConfig()
_HF_CLASSES["embedding_gemma2"] = _HFClass("EmbeddingGemma2Config", {}, None,
                                           text_config_type="embedding_gemma2_text", text_from_defaults=True)
# vLLM's Qwen3ASRTextConfig (transformers_utils/configs/qwen3_asr.py), the
# thinker's text config: no sliding window
_HF_CLASSES["qwen3_asr_text"] = _HFClass("Qwen3ASRTextConfig", {
    "num_hidden_layers": 32, "num_attention_heads": 32, "hidden_size": 4096, "num_key_value_heads": 32,
    "head_dim": 128})

# Multimodal wrapper configs that build text_config as
# CONFIG_MAPPING[text_config.get("model_type", DEFAULT)] (LlavaConfig and its
# kin): a text_config without a model_type gets that class's defaults, and a
# config without text_config gets that class built from its SubConfigSpec's
# init_kwargs alone (SubConfigSpec.create_subconfig), the top-level fields unread
_TEXT_INIT = {
    "mistral3": {"head_dim": 128, "hidden_size": 5120, "num_attention_heads": 32, "num_hidden_layers": 40,
                 "num_key_value_heads": 8, "sliding_window": None},
    "voxtral": {"hidden_size": 3072, "num_hidden_layers": 30, "num_key_value_heads": 8, "head_dim": 128},
    "lighton_ocr": {"head_dim": 128, "hidden_size": 1024, "num_attention_heads": 16, "num_hidden_layers": 28,
                    "num_key_value_heads": 8, "sliding_window": None},
}
for _type, _cls, _text in (
        ("llava", "LlavaConfig", "llama"), ("llava_next", "LlavaNextConfig", "llama"),
        ("llava_next_video", "LlavaNextVideoConfig", "llama"),
        ("llava_onevision", "LlavaOnevisionConfig", "qwen2"), ("internvl", "InternVLConfig", "qwen2"),
        ("blip-2", "Blip2Config", "opt"), ("cohere2_vision", "Cohere2VisionConfig", "cohere2"),
        ("lfm2_vl", "Lfm2VlConfig", "lfm2"), ("smolvlm", "SmolVLMConfig", "llama"),
        ("idefics3", "Idefics3Config", "llama"), ("mistral3", "Mistral3Config", "mistral"),
        ("qwen2_audio", "Qwen2AudioConfig", "qwen2"), ("voxtral", "VoxtralConfig", "llama"),
        ("lighton_ocr", "LightOnOcrConfig", "qwen3"), ("audioflamingo3", "AudioFlamingo3Config", "qwen2"),
        ("aya_vision", "AyaVisionConfig", "cohere2")):
    _HF_CLASSES.setdefault(_type, _HFClass(_cls, {}, None, text_default_type=_text, text_from_defaults=True,
                                           text_init=MappingProxyType(_TEXT_INIT.get(_type, {}))))
# AriaConfig / Glm4vConfig: a text_config that is null, {} or missing is
# their fixed text class built from its defaults alone (the top-level fields
# unread); AriaTextConfig derives head_dim and the KV heads as Llama does,
# Glm4vTextConfig only the KV heads (head_dim stays unset: vLLM takes
# hidden_size // num_attention_heads)
_HF_CLASSES["aria"] = _HFClass("AriaConfig", {}, None, text_config_type="aria_text", text_from_defaults=True)
_HF_CLASSES["aria_text"] = _HFClass("AriaTextConfig", {**_LLAMA_SIZES, "num_key_value_heads": None,
                                                       "head_dim": None}, _post_head_dim_and_kv)
_HF_CLASSES["glm4v"] = _HFClass("Glm4vConfig", {}, None, text_config_type="glm4v_text", text_from_defaults=True)
_HF_CLASSES["glm4v_text"] = _HFClass("Glm4vTextConfig", {
    "num_hidden_layers": 40, "num_attention_heads": 32, "hidden_size": 4096, "num_key_value_heads": 2}, _post_kv)
# Kimi_K25Config: text_config is a DeepseekV3Config (its "kimi_k2" model_type renamed)
_HF_CLASSES["kimi_k25"] = _HFClass("Kimi_K25Config", {}, None, text_config_type="deepseek_v3")
# the Omni thinkers' text configs (facts.py reads thinker_config.text_config):
# Qwen2_5OmniTextConfig gates the window on use_sliding_window as Qwen2Config
_HF_CLASSES["qwen2_5_omni_text"] = _HFClass("Qwen2_5OmniTextConfig", {
    "num_hidden_layers": 28, "num_attention_heads": 28, "hidden_size": 3584, "num_key_value_heads": 4,
    "use_sliding_window": False, "sliding_window": 32768, "max_window_layers": 28}, _post_qwen2)
_HF_CLASSES["qwen3_omni_moe_text"] = _HFClass("Qwen3OmniMoeTextConfig", {
    "num_hidden_layers": 28, "num_attention_heads": 28, "hidden_size": 2048, "num_key_value_heads": 4,
    "sliding_window": None})


# Per-layer lists these classes derive in a read-only property (transformers
# 5.20): a config.json that sets one, even to null, fails with
# AttributeError ("property ... has no setter"). BambaConfig and
# FalconH1Config alias layer_types to layers_block_type. (JambaConfig's
# layers_block_type: _post_jamba says how to set it instead.)
_READ_ONLY = {"jamba": ("layer_types",), "bamba": ("layer_types", "layers_block_type"),
              "falcon_h1": ("layer_types", "layers_block_type"), "recurrent_gemma": ("layers_block_type",),
              "mamba": ("layer_types",), "mamba2": ("layer_types",), "falcon_mamba": ("layer_types",)}


def _check_read_only(raw: Mapping[str, Any] | None, model_type: str, where: str) -> None:
    field = next((f for f in _READ_ONLY.get(model_type, ()) if isinstance(raw, Mapping) and f in raw), None)
    if field is not None:
        raise UserError(f"{where}: config.json sets {field}, which the {model_type} config class derives itself (a "
                        f"property with no setter: AttributeError), so vLLM {VLLM_VERSION} cannot load the config; "
                        "remove it")


# The config classes whose layers_block_type / hybrid_override_pattern
# vLLM 0.33.0's model files read (jamba.py, zamba2.py, nemotron_h.py,
# cosmos3_edge.py; BambaConfig derives it from attn_layer_indices, which
# bamba.py reads): on any other model the field is an unread extra, kept as
# written whatever it holds (raw.py does not type it).
_BLOCK_TYPE_READERS = frozenset({"jamba", "zamba2", "nemotron_h", "bamba", "cosmos3_edge"})
_PATTERN_READERS = frozenset({"nemotron_h", "cosmos3_edge"})


def _reads(model_type: str | None, readers: frozenset[str]) -> bool:
    return bool(model_type) and any(model_type == r or model_type.startswith(r + "_") for r in readers)


def _check_layer_kind_fields(given: Mapping[str, Any], model_type: str, where: str) -> None:
    """Where a model file reads them: layers_block_type a list of layer-kind
    strings, hybrid_override_pattern one string (a character a layer)."""
    kinds, pattern = given.get("layers_block_type"), given.get("hybrid_override_pattern")
    if kinds is not None and _reads(model_type, _BLOCK_TYPE_READERS) and not (
            isinstance(kinds, list) and all(isinstance(k, str) for k in kinds)):
        raise UserError(f"{where}: field 'layers_block_type': Input should be a valid list of strings (got "
                        f"{shown(kinds)}); fix the value in the config")
    if pattern is not None and _reads(model_type, _PATTERN_READERS) and not isinstance(pattern, str):
        raise UserError(f"{where}: field 'hybrid_override_pattern': Input should be a valid string (got "
                        f"{shown(pattern)}); fix the value in the config")


def _check_num_labels(raw: Mapping[str, Any] | None, where: str) -> None:
    """PreTrainedConfig's num_labels setter (every class, transformers 5.20)
    builds id2label from range(num_labels) unless id2label already has that
    many entries: a value range() refuses (null, 2.0, "2") fails the load."""
    if not isinstance(raw, Mapping) or "num_labels" not in raw:
        return
    n, labels = raw["num_labels"], raw.get("id2label")
    if isinstance(n, int) or (isinstance(labels, Mapping) and len(labels) == n):
        return
    raise UserError(f"{where}: num_labels is {shown(n)}; transformers builds id2label from range(num_labels) "
                    f"(TypeError: {type(n).__name__!r} object cannot be interpreted as an integer), so vLLM "
                    f"{VLLM_VERSION} cannot load the config: write a whole number")


def _check_alias_as_written(raw: Mapping[str, Any] | None, given: Mapping[str, Any], alias: str, target: str,
                            where: str) -> None:
    """A value raw.py coerced (a layer count 3.0 or "2" read as 3 or 2) that
    reaches the class through an attribute_map alias: transformers sets the
    target as written, without its strict type check, and the model file
    then fails with it (whisper.py's range(config.encoder_layers): "'float'
    object cannot be interpreted as an integer")."""
    if not isinstance(raw, Mapping) or alias not in raw:
        return
    written = raw[alias]
    # a bool is an int to the model file (true heads build as 1 head)
    if isinstance(written, (float, str)) and type(written) is not type(given[alias]):
        raise UserError(f"{where}: {alias} is {shown(written)}; it sets {target} as written (an attribute_map "
                        f"alias, not type-checked), and vLLM {VLLM_VERSION}'s model file fails with it: "
                        f"write it as {shown(given[alias])}")


def hf_view(given: dict[str, Any], model_type: str | None, where: str,
            raw: Mapping[str, Any] | None = None) -> HFView:
    """The transformers config object vLLM would get for these fields.
    ``raw`` is the same mapping as written in config.json (``given`` has
    raw.py's coercions): the class refuses what its declared types do not fit."""
    if not model_type:
        raise UserError(
            f"{where}: no 'model_type'; transformers (and so vLLM) needs it to pick the config class"
        )
    check_declared(raw, model_type, where)
    check_subconfigs(raw, model_type, where)
    _check_layer_kind_fields(given, model_type, where)
    _check_remappable(raw, where)
    _check_num_labels(raw, where)
    _check_read_only(raw, model_type, where)
    cls = _HF_CLASSES.get(model_type)
    flat_type = _flat_text_type(model_type, raw) if isinstance(raw, Mapping) else None
    if flat_type is not None:
        # the class pops a flat (hub-style) config's text fields into its
        # text class, which checks them as its own
        check_declared(raw, flat_type, where)
    _check_layer_counts(given, where)
    # PreTrainedConfig.__post_init__ (every class): torch_dtype folds into dtype
    given = {**{k: v for k, v in given.items() if k != "torch_dtype"}, "dtype": config_dtype(given, where)}
    if cls is None:
        # transformers' own class (CONFIG_MAPPING, not one vLLM registers over
        # it) runs PreTrainedConfig.validate_layer_type on the entries as written
        _check_layer_lists(given, model_type, where, kinds_known=_transformers_class(model_type))
        # the class is not modelled here, its validate_architecture still runs
        # (on config.json's sizes; a size left to the class default is not checked)
        _check_architecture(given, model_type, f"the {model_type} config class's validate_architecture", where)
        check_rope(raw, given, model_type, where, wrapper=isinstance(given.get("text_config"), dict),
                   modelled=False)
        # a class whose head_dim or KV head count defaults to a fixed value (CwmConfig: head_dim 128, 8 KV
        # heads; NemotronConfig: KV heads null): vLLM's model config, and every model file reading them,
        # get it when config.json leaves the field out
        defaults = {field: table[model_type] for field, table in (("head_dim", HEAD_DIM_DEFAULTS),
                                                                  ("num_key_value_heads", KV_HEADS_DEFAULTS))
                    if field not in given and model_type in table}
        return HFView(model_type, {**given, **defaults}, set(defaults),
                      f"transformers' {model_type} config class" if defaults else "PreTrainedConfig")
    attrs = {**cls.defaults, **given}
    defaulted = set(cls.defaults) - set(given)
    # attribute_map routes both writes and reads of an alias to its target.
    # The aliases are written after the declared fields, in config.json's
    # order, so an alias wins over the target's own value and the last of two
    # aliases of one target wins (WhisperConfig(encoder_attention_heads=20,
    # num_attention_heads=8) has 8 encoder heads, transformers 5.20)
    for alias in [k for k in given if k in cls.attribute_map]:
        _check_alias_as_written(raw, given, alias, f"{cls.name}.{cls.attribute_map[alias]}", where)
        attrs[cls.attribute_map[alias]] = given[alias]
        defaulted.discard(cls.attribute_map[alias])
    for alias, target in cls.attribute_map.items():
        attrs[alias] = attrs[target]
        if target in defaulted:
            defaulted.add(alias)
        else:
            defaulted.discard(alias)
    if cls.post_init is not None:
        missing = [k for k in ("num_hidden_layers", "hidden_size") if attrs.get(k) is None and k in cls.defaults]
        if missing:
            raise UserError(f"{where}: {missing[0]} is null; give the model's value")
        _check_layer_counts(attrs, where)  # class defaults and attribute_map aliases
        cls.post_init(attrs)
        _check_layer_counts(attrs, where)  # counts __post_init__ derives (LongCat-Flash: 2 * num_layers)
        derived = attrs.get("layer_types")
        if "layer_types" not in given and derived and len(set(derived)) > 1:
            defaulted.add("layer_types")  # reported as derived by the class
        if given.get("sliding_window") is not None and attrs.get("sliding_window") is None:
            defaulted.add("sliding_window_dropped")
    _check_layer_lists(attrs, model_type, where)
    _check_architecture(attrs, model_type, f"{cls.name}.validate_architecture", where)
    check_rope(raw, attrs, model_type, where, wrapper=bool(cls.text_config_type or cls.text_default_type)
               and model_type not in _POPS_FLAT_TEXT)
    return HFView(model_type, attrs, defaulted, cls.name)

