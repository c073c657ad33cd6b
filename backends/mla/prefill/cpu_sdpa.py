"""CPU MLA prefill: dense per-request attention in PyTorch.

Mirrors ``CPUSDPAMLAPrefillBackend`` (vllm/v1/attention/backends/mla/prefill/cpu_sdpa.py).
It declares nothing beyond the base class (any capability, fp16/bf16, always
available, any dims), so an explicit ``mla_prefill_backend=CPU`` validates on
a CUDA GPU too; only the CPU platform picks it by itself.
"""

from __future__ import annotations

from attn_select.backends.mla.prefill.spec import PrefillBackendSpec

CPU = PrefillBackendSpec(
    name="CPU",
    vllm_class="vllm.v1.attention.backends.mla.prefill.cpu_sdpa.CPUSDPAMLAPrefillBackend",
    summary="dense per-request PyTorch attention (the CPU platform's backend)",
    backend_name="CPU_SDPA_MLA",
)
