"""Output of a fanned-out ``attn-select run`` (``--gpus`` or ``--ray``): the
merged table as text, and JUnit with one test case per unit (a GPU of the
node, a GPU type or a node of the cluster). JSON is ``FleetReport.to_json``.
Formatters only render; the figures come from ``fleet.merge``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

from attn_select.cli.formats.xml_doc import xml_document

if TYPE_CHECKING:
    from attn_select.cli.fleet.merge import Cell, FleetReport
    from attn_select.cli.fleet.units import Unit


def _us(x: float) -> str:
    return f"{x:,.1f}" if x < 1000 else f"{x:,.0f}"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _cell_text(c: Cell | None) -> str:
    if c is None:
        return "-"
    if c.status in ("failed", "skipped"):
        return c.status
    head = "" if c.status == "ok" else "WRONG "
    if c.us is None:
        return head + "ok" if not head else head.strip()
    bw = f" {c.kv_tbs:.2f}" if c.kv_tbs is not None else ""
    dev = f" {100 * c.deviation:+.0f}%" if c.deviation is not None else ""
    return f"{head}{_us(c.us)}{bw}{dev}"


def _before_after(u: Unit, attr: str) -> str:
    b = getattr(u.gpu_before, attr, None) if u.gpu_before else None
    a = getattr(u.gpu_after, attr, None) if u.gpu_after else None
    if b is None and a is None:
        return "-"
    return f"{'?' if b is None else b}->{'?' if a is None else a}"


def render_text(r: FleetReport, file=None) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    con = Console(file=file, highlight=False, soft_wrap=False, width=220)
    where = "this node" if r.mode == "node" else f"Ray cluster {r.context.get('address', '')}".rstrip()
    n = len(r.units)
    con.print(f"[bold]attn-select run[/bold] {escape(r.model)} on {n} unit{'s' if n != 1 else ''} of {escape(where)}, "
              f"tp {r.tp} (per-rank heads), {r.windows} timing window{'s' if r.windows != 1 else ''} per unit")
    t = Table(header_style="bold", title="units", title_justify="left")
    for col in ("unit", "status", "device", "UUID / node", "SM MHz", "mem MHz", "temp C", "slowdown reasons",
                "vs peers", "noise", "verdict"):
        t.add_column(col, no_wrap=col in ("unit", "status"))
    for u in r.units:
        rep = u.report
        device = (u.gpu_before.name if u.gpu_before else (rep.device if rep else "-"))
        node = f"node {u.node[:12]}" if u.node else ""
        ident = u.gpu_before.uuid if u.gpu_before else (" ".join(x for x in (u.host, node) if x) or "-")
        reasons = sorted(set((u.gpu_before.slowdown or []) if u.gpu_before else [])
                         | set((u.gpu_after.slowdown or []) if u.gpu_after else []))
        s = r.speed.get(u.label)
        color = "green" if u.confirmed else "red"
        t.add_row(escape(u.label), f"[{color}]{escape(u.status)}[/{color}]", escape(device), escape(ident),
                  _before_after(u, "sm_clock_mhz"), _before_after(u, "mem_clock_mhz"),
                  _before_after(u, "temperature_c"),
                  escape(", ".join(reasons)) if reasons else ("-" if u.gpu_before else escape(u.gpu_note or "-")),
                  f"{100 * s.slowdown:+.1f}%" if s else "-", _pct(s.noise) if s else "-", escape(u.verdict))
    con.print(t)
    labels = [u.label for u in r.units]
    no_report = {u.label: u.status for u in r.units if not u.reports}
    groups: dict[str, list] = {}
    for row in r.rows:
        groups.setdefault(row.group, []).append(row)
    for group, rows in groups.items():
        con.print()
        heads = next((f"{g.attention.get('num_heads')} q / {g.attention.get('num_kv_heads')} kv heads per rank, "
                      f"head {g.attention.get('head_size')}; "
                      for u in r.units for g in (u.report.groups if u.report else []) if g.name == group), "")
        con.print(f"[bold]group {escape(group)}[/bold]: {heads}us/layer, KV TB/s, and against the peers' median "
                  "(* the selected backend)")
        t = Table(header_style="bold")
        t.add_column("shape", no_wrap=True)
        t.add_column("backend", no_wrap=True)
        for label in labels:
            t.add_column(escape(label), justify="right")
        t.add_column("spread", justify="right")
        t.add_column("noise", justify="right")
        for row in rows:
            spread = max(row.spread.values()) if row.spread else None
            noise = max(row.noise.values()) if row.noise else None
            t.add_row(row.shape, escape(row.backend) + (" *" if row.selected else ""),
                      *(escape(no_report.get(label) or _cell_text(row.cells.get(label))) for label in labels), _pct(spread), _pct(noise))
        con.print(t)
    con.print()
    for line in r.findings:
        con.print(f"[red]{escape(line)}[/red]" if "slow:" not in line else f"[yellow]{escape(line)}[/yellow]")
    for n in r.notes:
        con.print(f"note: {escape(n)}")
    con.print(("[green]" if r.exit_code == 0 else "[red]") + escape(r.summary) + "[/]")


def render_junit(r: FleetReport) -> str:
    """One testcase per unit: failed when the unit failed or did not
    confirm the selected backend (and when slow, if --fail-on-slow made
    slowness an error); its GPU and speed figures go to system-out."""
    failures = 0
    root = ET.Element("testsuites", name="attn-select run")
    suite = ET.SubElement(root, "testsuite", name=f"attn-select run {r.model} (tp {r.tp}, {r.mode})")
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="mode", value=r.mode)
    ET.SubElement(props, "property", name="windows", value=str(r.windows))
    for u in r.units:
        case = ET.SubElement(suite, "testcase", classname=r.model, name=u.label)
        if u.elapsed_s is not None:
            case.set("time", f"{u.elapsed_s:.1f}")
        s = r.speed.get(u.label)
        if not u.confirmed:
            failures += 1
            f = ET.SubElement(case, "failure", type=u.status, message=u.verdict)
            f.text = u.verdict + "\n"
        elif s is not None and s.slow and r.fail_on_slow:
            failures += 1
            ET.SubElement(case, "failure", type="slow", message=f"{100 * s.slowdown:+.1f}% against the peers' median")
        lines = [ln for ln in r.findings if ln.startswith(u.label + " ") or ln.startswith(u.label + ":")]
        if u.gpu_before:
            g = u.gpu_before
            lines.append(f"{g.name} {g.uuid}; SM clock {_before_after(u, 'sm_clock_mhz')} MHz, "
                         f"temperature {_before_after(u, 'temperature_c')} C")
        elif u.gpu_note:
            lines.append(u.gpu_note)
        if s is not None:
            lines.append(f"{100 * s.slowdown:+.1f}% against the peers' median over {s.rows} rows; "
                         f"run-to-run noise {100 * s.noise:.1f}%")
        if lines:
            ET.SubElement(case, "system-out").text = "\n".join(lines) + "\n"
    for el in (root, suite):
        el.set("tests", str(len(r.units)))
        el.set("failures", str(failures))
        el.set("errors", "0")
    return xml_document(root)


# --- check LOCK --ray ---------------------------------------------------------------

def render_check_text(r, file=None) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    con = Console(file=file, highlight=False, soft_wrap=False, width=220)
    sel = r.selection
    con.print(f"[bold]attn-select check[/bold] {escape(sel.lockfile)} on {escape(r.context.get('reached', ''))}")
    if sel.ok:
        con.print(f"[green]selection: {len(sel.cases)} groups match the lock[/green]")
    else:
        for d, line in zip(sel.diffs, sel.lines):
            con.print(f"[red]{escape(sel.lockfile)}:{line}: {escape(d.message())}[/red]")
    t = Table(header_style="bold", title="run confirmation per deployment and device", title_justify="left")
    for col in ("deployment", "device", "task", "status", "result"):
        t.add_column(col, no_wrap=col != "result")
    for c in r.cases:
        if c.skipped:
            status, result = "skipped", c.skipped
        else:
            status = c.unit.status if c.unit else "-"
            result = "; ".join(c.problems) if c.problems else (c.unit.verdict if c.unit else "")
        color = "green" if c.ok and not c.skipped else ("yellow" if c.skipped else "red")
        t.add_row(escape(c.deployment), escape(c.device), escape(c.target), f"[{color}]{escape(status)}[/{color}]",
                  escape(result + ("".join(f" (note: {n})" for n in c.notes))))
    con.print(t)
    for n in r.notes:
        con.print(f"note: {escape(n)}")
    bad = [c for c in r.cases if not c.ok]
    if r.ok:
        con.print("[green]the lock matches and every locked deployment was confirmed on its device type[/green]")
    else:
        bits = ([] if sel.ok else [f"{len(sel.diffs)} selection difference(s)"]) + (
            [f"{len(bad)} run confirmation(s) failed: " + ", ".join(c.target for c in bad)] if bad else [])
        con.print("[red]" + escape("; ".join(bits)) + "[/red]")


def render_check_junit(r) -> str:
    """One JUnit file for the fleet: the lock's selection cases (as
    ``check --format junit``) and a case per deployment and device."""
    from attn_select.cli.formats.junit import SUITE, check_suite

    root = ET.Element("testsuites", name=SUITE)
    tests, failures = check_suite(root, r.selection)
    suite = ET.SubElement(root, "testsuite", name=f"{r.selection.lockfile} run on the fleet")
    skipped = 0
    for c in r.cases:
        case = ET.SubElement(suite, "testcase", classname=c.deployment, name=f"run on {c.target.split(' on ', 1)[-1]}")
        if c.unit is not None and c.unit.elapsed_s is not None:
            case.set("time", f"{c.unit.elapsed_s:.1f}")
        if c.skipped:
            skipped += 1
            ET.SubElement(case, "skipped", message=c.skipped)
        elif c.problems:
            f = ET.SubElement(case, "failure", type=c.unit.status if c.unit else "not-run", message=c.problems[0])
            f.text = "\n".join(c.problems) + "\n"
        out = list(c.notes)
        if c.unit is not None:
            out.append(f"{c.unit.verdict} (host {c.unit.host or '?'}, node {c.unit.node or '?'})")
        if out:
            ET.SubElement(case, "system-out").text = "\n".join(out) + "\n"
    run_failures = sum(1 for c in r.cases if c.problems and not c.skipped)
    for k, v in (("tests", len(r.cases)), ("failures", run_failures), ("errors", 0), ("skipped", skipped)):
        suite.set(k, str(v))
    for k, v in (("tests", tests + len(r.cases)), ("failures", failures + run_failures), ("errors", 0)):
        root.set(k, str(v))
    return xml_document(root)
