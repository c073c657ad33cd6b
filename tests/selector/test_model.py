"""config.json -> ModelFacts, checked against what vLLM 0.33.0's model files
pass to their attention layers, on real public configs (tests/fixtures)."""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path

import pytest

from attn_select.selector.config import Capability
from attn_select.selector.errors import UserError
from attn_select.selector.model import facts_from_path, model_facts, resolve_dtype, weights_dtype

CONFIGS = Path(__file__).resolve().parents[1] / "fixtures" / "configs"
H100, T4 = Capability(9, 0), Capability(7, 5)


def load(name: str, **kw):
    return facts_from_path(CONFIGS / name, name=name, **kw)


def cfg(name: str) -> dict:
    return json.loads((CONFIGS / name / "config.json").read_text())


def groups(facts):
    return {g.name: g for g in facts.groups}


# --- real configs ----------------------------------------------------------


def test_llama_31_8b_one_full_group():
    f = load("llama-3.1-8b", capability=H100)
    assert f.architecture == "LlamaForCausalLM" and f.model_type == "llama"
    assert [g.name for g in f.groups] == ["full"]
    g = f.groups[0]
    assert g.layers == tuple(range(32))
    a = g.attn
    assert (a.head_size, a.head_size_v, a.num_heads, a.num_kv_heads) == (128, 128, 32, 8)
    assert a.attn_type == "decoder" and a.sliding_window is None and not a.has_sink and not a.use_mla
    assert (f.head_size, f.num_heads, f.num_kv_heads, f.num_layers) == (128, 32, 8, 32)
    assert f.dtype == "bfloat16" and f.config_dtype == "bfloat16" and f.runner == "generate"
    assert f.other_layers == () and f.kv_cache_scheme is None


@pytest.mark.parametrize("tp,heads,kv", [(1, 32, 8), (2, 16, 4), (8, 4, 1), (16, 2, 1)])
def test_llama_tensor_parallel_splits_heads(tp, heads, kv):
    f = load("llama-3.1-8b", tp=tp)
    a = f.groups[0].attn
    assert (a.num_heads, a.num_kv_heads) == (heads, kv)
    assert (f.num_heads, f.num_kv_heads, f.tp) == (heads, kv, tp)


def test_tp_that_does_not_divide_heads_is_a_user_error():
    with pytest.raises(UserError, match="does not divide the 32 attention heads"):
        load("llama-3.1-8b", tp=3)


def test_gemma3_27b_sliding_and_full_with_mm_prefix():
    f = load("gemma-3-27b-it", capability=H100)
    assert f.architecture == "Gemma3ForConditionalGeneration" and f.model_type == "gemma3"
    g = groups(f)
    assert list(g) == ["sliding", "full"]
    full = tuple(range(5, 62, 6))  # sliding_window_pattern 6: every 6th layer is global
    assert g["full"].layers == full
    assert g["sliding"].layers == tuple(i for i in range(62) if i not in full)
    assert len(g["sliding"].layers) == 52
    assert g["sliding"].attn.sliding_window == 1024 and g["full"].attn.sliding_window is None
    for grp in g.values():
        a = grp.attn
        assert (a.head_size, a.num_heads, a.num_kv_heads) == (128, 32, 16)
        assert a.use_mm_prefix and a.logits_soft_cap is None
    assert f.is_mm_prefix_lm and f.attn_logit_softcapping is None
    assert f.dtype == "bfloat16"


def test_gemma3_text_only_deployment_clears_mm_prefix():
    f = load("gemma-3-27b-it", mm_inputs=False)
    assert not f.is_mm_prefix_lm
    assert not any(g.attn.use_mm_prefix for g in f.groups)


def test_gemma3_text_model_type_is_not_mm_prefix():
    text = cfg("gemma-3-27b-it")["text_config"]
    f = model_facts({**text, "architectures": ["Gemma3ForCausalLM"], "torch_dtype": "bfloat16"}, name="t")
    assert not f.is_mm_prefix_lm
    assert [g.name for g in f.groups] == ["sliding", "full"]


def test_gemma3_refuses_float16():
    with pytest.raises(UserError, match="'gemma3' does not support float16"):
        load("gemma-3-27b-it", dtype="half")


def test_gemma3_on_t4_runs_float32():
    # sm75 has no bfloat16; gemma3 excludes float16 -> float32 is all that is left
    assert load("gemma-3-27b-it", capability=T4).dtype == "float32"


def test_gpt_oss_20b_sinks_everywhere_sliding_on_even_layers():
    f = load("gpt-oss-20b", capability=H100)
    g = groups(f)
    assert list(g) == ["sliding", "full"]
    assert g["sliding"].layers == tuple(range(0, 24, 2))
    assert g["full"].layers == tuple(range(1, 24, 2))
    assert g["sliding"].attn.sliding_window == 128 and g["full"].attn.sliding_window is None
    for grp in g.values():
        a = grp.attn
        assert a.has_sink and (a.head_size, a.num_heads, a.num_kv_heads) == (64, 64, 8)
    # no torch_dtype in this config and no weights here: vLLM's float32 fallback, then auto -> bf16
    assert f.config_dtype == "float32" and f.dtype == "bfloat16"


def test_gpt_oss_window_follows_layer_index_not_layer_types():
    c = cfg("gpt-oss-20b")
    c["layer_types"] = ["full_attention"] * 24  # OAIAttention ignores layer_types
    g = groups(model_facts(c, name="x"))
    assert g["sliding"].layers == tuple(range(0, 24, 2))


def test_gpt_oss_tp_beyond_kv_heads_fails_like_vllm():
    with pytest.raises(UserError, match="0 KV heads per rank"):
        load("gpt-oss-20b", tp=16)


def test_deepseek_v3_mla():
    f = load("deepseek-v3", capability=H100)
    assert [g.name for g in f.groups] == ["mla"]
    a = f.groups[0].attn
    assert a.use_mla and not a.use_sparse
    assert (a.head_size, a.num_heads, a.num_kv_heads) == (576, 128, 1)
    assert (a.kv_lora_rank, a.qk_rope_head_dim, a.qk_nope_head_dim, a.v_head_dim) == (512, 64, 128, 128)
    assert a.sliding_window is None and not a.has_sink and not a.use_mm_prefix
    assert (f.head_size, f.num_heads, f.num_kv_heads) == (576, 128, 1)
    assert f.groups[0].layers == tuple(range(61))


def test_deepseek_v3_tp8():
    f = load("deepseek-v3", tp=8)
    assert f.groups[0].attn.num_heads == 16 and f.groups[0].attn.num_kv_heads == 1
    assert f.num_kv_heads == 1


def test_deepseek_non_causal_drops_mla():
    # ModelConfig.use_mla is False for is_causal=False; DeepseekV2Attention then
    # runs MHA over qk_nope + qk_rope with EncoderOnlyAttention
    c = {**cfg("deepseek-v3"), "is_causal": False}
    f = model_facts(c, name="x")
    a = f.groups[0].attn
    assert not a.use_mla and a.attn_type == "encoder_only"
    assert (a.head_size, a.num_heads, a.num_kv_heads) == (192, 128, 128)


def test_deepseek_v32_sparse_from_index_topk():
    c = {**cfg("deepseek-v3"), "architectures": ["DeepseekV32ForCausalLM"], "model_type": "deepseek_v32",
         "index_topk": 2048, "index_n_heads": 64, "index_head_dim": 128}
    f = model_facts(c, name="v32")
    assert [g.name for g in f.groups] == ["sparse_mla"]
    assert f.groups[0].attn.use_sparse and f.groups[0].attn.head_size == 576
    assert f.index_topk == 2048


def test_whisper_small_decoder_cross_and_encoder():
    f = load("whisper-small", capability=H100)
    g = groups(f)
    assert list(g) == ["decoder", "cross"]
    assert g["decoder"].attn.attn_type == "decoder" and g["cross"].attn.attn_type == "encoder_decoder"
    for grp in g.values():
        assert grp.layers == tuple(range(12))
        a = grp.attn
        assert (a.head_size, a.num_heads, a.num_kv_heads) == (64, 12, 12)
        assert a.sliding_window is None
    # encoder self-attention is MMEncoderAttention: not a get_attn_backend selection
    assert [(o.kind, o.layers) for o in f.other_layers] == [("mm_encoder_attention", tuple(range(12)))]
    assert f.config_dtype == "float32" and f.dtype == "bfloat16"
    assert (f.head_size, f.num_heads, f.num_layers) == (64, 12, 12)


def test_bert_base_encoder_only_pooling_float16():
    f = load("bert-base-uncased", capability=H100)
    assert [g.name for g in f.groups] == ["encoder"]
    a = f.groups[0].attn
    assert a.attn_type == "encoder_only" and (a.head_size, a.num_heads, a.num_kv_heads) == (64, 12, 12)
    # pooling runner + float32 weights: "auto" prefers float16
    assert f.runner == "pooling" and f.dtype == "float16"


def test_bert_dtype_from_safetensors_headers(tmp_path):
    (tmp_path / "config.json").write_text((CONFIGS / "bert-base-uncased" / "config.json").read_text())
    write_safetensors(tmp_path / "model.safetensors", {"a": "F32", "b": "F32"})
    f = facts_from_path(tmp_path, name="bert")
    assert f.config_dtype == "float32"
    assert any("weights are float32" in n for n in f.notes)


def write_safetensors(path: Path, dtypes: dict[str, str]) -> None:
    header = {name: {"dtype": dt, "shape": [1], "data_offsets": [0, 4]} for name, dt in dtypes.items()}
    header["__metadata__"] = {"format": "pt"}
    blob = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(blob)) + blob + b"\0" * 4)


@pytest.mark.parametrize(
    "dtypes,expected",
    [({"w": "BF16", "blocks": "U8"}, "bfloat16"), ({"a": "BF16", "b": "F32"}, "float32"),
     ({"a": "F16"}, "float16"), ({"a": "F8_E4M3", "s": "F32"}, "float32")],
)
def test_weights_dtype_is_common_lossless_dtype(tmp_path, dtypes, expected):
    write_safetensors(tmp_path / "model.safetensors", dtypes)
    assert weights_dtype(tmp_path) == expected


# --- profiles of other architectures, through the same parser ---------------


def test_mistral_window_on_every_layer():
    from attn_select.selector.profiles import load_model

    f = load_model("mistral-7b")
    assert [g.name for g in f.groups] == ["sliding"]
    assert f.groups[0].attn.sliding_window == 4096 and len(f.groups[0].layers) == 32


def test_disable_sliding_window():
    from attn_select.selector.profiles import load_model

    f = load_model("mistral-7b", disable_sliding_window=True)
    assert [g.name for g in f.groups] == ["full"] and f.groups[0].attn.sliding_window is None


def test_gemma2_alternates_and_soft_caps():
    from attn_select.selector.profiles import load_model

    f = load_model("gemma-2-9b")
    g = groups(f)
    assert g["sliding"].layers == tuple(range(0, 42, 2)) and g["full"].layers == tuple(range(1, 42, 2))
    assert g["sliding"].attn.sliding_window == 4096
    assert all(x.attn.logits_soft_cap == 50.0 for x in f.groups)
    assert f.attn_logit_softcapping == 50.0
    assert (g["full"].attn.head_size, g["full"].attn.num_heads, g["full"].attn.num_kv_heads) == (256, 16, 8)


def test_qwen3_next_hybrid():
    from attn_select.selector.profiles import load_model

    f = load_model("qwen3-next-80b-a3b")
    assert [g.name for g in f.groups] == ["full"]
    g = f.groups[0]
    assert g.layers == tuple(range(3, 48, 4))
    assert (g.attn.head_size, g.attn.num_heads, g.attn.num_kv_heads) == (256, 16, 2)
    assert [(o.kind, len(o.layers)) for o in f.other_layers] == [("gated_deltanet", 36)]
    assert 0 in f.other_layers[0].layers and 3 not in f.other_layers[0].layers


def test_phi3_mini_window_and_head_96():
    from attn_select.selector.profiles import load_model

    a = load_model("phi-3-mini").groups[0].attn
    assert a.sliding_window == 2047 and a.head_size == 96 and a.num_kv_heads == 32


# --- Qwen2/3 sliding-window rules -------------------------------------------

QWEN3 = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 4096, "head_dim": 128,
         "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 36, "torch_dtype": "bfloat16"}


def test_qwen_use_sliding_window_false_drops_window():
    f = model_facts({**QWEN3, "use_sliding_window": False, "sliding_window": 32768, "max_window_layers": 28},
                    name="q")
    assert [g.name for g in f.groups] == ["full"]
    assert any("use_sliding_window is false" in n for n in f.notes)


def test_qwen_partial_sliding_is_rejected_like_vllm():
    with pytest.raises(UserError, match="Sliding window for some but all layers is not supported"):
        model_facts({**QWEN3, "use_sliding_window": True, "sliding_window": 4096, "max_window_layers": 28},
                    name="q")


def test_qwen_sliding_from_max_window_layers_equal_layers_is_full():
    # every layer "full_attention" by Qwen3Config's rule -> no model-level window
    f = model_facts({**QWEN3, "use_sliding_window": True, "sliding_window": 4096, "max_window_layers": 36},
                    name="q")
    assert f.groups[0].attn.sliding_window is None


def test_qwen2_head_size_ignores_head_dim():
    c = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 3584, "head_dim": 64,
         "num_attention_heads": 28, "num_key_value_heads": 4, "num_hidden_layers": 28, "torch_dtype": "bfloat16"}
    f = model_facts(c, name="q2")
    assert f.groups[0].attn.head_size == 128  # qwen2.py: hidden_size // num_heads
    assert f.head_size == 64  # model_config.get_head_size reads head_dim


# --- generic rules -----------------------------------------------------------

LLAMA = json.loads((CONFIGS / "llama-3.1-8b" / "config.json").read_text())


def test_is_causal_false_builds_encoder_only():
    f = model_facts({**LLAMA, "is_causal": False}, name="x")
    assert [g.name for g in f.groups] == ["encoder"] and f.groups[0].attn.attn_type == "encoder_only"


def test_llama_layer_types_give_per_layer_windows():
    types = ["sliding_attention", "sliding_attention", "full_attention"] * 10 + ["full_attention"] * 2
    f = model_facts({**LLAMA, "layer_types": types, "sliding_window": 512}, name="x")
    g = groups(f)
    assert g["sliding"].attn.sliding_window == 512 and len(g["sliding"].layers) == 20
    assert g["full"].attn.sliding_window is None and len(g["full"].layers) == 12


def test_sliding_window_zero_means_none():
    f = model_facts({**LLAMA, "model_type": "mistral", "architectures": ["MistralForCausalLM"], "sliding_window": 0},
                    name="x")
    assert f.groups[0].attn.sliding_window is None


def test_compressed_tensors_kv_scheme_per_head_scales():
    q = {"quant_method": "compressed-tensors",
         "kv_cache_scheme": {"num_bits": 8, "type": "float", "strategy": "attn_head", "dynamic": False,
                             "symmetric": True}}
    f = model_facts({**LLAMA, "quantization_config": q}, name="x")
    assert f.kv_cache_scheme == "fp8" and f.groups[0].attn.use_per_head_quant_scales


@pytest.mark.parametrize("scheme,match", [
    ("fp8", "kv_cache_scheme is 'fp8', not a mapping"),
    ({"type": "int", "num_bits": 8, "strategy": "tensor", "symmetric": True}, "type 'int' and num_bits 8"),
    ({"type": "float", "num_bits": 4, "strategy": "tensor", "symmetric": True}, "type 'float' and num_bits 4"),
    ({"type": "float", "num_bits": 8, "strategy": "channel", "symmetric": True}, "strategy is 'channel'"),
    ({"type": "float", "num_bits": 8, "strategy": "tensor"}, "symmetric is null"),
], ids=["string", "int", "4 bits", "channel", "no symmetric"])
def test_compressed_tensors_kv_schemes_vllm_cannot_build_attention_with(scheme, match):
    # CompressedTensorsKVCacheMethod.validate_kv_cache_scheme, in every Attention's __init__
    q = {"quant_method": "compressed-tensors", "kv_cache_scheme": scheme}
    with pytest.raises(UserError, match=match):
        model_facts({**LLAMA, "quantization_config": q}, name="x")


def test_modelopt_fp8_kv_cache():
    q = {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}}
    f = model_facts({**LLAMA, "quantization_config": q}, name="x")
    assert f.kv_cache_scheme == "fp8_e4m3" and not f.groups[0].attn.use_per_head_quant_scales


def test_rswa_and_diffusion_flags():
    f = model_facts({**LLAMA, "rswa_window": 1024, "canvas_length": 32}, name="x")
    assert f.rswa_window == 1024 and f.is_diffusion


# a remote model class in auto_map: vLLM's registry hands an architecture it
# lacks to its Transformers backend through it (a bare unknown name is refused)
_REMOTE_FOO = {"AutoConfig": "configuration_foo.FooConfig", "AutoModelForCausalLM": "modeling_foo.FooForCausalLM"}


def test_unknown_architecture_is_derived_generically():
    c = {"architectures": ["FooForCausalLM"], "model_type": "foo", "hidden_size": 2048, "num_attention_heads": 16,
         "num_kv_heads": 4, "num_hidden_layers": 4, "torch_dtype": "float16", "auto_map": _REMOTE_FOO,
         "layer_types": ["full_attention", "sliding_attention", "full_attention", "sliding_attention"],
         "sliding_window": 512}
    f = model_facts(c, trust_remote_code=True, name="foo")
    assert f.groups[0].layers == (0, 2) and f.groups[0].attn.num_kv_heads == 4
    assert f.groups[1].layers == (1, 3) and f.groups[1].attn.sliding_window == 512
    assert f.dtype == "float16" and any("not in vLLM 0.33.0's model registry" in n for n in f.notes)
    # the Transformers backend vLLM tries refuses layers without attention (checked against
    # vLLM with transformers' Bamba / MiniMax classes in test_model_vs_vllm.py)
    with pytest.raises(UserError, match=r"Layer 1 \(mamba\) does not dispatch"):
        model_facts({**c, "layer_types": ["full_attention", "mamba", "full_attention", "mamba"]},
                    trust_remote_code=True, name="foo")


def test_registered_architecture_without_a_mirror_is_derived_llama_style():
    c = {"architectures": ["OrionForCausalLM"], "model_type": "orion",
         "auto_map": {"AutoConfig": "configuration_orion.OrionConfig"}, "hidden_size": 2048,
         "num_attention_heads": 16, "num_key_value_heads": 4, "num_hidden_layers": 2, "torch_dtype": "bfloat16",
         "attn_logit_softcapping": 30.0}
    f = model_facts(c, trust_remote_code=True, name="orion")
    assert any("no dedicated mirror" in n for n in f.notes)
    # a Llama-style model file reads no soft cap; only the Transformers backend passes one
    assert f.groups[0].attn.logits_soft_cap is None


def test_unregistered_architecture_takes_the_transformers_backend_mla_rule():
    """ModelConfig.use_mla on the Transformers backend: kv_lora_rank alone, any model type."""
    c = {"architectures": ["BarForCausalLM"], "model_type": "bar", "hidden_size": 2048, "num_attention_heads": 16,
         "num_key_value_heads": 16, "num_hidden_layers": 3, "torch_dtype": "bfloat16", "kv_lora_rank": 256,
         "q_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 64, "v_head_dim": 128, "head_dim": 128,
         "index_topk": 64, "auto_map": {"AutoConfig": "configuration_bar.BarConfig",
                                    "AutoModelForCausalLM": "modeling_bar.BarForCausalLM"}}
    f = model_facts(c, trust_remote_code=True, name="bar")
    a = f.groups[0].attn
    assert a.use_mla and a.head_size == 256 + 64 and not a.use_sparse and f.groups[0].layers == (0, 1, 2)
    # the same fields under a registered, unmirrored architecture: vLLM's MLA model-type list decides (no MLA)
    g = model_facts({**c, "architectures": ["OrionForCausalLM"]}, trust_remote_code=True, name="orion-like")
    assert not g.groups[0].attn.use_mla and g.groups[0].attn.head_size == 128


def test_a_wrapper_without_text_config_may_take_its_text_class_defaults():
    """EmbeddingGemma2Config builds EmbeddingGemma2TextConfig() when text_config is absent:
    the top-level text fields are ignored (vLLM's build: 24 layers, not 4)."""
    c = {"architectures": ["EmbeddingGemma2Model"], "model_type": "embedding_gemma2", "hidden_size": 1024,
         "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 64, "num_hidden_layers": 4,
         "torch_dtype": "bfloat16"}
    f = model_facts(c, name="eg2")
    assert f.num_layers == 24 and any("no text_config" in n for n in f.notes)


# --- dtype resolution (vLLM _get_and_verify_dtype) ---------------------------


@pytest.mark.parametrize(
    "config_dtype,model_type,requested,cap,pooling,expected",
    [
        ("bfloat16", "llama", "auto", H100, False, "bfloat16"),
        ("float16", "llama", "auto", H100, False, "float16"),
        ("float32", "llama", "auto", H100, False, "bfloat16"),
        ("float32", "bert", "auto", H100, True, "float16"),
        ("bfloat16", "llama", "auto", T4, False, "float16"),
        ("float32", "gemma2", "auto", T4, False, "float32"),
        ("bfloat16", "llama", "float32", H100, False, "float32"),
        ("bfloat16", "llama", "half", H100, False, "float16"),
    ],
)
def test_resolve_dtype(config_dtype, model_type, requested, cap, pooling, expected):
    assert resolve_dtype(config_dtype, model_type, requested, capability=cap, pooling=pooling)[0] == expected


# --- bad input: one-line UserErrors ------------------------------------------


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "config.json"
    p.write_text(text)
    return p


def expect_error(match: str, fn, *a, **kw) -> str:
    with pytest.raises(UserError, match=match) as info:
        fn(*a, **kw)
    msg = str(info.value)
    assert "\n" not in msg
    return msg


def test_malformed_json_names_file_line_and_column(tmp_path):
    p = write(tmp_path, '{\n  "architectures": ["LlamaForCausalLM"],\n  "model_type": "llama",,\n}')
    msg = expect_error("invalid JSON", facts_from_path, p, name="x")
    assert f"{p}:3:" in msg


def test_json_that_is_not_an_object(tmp_path):
    expect_error("expected a JSON object", facts_from_path, write(tmp_path, "[1, 2]"), name="x")


@pytest.mark.parametrize("value", ["missing", None, [], {}, "", False, 0])
def test_empty_architectures_take_transformers_base_model_class(value):
    """get_config fills a falsy architectures with MODEL_MAPPING_NAMES[model_type]
    (vLLM builds LlamaModel: the llama model file, generate runner)."""
    c = {k: v for k, v in LLAMA.items() if k != "architectures"}
    if value != "missing":
        c["architectures"] = value
    f = model_facts(c, name="x")
    assert (f.architecture, f.runner, f.num_layers) == ("LlamaModel", "generate", LLAMA["num_hidden_layers"])
    assert any("transformers' base model class for model_type llama, LlamaModel" in n for n in f.notes)


def test_empty_architectures_without_a_base_model_class_are_refused():
    c = {**LLAMA, "architectures": [], "model_type": "qwen2_5_omni_text"}
    expect_error("No model architectures are specified", model_facts, c, name="x")
    with pytest.raises(UserError, match="SGLang needs it"):
        model_facts({**LLAMA, "architectures": []}, name="x", engine="sglang")


@pytest.mark.parametrize("arch", ["GPT2ForMaskedLM", "LlamaForMaskedLM", "FooForCausalLM", "Olmo2ForMaskedLM"])
def test_architecture_neither_registered_nor_a_transformers_class_is_refused(arch):
    """ModelRegistry._raise_for_unsupported: no vLLM class, no normalization,
    no transformers class the Transformers backend can wrap."""
    msg = expect_error(re.escape(f"Model architectures ['{arch}'] are not supported for now"), model_facts,
                       {**LLAMA, "architectures": [arch]}, name="x")
    assert "\n" not in msg


@pytest.mark.parametrize("arch,runner", [
    ("LlamaForTokenClassification", "pooling"),  # normalizes to LlamaForCausalLM (converted)
    ("GPT2ForQuestionAnswering", "generate"),  # a transformers class: the Transformers backend
    ("Olmo2Model", "pooling"),  # normalizes to Olmo2ForCausalLM's Transformers-backend entry
])
def test_architecture_vllm_resolves_is_not_refused(arch, runner):
    assert model_facts({**LLAMA, "architectures": [arch]}, name="x").runner == runner


def test_a_later_registered_architecture_builds_the_model():
    f = model_facts({**LLAMA, "architectures": ["FooForCausalLM", "LlamaForCausalLM"]}, name="x")
    assert f.architecture == "LlamaForCausalLM" and not any("not in vLLM" in n for n in f.notes)


def test_missing_model_type():
    c = dict(LLAMA)
    del c["model_type"]
    expect_error("no 'model_type'", model_facts, c, name="x")


def test_missing_heads_for_unknown_model_type():
    c = {"architectures": ["FooForCausalLM"], "model_type": "foo", "hidden_size": 64, "num_hidden_layers": 2,
         "auto_map": _REMOTE_FOO}
    expect_error("num_attention_heads", model_facts, c, trust_remote_code=True, name="x")


def test_wrong_field_type_names_the_field():
    expect_error("'num_attention_heads'", model_facts, {**LLAMA, "num_attention_heads": "many"}, name="x")


@pytest.mark.parametrize("head_dim", [0, -64])
def test_non_positive_head_size(head_dim):
    c = {**cfg("gpt-oss-20b"), "head_dim": head_dim}
    expect_error("head size is", model_facts, c, name="x")


def test_negative_llama_head_dim():
    expect_error("head size is -8", model_facts, {**LLAMA, "head_dim": -8}, name="x")


def test_unknown_torch_dtype():
    expect_error("torch_dtype is 'bf16', which names no torch dtype", model_facts, {**LLAMA, "torch_dtype": "bf16"}, name="x")


def test_unknown_requested_dtype():
    expect_error("unknown dtype 'fp8'", model_facts, LLAMA, name="x", dtype="fp8")


def test_layer_types_too_short():
    expect_error("layer_types has 2 entries for 32 layers", model_facts,
                 {**LLAMA, "layer_types": ["full_attention"] * 2}, name="x")


def test_layer_types_longer_than_the_layers_is_refused_as_transformers_does():
    # PreTrainedConfig.validate_layer_type refuses it (a gpt-oss config cut to
    # 4 layers that keeps its 24 layer_types), so vLLM cannot load the config
    gpt_oss = json.loads((CONFIGS / "gpt-oss-20b" / "config.json").read_text())
    expect_error("layer_types has 24 entries for 4 layers", model_facts,
                 {**gpt_oss, "num_hidden_layers": 4}, name="x")
    expect_error("mlp_layer_types has 2 entries for 32 layers", model_facts,
                 {**LLAMA, "layer_types": ["full_attention"] * 32, "mlp_layer_types": ["dense"] * 2}, name="x")


def test_layer_types_entry_transformers_does_not_know_is_refused():
    expect_error("layer_types entry 'foo' is not a layer kind transformers knows", model_facts,
                 {**LLAMA, "layer_types": ["foo"] * 32}, name="x")
    # the legacy names transformers remaps are accepted
    f = model_facts({**LLAMA, "layer_types": ["attention"] * 32}, name="x")
    assert f.groups[0].layers == tuple(range(32))


def test_folder_without_config(tmp_path):
    expect_error("has no config.json", facts_from_path, tmp_path, name="x")


def test_bad_tp():
    expect_error("tensor parallel size must be a positive integer", model_facts, LLAMA, name="x", tp=0)


@pytest.mark.parametrize("name,field", [("gemma-3-27b-it", "num_key_value_heads"),
                                        ("whisper-small", "decoder_attention_heads"), ("whisper-small", "d_model")])
def test_null_sizes_are_user_errors(name, field):
    # Gemma3TextConfig and WhisperConfig declare these as int (no None): transformers refuses null
    c = cfg(name)
    (c["text_config"] if "text_config" in c else c)[field] = None
    expect_error(rf"{field} is null; transformers \(and so vLLM\) needs an integer here", model_facts, c, name="x")


def test_bert_relative_positions_rejected_like_vllm():
    expect_error("position_embedding_type", model_facts,
                 {**cfg("bert-base-uncased"), "position_embedding_type": "relative_key"}, name="x")


def test_gpt_oss_null_kv_heads_refused_like_transformers():
    # GptOssConfig declares num_key_value_heads as int (no None): vLLM's
    # HFConfigParser fails on null before __post_init__ could default it
    expect_error(r"num_key_value_heads is null; transformers \(and so vLLM\) needs an integer here",
                 model_facts, {**cfg("gpt-oss-20b"), "num_key_value_heads": None}, name="x")


def test_generic_hybrid_pattern_lists_mamba_layers():
    c = {"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "hidden_size": 4096,
         "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 6,
         "hybrid_override_pattern": "M-M*-E", "torch_dtype": "bfloat16"}
    f = model_facts(c, name="nh")
    assert f.groups[0].layers == (3,) and f.groups[0].attn.head_size == 128
    assert {o.kind: o.layers for o in f.other_layers} == {"mamba": (0, 2), "mlp": (1, 4), "moe": (5,)}


def test_generic_layers_block_type():
    # Nemotron-3's config.json lists its layers by name (NemotronHConfig.layers_block_type;
    # vLLM reads them back through the hybrid_override_pattern property)
    c = {"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "hidden_size": 4096,
         "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 52,
         "layers_block_type": ["linear_attention", "mlp", "linear_attention", "full_attention", "mlp"],
         "torch_dtype": "bfloat16"}
    f = model_facts(c, name="nh3")
    assert f.num_layers == 5 and f.groups[0].layers == (3,)
    assert {o.kind: o.layers for o in f.other_layers} == {"linear_attention": (0, 2), "mlp": (1, 4)}


def test_nemotron_h_layer_list_alias_precedence_and_class_default():
    base = {"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "hidden_size": 4096,
            "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "torch_dtype": "bfloat16"}
    # layer_types is an alias of layers_block_type (NemotronHConfig.attribute_map)
    f = model_facts({**base, "layer_types": ["full_attention", "mlp", "linear_attention"]}, name="a")
    assert f.num_layers == 3 and f.groups[0].layers == (0,)
    # the list wins over the legacy pattern, as in the config class
    f = model_facts({**base, "hybrid_override_pattern": "M*", "layers_block_type": ["full_attention", "mlp"]},
                    name="b")
    assert f.num_layers == 2 and f.groups[0].layers == (0,)
    # neither: the class default, four layers with attention third
    f = model_facts({**base, "num_hidden_layers": 40}, name="c")
    assert f.num_layers == 4 and f.groups[0].layers == (2,)


def test_jamba_layers_block_type_is_derived_and_refused_when_given():
    c = {"architectures": ["JambaForCausalLM"], "model_type": "jamba", "hidden_size": 4096,
         "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 4,
         "attn_layer_period": 4, "attn_layer_offset": 2, "torch_dtype": "bfloat16"}
    f = model_facts(c, name="j")
    assert f.groups[0].layers == (2,) and f.other_layers[0].layers == (0, 1, 3)
    with pytest.raises(UserError, match="sets layers_block_type, which JambaConfig computes itself"):
        model_facts({**c, "layers_block_type": ["mamba", "mamba", "attention", "mamba"]}, name="j")


def test_modelopt_hf_quant_config_beside_config_json(tmp_path):
    """ModelOpt <= 0.29 checkpoints keep their quantization config in
    hf_quant_config.json; vLLM's get_config reads it when config.json has
    none, and its kv_cache_quant_algo makes the KV cache fp8."""
    llama = json.loads((CONFIGS / "llama-3.1-8b" / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps(llama))
    assert facts_from_path(tmp_path, name="m").kv_cache_scheme is None
    (tmp_path / "hf_quant_config.json").write_text(json.dumps({
        "producer": {"name": "modelopt", "version": "0.29.0"},
        "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8"},
    }))
    assert facts_from_path(tmp_path, name="m").kv_cache_scheme == "fp8_e4m3"
    assert facts_from_path(tmp_path / "config.json", name="m").kv_cache_scheme == "fp8_e4m3"
    # config.json's own quantization_config wins, as in vLLM
    (tmp_path / "config.json").write_text(json.dumps({**llama, "quantization_config": {"quant_method": "fp8"}}))
    assert facts_from_path(tmp_path, name="m").kv_cache_scheme is None
    (tmp_path / "config.json").write_text(json.dumps(llama))
    (tmp_path / "hf_quant_config.json").write_text("[1]")
    with pytest.raises(UserError, match="hf_quant_config.json: expected a JSON object"):
        facts_from_path(tmp_path, name="m")


# --- configs whose class is the checkpoint's remote code (the vLLM oracle
# cannot load them): derived from vLLM's model files, checked here by hand


def _nemotron_super_like(n_layers: int = 6) -> dict:
    """nvidia/Llama-3_3-Nemotron-Super-49B-v1's shape: 64 query heads,
    n_heads_in_group 8 on attention blocks, some blocks' attention a no-op."""
    def block(no_op: bool, group: int | None) -> dict:
        return {"attention": {"n_heads_in_group": group, "no_op": no_op, "num_sink_tokens": None,
                              "replace_with_linear": False, "sparsify": None, "unshifted_sink": False,
                              "use_prefill_window_in_sink_attention": False, "window_length": None},
                "ffn": {"ffn_mult": 5.25, "no_op": False, "replace_with_linear": False, "sparsify": None}}
    blocks = [block(False, 8), block(True, None), block(False, 8), block(False, 16), block(True, None),
              block(False, 8)][:n_layers]
    return {"architectures": ["DeciLMForCausalLM"], "model_type": "nemotron-nas",
         "auto_map": {"AutoConfig": "configuration_decilm.DeciLMConfig"}, "hidden_size": 8192,
            "num_attention_heads": 64, "num_hidden_layers": n_layers, "vocab_size": 128256,
            "torch_dtype": "bfloat16", "block_configs": blocks, "rope_theta": 500000.0}


def test_decilm_nemotron_nas_per_block_kv_heads_and_no_op_layers():
    # nemotron_nas.py DeciLMDecoderLayer: KV heads = 64 // n_heads_in_group per
    # block; no_op blocks build no attention. NemotronNasModelArchConfigConvertor:
    # the model-level KV heads are the first attention block's
    f = model_facts(_nemotron_super_like(), trust_remote_code=True, name="nemotron-super", capability=H100)
    by_layer = {i: g.attn for g in f.groups for i in g.layers}
    assert sorted(by_layer) == [0, 2, 3, 5]
    assert {i: by_layer[i].num_kv_heads for i in by_layer} == {0: 8, 2: 8, 3: 4, 5: 8}
    assert all(a.head_size == 128 and a.num_heads == 64 and a.sliding_window is None for a in by_layer.values())
    assert {o.kind for o in f.other_layers} == {"no_op_attention"}
    assert f.num_kv_heads == 8 and f.head_size == 128
    assert any("not checked against a vLLM build" in n for n in f.notes)
    tp8 = model_facts(_nemotron_super_like(), trust_remote_code=True, name="n", tp=8, capability=H100)
    assert tp8.groups[0].attn.num_kv_heads == 1


def test_decilm_without_attention_blocks_rejected():
    config = _nemotron_super_like()
    for block in config["block_configs"]:
        block["attention"]["no_op"] = True
    with pytest.raises(UserError):
        model_facts(config, name="n", capability=H100)


def test_exaone_3_5_num_layers_maps_to_num_hidden_layers():
    # LGAI-EXAONE/EXAONE-3.5-7.8B-Instruct's config.json; its remote
    # ExaoneConfig has attribute_map {"num_hidden_layers": "num_layers"}
    config = {"architectures": ["ExaoneForCausalLM"], "model_type": "exaone",
         "auto_map": {"AutoConfig": "configuration_exaone.ExaoneConfig"}, "hidden_size": 4096,
              "num_attention_heads": 32, "num_key_value_heads": 8, "num_layers": 32, "intermediate_size": 14336,
              "vocab_size": 102400, "max_position_embeddings": 32768, "rope_theta": 1000000.0,
              "rope_scaling": {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                               "original_max_position_embeddings": 8192, "rope_type": "llama3"},
              "activation_function": "silu", "layer_norm_epsilon": 1e-5, "torch_dtype": "bfloat16"}
    f = model_facts(config, trust_remote_code=True, name="exaone-3.5", capability=H100)
    assert f.num_layers == 32 and [g.layers for g in f.groups] == [tuple(range(32))]
    a = f.groups[0].attn
    assert (a.num_heads, a.num_kv_heads, a.head_size, a.sliding_window) == (32, 8, 128, None)
    # no num_key_value_heads: ExaoneConfig gives the query head count
    del config["num_key_value_heads"]
    assert model_facts(config, trust_remote_code=True, name="e", capability=H100).groups[0].attn.num_kv_heads == 32


def test_longcat_flash_null_num_layers_is_a_user_error():
    config = {"architectures": ["LongcatFlashForCausalLM"], "model_type": "longcat_flash", "num_layers": None,
              "hidden_size": 1024, "num_attention_heads": 64, "torch_dtype": "bfloat16"}
    with pytest.raises(UserError, match="num_layers"):
        model_facts(config, name="l", capability=H100)


def test_deepseek_v4_is_refused_it_bypasses_get_attn_backend():
    # DeepseekV4DecoderLayer takes its attention class from
    # _select_dsv4_attn_cls; no layer asks get_attn_backend
    config = {"architectures": ["DeepseekV4ForCausalLM"], "model_type": "deepseek_v4", "hidden_size": 4096,
              "num_hidden_layers": 4, "num_attention_heads": 64, "num_key_value_heads": 1, "head_dim": 512,
              "qk_rope_head_dim": 64, "q_lora_rank": 1024, "o_lora_rank": 1024, "compress_ratios": [0, 4, 128, 4, 0],
              "index_topk": 512, "torch_dtype": "bfloat16"}
    with pytest.raises(UserError, match="never calls get_attn_backend.*FLASHMLA_SPARSE_DSV4"):
        model_facts(config, name="dsv4", capability=H100)


def test_transformers_backend_architectures_say_so():
    c = {"architectures": ["Starcoder2ForCausalLM"], "model_type": "starcoder2", "hidden_size": 3072,
         "num_attention_heads": 24, "num_key_value_heads": 2, "num_hidden_layers": 30, "sliding_window": 4096,
         "torch_dtype": "bfloat16"}
    f = model_facts(c, name="sc2")
    assert any("through its Transformers modeling backend" in n for n in f.notes)
    assert not any("no dedicated mirror" in n for n in f.notes)
    assert f.groups[0].attn.sliding_window == 4096 and f.groups[0].attn.num_kv_heads == 2


def test_smollm3_slides_only_its_nope_layers():
    # SmolLM3Config: every 4th layer has no RoPE; use_sliding_window makes those sliding
    c = {"architectures": ["SmolLM3ForCausalLM"], "model_type": "smollm3", "hidden_size": 2048,
         "num_attention_heads": 16, "num_key_value_heads": 4, "num_hidden_layers": 8, "torch_dtype": "bfloat16",
         "use_sliding_window": True, "sliding_window": 512}
    f = model_facts(c, name="s")
    windows = {i: g.attn.sliding_window for g in f.groups for i in g.layers}
    assert [i for i, w in sorted(windows.items()) if w == 512] == [3, 7]
    assert model_facts({**c, "use_sliding_window": False}, name="s").groups[0].attn.sliding_window is None


def test_gpt_bigcode_multi_query_is_one_kv_head():
    c = {"architectures": ["GPTBigCodeForCausalLM"], "model_type": "gpt_bigcode", "n_embd": 2048, "n_head": 16,
         "n_layer": 24, "torch_dtype": "float16"}
    f = model_facts(c, name="santacoder")
    assert f.num_layers == 24 and f.groups[0].attn.num_kv_heads == 1 and f.groups[0].attn.head_size == 128
    assert model_facts({**c, "multi_query": False}, name="x").groups[0].attn.num_kv_heads == 16
