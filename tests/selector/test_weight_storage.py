"""Sizes whose weights torch cannot allocate, even on the meta device vLLM
0.33.0 builds on: a tensor of 2**63 bytes or more ("Storage size calculation
overflowed"). vLLM fails building such a model; attn-select refuses it with
one line. Each case is a unit test and a differential case run through
vLLM's own build (marker ``vllm``)."""

from __future__ import annotations

import pytest

from attn_select.selector.config import Capability

from .model_oracle_client import builds_or_refuses, head_size_differential

H100 = Capability(9, 0)
OVERFLOW = "Storage size calculation overflowed"


def _llama(**fields) -> dict:
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 1024,
              "intermediate_size": 2048, "num_attention_heads": 8, "num_key_value_heads": 4, "num_hidden_layers": 2,
              "vocab_size": 1000, "max_position_embeddings": 4096, "torch_dtype": "bfloat16"}
    config.update(fields)
    return config


# (name, config, vLLM's head size where it builds, or a piece of its refusal)
CASES = [
    ("hidden 2**40", _llama(hidden_size=1 << 40), OVERFLOW),
    # QKV [3 x 2**31, 2**31] in bf16: 3 x 2**63 bytes
    ("hidden 2**31, one head of 2**31", _llama(hidden_size=1 << 31, num_attention_heads=1, num_key_value_heads=1,
                                               head_dim=1 << 31), OVERFLOW),
    # 2**31 x (3 x (2**31 - 2)) x 2 bytes: still past
    ("hidden 2**31, one head of 2**31 - 2", _llama(hidden_size=1 << 31, num_attention_heads=1, num_key_value_heads=1,
                                                   head_dim=(1 << 31) - 2), OVERFLOW),
    # a float32 config: vLLM builds it in bfloat16 (its dtype rule), 3 x 2**61 elements of 2 bytes
    ("float32 config, hidden 2**31, head 2**30", _llama(hidden_size=1 << 31, num_attention_heads=1,
                                                        num_key_value_heads=1, head_dim=1 << 30,
                                                        torch_dtype="float32"), OVERFLOW),
    # large, and within what torch allocates on meta
    ("hidden 2**20", _llama(hidden_size=1 << 20), 131072),
    ("hidden 2**30, one head of 2**30", _llama(hidden_size=1 << 30, num_attention_heads=1, num_key_value_heads=1,
                                               head_dim=1 << 30), 1 << 30),
]


@pytest.mark.parametrize("name,config,want", CASES, ids=[c[0] for c in CASES])
def test_weight_storage(name, config, want):
    builds_or_refuses(config, want, "past the 2\\*\\*63 bytes torch can allocate", H100)


# vLLM's own build of every case (marker ``vllm``)
vllm_answers, test_against_vllm = head_size_differential(CASES, H100)
