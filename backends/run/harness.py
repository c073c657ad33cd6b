"""Measuring: device time per call, host time of the build, first-call (JIT)
time with a progress ticker, and the copy ceiling.

Device time: warm-up first, then the calls are launched back to back between
two CUDA events (captured into a CUDA graph and replayed when capture works,
which removes launch gaps), and the median over many such windows is kept.
Synchronising around every call would add ~60 us of host round trip to each.
"""

from __future__ import annotations

import gc
import statistics
import threading
import time
from dataclasses import dataclass
from typing import Callable

import torch


@dataclass(frozen=True)
class Timing:
    median_us: float  # per call
    min_us: float
    samples: int  # windows measured
    calls_per_sample: int
    method: str  # "cuda-graph" | "events" | "wall"


def time_device(fn: Callable[[], None], device: torch.device, calls: int = 8, samples: int = 25,
                warmup: int = 3, max_seconds: float = 3.0, use_graph: bool = True,
                settle_s: float = 0.0) -> Timing:
    """Median per-call device time of ``fn`` (which must launch the same work each call).

    ``settle_s``: before the timed windows, the work is replayed back to back
    for this long. A GPU left idle (while the host checked or timed a build)
    drops its SM clock and takes a while to climb back, and a compute-bound
    kernel timed in that climb reads several per cent slow, by a different
    amount in each run; a memory-bound one hardly moves."""
    if device.type != "cuda":
        for _ in range(max(1, warmup)):
            fn()
        ts = []
        t_end = time.perf_counter() + max_seconds
        for _ in range(samples):
            t0 = time.perf_counter()
            fn()
            ts.append((time.perf_counter() - t0) * 1e6)
            if time.perf_counter() > t_end:
                break
        return Timing(statistics.median(ts), min(ts), len(ts), 1, "wall")

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize(device)
    replay: Callable[[], None] | None = None
    method = "events"
    if use_graph:
        try:
            stream = torch.cuda.Stream(device)
            stream.wait_stream(torch.cuda.current_stream(device))
            with torch.cuda.stream(stream):
                fn()  # one more warm-up on the side stream, as capture requires
            torch.cuda.current_stream(device).wait_stream(stream)
            torch.cuda.synchronize(device)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                for _ in range(calls):
                    fn()
            graph.replay()
            torch.cuda.synchronize(device)
            replay = graph.replay
            method = "cuda-graph"
        except Exception:
            torch.cuda.synchronize(device)
            replay = None
    if replay is None:
        def replay():
            for _ in range(calls):
                fn()

    # size the number of windows to the time budget
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    replay()
    stop.record()
    stop.synchronize()
    one = max(start.elapsed_time(stop) / 1000.0, 1e-6)
    if settle_s > 0:
        for _ in range(max(1, int(settle_s / one))):
            replay()
        # no synchronize: the windows queue behind the settling work, so the GPU never idles
    n = max(5, min(samples, int(max_seconds / one)))
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
    for a, b in events:
        a.record()
        replay()
        b.record()
    torch.cuda.synchronize(device)
    per = sorted(a.elapsed_time(b) * 1000.0 / calls for a, b in events)
    return Timing(statistics.median(per), per[0], n, calls, method)


@dataclass(frozen=True)
class HostTiming:
    min_us: float  # the build cost c: its fastest run
    median_us: float
    samples: int
    # CPU time of the calling thread in its fastest run: excludes time the
    # thread was off the CPU (other processes, and on a VM with steal-time
    # accounting the hypervisor), so it tells a slow host from slow code
    cpu_min_us: float = 0.0


def time_host(fn: Callable[[], object], device: torch.device, repeats: int = 31, warmup: int = 10,
              threads: int | None = 1, rounds: int = 5, pause_s: float = 0.05) -> HostTiming:
    """Host wall time (us) of ``fn``, the once-per-step metadata build.

    Timed with torch's intra-op threads at ``threads`` (1): a vLLM 0.33.0
    worker serves with one (``set_torch_threads_for_runtime``), since OpenMP
    workers waking for a small CPU op cost more than they save and make the
    step's host time erratic. The build is then fixed CPU work plus small
    uploads, and its run-to-run spread is interference (other processes, the
    garbage collector, a clock change), which only ever adds time: the
    minimum of many runs is the figure to report (as ``timeit`` advises);
    the median is kept beside it. The runs are spread over ``rounds`` rounds
    ``pause_s`` apart; a host that slows for seconds at a time needs
    ``SpreadHostTimer`` as well. The collector is paused while timing, and
    the device is idle at the start of each run, so queued kernels never
    stall the build."""
    return summarize(host_samples(fn, device, repeats, warmup, threads, rounds, pause_s))


def host_samples(fn: Callable[[], object], device: torch.device, repeats: int = 31, warmup: int = 10,
                 threads: int | None = 1, rounds: int = 5, pause_s: float = 0.05) -> list[tuple[float, float]]:
    """(wall us, thread CPU us) of each timed run of ``fn``, as ``time_host`` takes them."""
    before = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        for _ in range(warmup):
            fn()
        ts: list[tuple[float, float]] = []
        for r in range(rounds):
            if r:
                time.sleep(pause_s)
            ts += _timed_runs(fn, device, repeats)
        return ts
    finally:
        torch.set_num_threads(before)


def summarize(ts: list[tuple[float, float]]) -> HostTiming:
    wall = [w for w, _ in ts]
    return HostTiming(min(wall), statistics.median(wall), len(ts), min(c for _, c in ts))


class SpreadHostTimer:
    """Host times of several builds, sampled in bursts spread over tens of seconds.

    Measured on the H200 VM (benchmarks/run_host_noise.py): the host runs in
    spells. The same build's fastest of 155 runs was 295 us in some 5-second
    rounds and 519 us in others, and a fixed interpreter loop moved by 49 %,
    its thread CPU time with it (the CPU is slower, not taken away), so
    neither more runs in one burst nor CPU time make c repeat between runs.
    Each build registered here is timed again in ``finish``: one burst per
    build per pass, passes paced over ``span_s``, so every build gets samples
    from several spells; c is the fastest of all its samples (the row's own
    first measurement included)."""

    def __init__(self, device: torch.device, repeats: int = 31, warmup: int = 3):
        self.device, self.repeats, self.warmup = device, repeats, warmup
        self.jobs: list[tuple[Callable[[], object], list[tuple[float, float]], Callable[[HostTiming, float], None]]] = []

    def add(self, fn: Callable[[], object], first: list[tuple[float, float]],
            done: Callable[[HostTiming, float], None]) -> None:
        """``first``: the samples already taken; ``done(timing, span_s)`` gets the final figure."""
        self.jobs.append((fn, list(first), done))

    def finish(self, span_s: float = 20.0, min_passes: int = 8) -> None:
        if not self.jobs:
            return
        t0 = time.perf_counter()
        passes = 0
        try:
            while passes < min_passes or time.perf_counter() - t0 < span_s:
                for fn, samples, _ in self.jobs:
                    samples += host_samples(fn, self.device, self.repeats, self.warmup, rounds=1)
                passes += 1
                # pace the passes over the span instead of crowding them into one spell
                wait = t0 + passes * span_s / min_passes - time.perf_counter()
                if wait > 0:
                    time.sleep(wait)
        finally:  # on a failure too, every build gets the figure of the samples taken
            span = time.perf_counter() - t0
            jobs, self.jobs = self.jobs, []
            for _, samples, done in jobs:
                done(summarize(samples), span)


def _timed_runs(fn: Callable[[], object], device: torch.device, repeats: int) -> list[tuple[float, float]]:
    """(wall us, thread CPU us) of each run."""
    ts = []
    gc_was_on = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeats):
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            c0 = time.thread_time_ns()
            t0 = time.perf_counter()
            fn()
            ts.append(((time.perf_counter() - t0) * 1e6, (time.thread_time_ns() - c0) / 1e3))
    finally:
        if gc_was_on:
            gc.enable()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return ts


def python_work() -> int:
    """A fixed 3,000-step interpreter loop: the host's own speed, no driver."""
    s = 0
    for i in range(3000):
        s += i * i
    return s


def host_probes(device: torch.device) -> dict[str, float]:
    """Fastest wall time (us) of two fixed host workloads, timed as c is:
    ``python`` (pure interpreter work: the CPU's own speed) and ``launch``
    (one small kernel launch: the driver's path). Timed beside each c, they
    tell a slower host from a slower build when two runs disagree."""
    launch = time_host(lambda: torch.zeros(33, dtype=torch.int32, device=device), device, rounds=3)
    python = time_host(python_work, device, rounds=3)
    return {"python": round(python.min_us, 2), "launch": round(launch.min_us, 2)}


class Ticker:
    """Calls ``progress`` every ``every`` seconds while a slow first call (JIT) runs."""

    def __init__(self, progress: Callable[[str], None], what: str, every: float = 10.0):
        self.progress, self.what, self.every = progress, what, every
        self._stop = threading.Event()
        self._t0 = 0.0

    def __enter__(self) -> "Ticker":
        self._t0 = time.perf_counter()
        self.progress(f"{self.what}: first call (JIT compile / autotune if any) ...")

        def tick():
            while not self._stop.wait(self.every):
                self.progress(f"{self.what}: still compiling, {time.perf_counter() - self._t0:.0f} s")

        self._thread = threading.Thread(target=tick, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=1)

    @property
    def elapsed_s(self) -> float:
        return time.perf_counter() - self._t0


def copy_ceiling(device: torch.device, nbytes: int = 1 << 30) -> float | None:
    """Device-to-device copy bandwidth in bytes/s, counting bytes read plus written."""
    if device.type != "cuda":
        return None
    src = torch.empty(nbytes // 2, dtype=torch.uint8, device=device).random_(0, 255).view(torch.int16)
    dst = torch.empty_like(src)
    t = time_device(lambda: dst.copy_(src), device, calls=4, samples=20, use_graph=False)
    del src, dst
    torch.cuda.empty_cache()
    return 2 * (nbytes // 2) / (t.median_us * 1e-6)
