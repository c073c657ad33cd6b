"""Differential oracle: vLLM 0.33.0's OWN attention-backend selection, run on a
CPU-only machine, one JSON case in, one JSON result out.

Run it with the python of a venv that has ``vllm==0.33.0`` installed (never
with attn-select's python; this file never imports attn_select):

    /tmp/vllm-venv/bin/python tests/vllm_oracle/oracle.py < cases.json > results.json

Input: a JSON list of cases::

    {"capability": [9, 0],
     "selector_config": {the 18 AttentionSelectorConfig fields; dtype "bfloat16"},
     "num_heads": 16 | null,
     "backend": "FLASH_ATTN" | null,
     "kernels": {"fa2", "fa3", "fa4", "flashinfer", "trtllm_cubins", "flashmla",
                 "flashinfer_python", "tokenspeed_mla": bool; absent = True},
     "context": {EngineContext fields that differ from their defaults},
     "mla_prefill": {"backend": "FLASH_ATTN" | null}}   # optional: MLA cases only

Output: a JSON list, one result per case, in order::

    {"priorities": [names from _get_backend_priorities],
     "reasons": {name: [what get_valid_backends records]},  # [] = valid
     "selected": name | null, "error": ValueError text | null,
     "warning": the "--block-size precluded ..." warning | null,
     "fa_version": {"default": get_flash_attn_version(),
                    "head_size": get_flash_attn_version(head_size=cfg.head_size)},
     "mla_prefill": null | {  # when the case has "mla_prefill"
         "selector_config": repr(MLAPrefillSelectorConfig) get_mla_prefill_backend built,
         "priorities": [MLAPrefillBackendEnum names get_mla_prefill_backend_cls tries],
         "reasons": {name: validate_configuration(...) or ["ImportError"]},  # [] = valid
         "selected": name | null, "error": ValueError text | null},
     "oracle_error": null | why this case could not be put to vLLM}

How each input reaches vLLM (the same way a real run does):

* capability: ``vllm.platforms._current_platform`` is a ``NonNvmlCudaPlatform``
  subclass whose ``get_device_capability`` returns the case's value.
* kernels fa2 / fa3 / flashmla / flashinfer_python / tokenspeed_mla: whether
  ``vllm.vllm_flash_attn._vllm_fa2_C``, ``_vllm_fa3_C``, ``vllm._flashmla_C``
  (with ``vllm._flashmla_extension_C``), the ``flashinfer`` package and the
  ``tokenspeed_mla`` package can be imported. That is decided at import time,
  so cases are grouped by these flags and each group runs in its own worker
  process in which every ``sys.meta_path`` finder is wrapped so that it does
  not see the absent modules: ``import`` fails exactly as for a missing file
  and ``importlib.util.find_spec`` returns None. (Package metadata stays
  visible.)
* kernels fa4: ``FA4_AVAILABLE`` / ``FA4_UNAVAILABLE_REASON`` in
  ``vllm.vllm_flash_attn.flash_attn_interface`` are set per case to what the
  module computes when ``cute/interface.py`` is missing.
* kernels flashinfer / trtllm_cubins: ``vllm.utils.flashinfer.has_flashinfer``
  and ``has_nvidia_artifactory`` are replaced (in that module and wherever
  they were imported by name) by cached functions returning the case's flags.
  The FlashInfer feature probes derived from them (``has_flashinfer_sm90_nope_mla``
  and friends) then run for real against the installed flashinfer-python.
* context: a real ``VllmConfig`` set with ``set_current_vllm_config``:
  ``cache_config`` (cache_dtype; block_size, user-specified, when the
  selector config has one), ``attention_config`` (flash_attn_version,
  use_trtllm_attention, disable_flashinfer_q_quantization), ``parallel_config``
  (decode_context_parallel_size and prefill_context_parallel_size;
  tensor_parallel_size = dcp_size, as vLLM requires tp % dcp == 0 and
  decode CP reuses the TP ranks) and, when ``has_model``, a real
  ``ModelConfig`` built from a generated ``config.json`` (LlamaForCausalLM;
  head_dim; heads and KV heads multiplied by the TP size so the per-GPU
  numbers are the ones given; ``attn_logit_softcapping``, ``is_mm_prefix_lm``,
  ``rswa_window``, ``canvas_length`` (= is_diffusion) and the MLA dims
  ``qk_nope_head_dim``, ``qk_rope_head_dim``, ``v_head_dim``, ``kv_lora_rank``,
  ``index_topk`` as HF config keys, read back as ``hf_text_config``
  attributes). ``batch_invariant`` is the ``VLLM_BATCH_INVARIANT`` environment
  variable. ``model_head_size_v`` has no ModelConfig counterpart in vLLM
  0.33.0 (backends read ``head_size_v`` from their class or KV-cache spec), so
  a value other than ``model_head_size`` is reported as an oracle_error.
  ``unclamped_sliding_window`` is not a selection input and is ignored.
  A context vLLM itself rejects (e.g. DCP with more KV heads than TP ranks)
  comes back as an oracle_error with vLLM's message.
* GPU facts that would need a driver are placeholders of the fake platform:
  device name, 80 GiB memory, 132 SMs, 8 GPUs in the node. Model Runner V2
  is pinned (``VLLM_USE_V2_MODEL_RUNNER=1``), which is what VllmConfig picks
  on a GPU machine where Triton works.
* ``attn_type`` is passed as vLLM's ``AttentionType`` member, as the model
  layers pass it; its f-string text therefore is whatever this Python prints
  for a str-mixin Enum.

* mla_prefill: ``attention_config.mla_prefill_backend`` of the case's
  ``VllmConfig``, then ``get_mla_prefill_backend(vllm_config)`` itself gives
  ``selected`` / ``error``. The selector config and the priority list are
  read off vLLM's own code, not rebuilt: the auto path is run once more
  (explicit choice cleared) with ``_auto_select_mla_prefill_backend`` wrapped
  to record its config and every ``MLAPrefillBackendEnum.get_class``
  answering a class that is never valid, so the loop walks the whole list.
  Every candidate (and the explicit one) is then validated with its real
  class, as the loop does (``ImportError`` -> ``["ImportError"]``). This is
  the runner's ``Selector.mla_prefill``.

All ``functools`` caches of vLLM modules are cleared before every case.
``cutlass_mla`` allocates a CUDA workspace at import: that one allocation is
sent to the ``meta`` device while the module is imported.

The machinery (the libcuda stand-in, the stand-in platform, module hiding,
the kernel switches, cache clearing and the selection questions) is
attn-select's own ``backends/run/probes/vllm_selection.py`` ``Selector``, which
``--engine vllm-installed`` runs: imported from there, not copied. This file
adds the case protocol and the generated model configs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent

PROBES = HERE.parents[1] / "backends" / "run" / "probes"
sys.path.insert(0, str(PROBES))
from vllm_selection import IMPORT_TIME_KERNELS, KERNEL_FLAGS, Selector  # noqa: E402  (stdlib + vLLM only)

# EngineContext fields this oracle knows how to express, with their defaults.
CONTEXT_DEFAULTS = {
    "has_model": False,
    "model_head_size": None,
    "model_head_size_v": None,
    "model_num_heads": None,
    "model_num_kv_heads": None,
    "cache_dtype": "auto",
    "flash_attn_version": None,
    "use_trtllm_attention": None,
    "attn_logit_softcapping": False,
    "is_mm_prefix_lm": False,
    "rswa_window": None,
    "is_diffusion": False,
    "dcp_size": 1,
    "batch_invariant": False,
    "pcp_size": 1,
    "mla_qk_nope_head_dim": None,
    "mla_qk_rope_head_dim": None,
    "mla_v_head_dim": None,
    "mla_kv_lora_rank": None,
    "mla_index_topk": None,
    "disable_flashinfer_q_quantization": False,
    # A property of the model's layers read only for CUDA-graph support, not
    # by selection: accepted and not expressed.
    "unclamped_sliding_window": False,
}
# HF config.json keys for the MLA dims (attributes of hf_text_config).
MLA_HF_KEYS = {
    "mla_qk_nope_head_dim": "qk_nope_head_dim",
    "mla_qk_rope_head_dim": "qk_rope_head_dim",
    "mla_v_head_dim": "v_head_dim",
    "mla_kv_lora_rank": "kv_lora_rank",
    "mla_index_topk": "index_topk",
}

# vLLM's loggers write to stdout by default; results go to the real stdout only.
os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# On a GPU machine Triton is usable and VllmConfig picks Model Runner V2; here
# Triton finds no driver, vLLM would fall back to V1 and reject V1-unsupported
# configs (diffusion models, prefill context parallel). Pin what a GPU run does.
os.environ.setdefault("VLLM_USE_V2_MODEL_RUNNER", "1")


def _import_key(case: dict) -> tuple[bool, ...]:
    k = case["kernels"]
    return tuple(bool(k.get(name, True)) for name in IMPORT_TIME_KERNELS)


# --------------------------------------------------------------------------
# Parent: group cases by import-time kernels, one worker process per group.
# --------------------------------------------------------------------------

def run_grouped(cases: list[dict], jobs: int) -> list[dict]:
    groups: dict[tuple[bool, ...], list[int]] = {}
    for i, case in enumerate(cases):
        groups.setdefault(_import_key(case), []).append(i)
    results: list[dict | None] = [None] * len(cases)

    def work(key: tuple[bool, ...]) -> None:
        idx = groups[key]
        flags = ",".join(f"{n}={int(v)}" for n, v in zip(IMPORT_TIME_KERNELS, key))
        proc = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--worker", flags],
            input=json.dumps([cases[i] for i in idx]),
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            sys.stderr.write(proc.stderr[-6000:])
            raise RuntimeError(f"oracle worker for {flags} failed (rc {proc.returncode})")
        out = json.loads(proc.stdout)
        for i, r in zip(idx, out):
            results[i] = r

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for f in [pool.submit(work, key) for key in groups]:
            f.result()
    return results  # type: ignore[return-value]


# --------------------------------------------------------------------------
# Worker: one vLLM import, many cases.
# --------------------------------------------------------------------------

class Oracle:
    def __init__(self, import_flags: dict[str, bool]) -> None:
        from libcuda_standin import build  # the stand-in's builder, stdlib only

        self.import_flags = import_flags
        hidden = tuple(m for flag, mods in IMPORT_TIME_KERNELS.items() if not import_flags[flag] for m in mods)
        self.kernels: dict[str, bool] = {k: True for k in KERNEL_FLAGS}
        self.selector = Selector(libcuda=build(), platform=True, kernels=self.kernels, hidden=hidden)
        self.kernels = self.selector.kernels  # the dict its switches read
        self.platform_cls = self.selector.platform_cls
        self.DeviceCapability = self.selector.DeviceCapability
        self._model_dirs: dict[tuple, str] = {}
        self._tmp = tempfile.TemporaryDirectory(prefix="vllm-oracle-models-")
        # CPU_ATTN's fp8 caches depend on the host CPU (AMX or AVX-512), which
        # attn-select takes as an x86 server with AVX-512 (backends/cpu_attn.py):
        # vLLM answers for that host, not for whichever machine runs the oracle
        import torch

        torch.cpu._is_avx512_supported = lambda: True

    def _clear_caches(self) -> None:
        self.selector.clear_caches()

    def _set_kernels(self, kernels: dict) -> None:
        for name in KERNEL_FLAGS:  # absent keys: the vLLM wheel's default, present
            self.kernels[name] = bool(kernels.get(name, True))
        self.selector.set_fa4(self.kernels["fa4"])

    def _model_dir(self, ctx: dict, dtype: str, tp: int) -> str:
        head = ctx["model_head_size"]
        heads = ctx["model_num_heads"]
        kv_heads = ctx["model_num_kv_heads"]
        if head is None or heads is None or kv_heads is None:
            raise ValueError("has_model needs model_head_size, model_num_heads and model_num_kv_heads")
        key = (head, heads, kv_heads, dtype, tp, ctx["attn_logit_softcapping"],
               ctx["is_mm_prefix_lm"], ctx["rswa_window"], ctx["is_diffusion"],
               *(ctx[k] for k in MLA_HF_KEYS))
        if key in self._model_dirs:
            return self._model_dirs[key]
        cfg = {
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            "head_dim": head,
            "num_attention_heads": heads * tp,
            # get_num_kv_heads = max(1, total // tp): one KV head stays one.
            "num_key_value_heads": kv_heads * tp if kv_heads > 1 else 1,
            "hidden_size": head * heads * tp,
            "intermediate_size": 256,
            "num_hidden_layers": 1,
            "vocab_size": 1024,
            "max_position_embeddings": 4096,
            "rms_norm_eps": 1e-5,
            "torch_dtype": dtype,
        }
        if ctx["attn_logit_softcapping"]:
            cfg["attn_logit_softcapping"] = 50.0
        if ctx["is_mm_prefix_lm"]:
            cfg["is_mm_prefix_lm"] = True
        if ctx["rswa_window"] is not None:
            cfg["rswa_window"] = ctx["rswa_window"]
        if ctx["is_diffusion"]:
            cfg["canvas_length"] = 32
        for field, hf_key in MLA_HF_KEYS.items():
            if ctx[field] is not None:
                cfg[hf_key] = ctx[field]
        folder = Path(self._tmp.name) / f"m{len(self._model_dirs)}"
        folder.mkdir()
        (folder / "config.json").write_text(json.dumps(cfg))
        self._model_dirs[key] = str(folder)
        return str(folder)

    def _vllm_config(self, sel: dict, ctx: dict, mla_prefill_backend: str | None = None):
        from vllm.config import AttentionConfig, CacheConfig, ModelConfig, ParallelConfig, VllmConfig

        dcp = int(ctx["dcp_size"])
        pcp = int(ctx["pcp_size"])
        # DCP reuses the TP ranks (vLLM requires tp % dcp == 0 without PCP).
        tp = dcp if pcp == 1 else 1
        cache = CacheConfig(block_size=sel["block_size"], cache_dtype=ctx["cache_dtype"])
        attention = AttentionConfig(
            flash_attn_version=ctx["flash_attn_version"],
            use_trtllm_attention=ctx["use_trtllm_attention"],
            disable_flashinfer_q_quantization=ctx["disable_flashinfer_q_quantization"],
            mla_prefill_backend=mla_prefill_backend,
        )
        parallel = ParallelConfig(
            tensor_parallel_size=tp,
            decode_context_parallel_size=dcp,
            prefill_context_parallel_size=pcp,
        )
        model = None
        if ctx["has_model"]:
            hv = ctx["model_head_size_v"]
            if hv is not None and hv != ctx["model_head_size"]:
                raise ValueError("model_head_size_v != model_head_size has no vLLM ModelConfig counterpart")
            model = ModelConfig(
                model=self._model_dir(ctx, sel["dtype"], tp),
                skip_tokenizer_init=True,
                dtype=sel["dtype"],
            )
        # VllmConfig's model_config defaults to None but rejects an explicit None.
        with_model = {"model_config": model} if model is not None else {}
        return VllmConfig(
            **with_model,
            cache_config=cache,
            attention_config=attention,
            parallel_config=parallel,
        )

    def run_case(self, case: dict) -> dict:
        from vllm.config import set_current_vllm_config

        result: dict = {
            "priorities": None, "reasons": None, "selected": None, "error": None,
            "warning": None, "fa_version": None, "mla_prefill": None, "oracle_error": None,
        }
        ctx = dict(CONTEXT_DEFAULTS)
        unknown = set(case.get("context", {})) - set(CONTEXT_DEFAULTS)
        if unknown:
            result["oracle_error"] = f"context field(s) the oracle cannot express: {sorted(unknown)}"
            return result
        ctx.update(case.get("context", {}))
        sel = dict(case["selector_config"])

        major, minor = case["capability"]
        self.platform_cls.capability = self.DeviceCapability(int(major), int(minor))
        self._set_kernels(case["kernels"])
        os.environ["VLLM_BATCH_INVARIANT"] = "1" if ctx["batch_invariant"] else "0"
        self._clear_caches()

        prefill = case.get("mla_prefill")
        try:
            vllm_config = self._vllm_config(sel, ctx, prefill["backend"] if prefill else None)
        except Exception as e:  # the inputs cannot be expressed as a VllmConfig
            result["oracle_error"] = f"VllmConfig: {type(e).__name__}: {e}"
            return result
        # Building the config may have consulted cached helpers: start clean.
        self._clear_caches()

        cfg = self.selector.selector_config(sel)
        with set_current_vllm_config(vllm_config):
            result.update(self.selector.select(cfg, case.get("num_heads"), case.get("backend")))
            fa_default = self.selector.fa_version()
            if isinstance(fa_default, str):  # the FA module does not import
                result["fa_version"] = {"default": None, "head_size": None, "import_error": fa_default}
            else:
                result["fa_version"] = {"default": fa_default,
                                        "head_size": self.selector.fa_version(head_size=cfg.head_size)}
            if prefill is not None:
                result["mla_prefill"] = self.selector.mla_prefill(vllm_config)
        return result


def worker(flags_text: str) -> int:
    flags = {k: v == "1" for k, v in (p.split("=") for p in flags_text.split(","))}
    cases = json.load(sys.stdin)
    # Everything vLLM, torch or C code prints goes to stderr; only the JSON
    # result reaches the real stdout.
    real_stdout = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    oracle = Oracle(flags)
    results = []
    for case in cases:
        try:
            results.append(oracle.run_case(case))
        except Exception as e:
            results.append({
                "priorities": None, "reasons": None, "selected": None, "error": None,
                "warning": None, "fa_version": None,
                "oracle_error": f"crash: {type(e).__name__}: {e}\n{traceback.format_exc(limit=6)}",
            })
    json.dump(results, real_stdout)
    real_stdout.flush()
    return 0


def main() -> int:
    import argparse

    ap = argparse.ArgumentParser(description="vLLM 0.33.0 selection oracle (JSON cases on stdin)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                    help="worker processes run at once (one per import-time kernel set)")
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker)
    cases = json.load(sys.stdin)
    json.dump(run_grouped(cases, args.jobs), sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
