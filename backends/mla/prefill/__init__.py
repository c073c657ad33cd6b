"""The MLA prefill backends of vLLM 0.33.0 (vllm/v1/attention/backends/mla/prefill/),
one module per vLLM module; ``spec`` holds the declaration type and
``registry`` the enum order.

An MLA layer selects one of these for its prefill tokens after its
attention backend (selector/mla_prefill_select.py). Declarations only:
pure Python, no torch.
"""
