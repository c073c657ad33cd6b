"""SGLang 0.5.23's default rule, fix-up passes and raises, one rule per test.
Each expectation was checked against SGLang's own resolution
(tests/test_sglang_differential.py)."""

import pytest

from attn_select.selector.sglang.platform import parse_cuda_version
from tests.selector.sglang.helpers import config_model, dense, run

LLAMA = "llama-3.1-8b"
ASYM = config_model(dense("MistralForCausalLM", "mistral", v_head_dim=32))


# --- the default rule ---------------------------------------------------------


def test_hopper_needs_cuda_12_3_for_fa3():
    assert run(LLAMA, "h100", cuda=(12, 2)).attention_backend == "flashinfer"
    r = run(LLAMA, "h100", cuda=(12, 3))
    assert r.attention_backend == "fa3"


def test_sm100_needs_cuda_12_8_for_trtllm_mha():
    r = run(LLAMA, "b200", cuda=(12, 6))
    assert r.attention_backend == "flashinfer" and "12.6 < 12.8" in r.default_rule.branch
    assert run(LLAMA, "b300").attention_backend == "trtllm_mha"  # 10.3 is SM100 too


def test_sm100_with_asymmetric_kv_is_fa4_and_page_128():
    assert ASYM.has_asymmetric_kv
    r = run(ASYM, "b200")
    assert r.default_rule.backend == "fa4"
    assert (r.attention_backend, r.page_size) == ("fa4", 128)
    assert r.page_size_source() == "_fa4_page_constraint"


def test_topk_tree_leaves_fa3_and_trtllm_mha():
    kw = dict(speculative_algorithm="EAGLE", speculative_eagle_topk=4, speculative_num_steps=3,
              speculative_num_draft_tokens=8)
    assert run(LLAMA, "h100", **kw).attention_backend == "flashinfer"
    assert run(LLAMA, "b200", **kw).attention_backend == "flashinfer"


def test_topk_one_keeps_fa3_only_on_unpaged_kv():
    kw = dict(speculative_algorithm="EAGLE", speculative_eagle_topk=1, speculative_num_steps=3,
              speculative_num_draft_tokens=4)
    assert run(LLAMA, "h100", **kw).attention_backend == "fa3"
    assert run(LLAMA, "h100", page_size=16, **kw).attention_backend == "flashinfer"


def test_topk_one_on_b200_is_trtllm_mha():
    r = run(LLAMA, "b200", speculative_algorithm="EAGLE", speculative_eagle_topk=1, speculative_num_steps=3,
            speculative_num_draft_tokens=4)
    assert r.attention_backend == "trtllm_mha" and r.page_size == 64


def test_mla_branches():
    assert run("deepseek-v3", "h100").attention_backend == "fa3"
    assert run("deepseek-v3", "a100").attention_backend == "triton"
    v2 = config_model({**dense("DeepseekV2ForCausalLM", "deepseek_v2", num_key_value_heads=16),
                       "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
                       "q_lora_rank": None})
    assert v2.use_mla
    assert run(v2, "b200").attention_backend == "flashinfer"  # no DeepSeek V3 override for V2


# --- fix-ups -------------------------------------------------------------------


@pytest.mark.parametrize("page,expect", [(None, 64), (16, 16), (128, 128), (256, 64), (8, 64)])
def test_trtllm_mha_page_sizes(page, expect):
    assert run(LLAMA, "b200", page_size=page).page_size == expect


@pytest.mark.parametrize("page,expect", [(None, 64), (32, 32), (16, 64), (128, 64)])
def test_trtllm_mla_page_sizes(page, expect):
    assert run("deepseek-v3", "b200", page_size=page).page_size == expect


def test_flashmla_forces_page_64():
    assert run("deepseek-v3", "h100", attention_backend="flashmla", page_size=32).page_size == 64


def test_fa4_page_128_skipped_for_eagle_trees():
    r = run(LLAMA, "b200", attention_backend="fa4", speculative_algorithm="EAGLE", speculative_eagle_topk=4,
            speculative_num_steps=3, speculative_num_draft_tokens=8)
    assert r.page_size == 1
    assert run(LLAMA, "b200", attention_backend="fa4").page_size == 128
    assert run(LLAMA, "h100", attention_backend="fa4").page_size == 1  # SM100 only


def test_equal_prefill_and_decode_become_the_backend():
    r = run(LLAMA, "h100", attention_backend="triton", prefill_attention_backend="fa3",
            decode_attention_backend="fa3")
    assert r.attention_backend == "fa3" and not r.hybrid
    assert r.default_rule_skipped.startswith("prefill and decode backends are equal")


def test_hybrid_prefill_and_decode():
    r = run(LLAMA, "h100", prefill_attention_backend="fa3", decode_attention_backend="flashinfer")
    assert r.hybrid
    assert (r.prefill_backend, r.decode_backend) == ("fa3", "flashinfer")
    assert r.attention_backend == "fa3"  # the default rule still fills the base backend


def test_deprecated_alias_renamed():
    r = run("deepseek-v3", "b200", attention_backend="tokenspeed_mla")
    assert r.final["attention_backend"] == "cutedsl_mla"
    assert r.final["kv_cache_dtype"] == "fp8_e4m3"
    assert r.prefill_backend == "trtllm_mla"  # CuteDSL MLA is decode-only
    assert r.trail[0].source == "_handle_deprecated_args"


def test_nvfp4_on_sm100_is_trtllm_mha_both_ways():
    r = run(LLAMA, "b200", kv_cache_dtype="nvfp4")
    assert (r.prefill_backend, r.decode_backend, r.attention_backend) == ("trtllm_mha",) * 3
    r = run(LLAMA, "rtx5090", kv_cache_dtype="nvfp4")
    assert (r.prefill_backend, r.decode_backend) == ("flashinfer", "trtllm_mha") and r.hybrid


def test_deterministic_inference_picks_its_backend():
    assert run(LLAMA, "h100", enable_deterministic_inference=True).attention_backend == "fa3"
    assert run(LLAMA, "b200", enable_deterministic_inference=True).attention_backend == "flashinfer"
    assert run("deepseek-v3", "b200", enable_deterministic_inference=True).error.kind == "ValueError"


# --- raises, with SGLang's text ---------------------------------------------------


def test_trtllm_mha_off_hopper_and_blackwell_raises():
    r = run(LLAMA, "a100", attention_backend="trtllm_mha")
    assert r.error.text() == ("ValueError: TRTLLM MHA backend for prefill requires Hopper (SM90), Blackwell "
                              "(SM100), or SM120 GPUs. Please use a different prefill backend.")
    assert r.final["page_size"] == 64  # the page fix-up ran before the check


def test_trtllm_mla_needs_blackwell():
    r = run("deepseek-v3", "h100", attention_backend="trtllm_mla")
    assert r.error.message.startswith("TRTLLM MLA backend is only supported on Blackwell GPUs")


def test_gpt_oss_rejects_flashinfer():
    r = run("gpt-oss-20b", "a100", attention_backend="flashinfer")
    assert r.error.kind == "AssertionError"
    assert r.error.message == ("GptOssForCausalLM requires one of ['triton', 'trtllm_mha', 'fa3', 'fa4', 'ascend', "
                               "'intel_amx', 'intel_xpu', 'aiter'] attention backend, but got the following "
                               "backends\n- Prefill: flashinfer\n- Decode: flashinfer\n")


def test_trtllm_mha_rejects_eagle_trees():
    r = run(LLAMA, "b200", attention_backend="trtllm_mha", speculative_algorithm="EAGLE",
            speculative_eagle_topk=4, speculative_num_steps=3, speculative_num_draft_tokens=8)
    assert r.error.message == "trtllm_mha backend only supports topk = 1 for speculative decoding."


def test_steps_without_topk_is_a_type_error_in_sglang():
    r = run(LLAMA, "h100", speculative_algorithm="EAGLE", speculative_num_steps=3)
    assert r.error.text() == "TypeError: '>' not supported between instances of 'NoneType' and 'int'"


def test_unknown_speculative_algorithm():
    r = run(LLAMA, "h100", speculative_algorithm="medusa")
    assert r.error.text() == "ValueError: Unknown speculative algorithm name: MEDUSA"


def test_cuda_version_parsing():
    assert parse_cuda_version("12.9") == (12, 9)
    assert parse_cuda_version("13.0.1") == (13, 0)
    with pytest.raises(ValueError):
        parse_cuda_version("twelve")
