"""Fixtures shared across the test folders."""

from __future__ import annotations

import json

import pytest

# A two-layer Llama small enough for run's CPU path (and tune's, and the fleet's workers).
TINY = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 128,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32, "num_hidden_layers": 2,
    "torch_dtype": "float32", "intermediate_size": 128, "vocab_size": 100, "max_position_embeddings": 256,
}


# Tests against an engine's own code run only when asked for by marker
# (``-m vllm``, ``-m sglang``): a venv that happens to sit at a default path
# must not change what the README's test command runs, nor how long it takes
# (a cold vLLM venv spends minutes per test inspecting its model registry).
ENGINE_MARKS = ("vllm", "sglang")


def pytest_collection_modifyitems(config, items):
    asked = config.getoption("markexpr") or ""
    for mark in ENGINE_MARKS:
        if mark in asked:
            continue
        skip = pytest.mark.skip(reason=f"runs against the engine's own code only with -m {mark} "
                                       "(README.md, 'Running the tests that need an engine')")
        for item in items:
            if item.get_closest_marker(mark):
                item.add_marker(skip)


@pytest.fixture
def tiny_model(tmp_path):
    """The path of TINY's config.json."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps(TINY))
    return str(path)
