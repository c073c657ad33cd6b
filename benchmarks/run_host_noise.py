"""Where does the run-to-run spread of the build cost c come from?

`attn-select run` times each backend's once-per-step metadata build on the
host (``harness.time_host``). On the H200 VM that figure moved by up to 2x
between two runs of the same command while the device figures agreed within
2 %. This script separates the candidate causes, on the GPU machine:

- probes: one CUDA launch (``torch.zeros`` on the device), FLASH_ATTN's
  build (a zeroed cu_seqlens and a cumsum: three launches), a pinned
  host-to-device upload, the TRITON_ATTN adapter's real build on the
  Llama-3.1-8B decode batch, pure Python work and small CPU torch ops (the
  host's own speed, no driver);
- conditions: ``plain`` (nothing else on the device) and ``after load`` (1 GiB
  of cache allocated and a second of memory-bound copies just finished, as
  when ``run`` times c right after a row's device timing);
- per probe and round: the fastest wall time and the fastest thread CPU time
  (``time_host``), and the steal time the guest kernel accounted meanwhile.

Rounds are spread over ``--seconds`` so that slow spells of the host show
up as rounds, not as noise inside one.

    python3 benchmarks/run_host_noise.py --rounds 8 --seconds 40 --out $OUT

``--per-cpu`` asks a narrower question: is the slow spell a property of the
vCPU the thread happens to run on? Each round pins the timing thread to
every CPU in turn and times the fixed interpreter loop there (fastest of
``--per-cpu-runs``). If each CPU's figure repeats across rounds while CPUs
differ, pinning the build timing to one CPU would make c repeat; if every
CPU drifts together, the host as a whole changes speed and pinning cannot
help. Written to host_noise_per_cpu.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import torch

from attn_select.backends.run.adapter import RunEnv
from attn_select.backends.run.batch import make_batch
from attn_select.selector.run_plan import standalone_row, standard_shapes
from attn_select.backends.run.harness import python_work, time_device, time_host
from attn_select.backends.run.reference import AttnParams
from attn_select.backends.run.runner import load_adapter


def steal_jiffies() -> int:
    """Steal time of all CPUs, in clock ticks (/proc/stat, 8th value)."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    return int(fields[8]) if len(fields) > 8 else 0


def probes(dev: torch.device) -> dict:
    shape = standard_shapes(None, None, ("decode",))[0]
    batch = make_batch(shape, 16, dev, seed=0, spare_pages=64)
    cap = torch.cuda.get_device_capability(dev) if dev.type == "cuda" else None
    env = RunEnv(dev, cap, torch.bfloat16, "auto")
    triton = load_adapter(standalone_row("TRITON_ATTN"), env, AttnParams(32, 8, 128, 128, 128 ** -0.5))
    seq = batch.seq_lens
    pinned = [torch.arange(n, dtype=torch.int32) for n in (4096, 64, 64)]
    if dev.type == "cuda":
        pinned = [t.pin_memory() for t in pinned]

    def fa_build():
        cu = torch.zeros(batch.num_requests + 1, dtype=torch.int32, device=dev)
        cu[1:] = torch.cumsum(seq, 0)
        return cu

    small = torch.arange(4096, dtype=torch.int64)

    def cpu_torch():
        x = small[1:] - small[:-1]
        return int(x.max()) + int(x.sum())

    out = {
        "one launch": lambda: torch.zeros(33, dtype=torch.int32, device=dev),
        "FLASH_ATTN build": fa_build,
        "pinned upload": lambda: [t.to(dev, non_blocking=True) for t in pinned],
        "TRITON_ATTN build": lambda: triton.build(batch),
        "python work": python_work,
        "cpu torch ops": cpu_torch,
    }
    if triton.unavailable():
        out.pop("TRITON_ATTN build")
    return out


def cpu_topology() -> dict[int, str]:
    """SMT siblings of each CPU, as the guest kernel reports them."""
    out = {}
    for cpu in sorted(os.sched_getaffinity(0)):
        path = f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list"
        try:
            with open(path) as f:
                out[cpu] = f.read().strip()
        except OSError:
            out[cpu] = "?"
    return out


def per_cpu(args, dev: torch.device) -> None:
    cpus = sorted(os.sched_getaffinity(0))
    table: dict[int, list[float]] = {c: [] for c in cpus}
    t_start = time.perf_counter()
    try:
        for r in range(args.rounds):
            for cpu in cpus:
                os.sched_setaffinity(0, {cpu})
                t = time_host(python_work, dev, repeats=args.per_cpu_runs, warmup=5, rounds=1)
                table[cpu].append(round(t.min_us, 2))
            wait = t_start + (r + 1) * args.seconds / args.rounds - time.perf_counter()
            if wait > 0:
                time.sleep(wait)
    finally:
        os.sched_setaffinity(0, set(cpus))

    def spread(xs):
        return 100.0 * (max(xs) - min(xs)) / min(xs)

    print(f"{'cpu':>4s}  {'python loop fastest us per round':60s} spread")
    for cpu, xs in table.items():
        print(f"{cpu:4d}  {' '.join(f'{x:6.1f}' for x in xs):60s} {spread(xs):5.1f}%")
    by_round = [min(table[c][r] for c in cpus) for r in range(args.rounds)]
    print(f"best CPU per round: {' '.join(f'{x:.1f}' for x in by_round)} ({spread(by_round):.1f}%)")
    with open(os.path.join(args.out, "host_noise_per_cpu.json"), "w") as f:
        json.dump({"nproc": os.cpu_count(), "siblings": cpu_topology(), "runs": args.per_cpu_runs,
                   "seconds": args.seconds, "python_loop_min_us": table}, f, indent=1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=40.0, help="spread the rounds over this long")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--device", default="cuda", help="cpu: a dry run of the script itself")
    ap.add_argument("--per-cpu", action="store_true", help="time the interpreter loop pinned to each CPU in turn")
    ap.add_argument("--per-cpu-runs", type=int, default=61)
    args = ap.parse_args()
    dev = torch.device(args.device)
    if args.per_cpu:
        per_cpu(args, dev)
        return
    fns = probes(dev)
    src = torch.empty(1 << (29 if dev.type == "cuda" else 20), dtype=torch.uint8, device=dev)
    dst = torch.empty_like(src)
    tick = os.sysconf("SC_CLK_TCK")
    rows: dict[str, list[dict]] = {}
    t_start = time.perf_counter()
    for r in range(args.rounds):
        for cond in ("plain", "after load"):
            if cond == "after load":
                time_device(lambda: dst.copy_(src), dev, calls=4, samples=30, max_seconds=1.0)
            for name, fn in fns.items():
                s0, t0 = steal_jiffies(), time.perf_counter()
                t = time_host(fn, dev)
                steal_ms = (steal_jiffies() - s0) * 1000.0 / tick
                rows.setdefault(f"{name} | {cond}", []).append(dict(
                    round=r, at_s=round(time.perf_counter() - t_start, 2), wall_min_us=t.min_us,
                    wall_median_us=t.median_us, cpu_min_us=t.cpu_min_us,
                    span_s=round(time.perf_counter() - t0, 3), steal_ms_all_cpus=steal_ms))
        wait = t_start + (r + 1) * args.seconds / args.rounds - time.perf_counter()
        if wait > 0:
            time.sleep(wait)

    def spread(xs):
        return 100.0 * (max(xs) - min(xs)) / min(xs)

    print(f"{'probe | condition':40s} {'wall min us (per round)':>40s}  spread | cpu min spread | steal ms")
    for key, rs in rows.items():
        w = [x["wall_min_us"] for x in rs]
        c = [x["cpu_min_us"] for x in rs]
        st = [x["steal_ms_all_cpus"] for x in rs]
        print(f"{key:40s} {' '.join(f'{v:.0f}' for v in w):>40s}  {spread(w):5.1f}% | "
              f"{' '.join(f'{v:.0f}' for v in c)} {spread(c):5.1f}% | {statistics.mean(st):.0f}")
    with open(os.path.join(args.out, "host_noise.json"), "w") as f:
        json.dump({"nproc": os.cpu_count(), "torch_threads": torch.get_num_threads(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
