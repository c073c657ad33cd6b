"""A multimodal config's vision / audio / encoder sub-configs, checked as
transformers 5.20 builds them when vLLM 0.33.0 loads the config
(``SubConfigSpec.create_subconfig`` from ``PreTrainedConfig.__post_init__``).

Each non-text sub-config of the class (``hf_models.sub_configs``) is a
fixed class, or ``AutoConfig`` picking the class by the mapping's own
``model_type`` (its default type when the key is absent). The mapping must
be a dict or null (the class declares the field so); the class then checks its declared fields strictly (as
``hf_types`` does for text configs; an attribute_map alias is written after
the check and so not checked), turns a string dtype into ``getattr(torch,
...)``, and runs its ``validate_architecture``. A sub-config class not
described in transformers_models.txt is only resolved, not checked.
"""

from __future__ import annotations

from typing import Any, Mapping

from attn_select.selector.engines import VLLM_VERSION
from attn_select.selector.errors import UserError, shown
from attn_select.selector.model.hf_dtype import TORCH_DTYPES
from attn_select.selector.model.hf_models import SubClass, is_config_type, sub_class, sub_configs
from attn_select.selector.model.hf_types import check_fields, parse_spec


def check_subconfigs(raw: Mapping[str, Any] | None, model_type: str, where: str) -> None:
    """A user error for the first sub-config of ``raw`` (config.json as
    written) that transformers refuses to build for ``model_type``'s class."""
    if not isinstance(raw, Mapping):
        return
    for key, fixed, default in sub_configs(model_type):
        value = raw.get(key)
        if value is None:
            continue  # absent or null: the class builds it from its defaults
        if not isinstance(value, dict):
            # the class declares the field dict | PreTrainedConfig | None
            raise UserError(f"{where}: {key} is {shown(value)}; transformers (and so vLLM {VLLM_VERSION}) needs a "
                            f"mapping or null for it (StrictDataclassFieldValidationError: Validation error for field "
                            f"'{key}'): write a mapping")
        cls = sub_class(name=fixed) if fixed else auto_sub_class(value, key, default, where)
        if cls is not None:
            _check_built(value, cls, f"{where}: {key}")
        _check_dtype(value, f"{where}: {key}")


def auto_sub_class(value: dict[str, Any], key: str, default: str | None, where: str) -> SubClass | None:
    """AutoConfig's class for the mapping: CONFIG_MAPPING[its model_type]."""
    sub_type = value.get("model_type", default)
    if not sub_type:
        raise UserError(f"{where}: {key}.model_type is {shown(sub_type)}, so vLLM {VLLM_VERSION} cannot load the config "
                        f"(Cannot resolve `{key}`: no `model_type` found inputs or in `sub_configs_defaults`.); give "
                        f"the sub-config's model type{f' ({default})' if default else ''} or drop the field")
    if not isinstance(sub_type, str) or not is_config_type(sub_type):
        raise UserError(f"{where}: {key}.model_type is {shown(sub_type)}, which names no transformers config class "
                        f"(Unrecognized model type for subconfig: {shown(sub_type)}), so vLLM {VLLM_VERSION} cannot "
                        f"load the config; use a transformers model type{f' such as {default}' if default else ''}")
    return sub_class(model_type=sub_type)


def _check_built(value: dict[str, Any], cls: SubClass, where: str) -> None:
    check_fields(value, parse_spec(cls.spec), where)
    sizes = {**cls.defaults, **{k: value[k] for k in ("hidden_size", "num_attention_heads", "num_heads",
                                                      "embed_dim", "head_dim") if k in value}}
    for alias, target in cls.aliases.items():  # attribute_map writes after the declared fields
        if alias in value:
            sizes[target] = value[alias]
    if cls.hidden_over_heads:
        hidden, heads = sizes.get("hidden_size"), sizes.get("num_attention_heads")
        if isinstance(hidden, int) and isinstance(heads, int) and (heads == 0 or hidden % heads):
            raise UserError(f"{where}: The hidden size ({hidden}) is not a multiple of the number of attention heads "
                            f"({heads}) ({cls.name}.validate_architecture), so vLLM {VLLM_VERSION} cannot load the "
                            "config; fix hidden_size or num_attention_heads")
    if all(k in sizes for k in ("head_dim", "num_heads", "embed_dim")) and not _product_is(
            sizes["head_dim"], sizes["num_heads"], sizes["embed_dim"]):
        raise UserError(f"{where}: The embed_dim ({shown(sizes['embed_dim'])}) is not a multiple of the number of "
                        f"attention heads ({shown(sizes['num_heads'])}) (head_dim {shown(sizes['head_dim'])} x "
                        f"num_heads != embed_dim: PreTrainedConfig.validate_architecture), so vLLM {VLLM_VERSION} "
                        "cannot load the config; fix head_dim, num_heads or embed_dim")


def _product_is(head_dim: Any, heads: Any, embed_dim: Any) -> bool:
    """``head_dim * num_heads == embed_dim`` with Python's operators, without
    building a huge repeated string or list; an operation Python refuses
    (None * 16) counts as unequal: the validator raises either way."""
    numbers = (int, float)
    if isinstance(head_dim, numbers) and isinstance(heads, numbers):
        return head_dim * heads == embed_dim
    for seq, count in ((head_dim, heads), (heads, head_dim)):
        if isinstance(seq, (str, list)) and isinstance(count, int):
            n = max(count, 0)
            return type(embed_dim) is type(seq) and len(embed_dim) == len(seq) * n and embed_dim == seq * n
    return False


def _check_dtype(value: dict[str, Any], where: str) -> None:
    """PreTrainedConfig.__post_init__: a string dtype (or torch_dtype, when
    dtype is null) becomes getattr(torch, it)."""
    key = "dtype" if value.get("dtype") is not None else "torch_dtype"
    dtype = value.get(key)
    if isinstance(dtype, str) and dtype not in TORCH_DTYPES:
        raise UserError(f"{where}: {key} is {shown(dtype)}, which names no torch dtype (transformers reads it as "
                        f"getattr(torch, {dtype!r}): AttributeError), so vLLM {VLLM_VERSION} cannot load the config; "
                        "write a torch dtype name such as \"bfloat16\"")
