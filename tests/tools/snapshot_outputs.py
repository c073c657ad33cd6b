"""Write every saved output of the CLI into one folder, for a before/after
byte comparison of a change that must not alter behaviour (issue 17).

    python tests/tools/snapshot_outputs.py OUT_DIR [--no-run | --run-only] [--models=a,b]
    diff -r BEFORE_DIR AFTER_DIR   (any two folders: OUT stands for the folder)

Covered: ``explain`` (text, json, markdown) for every built-in model profile
on every device profile; ``--engine sglang`` and ``both`` (json) per model
on each device; ``lock`` of the example deployments file (vllm, sglang,
both) and ``check`` of it in every format; ``matrix`` in every format; and
``run --device cpu --format json --no-timing`` for every model (timings are
off, so the JSON is deterministic). Every command runs in-process through
``cli.app.main`` with its exit code recorded beside its output.
"""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

from attn_select.cli.app import main
from attn_select.selector.profiles import device_profile_names, load_device, model_profile_names

LOCK_DIR = Path(__file__).resolve().parents[2] / "profiles" / "lock"


WHAT_IFS = (
    ["--kv-cache-dtype", "fp8"],
    ["--tp", "2", "--block-size", "32"],
    ["--backend", "FLASHINFER"],
    ["--kernels", "fa2,flashinfer"],
    ["--kernels", "none", "--flash-attn-version", "2"],
    ["--no-use-trtllm-attention", "--tp", "2", "--dcp-size", "2"],
    ["--dtype", "float16", "--has-sink", "--use-batch-invariant"],
)
RAW = (
    ["--capability", "10.0", "--head-size", "576", "--use-mla", "--num-heads", "16"],
    ["--capability", "9.0", "--head-size", "128", "--use-sparse", "--use-mla"],
    ["--capability", "8.0", "--head-size", "80", "--attn-type", "encoder_only", "--format", "json"],
    ["--capability", "12.0", "--head-size", "256", "--use-mm-prefix", "--has-sliding-window", "--format", "json"],
)


def capture(args: list[str]) -> str:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    # run's progress ticker ("still compiling, 10 s") fires on wall time, which a loaded host stretches
    stderr = "".join(line for line in err.getvalue().splitlines(keepends=True) if "still compiling" not in line)
    return f"$ attn-select {' '.join(args)}\nexit {code}\n--- stdout\n{out.getvalue()}--- stderr\n{stderr}"


def write(dest: Path, name: str, args: list[str]) -> None:
    # The output folder is named in lock's command line and output: OUT
    # stands for it, so two snapshots written to different folders compare.
    # REPO stands for the checkout, for the same reason.
    text = capture(args).replace(str(dest), "OUT").replace(str(LOCK_DIR.parents[1]), "REPO")
    (dest / name).write_text(text)


def main_(argv: list[str]) -> None:
    dest = Path(argv[0]).resolve()
    dest.mkdir(parents=True, exist_ok=True)
    models, devices = model_profile_names(), device_profile_names()
    picked = [a.split("=", 1)[1].split(",") for a in argv if a.startswith("--models=")]
    if picked:
        models = [m for m in models if m in picked[0]]
    if "--run-only" not in argv:
        write_selection_outputs(dest, models, devices)
    if "--no-run" not in argv:
        for m in models:
            write(dest, f"run-cpu.{m}.json",
                  ["run", m, "--device", "cpu", "--format", "json", "--no-timing", "--allow-missing"])


def write_selection_outputs(dest: Path, models: list[str], devices: list[str]) -> None:
    for m in models:
        for d in devices:
            for fmt in ("text", "json", "markdown"):
                write(dest, f"explain.{m}.{d}.{fmt}", ["explain", m, "--device", d, "--format", fmt])
            for engine in ("sglang", "both"):
                write(dest, f"explain-{engine}.{m}.{d}.json",
                      ["explain", m, "--device", d, "--engine", engine, "--format", "json"])
    # what-if flags (each one through Overrides) on a Hopper and a Blackwell profile
    for m in models:
        for d in ("h100", "b200", "a100"):
            for i, extra in enumerate(WHAT_IFS):
                write(dest, f"explain-whatif{i}.{m}.{d}.json", ["explain", m, "--device", d, "--format", "json", *extra])
    for i, extra in enumerate(RAW):
        write(dest, f"explain-raw{i}.text", ["explain", *extra])
    deployments = str(LOCK_DIR / "deployments.yaml")
    for engine in ("vllm", "sglang", "both"):
        lock = dest / f"lock.{engine}.lock"
        write(dest, f"lock.{engine}.out", ["lock", deployments, "-o", str(lock), "--engine", engine])
        for fmt in ("text", "json", "junit", "github"):
            write(dest, f"check.{engine}.{fmt}", ["check", str(lock), "--format", fmt])
    write(dest, "check.committed.text", ["check", str(LOCK_DIR / "attn-select.lock")])
    for cap in sorted({str(load_device(d).capability) for d in devices}):
        write(dest, f"matrix.{cap}.text", ["matrix", "--capability", cap])
    for fmt in ("text", "json", "markdown"):
        write(dest, f"matrix.{fmt}", ["matrix", "--format", fmt])


if __name__ == "__main__":
    main_(sys.argv[1:])
