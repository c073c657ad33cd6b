"""Two failures of vLLM 0.33.0's Transformers modeling backend, which builds
transformers' own model before swapping in vLLM's layers: a pad_token_id
outside the vocabulary (torch's nn.Embedding asserts -vocab <= padding_idx <
vocab; the class default counts where config.json leaves it out), and a null
head_dim on the classes that keep it null and size their attention by it.
Each case is a unit test and a differential case through vLLM's own build
(marker ``vllm``). SGLang runs neither: its engine still reads the model."""

from __future__ import annotations

import pytest

from attn_select.selector.config import Capability
from attn_select.selector.model.facts import model_facts

from .model_oracle_client import builds_or_refuses, head_size_differential

H100 = Capability(9, 0)
PAD = "Padding_idx must be within num_embeddings"
NULL_HEAD = "unsupported operand type(s) for ** or pow(): 'NoneType' and 'float'"


def _backend(model_type: str, arch: str, **fields) -> dict:
    config = {"architectures": [arch], "model_type": model_type, "num_hidden_layers": 2, "vocab_size": 1000,
              "intermediate_size": 1024, "hidden_size": 1024, "num_attention_heads": 16, "num_key_value_heads": 4,
              "torch_dtype": "bfloat16"}
    config.update(fields)
    return config


_OLMO2 = ("olmo2", "Olmo2ForCausalLM")
_HUNYUAN = ("hunyuan_v1_dense", "HunYuanDenseV1ForCausalLM")
# (name, config, vLLM's head size where it builds, or a piece of its refusal)
CASES = [
    ("olmo2 pad 999", _backend(*_OLMO2, pad_token_id=999), 64),
    ("olmo2 pad 1000", _backend(*_OLMO2, pad_token_id=1000), PAD),
    ("olmo2 pad -1000", _backend(*_OLMO2, pad_token_id=-1000), 64),
    ("olmo2 pad -1001", _backend(*_OLMO2, pad_token_id=-1001), PAD),
    ("olmo2 pad null", _backend(*_OLMO2, pad_token_id=None), 64),
    # the class defaults: GlmConfig 151329, SmolLM3Config 128004 (a small vocabulary then fails)
    ("glm default pad, vocab 1000", _backend("glm", "GlmForCausalLM", head_dim=64), PAD),
    ("glm default pad, vocab 151552", _backend("glm", "GlmForCausalLM", head_dim=64, vocab_size=151552), 64),
    ("smollm3 default pad, vocab 1000", _backend("smollm3", "SmolLM3ForCausalLM"), PAD),
    ("olmo2 default pad 1", _backend(*_OLMO2), 64),
    # no padding_idx in GPTNeoXModel's embedding
    ("gpt_neox pad 5000", _backend("gpt_neox", "GPTNeoXForCausalLM", pad_token_id=5000), 64),
    # the backend class itself, over a model type transformers builds with padding_idx
    ("TransformersForCausalLM llama pad 1000", _backend("llama", "TransformersForCausalLM", pad_token_id=1000), PAD),
    # vLLM's own Llama file: VocabParallelEmbedding takes no padding_idx
    ("llama pad 1000 (own model file)", _backend("llama", "LlamaForCausalLM", pad_token_id=1000), 64),
    ("hunyuan dense without head_dim", _backend(*_HUNYUAN), NULL_HEAD),
    ("hunyuan dense head_dim 64", _backend(*_HUNYUAN, head_dim=64), 64),
    ("hunyuan moe without head_dim", _backend("hunyuan_v1_moe", "HunYuanMoEV1ForCausalLM", num_experts=4, moe_topk=2,
                                              num_shared_expert=1, moe_intermediate_size=256), NULL_HEAD),
    ("olmo2 head_dim null", _backend(*_OLMO2, head_dim=None), NULL_HEAD),
    ("phi head_dim null", _backend("phi", "PhiForCausalLM", head_dim=None), NULL_HEAD),
    ("olmo2 without head_dim", _backend(*_OLMO2), 64),
    # the class fills a null one from the sizes, or never reads it
    ("arcee head_dim null", _backend("arcee", "ArceeForCausalLM", head_dim=None), 64),
    ("starcoder2 head_dim null", _backend("starcoder2", "Starcoder2ForCausalLM", head_dim=None), 64),
]


@pytest.mark.parametrize("name,config,want", CASES, ids=[c[0] for c in CASES])
def test_backend_build(name, config, want):
    builds_or_refuses(config, want, "pad_token_id" if want == PAD else "head_dim is null", H100, mentions="vLLM 0.33.0")


@pytest.mark.parametrize("name,config,want", [c for c in CASES if not isinstance(c[2], int)][:3],
                         ids=[c[0] for c in CASES if not isinstance(c[2], int)][:3])
def test_sglang_still_reads_the_model(name, config, want):
    """The refusal is vLLM's build, not the config: SGLang's engine reads the model."""
    assert model_facts(config, name="m", capability=H100, engine="sglang").num_kv_heads == 4


# vLLM's own build of every case (marker ``vllm``)
vllm_answers, test_against_vllm = head_size_differential(CASES, H100)


# The backend's MoE classes assert they find an experts-per-token count (num_experts_per_tok and its
# aliases): config.json's, else the class default (HAS_TOP_K, generated)
TOP_K_CASES = [
    ("TransformersMoEForCausalLM over a dense llama", _backend("llama", "TransformersMoEForCausalLM"), "AssertionError"),
    ("TransformersMoEForCausalLM over llama with num_experts_per_tok",
     _backend("llama", "TransformersMoEForCausalLM", num_experts=4, num_experts_per_tok=2), 64),
    ("TransformersMoEForCausalLM over mixtral (class default)",
     _backend("mixtral", "TransformersMoEForCausalLM", num_local_experts=4), 64),
    ("TransformersForCausalLM over a dense llama", _backend("llama", "TransformersForCausalLM"), 64),
]


@pytest.mark.parametrize("name,config,want", TOP_K_CASES, ids=[c[0] for c in TOP_K_CASES])
def test_backend_moe_top_k(name, config, want):
    builds_or_refuses(config, want, "num_experts_per_tok", H100)


top_k_answers, test_top_k_against_vllm = head_size_differential(TOP_K_CASES, H100, fixture="top_k_answers")
