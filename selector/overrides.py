"""The what-if overrides, defined once: each field of ``Overrides`` carries
its type, its default and how it is given on the command line (``WhatIf``:
help text and help panel; the flag is the field's name), and vLLM's own
names for it: the ``vllm serve`` flags that set it (``-tp`` and
``--tensor-parallel-size`` for ``tp``) and the ``AttentionConfig`` field it
mirrors (``flash_attn_version``).

Everything else is built from this class: explain's flags (cli/options.py
turns each field into a typer option, vLLM's spellings as aliases), the
deployments file's ``overrides:`` fields and their vLLM-named keys
(selector/lock/deployments.py), ``--attention-config``'s fields and the
pasted ``vllm serve`` line (selector/vllm_names.py, selector/vllm_serve.py)
and the report's list of what was given. A new what-if is one field here
plus the code that reads it.

No ``from __future__ import annotations``: the ``Annotated`` metadata is read
at run time (``typing.get_type_hints(..., include_extras=True)``).
"""

import typing
from typing import Annotated, Callable, NamedTuple

from attn_select.selector.config import AttentionType
from attn_select.selector.vllm_names import parse_max_model_len

WHAT_IF_PANEL = "What-if overrides (vLLM's names)"
RAW_PANEL = "Raw AttentionSelectorConfig fields"


class WhatIf(NamedTuple):
    """How one ``Overrides`` field is given on the command line."""

    help: str | None = None  # None: the flag's name says it (the raw selector fields)
    panel: str = RAW_PANEL
    min: int | None = None  # the least value the flag takes (typer checks it)
    # vLLM 0.33.0's `vllm serve` flags for this value, where they are not
    # attn-select's own flag: aliases on the command line, and (the long
    # ones, snake_case) extra key names in a deployments file.
    vllm_flags: tuple[str, ...] = ()
    # The vLLM AttentionConfig field this value is (--attention-config's key).
    attention_config: str | None = None
    # Text -> value where vLLM reads more than the type's plain form (32k);
    # raises ValueError with the reason.
    parse: Callable[[str], object] | None = None


def _what_if(help: str, min: int | None = None, vllm_flags: tuple[str, ...] = (),
             attention_config: str | None = None, parse: Callable[[str], object] | None = None) -> WhatIf:
    return WhatIf(help, WHAT_IF_PANEL, min, vllm_flags, attention_config, parse)


_RAW = WhatIf()
_ATTN_TYPES = ", ".join(t.value for t in AttentionType)


class Overrides(NamedTuple):
    """What-if values, named after vLLM's fields and flags. None = not given."""

    dtype: Annotated[str | None, _what_if("vLLM --dtype: auto, half, float16, bfloat16, float, float32 (auto: the model's dtype, as vLLM resolves it for the GPU).")] = None
    kv_cache_dtype: Annotated[str | None, _what_if("vLLM --kv-cache-dtype (auto, fp8, fp8_e4m3, fp8_e5m2, nvfp4, ...).")] = None
    quantization: Annotated[str | None, _what_if(
        "vLLM --quantization (-q): a method name (fp8 online, fp8_per_tensor, awq_marlin, moe_wna16, ...), "
        "resolved against the checkpoint's quantization_config as vLLM does; it changes no attention-selection "
        "input, only the quantization refusals (mismatch, unknown, GPU capability, dtype).",
        vllm_flags=("--quantization", "-q"))] = None
    block_size: Annotated[int | None, _what_if("vLLM --block-size (user-specified, so it takes part in selection).")] = None
    backend: Annotated[str | None, _what_if("vLLM --attention-backend: validate this backend only, no fallback.",
                                            vllm_flags=("--attention-backend",), attention_config="backend")] = None
    tp: Annotated[int, _what_if("vLLM --tensor-parallel-size (-tp): heads per rank.", min=1,
                                vllm_flags=("--tensor-parallel-size", "-tp"))] = 1
    num_heads: Annotated[int | None, _what_if("Per-rank query heads passed to the MLA priority list.")] = None
    flash_attn_version: Annotated[int | None, _what_if("attention_config.flash_attn_version override (2, 3 or 4).",
                                                       attention_config="flash_attn_version")] = None
    use_trtllm_attention: Annotated[bool | None, _what_if("attention_config.use_trtllm_attention (default: auto).",
                                                          attention_config="use_trtllm_attention")] = None
    dcp_size: Annotated[int | None, _what_if("vLLM --decode-context-parallel-size (-dcp).",
                                             vllm_flags=("--decode-context-parallel-size", "-dcp"))] = None
    pcp_size: Annotated[int | None, _what_if("vLLM --prefill-context-parallel-size (-pcp).",
                                             vllm_flags=("--prefill-context-parallel-size", "-pcp"))] = None
    # vLLM reads it only after selection (buffer sizes); explain says so in a note.
    max_model_len: Annotated[int | None, _what_if("vLLM --max-model-len (32768, 32k, 32K, auto): it does not change the selection; above the model's maximum length vLLM refuses it.",
                                                  parse=parse_max_model_len)] = None
    mla_prefill_backend: Annotated[str | None, _what_if(
        "attention_config.mla_prefill_backend: validate this MLA prefill backend only, no fallback "
        "(FLASH_ATTN, FLASHINFER, TRTLLM_RAGGED, TOKENSPEED_MLA, ROCM_AITER_FA, CPU, ZEN_CPU, CUSTOM).",
        attention_config="mla_prefill_backend")] = None
    # Raw AttentionSelectorConfig fields; each replaces the derived value.
    head_size: Annotated[int | None, WhatIf("head_size.")] = None
    use_mla: Annotated[bool | None, _RAW] = None
    has_sink: Annotated[bool | None, _RAW] = None
    use_sparse: Annotated[bool | None, _RAW] = None
    use_mm_prefix: Annotated[bool | None, _RAW] = None
    use_per_head_quant_scales: Annotated[bool | None, _RAW] = None
    attn_type: Annotated[str | None, WhatIf(f"{_ATTN_TYPES}.")] = None
    has_sliding_window: Annotated[bool | None, _RAW] = None
    # also attention_config.use_non_causal, which vLLM passes to every layer
    use_non_causal: Annotated[bool | None, WhatIf(attention_config="use_non_causal")] = None
    use_batch_invariant: Annotated[bool | None, _RAW] = None
    use_kv_connector: Annotated[bool | None, _RAW] = None
    use_pcp: Annotated[bool | None, _RAW] = None
    use_adaptive_verification: Annotated[bool | None, _RAW] = None
    use_dcp: Annotated[bool | None, _RAW] = None
    use_rswa: Annotated[bool | None, _RAW] = None

    def given(self) -> dict[str, object]:
        """Overrides that were set, for the report and the lockfile."""
        out = {}
        for name, v in zip(self._fields, self):
            if name == "tp" and v == 1:
                continue
            if v is not None:
                out[name] = v
        return out


class Field(NamedTuple):
    """One ``Overrides`` field with everything the command line needs."""

    name: str
    type: object  # the value's type without the metadata, e.g. int | None
    default: object
    what_if: WhatIf

    @property
    def flag(self) -> str:
        """The flag explain takes for it, e.g. --kv-cache-dtype."""
        return "--" + self.name.replace("_", "-")

    @property
    def aliases(self) -> tuple[str, ...]:
        """vLLM's other spellings of the flag (-tp, --tensor-parallel-size)."""
        return tuple(f for f in self.what_if.vllm_flags if f != self.flag)

    @property
    def keys(self) -> tuple[str, ...]:
        """Its names in a deployments file: the field's, then vLLM's long
        flags in snake_case (tp, tensor_parallel_size)."""
        extra = [f[2:].replace("-", "_") for f in self.aliases if f.startswith("--")]
        return (self.name, *extra)

    @property
    def switch(self) -> bool:
        """An on/off value: given as --flag / --no-flag."""
        return bool in typing.get_args(self.type) or self.type is bool


def _fields() -> tuple[Field, ...]:
    hints = typing.get_type_hints(Overrides, include_extras=True)
    out = []
    for name in Overrides._fields:
        hint = hints[name]
        meta = [m for m in hint.__metadata__ if isinstance(m, WhatIf)]
        if len(meta) != 1:
            raise TypeError(f"Overrides.{name} needs exactly one WhatIf")
        out.append(Field(name, hint.__origin__, Overrides._field_defaults[name], meta[0]))
    return tuple(out)


FIELDS = _fields()


def field_for_flag(flag: str) -> Field | None:
    """The field a flag sets: attn-select's own (--tp) or vLLM's (-tp,
    --tensor-parallel-size)."""
    for f in FIELDS:
        if flag == f.flag or flag in f.what_if.vllm_flags:
            return f
    return None


# vLLM AttentionConfig field -> the Overrides field that mirrors it.
ATTENTION_CONFIG_FIELDS: dict[str, str] = {
    f.what_if.attention_config: f.name for f in FIELDS if f.what_if.attention_config
}
