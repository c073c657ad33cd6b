"""The engine releases whose selection attn-select mirrors, written once.

Reports, the lockfile, help texts and error messages name the versions
through these constants, so moving to another release changes this file and
the facts, not a scattering of strings.
"""

VLLM = "vllm"
VLLM_VERSION = "0.33.0"

SGLANG = "sglang"
SGLANG_VERSION = "0.5.23"
