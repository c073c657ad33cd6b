"""Files and folders: a config.json file or a model folder -> ModelFacts,
reading only JSON (config.json, params.json of a Mistral-format folder,
hf_quant_config.json, modules.json, safetensors headers); nothing in a model
folder is executed."""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Any

from attn_select.selector import safe_json
from attn_select.selector.engines import VLLM_VERSION
from attn_select.selector.errors import UserError, shown
from attn_select.selector.model.facts import model_facts
from attn_select.selector.model_facts import ModelFacts


# safetensors dtype -> (precision level, min, max, resolution) for vLLM's
# common_broadcastable_dtype (is_lossless_cast); values from torch.finfo/iinfo.
_ST_DTYPES: dict[str, tuple[str, int, float, float, float]] = {
    "BOOL": ("bool", 0, 0, 1, 1),
    "U8": ("uint8", 1, 0, 255, 1), "I8": ("int8", 1, -128, 127, 1),
    "I16": ("int16", 1, -(2**15), 2**15 - 1, 1), "U16": ("uint16", 1, 0, 2**16 - 1, 1),
    "I32": ("int32", 1, -(2**31), 2**31 - 1, 1), "U32": ("uint32", 1, 0, 2**32 - 1, 1),
    "I64": ("int64", 1, -(2**63), 2**63 - 1, 1), "U64": ("uint64", 1, 0, 2**64 - 1, 1),
    "F8_E4M3": ("float8_e4m3fn", 2, -448.0, 448.0, 1.0), "F8_E5M2": ("float8_e5m2", 2, -57344.0, 57344.0, 1.0),
    "F16": ("float16", 2, -65504.0, 65504.0, 0.001), "BF16": ("bfloat16", 2, -3.3895e38, 3.3895e38, 0.01),
    "F32": ("float32", 2, -3.4028e38, 3.4028e38, 1e-06), "F64": ("float64", 2, -1.7977e308, 1.7977e308, 1e-15),
}


def _lossless(src: str, dst: str) -> bool:
    """vLLM is_lossless_cast on safetensors dtype names."""
    if src == dst:
        return True
    _, sl, smin, smax, sres = _ST_DTYPES[src]
    _, dl, dmin, dmax, dres = _ST_DTYPES[dst]
    if sl != dl:
        return sl < dl
    if sl == 2:
        return smin >= dmin and smax <= dmax and sres >= dres
    return smin >= dmin and smax <= dmax


# safetensors' own limit on the JSON header (MAX_HEADER_SIZE is 100 MB) is
# more than a shard's header ever needs; this one bounds what a hostile
# header costs to parse.
MAX_HEADER_BYTES = 32 << 20


def weights_dtype(folder: Path) -> str | None:
    """The dtype vLLM infers from the safetensors headers in ``folder`` when
    the config names none (get_safetensors_params_metadata +
    common_broadcastable_dtype). Reads only the JSON headers; a header vLLM
    could not parse either is a user error naming the file."""
    found: list[str] = []
    for path in sorted(folder.glob("*.safetensors")):
        if not path.is_file():
            continue
        for key, info in _safetensors_header(path).items():
            if key == "__metadata__":
                continue
            if not isinstance(info, dict):
                raise UserError(f"{path}: tensor {shown(key)} is {shown(info)}, not a {{dtype, shape, "
                                "data_offsets}} object; the safetensors header is corrupt")
            st = info.get("dtype")
            if st is not None and not isinstance(st, str):
                raise UserError(f"{path}: tensor {shown(key)} has dtype {shown(st)}, not a safetensors "
                                "dtype name (BF16, F16, ...); the header is corrupt")
            if st in _ST_DTYPES and st not in found:
                found.append(st)
    if not found:
        return None
    best = max(found, key=lambda d: sum(_lossless(s, d) for s in found))
    return _ST_DTYPES[best][0]


def _safetensors_header(path: Path) -> dict[str, Any]:
    """A safetensors file's JSON header: 8 bytes of little-endian length,
    then that many bytes of JSON, bounded by the file and MAX_HEADER_BYTES."""
    try:
        with path.open("rb") as fh:
            head = fh.read(8)
            size = os.fstat(fh.fileno()).st_size
            if len(head) < 8:
                raise UserError(f"{path}: {size} bytes, shorter than a safetensors header; the file is corrupt")
            if head.startswith(b"version "):
                raise UserError(f"{path} is a Git LFS pointer, not the weights; run `git lfs pull` there, "
                                "or name the dtype in config.json")
            (length,) = struct.unpack("<Q", head)
            if length > size - 8:
                raise UserError(f"{path}: header length {length:,} is more than the file's {size - 8:,} "
                                "remaining bytes; the file is not a safetensors file or is truncated")
            if length > MAX_HEADER_BYTES:
                raise UserError(f"{path}: a {length >> 20} MiB header; attn-select reads safetensors headers "
                                f"of at most {MAX_HEADER_BYTES >> 20} MiB")
            body = fh.read(length)
    except OSError as exc:
        raise UserError(safe_json.os_problem(exc, path)) from None
    header = safe_json.loads(body, f"{path} (safetensors header)")
    if not isinstance(header, dict):
        raise UserError(f"{path}: the safetensors header is a JSON {type(header).__name__}, not an object "
                        "of tensors; the file is corrupt")
    return header


def read_config_json(path: Path) -> dict[str, Any]:
    """Parse a config.json (or params.json, hf_quant_config.json) within
    safe_json's bounds; a syntax error names the file, line and column."""
    return safe_json.read_json(path, "model config")


def _has_pooling_module(folder: Path) -> bool:
    """get_pooling_config: a Sentence-Transformers modules.json with a Pooling module."""
    path = folder / "modules.json"
    if not path.is_file():
        return False
    modules = safe_json.read_json(path, "modules.json")
    return isinstance(modules, list) and any(
        isinstance(m, dict) and m.get("type") in _ST_POOLING_TYPES for m in modules
    )


# vllm/transformers_utils/config.py _ST_POOLING_MODULE_TYPES: the Pooling
# module under its Sentence-Transformers < 5 and >= 5 import paths
_ST_POOLING_TYPES = frozenset({
    "sentence_transformers.models.Pooling",
    "sentence_transformers.sentence_transformer.modules.pooling.Pooling",
})


def is_mistral_format(folder: Path) -> bool:
    """vLLM's get_config with config_format "auto": a folder with
    consolidated*.safetensors anywhere under it (is_mistral_model_repo lists
    files recursively, matching file names) and a params.json is read in
    Mistral format, even when a config.json is there too."""
    if not (folder / "params.json").is_file():
        return False
    return any(p.is_file() for p in folder.rglob("consolidated*.safetensors"))


def facts_from_path(path: Path, *, name: str, from_hub_cache: bool = False, **kwargs: Any) -> ModelFacts:
    """A config.json file, or a model folder.

    Remote code (auto_map) is loaded from a local folder, so a module file
    it names must be there; a snapshot in the hub cache (``from_hub_cache``)
    holds only what was fetched, and vLLM downloads the rest: not checked.

    A folder is read the way vLLM's get_config picks the format: Mistral
    (params.json) when it holds consolidated*.safetensors and a params.json,
    else its config.json. A path to a config.json file is always read as
    that config.json (HF format): it is what the user pointed at, although
    ``vllm serve`` on its folder might read params.json instead.

    A folder or file that cannot be listed or read (no permission, a name
    too long) is a user error naming it.
    """
    try:
        folder = path if path.is_dir() else path.parent
        facts = _facts_from_path(path, name=name, code_folder=None if from_hub_cache else folder, **kwargs)
        return facts._replace(checkpoint_json=_json_names(path if path.is_dir() else path.parent))
    except OSError as exc:
        raise UserError(safe_json.os_problem(exc, path)) from None


def _json_names(folder: Path) -> tuple[str, ...]:
    """The *.json files get_quant_config globs in the model folder (not
    recursive), where --quantization's method may keep its config file."""
    return tuple(sorted(p.name for p in folder.glob("*.json")))


_GGUF_WHAT_TO_DO = ("vLLM reads a GGUF checkpoint's config from its metadata (or from --hf-config-path), "
                    "attn-select reads config.json only: pass the original model's folder or config.json, "
                    "or its Hugging Face id")


def _is_gguf(file: Path) -> bool:
    """A GGUF checkpoint: named *.gguf, or a regular file that starts with GGUF's magic."""
    if file.suffix.lower() == ".gguf":
        return True
    try:
        if not file.is_file():
            return False
        with open(file, "rb") as fh:
            return fh.read(4) == b"GGUF"
    except OSError:
        return False


def _facts_from_path(path: Path, *, name: str, **kwargs: Any) -> ModelFacts:
    if path.is_dir() and is_mistral_format(path):
        return _facts_from_mistral_folder(path, name=name, **kwargs)
    folder = path if path.is_dir() else path.parent
    file = path / "config.json" if path.is_dir() else path
    if not path.is_dir() and _is_gguf(path):
        raise UserError(f"{path} is a GGUF checkpoint; {_GGUF_WHAT_TO_DO}")
    if path.exists() and not path.is_dir() and not path.is_file():  # said "has no config.json", as of a folder
        raise UserError(f"{path} is not a regular file (a pipe, socket or device: /dev/stdin, /dev/zero, a FIFO); "
                        "pass the model folder or its config.json")
    if not file.is_file():
        if path.is_dir() and (path / "params.json").is_file():
            raise UserError(f"{path} has params.json but no config.json and no consolidated*.safetensors; "
                            "vLLM reads params.json only beside consolidated*.safetensors")
        if file.exists():  # config.json there, but a FIFO or a device: not "no config.json"
            raise UserError(f"{file} is not a regular file (a pipe, socket or device); vLLM reads config.json as a "
                            "file: put the model's config.json there")
        if path.is_dir() and next((p for p in path.glob("*.gguf")), None) is not None:
            raise UserError(f"{path} has no config.json but GGUF files; {_GGUF_WHAT_TO_DO}")
        raise UserError(f"{path} has no config.json; pass the model folder or its config.json")
    data = read_config_json(file)
    if isinstance(data, dict):
        data = _with_hf_quant_config(data, folder)
    weights = weights_dtype(folder) if isinstance(data, dict) and not _names_dtype(data) else None
    facts = model_facts(data, name=name, where=str(file), weights=weights,
                        pooling_config=_has_pooling_module(folder), source=str(file), **kwargs)
    _check_encoder_max_len(folder)
    return facts


# get_sentence_transformer_tokenizer_config's file names, in its order
_ST_CONFIGS = ("sentence_bert_config.json", "sentence_roberta_config.json", "sentence_distilbert_config.json",
               "sentence_camembert_config.json", "sentence_albert_config.json", "sentence_xlm-roberta_config.json",
               "sentence_xlnet_config.json")


def _check_encoder_max_len(folder: Path) -> None:
    """ModelConfig's encoder_config: the first non-empty Sentence-Transformers
    config in the folder; its max_seq_length replaces the derived max model
    length, which vLLM then reads with int() and requires to be at least 1
    (config/model.py:2636-2649 and 1070), whatever the model."""
    for name in _ST_CONFIGS:
        path = folder / name
        if not path.is_file():
            continue
        encoder = read_config_json(path)
        if not encoder:
            continue
        if not isinstance(encoder, dict) or "max_seq_length" not in encoder:
            return
        value = encoder["max_seq_length"]
        try:
            length = int(value)
        except (TypeError, ValueError) as exc:
            raise UserError(f"{path}: max_seq_length is {shown(value)}; vLLM {VLLM_VERSION} takes the model's "
                            f"maximum length from it with int(), which fails ({type(exc).__name__}): write a "
                            "positive whole number") from None
        if length < 1:
            raise UserError(f"{path}: max_seq_length is {shown(value)}; vLLM {VLLM_VERSION} takes the model's "
                            "maximum length from it and requires a positive integer (max_model_len must be a "
                            "positive integer): write a positive whole number")
        return


def _with_hf_quant_config(data: dict[str, Any], folder: Path) -> dict[str, Any]:
    """vLLM's get_config: ModelOpt 0.29 and earlier keep the quantization
    config in hf_quant_config.json beside config.json, and vLLM reads it when
    config.json has none (a ModelOpt FP8 checkpoint's kv_cache_quant_algo
    then makes the KV cache fp8, which changes the selection)."""
    if data.get("quantization_config") is not None:
        return data
    quant = _hf_quant_config(folder)
    return data if quant is None else {**data, "quantization_config": quant}


def _hf_quant_config(folder: Path) -> dict[str, Any] | None:
    """The folder's hf_quant_config.json, if it has one."""
    extra = folder / "hf_quant_config.json"
    if not extra.is_file():
        return None
    quant = read_config_json(extra)
    if not isinstance(quant, dict):
        raise UserError(f"{extra}: expected a JSON object with the quantization config")
    from attn_select.selector.model.quant import check_quant_shape

    check_quant_shape(quant, str(extra), prefix="")
    return quant


def _names_dtype(data: dict[str, Any]) -> bool:
    subs = [data] + [data.get(k) for k in ("text_config", "vision_config", "encoder_config")]
    return any(isinstance(s, dict) and (s.get("dtype") or s.get("torch_dtype")) for s in subs)


def _facts_from_mistral_folder(folder: Path, *, name: str, **kwargs: Any) -> ModelFacts:
    """vLLM's MistralConfigParser.parse on a folder: params.json converted
    (selector/model/mistral_format.py), config.json filling only the keys
    the conversion lacks, the weights' dtype when params.json names none,
    hf_quant_config.json when params.json gives no quantization."""
    from attn_select.selector.model.mistral_format import hf_config_from_params

    params_file = folder / "params.json"
    params = read_config_json(params_file)
    config_file = folder / "config.json"
    config_json = read_config_json(config_file) if config_file.is_file() else {}
    if not isinstance(config_json, dict):
        raise UserError(f"{config_file}: expected a JSON object")
    weights = weights_dtype(folder)
    if isinstance(params, dict) and params.get("dtype") is None and weights is not None:
        # MistralConfigParser.parse: dtype from the safetensors headers before conversion
        params = {**params, "dtype": weights}
    converted = hf_config_from_params(params, config_json, str(params_file))
    data = converted.config
    if converted.params_quantization is None:
        # get_config: hf_quant_config.json when params.json gave no quantization
        # (it replaces a quantization_config that config.json filled in)
        quant = _hf_quant_config(folder)
        if quant is not None:
            data["quantization_config"] = quant
    facts = model_facts(data, name=name, where=str(params_file), weights=weights,
                        pooling_config=_has_pooling_module(folder), source=str(params_file),
                        mistral_format=True, **kwargs)
    how = ("config.json beside it only fills keys params.json lacks" if config_file.is_file()
           else "there is no config.json")
    note = (f"Mistral format: vLLM reads {params_file} (the folder has consolidated*.safetensors), "
            f"converted as its adapt_config_dict does; {how}")
    return facts._replace(notes=(note,) + facts.notes)
