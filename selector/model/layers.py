"""Step 3b: per-layer facts: what each model file builds (``Attention``,
``EncoderOnlyAttention``, ``CrossAttention``, ``MLAAttention`` or a
non-attention layer) and what that layer passes to ``get_attn_backend``.
``archs`` maps each architecture to its builder here."""

from __future__ import annotations

from typing import Any, NamedTuple

from attn_select.selector.engines import VLLM_VERSION
from attn_select.selector.errors import UserError, shown
from attn_select.selector.model.hf_classes import (
    _BLOCK_TYPE_READERS, _HF_CLASSES, _PATTERN_READERS, HFView, _reads, bailing_v3_linear_layers, check_layer_count)
from attn_select.selector.model.hf_models import is_config_type
from attn_select.selector.model.hf_size_defaults import HAS_TOP_K, PAD_TOKEN_DEFAULTS, TOP_K_NAMES
from attn_select.selector.model.hf_types import declared
from attn_select.selector.model.model_level import model_head_size, total_kv_heads
from attn_select.selector.model.vllm_registry import (
    BACKEND_CLASSES, REGISTERED, TRANSFORMERS_BACKEND, transformers_backend,
)
from attn_select.selector.model_facts import LayerAttention


class _Ctx(NamedTuple):
    """Model-level inputs every layer builder reads."""

    arch: str
    hf: HFView  # hf_config
    text: HFView  # hf_text_config
    tp: int
    cache_window: int | None  # cache_config.sliding_window
    mm_prefix: bool  # model_config.is_mm_prefix_lm
    per_head_scales: bool  # compressed-tensors kv_cache_scheme strategy "attn_head"
    use_mla: bool  # model_config.use_mla
    alibi: bool
    notes: list[str]
    # the cache dtype a layer built without cache_config gets: "auto", or "fp8"
    # where the checkpoint's llm-compressor kv_cache_scheme reaches Attention
    # through quant_config (Attention.__init__)
    uncached_kv: str = "auto"


class _Stack(NamedTuple):
    """One stack of layers as vLLM builds it: attention per layer (several
    per layer for encoder-decoder models), or a non-attention kind."""

    # No default: a NamedTuple's default list would be shared by every stack.
    slots: list[tuple[int, LayerAttention | str]]

    def add(self, index: int, what: LayerAttention | str) -> None:
        self.slots.append((index, what))


def _per_rank(total: int, tp: int, what: str) -> int:
    # vLLM asserts total_num_heads % tp_size == 0 in every attention module
    if not isinstance(total, int) or total <= 0:
        # vLLM's engine config takes it; its layers do not (a negative-size
        # projection, a query-group assert, a division by zero)
        raise UserError(f"the config gives {total!r} {what}; it needs a positive head count (vLLM {VLLM_VERSION} "
                        "fails building the attention layers with it)")
    if total % tp:
        raise UserError(f"tensor parallel size {tp} does not divide the {total} {what}; pick a divisor")
    return total // tp


def _kv_per_rank(total: int, tp: int) -> int:
    """KV heads per rank: partitioned when >= tp (must divide), replicated
    when fewer (tp must be a multiple); at least one (QKVParallelLinear).
    A negative count is "fewer": QKVParallelLinear's divide(tp, total)
    asserts with Python's modulo, which -1 (and -n when n divides tp)
    passes, and both it and the attention layer then take max(1, total // tp),
    one KV head. Zero is a division by zero there."""
    if not isinstance(total, int) or isinstance(total, bool) or total == 0:
        raise UserError(f"the config gives {total!r} key/value heads; it needs a positive count (vLLM {VLLM_VERSION} "
                        "fails building the attention layers with it: a division by zero): fix num_key_value_heads")
    if total < 0 and tp % total:
        raise UserError(f"the config gives {total} key/value heads; vLLM {VLLM_VERSION}'s QKVParallelLinear asserts "
                        f"that tensor parallel size {tp} is a multiple of it ({tp} % {total} is {tp % total} in "
                        "Python), so it fails building the attention layers: fix num_key_value_heads")
    if total >= tp and total % tp:
        raise UserError(f"tensor parallel size {tp} does not divide the {total} KV heads; pick a divisor")
    if total < tp and tp % total:
        raise UserError(f"tensor parallel size {tp} is not a multiple of the {total} KV heads; pick one that is")
    return max(1, total // tp)


def _hidden_over(t: HFView, heads: int) -> int:
    """hidden_size // heads, the fallback head size of most model files."""
    hidden = t.get("hidden_size")
    if not isinstance(hidden, int):
        raise UserError("the config has neither head_dim nor hidden_size; add the model's head_dim")
    return hidden // heads


def _head_dim_or_hidden(t: HFView, heads: int) -> int:
    """getattr(config, "head_dim", None), else hidden_size // heads: only a missing
    (or null) head_dim falls back, so 0 reaches the size check as in vLLM."""
    head = t.get("head_dim")
    return head if head is not None else _hidden_over(t, heads)


def soft_cap_value(value: object) -> object:
    """attn_logit_softcapping as vLLM uses it (no class but Gemma-2's and
    Gemma-3's declares it): a truthiness (FA version selection, FlashInfer's
    dispatch) and, for the layers that pass it, a layer's logits_soft_cap.
    A number (or a bool) is that number; an empty value (0, "", [], {})
    reads as none; any other value (a string, "0" too) is kept as it is:
    truthy, and nothing on the selection path computes with it (the only
    float() of it is FA4's JIT warm-up for Gemma-4, after selection)."""
    if not value:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    return value


def _check_head_size(head: int, where: str) -> int:
    if head <= 0:
        raise UserError(f"{where}: head size is {head}; set head_dim (or hidden_size and num_attention_heads)")
    return head


def _check_query_groups(heads: int, kv: int) -> None:
    """Attention.__init__ (EncoderOnlyAttention and CrossAttention are
    Attention): ``assert num_heads % num_kv_heads == 0`` on one rank's
    heads, before it asks get_attn_backend."""
    if kv and heads % kv:
        raise UserError(f"vLLM {VLLM_VERSION} fails building the attention layers: Attention.__init__ asserts that "
                        f"num_heads ({heads}) is divisible by num_kv_heads ({kv}) (per tensor-parallel rank); fix "
                        "num_attention_heads or num_key_value_heads")


def _attention(ctx: _Ctx, heads: int, kv: int, head: int, *, window: int | None = None,
               attn_type: str = "decoder", sinks: bool = False, soft_cap: float | None = None,
               head_v: int | None = None, cache_config: bool = True) -> LayerAttention:
    """vllm ``Attention``: the per-layer window wins, else the model-level
    cache_config.sliding_window; sinks, mm-prefix and per-head scales as
    Attention.__init__ passes them to get_attn_backend. A model file that
    builds it without ``cache_config`` (``cache_config=False``) gives it no
    model-level window and the cache dtype "auto" (fp8 with an llm-compressor
    KV scheme), whatever --kv-cache-dtype says."""
    _check_query_groups(heads, kv)
    return LayerAttention(
        head_size=head, head_size_v=head_v or head, num_heads=heads, num_kv_heads=kv,
        attn_type=attn_type, has_sink=sinks,
        sliding_window=window if window is not None or not cache_config else ctx.cache_window,
        logits_soft_cap=soft_cap, use_alibi=ctx.alibi, use_mm_prefix=ctx.mm_prefix,
        use_per_head_quant_scales=ctx.per_head_scales,
        kv_cache_dtype=None if cache_config else ctx.uncached_kv,
    )


def _bare(heads: int, kv: int, head: int, attn_type: str, soft_cap: float | None = None) -> LayerAttention:
    """``EncoderOnlyAttention`` / ``CrossAttention``: they call
    get_attn_backend with head size, dtype, cache dtype and attn_type only,
    so no window, sinks, mm-prefix or per-head scales reach the selection."""
    _check_query_groups(heads, kv)
    return LayerAttention(head_size=head, head_size_v=head, num_heads=heads, num_kv_heads=kv,
                          attn_type=attn_type, logits_soft_cap=soft_cap)


def _self_attention(ctx: _Ctx, causal: bool, heads: int, kv: int, head: int, *,
                    window: int | None = None, soft_cap: float | None = None) -> LayerAttention:
    """Models that read ``is_causal``: False builds EncoderOnlyAttention."""
    if causal:
        return _attention(ctx, heads, kv, head, window=window, soft_cap=soft_cap)
    if (window if window is not None else ctx.cache_window) is not None:
        _note(ctx, "is_causal false: EncoderOnlyAttention passes no sliding window to get_attn_backend")
    return _bare(heads, kv, head, "encoder_only", soft_cap)


def _note(ctx: _Ctx, text: str) -> None:
    if text not in ctx.notes:
        ctx.notes.append(text)


def _one_per_layer(types: list, n: int) -> list:
    """``types`` when it names every one of the n layers, else the error."""
    if len(types) < n:
        raise UserError(f"layer_types has {len(types)} entries for {n} layers; give one per layer")
    return types


def _layer_types(ctx: _Ctx, n: int) -> list[str] | None:
    """layer_types when the config gives it (then one per layer), else None."""
    types = ctx.text.get("layer_types")
    return _one_per_layer(types, n) if types else None


def _window_from_types(ctx: _Ctx, types: list[str] | None, i: int) -> int | None:
    if types and types[i] == "sliding_attention":
        return ctx.text.get("sliding_window")
    return None


def _mla(ctx: _Ctx, heads_total: int, sparse: bool) -> LayerAttention:
    """``MLAAttention``: head_size = kv_lora_rank + qk_rope_head_dim, one
    latent KV head, per-rank query heads; it passes use_mla, use_sparse and
    num_heads only (no window, sinks or mm-prefix). The cache holds one latent
    vector, so head_size_v = head_size."""
    t = ctx.text
    for key in ("kv_lora_rank", "q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim", "hidden_size"):
        # the attention's projections are tensors of these sizes: a negative one fails allocating
        size = t.get(key)
        if isinstance(size, int) and size < 0:
            raise UserError(f"{key} is {size}; vLLM {VLLM_VERSION} builds the MLA attention's projections with "
                            "it and fails (RuntimeError: Trying to create tensor with negative dimension): "
                            "give the model's size")
    rank, rope = t.get("kv_lora_rank"), t.get("qk_rope_head_dim") or 0
    head = _check_head_size(rank + rope, "kv_lora_rank + qk_rope_head_dim")
    heads = 0 if heads_total == 0 else _per_rank(heads_total, ctx.tp, "attention heads")  # 0: _deepseek's case
    return LayerAttention(
        head_size=head, head_size_v=head, num_heads=heads,
        num_kv_heads=1, use_mla=True, use_sparse=sparse,
        qk_nope_head_dim=t.get("qk_nope_head_dim") or 0, qk_rope_head_dim=rope,
        v_head_dim=t.get("v_head_dim") or 0, kv_lora_rank=rank,
    )


def _n_layers(ctx: _Ctx) -> int:
    n = ctx.text.get("num_hidden_layers")
    if not isinstance(n, int):
        raise UserError(f"num_hidden_layers is {shown(n)}; the config needs a positive layer count")
    if n <= 0:
        # make_layers / range(n) build no decoder layer from it: vLLM loads the
        # model with no attention layer and never calls get_attn_backend (the
        # MoE model files that look for an expert layer raise instead)
        raise UserError(f"num_hidden_layers is {n}: vLLM {VLLM_VERSION} builds no decoder layers from it, so no "
                        "attention layer and no backend selection (some MoE model files raise: no MoE layer "
                        "found); give the model's layer count")
    return n


def _heads(ctx: _Ctx) -> int:
    heads = ctx.text.get("num_attention_heads")
    if heads is None:
        raise UserError("the config has no num_attention_heads; add the model's query head count")
    if not heads:
        raise UserError(f"num_attention_heads is {heads!r}; it needs a positive head count (vLLM {VLLM_VERSION} "
                        "fails building the attention layers with it: a division by zero)")
    return heads


def _kv_heads_or(t: Any, total: int) -> Any:
    """getattr(config, "num_key_value_heads", num_attention_heads): the
    default only for a config without the field (or a null one, which the
    config classes fill in), so 0 reaches the layer, as in vLLM, where it is
    a division by zero ("or total" had read 0 as the query-head count)."""
    kv = t.get("num_key_value_heads")
    return total if kv is None else kv


def _llama(ctx: _Ctx) -> _Stack:
    """llama.py LlamaAttention (also Mistral, Phi-3 and the other Llama-class
    models): head_dim or hidden // heads; window only on layer_types'
    "sliding_attention" layers, else the model-level window."""
    t, n = ctx.text, _n_layers(ctx)
    total = _heads(ctx)
    heads, kv = _per_rank(total, ctx.tp, "attention heads"), _kv_per_rank(_kv_heads_or(t, total), ctx.tp)
    head = _check_head_size(t.get("head_dim") or _hidden_over(t, total), "head_dim")
    types, causal = _layer_types(ctx, n), bool(t.get("is_causal", True))
    if types and "sliding_attention" in types and t.model_type == "llama" and not t.has("sliding_window"):
        # llama.py reads config.sliding_window for a sliding layer; LlamaConfig has no such attribute
        raise UserError("layer_types has sliding_attention layers but the config has no sliding_window: vLLM "
                        f"{VLLM_VERSION}'s llama.py reads config.sliding_window for them (AttributeError: "
                        "'LlamaConfig' object has no attribute 'sliding_window'); add sliding_window or drop those "
                        "layer types")
    stack = _Stack([])
    for i in range(n):
        stack.add(i, _self_attention(ctx, causal, heads, kv, head, window=_window_from_types(ctx, types, i)))
    return stack


def _laguna(ctx: _Ctx) -> _Stack:
    """laguna.py LagunaDecoderLayer: num_attention_heads_per_layer (Laguna-XS,
    Laguna-S) gives each layer its query heads, else num_attention_heads;
    head_dim or hidden // the layer's heads; layer_types' "sliding_attention"
    layers get sliding_window (and sinks when swa_attention_sink_enabled)."""
    t, n = ctx.text, _n_layers(ctx)
    per_layer = t.get("num_attention_heads_per_layer")
    if per_layer is not None and (not isinstance(per_layer, (list, tuple)) or len(per_layer) < n):
        raise UserError(f"num_attention_heads_per_layer is {per_layer!r}; LagunaDecoderLayer reads one entry per "
                        f"layer ({n}): give one per layer")
    types = _layer_types(ctx, n)
    stack = _Stack([])
    for i in range(n):
        total = per_layer[i] if per_layer is not None else _heads(ctx)
        heads = _per_rank(total, ctx.tp, "attention heads")
        kv = _kv_per_rank(t.get("num_key_value_heads") or total, ctx.tp)
        head = _check_head_size(t.get("head_dim") or _hidden_over(t, total), "head_dim")
        sliding = bool(types) and types[i] == "sliding_attention"
        stack.add(i, _attention(ctx, heads, kv, head, window=_window_from_types(ctx, types, i),
                                sinks=sliding and bool(t.get("swa_attention_sink_enabled", False))))
    return stack


def _step1(ctx: _Ctx) -> _Stack:
    """step1.py StepAttention: hidden // heads, KV heads from
    num_attention_groups (else num_key_value_heads, else 1; 1 for a
    non-positive count), per-head ALiBi slopes with use_alibi_sqrt."""
    t, n = ctx.text, _n_layers(ctx)
    total = _heads(ctx)
    groups = t.get("num_attention_groups") if t.has("num_attention_groups") else t.get("num_key_value_heads", 1)
    heads, kv = _per_rank(total, ctx.tp, "attention heads"), _kv_per_rank(groups if groups and groups > 0 else 1, ctx.tp)
    head = _check_head_size(_hidden_over(t, total), "hidden_size // num_attention_heads")
    layer = _attention(ctx, heads, kv, head)._replace(use_alibi=True, use_alibi_sqrt=True)
    return _Stack([(i, layer) for i in range(n)])


def _iquest_loopcoder(ctx: _Ctx) -> _Stack:
    """iquest_loopcoder.py LoopCoderAttention: every layer holds loop_num
    (default 2) Attention modules, numbered loop * num_hidden_layers + layer;
    loop 0 keeps cache_config's window, the others get loop_window_size
    (default 64) through a copied cache_config. hidden // heads; is_causal
    false gives them attn_type encoder_only (plain Attention, window kept)."""
    t, n = ctx.text, _n_layers(ctx)
    total = _heads(ctx)
    heads, kv = _per_rank(total, ctx.tp, "attention heads"), _kv_per_rank(t.get("num_key_value_heads"), ctx.tp)
    head = _check_head_size(_hidden_over(t, total), "hidden_size // num_attention_heads")
    attn_type = "decoder" if t.get("is_causal", True) else "encoder_only"
    loops = t.get("loop_num", 2)
    loop_window = t.get("loop_window_size", 64)
    if not isinstance(loops, int) or loops < 1:
        raise UserError(f"loop_num is {loops!r}; IQuest-LoopCoder needs a positive loop count")
    stack = _Stack([])
    for loop in range(loops):
        for i in range(n):
            layer = _attention(ctx, heads, kv, head, attn_type=attn_type)
            if loop:
                layer = layer._replace(sliding_window=loop_window)
            stack.add(loop * n + i, layer)
    return stack


def _plain(ctx: _Ctx, *, head_rule: str, reads_is_causal: bool) -> _Stack:
    """Models whose attention takes no per-layer window (Qwen2/Qwen3,
    Qwen3-MoE, Mixtral): every layer gets cache_config.sliding_window."""
    t, n = ctx.text, _n_layers(ctx)
    total = _heads(ctx)
    heads, kv = _per_rank(total, ctx.tp, "attention heads"), _kv_per_rank(_kv_heads_or(t, total), ctx.tp)
    if head_rule == "hidden":  # qwen2.py: hidden_size // num_heads, head_dim ignored
        head = _hidden_over(t, total)
    elif head_rule == "none_only":  # mixtral.py: only a missing head_dim falls back
        head = _head_dim_or_hidden(t, total)
    else:  # qwen3 / qwen3_moe: head_dim or hidden // heads
        head = t.get("head_dim") or _hidden_over(t, total)
    _check_head_size(head, "head_dim")
    causal = not reads_is_causal or bool(t.get("is_causal", True))
    return _Stack([(i, _self_attention(ctx, causal, heads, kv, head)) for i in range(n)])


def _qwen2(ctx: _Ctx, head_rule: str) -> _Stack:
    t = ctx.text
    types = t.get("layer_types") or []
    # Qwen2Model asserts: sliding on only some layers is not supported
    if len(set(types)) > 1 and t.get("max_window_layers") != t.get("num_hidden_layers"):
        # (its text says "less than" whatever the two counts are)
        raise UserError(
            f"vLLM {VLLM_VERSION}'s Qwen2Model refuses this config when it builds the layers: layer_types mixes "
            f"kinds and max_window_layers is not num_hidden_layers (AssertionError: Sliding window for some but all "
            f"layers is not supported. This model uses sliding window but `max_window_layers` = "
            f"{t.get('max_window_layers')} is less than `num_hidden_layers` = {t.get('num_hidden_layers')}.); make "
            "layer_types one kind or max_window_layers the layer count"
        )
    return _plain(ctx, head_rule=head_rule, reads_is_causal=True)


def _gemma(ctx: _Ctx, soft_cap_from_config: bool, reads_is_causal: bool) -> _Stack:
    """gemma2.py / gemma3.py: config.head_dim; window on layer_types'
    sliding layers; Gemma-2 passes attn_logit_softcapping, Gemma-3 None."""
    t, n = ctx.text, _n_layers(ctx)
    heads = _per_rank(_heads(ctx), ctx.tp, "attention heads")
    kv = _kv_per_rank(t.get("num_key_value_heads"), ctx.tp)
    head = _check_head_size(t.get("head_dim") or 0, "head_dim")
    types = t.get("layer_types")
    if not types or len(types) < n:
        raise UserError(f"layer_types must list all {n} layers for {ctx.arch}")
    soft_cap = soft_cap_value(t.get("attn_logit_softcapping")) if soft_cap_from_config else None
    causal = not reads_is_causal or bool(t.get("is_causal", True))
    return _Stack([
        (i, _self_attention(ctx, causal, heads, kv, head, window=_window_from_types(ctx, types, i),
                            soft_cap=soft_cap))
        for i in range(n)
    ])


def _per_layer_geometry(ctx: _Ctx, n: int) -> tuple[int, list, dict]:
    """Gemma-4-style configs (Gemma-4, EmbeddingGemma2): query heads per
    rank, one layer_types entry per layer (required), and per_layer_config's
    {layer: overrides} table."""
    heads = _per_rank(_heads(ctx), ctx.tp, "attention heads")
    types = _one_per_layer(ctx.text.get("layer_types") or [], n)
    return heads, types, ctx.text.get("per_layer_config") or {}


def _gemma4(ctx: _Ctx) -> _Stack:
    """gemma4.py Gemma4DecoderLayer / Gemma4Attention: head size and KV
    heads from ``per_layer_config[i]`` (full layers: global_head_dim and,
    with attention_k_eq_v, num_global_key_value_heads); the window on
    layer_types' sliding layers; attn_logit_softcapping only if the config
    carries one; is_causal is never read. KV-shared layers (the last
    num_kv_shared_layers) still build an ``Attention`` with the same inputs,
    reading the cache of the last earlier layer of their type."""
    t, n = ctx.text, _n_layers(ctx)
    heads, types, table = _per_layer_geometry(ctx, n)
    shared = t.get("num_kv_shared_layers") or 0
    first_shared = n - shared
    soft_cap = soft_cap_value(t.get("attn_logit_softcapping"))
    stack = _Stack([])
    for i in range(n):
        layer = table.get(i, {})
        head = _check_head_size(layer.get("head_dim", t.get("head_dim")) or 0, f"layer {i} head_dim")
        kv = _kv_per_rank(layer.get("num_key_value_heads", t.get("num_key_value_heads")), ctx.tp)
        if shared > 0 and i >= first_shared and types[i] not in types[:first_shared]:
            raise UserError(f"Gemma-4 layer {i} shares KV with an earlier {types[i]} layer, but none of the "
                            f"first {first_shared} layers is one; vLLM fails building it")
        window = t.get("sliding_window") if types[i] == "sliding_attention" else None
        stack.add(i, _attention(ctx, heads, kv, head, window=window, soft_cap=soft_cap))
    if shared > 0:
        _note(ctx, f"KV sharing: the last {shared} layers reuse earlier layers' caches (same selector inputs)")
    if t.get("use_bidirectional_attention") == "all":
        _note(ctx, "use_bidirectional_attention 'all': Gemma4TextConfig sets sliding_window to "
                   "window // 2 + 1; gemma4.py still builds causal decoder Attention")
    return stack


def _cohere2(ctx: _Ctx) -> _Stack:
    """commandr.py CohereAttention: config.head_dim where the config has one
    (Cohere2Config always), else hidden // heads. On a Cohere2Config,
    layer_types' sliding layers get sliding_window + 1 (Cohere's window
    counts the current token too); on a CohereConfig (model_type cohere, "v1"
    to commandr.py) no layer gets a window of its own, so every layer takes
    the model-level one. cohere2_moe.py's Cohere2MoeAttention reads head_dim
    and the windows the same way."""
    t, n = ctx.text, _n_layers(ctx)
    total = _heads(ctx)
    heads, kv = _per_rank(total, ctx.tp, "attention heads"), _kv_per_rank(t.get("num_key_value_heads"), ctx.tp)
    if "head_dim" in t.attrs:
        head = _check_head_size(t.get("head_dim") or 0, "head_dim")
    else:
        head = _check_head_size(_hidden_over(t, total), "hidden_size // num_attention_heads")
    if ctx.arch == "Cohere2ForCausalLM" and ctx.hf.model_type == "cohere":
        return _Stack([(i, _attention(ctx, heads, kv, head)) for i in range(n)])
    types = _layer_types(ctx, n) or ["full_attention"] * n
    stack = _Stack([])
    for i in range(n):
        window = None
        if types[i] == "sliding_attention":
            if t.get("sliding_window") is None:
                raise UserError(f"layer {i} is a sliding layer but sliding_window is null; vLLM adds 1 to it and fails")
            window = t.get("sliding_window") + 1
        stack.add(i, _attention(ctx, heads, kv, head, window=window))
    _note(ctx, "Cohere2: sliding layers pass sliding_window + 1 (the window counts the current token)")
    return stack


def _exaone_moe(ctx: _Ctx) -> _Stack:
    """exaone_moe.py ExaoneMoeAttention: head_dim or hidden // heads, an
    attention layer on every decoder layer. A layer whose layer_types entry is
    not full_attention takes sliding_windows[layer] where the config has that
    list (K-EXAONE 2.0; null and 0 pass as they are), else sliding_window; a
    full layer passes no window of its own (so the model-level one)."""
    t, n = ctx.text, _n_layers(ctx)
    total = _heads(ctx)
    heads, kv = _per_rank(total, ctx.tp, "attention heads"), _kv_per_rank(_kv_heads_or(t, total), ctx.tp)
    head = _head_dim_or_hidden(t, total)
    _check_head_size(head, "head_dim")
    types = _layer_types(ctx, n) or ["full_attention"] * n
    windows = t.get("sliding_windows")
    stack = _Stack([])
    for i in range(n):
        window = None
        if types[i] != "full_attention" and windows is not None:
            if not isinstance(windows, list) or len(windows) <= i:
                given = f"a list of {len(windows)}" if isinstance(windows, list) else shown(windows)
                raise UserError(f"sliding_windows is {given} for {n} layers; vLLM {VLLM_VERSION}'s "
                                "ExaoneMoeAttention reads sliding_windows[layer] for each layer that is not "
                                "full_attention (it fails past the end): give one window per layer, or leave "
                                "sliding_windows out")
            window = windows[i]
        elif types[i] != "full_attention":
            window = t.get("sliding_window")
        if window is not None and (not isinstance(window, int) or isinstance(window, bool)):
            raise UserError(f"layer {i}'s sliding window is {shown(window)}; vLLM {VLLM_VERSION}'s attention "
                            "takes an integer window (it fails building the layer): give an integer")
        stack.add(i, _attention(ctx, heads, kv, head, window=window))
    return stack


def _rnj1(ctx: _Ctx) -> _Stack:
    """rnj1.py Rnj1Attention (a Gemma3TextConfig): config.head_dim, an
    attention layer on every decoder layer. A chunked_attention layer passes
    sliding_window and chunk_lookback 1, and Attention then asserts that the
    selection is TRITON_ATTN (the explanation's layer error where it is not);
    every other layer passes no window of its own (so the model-level one,
    whatever layer_types says). A chunked layer's rotary embedding reads
    rope_parameters["chunked_attention"]: without that key it gets the whole
    per-type mapping and fails."""
    t, n = ctx.text, _n_layers(ctx)
    heads, kv = _per_rank(_heads(ctx), ctx.tp, "attention heads"), _kv_per_rank(t.get("num_key_value_heads"), ctx.tp)
    head = _check_head_size(t.get("head_dim") or 0, "head_dim")
    types = _layer_types(ctx, n) or ["full_attention"] * n
    rope = t.get("rope_parameters")
    stack = _Stack([])
    for i in range(n):
        if types[i] != "chunked_attention":
            stack.add(i, _attention(ctx, heads, kv, head))
            continue
        if not isinstance(rope, dict) or "chunked_attention" not in rope:
            raise UserError(f"layer {i} is chunked_attention but rope_parameters has no chunked_attention entry; "
                            f"vLLM {VLLM_VERSION}'s Rnj1Attention then passes the whole per-layer-type mapping to "
                            "get_rope, which fails (TypeError: unhashable type: 'dict'): add "
                            "rope_parameters.chunked_attention")
        stack.add(i, _attention(ctx, heads, kv, head, window=t.get("sliding_window"))._replace(chunk_lookback=True))
    return stack


def _gpt_oss(ctx: _Ctx) -> _Stack:
    """gpt_oss.py OAIAttention: sinks on every layer; the window on even
    layers (layer_idx % 2 == 0), whatever layer_types says; heads and KV
    heads are plain ``// tp`` (no floor of one)."""
    t, n, tp = ctx.text, _n_layers(ctx), ctx.tp
    heads = _per_rank(_heads(ctx), tp, "attention heads")
    kv_total = t.get("num_key_value_heads")
    kv = _kv_per_rank(kv_total, 1) // tp
    if kv == 0:
        raise UserError(
            f"tensor parallel size {tp} exceeds gpt-oss's {kv_total} KV heads; vLLM's OAIAttention "
            f"would get {kv_total} // {tp} = 0 KV heads per rank and fail"
        )
    head = _check_head_size(t.get("head_dim") or 0, "head_dim")
    window = t.get("sliding_window")
    return _Stack([
        (i, _attention(ctx, heads, kv, head, window=window if i % 2 == 0 else None, sinks=True)) for i in range(n)
    ])


def _qwen3_next(ctx: _Ctx) -> _Stack:
    """qwen3_next.py: layer_types "full_attention" -> Qwen3NextAttention
    (gated output: the q projection doubles, the head size does not),
    "linear_attention" -> Gated DeltaNet, not an attention backend."""
    t, n = ctx.text, _n_layers(ctx)
    total = _heads(ctx)
    heads, kv = _per_rank(total, ctx.tp, "attention heads"), _kv_per_rank(t.get("num_key_value_heads"), ctx.tp)
    # head_dim or hidden_size // (heads per rank): vLLM divides by the per-rank count
    head = _check_head_size(t.get("head_dim") or _hidden_over(t, heads), "head_dim")
    types = _layer_types(ctx, n) or []
    causal = bool(t.get("is_causal", True))
    stack = _Stack([])
    for i in range(n):
        kind = types[i] if i < len(types) else None
        if kind == "full_attention":
            stack.add(i, _self_attention(ctx, causal, heads, kv, head))
        elif kind == "linear_attention":
            stack.add(i, "gated_deltanet")
        else:
            raise UserError(f"layer_types[{i}] is {kind!r}; Qwen3-Next layers are full_attention or linear_attention "
                            f"(vLLM {VLLM_VERSION}'s decoder layer raises: Invalid layer_type {kind})")
    if t.get("attn_output_gate", True):
        _note(ctx, "attention output gate: q_proj doubles its output; head size unchanged")
    return stack


class NoVllmSelection(UserError):
    """A refusal of the vLLM engine only: vLLM builds the model but never asks
    get_attn_backend, or its Transformers modeling backend fails building it
    (code SGLang does not run). SGLang resolves its server backend from the
    config alone, so its engine still reads such a model (facts.model_facts)."""


def _no_selection(ctx: _Ctx, subject: str, why: str) -> UserError:
    """The refusal for models whose layers bind their backends themselves:
    vLLM never asks get_attn_backend, so there is no selection to explain."""
    return NoVllmSelection(f"{ctx.arch}: vLLM {VLLM_VERSION} never calls get_attn_backend for {subject}: {why}; "
                           "attn-select has no selection to explain for it")


def _qwen4_exp(ctx: _Ctx) -> _Stack:
    """vllm/models/qwen4_exp/nvidia Qwen4ExpDecoderLayer: "linear_attention"
    layers run Gated DeltaNet; "indexed_attention" / "qwen_sparse_attention"
    layers build Qwen4ExpQSAAttention (its own layer and backend, no
    get_attn_backend) when indexer_n_heads is set, else Qwen3NextAttention;
    any other layer type is rejected. Read from the source: vLLM's model
    inspection fails on the CPU oracle."""
    t, n = ctx.text, _n_layers(ctx)
    total = _heads(ctx)
    heads, kv = _per_rank(total, ctx.tp, "attention heads"), _kv_per_rank(t.get("num_key_value_heads"), ctx.tp)
    head = _check_head_size(t.get("head_dim") or _hidden_over(t, heads), "head_dim")
    types = _layer_types(ctx, n) or []
    qsa = t.get("indexer_n_heads") is not None
    stack = _Stack([])
    for i in range(n):
        kind = types[i] if i < len(types) else None
        if kind == "linear_attention":
            stack.add(i, "gated_deltanet")
        elif kind in ("indexed_attention", "qwen_sparse_attention"):
            stack.add(i, "qsa_attention" if qsa else _attention(ctx, heads, kv, head))
        else:
            raise UserError(f"layer_types[{i}] is {kind!r}; vLLM {VLLM_VERSION}'s {ctx.arch} accepts only linear_attention "
                            "and indexed_attention layers")
    if qsa and "qsa_attention" in [w for _, w in stack.slots]:
        raise _no_selection(ctx, "this config", "with indexer_n_heads set, every attention layer is a "
                            "Qwen4ExpQSAAttention with its own backend, and the other layers run Gated DeltaNet")
    _note(ctx, f"{ctx.arch}: derived from vLLM's source, not checked against a vLLM build")
    return stack


def _falcon(ctx: _Ctx) -> _Stack:
    """falcon.py FalconAttention: head size hidden // heads; KV heads
    num_kv_heads with new_decoder_architecture, else 1 with multi_query,
    else the query heads; no per-layer window; ALiBi or RoPE."""
    t, n = ctx.text, _n_layers(ctx)
    total = _heads(ctx)
    if t.get("new_decoder_architecture"):
        kv_total = t.get("num_kv_heads")
    elif t.get("multi_query"):
        kv_total = 1
    else:
        kv_total = total
    head = _check_head_size(_hidden_over(t, total), "hidden_size // num_attention_heads")
    if head * total != t.get("hidden_size"):
        raise UserError(f"hidden_size {t.get('hidden_size')} is not divisible by num_attention_heads {total}; "
                        "vLLM's FalconAttention asserts it")
    # FalconConfig.rotary is `not alibi`: both branches build Attention
    # without cache_config (only the third, unreachable one passes it)
    layer = _attention(ctx, _per_rank(total, ctx.tp, "attention heads"), _kv_per_rank(kv_total, ctx.tp), head,
                       cache_config=False)
    _note(ctx, "Falcon's Attention gets no cache_config: kv_cache_dtype auto and no model-level sliding window "
               "whatever the engine's cache says")
    return _Stack([(i, layer) for i in range(n)])


def _granite(ctx: _Ctx, head_rule: str) -> _Stack:
    """granite.py granite_layer_attn_params (also granitemoe.py): the
    window on layer_types' sliding layers; a sink per head when the config
    has layer_types, unless attention_sinks says otherwise. Head size:
    head_dim or hidden // heads (granite.py), hidden // heads always
    (granitemoe.py)."""
    t, n = ctx.text, _n_layers(ctx)
    total = _heads(ctx)
    heads, kv = _per_rank(total, ctx.tp, "attention heads"), _kv_per_rank(_kv_heads_or(t, total), ctx.tp)
    if head_rule == "head_dim":
        head = _head_dim_or_hidden(t, total)
    else:
        head = _hidden_over(t, total)
    _check_head_size(head, "head_dim")
    types = _layer_types(ctx, n)
    sinks = bool(t.get("attention_sinks") if t.has("attention_sinks") else types is not None)
    stack = _Stack([])
    for i in range(n):
        stack.add(i, _attention(ctx, heads, kv, head, window=_window_from_types(ctx, types, i), sinks=sinks))
    if sinks:
        _note(ctx, "Granite: layer_types without attention_sinks false means a learned sink per head")
    return stack


def _chatglm(ctx: _Ctx) -> _Stack:
    """chatglm.py GLMAttention: head size hidden // heads; KV heads
    multi_query_group_num only with multi_query_attention, else the query
    heads; no per-layer window."""
    t, n = ctx.text, _n_layers(ctx)
    total = _heads(ctx)
    kv_total = t.get("multi_query_group_num") if t.get("multi_query_attention") else total
    head = _check_head_size(_hidden_over(t, total), "hidden_size // num_attention_heads")
    # GLMTransformer hands vllm_config.cache_config down to every GLMAttention (unlike Falcon's layers)
    layer = _attention(ctx, _per_rank(total, ctx.tp, "attention heads"), _kv_per_rank(kv_total, ctx.tp), head)
    return _Stack([(i, layer) for i in range(n)])


def _minicpm3(ctx: _Ctx) -> _Stack:
    """minicpm3.py MiniCPM3Attention: MLA-shaped projections but a plain
    ``Attention`` over qk_nope + qk_rope, one KV head per query head."""
    t, n = ctx.text, _n_layers(ctx)
    heads = _per_rank(_heads(ctx), ctx.tp, "attention heads")
    head = _check_head_size((t.get("qk_nope_head_dim") or 0) + (t.get("qk_rope_head_dim") or 0),
                            "qk_nope_head_dim + qk_rope_head_dim")
    layer = _attention(ctx, heads, heads, head)
    return _Stack([(i, layer) for i in range(n)])


def _deepseek(ctx: _Ctx) -> _Stack:
    """deepseek_v2.py DeepseekV2DecoderLayer: plain MHA when the qk dims are
    zero (or DeepSeek-V1), MLA when model_config.use_mla, else MHA over
    qk_nope + qk_rope with one KV head per query head."""
    t, n, tp = ctx.text, _n_layers(ctx), ctx.tp
    nope, rope = t.get("qk_nope_head_dim") or 0, t.get("qk_rope_head_dim") or 0
    mha = ctx.hf.model_type == "deepseek" or (nope == 0 and rope == 0)
    given = t.get("num_attention_heads")
    if ctx.use_mla and not mha and given == 0 and not isinstance(given, bool):
        # the MLA path sizes nothing by dividing by the head count: vLLM builds every layer with 0
        # query heads and asks get_attn_backend with num_heads 0 (checked against its build)
        layer = _mla(ctx, 0, sparse=t.has("index_topk"))
        return _Stack([(i, layer) for i in range(n)])
    total = _heads(ctx)
    stack = _Stack([])
    if mha:
        kv = _kv_per_rank(t.get("num_key_value_heads"), tp)
        head = _check_head_size(_hidden_over(t, total), "hidden_size // num_attention_heads")
        layer = _attention(ctx, _per_rank(total, tp, "attention heads"), kv, head)
        if ctx.hf.get("rswa_window") is not None:
            _note(ctx, "rswa_window: DeepseekAttention builds RSWAAttention (same selector inputs)")
    elif ctx.use_mla:
        layer = _mla(ctx, total, sparse=t.has("index_topk"))
    else:
        heads = _per_rank(total, tp, "attention heads")
        causal = bool(t.get("is_causal", True))
        layer = _self_attention(ctx, causal, heads, heads, _check_head_size(nope + rope, "qk_nope + qk_rope"))
    for i in range(n):
        stack.add(i, layer)
    return stack


def _deepseek_v32(ctx: _Ctx) -> _Stack:
    """vllm/models/deepseek_v32 (CUDA): DeepseekV32Attention is an
    MLAAttention with use_sparse=True on every layer."""
    if ctx.text.get("kv_lora_rank") is None:
        raise UserError("DeepSeek-V3.2 config has no kv_lora_rank; MLA needs it")
    layer = _mla(ctx, _heads(ctx), sparse=True)
    return _Stack([(i, layer) for i in range(_n_layers(ctx))])


def _flint(ctx: _Ctx) -> _Stack:
    """vllm/models/flint FlintAttention: Attention with a learned sink on every
    layer, config.head_dim, the window on layer_types' sliding layers. Its
    fused kernel asserts the layer's impl is FlashInferImpl: with any other
    backend selected, vLLM fails to load the model."""
    t, n = ctx.text, _n_layers(ctx)
    heads = _per_rank(_heads(ctx), ctx.tp, "attention heads")
    kv = _kv_per_rank(t.get("num_key_value_heads"), ctx.tp)
    head = _check_head_size(t.get("head_dim") or 0, "head_dim")
    types = t.get("layer_types") or []
    _note(ctx, "Flint's fused attention kernel asserts FLASHINFER was selected (FlashInferImpl): vLLM cannot "
               "load it with any other backend")
    return _Stack([
        (i, _attention(ctx, heads, kv, head, sinks=True,
                       window=t.get("sliding_window") if types[i] == "sliding_attention" else None))
        for i in range(n)
    ])


_HYV4_SPARSE = frozenset({"sparse_attention", "sparse", "indexed_attention", "deepseek_sparse_attention"})


def _hy_v4(ctx: _Ctx) -> _Stack:
    """vllm/models/hy_v4 (CUDA) HYV4MLAAttention: MLAAttention on every layer,
    sparse (DSA) where the config has index_topk and layer_types names the
    layer sparse. A sparse layer first probes get_attn_backend with the same
    inputs; with learnable_sink the layer asks once more and, when the pick
    cannot apply sinks, binds HYV4's own FLASHMLA_SPARSE subclass instead."""
    t, n = ctx.text, _n_layers(ctx)
    if t.get("kv_lora_rank") is None:
        raise UserError("HY-V4 config has no kv_lora_rank; its MLA layers need it")
    types = t.get("layer_types") or []
    sparse_on = t.get("index_topk") is not None
    heads = _heads(ctx)
    if t.get("learnable_sink", True):
        _note(ctx, "HY-V4 learnable_sink: each layer re-asks the selector and, where the pick cannot apply "
                   "sinks, runs HYV4's sink-capable FLASHMLA_SPARSE subclass (if valid) instead of the pick")
    return _Stack([
        (i, _mla(ctx, heads, sparse=sparse_on and i < len(types) and types[i] in _HYV4_SPARSE))
        for i in range(n)
    ])


def _kimi_linear(ctx: _Ctx) -> _Stack:
    """vllm/models/kimi_k3/nvidia/model.py (KimiLinearForCausalLM on CUDA):
    layers listed (1-based) in linear_attn_config["kda_layers"] run Kimi
    Delta Attention, not an attention backend; the others build
    MultiHeadLatentAttention, which asks get_attn_backend with use_mla and
    the per-rank head count. Read from the source: the meta-device oracle
    cannot build this model (its DSA handlers need a CUDA driver)."""
    t, n = ctx.text, _n_layers(ctx)
    if t.get("kv_lora_rank") is None:
        raise UserError("Kimi-Linear config has no kv_lora_rank; its MLA layers need it")
    linear = t.get("linear_attn_config") or ctx.hf.get("linear_attn_config")
    kda = set((linear or {}).get("kda_layers") or []) if isinstance(linear, dict) else set()
    layer = _mla(ctx, _heads(ctx), sparse=False)
    if len(kda) < n and not t.get("mla_use_nope"):
        # KimiLinearConfig defaults mla_use_nope to False; the CUDA MLA layer asserts it
        raise UserError(f"Kimi-Linear MLA layers need mla_use_nope true; vLLM {VLLM_VERSION}'s CUDA model asserts it")
    stack = _Stack([])
    for i in range(n):
        stack.add(i, "kimi_delta_attention" if (i + 1) in kda else layer)
    _note(ctx, "Kimi-Linear: derived from vLLM's source, not checked against a vLLM build")
    return stack


def _longcat_flash(ctx: _Ctx) -> _Stack:
    """longcat_flash.py FlashDecoderLayer: each of the num_layers decoder
    layers holds two DeepseekV2MLAAttention sub-layers (self_attn.0 and
    self_attn.1), both MLAAttention with the same inputs."""
    t = ctx.text
    n = t.get("num_layers")
    if not isinstance(n, int) or n <= 0:
        raise UserError(f"num_layers is {n!r}; LongCat-Flash configs need a positive decoder layer count")
    if not ctx.use_mla:
        raise UserError("LongCat-Flash builds MLA attention only; this config has no kv_lora_rank or is not causal")
    layer = _mla(ctx, _heads(ctx), sparse=t.has("index_topk"))
    stack = _Stack([])
    for i in range(n):
        stack.add(i, layer)
        stack.add(i, layer)
    _note(ctx, "LongCat-Flash: two MLA attention sub-layers per decoder layer")
    return stack


def _decilm(ctx: _Ctx) -> _Stack:
    """nemotron_nas.py DeciLMDecoderLayer (Llama-3.x-Nemotron Super/Ultra):
    block_configs[i].attention.no_op drops the layer's attention; otherwise
    a LlamaAttention with num_attention_heads // n_heads_in_group KV heads,
    head_dim or hidden // heads, the window from layer_types. The config
    class is the checkpoint's remote code, so this is derived from vLLM's
    source, not checked against a vLLM build."""
    t, n = ctx.text, _n_layers(ctx)
    total = _heads(ctx)
    blocks = t.get("block_configs")
    if not isinstance(blocks, list) or len(blocks) < n:
        raise UserError(f"block_configs must list all {n} layers for {ctx.arch} (nemotron_nas.py reads one per layer)")
    heads = _per_rank(total, ctx.tp, "attention heads")
    head = _check_head_size(t.get("head_dim") or _hidden_over(t, total), "head_dim")
    types = _layer_types(ctx, n)
    stack = _Stack([])
    for i in range(n):
        attention = blocks[i].get("attention") if isinstance(blocks[i], dict) else None
        if not isinstance(attention, dict):
            raise UserError(f"block_configs[{i}] has no attention entry")
        if attention.get("no_op"):
            stack.add(i, "no_op_attention")
            continue
        group = attention.get("n_heads_in_group")
        if not isinstance(group, int) or group <= 0:
            raise UserError(f"block_configs[{i}].attention.n_heads_in_group is {group!r}; it needs a positive count")
        kv = _kv_per_rank(total // group, ctx.tp)
        stack.add(i, _attention(ctx, heads, kv, head, window=_window_from_types(ctx, types, i)))
    _note(ctx, "DeciLM / Nemotron-NAS: derived from vLLM's nemotron_nas.py, not checked against a vLLM build "
               "(its config class is the checkpoint's remote code)")
    return stack


def _mimo_v2(ctx: _Ctx) -> _Stack:
    """mimo_v2.py MiMoV2FlashDecoderLayer: hybrid_layer_pattern[i] == 1 builds
    a sliding layer from the swa_* sizes (window sliding_window_size, a sink
    per head with add_swa_attention_sink_bias), 0 a full layer from the
    plain sizes; the layer sets cache_config.sliding_window to None first, so
    full layers get no window. A layer whose v head size differs from its
    head size hands Attention a fixed FLASH_ATTN_DIFFKV / TRITON_ATTN_DIFFKV
    backend (MiMoV2Attention), so get_attn_backend is never asked for it."""
    t, n, tp = ctx.text, _n_layers(ctx), ctx.tp
    pattern = t.get("hybrid_layer_pattern")
    if not isinstance(pattern, list) or len(pattern) < n:
        raise UserError(f"{ctx.arch} needs hybrid_layer_pattern with one entry per layer (1 = sliding, 0 = full)")
    no_cache_window = ctx._replace(cache_window=None)
    stack, diffkv = _Stack([]), []
    for i in range(n):
        swa = pattern[i] == 1
        prefix = "swa_" if swa else ""
        heads = t.get(f"{prefix}num_attention_heads")
        kv = t.get(f"{prefix}num_key_value_heads")
        head = t.get(f"{prefix}head_dim")
        if not all(isinstance(v, int) and v > 0 for v in (heads, kv, head)):
            raise UserError(f"{ctx.arch} layer {i} needs positive {prefix}num_attention_heads, "
                            f"{prefix}num_key_value_heads and {prefix}head_dim")
        head_v = t.get(f"{prefix}v_head_dim") if t.get(f"{prefix}v_head_dim") is not None else head
        window = None
        if swa:
            if not t.has("sliding_window_size"):
                raise UserError(f"{ctx.arch}: sliding layers read sliding_window_size, which the config lacks")
            size = t.get("sliding_window_size")
            window = size if size is not None and size > -1 else None
        # MiMoV2Attention: heads // tp (no divisibility check), KV heads at least one per rank
        layer = _attention(no_cache_window, heads // tp, max(1, kv // tp), head, window=window,
                           sinks=swa and bool(t.get("add_swa_attention_sink_bias", False)), head_v=head_v)
        if head_v != head:
            diffkv.append(i)
            stack.add(i, "diffkv_attention")
        else:
            stack.add(i, layer)
    if diffkv and len(diffkv) == n:
        raise _no_selection(ctx, "this model", "every layer's v head size differs from its head size, so "
                            "MiMoV2Attention binds FLASH_ATTN_DIFFKV (when FA3/4 supports the device, head sizes "
                            "and sinks) or else TRITON_ATTN_DIFFKV itself, unless --attention-backend names a "
                            "*_DIFFKV backend")
    if diffkv:
        _note(ctx, f"MiMo-V2 layers {diffkv}: v head size != head size, so MiMoV2Attention binds "
                   "FLASH_ATTN_DIFFKV / TRITON_ATTN_DIFFKV without get_attn_backend (listed, not selected)")
    return stack


def _llama4(ctx: _Ctx) -> _Stack:
    """llama4.py Llama4Attention: config.head_dim; no_rope_layers[i] == 0 marks
    a NoPE layer (plain ``Attention``); the RoPE layers, when
    attention_chunk_size is set, build ``ChunkedLocalAttention``, which asks
    get_attn_backend with head size, dtype and cache dtype only (no window,
    sinks, mm-prefix or per-head scales) and wraps the answer in a
    chunked-local subclass."""
    t, n = ctx.text, _n_layers(ctx)
    heads = _per_rank(_heads(ctx), ctx.tp, "attention heads")
    kv = _kv_per_rank(t.get("num_key_value_heads"), ctx.tp)
    head = _check_head_size(t.get("head_dim") or 0, "head_dim")
    no_rope = t.get("no_rope_layers")
    if not isinstance(no_rope, list) or len(no_rope) < n:
        raise UserError(f"{ctx.arch} reads no_rope_layers[i] for each of its {n} layers (0 = NoPE layer)")
    chunk = t.get("attention_chunk_size")
    stack = _Stack([])
    for i in range(n):
        if no_rope[i] != 0 and chunk:
            stack.add(i, _bare(heads, kv, head, "decoder"))
        else:
            stack.add(i, _attention(ctx, heads, kv, head))
    if chunk:
        _note(ctx, f"Llama-4 RoPE layers run chunked local attention (chunks of {chunk} tokens): "
                   "ChunkedLocalAttention wraps the backend get_attn_backend picks from head size and dtype")
    return stack


def _hrm_text(ctx: _Ctx) -> _Stack:
    """hrm_text.py HrmTextAttention: the L and H stacks share their weights
    across recurrence steps, but each (step, layer-in-stack) pair builds its
    own ``PrefillPrefixLMAttention`` numbered step * num_layers_per_stack +
    layer (one per num_hidden_layers slot). That class asks get_attn_backend
    with head size, dtype, cache dtype and attn_type DECODER only, then wraps
    the answer as an encoder-only (non-causal prefill) backend. MHA: the KV
    heads are the query heads."""
    t = ctx.text
    per_stack, high, low = t.get("num_layers_per_stack"), t.get("H_cycles"), t.get("L_cycles")
    if not all(isinstance(v, int) and v > 0 for v in (per_stack, high)) or not isinstance(low, int) or low < 0:
        raise UserError(f"{ctx.arch} needs positive num_layers_per_stack and H_cycles and a L_cycles count")
    total = _heads(ctx)
    heads = _per_rank(total, ctx.tp, "attention heads")
    head = _check_head_size(t.get("head_dim") or _hidden_over(t, total), "head_dim")
    layer = _bare(heads, heads, head, "decoder")
    check_layer_count(per_stack * high * (low + 1), "num_layers_per_stack x H_cycles x (L_cycles + 1)")
    _note(ctx, f"HRM-Text: {high} x ({low} + 1) recurrence steps over {per_stack} layers per stack, one "
               "attention (own KV cache) per step and layer; prefill attends bidirectionally")
    return _Stack([(i, layer) for i in range(per_stack * high * (low + 1))])


def _step3p5(ctx: _Ctx) -> _Stack:
    """step3p5.py Step3p5DecoderLayer: cache_config.sliding_window is cleared
    first; layer_types (then mtp_layer_types) name each layer; sliding layers
    take num_sliding_attention_heads (Step3p7TextConfig fills it) and the
    window; KV heads are num_attention_groups; head_dim or hidden // heads."""
    t, n = ctx.text, _n_layers(ctx)
    types = _one_per_layer(list(t.get("layer_types") or []) + list(t.get("mtp_layer_types") or []), n)
    if t.get("att_impl_type", "GQA") != "GQA":
        raise UserError(f"{ctx.arch}: vLLM supports only att_impl_type GQA, not {t.get('att_impl_type')!r}")
    table = t.get("per_layer_config") or {}
    no_cache_window = ctx._replace(cache_window=None)
    kv = _kv_per_rank(t.get("num_key_value_heads"), ctx.tp)
    stack = _Stack([])
    for i in range(n):
        sliding = types[i] == "sliding_attention"
        total = t.get("num_sliding_attention_heads") if sliding else None
        total = total or table.get(i, {}).get("num_attention_heads") or _heads(ctx)
        head = _check_head_size(t.get("head_dim") or _hidden_over(t, total), "head_dim")
        window = t.get("sliding_window") if sliding else None
        stack.add(i, _attention(no_cache_window, _per_rank(total, ctx.tp, "attention heads"), kv, head,
                                window=window))
    return stack


def _glm5_next(ctx: _Ctx) -> _Stack:
    """vllm/models/glm5next Glm5NextDecoderLayer: layer_types "linear_attention"
    builds Glm5NextLinearAttention (a gated-delta-net mixer, no attention
    backend); every other layer Glm5NextMLAAttention, an MLA wrapper that is
    sparse (DSA indexer) when index_topk is set."""
    t, n = ctx.text, _n_layers(ctx)
    if t.get("kv_lora_rank") is None or t.get("v_head_dim") is None:
        raise UserError(f"{ctx.arch}: its MLA layers need kv_lora_rank and v_head_dim")
    sparse = t.get("index_topk") is not None
    if sparse and not t.get("index_kpool_always_select_tail"):
        # _validate_supported_config raises NotImplementedError
        raise UserError(f"vLLM {VLLM_VERSION}'s {ctx.arch} sparse indexer requires index_kpool_always_select_tail true")
    types = t.get("layer_types") or []
    layer = _mla(ctx, _heads(ctx), sparse=sparse)
    return _Stack([(i, "linear_attention" if i < len(types) and types[i] == "linear_attention" else layer)
                   for i in range(n)])


def _attention_free(kind: str):
    """mamba.py / mamba2.py: every layer is a state-space mixer; vLLM
    builds no attention layer and never calls get_attn_backend."""
    def build(ctx: _Ctx) -> _Stack:
        return _Stack([(i, kind) for i in range(_n_layers(ctx))])
    return build


def _bailing_moe_v25(ctx: _Ctx) -> _Stack:
    """bailing_moe_linear.py BailingMoeV25Model: is_linear_layer(i,
    layer_group_size) -- every layer but each group's last runs Bailing
    linear attention (no attention backend); the group's last builds
    BailingMoeV25MLAAttention (MultiHeadLatentAttentionWrapper: use_mla).
    layer_group_size is getattr(config, ..., 1); 0 or less: all MLA."""
    n = _n_layers(ctx)
    if ctx.text.get("kv_lora_rank") is None:
        raise UserError(f"{ctx.arch} config has no kv_lora_rank; its MLA layers need it")
    group = ctx.hf.get("layer_group_size", 1)
    layer = _mla(ctx, _heads(ctx), sparse=False)
    stack = _Stack([])
    for i in range(n):
        linear = group > 0 and (i + 1) % group != 0
        stack.add(i, "linear_attention" if linear else layer)
    return stack


def _bailing_moe_v3(ctx: _Ctx) -> _Stack:
    """bailing_moe_v3.py BailingMoeV3DecoderLayer: _is_kda_layer(i,
    layer_group_size, num_hidden_layers) -- each full group's last layer and
    every trailing layer past the last full group build
    BailingMoeV3MLAAttention (MultiHeadLatentAttentionWrapper: use_mla); the
    rest run Kimi Delta Attention (a mamba-style mixer, no attention
    backend). The model reads config.layer_group_size directly, so 0 would
    divide by zero there."""
    n = _n_layers(ctx)
    group = ctx.text.get("layer_group_size")  # text_config under BailingMoeV3VL
    if not isinstance(group, int) or group <= 0:
        raise UserError(f"{ctx.arch} needs a positive layer_group_size; the config gives {group!r}")
    layer = _mla(ctx, _heads(ctx), sparse=False)
    kda = bailing_v3_linear_layers(n, group)
    if any(kda) and not ctx.text.get("no_kda_lora"):
        # BailingMoeV3KimiDeltaAttention.__init__ raises on a falsy no_kda_lora
        raise UserError(f"vLLM {VLLM_VERSION}'s {ctx.arch} KDA layers require no_kda_lora true; the config does not set it")
    return _Stack([(i, "kimi_delta_attention" if kda[i] else layer) for i in range(n)])


def _deepseek_v4(ctx: _Ctx) -> _Stack:
    """vllm/models/deepseek_v4/nvidia/model.py DeepseekV4DecoderLayer: the
    attention class comes from _select_dsv4_attn_cls (attention_config.backend
    and the device's major capability), and each layer's backend is that
    class's fixed backend_cls; no layer calls get_attn_backend, so there is
    no selection to mirror (checked: a vLLM build makes no such call)."""
    raise _no_selection(ctx, "DeepSeek-V4", "DeepseekV4DecoderLayer picks its own sparse-MLA attention class "
                        "(_select_dsv4_attn_cls): DeepseekV4FlashMLAAttention (FLASHMLA_SPARSE_DSV4 backend) "
                        "unless the device is SM 12.x or --attention-backend is FLASHINFER_MLA_SPARSE_DSV4, "
                        "which give the FlashInfer sparse-MLA classes")


def _deepseek_v41(ctx: _Ctx) -> _Stack:
    """vllm/models/deepseek_v41/nvidia/model.py: the V4 decoder layer again,
    with V4.1's own _select_dsv4_attn_cls (FlashMLA sparse by default,
    FlashInfer sparse MLA for FLASHINFER_MLA_SPARSE_DSV4/_DSV41, FlashMLA mega
    attention for FLASHMLA_MEGA_ATTN_DSV41); each class fixes its backend and
    no layer calls get_attn_backend. The vision tower (vl_model.py) runs its
    own encoder attention. Read from the source: the CPU oracle cannot build
    it."""
    raise _no_selection(ctx, "DeepSeek-V4.1", "its decoder layers pick their own sparse-MLA attention class "
                        "(deepseek_v41's _select_dsv4_attn_cls): DeepseekV4FlashMLAAttention by default, the "
                        "FlashInfer sparse-MLA classes for --attention-backend FLASHINFER_MLA_SPARSE_DSV41, the "
                        "FlashMLA mega-attention class for FLASHMLA_MEGA_ATTN_DSV41")


def _dots3_note(ctx: _Ctx) -> _Stack:
    """vllm/models/dots3_note/nvidia/model.py: sliding layers build an
    MLAAttention with attn_backend=Dots3NoteTritonMLABackend; full layers
    build DeepSeek's sparse MLA layer (whose get_attn_backend answer is then
    dropped) and replace its attention with Dots3NotePaddedMLAAttention,
    fixed to Dots3NotePaddedSparseBackend. No layer runs what the selector
    picks. Read from the source: the CPU oracle cannot inspect the model."""
    raise NoVllmSelection(f"{ctx.arch}: vLLM {VLLM_VERSION} runs fixed backends on every Dots3Note layer "
                          "(Dots3NoteTritonMLABackend on sliding layers, Dots3NotePaddedSparseBackend on full ones, "
                          "whose inner DeepSeek sparse-MLA selection is discarded); attn-select has no selection to "
                          "explain for it")


def _step5(ctx: _Ctx) -> _Stack:
    """vllm/models/step5/nvidia/model.py Step5Attention: each layer hands
    Attention a fixed backend (Step5DSAAttentionBackend on the sparse
    full-attention layers, Step5SplitKVFlashAttentionBackend on the others),
    so no layer calls get_attn_backend; a checkpoint without a sparse_config
    section is rejected. Read from the source: the CPU oracle cannot import
    its Triton kernels."""
    if ctx.text.get("sparse_config") is None and ctx.hf.get("sparse_config") is None:
        raise UserError(f"{ctx.arch}: vLLM {VLLM_VERSION} requires a sparse_config section (dense-only Step5 "
                        "checkpoints are not supported)")
    raise _no_selection(ctx, "Step5", "each layer binds its own backend (Step5DSAAttentionBackend on sparse "
                        "full-attention layers, Step5SplitKVFlashAttentionBackend on the rest)")


def _inkling(ctx: _Ctx) -> _Stack:
    """vllm/models/inkling/nvidia InklingAttention: its own attention layer (a
    FA4 relative-position kernel) whose get_attn_backend method returns
    FlashAttentionBackend for the KV-cache metadata; it is no vLLM Attention
    and never asks the selector (checked: a vLLM build makes no call)."""
    raise _no_selection(ctx, "Inkling", "InklingAttention runs its own FA4 kernel and fixes "
                        "FlashAttentionBackend for the KV cache")


def _minimax_m3(ctx: _Ctx) -> _Stack:
    """vllm/models/minimax_m3/nvidia MiniMaxM3DecoderLayer: layers whose
    sparse_attention_config.sparse_attention_freq entry is non-zero build
    MiniMaxM3SparseAttention (its own layer and MiniMaxM3SparseBackend, no
    get_attn_backend); the others MiniMaxM3Attention, a plain Attention over
    config.head_dim with no per-layer window."""
    t, n = ctx.text, _n_layers(ctx)
    sparse_cfg = t.get("sparse_attention_config") or {}
    freq = sparse_cfg.get("sparse_attention_freq") if isinstance(sparse_cfg, dict) else None
    sparse = {i for i, f in enumerate(freq or []) if f != 0}
    heads = _per_rank(_heads(ctx), ctx.tp, "attention heads")
    kv = _kv_per_rank(t.get("num_key_value_heads"), ctx.tp)
    head = _check_head_size(t.get("head_dim") or 0, "head_dim")
    layer = _attention(ctx, heads, kv, head)
    if sparse:
        _note(ctx, "MiniMax-M3 sparse layers run MiniMaxM3SparseAttention with its own backend "
                   "(listed, not selected)")
    return _Stack([(i, "minimax_m3_sparse_attention" if i in sparse else layer) for i in range(n)])


def _encoder_only(ctx: _Ctx) -> _Stack:
    """EncoderOnlyAttention on every layer, head hidden // heads, KV heads =
    query heads, both per rank: bert.py BertSelfAttention, roberta.py (BertModel's
    layers with absolute positions, JinaRobertaModel's with rotary) and
    bert_with_rope.py BertWithRopeAttention all build this."""
    total = _heads(ctx)
    heads = _per_rank(total, ctx.tp, "attention heads")
    head = _check_head_size(_hidden_over(ctx.text, total), "hidden_size // num_attention_heads")
    layer = _bare(heads, _kv_per_rank(total, ctx.tp), head, "encoder_only")
    return _Stack([(i, layer) for i in range(_n_layers(ctx))])


def _bert(ctx: _Ctx) -> _Stack:
    """bert.py: encoder-only layers, absolute positions only."""
    if ctx.text.get("position_embedding_type", "absolute") != "absolute":
        # bert.py BertEmbedding raises for anything else
        raise UserError("vLLM's BERT supports only position_embedding_type 'absolute'")
    return _encoder_only(ctx)


def _bert_with_rope(ctx: _Ctx) -> _Stack:
    """bert_with_rope.py (Nomic-BERT, GTE): encoder-only layers; the attention
    asserts an exact head split."""
    total, hidden = _heads(ctx), ctx.text.get("hidden_size")
    if isinstance(hidden, int) and hidden % total:
        raise UserError(f"hidden_size {hidden} is not a multiple of num_attention_heads {total}: "
                        "vLLM's BertWithRopeAttention asserts an exact split")
    return _encoder_only(ctx)


def _modernbert(ctx: _Ctx) -> _Stack:
    """modernbert.py ModernBertAttention: EncoderOnlyAttention with
    config.num_attention_heads as given (vLLM does not divide it by the
    tensor-parallel size), head hidden // heads; its sliding layers' window
    (sliding_window + 1) stays inside the layer, out of get_attn_backend."""
    total = _heads(ctx)
    head = _check_head_size(_hidden_over(ctx.text, total), "hidden_size // num_attention_heads")
    types = _layer_types(ctx, _n_layers(ctx)) or []
    if "sliding_attention" in types:
        _note(ctx, f"ModernBERT's sliding layers attend within {ctx.text.get('sliding_window', 0) + 1} tokens "
                   "(local_attention // 2 + 1); EncoderOnlyAttention passes no window to get_attn_backend")
    # built without cache_config: EncoderOnlyAttention asks with kv_cache_dtype "auto"
    layer = _bare(total, total, head, "encoder_only")._replace(kv_cache_dtype="auto")
    return _Stack([(i, layer) for i in range(_n_layers(ctx))])


def _whisper(ctx: _Ctx) -> tuple[_Stack, _Stack]:
    """whisper.py: decoder layers hold a self-attention (``Attention``,
    DECODER) and a cross-attention (``CrossAttention``); encoder layers run
    ``MMEncoderAttention``, which picks its kernel through
    get_vit_attn_backend, not get_attn_backend."""
    t, tp = ctx.hf, ctx.tp
    d_model = t.get("d_model")
    dec_total = t.get("decoder_attention_heads")
    dec_heads = _per_rank(dec_total, tp, "decoder attention heads")
    kv = _kv_per_rank(dec_total, tp)
    if not isinstance(d_model, int):
        raise UserError(f"d_model is {d_model!r}; Whisper configs need the model width")
    head = _check_head_size(d_model // dec_total, "d_model // decoder_attention_heads")
    if head * dec_total != d_model:
        raise UserError(f"d_model {d_model} is not divisible by decoder_attention_heads {dec_total}")
    decoder = _Stack([])
    for i in range(t.get("decoder_layers") or 0):
        decoder.add(i, _attention(ctx, dec_heads, kv, head))
        decoder.add(i, _bare(dec_heads, kv, head, "encoder_decoder"))
    encoder = _Stack([(i, "mm_encoder_attention") for i in range(t.get("encoder_layers") or 0)])
    _note(ctx, "encoder self-attention uses MMEncoderAttention (get_vit_attn_backend, not "
               "get_attn_backend): listed, not selected; layer numbers count within each stack")
    return decoder, encoder


# transformers 5.20's model types whose attention module has MLA's
# projections (kv_a_proj_with_mqa, kv_b_proj): the only ones the Transformers
# backend's MLAFuser matches, so the only ones it builds MLAAttention for
TRANSFORMERS_MLA_MODEL_TYPES = frozenset({
    "axk1", "axk2", "bailing_hybrid", "deepseek_v2", "deepseek_v3", "deepseek_v32", "glm4_moe_lite", "glm5_next",
    "glm5_next_text", "glm_moe_dsa", "hy_v4", "kimi_linear", "longcat_flash", "minicpm3", "mistral4", "youtu"})


# transformers 5.20's model types of the architectures vLLM 0.33.0 serves
# through the Transformers backend (registry.py), none with MLA projections
_TRANSFORMERS_BACKEND_TYPES = frozenset({
    "arcee", "cwm", "flex_olmo", "glm", "gpt_bigcode", "gpt_neox", "hunyuan_v1_dense", "hunyuan_v1_moe", "jais2",
    "kolibri1", "mellum", "olmo", "olmo2", "olmo3", "phi", "seed_oss", "smollm3", "starcoder2", "vaultgemma"})


def _modeling_may_have_mla(model_type: str) -> bool:
    """Whether the Transformers backend's MLAFuser can match the model's
    attention: transformers' MLA model types do; the other transformers
    classes known here do not; a model type transformers does not have is
    remote code, assumed MLA-shaped when its config carries a kv_lora_rank."""
    # vLLM loads kimi_k2 as DeepseekV3Config (_CONFIG_REGISTRY): transformers picks the modeling code by
    # the config class, so DeepSeek-V3's, with MLA projections
    model_type = "deepseek_v3" if model_type == "kimi_k2" else model_type
    known = declared(model_type) or model_type in _HF_CLASSES or model_type in _TRANSFORMERS_BACKEND_TYPES
    return model_type in TRANSFORMERS_MLA_MODEL_TYPES or not known


def _mla_fallback_head_size(ctx: _Ctx) -> int:
    """TransformersBase._create_attention_instances when model_config.use_mla
    (any kv_lora_rank) but no module fused as MLA: _get_attn_cls warns, sets
    VLLM_MLA_DISABLE=1 and returns Attention; the head size becomes
    qk_nope_head_dim + qk_rope_head_dim (getattr default 0) when that sum is
    non-zero, else stays the model's."""
    t = ctx.text
    nope, rope = t.get("qk_nope_head_dim", 0), t.get("qk_rope_head_dim", 0)
    if not all(isinstance(v, int) for v in (nope, rope)):
        raise UserError(f"qk_nope_head_dim {nope!r} + qk_rope_head_dim {rope!r}: vLLM {VLLM_VERSION}'s Transformers "
                        f"backend adds them for its head size (the config has a kv_lora_rank, "
                        f"{t.get('kv_lora_rank')!r}, and {ctx.arch} no MLA layers) and fails on these values; "
                        "remove kv_lora_rank or fix them")
    _note(ctx, f"kv_lora_rank {t.get('kv_lora_rank')!r} makes model_config.use_mla true on the Transformers backend, "
               f"but {t.model_type}'s attention has no MLA projections: vLLM falls back to Attention "
               "(and sets VLLM_MLA_DISABLE=1)")
    return _check_head_size(nope + rope or model_head_size(t, ctx.hf.model_type), "head size")


# transformers 5.20's attention modules of these model types size their heads as hidden // heads and
# never read config.head_dim (GPTBigCodeAttention, GPTNeoXAttention): any head_dim builds there, and
# vLLM's head size alone takes it (hidden // heads for one <= 0). Starcoder2Attention reads it as
# `head_dim or hidden // heads`: 0 falls back, a negative size fails. Every other modeling file reads
# it as given and scales by head_dim ** -0.5, which fails on 0 (checked through vLLM 0.33.0's build
# on each Transformers-backend model type and on llama / qwen2 as TransformersForCausalLM).
_IGNORES_HEAD_DIM = frozenset({"gpt_bigcode", "gpt_neox"})
_ZERO_HEAD_DIM_FALLS_BACK = _IGNORES_HEAD_DIM | {"starcoder2"}
# The Transformers-backend model types whose config keeps a null head_dim as null (written so in
# config.json; HunYuan's classes default to it) while their attention reads it as a size
# (``head_dim ** -0.5``): vLLM's build fails with a TypeError. The other backend classes fill a null one
# from the sizes (arcee, jais2, seed_oss), refuse it (cwm, kolibri1, mellum, vaultgemma: a strict int),
# or do not read it (the three above). Checked through vLLM 0.33.0's build.
_NULL_HEAD_DIM_KEPT = frozenset({"flex_olmo", "glm", "hunyuan_v1_dense", "hunyuan_v1_moe", "olmo", "olmo2", "olmo3",
                                 "phi", "smollm3"})
_NULL_HEAD_DIM_DEFAULT = frozenset({"hunyuan_v1_dense", "hunyuan_v1_moe"})
# transformers' token embedding of these takes no padding_idx (GPTNeoXModel.embed_in, GPTBigCodeModel.wte)
_NO_PADDING_IDX = frozenset({"gpt_bigcode", "gpt_neox"})


def _check_backend_top_k(arch: str, t: HFView) -> None:
    """The backend's MoE classes (TransformersMoEForCausalLM and kin) replace
    the modeling code's experts after reading the config's experts per token,
    and assert they found one: a config of a class that has none (a dense
    model's: LlamaConfig) and gives none fails vLLM's build."""
    if arch not in BACKEND_CLASSES or "MoE" not in arch or not is_config_type(t.model_type):
        return
    if t.model_type in HAS_TOP_K or any(t.get(name) is not None for name in TOP_K_NAMES):
        return
    raise NoVllmSelection(f"{arch} replaces the model's experts with vLLM's and reads how many experts a token "
                          f"takes (num_experts_per_tok), which the config does not give and the {t.model_type} "
                          f"config class has none of, so vLLM {VLLM_VERSION} fails building it (AssertionError): "
                          "add num_experts_per_tok, or name TransformersForCausalLM for a dense model")


def _check_backend_embedding(t: HFView) -> None:
    """The Transformers backend builds transformers' own model first (on the
    meta device), so its token embedding is ``nn.Embedding(vocab_size,
    hidden, padding_idx=pad_token_id)``: torch asserts -vocab_size <=
    pad_token_id < vocab_size. The pad id is config.json's, else the class
    default (PAD_TOKEN_DEFAULTS: GLM's 151329, SmolLM3's 128004, OLMo's 1)."""
    if t.model_type in _NO_PADDING_IDX:
        return
    pad = t.get("pad_token_id") if t.has("pad_token_id") else PAD_TOKEN_DEFAULTS.get(t.model_type)
    vocab = t.get("vocab_size")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (pad, vocab)) or -vocab <= pad < vocab:
        return
    given = "" if t.has("pad_token_id") else f" (the {t.model_type} config class's default)"
    raise NoVllmSelection(f"pad_token_id {pad}{given} is outside the vocabulary of {vocab}; vLLM {VLLM_VERSION}'s "
                          "Transformers backend builds transformers' token embedding with it as padding_idx, which "
                          "torch refuses (Padding_idx must be within num_embeddings): set pad_token_id below "
                          "vocab_size, or null")


def _check_backend_sizes(t: HFView) -> None:
    """transformers' modeling code sizes q_proj / k_proj as heads x head_dim
    from the config's head_dim and num_key_value_heads: a negative one fails
    building the module (vLLM's head size, hidden // heads for a head_dim
    <= 0, and its max(1, kv // tp) KV heads are never reached), and a head_dim
    of 0 fails its softmax scale (head_dim ** -0.5), but on the model types
    above."""
    null_head = t.get("head_dim") is None and (t.has("head_dim") or t.model_type in _NULL_HEAD_DIM_DEFAULT)
    if null_head and t.model_type in _NULL_HEAD_DIM_KEPT:
        raise NoVllmSelection(f"head_dim is null; transformers' {t.model_type} attention sizes and scales by it "
                              f"(head_dim ** -0.5 fails on None), so vLLM {VLLM_VERSION}'s Transformers backend cannot "
                              "build the model: set head_dim (hidden_size // num_attention_heads for most models)")
    for field in ("head_dim", "num_key_value_heads"):
        value = t.get(field)
        if not isinstance(value, int) or isinstance(value, bool):
            continue
        if field == "head_dim" and t.model_type in _IGNORES_HEAD_DIM:
            continue
        if value < 0:
            raise NoVllmSelection(f"{field} is {value}; transformers builds the model's projections with it, "
                                  f"which fails (a negative tensor size), so vLLM {VLLM_VERSION}'s Transformers "
                                  f"backend cannot build the model: fix {field}")
        if field == "head_dim" and value == 0 and t.model_type not in _ZERO_HEAD_DIM_FALLS_BACK:
            raise NoVllmSelection(f"head_dim is 0; transformers' {t.model_type} attention scales its scores by "
                                  f"head_dim ** -0.5, which fails (a division by zero), so vLLM {VLLM_VERSION}'s "
                                  "Transformers backend cannot build the model: fix head_dim or leave it out")


def _generic(ctx: _Ctx) -> _Stack:
    """Architectures without a dedicated mirror: MLA by model type, else
    Llama-style attention from the config fields, non-attention layer_types
    listed as other layers."""
    t, n = ctx.text, _n_layers(ctx)
    if ctx.arch in TRANSFORMERS_BACKEND:
        _note(ctx, f"vLLM {VLLM_VERSION} serves {ctx.arch} through its Transformers modeling backend: a layer's window "
                   "comes from layer_types (else cache_config's, for every layer) and its soft cap from "
                   "attn_logit_softcapping, as derived here")
    elif ctx.arch in BACKEND_CLASSES:
        _note(ctx, f"{ctx.arch} is vLLM {VLLM_VERSION}'s Transformers modeling backend itself: transformers' "
                   f"modeling code for {t.model_type} builds the layers, derived here as that backend makes them")
    elif ctx.arch not in REGISTERED:
        _note(ctx, f"{ctx.arch} is not in vLLM {VLLM_VERSION}'s model registry: vLLM serves it through its "
                   "Transformers modeling backend (transformers' class of that name, or auto_map's remote one); "
                   "layers derived as that backend makes them")
    else:
        _note(ctx, f"{ctx.arch} has no dedicated mirror here: layers derived from the config fields "
                   "the way Llama-style vLLM models read them")
    ignored = [k for k in _HETEROGENEOUS_KEYS if t.get(k) is not None or ctx.hf.get(k) is not None]
    if ignored and not ctx.use_mla:
        _note(ctx, f"config has {', '.join(ignored)}, which the generic derivation ignores: vLLM's model file "
                   "may give some layers other head sizes, head counts, windows or sinks than listed here")
    if t.get("attention_chunk_size"):
        # llama4.py: RoPE layers build ChunkedLocalAttention, which asks
        # get_attn_backend(head_size, dtype, kv_cache_dtype) and wraps the answer
        _note(ctx, f"attention_chunk_size {t.get('attention_chunk_size')}: RoPE layers run chunked local "
                   "attention (vLLM wraps the selected backend; its selection inputs carry no window, "
                   "sinks or mm-prefix)")
    backend = transformers_backend(ctx.arch)
    if backend:
        _check_backend_embedding(t)
        _check_backend_top_k(ctx.arch, t)
    if ctx.use_mla and (not backend or _modeling_may_have_mla(t.model_type)):
        # the Transformers backend's MLAAttention gets no indexer: never sparse
        layer = _mla(ctx, _heads(ctx), sparse=t.has("index_topk") and not backend)
        return _Stack([(i, layer) for i in range(n)])
    total = _heads(ctx)
    heads = _per_rank(total, ctx.tp, "attention heads")
    if backend:
        _check_backend_sizes(t)
    kv = _kv_per_rank(total_kv_heads(t, ctx.hf.model_type), ctx.tp)
    if ctx.use_mla:  # a kv_lora_rank on a model whose modeling code has no MLA
        head = _mla_fallback_head_size(ctx)
    else:
        head = _check_head_size(model_head_size(t, ctx.hf.model_type), "head size")
    # vLLM's model files test getattr(config, "is_causal", True)'s truthiness;
    # the Transformers backend reads the modeling code's module.is_causal,
    # which the published modeling files set True (a config's literal false
    # is kept as the encoder-only switch it is meant to be)
    causal = t.get("is_causal", True) is not False if backend else bool(t.get("is_causal", True))
    # the Transformers backend passes every layer attn_logit_softcapping;
    # elsewhere none (Llama-style model files read no soft cap)
    soft_cap = soft_cap_value(t.get("attn_logit_softcapping")) if backend else None
    # which layers attend: Jamba's layers_block_type, Nemotron-H's pattern
    # string (one character per layer), else layer_types
    kinds: list[str] | None = None
    types = None
    if t.get("layers_block_type") and _reads(t.model_type, _BLOCK_TYPE_READERS):
        kinds = list(t.get("layers_block_type"))
    elif t.get("hybrid_override_pattern") and _reads(t.model_type, _PATTERN_READERS):
        kinds = [_PATTERN_KINDS.get(ch, ch) for ch in t.get("hybrid_override_pattern")]
        n = len(kinds)
    else:
        types = _layer_types(ctx, n)
        kinds = types
    if kinds is not None and len(kinds) < n:
        raise UserError(f"the config lists {len(kinds)} layer kinds for {n} layers; give one per layer")
    every_layer = backend and t.model_type in _ATTENTION_ON_EVERY_LAYER
    if backend and kinds:
        _check_backend_layer_kinds(ctx, kinds[:n], types, every_layer)
    stack = _Stack([])
    for i in range(n):
        kind = kinds[i] if kinds else "full_attention"
        if kind in _ATTENTION_KINDS or every_layer:
            stack.add(i, _self_attention(ctx, causal, heads, kv, head, window=_window_from_types(ctx, types, i),
                                         soft_cap=soft_cap))
        else:
            stack.add(i, kind)
    return stack


# transformers 5.20.2's modeling files for the model types of the
# architectures vLLM 0.33.0 serves through its Transformers backend
# (TRANSFORMERS_BACKEND): each builds its attention module on every decoder
# layer, layer_types picking only the mask (and, for sliding_attention, the
# window vLLM passes), so a layer of any other kind is full attention there.
_ATTENTION_ON_EVERY_LAYER = frozenset({
    "arcee", "cwm", "flex_olmo", "glm", "gpt_bigcode", "gpt_neox", "hunyuan_v1_dense", "hunyuan_v1_moe", "jais2",
    "kolibri1", "mellum", "olmo", "olmo2", "olmo3", "phi", "seed_oss", "smollm3", "starcoder2", "vaultgemma"})
# Of those, the config classes with no sliding_window attribute of their own:
# _create_attention_instances reads text_config.sliding_window for a
# sliding_attention layer (AttributeError unless config.json gives one).
_NO_SLIDING_WINDOW_ATTR = frozenset({
    "arcee", "flex_olmo", "glm", "gpt_bigcode", "gpt_neox", "hunyuan_v1_dense", "hunyuan_v1_moe", "jais2", "olmo",
    "olmo2", "phi", "seed_oss"})
# And those whose rotary embedding reads rope_parameters[layer_type] for each
# type in layer_types, a mapping their config keys by full_attention /
# sliding_attention: any other type is a KeyError when the model is built.
_ROPE_PER_LAYER_TYPE = frozenset({"mellum", "olmo3"})


def _check_backend_layer_kinds(ctx: _Ctx, kinds: list[str], types: list[str] | None, every_layer: bool) -> None:
    """What the Transformers backend refuses in the layer kinds: a layer its
    modeling code builds without an attention module
    (TransformersBase._create_attention_instances), and the per-model-type
    failures above on a model type that attends on every layer."""
    model_type = ctx.text.model_type
    for i, kind in enumerate(kinds):
        if not every_layer and kind not in _ATTENTION_KINDS:
            raise UserError(
                f"vLLM {VLLM_VERSION} can serve {ctx.arch} only through its Transformers modeling backend, "
                f"which refuses it: Layer {i} ({kind}) does not dispatch through the Transformers attention "
                "interface and vLLM has no other way to handle it")
    if not every_layer or not types:
        return
    if model_type in _ROPE_PER_LAYER_TYPE:
        rope = ctx.text.get("rope_parameters")
        keys = set(rope) if isinstance(rope, dict) else set()
        unknown = sorted({k for k in types if k not in ("full_attention", "sliding_attention") and k not in keys})
        if unknown:
            raise UserError(f"layer_types names {', '.join(repr(k) for k in unknown)}: transformers' {model_type} "
                            "rotary embedding reads rope_parameters[layer_type] for each type "
                            f"(KeyError: {unknown[0]!r}), so vLLM {VLLM_VERSION}'s Transformers backend cannot build "
                            "the model; use full_attention or sliding_attention")
    if model_type in _NO_SLIDING_WINDOW_ATTR and "sliding_attention" in types and not ctx.text.has("sliding_window"):
        raise UserError(f"layer_types has sliding_attention layers but the config has no sliding_window: vLLM "
                        f"{VLLM_VERSION}'s Transformers backend reads text_config.sliding_window for them "
                        f"(AttributeError: the {model_type} config class has no attribute 'sliding_window'); add "
                        "sliding_window or drop those layer types")


# layer kinds that build an attention layer (layer_types, layers_block_type;
# "hybrid" is Zamba2's shared attention block)
_ATTENTION_KINDS = frozenset({"full_attention", "sliding_attention", "attention", "indexed_attention", "hybrid"})
# Nemotron-H hybrid_override_pattern characters (nemotron_h.py ALL_DECODER_LAYER_TYPES)
_PATTERN_KINDS = {"*": "attention", "M": "mamba", "-": "mlp", "E": "moe"}
# config fields that make some layers differ in vLLM model files we do not
# mirror (MiMo-V2's swa_*, Gemma-4-style global_*, transformers' per_layer_config)
_HETEROGENEOUS_KEYS = ("swa_head_dim", "swa_num_attention_heads", "swa_num_key_value_heads", "swa_v_head_dim",
                       "global_head_dim", "num_global_key_value_heads", "per_layer_config", "hybrid_layer_pattern",
                       "sliding_window_pattern", "add_swa_attention_sink_bias")
