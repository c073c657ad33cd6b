"""Whether an engine's get_config finds a config class for config.json, and
when it needs --trust-remote-code: vLLM 0.33.0's HFConfigParser and SGLang
0.5.23's HfModelConfigParser both end in transformers' AutoConfig.

AutoConfig.from_pretrained takes auto_map's remote AutoConfig when
config.json's model_type has no class of its own (CONFIG_MAPPING, with the
engine's registrations); untrusted, resolve_trust_remote_code then raises, and
a model type with neither class is refused with --trust-remote-code too.
Trusted, a remote AutoConfig is loaded in place of transformers' own class
(the module file must load), and attn-select reads config.json's fields as
given. The engines differ in what counts as their own class:
- vLLM builds its _CONFIG_REGISTRY's classes itself (it never passes trust for
  them), and LongCat's by architecture when a config has no model_type;
- SGLang registers its registry with AutoConfig and calls AutoConfig for
  every config (so a trusted remote class is loaded first, whatever the
  type), except LongCat's architectures and the raw state-spaces Mamba shape,
  and installs transformers 5.19, not 5.20 (sglang_config_types).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from attn_select.selector.engines import SGLANG_VERSION, VLLM_VERSION
from attn_select.selector.errors import UserError, shown
from attn_select.selector.model.hf_models import (
    VLLM_CONFIG_REGISTRY,
    is_config_type,
    top_level_config_type,
)
from attn_select.selector.model.hf_read_only_keys import READ_ONLY_KEYS
from attn_select.selector.model.remote_code import remote_module_problem
from attn_select.selector.model.sglang_config_types import NOT_IN_SGLANG, ONLY_IN_SGLANG, SGLANG_OWN_CLASSES


class ConfigLoader(NamedTuple):
    """One engine's way from config.json to a config class."""

    name: str  # "vLLM"
    version: str
    transformers: str  # the release the engine installs
    has_class: Callable[[str], bool]  # model_type in AutoConfig's CONFIG_MAPPING, with the engine's registrations
    own_classes: frozenset[str]  # model types built from the engine's class even where auto_map names a remote one
    by_architecture: Callable[[dict], bool]  # configs built from the engine's class without AutoConfig
    # model types whose class here is not vLLM's, which READ_ONLY_KEYS was read from
    not_vllms_class: frozenset[str] = frozenset()


# get_config's _ARCHITECTURE_TO_MODEL_TYPE: a config with no model_type gets its class from the architecture
_VLLM_ARCH_TYPES = {"LongcatFlashForCausalLM": "longcat_flash", "LongcatFlashNgramForCausalLM": "longcat_flash"}
# SGLang's _try_load_longcat_config: any of these architectures loads its LongCat class
_SGLANG_LONGCAT = frozenset({"LongcatCausalLM", "LongcatFlashForCausalLM", "LongcatFlashNgramForCausalLM"})


def _vllm_by_architecture(data: dict) -> bool:
    archs = data.get("architectures")
    first = archs[0] if isinstance(archs, list) and archs and isinstance(archs[0], str) else None
    model_type = data.get("model_type")
    return (model_type is None and first in _VLLM_ARCH_TYPES) or model_type in _VLLM_ARCH_TYPES.values()


def _sglang_by_architecture(data: dict) -> bool:
    archs = data.get("architectures") or []
    if isinstance(archs, list) and any(isinstance(a, str) and a in _SGLANG_LONGCAT for a in archs):
        return True
    # _try_load_raw_mamba_config: state-spaces' own Mamba checkpoints name neither type nor architecture
    return not data.get("model_type") and not data.get("architectures") and "d_model" in data and "ssm_cfg" in data


def _sglang_has_class(model_type: str) -> bool:
    return model_type in ONLY_IN_SGLANG or (is_config_type(model_type) and model_type not in NOT_IN_SGLANG)


VLLM_LOADER = ConfigLoader("vLLM", VLLM_VERSION, "5.20", top_level_config_type, VLLM_CONFIG_REGISTRY,
                           _vllm_by_architecture)
SGLANG_LOADER = ConfigLoader("SGLang", SGLANG_VERSION, "5.19", _sglang_has_class, frozenset(),
                             _sglang_by_architecture, VLLM_CONFIG_REGISTRY | SGLANG_OWN_CLASSES)


def _remote_config_loads(auto_map: dict, where: str, code_folder: Path | None, loader: ConfigLoader) -> None:
    """Trusted, transformers loads auto_map's AutoConfig from the model folder,
    and the engine lets its failure through: a module file that is not there
    (OSError), not Python (SyntaxError) or without the class (AttributeError)."""
    ref = auto_map.get("AutoConfig")
    problem = remote_module_problem(ref, code_folder)
    if problem:
        raise UserError(f"{where}: {problem} (config.json's auto_map names the remote AutoConfig {shown(ref)}, "
                        f"which {loader.name} {loader.version} loads from the model folder with "
                        f"--trust-remote-code); put a {str(ref).split('.')[0]}.py that defines it beside config.json, "
                        "or leave AutoConfig out of auto_map")


def check_config_class(data: object, where: str, trust_remote_code: bool, code_folder: Path | None,
                       loader: ConfigLoader = VLLM_LOADER) -> str | None:
    """Refuse a config.json ``loader``'s engine cannot load a class for (a
    UserError in the engine's and transformers' words); with
    --trust-remote-code, a note that the remote class stands in, or None."""
    if not isinstance(data, dict) or loader.by_architecture(data):
        return None
    model_type = data.get("model_type")
    auto_map = data.get("auto_map")
    remote = isinstance(auto_map, (dict, list, str)) and "AutoConfig" in auto_map
    engine = f"{loader.name} {loader.version}"
    if remote and not isinstance(auto_map, dict):
        try:
            auto_map["AutoConfig"]  # type: ignore[index]
        except TypeError as exc:  # AutoConfig.from_pretrained reads the class reference so, whatever the model type
            raise UserError(f"{where}: auto_map is {shown(auto_map)}, not a mapping: transformers' AutoConfig reads "
                            f"auto_map['AutoConfig'] from it, which fails (TypeError: {exc}), so {engine} cannot "
                            "load the config; write auto_map as a mapping of auto classes to 'module.Class' "
                            "references, or leave it out") from None
    if isinstance(model_type, str) and model_type and loader.has_class(model_type):
        if remote and trust_remote_code and isinstance(auto_map, dict) and model_type not in loader.own_classes:
            _remote_config_loads(auto_map, where, code_folder, loader)
            return (f"with --trust-remote-code transformers loads auto_map's remote AutoConfig "
                    f"({shown(auto_map.get('AutoConfig'))}) in place of its own class for model_type {model_type}; "
                    "attn-select reads config.json through transformers' class, taking the remote one to read the "
                    "same fields")
        return None
    if remote and not trust_remote_code:
        ref = auto_map.get("AutoConfig") if isinstance(auto_map, dict) else None
        named = f", {ref}" if isinstance(ref, str) else ""
        what = (f"model_type {model_type}" if isinstance(model_type, str) and model_type
                else "a config with no model_type")
        raise UserError(f"{where}: The repository contains custom code which must be executed to correctly load the "
                        f"model (config.json's auto_map names a remote AutoConfig{named}, and {what} has no config "
                        f"class in transformers {loader.transformers} or {engine}); {loader.name} runs it only with "
                        "trust_remote_code: pass --trust-remote-code (attn-select runs no model code either way, and "
                        "then reads config.json's fields as given)")
    if not isinstance(model_type, str) or not model_type:
        return None
    if remote:
        if isinstance(auto_map, dict):
            _remote_config_loads(auto_map, where, code_folder, loader)
        return (f"model_type {model_type} has no config class in transformers {loader.transformers} or {engine}: "
                f"with --trust-remote-code {loader.name} loads auto_map's remote AutoConfig; its fields are read here "
                "as config.json gives them")
    raise UserError(f"{where}: The checkpoint you are trying to load has model type `{model_type}` but Transformers "
                    f"does not recognize this architecture (neither transformers {loader.transformers}, which "
                    f"{engine} installs, nor {loader.name} has a config class for it, and config.json's auto_map "
                    "names no remote AutoConfig)")


def check_read_only_keys(data: object, where: str, loader: ConfigLoader = VLLM_LOADER) -> None:
    """transformers' from_dict sets every config.json key on the config
    object: one the class computes as a read-only property (FalconConfig's
    head_dim) fails to load. The classes are vLLM's for the model type
    (SGLang's transformers 5.19 has the same properties on the types both
    know); not a remote class that stands in for one."""
    if not isinstance(data, dict) or not isinstance(data.get("model_type"), str):
        return
    if data["model_type"] in loader.not_vllms_class:
        return
    cls, keys = READ_ONLY_KEYS.get(data["model_type"], ("", ()))
    for key in keys:
        if key in data:
            raise UserError(f"{where}: config.json sets {key}, which {cls} computes itself (a read-only property), so "
                            f"transformers cannot load the config (AttributeError: property {key!r} of {cls!r} "
                            f"object has no setter) and {loader.name} {loader.version} refuses it; leave {key} out")
