"""vLLM 0.33.0's own spellings of the values attn-select takes, so that a
vLLM user's flags mean here what they mean to ``vllm serve``: the ``--dtype``
choices, the ``AttentionConfig`` field names, ``--max-model-len``'s
human-readable lengths, and how ``--attention-backend`` is read when it can
name a vLLM or an SGLang backend.

Leaf module: nothing here imports the selector, so ``overrides.py`` can
name these parsers in its field metadata.
"""

from __future__ import annotations

import re

from attn_select.selector.errors import UserError

# ModelConfig's ModelDType Literal (vllm/config/model.py), in vLLM's order:
# --dtype's choices.
VLLM_DTYPES: tuple[str, ...] = ("auto", "half", "float16", "bfloat16", "float", "float32")

# What each forces (torch's names without "torch."); "auto" forces nothing.
_FORCED_DTYPE = {"half": "float16", "float16": "float16", "bfloat16": "bfloat16",
                 "float": "float32", "float32": "float32"}


def dtype_error(value: str) -> str | None:
    """The one-line complaint about a --dtype value, or None when vLLM takes it."""
    if value in VLLM_DTYPES:
        return None
    from attn_select.selector.errors import shown

    return f"unknown dtype {shown(value)}; choose from {', '.join(VLLM_DTYPES)} (vLLM's --dtype)"


def forced_dtype(value: str | None) -> str | None:
    """The activation dtype a --dtype value forces; None for unset or
    "auto" (then the model's, as vLLM resolves it for the GPU)."""
    if value is None or value == "auto":
        return None
    return _FORCED_DTYPE.get(value, value)  # an unknown name stays, for the caller's error


# vllm/config/attention.py AttentionConfig's fields, in vLLM's order. The
# ones attn-select mirrors are named in Overrides' metadata (attention_config=).
VLLM_ATTENTION_CONFIG_FIELDS: tuple[str, ...] = (
    "backend", "minimax_m3_msa_decode_backend", "backend_per_kind", "flash_attn_version",
    "flash_attn_max_num_splits_for_cuda_graph", "tokenspeed_mla_min_split_kv",
    "tq_max_kv_splits_for_cuda_graph", "use_trtllm_attention", "disable_flashinfer_q_quantization",
    "mla_prefill_backend", "use_prefill_query_quantization", "trtllm_ragged_backend",
    "indexer_kv_dtype", "indexer_sparse_logits", "indexer_tp_shard_min_rows", "minimax_m3_indexer_cp",
    "hisparse_config", "use_non_causal", "sparse_mla_force_mqa", "sparse_mla_prefill_workspace_factor",
    "flex_attn_block_m", "flex_attn_block_n", "flex_attn_q_block_size", "flex_attn_kv_block_size",
)

_HUMAN_INT = re.compile(r"(\d+(?:\.\d+)?)([kKmMgGtT])")
_DECIMAL = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BINARY = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
# More digits than any context length; int() of a long digit string is
# quadratic, and vLLM's own int() stops at 4300 digits anyway.
_MAX_DIGITS = 20


def human_readable_int(text: str) -> int:
    """vLLM's human_readable_int (``--max-num-batched-tokens`` and others):
    2048, 2k (x1000), 2K (x1024), 2.5k; otherwise Python's int(), which takes
    1_000 and +5 too (at most 4300 digits, int()'s own limit). Raises
    ValueError."""
    value = str(text).strip()
    match = _HUMAN_INT.fullmatch(value)
    if match:
        number, suffix = match.groups()
        if suffix in _DECIMAL:
            return int(float(number) * _DECIMAL[suffix])
        if "." in number:
            raise ValueError(f"decimals are not allowed with binary suffixes like {suffix}; "
                             f"did you mean {number}{suffix.lower()}?")
        return int(number) * _BINARY[suffix]
    if len(value) > 4300:
        raise ValueError(f"{value[:40]!r}...: more than 4300 digits")
    return int(value)


def parse_max_model_len(text: str) -> int:
    """--max-model-len as vLLM reads it (human_readable_int_or_auto): 32768,
    32k (x1000), 32K (x1024), 25.6k; -1 or auto for vLLM's auto-fit.
    Raises ValueError with the reason."""
    value = str(text).strip()
    if value == "-1" or value.lower() == "auto":
        return -1
    bad = f"{value[:40]!r} is not a length; write it as 32768, 32k (x1000), 32K (x1024) or auto"
    if len(value) > _MAX_DIGITS:
        raise ValueError(bad)
    try:
        n = human_readable_int(value)
    except ValueError as exc:  # the binary-suffix decimal keeps its own reason
        raise ValueError(str(exc) if _HUMAN_INT.fullmatch(value) else bad) from None
    if n < 1:
        raise ValueError(f"max_model_len must be a positive integer or -1 (auto), got {n}")
    return n


def max_model_len_note(value: int) -> str:
    """Why --max-model-len changes nothing in the report. In vLLM 0.33.0's
    source, get_attn_backend, every validate_configuration, the priority
    lists and the engine-config steps attn-select replays never read
    max_model_len; metadata builders read it after selection."""
    shown = "auto" if value == -1 else str(value)
    return (f"--max-model-len {shown}: no effect on the selection (vLLM 0.33.0 reads it only after selecting: "
            "FlashInfer's and FlexAttention's page tables, MLA's chunked-prefill workspace, TurboQuant's buffers)")


def route_attention_backend(value: str | None, engine: str) -> tuple[str | None, str | None]:
    """--attention-backend -> (vLLM's backend, SGLang's backend).

    With --engine vllm it is vLLM's flag (an AttentionBackendEnum name, any
    case; "auto" is no choice, as vLLM's validator reads it); with
    --engine sglang it is SGLang's. With --engine both the spelling decides:
    upper case (vLLM's enum names: FLASHINFER) goes to vLLM, anything else
    to SGLang, whose names are all lower case (flashinfer).
    """
    if value is None:
        return None, None
    if engine == "sglang" or (engine == "both" and value != value.upper()):
        return None, value
    if value.lower() == "auto":  # vLLM: value.lower() == "auto", as written
        return None, None
    from attn_select.backends import registry
    from attn_select.selector.sglang.choices import ATTENTION_BACKEND_CHOICES

    if value.strip().upper() not in registry.BACKENDS and value in ATTENTION_BACKEND_CHOICES:
        raise UserError(f"--attention-backend {value!r} is an SGLang backend name; vLLM's are upper case "
                        "(FLASH_ATTN, FLASHINFER, ...); add --engine sglang or --engine both for SGLang's")
    return value, None


def may_be_command_line(model: str | None, rest: list[str] | None) -> bool:
    """Whether explain's MODEL and the arguments after it can be a pasted
    command line (words after MODEL, or MODEL with spaces in it): only then
    is the vllm serve parser (selector/vllm_serve.py) imported."""
    return bool(rest) or (model is not None and any(ch.isspace() for ch in model.strip()))
