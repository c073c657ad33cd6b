"""Rnj1ForCausalLM (Gemma-3 layers with chunked, block-local attention): each
layer as vLLM 0.33.0's rnj1.py builds it, and the assert its Attention makes
after selection. The layers' windows are what vLLM's own build of these
configs gave (tests/selector/model_oracle.py; test_model_vs_vllm.py runs the
same kind of config through it where vLLM is installed)."""

from __future__ import annotations

import pytest

from attn_select.selector.config import Kernels
from attn_select.selector.errors import UserError
from attn_select.selector.explain import Overrides, explain
from attn_select.selector.model import model_facts
from attn_select.selector.profiles import load_device

ROPE = {"rope_type": "default", "rope_theta": 10000.0}
TYPES = ["chunked_attention", "chunked_attention", "sliding_attention", "full_attention"]


def _rnj1(**fields) -> dict:
    return {"architectures": ["Rnj1ForCausalLM"], "model_type": "gemma3_text", "num_hidden_layers": 4,
            "vocab_size": 1000, "hidden_size": 1024, "intermediate_size": 1024, "num_attention_heads": 8,
            "num_key_value_heads": 4, "head_dim": 128, "torch_dtype": "bfloat16", "sliding_window": 512,
            "layer_types": TYPES, "rope_parameters": {"chunked_attention": ROPE}, **fields}


def _layers(config: dict) -> list[tuple[int | None, bool]]:
    f = model_facts(config, name="rnj1")
    return [(a.sliding_window, a.chunk_lookback) for _, a in sorted((i, g.attn) for g in f.groups for i in g.layers)]


@pytest.mark.parametrize("fields,want", [
    # chunked layers take sliding_window; the others none of their own, and the model-level window is
    # none when layer types mix (a sliding_attention layer is not windowed in rnj1.py)
    (dict(), [(512, True), (512, True), (None, False), (None, False)]),
    (dict(layer_types=["sliding_attention"] * 3 + ["full_attention"]), [(None, False)] * 4),
    (dict(layer_types=["chunked_attention"] * 4), [(512, True)] * 4),
    # no layer_types: Gemma3TextConfig's pattern makes these four sliding, so the model-level window is every layer's
    (dict(layer_types=None), [(512, False)] * 4),
])
def test_each_layer_is_built_as_vllm_builds_it(fields, want):
    assert _layers(_rnj1(**fields)) == want


@pytest.mark.parametrize("rope", [None, ROPE, {"full_attention": ROPE, "sliding_attention": ROPE}])
def test_a_chunked_layer_without_its_rope_entry_is_refused(rope):
    config = _rnj1(rope_parameters=rope) if rope is not None else {
        k: v for k, v in _rnj1().items() if k != "rope_parameters"}
    with pytest.raises(UserError, match="rope_parameters has no chunked_attention entry"):
        _layers(config)


def test_chunked_layers_fail_on_any_backend_but_triton_attn():
    facts = model_facts(_rnj1(), name="rnj1")
    for device in ("h100", "b200", "a100"):
        groups = {g.group.name: g for g in explain(facts, load_device(device), Kernels(), Overrides()).groups}
        chunked = groups["chunked"]
        assert chunked.selection.selected != "TRITON_ATTN"  # a window: FLASH_ATTN (or FLASHINFER) ranks first
        assert chunked.layer_error == ("AssertionError: Chunked attention with lookback requires the Triton "
                                       f"backend, but got {chunked.selection.selected}.")
        assert groups["full"].layer_error is None
        forced = explain(facts, load_device(device), Kernels(), Overrides(backend="TRITON_ATTN")).groups
        assert all(g.selection.selected == "TRITON_ATTN" and g.layer_error is None for g in forced)
