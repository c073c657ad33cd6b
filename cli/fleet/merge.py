"""Merge units into one ``FleetReport``: a row per (group, shape, backend)
with a cell per unit, each unit's verdict, the slow units, the exit code.

Speed is compared only among peers (units of one GPU model), and only
against the noise measured in the same run:

- a unit's time for a row, T, is the median of its windows' per-layer
  times; its noise for the row, n, is (max - min) / T over those windows;
- the peers' median M of T per row, and each unit's deviation T / M - 1;
- a unit is *slow* when the median of its deviations over the rows it
  shares with its peers exceeds the median over those rows of
  max(its own n, the peers' median n): a gap larger than the run-to-run
  spread of both the unit and a typical peer;
- the *spread* of a row is (max T - min T) / M over the peers.

With one window there is no noise figure, so no unit is called slow.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from typing import Any

from attn_select.backends.run.report import RAN as ROW_RAN
from attn_select.cli.fleet.units import Unit

RowKey = tuple[str, str, str]  # group, shape, backend label


@dataclass
class Cell:
    status: str  # ok | WRONG | failed | skipped
    detail: str = ""  # the inner kernel, or why skipped / the error
    us: float | None = None  # T: median over windows of the per-layer time
    windows_us: list[float] = field(default_factory=list)
    noise: float | None = None  # n: (max - min) / T over windows
    kv_tbs: float | None = None  # KV bytes read / T
    ceiling_fraction: float | None = None
    rel_err: float | None = None  # worst over windows and checks
    deviation: float | None = None  # T / peers' median - 1


@dataclass
class Row:
    group: str
    shape: str
    backend: str
    selected: bool  # explain selected this backend for the group (on some unit)
    cells: dict[str, Cell] = field(default_factory=dict)  # unit label -> cell
    spread: dict[str, float] = field(default_factory=dict)  # peer -> (max T - min T) / median T
    noise: dict[str, float] = field(default_factory=dict)  # peer -> median n of its units


@dataclass
class UnitSpeed:
    slowdown: float  # median deviation over the compared rows
    noise: float  # median threshold over those rows
    rows: int  # rows compared
    worst: str  # the row with the largest deviation, as text
    worst_deviation: float
    slow: bool


@dataclass
class FleetReport:
    mode: str  # node | ray
    model: str
    tp: int
    units: list[Unit]
    rows: list[Row]
    speed: dict[str, UnitSpeed]  # unit label -> figures (units with peers only)
    findings: list[str]  # one line per failed, unconfirmed or slow unit
    notes: list[str] = field(default_factory=list)
    windows: int = 1
    fail_on_slow: bool = False  # a slow unit fails (exit 1, a JUnit failure)
    exit_code: int = 0
    summary: str = ""
    context: dict[str, Any] = field(default_factory=dict)  # how the run was set up (caches, address, ...)

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        units = []
        for u in self.units:
            units.append({
                "label": u.label, "peer": u.peer, "status": u.status, "detail": u.detail,
                "confirmed": u.confirmed, "verdict": u.verdict,
                "gpu_before": u.gpu_before.to_dict() if u.gpu_before else None,
                "gpu_after": u.gpu_after.to_dict() if u.gpu_after else None, "gpu_note": u.gpu_note,
                "host": u.host, "node": u.node, "pid": u.pid, "versions": u.versions, "elapsed_s": u.elapsed_s,
                "cuda_visible_devices": u.cuda_visible_devices,
                "speed": asdict(self.speed[u.label]) if u.label in self.speed else None,
                "reports": [json.loads(r.to_json()) for r in u.reports],
            })
        return {
            "schema": "attn-select.fleet/1", "mode": self.mode, "model": self.model, "tp": self.tp,
            "windows": self.windows, "fail_on_slow": self.fail_on_slow, "context": self.context, "units": units,
            "rows": [asdict(r) for r in self.rows], "findings": self.findings, "notes": self.notes,
            "ok": self.exit_code == 0, "exit_code": self.exit_code, "summary": self.summary,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True, default=str)


def _cell(rows_by_window: list) -> Cell:
    """One unit's cell from the same row in each of its windows."""
    first = rows_by_window[0]
    if any(r.status != ROW_RAN for r in rows_by_window):
        bad = next(r for r in rows_by_window if r.status != ROW_RAN)
        return Cell(status="failed" if bad.status == "failed" else "skipped", detail=bad.reason)
    errs = [max(r.check.rel_errors) for r in rows_by_window if r.check and r.check.rel_errors]
    status = "ok" if all(r.correct for r in rows_by_window) else "WRONG"
    cell = Cell(status=status, detail=first.kernel, rel_err=max(errs) if errs else None)
    times = [r.perf.per_layer_us for r in rows_by_window if r.perf is not None]
    if len(times) == len(rows_by_window) and times:
        t = statistics.median(times)
        cell.us, cell.windows_us = t, times
        cell.noise = (max(times) - min(times)) / t if len(times) > 1 and t > 0 else None
        kv = first.perf.kv_bytes
        cell.kv_tbs = kv / (t * 1e-6) / 1e12 if t > 0 else None
        frac = first.perf.ceiling_fraction
        if frac and first.perf.kv_read_tbs:  # the same ceiling, at the merged time
            cell.ceiling_fraction = frac * cell.kv_tbs / first.perf.kv_read_tbs
    return cell


def _rows(units: list[Unit]) -> list[Row]:
    rows: dict[RowKey, Row] = {}
    for u in units:
        if not u.reports:
            continue
        by_key: dict[RowKey, list] = {}
        for rep in u.reports:
            for g in rep.groups:
                for r in g.rows:
                    by_key.setdefault((g.name, r.shape, r.label), []).append(r)
        for key, found in by_key.items():
            row = rows.setdefault(key, Row(*key, selected=False))
            row.selected = row.selected or any(r.selected for r in found)
            if len(found) == len(u.reports):  # a row missing from a window is not comparable
                row.cells[u.label] = _cell(found)
    return list(rows.values())


def _speed(units: list[Unit], rows: list[Row]) -> dict[str, UnitSpeed]:
    out: dict[str, UnitSpeed] = {}
    peers: dict[str, list[Unit]] = {}
    for u in units:
        if u.reports and u.status == "ran":
            peers.setdefault(u.peer, []).append(u)
    for peer, members in peers.items():
        if len(members) < 2:
            continue
        devs: dict[str, list[tuple[float, float, Row]]] = {u.label: [] for u in members}
        for row in rows:
            timed = [(u, row.cells[u.label]) for u in members
                     if u.label in row.cells and row.cells[u.label].us is not None]
            if len(timed) < 2:
                continue
            ts = [c.us for _, c in timed]
            med = statistics.median(ts)
            if med <= 0:
                continue
            row.spread[peer] = (max(ts) - min(ts)) / med
            noises = [c.noise for _, c in timed if c.noise is not None]
            peer_noise = statistics.median(noises) if noises else None
            if peer_noise is not None:
                row.noise[peer] = peer_noise
            for u, c in timed:
                c.deviation = c.us / med - 1
                if peer_noise is not None and c.noise is not None:
                    devs[u.label].append((c.deviation, max(c.noise, peer_noise), row))
        for label, items in devs.items():
            if not items:
                continue
            slowdown = statistics.median(d for d, _, _ in items)
            noise = statistics.median(t for _, t, _ in items)
            d, _, worst = max(items, key=lambda x: x[0])
            out[label] = UnitSpeed(slowdown=slowdown, noise=noise, rows=len(items),
                                   worst=f"{worst.backend} {worst.group}/{worst.shape}", worst_deviation=d,
                                   slow=slowdown > noise)
    return out


def _gpu_text(u: Unit) -> str:
    b, a = u.gpu_before, u.gpu_after
    if b is None:
        return ""
    parts = [b.name, b.uuid]
    if b.sm_clock_mhz is not None:
        after = a.sm_clock_mhz if a else None
        parts.append(f"SM clock {b.sm_clock_mhz}->{after if after is not None else '?'} MHz"
                     + (f" of {b.max_sm_clock_mhz}" if b.max_sm_clock_mhz else ""))
    if b.temperature_c is not None:
        after = a.temperature_c if a else None
        parts.append(f"{b.temperature_c}->{after if after is not None else '?'} C")
    slow = sorted(set((b.slowdown or []) + ((a.slowdown or []) if a else [])))
    if slow:
        parts.append("slowdown " + "+".join(slow))
    return ", ".join(parts)


def merge(units: list[Unit], *, mode: str, model: str, tp: int, windows: int, fail_on_slow: bool = False,
          require_units: int | None = None, noun: str = "GPU", notes: list[str] | None = None,
          context: dict[str, Any] | None = None) -> FleetReport:
    rows = _rows(units)
    speed = _speed(units, rows)
    findings: list[str] = []
    for u in units:
        gpu = _gpu_text(u)
        where = f" ({gpu})" if gpu else ""
        if not u.confirmed:
            findings.append(f"{u.label}{where}: {u.verdict}")
    for u in units:
        s = speed.get(u.label)
        if s is not None and s.slow:
            gpu = _gpu_text(u)
            findings.append(
                f"{u.label}{' (' + gpu + ')' if gpu else ''}: slow: {100 * s.slowdown:+.1f}% per layer against "
                f"the {u.peer} median over {s.rows} rows, above the run-to-run noise of {100 * s.noise:.1f}%; "
                f"worst {s.worst} {100 * s.worst_deviation:+.1f}%")
    failed = [u for u in units if not u.confirmed]
    slow = [u for u in units if u.label in speed and speed[u.label].slow]
    short = require_units is not None and len(units) < require_units
    if short:
        findings.append(f"only {len(units)} {noun}s for --tp {tp}: a deployment of tensor-parallel size {tp} "
                        f"needs {require_units}")
    all_notes = list(notes or [])
    if windows < 2:
        all_notes.append("one timing window per unit: no run-to-run noise, so no unit is called slow")
    if failed or short or (fail_on_slow and slow):
        exit_code = 1
        bits = []
        if failed:
            bits.append(f"{len(failed)} of {len(units)} {noun}s failed or did not confirm the selected backend: "
                        + ", ".join(u.label for u in failed))
        if short:
            bits.append(f"fewer {noun}s than --tp {tp}")
        if fail_on_slow and slow:
            bits.append(f"slow: {', '.join(u.label for u in slow)}")
        summary = "; ".join(bits)
    else:
        exit_code = 0
        every = f"all {len(units)} {noun}s" if len(units) != 1 else f"the one {noun}"
        summary = f"selected backend confirmed on {every}" + (
            f"; slow: {', '.join(u.label for u in slow)}" if slow else "")
    return FleetReport(mode=mode, model=model, tp=tp, units=units, rows=rows, speed=speed, findings=findings,
                       notes=all_notes, windows=windows, fail_on_slow=fail_on_slow, exit_code=exit_code, summary=summary,
                       context=context or {})
