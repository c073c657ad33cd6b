"""Environment variables around vLLM's attention selection: the ones vLLM
0.33.0 reads that change what it selects, and the ones it no longer reads
although users still set them. Facts only (doctor lists them, explain warns);
the caller passes the environment in.

Where each is read in vLLM 0.33.0: ``vllm/envs.py`` declares them;
``v1/attention/selector.py`` puts VLLM_BATCH_INVARIANT into every
``AttentionSelectorConfig``; ``utils/flashinfer.py`` reads
VLLM_HAS_FLASHINFER_CUBIN, FLASHINFER_CUBINS_REPOSITORY and CUDA_HOME /
CUDA_PATH (``has_flashinfer``, ``has_nvidia_artifactory``);
``config/model.py`` reads VLLM_MLA_DISABLE (``use_mla``);
``v1/attention/backends/utils.py`` reads VLLM_KV_CACHE_LAYOUT.
"""

from __future__ import annotations

from typing import Mapping, NamedTuple

from attn_select.selector.engines import VLLM_VERSION


class SelectionVar(NamedTuple):
    """A variable vLLM reads that changes the selection or its inputs."""

    name: str
    effect: str  # what it does in vLLM, in words
    explain: str  # how to give explain the same input (explain reads no environment)


class RemovedVar(NamedTuple):
    """A variable older vLLM releases read and the mirrored release ignores."""

    name: str
    replacement: str  # what does the job now; {value} is the variable's value


SELECTION_VARS: tuple[SelectionVar, ...] = (
    SelectionVar(
        "VLLM_BATCH_INVARIANT",
        "1: every layer's selector config has use_batch_invariant=True, so only backends that support "
        "batch invariance stay valid, and FlashAttention 4 is not used",
        "--use-batch-invariant",
    ),
    SelectionVar(
        "VLLM_HAS_FLASHINFER_CUBIN",
        "1: FlashInfer's cubins count as pre-downloaded: has_flashinfer() needs no nvcc/ninja and "
        "has_nvidia_artifactory() is true without a network request (the trtllm-gen paths stay)",
        "--kernels with flashinfer,trtllm-cubins",
    ),
    SelectionVar(
        "FLASHINFER_CUBINS_REPOSITORY",
        "the URL has_nvidia_artifactory() requests (5 s timeout) when flashinfer-cubin is not installed; "
        "unreachable means no trtllm-gen attention (FLASHINFER falls back to its native kernels)",
        "--kernels without trtllm-cubins",
    ),
    SelectionVar(
        "CUDA_HOME",
        "where has_flashinfer() looks for nvcc first (then CUDA_PATH, nvcc on PATH, /usr/local/cuda): "
        "without cubins, FlashInfer counts as installed only with nvcc and ninja for its JIT",
        "--kernels without flashinfer",
    ),
    SelectionVar("CUDA_PATH", "read after CUDA_HOME to find nvcc for FlashInfer's JIT", "--kernels without flashinfer"),
    SelectionVar(
        "VLLM_MLA_DISABLE",
        "1: model_config.use_mla is False: MLA models (DeepSeek-V2/V3, Kimi-K2, ...) build MHA layers "
        "and select among the MHA backends",
        "not modelled: explain assumes it unset",
    ),
    SelectionVar(
        "VLLM_KV_CACHE_LAYOUT",
        "forces the KV-cache layout (NHD/HND or a 5-letter name); resolution raises when a selected "
        "backend does not support it",
        "not modelled: explain reports each backend's own layout",
    ),
    SelectionVar(
        "CUDA_VISIBLE_DEVICES",
        "which GPUs vLLM sees, hence the device capability it selects for",
        "--device / --capability (the live probe honours it)",
    ),
)

# Selection variables older releases read, with what replaced them. vLLM
# 0.33.0's envs.py defines none of them, so setting one changes nothing:
# create_engine_config's validate_environ only logs "Unknown vLLM environment
# variable detected" for it (and raises under --fail-on-environ-validation).
REMOVED_VARS: tuple[RemovedVar, ...] = (
    RemovedVar("VLLM_ATTENTION_BACKEND", "vllm serve --attention-backend {value} (attention_config.backend)"),
    RemovedVar("VLLM_FLASH_ATTN_VERSION", "--attention-config.flash_attn_version={value}"),
    RemovedVar("VLLM_USE_TRTLLM_ATTENTION", "--attention-config.use_trtllm_attention={value}"),
    RemovedVar("VLLM_FLASHINFER_DISABLE_Q_QUANTIZATION", "--attention-config.disable_flashinfer_q_quantization=true"),
    RemovedVar("VLLM_USE_TRTLLM_RAGGED_DEEPSEEK_PREFILL", "--attention-config.mla_prefill_backend=TRTLLM_RAGGED"),
    RemovedVar("VLLM_USE_CUDNN_PREFILL", "--attention-config.mla_prefill_backend=FLASH_ATTN|FLASHINFER|TRTLLM_RAGGED"),
    RemovedVar("VLLM_DISABLE_FLASHINFER_PREFILL", "--attention-config.mla_prefill_backend=FLASH_ATTN|FLASHINFER|TRTLLM_RAGGED"),
    RemovedVar("VLLM_FLASH_ATTN_MAX_NUM_SPLITS_FOR_CUDA_GRAPH",
               "--attention-config.flash_attn_max_num_splits_for_cuda_graph={value}"),
)

# How explain itself takes the backend of a removed variable, where it can.
_EXPLAIN_FLAG = {
    "VLLM_ATTENTION_BACKEND": "--attention-backend",
    "VLLM_FLASH_ATTN_VERSION": "--flash-attn-version",
    "VLLM_USE_TRTLLM_ATTENTION": "--use-trtllm-attention",
}


# An environment value is echoed whole up to this length: a CUDA_HOME path
# or a cubin mirror's URL (the default one is 89 characters) stays readable.
ENV_SHOWN_CHARS = 200


def shown_value(value: str, limit: int = ENV_SHOWN_CHARS) -> str:
    """A variable's value for a report line or a warning: as set when it is
    short and printable, else quoted with its control characters escaped
    (a newline or a terminal escape is no report line), and past ``limit``
    cut in the middle with its length said (a megabyte is no report line;
    both ends of a path or a URL tell most). The same text in every format:
    JSON's escaping would make it safe, but not short, and a reader who
    needs the raw value has the environment it came from."""
    if len(value) <= limit:
        return value if value.isprintable() else repr(value)
    half = limit // 2
    ends = value[:half] + "\u2026" + value[-half:]
    return f"{ends!r} ({len(value):,} characters)"


def removed_var_warnings(environ: Mapping[str, str]) -> tuple[str, ...]:
    """One warning per removed variable that is set: vLLM only logs it as unknown."""
    out = []
    for var in REMOVED_VARS:
        value = environ.get(var.name)
        if value is None:
            continue
        value = shown_value(value)
        text = (f"{var.name}={value} is set, but vLLM {VLLM_VERSION} no longer reads it: it logs \"Unknown vLLM "
                f"environment variable detected\" (an error under --fail-on-environ-validation) and goes on "
                f"without it; use {var.replacement.format(value=value)}")
        flag = _EXPLAIN_FLAG.get(var.name)
        if flag is not None:
            text += f" (explain: {flag} {value})"
        out.append(text)
    return tuple(out)


def unread_selection_vars(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The selection variables set here that explain does not read (it takes
    them as flags): a reminder per variable, so a mismatch is not silent."""
    out = []
    for name in ("VLLM_BATCH_INVARIANT", "VLLM_MLA_DISABLE", "VLLM_KV_CACHE_LAYOUT"):
        value = environ.get(name)
        if value is None or value in ("", "0"):
            continue
        var = next(v for v in SELECTION_VARS if v.name == name)
        value = shown_value(value)
        out.append(f"{name}={value} is set: vLLM reads it ({var.effect}); explain does not ({var.explain})")
    return tuple(out)
