"""Mistral format (params.json) against vLLM 0.33.0's own conversion.

The same folder (params.json, a consolidated.safetensors header, sometimes a
config.json) goes to vLLM's ``get_config`` (config_format "auto", run in a
python with vllm==0.33.0, CPU only) and to attn-select's
``facts_from_path``: the converted config fields must match, and our
``model_facts`` must derive the same facts from vLLM's dict as from ours.
The format-detection tests at the bottom run without vLLM.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from attn_select.selector.errors import UserError
from attn_select.selector.model import facts_from_path, model_facts

from .model_oracle_client import vllm_python

# vLLM side: get_config on each folder; to_dict() writes the class's (empty)
# model_type, so the instance's model_type is put back for each sub-config.
_ORACLE = r"""
import json, sys, os
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
out = sys.stdout
sys.stdout = sys.stderr
from vllm.transformers_utils.config import get_config
results = []
for folder in json.load(sys.stdin):
    try:
        cfg = get_config(folder, trust_remote_code=False)
        d = cfg.to_dict()
        d["model_type"] = cfg.model_type
        for sub in ("text_config", "vision_config", "audio_config"):
            if isinstance(d.get(sub), dict):
                d[sub]["model_type"] = getattr(cfg, sub).model_type
        results.append({"config": d, "error": None})
    except Exception as exc:
        results.append({"config": None, "error": f"{type(exc).__name__}: {exc}"})
json.dump(results, out, default=str)
"""

_7B = {"dim": 4096, "n_layers": 32, "head_dim": 128, "hidden_dim": 14336, "n_heads": 32, "n_kv_heads": 8,
       "norm_eps": 1e-05, "vocab_size": 32768, "rope_theta": 1000000.0}
_NEMO = {"dim": 5120, "n_layers": 40, "head_dim": 128, "hidden_dim": 14336, "n_heads": 32, "n_kv_heads": 8,
         "rope_theta": 1000000.0, "norm_eps": 1e-05, "vocab_size": 131072}
_SMALL3 = {"dim": 5120, "n_layers": 40, "head_dim": 128, "hidden_dim": 32768, "n_heads": 32, "n_kv_heads": 8,
           "rope_theta": 1000000000.0, "norm_eps": 1e-05, "vocab_size": 131072}
_PIXTRAL_VISION = {"hidden_size": 1024, "num_channels": 3, "image_size": 1024, "patch_size": 16,
                   "rope_theta": 10000.0, "intermediate_size": 4096, "num_hidden_layers": 24,
                   "num_attention_heads": 16, "image_token_id": 10}
_SMALL31_VISION = {**_PIXTRAL_VISION, "max_image_size": 1540, "image_size": 1540, "patch_size": 14,
                   "adapter_bias": False, "mm_projector_id": "patch_merge", "spatial_merge_size": 2,
                   "add_pre_mm_projector_layer_norm": True, "image_break_token_id": 12, "image_end_token_id": 13}
_LARGE3 = {"dim": 7168, "n_layers": 61, "head_dim": 128, "hidden_dim": 16384, "n_heads": 128, "n_kv_heads": 128,
           "rope_theta": 10000.0, "norm_eps": 1e-06, "vocab_size": 131072, "q_lora_rank": 1536,
           "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "kv_lora_rank": 512, "v_head_dim": 128,
           "llama_4_scaling": {"original_max_position_embeddings": 8192, "beta": 0.1},
           "yarn": {"original_max_position_embeddings": 8192, "factor": 32, "apply_scale": False, "beta": 32,
                    "alpha": 1},
           "moe": {"expert_hidden_dim": 4096, "route_every_n": 1, "first_k_dense_replace": 3, "num_experts": 128,
                   "num_experts_per_tok": 4, "num_expert_groups": 1, "num_expert_groups_per_tok": 1,
                   "routed_scale": 1.5, "num_shared_experts": 1},
           "quantization": {"qformat_weight": "fp8_e4m3", "qscheme_act": "TENSOR"},
           "vision_encoder": {**_SMALL31_VISION, "image_token_id": 10}}
_HF_7B_CONFIG = {"architectures": ["MistralForCausalLM"], "model_type": "mistral", "hidden_size": 4096,
                 "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 32, "head_dim": 128,
                 "intermediate_size": 14336, "max_position_embeddings": 32768, "sliding_window": None,
                 "torch_dtype": "bfloat16", "vocab_size": 32768, "rope_theta": 1000000.0}

# name -> (params.json, config.json or None, weights dtype or None)
CASES: dict[str, tuple[dict, dict | None, str | None]] = {
    "mistral-7b-v0.3 with config.json": (_7B, _HF_7B_CONFIG, "BF16"),
    "mistral-7b-v0.1 (int sliding_window)": ({**_7B, "vocab_size": 32000, "sliding_window": 4096}, None, "BF16"),
    "mistral-nemo": (_NEMO, None, "BF16"),
    "mistral-small-3.1 (vision_encoder)": ({**_SMALL3, "vision_encoder": _SMALL31_VISION}, None, "BF16"),
    "mistral-small-3.1 config.json torch_dtype, no weights dtype": (
        {**_SMALL3, "vision_encoder": _SMALL31_VISION},
        {"architectures": ["Mistral3ForConditionalGeneration"], "model_type": "mistral3", "torch_dtype": "float16"},
        None),
    "ministral-8b-like interleaved window": (
        {**_7B, "n_layers": 36, "hidden_dim": 12288, "vocab_size": 131072, "rope_theta": 100000000.0,
         "sliding_window": [None, 32768, 32768, 32768]}, None, "BF16"),
    "mixtral-8x7b": ({**_7B, "vocab_size": 32000, "moe": {"num_experts_per_tok": 2, "num_experts": 8}}, None, "BF16"),
    "mixtral-8x22b": ({"dim": 6144, "n_layers": 56, "head_dim": 128, "hidden_dim": 16384, "n_heads": 48,
                       "n_kv_heads": 8, "norm_eps": 1e-05, "vocab_size": 32768, "rope_theta": 1000000,
                       "moe": {"num_experts": 8, "num_experts_per_tok": 2}}, None, "BF16"),
    "codestral-22b": ({"dim": 6144, "n_layers": 56, "head_dim": 128, "hidden_dim": 16384, "n_heads": 48,
                       "n_kv_heads": 8, "norm_eps": 1e-05, "vocab_size": 32768, "rope_theta": 1000000.0},
                      None, "BF16"),
    "devstral-small-2505": (_SMALL3, None, "BF16"),
    "magistral-small-2506": ({**_SMALL3, "max_position_embeddings": 40960}, None, "BF16"),
    "magistral-small-2509 (multimodal vision_encoder_args)": (
        {**_SMALL3, "multimodal": {"vision_encoder_args": _SMALL31_VISION}}, None, "BF16"),
    "pixtral-12b": ({**_NEMO, "rope_theta": 1000000000.0, "vision_encoder": _PIXTRAL_VISION}, None, "BF16"),
    "mistral-large-3 (MLA, fp8, vision)": (_LARGE3, None, "F8_E4M3+BF16"),
    "mistral-large-3 text only": ({k: v for k, v in _LARGE3.items() if k != "vision_encoder"}, None, "BF16"),
    "MLA without moe": ({**{k: v for k, v in _LARGE3.items() if k not in ("moe", "vision_encoder", "quantization")},
                         "n_layers": 4}, None, "BF16"),
    "ministral-3 fp8 dynamic, params dtype": (
        {**_7B, "n_layers": 26, "dtype": "bfloat16",
         "quantization": {"qformat_weight": "fp8_e4m3", "qscheme_act": "NO_SCALES"}}, None, "F8_E4M3+BF16"),
    "compressed-tensors fp8 kv cache": (
        {**_7B, "n_layers": 4, "quantization": {
            "quant_method": "compressed_tensors", "format": "float-quantized", "config_groups": {},
            "kv_cache_scheme": {"num_bits": 8, "type": "float", "strategy": "tensor", "dynamic": False,
                                "symmetric": True}}}, None, "BF16"),
    "voxtral-mini (whisper audio)": (
        {"dim": 3072, "n_layers": 30, "head_dim": 128, "hidden_dim": 8192, "n_heads": 32, "n_kv_heads": 8,
         "rope_theta": 100000000.0, "norm_eps": 1e-05, "vocab_size": 131072, "max_position_embeddings": 32768,
         "multimodal": {"whisper_model_args": {
             "encoder_args": {"audio_encoding_args": {"sampling_rate": 16000, "num_mel_bins": 128,
                                                      "hop_length": 160, "window_size": 400},
                              "dim": 1280, "n_layers": 32, "head_dim": 64, "hidden_dim": 5120, "n_heads": 20,
                              "vocab_size": 51866, "max_source_positions": 1500},
             "downsample_args": {"downsample_factor": 4}}}}, None, "BF16"),
    "codestral-mamba (no attention)": (
        {"dim": 4096, "n_layers": 64, "vocab_size": 32768, "n_groups": 8, "rms_norm": True,
         "residual_in_fp32": True, "fused_add_norm": True, "pad_vocab_size_multiple": 1,
         "tie_embeddings": False, "model_type": "mamba"}, None, "BF16"),
    # shapes vLLM rejects: both sides must fail
    "rejected: two window sizes": ({**_7B, "n_layers": 4, "sliding_window": [4096, 8192]}, None, "BF16"),
    "rejected: unknown quantization": ({**_7B, "quantization": {"qformat_weight": "int4"}}, None, "BF16"),
    "rejected: string sliding_window": ({**_7B, "sliding_window": "4096"}, None, "BF16"),
    "rejected: unknown yarn key": ({**_7B, "yarn": {"factor": 4, "original_max_position_embeddings": 4096,
                                                    "mystery": 1}}, None, "BF16"),
    "rejected: large-3 moe without llama_4_scaling": (
        {**_7B, "moe": {"num_experts": 8, "num_experts_per_tok": 2, "num_shared_experts": 1}}, None, "BF16"),
}


def _safetensors_header(path: Path, dtype: str) -> None:
    """One tensor per dtype named ("F8_E4M3+BF16": fp8 weights with bf16 norms)."""
    header = json.dumps({f"w{i}": {"dtype": dt, "shape": [1], "data_offsets": [0, 1]}
                         for i, dt in enumerate(dtype.split("+"))}).encode()
    path.write_bytes(len(header).to_bytes(8, "little") + header + b"\0")


def _folder(root: Path, params: dict, config: dict | None, weights: str | None) -> Path:
    root.mkdir(parents=True)
    (root / "params.json").write_text(json.dumps(params))
    if config is not None:
        (root / "config.json").write_text(json.dumps(config))
    if weights is not None:
        _safetensors_header(root / "consolidated.safetensors", weights)
    else:  # a header with no tensors: still a consolidated file, no dtype
        header = b"{}"
        (root / "consolidated.safetensors").write_bytes(len(header).to_bytes(8, "little") + header)
    return root


@pytest.fixture(scope="module")
def vllm_results(tmp_path_factory) -> dict[str, tuple[Path, dict]]:
    root = tmp_path_factory.mktemp("mistral")
    folders = {name: _folder(root / f"m{i}", *case) for i, (name, case) in enumerate(CASES.items())}
    proc = subprocess.run([vllm_python(), "-c", _ORACLE], input=json.dumps([str(f) for f in folders.values()]),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout)
    return {name: (folder, res) for (name, folder), res in zip(folders.items(), results)}


_TEXT_KEYS = ("num_attention_heads", "num_key_value_heads", "head_dim", "hidden_size", "num_hidden_layers",
              "sliding_window", "layer_types", "kv_lora_rank", "q_lora_rank", "qk_rope_head_dim",
              "qk_nope_head_dim", "v_head_dim", "first_k_dense_replace", "n_routed_experts",
              "n_shared_experts", "projection_size", "model_type", "architectures")
# not compared: max_position_embeddings (RoPE only; when params.json lacks
# it vLLM may take a transformers class default we do not model) and the
# RoPE defaults get_config's patch_rope_parameters adds (ours are a subset)
_TOP_KEYS = ("architectures", "model_type", "quantization_config")


def _dtype(d: dict) -> object:
    """transformers folds torch_dtype into dtype when dtype is unset."""
    return d.get("dtype") or d.get("torch_dtype")


def _ours_dict(folder: Path) -> dict:
    from attn_select.selector.model.files import read_config_json, weights_dtype
    from attn_select.selector.model.mistral_format import hf_config_from_params

    params = read_config_json(folder / "params.json")
    config = read_config_json(folder / "config.json") if (folder / "config.json").is_file() else {}
    weights = weights_dtype(folder)
    if params.get("dtype") is None and weights is not None:
        params = {**params, "dtype": weights}
    return hf_config_from_params(params, config, "params.json").config


def _facts_summary(facts) -> dict:
    return {"architecture": facts.architecture, "model_type": facts.model_type, "dtype": facts.dtype,
            "num_layers": facts.num_layers, "head_size": facts.head_size, "num_heads": facts.num_heads,
            "num_kv_heads": facts.num_kv_heads, "kv_cache_scheme": facts.kv_cache_scheme,
            "groups": [(g.name, g.layers, g.attn) for g in facts.groups],
            "other": [(o.kind, o.layers) for o in facts.other_layers]}


def _facts_or_error(fn):
    try:
        return _facts_summary(fn())
    except UserError as exc:
        return f"UserError: {exc}"


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.vllm
def test_conversion_matches_vllm(name: str, vllm_results) -> None:
    folder, res = vllm_results[name]
    if name.startswith("rejected"):
        assert res["error"], f"vLLM accepted {name}"
        with pytest.raises(UserError, match="params.json"):
            facts_from_path(folder, name=name)
        return
    assert res["error"] is None, res["error"]
    theirs, ours = res["config"], _ours_dict(folder)
    for key in _TOP_KEYS:
        assert ours.get(key) == theirs.get(key), (key, ours.get(key), theirs.get(key))
    assert _dtype(ours) == _dtype(theirs)
    sub = "text_config" if "text_config" in theirs else None
    t_text, o_text = (theirs[sub], ours[sub]) if sub else (theirs, ours)
    for key in _TEXT_KEYS:
        assert o_text.get(key) == t_text.get(key), (key, o_text.get(key), t_text.get(key))
    for key, value in (o_text.get("rope_parameters") or {}).items():
        assert t_text["rope_parameters"].get(key) == value, key
    if "vision_config" in theirs:
        for key, value in ours["vision_config"].items():
            assert theirs["vision_config"].get(key) == value, key
    if "audio_config" in theirs:
        for key, value in ours["audio_config"].items():
            assert theirs["audio_config"].get(key) == value, key

    # the facts attn-select derives: from the folder (our conversion) and
    # from vLLM's converted dict, through the same model_facts
    mine = _facts_or_error(lambda: facts_from_path(folder, name=name))
    from attn_select.selector.model.files import weights_dtype

    vllms = _facts_or_error(lambda: model_facts(theirs, name=name, where=str(folder / "params.json"),
                                                weights=weights_dtype(folder), mistral_format=True))
    assert mine == vllms
    if name.startswith("codestral-mamba"):
        assert isinstance(mine, str) and "no attention layers" in mine
    else:
        assert isinstance(mine, dict), mine


# -- format detection: no vLLM needed -------------------------------------

def test_folder_with_consolidated_and_params_reads_params(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "m", {**_7B, "n_layers": 4, "sliding_window": [None, 512]},
                     {**_HF_7B_CONFIG, "num_hidden_layers": 2, "sliding_window": None}, "BF16")
    facts = facts_from_path(folder, name="m")
    assert facts.source == str(folder / "params.json")
    assert facts.num_layers == 4 and facts.model_type == "transformer"
    assert [(g.name, g.layers, g.attn.sliding_window) for g in facts.groups] == [
        ("full", (0, 2), None), ("sliding", (1, 3), 512)]
    assert facts.notes[0].startswith(f"Mistral format: vLLM reads {folder / 'params.json'}")


def test_consolidated_in_a_subfolder_counts(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "params.json").write_text(json.dumps({**_7B, "n_layers": 2}))
    (folder / "sub").mkdir()
    _safetensors_header(folder / "sub" / "consolidated-00001.safetensors", "F16")
    facts = facts_from_path(folder, name="m")
    assert facts.architecture == "MistralForCausalLM" and facts.source == str(folder / "params.json")
    # the dtype, though, comes only from *.safetensors directly in the folder
    # (_read_safetensors_metadata_in_dir globs one level): float32 fallback
    assert facts.config_dtype == "float32"


def test_folder_without_consolidated_reads_config_json(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "params.json").write_text(json.dumps({**_7B, "n_layers": 2}))
    (folder / "config.json").write_text(json.dumps({**_HF_7B_CONFIG, "num_hidden_layers": 3}))
    _safetensors_header(folder / "model.safetensors", "BF16")
    facts = facts_from_path(folder, name="m")
    assert facts.source == str(folder / "config.json") and facts.num_layers == 3
    assert facts.model_type == "mistral"


def test_config_json_path_stays_hf(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "m", {**_7B, "n_layers": 2}, {**_HF_7B_CONFIG, "num_hidden_layers": 3}, "BF16")
    facts = facts_from_path(folder / "config.json", name="m")
    assert facts.source == str(folder / "config.json") and facts.num_layers == 3


def test_params_without_consolidated_or_config_is_a_clear_error(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "params.json").write_text(json.dumps(_7B))
    with pytest.raises(UserError, match="consolidated"):
        facts_from_path(folder, name="m")


@pytest.mark.parametrize("params, match", [
    ([1, 2], "JSON object"),
    ({**_7B, "sliding_window": [None, 4096, 4096]}, "does not divide"),
    ({**_7B, "sliding_window": [4096, 8192]}, "window sizes"),
    ({**_7B, "quantization": {"qformat_weight": "fp8_e4m3", "qscheme_act": "CHANNEL"}}, "qscheme_act"),
    ({k: v for k, v in _7B.items() if k != "n_layers"} | {"sliding_window": [None, 4]}, "unsupported Mistral"),
    ({**_7B, "multimodal": {"vision_encoder_args": {"a": 1}, "whisper_model_args": {"encoder_args": {"b": 1}}}},
     "one"),
])
def test_unsupported_params_are_one_line_user_errors(tmp_path: Path, params, match: str) -> None:
    folder = _folder(tmp_path / "m", params, None, "BF16")
    with pytest.raises(UserError, match=match) as info:
        facts_from_path(folder, name="m")
    assert "\n" not in str(info.value)
