"""The what-if overrides, defined once: each field of ``Overrides`` carries
its type, its default and how it is given on the command line (``WhatIf``:
help text and help panel; the flag is the field's name).

Everything else is built from this class: explain's flags (cli/options.py
turns each field into a typer option), the deployments file's ``overrides:``
fields (selector/lock/deployments.py) and the report's list of what was
given. A new what-if is one field here plus the code that reads it.

No ``from __future__ import annotations``: the ``Annotated`` metadata is read
at run time (``typing.get_type_hints(..., include_extras=True)``).
"""

import typing
from typing import Annotated, NamedTuple

from attn_select.selector.config import AttentionType

WHAT_IF_PANEL = "What-if overrides (vLLM's names)"
RAW_PANEL = "Raw AttentionSelectorConfig fields"


class WhatIf(NamedTuple):
    """How one ``Overrides`` field is given on the command line."""

    help: str | None = None  # None: the flag's name says it (the raw selector fields)
    panel: str = RAW_PANEL
    min: int | None = None  # the least value the flag takes (typer checks it)


def _what_if(help: str, min: int | None = None) -> WhatIf:
    return WhatIf(help, WHAT_IF_PANEL, min)


_RAW = WhatIf()
_ATTN_TYPES = ", ".join(t.value for t in AttentionType)


class Overrides(NamedTuple):
    """What-if values, named after vLLM's fields and flags. None = not given."""

    dtype: Annotated[str | None, _what_if("Activation dtype: bfloat16, float16, float32.")] = None
    kv_cache_dtype: Annotated[str | None, _what_if("vLLM --kv-cache-dtype (auto, fp8, fp8_e4m3, fp8_e5m2, nvfp4, ...).")] = None
    block_size: Annotated[int | None, _what_if("vLLM --block-size (user-specified, so it takes part in selection).")] = None
    backend: Annotated[str | None, _what_if("vLLM --attention-backend: validate this backend only, no fallback.")] = None
    tp: Annotated[int, _what_if("Tensor-parallel size: heads per rank.", min=1)] = 1
    num_heads: Annotated[int | None, _what_if("Per-rank query heads passed to the MLA priority list.")] = None
    flash_attn_version: Annotated[int | None, _what_if("attention_config.flash_attn_version override (2, 3 or 4).")] = None
    use_trtllm_attention: Annotated[bool | None, _what_if("attention_config.use_trtllm_attention (default: auto).")] = None
    dcp_size: Annotated[int | None, _what_if("Decode context parallel size.")] = None  # --decode-context-parallel-size
    mla_prefill_backend: Annotated[str | None, _what_if(
        "attention_config.mla_prefill_backend: validate this MLA prefill backend only, no fallback "
        "(FLASH_ATTN, FLASHINFER, TRTLLM_RAGGED, TOKENSPEED_MLA, ROCM_AITER_FA, CPU, ZEN_CPU, CUSTOM).")] = None
    # Raw AttentionSelectorConfig fields; each replaces the derived value.
    head_size: Annotated[int | None, WhatIf("head_size.")] = None
    use_mla: Annotated[bool | None, _RAW] = None
    has_sink: Annotated[bool | None, _RAW] = None
    use_sparse: Annotated[bool | None, _RAW] = None
    use_mm_prefix: Annotated[bool | None, _RAW] = None
    use_per_head_quant_scales: Annotated[bool | None, _RAW] = None
    attn_type: Annotated[str | None, WhatIf(f"{_ATTN_TYPES}.")] = None
    has_sliding_window: Annotated[bool | None, _RAW] = None
    use_non_causal: Annotated[bool | None, _RAW] = None
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
