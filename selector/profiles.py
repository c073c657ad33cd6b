"""Built-in model and device profiles (YAML under ``profiles/``), and the
one entry point that turns a MODEL argument into ``ModelFacts``.

Only the one profile file asked for is read and parsed; listing names only
lists the folder. A model profile holds a ``config:`` mapping in config.json
form, so profiles and files go through the same parser (selector/model/).
"""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path
from typing import Any, NamedTuple

from pydantic_core import SchemaValidator, ValidationError
from pydantic_core import core_schema as cs

import attn_select.profiles as _profiles_pkg
from attn_select.selector.config import Capability
from attn_select.selector.device import Device
from attn_select.selector.errors import UserError, cut, shown
from attn_select.selector.model_facts import ModelFacts

PROFILES_DIR = Path(_profiles_pkg.__file__).resolve().parent
MODELS_DIR = PROFILES_DIR / "models"
DEVICES_DIR = PROFILES_DIR / "devices"


# The profile schemas, checked with pydantic-core directly (see
# selector/model/raw.py for why not a BaseModel on this path). Unknown keys
# are errors: a typo in a profile must not pass silently.
def _field(schema: cs.CoreSchema, required: bool = False) -> cs.TypedDictField:
    return cs.typed_dict_field(schema if required else cs.nullable_schema(schema), required=required)


def _model_profile_schema() -> cs.CoreSchema:
    """profiles/models/<name>.yaml"""
    return cs.typed_dict_schema({
        "source": _field(cs.str_schema(), required=True),  # Hugging Face repo the config values come from
        "description": _field(cs.str_schema()),
        # dtype of the published weights, for configs that name none (vLLM
        # then reads it from the safetensors headers, which a profile cannot)
        "weights_dtype": _field(cs.str_schema()),
        "config": _field(cs.dict_schema(cs.str_schema(), cs.any_schema()), required=True),
    }, extra_behavior="forbid", cls_name="ModelProfile")


def _device_profile_schema() -> cs.CoreSchema:
    """profiles/devices/<name>.yaml"""
    return cs.typed_dict_schema({
        "name": _field(cs.str_schema(), required=True),  # as torch.cuda.get_device_name reports it
        "capability": _field(cs.str_schema(), required=True),  # "9.0"
        "memory_gib": _field(cs.float_schema(gt=0), required=True),
        "bandwidth_tbs": _field(cs.float_schema(gt=0), required=True),  # peak memory bandwidth, TB/s
        "source": _field(cs.str_schema()),  # where the numbers come from
        # CUDA version the engine's torch was built with (SGLang's Hopper and
        # Blackwell rules compare it): the default for --cuda-version.
        "cuda_version": _field(cs.str_schema()),
    }, extra_behavior="forbid", cls_name="DeviceProfile")


def _names(folder: Path) -> list[str]:
    return sorted(p.stem for p in folder.glob("*.yaml"))


def model_profile_names() -> list[str]:
    return _names(MODELS_DIR)


def device_profile_names() -> list[str]:
    return _names(DEVICES_DIR)


def _key(name: str) -> str:
    """Spelling-insensitive key: "RTX-4090", "rtx_4090" and "rtx4090" match."""
    return "".join(ch for ch in name.lower() if ch.isalnum() or ch == ".")


def has_model_profile(name: str) -> bool:
    """Whether a built-in model profile has this name (any spelling), or
    comes from this Hugging Face repo id."""
    wanted = _key(name)
    return any(_key(c) == wanted for c in model_profile_names()) or (
        is_hub_id(name) and _profile_for_repo(name) is not None)


def _find(name: str, folder: Path, kind: str, also: str = "") -> Path:
    """The profile file of ``name``; else a user error with the closest
    name (``also`` says what else was looked for)."""
    names = _names(folder)
    wanted = _key(name)
    for candidate in names:
        if _key(candidate) == wanted:
            return folder / f"{candidate}.yaml"
    import difflib

    close = difflib.get_close_matches(name.strip().lower(), names, n=1, cutoff=0.5) if len(name) < 100 else []
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise UserError(f"unknown {kind} profile {shown(name)}{also}; {hint}profiles: {', '.join(names)}")


def _load_yaml(path: Path) -> Any:
    from attn_select.selector import safe_yaml

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read profile {path}: {exc}") from None
    return safe_yaml.load(text, str(path))[0]


def _validate(schema: cs.CoreSchema, data: Any, path: Path) -> dict[str, Any]:
    try:
        return SchemaValidator(schema).validate_python(data)
    except ValidationError as exc:
        # here, not at the top: loading a device profile needs no config parser
        from attn_select.selector.model.raw import first_error

        loc, msg, _ = first_error(exc, data)
        raise UserError(f"{path}: field {loc or '(top level)'!r}: {msg}") from None


def load_device(name: str) -> Device:
    path = _find(name, DEVICES_DIR, "device")
    prof = _validate(_device_profile_schema(), _load_yaml(path), path)
    try:
        cap = Capability.parse(prof["capability"])
    except ValueError:
        raise UserError(f"{path}: capability {prof['capability']!r} is not X.Y") from None
    return Device(
        name=prof["name"], capability=cap, memory_gib=prof["memory_gib"], bandwidth_tbs=prof["bandwidth_tbs"],
        source=f"profile {path.stem}", profile=path.stem, cuda_version=prof.get("cuda_version"),
    )


def load_model_profile(name: str, also: str = "") -> tuple[str, dict[str, Any]]:
    """(profile name, validated profile: source, config, weights_dtype ...)."""
    path = _find(name, MODELS_DIR, "model", also)
    return path.stem, _validate(_model_profile_schema(), _load_yaml(path), path)


def _profile_for_repo(repo: str) -> str | None:
    """A built-in profile whose ``source:`` is this Hugging Face repo id
    (matched on the raw text, no YAML parsing)."""
    wanted = repo.strip().lower()
    for path in sorted(MODELS_DIR.glob("*.yaml")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("source:"):
                if line.split(":", 1)[1].strip().strip("'\"").lower() == wanted:
                    return path.stem
                break
    return None


def load_model(
    spec: str,
    *,
    tp: int = 1,
    dtype: str = "auto",
    capability: Capability | None = None,
    mm_inputs: bool = True,
    disable_sliding_window: bool = False,
    revision: str | None = None,
    cache_dir: str | None = None,
    engine: str = "vllm",
    trust_remote_code: bool = False,
) -> ModelFacts:
    """MODEL -> ModelFacts. ``spec`` is a profile name, a config.json, or a
    folder holding one; a Hugging Face repo id in the local cache (or its
    ``models--org--name`` folder) is read from the cached snapshot of
    ``revision``; an id that is not cached but matches a profile's source
    uses that profile (nothing is downloaded).

    ``dtype`` is vLLM's --dtype and ``capability`` the target GPU (the
    "auto" dtype depends on it; None assumes >= 8.0). ``cache_dir`` is
    vLLM's --download-dir (default: the hub cache, selector/hub_cache.py).
    ``engine`` "sglang": facts for SGLang's resolution only (model_facts).
    ``trust_remote_code``: vLLM's --trust-remote-code (model_facts).
    """
    from attn_select.selector import model as parser

    options = dict(tp=tp, dtype=dtype, capability=capability, mm_inputs=mm_inputs,
                   disable_sliding_window=disable_sliding_window, engine=engine,
                   trust_remote_code=trust_remote_code)
    text = spec.strip()
    if not text:
        raise UserError("empty MODEL; give a profile name, a config.json or a model folder")
    try:
        path = Path(text).expanduser()
    except RuntimeError:  # "~someone/x" for a user this machine does not know
        raise UserError(f"{cut(text)}: no such user's home folder; pass a config.json, a model folder or a "
                        "profile name") from None
    state = _local_path_state(path, text)  # a user error for a path that is there but unusable
    from attn_select.selector import hub_cache

    cached = hub_cache.find_cached(text, revision, cache_dir)
    if cached is not None:
        return parser.facts_from_path(cached, name=spec, from_hub_cache=True, **options)
    if state == "exists":
        return parser.facts_from_path(path, name=spec, **options)
    if is_hub_id(text):
        matched = _profile_for_repo(text)
        if matched is not None:
            return _facts_from_profile(matched, options, revision)
        raise UserError(
            f"{shown(spec)} is not a local file or folder, nor in the Hugging Face cache "
            f"({cache_dir or hub_cache.cache_dir()}), and no built-in profile comes from that repo; "
            f"fetch only its config with: {hub_cache.fetch_hint(text, revision)}"
        )
    if looks_like_path(text):
        raise UserError(f"{cut(text)}: no such file or folder; pass a config.json, a model folder or a profile name")
    return _facts_from_profile(text, options, revision)


# huggingface_hub's validate_repo_id: "org/name" of word characters, '-'
# and '.', no '--' or '..', at most 96 characters.
_HUB_ID = re.compile(r"[\w.-]+/[\w.-]+")


def is_hub_id(text: str) -> bool:
    """Whether MODEL reads as a Hugging Face repo id ("org/name") rather
    than a path ("model/", "./x", "a/b/c", "x.json")."""
    return (len(text) <= 96 and _HUB_ID.fullmatch(text) is not None and "--" not in text
            and ".." not in text and not text.endswith(".json"))


def looks_like_path(text: str) -> bool:
    """A MODEL that is no profile name: it has a separator, or is a .json or a '.'/'~' path."""
    return "/" in text or "\\" in text or text.endswith(".json") or text.startswith((".", "~"))


def _local_path_state(path: Path, text: str) -> str:
    """"exists" or "missing", or a user error when the path is there but
    cannot be used: a symbolic link that loops or points nowhere, a name
    too long for the file system, a folder we may not look into."""
    if "\0" in text:  # the OS cannot even look such a name up
        raise UserError(f"MODEL {shown(text)} holds a NUL character; pass a profile, a config.json or a model folder")
    try:
        os.stat(path)
        return "exists"
    except FileNotFoundError:
        if os.path.islink(path):
            raise UserError(f"{cut(text)} is a symbolic link to {cut(os.readlink(path))}, which does not exist; "
                            "pass the model folder itself") from None
        return "missing"
    except NotADirectoryError:  # "config.json/x": a file where a folder would be
        return "missing"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UserError(f"{cut(text)} is a symbolic link that loops back on itself; pass the model folder "
                            "itself") from None
        if exc.errno == errno.ENAMETOOLONG:
            raise UserError(f"MODEL {shown(text)} is too long for a file name ({len(text):,} characters) and is "
                            "no profile name; pass a profile, a config.json or a model folder") from None
        raise UserError(f"cannot read {cut(text)}: {exc.strerror or exc}") from None


def _facts_from_profile(name: str, options: dict[str, Any], revision: str | None = None) -> ModelFacts:
    from attn_select.selector import model as parser

    if revision is not None:
        raise UserError(f"--revision {revision[:80]}: {name!r} is read from a built-in profile, which has no "
                        "revisions; --revision selects a snapshot of a Hugging Face id in the local cache")
    stem, prof = load_model_profile(name)
    return parser.model_facts(
        prof["config"], name=stem, where=f"profile {stem}", weights=prof.get("weights_dtype"),
        source=prof["source"], **options,
    )


# --- the listing (attn-select profiles) ----------------------------------------


class ModelProfile(NamedTuple):
    """A built-in model profile's key facts, as the parser reads them
    (tensor parallel 1, vLLM's "auto" dtype on a bfloat16-capable GPU)."""

    name: str
    source: str  # the Hugging Face repo its config values come from
    description: str | None
    architecture: str
    num_layers: int
    num_heads: int  # query heads (model level)
    num_kv_heads: int
    head_size: int  # vLLM's head size (MLA: kv_lora_rank + qk_rope_head_dim)
    dtype: str
    use_mla: bool
    groups: tuple[str, ...]  # attention groups, e.g. ("sliding", "full")


class DeviceProfile(NamedTuple):
    name: str  # the profile's name (--device NAME)
    gpu: str  # as torch.cuda.get_device_name reports it
    capability: str
    memory_gib: float
    bandwidth_tbs: float


class ProfileListing(NamedTuple):
    models: tuple[ModelProfile, ...]
    devices: tuple[DeviceProfile, ...]


def list_profiles() -> ProfileListing:
    """Every built-in model and device profile with its key facts."""
    models = []
    for name in model_profile_names():
        stem, prof = load_model_profile(name)
        facts = _facts_from_profile(name, dict(tp=1, dtype="auto", capability=None, mm_inputs=True,
                                               disable_sliding_window=False))
        models.append(ModelProfile(
            name=stem, source=prof["source"], description=prof.get("description"),
            architecture=facts.architecture, num_layers=facts.num_layers, num_heads=facts.num_heads,
            num_kv_heads=facts.num_kv_heads, head_size=facts.head_size, dtype=facts.dtype,
            use_mla=any(g.attn.use_mla for g in facts.groups), groups=tuple(g.name for g in facts.groups),
        ))
    devices = []
    for name in device_profile_names():
        d = load_device(name)
        devices.append(DeviceProfile(name=d.profile or name, gpu=d.name, capability=str(d.capability),
                                     memory_gib=d.memory_gib, bandwidth_tbs=d.bandwidth_tbs))
    return ProfileListing(tuple(models), tuple(devices))
