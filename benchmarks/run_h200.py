"""One device call's worth of `attn-select run` on the H200: everything in one
process, JSON and text tables under $OUT (or --out).

    python3 benchmarks/run_h200.py --stage sweep            # Triton config sweep (decode + prefill)
    python3 benchmarks/run_h200.py --stage models --models llama-3.1-8b --repeat 2
    python3 benchmarks/run_h200.py --stage warm --models llama-3.1-8b gpt-oss-20b gemma-2-9b

``warm`` runs one checked, untimed step per model, the models in parallel
processes: FlashInfer's kernels JIT-compile on first use (minutes each), and
compiling the three models' kernels side by side on the 16 cores fills the
shared JIT cache in about the time of the slowest model; the timed runs
after it then find every kernel compiled.

Set-up of the offline machine (FlashInfer / FA4 unpacked into /root/keep,
on PYTHONPATH as a pip install would have them; attn-select pip-installed) is
done by benchmarks/run_h200_setup.sh. Model facts come from the built-in
profiles (``selector.profiles.load_model``); if that module is not there
yet, from ``FALLBACK`` below (the published config.json values).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path


def fallback_facts(name: str):
    """Model facts from the published config.json values (used only when the
    profile loader is missing)."""
    from attn_select.selector.model_facts import AttentionGroup, LayerAttention, ModelFacts

    if name == "llama-3.1-8b":
        a = LayerAttention(128, 128, 32, 8)
        return ModelFacts(name, "LlamaForCausalLM", "llama", "bfloat16", 32, 1,
                          (AttentionGroup("full", tuple(range(32)), a),), head_size=128, num_heads=32, num_kv_heads=8)
    if name == "gpt-oss-20b":
        sw = LayerAttention(64, 64, 64, 8, has_sink=True, sliding_window=128)
        full = LayerAttention(64, 64, 64, 8, has_sink=True)
        return ModelFacts(name, "GptOssForCausalLM", "gpt_oss", "bfloat16", 24, 1,
                          (AttentionGroup("sliding", tuple(range(0, 24, 2)), sw),
                           AttentionGroup("full", tuple(range(1, 24, 2)), full)),
                          head_size=64, num_heads=64, num_kv_heads=8)
    if name == "gemma-2-9b":
        sw = LayerAttention(256, 256, 16, 8, sliding_window=4096, logits_soft_cap=50.0)
        full = LayerAttention(256, 256, 16, 8, logits_soft_cap=50.0)
        return ModelFacts(name, "Gemma2ForCausalLM", "gemma2", "bfloat16", 42, 1,
                          (AttentionGroup("sliding", tuple(range(0, 42, 2)), sw),
                           AttentionGroup("full", tuple(range(1, 42, 2)), full)),
                          head_size=256, num_heads=16, num_kv_heads=8, attn_logit_softcapping=50.0)
    raise KeyError(name)


def facts_for(name: str):
    try:
        from attn_select.selector.profiles import load_model

        return load_model(name), "profile"
    except Exception as e:  # loader absent or profile missing on this checkout
        return fallback_facts(name), f"fallback table ({type(e).__name__})"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def apply_tuned(path: Path) -> None:
    """Use the sweep's best Triton configs (same process as the model runs)."""
    if not path.exists():
        return
    from attn_select.backends.run import triton_attn as ta

    best = json.loads(path.read_text())
    for kind in ("decode", "prefill", "mixed"):
        if kind in best:
            setattr(ta, f"{kind.upper()}_CONFIG", ta.KernelConfig(**best[kind]))
    log(f"tuned Triton configs: {best}")


def stage_models(args, out: Path) -> None:
    from attn_select.cli.run import execute, render_text

    apply_tuned(Path(args.keep) / "triton_best.json")
    for name in args.models:
        facts, source = facts_for(name)
        for rep_i in range(args.repeat):
            t0 = time.time()
            log(f"{name} run {rep_i + 1}/{args.repeat} (facts: {source})")
            report = execute(name, device="cuda", facts=facts, progress=log, backend=args.backend,
                             shapes=args.shapes, checks=args.checks, timing=not args.no_timing,
                             kv_cache_dtype=args.kv_cache_dtype)
            report.notes.append(f"model facts: {source}; wall {time.time() - t0:.0f} s")
            tag = f"{name}.{args.tag}{args.index + rep_i}"
            (out / f"{tag}.json").write_text(report.to_json())
            with open(out / f"{tag}.txt", "w") as f:
                render_text(report, file=f)
            render_text(report)
            log(f"{name} run {rep_i + 1}: exit {report.exit_code}: {report.summary}")


def stage_warm(args, out: Path) -> None:
    import subprocess

    procs = []
    kv = args.kv_cache_dtype or "auto"
    tag = "warm" if kv == "auto" else f"warm-{kv}"
    for name in args.models:
        cmd = [sys.executable, __file__, "--stage", "models", "--models", name, "--checks", "1", "--no-timing",
               "--tag", tag, "--out", str(out), "--keep", args.keep, "--shapes", args.shapes, "--kv-cache-dtype", kv]
        procs.append((name, subprocess.Popen(cmd, stdout=open(out / f"{name}.warm.log", "w"),
                                             stderr=subprocess.STDOUT)))
    for name, proc in procs:
        log(f"{name} warm-up: exit {proc.wait()}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--stage", choices=("sweep", "models", "warm"), required=True)
    ap.add_argument("--models", nargs="*", default=["llama-3.1-8b"])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--backend", default=None)
    ap.add_argument("--shapes", default="decode,prefill,mixed")
    ap.add_argument("--checks", type=int, default=2)
    ap.add_argument("--no-timing", action="store_true")
    ap.add_argument("--kv-cache-dtype", default=None, help="as attn-select run's --kv-cache-dtype (fp8: an fp8 cache)")
    ap.add_argument("--tag", default="run", help="file name tag: <model>.<tag><n>.json")
    ap.add_argument("--index", type=int, default=1, help="number of the first run in the file names")
    ap.add_argument("--keep", default="/root/keep")
    ap.add_argument("--out", default=os.environ.get("OUT", "out"))
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.stage == "models":
        stage_models(args, out)
    elif args.stage == "warm":
        stage_warm(args, out)
    else:
        sys.path.insert(0, str(Path(__file__).parent))
        from run_triton_sweep import sweep

        best = sweep(out, log)
        Path(args.keep).mkdir(parents=True, exist_ok=True)
        (Path(args.keep) / "triton_best.json").write_text(json.dumps(best))


if __name__ == "__main__":
    main()
