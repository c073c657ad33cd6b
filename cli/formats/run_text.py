"""`attn-select run`'s text report, laid out for the terminal's width.

A backend skipped for one reason on every shape is one line under the table
(MLA models skip every backend on every shape: one line, not thirty rows).
The rows that remain form one table when it fits; otherwise each row is a
short line with its kernel and timing on indented lines below it. A CPU row
shows what a CPU measures (error, time per layer, build, first call), not
bandwidth or step projections, which mean something only on a GPU.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from attn_select.cli.formats.text import STYLE_DIM, STYLE_HEAD, STYLE_WARN, hanging, make_console

# Below this a kernel / reason column wraps into a few words a line: the
# rows stack instead.
MIN_DETAIL_WIDTH = 30
LABEL = 9  # value column of the labelled lines ("skipped  ...")


def fmt_us(x: float) -> str:
    return f"{x:,.1f}" if x < 1000 else f"{x:,.0f}"


@dataclass
class Column:
    title: str
    gpu_only: bool  # meaningless for a CPU row (bandwidth, projections)

    def value(self, perf) -> str:
        if perf is None:
            return "-"
        return {
            "us/layer": lambda: fmt_us(perf.per_layer_us),
            "KV TB/s": lambda: f"{perf.kv_read_tbs:.2f}",
            "% ceil": lambda: f"{100 * perf.ceiling_fraction:.0f}" if perf.ceiling_fraction else "-",
            "build c us": lambda: fmt_us(perf.build_us),
            "L x t us": lambda: fmt_us(perf.num_layers * perf.per_layer_us),
            "first s": lambda: f"{perf.first_call_s:.1f}",
        }[self.title]()


TIMING = (Column("us/layer", False), Column("KV TB/s", True), Column("% ceil", True),
          Column("build c us", False), Column("L x t us", True), Column("first s", False))


def _on_cpu(perf) -> bool:
    return perf.method == "wall"  # the harness's CPU timing; a GPU row is events or graph replays


def timing_columns(rows) -> tuple[Column, ...]:
    """The timing columns of a group: none without timings, the CPU set when
    every timed row ran on a CPU."""
    timed = [r.perf for r in rows if r.perf is not None]
    if not timed:
        return ()
    if all(_on_cpu(p) for p in timed):
        return tuple(c for c in TIMING if not c.gpu_only)
    return TIMING


def _name(row) -> str:
    return row.label + (" *" if row.selected else "")


def fold_skipped(rows) -> tuple[list, list[tuple[list[str], str]]]:
    """(rows for the table, [(backend labels, reason)]): a backend whose rows
    on every shape it has are skipped for one reason leaves the table for
    one line, shared with the other backends skipped for that reason."""
    by_label: dict[str, list] = {}
    for r in rows:
        by_label.setdefault(r.label, []).append(r)
    folded: dict[str, list[str]] = {}
    kept_labels = set()
    for label, mine in by_label.items():
        reasons = {r.reason for r in mine}
        if all(r.status == "skipped" for r in mine) and len(reasons) == 1:
            folded.setdefault(reasons.pop(), []).append(_name(mine[0]))
        else:
            kept_labels.add(label)
    return [r for r in rows if r.label in kept_labels], [(names, why) for why, names in folded.items()]


def _cells(row) -> tuple[str, str, str]:
    """(status markup, kernel / reason, rel err) of one row; all but the status plain."""
    if row.status == "ran":
        err = f"{max(row.check.rel_errors):.1e}" if row.check else "-"
        status = "[green]ok[/green]" if row.correct else "[red]WRONG[/red]"
        detail = row.kernel + (f" - {row.reason}" if row.reason else "")
    else:
        err, detail = "-", row.reason
        status = "[red]failed[/red]" if row.status == "failed" else "skipped"
    return status, detail, err


def rows_table(rows, timing: tuple[Column, ...]) -> Table:
    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style=STYLE_HEAD)
    for col in ("shape", "backend", "status"):
        t.add_column(col, no_wrap=True)
    t.add_column("kernel / reason", overflow="fold")
    t.add_column("rel err", no_wrap=True, justify="right")
    for c in timing:
        t.add_column(c.title, no_wrap=True, justify="right")
    for r in rows:
        status, detail, err = _cells(r)
        t.add_row(r.shape, escape(_name(r)), status, escape(detail), err, *(c.value(r.perf) for c in timing))
    return t


def _table_fits(con: Console, rows, timing) -> bool:
    from rich.measure import Measurement

    natural = Measurement.get(con, con.options.update_width(1 << 16), rows_table(rows, timing)).maximum
    if natural <= con.width:
        return True
    longest = max([len(_cells(r)[1]) for r in rows] + [len("kernel / reason")])
    return con.width - (natural - longest) >= MIN_DETAIL_WIDTH


def _pack(items: list[str], width: int) -> list[str]:
    """``items`` joined by "; " into lines of at most ``width``, an item never split."""
    lines: list[str] = []
    for item in items:
        if lines and len(lines[-1]) + 2 + len(item) <= width:
            lines[-1] += "; " + item
        else:
            lines.append(item)
    return lines


def _stacked(con: Console, rows, timing) -> None:
    """One short line per row (shape, backend, status, rel err); the kernel or
    reason and the timings on indented lines below it."""
    widths = [max(len(h), *(len(x) for x in col)) for h, col in (
        ("shape", [r.shape for r in rows]), ("backend", [_name(r) for r in rows]))]
    for r in rows:
        status, detail, err = _cells(r)
        head = f"{r.shape:<{widths[0]}}  {escape(_name(r)):<{widths[1]}}  {status}"
        if r.status == "ran":
            head += f"  [{STYLE_DIM}]rel err[/] {err}"
        con.print(head)
        indent = widths[0] + 2 + 2
        if detail:
            hanging(con, "", Text(detail), indent)
        if r.perf is not None and timing:
            items = [f"{c.title} {c.value(r.perf)}" for c in timing]
            for line in _pack(items, con.width - indent):
                con.print(Text(" " * indent + line, style=STYLE_DIM))


def _group(con: Console, g, cpu_pass: bool) -> None:
    a = g.attention
    extras = []
    if a.get("sliding_window"):
        extras.append(f"window {a['sliding_window']}")
    if a.get("soft_cap"):
        extras.append(f"soft cap {a['soft_cap']}")
    if a.get("has_sink"):
        extras.append("sinks")
    sel = escape(g.selected or "none")
    fa = f", FA{g.fa_version}" if g.fa_version else ""
    fi = f", FlashInfer decode {g.flashinfer_decode}" if g.flashinfer_decode else ""
    con.print()
    hanging(con, "", f"[{STYLE_HEAD}]group {escape(g.name)}[/]: {g.layers} layers, {a['num_heads']}/{a['num_kv_heads']} "
            f"heads, head {a['head_size']}{', ' + ', '.join(extras) if extras else ''}; selected {sel}{fa}{fi}", 0)
    rows, skipped = fold_skipped(g.rows)
    if rows:
        timing = timing_columns(rows)
        if _table_fits(con, rows, timing):
            con.print(rows_table(rows, timing))
        else:
            _stacked(con, rows, timing)
    for names, why in skipped:
        where = "on every shape" if len({r.shape for r in g.rows}) > 1 else ""
        hanging(con, "skipped", f"{escape(', '.join(names))}{' ' + where if where else ''}: {escape(why)}", LABEL)
    if g.fastest:
        hanging(con, "fastest", ", ".join(f"{k} {escape(v)}" for k, v in g.fastest.items()), LABEL)
    if g.verdict == "confirmed":
        con.print(f"[green]{g.verdict}[/green]: {escape(g.verdict_detail)}")
    elif g.verdict == "missing" and cpu_pass:
        hanging(con, f"[{STYLE_WARN}]not confirmed on this CPU[/]:", escape(g.verdict_detail), 0)
    else:
        con.print(f"[red]{g.verdict}[/red]: {escape(g.verdict_detail)}")


def run_text(report, width: int | None = None, stream=None) -> str:
    """The report for ``stream`` (default stdout: colour on a terminal) at
    ``width`` (default: the terminal's)."""
    buf = io.StringIO()
    con = make_console(buf, stream)
    if width is not None:
        con.width = width
    cpu = report.capability is None
    where = escape(report.device) + ("" if cpu else f" (SM {report.capability})")
    head = (f"[bold]attn-select run[/bold] {escape(report.model)} on {where}, torch {report.torch}, "
            f"{report.dtype}, kv {report.kv_cache_dtype}, page {report.page_size}")
    if not cpu:
        head += f", copy ceiling {report.copy_ceiling_tbs:.2f} TB/s" if report.copy_ceiling_tbs else ", copy ceiling n/a"
    hanging(con, "", head, 0)
    for kind, desc in report.shapes.items():
        con.print(f"  {kind}: {desc}")
    # a passing CPU run whose selection could not run here: not confirmed, not failed
    cpu_pass = cpu and report.exit_code == 0
    for g in report.groups:
        _group(con, g, cpu_pass)
    for n in report.notes:
        hanging(con, "note:", escape(n), 6)
    con.print(("[green]" if report.exit_code == 0 else "[red]") + escape(report.summary) + "[/]")
    return buf.getvalue()
