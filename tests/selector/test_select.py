"""The selection loop: explicit backends never fall back, error texts are vLLM's."""

import pytest

from attn_select.backends import registry
from attn_select.backends.spec import Rule
from attn_select.selector import select as select_mod
from attn_select.selector.config import Capability, EngineContext, Kernels, SelectorConfig

CFG = SelectorConfig(head_size=128, dtype="bfloat16", kv_cache_dtype="auto", block_size=None)
H100 = Capability(9, 0)


@pytest.fixture
def specs(monkeypatch):
    """Replace the MHA specs with controlled ones; restore afterwards."""
    table = dict(registry.BACKENDS)
    monkeypatch.setattr(registry, "BACKENDS", table)
    select_mod.select.cache_clear()
    yield table
    select_mod.select.cache_clear()


def only(table, name, **kw):
    table[name] = table[name]._replace(**kw)


def run(cfg=CFG, backend=None):
    return select_mod.select(cfg, H100, Kernels(), EngineContext(), None, backend)


def test_highest_priority_valid_wins(specs):
    only(specs, "FLASH_ATTN", head_sizes=(64,))
    s = run()
    assert [c.name for c in s.candidates] == [
        "FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLEX_ATTENTION", "TURBOQUANT"]
    assert s.candidates[0].reasons == ("head_size not supported",)
    assert s.selected == "FLASHINFER" and s.error is None


def test_nothing_valid_gives_vllms_text(specs):
    for name in ("FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLEX_ATTENTION"):
        only(specs, name, dtypes=("float16",))
    s = run()
    assert s.selected is None
    assert s.error == (
        "No valid attention backend found for cuda with AttentionSelectorConfig(head_size=128, "
        "dtype=torch.bfloat16, kv_cache_dtype=auto, block_size=None, use_mla=False, has_sink=False, "
        "use_sparse=False, use_mm_prefix=False, use_per_head_quant_scales=False, attn_type=AttentionType.DECODER, "
        "has_sliding_window=False, use_non_causal=False, use_batch_invariant=False, "
        "use_kv_connector=False, use_adaptive_verification=False, use_pcp=False, use_dcp=False, "
        "use_rswa=False). Reasons: {FLASH_ATTN: [dtype not supported], FLASHINFER: [dtype not "
        "supported], TRITON_ATTN: [dtype not supported], FLEX_ATTENTION: [dtype not supported], "
        "TURBOQUANT: [kv_cache_dtype not supported]}."
    )


def test_explicit_backend_never_falls_back(specs):
    only(specs, "FLASH_ATTN", head_sizes=(64,), sink=False)
    s = run(CFG._replace(has_sink=True), backend="flash_attn")
    assert s.selected is None
    assert s.error == (
        "Selected backend AttentionBackendEnum.FLASH_ATTN is not valid for this configuration. "
        "Reason: ['head_size not supported', 'attention sinks not supported']"
    )


def test_explicit_backend_import_failure(specs):
    only(specs, "FLASHINFER", import_error=Rule("x", lambda q: "ImportError: no flashinfer"))
    s = run(backend="FLASHINFER")
    assert s.error == (
        "Selected backend AttentionBackendEnum.FLASHINFER is not valid for this configuration. "
        "Reason: [ImportError: no flashinfer]"
    )


def test_explicit_backend_outside_the_priority_list(specs):
    s = run(backend="TRITON_MLA")
    assert s.selected is None
    assert s.candidates[-1].name == "TRITON_MLA" and s.candidates[-1].priority == -1


def test_block_size_warning_only_for_block_size_alone(specs):
    only(specs, "FLASH_ATTN", kernel_block_sizes=(64,))
    only(specs, "FLASHINFER", kernel_block_sizes=(64,), head_sizes=(64,))
    s = run(CFG._replace(block_size=16))
    assert s.selected == "TRITON_ATTN"
    # FLASHINFER has two reasons, so only FLASH_ATTN was precluded by --block-size alone
    assert s.warning.startswith("--block-size 16 precluded higher-priority backend(s) FLASH_ATTN. Using TRITON_ATTN")


def test_unknown_backend_suggests_closest():
    with pytest.raises(registry.UnknownBackend, match="did you mean FLASHINFER"):
        registry.get("flashinfr")


def test_unknown_backend_carries_vllms_refusal():
    """AttentionBackendEnum.__getitem__'s text, every member listed."""
    with pytest.raises(registry.UnknownBackend) as info:
        registry.get("FLASH_ATN")
    msg = str(info.value)
    assert msg.startswith("Unknown attention backend: 'FLASH_ATN'. Valid options are: FLASH_ATTN, FLASH_ATTN_DIFFKV,")
    assert "ROCM_ATTN" in msg and msg.endswith("ULTRAQUANT, CUSTOM (did you mean FLASH_ATTN?)")


@pytest.mark.parametrize("name", ["ROCM_ATTN", "cpu_mla", "TRITON_MSA", "CUSTOM"])
def test_a_vllm_backend_not_modelled_says_so(name):
    with pytest.raises(registry.UnknownBackend, match="member of vLLM's AttentionBackendEnum that attn-select does "
                                                      "not model"):
        registry.get(name)


def test_cpu_attn_on_cuda_is_validated_by_its_own_checks():
    """vLLM 0.33.0 imports CPUAttentionBackend for --attention-backend CPU_ATTN
    on a CUDA GPU and selects it when its checks pass (no device check):
    fp8 needs the host CPU's AVX-512 / AMX (assumed present, as on the x86
    servers vLLM is checked on), blocks of 32."""
    s = run(backend="cpu_attn")
    assert s.selected == "CPU_ATTN" and s.candidates[-1] == select_mod.Candidate("CPU_ATTN", -1, ())
    assert "CPU_ATTN" not in s.priority_order
    s = run(CFG._replace(kv_cache_dtype="fp8", block_size=16, dtype="float32"), backend="CPU_ATTN")
    assert s.selected is None
    assert s.error == ("Selected backend AttentionBackendEnum.CPU_ATTN is not valid for this configuration. "
                       "Reason: ['block_size not supported']")
    assert run(CFG._replace(kv_cache_dtype="fp8_e5m2", block_size=32), backend="CPU_ATTN").selected == "CPU_ATTN"
    assert run(CFG._replace(head_size=576, attn_type="encoder_decoder", block_size=64),
               backend="CPU_ATTN").candidates[-1].reasons == ("head_size not supported",)
