"""Differential oracle for selector/engine_config.py: the selection inputs
vLLM 0.33.0's ``EngineArgs.create_engine_config()`` leaves in the VllmConfig
(after the model's MODELS_CONFIG_MAP hook). Never imports attn_select.

    /tmp/vllm-venv/bin/python tests/selector/engine_config_oracle.py < cases.json > results.json

Input: a JSON list of ``{"config": {config.json}, "capability": [9, 0],
"kv_cache_dtype": "auto", "block_size": null, "attention_backend": null,
"flash_attn_version": null, "quantization": null, "files": {name: json},
"tensor_parallel_size": 1, "decode_context_parallel_size": 1, "prefill_context_parallel_size": 1,
"dtype": "auto", "max_model_len": 4096}``
(``files``: more *.json files for the model folder; a parallel size left out is
EngineArgs' default; ``max_model_len`` null: the model's own). Output, one per case: ``{"backend",
"flash_attn_version", "use_non_causal", "cache_dtype", "block_size",
"user_specified_block_size", "skip_layers", "error"}`` (``cache_dtype`` as the
layers leave it: see _layer_cache_dtype).

The platform and libcuda stand-in are model_oracle.py's (a NonNvmlCudaPlatform
reporting the case's capability).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


_PARALLEL_SIZES = ("tensor_parallel_size", "decode_context_parallel_size", "prefill_context_parallel_size")


def _layer_cache_dtype(vc) -> str:
    """cache_config.cache_dtype as the model's Attention layers leave it:
    Attention.__init__ makes an "auto" cache "fp8" when the quant config
    (compressed-tensors) carries a kv_cache_scheme; MLAAttention does not.
    The layers are not built here, so that one assignment is made from
    vLLM's own quant_config (as backends/run/probes/vllm_selection.py does)."""
    cc = vc.cache_config
    scheme = getattr(getattr(vc, "quant_config", None), "kv_cache_scheme", None)
    if scheme is not None and cc.cache_dtype == "auto" and not vc.model_config.use_mla:
        return "fp8"
    return cc.cache_dtype


def main() -> None:
    results_out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # vLLM logs to stdout
    sys.stdout = sys.stderr
    from model_oracle import _setup

    platform_cls, DeviceCapability = _setup()
    from vllm.config.attention import AttentionConfig
    from vllm.engine.arg_utils import EngineArgs

    cases = json.load(sys.stdin)
    results = []
    with tempfile.TemporaryDirectory(prefix="engine-config-oracle-") as tmp:
        for i, case in enumerate(cases):
            out: dict = {"error": None}
            results.append(out)
            folder = Path(tmp) / f"m{i}"
            folder.mkdir()
            (folder / "config.json").write_text(json.dumps(case["config"]))
            for extra, content in (case.get("files") or {}).items():
                (folder / extra).write_text(json.dumps(content))
            platform_cls.capability = DeviceCapability(*case.get("capability", [9, 0]))
            try:
                attention_config = AttentionConfig(flash_attn_version=case.get("flash_attn_version"))
                args = EngineArgs(model=str(folder), skip_tokenizer_init=True, load_format="dummy",
                                  kv_cache_dtype=case.get("kv_cache_dtype") or "auto",
                                  dtype=case.get("dtype") or "auto",
                                  block_size=case.get("block_size"),
                                  attention_backend=case.get("attention_backend"),
                                  attention_config=attention_config,
                                  max_model_len=case.get("max_model_len", 4096),
                                  quantization=case.get("quantization"),
                                  **{k: case[k] for k in _PARALLEL_SIZES if case.get(k) is not None})
                vc = args.create_engine_config()
                ac, cc = vc.attention_config, vc.cache_config
                out.update({
                    "backend": ac.backend.name if ac.backend is not None else None,
                    "flash_attn_version": ac.flash_attn_version,
                    "use_non_causal": bool(ac.use_non_causal),
                    "cache_dtype": _layer_cache_dtype(vc),
                    "block_size": cc.block_size if cc.user_specified_block_size else None,
                    "user_specified_block_size": bool(cc.user_specified_block_size),
                    "skip_layers": sorted(int(x) for x in cc.kv_cache_dtype_skip_layers if str(x).isdigit()),
                })
            except Exception as exc:  # noqa: BLE001 - vLLM's refusal is an answer
                out["error"] = f"{type(exc).__name__}: {exc}"
    json.dump(results, results_out)
    results_out.flush()


if __name__ == "__main__":
    main()
