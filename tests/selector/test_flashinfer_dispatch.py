"""FlashInfer's inner dispatch (FlashInferMetadataBuilder.__init__ and build in
vllm/v1/attention/backends/flashinfer.py, use_trtllm_attention in
vllm/utils/flashinfer.py, determine_attention_backend in FlashInfer
0.7.2.post1), vLLM 0.33.0. Every expected value is read off that code.
"""

from __future__ import annotations

from attn_select.selector import flashinfer_dispatch as fd
from attn_select.selector.config import Capability, EngineContext, Kernels, SelectorConfig

A100, L40, H100, B200, GB300, RTX5090 = (
    Capability(8, 0), Capability(8, 9), Capability(9, 0), Capability(10, 0),
    Capability(10, 3), Capability(12, 0),
)
ALL = Kernels()
AIRGAPPED = Kernels(trtllm_cubins=False)
CTX = EngineContext()


def dispatch(cap, kernels=ALL, ctx=CTX, *, head_size=128, kv="auto", block_size=None,
             qo=32, kvh=8, sinks=False, k=0, cfg_kw=None, **kw) -> fd.FlashInferDispatch:
    cfg = SelectorConfig(head_size, "bfloat16", kv, block_size, has_sink=sinks, **(cfg_kw or {}))
    return fd.flashinfer_dispatch(cfg, cap, kernels, ctx, num_qo_heads=qo, num_kv_heads=kvh,
                                  has_sinks=sinks, num_speculative_tokens=k, **kw)


def batch(d: fd.FlashInferDispatch, prefix: str) -> fd.BatchDispatch:
    return next(b for b in d.batches if b.batch.name.startswith(prefix))


def rules(d) -> list[str]:
    return [s.rule for s in d.trail]


# --- decode: decided once at builder init ------------------------------------


def test_b200_llama_8b_is_all_trtllm_gen():
    d = dispatch(B200)
    assert d.init_error is None
    assert d.decode_kernel == "trtllm-gen"
    assert (d.q_dtype_prefill, d.q_dtype_decode, d.kv_cache_dtype) == ("bfloat16",) * 3
    assert d.cudagraph_support == "UNIFORM_BATCH"
    for b in d.batches:
        assert b.error is None
        assert b.decode in (None, "trtllm-gen") and b.prefill in (None, "trtllm-gen"), b
    mixed = batch(d, "mixed")
    assert (mixed.num_decodes, mixed.num_prefills) == (32, 1)
    assert (mixed.num_decode_tokens, mixed.num_prefill_tokens) == (32, 2048)


def test_decode_is_not_decided_per_batch_any_more():
    # use_trtllm_attention's "num_tokens <= 256" decode rule is never called:
    # 512 single-token decodes still run trtllm-gen.
    assert batch(dispatch(B200), "decode x512").decode == "trtllm-gen"
    assert batch(dispatch(H100), "decode x512").decode == "xqa"


def test_h100_with_cubins_decodes_with_xqa_and_prefills_with_fa3():
    d = dispatch(H100)
    assert d.decode_kernel == "xqa"
    assert batch(d, "prefill").prefill == "paged wrapper (fa3)"
    assert batch(d, "mixed").decode == "xqa"


def test_rtx5090_xqa_decode_and_fa2_prefill():
    d = dispatch(RTX5090)
    assert d.decode_kernel == "xqa"
    assert batch(d, "prefill").prefill == "paged wrapper (fa2)"


def test_h100_airgapped_is_native():
    d = dispatch(H100, AIRGAPPED, k=2)
    assert d.decode_kernel == "native"
    assert d.native_decode_backend == "fa2"  # tensor-core auto without fp8
    assert d.cudagraph_support == "UNIFORM_SINGLE_TOKEN_DECODE"
    assert d.reorder_batch_threshold == 1
    assert any(s.rule == "decode" and "has_nvidia_artifactory" in s.why for s in d.trail)
    # The native decode wrapper takes single-token queries only here, so
    # verification requests go down the prefill path.
    spec = batch(d, "spec verify")
    assert (spec.num_decodes, spec.num_prefills) == (0, 32)
    assert spec.prefill == "paged wrapper (fa3)"


def test_a100_is_fa2_everywhere_and_decodes_spec_tokens():
    d = dispatch(A100, k=2)
    assert d.decode_kernel == "native" and d.native_decode_backend == "fa2"
    assert d.reorder_batch_threshold == 3
    assert d.cudagraph_support == "UNIFORM_BATCH"
    assert batch(d, "prefill").prefill == "paged wrapper (fa2)"
    spec = batch(d, "spec verify")
    assert spec.num_decodes == 32 and spec.decode == "decode wrapper (fa2)"


def test_spec_tokens_decode_on_trtllm_gen_and_xqa():
    for cap, kernel in ((B200, "trtllm-gen"), (H100, "xqa")):
        d = dispatch(cap, k=3)
        assert d.reorder_batch_threshold == 4
        spec = batch(d, "spec verify")
        assert (spec.num_decodes, spec.decode) == (32, kernel)


def test_xqa_head_dim_512_reverts_to_native():
    d = dispatch(H100, head_size=512)
    assert d.decode_kernel == "native"
    assert "xqa-head-dim" in rules(d)
    assert batch(d, "prefill").prefill == "paged wrapper (fa2)"  # FA3 has no 512 kernel


def test_xqa_under_dcp_reverts_to_native_and_prefill_uses_the_dcp_wrapper():
    d = dispatch(H100, ctx=EngineContext(dcp_size=2))
    assert d.decode_kernel == "native" and "xqa-dcp" in rules(d)
    assert batch(d, "prefill").prefill == (
        "DCP wrapper (context paged wrapper (fa3), new tokens ragged wrapper auto)"
    )
    # trtllm-gen decode survives DCP; the context pass may take trtllm-gen.
    d = dispatch(B200, ctx=EngineContext(dcp_size=2))
    assert d.decode_kernel == "trtllm-gen"
    assert batch(d, "prefill").prefill.startswith("DCP wrapper (context trtllm-gen")
    # ... unless its LSE stats do not fit the workspace.
    d = dispatch(B200, ctx=EngineContext(dcp_size=2), workspace_bytes=2 << 20)
    assert batch(d, "prefill").prefill.startswith("DCP wrapper (context paged wrapper (fa2)")


def test_forced_off():
    d = dispatch(B200, ctx=EngineContext(use_trtllm_attention=False))
    assert d.decode_kernel == "native"
    assert batch(d, "prefill").prefill == "paged wrapper (fa2)"
    assert [s.why for s in batch(d, "prefill").trail if s.rule == "prefill-trtllm"] == [
        "no: use_trtllm_attention is forced off"
    ]


def test_heads_that_do_not_divide():
    d = dispatch(B200, qo=12, kvh=5)
    assert d.decode_kernel == "native"
    assert batch(d, "prefill").prefill == "paged wrapper (fa2)"


# --- fp8 and nvfp4 ------------------------------------------------------------


def test_fp8_on_b200_quantizes_the_query_and_stays_on_trtllm_gen():
    d = dispatch(B200, kv="fp8")
    assert (d.q_dtype_prefill, d.q_dtype_decode, d.kv_cache_dtype) == ("float8_e4m3fn",) * 3
    pre = batch(d, "prefill")
    assert pre.prefill == "trtllm-gen" and "quantized" in pre.trail[-1].why


def test_fp8_with_q_quantization_disabled_prefills_natively_on_b200():
    d = dispatch(B200, ctx=EngineContext(disable_flashinfer_q_quantization=True), kv="fp8")
    assert d.q_dtype_prefill == "bfloat16"
    assert batch(d, "prefill").prefill == "paged wrapper (fa2)"
    assert batch(d, "decode x8").decode == "trtllm-gen"


def test_fp8_e5m2_on_b200_is_not_the_platform_fp8():
    # q is e5m2, which is not current_platform.fp8_dtype(): auto-detect says no.
    d = dispatch(B200, kv="fp8_e5m2")
    assert d.q_dtype_prefill == "float8_e5m2"
    assert batch(d, "prefill").prefill == "paged wrapper (fa2)"


def test_fp8_on_h100_fp8_prefill_16bit_xqa_decode():
    d = dispatch(H100, kv="fp8")
    assert (d.q_dtype_prefill, d.q_dtype_decode) == ("float8_e4m3fn", "bfloat16")
    assert batch(d, "prefill").prefill == "paged wrapper (fa3)"
    assert d.decode_kernel == "xqa"


def test_fp8_on_airgapped_h100_decodes_with_fa2():
    # use_trtllm_attention is not forced off, so the decode query stays 16-bit;
    # FA3 cannot read fp8 KV with a 16-bit query.
    d = dispatch(H100, AIRGAPPED, kv="fp8")
    assert d.q_dtype_decode == "bfloat16" and d.native_decode_backend == "fa2"
    # Forced off: the decode query is fp8 and the wrapper's auto picks FA3.
    d = dispatch(H100, ctx=EngineContext(use_trtllm_attention=False), kv="fp8")
    assert d.q_dtype_decode == "float8_e4m3fn" and d.native_decode_backend == "fa3"


def test_fp8_on_l40_keeps_a_16bit_query():
    d = dispatch(L40, kv="fp8")
    assert (d.q_dtype_prefill, d.q_dtype_decode) == ("bfloat16", "bfloat16")
    assert batch(d, "prefill").prefill == "paged wrapper (fa2)"


def test_nvfp4_dispatch():
    d = dispatch(B200, kv="nvfp4")
    assert d.kv_cache_dtype == "nvfp4" and d.q_dtype_prefill == "float8_e4m3fn"
    assert batch(d, "prefill").prefill == "trtllm-gen"
    d = dispatch(RTX5090, kv="nvfp4")  # XQA reads NVFP4 on 12.x
    assert (d.decode_kernel, d.kv_cache_dtype) == ("xqa", "uint8")
    assert batch(d, "prefill").prefill == "paged wrapper (fa2)"
    d = dispatch(H100, kv="nvfp4")  # SM90 decodes NVFP4 with fa2
    assert (d.decode_kernel, d.native_decode_backend) == ("native", "fa2")
    assert batch(d, "prefill").prefill == "paged wrapper (fa2)"


# --- builder-init errors ---------------------------------------------------------


def test_init_errors():
    assert dispatch(H100, kv="nvfp4", head_size=64).init_error == (
        "NotImplementedError: fa2 prefill misreads NVFP4 at head_size 64."
    )
    assert dispatch(H100, kv="nvfp4", ctx=EngineContext(dcp_size=2)).init_error == (
        "NotImplementedError: The DCP prefill wrapper cannot read NVFP4 block scales."
    )
    assert dispatch(B200, AIRGAPPED, kv="nvfp4_4over6").init_error == (
        "ValueError: --kv-cache-dtype nvfp4_4over6 requires the SM100 trtllm-gen FlashInfer path."
    )
    assert dispatch(A100, sinks=True).init_error == (
        "NotImplementedError: FlashInfer backend currently does not support attention sinks, "
        "please use trtllm on blackwell or flash attention on earlier GPUs."
    )
    assert dispatch(H100, page_size=128).init_error == (
        "AssertionError: Unexpected FlashInfer page size 128 without trtllm-gen GQA"
    )
    d = dispatch(A100, sinks=True)
    assert d.batches == () and d.describe()[0].startswith("builder init fails")


def test_sinks():
    d = dispatch(H100, sinks=True)
    assert batch(d, "prefill").prefill == "sink wrapper (fa3)"
    d = dispatch(B200, sinks=True)
    assert batch(d, "prefill").prefill == "trtllm-gen"
    # DCP: the prefill can't be trtllm-gen, and the DCP wrapper has no sinks.
    d = dispatch(B200, ctx=EngineContext(dcp_size=2), sinks=True)
    assert batch(d, "decode x8").error is None
    assert batch(d, "prefill").error.startswith(
        "NotImplementedError: FlashInfer BatchDCPPrefillWrapper does not support attention sinks."
    )


# --- pages -------------------------------------------------------------------


def test_large_pages_force_trtllm_prefill():
    llama = EngineContext(has_model=True, model_num_heads=32, model_num_kv_heads=8)
    d = dispatch(B200, ctx=llama, block_size=256)
    assert d.page_size == 256
    pre = batch(d, "prefill")
    assert pre.prefill == "trtllm-gen" and pre.trail[0].rule == "large-page"
    # Without a model the large pages are not advertised: 256 splits into 64s.
    assert dispatch(B200, block_size=256).page_size == 64
    assert dispatch(H100, block_size=128).page_size == 64


def test_large_page_with_fp8_kv_prefills_on_trtllm_gen_even_without_fp8_query():
    llama = EngineContext(has_model=True, model_num_heads=32, model_num_kv_heads=8,
                          disable_flashinfer_q_quantization=True)
    pre = batch(dispatch(B200, ctx=llama, block_size=128, kv="fp8"), "prefill")
    assert pre.prefill == "trtllm-gen"
    assert [s.rule for s in pre.trail] == ["large-page", "prefill-trtllm", "fp8-dequant"]


# --- non-causal draft batches ----------------------------------------------------


def test_non_causal_batches():
    nc = {"use_non_causal": True}
    d = dispatch(B200, cfg_kw=nc)
    b = batch(d, "non-causal")
    assert (b.num_prefills, b.prefill) == (8, "paged wrapper (fa2)")
    # XQA still routes decodes for non-causal batches.
    d = dispatch(H100, cfg_kw=nc, k=15)
    b = batch(d, "non-causal")
    assert (b.num_decodes, b.decode) == (8, "xqa")
    # DCP cannot run them.
    d = dispatch(B200, ctx=EngineContext(dcp_size=2), cfg_kw=nc)
    assert batch(d, "non-causal").error == (
        "NotImplementedError: FlashInfer non-causal prefill is not supported with DCP yet."
    )
    d = dispatch(RTX5090, cfg_kw=nc, kv="nvfp4")
    assert batch(d, "non-causal").error == (
        "NotImplementedError: FlashInfer non-causal attention is not supported with NVFP4 KV cache."
    )


# --- helpers ------------------------------------------------------------------------


def test_split_decodes_and_prefills():
    split = fd.split_decodes_and_prefills
    assert split((1, 1, 1), 1, True) == (3, 0, 3, 0)
    assert split((1, 1, 9), 1, True) == (2, 1, 2, 9)
    assert split((9, 1), 1, False) == (0, 2, 0, 10)
    # Uniform required: a shorter decode becomes the first prefill.
    assert split((4, 4, 2), 4, True) == (2, 1, 8, 2)
    assert split((4, 4, 2), 4, False) == (3, 0, 10, 0)
    # Padding requests (0 tokens) keep a uniform batch uniform.
    assert split((4, 4, 0), 4, True) == (3, 0, 8, 0)


def test_auto_backend():
    assert fd.auto_backend(H100, "bfloat16", "bfloat16", 128)[0] == "fa3"
    assert fd.auto_backend(Capability(9, 0), "bfloat16", "float8_e4m3fn", 128)[0] == "fa2"
    assert fd.auto_backend(H100, "float8_e4m3fn", "float8_e4m3fn", 256)[0] == "fa3"
    assert fd.auto_backend(H100, "bfloat16", "uint8", 128)[0] == "fa2"
    assert fd.auto_backend(H100, "bfloat16", "bfloat16", 512)[0] == "fa2"
    assert fd.auto_backend(B200, "bfloat16", "bfloat16", 128)[0] == "fa2"


def test_use_trtllm_attention_decode_rules_still_mirrored():
    kw = dict(num_qo_heads=32, num_kv_heads=8, dcp_world_size=1, kv_cache_dtype="auto",
              q_dtype="bfloat16", is_prefill=False, force=None, has_sinks=False)
    assert fd.use_trtllm_attention(B200, ALL, CTX, num_tokens=256, **kw)[0]
    assert not fd.use_trtllm_attention(B200, ALL, CTX, num_tokens=257, **kw)[0]
    assert fd.use_trtllm_attention(B200, ALL, CTX, num_tokens=257, has_spec=True, **kw)[0]
    kw["kv_cache_dtype"] = "fp8"
    assert fd.use_trtllm_attention(H100, ALL, CTX, num_tokens=999, **kw)[0]
    assert not fd.use_trtllm_attention(H100, ALL, CTX._replace(batch_invariant=True),
                                       num_tokens=1, **kw)[0]


def test_describe_lines():
    rows = dispatch(B200).describe()
    assert rows[0].startswith("decode trtllm-gen")
    assert "mixed 32 decodes + 1x2048: 32 decodes -> trtllm-gen; 1 prefills -> trtllm-gen" in rows


def test_soft_cap_is_dropped_by_xqa_and_trtllm_gen():
    """vLLM 0.33.0 calls XQA and trtllm-gen without a logits soft cap
    (flashinfer.py: flashinfer_xqa_batch_decode_with_kv_cache,
    trtllm_batch_decode_with_kv_cache, trtllm_batch_context_with_kv_cache take
    none): a soft-capped model on those kernels is warned about; the native
    wrappers are planned with the cap, so no warning there."""
    from attn_select.selector.config import Capability, EngineContext, Kernels, SelectorConfig
    from attn_select.selector.flashinfer_dispatch import flashinfer_dispatch

    cfg = SelectorConfig(256, "bfloat16", "auto", None)
    capped = EngineContext(has_model=True, model_num_heads=16, model_num_kv_heads=8, attn_logit_softcapping=True)
    h100 = flashinfer_dispatch(cfg, Capability(9, 0), Kernels(), capped, num_qo_heads=16, num_kv_heads=8,
                               has_sinks=False)
    assert h100.warnings == ("xqa takes no logits soft cap, and vLLM passes none: batches run on it ignore "
                             "the model's attn_logit_softcapping",)
    assert h100.describe()[-1] == "warning: " + h100.warnings[0]
    b200 = flashinfer_dispatch(cfg, Capability(10, 0), Kernels(), capped, num_qo_heads=16, num_kv_heads=8,
                               has_sinks=False)
    assert b200.warnings and b200.warnings[0].startswith("trtllm-gen takes no logits soft cap")
    airgapped = flashinfer_dispatch(cfg, Capability(9, 0), Kernels(trtllm_cubins=False), capped,
                                    num_qo_heads=16, num_kv_heads=8, has_sinks=False)
    assert airgapped.decode_kernel == "native" and airgapped.warnings == ()
    uncapped = flashinfer_dispatch(cfg, Capability(9, 0), Kernels(), capped._replace(attn_logit_softcapping=False),
                                   num_qo_heads=16, num_kv_heads=8, has_sinks=False)
    assert uncapped.warnings == ()
