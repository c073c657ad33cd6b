"""Cold `attn-select explain` against importing vLLM's own selector for the
same answer. Each sample is a fresh process (cold start, imports included).

    python benchmarks/explain_speed.py [--runs 9] [--vllm-python /tmp/vllm-venv/bin/python]

The peer runs tests/vllm_oracle/oracle.py (vLLM 0.33.0's real selection code
on a stand-in CUDA platform) for the same case; it is skipped when no Python
with vLLM is given or found. Prints a markdown table for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = {
    "explain llama-3.1-8b --device h100": ["explain", "llama-3.1-8b", "--device", "h100"],
    "explain llama-3.1-8b --device h100 --format json": ["explain", "llama-3.1-8b", "--device", "h100", "--format", "json"],
    "explain deepseek-v3 --device b200": ["explain", "deepseek-v3", "--device", "b200"],
    "explain gemma-3-27b --device h100": ["explain", "gemma-3-27b", "--device", "h100"],
}


def attn_select_cmd() -> list[str]:
    exe = shutil.which("attn-select", path=os.path.dirname(sys.executable)) or shutil.which("attn-select")
    return [exe] if exe else [sys.executable, "-m", "attn_select.cli.app"]


def time_cmd(cmd: list[str], runs: int, stdin: str | None = None) -> list[float]:
    samples = []
    for _ in range(runs):
        samples.append(once(cmd, stdin))
    return samples


def once(cmd: list[str], stdin: str | None = None) -> float:
    t0 = time.perf_counter()
    out = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if out.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed: {out.stderr.strip()}")
    return elapsed


def interleaved(cmds: dict[str, list[str]], runs: int) -> dict[str, list[float]]:
    """Round-robin over the commands, so that a slow spell of a shared
    machine hits every command alike rather than one of them."""
    samples: dict[str, list[float]] = {label: [] for label in cmds}
    for _ in range(runs):
        for label, cmd in cmds.items():
            samples[label].append(once(cmd))
    return samples


def vllm_case() -> str:
    """Llama-3.1-8B on an H100 as the oracle's JSON case."""
    return json.dumps([{
        "capability": [9, 0],
        "selector_config": {"head_size": 128, "dtype": "bfloat16", "kv_cache_dtype": "auto", "block_size": None},
        "num_heads": None, "backend": None,
        "kernels": {"fa2": True, "fa3": True, "fa4": True, "flashinfer": True, "trtllm_cubins": True, "flashmla": True},
        "context": {},
    }])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--vllm-python", default=os.environ.get("ATTN_SELECT_VLLM_PYTHON", "/tmp/vllm-venv/bin/python"))
    args = ap.parse_args()
    base = attn_select_cmd()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print()
    print("| command | median (s) | min (s) | max (s) | runs |")
    print("|---|---:|---:|---:|---:|")
    cmds = {
        "python -c pass (interpreter start)": [sys.executable, "-c", "pass"],
        "python -c 'import typer.main, rich.console, rich.table, pydantic, yaml' (the CLI stack alone)":
            [sys.executable, "-c", "import typer.main, rich.console, rich.table, pydantic, yaml"],
        **{f"attn-select {label}": base + argv for label, argv in CASES.items()},
    }
    medians = {}
    for label, s in interleaved(cmds, args.runs).items():
        medians[label] = statistics.median(s)
        print(f"| `{label}` | {statistics.median(s):.3f} | {min(s):.3f} | {max(s):.3f} | {len(s)} |")
    oracle = ROOT / "tests" / "vllm_oracle" / "oracle.py"
    if Path(args.vllm_python).exists() and oracle.exists():
        runs = max(3, args.runs // 3)
        s = time_cmd([args.vllm_python, str(oracle)], runs, stdin=vllm_case())
        peer = statistics.median(s)
        print(f"| vLLM 0.33.0's own selector, same answer (`tests/vllm_oracle/oracle.py`) | {peer:.3f} | {min(s):.3f} | {max(s):.3f} | {len(s)} |")
        ours = medians["attn-select explain llama-3.1-8b --device h100"]
        print()
        print(f"ratio: vLLM's selector / attn-select explain = {peer / ours:.1f}x; "
              f"budget 0.25 s: {'met' if ours <= 0.25 else 'NOT met'} ({ours:.3f} s)")
    else:
        print()
        print("(vLLM peer skipped: no Python with vLLM 0.33.0 found)")


if __name__ == "__main__":
    main()
