"""What vLLM 0.33.0 meets while building a decoder-only model's decoder
layers, after the config has loaded: each attention layer's rotary embedding
(``get_rope`` with hf_text_config's rope parameters, then the embedding
class's own arithmetic), then the MLP's tensor-parallel split (a
MergedColumnParallelLinear gate/up projection and a RowParallelLinear down
projection of ``intermediate_size``). A config that fails there never
serves, whatever the attention selection would be.

Checked for the model files named below only (Llama, Mistral, Qwen2, Qwen3,
Gemma, Gemma-2, Granite, Mixtral, OLMo-2, Phi-3, Qwen2-MoE, Qwen3-MoE; the
rope type and rope_theta also for Cohere2, EXAONE-4, MiniCPM3 and OLMo-3;
DeepSeek-V2/V3/V3.2 and GLM-4-MoE-lite's scaled rope, gpt-oss's yarn keys,
and a rope held per layer type under a file that takes one: each part checked
against vLLM's own build); other model files read other fields or build other
modules.
"""

from __future__ import annotations

from typing import Any, Mapping

from attn_select.selector.engines import VLLM_VERSION
from attn_select.selector.errors import UserError, cut, shown
from attn_select.selector.model.vllm_config_reads import NESTED_ROPE_TYPES

LLAMA_STYLE = frozenset({"LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM"})
# model files whose attention builds get_rope from the config's rope parameters: rope_theta is its base
_ROPE_THETA = LLAMA_STYLE | {"GemmaForCausalLM", "Gemma2ForCausalLM", "GraniteForCausalLM", "MixtralForCausalLM",
                             "Olmo2ForCausalLM", "Phi3ForCausalLM", "Qwen2MoeForCausalLM", "Qwen3MoeForCausalLM"}
# ... and its scaling type and factor too (Olmo2's takes no linear scaling there; Phi3Config refuses
# every type but longrope on loading)
_ROPE_SCALING = _ROPE_THETA - {"Olmo2ForCausalLM", "Phi3ForCausalLM"}
# ... and the rotated fraction, partial_rotary_factor (OLMo-2's rope reads none)
_ROPE_PARTIAL = _ROPE_THETA - {"Olmo2ForCausalLM"}
# Qwen's VL models: the language model (qwen2.py / qwen3.py / qwen3_moe.py attention) hands the rope dict,
# mrope_section included, to get_rope
_QWEN_VL = frozenset({"Qwen2VLForConditionalGeneration", "Qwen2_5_VLForConditionalGeneration",
                      "Qwen3VLForConditionalGeneration", "Qwen3VLMoeForConditionalGeneration"})
# model files whose get_rope takes the config's rope type and rope_theta, beyond those above (seen refusing an
# unknown type and a rope_theta that is not a number in vLLM's own build)
_ROPE_TYPE_ONLY = frozenset({"Cohere2ForCausalLM", "Exaone4ForCausalLM", "MiniCPM3ForCausalLM", "Olmo3ForCausalLM"})
# deepseek_v2.py's attention (MLA or not) turns any rope type but default into deepseek_yarn, whose get_rope
# reads the rope dict's factor and original_max_position_embeddings
_DEEPSEEK_ROPE = frozenset({"DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM",
                            "Glm4MoeLiteForCausalLM"})
# ... and of those, the ones vLLM serves on its Transformers backend, whose transformers model builds a
# rope per layer type itself (vLLM's own build of both: a nested rope dict builds)
_OWN_NESTED_ROPE = frozenset({"Olmo2ForCausalLM", "Olmo3ForCausalLM"})
# more model files whose rotary embedding computes its frequencies from the config's rope_theta (a string or
# null fails there: TypeError), each seen so in vLLM's own build: gpt-oss's OAIAttention, DeepSeek's MLA and
# MHA attention (deepseek_yarn), Qwen's VL language models; Falcon's rotary branch is decided where it is read
_ROPE_FILES = frozenset({"GptOssForCausalLM"}) | _DEEPSEEK_ROPE | _QWEN_VL
# gpt_oss.py builds its yarn rope from these keys of config.rope_parameters (KeyError without one)
_GPT_OSS_ROPE_KEYS = ("factor", "original_max_position_embeddings", "beta_fast", "beta_slow")
# the types whose rope dict transformers' standardize_rope_params gives original_max_position_embeddings
_ORIGINAL_FILLED = frozenset({"llama3", "yarn", "longrope", "su"})
# get_rope's scaling types, and the legacy names patch_legacy_rope_type renames to one of them
_GET_ROPE_TYPES = frozenset({
    "default", "bailing_mrope", "proportional", "llama3", "mllama4", "linear", "ntk", "dynamic", "yarn",
    "deepseek_yarn", "deepseek_llama_scaling", "longrope", "openpangu", "su", "mrope", "telechat3-yarn"})
# a dense MLP (or Mixtral's experts) of intermediate_size split across the ranks in every layer; the MoE
# layers of Qwen2-MoE / Qwen3-MoE read moe_intermediate_size instead
_MLP_SPLIT = LLAMA_STYLE | {"GemmaForCausalLM", "Gemma2ForCausalLM", "GraniteForCausalLM", "MixtralForCausalLM",
                            "Olmo2ForCausalLM", "Phi3ForCausalLM"}
# yarn's correction range computes with these (_yarn_find_correction_range)
_YARN_BETAS = ("beta_fast", "beta_slow")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float))


def check_layer_build(arch: str, attrs: Mapping[str, Any], tp: int, where: str, head_size: int | None = None,
                      model_type: str | None = None) -> None:
    """A user error where vLLM fails building this model's decoder layers
    (``head_size``: the one its attention layers were built with, where known;
    ``model_type``: the text config's)."""
    if model_type in NESTED_ROPE_TYPES and (arch in _ROPE_THETA or arch in _ROPE_TYPE_ONLY) \
            and arch not in _OWN_NESTED_ROPE:
        raise UserError(f"{where}: model_type {model_type}'s config class holds its rope as one dict per layer type, "
                        f"and {arch}'s attention hands that to vLLM's get_rope as one rope dict, which fails "
                        f"(TypeError: unhashable type: 'dict'), so vLLM {VLLM_VERSION} cannot build its attention "
                        "layers: use the architecture made for that model type")
    if arch in _DEEPSEEK_ROPE:
        _check_deepseek_rope(attrs, where)
    if arch == "GptOssForCausalLM":
        _check_gpt_oss_rope(attrs, where)
    # falcon.py builds its rotary embedding unless alibi (FalconConfig.rotary)
    rope_file = arch in _ROPE_FILES or (arch == "FalconForCausalLM" and not attrs.get("alibi"))
    if arch in _ROPE_SCALING or arch in _ROPE_TYPE_ONLY or (rope_file and arch not in _DEEPSEEK_ROPE
                                                             and arch != "GptOssForCausalLM"):
        _check_rope_type(attrs, where)
    if arch in _ROPE_THETA or arch in _ROPE_TYPE_ONLY:
        _check_rope(attrs, where, scaling=arch in _ROPE_SCALING, partial=arch in _ROPE_PARTIAL)
    elif rope_file:
        _check_rope(attrs, where, scaling=False, partial=False)  # rope_theta alone
    if arch in _ROPE_PARTIAL and head_size:
        _check_longrope_factors(attrs, head_size, where)
    if (arch in _ROPE_THETA or arch in _ROPE_TYPE_ONLY or arch in _QWEN_VL) and head_size:
        _check_mrope_section(attrs, head_size, where)
    if arch in _MLP_SPLIT:
        _check_mlp_split(attrs, tp, where)


def _check_mrope_section(attrs: Mapping[str, Any], head_size: int, where: str) -> None:
    """get_rope builds MRotaryEmbedding for a default or yarn rope dict with an
    mrope_section (Qwen2-VL's, Qwen2.5-VL's and Qwen3-VL's language models),
    which asserts the sections cover half the rotated dimensions:
    sum(mrope_section) == rotary_dim // 2, rotary_dim the dict's rope_dim, else
    the head size times its partial_rotary_factor."""
    rope = _rope_dict(attrs) or {}
    section = rope.get("mrope_section")
    if rope.get("rope_type", rope.get("type", "default")) not in ("default", "yarn") \
            or not isinstance(section, (list, tuple)) or not section \
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in section):
        return
    factor = rope.get("partial_rotary_factor", 1.0)
    rotary = rope.get("rope_dim")
    if not (isinstance(rotary, int) and rotary > 0):
        if not _number(factor) or not 0.0 < factor <= 1.0:
            return
        rotary = int(head_size * factor)
    if sum(section) != rotary // 2:
        raise UserError(f"{where}: rope mrope_section {list(section)} sums to {sum(section)}, but vLLM {VLLM_VERSION}'s "
                        f"MRotaryEmbedding asserts it is half the rotated dimensions ({rotary} // 2 = {rotary // 2}, "
                        f"head size {head_size}): fix mrope_section or the head size")


def _rope_dict(attrs: Mapping[str, Any]) -> dict[str, Any] | None:
    """The one (not per-layer-type) rope dict transformers' standardize_rope_params
    leaves on the config: rope_scaling when truthy, else rope_parameters, with
    config.json's top-level rope_theta set in where the dict has none."""
    rope = attrs.get("rope_scaling") or attrs.get("rope_parameters") or {}
    if not isinstance(rope, dict):
        return None  # refused on loading (hf_rope)
    types = attrs.get("layer_types")
    if isinstance(types, (list, tuple)) and any(k in types for k in rope):
        return None  # nested per layer type: not this reading
    rope = dict(rope)
    if "rope_theta" in attrs:
        rope.setdefault("rope_theta", attrs["rope_theta"])
    if attrs.get("partial_rotary_factor") is not None:
        rope.setdefault("partial_rotary_factor", attrs["partial_rotary_factor"])
    return rope


def _check_deepseek_rope(attrs: Mapping[str, Any], where: str) -> None:
    rope = _rope_dict(attrs)
    if rope is None:
        return
    rope_type = rope.get("rope_type", rope.get("type", "default"))
    if rope_type in ("default", "mrope") or (isinstance(rope_type, str) and rope_type in _ORIGINAL_FILLED):
        return
    for key in ("factor", "original_max_position_embeddings"):
        if key not in rope:
            raise UserError(f"{where}: the rope scaling type is {shown(rope_type)} with no {key}: vLLM's DeepSeek "
                            "attention turns any rope type but default into deepseek_yarn, whose rotary embedding "
                            f"reads it (KeyError: {key!r}), so vLLM {VLLM_VERSION} cannot build the model's "
                            f"attention layers: add {key} to rope_scaling, or use yarn")


def _check_gpt_oss_rope(attrs: Mapping[str, Any], where: str) -> None:
    """OAIAttention reads factor, the original length and both yarn betas
    from config.rope_parameters whatever its type: GptOssConfig's own yarn
    dict has them all; one from config.json has what it gives (and the
    original length transformers fills for llama3 / yarn / longrope)."""
    if not (attrs.get("rope_scaling") or attrs.get("rope_parameters")):
        return  # GptOssConfig.__post_init__ sets its full default
    rope = _rope_dict(attrs)
    if rope is None:
        return
    rope_type = rope.get("rope_type", rope.get("type", "default"))
    filled = {"original_max_position_embeddings"} if isinstance(rope_type, str) and rope_type in _ORIGINAL_FILLED \
        else set()
    missing = [k for k in _GPT_OSS_ROPE_KEYS if k not in rope and k not in filled]
    if missing:
        raise UserError(f"{where}: the rope scaling has no {missing[0]}; gpt-oss's attention builds its yarn rope "
                        f"from factor, original_max_position_embeddings, beta_fast and beta_slow whatever the type "
                        f"(KeyError: {missing[0]!r}), so vLLM {VLLM_VERSION} cannot build its attention layers: "
                        "add it, or leave rope_scaling out for GptOssConfig's own")


def _check_rope_type(attrs: Mapping[str, Any], where: str) -> None:
    """get_rope raises for a scaling type it has no embedding class for
    (transformers only warns on loading); a dual-chunk config takes its own
    embedding whatever the type."""
    rope = _rope_dict(attrs)
    if rope is None or attrs.get("dual_chunk_attention_config") is not None:
        return
    rope_type = rope.get("rope_type", rope.get("type", "default"))
    if isinstance(rope_type, str) and rope_type in _GET_ROPE_TYPES:
        return
    raise UserError(f"{where}: the rope scaling type is {shown(rope_type)}, which vLLM's rotary embedding does not "
                    f"know (get_rope: ValueError: Unknown RoPE scaling type {rope_type}), so vLLM {VLLM_VERSION} "
                    "cannot build the model's attention layers: use one of "
                    f"{', '.join(sorted(_GET_ROPE_TYPES - {'su', 'mrope', 'telechat3-yarn'}))}, or leave "
                    "rope_scaling out")


def _check_rope(attrs: Mapping[str, Any], where: str, scaling: bool, partial: bool) -> None:
    rope = _rope_dict(attrs)
    if rope is None:
        return
    fail = f"so vLLM {VLLM_VERSION} cannot build the model's attention layers: write a number"
    if "rope_theta" in rope and not _number(rope["rope_theta"]):
        theta = rope["rope_theta"]
        raise UserError(f"{where}: rope_theta is {shown(theta)}; vLLM's rotary embedding (get_rope) computes its "
                        "frequencies as rope_theta ** (...), which fails (TypeError: unsupported operand type(s) "
                        f"for ** or pow(): '{type(theta).__name__}' and 'Tensor'), {fail}")
    if partial and "partial_rotary_factor" in rope and not rope.get("rope_dim"):
        fraction = rope["partial_rotary_factor"]
        problem = _fails(lambda: fraction <= 0.0 or fraction > 1.0)
        if problem or not fraction > 0.0 or fraction > 1.0:  # get_rope's own range check, a ValueError
            raise UserError(f"{where}: partial_rotary_factor is {shown(fraction)}; vLLM's get_rope requires it between "
                            f"0.0 and 1.0 (0.0 excluded){f', and comparing it fails ({problem})' if problem else ''}, "
                            f"so vLLM {VLLM_VERSION} cannot build the model's attention layers: write a number above 0 "
                            "and at most 1 (the rotated fraction of each head)")
    rope_type = rope.get("rope_type", rope.get("type", "default"))
    if not scaling or "factor" not in rope:
        return  # transformers refuses a scaling type without it on loading (hf_rope)
    factor = rope["factor"]
    if rope_type == "yarn":
        problem = _fails(lambda: factor <= 1)  # yarn_get_mscale(factor)
        if problem:
            raise UserError(f"{where}: the yarn rope factor is {shown(factor)}; vLLM's YaRNScalingRotaryEmbedding "
                            f"compares it with 1 (yarn_get_mscale), which fails ({problem}), {fail}")
        for key in _YARN_BETAS:
            if key in rope and not _number(rope[key]):
                raise UserError(f"{where}: the yarn rope {key} is {shown(rope[key])}; vLLM's "
                                "YaRNScalingRotaryEmbedding computes its correction range with it, which fails "
                                f"(TypeError), {fail} or leave it out")
    elif rope_type == "linear" and not isinstance(factor, (float, list)):
        # LinearScalingRotaryEmbedding wraps a float in a list and iterates anything else
        raise UserError(f"{where}: the linear rope factor is {shown(factor)}; vLLM's LinearScalingRotaryEmbedding "
                        "takes a float (4.0, not 4) or a list of floats and iterates anything else, which fails "
                        f"(TypeError), {fail} with a decimal point")
    elif rope_type == "dynamic" and "alpha" not in rope and factor is None:
        raise UserError(f"{where}: the dynamic rope factor is null; vLLM's DynamicNTKScalingRotaryEmbedding "
                        "multiplies the maximum position by it, which fails (TypeError: unsupported operand "
                        f"type(s) for *: 'int' and 'NoneType'), {fail}")


def _check_longrope_factors(attrs: Mapping[str, Any], head_size: int, where: str) -> None:
    """Phi3LongRoPEScaledRotaryEmbedding multiplies each factor list into
    one frequency per rotated pair: rotary_dim = int(head_size *
    partial_rotary_factor), from the layer's own head size. Transformers
    sized the lists from hidden_size // num_attention_heads, so a head_dim
    other than that fails to broadcast (a list of one entry broadcasts)."""
    rope = _rope_dict(attrs)
    if rope is None or rope.get("rope_type", rope.get("type")) not in ("longrope", "su"):
        return
    dim = rope.get("rope_dim")
    if not dim:
        fraction = rope.get("partial_rotary_factor", 1.0)
        if not _number(fraction):
            return
        dim = int(head_size * fraction)
    if not isinstance(dim, int):
        return
    pairs = len(range(0, dim, 2))
    for key in ("short_factor", "long_factor"):
        factors = rope.get(key)
        if isinstance(factors, list) and len(factors) not in (pairs, 1) and pairs != 1:
            raise UserError(f"{where}: rope_scaling {key} has {len(factors)} entries, but the attention layers' "
                            f"head size {head_size} rotates {dim} dimensions, {pairs} pairs (vLLM's "
                            "Phi3LongRoPEScaledRotaryEmbedding: the factors fail to broadcast), so vLLM "
                            f"{VLLM_VERSION} cannot build the model's attention layers: give {pairs} entries, or a "
                            "head_dim of hidden_size // num_attention_heads")


def _fails(compute: Any) -> str | None:
    try:
        compute()
    except TypeError as exc:
        return f"TypeError: {cut(str(exc))}"
    return None


def _check_mlp_split(attrs: Mapping[str, Any], tp: int, where: str) -> None:
    """LlamaMLP: MergedColumnParallelLinear asserts every output size
    (intermediate_size, twice) divides by the tensor-parallel size."""
    size = attrs.get("intermediate_size")
    if tp <= 1 or not isinstance(size, int) or isinstance(size, bool) or size <= 0 or size % tp == 0:
        return
    raise UserError(f"{where}: tensor parallel size {tp} does not divide intermediate_size {size}: vLLM "
                    f"{VLLM_VERSION} splits each decoder layer's MLP (its gate/up MergedColumnParallelLinear) across "
                    "the ranks and fails building it (AssertionError); pick a tensor-parallel size that divides "
                    f"{size}")
