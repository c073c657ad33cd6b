"""What attn-select knows about a model, after parsing its config: plain
frozen values that the selector turns into ``SelectorConfig``s.

Produced by ``selector/model/`` (config.json / folder / built-in profile)
and consumed by ``selector/explain.py`` and ``backends/run``. No pydantic,
no torch here: just the facts vLLM derives per attention layer.
"""

from __future__ import annotations

from typing import NamedTuple

from attn_select.selector.quant_methods import CheckpointQuant


class LayerAttention(NamedTuple):
    """The facts of one attention layer that feed vLLM's ``get_attn_backend``
    (and the run step's shapes). Head counts are per tensor-parallel rank."""

    head_size: int  # vLLM's head_size argument (MLA: kv_lora_rank + qk_rope_head_dim)
    head_size_v: int  # value head size (== head_size unless K/V differ)
    num_heads: int  # query heads per rank
    num_kv_heads: int  # KV heads per rank (MLA: 1)
    attn_type: str = "decoder"  # AttentionType value
    use_mla: bool = False
    use_sparse: bool = False  # sparse MLA (DeepSeek-V3.2 index_topk)
    has_sink: bool = False  # learned attention sinks (gpt-oss)
    sliding_window: int | None = None  # window in tokens, None = full attention
    logits_soft_cap: float | None = None  # per-layer soft cap (Gemma-2)
    use_alibi: bool = False
    # Step-1's square-root ALiBi: vLLM's Attention raises after selection unless the
    # chosen backend supports it (TRITON_ATTN only)
    use_alibi_sqrt: bool = False
    # Rnj-1's chunked (block-local) layers: Attention asserts after selection that the
    # chosen backend is TRITON_ATTN (chunk_lookback > -1)
    chunk_lookback: bool = False
    use_mm_prefix: bool = False  # model_config.is_mm_prefix_lm (Gemma-3 PrefixLM)
    use_per_head_quant_scales: bool = False  # kv_cache_scheme strategy "attn_head"
    kv_cache_dtype: str | None = None  # per-layer override (kv_cache_dtype_skip_layers); None = run-wide
    # MLA dims (0 when not MLA), for the MLA backends' model checks and the report
    qk_nope_head_dim: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0
    kv_lora_rank: int = 0


class AttentionGroup(NamedTuple):
    """Layers that share one selection: equal ``LayerAttention``."""

    name: str  # "full", "sliding", "cross", "encoder", ...
    layers: tuple[int, ...]  # layer indices (model order)
    attn: LayerAttention


class OtherLayers(NamedTuple):
    """Layers that are not attention (linear attention, Mamba, ...): listed, not selected."""

    kind: str  # "linear_attention", "mamba", "gated_deltanet", ...
    layers: tuple[int, ...]


class ModelFacts(NamedTuple):
    name: str  # profile name or path as given
    architecture: str  # architectures[0] from config.json
    model_type: str
    dtype: str  # resolved activation dtype: float16 / bfloat16 / float32
    num_layers: int
    tp: int
    groups: tuple[AttentionGroup, ...]
    other_layers: tuple[OtherLayers, ...] = ()
    # Model-level facts vLLM's predicates read from model_config:
    head_size: int = 0  # model_config.get_head_size()
    num_heads: int = 0  # model_config.get_num_attention_heads(parallel_config), per rank
    num_kv_heads: int = 0  # model_config.get_num_kv_heads(parallel_config), per rank
    # model_config.use_mla and get_total_num_attention_heads / get_total_num_kv_heads,
    # which verify_with_parallel_config checks -dcp against (None: derived, see
    # the properties below; the config parser always gives them)
    model_use_mla: bool | None = None
    total_num_heads: int | None = None
    total_num_kv_heads: int | None = None
    attn_logit_softcapping: float | None = None  # hf_text_config.attn_logit_softcapping
    is_mm_prefix_lm: bool = False
    rswa_window: int | None = None
    is_diffusion: bool = False
    kv_cache_scheme: str | None = None  # quantization_config kv_cache_scheme -> "fp8" etc.
    # model_config.quantization: the checkpoint's quantization method after
    # vLLM's overrides (selector/quant_methods.py); None when unquantized
    quantization: str | None = None
    # What --quantization is resolved against (selector/quant_methods.py):
    # the checkpoint's quantization config as the override hooks read it
    # (None: unquantized), and the names of the *.json files in the model
    # folder, where get_quant_config looks for a method's own config file
    # (None: not read from a folder, e.g. a built-in profile).
    checkpoint_quant: CheckpointQuant | None = None
    checkpoint_json: tuple[str, ...] | None = None
    notes: tuple[str, ...] = ()  # parsing decisions worth printing
    # Added by the config parser (selector/model/):
    config_dtype: str | None = None  # dtype read from config.json / weights, before "auto" resolution
    runner: str = "generate"  # vLLM runner type ("generate" / "pooling"); pooling prefers float16 under auto
    index_topk: int | None = None  # hf_text_config.index_topk (sparse MLA, DeepSeek-V3.2); None = absent
    # hf_text_config's qk_nope_head_dim, qk_rope_head_dim, v_head_dim and
    # kv_lora_rank, as MLA backends' checks read them (None = absent: each
    # check applies its own getattr default, FlashInfer MLA's 1 for qk_nope).
    # Values as the config object holds them: a forced MLA backend compares
    # and prints them on a non-MLA model too, whatever kind they are
    mla_config_dims: tuple[object, object, object, object] = (None, None, None, None)
    # those the config object has no attribute for at all, and its class
    # name: a check that reads one as a plain attribute raises AttributeError
    mla_dims_absent: tuple[str, ...] = ()
    text_config_class: str = ""
    # (key, length, model_max_length) of the model's maximum length as vLLM
    # derives it, which a user's --max-model-len may not exceed; None: not
    # derived here (no length key, a pooling model's tokenizer limit, a
    # window --disable-sliding-window turns into the limit)
    derived_max_len: tuple[str, float, object] | None = None
    source: str | None = None  # where the config came from: HF repo of a profile, or the file read
    # Added for the SGLang engine (selector/sglang/model.py): SGLang keys its
    # model-specific rules on the full architectures list and reads a few raw
    # config values (ENGINE_CONFIG_KEYS) from hf_config and hf_text_config.
    architectures: tuple[str, ...] = ()  # config.json "architectures", in order
    config_attrs: tuple[tuple[str, object], ...] = ()  # ENGINE_CONFIG_KEYS present in the top-level config
    text_config_attrs: tuple[tuple[str, object], ...] = ()  # the same keys in the text config (== top level without one)

    @property
    def is_mla(self) -> bool:
        """model_config.use_mla (None: whether any group is MLA)."""
        if self.model_use_mla is not None:
            return self.model_use_mla
        return any(g.attn.use_mla for g in self.groups)

    @property
    def total_heads(self) -> int:
        return self.total_num_heads if self.total_num_heads is not None else self.num_heads * self.tp

    @property
    def total_kv_heads(self) -> int:
        """All KV heads (None: per rank x tp, exact unless replicated)."""
        return self.total_num_kv_heads if self.total_num_kv_heads is not None else self.num_kv_heads * self.tp


# Raw config values another engine reads besides the facts above (after the
# transformers class defaults the parser applies). Lists become tuples.
ENGINE_CONFIG_KEYS: tuple[str, ...] = (
    "head_dim", "v_head_dim", "swa_head_dim", "swa_v_head_dim", "hidden_size", "num_attention_heads",
    "learnable_sink", "add_swa_attention_sink_bias", "add_full_attention_sink_bias", "kv_lora_rank",
    "use_mla", "index_topk", "index_kpool", "sliding_window_pattern", "layer_types",
    "has_minicpm_sparse_attention", "has_lightning_layers", "prefix_lm", "mamba_chunk_size", "sparse_config",
    "mixer_types",
)


def freeze_config_value(value: object) -> object:
    """A config value as a hashable one: lists and dicts become tuples."""
    if isinstance(value, (list, tuple)):
        return tuple(freeze_config_value(v) for v in value)
    if isinstance(value, dict):
        return tuple((str(k), freeze_config_value(v)) for k, v in value.items())
    return value


class Unhashable:
    """A list or mapping config value carried into the (hashed, cached)
    selection context: compares equal only to an equal value, as the engine's
    ``==`` and ``in`` do, and prints as Python prints the value (vLLM's
    f-string reasons: "but got []")."""

    __slots__ = ("value", "_key")

    def __init__(self, value: object) -> None:
        self.value = value
        self._key = freeze_config_value(value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Unhashable) and (type(self.value), self._key) == (type(other.value), other._key)

    def __hash__(self) -> int:
        return hash(self._key)

    def __str__(self) -> str:
        return str(self.value)

    __repr__ = __str__


def as_hashable(value: object) -> object:
    """A config value as read, hashable (lists and mappings wrapped)."""
    return Unhashable(value) if isinstance(value, (list, dict)) else value

