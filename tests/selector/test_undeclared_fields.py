"""Fields a model's transformers config class does not declare are kept as
written and read only where vLLM 0.33.0's code reads them: a value of the
wrong kind there must not make attn-select refuse a model vLLM serves, and
where vLLM's code does compute with it, attn-select computes the same.
Found by a hostile-config campaign (40 configs vLLM built, the mirror refused).

- use_sliding_window / max_window_layers: declared (strict) by the Qwen2
  family only; no other class or model file reads them.
- dtype / torch_dtype: PreTrainedConfig.__post_init__, unchecked: a string
  is getattr(torch, it) (an unknown name fails to load, a list too); any
  other value stays and --dtype auto falls back to the preferred dtype.
- MLA dims on a non-MLA model: ignored by vLLM's own model files; on the
  Transformers backend any kv_lora_rank but null makes use_mla true, and a
  model whose modeling code has no MLA projections falls back to Attention
  (head size qk_nope + qk_rope when non-zero, else the model's).
- attn_logit_softcapping: a truthiness in vLLM's selection (its one
  float(value or 0) is FA4's JIT warm-up for Gemma-4): a string is kept.
- non-positive query head counts, heads not a multiple of KV heads, a
  negative head_dim or KV head count on the Transformers backend: vLLM
  builds the engine config but fails building the layers, so these stay
  refused (exit 2). A negative KV head count on vLLM's own model files is
  one KV head where QKVParallelLinear's divide(tp, total) passes.
- num_hidden_layers <= 0: no decoder layer, so no selection (refused as
  attention-free models are).
- transformers' validate_architecture (hidden_size % num_attention_heads)
  and validate_rope (an odd fully rotated head_dim, a non-numeric
  partial_rotary_factor, a rope type's missing keys) refuse the config.

The last test runs the same configs through vLLM itself (model_oracle.py:
the engine config, then the model built on meta); skipped without it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attn_select.selector.config import Capability, Kernels
from attn_select.selector.errors import UserError
from attn_select.selector.explain import explain
from attn_select.selector.model.facts import model_facts
from attn_select.selector.overrides import Overrides
from attn_select.selector.profiles import MODELS_DIR, _load_yaml, load_device

from . import model_cases_pooling, model_cases_text, model_cases_vlm
from .model_oracle_client import facts_agreeing_with_vllm, run_model_oracle

HERE = Path(__file__).resolve().parent
T4, H100 = Capability(7, 5), Capability(9, 0)


def _fixture(name: str) -> dict:
    return json.loads((HERE.parent / "fixtures" / "configs" / name / "config.json").read_text())


def _with(base: dict, drop: tuple = (), **fields) -> dict:
    return {**{k: v for k, v in base.items() if k not in drop}, **fields}


LLAMA = _with(_fixture("llama-3.1-8b"), num_hidden_layers=2)
MISTRAL = _with(_load_yaml(MODELS_DIR / "mistral-7b.yaml")["config"], num_hidden_layers=2)
GEMMA2 = _with(_load_yaml(MODELS_DIR / "gemma-2-9b.yaml")["config"], num_hidden_layers=2)
PHI3 = _with(_load_yaml(MODELS_DIR / "phi-3-mini.yaml")["config"], num_hidden_layers=2)
QWEN3 = _with(_load_yaml(MODELS_DIR / "qwen3-8b.yaml")["config"], num_hidden_layers=2)
_G3 = _fixture("gemma-3-27b-it")["text_config"]
GEMMA3_TEXT = _with(_G3, drop=("layer_types",), architectures=["Gemma3ForCausalLM"], model_type="gemma3_text",
                    num_hidden_layers=6, torch_dtype="bfloat16", vocab_size=1000)
# Jais2ForCausalLM: served through vLLM's Transformers backend
JAIS2 = {"architectures": ["Jais2ForCausalLM"], "model_type": "jais2", "hidden_size": 3328, "intermediate_size": 8192,
         "num_attention_heads": 26, "num_key_value_heads": 26, "head_dim": 128, "num_hidden_layers": 2,
         "vocab_size": 1000, "torch_dtype": "bfloat16"}


def _facts(config: dict, cap: Capability = H100, **kw):
    return model_facts(config, name="m", capability=cap, **kw)


@pytest.mark.parametrize("config", [
    _with(LLAMA, use_sliding_window=[]), _with(LLAMA, use_sliding_window="x"), _with(MISTRAL, use_sliding_window=7),
    _with(MISTRAL, max_window_layers=[]), _with(LLAMA, max_window_layers="x"), _with(JAIS2, use_sliding_window={}),
], ids=["llama []", "llama 'x'", "mistral 7", "mistral max_window_layers []", "llama max_window_layers 'x'",
        "jais2 {}"])
def test_use_sliding_window_junk_is_ignored_where_undeclared(config):
    plain = _facts({k: v for k, v in config.items() if k not in ("use_sliding_window", "max_window_layers")})
    assert _facts(config).groups == plain.groups


@pytest.mark.parametrize("value", [[], "x", None, 32.0])
def test_sliding_window_pattern_junk_is_ignored_where_unread(value):
    assert _facts(_with(LLAMA, sliding_window_pattern=value)).groups == _facts(LLAMA).groups


@pytest.mark.parametrize("value", [0, None, [], "x"])
def test_sliding_window_pattern_gemma3_computes_with_is_refused_as_transformers_fails(value):
    # Gemma3TextConfig: (i + 1) % kwargs.get("sliding_window_pattern", 6) when layer_types is absent
    with pytest.raises(UserError):
        _facts(_with(GEMMA3_TEXT, sliding_window_pattern=value))


def test_use_sliding_window_stays_strict_where_declared():
    with pytest.raises(UserError, match="use_sliding_window is the integer 7"):
        _facts(_with(QWEN3, use_sliding_window=7))


@pytest.mark.parametrize("value,cap,model,want", [
    (7, H100, MISTRAL, "bfloat16"), (7, T4, MISTRAL, "float16"), (False, H100, MISTRAL, "bfloat16"),
    ({}, T4, LLAMA, "float16"), (32.0, H100, LLAMA, "bfloat16"), ("int8", H100, QWEN3, "bfloat16"),
    ("uint8", T4, LLAMA, "float16"), ("half", H100, LLAMA, "float16"),
    (-1, T4, GEMMA2, "float32"),  # Gemma-2 may not run float16: T4's only other dtype is float32
], ids=["7 h100", "7 t4", "false", "{} t4", "32.0", "int8", "uint8 t4", "half", "gemma2 -1 t4"])
def test_config_dtype_that_is_no_runnable_dtype_falls_back(value, cap, model, want):
    assert _facts(_with(model, drop=("dtype",), torch_dtype=value), cap).dtype == want


@pytest.mark.parametrize("field,value", [
    ("torch_dtype", "x"), ("torch_dtype", "fp8"), ("torch_dtype", "torch.float16"), ("torch_dtype", "FLOAT16"),
    ("torch_dtype", []), ("dtype", ["float16"]), ("dtype", "auto"),
])
def test_config_dtype_transformers_cannot_load_is_refused(field, value):
    with pytest.raises(UserError, match=field):
        _facts(_with(LLAMA, drop=("torch_dtype", "dtype"), **{field: value}))


def test_dtype_wins_over_torch_dtype_and_torch_dtype_is_then_not_read():
    assert _facts(_with(LLAMA, dtype="float16", torch_dtype="x")).dtype == "float16"
    assert _facts(_with(LLAMA, dtype=None, torch_dtype="float16")).dtype == "float16"


@pytest.mark.parametrize("fields", [
    {"kv_lora_rank": {}}, {"q_lora_rank": "x"}, {"qk_rope_head_dim": []}, {"qk_nope_head_dim": "x"},
    {"v_head_dim": []}, {"kv_lora_rank": -1, "qk_rope_head_dim": -1},
], ids=str)
def test_mla_dims_on_a_vllm_native_non_mla_model_are_ignored(fields):
    f = _facts(_with(LLAMA, **fields))
    assert not f.model_use_mla and [g.attn.head_size for g in f.groups] == [128]


@pytest.mark.parametrize("fields,head", [
    ({"kv_lora_rank": 1}, 128), ({"kv_lora_rank": -1}, 128), ({"kv_lora_rank": False}, 128),
    ({"kv_lora_rank": "x"}, 128), ({"kv_lora_rank": 0, "qk_nope_head_dim": 32, "qk_rope_head_dim": 32}, 64),
], ids=str)
def test_kv_lora_rank_on_the_transformers_backend_falls_back_to_attention(fields, head):
    f = _facts(_with(JAIS2, **fields))
    # model_config.use_mla (engine config: one KV head); the layers are Attention
    assert f.model_use_mla and f.num_kv_heads == 1 and f.head_size == 128
    assert [(g.attn.use_mla, g.attn.head_size, g.attn.num_kv_heads) for g in f.groups] == [(False, head, 26)]


def test_mla_fallback_refuses_dims_it_cannot_add():
    with pytest.raises(UserError, match="qk_nope_head_dim"):
        _facts(_with(JAIS2, kv_lora_rank=512, qk_nope_head_dim=[]))


@pytest.mark.parametrize("value,model_cap,layer_cap", [
    ({}, None, None), ([], None, None), ("", None, None), (1, 1.0, 1.0), (True, 1.0, 1.0),
    # a string is truthy and passed on as written: vLLM never float()s it on
    # the selection path (only FA4's JIT warm-up does, for Gemma-4)
    ("32", "32", "32"), ("x", "x", "x"), ("0", "0", "0"),
], ids=str)
def test_attn_logit_softcapping_as_vllm_reads_it(value, model_cap, layer_cap):
    # the Transformers backend passes it to every layer; Phi-3's model file never does
    backend = _facts(_with(JAIS2, attn_logit_softcapping=value))
    assert backend.attn_logit_softcapping == model_cap
    assert [g.attn.logits_soft_cap for g in backend.groups] == [layer_cap]
    assert [g.attn.logits_soft_cap for g in _facts(_with(PHI3, attn_logit_softcapping=value)).groups] == [None]


def test_a_string_soft_cap_counts_as_soft_capping_and_run_refuses_it():
    from attn_select.selector.run_plan import plan_run

    f = _facts(_with(JAIS2, attn_logit_softcapping="x"), Capability(10, 0))
    r = explain(f, load_device("b200"), Kernels(), Overrides())
    assert r.model.attn_logit_softcapping == "x"
    with pytest.raises(UserError, match="attn_logit_softcapping is 'x', not a number"):
        plan_run(r, "bfloat16", "auto", [], 16)


@pytest.mark.parametrize("config,tp,kv", [
    (_with(LLAMA, num_key_value_heads=-1), 1, 1), (_with(LLAMA, num_key_value_heads=-1), 8, 1),
    (_with(LLAMA, num_key_value_heads=-4), 8, 1), (_with(LLAMA, num_key_value_heads=-4), 4, 1),
], ids=["-1 tp1", "-1 tp8", "-4 tp8", "-4 tp4"])
def test_negative_kv_heads_vllm_builds_as_one_kv_head(config, tp, kv):
    # QKVParallelLinear: tp < total -> divide(tp, total) passes where Python's
    # tp % total is 0; Attention then takes max(1, total // tp)
    f = model_facts(config, name="m", capability=H100, tp=tp)
    assert f.num_kv_heads == 1 and [g.attn.num_kv_heads for g in f.groups] == [kv]


@pytest.mark.parametrize("n", [0, -1, -4])
def test_no_layers_is_no_selection(n):
    with pytest.raises(UserError, match=f"num_hidden_layers is {n}: vLLM 0.33.0 builds no decoder layers"):
        _facts(_with(JAIS2, num_hidden_layers=n))


def test_jais2_without_hidden_size_takes_the_class_default():
    f = _facts(_with(JAIS2, drop=("hidden_size", "head_dim")))
    assert (f.head_size, [g.attn.head_size for g in f.groups]) == (128, [128])  # Jais2Config: 3328 // 26


@pytest.mark.parametrize("config,match", [
    (_with(LLAMA, num_attention_heads=-32), "-32 attention heads"),
    (_with(JAIS2, num_attention_heads=0), "num_attention_heads is 0"),
    (_with(LLAMA, num_attention_heads=17, hidden_size=17 * 128, num_key_value_heads=16), "divisible by num_kv_heads"),
    (_with(JAIS2, head_dim=-128), "head_dim is -128"),
    (_with(JAIS2, num_key_value_heads=-1), "num_key_value_heads is -1"),
    (_with(LLAMA, num_key_value_heads=-8), "1 % -8 is -7"),
    (_with(JAIS2, hidden_size=-1), r"\(Jais2Config.validate_architecture\)"),
    (_with(LLAMA, architectures=["ArceeForCausalLM"], model_type="arcee", hidden_size=-1),
     r"\(the arcee config class's validate_architecture\)"),
    (_with(LLAMA, head_dim=7), "head_dim 7 is odd and fully rotated"),
    (_with(JAIS2, head_dim="32"), 'head_dim is the string "32"'),
    (_with(LLAMA, architectures=["FlexOlmoForCausalLM"], model_type="flex_olmo", head_dim="32"),
     "head_dim is '32'; transformers compares it with 4"),
    (_with(LLAMA, head_dim=129, partial_rotary_factor="x"), "partial_rotary_factor is 'x'"),
    (_with(LLAMA, drop=("rope_scaling",), rope_parameters={"rope_type": "yarn"}), "has no 'factor'"),
], ids=["negative heads", "zero heads", "17 heads 16 kv", "backend negative head_dim", "backend negative kv",
        "kv -8 tp 1", "jais2 hidden -1", "arcee hidden -1", "odd head_dim", "jais2 string head_dim",
        "flex_olmo string head_dim", "string rotary factor", "yarn no factor"])
def test_layers_vllm_cannot_build_are_refused(config, match):
    with pytest.raises(UserError, match=match):
        _facts(config)


_OLMO2_UNIT = {"architectures": ["Olmo2ForCausalLM"], "model_type": "olmo2", "hidden_size": 1024,
               "num_attention_heads": 16, "num_key_value_heads": 8, "num_hidden_layers": 4, "torch_dtype": "bfloat16"}


def test_transformers_backend_layer_kinds_follow_the_modeling_file():
    """Olmo2's modeling code attends on every layer: any layer_types kind is a
    full-attention layer (a hybrid's, MiniMax's, refuses a non-attention one);
    sliding_attention needs a sliding_window attribute Olmo2Config lacks, and
    Olmo3's rotary embedding has rope parameters for full / sliding types only."""
    f = _facts(_with(_OLMO2_UNIT, layer_types=["linear_attention", "full_attention", "mamba", "chunked_attention"]))
    assert [g.layers for g in f.groups] == [(0, 1, 2, 3)] and f.groups[0].attn.sliding_window is None
    with pytest.raises(UserError, match="no attribute 'sliding_window'"):
        _facts(_with(_OLMO2_UNIT, layer_types=["sliding_attention"] + ["full_attention"] * 3))
    f = _facts(_with(_OLMO2_UNIT, sliding_window=512, layer_types=["sliding_attention"] + ["full_attention"] * 3))
    assert {g.attn.sliding_window for g in f.groups} == {512, None}
    with pytest.raises(UserError, match="KeyError: 'linear_attention'"):
        _facts(_with(_OLMO2_UNIT, architectures=["Olmo3ForCausalLM"], model_type="olmo3",
                     layer_types=["linear_attention", "full_attention"] * 2))
    with pytest.raises(UserError, match=r"Layer 0 \(linear_attention\) does not dispatch"):
        _facts(_with(_OLMO2_UNIT, architectures=["MiniMaxForCausalLM"], model_type="minimax",
                     layer_types=["linear_attention", "full_attention"] * 2))


@pytest.mark.parametrize("field,value", [("layers_block_type", "x"), ("layers_block_type", [1]),
                                         ("hybrid_override_pattern", 7)])
def test_hybrid_layer_fields_are_typed_only_where_read(field, value):
    assert _facts(_with(QWEN3, **{field: value})).groups
    nemotron = {"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "hidden_size": 1024,
                "num_attention_heads": 16, "num_key_value_heads": 8, "num_hidden_layers": 2, "torch_dtype": "bfloat16"}
    with pytest.raises(UserError, match=f"field '{field}'"):
        _facts(_with(nemotron, **{field: value}))


@pytest.mark.parametrize("value,words", [(1.5, "'float' object is not iterable"), ([["x"]], "unhashable type: 'list'")])
def test_a_wrappers_top_level_layer_types_must_be_remappable(value, words):
    """remap_legacy_layer_types runs on every config object (transformers 5.20)."""
    gemma3 = _fixture("gemma-3-27b-it")
    with pytest.raises(UserError, match=words):
        _facts(_with(gemma3, layer_types=value))


def test_kimi_k2_takes_deepseek_v3_configs_defaults():
    """vLLM loads model_type kimi_k2 as DeepseekV3Config (transformers_utils/
    config.py:141): an absent qk_nope_head_dim is the class default 128, so
    FlashInfer MLA's check passes on a B200 (checked against vLLM 0.33.0's
    selection by the round-6 campaign's driver: FLASHINFER_MLA selected)."""
    config = _with(_fixture("deepseek-v3"), drop=("quantization_config", "qk_nope_head_dim"),
                   model_type="kimi_k2", num_hidden_layers=2, first_k_dense_replace=1)
    r = explain(_facts(config, Capability(10, 0)), load_device("b200"), Kernels(), Overrides())
    mla = next(g for g in r.groups if g.cfg.use_mla)
    assert mla.selection.selected == "FLASHINFER_MLA" and mla.group.attn.qk_nope_head_dim == 128


@pytest.mark.parametrize("backend", ["FLASHINFER_MLA_SPARSE"])
def test_a_sparse_mla_backend_forced_on_a_config_without_mla_dims_raises_as_vllm_does(backend):
    """FlashInferMLASparseTRTLLMBackend.supports_combination reads
    hf_text_config.qk_nope_head_dim as a plain attribute: MistralConfig has
    none, so vLLM's selection raises AttributeError (checked against vLLM
    0.33.0's selection: the round-6 campaign's mistral / mixtral cases)."""
    with pytest.raises(UserError, match="AttributeError: 'MistralConfig' object has no attribute 'qk_nope_head_dim'"):
        explain(_facts(MISTRAL, Capability(10, 0)), load_device("b200"), Kernels(), Overrides(backend=backend))
    # a null one is an attribute: compared, not raised
    r = explain(_facts(_with(MISTRAL, qk_nope_head_dim=None, qk_rope_head_dim=None, kv_lora_rank=None),
                       Capability(10, 0)), load_device("b200"), Kernels(), Overrides(backend=backend))
    assert r.groups[0].selection.error is not None


# -- against vLLM 0.33.0 itself -------------------------------------------------

_VLLM_CASES = [
    ("mistral torch_dtype 7", _with(MISTRAL, torch_dtype=7), H100, None),
    ("gemma2 torch_dtype -1 on T4", _with(GEMMA2, torch_dtype=-1), T4, None),
    ("qwen3 torch_dtype int8", _with(QWEN3, torch_dtype="int8"), H100, None),
    ("llama torch_dtype fp8", _with(LLAMA, torch_dtype="fp8"), H100, "no attribute 'fp8'"),
    ("llama use_sliding_window []", _with(LLAMA, use_sliding_window=[]), H100, None),
    ("jais2 use_sliding_window 'x'", _with(JAIS2, use_sliding_window="x"), H100, None),
    ("llama qk_nope_head_dim []", _with(LLAMA, qk_nope_head_dim=[], kv_lora_rank="x"), H100, None),
    ("jais2 kv_lora_rank 1", _with(JAIS2, kv_lora_rank=1), H100, None),
    ("jais2 kv_lora_rank 0, qk dims 32 + 32", _with(JAIS2, kv_lora_rank=0, qk_nope_head_dim=32, qk_rope_head_dim=32),
     H100, None),
    ("llama sliding_window_pattern []", _with(LLAMA, sliding_window_pattern=[]), H100, None),
    ("gemma3 sliding_window_pattern 0", _with(GEMMA3_TEXT, sliding_window_pattern=0), H100, "ZeroDivisionError"),
    ("gemma3 sliding_window_pattern 3", _with(GEMMA3_TEXT, sliding_window_pattern=3), H100, None),
    ("phi3 attn_logit_softcapping {}", _with(PHI3, attn_logit_softcapping={}), H100, None),
    ("jais2 attn_logit_softcapping 1", _with(JAIS2, attn_logit_softcapping=1), H100, None),
    ("llama -32 heads", _with(LLAMA, num_attention_heads=-32), H100, "RuntimeError"),
    ("llama 17 heads 16 kv", _with(LLAMA, num_attention_heads=17, hidden_size=17 * 128, num_key_value_heads=16),
     H100, "not divisible by num_kv_heads"),
    ("jais2 head_dim -128", _with(JAIS2, head_dim=-128), H100, "negative dimension"),
    ("jais2 attn_logit_softcapping 'x'", _with(JAIS2, attn_logit_softcapping="x"), H100, None),
    ("phi3 attn_logit_softcapping 'x'", _with(PHI3, attn_logit_softcapping="x"), H100, None),
    ("llama num_key_value_heads -1", _with(LLAMA, num_key_value_heads=-1), H100, None),
    ("llama num_key_value_heads -8", _with(LLAMA, num_key_value_heads=-8), H100, "AssertionError"),
    ("jais2 num_key_value_heads -1", _with(JAIS2, num_key_value_heads=-1), H100, "negative dimension"),
    ("jais2 without hidden_size", _with(JAIS2, drop=("hidden_size", "head_dim")), H100, None),
    ("jais2 hidden_size -1", _with(JAIS2, hidden_size=-1), H100, "validate_architecture"),
    ("llama head_dim 7", _with(LLAMA, head_dim=7), H100, "RoPE requires an even rotary dimension"),
    ("flex_olmo head_dim '32'", _with(LLAMA, architectures=["FlexOlmoForCausalLM"], model_type="flex_olmo",
                                      head_dim="32"), H100, "validate_rope"),
    ("arcee hidden_size -1", _with(LLAMA, architectures=["ArceeForCausalLM"], model_type="arcee", hidden_size=-1),
     H100, "validate_architecture"),
    ("llama head_dim 129 partial_rotary_factor 'x'", _with(LLAMA, head_dim=129, partial_rotary_factor="x"), H100,
     "invalid literal for int()"),
    ("llama compressed-tensors kv_cache_scheme 'fp8'", _with(LLAMA, quantization_config={
        "quant_method": "compressed-tensors", "kv_cache_scheme": "fp8"}), H100, "AttributeError"),
    ("llama compressed-tensors kv_cache_scheme without symmetric", _with(LLAMA, quantization_config={
        "quant_method": "compressed-tensors", "kv_cache_scheme": {"type": "float", "num_bits": 8, "strategy": "tensor"}}),
     H100, "symmetric"),
    ("llama compressed-tensors kv_cache_scheme int8", _with(LLAMA, quantization_config={
        "quant_method": "compressed-tensors", "kv_cache_scheme": {"type": "int", "num_bits": 8, "strategy": "tensor",
                                                                  "symmetric": True}}), H100, "type=int"),
    ("cohere2 head_dim given", _with(LLAMA, architectures=["Cohere2ForCausalLM"], model_type="cohere2",
                                     drop=("rope_scaling",), head_dim=64), H100, None),
    ("llama is_causal 'false' (truthy)", _with(LLAMA, is_causal="false"), H100, None),
    ("llama is_causal [] (falsy)", _with(LLAMA, is_causal=[]), H100, None),
    ("seed_oss is_causal [] (the Transformers backend's module is causal)", _with(
        LLAMA, architectures=["SeedOssForCausalLM"], model_type="seed_oss", drop=("rope_scaling",), is_causal=[]),
     H100, None),
    # ModelArchitectureConfig's lax int fields (the first expert-count alias the config has)
    ("llama num_experts 1.5", _with(LLAMA, num_experts=1.5), H100, "num_experts"),
    ("llama num_experts '8'", _with(LLAMA, num_experts="8"), H100, None),
    ("llama num_experts_per_tok 'x'", _with(LLAMA, num_experts_per_tok="x"), H100, "num_experts_per_token"),
    ("llama yarn without factor", _with(LLAMA, drop=("rope_scaling",), rope_parameters={"rope_type": "yarn"}), H100, "Missing required keys"),
]
_VLM = {c["config"]["model_type"]: c["config"] for c in model_cases_vlm.cases()}
_QWEN2_VL_FLAT = next(c["config"] for c in model_cases_vlm.cases()
                      if c["config"]["model_type"] == "qwen2_vl" and "text_config" not in c["config"])
_VLLM_CASES += [
    # Qwen2VLConfig pops a flat config's text fields into Qwen2VLTextConfig, which checks them
    ("qwen2_vl flat sliding_window '4096'", _with(_QWEN2_VL_FLAT, sliding_window="4096"), H100, "sliding_window"),
    ("gemma3n text_config hidden_size '2048'", {**_VLM["gemma3n"], "text_config": {
        **_VLM["gemma3n"]["text_config"], "hidden_size": "2048"}}, H100, "hidden_size"),
]
_LLAVA_FLAT = next(c["config"] for c in model_cases_vlm.cases()
                   if c["config"]["model_type"] == "llava" and "text_config" not in c["config"])
_VLLM_CASES += [
    # a wrapper's own rope dict: standardize_rope_params reads self.max_position_embeddings
    ("llava flat yarn rope_parameters", _with(_LLAVA_FLAT, rope_parameters={
        "rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}), H100,
     "no attribute 'max_position_embeddings'"),
    ("llava flat default rope_parameters", _with(_LLAVA_FLAT, rope_parameters={"rope_type": "default"}), H100, None),
]
_MINIMAX_M2 = next(c["config"] for c in model_cases_text.cases() if c["config"].get("model_type") == "minimax_m2")
_VLLM_CASES += [
    # MiniMaxM2Config: partial_rotary_factor = rotary_dim / head_dim, so an odd head_dim is partly rotated
    ("minimax_m2 head_dim 129 with rotary_dim", _with(_MINIMAX_M2, head_dim=129), H100, None),
    ("minimax_m2 head_dim 129 fully rotated", _with(_MINIMAX_M2, drop=("rotary_dim",), head_dim=129), H100,
     "even rotary dimension"),
]
_GEMMA3_MM = _fixture("gemma-3-27b-it")
_GEMMA3_MM = {**_GEMMA3_MM, "text_config": {**_GEMMA3_MM["text_config"], "num_hidden_layers": 6}}
_VLLM_CASES += [
    # a wrapper's top-level copy of a text field: vLLM reads hf_text_config's
    ("gemma3 wrapper top-level num_hidden_layers 1.5", _with(_GEMMA3_MM, num_hidden_layers=1.5), H100, None),
    # index_topk where no sparse MLA layer reads it (Qwen2Config keeps it as written)
    ("qwen2_audio text_config index_topk 1.5", {**_VLM["qwen2_audio"], "text_config": {
        **_VLM["qwen2_audio"]["text_config"], "index_topk": 1.5}}, H100, None),
]
_LLAMA_NO_ROPE = _with(LLAMA, drop=("rope_scaling",))
_VLLM_CASES += [
    # _get_and_verify_max_len multiplies the max length by a rope factor of a
    # type that is not already scaled (config/model.py:2600-2634)
    ("llama default rope factor 'x'", _with(_LLAMA_NO_ROPE, rope_scaling={"rope_type": "default", "factor": "x"}),
     H100, "can't multiply sequence"),
    ("llama linear rope factor [2]", _with(_LLAMA_NO_ROPE, rope_parameters={"rope_type": "linear", "factor": [2]}),
     H100, "can't multiply sequence"),
    ("llama legacy type linear factor {}", _with(_LLAMA_NO_ROPE, rope_scaling={"type": "linear", "factor": {}}),
     H100, "unsupported operand"),
    ("llama dynamic rope factor true", _with(_LLAMA_NO_ROPE, rope_scaling={"rope_type": "dynamic", "factor": True}),
     H100, None),
    ("gemma3 default rope factor 'x' (its max length is not scaled)", _with(
        GEMMA3_TEXT, rope_scaling={"rope_type": "default", "factor": "x"}), H100, None),
]
_WHISPER = next(c["config"] for c in model_cases_pooling.cases() if c["config"].get("model_type") == "whisper")
_VLLM_CASES += [
    # WhisperConfig's attribute_map: num_attention_heads is written after, so over, encoder_attention_heads
    ("whisper num_attention_heads 2 (its alias wins)", _with(_WHISPER, num_attention_heads=2), H100, None),
    ("whisper num_attention_heads true", _with(_WHISPER, num_attention_heads=True), H100, None),
    ("whisper num_attention_heads null", _with(_WHISPER, num_attention_heads=None), H100, "unsupported operand"),
]
_JAMBA = {"architectures": ["JambaForCausalLM"], "model_type": "jamba", "hidden_size": 1024, "num_attention_heads": 16,
          "num_key_value_heads": 8, "num_hidden_layers": 4, "attn_layer_period": 4, "attn_layer_offset": 2,
          "num_experts": 1, "mamba_d_state": 16, "mamba_d_conv": 4, "mamba_expand": 2, "mamba_dt_rank": 64,
          "vocab_size": 1000, "intermediate_size": 2048, "torch_dtype": "bfloat16"}
_VLLM_CASES += [
    # PreTrainedConfig's num_labels setter: id2label from range(num_labels)
    ("llama num_labels 'x'", _with(LLAMA, num_labels="x"), H100, "cannot be interpreted as an integer"),
    ("llama num_labels null", _with(LLAMA, num_labels=None), H100, "cannot be interpreted as an integer"),
    ("llama num_labels true", _with(LLAMA, num_labels=True), H100, None),
    ("llama num_labels 2.0 beside two id2label entries", _with(LLAMA, num_labels=2.0, id2label={"0": "a", "1": "b"}),
     H100, None),
    # JambaConfig derives layer_types in a property without a setter
    ("jamba layer_types given", _with(_JAMBA, layer_types=["mamba"] * 4), H100, "has no setter"),
    ("jamba layer_types null", _with(_JAMBA, layer_types=None), H100, "has no setter"),
]
_VLLM_CASES += [
    # declared int fields the strict classes check (transformers 5.20.2)
    ("llama max_position_embeddings 4096.0", _with(LLAMA, max_position_embeddings=4096.0), H100,
     "max_position_embeddings"),
    ("qwen3 max_position_embeddings null", _with(QWEN3, max_position_embeddings=None), H100,
     "max_position_embeddings"),
    ("whisper num_mel_bins 80.0", _with(_WHISPER, num_mel_bins=80.0), H100, "num_mel_bins"),
    ("whisper is_encoder_decoder 1", _with(_WHISPER, is_encoder_decoder=1), H100, "is_encoder_decoder"),
]
_VLLM_CASES += [
    # layers_block_type / hybrid_override_pattern: read only by the hybrid
    # model files (Jamba, Zamba2, Nemotron-H, ...), an unread extra elsewhere
    ("llama layers_block_type (unread)", _with(LLAMA, layers_block_type=["mamba", "mamba"]), H100, None),
    ("qwen3 hybrid_override_pattern (unread)", _with(QWEN3, hybrid_override_pattern="M-"), H100, None),
    ("qwen3 layers_block_type 'x' (unread, any kind)", _with(QWEN3, layers_block_type="x"), H100, None),
    ("qwen3 hybrid_override_pattern 7 (unread, any kind)", _with(QWEN3, hybrid_override_pattern=7), H100, None),
    # declared (and so checked) only by Gemma's / Qwen3-Next's classes
    ("qwen3 use_bidirectional_attention -1 (undeclared)", _with(QWEN3, use_bidirectional_attention=-1), H100, None),
    ("llama full_attention_interval 'x' (unread)", _with(LLAMA, full_attention_interval="x"), H100, None),
]
_QWEN2 = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 1024, "num_attention_heads": 16,
          "num_key_value_heads": 8, "num_hidden_layers": 2, "vocab_size": 1000, "intermediate_size": 2048,
          "torch_dtype": "bfloat16"}
_VLLM_CASES += [
    # get_config fills a falsy architectures with transformers' base model class for the model type
    ("qwen3 architectures [] (Qwen3Model)", _with(QWEN3, architectures=[]), H100, None),
    ("qwen2 architectures {} (Qwen2Model)", _with(_QWEN2, architectures={}), H100, None),
    ("qwen2 without architectures", _with(_QWEN2, drop=("architectures",)), H100, None),
    ("olmo2 architectures '' (Olmo2Model)", _with(_QWEN2, architectures="", model_type="olmo2"), H100, None),
    ("qwen2_5_omni_text architectures [] (no base model class)",
     _with(_QWEN2, architectures=[], model_type="qwen2_5_omni_text"), H100, "No model architectures are specified"),
    # the registry: a name neither registered, normalized nor a transformers class it can wrap
    ("llama GPT2ForMaskedLM", _with(LLAMA, architectures=["GPT2ForMaskedLM"]), H100, "are not supported for now"),
    ("llama LlamaForMaskedLM", _with(LLAMA, architectures=["LlamaForMaskedLM"]), H100, "are not supported for now"),
    ("llama FooForCausalLM", _with(LLAMA, architectures=["FooForCausalLM"]), H100, "are not supported for now"),
    ("llama MptForCausalLM (dropped; transformers' class cannot be wrapped)",
     _with(LLAMA, architectures=["MptForCausalLM"]), H100, "was supported in vLLM until v0.28.0"),
    ("llama LlamaForTokenClassification (normalized)", _with(LLAMA, architectures=["LlamaForTokenClassification"]),
     H100, None),
    ("llama LlamaForQuestionAnswering (Transformers backend)",
     _with(LLAMA, architectures=["LlamaForQuestionAnswering"]), H100, None),
    ("llama FooForCausalLM then LlamaForCausalLM", _with(LLAMA, architectures=["FooForCausalLM", "LlamaForCausalLM"]),
     H100, None),
]
_OLMO2 = _with(_QWEN2, architectures=["Olmo2ForCausalLM"], model_type="olmo2", num_hidden_layers=4)
_VLLM_CASES += [
    # the Transformers backend over a modeling file that attends on every layer:
    # layer_types picks only masks and windows, any kind is full attention
    ("olmo2 layer_types linear_attention / mamba / chunked_attention", _with(_OLMO2, layer_types=[
        "linear_attention", "full_attention", "mamba", "chunked_attention"]), H100, None),
    ("olmo2 sliding_attention without sliding_window", _with(_OLMO2, layer_types=["sliding_attention"] + [
        "full_attention"] * 3), H100, "no attribute 'sliding_window'"),
    ("olmo2 sliding_attention with sliding_window", _with(_OLMO2, sliding_window=512, layer_types=[
        "sliding_attention"] + ["full_attention"] * 3), H100, None),
    ("olmo3 layer_types linear_attention (rope per layer type)", _with(_OLMO2, architectures=["Olmo3ForCausalLM"],
                                                                       model_type="olmo3", layer_types=[
        "linear_attention", "full_attention"] * 2), H100, "KeyError: 'linear_attention'"),
]
_QWEN3_5 = {**_with(QWEN3, drop=("layer_types",)), "architectures": ["Qwen3_5ForCausalLM"], "model_type": "qwen3_5_text",
            "num_hidden_layers": 4, "layer_types": ["linear_attention"] * 3 + ["full_attention"],
            "full_attention_interval": 4, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128,
            "linear_value_head_dim": 128, "linear_num_key_heads": 16, "linear_num_value_heads": 16}
_VLLM_CASES += [
    # PreTrainedConfig.__post_init__'s remap_legacy_layer_types iterates layer_types on every class
    # (a wrapper's top-level copy is kept as written, and fails there)
    ("gemma3 wrapper top-level layer_types 1.5", _with(_GEMMA3_MM, layer_types=1.5), H100, "not iterable"),
    ("gemma3 wrapper top-level layer_types [['x']]", _with(_GEMMA3_MM, layer_types=[["x"]]), H100, "unhashable"),
    # Qwen3.5's declared Gated DeltaNet sizes
    ("qwen3_5 linear_num_value_heads {}", _with(_QWEN3_5, linear_num_value_heads={}), Capability(10, 0),
     "linear_num_value_heads"),
    # Qwen2Model's assertion (qwen2.py), with its own words
    ("qwen3 layer_types mixed, max_window_layers 28 of 2 layers", _with(
        QWEN3, layer_types=["sliding_attention", "full_attention"], max_window_layers=28), H100,
     "Sliding window for some but all layers is not supported"),
]
# vLLM builds these with no decoder layer: no attention layer, no get_attn_backend call
_NO_LAYER_CASES = [_with(JAIS2, num_hidden_layers=0), _with(LLAMA, num_hidden_layers=-1)]


@pytest.fixture(scope="module")
def vllm_answers() -> list[dict]:
    cases = [{"config": c, "capability": [cap.major, cap.minor]} for _, c, cap, _ in _VLLM_CASES]
    cases += [{"config": c, "capability": [9, 0]} for c in _NO_LAYER_CASES]
    return run_model_oracle(cases, 900)


@pytest.mark.vllm
@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(_VLLM_CASES)), ids=[c[0] for c in _VLLM_CASES])
def test_against_vllm(vllm_answers, index):
    name, config, cap, refusal = _VLLM_CASES[index]
    res = vllm_answers[index]
    f = facts_agreeing_with_vllm(res, lambda: _facts(config, cap), refusal)
    if f is None:
        return
    theirs = {(c["head_size"], c["use_mla"], c["attn_type"]) for c in res["calls"]}
    assert {(g.attn.head_size, g.attn.use_mla, g.attn.attn_type) for g in f.groups} == theirs
    caps = {layer.get("logits_soft_cap") or None for layer in res["layers"]}
    assert {g.attn.logits_soft_cap for g in f.groups} == caps


@pytest.mark.vllm
@pytest.mark.slow
def test_no_layers_against_vllm(vllm_answers):
    for config, res in zip(_NO_LAYER_CASES, vllm_answers[len(_VLLM_CASES):]):
        assert res["error"] is None and not res["calls"] and not res["layers"], res["error"]
        with pytest.raises(UserError, match="builds no decoder layers"):
            _facts(config)


# A Sentence-Transformers config's max_seq_length becomes the max model
# length, read with int() and required positive (config/model.py:2636-2649, 1070)
_ST_MAX_LEN = [(0, "positive integer"), ("x", "invalid literal for int()"), ("512", None), (512.5, None)]


@pytest.mark.vllm
@pytest.mark.slow
def test_sentence_transformers_max_seq_length_against_vllm(tmp_path):
    from attn_select.selector.model import facts_from_path

    files = [{"sentence_bert_config.json": json.dumps({"max_seq_length": v})} for v, _ in _ST_MAX_LEN]
    answers = run_model_oracle([{"config": QWEN3, "capability": [9, 0], "files": f} for f in files], 900)
    for i, ((value, refusal), res, f) in enumerate(zip(_ST_MAX_LEN, answers, files)):
        folder = tmp_path / str(i)
        folder.mkdir()
        (folder / "config.json").write_text(json.dumps(QWEN3))
        (folder / "sentence_bert_config.json").write_text(f["sentence_bert_config.json"])
        if refusal is None:
            assert res["error"] is None, res["error"]
            facts_from_path(folder, name="m")
        else:
            assert res["error"] and refusal in res["error"], res["error"]
            with pytest.raises(UserError, match="max_seq_length"):
                facts_from_path(folder, name="m")
