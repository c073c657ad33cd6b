"""``canonical_sparse_mla_kv_cache_dtype``: vLLM's post-selection KV-dtype
rewrite (_canonicalize_sparse_mla_kv_cache_dtype in mla_attention.py)."""

import pytest

from attn_select.backends.mla import MLA_SPECS
from attn_select.backends.mla.common import (
    canonical_sparse_mla_kv_cache_dtype as canon,
    mla_layer_head_size,
)
from attn_select.selector.config import KV_CACHE_DTYPES, is_quantized_kv_cache


@pytest.mark.parametrize(
    "kv, expected",
    [
        ("auto", "auto"),
        ("bfloat16", "bfloat16"),
        ("fp8", "fp8_ds_mla"),
        ("fp8_e4m3", "fp8_ds_mla"),
        ("fp8_e5m2", "fp8_ds_mla"),
        ("fp8_ds_mla", "fp8_ds_mla"),
        ("nvfp4_ds_mla", "nvfp4_ds_mla"),
        ("nvfp4", "fp8_ds_mla"),
    ],
)
def test_flashmla_sparse_serves_quantized_caches_as_fp8_ds_mla(kv, expected):
    assert canon("FLASHMLA_SPARSE", kv) == expected


@pytest.mark.parametrize(
    "kv, expected",
    [
        ("auto", "fp8_ds_mla"),
        ("fp8", "fp8_ds_mla"),
        ("fp8_e4m3", "fp8_ds_mla"),
        ("fp8_ds_mla", "fp8_ds_mla"),
        ("bfloat16", "bfloat16"),
        ("fp8_e5m2", "fp8_e5m2"),
    ],
)
def test_sm120_stores_fp8_ds_mla(kv, expected):
    assert canon("FLASHINFER_MLA_SPARSE_SM120", kv) == expected


def test_other_backends_keep_the_dtype():
    others = [s.name for s in MLA_SPECS if s.name not in ("FLASHMLA_SPARSE", "FLASHINFER_MLA_SPARSE_SM120")]
    for name in others:
        for kv in KV_CACHE_DTYPES:
            assert canon(name, kv) == kv, (name, kv)


def test_rewritten_dtype_is_one_the_backend_declares():
    # Whatever dtype selected these backends, the rewritten one is in their list.
    for spec in MLA_SPECS:
        for kv in spec.kv_cache_dtypes:
            assert canon(spec.name, kv) in spec.kv_cache_dtypes, (spec.name, kv)
    assert all(
        is_quantized_kv_cache(canon("FLASHMLA_SPARSE", kv))
        for kv in KV_CACHE_DTYPES if is_quantized_kv_cache(kv)
    )


def test_mla_layer_head_size():
    assert mla_layer_head_size(512, 64) == 576  # DeepSeek-V2/V3/R1/V3.2, Kimi-K2
    assert mla_layer_head_size(512, 0) == 512  # NoPE MLA
