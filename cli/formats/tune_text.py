"""`attn-select tune`'s text report: per point the fastest setting and its
margin over vLLM's default, the settings vLLM rejects, the workload's
projection and recommendation, and a terminal plot (plain text: one row per
setting, a bar per point, the default marked with *)."""

from __future__ import annotations

from attn_select.selector.tune_result import config_label

BAR = 40  # characters of the longest bar


def _us(x: float | None) -> str:
    return "-" if x is None else f"{x:,.1f}" if x < 1e4 else f"{x:,.0f}"


MAX_PLOTTED = 6  # points drawn in full; a larger grid draws the workload's points


def terminal_plot(report) -> list[str]:
    """Per-layer latency per point, one bar per setting, scaled to the point's
    slowest (the workload's points when the grid is large)."""
    points = list(dict.fromkeys((r.point, r.page_size, r.kv_cache_dtype) for r in report.points))
    title = "per-layer latency (us), * = vLLM's default"
    if len(points) > MAX_PLOTTED:
        wanted = set(report.recommendation.workload)
        points = [p for p in points if p[0] in wanted]
        title += "; the workload's points (--plot draws the grid)"
    lines = [title]
    width = max((len(r.setting) for r in report.points), default=10)
    for key in points:
        rows = [r for r in report.points if (r.point, r.page_size, r.kv_cache_dtype) == key and r.ok]
        if not rows:
            continue
        top = max(r.per_layer_us for r in rows) or 1.0
        lines.append(f"  {key[0]} (page {key[1]}, kv {key[2]})")
        for r in rows:
            n = max(1, round(BAR * r.per_layer_us / top))
            mark = "*" if r.setting == report.default_label else " "
            lines.append(f"   {mark}{r.setting:<{width}} {'#' * n:<{BAR}} {_us(r.per_layer_us)}")
    return lines


def tune_text(report) -> str:
    out = [f"attn-select tune {report.model} on {report.device}, {report.dtype}"]
    out.append("settings: " + ", ".join(s["label"] for s in report.settings))
    for d in report.dropped:
        out.append(f"dropped  {d['setting']} (page {d['page_size']}, kv {d['kv_cache_dtype']}): {d['reason']}")
    out.append("")
    out.append(f"{'point':<24} {'page':>4} {'kv':<6} {'fastest':<24} {'us/layer':>10} {'default':>10} "
               f"{'margin':>7} {'noise':>6}")
    for b in report.best:
        margin = "-" if b.margin is None else f"{b.margin:+.1%}"
        noise = "-" if b.noise is None else f"{b.noise:.1%}"
        fastest = (b.fastest or "-") + (" (1)" if b.fastest_stand_in else "")
        out.append(f"{b.point:<24} {b.page_size:>4} {b.kv_cache_dtype:<6} {fastest:<24} "
                   f"{_us(b.fastest_us):>10} {_us(b.default_us):>10} {margin:>7} {noise:>6}")
    skipped = {}
    for r in report.points:
        if not r.ok:
            skipped.setdefault((r.setting, r.status, r.reason), []).append(r.point)
    for (s, status, reason), pts in skipped.items():
        where = pts[0] if len(pts) == 1 else f"{len(pts)} points"
        out.append(f"{status:<8} {s} on {where}: {reason}")
    rec = report.recommendation
    pages = len({r.page_size for r in report.points})
    kvs = len({r.kv_cache_dtype for r in report.points})
    out.append("")
    out.append("workload " + ", ".join(rec.workload) + ": projected step time (layers x per-layer + c)")
    for p in sorted(rec.projections, key=lambda p: (p.step_us is None, p.step_us or 0)):
        mark = "*" if p.config == rec.default else " "
        val = f"{_us(p.step_us)} us" if p.step_us is not None else f"- ({p.missing})"
        name = config_label(p.config, pages, kvs) + (" (1)" if p.stand_in else "")
        out.append(f"  {mark}{name:<32} {val}")
    ours = sorted({p.stand_in for p in rec.projections if p.stand_in}
                  | {b.fastest_stand_in for b in report.best if b.fastest_stand_in})
    for s in ours:
        out.append(f"  (1) a stand-in, never recommended: {s}")
    out.append(f"JIT / first calls: {report.jit_s:.1f} s (not in the timings)")
    out.append("")
    out.extend(terminal_plot(report))
    out.append("")
    for n in report.notes:
        out.append(f"note: {n}")
    if rec.stand_in_note:
        out.append(f"note: {rec.stand_in_note}")
    out.append(("recommendation: " if rec.recommend else "") + rec.text)
    return "\n".join(out) + "\n"
