"""One line per row of the `attn-select run --format json` reports in a
folder, for a device call's output (run_h200_fa.sh, run_h200_mla.sh), and
optionally the rows as JSON lines (--rows FILE) for BENCHMARKS.md.

    python3 benchmarks/report_lines.py DIR [--rows FILE] [--group-lines]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

# rows that only say a backend has no run adapter, or is not selectable, carry no measurement
QUIET = ("no adapter", "per the selector")


def _fmt(x, spec: str, unit: str = "") -> str:
    return "" if x is None else f"{x:{spec}}{unit}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir", type=Path)
    ap.add_argument("--rows", type=Path, help="write every measured row as a JSON line here")
    ap.add_argument("--group-lines", action="store_true", help="a line per group: its choice and verdict")
    args = ap.parse_args()
    rows = []
    for f in sorted(args.dir.glob("*.json")):
        try:
            rep = json.loads(f.read_text())
        except ValueError:
            log = f.with_suffix(".log")
            last = (log.read_text().strip().splitlines() or ["?"])[-1] if log.exists() else "?"
            print(f.stem, "no report:", last[:200])
            continue
        print(f"{f.stem}: exit {rep.get('exit_code')}: {rep.get('summary')}")
        for g in rep["groups"]:
            if args.group_lines:
                print(f"  group {g['name']}: selected {g['selected']}, {g['verdict']}: {g['verdict_detail'][:150]}")
            for row in g["rows"]:
                if row["status"] == "skipped" and any(q in row["reason"] for q in QUIET):
                    continue
                perf = row.get("perf") or {}
                err = max(row["check"]["rel_errors"]) if row.get("check") else None
                label = row["backend"] + (f" ({row['variant']})" if row["variant"] else "")
                what = row.get("kernel") or row.get("reason") or ""
                rows.append(dict(run=f.stem, group=g["name"], shape=row["shape"], backend=label, status=row["status"],
                                 correct=row.get("correct"), err=err, us=perf.get("per_layer_us"),
                                 tbs=perf.get("kv_read_tbs"), tflops=perf.get("tflops"), build_us=perf.get("build_us"),
                                 kernel=what))
                print(f"  {g['name']:7} {row['shape']:7} {label:40} {row['status']:7} {_fmt(err, '.1e'):8}"
                      f" {_fmt(perf.get('per_layer_us'), '8.1f', ' us'):11} {_fmt(perf.get('kv_read_tbs'), '5.2f', ' TB/s'):10}"
                      f" {_fmt(perf.get('tflops'), '6.1f', ' TF/s'):11} {_fmt(perf.get('build_us'), '6.1f', ' c'):8} {what[:100]}")
    if args.rows:
        args.rows.write_text("".join(json.dumps(x) + "\n" for x in rows))


if __name__ == "__main__":
    main()
