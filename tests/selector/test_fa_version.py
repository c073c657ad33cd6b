"""get_flash_attn_version and friends (vllm/v1/attention/backends/fa_utils.py,
vllm/vllm_flash_attn/flash_attn_interface.py, FlashAttentionImpl.__init__ and
FlashAttentionMetadataBuilder.__init__ in flash_attn.py), vLLM 0.33.0.

Every expected value is read off vLLM's code; the comment says which rule.
"""

from __future__ import annotations

import pytest

from attn_select.selector import fa_version as fa
from attn_select.selector.config import Capability, EngineContext, Kernels, SelectorConfig
from attn_select.selector.model_facts import LayerAttention

A100, H100, B200, GB300, THOR, RTX5090, T4 = (
    Capability(8, 0), Capability(9, 0), Capability(10, 0), Capability(10, 3),
    Capability(11, 0), Capability(12, 0), Capability(7, 5),
)
ALL = Kernels()
NO_FA3 = Kernels(fa3=False)
NO_FA4 = Kernels(fa4=False)
FA4_ONLY = Kernels(fa2=False, fa3=False)
CTX = EngineContext()


def version(cap, kernels=ALL, ctx=CTX, **kw):
    return fa.resolve_fa_version(cap, kernels, ctx, **kw).version


def rules(cap, kernels=ALL, ctx=CTX, **kw):
    return [s.rule for s in fa.resolve_fa_version(cap, kernels, ctx, **kw).trail]


# --- step 1: default by architecture ----------------------------------------


def test_hopper_prefers_fa3():
    assert version(H100) == 3
    assert rules(H100) == ["default"]


def test_ampere_falls_back_to_fa2():
    assert version(A100) == 2


def test_blackwell_prefers_fa4_for_head_128():
    assert version(B200, head_size=128) == 4
    assert version(GB300, head_size=128) == 4


def test_only_major_10_defaults_to_fa4():
    # Thor (11.x) supports FA4 but the default branch only names major 10.
    assert version(THOR) == 2
    # 12.x: FA4 is not supported there at all; FA2 works (>= 8.0).
    assert version(RTX5090) == 2


def test_fa3_missing_on_hopper_gives_fa2():
    assert version(H100, NO_FA3) == 2


# --- step 2: override ----------------------------------------------------------


def test_override_3_on_blackwell_becomes_4():
    ctx = EngineContext(flash_attn_version=3)
    assert version(B200, ctx=ctx) == 4
    assert rules(B200, ctx=ctx) == ["default", "override", "blackwell-no-fa3"]


def test_override_3_on_blackwell_without_fa4_becomes_2():
    assert version(B200, NO_FA4, EngineContext(flash_attn_version=3)) == 2


def test_override_to_unsupported_version_returns_none():
    # FA4 is not supported on 8.x: logger.error, the assert fails, None.
    result = fa.resolve_fa_version(A100, ALL, EngineContext(flash_attn_version=4))
    assert result.version is None
    last = result.trail[-1]
    assert last.rule == "unsupported" and last.before == 4
    assert last.why == (
        "Cannot use FA version 4 is not supported due to FA4 is only supported "
        "on devices with compute capability 9.x, 10.x, or 11.x"
    )
    assert version(A100, ctx=EngineContext(flash_attn_version=3)) is None


def test_override_4_on_thor_is_kept():
    assert version(THOR, ctx=EngineContext(flash_attn_version=4), head_size=128) == 4


# --- step 3: fallbacks -------------------------------------------------------------


def test_alibi_forces_fa2():
    assert version(H100, requires_alibi=True) == 2
    assert version(B200, requires_alibi=True, head_size=128) == 2
    assert rules(B200, requires_alibi=True) == ["default", "alibi"]


def test_sm90_upgrades_to_fa4_for_head_over_256():
    assert version(H100, head_size=512) == 4
    trail = fa.resolve_fa_version(H100, ALL, CTX, head_size=512).trail
    assert trail[-1].why == "FA3 does not support head_size=512 on SM90: upgrading FlashAttention 3 -> 4"
    # Without FA4 the FA3 choice stands (vLLM does not re-check FA3's head limit).
    assert version(H100, NO_FA4, head_size=512) == 3


def test_sm90_upgrade_for_diff_kv_with_sinks_and_diffusion():
    assert version(H100, head_size=128, head_size_v=64, has_sinks=True) == 4
    assert version(H100, head_size=128, head_size_v=64) == 3
    assert version(H100, ctx=EngineContext(has_model=True, is_diffusion=True)) == 4
    # A diffusion flag without a model (model_config None) is not read.
    assert version(H100, ctx=EngineContext(is_diffusion=True)) == 3


def test_batch_invariance_excludes_fa4_only():
    ctx = EngineContext(batch_invariant=True)
    assert version(B200, ctx=ctx, head_size=128) == 2
    assert version(H100, ctx=ctx) == 3
    # The SM90 upgrade to 4 is undone again.
    assert version(H100, ctx=ctx, head_size=512) == 2


def test_blackwell_tmem_limits():
    assert version(B200, head_size=192, head_size_v=192) == 2
    assert rules(B200, head_size=192, head_size_v=192)[-1] == "tmem"
    assert version(B200, head_size=192, head_size_v=128) == 4
    assert version(B200, head_size=192) == 2  # head_size_v unknown: not the 192/128 exception
    assert version(B200, head_size=160) == 2
    # TMEM applies to major >= 10 only; on SM90 FA4 with head 512 stays.
    assert version(H100, head_size=512, head_size_v=512) == 4


# --- FA4 hd256 ------------------------------------------------------------------------


def test_hd256_needs_caller_support():
    assert version(B200, head_size=256) == 2
    assert version(B200, head_size=256, supports_fa4_hd256=True) == 4
    assert version(B200, head_size=256, head_size_v=256, supports_fa4_hd256=True) == 4
    # head_size_v 128 is not the hd256 kernel, and 256 > 128 fails TMEM.
    assert version(B200, head_size=256, head_size_v=128, supports_fa4_hd256=True) == 2


@pytest.mark.parametrize(
    ("kwargs", "ctx", "reason"),
    [
        ({"has_sinks": True}, CTX, "attention sinks"),
        ({"requires_softcap": True}, CTX, "logits soft capping"),
        ({}, EngineContext(has_model=True, attn_logit_softcapping=True), "logits soft capping"),
        ({}, EngineContext(cache_dtype="fp8"), "quantized KV cache dtype fp8"),
        ({"kv_cache_block_size": 16}, CTX, "a KV cache block size of 16"),
        ({}, EngineContext(has_model=True, is_mm_prefix_lm=True), "mm_prefix bidirectional attention"),
        ({}, EngineContext(has_model=True, rswa_window=1024), "R-SWA"),
        ({}, EngineContext(dcp_size=2), "decode context parallelism"),
        # sinks are checked first
        ({"has_sinks": True, "kv_cache_block_size": 16}, EngineContext(cache_dtype="fp8"), "attention sinks"),
    ],
)
def test_hd256_fallbacks(kwargs, ctx, reason):
    result = fa.resolve_fa_version(B200, ALL, ctx, head_size=256, supports_fa4_hd256=True, **kwargs)
    assert result.version == 2
    assert result.trail[-1].why == (
        f"FA4's Blackwell head_size=256 kernel does not support {reason}, "
        "defaulting to FA version 2."
    )


def test_hd256_keeps_fa4_for_page_aligned_blocks_and_model_free_flags():
    assert version(B200, head_size=256, supports_fa4_hd256=True, kv_cache_block_size=256) == 4
    # Model facts are read only with a model.
    ctx = EngineContext(attn_logit_softcapping=True, is_mm_prefix_lm=True, rswa_window=8)
    assert version(B200, ctx=ctx, head_size=256, supports_fa4_hd256=True) == 4


def test_hd256_kernel_is_blackwell_10_and_11_only():
    assert fa.uses_fa4_hd256_kernel(B200, 256, None)
    assert fa.uses_fa4_hd256_kernel(THOR, 256, 256)
    assert not fa.uses_fa4_hd256_kernel(H100, 256, None)
    assert not fa.uses_fa4_hd256_kernel(RTX5090, 256, None)
    assert not fa.uses_fa4_hd256_kernel(B200, 256, 128)


# --- availability ------------------------------------------------------------------


def test_fa2_unsupported_below_sm80_returns_none():
    result = fa.resolve_fa_version(T4, ALL, CTX)
    assert result.version is None
    assert result.trail[-1].why.endswith(
        "FA2 is only supported on devices with compute capability >= 8"
    )


def test_fa2_build_missing_on_ampere_returns_none():
    result = fa.resolve_fa_version(A100, Kernels(fa2=False), CTX)
    assert result.version is None
    assert "FA2 is unavailable due to: cannot import name '_vllm_fa2_C'" in result.trail[-1].why


def test_no_fa2_nor_fa3_means_no_flash_attn_package():
    # vllm/vllm_flash_attn/__init__.py raises although FA4's tree is present.
    result = fa.resolve_fa_version(B200, FA4_ONLY, CTX)
    assert result.version is None
    assert [s.rule for s in result.trail] == ["import"]
    assert not fa.is_fa_version_supported(4, B200, FA4_ONLY)
    assert fa.fa_package_import_error(FA4_ONLY) == (
        "vllm.vllm_flash_attn requires the CUDA flash attention extensions "
        "(_vllm_fa2_C or _vllm_fa3_C). On ROCm, use upstream flash_attn."
    )
    assert fa.fa_package_import_error(Kernels(fa2=False)) is None


def test_is_fa_version_supported_by_family():
    assert fa.is_fa_version_supported(3, H100, ALL)
    assert not fa.is_fa_version_supported(3, B200, ALL)
    assert fa.is_fa_version_supported(4, H100, ALL)
    assert fa.is_fa_version_supported(4, THOR, ALL)
    assert not fa.is_fa_version_supported(4, RTX5090, ALL)
    assert not fa.is_fa_version_supported(4, B200, NO_FA4)
    assert fa.fa_unsupported_reason(4, B200, NO_FA4) == (
        "FA4 is unavailable due to: vllm.vllm_flash_attn.cute.interface not found"
    )
    with pytest.raises(ValueError, match="Unsupported FA version: 1"):
        fa.is_fa_version_supported(1, H100, ALL)


# --- helpers built on the version ---------------------------------------------------


def test_fp8_kv_support():
    assert fa.fa_supports_kv_cache_dtype(H100, ALL, CTX, "fp8")
    assert not fa.fa_supports_kv_cache_dtype(A100, ALL, CTX, "fp8")
    assert fa.fa_supports_kv_cache_dtype(B200, ALL, CTX, "fp8")
    assert not fa.fa_supports_kv_cache_dtype(H100, ALL, CTX, "fp8_e5m2")
    # SM90 with FA4: only head_size 512 (or unknown).
    forced4 = EngineContext(flash_attn_version=4)
    assert fa.fa_supports_kv_cache_dtype(H100, ALL, forced4, "fp8")
    assert not fa.fa_supports_kv_cache_dtype(H100, ALL, forced4, "fp8", head_size=128)
    assert fa.fa_supports_kv_cache_dtype(H100, ALL, CTX, "fp8", head_size=512)
    # FA4 on Thor is family 110, not 100.
    assert not fa.fa_supports_kv_cache_dtype(THOR, ALL, forced4, "fp8")
    assert not fa.fa_supports_kv_cache_dtype(H100, NO_FA3, CTX, "fp8")


def test_sinks_and_mla_support():
    assert not fa.fa_supports_sinks(A100, ALL, CTX)
    assert fa.fa_supports_sinks(H100, ALL, CTX)
    assert fa.fa_supports_sinks(B200, ALL, CTX)
    assert not fa.fa_supports_sinks(H100, NO_FA3, CTX)
    assert fa.fa_supports_mla(H100, ALL)
    assert not fa.fa_supports_mla(B200, ALL)
    assert not fa.fa_supports_mla(H100, NO_FA3)


# --- per-layer calls ----------------------------------------------------------------


def cfg(head_size=128, **kw):
    return SelectorConfig(head_size, "bfloat16", kw.pop("kv_cache_dtype", "auto"), kw.pop("block_size", None), **kw)


def layer(head_size=128, head_size_v=None, **kw):
    return LayerAttention(head_size, head_size_v or head_size, 32, 8, **kw)


def test_layer_call_omits_head_size_v():
    # DeepSeek-style 192/128 MHA on Blackwell: the impl's call has no
    # head_size_v, so TMEM sends it to FA2; the builder's call says FA4.
    c, a = cfg(192), layer(192, 128)
    assert fa.layer_fa_version(c, B200, ALL, CTX, a).version == 2
    assert fa.builder_fa_version(c, B200, ALL, CTX, a).version == 4


def test_layer_call_ignores_block_size_builder_does_not():
    c = cfg(256, block_size=16)
    assert fa.layer_fa_version(c, B200, ALL, CTX, layer(256)).version == 4
    assert fa.builder_fa_version(c, B200, ALL, CTX, layer(256)).version == 2
    assert fa.builder_fa_version(c, B200, ALL, CTX, layer(256), block_size=128).version == 4


def test_layer_alibi_and_softcap_differ_from_noarg_call():
    assert fa.layer_fa_version(cfg(128), H100, ALL, CTX, layer(use_alibi=True)).version == 2
    assert fa.resolve_fa_version(H100, ALL, CTX).version == 3
    assert fa.layer_fa_version(cfg(256), B200, ALL, CTX, layer(256, logits_soft_cap=30.0)).version == 2
    assert fa.layer_fa_version(cfg(256), B200, ALL, CTX, layer(256)).version == 4


def test_encoder_local_attention_leaves_hd256():
    enc = cfg(256, attn_type="encoder_only", has_sliding_window=True)
    result = fa.layer_fa_version(enc, B200, ALL, CTX, None)
    assert result.version == 2
    assert result.trail[-1].rule == "encoder-local-hd256"
    # A decoder with a window, or an encoder without one, stays on FA4.
    assert fa.layer_fa_version(cfg(256, has_sliding_window=True), B200, ALL, CTX).version == 4
    assert fa.layer_fa_version(cfg(256, attn_type="encoder"), B200, ALL, CTX).version == 4


def test_layer_init_errors():
    assert fa.layer_init_error(cfg(kv_cache_dtype="fp8"), A100, ALL, CTX) == (
        "NotImplementedError: FlashAttention does not support fp8 kv-cache on this device."
    )
    assert fa.layer_init_error(cfg(kv_cache_dtype="fp8"), H100, ALL, CTX) is None
    # ALiBi moves the layer to FA2, which has no fp8 KV; selection does not see ALiBi.
    assert fa.layer_init_error(cfg(kv_cache_dtype="fp8"), H100, ALL, CTX, layer(use_alibi=True)) is not None
    assert fa.layer_init_error(cfg(has_sink=True), A100, ALL, CTX) == (
        "AssertionError: Sinks are only supported in FlashAttention 3"
    )
