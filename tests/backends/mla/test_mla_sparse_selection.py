"""Sparse MLA (DeepSeek-V3.2: index_topk 2048; GLM NoPE: head 512) through the
selector, on Hopper, Blackwell 10.x and SM120."""

import pytest

from attn_select.backends.mla.common import canonical_sparse_mla_kv_cache_dtype
from attn_select.selector import reasons as R
from attn_select.selector.config import Kernels
from attn_select.selector.select import select

from mla_models import B200, H100, RTX_PRO_6000, deepseek_v3, deepseek_v32, glm_nope, mla_cfg


def sparse(kv="auto", **kw):
    return mla_cfg(kv, use_sparse=True, **kw)


def run(cfg, cap, ctx=None, kernels=None, backend=None):
    ctx = ctx or deepseek_v32()
    return select(cfg, cap, kernels or Kernels(), ctx, ctx.model_num_heads, backend)


def reasons(sel):
    return {c.name: list(c.reasons) for c in sel.candidates}


# --- Hopper ---------------------------------------------------------------


def test_h100_auto_picks_fa3_sparse():
    sel = run(sparse("auto"), H100)
    assert sel.priority_order == (
        "FLASH_ATTN_MLA", "FLASHMLA", "FLASHINFER_MLA", "TRITON_MLA",
        "FLASH_ATTN_MLA_SPARSE", "FLASHMLA_SPARSE", "FLASHINFER_MLA_SPARSE_SM90",
    )
    r = reasons(sel)
    assert r["FLASH_ATTN_MLA"] == [R.SPARSE]
    # FLASHMLA asks the sparse probe for a sparse query: fine on 9.0.
    assert r["FLASHMLA"] == [R.SPARSE]
    assert r["TRITON_MLA"] == [R.SPARSE]
    assert r["FLASHMLA_SPARSE"] == [] and r["FLASHINFER_MLA_SPARSE_SM90"] == []
    assert sel.selected == "FLASH_ATTN_MLA_SPARSE"


def test_h100_fp8_picks_flashmla_sparse_in_fp8_ds_mla():
    sel = run(sparse("fp8"), H100)
    assert reasons(sel)["FLASH_ATTN_MLA_SPARSE"] == [
        R.KV_CACHE_DTYPE,
        "FlashAttention MLA Sparse currently supports only FP16/BF16 KV cache",
    ]
    assert sel.selected == "FLASHMLA_SPARSE"
    assert canonical_sparse_mla_kv_cache_dtype(sel.selected, "fp8") == "fp8_ds_mla"


def test_h100_dcp_skips_fa3_sparse():
    sel = run(sparse("auto", use_dcp=True), H100, ctx=deepseek_v32(dcp_size=2))
    assert reasons(sel)["FLASH_ATTN_MLA_SPARSE"] == [
        R.DCP, "FlashAttention MLA Sparse does not support DCP for now",
    ]
    assert sel.selected == "FLASHMLA_SPARSE"


def test_h100_float16_activations_rule_out_bf16_only_kernels():
    sel = run(sparse("auto", dtype="float16"), H100)
    r = reasons(sel)
    assert r["FLASHMLA_SPARSE"] == [R.DTYPE]
    assert r["FLASHINFER_MLA_SPARSE_SM90"] == [R.DTYPE]
    assert sel.selected == "FLASH_ATTN_MLA_SPARSE"


def test_h100_nvfp4_ds_mla_is_sm100_only():
    r = reasons(run(sparse("nvfp4_ds_mla"), H100))
    assert r["FLASHMLA_SPARSE"] == [
        "FLASHMLA_SPARSE only supports the nvfp4_ds_mla kv-cache dtype on SM100 (Blackwell)"
    ]
    assert r["FLASHINFER_MLA_SPARSE_SM90"] == [R.KV_CACHE_DTYPE]


def test_h100_flashmla_sparse_does_not_probe_the_flashmla_kernel():
    r = reasons(run(sparse("fp8"), H100, kernels=Kernels(flashmla=False)))
    assert r["FLASHMLA_SPARSE"] == []
    assert r["FLASHMLA"][-1].startswith("vllm._flashmla_C is not available")


def test_h100_glm_nope_prefers_flashinfer_sm90():
    sel = run(sparse("auto", head_size=512), H100, ctx=glm_nope())
    assert sel.priority_order[4:] == (
        "FLASHINFER_MLA_SPARSE_SM90", "FLASH_ATTN_MLA_SPARSE", "FLASHMLA_SPARSE",
    )
    assert sel.selected == "FLASHINFER_MLA_SPARSE_SM90"
    r = reasons(sel)
    assert r["FLASHMLA_SPARSE"] == []


def test_flashmla_sparse_head_512_rules():
    # A rope-carrying model with a 512 head on Hopper.
    rope_512 = deepseek_v32(mla_kv_lora_rank=448)
    r = reasons(run(sparse("auto", head_size=512), H100, ctx=rope_512))
    assert r["FLASHMLA_SPARSE"] == [
        "FLASHMLA_SPARSE supports head_size 512 only for rope-free (NoPE) models"
    ]
    # Hopper kv rules for the NoPE path.
    r = reasons(run(sparse("fp8", head_size=512), H100, ctx=glm_nope()))
    assert r["FLASHMLA_SPARSE"] == [
        "FLASHMLA_SPARSE supports head_size 512 only with bf16 or fp8_ds_mla kv-cache on "
        "SM90 (NoPE), got kv_cache_dtype=fp8, capability=DeviceCapability(major=9, minor=0)"
    ]
    # Off Hopper, whatever the dtype.
    r = reasons(run(sparse("auto", head_size=512), B200, ctx=glm_nope()))
    assert r["FLASHMLA_SPARSE"] == [
        "FLASHMLA_SPARSE supports head_size 512 only with bf16 or fp8_ds_mla kv-cache on "
        "SM90 (NoPE), got kv_cache_dtype=auto, capability=DeviceCapability(major=10, minor=0)"
    ]


def test_sm90_flashinfer_dims():
    odd = deepseek_v32(mla_qk_rope_head_dim=32)
    r = reasons(run(sparse("auto", head_size=544), H100, ctx=odd))
    assert r["FLASHINFER_MLA_SPARSE_SM90"] == [
        R.HEAD_SIZE, "FLASHINFER_MLA_SPARSE_SM90 requires qk_rope_head_dim in (0, 64)",
    ]
    rank = deepseek_v32(mla_kv_lora_rank=256)
    r = reasons(run(sparse("auto"), H100, ctx=rank))
    assert r["FLASHINFER_MLA_SPARSE_SM90"] == ["FLASHINFER_MLA_SPARSE_SM90 requires kv_lora_rank=512"]
    no_fi = Kernels(flashinfer=False)
    r = reasons(run(sparse("auto"), H100, kernels=no_fi))
    assert r["FLASHINFER_MLA_SPARSE_SM90"] == [
        "FLASHINFER_MLA_SPARSE_SM90 requires FlashInfer with SM90 MLA support "
        "(ckv_scale_arr in BatchMLAPagedAttentionWrapper.run, FlashInfer >= 0.6.18)"
    ]


# --- Blackwell 10.x -------------------------------------------------------


def test_b200_tp8_bf16_kv_picks_fa4():
    sel = run(sparse("auto"), B200)  # 16 heads per rank
    assert sel.priority_order[-3:] == (
        "FLASH_ATTN_MLA_SPARSE_FA4", "FLASHINFER_MLA_SPARSE", "FLASHMLA_SPARSE",
    )
    r = reasons(sel)
    for dense in ("FLASHINFER_MLA", "CUTLASS_MLA", "TRITON_MLA"):
        assert r[dense] == [R.SPARSE]
    assert r["TOKENSPEED_MLA"] == [R.KV_CACHE_DTYPE, R.SPARSE]
    assert r["FLASHINFER_MLA_SPARSE"] == []
    assert sel.selected == "FLASH_ATTN_MLA_SPARSE_FA4"


def test_b200_tp1_bf16_kv_picks_flashmla_sparse():
    sel = run(sparse("auto"), B200, ctx=deepseek_v32(tp=1))
    assert sel.priority_order[-2:] == ("FLASHMLA_SPARSE", "FLASHINFER_MLA_SPARSE")
    assert sel.selected == "FLASHMLA_SPARSE"


def test_b200_fp8_picks_flashinfer_sparse_in_plain_fp8():
    sel = run(sparse("fp8"), B200)
    assert sel.priority_order[-2:] == ("FLASHINFER_MLA_SPARSE", "FLASHMLA_SPARSE")
    assert sel.selected == "FLASHINFER_MLA_SPARSE"
    assert canonical_sparse_mla_kv_cache_dtype(sel.selected, "fp8") == "fp8"


def test_b200_fp8_ds_mla_goes_to_flashmla_sparse():
    sel = run(sparse("fp8_ds_mla"), B200)
    assert reasons(sel)["FLASHINFER_MLA_SPARSE"] == [
        R.KV_CACHE_DTYPE,
        "FLASHINFER_MLA_SPARSE SM10 does not support fp8_ds_mla kv-cache dtype",
    ]
    assert sel.selected == "FLASHMLA_SPARSE"


def test_b200_nvfp4_ds_mla_on_flashmla_sparse():
    sel = run(sparse("nvfp4_ds_mla"), B200)
    assert reasons(sel)["FLASHMLA_SPARSE"] == []
    assert sel.selected == "FLASHMLA_SPARSE"
    assert canonical_sparse_mla_kv_cache_dtype("FLASHMLA_SPARSE", "nvfp4_ds_mla") == "nvfp4_ds_mla"


def test_fa4_model_checks():
    msgs = {
        "topk": "FA4 sparse MLA requires index_topk % 128 == 0, got {}",
        "dims": "FA4 sparse MLA requires (kv_lora_rank, qk_rope_head_dim) == (512, 64), got {}",
    }
    r = reasons(run(sparse("auto"), B200, ctx=deepseek_v32(mla_index_topk=2000)))
    assert r["FLASH_ATTN_MLA_SPARSE_FA4"] == [msgs["topk"].format(2000)]
    r = reasons(run(sparse("auto"), B200, ctx=deepseek_v3()))  # no index_topk
    assert r["FLASH_ATTN_MLA_SPARSE_FA4"] == [msgs["topk"].format(None)]
    r = reasons(run(sparse("auto"), B200, ctx=deepseek_v32(mla_qk_rope_head_dim=None)))
    assert r["FLASH_ATTN_MLA_SPARSE_FA4"] == [msgs["dims"].format("(512, None)")]


def test_fa4_gathered_head_counts():
    # 128 heads per rank put FA4 off the priority list; ask for it explicitly.
    fa4 = "FLASH_ATTN_MLA_SPARSE_FA4"
    sel = run(sparse("auto", use_dcp=True), B200, ctx=deepseek_v32(tp=1, dcp_size=2), backend=fa4)
    assert reasons(sel)[fa4] == [
        "FA4 sparse MLA requires (8, 16, 32, 64) gathered query heads, "
        "got num_heads=128 * dcp_size=2"
    ]
    assert sel.error.startswith(f"Selected backend AttentionBackendEnum.{fa4} is not valid")
    # 128 gathered heads are fine without DCP.
    sel = run(sparse("auto"), B200, ctx=deepseek_v32(tp=1), backend=fa4)
    assert sel.selected == fa4
    # 16 heads per rank gathered over DCP 2: 32.
    sel = run(sparse("auto", use_dcp=True), B200, ctx=deepseek_v32(dcp_size=2))
    assert reasons(sel)[fa4] == []
    assert sel.selected == fa4
    # 24 heads per rank are not a kernel shape.
    r = reasons(run(sparse("auto"), B200, ctx=deepseek_v32(model_num_heads=24), backend=fa4))
    assert r[fa4] == [
        "FA4 sparse MLA requires (8, 16, 32, 64, 128) gathered query heads, "
        "got num_heads=24 * dcp_size=1"
    ]


def test_fa4_installed_pieces():
    r = reasons(run(sparse("auto"), B200, kernels=Kernels(flashinfer=False)))
    assert r["FLASH_ATTN_MLA_SPARSE_FA4"] == [
        "FA4 sparse MLA runs its prefill batches on FlashInfer's kernel"
    ]
    sel = run(sparse("auto"), B200, kernels=Kernels(fa4=False))
    assert reasons(sel)["FLASH_ATTN_MLA_SPARSE_FA4"] == [
        "FA4 unavailable: FA4 is unavailable due to: vllm.vllm_flash_attn.cute.interface not found"
    ]
    assert sel.selected == "FLASHINFER_MLA_SPARSE"


def test_fa4_ends_with_the_trtllm_checks_under_its_own_name():
    ctx = deepseek_v32(pcp_size=2, dcp_size=2, tp=16)  # 8 heads * dcp 2 = 16
    sel = run(sparse("auto", use_pcp=True, use_dcp=True), B200, ctx=ctx)
    r = reasons(sel)
    tail = (
        " does not support combined PCP+DCP; use FLASHMLA_SPARSE, which gathers each "
        "DCP KV shard before running the rank-local PCP prefill queries"
    )
    assert r["FLASH_ATTN_MLA_SPARSE_FA4"] == ["FLASH_ATTN_MLA_SPARSE_FA4" + tail]
    assert r["FLASHINFER_MLA_SPARSE"] == ["FLASHINFER_MLA_SPARSE" + tail]
    assert sel.selected == "FLASHMLA_SPARSE"


def test_flashinfer_sparse_model_dims():
    r = reasons(run(sparse("fp8"), B200, ctx=deepseek_v32(mla_qk_nope_head_dim=64)))
    assert r["FLASHINFER_MLA_SPARSE"] == [
        "FlashInfer MLA Sparse kernel requires qk_nope_head_dim in [128, 192], but got 64"
    ]
    r = reasons(run(sparse("fp8"), B200, ctx=deepseek_v3()))
    assert r["FLASHINFER_MLA_SPARSE"] == [
        "FlashInfer MLA Sparse requires model with index_topk config"
    ]
    # Native no-rope: only (256, 512) ships.
    r = reasons(run(sparse("fp8", head_size=512), B200, ctx=glm_nope()))
    assert r["FLASHINFER_MLA_SPARSE"] == []
    r = reasons(run(sparse("fp8", head_size=512), B200, ctx=glm_nope(mla_qk_nope_head_dim=192)))
    assert r["FLASHINFER_MLA_SPARSE"] == [
        "FlashInfer native no-rope MLA requires qk_nope_head_dim=256 and kv_lora_rank=512, "
        "but got qk_nope_head_dim=192, kv_lora_rank=512"
    ]


# --- SM120 ----------------------------------------------------------------


def test_sm120_sparse_picks_flashinfer_sm120_in_fp8_ds_mla():
    sel = run(sparse("auto"), RTX_PRO_6000)
    assert reasons(sel)["TRITON_MLA"] == [R.SPARSE]
    assert sel.selected == "FLASHINFER_MLA_SPARSE_SM120"
    assert canonical_sparse_mla_kv_cache_dtype(sel.selected, "auto") == "fp8_ds_mla"


def test_sm120_repeats_dtype_and_kv_reasons():
    r = reasons(run(sparse("auto", dtype="float16"), RTX_PRO_6000))
    assert r["FLASHINFER_MLA_SPARSE_SM120"] == [R.DTYPE, R.DTYPE]
    r = reasons(run(sparse("bfloat16"), RTX_PRO_6000))
    assert r["FLASHINFER_MLA_SPARSE_SM120"] == [R.KV_CACHE_DTYPE, R.KV_CACHE_DTYPE]


def test_sm120_model_and_flashinfer_checks():
    r = reasons(run(sparse("auto"), RTX_PRO_6000, ctx=deepseek_v32(mla_index_topk=1024)))
    assert r["FLASHINFER_MLA_SPARSE_SM120"] == [
        "FLASHINFER_MLA_SPARSE_SM120 requires index_topk=2048; got 1024"
    ]
    r = reasons(run(sparse("auto"), RTX_PRO_6000, ctx=deepseek_v3()))
    assert r["FLASHINFER_MLA_SPARSE_SM120"] == [
        "FLASHINFER_MLA_SPARSE_SM120 requires a model with index_topk config"
    ]
    sel = run(sparse("auto"), RTX_PRO_6000, kernels=Kernels(flashinfer=False))
    assert reasons(sel)["FLASHINFER_MLA_SPARSE_SM120"] == [
        "FLASHINFER_MLA_SPARSE_SM120 requires FlashInfer's sparse MLA decode API"
    ]
    assert sel.selected is None
    assert "FLASHINFER_MLA_SPARSE_SM120: [FLASHINFER_MLA_SPARSE_SM120 requires" in sel.error


def test_sm120_has_no_dcp():
    r = reasons(run(sparse("auto", use_dcp=True), RTX_PRO_6000, ctx=deepseek_v32(dcp_size=2)))
    assert r["FLASHINFER_MLA_SPARSE_SM120"] == [R.DCP]


# --- Without any FlashAttention build -------------------------------------


@pytest.mark.parametrize("cap", [H100, B200])
def test_no_fa_build_fails_every_sparse_module(cap):
    sel = run(sparse("auto"), cap, kernels=Kernels(fa2=False, fa3=False))
    r = reasons(sel)
    sparse_names = [n for n in sel.priority_order if "SPARSE" in n]
    assert sparse_names
    for name in sparse_names:
        assert r[name] == [
            "ImportError: vllm.vllm_flash_attn requires the CUDA flash attention "
            "extensions (_vllm_fa2_C or _vllm_fa3_C). On ROCm, use upstream flash_attn."
        ]
    assert sel.selected is None
