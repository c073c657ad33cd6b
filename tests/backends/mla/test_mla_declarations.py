"""Static declarations of the 12 MLA specs, as read from vLLM 0.33.0's classes."""

import pytest

from attn_select.backends import registry
from attn_select.backends.mla import MLA_SPECS
from attn_select.backends.spec import MultipleOf
from attn_select.selector.config import Capability

from mla_models import B200, H100, deepseek_v3, mla_cfg, query

# AttentionBackendEnum values (vllm/v1/attention/backends/registry.py).
VLLM_CLASSES = {
    "FLASHINFER_MLA": "vllm.v1.attention.backends.mla.flashinfer_mla.FlashInferMLABackend",
    "TOKENSPEED_MLA": "vllm.v1.attention.backends.mla.tokenspeed_mla.TokenspeedMLABackend",
    "FLASHINFER_MLA_SPARSE": (
        "vllm.v1.attention.backends.mla.flashinfer_mla_sparse.FlashInferMLASparseTRTLLMBackend"
    ),
    "FLASHINFER_MLA_SPARSE_SM120": (
        "vllm.v1.attention.backends.mla.flashinfer_mla_sparse.FlashInferMLASparseSM120Backend"
    ),
    "FLASHINFER_MLA_SPARSE_SM90": (
        "vllm.v1.attention.backends.mla.flashinfer_mla_sparse_sm90.FlashInferMLASparseSM90Backend"
    ),
    "TRITON_MLA": "vllm.v1.attention.backends.mla.triton_mla.TritonMLABackend",
    "CUTLASS_MLA": "vllm.v1.attention.backends.mla.cutlass_mla.CutlassMLABackend",
    "FLASHMLA": "vllm.v1.attention.backends.mla.flashmla.FlashMLABackend",
    "FLASHMLA_SPARSE": "vllm.v1.attention.backends.mla.flashmla_sparse.FlashMLASparseBackend",
    "FLASH_ATTN_MLA": "vllm.v1.attention.backends.mla.flashattn_mla.FlashAttnMLABackend",
    "FLASH_ATTN_MLA_SPARSE": (
        "vllm.v1.attention.backends.mla.flashattn_mla_sparse.FlashAttnMLASparseBackend"
    ),
    "FLASH_ATTN_MLA_SPARSE_FA4": (
        "vllm.v1.attention.backends.mla.flashattn_mla_sparse.FlashAttnMLASparseFA4Backend"
    ),
}
SPARSE = {
    "FLASHINFER_MLA_SPARSE",
    "FLASHINFER_MLA_SPARSE_SM120",
    "FLASHINFER_MLA_SPARSE_SM90",
    "FLASHMLA_SPARSE",
    "FLASH_ATTN_MLA_SPARSE",
    "FLASH_ATTN_MLA_SPARSE_FA4",
}
SPECS = {s.name: s for s in MLA_SPECS}


def test_all_twelve_with_vllm_class_paths():
    assert len(MLA_SPECS) == 12
    assert {n: s.vllm_class for n, s in SPECS.items()} == VLLM_CLASSES
    for name in VLLM_CLASSES:
        assert registry.BACKENDS[name] is SPECS[name]


def test_mla_and_sparse_flags():
    for name, spec in SPECS.items():
        assert spec.is_mla, name
        assert spec.family == "mla"
        assert spec.is_sparse == (name in SPARSE), name


def test_every_mla_impl_supports_pcp():
    # MLAAttentionImpl.supports_pcp = True and no 0.33.0 MLA impl resets it.
    assert all(s.pcp for s in MLA_SPECS)


def test_dcp_comes_from_the_impl_class():
    # Impls that set supports_dcp = True; the sparse SM90/SM120/FA3 impls keep
    # MLAAttentionImpl's False.
    without = {n for n, s in SPECS.items() if not s.dcp}
    assert without == {
        "FLASHINFER_MLA_SPARSE_SM120",
        "FLASHINFER_MLA_SPARSE_SM90",
        "FLASH_ATTN_MLA_SPARSE",
    }


def test_non_causal_and_batch_invariance():
    assert {n for n, s in SPECS.items() if s.non_causal} == {
        "FLASHINFER_MLA",
        "TOKENSPEED_MLA",
        "TRITON_MLA",
    }
    # Builders with supports_non_causal_multi_token_dcp = True.
    assert {n for n, s in SPECS.items() if s.non_causal_dcp} == {"FLASHINFER_MLA", "TOKENSPEED_MLA"}
    assert {n for n, s in SPECS.items() if s.batch_invariance} == {"TRITON_MLA", "FLASH_ATTN_MLA"}
    for spec in MLA_SPECS:
        assert spec.sink is False and spec.mm_prefix is False
        assert spec.sliding_window is False and spec.rswa is False
        assert spec.kv_connector is True


@pytest.mark.parametrize(
    "name, level",
    [
        ("FLASHINFER_MLA", "ALWAYS"),
        ("TOKENSPEED_MLA", "UNIFORM_BATCH"),
        ("FLASHINFER_MLA_SPARSE", "UNIFORM_BATCH"),
        ("FLASHINFER_MLA_SPARSE_SM120", "UNIFORM_BATCH"),
        ("FLASHINFER_MLA_SPARSE_SM90", "UNIFORM_BATCH"),
        ("TRITON_MLA", "UNIFORM_BATCH"),
        ("CUTLASS_MLA", "UNIFORM_SINGLE_TOKEN_DECODE"),
        ("FLASHMLA", "UNIFORM_BATCH"),
        ("FLASHMLA_SPARSE", "UNIFORM_BATCH"),
        ("FLASH_ATTN_MLA", "UNIFORM_BATCH"),
        ("FLASH_ATTN_MLA_SPARSE", "UNIFORM_BATCH"),
        ("FLASH_ATTN_MLA_SPARSE_FA4", "UNIFORM_BATCH"),
    ],
)
def test_cudagraph_support(name, level):
    assert SPECS[name].cudagraph_support == level


@pytest.mark.parametrize(
    "name, sizes",
    [
        ("FLASHINFER_MLA", (320, 512, 576)),
        ("TOKENSPEED_MLA", (320, 512, 576)),
        ("CUTLASS_MLA", (320, 512, 576)),
        ("FLASHMLA", (320, 512, 576)),
        ("FLASH_ATTN_MLA", (320, 512, 576)),
        ("TRITON_MLA", ()),
        ("FLASH_ATTN_MLA_SPARSE", ()),
        ("FLASHINFER_MLA_SPARSE", (512, 576)),
        ("FLASHINFER_MLA_SPARSE_SM120", (512, 576)),
        ("FLASHINFER_MLA_SPARSE_SM90", (512, 576)),
        ("FLASHMLA_SPARSE", (576, 512)),
        ("FLASH_ATTN_MLA_SPARSE_FA4", (576,)),
    ],
)
def test_head_sizes(name, sizes):
    assert SPECS[name].head_sizes == sizes


def test_bf16_only_backends():
    bf16_only = {n for n, s in SPECS.items() if s.dtypes == ("bfloat16",)}
    assert bf16_only == {
        "FLASHINFER_MLA_SPARSE_SM120",
        "FLASHINFER_MLA_SPARSE_SM90",
        "FLASHMLA_SPARSE",
        "FLASH_ATTN_MLA_SPARSE_FA4",
    }
    for name in set(SPECS) - bf16_only:
        assert SPECS[name].dtypes == ("float16", "bfloat16")


@pytest.mark.parametrize(
    "name, block, ok",
    [
        ("FLASHINFER_MLA", 16, False),
        ("FLASHINFER_MLA", 32, True),
        ("FLASHINFER_MLA", 96, True),  # 96 % 32 == 0: hybrid blocks split it
        ("CUTLASS_MLA", 64, False),
        ("CUTLASS_MLA", 256, True),
        ("FLASHMLA", 32, False),
        ("FLASHMLA", 128, True),
        ("TRITON_MLA", 16, True),
        ("TRITON_MLA", 8, False),
        ("FLASH_ATTN_MLA", 48, True),
        ("FLASHINFER_MLA_SPARSE", 32, True),
        ("FLASHMLA_SPARSE", 32, False),
        ("FLASH_ATTN_MLA_SPARSE_FA4", 64, True),
    ],
)
def test_kernel_block_sizes(name, block, ok):
    q = query(mla_cfg(block_size=block), B200)
    assert SPECS[name].supports_block_size(q) is ok


def test_flashmla_sparse_block_sizes_depend_on_quantized_kv_on_sm100():
    spec = SPECS["FLASHMLA_SPARSE"]
    assert spec.block_sizes(query(mla_cfg("fp8", use_sparse=True), B200)) == (64,)
    assert spec.block_sizes(query(mla_cfg("auto", use_sparse=True), B200)) == (MultipleOf(64),)
    assert spec.block_sizes(query(mla_cfg("fp8", use_sparse=True), H100)) == (MultipleOf(64),)


@pytest.mark.parametrize(
    "name, ok, bad",
    [
        ("FLASHINFER_MLA", ["auto", "fp8", "fp8_e4m3", "float16"], ["fp8_e5m2", "fp8_ds_mla"]),
        ("TOKENSPEED_MLA", ["fp8", "fp8_e4m3"], ["auto", "bfloat16"]),
        ("FLASH_ATTN_MLA", ["auto", "bfloat16"], ["fp8"]),
        ("FLASHMLA_SPARSE", ["fp8", "fp8_ds_mla", "nvfp4_ds_mla", "auto"], ["float16", "fp8_e4m3"]),
        ("FLASHINFER_MLA_SPARSE_SM120", ["auto", "fp8_ds_mla"], ["bfloat16"]),
        ("FLASHINFER_MLA_SPARSE_SM90", ["bfloat16", "fp8_e4m3"], ["float16", "fp8_ds_mla"]),
        ("FLASH_ATTN_MLA_SPARSE_FA4", ["auto", "bfloat16"], ["float16", "fp8"]),
    ],
)
def test_kv_cache_dtypes(name, ok, bad):
    for kv in ok:
        assert kv in SPECS[name].kv_cache_dtypes
    for kv in bad:
        assert kv not in SPECS[name].kv_cache_dtypes


@pytest.mark.parametrize(
    "name, majors",
    [
        ("FLASHINFER_MLA", {10}),
        ("TOKENSPEED_MLA", {10}),
        ("CUTLASS_MLA", {10}),
        ("FLASHINFER_MLA_SPARSE", {10}),
        ("FLASH_ATTN_MLA_SPARSE_FA4", {10}),
        ("FLASHINFER_MLA_SPARSE_SM120", {12}),
        ("FLASHINFER_MLA_SPARSE_SM90", {9}),
        ("FLASH_ATTN_MLA", {9}),
        ("FLASH_ATTN_MLA_SPARSE", {9}),
        ("FLASHMLA", {9, 10}),
        ("FLASHMLA_SPARSE", {9, 10}),
        ("TRITON_MLA", {7, 8, 9, 10, 11, 12}),
    ],
)
def test_capability(name, majors):
    for major in (7, 8, 9, 10, 11, 12):
        q = query(mla_cfg(), Capability(major, 0), deepseek_v3())
        assert SPECS[name].supports_capability(q) == (major in majors), major
