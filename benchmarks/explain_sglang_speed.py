"""Cold `attn-select explain --engine both` (and --engine sglang) against the
vLLM-only explain, each sample a fresh process (interpreter start, imports,
model parse, both selections, rendering), plus SGLang 0.5.23's own resolution
for the same deployment when a Python with SGLang is found.

    python benchmarks/explain_sglang_speed.py [--runs 15] [--sglang-python /tmp/sglang-venv/bin/python]

Wall time and CPU time (user + sys of the child) are both reported: on a
shared 2-core machine the wall time moves with the load, the CPU time less.
Prints a markdown table for BENCHMARKS.md ("## explain --engine both").
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUDGET_S = 0.25
CASES = {
    "explain llama-3.1-8b --device h100": ["explain", "llama-3.1-8b", "--device", "h100"],
    "explain llama-3.1-8b --device h100 --engine sglang": ["explain", "llama-3.1-8b", "--device", "h100",
                                                           "--engine", "sglang"],
    "explain llama-3.1-8b --device h100 --engine both": ["explain", "llama-3.1-8b", "--device", "h100",
                                                         "--engine", "both"],
    "explain llama-3.1-8b --device a100 --engine both --format json": [
        "explain", "llama-3.1-8b", "--device", "a100", "--engine", "both", "--format", "json"],
    "explain deepseek-v3.2 --device h100 --engine both": ["explain", "deepseek-v3.2", "--device", "h100",
                                                          "--engine", "both"],
    "explain gemma-3-27b --device b200 --engine both": ["explain", "gemma-3-27b", "--device", "b200",
                                                        "--engine", "both"],
}


def attn_select_cmd() -> list[str]:
    exe = shutil.which("attn-select", path=os.path.dirname(sys.executable)) or shutil.which("attn-select")
    return [exe] if exe else [sys.executable, "-m", "attn_select.cli.app"]


def time_cmd(cmd: list[str], runs: int, stdin: str | None = None) -> tuple[list[float], list[float]]:
    """(wall seconds, CPU seconds) per run."""
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        out = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
        walls.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
        if out.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(cmd)} failed: {out.stderr.strip()}")
    return walls, cpus


def sglang_case() -> str:
    """Llama-3.1-8B on an H100 (CUDA 12.9) as the SGLang oracle's JSON case."""
    sys.path.insert(0, str(ROOT))
    from attn_select.selector.profiles import load_model_profile

    config = dict(load_model_profile("llama-3.1-8b")[1]["config"])
    return json.dumps([{"config": config, "capability": [9, 0], "cuda_version": "12.9", "has_flashinfer": True,
                        "gpu_memory_mib": 81920, "flags": {}}])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--sglang-python", default=os.environ.get("ATTN_SELECT_SGLANG_PYTHON", "/tmp/sglang-venv/bin/python"))
    args = ap.parse_args()
    base = attn_select_cmd()
    load = os.getloadavg()[0]
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load average {load:.2f} at start")
    print()
    print("| command | wall median (s) | wall min (s) | CPU median (s) | runs |")
    print("|---|---:|---:|---:|---:|")
    medians = {}
    for label, argv in CASES.items():
        walls, cpus = time_cmd(base + argv, args.runs)
        medians[label] = (statistics.median(walls), min(walls), statistics.median(cpus))
        print(f"| `attn-select {label}` | {statistics.median(walls):.3f} | {min(walls):.3f} | "
              f"{statistics.median(cpus):.3f} | {len(walls)} |")
    oracle = ROOT / "tests" / "sglang_oracle" / "oracle.py"
    if Path(args.sglang_python).exists() and oracle.exists():
        runs = max(3, args.runs // 5)
        walls, cpus = time_cmd([args.sglang_python, str(oracle)], runs, stdin=sglang_case())
        print(f"| SGLang 0.5.23's own resolution, same answer (`tests/sglang_oracle/oracle.py`: import + "
              f"`ServerArgs.resolve_once()`) | {statistics.median(walls):.3f} | {min(walls):.3f} | "
              f"{statistics.median(cpus):.3f} | {len(walls)} |")
    else:
        print("(SGLang peer skipped: no Python with SGLang 0.5.23 found)")
    both = medians["explain llama-3.1-8b --device h100 --engine both"]
    vllm = medians["explain llama-3.1-8b --device h100"]
    print()
    print(f"--engine both costs {both[0] - vllm[0]:+.3f} s wall / {both[2] - vllm[2]:+.3f} s CPU over vLLM-only explain; "
          f"budget {BUDGET_S} s: {'met' if both[1] <= BUDGET_S else 'NOT met'} by the fastest run ({both[1]:.3f} s), "
          f"median {both[0]:.3f} s")


if __name__ == "__main__":
    main()
