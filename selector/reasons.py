"""Every reason and error text vLLM 0.33.0's selection can produce, written
once. Leaf module. Fixed strings are constants; templated ones are small
functions. Backend-specific ``supports_combination`` strings live next to
the backend that returns them (backends/<family>.py), since each is used once.
"""

from __future__ import annotations

# AttentionBackend.validate_configuration (vllm/v1/attention/backend.py), in check order.
HEAD_SIZE = "head_size not supported"
DTYPE = "dtype not supported"
KV_CACHE_DTYPE = "kv_cache_dtype not supported"
BLOCK_SIZE = "block_size not supported"
MM_PREFIX = "partial multimodal token full attention not supported"
MLA = "MLA not supported"
NON_MLA = "non-MLA not supported"
SINK = "attention sinks not supported"
SPARSE = "sparse not supported"
NON_SPARSE = "non-sparse not supported"
PER_HEAD_QUANT_SCALES = "per-head quant scales not supported"
COMPUTE_CAPABILITY = "compute capability not supported"
SLIDING_WINDOW = "sliding window not supported"
RSWA = "R-SWA not supported"
NON_CAUSAL = "non-causal attention not supported"
NON_CAUSAL_MLA_DCP = "non-causal MLA attention with DCP not supported"
BATCH_INVARIANCE = "batch invariance not supported"
KV_CONNECTOR = "KV connector not supported"
PCP = "PCP not supported"
DCP = "DCP not supported"
QUERY_LENS_MISMATCH = (
    "device-cpu query lens mismatch not supported, "
    "this is needed for adaptive verification"
)


def attn_type(attn_type: str) -> str:
    """validate_configuration: f"attention type {attn_type} not supported",
    with the enum member as vLLM formats it ("AttentionType.ENCODER")."""
    from attn_select.selector.config import attn_type_text

    return f"attention type {attn_type_text(attn_type)} not supported"


def import_failure(exc_type: str, message: str) -> str:
    """CudaPlatformBase.get_valid_backends: f"{type(e).__name__}: {e}"."""
    return f"{exc_type}: {message}"


# CudaPlatformBase.get_attn_backend_cls (vllm/platforms/cuda.py)
def selected_invalid(backend_name: str, reasons: list[str]) -> str:
    """An explicit backend that fails validation. vLLM formats the enum
    member (``AttentionBackendEnum.NAME``) and the reasons list's repr."""
    return (
        f"Selected backend AttentionBackendEnum.{backend_name} is not valid for "
        f"this configuration. Reason: {reasons!r}"
    )


def selected_import_failure(backend_name: str, reason: str) -> str:
    """An explicit backend whose class failed to import."""
    return (
        f"Selected backend AttentionBackendEnum.{backend_name} is not valid for "
        f"this configuration. Reason: [{reason}]"
    )


def no_valid_backend(config_repr: str, invalid: list[tuple[str, list[str]]]) -> str:
    """Nothing valid: vLLM joins reasons without quotes, backends in priority order."""
    reasons_str = (
        "{" + ", ".join(f"{name}: [{', '.join(r)}]" for name, r in invalid) + "}"
    )
    return (
        f"No valid attention backend found for cuda with {config_repr}. "
        f"Reasons: {reasons_str}."
    )


def block_size_precluded(block_size: int, names: list[str], selected: str) -> str:
    """The warning vLLM logs when --block-size alone excluded better backends."""
    return (
        f"--block-size {block_size} precluded higher-priority backend(s) "
        f"{', '.join(names)}. Using {selected} instead, which may result in reduced "
        "performance. Consider removing --block-size to auto-select the optimal "
        "block size."
    )


# AttentionBackendEnum metaclass __getitem__ (registry.py)
def unknown_backend(name: str, valid: list[str]) -> str:
    return f"Unknown attention backend: '{name}'. Valid options are: {', '.join(valid)}"


# --- MLA prefill backends (vllm/v1/attention/backends/mla/prefill/) ----------
# MLAPrefillBackend.validate_configuration (prefill/base.py), in check order.
# Its texts are its own: the capability and dtype are spelled out, unlike the
# attention backends' fixed strings above.
PREFILL_NO_CAPABILITY = "device capability not available"
PREFILL_DEPENDENCIES = "required dependencies not available"
# What get_mla_prefill_backend_cls and the explicit path record when the
# backend's module raises ImportError: the bare word, not "Type: message".
PREFILL_IMPORT_ERROR = "ImportError"


def prefill_compute_capability(major: int, minor: int) -> str:
    return f"compute capability {major}.{minor} not supported"


def prefill_dtype(dtype: str) -> str:
    """f"dtype {selector_config.dtype} not supported", a torch dtype."""
    return f"dtype torch.{dtype} not supported"


def prefill_mla_dimensions(got: object, supported: tuple[object, ...]) -> str:
    """The dims reason. The supported list is appended only when the backend
    declares it as ``supported_mla_dimensions`` (FLASH_ATTN overrides the
    predicate instead, so its reason has no list)."""
    text = f"Model does not have supported MLA dimensions (got {got}"
    if supported:
        text += "; supported: " + ", ".join(str(d) for d in supported)
    return text + ")"


# get_mla_prefill_backend (prefill/selector.py): an explicit
# attention_config.mla_prefill_backend that fails validation; vLLM prints
# the enum member's name and the reasons list's repr.
def mla_prefill_selected_invalid(name: str, reasons: list[str]) -> str:
    return (
        f"Selected MLA prefill backend {name} is not valid for this configuration. "
        f"Reason: {reasons!r}"
    )


def mla_prefill_unregistered(name: str) -> str:
    """MLAPrefillBackendEnum.get_path for CUSTOM with nothing registered (a
    ValueError the selector does not catch)."""
    return (
        f"MLA prefill backend {name} must be registered before use. "
        f"Use register_mla_prefill_backend(MLAPrefillBackendEnum.{name}, "
        "'your.module.YourClass')"
    )


def no_valid_mla_prefill_backend(config_repr: str, invalid: list[tuple[str, list[str]]]) -> str:
    """Platform.get_mla_prefill_backend_cls (platforms/interface.py) when no
    candidate is valid: reasons joined without quotes, in priority order."""
    reasons_str = "{" + ", ".join(f"{name}: [{', '.join(r)}]" for name, r in invalid) + "}"
    return f"No valid MLA prefill backend found with {config_repr}. Reasons: {reasons_str}."


# MLAAttention.__init__ (model_executor/layers/attention/mla_attention.py):
# the two warnings with which a sparse layer goes without a prefill backend.
SPARSE_NO_DENSE_PREFILL = (
    "Sparse MLA layer has no dense-MHA prefill path; using the top-k MQA path only."
)
SPARSE_NO_PREFILL_BACKEND = (
    "No MLA prefill backend supports this model; sparse MLA will use the top-k MQA "
    "path only (no dense-MHA prefill)."
)
