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
    _n_layers,
    _per_rank,
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
    decoder ``Attention`` (causal; KV heads = query heads, head hidden // heads,
    the model-level window if any); the vision tower's MMEncoderAttention
    never calls get_attn_backend."""
    total = _heads(ctx)
    heads = _per_rank(total, ctx.tp, "attention heads")
    layer = _attention(ctx, heads, heads, _exact_split(ctx, total))
    return _Stack([(i, layer) for i in range(_n_layers(ctx))])


def _siglip_text(ctx: _Ctx) -> _Stack:
    """siglip.py SiglipEmbeddingModel: the text tower (SiglipTextTransformer)
    runs ``EncoderOnlyAttention``; the vision tower MMEncoderAttention."""
    total = _heads(ctx)
    heads = _per_rank(total, ctx.tp, "attention heads")
    layer = _bare(heads, heads, _exact_split(ctx, total), "encoder_only")
    return _Stack([(i, layer) for i in range(_n_layers(ctx))])
