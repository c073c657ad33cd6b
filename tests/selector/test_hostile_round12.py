"""Round 12 of the hostile-config campaign against vLLM 0.33.0 (mutated
config.json files x devices x engine flags, compared with vLLM's own
create_engine_config, model build and get_attn_backend): each divergence it
found and attn-select now mirrors, as a unit test, and as a differential
case run through vLLM's own code (tests/selector/model_oracle.py; marker
``vllm``, skipped without a vLLM 0.33.0 python).

``_VLLM_CASES``: (name, config, capability, refusal): ``refusal`` is a piece
of vLLM's error (attn-select must refuse too), or None (both build, and
the layers' selection inputs match).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from attn_select.selector.config import Capability, Kernels
from attn_select.selector.engine_config import engine_config
from attn_select.selector.errors import UserError
from attn_select.selector.model.facts import model_facts
from attn_select.selector.overrides import Overrides
from attn_select.selector.profiles import MODELS_DIR, _load_yaml, load_model

from . import model_cases_pooling, model_cases_text, model_cases_vlm
from .model_oracle_client import facts_agreeing_with_vllm, run_model_oracle, vllm_python

HERE = Path(__file__).resolve().parent
H100 = Capability(9, 0)


def _with(base: dict, drop: tuple = (), **fields) -> dict:
    return {**{k: v for k, v in base.items() if k not in drop}, **fields}


def _facts(config: dict, cap: Capability = H100, **kw):
    return model_facts(config, name="m", capability=cap, **kw)


PHI3 = _with(_load_yaml(MODELS_DIR / "phi-3-mini.yaml")["config"], num_hidden_layers=2)
# microsoft/Phi-4-mini-instruct's shape: 24 heads of 128, a quarter unrotated, longrope lists of 48
PHI4_MINI = _with(PHI3, hidden_size=3072, num_attention_heads=24, num_key_value_heads=8, partial_rotary_factor=0.75,
                  rope_scaling={"type": "longrope", "short_factor": [1.0] * 48, "long_factor": [1.0] * 48},
                  original_max_position_embeddings=4096, max_position_embeddings=131072)
GRANITEMOE_SWA = {"architectures": ["GraniteMoeSWAForCausalLM"], "model_type": "granitemoe_swa",
                  "num_hidden_layers": 2, "vocab_size": 1000, "intermediate_size": 1024, "torch_dtype": "bfloat16",
                  "hidden_size": 1024, "num_attention_heads": 16, "num_key_value_heads": 8, "num_local_experts": 4,
                  "num_experts_per_tok": 2, "shared_intermediate_size": 512}
_LONGROPE = {"rope_type": "longrope", "short_factor": [1.0] * 32, "long_factor": [1.0] * 32,
             "original_max_position_embeddings": 4096}

# --- Phi3Config.validate_rope: short / long factor lists of rotary_ndims // 2 numbers --------


@pytest.mark.parametrize("fields,words", [
    ({"partial_rotary_factor": 3}, "short_factor field must have length 192, got 48"),
    ({"rope_scaling": {"type": "longrope", "short_factor": [1.0] * 48, "long_factor": [1.0] * 47}},
     "long_factor field must have length 48, got 47"),
    ({"rope_scaling": {"type": "longrope", "short_factor": [1.0] * 47 + ["x"], "long_factor": [1.0] * 48}},
     "short_factor field must be a list of numbers"),
])
def test_phi3_longrope_factor_lists_are_checked_as_phi3config_does(fields, words):
    with pytest.raises(UserError, match=words.replace("(", r"\(")):
        _facts(_with(PHI4_MINI, **fields))


def test_phi3_longrope_factor_lists_of_the_right_length_pass():
    assert _facts(PHI4_MINI).head_size == 128


# --- longrope's head_dim: getattr(self, "head_dim", hidden // heads) ------------------------


def test_longrope_on_a_class_without_head_dim_and_a_null_one_is_refused():
    with pytest.raises(UserError, match="'NoneType' and 'float'"):
        _facts(_with(GRANITEMOE_SWA, head_dim=None, rope_parameters=_LONGROPE))


def test_longrope_on_a_class_without_head_dim_reads_hidden_over_heads():
    assert _facts(_with(GRANITEMOE_SWA, rope_parameters=_LONGROPE)).head_size == 64


# --- vLLM's patch_legacy_rope_type, after the config is loaded -----------------------------

_LLAMA_NOROPE = _with(json.loads((HERE.parent / "fixtures" / "configs" / "llama-3.1-8b" / "config.json").read_text()),
                      drop=("rope_scaling",), num_hidden_layers=2)
_LEGACY_ROPE_REFUSED = [
    ("llama rope type 'su' without factor lists", _with(_LLAMA_NOROPE, rope_scaling={"type": "su", "factor": 2.0}),
     "Missing required keys in `rope_parameters` for 'rope_type'='longrope'"),
    ("llama rope_type linear with legacy type yarn", _with(_LLAMA_NOROPE, rope_scaling={
        "rope_type": "linear", "type": "yarn", "factor": 2.0}), "Found conflicts between 'rope_type=linear'"),
    ("llama legacy mrope without mrope_section", _with(_LLAMA_NOROPE, rope_scaling={"type": "mrope"}),
     "Legacy rope_type 'mrope' requires 'mrope_section'"),
]
_LEGACY_ROPE_ACCEPTED = [
    ("llama rope type 'su' with factor lists", _with(_LLAMA_NOROPE, rope_scaling={
        "type": "su", "short_factor": [1.0] * 64, "long_factor": [1.0] * 64})),
    ("llama legacy mrope with mrope_section", _with(_LLAMA_NOROPE, rope_scaling={
        "type": "mrope", "mrope_section": [16, 24, 24]})),
]


@pytest.mark.parametrize("name,config,words", _LEGACY_ROPE_REFUSED, ids=[c[0] for c in _LEGACY_ROPE_REFUSED])
def test_vllm_legacy_rope_patch_refusals(name, config, words):
    with pytest.raises(UserError, match=words.replace("(", r"\(").replace("[", r"\[")):
        _facts(config)


@pytest.mark.parametrize("name,config", _LEGACY_ROPE_ACCEPTED, ids=[c[0] for c in _LEGACY_ROPE_ACCEPTED])
def test_vllm_legacy_rope_patch_passes(name, config):
    assert _facts(config).groups


# --- transformers_strict.txt: the declared kinds of fields attn-select never reads --------

LLAMA = _with(json.loads((HERE.parent / "fixtures" / "configs" / "llama-3.1-8b" / "config.json").read_text()),
              num_hidden_layers=2)
COHERE2 = {"architectures": ["Cohere2ForCausalLM"], "model_type": "cohere2", "hidden_size": 1024,
           "num_attention_heads": 8, "num_key_value_heads": 8, "num_hidden_layers": 4, "sliding_window": 512,
           "vocab_size": 1000, "intermediate_size": 2048, "torch_dtype": "bfloat16"}
GEMMA3_TEXT = {"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text", "hidden_size": 1024,
               "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 128, "num_hidden_layers": 2,
               "vocab_size": 1000, "intermediate_size": 2048, "sliding_window": 512, "torch_dtype": "bfloat16"}
QWEN2 = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 896, "num_attention_heads": 14,
         "num_key_value_heads": 2, "num_hidden_layers": 2, "vocab_size": 1000, "intermediate_size": 2048,
         "rms_norm_eps": 1e-6, "torch_dtype": "bfloat16"}
DEEPSEEK_V3 = _with(json.loads((HERE.parent / "fixtures" / "configs" / "deepseek-v3" / "config.json").read_text()),
                    num_hidden_layers=2, first_k_dense_replace=1)
_STRICT_REFUSED = [
    ("cohere2 vocab_size 'abc'", _with(COHERE2, vocab_size="abc"), "vocab_size"),
    ("gemma3 intermediate_size null", _with(GEMMA3_TEXT, intermediate_size=None), "intermediate_size"),
    ("qwen2 rms_norm_eps '1e-6'", _with(QWEN2, rms_norm_eps="1e-6"), "rms_norm_eps"),
    ("qwen2 rms_norm_eps 0 (an int for a float)", _with(QWEN2, rms_norm_eps=0), "rms_norm_eps"),
    ("llama use_cache 'true'", _with(LLAMA, use_cache="true"), "use_cache"),
    ("llama hidden_act 5", _with(LLAMA, hidden_act=5), "hidden_act"),
    ("deepseek-v3 n_routed_experts 1.5", _with(DEEPSEEK_V3, n_routed_experts=1.5), "n_routed_experts"),
    # a class vLLM registers over the model type (_CONFIG_REGISTRY: step3p5 is Step3p7TextConfig)
    ("step-3.5 intermediate_size '11264'", model_cases_text._step3p5_flash(intermediate_size="11264"),
     "intermediate_size"),
]
_STRICT_ACCEPTED = [
    ("llama attention_dropout 0 (int | float)", _with(LLAMA, attention_dropout=0)),
    ("llama eos_token_id list", _with(LLAMA, eos_token_id=[1, 2])),
    ("qwen2 bos_token_id null", _with(QWEN2, bos_token_id=None)),
]


@pytest.mark.parametrize("name,config,field", _STRICT_REFUSED, ids=[c[0] for c in _STRICT_REFUSED])
def test_declared_kinds_of_unread_fields_are_checked(name, config, field):
    with pytest.raises(UserError, match=f"{field} is .*transformers \\(and so vLLM\\) needs"):
        _facts(config)


@pytest.mark.parametrize("name,config", _STRICT_ACCEPTED, ids=[c[0] for c in _STRICT_ACCEPTED])
def test_declared_kinds_that_fit_pass(name, config):
    assert _facts(config).groups


def test_strict_table_reads_kinds_and_null():
    from attn_select.selector.model.hf_models import strict_fields

    llama = strict_fields("llama")
    assert llama["vocab_size"] == ("int", False) and llama["bos_token_id"] == ("int", True)
    assert llama["attention_dropout"] == ("num", True) and llama["eos_token_id"] == ("intlist", True)
    assert strict_fields("no_such_type") == {}


# --- PreTrainedConfig.validate_layer_type on transformers' own classes ---------------------

SEED_OSS = {"architectures": ["SeedOssForCausalLM"], "model_type": "seed_oss", "hidden_size": 1024,
            "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 128, "num_hidden_layers": 4,
            "vocab_size": 1000, "intermediate_size": 2048, "torch_dtype": "bfloat16"}


def test_an_unknown_layer_kind_on_a_transformers_class_not_modelled_here_is_refused():
    with pytest.raises(UserError, match="layer_types entry 'sliding_window' is not a layer kind"):
        _facts(_with(SEED_OSS, layer_types=["sliding_window"] * 4, sliding_window=512))
    assert _facts(_with(SEED_OSS, layer_types=["full_attention"] * 4)).groups


# --- BailingHybridConfig.__post_init__: head_dim becomes qk_rope_head_dim ------------------

BAILING_AS_MISTRAL = {"architectures": ["MistralForCausalLM"], "model_type": "bailing_hybrid", "hidden_size": 1024,
                      "intermediate_size": 2048, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128,
                      "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
                      "v_head_dim": 128, "num_hidden_layers": 2, "vocab_size": 1000, "torch_dtype": "bfloat16"}


def test_bailing_hybrid_config_reads_head_dim_as_qk_rope_head_dim():
    # a model file that reads config.head_dim (MistralForCausalLM) sees 64, not config.json's 128
    assert {g.attn.head_size for g in _facts(BAILING_AS_MISTRAL).groups} == {64}


# --- ModelConfig: the derived max model length must be a positive integer ------------------

_LLAMA_NO_ROPE = _with(LLAMA, drop=("rope_scaling",))
_MAX_LEN_REFUSED = [
    ("llama max_position_embeddings 0", _with(LLAMA, max_position_embeddings=0), "got int: 0"),
    ("llama max_position_embeddings -5", _with(LLAMA, max_position_embeddings=-5), "got int: -5"),
    ("llama linear rope factor 0.0001 on 4096", _with(_LLAMA_NO_ROPE, max_position_embeddings=4096, rope_parameters={
        "rope_type": "linear", "factor": 0.0001}), "got int: 0"),
]
_MAX_LEN_ACCEPTED = [
    ("llama max_position_embeddings 1", _with(LLAMA, max_position_embeddings=1)),
    ("llama yarn factor 0.0001 (max length taken as scaled)", _with(_LLAMA_NO_ROPE, max_position_embeddings=4096,
                                                                    rope_parameters={"rope_type": "yarn", "factor": 0.0001,
                                                                                     "original_max_position_embeddings": 4096})),
]


@pytest.mark.parametrize("name,config,words", _MAX_LEN_REFUSED, ids=[c[0] for c in _MAX_LEN_REFUSED])
def test_a_max_model_len_below_one_is_refused(name, config, words):
    with pytest.raises(UserError, match=f"max_model_len must be a positive integer, {words}"):
        _facts(config)


@pytest.mark.parametrize("name,config", _MAX_LEN_ACCEPTED, ids=[c[0] for c in _MAX_LEN_ACCEPTED])
def test_a_max_model_len_of_one_or_more_passes(name, config):
    assert _facts(config).groups


# --- MiniCPM-V 4.6 / 4.7 / OCR build Qwen3_5ForCausalLM over text_config --------------------

_MINICPMV = {c["config"]["architectures"][0]: c["config"] for c in model_cases_vlm.cases()
             if c["config"].get("architectures", [""])[0].startswith("MiniCPMV4_")}
MINICPMV4_7_SLIDING = {**_MINICPMV["MiniCPMV4_7ForConditionalGeneration"], "text_config": {
    **_MINICPMV["MiniCPMV4_7ForConditionalGeneration"]["text_config"], "layer_types": ["sliding_attention"] * 4}}


def test_minicpmv_language_model_takes_qwen3_5s_layer_kinds_only():
    with pytest.raises(UserError, match="Invalid layer_type sliding_attention"):
        _facts(MINICPMV4_7_SLIDING, Capability(10, 0))


# --- TritonAttentionImpl.__init__: no fp8 cache below SM89 ---------------------------------


def _explain(config: dict, cap: Capability, kv: str | None):
    from attn_select.selector.device import Device
    from attn_select.selector.explain import explain

    device = Device(name=f"SM{cap.major}{cap.minor}", capability=cap)
    return explain(_facts(config, cap), device, Kernels(), Overrides(kv_cache_dtype=kv))


@pytest.mark.parametrize("cap,kv,words", [
    (Capability(8, 0), "fp8_per_token_head", "FP8 KV cache is not supported by the Triton attention backend on SM80 "
                                             "(compute capability 8.0); native FP8 (fp8e4nv) requires SM89+. Re-run "
                                             "with --kv-cache-dtype bfloat16."),
    (Capability(7, 5), "fp8_per_token_head", "Re-run with --kv-cache-dtype float16."),
])
def test_triton_attn_layer_refuses_an_fp8_cache_below_sm89(cap, kv, words):
    r = _explain(_with(LLAMA, torch_dtype="float16"), cap, kv)
    assert [g.selection.selected for g in r.groups] == ["TRITON_ATTN"]
    assert words in r.groups[0].layer_error


def test_triton_attn_layer_takes_an_fp8_cache_on_sm89():
    r = _explain(LLAMA, Capability(8, 9), "fp8_per_token_head")
    assert [g.selection.selected for g in r.groups] == ["TRITON_ATTN"] and r.groups[0].layer_error is None


# --- KimiVLConfig builds text_config as DeepseekV2Config -----------------------------------

def _kimi_vl() -> dict:
    from .test_model_vs_vllm import _multimodal_wrapper_cases

    return next(c["config"] for c in _multimodal_wrapper_cases() if c["name"] == "kimi-vl like")


def test_kimi_vl_text_config_is_checked_as_deepseek_v2():
    kimi = _kimi_vl()
    bad = {**kimi, "text_config": {**kimi["text_config"], "num_attention_heads": 12}}
    with pytest.raises(UserError, match="DeepseekV2Config.validate_architecture"):
        _facts(bad)
    assert _facts(kimi).groups


# --- NemotronHConfig ignores config.json's num_hidden_layers (a property) ------------------

NEMOTRON_H = next(c["config"] for c in model_cases_text.cases()
                  if c["name"] == "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16 cut to 8 layers")


@pytest.mark.parametrize("value", [{"value": 8}, "x", 3.5, 3])
def test_nemotron_h_num_hidden_layers_is_ignored_whatever_it_holds(value):
    f = _facts(_with(NEMOTRON_H, num_hidden_layers=value), Capability(10, 0))
    assert f.num_layers == _facts(NEMOTRON_H, Capability(10, 0)).num_layers


# --- Llava / Mistral3 build their language model from text_config's architecture -----------

_CLIP = {"model_type": "clip_vision_model", "hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 2,
         "num_hidden_layers": 1, "image_size": 28, "patch_size": 14}
_PIXTRAL = {"model_type": "pixtral", "hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 2,
            "num_hidden_layers": 1, "head_dim": 32}


def _seed(name: str) -> dict:
    from .test_model_vs_vllm import _cases

    return next(c["config"] for c in _cases() if c["name"] == name)


def _wrapped(arch: str, model_type: str, vision: dict, text: dict) -> dict:
    return {"architectures": [arch], "model_type": model_type, "torch_dtype": "bfloat16", "vision_config": vision,
            "text_config": {k: v for k, v in text.items() if k != "architectures"}}


def test_llava_over_gemma4_text_builds_gemma4s_layers():
    config = _wrapped("LlavaForConditionalGeneration", "llava", _CLIP, _seed("gemma4 e2b-like kv-shared"))
    assert {(g.attn.sliding_window is not None, g.attn.head_size) for g in _facts(config, Capability(8, 6)).groups} \
        == {(True, 256), (False, 512)}


def test_mistral3_over_minicpm3_builds_minicpm3s_layers():
    config = _wrapped("Mistral3ForConditionalGeneration", "mistral3", _PIXTRAL, _seed("minicpm3-4b like"))
    assert {g.attn.head_size for g in _facts(config, Capability(10, 0)).groups} == {96}


# --- ModelConfig.is_hybrid starts from the model class ------------------------------------

MINIMAX_M3 = next(c["config"] for c in model_cases_text.cases()
                  if c["name"] == "minimax-m3 text, dense and sparse layers alternating")


def _engine(config: dict, kv: str, tmp: Path, cap: Capability = Capability(10, 0)):
    (tmp / "config.json").write_text(json.dumps(config))
    return engine_config(load_model(str(tmp), capability=cap), Overrides(kv_cache_dtype=kv), cap, Kernels())


def test_minimax_m3_is_no_hybrid_so_turboquant_keeps_its_boundary_layers(tmp_path):
    # MiniMaxM3SparseForCausalLM does not implement IsHybrid: its sparse
    # layers are attention of their own, so the 4 layers are all boundary
    assert _engine(MINIMAX_M3, "turboquant_4bit_nc", tmp_path).kv_skip_layers == (0, 1, 2, 3)


COHERE2_MOE = {"architectures": ["Cohere2MoeForCausalLM"],
               "model_type": "cohere2_moe",
               "num_hidden_layers": 4,
               "vocab_size": 1000,
               "intermediate_size": 1024,
               "torch_dtype": "bfloat16",
               "hidden_size": 1024,
               "num_attention_heads": 16,
               "head_dim": 128,
               "sliding_window": 4096,
               "num_experts": 4,
               "num_experts_per_tok": 2,
               "moe_intermediate_size": 256,
               "layer_types": ["sliding_attention", "sliding_attention", "sliding_attention", "full_attention"]}


def test_cohere2_moe_kv_heads_default_to_the_query_heads():
    assert _facts(COHERE2_MOE).num_kv_heads == 16


# --- model files that build Attention without cache_config ---------------------------------

FALCON_40B = {"architectures": ["FalconForCausalLM"], "model_type": "falcon", "hidden_size": 8192,
              "num_attention_heads": 128, "num_kv_heads": 8, "new_decoder_architecture": True, "parallel_attn": True,
              "alibi": False, "bias": False, "num_hidden_layers": 2, "vocab_size": 1000, "torch_dtype": "bfloat16"}
FALCON_RW = {"architectures": ["FalconForCausalLM"], "model_type": "falcon", "hidden_size": 2048,
             "num_attention_heads": 32, "multi_query": False, "new_decoder_architecture": False,
             "parallel_attn": False, "alibi": True, "bias": True, "num_hidden_layers": 2, "vocab_size": 1000,
             "torch_dtype": "bfloat16"}
MODERNBERT = {"architectures": ["ModernBertModel"], "model_type": "modernbert", "hidden_size": 256,
              "num_attention_heads": 4, "num_hidden_layers": 3, "intermediate_size": 512, "vocab_size": 1000,
              "global_attn_every_n_layers": 3, "local_attention": 128, "max_position_embeddings": 8192,
              "pad_token_id": 0, "torch_dtype": "float32"}
# chatglm3-6b's sizes (vLLM's own ChatGLMConfig), cut to 2 layers: GLMTransformer passes cache_config down
CHATGLM3 = {"architectures": ["ChatGLMModel"], "model_type": "chatglm", "hidden_size": 4096, "num_attention_heads": 32,
            "multi_query_attention": True, "multi_query_group_num": 2, "kv_channels": 128, "num_layers": 2,
            "padded_vocab_size": 1000, "ffn_hidden_size": 1024, "seq_length": 8192, "torch_dtype": "float16",
            "add_qkv_bias": True, "original_rope": True, "tie_word_embeddings": False}
_POOLING = {c["config"]["architectures"][0]: c["config"] for c in model_cases_pooling.cases()}
CLIP, SIGLIP = _POOLING["CLIPModel"], _POOLING["SiglipModel"]
# colbert.py's ColBERT heads over BERT, ModernBERT (EncoderOnlyAttention; ModernBERT's without cache_config)
# and LFM2 (decoder Attention on its full_attention layers)
COLBERT_MODERNBERT = {**_POOLING["ModernBertForSequenceClassification"], "architectures": ["ColBERTModernBertModel"]}
COLBERT_LFM2 = {**_POOLING["Lfm2BidirectionalModel"], "architectures": ["ColBERTLfm2Model"]}
# DeepseekV3BidirectionalModel (an embedding model on DeepseekV3ForCausalLM's class): is_causal false turns
# MLA off, and the MHA path builds EncoderOnlyAttention of qk_nope + qk_rope (192), not MLA's 576
DSV3_BIDIRECTIONAL = {
    "architectures": ["DeepseekV3BidirectionalModel"], "model_type": "deepseek_v3", "hidden_size": 512,
    "intermediate_size": 1024, "moe_intermediate_size": 256, "num_attention_heads": 16, "num_key_value_heads": 16,
    "num_hidden_layers": 2, "first_k_dense_replace": 1, "n_routed_experts": 4, "num_experts_per_tok": 2,
    "n_shared_experts": 1, "q_lora_rank": None, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 1000, "topk_method": "noaux_tc", "n_group": 1,
    "topk_group": 1, "torch_dtype": "bfloat16", "is_causal": False}
HF_COLBERT = {"architectures": ["HF_ColBERT"], "model_type": "bert", "hidden_size": 384, "num_attention_heads": 12,
              "num_hidden_layers": 2, "intermediate_size": 1536, "vocab_size": 30522, "max_position_embeddings": 512,
              "type_vocab_size": 2, "torch_dtype": "float32", "position_embedding_type": "absolute"}


@pytest.mark.parametrize("config", [HF_COLBERT, COLBERT_MODERNBERT, COLBERT_LFM2])
def test_colbert_models_are_pooling_models_of_their_backbones_layers(config):
    f = _facts(config)
    assert f.runner == "pooling"
    kinds = {g.attn.attn_type for g in f.groups}
    assert kinds == ({"decoder"} if config is COLBERT_LFM2 else {"encoder_only"})


_CT_KV = {"quant_method": "compressed-tensors", "format": "float-quantized", "config_groups": {"group_0": {
    "targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", "strategy": "tensor", "dynamic": False,
                                       "symmetric": True}}},
    "kv_cache_scheme": {"num_bits": 8, "type": "float", "strategy": "tensor", "dynamic": False, "symmetric": True}}


@pytest.mark.parametrize("config,kv,want", [
    (FALCON_40B, "fp8", "auto"),  # rotary: no cache_config
    (FALCON_RW, "fp8", "auto"),  # ALiBi: no cache_config
    (_with(FALCON_40B, quantization_config=_CT_KV), None, "fp8"),  # the scheme reaches it through quant_config
    (MODERNBERT, "fp8", "auto"),  # EncoderOnlyAttention without cache_config
    (CHATGLM3, "fp8", "fp8"),  # GLMAttention gets cache_config: the engine's cache dtype
    (CLIP, "fp8", "auto"),  # CLIPAttention builds the text tower's Attention without cache_config
    (SIGLIP, "fp8", "auto"),  # SiglipAttention: EncoderOnlyAttention without cache_config
])
def test_layers_built_without_cache_config_keep_their_own_cache_dtype(config, kv, want):
    from attn_select.selector.explain import explain
    from attn_select.selector.profiles import load_device

    f = _facts(config)
    r = explain(f, load_device("h100"), Kernels(), Overrides(kv_cache_dtype=kv))
    assert {g.cfg.kv_cache_dtype for g in r.groups} == {want}


def test_cross_attention_keeps_the_run_wide_cache_dtype_on_turboquant_boundary_layers():
    r = _explain(WHISPER, Capability(10, 0), "turboquant_4bit_nc")
    kv = {g.cfg.attn_type: g.cfg.kv_cache_dtype for g in r.groups}
    assert kv == {"decoder": "auto", "encoder_decoder": "turboquant_4bit_nc"}


def test_falcon_takes_no_model_level_sliding_window():
    assert all(g.attn.sliding_window is None for g in _facts(_with(FALCON_40B, sliding_window=4096)).groups)


# (name, config, capability, vLLM refusal or None, --kv-cache-dtype)
WHISPER = json.loads((HERE.parent / "fixtures" / "configs" / "whisper-small" / "config.json").read_text())
_KV_CASES: list[tuple[str, dict, Capability, None, str]] = [
    ("falcon-40b kv fp8", FALCON_40B, H100, None, "fp8"),
    ("falcon-rw alibi kv fp8", FALCON_RW, H100, None, "fp8"),
    ("falcon-40b sliding_window 4096", _with(FALCON_40B, sliding_window=4096), H100, None, "auto"),
    ("falcon-40b compressed-tensors kv scheme", _with(FALCON_40B, quantization_config=_CT_KV), H100, None, "auto"),
    ("modernbert kv fp8", MODERNBERT, H100, None, "fp8"),
    ("llama kv fp8 (control)", LLAMA, H100, None, "fp8"),
    ("chatglm3 kv fp8", CHATGLM3, H100, None, "fp8"),
    ("clip text tower kv fp8", CLIP, H100, None, "fp8"),
    ("siglip text tower kv fp8", SIGLIP, H100, None, "fp8"),
    ("colbert over modernbert kv fp8", COLBERT_MODERNBERT, H100, None, "fp8"),
    ("HF_ColBERT (bert) kv fp8", HF_COLBERT, H100, None, "fp8"),
    ("colbert over lfm2 kv fp8", COLBERT_LFM2, H100, None, "fp8"),
    ("deepseek-v3 bidirectional (is_causal false)", DSV3_BIDIRECTIONAL, H100, None, "auto"),
    ("deepseek-v3 bidirectional arch, is_causal true (MLA)", {**DSV3_BIDIRECTIONAL, "is_causal": True}, H100, None,
     "auto"),
    # TurboQuant's boundary layers keep "auto" in Attention.__init__; CrossAttention asked before that
    ("whisper-small turboquant_4bit_nc", WHISPER, H100, None, "turboquant_4bit_nc"),
]
# TRITON_ATTN selected (the oracle builds every layer on it): its impl refuses an fp8 cache below SM89
_TRITON_KV_CASES: list[tuple[str, dict, Capability, str, str]] = [
    ("llama fp8_per_token_head sm80", LLAMA, Capability(8, 0), "fp8_per_token_head",
     "FP8 KV cache is not supported by the Triton attention backend"),
]

# --- the token embedding's vocabulary split across tensor-parallel ranks -------------------

# vocab 128256 = 3 x 42752; an MLP width -tp 3 and 6 divide (MergedColumnParallelLinear asserts it)
LLAMA_24 = _with(LLAMA, hidden_size=3072, num_attention_heads=24, num_key_value_heads=24, intermediate_size=12288)


@pytest.mark.parametrize("config,tp,words", [
    (WHISPER, 3, "51904 is not divisible by 3"),  # 51865 padded to 51904
    (_with(LLAMA_24, vocab_size=50368), 3, "50368 is not divisible by 3"),
    (_with(LLAMA_24, vocab_size=50368), 6, "50368 is not divisible by 6"),
])
def test_a_tp_size_that_does_not_divide_the_padded_vocabulary_is_refused(config, tp, words):
    with pytest.raises(UserError, match=words):
        _facts(config, tp=tp)


def test_a_tp_size_that_divides_the_padded_vocabulary_passes():
    assert _facts(LLAMA_24, tp=3).groups[0].attn.num_heads == 8
    assert _facts(_with(LLAMA_24, vocab_size=50000), tp=2).groups  # 50048 / 2


# (name, config, capability, vLLM refusal or None, -tp)
_TP_CASES: list[tuple[str, dict, Capability, str | None, int]] = [
    ("whisper-small tp 3", WHISPER, H100, "51904 is not divisible by 3", 3),
    ("llama 24 heads vocab 50368 tp 3", _with(LLAMA_24, vocab_size=50368), H100, "50368 is not divisible by 3", 3),
    ("llama 24 heads tp 3", LLAMA_24, H100, None, 3),
    ("llama 24 heads tp 6", LLAMA_24, H100, None, 6),
]

_VLLM_CASES: list[tuple[str, dict, Capability, str | None]] = [
    ("phi4-mini partial_rotary_factor 3", _with(PHI4_MINI, partial_rotary_factor=3),
     H100, "short_factor field must have length 192, got 48"),
    ("phi4-mini long_factor of 47", _with(PHI4_MINI, rope_scaling={
        "type": "longrope", "short_factor": [1.0] * 48, "long_factor": [1.0] * 47}), H100,
     "long_factor field must have length 48, got 47"),
    ("phi4-mini short_factor with a string", _with(PHI4_MINI, rope_scaling={
        "type": "longrope", "short_factor": [1.0] * 47 + ["x"], "long_factor": [1.0] * 48}), H100,
     "short_factor field must be a list of numbers"),
    ("phi4-mini", PHI4_MINI, H100, None),
    # Cohere2MoeConfig's num_key_value_heads defaults to None, which __post_init__ sets to the query heads
    ("cohere2-moe without num_key_value_heads", COHERE2_MOE, H100, None),
    ("chatglm3 without tie_word_embeddings", _with(CHATGLM3, drop=("tie_word_embeddings",)), H100,
     "no attribute 'tie_word_embeddings'"),
    ("chatglm ChatGLMForConditionalGeneration without tie_word_embeddings",
     _with(CHATGLM3, drop=("tie_word_embeddings",), architectures=["ChatGLMForConditionalGeneration"]), H100,
     "no attribute 'tie_word_embeddings'"),
    ("chatglm3 tie_word_embeddings true", _with(CHATGLM3, tie_word_embeddings=True), H100, None),
    ("granitemoe_swa head_dim null longrope", _with(GRANITEMOE_SWA, head_dim=None, rope_parameters=_LONGROPE), H100,
     "'NoneType' and 'float'"),
    ("granitemoe_swa longrope", _with(GRANITEMOE_SWA, rope_parameters=_LONGROPE), H100, None),
    ("seed_oss layer_types 'sliding_window'", _with(SEED_OSS, layer_types=["sliding_window"] * 4, sliding_window=512),
     H100, "The `layer_types` entries must be in"),
    ("seed_oss layer_types full_attention", _with(SEED_OSS, layer_types=["full_attention"] * 4), H100, None),
    ("bailing_hybrid config as MistralForCausalLM", BAILING_AS_MISTRAL, H100, None),
    ("minicpmv4_7 text layer_types sliding_attention", MINICPMV4_7_SLIDING, Capability(10, 0),
     "Invalid layer_type sliding_attention"),
    *[(name, config, H100, words) for name, config, words in _LEGACY_ROPE_REFUSED],
    *[(name, config, H100, None) for name, config in _LEGACY_ROPE_ACCEPTED],
    ("nemotron-h num_hidden_layers {'value': 8}", _with(NEMOTRON_H, num_hidden_layers={"value": 8}),
     Capability(10, 0), None),
    ("llava over gemma4_text", _wrapped("LlavaForConditionalGeneration", "llava", _CLIP,
                                        _seed("gemma4 e2b-like kv-shared")), Capability(8, 6), None),
    ("mistral3 over minicpm3", _wrapped("Mistral3ForConditionalGeneration", "mistral3", _PIXTRAL,
                                        _seed("minicpm3-4b like")), Capability(10, 0), None),
    ("kimi-vl text heads 12 (DeepseekV2Config)", {**_kimi_vl(), "text_config": {
        **_kimi_vl()["text_config"], "num_attention_heads": 12}}, H100, "is not a multiple of the number of attention"),
    *[(name, config, H100, f"max_model_len must be a positive integer, {words}")
      for name, config, words in _MAX_LEN_REFUSED],
    *[(name, config, H100, None) for name, config in _MAX_LEN_ACCEPTED],
    *[(name, config, H100, field) for name, config, field in _STRICT_REFUSED],
    *[(name, config, H100, None) for name, config in _STRICT_ACCEPTED],
]


@pytest.fixture(scope="module")
def vllm_answers() -> list[dict]:
    cases = [{"config": c, "capability": [cap.major, cap.minor]} for _, c, cap, _ in _VLLM_CASES]
    cases += [{"config": c, "capability": [cap.major, cap.minor], "kv_cache_dtype": kv} for _, c, cap, _, kv in _KV_CASES]
    cases += [{"config": c, "capability": [cap.major, cap.minor], "tensor_parallel_size": tp}
              for _, c, cap, _, tp in _TP_CASES]
    cases += [{"config": c, "capability": [cap.major, cap.minor], "kv_cache_dtype": kv}
              for _, c, cap, kv, _ in _TRITON_KV_CASES]
    return run_model_oracle(cases, 1200)


@pytest.mark.vllm
@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(_VLLM_CASES)), ids=[c[0] for c in _VLLM_CASES])
def test_against_vllm(vllm_answers, index):
    name, config, cap, refusal = _VLLM_CASES[index]
    res = vllm_answers[index]
    f = facts_agreeing_with_vllm(res, lambda: _facts(config, cap), refusal)
    if f is None:
        return
    theirs = {(c["head_size"], c["use_mla"], c["attn_type"], c["has_sliding_window"]) for c in res["calls"]}
    assert {(g.attn.head_size, g.attn.use_mla, g.attn.attn_type, g.attn.sliding_window is not None)
            for g in f.groups} == theirs


@pytest.mark.vllm
@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(_KV_CASES)), ids=[c[0] for c in _KV_CASES])
def test_layer_cache_dtype_against_vllm(vllm_answers, index):
    """Each layer's selector inputs with --kv-cache-dtype, cache dtype and window included."""
    from attn_select.selector.explain import explain
    from attn_select.selector.profiles import load_device

    name, config, cap, _, kv = _KV_CASES[index]
    res = vllm_answers[len(_VLLM_CASES) + index]
    assert res["error"] is None, res["error"]
    r = explain(_facts(config, cap), load_device("h100"), Kernels(), Overrides(kv_cache_dtype=kv))
    theirs = {(c["head_size"], c["attn_type"], c["has_sliding_window"], c["kv_cache_dtype"]) for c in res["calls"]}
    assert {(g.cfg.head_size, g.cfg.attn_type, g.cfg.has_sliding_window, g.cfg.kv_cache_dtype)
            for g in r.groups} == theirs



@pytest.mark.vllm
@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(_TP_CASES)), ids=[c[0] for c in _TP_CASES])
def test_tensor_parallel_layers_against_vllm(vllm_answers, index):
    """With -tp: vLLM's refusal, or every layer's per-rank heads."""
    name, config, cap, refusal, tp = _TP_CASES[index]
    res = vllm_answers[len(_VLLM_CASES) + len(_KV_CASES) + index]
    if refusal is not None:
        assert res["error"] and refusal in res["error"], res["error"]
        with pytest.raises(UserError, match=refusal):
            _facts(config, cap, tp=tp)
        return
    assert res["error"] is None, res["error"]
    f = _facts(config, cap, tp=tp)
    theirs = {(layer["num_heads"], layer["num_kv_heads"], layer["head_size"]) for layer in res["layers"]}
    assert {(g.attn.num_heads, g.attn.num_kv_heads, g.attn.head_size) for g in f.groups} == theirs



@pytest.mark.vllm
@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(_TRITON_KV_CASES)), ids=[c[0] for c in _TRITON_KV_CASES])
def test_triton_layer_error_against_vllm(vllm_answers, index):
    name, config, cap, kv, words = _TRITON_KV_CASES[index]
    res = vllm_answers[len(_VLLM_CASES) + len(_KV_CASES) + len(_TP_CASES) + index]
    assert res["error"] and words in res["error"], res["error"]
    r = _explain(config, cap, kv)
    assert r.groups[0].selection.selected == "TRITON_ATTN" and words in r.groups[0].layer_error


# --- engine config: vLLM's create_engine_config (tests/selector/engine_config_oracle.py) -----
_ENGINE_CASES: dict[str, tuple[dict, str]] = {
    "minimax-m3 turboquant_4bit_nc": (MINIMAX_M3, "turboquant_4bit_nc"),
}


@pytest.mark.vllm
@pytest.mark.slow
def test_engine_config_against_vllm(tmp_path):
    cases = [{"config": c, "capability": [10, 0], "kv_cache_dtype": kv} for c, kv in _ENGINE_CASES.values()]
    proc = subprocess.run([vllm_python(), str(HERE / "engine_config_oracle.py")], input=json.dumps(cases),
                          capture_output=True, text=True, timeout=900, cwd=HERE.parents[1])
    assert proc.returncode == 0, proc.stderr[-3000:]
    for (name, (config, kv)), theirs in zip(_ENGINE_CASES.items(), json.loads(proc.stdout)):
        assert theirs["error"] is None, (name, theirs["error"])
        ec = _engine(config, kv, tmp_path)
        assert (list(ec.kv_skip_layers), ec.cache_dtype) == (theirs["skip_layers"], theirs["cache_dtype"]), name
