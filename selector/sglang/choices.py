"""SGLang 0.5.23's value sets for the flags attn-select models
(``sglang/srt/arg_groups/choices.py`` and ``fields/``)."""

from __future__ import annotations

# ATTENTION_BACKEND_CHOICES, in SGLang's order: --attention-backend,
# --prefill-attention-backend and --decode-attention-backend accept these.
ATTENTION_BACKEND_CHOICES: tuple[str, ...] = (
    "triton", "torch_native", "flex_attention", "dsa", "nsa", "qsa", "dsv4", "compressed",
    "fa3", "fa4", "flashinfer", "llada2_cfg_flashinfer", "flashmla", "trtllm_mla", "cutedsl_mla",
    "tokenspeed_mla", "trtllm_mha", "hpc_ops", "minicpm_flashattn", "minicpm_flashinfer",
    "aiter", "wave", "intel_amx", "ascend", "intel_xpu",
)

# Deprecated spellings renamed by _handle_deprecated_args ("nsa" is not:
# it stays "nsa" through resolution and the backend registry maps it).
BACKEND_ALIASES = {"compressed": "dsv4", "tokenspeed_mla": "cutedsl_mla"}

# --kv-cache-dtype choices (fields/model.py), in SGLang's order.
KV_CACHE_DTYPES: tuple[str, ...] = (
    "auto", "fp8_e5m2", "fp8_e4m3", "mxfp8", "bf16", "bfloat16", "nvfp4", "fp4_mx_block16",
)

DETERMINISTIC_ATTENTION_BACKEND_CHOICES = ["ascend", "fa3", "fa4", "flashinfer", "intel_xpu", "triton"]
RADIX_SUPPORTED_DETERMINISTIC_ATTENTION_BACKEND = ["ascend", "fa3", "fa4", "triton"]

# SpeculativeAlgorithm members and the reserved alias (NEXTN -> EAGLE).
SPECULATIVE_ALGORITHMS = ("DFLASH", "UNO", "DSPARK", "EAGLE", "EAGLE3", "FROZEN_KV_MTP",
                          "STANDALONE", "NGRAM")
SPECULATIVE_ALIASES = ("NEXTN",)
# Those whose handlers attn-select mirrors; the others read a draft
# checkpoint or block-size settings at resolution time.
MODELLED_SPECULATIVE = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM")

# --speculative-ngram-max-bfs-breadth default (fields/spec.py)
NGRAM_MAX_BFS_BREADTH = 10

# attn-select's --kv-cache-dtype is vLLM's with --engine vllm. These are the
# values that mean the same cache in the other engine (vLLM's "fp8" is
# e4m3 on CUDA; SGLang's "bf16" is its spelling of bfloat16).
VLLM_TO_SGLANG_KV = {
    "auto": "auto", "bfloat16": "bfloat16", "fp8": "fp8_e4m3", "fp8_e4m3": "fp8_e4m3",
    "fp8_e5m2": "fp8_e5m2", "nvfp4": "nvfp4",
}
SGLANG_TO_VLLM_KV = {
    "auto": "auto", "bfloat16": "bfloat16", "bf16": "bfloat16", "fp8_e4m3": "fp8_e4m3",
    "fp8_e5m2": "fp8_e5m2", "nvfp4": "nvfp4",
}
