"""backends/composite.py against vLLM 0.33.0's
``create_composite_attention_backend`` (vllm/v1/attention/backends/composite.py)
and ``get_supported_kv_cache_layouts`` (backends/utils.py).

The children are small stand-in declarations, so that each overridden
predicate is seen to combine them the way vLLM's class does, whatever the
real backends happen to declare.
"""

from __future__ import annotations

import pytest

from attn_select.backends import composite as C
from attn_select.backends.spec import BackendSpec, CapabilityRange, MultipleOf, Rule, resolve
from attn_select.selector.config import Capability, EngineContext, Kernels, Query, SelectorConfig

H100, B200, T4 = Capability(9, 0), Capability(10, 0), Capability(7, 5)
m = MultipleOf

DOCS = C.CompositeDocs(
    head_sizes="h", kv_cache_dtypes="kv", kernel_block_sizes="kb",
    capability="cap", mm_prefix="mm", cudagraph_support="cg",
)


def child(name: str, **facts) -> BackendSpec:
    return BackendSpec(name=name, vllm_class=f"test.{name}", family="test", **facts)


GENERAL = child("GENERAL", kernel_block_sizes=(m(16),), mm_prefix=True, cudagraph_support="ALWAYS")
CAUSAL = child("CAUSAL", kernel_block_sizes=(32,), cudagraph_support="ALWAYS")


def build(general=GENERAL, causal=CAUSAL, **kw) -> BackendSpec:
    return C.composite_spec(general, causal, name="COMPOSITE", vllm_class="test.Composite",
                            summary="", docs=DOCS, **kw)


def q(cap=H100, head_size=128, block_size=None, ctx=EngineContext(), kv="auto", **kw) -> Query:
    return Query(SelectorConfig(head_size, "bfloat16", kv, block_size, **kw), cap, Kernels(), ctx)


# --- get_supported_kernel_block_sizes / supports_block_size ------------------------


def test_explicit_kernel_block_sizes_keep_what_each_child_supports():
    # kernel_block_sizes given: each listed size is asked of both children's
    # supports_block_size; nothing is intersected. 16 and 80 fail CAUSAL's [32].
    spec = build(kernel_block_sizes=(16, 64, 80))
    assert spec.block_sizes(q()) == (64,)
    # The intersection path would have given CAUSAL's 32 instead.
    assert build().block_sizes(q()) == (32,)


def test_explicit_path_uses_the_childs_block_size_override():
    # A child's supports_block_size override decides, not its kernel list.
    only_128 = child("ONLY_128", kernel_block_sizes=(16,),
                     block_size_rule=Rule("128", lambda q: q.cfg.block_size == 128))
    assert build(GENERAL, only_128, kernel_block_sizes=(16, 64, 128)).block_sizes(q()) == (128,)


def test_intersection_path():
    assert C.intersect_block_sizes((m(16),), (64,)) == (64,)
    assert C.intersect_block_sizes((m(16),), (m(24),)) == (m(48),)  # lcm
    assert C.intersect_block_sizes((m(16),), (8,)) == ()
    assert C.intersect_block_sizes((32, 64), (m(32),)) == (32, 64)  # first child's order
    assert C.intersect_block_sizes((m(16), m(32)), (m(32),)) == (m(32),)  # once
    # An int and a MultipleOf of the same base are different sizes.
    assert C.intersect_block_sizes((64, m(64)), (m(64),)) == (64, m(64))
    spec = build(GENERAL, child("C", kernel_block_sizes=(m(24), 48)))
    assert spec.block_sizes(q()) == (m(48), 48)


def test_no_common_kernel_size_rejects_every_block_size_even_none():
    # bool(get_supported_kernel_block_sizes()) and super().supports_block_size:
    # the base class would accept None and an empty list; the composite not.
    spec = build(GENERAL, child("C8", kernel_block_sizes=(8,)))
    assert spec.block_sizes(q()) == ()
    assert not spec.supports_block_size(q(block_size=None))
    assert not spec.supports_block_size(q(block_size=16))


def test_block_size_is_a_multiple_of_a_remaining_kernel_size():
    spec = build(kernel_block_sizes=(64,))
    assert spec.supports_block_size(q(block_size=None))
    assert spec.supports_block_size(q(block_size=128))  # hybrid blocks: 2 x 64
    assert not spec.supports_block_size(q(block_size=32))


# --- head size, dtypes, capability ---------------------------------------------


def test_head_sizes_and_both_children():
    small = child("SMALL", head_sizes=(64, 256))
    spec = build(GENERAL, small, head_sizes=(256, 512))
    assert spec.supports_head_size(q(head_size=256))
    assert not spec.supports_head_size(q(head_size=64))  # not in head_sizes
    assert not spec.supports_head_size(q(head_size=512))  # SMALL refuses it
    # head_sizes=(): whatever both children take.
    assert build(GENERAL, small).supports_head_size(q(head_size=64))


def test_dtypes_are_those_of_both_children():
    spec = build(child("G", dtypes=("float32", "bfloat16", "float16")),
                 child("K", dtypes=("float16", "bfloat16")))
    assert spec.dtypes == ("bfloat16", "float16")  # the general child's order
    kv = build(child("G", kv_cache_dtypes=("auto", "fp8")), child("K", kv_cache_dtypes=("auto",)))
    assert kv.supports_kv_cache_dtype(q(kv="auto"))
    assert not kv.supports_kv_cache_dtype(q(kv="fp8"))


def test_device_major():
    assert build(device_major=10).supports_capability(q(B200))
    assert not build(device_major=10).supports_capability(q(H100))
    # device_major=None: any major, but still every child's own check.
    min_8 = child("MIN8", capability=CapabilityRange(min=Capability(8, 0)))
    assert build().supports_capability(q(T4))
    assert not build(GENERAL, min_8).supports_capability(q(T4))
    assert not build(GENERAL, min_8, device_major=7).supports_capability(q(T4))


# --- mm_prefix and supports_combination ----------------------------------------


def test_mm_prefix_asks_only_the_routings_image_mask_child():
    no_mm = child("NO_MM")
    assert resolve(build(GENERAL, no_mm).mm_prefix, q())  # the causal child is not asked
    assert not resolve(build(no_mm, GENERAL).mm_prefix, q())
    # The routing is data: one that sends image masks to variant 1 asks that child.
    to_causal = C.MM_PREFIX_ROUTING._replace(mm_prefix_variants=(1,))
    assert resolve(build(no_mm, GENERAL, routing=to_causal).mm_prefix, q())
    assert not resolve(build(GENERAL, no_mm, routing=to_causal).mm_prefix, q())


def _says_mm(name: str) -> BackendSpec:
    return child(name, combination=Rule("says", lambda q: f"use_mm_prefix={q.cfg.use_mm_prefix}"))


def test_combination_is_prefixed_with_the_childs_name_and_mm_prefix_only_for_variant_0():
    spec = build(child("G"), _says_mm("K"))
    # variant 1 is asked with use_mm_prefix and variant_uses_mm_prefix(1) -> False
    assert spec.combination(q(use_mm_prefix=True)) == "K: use_mm_prefix=False"
    spec = build(_says_mm("G"), _says_mm("K"))
    assert spec.combination(q(use_mm_prefix=True)) == "G: use_mm_prefix=True"
    assert spec.combination(q(use_mm_prefix=False)) == "G: use_mm_prefix=False"


def test_combination_skips_empty_reasons():
    silent = child("S", combination=Rule("empty", lambda q: ""))
    assert build(silent, child("K")).combination(q()) is None
    assert build(silent, _says_mm("K")).combination(q()) == "K: use_mm_prefix=False"


# --- defaults, overrides, import error, CUDA graphs ----------------------------


def test_attention_backend_defaults_not_the_childrens():
    rich = child("RICH", sink=True, non_causal=True, batch_invariance=True, per_head_quant_scales=True,
                 attn_types=("decoder", "encoder"), sliding_window=True, rswa=True, pcp=True, dcp=True)
    spec = build(rich, rich._replace(vllm_class="test.Rich2"))
    assert (spec.sink, spec.non_causal, spec.batch_invariance, spec.per_head_quant_scales) == (
        False, False, False, False)
    assert spec.attn_types == ("decoder",) and spec.kv_connector and not spec.is_mla
    # Overridden: sliding window / rswa are all(children); pcp, dcp, mismatch False.
    assert spec.sliding_window and spec.rswa
    assert (spec.pcp, spec.dcp, spec.device_cpu_query_lens_mismatch) == (False, False, False)
    assert not build(rich, child("PLAIN")).sliding_window
    assert spec.family == "composite" and spec.name == "COMPOSITE"


def test_one_class_composed_with_itself_is_that_class():
    assert build(GENERAL, GENERAL) is GENERAL


def test_import_error_is_the_causal_childs_first():
    def failing(msg):
        return Rule("fails", lambda q: msg)

    spec = build(child("G", import_error=failing("ImportError: g")),
                 child("K", import_error=failing("ImportError: k")))
    assert spec.import_error(q()) == "ImportError: k"
    assert build(child("G", import_error=failing("ImportError: g")), CAUSAL).import_error(q()) == (
        "ImportError: g")
    assert build().import_error(q()) is None


def test_cudagraph_support_is_the_minimum_of_children_and_routing():
    assert resolve(build().cudagraph_support, q()) == "UNIFORM_SINGLE_TOKEN_DECODE"
    unclamped = EngineContext(unclamped_sliding_window=True)
    assert resolve(build().cudagraph_support, q(ctx=unclamped)) == "NEVER"
    batch = child("B", cudagraph_support="UNIFORM_BATCH")
    never = child("N", cudagraph_support="NEVER")
    assert resolve(build(batch, GENERAL._replace(vllm_class="x")).cudagraph_support, q()) == (
        "UNIFORM_SINGLE_TOKEN_DECODE")
    assert resolve(build(GENERAL, never).cudagraph_support, q()) == "NEVER"
    always = C.MM_PREFIX_ROUTING._replace(cudagraph_support=lambda q: "ALWAYS")
    assert resolve(build(batch, GENERAL, routing=always).cudagraph_support, q()) == "UNIFORM_BATCH"


# --- supported_kv_cache_layouts -------------------------------------------------

DEFAULT = ("LBNHC", "LBHNC", "BLNHC", "BLHNC", "BHLNC", "LHBNC")  # _DEFAULT_LAYOUT_PREFERENCE


def test_layouts_of_the_children_merged():
    hnd = child("HND", kv_cache_layouts=Rule(
        "10.x", lambda q: ("LBHNC", "BLHNC") if q.cap.major == 10 else None))
    spec = build(GENERAL, hnd)
    assert resolve(spec.kv_cache_layouts, q(B200)) == ("LBHNC", "BLHNC")
    assert resolve(spec.kv_cache_layouts, q(H100)) == DEFAULT


def test_merge_kv_cache_layouts():
    assert C.merge_kv_cache_layouts([None, None]) == DEFAULT
    assert C.merge_kv_cache_layouts([("LBHNC", "LBNHC"), None]) == ("LBHNC", "LBNHC")
    # Identical declarations keep their own order, even against the enum's.
    assert C.merge_kv_cache_layouts([("BLHNC", "LBHNC"), ("BLHNC", "LBHNC")]) == ("BLHNC", "LBHNC")
    # Different ones: most often first wins; a tie keeps KVCacheLayout's order.
    assert C.merge_kv_cache_layouts([("LBNHC", "LBHNC"), ("LBHNC", "LBNHC")]) == ("LBHNC", "LBNHC")
    assert C.merge_kv_cache_layouts([("BLHNC", "LBHNC"), ("LBHNC", "BLHNC")]) == ("LBHNC", "BLHNC")
    assert C.merge_kv_cache_layouts(
        [("BLNHC", "LBHNC"), ("BLNHC", "LBHNC"), ("LBHNC", "BLNHC")]
    ) == ("BLNHC", "LBHNC")
    # Only layouts all share, then those nobody names first, in enum order.
    assert C.merge_kv_cache_layouts(
        [("BLHNC", "LHBNC", "LBHNC", "BHLNC"), ("LBHNC", "BHLNC", "BLHNC")]
    ) == ("LBHNC", "BLHNC", "BHLNC")


def test_merge_error_is_utils_wording():
    # utils.py: f"No KV cache layout satisfies every supported set: "
    #           f"{list(map(_layout_names, supported_layouts_lists))}."
    with pytest.raises(ValueError) as err:
        C.merge_kv_cache_layouts([("LBHNC",), None, ("LBNHC", "BLNHC")])
    assert str(err.value) == (
        "No KV cache layout satisfies every supported set: [['LBHNC'], ['LBNHC', 'BLNHC']]."
    )
