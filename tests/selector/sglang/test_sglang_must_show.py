"""The issue's required answers, on a clean checkout with no GPU and no SGLang.

Every one of them agrees with SGLang 0.5.23's own resolution
(tests/test_sglang_differential.py runs these models and devices too)."""

from tests.selector.sglang.helpers import run


def test_llama_on_h100_is_fa3():
    r = run("llama-3.1-8b", "h100")
    assert r.ok and r.attention_backend == "fa3" and r.page_size == 1
    assert r.default_rule.backend == "fa3" and "Hopper" in r.default_rule.branch


def test_llama_on_b200_is_trtllm_mha_with_page_64():
    r = run("llama-3.1-8b", "b200")
    assert r.attention_backend == "trtllm_mha" and r.page_size == 64
    assert r.page_size_source() == "_mla_backend_page_constraints"


def test_llama_on_a100_and_rtx5090_is_flashinfer_or_triton_without_it():
    for dev in ("a100", "rtx5090"):
        assert run("llama-3.1-8b", dev).attention_backend == "flashinfer"
        r = run("llama-3.1-8b", dev, flashinfer=False)
        assert r.attention_backend == "triton"
        assert "flashinfer is not installed" in r.default_rule.branch


def test_gpt_oss_on_a100_is_triton_for_its_sinks():
    r = run("gpt-oss-20b", "a100")
    assert r.attention_backend == "triton"
    assert r.default_rule is None
    assert [s.source for s in r.trail if s.field == "attention_backend"] == ["_gpt_oss_overrides"]
    assert r.model.has_attention_sinks


def test_deepseek_v3_on_b200_is_trtllm_mla_page_64():
    r = run("deepseek-v3", "b200")
    assert (r.attention_backend, r.page_size) == ("trtllm_mla", 64)
    assert r.last_step("attention_backend").source == "_deepseek_family_overrides"


def test_deepseek_v32_on_h100_is_dsa_page_64_kv_bfloat16():
    r = run("deepseek-v3.2", "h100")
    assert (r.attention_backend, r.page_size) == ("dsa", 64)
    kv = r.kv_cache_dtype_rewrite()
    assert (kv.old, kv.new, kv.source) == ("auto", "bfloat16", "_dsa_kv_cache_dtype_default")
    assert (r.final["dsa_prefill_backend"], r.final["dsa_decode_backend"]) == ("flashmla_sparse", "fa3")


def test_whisper_is_flashinfer_everywhere():
    for dev in ("h100", "b200", "a100", "rtx5090", "l40s"):
        r = run("whisper-small", dev)
        assert r.attention_backend == "flashinfer", dev
        assert r.default_rule.branch.startswith("Whisper")


def test_eagle_without_topk_on_b200_is_flashinfer_not_trtllm_mha():
    r = run("llama-3.1-8b", "b200", speculative_algorithm="EAGLE")
    assert r.ok and r.attention_backend == "flashinfer"
    # The automatic parameters come after the backend is chosen.
    assert (r.final["speculative_num_steps"], r.final["speculative_eagle_topk"],
            r.final["speculative_num_draft_tokens"]) == (5, 4, 8)


def test_fp8_e5m2_on_h100_falls_back_to_triton():
    r = run("llama-3.1-8b", "h100", kv_cache_dtype="fp8_e5m2")
    assert r.default_rule.backend == "fa3"
    assert r.attention_backend == "triton"
    assert r.last_step("attention_backend").source == "_attention_backend_fa3_fp8_fallback"
