"""ZEN_CPU MLA prefill: zentorch's fused SDPA on AMD Zen CPUs.

Mirrors ``ZenCPUSDPAMLAPrefillBackend`` (vllm/v1/attention/backends/mla/prefill/zen_cpu_sdpa.py):
``is_available`` is ``has_zentorch_op(["zentorch_sdpa"])``, which is False
unless the platform is a Zen CPU, so never on CUDA.
"""

from __future__ import annotations

from attn_select.backends.mla.prefill.spec import PrefillBackendSpec

ZEN_CPU = PrefillBackendSpec(
    name="ZEN_CPU",
    vllm_class="vllm.v1.attention.backends.mla.prefill.zen_cpu_sdpa.ZenCPUSDPAMLAPrefillBackend",
    summary="zentorch fused SDPA (AMD Zen CPUs only)",
    backend_name="ZEN_CPU_SDPA_MLA",
    available_on_cuda=False,
)
