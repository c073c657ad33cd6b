"""Dense MLA (DeepSeek-V3/R1, head_size 576) end to end through the selector.

Expectations follow vLLM 0.33.0: _get_backend_priorities' MLA order, each
backend's validate_configuration reasons, then the lowest valid index.
"""

from attn_select.selector import reasons as R
from attn_select.selector.config import Kernels
from attn_select.selector.select import select

from mla_models import A100, B200, H100, RTX_PRO_6000, deepseek_v3, mla_cfg

FLASHMLA_C_MISSING = (
    "vllm._flashmla_C is not available, likely was not compiled due to insufficient "
    "nvcc version or a supported arch was not in the list of target arches to compile for."
)
FA_PACKAGE = (
    "ImportError: vllm.vllm_flash_attn requires the CUDA flash attention extensions "
    "(_vllm_fa2_C or _vllm_fa3_C). On ROCm, use upstream flash_attn."
)


def run(cfg, cap, ctx=None, kernels=None, backend=None):
    ctx = ctx or deepseek_v3()
    return select(cfg, cap, kernels or Kernels(), ctx, ctx.model_num_heads, backend)


def reasons(sel):
    return {c.name: list(c.reasons) for c in sel.candidates}


def test_h100_auto_picks_flash_attn_mla():
    sel = run(mla_cfg("auto"), H100)
    assert sel.priority_order[:4] == ("FLASH_ATTN_MLA", "FLASHMLA", "FLASHINFER_MLA", "TRITON_MLA")
    assert sel.selected == "FLASH_ATTN_MLA"
    r = reasons(sel)
    assert r["FLASHMLA"] == [] and r["TRITON_MLA"] == []
    assert r["FLASHINFER_MLA"] == [R.COMPUTE_CAPABILITY]
    # The sparse backends are on the Hopper list too and reject a dense layer.
    assert r["FLASHMLA_SPARSE"] == [R.NON_SPARSE]
    assert r["FLASH_ATTN_MLA_SPARSE"] == [
        R.NON_SPARSE,
        "FlashAttention MLA Sparse requires model with index_topk",
    ]
    assert r["FLASHINFER_MLA_SPARSE_SM90"] == [
        R.NON_SPARSE,
        "FLASHINFER_MLA_SPARSE_SM90 requires sparse MLA",
    ]


def test_h100_fp8_kv_falls_to_flashmla():
    sel = run(mla_cfg("fp8"), H100)
    assert reasons(sel)["FLASH_ATTN_MLA"] == [R.KV_CACHE_DTYPE]
    assert sel.selected == "FLASHMLA"


def test_h100_without_fa3_uses_flashmla():
    sel = run(mla_cfg("auto"), H100, kernels=Kernels(fa3=False))
    assert reasons(sel)["FLASH_ATTN_MLA"] == ["FlashAttention MLA not supported on this device"]
    assert sel.selected == "FLASHMLA"


def test_h100_without_flashmla_kernel_fp8_reaches_triton():
    sel = run(mla_cfg("fp8"), H100, kernels=Kernels(flashmla=False))
    r = reasons(sel)
    assert r["FLASHMLA"] == [FLASHMLA_C_MISSING]
    assert sel.selected == "TRITON_MLA"


def test_no_flash_attention_build_fails_the_fa_module_imports():
    kernels = Kernels(fa2=False, fa3=False)
    sel = run(mla_cfg("auto"), H100, kernels=kernels)
    r = reasons(sel)
    assert r["FLASH_ATTN_MLA"] == [FA_PACKAGE]
    for name in ("FLASH_ATTN_MLA_SPARSE", "FLASHMLA_SPARSE", "FLASHINFER_MLA_SPARSE_SM90"):
        assert r[name] == [FA_PACKAGE]
    assert sel.selected == "FLASHMLA"
    explicit = run(mla_cfg("auto"), H100, kernels=kernels, backend="FLASH_ATTN_MLA")
    assert explicit.selected is None
    assert explicit.error == (
        "Selected backend AttentionBackendEnum.FLASH_ATTN_MLA is not valid for this "
        f"configuration. Reason: [{FA_PACKAGE}]"
    )


def test_b200_auto_picks_flashinfer_mla_and_tokenspeed_needs_fp8():
    sel = run(mla_cfg("auto"), B200)
    assert sel.priority_order[:6] == (
        "FLASHINFER_MLA", "TOKENSPEED_MLA", "CUTLASS_MLA", "FLASH_ATTN_MLA", "FLASHMLA", "TRITON_MLA",
    )
    r = reasons(sel)
    assert sel.selected == "FLASHINFER_MLA"
    assert r["TOKENSPEED_MLA"] == [R.KV_CACHE_DTYPE]
    assert r["CUTLASS_MLA"] == []
    assert r["FLASH_ATTN_MLA"] == [
        R.COMPUTE_CAPABILITY, "FlashAttention MLA not supported on this device",
    ]
    # FLASHMLA's class admits 10.x; its kernel probe says Hopper only.
    assert r["FLASHMLA"] == ["FlashMLA Dense is only supported on Hopper devices."]


def test_b200_fp8_tokenspeed_valid_but_behind_flashinfer():
    sel = run(mla_cfg("fp8"), B200)
    r = reasons(sel)
    assert r["TOKENSPEED_MLA"] == []
    assert sel.selected == "FLASHINFER_MLA"
    assert run(mla_cfg("fp8"), B200, backend="TOKENSPEED_MLA").selected == "TOKENSPEED_MLA"


def test_b200_without_flashinfer_package():
    kernels = Kernels(flashinfer=False, flashinfer_python=False)
    sel = run(mla_cfg("auto"), B200, kernels=kernels)
    assert reasons(sel)["FLASHINFER_MLA"] == ["ModuleNotFoundError: No module named 'flashinfer'"]
    assert sel.selected == "CUTLASS_MLA"


def test_b200_flashinfer_without_cubins_still_imports():
    # has_flashinfer() False (no cubin, no nvcc) does not stop the import of
    # flashinfer_mla.py and the backend checks nothing else about it.
    sel = run(mla_cfg("auto"), B200, kernels=Kernels(flashinfer=False))
    assert reasons(sel)["FLASHINFER_MLA"] == []
    assert sel.selected == "FLASHINFER_MLA"


def test_tokenspeed_package_missing_and_non_r1_dims():
    sel = run(mla_cfg("fp8"), B200, kernels=Kernels(tokenspeed_mla=False))
    assert reasons(sel)["TOKENSPEED_MLA"] == [
        "tokenspeed_mla package is not installed. Install it with: `uv pip install tokenspeed-mla`"
    ]
    lite = deepseek_v3(mla_qk_nope_head_dim=64, mla_v_head_dim=64)
    assert reasons(run(mla_cfg("fp8"), B200, ctx=lite))["TOKENSPEED_MLA"] == [
        "tokenspeed_mla requires DeepSeek R1 MLA dimensions "
        "(qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128), got (64, 64, 64)"
    ]
    # Absent attributes read as 0.
    bare = deepseek_v3(mla_qk_nope_head_dim=None, mla_qk_rope_head_dim=None, mla_v_head_dim=None)
    assert reasons(run(mla_cfg("fp8"), B200, ctx=bare))["TOKENSPEED_MLA"][-1].endswith("got (0, 0, 0)")


def test_flashinfer_mla_qk_nope_head_dim():
    odd = deepseek_v3(mla_qk_nope_head_dim=96)
    msg = "FlashInfer MLA kernel requires qk_nope_head_dim in [64, 128, 192], but got {}"
    assert reasons(run(mla_cfg("auto"), B200, ctx=odd))["FLASHINFER_MLA"] == [msg.format(96)]
    # getattr default 1 when the model has no qk_nope_head_dim.
    bare = deepseek_v3(mla_qk_nope_head_dim=None)
    assert reasons(run(mla_cfg("auto"), B200, ctx=bare))["FLASHINFER_MLA"] == [msg.format(1)]
    # Without a model config the check is skipped.
    no_model = odd._replace(has_model=False)
    assert reasons(run(mla_cfg("auto"), B200, ctx=no_model))["FLASHINFER_MLA"] == []


def test_b200_block_size_16_warns_and_uses_triton():
    sel = run(mla_cfg("auto", block_size=16), B200)
    r = reasons(sel)
    assert r["FLASHINFER_MLA"] == [R.BLOCK_SIZE]
    assert r["CUTLASS_MLA"] == [R.BLOCK_SIZE]
    assert r["TOKENSPEED_MLA"] == [R.KV_CACHE_DTYPE, R.BLOCK_SIZE]
    assert sel.selected == "TRITON_MLA"
    # Only backends whose single reason is the block size are named.
    assert sel.warning is not None
    assert "FLASHINFER_MLA, CUTLASS_MLA." in sel.warning


def test_batch_invariance():
    cfg = mla_cfg("auto", use_batch_invariant=True)
    b200 = run(cfg, B200)
    assert reasons(b200)["FLASHINFER_MLA"] == [R.BATCH_INVARIANCE]
    assert reasons(b200)["CUTLASS_MLA"] == [R.BATCH_INVARIANCE]
    assert b200.selected == "TRITON_MLA"
    assert run(cfg, H100).selected == "FLASH_ATTN_MLA"


def test_non_causal_with_dcp():
    cfg = mla_cfg("auto", use_non_causal=True, use_dcp=True)
    r = reasons(run(cfg, B200, ctx=deepseek_v3(dcp_size=2)))
    assert r["FLASHINFER_MLA"] == []
    # The two checks are independent in validate_configuration.
    assert r["CUTLASS_MLA"] == [R.NON_CAUSAL, R.NON_CAUSAL_MLA_DCP]
    # TRITON_MLA runs non-causal blocks but its builder lacks non-causal DCP.
    assert r["TRITON_MLA"] == [R.NON_CAUSAL_MLA_DCP]


def test_pcp_is_accepted_by_every_dense_backend():
    sel = run(mla_cfg("auto", use_pcp=True), H100)
    assert sel.selected == "FLASH_ATTN_MLA"
    assert R.PCP not in sum((list(c.reasons) for c in sel.candidates), [])


def test_sm120_and_ampere_use_triton_mla():
    sm120 = run(mla_cfg("auto"), RTX_PRO_6000)
    assert sm120.priority_order == ("TRITON_MLA", "FLASHINFER_MLA_SPARSE_SM120")
    assert sm120.selected == "TRITON_MLA"
    ampere = run(mla_cfg("fp8"), A100)
    assert ampere.selected == "TRITON_MLA"
    assert reasons(ampere)["FLASHMLA"] == [
        R.COMPUTE_CAPABILITY, "FlashMLA Dense is only supported on Hopper devices.",
    ]


def test_float32_has_no_mla_backend():
    sel = run(mla_cfg("auto", dtype="float32"), H100)
    assert sel.selected is None
    assert all(R.DTYPE in c.reasons for c in sel.candidates)
    assert sel.error.startswith("No valid attention backend found for cuda with ")


def test_odd_latent_head_size_only_triton():
    # kv_lora_rank 256 + qk_rope_head_dim 32 (MiniCPM3-style): not one of
    # MLACommonBackend's 320/512/576; TRITON_MLA declares no head-size list.
    ctx = deepseek_v3(model_head_size=288, mla_kv_lora_rank=256, mla_qk_rope_head_dim=32,
                      mla_qk_nope_head_dim=64, mla_v_head_dim=64)
    sel = run(mla_cfg("auto", head_size=288), H100, ctx=ctx)
    r = reasons(sel)
    assert r["FLASH_ATTN_MLA"] == [R.HEAD_SIZE]
    assert r["FLASHMLA"] == [R.HEAD_SIZE]
    assert sel.selected == "TRITON_MLA"
