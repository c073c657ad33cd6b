"""transformers' RoPE validation (``RotaryEmbeddingConfigMixin.validate_rope``,
transformers 5.20, run by the strict dataclass on every load, so on every
config vLLM 0.33.0 reads), reduced to the rules a config's attention sizes
and rope fields reach. A config that breaks one never loads in vLLM.

What transformers does, in order, for each rope dict (the flat
``rope_parameters`` / ``rope_scaling``, or one per layer type when nested):
the rope type's own validator (required keys: a missing one is a KeyError;
longrope computes ``int(head_dim * partial_rotary_factor)``), then a fully
rotated odd ``head_dim`` above 4 is refused (``int(head_dim *
partial_rotary_factor) == head_dim``). The factor is the rope dict's own,
else the config's top-level ``partial_rotary_factor``, else the class's
default (a few classes set one; MiniMax-M2 derives it from rotary_dim),
else 1.0. Phi-3 and PhiMoE add their own
checks. validate_rope is a PreTrainedConfig validator, so it also runs on
classes without a rope field (multimodal wrappers): there it reads a
rope_parameters / rope_scaling config.json gives, unstandardized.
"""

from __future__ import annotations

from typing import Any, Mapping

from attn_select.selector.engines import VLLM_VERSION
from attn_select.selector.errors import UserError, cut, shown
from attn_select.selector.model.hf_max_len_defaults import MAX_LEN_ALIASES, MAX_LEN_DEFAULTS
from attn_select.selector.model.hf_types import declared

# classes whose __post_init__ sets a partial_rotary_factor default
# (kwargs.setdefault: the config's top-level value still wins)
_DEFAULT_FACTOR = {"glm": 0.5, "glm4": 0.5, "glm4_moe": 0.5, "glm4v_moe_text": 0.5, "nemotron": 0.5,
                   "persimmon": 0.5, "phi": 0.5, "recurrent_gemma": 0.5, "stablelm": 0.25, "qwen3_next": 0.25,
                   "qwen3_5_text": 0.25, "qwen3_5_moe_text": 0.25}
# mixin classes the even-dimension rule does not reach with config.json's
# head_dim: __post_init__ replaces it (DeepSeek-V2, Mistral-4, MiniCPM3), the
# config is heterogeneous or its rope dicts are per-layer (Gemma-4), or the
# class has no head_dim field at all (established by loading head_dim 7
# through transformers 5.20.2 for every class attn-select declares)
_NOT_REACHED = frozenset({"bailing_hybrid", "clip_text_model", "deepseek_v2", "deepseek_v32", "embedding_gemma2_text",
                          "falcon", "gemma4_text", "gemma4_unified_text", "mimo_v2_flash", "minicpm3", "mistral4",
                          "siglip_text_model", "step3p5"})
# required keys of each rope type's validator, beyond rope_type (which
# validate_rope sets) and original_max_position_embeddings (which
# standardize_rope_params fills from max_position_embeddings)
_REQUIRED = {"linear": ("factor",), "dynamic": ("factor",), "yarn": ("factor",),
             "longrope": ("short_factor", "long_factor"), "llama3": ("factor", "low_freq_factor", "high_freq_factor")}
# a string factor is repeated head_dim times before int() reads it
_MAX_REPEAT = 10_000_000


def _rope_dicts(raw: Mapping[str, Any], attrs: Mapping[str, Any]) -> list[tuple[str, dict]] | None:
    """(layer type, rope dict) as validate_rope walks them; None where the
    shape is one this mirror does not follow."""
    rope = raw.get("rope_scaling") or raw.get("rope_parameters")
    if rope is None:
        rope = {}
    if not isinstance(rope, dict):
        return None  # the declared types refuse it (or it is not a mixin class)
    labels = attrs.get("layer_types")
    nested = [k for k in rope if isinstance(labels, (list, tuple)) and k in labels]
    if not nested:
        return [("full_attention", dict(rope))]
    if not all(rope[k] is None or isinstance(rope[k], dict) for k in nested):
        return None
    return [(k, dict(rope[k])) for k in nested if rope[k] is not None]


def _rope_type(rope: Mapping[str, Any]) -> Any:
    """A rope dict's type as transformers reads it: rope_type, else the
    legacy type key, else "default"."""
    return rope.get("rope_type", rope.get("type", "default"))


def _times(head_dim: Any, factor: Any) -> Any:
    """``int(head_dim * factor)`` as Python computes it, or the reason it fails."""
    if isinstance(factor, (str, list, tuple)) and isinstance(head_dim, int) and head_dim * len(factor) > _MAX_REPEAT:
        raise ValueError(f"a {head_dim:,}-fold repeat of {shown(factor)}")
    try:
        return int(head_dim * factor)
    except (TypeError, ValueError, OverflowError) as e:
        raise ValueError(cut(str(e))) from None


def check_rope(raw: Mapping[str, Any] | None, attrs: Mapping[str, Any], model_type: str, where: str,
               wrapper: bool = False, modelled: bool = True) -> None:
    """A user error for a config transformers' validate_rope refuses, then
    for one vLLM's patch_legacy_rope_type refuses after loading it;
    ``wrapper``: the class holds a text_config (a multimodal wrapper);
    ``modelled``: ``attrs`` is the class's view after __post_init__ (not
    only config.json's fields)."""
    _check_rope_class(raw, attrs, model_type, where, wrapper, modelled)
    if raw is not None:
        _check_legacy_rope_type(raw, where)


def _check_legacy_rope_type(raw: Mapping[str, Any], where: str) -> None:
    """vLLM 0.33.0's get_config runs patch_rope_parameters on every loaded
    config (transformers_utils/config.py:608-687): patch_legacy_rope_type on
    each rope dict (per layer type when nested), then transformers'
    validation again. A legacy ``type`` that conflicts with ``rope_type``,
    a legacy "mrope" without mrope_section, and "su" (read as longrope,
    whatever the class) without longrope's factor lists refuse the config."""
    rope = raw.get("rope_scaling") or raw.get("rope_parameters")
    if not isinstance(rope, dict) or not rope:
        return
    if all(k in _NESTED_KEYS for k in rope):
        dicts = [d for d in rope.values() if isinstance(d, dict)]
    else:
        dicts = [rope]
    fail = f"so vLLM {VLLM_VERSION} cannot load the config (patch_legacy_rope_type)"
    for d in dicts:
        if "rope_type" in d and "type" in d:
            modern, legacy = d["rope_type"], d["type"]
            if not ((legacy == "su" and modern == "longrope") or (legacy == "mrope" and modern == "default")) \
                    and modern != legacy:
                raise UserError(f"{where}: rope_parameters has rope_type {shown(modern)} and the legacy type "
                                f"{shown(legacy)}, {fail}: Found conflicts between 'rope_type={modern}' (modern field) "
                                f"and 'type={legacy}' (legacy field). You should only specify one of them.")
        rope_type = d.get("rope_type", d.get("type"))
        if rope_type == "su":
            missing = sorted(k for k in ("short_factor", "long_factor") if k not in d)
            if missing:
                raise UserError(f"{where}: rope_type 'su' is read as longrope, which needs {' and '.join(missing)}, "
                                f"{fail}: Missing required keys in `rope_parameters` for 'rope_type'='longrope': "
                                f"{set(missing)}")
        elif rope_type == "mrope" and "mrope_section" not in d:
            raise UserError(f"{where}: the legacy rope_type 'mrope' has no mrope_section, {fail}: Legacy rope_type "
                            "'mrope' requires 'mrope_section' in rope_parameters")


# vLLM's is_rope_parameters_nested: keys among transformers 5.20's
# ALLOWED_LAYER_TYPES, or DeepSeek-V4's rope kinds
_NESTED_KEYS = frozenset({
    "chunked_attention", "compressed_sparse_attention", "conv", "dense", "full_attention",
    "heavily_compressed_attention", "hybrid", "hybrid_sliding", "indexed_attention", "linear_attention",
    "minimax_m3_sparse", "moe", "reference_sliding_attention", "sliding_attention", "sparse", "window_attention",
    "main", "compress"})


def _check_rope_class(raw: Mapping[str, Any] | None, attrs: Mapping[str, Any], model_type: str, where: str,
                      wrapper: bool, modelled: bool) -> None:
    """transformers' validate_rope, as the config class runs it."""
    if raw is None or model_type in _NOT_REACHED:
        return
    mixin = "rope_parameters" in declared(model_type)
    if not mixin and raw.get("rope_scaling") is None and raw.get("rope_parameters") is None:
        return  # validate_rope runs on every class, but finds no rope dict here
    if raw.get("per_layer_config") is not None:
        return  # heterogeneous: transformers skips the even-dimension check
    fail = f"(transformers' validate_rope), so vLLM {VLLM_VERSION} cannot load the config"
    rope = raw.get("rope_scaling") or raw.get("rope_parameters")
    if rope and not isinstance(rope, dict):
        # a truthy rope_scaling replaces rope_parameters (and is type-checked
        # as it); validate_rope iterates it as a mapping
        field = "rope_scaling" if raw.get("rope_scaling") else "rope_parameters"
        raise UserError(f"{where}: {field} is {shown(rope)}, not a mapping {fail}; write a mapping or null")
    dicts = _rope_dicts(raw, attrs)
    if dicts is None:
        return
    if not mixin and wrapper:
        _check_wrapper_rope(raw, dicts, where, fail)
    top = raw.get("partial_rotary_factor", _DEFAULT_FACTOR.get(model_type))
    head_dim = raw.get("head_dim")
    if head_dim is None:  # null or absent: what the class derives (LlamaConfig: hidden // heads)
        head_dim = attrs.get("head_dim")
    rotary_dim = raw.get("rotary_dim")
    if model_type == "minimax_m2" and "partial_rotary_factor" not in raw and rotary_dim is not None:
        # MiniMaxM2Config: a legacy rotary_dim gives the factor, rotary_dim / head_dim
        if not (isinstance(rotary_dim, (int, float)) and isinstance(head_dim, (int, float)) and head_dim):
            return  # a failure of its own in __post_init__, not mirrored here
        top = rotary_dim / head_dim
    for layer_type, rope in dicts:
        if top is not None:
            rope.setdefault("partial_rotary_factor", top)
        rope_type = _rope_type(rope)
        if model_type == "phi3" and rope_type in ("su", "yarn"):
            rope_type = "longrope"  # Phi3Config renames them before validating
        missing = [k for k in _REQUIRED.get(rope_type, ()) if k not in rope] if isinstance(rope_type, str) else []
        if missing:
            raise UserError(f"{where}: rope_parameters (rope_type {rope_type!r}) has no {missing[0]!r} {fail}; "
                            f"add {missing[0]}")
        if rope_type in ("yarn", "llama3"):
            _check_scaled_rope(rope, rope_type, attrs, where, fail)
        factor = rope.get("partial_rotary_factor", 1.0)
        if rope_type == "longrope":
            # _validate_longrope_rope_parameters: getattr(self, "head_dim",
            # hidden_size // num_attention_heads), the attribute as the class
            # holds it (config.json's null too, on a class that derives none)
            if modelled and "head_dim" in attrs and attrs["head_dim"] is None:
                raise UserError(f"{where}: head_dim is null on a config class that derives none; longrope computes "
                                "int(head_dim * partial_rotary_factor), which fails (TypeError: unsupported operand "
                                f"type(s) for *: 'NoneType' and '{type(factor).__name__}') {fail}: give head_dim "
                                "or leave it out")
            dim_of = attrs["head_dim"] if "head_dim" in attrs else _hidden_over_heads(attrs)
            if isinstance(dim_of, int):
                try:
                    _times(dim_of, factor)
                except ValueError as e:
                    raise UserError(f"{where}: partial_rotary_factor is {shown(factor)}; longrope computes "
                                    f"int(head_dim * partial_rotary_factor), which fails ({e}) {fail}: write a "
                                    "number") from None
        _check_even(head_dim, factor, layer_type, where, fail)
    if model_type in ("phi3", "phimoe"):
        _check_phi(dicts[0][1] if dicts else {}, attrs, model_type, where, fail)


def _compared(compute: Any, what: str, where: str, fail: str) -> None:
    """``compute`` (a comparison or division validate_rope makes), refused as
    transformers fails on it."""
    try:
        compute()
    except (TypeError, ZeroDivisionError) as e:
        raise UserError(f"{where}: {what}, which fails ({type(e).__name__}: {cut(str(e))}) {fail}: write "
                        "numbers") from None


def _check_scaled_rope(rope: dict, rope_type: str, attrs: Mapping[str, Any], where: str, fail: str) -> None:
    """The arithmetic _validate_yarn_rope_parameters and
    _validate_llama3_rope_parameters do on the rope values (a value of the
    wrong kind there only warns; these comparisons raise). The pretraining
    length is standardize_rope_params': the config's own
    original_max_position_embeddings, else the rope dict's, else
    max_position_embeddings (a class default where config.json has none: a
    number, which 8192 stands for, as only the raising matters here)."""
    max_pos = attrs.get("max_position_embeddings", 8192)
    if "original_max_position_embeddings" in attrs:
        original = attrs["original_max_position_embeddings"]
    else:
        original = rope.get("original_max_position_embeddings", max_pos)
    if rope_type == "yarn":
        fast, slow = rope.get("beta_fast"), rope.get("beta_slow")
        _compared(lambda: (fast or 32) < (slow or 1), f"the yarn rope beta_fast / beta_slow are {shown(fast)} / "
                  f"{shown(slow)}; transformers compares them", where, fail)
        _compared(lambda: max_pos / original, f"the yarn rope original_max_position_embeddings is {shown(original)} "
                  f"(max_position_embeddings {shown(max_pos)}); transformers divides the one by the other", where,
                  fail)
        return
    high, low = rope.get("high_freq_factor"), rope.get("low_freq_factor")
    _compared(lambda: high <= low, f"the llama3 rope high_freq_factor / low_freq_factor are {shown(high)} / "
              f"{shown(low)}; transformers compares them", where, fail)
    _compared(lambda: original >= max_pos, f"the llama3 rope original_max_position_embeddings is {shown(original)} "
              f"(max_position_embeddings {shown(max_pos)}); transformers compares them", where, fail)


def _check_wrapper_rope(raw: Mapping[str, Any], dicts: list[tuple[str, dict]], where: str, fail: str) -> None:
    """A multimodal wrapper's own top-level rope dict: standardize_rope_params
    fills a llama3 / yarn / longrope dict's original_max_position_embeddings
    from self.max_position_embeddings (evaluated even when the key is there),
    which a wrapper class without the field does not have."""
    if "max_position_embeddings" in raw or "original_max_position_embeddings" in raw or len(dicts) != 1:
        return
    rope_type = _rope_type(dicts[0][1])
    if rope_type in ("llama3", "yarn", "longrope"):
        raise UserError(f"{where}: the top-level rope_parameters (rope_type {rope_type!r}) make transformers' "
                        "standardize_rope_params read max_position_embeddings, which this wrapper config has not "
                        f"(AttributeError), so vLLM {fail.rsplit('vLLM ', 1)[1]}; move rope_parameters into "
                        "text_config")


def _check_even(head_dim: Any, factor: Any, layer_type: str, where: str, fail: str) -> None:
    """``head_dim > 4 and head_dim % 2 and int(head_dim * factor) ==
    head_dim`` refuses, with Python's semantics for whatever config.json
    holds (a string head_dim fails the comparison, a float one is compared
    as a number)."""
    if head_dim is None:
        return
    try:
        reached = head_dim > 4 and head_dim % 2
    except TypeError:
        raise UserError(f"{where}: head_dim is {shown(head_dim)}; transformers compares it with 4, which fails (not "
                        f"a number) {fail}: write an integer") from None
    if not reached:
        return
    try:
        rotary = _times(head_dim, factor)
    except ValueError as e:
        raise UserError(f"{where}: partial_rotary_factor is {shown(factor)}; transformers computes "
                        f"int(head_dim * partial_rotary_factor) for the odd head_dim {shown(head_dim)}, which fails "
                        f"({e}) {fail}: write a number") from None
    if rotary == head_dim:
        raise UserError(f"{where}: head_dim {shown(head_dim)} is odd and fully rotated (partial_rotary_factor "
                        f"{shown(factor)}, {layer_type}): RoPE needs an even rotary dimension {fail}; fix head_dim")


def _hidden_over_heads(attrs: Mapping[str, Any]) -> int | None:
    hidden, heads = attrs.get("hidden_size"), attrs.get("num_attention_heads")
    if isinstance(hidden, int) and isinstance(heads, int) and heads:
        return hidden // heads
    return None


def _check_phi_factors(rope: dict, half: int, where: str, fail: str) -> None:
    """Phi3Config.validate_rope: a short_factor / long_factor that is there
    (of any rope type) is a list of numbers of rotary_ndims // 2 entries,
    rotary_ndims = int(hidden_size // num_attention_heads * partial_rotary_factor)."""
    for key in ("short_factor", "long_factor"):
        value = rope.get(key)
        if value is None:
            continue
        if not (isinstance(value, list) and all(isinstance(x, (int, float)) for x in value)):
            raise UserError(f"{where}: rope_parameters {key} is {shown(value)}, not a list of numbers "
                            f"(Phi3Config.validate_rope: `rope_parameters`'s {key} field must be a list of numbers) "
                            f"{fail}; fix {key}")
        if len(value) != half:
            raise UserError(f"{where}: rope_parameters {key} has {len(value)} entries, not rotary_ndims // 2 = {half} "
                            f"(Phi3Config.validate_rope: `rope_parameters`'s {key} field must have length {half}, got "
                            f"{len(value)}) {fail}; give one per rotary dimension pair or fix partial_rotary_factor")


def _check_phi(rope: dict, attrs: Mapping[str, Any], model_type: str, where: str, fail: str) -> None:
    """Phi3Config.validate_rope (rotary dims from the factor; default or
    longrope only, "su" and "yarn" read as longrope) and
    PhimoeConfig.validate_rope (numeric short / long mscale off default)."""
    rope_type = _rope_type(rope)
    if model_type == "phi3":
        if rope_type in ("su", "yarn"):
            rope_type = "longrope"
        per_head = _hidden_over_heads(attrs)
        factor = rope.get("partial_rotary_factor", 1.0)
        if per_head is not None:
            try:
                _times(per_head, factor)
            except ValueError as e:
                raise UserError(f"{where}: partial_rotary_factor is {shown(factor)}; Phi3Config computes the rotary "
                                f"dimensions from it, which fails ({e}) {fail}: write a number") from None
        if rope_type not in ("default", "longrope"):
            raise UserError(f"{where}: rope_type {shown(rope_type)} is not one Phi3Config takes (default, longrope) "
                            f"{fail}; fix rope_parameters")
        if per_head is not None and isinstance(factor, (int, float)):
            _check_phi_factors(rope, int(per_head * factor) // 2, where, fail)
        return
    if rope_type != "default":
        for key in ("short_mscale", "long_mscale"):
            value = rope.get(key)
            if not isinstance(value, (int, float)):
                raise UserError(f"{where}: rope_parameters {key} is {shown(value)}; PhimoeConfig needs a number for "
                                f"rope_type {rope_type!r} {fail}; add it")


# rope types whose max_position_embeddings is already scaled: vLLM's
# _get_and_verify_max_len does not read their factor
_SCALED_ALREADY = frozenset({"su", "longrope", "llama3", "yarn", "deepseek_yarn", "deepseek_llama_scaling"})


def _max_len_factor(attrs: Mapping[str, Any], model_type: str) -> tuple[list, Any]:
    """(rope dicts, factor): what vLLM's _get_and_verify_max_len
    (config/model.py:2600-2634) multiplies the derived max model length by,
    the factor of hf_text_config's last rope dict of a type that is not
    already scaled, null read as 1.0; 1.0 on Gemma-3 (whose max length is
    taken as scaled). Not necessarily a number."""
    if "gemma3" in model_type:
        return [], 1.0
    dicts = _rope_dicts(attrs, attrs) or []
    factor: Any = 1.0
    for _, rope in dicts:
        if not rope:
            continue  # iter_rope_parameters skips empty dicts
        rope_type = _rope_type(rope)
        if not (isinstance(rope_type, str) and rope_type in _SCALED_ALREADY):
            factor = rope.get("factor", factor)
    return dicts, 1.0 if factor is None else factor


def check_max_len_factor(attrs: Mapping[str, Any], model_type: str, where: str) -> None:
    """A rope factor that is not a number fails vLLM's multiplication of the
    max model length; a number must leave that length positive."""
    dicts, factor = _max_len_factor(attrs, model_type)
    if isinstance(factor, (int, float)):
        _check_max_len(attrs, model_type, dicts, where)
        return
    try:
        1.0 * factor  # the multiplication vLLM does
    except TypeError as e:
        raise UserError(f"{where}: the rope factor is {shown(factor)}; vLLM {VLLM_VERSION} multiplies the model's "
                        f"maximum length by it (_get_and_verify_max_len), which fails (TypeError: {cut(str(e))}), "
                        "so it cannot load the config: write a number") from None


# ModelArchitectureConfigConvertor.derive_max_model_len_and_key: the smallest
# of these hf_text_config attributes, unless model_max_length is set
_MAX_LEN_KEYS = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
                 "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len")


def _length_attrs(attrs: Mapping[str, Any], model_type: str) -> dict[str, Any]:
    """getattr(hf_text_config, key) for each length key: config.json's value, else
    the config class's default (hf_max_len_defaults; LlamaConfig's
    max_position_embeddings is 2048), through the class's attribute_map aliases."""
    aliases = MAX_LEN_ALIASES.get(model_type, {})
    own = dict(MAX_LEN_DEFAULTS.get(model_type, {}))
    # the class's own names first, then the aliases that write them (set after __init__'s arguments)
    for key in sorted({*_MAX_LEN_KEYS, *aliases.values()}, key=lambda k: k in aliases):
        if key in attrs:
            own[aliases.get(key, key)] = attrs[key]
    return {k: own.get(aliases.get(k, k)) for k in _MAX_LEN_KEYS}


def derived_max_len(attrs: Mapping[str, Any], model_type: str) -> tuple[str, float, Any] | None:
    """(key, length, model_max_length) as vLLM 0.33.0's _get_and_verify_max_len
    derives the model's maximum length from hf_text_config: the smallest
    length key (model_max_length when set), times the rope factor, a float,
    the config class's defaults standing in for the keys config.json leaves
    out. None where neither gives a length key (a model type whose class is
    not known here) or a value this cannot follow (check_max_len_factor
    refuses the bad ones)."""
    lengths = _length_attrs(attrs, model_type)
    known = [(k, v) for k, v in lengths.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if not known:
        return None
    key, derived = min(known, key=lambda kv: kv[1])
    override = lengths.get("model_max_length")
    if override:
        if not isinstance(override, (int, float)) or isinstance(override, bool):
            return None
        key, derived = "model_max_length", override
    _, factor = _max_len_factor(attrs, model_type)
    if not isinstance(factor, (int, float)) or isinstance(factor, bool):
        return None
    try:
        return key, float(derived) * factor, override
    except OverflowError:
        return None


def _check_max_len(attrs: Mapping[str, Any], model_type: str, dicts: list, where: str) -> None:
    """vLLM's derived max model length, int(), must be a positive integer
    (ModelConfig's validate_model_config_after, config/model.py:1070): a
    length key of 0 or less refuses the config. A longrope dict
    (max_model_len from original_max_position_embeddings) is left alone."""
    if any(isinstance(rope, dict) and _rope_type(rope) == "longrope" for _, rope in dicts):
        return
    found = derived_max_len(attrs, model_type)
    if found is None:
        return
    key, derived, _ = found
    try:
        length = int(derived)
    except (OverflowError, ValueError):
        return
    if length < 1:
        raise UserError(f"{where}: {key} is {shown(attrs.get(key))}, so vLLM {VLLM_VERSION}'s maximum model length "
                        f"is {length} and it refuses the config (max_model_len must be a positive integer, got int: "
                        f"{length}. Example: max_model_len=2048); give the model's real length")
