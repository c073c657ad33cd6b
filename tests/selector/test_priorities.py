"""Priority lists: one assertion per branch of vLLM's _get_backend_priorities."""

from attn_select.selector.config import Capability
from attn_select.selector.priorities import backend_priorities

MHA_TAIL = ("TRITON_ATTN", "FLEX_ATTENTION", "TURBOQUANT")


def p(cap, mla=False, **kw):
    return backend_priorities(mla, Capability(*cap), **kw)


def test_mha_blackwell_prefers_flashinfer():
    assert p((10, 0)) == ("FLASHINFER", "FLASH_ATTN", *MHA_TAIL)
    assert p((10, 3), use_mm_prefix=True) == ("TRITON_FLASHINFER", "FLASHINFER", "FLASH_ATTN", *MHA_TAIL)


def test_mha_blackwell_non_causal_prefers_flash_attn():
    assert p((10, 0), use_non_causal=True) == ("FLASH_ATTN", "FLASHINFER", *MHA_TAIL)
    # the mm-prefix composite is not added on the non-causal 10.x list
    assert p((10, 0), use_non_causal=True, use_mm_prefix=True) == ("FLASH_ATTN", "FLASHINFER", *MHA_TAIL)


def test_mha_other_architectures():
    assert p((8, 0)) == ("FLASH_ATTN", "FLASHINFER", *MHA_TAIL)
    assert p((12, 0)) == ("FLASH_ATTN", "FLASHINFER", *MHA_TAIL)
    assert p((9, 0), use_mm_prefix=True) == ("TRITON_FLASH_ATTN", "FLASH_ATTN", "FLASHINFER", *MHA_TAIL)
    assert p((8, 9), use_mm_prefix=True) == ("FLASH_ATTN", "FLASHINFER", *MHA_TAIL)


def test_mla_blackwell_sparse_orders():
    head = ("FLASHINFER_MLA", "TOKENSPEED_MLA", "CUTLASS_MLA", "FLASH_ATTN_MLA", "FLASHMLA", "TRITON_MLA")
    assert p((10, 0), True, kv_cache_dtype="fp8") == (*head, "FLASHINFER_MLA_SPARSE", "FLASHMLA_SPARSE")
    assert p((10, 0), True, num_heads=16) == (
        *head, "FLASH_ATTN_MLA_SPARSE_FA4", "FLASHINFER_MLA_SPARSE", "FLASHMLA_SPARSE")
    assert p((10, 0), True, num_heads=128) == (*head, "FLASHMLA_SPARSE", "FLASHINFER_MLA_SPARSE")
    assert p((10, 0), True) == (*head, "FLASHMLA_SPARSE", "FLASHINFER_MLA_SPARSE")
    # fp8_ds_mla is quantized too
    assert p((10, 0), True, num_heads=8, kv_cache_dtype="fp8_ds_mla")[-2:] == (
        "FLASHINFER_MLA_SPARSE", "FLASHMLA_SPARSE")


def test_mla_sm120_and_hopper():
    assert p((12, 0), True) == ("TRITON_MLA", "FLASHINFER_MLA_SPARSE_SM120")
    base = ("FLASH_ATTN_MLA", "FLASHMLA", "FLASHINFER_MLA", "TRITON_MLA")
    assert p((9, 0), True, head_size=576) == (
        *base, "FLASH_ATTN_MLA_SPARSE", "FLASHMLA_SPARSE", "FLASHINFER_MLA_SPARSE_SM90")
    assert p((9, 0), True, head_size=512) == (
        *base, "FLASHINFER_MLA_SPARSE_SM90", "FLASH_ATTN_MLA_SPARSE", "FLASHMLA_SPARSE")
    assert p((8, 0), True, head_size=576) == p((9, 0), True, head_size=576)
