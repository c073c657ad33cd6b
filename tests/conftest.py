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


@pytest.fixture
def tiny_model(tmp_path):
    """The path of TINY's config.json."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps(TINY))
    return str(path)
