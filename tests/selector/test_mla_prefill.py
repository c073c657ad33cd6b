"""vLLM 0.33.0's MLA prefill backend selection: each backend's reasons in
vLLM's words and order, the per-GPU priorities (Blackwell's MLA-dims special
case), the choice, explicit choices, and what an MLA layer does with it."""

import pytest

from attn_select.backends.mla.prefill import registry
from attn_select.backends.registry import BACKENDS
from attn_select.backends.spec import resolve
from attn_select.selector.config import Capability, EngineContext, Kernels, Query, SelectorConfig
from attn_select.selector.errors import UserError
from attn_select.selector.mla_prefill_config import (
    MLADimensions,
    MLAPrefillSelectorConfig,
    PrefillQuery,
    mla_prefill_selector_config,
)
from attn_select.selector.mla_prefill_select import layer_mla_prefill, select_mla_prefill
from attn_select.selector.mla_prefill_validate import check
from attn_select.selector.priorities import mla_prefill_priorities

H100, B200, B300, A100, T4, RTX5090 = (Capability(9, 0), Capability(10, 0), Capability(10, 3),
                                       Capability(8, 0), Capability(7, 5), Capability(12, 0))
R1 = MLADimensions(128, 64, 128)
QK192 = MLADimensions(192, 64, 256)
BF16_R1 = MLAPrefillSelectorConfig("bfloat16", R1)
R1_TEXT = "(qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128)"
FULL = Kernels()


def reasons(name, cfg=BF16_R1, cap=H100, kernels=FULL, batch_invariant=False):
    return check(registry.PREFILL_BACKENDS[name], PrefillQuery(cfg, cap, kernels, batch_invariant))


# --- priorities ---------------------------------------------------------------


@pytest.mark.parametrize("cap", [H100, A100, T4, Capability(8, 9), RTX5090, Capability(12, 1)])
def test_flash_attn_alone_off_blackwell(cap):
    assert mla_prefill_priorities(cap, R1) == ("FLASH_ATTN",)
    assert mla_prefill_priorities(cap, QK192) == ("FLASH_ATTN",)


@pytest.mark.parametrize("cap", [B200, B300])
def test_blackwell_prefers_flash_attn_for_r1_dims(cap):
    assert mla_prefill_priorities(cap, R1) == ("FLASH_ATTN", "TRTLLM_RAGGED", "FLASHINFER", "TOKENSPEED_MLA")


@pytest.mark.parametrize("cap", [B200, B300])
def test_blackwell_puts_trtllm_ragged_first_for_qk192_v256(cap):
    assert mla_prefill_priorities(cap, QK192) == ("TRTLLM_RAGGED", "FLASH_ATTN", "FLASHINFER", "TOKENSPEED_MLA")
    # only exactly those dims: qk 192 + 64 with another V keeps FLASH_ATTN first
    assert mla_prefill_priorities(cap, MLADimensions(192, 64, 128))[0] == "FLASH_ATTN"


# --- reasons -----------------------------------------------------------------


def test_blackwell_only_backends_name_the_capability_on_hopper():
    for name in ("FLASHINFER", "TRTLLM_RAGGED", "TOKENSPEED_MLA"):
        assert reasons(name) == ["compute capability 9.0 not supported"]
        assert reasons(name, cap=B200) == []


def test_reasons_come_in_vllms_order_with_its_texts():
    cfg = MLAPrefillSelectorConfig("float32", MLADimensions(64, 32, 64))
    assert reasons("TOKENSPEED_MLA", cfg, kernels=FULL._replace(tokenspeed_mla=False)) == [
        "compute capability 9.0 not supported",
        "dtype torch.float32 not supported",
        "tokenspeed_mla package is not installed. Install it with: `uv pip install tokenspeed-mla`",
        "Model does not have supported MLA dimensions (got (qk_nope_head_dim=64, qk_rope_head_dim=32, "
        f"v_head_dim=64); supported: {R1_TEXT})",
    ]


def test_dims_reason_lists_the_declared_dims_only():
    cfg = MLAPrefillSelectorConfig("bfloat16", MLADimensions(0, 0, 0))
    got = "(qk_nope_head_dim=0, qk_rope_head_dim=0, v_head_dim=0)"
    # TRTLLM_RAGGED declares supported_mla_dimensions: the reason lists them
    assert reasons("TRTLLM_RAGGED", cfg, cap=B200) == [
        f"Model does not have supported MLA dimensions (got {got}; supported: {R1_TEXT}, "
        "(qk_nope_head_dim=192, qk_rope_head_dim=64, v_head_dim=256))"]
    # FLASH_ATTN overrides the predicate instead: no list
    assert reasons("FLASH_ATTN", cfg) == [f"Model does not have supported MLA dimensions (got {got})"]


@pytest.mark.parametrize("dims", [(128, 64, 128), (192, 64, 256), (64, 64, 128), (256, 0, 256)])
def test_flash_attn_serves_its_four_layouts_anywhere(dims):
    cfg = MLAPrefillSelectorConfig("float16", MLADimensions(*dims))
    assert reasons("FLASH_ATTN", cfg, cap=T4) == []


def test_flashinfer_package_decides_flashinfer_and_trtllm_ragged():
    no_cubins = FULL._replace(flashinfer=False)  # the package imports without its cubins
    assert reasons("FLASHINFER", cap=B200, kernels=no_cubins) == []
    no_pkg = FULL._replace(flashinfer=False, flashinfer_python=False)
    for name in ("FLASHINFER", "TRTLLM_RAGGED"):
        assert reasons(name, cap=B200, kernels=no_pkg) == ["required dependencies not available"]


def test_flash_attn_without_fa2_and_fa3_is_an_import_error():
    assert reasons("FLASH_ATTN", kernels=FULL._replace(fa2=False, fa3=False)) == ["ImportError"]
    assert reasons("FLASH_ATTN", kernels=FULL._replace(fa3=False)) == []


def test_rocm_and_cpu_backends_on_cuda():
    assert reasons("ROCM_AITER_FA") == ["compute capability 9.0 not supported",
                                        "required dependencies not available"]
    assert reasons("ROCM_AITER_FA", batch_invariant=True)[-1] == "batch invariance not supported"
    assert reasons("FLASH_ATTN", batch_invariant=True) == []
    assert reasons("CPU") == []  # declares nothing: valid on a GPU when named
    assert reasons("CPU", MLAPrefillSelectorConfig("float32", R1)) == ["dtype torch.float32 not supported"]
    assert reasons("ZEN_CPU") == ["required dependencies not available"]


# --- the selector config ------------------------------------------------------


def test_selector_config_reads_the_model_dims_with_zero_for_absent_ones():
    ctx = EngineContext(has_model=True, mla_qk_nope_head_dim=128, mla_qk_rope_head_dim=None, mla_v_head_dim=128)
    assert mla_prefill_selector_config(ctx, "bfloat16") == MLAPrefillSelectorConfig("bfloat16", MLADimensions(128, 0, 128))
    # no model_config: torch's default dtype and no dims
    assert mla_prefill_selector_config(EngineContext(), "bfloat16") == MLAPrefillSelectorConfig("float32")
    assert BF16_R1.vllm_repr() == f"MLAPrefillSelectorConfig(dtype=torch.bfloat16, mla_dimensions={R1_TEXT})"


# --- the choice ----------------------------------------------------------------


def test_hopper_and_blackwell_pick_flash_attn_for_deepseek_dims():
    for cap in (H100, A100, B200):
        sel = select_mla_prefill(BF16_R1, cap, FULL)
        assert sel.selected == "FLASH_ATTN" and sel.error is None


def test_blackwell_qk192_v256_picks_trtllm_ragged_then_falls_back():
    cfg = MLAPrefillSelectorConfig("bfloat16", QK192)
    assert select_mla_prefill(cfg, B200, FULL).selected == "TRTLLM_RAGGED"
    no_pkg = FULL._replace(flashinfer=False, flashinfer_python=False)
    sel = select_mla_prefill(cfg, B200, no_pkg)
    assert sel.selected == "FLASH_ATTN"
    assert [c.name for c in sel.candidates if not c.valid] == ["TRTLLM_RAGGED", "FLASHINFER", "TOKENSPEED_MLA"]


def test_blackwell_without_flash_attn_takes_the_next_valid():
    sel = select_mla_prefill(BF16_R1, B200, FULL._replace(fa2=False, fa3=False))
    assert sel.selected == "TRTLLM_RAGGED"
    assert sel.candidates[0].reasons == ("ImportError",)


def test_nothing_valid_is_vllms_value_error():
    cfg = MLAPrefillSelectorConfig("float32", R1)
    sel = select_mla_prefill(cfg, H100, FULL)
    assert sel.selected is None
    assert sel.error == (
        f"No valid MLA prefill backend found with MLAPrefillSelectorConfig(dtype=torch.float32, "
        f"mla_dimensions={R1_TEXT}). Reasons: {{FLASH_ATTN: [dtype torch.float32 not supported]}}."
    )


# --- explicit choices --------------------------------------------------------------


def test_explicit_valid_backend_is_used_even_after_a_better_one():
    sel = select_mla_prefill(BF16_R1, B200, FULL, backend="tokenspeed_mla")
    assert sel.selected == "TOKENSPEED_MLA" and sel.backend == "TOKENSPEED_MLA"
    assert select_mla_prefill(BF16_R1, H100, FULL, backend="CPU").selected == "CPU"


def test_explicit_invalid_backend_raises_vllms_text_and_never_falls_back():
    sel = select_mla_prefill(BF16_R1, H100, FULL, backend="FLASHINFER")
    assert sel.selected is None
    assert sel.error == ("Selected MLA prefill backend FLASHINFER is not valid for this configuration. "
                         "Reason: ['compute capability 9.0 not supported']")
    # not in the Hopper list: reported after it, without a priority
    assert [(c.name, c.priority) for c in sel.candidates] == [("FLASH_ATTN", 0), ("FLASHINFER", -1)]
    sel = select_mla_prefill(BF16_R1, H100, FULL._replace(fa2=False, fa3=False), backend="FLASH_ATTN")
    assert sel.error.endswith("Reason: ['ImportError']")


def test_explicit_custom_is_the_unregistered_error():
    sel = select_mla_prefill(BF16_R1, H100, FULL, backend="CUSTOM")
    assert sel.selected is None
    assert sel.error == ("MLA prefill backend CUSTOM must be registered before use. Use register_mla_prefill_backend"
                         "(MLAPrefillBackendEnum.CUSTOM, 'your.module.YourClass')")


def test_unknown_name_suggests_the_closest():
    with pytest.raises(UserError, match="did you mean TRTLLM_RAGGED"):
        registry.get("trtllm_raged")
    with pytest.raises(UserError, match="unknown MLA prefill backend 'auto'"):
        registry.get("auto")  # vLLM's validator has no "auto" for this field


# --- the MLA layer ---------------------------------------------------------------


def layer(cfg=BF16_R1, cap=H100, backend=None, attention="FLASHMLA_SPARSE", sparse=True, dense=True):
    return layer_mla_prefill(cfg, cap, FULL, False, backend, attention, sparse, dense)


def test_sparse_layer_without_dense_prefill_never_asks():
    sel = layer(backend="FLASHINFER", attention="FLASHINFER_MLA_SPARSE_SM120", dense=False)
    assert sel.candidates == () and sel.selected is None and sel.error is None
    assert sel.skipped == "FLASHINFER_MLA_SPARSE_SM120: no dense-MHA prefill path"
    assert sel.warning.startswith("Sparse MLA layer has no dense-MHA prefill path")


def test_sparse_layer_goes_on_without_a_backend_unless_one_was_named():
    bad = MLAPrefillSelectorConfig("bfloat16", MLADimensions(128, 64, 256))
    sel = layer(bad)
    assert sel.selected is None and sel.error is None
    assert sel.warning.startswith("No MLA prefill backend supports this model")
    assert layer(bad, backend="FLASH_ATTN").error.startswith("Selected MLA prefill backend FLASH_ATTN")
    assert layer(bad, sparse=False, attention="FLASH_ATTN_MLA").error.startswith("No valid MLA prefill backend")


def test_which_attention_backends_have_no_dense_prefill():
    def dense(name, kv, rope):
        cfg = SelectorConfig(576, "bfloat16", kv, None, use_mla=True, use_sparse=True)
        ctx = EngineContext(has_model=True, mla_qk_rope_head_dim=rope)
        return resolve(BACKENDS[name].dense_mha_prefill, Query(cfg, H100, FULL, ctx))

    assert dense("FLASHINFER_MLA_SPARSE_SM120", "auto", 64) is False
    assert dense("FLASHMLA_SPARSE", "fp8", 0) is False  # rewritten to fp8_ds_mla, NoPE
    assert dense("FLASHMLA_SPARSE", "fp8_ds_mla", 64) is True
    assert dense("FLASHMLA_SPARSE", "auto", 0) is True
    assert dense("FLASH_ATTN_MLA_SPARSE", "fp8_ds_mla", 0) is True


# --- explain -----------------------------------------------------------------------


def explain(model, device, **ov):
    from attn_select.selector.explain import Overrides, explain as run
    from attn_select.selector.profiles import load_device, load_model

    dev = load_device(device)
    return run(load_model(model, tp=1, dtype="auto", capability=dev.capability), dev, Kernels(), Overrides(**ov))


@pytest.mark.parametrize("device, order", [("h100", ("FLASH_ATTN",)),
                                           ("b200", ("FLASH_ATTN", "TRTLLM_RAGGED", "FLASHINFER", "TOKENSPEED_MLA"))])
def test_explain_gives_every_mla_group_its_prefill_selection(device, order):
    r = explain("deepseek-v3", device)
    (g,) = r.groups
    assert g.mla_prefill.cfg == BF16_R1
    assert g.mla_prefill.priority_order == order and g.mla_prefill.selected == "FLASH_ATTN"
    assert r.ok


def test_explain_invalid_explicit_prefill_backend_fails_the_report():
    r = explain("deepseek-v3", "h100", mla_prefill_backend="trtllm_ragged")
    assert not r.ok and r.groups[0].selection.selected == "FLASH_ATTN_MLA"
    assert r.groups[0].mla_prefill.error.startswith("Selected MLA prefill backend TRTLLM_RAGGED")


def test_explain_non_mla_groups_have_none():
    assert all(g.mla_prefill is None for g in explain("gemma-3-27b", "h100").groups)


def test_explain_sparse_sm120_layer_skips_prefill():
    (g,) = explain("deepseek-v3.2", "rtx5090").groups
    assert g.selection.selected == "FLASHINFER_MLA_SPARSE_SM120"
    assert g.mla_prefill.skipped and g.mla_prefill.error is None
