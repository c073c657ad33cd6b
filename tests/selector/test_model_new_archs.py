"""Gemma-4, Cohere2 and Qwen2.5-VL parsing without vLLM (the values are what
vLLM 0.33.0 builds, recorded by tests/selector/test_model_vs_vllm.py), and
the dropped-architecture table against vLLM's registry source."""

from __future__ import annotations

import ast

import pytest

from attn_select.selector.errors import UserError
from attn_select.selector.model import model_facts
from attn_select.selector.model.vllm_registry import _DROPPED, TRANSFORMERS_BACKEND
from tests.vllm_source import vllm_source

VLLM_REGISTRY = vllm_source() / "model_executor/models/registry.py"


def _gemma4_text(**fields) -> dict:
    text = {"model_type": "gemma4_text", "hidden_size": 1024, "num_hidden_layers": 8, "num_attention_heads": 8,
            "num_key_value_heads": 4, "head_dim": 256, "global_head_dim": 512, "sliding_window": 1024,
            "layer_types": (["sliding_attention"] * 3 + ["full_attention"]) * 2, "torch_dtype": "bfloat16"}
    return {**text, **fields, "architectures": ["Gemma4ForCausalLM"]}


def _by_layer(facts) -> dict[int, object]:
    return {i: g.attn for g in facts.groups for i in g.layers}


def test_gemma4_full_layers_use_global_head_dim_and_kv_heads():
    f = model_facts(_gemma4_text(attention_k_eq_v=True, num_global_key_value_heads=2,
                                 use_bidirectional_attention="vision"), name="g4")
    layers = _by_layer(f)
    assert (layers[0].head_size, layers[0].num_kv_heads, layers[0].sliding_window) == (256, 4, 1024)
    assert (layers[3].head_size, layers[3].num_kv_heads, layers[3].sliding_window) == (512, 2, None)
    assert all(a.use_mm_prefix for a in layers.values())
    # ModelArchitectureConfig.from_layers: the largest layer's values
    assert (f.head_size, f.num_kv_heads) == (512, 4)


def test_gemma4_global_kv_heads_need_k_eq_v():
    layers = _by_layer(model_facts(_gemma4_text(num_global_key_value_heads=2), name="g4"))
    assert layers[3].num_kv_heads == 4


def test_gemma4_class_defaults_force_last_layer_full_and_halve_bidirectional_window():
    cfg = _gemma4_text(num_hidden_layers=7, use_bidirectional_attention="all")
    del cfg["layer_types"], cfg["global_head_dim"]
    layers = _by_layer(model_facts(cfg, name="g4"))
    assert [layers[i].sliding_window for i in range(7)] == [513] * 5 + [None] * 2
    assert layers[6].head_size == 512


def test_gemma4_kv_sharing_without_an_earlier_layer_of_that_type_is_rejected():
    cfg = _gemma4_text(num_hidden_layers=4, num_kv_shared_layers=1,
                       layer_types=["sliding_attention"] * 3 + ["full_attention"])
    with pytest.raises(Exception, match="shares KV"):
        model_facts(cfg, name="g4")


def test_cohere2_sliding_layers_pass_window_plus_one():
    cfg = {"architectures": ["Cohere2ForCausalLM"], "model_type": "cohere2", "hidden_size": 512,
           "num_attention_heads": 8, "num_key_value_heads": 2, "num_hidden_layers": 8, "sliding_window": 4096,
           "sliding_window_pattern": 4, "torch_dtype": "bfloat16"}
    layers = _by_layer(model_facts(cfg, name="c2"))
    assert [layers[i].sliding_window for i in range(8)] == [4097, 4097, 4097, None] * 2
    assert layers[0].head_size == 64


def test_qwen2_5_vl_flat_config_drops_window_without_use_sliding_window():
    cfg = {"architectures": ["Qwen2_5_VLForConditionalGeneration"], "model_type": "qwen2_5_vl", "hidden_size": 512,
           "num_attention_heads": 8, "num_key_value_heads": 2, "num_hidden_layers": 4, "sliding_window": 32768,
           "use_sliding_window": False, "max_window_layers": 28, "torch_dtype": "bfloat16"}
    layers = _by_layer(model_facts(cfg, name="q25vl"))
    assert all(a.sliding_window is None for a in layers.values())


@pytest.mark.skipif(not VLLM_REGISTRY.exists(), reason="vLLM 0.33.0 source not unpacked")
def test_dropped_table_matches_vllm_registry():
    tree = ast.parse(VLLM_REGISTRY.read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "_PREVIOUSLY_SUPPORTED_MODELS":
            assert ast.literal_eval(node.value) == _DROPPED
            return
    pytest.fail("_PREVIOUSLY_SUPPORTED_MODELS not found")


@pytest.mark.skipif(not VLLM_REGISTRY.exists(), reason="vLLM 0.33.0 source not unpacked")
def test_transformers_backend_table_matches_vllm_registry():
    tree = ast.parse(VLLM_REGISTRY.read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "_TRANSFORMERS_SUPPORTED_MODELS":
            table = ast.literal_eval(node.value)
            text = {arch for arch, (_, cls) in table.items() if cls in ("TransformersForCausalLM",
                                                                         "TransformersMoEForCausalLM")}
            assert text == TRANSFORMERS_BACKEND
            return
    pytest.fail("_TRANSFORMERS_SUPPORTED_MODELS not found")


def test_generic_fallback_says_which_per_layer_fields_it_ignores():
    # an architecture without a mirror that carries MiMo-style per-layer fields
    cfg = {"architectures": ["SwaHybridForCausalLM"], "model_type": "swa_hybrid", "hidden_size": 4096,
           "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 192, "swa_head_dim": 192,
           "swa_num_key_value_heads": 8, "hybrid_layer_pattern": [0, 1, 1, 0], "num_hidden_layers": 4,
           "torch_dtype": "bfloat16", "auto_map": {"AutoConfig": "configuration_swa.SwaHybridConfig",
                                                "AutoModelForCausalLM": "modeling_swa.SwaHybridForCausalLM"}}
    notes = " ".join(model_facts(cfg, trust_remote_code=True, name="swa").notes)
    assert "swa_head_dim, swa_num_key_value_heads, hybrid_layer_pattern" in notes


def test_mimo_v2_diffkv_layers_bypass_the_selector():
    # mimo_v2.py: v_head_dim != head_dim on every layer -> a fixed *_DIFFKV backend, no get_attn_backend
    cfg = {"architectures": ["MiMoV2FlashForCausalLM"], "model_type": "mimo_v2_flash", "hidden_size": 4096,
           "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 192, "swa_head_dim": 192,
           "swa_num_attention_heads": 64, "swa_num_key_value_heads": 8, "swa_v_head_dim": 128,
           "sliding_window_size": 128, "hybrid_layer_pattern": [0, 1, 1, 0], "num_hidden_layers": 4,
           "torch_dtype": "bfloat16"}
    with pytest.raises(Exception, match="never calls get_attn_backend"):
        model_facts(cfg, name="mimo")
    f = model_facts({**cfg, "v_head_dim": 192, "swa_v_head_dim": 192, "add_swa_attention_sink_bias": True},
                    name="mimo")
    assert [(g.layers, g.attn.num_kv_heads, g.attn.sliding_window, g.attn.has_sink) for g in f.groups] == [
        ((0, 3), 4, None, False), ((1, 2), 8, 128, True)]


def test_mirrored_gemma4_carries_no_ignored_fields_note():
    notes = " ".join(model_facts(_gemma4_text(), name="g4").notes)
    assert "generic derivation" not in notes


def test_kimi_linear_kda_layers_are_not_attention_and_the_rest_are_mla():
    cfg = {"architectures": ["KimiLinearForCausalLM"], "model_type": "kimi_linear", "hidden_size": 512,
           "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 8, "kv_lora_rank": 512,
           "q_lora_rank": None, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
           "mla_use_nope": True, "torch_dtype": "bfloat16",
           "linear_attn_config": {"full_attn_layers": [4], "kda_layers": [1, 2, 3], "head_dim": 128, "num_heads": 8}}
    f = model_facts(cfg, name="kl")
    assert [(g.layers, g.attn.use_mla, g.attn.head_size, g.attn.num_heads) for g in f.groups] == [((3,), True, 576, 8)]
    assert [(o.kind, o.layers) for o in f.other_layers] == [("kimi_delta_attention", (0, 1, 2))]
    with pytest.raises(Exception, match="mla_use_nope"):
        model_facts({**cfg, "mla_use_nope": False}, name="kl")


def test_roberta_family_is_encoder_only_with_any_position_embedding():
    base = {"model_type": "xlm-roberta", "hidden_size": 1024, "num_attention_heads": 16, "num_hidden_layers": 24,
            "torch_dtype": "float32"}
    for arch in ("XLMRobertaModel", "RobertaForSequenceClassification", "BgeM3EmbeddingModel"):
        f = model_facts({**base, "architectures": [arch]}, name="r")
        a = f.groups[0].attn
        assert (a.attn_type, a.num_heads, a.num_kv_heads, a.head_size) == ("encoder_only", 16, 16, 64)
        assert f.runner == "pooling"
    # roberta.py runs JinaRobertaModel for rotary positions (BERT refuses them)
    f = model_facts({**base, "architectures": ["XLMRobertaModel"], "position_embedding_type": "rotary"}, name="j")
    assert f.groups[0].attn.attn_type == "encoder_only"


def test_modernbert_is_encoder_only_and_keeps_its_window_out_of_selection():
    cfg = {"architectures": ["ModernBertModel"], "model_type": "modernbert", "hidden_size": 768,
           "num_attention_heads": 12, "num_hidden_layers": 22, "torch_dtype": "float32"}
    f = model_facts(cfg, name="mb")
    a = f.groups[0].attn
    assert f.groups[0].layers == tuple(range(22)) and a.attn_type == "encoder_only" and a.sliding_window is None
    assert any("within 65 tokens" in n for n in f.notes)
    # vLLM passes config.num_attention_heads to the layer undivided, at any tensor-parallel size
    assert model_facts(cfg, name="mb", tp=2).groups[0].attn.num_heads == 12


def test_bert_with_rope_models_are_encoder_only():
    # nomic-embed-text-v1.5's config.json (NomicBertConfig names its sizes GPT-2 style)
    nomic = {"architectures": ["NomicBertModel"], "model_type": "nomic_bert",
           "auto_map": {"AutoConfig": "configuration_hf_nomic_bert.NomicBertConfig"}, "n_embd": 768, "n_head": 12,
             "n_layer": 12, "n_inner": 3072, "activation_function": "swiglu", "torch_dtype": "float32"}
    f = model_facts(nomic, trust_remote_code=True, name="nomic")
    a = f.groups[0].attn
    assert f.num_layers == 12 and (a.attn_type, a.num_heads, a.num_kv_heads, a.head_size) == ("encoder_only", 12, 12, 64)
    gte = {"architectures": ["GteNewModel"], "model_type": "new",
           "auto_map": {"AutoConfig": "configuration.NewConfig"}, "hidden_size": 1024, "num_attention_heads": 16,
           "num_hidden_layers": 24, "torch_dtype": "float32"}
    a = model_facts(gte, trust_remote_code=True, name="gte").groups[0].attn
    assert (a.attn_type, a.num_heads, a.head_size) == ("encoder_only", 16, 64)
    with pytest.raises(UserError, match="exact split"):
        model_facts({**gte, "hidden_size": 1000}, trust_remote_code=True, name="gte")


def test_bidirectional_embedding_models_are_encoder_only():
    gemma = {"architectures": ["Gemma3TextModel"], "model_type": "gemma3_text", "hidden_size": 768,
             "num_attention_heads": 3, "num_key_value_heads": 1, "head_dim": 256, "num_hidden_layers": 24,
             "sliding_window": 512, "use_bidirectional_attention": True, "torch_dtype": "float32"}
    f = model_facts(gemma, name="embeddinggemma")
    assert f.runner == "pooling" and {g.attn.attn_type for g in f.groups} == {"encoder_only"}
    causal = model_facts({**gemma, "use_bidirectional_attention": False}, name="g")
    assert {g.attn.attn_type for g in causal.groups} == {"decoder"}
    llama = {"architectures": ["LlamaBidirectionalModel"], "model_type": "llama", "hidden_size": 2048,
             "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 16, "pooling": "avg",
             "torch_dtype": "bfloat16"}
    assert model_facts(llama, name="l").groups[0].attn.attn_type == "encoder_only"
    with pytest.raises(UserError, match="needs a 'pooling' field"):
        model_facts({k: v for k, v in llama.items() if k != "pooling"}, name="l")
    with pytest.raises(UserError, match="pooling 'max'"):
        model_facts({**llama, "pooling": "max"}, name="l")


def test_hy_v4_mla_sparse_where_layer_types_say_so():
    # per-layer inputs checked against vLLM's build of HYV4Config (its sparse
    # layers probe get_attn_backend and, with learnable_sink, ask again: same inputs)
    cfg = {"architectures": ["HYV4ForCausalLM"], "model_type": "hy_v4", "num_hidden_layers": 4,
           "num_attention_heads": 32, "hidden_size": 4096, "q_lora_rank": 1536, "kv_lora_rank": 512,
           "qk_nope_head_dim": 192, "qk_rope_head_dim": 64, "v_head_dim": 256, "index_topk": 2048,
           "layer_types": ["full_attention", "sparse_attention", "full_attention", "sparse"],
           "learnable_sink": True, "torch_dtype": "bfloat16"}
    f = model_facts(cfg, name="hy")
    layers = {i: g.attn for g in f.groups for i in g.layers}
    assert [layers[i].use_sparse for i in range(4)] == [False, True, False, True]
    assert {(a.head_size, a.use_mla, a.num_heads, a.num_kv_heads) for a in layers.values()} == {(576, True, 32, 1)}
    assert any("learnable_sink" in n for n in f.notes)
    dense = model_facts({k: v for k, v in cfg.items() if k != "layer_types"}, name="hy")
    assert not any(g.attn.use_sparse for g in dense.groups)


def test_flint_sinks_everywhere_window_on_sliding_layers_and_the_flashinfer_assertion():
    cfg = {"architectures": ["FlintForCausalLM"], "model_type": "flint", "num_hidden_layers": 4,
           "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "sliding_window": 513,
           "layer_types": ["sliding_attention", "sliding_attention", "sliding_attention", "full_attention"],
           "torch_dtype": "bfloat16"}
    f = model_facts(cfg, name="flint")
    layers = {i: g.attn for g in f.groups for i in g.layers}
    assert [layers[i].sliding_window for i in range(4)] == [513, 513, 513, None]
    assert all(a.has_sink and a.head_size == 128 and a.num_kv_heads == 4 for a in layers.values())
    assert any("asserts FLASHINFER" in n for n in f.notes)
    off = model_facts({**cfg, "use_sliding_window": False}, name="flint")
    assert {g.attn.sliding_window for g in off.groups} == {None}
    with pytest.raises(UserError, match="layer_types has 2 entries"):
        model_facts({**cfg, "layer_types": ["full_attention"] * 2}, name="flint")


def test_step5_layers_bind_their_own_backends():
    # vllm/models/step5: every Step5Attention passes attn_backend=...; dense-only checkpoints are rejected
    cfg = {"architectures": ["Step5ForCausalLM"], "model_type": "step5", "hidden_size": 5120,
           "num_attention_heads": 40, "num_attention_groups": 8, "num_hidden_layers": 4, "torch_dtype": "bfloat16"}
    with pytest.raises(Exception, match="sparse_config"):
        model_facts(cfg, name="step5")
    with pytest.raises(Exception, match="never calls get_attn_backend"):
        model_facts({**cfg, "sparse_config": {"topk": 512}}, name="step5")


def test_qwen4_exp_qsa_layers_bypass_and_plain_indexed_layers_select():
    # vllm/models/qwen4_exp: indexed_attention -> Qwen4ExpQSAAttention (own backend) with indexer_n_heads,
    # else Qwen3NextAttention; linear_attention -> Gated DeltaNet
    cfg = {"architectures": ["Qwen4ExpForCausalLM"], "model_type": "qwen4_exp_text", "hidden_size": 2048,
           "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256, "num_hidden_layers": 4,
           "layer_types": ["linear_attention"] * 3 + ["indexed_attention"], "torch_dtype": "bfloat16"}
    f = model_facts(cfg, name="q4")
    assert [(g.layers, g.attn.head_size, g.attn.num_kv_heads) for g in f.groups] == [((3,), 256, 2)]
    assert [(o.kind, o.layers) for o in f.other_layers] == [("gated_deltanet", (0, 1, 2))]
    with pytest.raises(Exception, match="never calls get_attn_backend"):
        model_facts({**cfg, "indexer_n_heads": 8}, name="q4")
    with pytest.raises(Exception, match="accepts only"):
        model_facts({**cfg, "layer_types": ["full_attention"] * 4}, name="q4")


def test_step1_kv_heads_from_attention_groups_with_sqrt_alibi():
    cfg = {"architectures": ["Step1ForCausalLM"], "model_type": "step1",
           "auto_map": {"AutoConfig": "configuration_step1.Step1Config"}, "hidden_size": 4096,
           "num_attention_heads": 32, "num_attention_groups": 4, "num_hidden_layers": 2, "torch_dtype": "bfloat16"}
    layers = _by_layer(model_facts(cfg, trust_remote_code=True, name="step1"))
    assert {(a.num_kv_heads, a.head_size, a.use_alibi, a.use_alibi_sqrt) for a in layers.values()} == {
        (4, 128, True, True)}


def test_step1_layers_fail_on_a_backend_without_sqrt_alibi():
    from attn_select.selector.config import Kernels
    from attn_select.selector.explain import Overrides, explain
    from attn_select.selector.profiles import load_device

    cfg = {"architectures": ["Step1ForCausalLM"], "model_type": "step1",
           "auto_map": {"AutoConfig": "configuration_step1.Step1Config"}, "hidden_size": 4096,
           "num_attention_heads": 32, "num_attention_groups": 4, "num_hidden_layers": 2, "torch_dtype": "bfloat16"}
    facts = model_facts(cfg, trust_remote_code=True, name="step1")
    for device in ("h100", "b200", "a100", "l4"):
        (g,) = explain(facts, load_device(device), Kernels(), Overrides()).groups
        assert g.selection.selected != "TRITON_ATTN"
        assert g.layer_error == f"ValueError: use_alibi_sqrt is not supported by backend {g.selection.selected}."
        (g,) = explain(facts, load_device(device), Kernels(), Overrides(backend="TRITON_ATTN")).groups
        assert g.selection.selected == "TRITON_ATTN" and g.layer_error is None


def test_iquest_loopcoder_builds_one_attention_per_loop_and_windows_the_later_loops():
    cfg = {"architectures": ["IQuestLoopCoderForCausalLM"], "model_type": "iquestloopcoder",
           "auto_map": {"AutoConfig": "configuration_iquestloopcoder.IQuestLoopCoderConfig"}, "hidden_size": 5120,
           "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 256, "num_hidden_layers": 3,
           "loop_num": 2, "loop_window_size": 64, "torch_dtype": "bfloat16"}
    layers = _by_layer(model_facts(cfg, trust_remote_code=True, name="loopcoder"))
    assert sorted(layers) == list(range(6))
    assert [layers[i].sliding_window for i in range(6)] == [None] * 3 + [64] * 3
    assert {a.head_size for a in layers.values()} == {128}  # hidden // heads: head_dim is not read


def test_telechat2_counts_layers_and_heads_through_n_layer_and_n_head():
    cfg = {"architectures": ["TeleChat2ForCausalLM"], "model_type": "telechat",
           "auto_map": {"AutoConfig": "configuration_telechat2.Telechat2Config"}, "hidden_size": 4096,
           "n_head": 32, "n_layer": 3, "torch_dtype": "bfloat16"}
    f = model_facts(cfg, trust_remote_code=True, name="telechat2")
    assert (f.num_layers, f.num_heads, f.head_size) == (3, 32, 128)


@pytest.mark.parametrize("arch,model_type,kinds", [
    ("MiniMaxForCausalLM", "minimax", {"layer_types": ["linear_attention", "full_attention"]}),
    ("BambaForCausalLM", "bamba", {"attn_layer_indices": [1]}),
])
def test_transformers_backend_refuses_layers_without_attention(arch, model_type, kinds):
    cfg = {"architectures": [arch], "model_type": model_type, "hidden_size": 1024, "num_attention_heads": 16,
           "num_key_value_heads": 8, "num_hidden_layers": 2, "torch_dtype": "bfloat16", **kinds}
    with pytest.raises(UserError, match=r"Layer 0 \(\w+\) does not dispatch through"):
        model_facts(cfg, name="hybrid")


@pytest.mark.parametrize("arch", ["UltravoxModel", "MiDashengLMModel", "DFlashDraftModel"])
def test_registered_generation_models_named_model_default_to_generate(arch):
    cfg = {"architectures": [arch], "model_type": "llama", "hidden_size": 1024, "num_attention_heads": 16,
           "num_key_value_heads": 8, "num_hidden_layers": 2, "torch_dtype": "bfloat16"}
    assert model_facts(cfg, name="m").runner == "generate"


def test_dropped_architecture_without_a_transformers_class_is_refused():
    cfg = {"architectures": ["MiniMaxText01ForCausalLM"], "model_type": "minimax", "hidden_size": 1024,
           "num_attention_heads": 16, "num_hidden_layers": 2, "torch_dtype": "bfloat16"}
    with pytest.raises(UserError, match="was supported in vLLM until v0.23.0"):
        model_facts(cfg, name="m")
    # a remote AutoModel class in auto_map: vLLM loads it only with --trust-remote-code, and
    # then the generic derivation stands
    cfg["auto_map"] = {"AutoModelForCausalLM": "modeling_minimax.MiniMaxText01ForCausalLM"}
    cfg["layer_types"] = ["full_attention"] * 2
    with pytest.raises(UserError, match="was supported in vLLM until v0.23.0.*pass --trust-remote-code"):
        model_facts(cfg, name="m")
    assert model_facts(cfg, name="m", trust_remote_code=True).num_layers == 2
