"""One worker's outcome (a ``Unit``: a GPU of a node, a GPU type or a node
of a cluster), rebuilt from its payload or from how it ended.

A unit that ran carries the ``RunReport`` of each timing window, rebuilt
from the window's JSON into the report's own dataclasses; fields that a
newer or older ``RunReport`` has and this one lacks are dropped, so the
merge survives changes to the runner.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from attn_select.backends.run.report import BackendRow, Check, GroupRun, Perf, RunReport
from attn_select.cli.fleet.gpuinfo import GpuState

# How a unit ended.
RAN = "ran"  # the worker finished and wrote its reports (the verdict says whether it confirmed)
ERROR = "error"  # the worker's run raised (its one line is the detail)
BAD_INPUT = "bad-input"  # the node refused the inputs (no CUDA device visible, ...)
OOM = "out-of-memory"
CRASHED = "crashed"  # the process died (a signal, an exit without a report)
TIMEOUT = "timeout"  # past the time limit: killed
MISSING = "missing"  # the GPU asked for is not visible
VANISHED = "vanished"  # the node left the cluster during the run
UNSCHEDULED = "unscheduled"  # the cluster could not place the task


def _build(cls, data: dict[str, Any], **nested):
    names = {f.name for f in dataclasses.fields(cls)}
    kw = {k: v for k, v in data.items() if k in names and k not in nested}
    kw.update(nested)
    return cls(**kw)


def report_from_dict(d: dict[str, Any]) -> RunReport:
    """A RunReport from ``RunReport.to_json`` output."""
    groups = []
    for g in d.get("groups", []):
        rows = []
        for r in g.get("rows", []):
            check = _build(Check, r["check"]) if r.get("check") else None
            perf = _build(Perf, r["perf"]) if r.get("perf") else None
            rows.append(_build(BackendRow, r, check=check, perf=perf))
        groups.append(_build(GroupRun, g, rows=rows))
    return _build(RunReport, d, groups=groups)


@dataclass
class Unit:
    label: str  # "GPU 0", "H200", "H200 @ 10.0.0.3"
    peer: str  # units of one peer (a GPU model) are compared for speed
    status: str
    detail: str = ""  # why it failed, in one line
    reports: list[RunReport] = field(default_factory=list)  # one per timing window
    gpu_before: GpuState | None = None
    gpu_after: GpuState | None = None
    gpu_note: str = ""  # why the GPU state is absent
    host: str | None = None
    node: str | None = None  # Ray node id
    pid: int | None = None
    versions: dict[str, str | None] = field(default_factory=dict)
    elapsed_s: float | None = None
    cuda_visible_devices: str | None = None

    @property
    def report(self) -> RunReport | None:
        return self.reports[0] if self.reports else None

    @property
    def confirmed(self) -> bool:
        """Ran, and the selected backend was confirmed in every window."""
        return self.status == RAN and bool(self.reports) and all(r.exit_code == 0 for r in self.reports)

    @property
    def verdict(self) -> str:
        if self.status != RAN:
            return f"{self.status}: {self.detail}" if self.detail else self.status
        bad = [r for r in self.reports if r.exit_code != 0]
        if bad:
            which = "" if len(self.reports) == 1 else f" (window {self.reports.index(bad[0]) + 1})"
            return f"not confirmed{which}: {bad[0].summary}"
        return self.reports[0].summary or "confirmed"


def unit_from_payload(label: str, peer: str, payload: dict[str, Any], **extra) -> Unit:
    reports = [report_from_dict(w) for w in payload.get("windows", [])]
    kind = payload.get("error_kind")
    status = {None: RAN, "bad-input": BAD_INPUT, "oom": OOM}.get(kind, ERROR)
    return Unit(
        label=label, peer=peer, status=status, detail=payload.get("error") or "", reports=reports,
        gpu_before=GpuState.from_dict(payload.get("gpu_before")),
        gpu_after=GpuState.from_dict(payload.get("gpu_after")), gpu_note=payload.get("gpu_note") or "",
        host=payload.get("host"), pid=payload.get("pid"), versions=payload.get("versions") or {},
        elapsed_s=payload.get("elapsed_s"), cuda_visible_devices=payload.get("cuda_visible_devices"), **extra,
    )
