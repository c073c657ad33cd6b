"""The runner vLLM 0.33.0 gives an architecture (ModelConfig._get_default_runner_type):
its registry's model class first (is_pooling_model, is_text_generation_model), the
name suffix only after. selector/model/vllm_runners.py is generated from the registry
(tests/tools/vllm_runners.py); the mirror's own builders carry their runners too, and
the two agree."""

from __future__ import annotations

import pytest

from attn_select.selector.config import Capability
from attn_select.selector.model.archs import _ARCHS, _LANGUAGE_MODEL
from attn_select.selector.model.facts import model_facts
from attn_select.selector.model.vllm_runners import REGISTRY_RUNNERS

from .generated import assert_regenerates
from .model_oracle_client import vllm_python

_LLAMA = {"model_type": "llama", "hidden_size": 1024, "intermediate_size": 2048, "num_attention_heads": 8,
          "num_key_value_heads": 4, "num_hidden_layers": 2, "vocab_size": 1000, "torch_dtype": "bfloat16"}


def test_the_builders_runners_are_the_registrys():
    assert {a: r for a, (_, r) in _ARCHS.items() if a in REGISTRY_RUNNERS and REGISTRY_RUNNERS[a] != r} == {}
    assert all(REGISTRY_RUNNERS.get(a, "generate") == "generate" for a in _LANGUAGE_MODEL)


@pytest.mark.parametrize("arch,runner", [
    ("MossAudioModel", "generate"),  # the "Model" suffix would say pooling
    ("DeepSeekMTPModel", "generate"),  # a speculative draft
    ("JinaVLForRanking", "pooling"),  # ForRanking is no suffix of either kind
    ("ClefFlashForJointSchema", "pooling"),
])
def test_a_registered_architecture_takes_the_registrys_runner(arch, runner):
    assert REGISTRY_RUNNERS[arch] == runner
    assert model_facts({**_LLAMA, "architectures": [arch]}, name="m", capability=Capability(9, 0)).runner == runner


@pytest.mark.vllm
@pytest.mark.slow
def test_the_generated_table_is_vllms():
    assert_regenerates(vllm_python(), "vllm_runners")
