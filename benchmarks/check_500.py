"""`attn-select check` over 500 deployments, cold, as CI runs it.

    python benchmarks/check_500.py [--runs 7] [--deployments 500]

Builds a deployments file of N *distinct* deployments (every built-in model
profile x every device profile x KV-cache dtype x tensor parallelism, taken
in a fixed order), locks it once, then times fresh `attn-select check`
processes (interpreter start and imports included) and prints a markdown
table for the `## attn-select check` section of BENCHMARKS.md. The target is
2 s on a 2-core CPU machine.
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 2.0


def attn_select_cmd() -> list[str]:
    exe = shutil.which("attn-select", path=os.path.dirname(sys.executable)) or shutil.which("attn-select")
    return [exe] if exe else [sys.executable, "-m", "attn_select.cli.app"]


def deployments_yaml(n: int) -> str:
    """N distinct deployments. Distinct inputs are the worst case: the
    checker shares work between equal inputs, so none is shared here
    beyond the model and device loads and equal selector configs."""
    from attn_select.selector.profiles import device_profile_names, model_profile_names

    combos = itertools.product((1, 2, 4, 8), ("auto", "fp8"), device_profile_names(), model_profile_names())
    lines = ["deployments:"]
    for i, (tp, kv, device, model) in enumerate(itertools.islice(combos, n)):
        lines += [
            f"  - name: d{i:03d}-{model}-{device}-tp{tp}-{kv}",
            f"    model: {model}",
            f"    device: {device}",
            f"    overrides: {{tp: {tp}, kv_cache_dtype: {kv}}}",
        ]
    if len(lines) - 1 != 4 * n:
        raise SystemExit(f"only {(len(lines) - 1) // 4} distinct deployments available")
    return "\n".join(lines) + "\n"


def run(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--deployments", type=int, default=500)
    args = ap.parse_args()

    exe = attn_select_cmd()
    with tempfile.TemporaryDirectory() as tmp:
        deps = Path(tmp) / "deployments.yaml"
        lock = Path(tmp) / "attn-select.lock"
        deps.write_text(deployments_yaml(args.deployments))
        t0 = time.perf_counter()
        out = run(exe + ["lock", str(deps), "-o", str(lock)])
        lock_s = time.perf_counter() - t0
        if out.returncode != 0:
            raise SystemExit(f"lock failed: {out.stderr.strip()}")
        groups = lock.read_text().count("\n  - group: ")
        cases = {
            "check LOCK": exe + ["check", str(lock)],
            "check LOCK --format junit": exe + ["check", str(lock), "--format", "junit"],
            "check LOCK --deployments FILE": exe + ["check", str(lock), "--deployments", str(deps)],
        }
        rows = []
        for label, cmd in cases.items():
            samples = []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                out = run(cmd)
                samples.append(time.perf_counter() - t0)
                if out.returncode != 0:
                    raise SystemExit(f"{label} failed ({out.returncode}): {out.stdout[-500:]}{out.stderr}")
            rows.append((label, statistics.median(samples), min(samples), max(samples)))
        size_kib = lock.stat().st_size / 1024

    print(f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}, {platform.system()} {platform.release()}")
    print(f"Input: {args.deployments} distinct deployments, {groups} attention groups, "
          f"lockfile {size_kib:.0f} KiB (lock itself took {lock_s:.2f} s)")
    print(f"Runs: {args.runs} fresh processes per command; median, min, max wall time\n")
    print("| command | median | min | max | median / 2 s target |")
    print("|---|---:|---:|---:|---:|")
    for label, med, lo, hi in rows:
        print(f"| `attn-select {label}` | {med:.2f} s | {lo:.2f} s | {hi:.2f} s | {med / TARGET_S:.0%} |")


if __name__ == "__main__":
    main()
