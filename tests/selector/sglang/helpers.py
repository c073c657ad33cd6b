"""Shared builders for the SGLang engine tests (no SGLang needed)."""

from __future__ import annotations

from functools import lru_cache

from attn_select.selector.config import Capability
from attn_select.selector.model import model_facts
from attn_select.selector.profiles import load_model
from attn_select.selector.sglang.inputs import ServerFlags
from attn_select.selector.sglang.model import sglang_model
from attn_select.selector.sglang.platform import Platform
from attn_select.selector.sglang.resolve import Resolution, resolve

CAPS = {"h100": (9, 0), "b200": (10, 0), "b300": (10, 3), "a100": (8, 0), "rtx5090": (12, 0), "l40s": (8, 9)}


@lru_cache(maxsize=None)
def profile_model(name: str, cap: tuple[int, int] = (9, 0)):
    return sglang_model(load_model(name, capability=Capability(*cap)))


def config_model(config: dict):
    return sglang_model(model_facts(config, name="test"))


def platform(cap: tuple[int, int], cuda: tuple[int, int] = (12, 9), flashinfer: bool = True,
             memory_mib: float | None = 81920.0) -> Platform:
    return Platform(Capability(*cap), cuda, flashinfer, memory_mib)


def run(model: str | object, device: str | tuple[int, int], *, cuda=(12, 9), flashinfer=True,
        memory_mib: float | None = 81920.0, **flags) -> Resolution:
    cap = CAPS[device] if isinstance(device, str) else device
    m = profile_model(model, cap) if isinstance(model, str) else model
    return resolve(ServerFlags(**flags), platform(cap, cuda, flashinfer, memory_mib), m)


def dense(arch: str = "LlamaForCausalLM", model_type: str = "llama", **extra) -> dict:
    cfg = {"architectures": [arch], "model_type": model_type, "hidden_size": 1024, "num_attention_heads": 16,
           "num_key_value_heads": 4, "head_dim": 64, "num_hidden_layers": 4, "intermediate_size": 2048,
           "vocab_size": 1024, "max_position_embeddings": 4096, "torch_dtype": "bfloat16"}
    cfg.update(extra)
    return cfg


def sglang_answers(configs: list[tuple[dict, dict]]) -> list[dict]:
    """SGLang 0.5.23's own resolution (tests/sglang_oracle) of each (config, flags) on an H100-class
    device; the test skips without a sglang python."""
    import json
    import subprocess

    import pytest

    from tests.test_sglang_differential import ORACLE, sglang_python

    python, why = sglang_python()
    if python is None:
        pytest.skip(why)
    cases = [{"config": c, "capability": [9, 0], "cuda_version": "12.9", "has_flashinfer": True, "flags": f}
             for c, f in configs]
    out = subprocess.run([python, str(ORACLE)], input=json.dumps(cases), capture_output=True, text=True,
                         timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout)
