"""The ``dtype`` attribute every transformers config object ends up with
(``PreTrainedConfig.__post_init__``, transformers 5.x), from config.json's
``dtype`` and its legacy alias ``torch_dtype``.

Neither is type-checked: ``dtype`` is declared ``str | torch.dtype | None``
on the base class but not validated, and ``torch_dtype`` is a plain keyword.
``torch_dtype`` is used only when ``dtype`` is null or absent; a string then
becomes ``getattr(torch, value)`` (so ``"int8"`` is ``torch.int8``, and
``"fp8"``, ``"torch.float16"`` or ``"FLOAT16"`` raise AttributeError: the
config never loads); a list makes the config fail to load (IndexError);
any other value (``7``, ``true``, ``{}``, ``32.0``) stays as written, and
vLLM's ``_resolve_auto_dtype`` then finds it among no supported dtype and
runs the platform's preferred one.
"""

from __future__ import annotations

from typing import Any, Mapping

from attn_select.selector.errors import UserError, shown

# torch 2.14's attributes that are a torch.dtype, alias -> canonical name
# ([n for n in dir(torch) if isinstance(getattr(torch, n), torch.dtype)])
_CANONICAL = {"half": "float16", "float": "float32", "double": "float64", "cfloat": "complex64",
              "cdouble": "complex128", "chalf": "complex32", "short": "int16", "int": "int32", "long": "int64"}
TORCH_DTYPES = frozenset({
    "bcomplex32", "bfloat16", "bit", "bits16", "bits1x8", "bits2x4", "bits4x2", "bits8", "bool", "complex128",
    "complex32", "complex64", "float16", "float32", "float4_e2m1fn_x2", "float64", "float8_e4m3fn",
    "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "int1", "int16", "int2", "int3",
    "int32", "int4", "int5", "int6", "int64", "int7", "int8", "qint32", "qint8", "quint2x4", "quint4x2",
    "quint8", "uint1", "uint16", "uint2", "uint3", "uint32", "uint4", "uint5", "uint6", "uint64", "uint7",
    "uint8", *_CANONICAL})


class NotADtype(str):
    """A config dtype that is no torch dtype (``7``, ``true``, ``{}``): shown
    as written; vLLM falls back to the preferred dtype under --dtype auto."""


def config_dtype(given: Mapping[str, Any], where: str) -> str | None:
    """The torch dtype name the config object's ``dtype`` holds (canonical:
    ``half`` is ``float16``), a ``NotADtype`` for a value that is none, or
    None; a user error where transformers cannot load the config."""
    key = "dtype" if given.get("dtype") is not None else "torch_dtype"
    value = given.get(key)
    if value is None:
        return None
    if isinstance(value, list):
        raise UserError(f"{where}: {key} is a list; transformers (and so vLLM) cannot load a config whose dtype "
                        "is a list (IndexError): write one dtype name, such as \"bfloat16\"")
    if isinstance(value, str):
        if value not in TORCH_DTYPES:
            raise UserError(f"{where}: {key} is {shown(value)}, which names no torch dtype (transformers reads it as "
                            f"getattr(torch, {value!r}), so vLLM cannot load the config): write a torch dtype "
                            "name such as \"bfloat16\", \"float16\" or \"float32\"")
        return _CANONICAL.get(value, value)
    return NotADtype(shown(value))
