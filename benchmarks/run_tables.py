"""Markdown tables for BENCHMARKS.md from `attn-select run --format json`
reports (benchmarks/results/h200/*.json).

    python benchmarks/run_tables.py benchmarks/results/h200/llama-3.1-8b.run1.json [--compare run2.json]
"""

from __future__ import annotations

import argparse
import json


def us(x: float) -> str:
    return f"{x:,.1f}" if x < 1000 else f"{x:,.0f}"


def table(rep: dict, only: set[str] | None = None) -> str:
    ceiling = rep["copy_ceiling_tbs"]  # None in a checked-only (--no-timing) report
    ceiling = f"copy ceiling {ceiling:.2f} TB/s (read + write)" if ceiling else "checked only, not timed"
    out = [f"Device {rep['device']} (SM {rep['capability']}), torch {rep['torch']}, {rep['dtype']}, "
           f"KV {rep['kv_cache_dtype']}, page {rep['page_size']}, {ceiling}. Shapes: " + "; ".join(f"{k} = {v}" for k, v in rep["shapes"].items()) + ".", ""]
    for g in rep["groups"]:
        a = g["attention"]
        extra = [f"window {a['sliding_window']}" if a["sliding_window"] else "", f"soft cap {a['soft_cap']}" if a["soft_cap"] else "",
                 "sinks" if a["has_sink"] else ""]
        out.append(f"Group `{g['name']}`: {g['layers']} layers, {a['num_heads']}/{a['num_kv_heads']} heads, head {a['head_size']}"
                   f"{''.join(', ' + e for e in extra if e)}. Selected: {g['selected']} (FA{g['fa_version']}); "
                   f"verdict: {g['verdict']}.")
        out.append("")
        out.append("| shape | backend | kernel | rel err | us / layer | KV TB/s | % of copy | build c (us) | L x t (us) | c / step | first call (s) |")
        out.append("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in g["rows"]:
            if only and r["backend"] not in only:
                continue
            name = r["backend"] + (f" ({r['variant']})" if r["variant"] else "") + (" *" if r["selected"] else "")
            if r["status"] != "ran":
                if r["reason"].startswith("attn-select run has no adapter"):
                    continue
                out.append(f"| {r['shape']} | {name} | {r['status']}: {r['reason']} | | | | | | | | |")
                continue
            p, c = r["perf"], r["check"]
            err = f"{max(c['rel_errors']):.1e}" + ("" if r["correct"] else " WRONG")
            if p is None:
                out.append(f"| {r['shape']} | {name} | {r['kernel']} | {err} | | | | | | | |")
                continue
            out.append(f"| {r['shape']} | {name} | {r['kernel']} | {err} | {us(p['per_layer_us'])} | {p['kv_read_tbs']:.2f} | "
                       f"{100 * (p['ceiling_fraction'] or 0):.0f} | {us(p['build_us'])} | {us(p['num_layers'] * p['per_layer_us'])} | "
                       f"{100 * p['build_share']:.1f}% | {p['first_call_s']:.1f} |")
        out.append("")
        if g["fastest"]:  # none in a checked-only report
            out.append("Fastest: " + ", ".join(f"{k} {v}" for k, v in g["fastest"].items()) + ".")
            out.append("")
    return "\n".join(out)


FIGURES = {  # perf key -> column name in the tables
    "per_layer_us": "us / layer",
    "kv_read_tbs": "KV TB/s",
    "ceiling_fraction": "% of copy",
    "build_us": "build c",
    "step_us": "c + L x t",
    "build_share": "c / step",
}


def _pairs(a: dict, b: dict):
    for ga, gb in zip(a["groups"], b["groups"]):
        for ra, rb in zip(ga["rows"], gb["rows"]):
            if ra["perf"] and rb["perf"]:
                name = ra["backend"] + (f" ({ra['variant']})" if ra["variant"] else "")
                yield ga["name"], ra["shape"], name, ra["perf"], rb["perf"]


def compare(a: dict, b: dict) -> str:
    """Run 1 against run 2: per row the two per-layer times and build costs,
    then the largest difference of every figure (first-call time excluded:
    run 1 may include JIT compiles)."""
    out = ["| group | shape | backend | us / layer run 1 | run 2 | diff | build c run 1 | run 2 | diff |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|"]
    worst: dict[str, tuple[float, str]] = {}
    for group, shape, name, pa, pb in _pairs(a, b):
        d = {k: 100 * (pb[k] - pa[k]) / pa[k] for k in FIGURES}
        for k, v in d.items():
            if abs(v) > abs(worst.get(k, (0.0, ""))[0]):
                worst[k] = (v, f"{group} {shape} {name}")
        out.append(f"| {group} | {shape} | {name} | {us(pa['per_layer_us'])} | {us(pb['per_layer_us'])} | "
                   f"{d['per_layer_us']:+.1f}% | {us(pa['build_us'])} | {us(pb['build_us'])} | {d['build_us']:+.0f}% |")
    out += ["", "Largest run-to-run difference per figure: " + "; ".join(
        f"{FIGURES[k]} {worst[k][0]:+.1f}% ({worst[k][1]})" for k in FIGURES if k in worst) + "."]
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("report")
    ap.add_argument("--compare")
    ap.add_argument("--only", help="comma-separated backends")
    args = ap.parse_args()
    rep = json.load(open(args.report))
    print(table(rep, set(args.only.split(",")) if args.only else None))
    if args.compare:
        print()
        print(compare(rep, json.load(open(args.compare))))


if __name__ == "__main__":
    main()
