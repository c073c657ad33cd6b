"""selector/engine_config.py against vLLM 0.33.0 itself: the same config.json
and flags go to attn-select and to ``EngineArgs.create_engine_config()``
(tests/selector/engine_config_oracle.py, run with a python that has
vllm==0.33.0, on CPU); the attention backend, flash_attn_version,
use_non_causal, cache dtype, block size (+ user-specified) and the KV skip
layers must match.

Needs a venv with vLLM (ATTN_SELECT_VLLM_PYTHON, default /tmp/vllm-venv/bin/python);
skipped otherwise.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from attn_select.selector.config import Capability, Kernels
from attn_select.selector.engine_config import engine_config
from attn_select.selector.explain import Overrides
from attn_select.selector.profiles import load_model

pytestmark = [pytest.mark.vllm, pytest.mark.slow]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
VLLM_PYTHON = os.environ.get("ATTN_SELECT_VLLM_PYTHON", "/tmp/vllm-venv/bin/python")


def _profile_config(name: str) -> dict:
    import yaml

    return yaml.safe_load((ROOT / "profiles" / "models" / f"{name}.yaml").read_text())["config"]


_LLAMA = json.loads((ROOT / "tests" / "fixtures" / "configs" / "llama-3.1-8b" / "config.json").read_text())
_DSV32 = {**_profile_config("deepseek-v3.2"), "num_hidden_layers": 4, "first_k_dense_replace": 1}
_GLM_DSA = {"architectures": ["GlmMoeDsaForCausalLM"], "model_type": "glm_moe_dsa", "hidden_size": 1024,
            "num_attention_heads": 16, "num_key_value_heads": 16, "num_hidden_layers": 2,
            "intermediate_size": 2048, "moe_intermediate_size": 256, "vocab_size": 1024, "kv_lora_rank": 512,
            "q_lora_rank": 256, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
            "n_routed_experts": 4, "num_experts_per_tok": 2, "torch_dtype": "bfloat16",
            "index_topk": 2048, "index_head_dim": 128, "index_n_heads": 32}

# name -> (config, capability, flags)
CASES: dict[str, tuple[dict, tuple[int, int], dict]] = {
    "llama control": (_LLAMA, (9, 0), {}),
    "llama block 32": (_LLAMA, (9, 0), {"block_size": 32}),
    "llama turboquant": (_LLAMA, (9, 0), {"kv_cache_dtype": "turboquant_k8v4"}),
    "llama turboquant fa3": (_LLAMA, (9, 0), {"kv_cache_dtype": "turboquant_4bit_nc", "flash_attn_version": 3}),
    "llama turboquant fa2": (_LLAMA, (10, 0), {"kv_cache_dtype": "turboquant_k8v4", "flash_attn_version": 2}),
    "llama ultraquant": (_LLAMA, (9, 0), {"kv_cache_dtype": "ultraquant_4bit"}),
    "llama backend": (_LLAMA, (9, 0), {"attention_backend": "FLASHINFER"}),
    "dsv32 bf16": (_DSV32, (9, 0), {"kv_cache_dtype": "bfloat16"}),
    "dsv32 fp8": (_DSV32, (10, 0), {"kv_cache_dtype": "fp8"}),
    "glm dsa sm100": (_GLM_DSA, (10, 0), {}),
    "glm dsa sm90": (_GLM_DSA, (9, 0), {}),
    "glm dsa sm100 bf16": (_GLM_DSA, (10, 0), {"kv_cache_dtype": "bfloat16"}),
}


def _ours(config: dict, cap: tuple[int, int], flags: dict, tmp: Path) -> dict:
    path = tmp / "config.json"
    path.write_text(json.dumps(config))
    capability = Capability(*cap)
    model = load_model(str(path), capability=capability)
    ov = Overrides(kv_cache_dtype=flags.get("kv_cache_dtype"), block_size=flags.get("block_size"),
                   backend=flags.get("attention_backend"), flash_attn_version=flags.get("flash_attn_version"))
    ec = engine_config(model, ov, capability, Kernels())
    return {
        "backend": ec.backend, "flash_attn_version": ec.flash_attn_version, "use_non_causal": ec.use_non_causal,
        "cache_dtype": ec.cache_dtype, "block_size": ec.block_size,
        "user_specified_block_size": ec.user_specified_block_size, "skip_layers": list(ec.kv_skip_layers),
        "error": ec.error,
    }


@pytest.fixture(scope="module")
def vllm_answers() -> dict[str, dict]:
    if not Path(VLLM_PYTHON).exists():
        pytest.skip(f"no vLLM python at {VLLM_PYTHON} (set ATTN_SELECT_VLLM_PYTHON)")
    cases = [{"config": c, "capability": list(cap), **flags} for c, cap, flags in CASES.values()]
    run = subprocess.run([VLLM_PYTHON, str(HERE / "engine_config_oracle.py")], input=json.dumps(cases),
                         capture_output=True, text=True, timeout=900, cwd=ROOT)
    if run.returncode != 0:
        pytest.fail(f"oracle failed:\n{run.stderr[-4000:]}")
    return dict(zip(CASES, json.loads(run.stdout)))


@pytest.mark.parametrize("name", list(CASES))
def test_engine_config_matches_vllm(name, vllm_answers, tmp_path):
    theirs = vllm_answers[name]
    assert theirs["error"] is None, theirs["error"]
    config, cap, flags = CASES[name]
    ours = _ours(config, cap, flags, tmp_path)
    assert ours["error"] is None
    keys = ("backend", "flash_attn_version", "use_non_causal", "cache_dtype", "block_size",
            "user_specified_block_size", "skip_layers")
    assert {k: ours[k] for k in keys} == {k: theirs[k] for k in keys}
