"""``attn-select run MODEL --gpus all|0,1,...``: one worker per GPU of this
node, started together, each pinned to its GPU by UUID through
CUDA_VISIBLE_DEVICES and running the model's per-rank shapes for --tp
(``execute`` loads the model with ``tp``, so heads are divided as vLLM
shards them).

Before the parallel run, one worker compiles every kernel into the shared
JIT cache (a correctness-only run on the first GPU), so the others load
them instead of compiling the same kernels at once. With ``--device cpu``
the indices only name worker slots (tests, trying it out): no GPU is read
and no warm-up runs, as the Triton interpreter compiles nothing.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from attn_select.cli.fleet import gpuinfo
from attn_select.cli.fleet.job import Job, cache_env, sigkill_labels
from attn_select.cli.fleet.merge import FleetReport, merge
from attn_select.cli.fleet.pool import Slot, run_pool, worker_argv
from attn_select.cli.fleet.units import MISSING, Unit
from attn_select.selector.errors import UserError, shown


@dataclass
class Target:
    label: str
    ref: str | None  # UUID to pin and read; None on CPU
    peer: str  # GPU model (name)


def cpu_slots() -> int:
    """How many CPU worker slots --device cpu takes: one per CPU, at least two."""
    return max(2, os.cpu_count() or 1)


def parse_gpus(text: str) -> str | list[int]:
    text = text.strip()
    if text == "all":
        return "all"
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit() or len(part) > 6:  # int() refuses past 4300 digits; no node has a million GPUs
            raise UserError(f"--gpus: {shown(part) if part else '(empty)'} is not a GPU index; give all or indices "
                            "such as 0,1,2")
        if int(part) in out:
            raise UserError(f"--gpus: GPU {part} is named twice")
        out.append(int(part))
    return out


def _visible(states: list[gpuinfo.GpuState], env_value: str | None) -> list[gpuinfo.GpuState]:
    """The GPUs this process may use: CUDA_VISIBLE_DEVICES (indices or
    UUIDs, as the machine set it) narrows what the driver lists."""
    if env_value is None:
        return states
    keep = []
    for ref in (r.strip() for r in env_value.split(",") if r.strip()):
        for s in states:
            if ref == s.uuid or (ref.isdigit() and int(ref) == s.index):
                keep.append(s)
    return keep


def plan_targets(gpus: str | list[int], device: str | None, env: dict[str, str]) -> tuple[list[Target], list[Unit], list[str]]:
    """The workers to start, the units for GPUs asked for but not visible, and notes."""
    if device == "cpu":
        if gpus == "all":
            raise UserError("--gpus all with --device cpu: name the worker slots instead, e.g. --gpus 0,1")
        if len(gpus) > cpu_slots():  # each slot is a process that imports torch: 101 of them took the machine
            raise UserError(f"--gpus with --device cpu: {len(gpus)} worker slots, more than the {cpu_slots()} this "
                            "machine's CPUs run at once; name fewer")
        return [Target(f"cpu {i}", None, "cpu") for i in gpus], [], ["--device cpu: each index names a CPU "
                                                                     "worker slot; no GPU state is read"]
    try:
        states = gpuinfo.list_gpus()
    except gpuinfo.GpuQueryError as e:
        raise UserError(f"--gpus: cannot list this node's GPUs ({e}); install the NVIDIA driver's nvidia-smi "
                        "or pynvml, or use --device cpu") from None
    visible = _visible(states, env.get("CUDA_VISIBLE_DEVICES"))
    if not visible:
        raise UserError("--gpus: no GPU visible on this node"
                        + (f" (CUDA_VISIBLE_DEVICES={env['CUDA_VISIBLE_DEVICES']})"
                           if "CUDA_VISIBLE_DEVICES" in env else ""))
    notes = []
    if "CUDA_VISIBLE_DEVICES" in env:
        notes.append(f"CUDA_VISIBLE_DEVICES={env['CUDA_VISIBLE_DEVICES']} narrows the node to "
                     + ", ".join(f"GPU {s.index}" for s in visible))
    if gpus == "all":
        return [Target(f"GPU {s.index}", s.uuid, s.name) for s in visible], [], notes
    by_index = {s.index: s for s in visible}
    shown = ",".join(str(s.index) for s in visible)
    targets, missing = [], []
    for i in gpus:
        s = by_index.get(i)
        if s is None:
            missing.append(Unit(f"GPU {i}", "", MISSING, f"not visible on this node (visible: {shown})"))
        else:
            targets.append(Target(f"GPU {i}", s.uuid, s.name))
    return targets, missing, notes


def default_cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "attn-select" / "jit"


def run_node(run: dict[str, Any], *, gpus: str | list[int], windows: int, timeout_s: float,
             jit_cache: str | None = None, warmup: bool | None = None, fail_on_slow: bool = False,
             progress: Callable[[str, str], None] = lambda u, m: None,
             argv: Callable[[Path, Path], list[str]] = worker_argv,
             on_start: Callable[[str, int], None] | None = None) -> FleetReport:
    """Run ``run`` (execute's keyword arguments) on every target GPU and merge."""
    env = dict(os.environ)
    targets, missing, notes = plan_targets(gpus, run.get("device"), env)
    caches = cache_env(jit_cache or default_cache_root(), env)
    for var, path in caches.items():
        try:
            Path(path).mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # --jit-cache on a file, /dev/null/x, a symlink loop, no permission
            given = f"--jit-cache {jit_cache}" if jit_cache and var not in env else var
            raise UserError(f"cannot create the JIT cache folder {path} ({given}): {exc.strerror or exc}; "
                            "give a folder that can be created") from None
    kill = sigkill_labels(env)

    def slot(t: Target, job_run: dict[str, Any], n_windows: int, label: str | None = None) -> Slot:
        extra = dict(caches)
        if t.ref is not None:
            extra["CUDA_VISIBLE_DEVICES"] = t.ref
        # workers use no NCCL, but never let one turn NVLink multicast on
        extra.setdefault("NCCL_NVLS_ENABLE", env.get("NCCL_NVLS_ENABLE", "0"))
        name = label or t.label
        job = Job(label=name, run=job_run, windows=n_windows, gpu=t.ref,
                  sigkill_after_window=1 if name in kill else None)
        return Slot(job, extra, t.peer)

    context: dict[str, Any] = {"jit_cache": caches, "gpus": [t.label for t in targets] + [u.label for u in missing]}
    if warmup is None:
        warmup = run.get("device") != "cpu"
    if warmup and targets:
        t0 = time.monotonic()
        first = targets[0]
        warm_run = {**run, "timing": False, "checks": 1, "build_span": 0.0}
        (unit,) = run_pool([slot(first, warm_run, 1, f"{first.label} warm-up")], timeout_s, progress, argv)
        took = time.monotonic() - t0
        context["warmup_s"] = took
        if unit.status == "ran":
            notes.append(f"JIT warm-up on {first.label}: {took:.1f} s (a correctness-only run that fills the "
                         "shared JIT cache before the parallel run)")
        else:
            notes.append(f"JIT warm-up on {first.label} failed ({unit.verdict}); each worker compiled for itself")
    units = run_pool([slot(t, run, windows) for t in targets], timeout_s, progress, argv, on_start)
    order = {f"GPU {i}": n for n, i in enumerate(gpus)} if isinstance(gpus, list) else {}
    units = sorted(units + missing, key=lambda u: order.get(u.label, len(order)))
    tp = int(run.get("tp") or 1)
    noun = "CPU worker" if run.get("device") == "cpu" else "GPU"
    return merge(units, mode="node", model=run["model"], tp=tp, windows=windows if run.get("timing", True) else 1,
                 fail_on_slow=fail_on_slow, require_units=tp if gpus == "all" and tp > len(targets) else None,
                 noun=noun, notes=notes, context=context)
