"""Re-derive a tune report's per-point winners and recommendation from its
measured points, with this checkout's rules, and print it as `tune` prints
text. For a report measured on a machine you no longer hold (the H200): the
points stay as measured, only what is concluded from them is recomputed.

    python benchmarks/tune_rerender.py REPORT.json [--workload decode:32x4096] [--json OUT.json] [--plot FILE]

The workload must be the one the sweep was run with (its points are in the
report); weights come from it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from attn_select.cli.formats.tune_text import tune_text
from attn_select.cli.tune import TuneReport
from attn_select.selector.tune_plan import point_of
from attn_select.selector.tune_result import best_per_point, point_from_dict, recommend
from attn_select.selector.tune_settings import DEFAULT_LABEL, Setting, stand_ins
from attn_select.selector.tune_workload import parse_workload


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report", type=Path)
    ap.add_argument("--workload", default="decode:32x4096")
    ap.add_argument("--json", type=Path, help="also write the re-derived report as tune's JSON")
    ap.add_argument("--plot", type=Path, help="also draw its plots, as tune --plot FILE does")
    a = ap.parse_args(argv)
    data = json.loads(a.report.read_text())
    points = [point_from_dict(p) for p in data["points"]]
    settings = {s["label"]: Setting(s["label"], s["backend"], s["flash_attn_version"], s["use_trtllm_attention"])
                for s in data["settings"]}
    wl = [(point_of(it.shape), it.weight) for it in parse_workload(a.workload)]
    missing = [p for p, _ in wl if not any(r.point == p for r in points)]
    if missing:
        print(f"error: the report has no point {missing[0]!r}: pass the --workload it was run with",
              file=sys.stderr)
        return 2
    ours = stand_ins()
    rec = recommend(points, wl, settings, DEFAULT_LABEL, ours)
    notes = [n for n in data.get("notes", []) if not n.startswith("plots:")]  # the measuring machine's files
    notes.append(f"re-derived from {a.report.name}'s measured points (benchmarks/tune_rerender.py)")
    report = TuneReport(model=data["model"], device=data["device"], dtype=data["dtype"], settings=data["settings"],
                        dropped=data["dropped"], points=points, best=best_per_point(points, DEFAULT_LABEL, ours),
                        recommendation=rec, default_label=DEFAULT_LABEL, jit_s=data.get("jit_s", 0.0),
                        notes=notes, stand_ins=ours)
    sys.stdout.write(tune_text(report))
    if a.json:
        a.json.write_text(report.to_json())
    if a.plot:
        from attn_select.cli.tune_plot import save_plots

        save_plots(report, a.plot)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
