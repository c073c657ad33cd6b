"""validate() mirrors validate_configuration: checks and reason order."""

from attn_select.backends.spec import BackendSpec, CapabilityRange, MultipleOf, Rule
from attn_select.selector import reasons as R
from attn_select.selector.config import Capability, EngineContext, Kernels, Query, SelectorConfig
from attn_select.selector.validate import check, validate

BASE = BackendSpec(name="X", vllm_class="x.X", family="test")
H100 = Capability(9, 0)


def q(**kw) -> Query:
    cfg = SelectorConfig(head_size=128, dtype="bfloat16", kv_cache_dtype="auto", block_size=None)
    return Query(cfg._replace(**kw), H100, Kernels(), EngineContext())


def test_base_defaults_accept_a_plain_decoder():
    assert validate(BASE, q()) == []


def test_defaults_are_vllms_not_uniformly_conservative():
    # kv connector and capability default to supported; empty head sizes = any.
    assert validate(BASE, q(use_kv_connector=True, head_size=72)) == []
    # None kv dtype is always supported, a None block size too.
    assert validate(BASE, q(kv_cache_dtype=None, block_size=None)) == []
    # float32 is not in the base dtypes; fp8 is not in the base kv dtypes.
    assert validate(BASE, q(dtype="float32", kv_cache_dtype="fp8")) == [R.DTYPE, R.KV_CACHE_DTYPE]


def test_every_flag_in_vllm_order():
    spec = BASE._replace(
        head_sizes=(64,),
        kernel_block_sizes=(MultipleOf(32),),
        capability=CapabilityRange(min=Capability(10, 0)),
        kv_connector=False,
        device_cpu_query_lens_mismatch=False,
        combination=Rule("always", lambda _q: "combo reason"),
    )
    got = validate(spec, q(
        head_size=128, dtype="float32", kv_cache_dtype="fp8", block_size=16,
        use_mm_prefix=True, use_mla=True, has_sink=True, use_sparse=True,
        use_per_head_quant_scales=True, attn_type="encoder", has_sliding_window=True,
        use_rswa=True, use_non_causal=True, use_dcp=True, use_batch_invariant=True,
        use_kv_connector=True, use_pcp=True, use_adaptive_verification=True,
    ))
    assert got == [
        R.HEAD_SIZE, R.DTYPE, R.KV_CACHE_DTYPE, R.BLOCK_SIZE, R.MM_PREFIX, R.MLA, R.SINK,
        R.SPARSE, R.PER_HEAD_QUANT_SCALES, R.COMPUTE_CAPABILITY,
        "attention type AttentionType.ENCODER not supported", R.SLIDING_WINDOW, R.RSWA, R.NON_CAUSAL,
        R.NON_CAUSAL_MLA_DCP, R.BATCH_INVARIANCE, R.KV_CONNECTOR, R.PCP, R.DCP,
        R.QUERY_LENS_MISMATCH, "combo reason",
    ]


def test_mla_and_sparse_mismatch_both_directions():
    mla = BASE._replace(is_mla=True, is_sparse=True)
    assert validate(mla, q()) == [R.NON_MLA, R.NON_SPARSE]
    assert validate(BASE, q(use_mla=True, use_sparse=True)) == [R.MLA, R.SPARSE]


def test_block_size_is_a_multiple_of_a_kernel_size():
    spec = BASE._replace(kernel_block_sizes=(64, MultipleOf(48)))
    assert validate(spec, q(block_size=128)) == []  # hybrid blocks: 128 = 2 x 64
    assert validate(spec, q(block_size=96)) == []  # multiple of 48
    assert validate(spec, q(block_size=16)) == [R.BLOCK_SIZE]


def test_import_error_is_the_only_reason():
    spec = BASE._replace(head_sizes=(64,), import_error=Rule("needs pkg", lambda _q: "ImportError: no pkg"))
    assert check(spec, q()) == ["ImportError: no pkg"]
