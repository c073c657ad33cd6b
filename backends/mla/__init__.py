"""MLA backends (placeholder)."""
from attn_select.backends.spec import BackendSpec
_N = ["FLASHINFER_MLA","TOKENSPEED_MLA","FLASHINFER_MLA_SPARSE","FLASHINFER_MLA_SPARSE_SM120","FLASHINFER_MLA_SPARSE_SM90","TRITON_MLA","CUTLASS_MLA","FLASHMLA","FLASHMLA_SPARSE","FLASH_ATTN_MLA","FLASH_ATTN_MLA_SPARSE","FLASH_ATTN_MLA_SPARSE_FA4"]
MLA_SPECS = tuple(BackendSpec(name=n, vllm_class="", family="mla", is_mla=True) for n in _N)
