"""Local worker processes, started together, each with its own time limit.

Every worker is ``python -m attn_select.cli.fleet.worker JOB OUT`` in a session
of its own (so a time limit kills it with everything it started). A worker
that writes OUT ran; one that dies, hangs past its limit or is killed gets
a ``Unit`` saying how it ended, with the last line it printed, and never
stops the others.
"""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from attn_select.cli.fleet.job import Job
from attn_select.cli.fleet.units import CRASHED, TIMEOUT, Unit, unit_from_payload


@dataclass
class Slot:
    """One worker to start: its job, the variables it gets on top of this
    process's environment, and its peer (the GPU model it is compared with)."""

    job: Job
    env: dict[str, str] = field(default_factory=dict)
    peer: str = ""


def worker_argv(job_path: Path, out_path: Path) -> list[str]:
    return [sys.executable, "-m", "attn_select.cli.fleet.worker", str(job_path), str(out_path)]


def _ended(rc: int, tail: list[str]) -> str:
    last = f": {tail[-1]}" if tail else ""
    if rc < 0:
        try:
            sig = signal.Signals(-rc).name
        except ValueError:
            sig = f"signal {-rc}"
        hint = " (the kernel's out-of-memory killer sends SIGKILL too)" if -rc == signal.SIGKILL else ""
        return f"killed by {sig}{hint}{last}"
    return f"exited with code {rc} without a report{last}"


class _Worker:
    def __init__(self, slot: Slot, argv: list[str], out: Path, progress: Callable[[str, str], None]):
        self.slot, self.out = slot, out
        env = {**os.environ, **slot.env}
        self.proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, errors="replace",
                                     start_new_session=True)
        self.started = time.monotonic()
        self.tail: collections.deque[str] = collections.deque(maxlen=20)
        self.timed_out = False
        self.reader = threading.Thread(target=self._read, args=(progress,), daemon=True)
        self.reader.start()

    def _read(self, progress: Callable[[str, str], None]) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            line = line.rstrip()
            if line:
                self.tail.append(line)
                progress(self.slot.job.label, line)

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def unit(self, timeout_s: float) -> Unit:
        self.reader.join(timeout=5)
        label, peer = self.slot.job.label, self.slot.peer or self.slot.job.label
        if self.out.exists():
            return unit_from_payload(label, peer, json.loads(self.out.read_text()))
        tail = list(self.tail)
        if self.timed_out:
            last = f"; last line: {tail[-1]}" if tail else ""
            return Unit(label, peer, TIMEOUT, f"no report within {timeout_s:g} s: killed{last}", pid=self.proc.pid)
        return Unit(label, peer, CRASHED, _ended(self.proc.returncode, tail), pid=self.proc.pid)


def run_pool(slots: list[Slot], timeout_s: float, progress: Callable[[str, str], None] = lambda u, m: None,
             argv: Callable[[Path, Path], list[str]] = worker_argv,
             on_start: Callable[[str, int], None] | None = None) -> list[Unit]:
    """Start every slot's worker at once; return their units in slot order."""
    with tempfile.TemporaryDirectory(prefix="attn-select-pool-") as tmp:
        workers = []
        for i, slot in enumerate(slots):
            job_path, out = Path(tmp) / f"job{i}.json", Path(tmp) / f"out{i}.json"
            job_path.write_text(slot.job.to_json())
            w = _Worker(slot, argv(job_path, out), out, progress)
            workers.append(w)
            if on_start is not None:
                on_start(slot.job.label, w.proc.pid)
        try:
            pending = list(workers)
            while pending:
                for w in list(pending):
                    if w.proc.poll() is not None:
                        pending.remove(w)
                    elif time.monotonic() - w.started > timeout_s:
                        w.timed_out = True
                        w.kill()
                        w.proc.wait()
                        pending.remove(w)
                time.sleep(0.05)
        finally:  # interrupted (Ctrl-C): leave no worker behind
            for w in workers:
                if w.proc.poll() is None:
                    w.kill()
                    w.proc.wait()
        return [w.unit(timeout_s) for w in workers]
