"""Which kernel family each engine's backend runs, for the side-by-side view.

The names are descriptive, not selection inputs: they say which kernel
library serves the attention of a backend on a device, so a reader sees that
vLLM's FLASH_ATTN with FlashAttention 3 and SGLang's fa3 are the same family
while vLLM's FLASH_ATTN (FA2) and SGLang's flashinfer are not.
"""

from __future__ import annotations

from attn_select.selector.config import Capability

# SGLang backend -> family; trtllm_mha depends on the GPU (below).
_SGLANG = {
    "fa3": "FlashAttention 3",
    "fa4": "FlashAttention 4",
    "flashinfer": "FlashInfer (native)",
    "llada2_cfg_flashinfer": "FlashInfer (native)",
    "triton": "Triton",
    "torch_native": "PyTorch SDPA",
    "flex_attention": "PyTorch FlexAttention",
    "trtllm_mla": "FlashInfer trtllm-gen (MLA)",
    "flashmla": "FlashMLA",
    "cutedsl_mla": "CuTe DSL MLA",
    "tokenspeed_mla": "CuTe DSL MLA",
    "hpc_ops": "HPC-Ops",
    "dsa": "DSA sparse MLA",
    "nsa": "DSA sparse MLA",
    "dsv4": "DeepSeek-V4 attention",
    "compressed": "DeepSeek-V4 attention",
    "qsa": "QSA",
    "minicpm_flashattn": "MiniCPM sparse (FlashAttention)",
    "minicpm_flashinfer": "MiniCPM sparse (FlashInfer)",
    "aiter": "AITER (ROCm)",
    "wave": "Wave (ROCm)",
    "intel_amx": "Intel AMX (CPU)",
    "intel_xpu": "Intel XPU",
    "ascend": "Ascend (NPU)",
}


def sglang_family(backend: object, cap: Capability) -> str:
    if backend is None:
        return "-"
    if backend == "trtllm_mha":
        # trtllm-gen kernels on datacenter Blackwell; TRT-LLM's FMHAv2 prefill
        # and XQA decode on Hopper and SM120.
        return "FlashInfer trtllm-gen" if cap.major == 10 else "TRT-LLM FMHAv2 / XQA"
    return _SGLANG.get(str(backend), str(backend))


# vLLM backend -> family, for the backends whose kernels do not depend on
# the FlashAttention version or FlashInfer's dispatch.
_VLLM = {
    "TRITON_ATTN": "Triton",
    "TRITON_FLASH_ATTN": "Triton",
    "TRITON_FLASHINFER": "Triton / FlashInfer",
    "FLEX_ATTENTION": "PyTorch FlexAttention",
    "TURBOQUANT": "TurboQuant (Triton)",
    "TRITON_MLA": "Triton",
    "FLASHMLA": "FlashMLA",
    "FLASHMLA_SPARSE": "FlashMLA sparse",
    "FLASHINFER_MLA": "FlashInfer trtllm-gen (MLA)",
    "FLASHINFER_MLA_SPARSE": "FlashInfer sparse MLA",
    "FLASHINFER_MLA_SPARSE_SM90": "FlashInfer sparse MLA",
    "FLASHINFER_MLA_SPARSE_SM120": "FlashInfer sparse MLA",
    "CUTLASS_MLA": "CUTLASS MLA",
    "FLASH_ATTN_MLA": "FlashAttention 3",
    "FLASH_ATTN_MLA_SPARSE": "FlashAttention 3",
    "FLASH_ATTN_MLA_SPARSE_FA4": "FlashAttention 4",
    "TOKENSPEED_MLA": "CuTe DSL MLA",
}


def vllm_family(backend: str | None, fa_version: int | None, flashinfer_decode: str | None) -> str:
    """``flashinfer_decode`` is FlashInfer's decode kernel ("trtllm-gen",
    "xqa" or "native") when the backend is FLASHINFER."""
    if backend is None:
        return "-"
    if backend == "FLASH_ATTN":
        return f"FlashAttention {fa_version}" if fa_version is not None else "FlashAttention (no build)"
    if backend == "FLASHINFER":
        if flashinfer_decode == "trtllm-gen":
            return "FlashInfer trtllm-gen"
        if flashinfer_decode == "xqa":
            return "FlashInfer (XQA decode)"
        return "FlashInfer (native)"
    return _VLLM.get(backend, backend)
