"""engine_config: vLLM 0.33.0's engine-config steps that change selection
inputs. Expectations come from vllm/engine/arg_utils.py create_engine_config,
vllm/utils/torch_utils.py resolve_kv_cache_dtype_string and the
MODELS_CONFIG_MAP hooks in vllm/model_executor/models/config.py."""

from __future__ import annotations

import pytest

from attn_select.selector.config import Capability, Kernels
from attn_select.selector.device import Device
from attn_select.selector.engine_config import engine_config
from attn_select.selector.errors import UserError
from attn_select.selector.explain import Overrides, explain
from attn_select.selector.model_facts import AttentionGroup, LayerAttention, ModelFacts, OtherLayers

H100, B200 = Capability(9, 0), Capability(10, 0)
ALL = Kernels()
NO_FA4 = ALL._replace(fa4=False)


def llama(arch: str = "LlamaForCausalLM", layers: int = 8, **kw) -> ModelFacts:
    attn = LayerAttention(head_size=128, head_size_v=128, num_heads=32, num_kv_heads=8)
    return ModelFacts(name="m", architecture=arch, model_type="llama", dtype="bfloat16", num_layers=layers,
                      tp=1, groups=(AttentionGroup("full", tuple(range(layers)), attn),),
                      head_size=128, num_heads=32, num_kv_heads=8, **kw)


def mla(arch: str, index_topk: int | None = 2048) -> ModelFacts:
    attn = LayerAttention(head_size=576, head_size_v=512, num_heads=128, num_kv_heads=1, use_mla=True,
                          use_sparse=True, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128,
                          kv_lora_rank=512)
    return ModelFacts(name="m", architecture=arch, model_type="deepseek_v32", dtype="bfloat16", num_layers=4,
                      tp=1, groups=(AttentionGroup("sparse_mla", (0, 1, 2, 3), attn),), head_size=576,
                      num_heads=128, num_kv_heads=1, index_topk=index_topk)


def gemma4(arch: str = "Gemma4ForCausalLM", dims: tuple[int, int] = (256, 512)) -> ModelFacts:
    sliding = LayerAttention(head_size=dims[0], head_size_v=dims[0], num_heads=8, num_kv_heads=4,
                             sliding_window=1024)
    full = LayerAttention(head_size=dims[1], head_size_v=dims[1], num_heads=8, num_kv_heads=4)
    return ModelFacts(name="g", architecture=arch, model_type="gemma4_text", dtype="bfloat16", num_layers=6,
                      tp=1, groups=(AttentionGroup("sliding", (0, 1, 2, 4), sliding),
                                    AttentionGroup("full", (3, 5), full)),
                      head_size=dims[0], num_heads=8, num_kv_heads=4)


def fields_changed(ec) -> list[tuple[str, object, object]]:
    return [(s.field, s.old, s.new) for s in ec.trail if not s.is_note]


# --- create_engine_config ------------------------------------------------------


def test_plain_llama_changes_nothing():
    ec = engine_config(llama(), Overrides(), H100, ALL)
    assert ec.trail == () and ec.cache_dtype == "auto" and ec.backend is None
    assert ec.flash_attn_version is None and ec.use_non_causal is False
    assert ec.block_size is None and ec.user_specified_block_size is False


def test_given_block_size_is_user_specified():
    ec = engine_config(llama(), Overrides(block_size=32), H100, ALL)
    assert (ec.block_size, ec.user_specified_block_size) == (32, True)


def test_no_model_runs_no_step():
    ec = engine_config(None, Overrides(kv_cache_dtype="turboquant_k8v4"), H100, ALL)
    assert ec.trail == () and ec.flash_attn_version is None


@pytest.mark.parametrize("tp,dcp,pcp,refused", [
    (1, 2, False, True), (4, 3, False, True), (2, 4, False, True),
    (1, 1, False, False), (16, 2, False, False), (16, 1, False, False),
])
def test_dcp_must_divide_tp_as_parallel_config_requires(tp, dcp, pcp, refused):
    ec = engine_config(llama(), Overrides(tp=tp, dcp_size=dcp, use_pcp=pcp), H100, ALL)
    if refused:
        assert ec.error == (f"ParallelConfig._validate_parallel_config: tp_size={tp} must be divisible "
                            f"by dcp_size={dcp}.")
    else:
        assert ec.error is None


@pytest.mark.parametrize("tp,pcp,dcp,refused", [
    (2, 2, 1, False), (2, 2, 2, False), (2, 2, 4, False), (2, 2, 3, True), (2, 2, 8, True),
    (1, 3, 3, False), (1, 3, 2, True), (4, 2, 4, True),
    (1, 1, 2, True),  # -pcp 1 is no PCP: DCP must divide TP
])
def test_with_pcp_dcp_is_off_the_pcp_axis_or_all_ranks(tp, pcp, dcp, refused):
    ec = engine_config(mla("DeepseekV3ForCausalLM"), Overrides(tp=tp, pcp_size=pcp, dcp_size=dcp), H100, ALL)
    if not refused:
        assert ec.error is None
    elif pcp == 1:
        assert ec.error.endswith(f"tp_size={tp} must be divisible by dcp_size={dcp}.")
    else:
        assert ec.error == (
            "ParallelConfig._validate_parallel_config: When PCP is enabled, DCP must be disabled, span the PCP "
            f"axis, or span the full TP x PCP axis. Got TP={tp}, PCP={pcp}, DCP={dcp}; valid DCP sizes are "
            f"{sorted({1, pcp, tp * pcp})}.")


@pytest.mark.parametrize("tp,dcp,pcp,words", [
    (8, 2, None, "requires `--tensor-parallel-size` (8) to be greater than the model's total number of KV heads (8)"),
    (2, 2, 2, "requires `--tensor-parallel-size` (2) to be greater"),  # TP alone counts, not TP x PCP
    (16, 4, None, "`--decode-context-parallel-size` (4) exceeds the maximum supported value (2)"),
    (16, 2, None, None),
    (64, 8, None, "number of query heads per KV head (4) must be divisible by `--decode-context-parallel-size` (8)"),
])
def test_gqa_dcp_needs_more_tp_ranks_than_kv_heads(tp, dcp, pcp, words):
    ec = engine_config(llama(), Overrides(tp=tp, dcp_size=dcp, pcp_size=pcp), H100, ALL)
    if words is None:
        assert ec.error is None
    else:
        assert ec.error.startswith("ModelConfig.verify_with_parallel_config: ") and words in ec.error


def test_the_raw_use_pcp_toggle_gives_no_pcp_size_to_check():
    assert engine_config(mla("DeepseekV3ForCausalLM"), Overrides(tp=1, dcp_size=2, use_pcp=True), H100, ALL).error is None


def test_mla_is_not_held_to_the_gqa_dcp_rule():
    assert engine_config(mla("DeepseekV3ForCausalLM"), Overrides(tp=2, dcp_size=2), H100, ALL).error is None


def test_dcp_not_dividing_tp_is_refused_by_explain():
    with pytest.raises(UserError, match="tp_size=1 must be divisible by dcp_size=2"):
        explain(llama(), Device(name="gpu", capability=H100, source="test"), ALL, Overrides(dcp_size=2))


def test_modelopt_scheme_resolves_auto_but_not_an_explicit_dtype():
    m = llama(kv_cache_scheme="fp8_e4m3")
    ec = engine_config(m, Overrides(), H100, ALL)
    assert ec.cache_dtype == "fp8_e4m3"
    assert ec.trail[0].hook == "resolve_kv_cache_dtype_string"
    assert engine_config(m, Overrides(kv_cache_dtype="bfloat16"), H100, ALL).cache_dtype == "bfloat16"


def test_compressed_tensors_scheme_applies_after_the_hooks():
    # Attention.__init__ turns "auto" into fp8 once the hooks have run
    ec = engine_config(llama(kv_cache_scheme="fp8"), Overrides(), H100, ALL)
    assert ec.cache_dtype == "fp8" and ec.trail[-1].hook.startswith("Attention.__init__")
    assert engine_config(llama(kv_cache_scheme="fp8"), Overrides(kv_cache_dtype="bfloat16"), H100,
                         ALL).cache_dtype == "bfloat16"


def test_compressed_tensors_scheme_leaves_an_all_mla_model_auto():
    # MLAAttention reads cache_config.cache_dtype and never the quant
    # config's kv_cache_scheme (only Attention.__init__ does): a DeepSeek or
    # GLM-DSA checkpoint with one keeps "auto" unless a hook rewrote it
    # (GlmMoeDsa's does on SM10x)
    m = mla("GlmMoeDsaForCausalLM")._replace(kv_cache_scheme="fp8")
    assert engine_config(m, Overrides(), B200, ALL).cache_dtype == "fp8_e4m3"
    ec = engine_config(m, Overrides(), H100, ALL)
    assert ec.cache_dtype == "auto" and not any(s.hook.startswith("Attention.__init__") for s in ec.trail)


@pytest.mark.parametrize("dtype", ["turboquant_k8v4", "turboquant_3bit_nc", "ultraquant_4bit"])
@pytest.mark.parametrize("given,expected", [(None, 2), (3, 2), (4, 2), (2, 2)])
def test_packed_kv_forces_fa2(dtype, given, expected):
    ec = engine_config(llama(), Overrides(kv_cache_dtype=dtype, flash_attn_version=given), H100, ALL)
    assert ec.flash_attn_version == expected
    steps = [s for s in ec.trail if s.field == "attention_config.flash_attn_version"]
    assert len(steps) == (0 if given == 2 else 1)
    if steps:
        assert ("UltraQuant" if dtype.startswith("ultra") else "TurboQuant") in steps[0].why


def test_turboquant_boundary_layers():
    ec = engine_config(llama(layers=8), Overrides(kv_cache_dtype="turboquant_k8v4"), H100, ALL)
    assert ec.kv_skip_layers == (0, 1, 6, 7)
    assert engine_config(llama(layers=3), Overrides(kv_cache_dtype="turboquant_k8v4"), H100, ALL).kv_skip_layers == (0, 2)
    hybrid = llama()._replace(architecture="JambaForCausalLM", other_layers=(OtherLayers("mamba", (8, 9)),))
    assert engine_config(hybrid, Overrides(kv_cache_dtype="turboquant_k8v4"), H100, ALL).kv_skip_layers == ()
    # is_hybrid starts from the model class (IsHybrid): other layers on a class without it change nothing
    not_hybrid = llama(layers=8)._replace(other_layers=(OtherLayers("mamba", (8, 9)),))
    assert engine_config(not_hybrid, Overrides(kv_cache_dtype="turboquant_k8v4"), H100, ALL).kv_skip_layers == (
        0, 1, 6, 7)


def test_fp8_does_not_force_fa2():
    assert engine_config(llama(), Overrides(kv_cache_dtype="fp8"), H100, ALL).flash_attn_version is None


# --- MODELS_CONFIG_MAP hooks ---------------------------------------------------


def test_deepseek_v32_bfloat16_becomes_auto():
    ec = engine_config(mla("DeepseekV32ForCausalLM"), Overrides(kv_cache_dtype="bfloat16"), H100, ALL)
    assert ec.cache_dtype == "auto"
    assert fields_changed(ec) == [("cache_config.cache_dtype", "bfloat16", "auto")]
    assert ec.trail[0].hook == "DeepseekV32ForCausalLM.verify_and_update_config"
    assert engine_config(mla("DeepseekV32ForCausalLM"), Overrides(kv_cache_dtype="fp8"), H100, ALL).cache_dtype == "fp8"


def test_deepseek_v32_without_index_topk_is_refused():
    assert "AssertionError" in engine_config(mla("DeepseekV32ForCausalLM", None), Overrides(), H100, ALL).error


@pytest.mark.parametrize("cap,given,expected", [
    (B200, None, "fp8_e4m3"), (Capability(10, 3), None, "fp8_e4m3"), (H100, None, "auto"),
    (B200, "bfloat16", "bfloat16"), (Capability(12, 0), None, "auto"),
])
def test_glm_moe_dsa_fp8_on_sm10x(cap, given, expected):
    assert engine_config(mla("GlmMoeDsaForCausalLM"), Overrides(kv_cache_dtype=given), cap, ALL).cache_dtype == expected


@pytest.mark.parametrize("arch", ["Glm5NextForCausalLM", "Glm5NextForConditionalGeneration"])
def test_glm5_next_fp8_needs_sm10x_and_index_topk(arch):
    assert engine_config(mla(arch), Overrides(), B200, ALL).cache_dtype == "fp8"
    assert engine_config(mla(arch, None), Overrides(), B200, ALL).cache_dtype == "auto"
    assert engine_config(mla(arch), Overrides(), H100, ALL).cache_dtype == "auto"


def test_gemma4_fa4_for_all_layers():
    ec = engine_config(gemma4(), Overrides(), B200, ALL)
    assert ec.flash_attn_version == 4 and ec.backend is None


def test_gemma4_fp8_on_sm90_keeps_per_layer_choice():
    ec = engine_config(gemma4(), Overrides(kv_cache_dtype="fp8"), H100, ALL)
    assert ec.flash_attn_version is None and ec.trail and ec.trail[0].is_note
    # bf16 on SM90: FA4 everywhere
    assert engine_config(gemma4(), Overrides(), H100, ALL).flash_attn_version == 4


def test_gemma4_leaves_a_chosen_version_or_backend():
    assert engine_config(gemma4(), Overrides(flash_attn_version=3), B200, ALL).flash_attn_version == 3
    ec = engine_config(gemma4(), Overrides(backend="FLASHINFER"), B200, ALL)
    assert ec.flash_attn_version is None and ec.backend == "FLASHINFER"


def test_gemma4_without_fa4_forces_triton():
    ec = engine_config(gemma4(), Overrides(), H100, NO_FA4)
    assert ec.backend == "TRITON_ATTN" and ec.backend_from == "Gemma4Config.verify_and_update_config"
    # head dims above 512 also rule FA4 out
    assert engine_config(gemma4(dims=(256, 576)), Overrides(), B200, ALL).backend == "TRITON_ATTN"
    # an explicit backend stays
    assert engine_config(gemma4(), Overrides(backend="FLEX_ATTENTION"), H100, NO_FA4).backend == "FLEX_ATTENTION"


def test_gemma4_with_equal_parsed_head_dims_is_skipped_with_a_note():
    ec = engine_config(gemma4(dims=(256, 256)), Overrides(), H100, NO_FA4)
    assert ec.backend is None and len(ec.trail) == 1 and ec.trail[0].is_note
    assert "global_head_dim" in ec.trail[0].why


def test_embedding_gemma2_defaults_to_triton():
    ec = engine_config(gemma4("EmbeddingGemma2Model"), Overrides(), B200, ALL)
    assert ec.flash_attn_version == 4 and ec.backend == "TRITON_ATTN"
    assert ec.backend_from == "EmbeddingGemma2ModelConfig.verify_and_update_config"
    assert engine_config(gemma4("EmbeddingGemma2Model"), Overrides(backend="FLASH_ATTN"), B200, ALL).backend == "FLASH_ATTN"


def test_diffusion_gemma():
    ec = engine_config(gemma4("DiffusionGemmaForBlockDiffusion"), Overrides(), B200, ALL)
    assert ec.use_non_causal is True and ec.flash_attn_version == 4
    # Gemma4Config chose TRITON_ATTN first: use_non_causal stays off
    ec = engine_config(gemma4("DiffusionGemmaForBlockDiffusion"), Overrides(), H100, NO_FA4)
    assert ec.backend == "TRITON_ATTN" and ec.use_non_causal is False
    ec = engine_config(gemma4("DiffusionGemmaForBlockDiffusion"), Overrides(backend="FLASHINFER"), B200, ALL)
    assert "FlashInfer does not support DiffusionGemma" in ec.error


def test_unlimited_ocr():
    m = llama("UnlimitedOCRForCausalLM")
    ec = engine_config(m, Overrides(), H100, ALL)
    assert (ec.backend, ec.flash_attn_version) == ("FLASH_ATTN", 4)
    assert engine_config(m, Overrides(flash_attn_version=3, backend="FLASH_ATTN"), H100, ALL).flash_attn_version == 4
    assert engine_config(m, Overrides(), H100, NO_FA4).backend == "TRITON_ATTN"
    assert "requires FA4" in engine_config(m, Overrides(backend="FLASH_ATTN"), H100, NO_FA4).error
    err = engine_config(m, Overrides(backend="FLASHINFER"), H100, ALL).error
    assert "unsupported attention backend <AttentionBackendEnum.FLASHINFER: " in err


# --- wired into explain ----------------------------------------------------------


def dev(cap: Capability) -> Device:
    return Device(name="gpu", capability=cap, source="test")


def test_explain_selects_with_the_adjusted_cache_dtype():
    r = explain(mla("DeepseekV32ForCausalLM"), dev(H100), ALL, Overrides(kv_cache_dtype="bfloat16"))
    assert r.groups[0].cfg.kv_cache_dtype == "auto" and r.ctx.cache_dtype == "auto"
    assert r.overrides.kv_cache_dtype == "bfloat16"  # the report keeps the user's flag
    assert [s.field for s in r.engine_config_trail] == ["cache_config.cache_dtype"]


def test_explain_hook_backend_is_explicit_and_validated_alone():
    r = explain(gemma4(), dev(H100), NO_FA4, Overrides())
    assert all(g.selection.backend == "TRITON_ATTN" for g in r.groups)
    assert r.backend_source == "Gemma4Config.verify_and_update_config"
    assert all(g.selection.selected == "TRITON_ATTN" for g in r.groups)


def test_explain_turboquant_boundary_layers_select_with_auto():
    r = explain(llama(layers=8), dev(H100), ALL, Overrides(kv_cache_dtype="turboquant_k8v4"))
    by_kv = {g.cfg.kv_cache_dtype: g.group.layers for g in r.groups}
    assert by_kv == {"turboquant_k8v4": (2, 3, 4, 5), "auto": (0, 1, 6, 7)}
    assert r.ctx.flash_attn_version == 2


def test_explain_diffusion_gemma_sets_use_non_causal():
    r = explain(gemma4("DiffusionGemmaForBlockDiffusion"), dev(B200), ALL, Overrides())
    assert all(g.cfg.use_non_causal for g in r.groups)


def test_explain_refused_engine_config_is_a_user_error():
    with pytest.raises(UserError, match="FlashInfer does not support DiffusionGemma"):
        explain(gemma4("DiffusionGemmaForBlockDiffusion"), dev(B200), ALL, Overrides(backend="FLASHINFER"))
