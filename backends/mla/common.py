"""Facts shared by the MLA backends of vLLM 0.33.0.

Mirrors the base classes the MLA backends inherit from:

- ``MLACommonBackend`` (vllm/model_executor/layers/attention/mla_attention.py):
  head sizes 320/512/576, ``is_mla`` True, builder ``MLACommonMetadataBuilder``
  (CUDA graphs NEVER, no non-causal multi-token DCP).
- ``MLAAttentionImpl`` (vllm/v1/attention/backend.py): ``supports_pcp`` True
  and ``supports_dcp`` False unless the impl says otherwise. No MLA impl of
  0.33.0 turns PCP off, so every MLA spec here has ``pcp=True``.

Also the installed-package facts several MLA modules share (what makes their
import fail), the FlashInfer probes their predicates call, and
``canonical_sparse_mla_kv_cache_dtype``, the KV-dtype rewrite ``MLAAttention``
applies after selection.
"""

from __future__ import annotations

from attn_select.backends.spec import rule
from attn_select.selector import reasons as R
from attn_select.selector.config import Capability, Kernels, Query, is_quantized_kv_cache

# MLACommonBackend.get_supported_head_sizes: kv_lora_rank + qk_rope_head_dim
# of the MLA models vLLM serves (576 = DeepSeek 512 + 64).
MLA_HEAD_SIZES: tuple[int, ...] = (320, 512, 576)

# The KV-cache dtype list most dense MLA backends declare.
MLA_FP8_KV_CACHE_DTYPES: tuple[str, ...] = ("auto", "float16", "bfloat16", "fp8", "fp8_e4m3")

# MLA caches hold one latent vector per token and no separate V
# (MLAAttention.get_kv_cache_spec: num_kv_heads=1, head_size_v=0).
MLA_KV_CACHE_SHAPE = "(num_blocks, block_size, head_size)"
# The DeepSeek packed formats store an opaque per-token blob instead
# (state_content_bytes: fp8_ds_mla 656 B, nvfp4_ds_mla 352 B).
DS_MLA_ROW_BYTES: dict[str, int] = {"fp8_ds_mla": 656, "nvfp4_ds_mla": 352}


def has_flashinfer(kernels: Kernels) -> bool:
    """vLLM ``has_flashinfer()``: the package is found and it can get kernels
    (flashinfer-cubin, or nvcc and ninja for its JIT)."""
    return kernels.flashinfer_python and kernels.flashinfer


# has_flashinfer_sm90_nope_mla() and has_flashinfer_sparse_mla_sm120()
# (vllm/utils/flashinfer.py) are has_flashinfer() plus a probe for an API
# that the FlashInfer vLLM 0.33.0 pins (0.7.2.post1) has, so they reduce to
# has_flashinfer() here.
has_flashinfer_sm90_nope_mla = has_flashinfer
has_flashinfer_sparse_mla_sm120 = has_flashinfer


def device_capability_repr(cap: Capability) -> str:
    """How vLLM's ``DeviceCapability`` NamedTuple prints inside an f-string."""
    return f"DeviceCapability(major={cap.major}, minor={cap.minor})"


# vllm/vllm_flash_attn/__init__.py raises this when neither FA build imports;
# any module importing vllm.v1.attention.backends.fa_utils on CUDA inherits it.
FLASH_ATTN_PACKAGE_MISSING = (
    "vllm.vllm_flash_attn requires the CUDA flash attention extensions "
    "(_vllm_fa2_C or _vllm_fa3_C). On ROCm, use upstream flash_attn."
)


@rule("ImportError when neither _vllm_fa2_C nor _vllm_fa3_C imports (fa_utils imports vllm_flash_attn)")
def fa_utils_import_error(q: Query) -> str | None:
    """The import failure of a backend module that imports ``fa_utils``
    (directly, or through sparse_mla_attention.py)."""
    if q.kernels.fa2 or q.kernels.fa3:
        return None
    return R.import_failure("ImportError", FLASH_ATTN_PACKAGE_MISSING)


@rule("ModuleNotFoundError when the flashinfer package is not installed (module-level import)")
def flashinfer_import_error(q: Query) -> str | None:
    """flashinfer_mla.py imports ``flashinfer.decode`` at module level."""
    if q.kernels.flashinfer_python:
        return None
    return R.import_failure("ModuleNotFoundError", "No module named 'flashinfer'")


def canonical_sparse_mla_kv_cache_dtype(backend_name: str, kv_cache_dtype: str) -> str:
    """``_canonicalize_sparse_mla_kv_cache_dtype`` (mla_attention.py): the
    KV-cache dtype an MLA layer actually uses once ``backend_name`` is chosen.

    FLASHMLA_SPARSE serves every quantized dtype but nvfp4_ds_mla through the
    fp8_ds_mla layout; FLASHINFER_MLA_SPARSE_SM120 stores auto/fp8/fp8_e4m3
    as fp8_ds_mla. vLLM also writes the result back to cache_config.cache_dtype.
    """
    if backend_name == "FLASHMLA_SPARSE" and is_quantized_kv_cache(kv_cache_dtype):
        return kv_cache_dtype if kv_cache_dtype == "nvfp4_ds_mla" else "fp8_ds_mla"
    if backend_name == "FLASHINFER_MLA_SPARSE_SM120" and kv_cache_dtype in (
        "auto",
        "fp8",
        "fp8_e4m3",
    ):
        return "fp8_ds_mla"
    return kv_cache_dtype


def mla_layer_head_size(kv_lora_rank: int, qk_rope_head_dim: int) -> int:
    """The ``head_size`` an ``MLAAttention`` layer passes to get_attn_backend."""
    return kv_lora_rank + qk_rope_head_dim


__all__ = [
    "DS_MLA_ROW_BYTES",
    "FLASH_ATTN_PACKAGE_MISSING",
    "MLA_FP8_KV_CACHE_DTYPES",
    "MLA_HEAD_SIZES",
    "MLA_KV_CACHE_SHAPE",
    "canonical_sparse_mla_kv_cache_dtype",
    "device_capability_repr",
    "fa_utils_import_error",
    "flashinfer_import_error",
    "has_flashinfer",
    "has_flashinfer_sm90_nope_mla",
    "has_flashinfer_sparse_mla_sm120",
    "mla_layer_head_size",
]
