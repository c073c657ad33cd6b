"""The MLA backends of vLLM 0.33.0's CUDA platform, one module per vLLM module
(vllm/v1/attention/backends/mla/*.py); shared base-class facts in ``common``.

Declarations only: pure Python, no torch.
"""

from attn_select.backends.mla.cutlass_mla import CUTLASS_MLA
from attn_select.backends.mla.flashattn_mla import FLASH_ATTN_MLA
from attn_select.backends.mla.flashattn_mla_sparse import (
    FLASH_ATTN_MLA_SPARSE,
    FLASH_ATTN_MLA_SPARSE_FA4,
)
from attn_select.backends.mla.flashinfer_mla import FLASHINFER_MLA
from attn_select.backends.mla.flashinfer_mla_sparse import (
    FLASHINFER_MLA_SPARSE,
    FLASHINFER_MLA_SPARSE_SM120,
)
from attn_select.backends.mla.flashinfer_mla_sparse_sm90 import FLASHINFER_MLA_SPARSE_SM90
from attn_select.backends.mla.flashmla import FLASHMLA
from attn_select.backends.mla.flashmla_sparse import FLASHMLA_SPARSE
from attn_select.backends.mla.tokenspeed_mla import TOKENSPEED_MLA
from attn_select.backends.mla.triton_mla import TRITON_MLA
from attn_select.backends.spec import BackendSpec

# AttentionBackendEnum order (registry.py re-sorts anyway).
MLA_SPECS: tuple[BackendSpec, ...] = (
    FLASHINFER_MLA,
    TOKENSPEED_MLA,
    FLASHINFER_MLA_SPARSE,
    FLASHINFER_MLA_SPARSE_SM120,
    FLASHINFER_MLA_SPARSE_SM90,
    TRITON_MLA,
    CUTLASS_MLA,
    FLASHMLA,
    FLASHMLA_SPARSE,
    FLASH_ATTN_MLA,
    FLASH_ATTN_MLA_SPARSE,
    FLASH_ATTN_MLA_SPARSE_FA4,
)

__all__ = ["MLA_SPECS", *(s.name for s in MLA_SPECS)]
