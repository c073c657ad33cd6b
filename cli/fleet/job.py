"""What one worker runs, and the worker body both the local pool and the
Ray task call: ``run_job(job) -> payload`` (a JSON-able dict).

A worker runs ``cli.run.execute`` (the local ``attn-select run``) once per
timing window. The first window is the command as given; the others time
again with one fresh-input check each and no spread build timing, so the
run-to-run noise of each row is measured on the same GPU in the same run.
A window's ``RunReport`` travels as its own JSON (``RunReport.to_json``).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import signal
import socket
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

from attn_select.cli.fleet import gpuinfo

PAYLOAD_SCHEMA = "attn-select.worker/1"

# Test hook, for exercising the failure path of a pool or a cluster: a
# worker whose label is named here SIGKILLs itself after its first window.
SIGKILL_HOOK = "ATTN_SELECT_TEST_SIGKILL"

# Where the workers of one run share their JIT caches, unless the machine
# already names one (its variables are left as they are).
CACHE_VARS = {
    "TRITON_CACHE_DIR": "triton",
    "TORCHINDUCTOR_CACHE_DIR": "inductor",
    "FLASHINFER_WORKSPACE_BASE": "flashinfer",
    "TVM_FFI_CACHE_DIR": "tvm-ffi",
    "TORCH_EXTENSIONS_DIR": "torch-extensions",
    "CUDA_CACHE_PATH": "cuda",
}


@dataclass
class Job:
    label: str  # the unit's name in the merged report: "GPU 0", "H200", ...
    run: dict[str, Any]  # keyword arguments of cli.run.execute (JSON-able)
    windows: int = 3
    gpu: str | None = None  # NVML index or UUID to read before/after; None: CUDA_VISIBLE_DEVICES
    model_files: dict[str, str] | None = None  # a local model's JSON files, for a remote node
    sigkill_after_window: int | None = None  # the SIGKILL_HOOK test hook

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> "Job":
        return cls(**json.loads(text))


def sigkill_labels(env: dict[str, str] | None = None) -> set[str]:
    raw = (env if env is not None else os.environ).get(SIGKILL_HOOK, "")
    return {s.strip() for s in raw.split(",") if s.strip()}


def cache_env(root: str | Path, env: dict[str, str]) -> dict[str, str]:
    """The JIT-cache variables a worker gets: the machine's own where set,
    else one folder per tool under ``root``, shared by every worker."""
    out = {}
    for var, sub in CACHE_VARS.items():
        out[var] = env.get(var) or str(Path(root) / sub)
    return out


def versions() -> dict[str, str | None]:
    """What a node runs: compared with the driver's before a fleet run."""
    from attn_select.cli import __version__

    def dist(name: str) -> str | None:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            return None

    return {"attn-select": __version__, "vllm": dist("vllm"), "torch": dist("torch"),
            "python": ".".join(map(str, sys.version_info[:3]))}


def model_files(model: str) -> dict[str, str] | None:
    """A local model's JSON files (config.json, hf_quant_config.json,
    params.json, ...), so a node without the folder reads the same config;
    None for a built-in profile name. Weights never travel: a config that
    names no dtype needs --dtype on a remote node."""
    path = Path(model)
    if not path.exists():
        return None
    files = [path] if path.is_file() else sorted(path.glob("*.json"))
    return {f.name: f.read_text() for f in files if f.is_file() and f.stat().st_size < 4_000_000}


def _materialize(job: Job) -> tuple[dict[str, Any], tempfile.TemporaryDirectory | None]:
    run = dict(job.run)
    if not job.model_files:
        return run, None
    tmp = tempfile.TemporaryDirectory(prefix="attn-select-model-")
    for name, text in job.model_files.items():
        (Path(tmp.name) / name).write_text(text)
    single = len(job.model_files) == 1 and Path(run["model"]).suffix == ".json"
    run["model"] = str(Path(tmp.name) / next(iter(job.model_files))) if single else tmp.name
    return run, tmp


def _gpu_state(job: Job) -> tuple[dict | None, str]:
    if job.run.get("device") == "cpu":
        return None, "cpu worker: no GPU to read"
    ref = job.gpu or gpuinfo.visible_ref(os.environ.get("CUDA_VISIBLE_DEVICES"))
    if ref is None:
        return None, "no GPU named and CUDA_VISIBLE_DEVICES unset: GPU state not read"
    try:
        return gpuinfo.query(ref).to_dict(), ""
    except gpuinfo.GpuQueryError as e:
        return None, f"GPU state not read: {e}"


def _error_kind(e: BaseException) -> str:
    from attn_select.selector.errors import UserError

    if isinstance(e, UserError):
        return "bad-input"
    if "OutOfMemory" in type(e).__name__ or "out of memory" in str(e).lower():
        return "oom"
    return "error"


def run_job(job: Job, progress: Callable[[str], None] = lambda m: None) -> dict[str, Any]:
    """Run ``job`` here and return its payload; never raises for a failed run."""
    from attn_select.cli.run import execute

    t0 = time.monotonic()
    payload: dict[str, Any] = {
        "schema": PAYLOAD_SCHEMA, "label": job.label, "host": socket.gethostname(), "pid": os.getpid(),
        "versions": versions(), "windows": [], "error": None, "error_kind": None,
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "cache": {v: os.environ.get(v) for v in CACHE_VARS},
    }
    payload["gpu_before"], payload["gpu_note"] = _gpu_state(job)
    run, tmp = _materialize(job)
    try:
        windows = job.windows if run.get("timing", True) else 1  # no timing: nothing to repeat
        for i in range(1, windows + 1):
            progress(f"window {i}/{windows}")
            kwargs = run if i == 1 else {**run, "checks": 1, "build_span": 0.0}
            report = execute(**kwargs, progress=progress)
            payload["windows"].append(json.loads(report.to_json()))
            if job.sigkill_after_window == i:
                progress(f"test hook {SIGKILL_HOOK}: SIGKILL after window {i}")
                os.kill(os.getpid(), signal.SIGKILL)
    except Exception as e:
        kind = _error_kind(e)
        lines = str(e).strip().splitlines()
        first = lines[0] if lines else ""
        payload["error"] = first if kind == "bad-input" else f"{type(e).__name__}: {first}".rstrip(": ")
        payload["error_kind"] = kind
    finally:
        if tmp is not None:
            tmp.cleanup()
    payload["gpu_after"], note_after = _gpu_state(job)
    payload["gpu_note"] = payload["gpu_note"] or note_after
    payload["elapsed_s"] = time.monotonic() - t0
    return payload
