"""FLASH_ATTN and TRITON_FLASH_ATTN against vLLM 0.33.0's
FlashAttentionBackend (flash_attn.py) and TritonFlashAttentionBackend
(triton_flash_attn.py + composite.py). Expected reasons are read off
validate_configuration and the backends' overrides.
"""

from __future__ import annotations

import pytest

from attn_select.backends import flash_attn as FA
from attn_select.backends import triton_flash_attn as TFA
from attn_select.backends.flash_attn import FLASH_ATTN
from attn_select.backends.registry import BACKENDS
from attn_select.backends.spec import MultipleOf, resolve
from attn_select.backends.triton_flash_attn import TRITON_FLASH_ATTN
from attn_select.selector.config import (
    Capability,
    EngineContext,
    Kernels,
    Query,
    SelectorConfig,
)
from attn_select.selector.validate import check

A100, H100, B200, GB300, THOR, RTX5090, T4 = (
    Capability(8, 0), Capability(9, 0), Capability(10, 0), Capability(10, 3),
    Capability(11, 0), Capability(12, 0), Capability(7, 5),
)
ALL = Kernels()
CTX = EngineContext()
FP8_KV = FA.FP8_KV_NEEDS
IMPORT_ERROR = (
    "ImportError: vllm.vllm_flash_attn requires the CUDA flash attention extensions "
    "(_vllm_fa2_C or _vllm_fa3_C). On ROCm, use upstream flash_attn."
)


def q(cap, head_size=128, kernels=ALL, ctx=CTX, *, kv="auto", block=None, dtype="bfloat16", **kw):
    return Query(SelectorConfig(head_size, dtype, kv, block, **kw), cap, kernels, ctx)


def reasons(spec, *args, **kw):
    return check(spec, q(*args, **kw))


def test_registered():
    assert BACKENDS["FLASH_ATTN"] is FLASH_ATTN
    assert BACKENDS["TRITON_FLASH_ATTN"] is TRITON_FLASH_ATTN


# --- FLASH_ATTN ---------------------------------------------------------------------


@pytest.mark.parametrize("cap", [A100, H100, B200])
def test_plain_decoder_is_valid(cap):
    assert reasons(FLASH_ATTN, cap) == []


def test_head_size_multiple_of_8():
    assert reasons(FLASH_ATTN, H100, 72) == []  # 72 = 9 * 8
    assert reasons(FLASH_ATTN, H100, 68) == ["head_size not supported"]
    assert reasons(FLASH_ATTN, A100, 100) == ["head_size not supported"]


def test_head_size_above_256_needs_fa4_support():
    assert reasons(FLASH_ATTN, H100, 512) == []
    assert reasons(FLASH_ATTN, H100, 512, Kernels(fa4=False)) == ["head_size not supported"]
    assert reasons(FLASH_ATTN, A100, 512) == ["head_size not supported"]
    assert reasons(FLASH_ATTN, RTX5090, 264) == ["head_size not supported"]
    assert reasons(FLASH_ATTN, B200, 264) == []
    assert reasons(FLASH_ATTN, B200, 520) == ["head_size not supported"]


def test_fp8_kv_on_ampere():
    # supports_kv_cache_dtype (no-arg FA2) and supports_combination both refuse.
    assert reasons(FLASH_ATTN, A100, kv="fp8") == ["kv_cache_dtype not supported", FP8_KV]
    assert FP8_KV == (
        "FP8 KV cache requires FA3 on SM90, FA4 with head_size=512 on SM90, or FA4 on SM100"
    )


def test_fp8_kv_on_hopper_and_blackwell():
    assert reasons(FLASH_ATTN, H100, kv="fp8") == []
    assert reasons(FLASH_ATTN, H100, kv="fp8_e4m3") == []
    assert reasons(FLASH_ATTN, B200, kv="fp8") == []
    assert reasons(FLASH_ATTN, H100, kv="fp8_e5m2") == ["kv_cache_dtype not supported", FP8_KV]
    # Without FA3 on Hopper the no-arg call is FA2.
    assert reasons(FLASH_ATTN, H100, kernels=Kernels(fa3=False), kv="fp8") == [
        "kv_cache_dtype not supported", FP8_KV,
    ]
    # A dtype outside the list: the list test fails, and fp8-per-token-head is
    # quantized, so the combination asks the version (FA3 on H100: fine).
    assert reasons(FLASH_ATTN, H100, kv="fp8_per_token_head") == ["kv_cache_dtype not supported"]
    assert reasons(FLASH_ATTN, A100, kv="int8_per_token_head") == ["kv_cache_dtype not supported", FP8_KV]


def test_fp8_kv_blackwell_head_256_depends_on_block_size():
    # supports_combination passes block_size and supports_fa4_hd256=True: the
    # hd256 kernel refuses a 16-token block, FA2 has no fp8 KV.
    assert reasons(FLASH_ATTN, B200, 256, kv="fp8", block=16) == [FP8_KV]
    assert reasons(FLASH_ATTN, B200, 256, kv="fp8", block=128) == []
    # The run-wide cache dtype (cache_config) also rules out hd256.
    ctx = EngineContext(cache_dtype="fp8")
    assert reasons(FLASH_ATTN, B200, 256, ctx=ctx, kv="fp8", block=128) == [FP8_KV]


def test_sinks():
    assert reasons(FLASH_ATTN, A100, has_sink=True) == [
        "attention sinks not supported",
        "sink not supported on compute capability < 9.0",
    ]
    assert reasons(FLASH_ATTN, H100, has_sink=True) == []
    assert reasons(FLASH_ATTN, B200, has_sink=True) == []
    assert reasons(FLASH_ATTN, H100, kernels=Kernels(fa3=False), has_sink=True) == [
        "attention sinks not supported",
    ]


def test_mm_prefix():
    mm = FA.MM_PREFIX_NEEDS_FA4
    assert reasons(FLASH_ATTN, A100, use_mm_prefix=True) == [
        "partial multimodal token full attention not supported", mm,
    ]
    # FA4 is supported on H100, but head 128 resolves to FA3.
    assert reasons(FLASH_ATTN, H100, use_mm_prefix=True) == [mm]
    assert reasons(FLASH_ATTN, H100, 512, use_mm_prefix=True) == []
    assert reasons(FLASH_ATTN, B200, use_mm_prefix=True) == []
    assert reasons(FLASH_ATTN, B200, 256, use_mm_prefix=True, block=16) == [mm]
    # Exactly SM 9.0 with a quantized KV cache: Triton's job.
    assert reasons(FLASH_ATTN, H100, 512, kv="fp8", use_mm_prefix=True) == [
        "SM90 FP8 KV with mm_prefix requires Triton",
    ]


def test_per_head_quant_scales_need_fa3_or_later():
    assert reasons(FLASH_ATTN, A100, use_per_head_quant_scales=True) == [
        "per-head quant scales not supported",
    ]
    assert reasons(FLASH_ATTN, H100, use_per_head_quant_scales=True) == []
    assert reasons(FLASH_ATTN, B200, use_per_head_quant_scales=True) == []


def test_capability_and_static_features():
    assert reasons(FLASH_ATTN, T4) == ["compute capability not supported"]
    for attn_type in ("encoder", "encoder_only", "encoder_decoder"):
        assert reasons(FLASH_ATTN, H100, attn_type=attn_type) == []
    assert reasons(
        FLASH_ATTN, H100, has_sliding_window=True, use_rswa=True, use_non_causal=True,
        use_batch_invariant=True, use_kv_connector=True, use_dcp=True,
        use_adaptive_verification=True,
    ) == []
    assert reasons(FLASH_ATTN, H100, use_pcp=True) == ["PCP not supported"]
    assert reasons(FLASH_ATTN, H100, dtype="float32") == ["dtype not supported"]
    assert reasons(FLASH_ATTN, H100, use_mla=True) == ["MLA not supported"]


def test_import_fails_without_fa2_and_fa3():
    only4 = Kernels(fa2=False, fa3=False)
    assert reasons(FLASH_ATTN, B200, kernels=only4) == [IMPORT_ERROR]
    assert reasons(FLASH_ATTN, B200, kernels=Kernels(fa2=False)) == []


def block_sizes(spec, cap, ctx, kernels=ALL):
    return spec.block_sizes(q(cap, kernels=kernels, ctx=ctx))


def model(head_size, **kw):
    return EngineContext(has_model=True, model_head_size=head_size, **kw)


def test_kernel_block_sizes_without_model():
    assert block_sizes(FLASH_ATTN, H100, CTX) == (MultipleOf(16),)
    assert block_sizes(FLASH_ATTN, B200, CTX) == (MultipleOf(16),)


def test_sm90_fa4_fp8_head_512_pages_of_64():
    assert block_sizes(FLASH_ATTN, H100, model(512, cache_dtype="fp8")) == (64,)
    assert block_sizes(FLASH_ATTN, H100, model(512, cache_dtype="fp8_e4m3")) == (64,)
    assert block_sizes(FLASH_ATTN, H100, model(512)) == (MultipleOf(16),)
    assert block_sizes(FLASH_ATTN, H100, model(256, cache_dtype="fp8")) == (MultipleOf(16),)
    assert block_sizes(FLASH_ATTN, H100, model(512, cache_dtype="fp8"), Kernels(fa4=False)) == (
        MultipleOf(16),
    )
    # Block-size validation uses these model-level sizes.
    ctx = model(512, cache_dtype="fp8")
    assert reasons(FLASH_ATTN, H100, 512, ctx=ctx, kv="fp8", block=16) == ["block_size not supported"]
    assert reasons(FLASH_ATTN, H100, 512, ctx=ctx, kv="fp8", block=128) == []


def test_blackwell_hd256_pages_of_128():
    assert block_sizes(FLASH_ATTN, B200, model(256)) == (128,)
    assert block_sizes(FLASH_ATTN, GB300, model(256)) == (128,)
    assert block_sizes(FLASH_ATTN, B200, model(128)) == (MultipleOf(16),)
    assert block_sizes(FLASH_ATTN, B200, model(256, attn_logit_softcapping=True)) == (MultipleOf(16),)
    assert block_sizes(FLASH_ATTN, B200, model(256, batch_invariant=True)) == (MultipleOf(16),)
    assert block_sizes(FLASH_ATTN, RTX5090, model(256)) == (MultipleOf(16),)
    # Thor defaults to FA2; forcing FA4 uses the hd256 kernel there too.
    assert block_sizes(FLASH_ATTN, THOR, model(256)) == (MultipleOf(16),)
    assert block_sizes(FLASH_ATTN, THOR, model(256, flash_attn_version=4)) == (128,)
    ctx = model(256)
    assert reasons(FLASH_ATTN, B200, 256, ctx=ctx, block=16) == ["block_size not supported"]
    assert reasons(FLASH_ATTN, B200, 256, ctx=ctx, block=256) == []


def test_cudagraph_support_follows_noarg_version():
    def cg(cap, ctx=CTX, kernels=ALL):
        return resolve(FLASH_ATTN.cudagraph_support, q(cap, kernels=kernels, ctx=ctx))

    assert cg(A100) == "UNIFORM_BATCH"
    assert cg(H100) == "ALWAYS"
    assert cg(B200) == "ALWAYS"
    assert cg(B200, EngineContext(batch_invariant=True)) == "UNIFORM_BATCH"
    assert cg(H100, EngineContext(flash_attn_version=2)) == "UNIFORM_BATCH"
    assert cg(H100, kernels=Kernels(fa3=False)) == "UNIFORM_BATCH"


def test_report_facts():
    assert FLASH_ATTN.kv_cache_layouts is None
    assert FLASH_ATTN.dcp and not FLASH_ATTN.pcp
    assert not FLASH_ATTN.alibi_sqrt


# --- TRITON_FLASH_ATTN ----------------------------------------------------------------


FA_PREFIX = "FLASH_ATTN: "


def test_composite_hopper_head_256_mm_prefix_is_valid():
    assert reasons(TRITON_FLASH_ATTN, H100, 256, use_mm_prefix=True) == []
    assert reasons(TRITON_FLASH_ATTN, H100, 512, use_mm_prefix=True) == []


def test_composite_head_sizes():
    assert reasons(TRITON_FLASH_ATTN, H100, 128) == ["head_size not supported"]
    assert reasons(TRITON_FLASH_ATTN, H100, 512, Kernels(fa4=False)) == ["head_size not supported"]


def test_composite_is_hopper_only():
    assert reasons(TRITON_FLASH_ATTN, B200, 256) == ["compute capability not supported"]
    # On Ampere the causal route's version check fails too (FA2).
    assert reasons(TRITON_FLASH_ATTN, A100, 256) == [
        "compute capability not supported",
        FA_PREFIX + "causal route requires FlashAttention v3 or v4",
    ]


def test_composite_causal_route_needs_fa3_or_fa4():
    assert reasons(TRITON_FLASH_ATTN, H100, 256, Kernels(fa3=False)) == [
        FA_PREFIX + TFA.CAUSAL_ROUTE_NEEDS_FA3_OR_FA4,
    ]
    assert TFA.CAUSAL_ROUTE_NEEDS_FA3_OR_FA4 == "causal route requires FlashAttention v3 or v4"
    # ALiBi is not a selector input: the composite's check knows nothing of it.
    assert reasons(TRITON_FLASH_ATTN, H100, 256, ctx=EngineContext(batch_invariant=True)) == []


def test_composite_keeps_base_class_defaults():
    # CompositeAttentionBackend does not define these: AttentionBackend's defaults.
    assert reasons(TRITON_FLASH_ATTN, H100, 256, has_sink=True) == ["attention sinks not supported"]
    assert reasons(TRITON_FLASH_ATTN, H100, 256, use_per_head_quant_scales=True) == [
        "per-head quant scales not supported",
    ]
    assert reasons(TRITON_FLASH_ATTN, H100, 256, attn_type="encoder_only") == [
        "attention type AttentionType.ENCODER_ONLY not supported",
    ]
    assert reasons(TRITON_FLASH_ATTN, H100, 256, use_non_causal=True) == [
        "non-causal attention not supported",
    ]
    assert reasons(TRITON_FLASH_ATTN, H100, 256, use_batch_invariant=True) == [
        "batch invariance not supported",
    ]
    assert reasons(TRITON_FLASH_ATTN, H100, 256, use_dcp=True, use_pcp=True) == [
        "PCP not supported", "DCP not supported",
    ]
    assert reasons(TRITON_FLASH_ATTN, H100, 256, use_adaptive_verification=True) == [
        "device-cpu query lens mismatch not supported, this is needed for adaptive verification",
    ]
    assert reasons(
        TRITON_FLASH_ATTN, H100, 256, has_sliding_window=True, use_rswa=True, use_kv_connector=True,
    ) == []
    assert reasons(TRITON_FLASH_ATTN, H100, 256, dtype="float32") == ["dtype not supported"]


def test_composite_sinks_on_ampere_prefix_the_child_reason():
    assert reasons(TRITON_FLASH_ATTN, A100, 256, has_sink=True) == [
        "attention sinks not supported",
        "compute capability not supported",
        FA_PREFIX + "sink not supported on compute capability < 9.0",
    ]


def test_composite_fp8_mm_prefix_on_sm90_is_valid():
    # The FlashAttention child is asked without mm_prefix (it is the causal
    # route), so FLASH_ATTN's "SM90 FP8 KV with mm_prefix requires Triton"
    # does not apply to the composite.
    assert reasons(TRITON_FLASH_ATTN, H100, 256, kv="fp8", use_mm_prefix=True) == []
    assert reasons(FLASH_ATTN, H100, 256, kv="fp8", use_mm_prefix=True) == [
        "SM90 FP8 KV with mm_prefix requires Triton",
    ]
    assert reasons(TRITON_FLASH_ATTN, H100, 256, kv="fp8_e5m2") == [
        "kv_cache_dtype not supported", FA_PREFIX + FP8_KV,
    ]


def test_composite_block_sizes():
    ctx = model(512, cache_dtype="fp8")
    assert block_sizes(TRITON_FLASH_ATTN, H100, ctx) == (64,)
    assert block_sizes(TRITON_FLASH_ATTN, H100, CTX) == (MultipleOf(16),)
    assert reasons(TRITON_FLASH_ATTN, H100, 512, ctx=ctx, kv="fp8", block=16) == [
        "block_size not supported",
    ]
    assert reasons(TRITON_FLASH_ATTN, H100, 512, ctx=ctx, kv="fp8", block=64) == []
    assert reasons(TRITON_FLASH_ATTN, H100, 256, block=8) == ["block_size not supported"]


def test_composite_cudagraph_support_is_the_routings():
    def cg(ctx):
        return resolve(TRITON_FLASH_ATTN.cudagraph_support, q(H100, 256, ctx=ctx))

    assert cg(CTX) == "UNIFORM_SINGLE_TOKEN_DECODE"
    assert cg(EngineContext(unclamped_sliding_window=True)) == "NEVER"


def test_composite_kv_cache_layouts():
    # Neither child declares layouts: vLLM's default preference.
    assert resolve(TRITON_FLASH_ATTN.kv_cache_layouts, q(H100, 256)) == (
        "LBNHC", "LBHNC", "BLNHC", "BLHNC", "BHLNC", "LHBNC",
    )


def test_composite_import_fails_like_flash_attn():
    assert reasons(TRITON_FLASH_ATTN, H100, 256, Kernels(fa2=False, fa3=False)) == [IMPORT_ERROR]


def test_causal_child_is_a_flash_attn_subclass():
    child = TFA.FA_CAUSAL_CHILD
    assert child.name == "FLASH_ATTN"
    assert child.head_sizes is FLASH_ATTN.head_sizes
    assert child.capability(q(H100)) and not child.capability(q(B200))
