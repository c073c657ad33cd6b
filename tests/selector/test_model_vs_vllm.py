"""The config parser against vLLM 0.33.0 itself: the same config.json goes to
attn-select and to vLLM (tests/selector/model_oracle.py, run with a python
that has vllm==0.33.0, on CPU); every ``get_attn_backend`` call vLLM's layers
make, every attention module's sizes and the model-level facts must match.

Needs a venv with vLLM (ATTN_SELECT_VLLM_PYTHON, default /tmp/vllm-venv/bin/python);
skipped otherwise. About a minute on two cores.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from attn_select.selector.config import Capability
from attn_select.selector.model import facts_from_path, model_facts

pytestmark = [pytest.mark.vllm, pytest.mark.slow]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CONFIGS = HERE.parent / "fixtures" / "configs"
VLLM_PYTHON = os.environ.get("ATTN_SELECT_VLLM_PYTHON", "/tmp/vllm-venv/bin/python")


def _load(name: str) -> dict:
    return json.loads((CONFIGS / name / "config.json").read_text())


def _profile(name: str) -> tuple[dict, str | None]:
    import yaml

    data = yaml.safe_load((ROOT / "profiles" / "models" / f"{name}.yaml").read_text())
    return data["config"], data.get("weights_dtype")


def _cases() -> list[dict]:
    cases: list[dict] = []
    for folder in sorted(p.parent.name for p in CONFIGS.glob("*/config.json")):
        cases.append({"name": folder, "config": _load(folder)})
    for path in sorted((ROOT / "profiles" / "models").glob("*.yaml")):
        config, weights = _profile(path.stem)
        case = {"name": f"profile {path.stem}", "config": config}
        if weights is not None:  # a weights header with that dtype, as the published files have
            case["weights"] = {"w": {"bfloat16": "BF16", "float32": "F32"}[weights], "blocks": "U8"}
        if config["architectures"] == ["Qwen3NextForCausalLM"]:
            # its mamba ops filter Triton configs at import on sm90, which the
            # CPU stand-in for Triton cannot do; sm100 skips that filter
            case["capability"] = [10, 0]
        cases.append(case)
    llama = _load("llama-3.1-8b")
    deepseek_small = {**_load("deepseek-v3"), "num_hidden_layers": 4, "first_k_dense_replace": 1}
    qwen3 = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 1024, "head_dim": 128,
             "num_attention_heads": 16, "num_key_value_heads": 8, "num_hidden_layers": 8, "torch_dtype": "bfloat16",
             "vocab_size": 1000, "intermediate_size": 2048}
    cases += [
        {"name": "qwen2 use_sliding_window false", "config": {
            "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 3584, "head_dim": 64,
            "num_attention_heads": 28, "num_key_value_heads": 4, "num_hidden_layers": 4, "vocab_size": 1000,
            "intermediate_size": 2048, "use_sliding_window": False, "sliding_window": 32768,
            "max_window_layers": 28, "torch_dtype": "bfloat16"}},
        {"name": "qwen3 sliding from max_window_layers == layers", "config": {
            **qwen3, "use_sliding_window": True, "sliding_window": 4096, "max_window_layers": 8}},
        {"name": "llama per-layer layer_types", "config": {
            **llama, "num_hidden_layers": 6, "sliding_window": 512,
            "layer_types": ["sliding_attention", "full_attention"] * 3}},
        {"name": "llama all sliding layer_types", "config": {
            **llama, "num_hidden_layers": 4, "sliding_window": 256, "layer_types": ["sliding_attention"] * 4}},
        {"name": "llama is_causal false", "config": {**llama, "num_hidden_layers": 4, "is_causal": False}},
        {"name": "mistral sliding_window 0", "config": {
            **llama, "architectures": ["MistralForCausalLM"], "model_type": "mistral", "num_hidden_layers": 4,
            "sliding_window": 0}},
        {"name": "gemma3 text-only", "config": {
            **_load("gemma-3-27b-it")["text_config"], "architectures": ["Gemma3ForCausalLM"],
            "torch_dtype": "bfloat16", "num_hidden_layers": 12}},
        {"name": "gpt-oss all-full layer_types", "config": {
            **_load("gpt-oss-20b"), "num_hidden_layers": 4, "layer_types": ["full_attention"] * 4}},
        {"name": "deepseek is_causal false", "config": {**deepseek_small, "is_causal": False}},
        {"name": "llama on T4", "config": {**llama, "num_hidden_layers": 2}, "capability": [7, 5]},
        {"name": "gemma-2 on T4", "config": {**_profile("gemma-2-9b")[0], "num_hidden_layers": 4},
         "capability": [7, 5]},
        {"name": "llama float32 requested", "config": {**llama, "num_hidden_layers": 2}, "dtype": "float32"},
        {"name": "gemma3 --language-model-only", "config": {**_load("gemma-3-27b-it")}, "language_model_only": True},
        {"name": "gemma-2 --disable-sliding-window", "config": {**_profile("gemma-2-9b")[0], "num_hidden_layers": 4},
         "disable_sliding_window": True},
        {"name": "mistral --disable-sliding-window", "config": {
            **llama, "architectures": ["MistralForCausalLM"], "model_type": "mistral", "num_hidden_layers": 2,
            "sliding_window": 4096}, "disable_sliding_window": True},
    ]
    return cases


@pytest.fixture(scope="module")
def oracle() -> list[tuple[dict, dict]]:
    if not Path(VLLM_PYTHON).exists():
        pytest.skip(f"no vLLM python at {VLLM_PYTHON} (set ATTN_SELECT_VLLM_PYTHON)")
    cases = _cases()
    proc = subprocess.run([VLLM_PYTHON, str(HERE / "model_oracle.py")], input=json.dumps(cases),
                          capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return list(zip(cases, json.loads(proc.stdout)))


def _index(prefix: str) -> int:
    return int(re.findall(r"\d+", prefix)[0])


def _ours(case: dict, tmp: Path):
    options = dict(capability=Capability(*case.get("capability", [9, 0])), dtype=case.get("dtype", "auto"),
                   mm_inputs=not case.get("language_model_only", False),
                   disable_sliding_window=case.get("disable_sliding_window", False))
    if not case.get("weights"):
        return model_facts(case["config"], name=case["name"], **options)
    folder = tmp / re.sub(r"\W+", "_", case["name"])
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text(json.dumps(case["config"]))
    header = {n: {"dtype": dt, "shape": [1], "data_offsets": [0, 1]} for n, dt in case["weights"].items()}
    blob = json.dumps(header).encode()
    (folder / "model.safetensors").write_bytes(len(blob).to_bytes(8, "little") + blob + b"\0")
    return facts_from_path(folder, name=case["name"], **options)


def test_every_case_builds_in_vllm(oracle):
    failed = {c["name"]: r["error"] for c, r in oracle if r["error"]}
    assert not failed


def test_model_level_facts_match(oracle, tmp_path):
    for case, res in oracle:
        f, m = _ours(case, tmp_path), res["model"]
        ours = {"dtype": f.dtype, "head_size": f.head_size, "num_heads": f.num_heads, "num_kv_heads": f.num_kv_heads,
                "num_layers": f.num_layers, "is_mm_prefix_lm": f.is_mm_prefix_lm, "rswa_window": f.rswa_window,
                "is_diffusion": f.is_diffusion, "runner": f.runner,
                "attn_logit_softcapping": f.attn_logit_softcapping, "index_topk": f.index_topk}
        theirs = {k: m[k] for k in ours}
        assert ours == theirs, case["name"]


def test_get_attn_backend_calls_match(oracle, tmp_path):
    """Each layer's selector inputs, exactly as vLLM's layer classes pass them."""
    for case, res in oracle:
        f = _ours(case, tmp_path)
        ours = {}
        for g in f.groups:
            a = g.attn
            for i in g.layers:
                ours[(i, a.attn_type)] = {
                    "head_size": a.head_size, "dtype": f.dtype, "use_mla": a.use_mla, "has_sink": a.has_sink,
                    "use_sparse": a.use_sparse, "use_mm_prefix": a.use_mm_prefix,
                    "use_per_head_quant_scales": a.use_per_head_quant_scales,
                    "num_heads": a.num_heads if a.use_mla else None,
                    "has_sliding_window": a.sliding_window is not None,
                }
        theirs = {}
        for call in res["calls"]:
            key = (_index(call["prefix"]), call["attn_type"])
            assert key not in theirs, (case["name"], key)
            theirs[key] = {k: call[k] for k in next(iter(ours.values()))}
        assert ours == theirs, case["name"]


def test_attention_modules_match(oracle, tmp_path):
    """Sizes, windows, sinks and soft caps of the modules vLLM builds."""
    for case, res in oracle:
        f = _ours(case, tmp_path)
        by_key = {(i, g.attn.attn_type): g.attn for g in f.groups for i in g.layers}
        assert len(res["layers"]) == len(by_key), case["name"]
        for layer in res["layers"]:
            a = by_key[(_index(layer["prefix"]), "decoder" if layer.get("mla") else layer["attn_type"])]
            assert (a.num_heads, a.num_kv_heads, a.head_size) == (
                layer["num_heads"], layer["num_kv_heads"], layer["head_size"]), (case["name"], layer)
            if layer.get("mla"):
                assert (a.kv_lora_rank, a.qk_rope_head_dim, a.qk_nope_head_dim, a.v_head_dim) == (
                    layer["kv_lora_rank"], layer["qk_rope_head_dim"], layer["qk_nope_head_dim"],
                    layer["v_head_dim"]), case["name"]
                continue
            assert a.head_size_v == layer["head_size_v"] and a.has_sink == layer["has_sink"], case["name"]
            assert (a.logits_soft_cap or 0) == (layer["logits_soft_cap"] or 0), case["name"]
            if layer["attn_type"] == "decoder":  # other layer classes keep the window out of selection
                assert a.sliding_window == layer["sliding_window"], (case["name"], layer)
