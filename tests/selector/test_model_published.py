"""What the vLLM differentials found on published config.json files
(model_cases_published), kept as plain tests without vLLM: each on a small
config of our own with the fields that decide it, plus, where the published
files are in the workspace, a parse of every one of them."""

from __future__ import annotations

import json
import re

import pytest

from attn_select.selector.config import Capability, Kernels
from attn_select.selector.engine_config import engine_config
from attn_select.selector.errors import UserError
from attn_select.selector.explain import Overrides
from attn_select.selector.model import facts_from_path, model_facts
from attn_select.selector.model.quant import model_hook_quant
from attn_select.selector.profiles import load_model

from .model_cases_published import FIXTURES, available, cases, rejected_cases

# compressed-tensors MXFP4 experts as Kimi-K3 checkpoints store them (attention left unquantized)
MXFP4_PACK = {"quant_method": "compressed-tensors", "format": "mxfp4-pack-quantized",
              "config_groups": {"group_0": {"format": "mxfp4-pack-quantized", "targets": ["Linear"],
                                            "weights": {"num_bits": 4, "type": "float", "strategy": "group",
                                                        "group_size": 32, "symmetric": True, "dynamic": False}}},
              "ignore": ["re:.*self_attn.*", "re:.*lm_head.*"]}


def kimi_k3(quantization_config: dict | None = MXFP4_PACK, dtype: str = "bfloat16") -> dict:
    """A small KimiK3ForConditionalGeneration: a Kimi-Linear text model (three
    KDA layers, one MLA layer) with its quantization in text_config."""
    text = {"architectures": ["KimiLinearForCausalLM"], "model_type": "kimi_linear", "hidden_size": 1024,
            "num_attention_heads": 16, "num_key_value_heads": 16, "num_hidden_layers": 4, "kv_lora_rank": 256,
            "q_lora_rank": 384, "qk_nope_head_dim": 64, "qk_rope_head_dim": 32, "v_head_dim": 64,
            "mla_use_nope": True, "first_k_dense_replace": 1, "num_experts": 8, "num_experts_per_token": 2,
            "moe_intermediate_size": 256, "intermediate_size": 2048, "vocab_size": 1000, "dtype": dtype,
            "linear_attn_config": {"full_attn_layers": [4], "kda_layers": [1, 2, 3], "head_dim": 64,
                                   "num_heads": 16, "short_conv_kernel_size": 4}}
    if quantization_config is not None:
        text["quantization_config"] = quantization_config
    return {"architectures": ["KimiK3ForConditionalGeneration"], "model_type": "kimi_k3", "dtype": dtype,
            "text_config": text, "vision_config": {}}


def _write(tmp_path, config: dict):
    (tmp_path / "config.json").write_text(json.dumps(config))
    return tmp_path


@pytest.mark.skipif(not available(), reason=f"no published configs at {FIXTURES}")
def test_every_published_config_parses():
    """Each published folder gives model facts at its capability (or, for
    DeepSeek-V4, the refusal that its layers never call get_attn_backend)."""
    for case in cases() + [c for c in rejected_cases() if not c.get("disable_sliding_window")]:
        folder = case["folder"]
        capability = Capability(*case.get("capability", [9, 0]))
        if case.get("rejects"):
            with pytest.raises(UserError, match=re.escape(case["rejects"])):
                facts_from_path(FIXTURES / folder, name=folder, capability=capability)
            continue
        if case.get("bypass"):
            with pytest.raises(UserError, match="never calls get_attn_backend"):
                facts_from_path(FIXTURES / folder, name=folder, capability=capability)
            continue
        facts = facts_from_path(FIXTURES / folder, name=folder, capability=capability)
        assert facts.groups, folder


def test_kimi_k3_hook_makes_its_mxfp4_pack_experts_mxfp4(tmp_path):
    """KimiK3ForConditionalGenerationConfig.verify_and_update_model_config
    rewrites compressed-tensors mxfp4-pack-quantized to mxfp4 before
    _verify_quantization, so Mxfp4Config's minimum capability (80) applies."""
    folder = _write(tmp_path, kimi_k3())
    assert facts_from_path(folder, name="k3", capability=Capability(9, 0)).quantization == "mxfp4"
    t4 = Capability(7, 5)
    error = engine_config(load_model(str(folder), capability=t4), Overrides(), t4, Kernels()).error
    assert error is not None and "quantization method mxfp4 is not supported for the current GPU. " \
        "Minimum capability: 80. Current capability: 75." in error


def test_the_mxfp4_pack_rewrite_is_kimi_k3s_alone():
    assert model_hook_quant(MXFP4_PACK, "KimiK3ForConditionalGeneration")["quant_method"] == "mxfp4"
    assert model_hook_quant(MXFP4_PACK, "DeepseekV3ForCausalLM") == MXFP4_PACK
    other = {**MXFP4_PACK, "format": "pack-quantized"}  # int4 packs stay compressed-tensors
    assert model_hook_quant(other, "KimiK3ForConditionalGeneration") == other
    assert model_hook_quant(None, "KimiK3ForConditionalGeneration") is None


GEMMA4_TEXT = {"architectures": ["Gemma4ForCausalLM"], "model_type": "gemma4_text", "hidden_size": 1024,
               "intermediate_size": 2048, "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 4,
               "head_dim": 256, "global_head_dim": 512, "sliding_window": 1024, "vocab_size": 1000,
               "vocab_size_per_layer_input": 1000, "hidden_size_per_layer_input": 0, "torch_dtype": "bfloat16",
               "layer_types": ["sliding_attention"] * 3 + ["full_attention"]}


def test_disable_sliding_window_is_refused_where_the_class_declares_an_int():
    """Gemma4TextConfig declares sliding_window an int: vLLM's
    hf_text_config.sliding_window = None fails there."""
    with pytest.raises(UserError, match="disable-sliding-window.*Gemma4TextConfig"):
        model_facts(GEMMA4_TEXT, name="gemma4", capability=Capability(9, 0), disable_sliding_window=True)
    # in vLLM's words (the published Gemma-4-26B-A4B-NVFP4's refusal through explain --disable-sliding-window)
    with pytest.raises(UserError, match="Validation error for field 'sliding_window': Field 'sliding_window' "
                                        "expected int, got NoneType"):
        model_facts(GEMMA4_TEXT, name="gemma4", capability=Capability(9, 0), disable_sliding_window=True)
    assert model_facts(GEMMA4_TEXT, name="gemma4", capability=Capability(9, 0)).groups


def test_disable_sliding_window_still_drops_a_nullable_window():
    """Mistral's class declares sliding_window Optional: the flag takes the window away."""
    config = {"architectures": ["MistralForCausalLM"], "model_type": "mistral", "hidden_size": 1024,
              "num_attention_heads": 8, "num_key_value_heads": 2, "num_hidden_layers": 2, "sliding_window": 4096,
              "vocab_size": 1000, "torch_dtype": "bfloat16"}
    facts = model_facts(config, name="mistral", capability=Capability(9, 0), disable_sliding_window=True)
    assert all(g.attn.sliding_window is None for g in facts.groups)


def test_tp_that_does_not_divide_the_heads_quotes_vllms_refusal():
    """28 query heads (Qwen2.5-7B's) under -tp 8: verify_with_parallel_config's text."""
    config = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 3584,
              "num_attention_heads": 28, "num_key_value_heads": 4, "num_hidden_layers": 2, "vocab_size": 1000,
              "torch_dtype": "bfloat16"}
    with pytest.raises(UserError, match=r"Total number of attention heads \(28\) must be divisible by tensor "
                                        r"parallel size \(8\)\."):
        model_facts(config, name="qwen2", tp=8, capability=Capability(9, 0))
    assert model_facts(config, name="qwen2", tp=4, capability=Capability(9, 0)).groups


def test_a_model_type_no_config_class_knows_is_refused_without_a_remote_autoconfig():
    """get_config hands a model_type that neither transformers' CONFIG_MAPPING
    nor vLLM's _CONFIG_REGISTRY has to AutoConfig, which refuses it unless
    auto_map names a remote AutoConfig (checked against vLLM's engine config)."""
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama_custom", "hidden_size": 1024,
              "num_attention_heads": 8, "num_hidden_layers": 2, "vocab_size": 1000, "torch_dtype": "bfloat16"}
    with pytest.raises(UserError, match="has model type `llama_custom` but Transformers does not recognize this "
                                        "architecture"):
        model_facts(config, name="x", capability=Capability(9, 0))
    # a remote AutoConfig (microsoft/phi-2's first config.json, model_type phi-msft): `vllm serve`
    # refuses it without --trust-remote-code (transformers' resolve_trust_remote_code); with it, the
    # fields are read as given and a note says so
    remote = {**config, "auto_map": {"AutoConfig": "configuration_custom.CustomConfig"}}
    with pytest.raises(UserError, match="contains custom code which must be executed.*pass --trust-remote-code"):
        model_facts(remote, name="x", capability=Capability(9, 0))
    facts = model_facts(remote, name="x", capability=Capability(9, 0), trust_remote_code=True)
    assert any("with --trust-remote-code vLLM loads auto_map's remote AutoConfig" in n for n in facts.notes)
    # vLLM registers its own classes first (kimi_k2: DeepseekV3Config), so those load
    kimi = {**config, "model_type": "kimi_k2", "architectures": ["DeepseekV3ForCausalLM"], "kv_lora_rank": 128,
            "q_lora_rank": 256, "qk_nope_head_dim": 64, "qk_rope_head_dim": 32, "v_head_dim": 64,
            "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 128}
    assert not any("remote" in n for n in model_facts(kimi, name="k", capability=Capability(9, 0)).notes)
    # SGLang's get_config asks transformers' AutoConfig too (tests/selector/test_sglang_config_class.py)
    with pytest.raises(UserError, match="which SGLang 0.5.23 installs"):
        model_facts(config, name="x", engine="sglang")


def test_a_text_config_under_a_text_class_is_refused_as_vllm_refuses_it():
    """A text class (LlamaConfig, Ministral3Config: mlc-llm's copy of
    Ministral-3-3B-Instruct-2512 names model_type ministral3 at the top) keeps
    text_config a dict; get_text_config() returns it and get_hf_text_config
    refuses it (checked against vLLM's engine config); null is no text_config."""
    llama = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 1024,
             "num_attention_heads": 8, "num_hidden_layers": 2, "vocab_size": 1000, "torch_dtype": "bfloat16"}
    for config in ({**llama, "text_config": {"num_attention_heads": 8}},
                   {**llama, "model_type": "ministral3", "text_config": {}}):
        with pytest.raises(UserError, match="The text_config extracted from the model config does not have "
                                            "`num_attention_heads` attribute"):
            model_facts(config, name="x", capability=Capability(9, 0))
    assert model_facts({**llama, "text_config": None}, name="x", capability=Capability(9, 0)).groups
    # a wrapper class builds its text config from it
    mistral3 = {"architectures": ["Mistral3ForConditionalGeneration"], "model_type": "mistral3",
                "torch_dtype": "bfloat16", "text_config": {**llama, "model_type": "ministral3"},
                "vision_config": {"model_type": "pixtral", "hidden_size": 64, "intermediate_size": 128,
                                  "num_attention_heads": 2, "num_hidden_layers": 1, "head_dim": 32}}
    assert model_facts(mistral3, name="m3", capability=Capability(9, 0)).num_layers == 2


def test_minimax_m3_wrapper_builds_its_text_model_with_the_sparse_layers():
    """MiniMaxM3SparseForConditionalGeneration (nvidia/MiniMax-M3-NVFP4's
    architecture) builds MiniMaxM3SparseForCausalLM from text_config, whose
    sparse_attention_freq layers run MiniMaxM3SparseAttention without
    get_attn_backend (vLLM's layers asked for layers 0-2 of 60 alone; this
    config, with the published vision and sparse fields vLLM's model file
    reads, builds calls for layers 0 and 3 in vLLM)."""
    text = {"hidden_size": 1024, "intermediate_size": 2048, "num_hidden_layers": 4, "num_attention_heads": 16,
            "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 1000, "dtype": "bfloat16",
            "moe_layer_freq": [0, 1, 1, 1], "num_local_experts": 4, "num_experts_per_tok": 2,
            "architectures": ["MiniMaxM3SparseForCausalLM"],
            "sparse_attention_config": {"use_sparse_attention": True, "sparse_attention_freq": [0, 1, 1, 0],
                                        "sparse_disable_index_value": [0, 1, 1, 0]}}
    config = {"architectures": ["MiniMaxM3SparseForConditionalGeneration"], "model_type": "minimax_m3_vl",
              "dtype": "bfloat16", "text_config": text,
              "vision_config": {"hidden_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2}}
    facts = model_facts(config, name="m3", capability=Capability(9, 0))
    assert [g.layers for g in facts.groups] == [(0, 3)]
    assert [(o.kind, o.layers) for o in facts.other_layers] == [("minimax_m3_sparse_attention", (1, 2))]


LAGUNA_ROPE = {"full_attention": {"rope_theta": 500000.0, "rope_type": "yarn", "factor": 64.0,
                                  "original_max_position_embeddings": 4096, "beta_slow": 1.0, "beta_fast": 64.0,
                                  "partial_rotary_factor": 0.5},
               "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 1.0}}


def test_laguna_reads_its_query_heads_per_layer():
    """laguna.py: num_attention_heads_per_layer (poolside/Laguna-XS.2's 48 on
    full layers, 64 on sliding ones) gives each layer its heads; sliding
    layers take sinks with swa_attention_sink_enabled (checked against
    vLLM's layers: 8/16/16/8 heads, sinks and window 512 on layers 1-2)."""
    config = {"architectures": ["LagunaForCausalLM"], "model_type": "laguna", "vocab_size": 1000, "hidden_size": 1024,
              "intermediate_size": 2048, "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 4,
              "head_dim": 128, "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 256,
              "shared_expert_intermediate_size": 256, "torch_dtype": "bfloat16", "gating": True,
              "sliding_window": 512, "layer_types": ["full_attention", "sliding_attention", "sliding_attention",
                                                     "full_attention"],
              "mlp_layer_types": ["dense", "sparse", "sparse", "sparse"], "partial_rotary_factor": 0.5,
              "rope_parameters": LAGUNA_ROPE, "num_attention_heads_per_layer": [8, 16, 16, 8],
              "swa_attention_sink_enabled": True}
    facts = model_facts(config, name="laguna", capability=Capability(9, 0))
    assert [(g.layers, g.attn.num_heads, g.attn.num_kv_heads, g.attn.sliding_window, g.attn.has_sink)
            for g in facts.groups] == [((0, 3), 8, 4, None, False), ((1, 2), 16, 4, 512, True)]
    assert [g.attn.num_heads for g in model_facts(config, name="laguna", tp=2).groups] == [4, 8]
    with pytest.raises(UserError, match="num_attention_heads_per_layer"):
        model_facts({**config, "num_attention_heads_per_layer": [8, 16]}, name="laguna")
