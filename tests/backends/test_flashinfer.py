"""FLASHINFER and TRITON_FLASHINFER declarations against vLLM 0.33.0
(vllm/v1/attention/backends/flashinfer.py ``FlashInferBackend``,
vllm/utils/flashinfer.py, composite.py ``create_composite_attention_backend``,
triton_flashinfer.py). Every expected value is read off vLLM's code.
"""

from __future__ import annotations

import pytest

from attn_select.backends import flashinfer as fi
from attn_select.backends.registry import get
from attn_select.backends.spec import MultipleOf, resolve
from attn_select.selector.config import Capability, EngineContext, Kernels, Query, SelectorConfig
from attn_select.selector.validate import check

A100, L40, H100, H20, B200, GB300, THOR, RTX5090, SPARK, T4 = (
    Capability(8, 0), Capability(8, 9), Capability(9, 0), Capability(9, 0),
    Capability(10, 0), Capability(10, 3), Capability(11, 0), Capability(12, 0),
    Capability(12, 1), Capability(7, 5),
)
ALL = Kernels()
AIRGAPPED = Kernels(trtllm_cubins=False)
NO_MODEL = EngineContext()
LLAMA_8B = EngineContext(has_model=True, model_num_heads=32, model_num_kv_heads=8)
MHA = EngineContext(has_model=True, model_num_heads=32, model_num_kv_heads=32)
FLASHINFER = get("FLASHINFER")
TRITON_FLASHINFER = get("TRITON_FLASHINFER")


def q(cap=H100, kernels=ALL, ctx=NO_MODEL, head_size=128, dtype="bfloat16", kv="auto",
      block_size=None, **kw) -> Query:
    return Query(SelectorConfig(head_size, dtype, kv, block_size, **kw), cap, kernels, ctx)


def reasons(spec=FLASHINFER, **kw) -> list[str]:
    return check(spec, q(**kw))


# --- the brief's reason lists ------------------------------------------------


def test_valid_llama_on_every_supported_gpu():
    for cap in (A100, L40, H100, B200, GB300, THOR, RTX5090, SPARK):
        assert reasons(cap=cap) == [], cap


def test_head_size_96():
    assert reasons(head_size=96) == ["head_size not supported"]


@pytest.mark.parametrize("head_size", [64, 128, 256, 512])
def test_listed_head_sizes(head_size):
    assert reasons(head_size=head_size) == []


def test_float32():
    assert reasons(dtype="float32") == ["dtype not supported"]


def test_fp8_e5m2_kv_is_supported():
    # "fp8_e5m2" is in supported_kv_cache_dtypes (unlike FlashAttention).
    for cap in (A100, H100, B200):
        assert reasons(cap=cap, kv="fp8_e5m2") == []


def test_nvfp4_on_sm90_reads_with_fa2():
    # _nvfp4_kv_on_fa2: plain nvfp4 only; nvfp4_4over6 needs the scale search.
    assert reasons(cap=H100, kv="nvfp4") == []
    assert reasons(cap=H100, kv="nvfp4_4over6") == ["kv_cache_dtype not supported"]
    # supports_combination: head 64 and sinks, in that order of precedence.
    assert reasons(cap=H100, kv="nvfp4", head_size=64) == [
        "fa2 prefill misreads an NVFP4 KV cache at head_size 64"
    ]
    assert reasons(cap=H100, kv="nvfp4", has_sink=True) == [
        "the sink prefill wrapper cannot read an NVFP4 KV cache"
    ]


def test_nvfp4_on_blackwell_needs_trtllm_both_phases():
    assert reasons(cap=B200, kv="nvfp4") == []
    assert reasons(cap=B200, kv="nvfp4_4over6") == []
    assert reasons(cap=B200, kv="nvfp4", kernels=AIRGAPPED) == ["kv_cache_dtype not supported"]
    # VLLM_BATCH_INVARIANT turns supports_trtllm_attention off.
    assert reasons(cap=B200, kv="nvfp4", ctx=EngineContext(batch_invariant=True)) == [
        "kv_cache_dtype not supported"
    ]
    # The combination reason is only for majors 8, 9, 12.
    assert reasons(cap=B200, kv="nvfp4", head_size=64) == []
    # 11.x: neither the fa2 families nor 10.x.
    assert reasons(cap=THOR, kv="nvfp4") == ["kv_cache_dtype not supported"]


def test_any_nvfp4_prefix_takes_the_nvfp4_branch():
    # supports_kv_cache_dtype tests startswith("nvfp4") before the list.
    assert reasons(cap=B200, kv="nvfp4_ds_mla") == []
    assert reasons(cap=H100, kv="nvfp4_ds_mla") == ["kv_cache_dtype not supported"]
    assert reasons(kv="int8_per_token_head") == ["kv_cache_dtype not supported"]
    assert reasons(kv=None) == []


def test_capability_range_is_8_0_to_12_1():
    assert reasons(cap=T4) == ["compute capability not supported"]
    assert reasons(cap=Capability(12, 2)) == ["compute capability not supported"]
    assert reasons(cap=Capability(8, 6)) == []


def test_several_reasons_keep_validate_order():
    assert reasons(cap=T4, head_size=96, dtype="float32", kv="fp8_ds_mla", use_mla=True) == [
        "head_size not supported",
        "dtype not supported",
        "kv_cache_dtype not supported",
        "MLA not supported",
        "compute capability not supported",
    ]


# --- block sizes ---------------------------------------------------------------


def test_block_size_128_on_h100_splits_into_64_pages():
    # The kernel sizes are 16/32/64 there, and 128 is a multiple of them.
    assert FLASHINFER.block_sizes(q(cap=H100, ctx=LLAMA_8B)) == (16, 32, 64)
    assert reasons(cap=H100, ctx=LLAMA_8B, block_size=128) == []
    assert reasons(cap=H100, block_size=8) == ["block_size not supported"]


def test_large_pages_need_a_gqa_model_on_blackwell_with_trtllm():
    large = (16, 32, 64, 128, 256, 512, 1024)
    assert FLASHINFER.block_sizes(q(cap=B200, ctx=LLAMA_8B)) == large
    assert FLASHINFER.block_sizes(q(cap=GB300, ctx=LLAMA_8B)) == large
    # no model (get_current_vllm_config_or_none() is None), MHA, no cubins,
    # forced off, or not 10.x: the small list.
    for kw in (
        dict(cap=B200, ctx=NO_MODEL),
        dict(cap=B200, ctx=MHA),
        dict(cap=B200, ctx=LLAMA_8B, kernels=AIRGAPPED),
        dict(cap=B200, ctx=EngineContext(has_model=True, model_num_heads=32,
                                         model_num_kv_heads=8, use_trtllm_attention=False)),
        dict(cap=H100, ctx=LLAMA_8B),
        dict(cap=RTX5090, ctx=LLAMA_8B),
    ):
        assert FLASHINFER.block_sizes(q(**kw)) == (16, 32, 64), kw


def test_forcing_trtllm_on_does_not_block_large_pages():
    ctx = EngineContext(has_model=True, model_num_heads=64, model_num_kv_heads=8,
                        use_trtllm_attention=True)
    assert 1024 in FLASHINFER.block_sizes(q(cap=B200, ctx=ctx))


# --- features ----------------------------------------------------------------


def test_sinks_follow_the_trtllm_kernels():
    assert reasons(cap=H100, has_sink=True) == []  # XQA decode
    assert reasons(cap=RTX5090, has_sink=True) == []
    assert reasons(cap=B200, has_sink=True) == []  # trtllm-gen prefill + decode
    assert reasons(cap=A100, has_sink=True) == ["attention sinks not supported"]
    assert reasons(cap=Capability(9, 0), has_sink=True, kernels=AIRGAPPED) == [
        "attention sinks not supported"
    ]
    assert reasons(cap=B200, has_sink=True, ctx=EngineContext(use_trtllm_attention=False)) == [
        "attention sinks not supported"
    ]
    assert reasons(cap=THOR, has_sink=True) == ["attention sinks not supported"]


def test_dcp_yes_pcp_no():
    assert reasons(use_dcp=True) == []
    assert reasons(use_pcp=True) == ["PCP not supported"]


def test_sliding_window_and_non_causal_yes_rswa_and_mm_prefix_no():
    assert reasons(has_sliding_window=True, use_non_causal=True) == []
    assert reasons(use_rswa=True) == ["R-SWA not supported"]
    assert reasons(use_mm_prefix=True) == ["partial multimodal token full attention not supported"]
    assert reasons(use_batch_invariant=True) == ["batch invariance not supported"]
    assert reasons(attn_type="encoder_only") == ["attention type AttentionType.ENCODER_ONLY not supported"]


def test_adaptive_verification_needs_trtllm_gen_decode():
    mismatch = "device-cpu query lens mismatch not supported, this is needed for adaptive verification"
    assert reasons(cap=H100, use_adaptive_verification=True) == [mismatch]
    assert reasons(cap=B200, use_adaptive_verification=True) == []  # no model: True
    assert reasons(cap=B200, ctx=LLAMA_8B, use_adaptive_verification=True) == []
    assert reasons(cap=B200, ctx=LLAMA_8B, kernels=AIRGAPPED,
                   use_adaptive_verification=True) == [mismatch]
    dcp = EngineContext(has_model=True, model_num_heads=32, model_num_kv_heads=8, dcp_size=2)
    assert reasons(cap=B200, ctx=dcp, use_adaptive_verification=True) == [mismatch]


def test_missing_package_is_the_only_reason():
    assert reasons(kernels=Kernels(flashinfer_python=False), head_size=96) == [
        "ModuleNotFoundError: No module named 'flashinfer'"
    ]
    # has_flashinfer() False with the package present still imports.
    assert reasons(kernels=Kernels(flashinfer=False)) == []


# --- reported facts -----------------------------------------------------------


def test_cudagraph_support():
    cg = lambda **kw: resolve(FLASHINFER.cudagraph_support, q(**kw))  # noqa: E731
    assert cg(cap=B200, ctx=LLAMA_8B) == "UNIFORM_BATCH"
    assert cg(cap=H100, ctx=LLAMA_8B) == "UNIFORM_BATCH"  # XQA
    assert cg(cap=H100, ctx=LLAMA_8B, head_size=512) == "UNIFORM_SINGLE_TOKEN_DECODE"
    assert cg(cap=H100, ctx=LLAMA_8B, kv="nvfp4") == "UNIFORM_SINGLE_TOKEN_DECODE"
    assert cg(cap=RTX5090, ctx=LLAMA_8B, kv="nvfp4") == "UNIFORM_BATCH"
    assert cg(cap=H100, ctx=LLAMA_8B, kernels=AIRGAPPED) == "UNIFORM_SINGLE_TOKEN_DECODE"
    assert cg(cap=A100, ctx=LLAMA_8B) == "UNIFORM_BATCH"  # fa2 native decode
    assert cg(cap=A100, ctx=LLAMA_8B, use_non_causal=True) == "UNIFORM_SINGLE_TOKEN_DECODE"
    assert cg(cap=B200, ctx=LLAMA_8B, use_non_causal=True) == "UNIFORM_SINGLE_TOKEN_DECODE"
    assert cg(cap=H100, ctx=LLAMA_8B, use_non_causal=True) == "UNIFORM_BATCH"
    dcp = EngineContext(has_model=True, model_num_heads=32, model_num_kv_heads=8, dcp_size=2)
    assert cg(cap=B200, ctx=dcp) == "UNIFORM_SINGLE_TOKEN_DECODE"


def test_kv_cache_layouts():
    assert resolve(FLASHINFER.kv_cache_layouts, q(cap=B200)) == ("LBHNC", "BLHNC")
    assert resolve(FLASHINFER.kv_cache_layouts, q(cap=H100)) is None


def test_trtllm_helpers():
    assert fi.supports_trtllm_attention(H100, ALL, NO_MODEL, is_prefill=False)
    assert not fi.supports_trtllm_attention(H100, ALL, NO_MODEL, is_prefill=True)
    assert fi.supports_trtllm_attention(GB300, ALL, NO_MODEL, is_prefill=True)
    assert not fi.supports_trtllm_attention(Capability(9, 0), AIRGAPPED, NO_MODEL)
    assert not fi.can_use_trtllm_attention(B200, ALL, NO_MODEL, 12, 5)
    assert fi.can_use_trtllm_attention(B200, ALL, NO_MODEL, 32, 8, is_prefill=True)


# --- TRITON_FLASHINFER ----------------------------------------------------------


def tf(**kw) -> list[str]:
    kw.setdefault("cap", B200)
    kw.setdefault("head_size", 256)
    return reasons(TRITON_FLASHINFER, **kw)


def test_composite_valid_on_blackwell_for_head_256_and_512():
    assert tf() == []
    assert tf(head_size=512, use_mm_prefix=True, has_sliding_window=True) == []
    assert tf(head_size=128) == ["head_size not supported"]


def test_composite_is_blackwell_only():
    assert tf(cap=H100) == ["compute capability not supported"]
    assert tf(cap=RTX5090) == ["compute capability not supported"]


def test_composite_kernel_block_64():
    assert TRITON_FLASHINFER.block_sizes(q(cap=B200)) == (64,)
    assert tf(block_size=128) == []
    assert tf(block_size=32) == ["block_size not supported"]


def test_composite_dtypes_are_the_intersection():
    assert tf(dtype="float32") == ["dtype not supported"]  # Triton has it, FlashInfer not
    assert tf(kv="fp8_e5m2") == []
    assert tf(kv="nvfp4") == ["kv_cache_dtype not supported"]  # Triton has no nvfp4
    assert tf(kv="int8_per_token_head") == ["kv_cache_dtype not supported"]


def test_composite_keeps_attention_backend_defaults():
    # No override of supports_sink / supports_non_causal / supports_batch_invariance.
    assert tf(has_sink=True) == ["attention sinks not supported"]
    assert tf(use_non_causal=True) == ["non-causal attention not supported"]
    assert tf(use_batch_invariant=True) == ["batch invariance not supported"]
    assert tf(use_rswa=True) == ["R-SWA not supported"]  # FlashInfer lacks it
    assert tf(attn_type="encoder_only") == ["attention type AttentionType.ENCODER_ONLY not supported"]


def test_composite_overrides_to_false():
    mismatch = "device-cpu query lens mismatch not supported, this is needed for adaptive verification"
    assert tf(use_dcp=True) == ["DCP not supported"]
    assert tf(use_pcp=True) == ["PCP not supported"]
    assert tf(use_adaptive_verification=True) == [mismatch]


def test_composite_combination_is_prefixed_with_the_child():
    assert tf(cap=H100, head_size=64, kv="nvfp4") == [
        "head_size not supported",
        "kv_cache_dtype not supported",
        "compute capability not supported",
        "FLASHINFER: fa2 prefill misreads an NVFP4 KV cache at head_size 64",
    ]


def test_composite_import_error_from_flashinfer():
    assert tf(kernels=Kernels(flashinfer_python=False)) == [
        "ModuleNotFoundError: No module named 'flashinfer'"
    ]


def test_composite_cudagraphs_and_layouts():
    assert resolve(TRITON_FLASHINFER.cudagraph_support, q(cap=B200, ctx=LLAMA_8B)) == (
        "UNIFORM_SINGLE_TOKEN_DECODE"
    )
    unclamped = EngineContext(has_model=True, model_num_heads=32, model_num_kv_heads=8,
                              unclamped_sliding_window=True)
    assert resolve(TRITON_FLASHINFER.cudagraph_support, q(cap=B200, ctx=unclamped)) == "NEVER"
    assert resolve(TRITON_FLASHINFER.kv_cache_layouts, q(cap=B200)) == ("LBHNC", "BLHNC")


def test_no_multiple_of_sizes():
    # FlashInfer declares exact sizes only (select_common_block_size relies on it).
    for ctx in (NO_MODEL, LLAMA_8B):
        assert not any(isinstance(s, MultipleOf) for s in FLASHINFER.block_sizes(q(cap=B200, ctx=ctx)))
