"""selector/engine_config.py against vLLM 0.33.0 itself: the same config.json
and flags go to attn-select and to ``EngineArgs.create_engine_config()``
(tests/selector/engine_config_oracle.py, run with a python that has
vllm==0.33.0, on CPU); the attention backend, flash_attn_version,
use_non_causal, cache dtype, block size (+ user-specified) and the KV skip
layers must match.

Needs a venv with vLLM (ATTN_SELECT_VLLM_PYTHON, default /tmp/vllm-venv/bin/python);
skipped otherwise.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from attn_select.selector.config import Capability, Kernels
from attn_select.selector.engine_config import engine_config
from attn_select.selector.explain import Overrides
from attn_select.selector.profiles import load_model

from . import model_cases_published
from .model_oracle_client import vllm_python
from .test_model_published import kimi_k3

pytestmark = [pytest.mark.vllm, pytest.mark.slow]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def _profile_config(name: str) -> dict:
    import yaml

    return yaml.safe_load((ROOT / "profiles" / "models" / f"{name}.yaml").read_text())["config"]


_LLAMA = json.loads((ROOT / "tests" / "fixtures" / "configs" / "llama-3.1-8b" / "config.json").read_text())
_DSV32 = {**_profile_config("deepseek-v3.2"), "num_hidden_layers": 4, "first_k_dense_replace": 1}
_GLM_DSA = {"architectures": ["GlmMoeDsaForCausalLM"], "model_type": "glm_moe_dsa", "hidden_size": 1024,
            "num_attention_heads": 16, "num_key_value_heads": 16, "num_hidden_layers": 2,
            "intermediate_size": 2048, "moe_intermediate_size": 256, "vocab_size": 1024, "kv_lora_rank": 512,
            "q_lora_rank": 256, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
            "n_routed_experts": 4, "num_experts_per_tok": 2, "torch_dtype": "bfloat16",
            "index_topk": 2048, "index_head_dim": 128, "index_n_heads": 32}

_DIFFUSION_GEMMA = {"architectures": ["DiffusionGemmaForBlockDiffusion"], "model_type": "diffusion_gemma",
                    "torch_dtype": "bfloat16", "text_config": {
                        "model_type": "diffusion_gemma_text", "hidden_size": 1024, "num_hidden_layers": 6,
                        "num_attention_heads": 16, "num_key_value_heads": 8, "num_global_key_value_heads": 2,
                        "head_dim": 256, "global_head_dim": 512, "sliding_window": 1024,
                        "use_bidirectional_attention": "all", "vocab_size": 1000, "intermediate_size": 2048}}

# name -> (config, capability, flags)
CASES: dict[str, tuple[dict, tuple[int, int], dict]] = {
    "llama control": (_LLAMA, (9, 0), {}),
    "llama block 32": (_LLAMA, (9, 0), {"block_size": 32}),
    "llama turboquant": (_LLAMA, (9, 0), {"kv_cache_dtype": "turboquant_k8v4"}),
    "llama turboquant fa3": (_LLAMA, (9, 0), {"kv_cache_dtype": "turboquant_4bit_nc", "flash_attn_version": 3}),
    "llama turboquant fa2": (_LLAMA, (10, 0), {"kv_cache_dtype": "turboquant_k8v4", "flash_attn_version": 2}),
    "llama ultraquant": (_LLAMA, (9, 0), {"kv_cache_dtype": "ultraquant_4bit"}),
    "llama backend": (_LLAMA, (9, 0), {"attention_backend": "FLASHINFER"}),
    "dsv32 bf16": (_DSV32, (9, 0), {"kv_cache_dtype": "bfloat16"}),
    "dsv32 fp8": (_DSV32, (10, 0), {"kv_cache_dtype": "fp8"}),
    "glm dsa sm100": (_GLM_DSA, (10, 0), {}),
    "glm dsa sm90": (_GLM_DSA, (9, 0), {}),
    "glm dsa sm100 bf16": (_GLM_DSA, (10, 0), {"kv_cache_dtype": "bfloat16"}),
    # DiffusionGemma: Gemma-4's head sizes (FA version) and the block-diffusion step (use_non_causal)
    "diffusion-gemma sm100": (_DIFFUSION_GEMMA, (10, 0), {}),
    "diffusion-gemma sm90": (_DIFFUSION_GEMMA, (9, 0), {}),
}


def _ours(config: dict, cap: tuple[int, int], flags: dict, tmp: Path) -> dict:
    path = tmp / "config.json"
    path.write_text(json.dumps(config))
    capability = Capability(*cap)
    model = load_model(str(path), capability=capability)
    ov = Overrides(kv_cache_dtype=flags.get("kv_cache_dtype"), block_size=flags.get("block_size"),
                   backend=flags.get("attention_backend"), flash_attn_version=flags.get("flash_attn_version"))
    ec = engine_config(model, ov, capability, Kernels())
    return {
        "backend": ec.backend, "flash_attn_version": ec.flash_attn_version, "use_non_causal": ec.use_non_causal,
        "cache_dtype": ec.cache_dtype, "block_size": ec.block_size,
        "user_specified_block_size": ec.user_specified_block_size, "skip_layers": list(ec.kv_skip_layers),
        "error": ec.error,
    }


def _our_refusal(config: dict, capability: Capability, ov: Overrides, tmp: Path, dtype: str = "auto") -> str | None:
    """Our engine config's refusal of ``config`` under ``ov`` (vLLM's words, without our prefix), or None."""
    path = tmp / "config.json"
    path.write_text(json.dumps(config))
    error = engine_config(load_model(str(path), dtype=dtype, capability=capability), ov, capability, Kernels()).error
    return error.split(": ", 1)[1] if error else None


def _oracle(names, cases: list[dict], timeout: float) -> dict[str, dict]:
    """vLLM's own engine config for each case (engine_config_oracle.py in the vLLM python)."""
    run = subprocess.run([vllm_python(), str(HERE / "engine_config_oracle.py")], input=json.dumps(cases),
                         capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    if run.returncode != 0:
        pytest.fail(f"oracle failed:\n{run.stderr[-4000:]}")
    return dict(zip(names, json.loads(run.stdout)))


@pytest.fixture(scope="module")
def vllm_answers() -> dict[str, dict]:
    return _oracle(CASES, [{"config": c, "capability": list(cap), **flags} for c, cap, flags in CASES.values()],
                   900)


@pytest.mark.parametrize("name", list(CASES))
def test_engine_config_matches_vllm(name, vllm_answers, tmp_path):
    theirs = vllm_answers[name]
    assert theirs["error"] is None, theirs["error"]
    config, cap, flags = CASES[name]
    ours = _ours(config, cap, flags, tmp_path)
    assert ours["error"] is None
    keys = ("backend", "flash_attn_version", "use_non_causal", "cache_dtype", "block_size",
            "user_specified_block_size", "skip_layers")
    assert {k: ours[k] for k in keys} == {k: theirs[k] for k in keys}


# --- quantized checkpoints x GPUs: vLLM's quantization refusals ----------------------
# Each checkpoint's quantization_config on a small llama (or the real config
# for gpt-oss and DeepSeek-V3), on the capabilities of the device profiles
# (t4, a100, l4, h100, b200) and a V100's 7.0, which sits below the 75 that
# most methods need. vLLM must refuse exactly where the mirror does, with
# the same message: an unknown or deprecated method (ModelConfig), or a GPU
# below the method's get_min_capability() (VllmConfig).

_SMALL_LLAMA = {**_LLAMA, "num_hidden_layers": 2}
_FP8_SCHEME = {"num_bits": 8, "type": "float", "strategy": "tensor", "dynamic": False, "symmetric": True}
QUANT_CONFIGS: dict[str, dict] = {
    "fp8": {"quant_method": "fp8", "activation_scheme": "dynamic"},
    "fbgemm_fp8": {"quant_method": "fbgemm_fp8", "modules_to_not_convert": [], "activation_scale_ub": 1200.0},
    "fp_quant": {"quant_method": "fp_quant"},
    "experts_int8": {"quant_method": "experts_int8"},
    "modelopt fp8": {"quant_method": "modelopt", "quantization": {"quant_algo": "FP8"}},
    "modelopt nvfp4": {"quant_method": "modelopt", "quantization": {
        "quant_algo": "NVFP4", "group_size": 16, "kv_cache_quant_algo": None, "exclude_modules": ["lm_head"]}},
    "modelopt mxfp8": {"quant_method": "modelopt", "quantization": {
        "quant_algo": "MXFP8", "kv_cache_quant_algo": None, "exclude_modules": ["lm_head"]}},
    "modelopt producer fp8": {"producer": {"name": "modelopt", "version": "0.29"},
                              "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": None}},
    "mxfp8": {"quant_method": "mxfp8"},
    "mxfp4 (not gpt-oss)": {"quant_method": "mxfp4"},
    "awq": {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"},
    "gptq": {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": True},
    "auto-round": {"quant_method": "auto-round", "bits": 4, "group_size": 128, "sym": True},
    "compressed-tensors fp8": {"quant_method": "compressed-tensors", "format": "float-quantized",
                               "quantization_status": "compressed", "ignore": ["lm_head"],
                               "config_groups": {"group_0": {"targets": ["Linear"], "weights": _FP8_SCHEME,
                                                             "input_activations": _FP8_SCHEME}}},
    "bitsandbytes": {"quant_method": "bitsandbytes", "load_in_4bit": True},
}
QUANT_CAPS = ((7, 0), (7, 5), (8, 0), (8, 9), (9, 0), (10, 0))
_FIXTURE = ROOT / "tests" / "fixtures" / "configs"
QUANT_CASES: dict[str, tuple[dict, tuple[int, int]]] = {
    **{f"{name} sm{a}{b}": ({**_SMALL_LLAMA, "quantization_config": q}, (a, b))
       for name, q in QUANT_CONFIGS.items() for a, b in QUANT_CAPS},
    **{f"{fixture} sm{a}{b}": (json.loads((_FIXTURE / fixture / "config.json").read_text()), (a, b))
       for fixture in ("gpt-oss-20b", "deepseek-v3") for a, b in QUANT_CAPS},
    # Kimi-K3's model hook makes compressed-tensors mxfp4-pack-quantized mxfp4 (minimum capability 80,
    # bfloat16 only) before the quantization is verified
    **{f"kimi-k3 mxfp4-pack {dtype} sm{a}{b}": (kimi_k3(dtype=dtype), (a, b))
       for dtype in ("bfloat16", "float16") for a, b in ((7, 5), (8, 0), (9, 0))},
    # the activation-dtype check after the capability one: the config's dtype
    # under "auto" against get_supported_act_dtypes()
    **{f"{name} {dtype} sm{a}{b}": ({**_SMALL_LLAMA, "torch_dtype": dtype, "quantization_config": QUANT_CONFIGS[name]},
                                    (a, b))
       for name, dtype in (("mxfp4 (not gpt-oss)", "float16"), ("modelopt mxfp8", "float16"), ("gptq", "float32"),
                           ("compressed-tensors fp8", "float32"), ("fp8", "float32"))
       for a, b in ((7, 5), (9, 0))},
    # ModelOpt NVFP4 / MXFP8 _from_config: required fields of the "quantization"
    # section (found by the hostile-config campaign)
    **{f"{name} sm{a}{b}": ({**_SMALL_LLAMA, "quantization_config": {"quant_method": "modelopt", "quantization": q}},
                            (a, b))
       for name, q in (("modelopt nvfp4 no exclude_modules", {"quant_algo": "NVFP4", "group_size": 16,
                                                              "kv_cache_quant_algo": None}),
                       ("modelopt nvfp4 only quant_algo", {"quant_algo": "NVFP4"}),
                       ("modelopt mxfp8 no kv_cache_quant_algo", {"quant_algo": "MXFP8", "exclude_modules": []}))
       for a, b in ((7, 5), (10, 0))},
}


@pytest.fixture(scope="module")
def vllm_quant_answers() -> dict[str, dict]:
    return _oracle(QUANT_CASES, [{"config": c, "capability": list(cap)} for c, cap in QUANT_CASES.values()], 1200)


@pytest.mark.parametrize("name", list(QUANT_CASES))
def test_quantized_engine_config_matches_vllm(name, vllm_quant_answers, tmp_path):
    from attn_select.selector.vllm_installed import refusal_message

    theirs = vllm_quant_answers[name]
    config, cap = QUANT_CASES[name]
    ours = _ours(config, cap, {}, tmp_path)
    mine = ours["error"].split(": ", 1)[1] if ours["error"] else None
    assert mine == (refusal_message(theirs["error"]) if theirs["error"] else None)
    if mine is None:
        keys = ("backend", "flash_attn_version", "use_non_causal", "cache_dtype", "skip_layers")
        assert {k: ours[k] for k in keys} == {k: theirs[k] for k in keys}


def test_quantized_cases_cover_every_kind_of_answer(vllm_quant_answers):
    """The differential sees vLLM accept, refuse for capability, for an
    unknown method and for a deprecated one (so it cannot pass vacuously)."""
    errors = [a["error"] or "" for a in vllm_quant_answers.values()]
    assert any(not e for e in errors)
    for words in ("Minimum capability: 80. Current capability: 75.", "Minimum capability: 75. Current capability: 70.",
                  "Unknown quantization method: bitsandbytes", "is deprecated", "Supported dtypes: [torch.bfloat16]"):
        assert any(words in e for e in errors), words


# --- --quantization x checkpoints x GPUs ------------------------------------------
# The explicit method against the checkpoint's quantization_config (an
# override claims it, or vLLM's "does not match" refusal), on an unquantized
# checkpoint (online quantization, a method's own config file in the model
# folder, or a config class that cannot be built without one), then the
# capability and dtype checks of the class get_quant_config built.

_ON_UNQUANTIZED = ("fp8", "FP8", "fp8_per_tensor", "fp8_per_block", "nvfp4_per_token", "mxfp4", "mxfp8", "online",
                   "gptq", "gptq_marlin", "marlin", "awq_marlin", "moe_wna16", "modelopt", "inc", "humming",
                   "compressed-tensors", "quark", "torchao", "experts_int8", "deepseek_v4_fp8", "gpt_oss_mxfp4",
                   "bitsandbytes", "fbgemm_fp8")
_ON_CHECKPOINT: dict[str, tuple[str, ...]] = {
    "gptq": ("gptq", "gptq_marlin", "auto_gptq", "marlin", "awq", "moe_wna16", "humming", "fp8"),
    "awq": ("awq", "awq_marlin", "marlin", "gptq", "moe_wna16"),
    "fp8": ("fp8", "FP8", "deepseek_v4_fp8", "fp8_per_tensor", "mxfp4", "compressed-tensors"),
    "modelopt fp8": ("fp8", "modelopt", "modelopt_fp4"),
    "modelopt nvfp4": ("modelopt_fp4", "modelopt"),
    "auto-round": ("gptq", "inc", "awq"),
    "compressed-tensors fp8": ("compressed-tensors", "fp8"),
    "mxfp4 (not gpt-oss)": ("mxfp4", "gpt_oss_mxfp4", "humming"),
    "experts_int8": ("experts_int8", "fp8"),
}
_GPTQ_FILE = {"bits": 4, "group_size": 128, "desc_act": False, "sym": True}
_AWQ_FILE = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True}
FLAG_CASES: dict[str, tuple[dict, tuple[int, int], str, dict]] = {
    **{f"--quantization {flag} unquantized sm{a}{b}": (_SMALL_LLAMA, (a, b), flag, {})
       for flag in _ON_UNQUANTIZED for a, b in ((7, 0), (7, 5), (9, 0))},
    **{f"--quantization {flag} on {name} sm{a}{b}": ({**_SMALL_LLAMA, "quantization_config": QUANT_CONFIGS[name]},
                                                    (a, b), flag, {})
       for name, flags in _ON_CHECKPOINT.items() for flag in flags for a, b in ((7, 0), (9, 0))},
    # MoeWNA16Config takes an AWQ checkpoint only on a GPU that AWQ runs on
    "--quantization moe_wna16 on awq sm75": ({**_SMALL_LLAMA, "quantization_config": QUANT_CONFIGS["awq"]}, (7, 5),
                                            "moe_wna16", {}),
    "--quantization moe_wna16 on gptq desc_act": (
        {**_SMALL_LLAMA, "quantization_config": {**QUANT_CONFIGS["gptq"], "desc_act": True}}, (9, 0), "moe_wna16", {}),
    "--quantization moe_wna16 on gptq 3-bit": (
        {**_SMALL_LLAMA, "quantization_config": {**QUANT_CONFIGS["gptq"], "bits": 3}}, (9, 0), "moe_wna16", {}),
    **{f"--quantization {flag} on {fixture}": (json.loads((_FIXTURE / fixture / "config.json").read_text()), (9, 0),
                                               flag, {})
       for fixture, flags in (("gpt-oss-20b", ("mxfp4", "gpt_oss_mxfp4", "humming", "fp8")),
                              ("deepseek-v3", ("fp8", "deepseek_v4_fp8")))
       for flag in flags},
    # a method's own config file beside an unquantized config.json (a file
    # each class's from_config reads without complaint: its missing-field
    # errors are not modelled, for a file as for a checkpoint's config)
    **{f"--quantization {flag} with {file} sm{a}{b}": (_SMALL_LLAMA, (a, b), flag, {file: content})
       for flag, file, content in (("gptq", "quantize_config.json", _GPTQ_FILE),
                                   ("gptq_marlin", "quantize_config.json", _GPTQ_FILE),
                                   ("modelopt", "quantize_config.json", _GPTQ_FILE),
                                   ("awq", "quant_config.json", _AWQ_FILE),
                                   ("awq_marlin", "quantize_config.json", _AWQ_FILE),
                                   ("moe_wna16", "quantize_config.json", {**_GPTQ_FILE, "quant_method": "gptq"}),
                                   ("inc", "quantize_config.json", _GPTQ_FILE))
       for a, b in ((7, 0), (9, 0))},
    # awq's names are quantize_config.json and quant_config.json: both there is vLLM's
    # "Found multiple config files" (its message lists full paths: compared by its start)
    "--quantization awq with two config files": (_SMALL_LLAMA, (9, 0), "awq", {"quantize_config.json": _AWQ_FILE,
                                                                               "quant_config.json": _AWQ_FILE}),
    "--quantization gptq fp32 with quantize_config.json": ({**_SMALL_LLAMA, "torch_dtype": "float32"}, (9, 0), "gptq",
                                                          {"quantize_config.json": _GPTQ_FILE}),
    **{f"--quantization {flag} float32 sm90": ({**_SMALL_LLAMA, "torch_dtype": "float32"}, (9, 0), flag, {})
       for flag in ("fp8", "mxfp4", "experts_int8", "humming")},
}


@pytest.fixture(scope="module")
def vllm_flag_answers() -> dict[str, dict]:
    cases = [{"config": c, "capability": list(cap), "quantization": flag, "files": files}
             for c, cap, flag, files in FLAG_CASES.values()]
    run = subprocess.run([vllm_python(), str(HERE / "engine_config_oracle.py")], input=json.dumps(cases),
                         capture_output=True, text=True, timeout=1500, cwd=ROOT)
    if run.returncode != 0:
        pytest.fail(f"oracle failed:\n{run.stderr[-4000:]}")
    return dict(zip(FLAG_CASES, json.loads(run.stdout)))


def _ours_with_files(config: dict, cap: tuple[int, int], flag: str, files: dict, tmp: Path) -> dict:
    path = tmp / "config.json"
    path.write_text(json.dumps(config))
    for name, content in files.items():
        (tmp / name).write_text(json.dumps(content))
    capability = Capability(*cap)
    model = load_model(str(tmp), capability=capability)
    ec = engine_config(model, Overrides(quantization=flag), capability, Kernels())
    return {"backend": ec.backend, "flash_attn_version": ec.flash_attn_version, "use_non_causal": ec.use_non_causal,
            "cache_dtype": ec.cache_dtype, "skip_layers": list(ec.kv_skip_layers), "error": ec.error}


@pytest.mark.parametrize("name", list(FLAG_CASES))
def test_quantized_flag_matches_vllm(name, vllm_flag_answers, tmp_path):
    """quantized: vLLM's exact refusal text, or agreement on the inputs."""
    from attn_select.selector.vllm_installed import refusal_message

    theirs = vllm_flag_answers[name]
    config, cap, flag, files = FLAG_CASES[name]
    ours = _ours_with_files(config, cap, flag, files, tmp_path)
    mine = ours["error"].split(": ", 1)[1] if ours["error"] else None
    expected = refusal_message(theirs["error"]) if theirs["error"] else None
    if name.endswith("two config files"):
        assert mine is not None and expected is not None
        mine, expected = mine.split(":")[0], expected.split(":")[0]
    assert mine == expected
    if mine is None:
        keys = ("backend", "flash_attn_version", "use_non_causal", "cache_dtype", "skip_layers")
        assert {k: ours[k] for k in keys} == {k: theirs[k] for k in keys}


def test_quantized_flag_cases_cover_every_kind_of_answer(vllm_flag_answers):
    """quantized: the flag cases see vLLM accept and refuse each way (so they cannot pass vacuously)."""
    errors = [a["error"] or "" for a in vllm_flag_answers.values()]
    assert any(not e for e in errors)
    for words in ("does not match the quantization method specified in the `quantization` argument",
                  "Cannot find the config file for gptq", "missing 1 required positional argument",
                  "Found multiple config files for awq",
                  "Unknown quantization method: marlin", "For gpt-oss model, use '--moe-backend humming'",
                  "Minimum capability: 75. Current capability: 70.", "is deprecated"):
        assert any(words in e for e in errors), words


# --- -tp x -pcp x -dcp: vLLM's parallel-size refusals -------------------------------
# ParallelConfig._validate_parallel_config (DCP divides TP without PCP; with
# PCP it is 1, PCP or TP x PCP) and ModelConfig.verify_with_parallel_config
# (GQA/MQA: more TP ranks than KV heads, DCP at most tp // kv_heads, whole
# query groups per DCP rank; MLA is not checked), on 8 GPUs (the oracle's
# platform), so tp x pcp stays <= 8.

_PARALLEL_CONFIGS: dict[str, dict] = {
    "llama 32q/8kv": _SMALL_LLAMA,
    "llama mqa 32q/1kv": {**_SMALL_LLAMA, "num_key_value_heads": 1},
    "llama mha 16q/16kv": {**_SMALL_LLAMA, "num_attention_heads": 16, "num_key_value_heads": 16},
    "llama 24q/2kv": {**_SMALL_LLAMA, "hidden_size": 3072, "num_attention_heads": 24, "num_key_value_heads": 2},
    "deepseek-v3 mla": {**json.loads((_FIXTURE / "deepseek-v3" / "config.json").read_text()),
                        "num_hidden_layers": 2, "first_k_dense_replace": 1},
}
PARALLEL_CASES: dict[str, tuple[dict, dict]] = {
    f"{name} tp{tp} pcp{pcp} dcp{dcp}": (config, {"tensor_parallel_size": tp, "prefill_context_parallel_size": pcp,
                                                  "decode_context_parallel_size": dcp})
    for name, config in _PARALLEL_CONFIGS.items()
    for tp in (1, 2, 4, 8) for pcp in (1, 2, 3) for dcp in (1, 2, 3, 4, 8) if tp * pcp <= 8
}
# 3 query heads per KV head: -tp 6 -dcp 2 passes the other checks and splits a query group (an MLP
# -tp 6 divides too: with Llama's 14336 the model build that follows the engine config fails)
PARALLEL_CASES.update({
    f"llama 6q/2kv tp6 pcp1 dcp{dcp}": ({**_SMALL_LLAMA, "hidden_size": 768, "num_attention_heads": 6,
                                         "num_key_value_heads": 2, "intermediate_size": 2304},
                                        {"tensor_parallel_size": 6, "prefill_context_parallel_size": 1,
                                         "decode_context_parallel_size": dcp})
    for dcp in (1, 2, 3)
})


@pytest.fixture(scope="module")
def vllm_parallel_answers() -> dict[str, dict]:
    return _oracle(PARALLEL_CASES, [{"config": c, "capability": [9, 0], **sizes}
                                    for c, sizes in PARALLEL_CASES.values()], 1200)


def _ours_parallel(config: dict, sizes: dict, tmp: Path) -> str | None:
    path = tmp / "config.json"
    path.write_text(json.dumps(config))
    tp = sizes["tensor_parallel_size"]
    model = load_model(str(path), tp=tp, capability=Capability(9, 0))
    ov = Overrides(tp=tp, pcp_size=sizes["prefill_context_parallel_size"],
                   dcp_size=sizes["decode_context_parallel_size"])
    error = engine_config(model, ov, Capability(9, 0), Kernels()).error
    return error.split(": ", 1)[1] if error else None


@pytest.mark.parametrize("name", list(PARALLEL_CASES))
def test_parallel_sizes_match_vllm(name, vllm_parallel_answers, tmp_path):
    """parallel: vLLM's exact refusal text for the sizes, or none."""
    from attn_select.selector.vllm_installed import refusal_message

    theirs = vllm_parallel_answers[name]
    expected = refusal_message(theirs["error"]) if theirs["error"] else None
    assert _ours_parallel(*PARALLEL_CASES[name], tmp_path) == expected


def test_parallel_cases_cover_every_refusal(vllm_parallel_answers):
    """parallel: each of vLLM's five size refusals, and acceptance, is among the answers."""
    errors = [a["error"] or "" for a in vllm_parallel_answers.values()]
    assert any(not e for e in errors)
    for words in ("must be divisible by dcp_size", "When PCP is enabled, DCP must be disabled",
                  "to be greater than the model's total number of KV heads", "exceeds the maximum supported value",
                  "query heads per KV head"):
        assert any(words in e for e in errors), words



# --- an explicit float KV-cache dtype against the model's dtype --------------------
# VllmConfig._reject_mismatched_float_kv_cache, after the model hook (DeepSeek-V3.2's
# turns bfloat16 into auto first). Found by the hostile-config campaign: the mirror
# answered llama --dtype float32 --kv-cache-dtype bfloat16.
FLOAT_KV_CASES: dict[str, tuple[dict, dict]] = {
    **{f"llama kv {kv} dtype {dtype}": (_SMALL_LLAMA, {"kv_cache_dtype": kv, "dtype": dtype})
       for kv in ("bfloat16", "float16", "fp8") for dtype in ("auto", "half", "bfloat16", "float32")},
    "llama float16 config kv bfloat16": ({**_SMALL_LLAMA, "torch_dtype": "float16"}, {"kv_cache_dtype": "bfloat16"}),
    "dsv32 kv bfloat16 dtype half": (_DSV32, {"kv_cache_dtype": "bfloat16", "dtype": "half"}),
}


@pytest.fixture(scope="module")
def vllm_float_kv_answers() -> dict[str, dict]:
    return _oracle(FLOAT_KV_CASES, [{"config": c, "capability": [9, 0], **flags}
                                    for c, flags in FLOAT_KV_CASES.values()], 900)


@pytest.mark.parametrize("name", list(FLOAT_KV_CASES))
def test_float_kv_cache_dtype_matches_vllm(name, vllm_float_kv_answers, tmp_path):
    """float_kv: vLLM's exact refusal, or none."""
    from attn_select.selector.vllm_installed import refusal_message

    theirs = vllm_float_kv_answers[name]
    config, flags = FLOAT_KV_CASES[name]
    ov = Overrides(kv_cache_dtype=flags["kv_cache_dtype"], dtype=flags.get("dtype"))
    mine = _our_refusal(config, Capability(9, 0), ov, tmp_path, dtype=flags.get("dtype", "auto"))
    assert mine == (refusal_message(theirs["error"]) if theirs["error"] else None)
    assert any(a["error"] for a in vllm_float_kv_answers.values())


# --- published checkpoints x GPUs x KV-cache dtype ----------------------------------
# Every verbatim published config.json (model_cases_published.FIXTURES, with its
# hf_quant_config.json where the checkpoint ships one) on the device profiles'
# capabilities: the quantization refusals (a method's minimum capability, a
# model hook's rewrite such as Kimi-K3's compressed-tensors mxfp4 -> mxfp4),
# the checkpoint's KV-cache scheme, and --kv-cache-dtype fp8 where most
# deployments pass it.
_PUBLISHED = {case["name"]: case for case in model_cases_published.cases() if not case.get("bypass")}
_PUBLISHED_RUNS = [((7, 5), None), ((8, 0), None), ((8, 9), None), ((8, 9), "fp8"), ((9, 0), None), ((9, 0), "fp8"),
                   ((10, 0), None), ((10, 0), "fp8"), ((12, 0), None)]
PUBLISHED_CASES: dict[str, tuple[str, tuple[int, int], str | None]] = {
    f"{name} sm{a}{b} kv {kv or 'auto'}": (name, (a, b), kv) for name in _PUBLISHED for (a, b), kv in _PUBLISHED_RUNS
}


def _max_model_len(config: dict) -> int | None:
    """The oracle's 4096, or the model's own length where that is shorter
    (GPT-2's 1024 positions): vLLM refuses a --max-model-len above it."""
    text = config.get("text_config") or config
    own = [v for k in ("max_position_embeddings", "n_positions") for v in (text.get(k), config.get(k))
           if isinstance(v, int)]
    return None if own and min(own) < 4096 else 4096


@pytest.fixture(scope="module")
def vllm_published_answers() -> dict[str, dict]:
    inputs = [{"config": _PUBLISHED[name]["config"], "files": _PUBLISHED[name].get("files"),
               "capability": list(cap), "kv_cache_dtype": kv,
               "max_model_len": _max_model_len(_PUBLISHED[name]["config"])}
              for name, cap, kv in PUBLISHED_CASES.values()]
    return _oracle(PUBLISHED_CASES, inputs, 1800)


@pytest.mark.parametrize("name", list(PUBLISHED_CASES))
def test_published_engine_config_matches_vllm(name, vllm_published_answers, tmp_path):
    """published: vLLM's exact refusal text, or agreement on the selection inputs."""
    from attn_select.selector.vllm_installed import refusal_message

    theirs = vllm_published_answers[name]
    model_name, cap, kv = PUBLISHED_CASES[name]
    case = _PUBLISHED[model_name]
    (tmp_path / "config.json").write_text(json.dumps(case["config"]))
    for file, content in case.get("files", {}).items():
        (tmp_path / file).write_text(json.dumps(content))
    capability = Capability(*cap)
    model = load_model(str(tmp_path), capability=capability)
    ec = engine_config(model, Overrides(kv_cache_dtype=kv), capability, Kernels())
    mine = ec.error.split(": ", 1)[1] if ec.error else None
    assert mine == (refusal_message(theirs["error"]) if theirs["error"] else None)
    if mine is None:
        ours = {"backend": ec.backend, "flash_attn_version": ec.flash_attn_version,
                "use_non_causal": ec.use_non_causal, "cache_dtype": ec.cache_dtype,
                "skip_layers": list(ec.kv_skip_layers)}
        assert ours == {k: theirs[k] for k in ours}


# --- an nvfp4 KV cache on an MLA model ----------------------------------------------
# VllmConfig.validate_nvfp4_kv_cache_with_mla (a model validator, after __post_init__).
# Found by the hostile-config campaign: the mirror answered Kimi-K2.5 with nvfp4.
NVFP4_MLA_CASES: dict[str, tuple[dict, dict]] = {
    "dsv32 kv nvfp4": (_DSV32, {"kv_cache_dtype": "nvfp4"}),
    "dsv32 kv nvfp4_ds_mla": (_DSV32, {"kv_cache_dtype": "nvfp4_ds_mla"}),
    "llama kv nvfp4": (_SMALL_LLAMA, {"kv_cache_dtype": "nvfp4"}),
}


@pytest.fixture(scope="module")
def vllm_nvfp4_mla_answers() -> dict[str, dict]:
    return _oracle(NVFP4_MLA_CASES, [{"config": c, "capability": [10, 0], **flags}
                                     for c, flags in NVFP4_MLA_CASES.values()], 900)


@pytest.mark.parametrize("name", list(NVFP4_MLA_CASES))
def test_nvfp4_kv_cache_with_mla_matches_vllm(name, vllm_nvfp4_mla_answers, tmp_path):
    from attn_select.selector.vllm_installed import refusal_message

    theirs = vllm_nvfp4_mla_answers[name]
    config, flags = NVFP4_MLA_CASES[name]
    mine = _our_refusal(config, Capability(10, 0), Overrides(kv_cache_dtype=flags["kv_cache_dtype"]), tmp_path)
    assert mine == (refusal_message(theirs["error"]) if theirs["error"] else None)
    assert vllm_nvfp4_mla_answers["dsv32 kv nvfp4"]["error"]


# --- a quantization config class's own from_config -----------------------------------
# get_quant_config builds the checkpoint's class before the capability and
# dtype checks (selector/quant_from_config.py). Found by the round-6
# hostile-config campaign (quantization space): the mirror answered configs
# whose class vLLM cannot build.
_CT_GROUP = {"targets": ["Linear"], "weights": _FP8_SCHEME, "input_activations": _FP8_SCHEME}
FROM_CONFIG: dict[str, dict] = {
    "fp8 ok": {"quant_method": "fp8", "activation_scheme": "static"},
    "fp8 activation 'x'": {"quant_method": "fp8", "activation_scheme": "x"},
    "fp8 no activation_scheme": {"quant_method": "fp8"},
    "fp8 block [128]": {"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128]},
    "fp8 static blocks": {"quant_method": "fp8", "activation_scheme": "static", "weight_block_size": [128, 128]},
    "fp8 block 5": {"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": 5},
    "awq ok": {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True},
    "awq bits 3": {"quant_method": "awq", "bits": 3, "group_size": 128, "zero_point": True},
    "awq bits 0": {"quant_method": "awq", "bits": 0, "group_size": 128, "zero_point": True},
    "awq bits []": {"quant_method": "awq", "bits": [], "group_size": 128, "zero_point": True},
    "awq no zero_point": {"quant_method": "awq", "bits": 4, "group_size": 128},
    "gptq ok": {"quant_method": "gptq", "bits": 8, "group_size": -1, "desc_act": True, "sym": True},
    "gptq no sym": {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False},
    "gptq bits 3": {"quant_method": "gptq", "bits": 3, "group_size": 128, "desc_act": False, "sym": True},
    "gptq asymmetric": {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": False},
    "gptq desc_act": {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": True, "sym": True},
    "gptq dynamic 'x'": {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": True,
                         "dynamic": "x"},
    "moe_wna16 in the checkpoint": {"quant_method": "moe_wna16", "bits": 4, "group_size": 128,
                                    "linear_quant_method": "gptq", "sym": True},
    "fp8_per_tensor in the checkpoint": {"quant_method": "fp8_per_tensor"},
    "torchao": {"quant_method": "torchao", "quant_type": {"default": {"_type": "Int4WeightOnlyConfig"}}},
    "modelopt W4A8_AWQ": {"quant_method": "modelopt", "quantization": {"quant_algo": "W4A8_AWQ"}},
    "modelopt no quant_algo": {"quant_method": "modelopt", "quantization": {"kv_cache_quant_algo": "FP8"}},
    "modelopt kv algo 8": {"quant_method": "modelopt", "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": 8}},
    "modelopt exclude 'x'": {"quant_method": "modelopt", "quantization": {"quant_algo": "FP8", "exclude_modules": "x"}},
    "modelopt group_size 'x'": {"quant_method": "modelopt", "quantization": {"quant_algo": "FP8", "group_size": "x"}},
    "modelopt mixed without quantized_layers": {"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION"},
    "modelopt mixed, layers only at the top": {"quant_method": "modelopt", "quantization": {
        "quant_algo": "MIXED_PRECISION"}, "quantized_layers": {"model.layers.0.mlp.down_proj": {"quant_algo": "FP8"}}},
    "modelopt_mxfp8 with FP8": {"quant_method": "modelopt_mxfp8", "quantization": {
        "quant_algo": "FP8", "kv_cache_quant_algo": None, "exclude_modules": []}},
    "quark without export": {"quant_method": "quark", "global_quant_config": {}},
    "quark kv group, no layer_quant_config": {"quant_method": "quark", "export": {"kv_cache_group": ["*k_proj"]}},
    "compressed-tensors ok": QUANT_CONFIGS["compressed-tensors fp8"],
    "compressed-tensors config_groups null": {"quant_method": "compressed-tensors", "format": "float-quantized",
                                              "config_groups": None},
    "compressed-tensors group without weights": {"quant_method": "compressed-tensors", "format": "float-quantized",
                                                 "config_groups": {"group_0": {"targets": ["Linear"]}}},
    "compressed-tensors attention-only group (dropped)": {
        "quant_method": "compressed-tensors", "format": "float-quantized",
        "config_groups": {"group_0": _CT_GROUP, "attn": {"targets": ["LlamaAttention"]}}},
    "auto-round bits 0": {"quant_method": "auto-round", "bits": 0, "group_size": 128, "sym": True},
    "auto-round group_size 'x'": {"quant_method": "auto-round", "bits": 4, "group_size": "x", "sym": True},
}
FROM_CONFIG_CASES = {name: {**_SMALL_LLAMA, "quantization_config": q} for name, q in FROM_CONFIG.items()}


@pytest.fixture(scope="module")
def vllm_from_config_answers() -> dict[str, dict]:
    return _oracle(FROM_CONFIG_CASES, [{"config": c, "capability": [9, 0]} for c in FROM_CONFIG_CASES.values()], 900)


@pytest.mark.parametrize("name", list(FROM_CONFIG_CASES))
def test_quant_config_from_config_matches_vllm(name, vllm_from_config_answers, tmp_path):
    """from_config: vLLM's exact refusal text, or none."""
    from attn_select.selector.vllm_installed import refusal_message

    theirs = vllm_from_config_answers[name]
    mine = _our_refusal(FROM_CONFIG_CASES[name], Capability(9, 0), Overrides(), tmp_path)
    assert mine == (refusal_message(theirs["error"]) if theirs["error"] else None)
    assert sum(1 for a in vllm_from_config_answers.values() if a["error"]) > 25


# --- --max-model-len against the model's maximum -------------------------------------
# ModelConfig's _get_and_verify_max_len: the smallest length key (model_max_length when
# set) times a rope factor not already applied; a longer --max-model-len is refused.
_LLAMA3_ROPE = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                "original_max_position_embeddings": 2048}
_MAX_LEN_CONFIGS = {
    "llama": _SMALL_LLAMA,
    "llama seq_length below": {**_SMALL_LLAMA, "seq_length": 1024},
    "llama linear rope x2": {**_SMALL_LLAMA, "rope_scaling": {"rope_type": "linear", "factor": 2.0}},
    "llama llama3 rope (already scaled)": {**_SMALL_LLAMA, "rope_scaling": _LLAMA3_ROPE},
    "llama model_max_length above": {**_SMALL_LLAMA, "model_max_length": 100_000},
    "gemma3 linear rope (not applied)": {
        "architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text", "hidden_size": 256,
        "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 64, "num_hidden_layers": 2,
        "intermediate_size": 512, "vocab_size": 1024, "max_position_embeddings": 2048, "torch_dtype": "bfloat16",
        "rope_scaling": {"rope_type": "linear", "factor": 8.0}},
    # no length key in config.json: the config class's default (hf_max_len_defaults)
    "llama, no length key": {k: v for k, v in _SMALL_LLAMA.items() if k != "max_position_embeddings"},
    "gpt2, no length key": {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": 256,
                            "n_head": 4, "n_layer": 2, "vocab_size": 1024, "torch_dtype": "bfloat16"},
    "gpt2, max_position_embeddings (its n_positions)": {
        "architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": 256, "n_head": 4, "n_layer": 2,
        "vocab_size": 1024, "torch_dtype": "bfloat16", "max_position_embeddings": 4096},
    "qwen2, no length key": {**{k: v for k, v in _SMALL_LLAMA.items() if k != "max_position_embeddings"},
                             "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2"},
    "gemma3 text, no length key": {
        "architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text", "hidden_size": 256,
        "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 64, "num_hidden_layers": 2,
        "intermediate_size": 512, "vocab_size": 1024, "torch_dtype": "bfloat16"},
}
MAX_LEN_CASES = {f"{name} max_model_len {m}": (config, m) for name, config in _MAX_LEN_CONFIGS.items()
                 for m in (1024, 2048, 2049, 4097, 16385, 32769, 100_001, 131073)}


@pytest.fixture(scope="module")
def vllm_max_len_answers() -> dict[str, dict]:
    return _oracle(MAX_LEN_CASES, [{"config": c, "capability": [9, 0], "max_model_len": m}
                                   for c, m in MAX_LEN_CASES.values()], 900)


@pytest.mark.parametrize("name", list(MAX_LEN_CASES))
def test_max_model_len_matches_vllm(name, vllm_max_len_answers, tmp_path):
    """max_len: vLLM's refusal sentence, or none."""
    from attn_select.selector.errors import UserError
    from attn_select.selector.explain import check_max_model_len

    theirs = vllm_max_len_answers[name]["error"]
    config, m = MAX_LEN_CASES[name]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    try:
        check_max_model_len(load_model(str(path), capability=Capability(9, 0)), m)
        mine = None
    except UserError as e:
        mine = "User-specified" + str(e).split("User-specified", 1)[1].split("=1", 1)[0]
    assert mine == ("User-specified" + theirs.split("User-specified", 1)[1].split("=1", 1)[0] if theirs else None)
    assert any(a["error"] for a in vllm_max_len_answers.values())
