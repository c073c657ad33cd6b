"""Published config.json files of widely deployed checkpoints, verbatim, for the
config-parser differential (tests/selector/test_model_vs_vllm.py) and the
engine-config one (tests/selector/test_engine_config_vs_vllm.py).

The files are third-party data, so they are not in this repository: they lie
in the workspace's shared folder (``../shared/published-configs`` beside the
checkout, or ``ATTN_SELECT_PUBLISHED_CONFIGS``), one folder per Hugging Face
repo (``org--name``): its config.json as published, and its
hf_quant_config.json where the checkpoint ships one (NVIDIA ModelOpt
exports: vLLM reads the quantization from it when config.json has no
quantization_config). Without that folder these cases are empty and their
tests skip; what the differentials found on them is pinned by small configs
of our own in test_model_published.py and the differential modules. The
files were not fetched from the Hub (no network here) but from public GitHub
repositories that vendor them; each entry names where. Nothing in them is
edited; a case that must be smaller for the CPU oracle says what it cuts.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

FIXTURES = Path(os.environ.get("ATTN_SELECT_PUBLISHED_CONFIGS")
                or Path(__file__).resolve().parents[3] / "shared" / "published-configs")

# where each folder's files were taken from (repository@commit:path)
_AIC = ("ai-dynamo/aiconfigurator@095f58a51c4c:aic-core/src/aiconfigurator_core/model_configs/"
        "{folder}_config.json (and {folder}_hf_quant_config.json where the folder has one)")
_AIC_OLD_NEXT = ("ai-dynamo/aiconfigurator@1b7cfb10a6fa:src/aiconfigurator/model_configs/"
                 "Qwen--Qwen3-Next-80B-A3B-Thinking_config.json")
_AIC_OLD_LLAMA33 = ("ai-dynamo/aiconfigurator@f577ab8432df:src/aiconfigurator/model_configs/"
                    "meta-llama--Llama-3.3-70B-Instruct_config.json")
_LLM_PROF = "citsjtu2020/LLM-Prof@8434c8d19c39:sglang/Model_Config.md (the block named after the model)"

PUBLISHED: list[tuple[str, str]] = [
    ('deepseek-ai--DeepSeek-R1', _AIC),
    ('deepseek-ai--DeepSeek-V3.2', _AIC),
    ('deepseek-ai--DeepSeek-V4-Flash', _AIC),
    ('google--gemma-4-26B-A4B', _AIC),
    ('meta-llama--Llama-3.2-3B', _LLM_PROF),
    ('meta-llama--Llama-3.3-70B-Instruct', _AIC_OLD_LLAMA33),
    ('meta-llama--Meta-Llama-3.1-405B', _AIC),
    ('MiniMaxAI--MiniMax-M2.5', _AIC),
    ('mistralai--Mixtral-8x22B-v0.1', _AIC),
    ('mistralai--Mixtral-8x7B-v0.1', _AIC),
    ('moonshotai--Kimi-K2.5', _AIC),
    ('moonshotai--Kimi-K3', _AIC),
    ('nvidia--DeepSeek-V3.1-NVFP4', _AIC),
    ('nvidia--DeepSeek-V3.2-NVFP4', _AIC),
    ('nvidia--Gemma-4-31B-IT-NVFP4', _AIC),
    ('nvidia--GLM-5.1-NVFP4', _AIC),
    ('nvidia--Kimi-K2.5-NVFP4', _AIC),
    ('nvidia--Llama-3.1-70B-Instruct-FP8', _AIC),
    ('nvidia--MiniMax-M2.5-NVFP4', _AIC),
    ('nvidia--Nemotron-H-56B-Base-8K', _AIC),
    ('nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16', _AIC),
    ('nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4', _AIC),
    ('nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-FP8', _AIC),
    ('nvidia--Qwen3-235B-A22B-NVFP4', _AIC),
    ('nvidia--Qwen3.6-27B-NVFP4', _AIC),
    ('nvidia--Qwen3.6-35B-A3B-NVFP4', _AIC),
    ('openai--gpt-oss-120b', _AIC),
    ('Qwen--Qwen2.5-14B', _LLM_PROF),
    ('Qwen--Qwen2.5-32B', _LLM_PROF),
    ('Qwen--Qwen2.5-3B', _LLM_PROF),
    ('Qwen--Qwen2.5-7B', _LLM_PROF),
    ('Qwen--Qwen3-0.6B', _AIC),
    ('Qwen--Qwen3-14B', _LLM_PROF),
    ('Qwen--Qwen3-235B-A22B-FP8', _AIC),
    ('Qwen--Qwen3-30B-A3B-FP8', _AIC),
    ('Qwen--Qwen3-32B', _LLM_PROF),
    ('Qwen--Qwen3-32B-FP8', _AIC),
    ('Qwen--Qwen3-32B-FP8-Static-PerTensor', _AIC),
    ('Qwen--Qwen3-4B', _LLM_PROF),
    ('Qwen--Qwen3-Coder-480B-A35B-Instruct', _AIC),
    ('Qwen--Qwen3-Next-80B-A3B-Thinking', _AIC_OLD_NEXT),
    ('Qwen--Qwen3-VL-32B-Instruct', _AIC),
    ('Qwen--Qwen3.5-27B', _AIC),
    ('Qwen--Qwen3.5-35B-A3B', _AIC),
    ('Qwen--Qwen3.5-397B-A17B', _AIC),
    ('zai-org--GLM-5', _AIC),
    ('zai-org--GLM-5-FP8', _AIC),
]

# model_oracle.py's CPU stand-in for Triton cannot run the import-time config
# filter of the Gated DeltaNet / Mamba ops on sm90; sm100 skips it
_SM100 = {"qwen3_next", "qwen3_5", "qwen3_5_moe", "nemotron_h"}
# no torch_dtype in config.json: vLLM reads the dtype from the weights, so the
# case carries a safetensors header as the published files have (BF16 + U8 MXFP4 blocks)
_WEIGHTS = {"openai--gpt-oss-120b": {"w": "BF16", "blocks": "U8"}}
# layers that pick their attention class themselves (never get_attn_backend)
_BYPASS = {"deepseek-ai--DeepSeek-V4-Flash"}


def load(folder: str) -> tuple[dict, dict]:
    """(config.json, {other file name: its JSON}) of one published folder."""
    base = FIXTURES / folder
    config = json.loads((base / "config.json").read_text())
    files = {p.name: json.loads(p.read_text()) for p in sorted(base.glob("*.json")) if p.name != "config.json"}
    return config, files


def _model_type(config: dict) -> str:
    return config.get("model_type") or ""


def available() -> list[tuple[str, str]]:
    """The entries of PUBLISHED whose folder is here."""
    return [(folder, source) for folder, source in PUBLISHED if (FIXTURES / folder / "config.json").is_file()]


def cases() -> list[dict]:
    out = []
    for folder, _source in available():
        config, files = load(folder)
        case = {"name": "published " + folder.replace("--", "/"), "config": config}
        if files:
            case["files"] = files
        if _model_type(config) in _SM100:
            case["capability"] = [10, 0]
        if folder in _WEIGHTS:
            case["weights"] = _WEIGHTS[folder]
        if folder in _BYPASS:
            case["bypass"] = True
        out.append(case)
    return out


def variant_cases() -> list[dict]:
    """The multimodal ones under --language-model-only (vLLM then builds the
    language model alone)."""
    return [{**case, "name": case["name"] + " --language-model-only", "language_model_only": True}
            for case in cases() if "text_config" in case["config"] and not case.get("bypass")]


def rejected_cases() -> list[dict]:
    """Published configs and flags vLLM 0.33.0 fails on; ``rejects`` is part
    of its error."""
    by_folder = {folder: case for (folder, _), case in zip(available(), cases())}
    return [
        # ModelConfig.__post_init__ sets hf_text_config.sliding_window = None;
        # Gemma4TextConfig (a strict dataclass) declares it an int
        {**by_folder[folder], "name": f"published {folder.replace('--', '/')} --disable-sliding-window",
         "disable_sliding_window": True, "rejects": "Validation error for field 'sliding_window'"}
        for folder in ("google--gemma-4-26B-A4B", "nvidia--Gemma-4-31B-IT-NVFP4") if folder in by_folder
    ]
