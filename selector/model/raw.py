"""Step 1: the raw config.json fields attn-select reads, type-checked
(pydantic), and the user error a wrong field becomes."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from attn_select.selector.errors import UserError


class RawConfig(BaseModel):
    """The config.json fields attn-select reads. Others are kept untyped.

    ``defer_build``: the validator is built on first use, so importing this
    module stays cheap for commands that never parse a config.
    """

    model_config = ConfigDict(extra="allow", defer_build=True)

    architectures: list[str] | None = None
    model_type: str | None = None
    torch_dtype: str | None = None
    dtype: str | None = None
    # sizes
    num_hidden_layers: int | None = None
    num_attention_heads: int | None = None
    num_key_value_heads: int | None = None
    num_kv_heads: int | None = None
    n_head_kv: int | None = None
    multi_query_group_num: int | None = None
    num_attention_groups: int | None = None
    hidden_size: int | None = None
    head_dim: int | None = None
    hidden_size_per_head: int | None = None
    # windows and layer kinds
    sliding_window: int | None = None
    use_sliding_window: bool | None = None
    max_window_layers: int | None = None
    layer_types: list[str] | None = None
    layers_block_type: list[str] | None = None  # Jamba-style hybrids
    hybrid_override_pattern: str | None = None  # Nemotron-H: one character per layer
    sliding_window_pattern: int | None = None
    full_attention_interval: int | None = None
    use_bidirectional_attention: bool | str | None = None
    is_causal: bool | None = None
    attn_logit_softcapping: float | None = None
    attn_output_gate: bool | None = None
    # MLA (DeepSeek)
    kv_lora_rank: int | None = None
    q_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    qk_nope_head_dim: int | None = None
    v_head_dim: int | None = None
    index_topk: int | None = None
    # encoder-decoder (Whisper)
    d_model: int | None = None
    encoder_layers: int | None = None
    decoder_layers: int | None = None
    encoder_attention_heads: int | None = None
    decoder_attention_heads: int | None = None
    is_encoder_decoder: bool | None = None
    # sub-configs and model-level switches
    text_config: RawConfig | None = None
    vision_config: dict[str, Any] | None = None
    encoder_config: dict[str, Any] | None = None
    quantization_config: dict[str, Any] | None = None
    compression_config: dict[str, Any] | None = None
    rswa_window: int | None = None
    canvas_length: int | None = None
    is_mm_prefix_lm: bool | None = None
    vision_n_layers: int | None = None
    alibi: bool | None = None
    position_encoding_type: str | None = None


def parse_raw(data: object, where: str) -> dict[str, Any]:
    """Type-check a config mapping; return the given fields (nested as dicts)."""
    if not isinstance(data, dict):
        raise UserError(f"{where}: expected a JSON object with the model config, got {type(data).__name__}")
    try:
        raw = RawConfig.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        raise UserError(
            f"{where}: field {loc!r}: {err['msg']} (got {err.get('input')!r}); fix the value in the config"
        ) from None
    return raw.model_dump(exclude_unset=True)

