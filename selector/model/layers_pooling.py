"""Step 3b for pooling, retrieval and speech models: what their vLLM model
files build per layer (``archs`` maps each architecture here). Kept apart
from ``layers`` because these wrappers mostly re-use a text backbone and
change only the attention class (decoder ``Attention`` or
``EncoderOnlyAttention``) or which config holds the sizes."""

from __future__ import annotations

from attn_select.selector.errors import UserError
from attn_select.selector.model.layers import (
    _attention,
    _bare,
    _check_head_size,
    _Ctx,
    _heads,
    _hidden_over,
    _kv_per_rank,
    _llama,
    _n_layers,
    _note,
    _one_per_layer,
    _per_layer_geometry,
    _per_rank,
    _qwen2,
    _Stack,
)


def _exact_split(ctx: _Ctx, total: int) -> int:
    """hidden_size // heads where the model file raises unless it divides."""
    hidden = ctx.text.get("hidden_size")
    if not isinstance(hidden, int):
        raise UserError("the config has no hidden_size; the text tower needs it")
    if hidden % total:
        raise UserError(f"hidden_size {hidden} is not a multiple of num_attention_heads {total}: "
                        f"{ctx.arch}'s attention raises on it")
    return _check_head_size(hidden // total, "hidden_size // num_attention_heads")


def _clip_text(ctx: _Ctx) -> _Stack:
    """clip.py CLIPEmbeddingModel: the text tower (CLIPTextTransformer) runs
    decoder ``Attention`` (causal; KV heads = query heads, head hidden // heads),
    built without cache_config (CLIPAttention passes none): the cache dtype
    "auto" and no model-level window, whatever the engine's cache says; the
    vision tower's MMEncoderAttention never calls get_attn_backend."""
    total = _heads(ctx)
    heads = _per_rank(total, ctx.tp, "attention heads")
    layer = _attention(ctx, heads, heads, _exact_split(ctx, total), cache_config=False)
    return _Stack([(i, layer) for i in range(_n_layers(ctx))])


def _siglip_text(ctx: _Ctx) -> _Stack:
    """siglip.py SiglipEmbeddingModel: the text tower (SiglipTextTransformer)
    runs ``EncoderOnlyAttention``, built without cache_config (SiglipAttention
    passes none: the cache dtype "auto"); the vision tower MMEncoderAttention."""
    total = _heads(ctx)
    heads = _per_rank(total, ctx.tp, "attention heads")
    layer = _bare(heads, heads, _exact_split(ctx, total), "encoder_only")._replace(kv_cache_dtype="auto")
    return _Stack([(i, layer) for i in range(_n_layers(ctx))])


def _gpt2(ctx: _Ctx) -> _Stack:
    """gpt2.py GPT2Attention (GPT2ForSequenceClassification's GPT2Model):
    decoder ``Attention`` with KV heads = query heads, head hidden // heads."""
    total = _heads(ctx)
    heads = _per_rank(total, ctx.tp, "attention heads")
    hidden = ctx.text.get("hidden_size")
    if not isinstance(hidden, int):
        raise UserError("the config has no n_embd / hidden_size; GPT-2 needs the model width")
    layer = _attention(ctx, heads, heads, _check_head_size(hidden // total, "n_embd // n_head"))
    return _Stack([(i, layer) for i in range(_n_layers(ctx))])


def _lfm2(bidirectional: bool):
    """lfm2.py Lfm2Model: layer_types "full_attention" layers build
    Lfm2Attention (head hidden // heads; ``EncoderOnlyAttention`` in
    Lfm2BidirectionalModel, else decoder ``Attention``), the rest short
    convolutions (no attention backend)."""
    def build(ctx: _Ctx) -> _Stack:
        t, n = ctx.text, _n_layers(ctx)
        total = _heads(ctx)
        heads = _per_rank(total, ctx.tp, "attention heads")
        kv = _kv_per_rank(t.get("num_key_value_heads") or total, ctx.tp)
        head = _check_head_size(_hidden_over(t, total), "hidden_size // num_attention_heads")
        types = _one_per_layer(t.get("layer_types") or [], n)
        layer = _bare(heads, kv, head, "encoder_only") if bidirectional else _attention(ctx, heads, kv, head)
        return _Stack([(i, layer if types[i] == "full_attention" else "short_conv") for i in range(n)])
    return build


def _jina_v5(ctx: _Ctx) -> _Stack:
    """jina.py JinaEmbeddingsV5Model: a Qwen3 decoder (-small) unless the
    config says is_decoder false (-nano, a EuroBERT encoder), which builds
    LlamaForCausalLM with is_causal False (set by
    JinaEmbeddingsV5ModelConfig): EncoderOnlyAttention on every layer."""
    if not ctx.hf.get("is_decoder", True):
        return _llama(ctx)
    return _qwen2(ctx, "head_dim")


def _gemma1(ctx: _Ctx) -> _Stack:
    """gemma.py GemmaAttention (ColPali's PaliGemma language model):
    config.head_dim, num_key_value_heads, decoder ``Attention`` with the
    model-level window; is_causal is not read."""
    t = ctx.text
    total = _heads(ctx)
    heads = _per_rank(total, ctx.tp, "attention heads")
    kv = _kv_per_rank(t.get("num_key_value_heads") or total, ctx.tp)
    layer = _attention(ctx, heads, kv, _check_head_size(t.get("head_dim") or 0, "head_dim"))
    return _Stack([(i, layer) for i in range(_n_layers(ctx))])


def _embedding_gemma2(ctx: _Ctx) -> _Stack:
    """embedding_gemma2.py EmbeddingGemma2Attention: ``Attention`` with
    attn_type ENCODER_ONLY (it passes the window to get_attn_backend);
    head size and KV heads from per_layer_config[i] (full layers wider),
    sliding layers' window sliding_window + 1 (HF's mask is inclusive)."""
    t, n = ctx.text, _n_layers(ctx)
    heads, types, table = _per_layer_geometry(ctx, n)
    stack = _Stack([])
    for i in range(n):
        layer = table.get(i, {})
        head = _check_head_size(layer.get("head_dim", t.get("head_dim")) or 0, f"layer {i} head_dim")
        kv = max(1, (layer.get("num_key_value_heads", t.get("num_key_value_heads")) or 0) // ctx.tp)
        window = t.get("sliding_window") + 1 if types[i] == "sliding_attention" else None
        stack.add(i, _attention(ctx, heads, kv, head, window=window, attn_type="encoder_only"))
    return stack


def _openai_privacy_filter(ctx: _Ctx) -> _Stack:
    """openai_privacy_filter.py OpenAIPrivacyFilterAttention: gpt-oss's
    OAIAttention (heads and KV heads plain ``// tp``) building
    EncoderOnlyAttention on every layer. EncoderOnlyAttention asks
    get_attn_backend with head size, dtype, cache dtype and ENCODER_ONLY
    only, then hands that backend to Attention.__init__, which skips its own
    selection: the module keeps the learned sinks and the window
    sliding_window + 1, but neither reaches the selection, so neither is here."""
    t, tp = ctx.text, ctx.tp
    total = _heads(ctx)
    heads = _per_rank(total, tp, "attention heads")
    kv_total = t.get("num_key_value_heads") or total
    kv = _kv_per_rank(kv_total, 1) // tp
    if kv == 0:
        raise UserError(f"tensor parallel size {tp} exceeds the {kv_total} KV heads; vLLM's OAIAttention "
                        f"would get {kv_total} // {tp} = 0 KV heads per rank and fail")
    if t.get("sliding_window") is None:
        raise UserError("sliding_window is null; OpenAIPrivacyFilterAttention adds 1 to it and fails")
    head = _check_head_size(t.get("head_dim") or _hidden_over(t, total), "head_dim")
    _note(ctx, f"OpenAI Privacy Filter: every layer is bidirectional within {t.get('sliding_window') + 1} tokens with "
               "learned sinks; EncoderOnlyAttention selects its backend without the window or the sinks")
    layer = _bare(heads, kv, head, "encoder_only")
    return _Stack([(i, layer) for i in range(_n_layers(ctx))])
