"""Terminal output with rich. Owns the Console factory and the styles.

Every dynamic string (backend names, reasons, model names) passes through
``escape``: a "[word]" would otherwise be read as rich markup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import io
import os
import shutil
import sys

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from attn_select.cli.color import use_color
from attn_select.selector.errors import shown
from attn_select.selector.explain import Explanation, GroupExplanation
from attn_select.cli.formats import by_report_type

if TYPE_CHECKING:
    from attn_select.selector.lock import CheckReport
    from attn_select.selector.matrix import FeatureMatrix


STYLE_SELECTED = "bold green"
STYLE_VALID = "green"
STYLE_INVALID = "red"
STYLE_DIM = "dim"
STYLE_HEAD = "bold"
STYLE_ERROR = "bold red"
STYLE_WARN = "yellow"


def output_width() -> int:
    """COLUMNS, else the terminal's width (120 when not a terminal). Not
    less than 40: narrower, no layout is readable anyway."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    return max(columns or shutil.get_terminal_size((120, 40)).columns, 40)


def make_console(buf: io.StringIO, stream=None) -> Console:
    """One Console for all text output, written to ``buf`` for ``stream``
    (default stdout): colour per ``use_color``, width per ``output_width``."""
    tty = use_color(stream)
    width = output_width()
    stream = sys.stdout if stream is None else stream
    # rich reads a terminal's colour depth from TERM; output forced into
    # colour (FORCE_COLOR on a pipe or a CI log) gets the 8 standard colours
    on_terminal = bool(getattr(stream, "isatty", lambda: False)())
    return Console(
        file=buf, width=width, force_terminal=tty, no_color=not tty,
        color_system=("auto" if on_terminal else "standard") if tty else None, highlight=False, soft_wrap=False,
        # no ":name:" emoji codes: a model or path may contain colons, and
        # the code table is a large import
        emoji=False,
    )


def hanging(console: Console, label: str, value: str | Text, indent: int) -> None:
    """``label`` (markup) then ``value`` (markup or Text), wrapped at words
    to the console's width, its continuation lines indented to the value's
    column rather than folded back to the margin."""
    head = Text.from_markup(label, emoji=False)
    gap = indent - head.cell_len if head.cell_len < indent else (1 if head.cell_len else 0)
    body = Text.from_markup(value, emoji=False) if isinstance(value, str) else value
    column = head.cell_len + gap
    for i, line in enumerate(body.wrap(console, max(console.width - column, 20))):
        out = Text.assemble(head, " " * gap, line) if i == 0 else Text.assemble(" " * column, line)
        out.rstrip()
        console.print(out)


def warning_lines(console: Console, warnings: tuple, indent: int = 9) -> None:
    """The report's engine warnings (another installed release, a removed
    variable set here), one each, wrapped under the value column."""
    for w in warnings:
        hanging(console, f"[{STYLE_WARN}]warning[/]", escape(w.message), indent)


def layer_ranges(layers: tuple[int, ...]) -> str:
    """(0,1,2,5,7,8) -> "0-2, 5, 7-8"."""
    if not layers:
        return "-"
    out, start, prev = [], layers[0], layers[0]
    for n in layers[1:] + (None,):
        if n is not None and n == prev + 1:
            prev = n
            continue
        out.append(f"{start}" if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    text = ", ".join(out)
    return text if len(text) <= 60 else f"{len(layers)} layers ({text[:50]}...)"


# The backends that run each block's kernels: FlashAttention's version is
# the FLASH_ATTN layer's (and TRITON_FLASH_ATTN's causal child's), the
# dispatch FLASHINFER's (and TRITON_FLASHINFER's causal child's).
FA_BACKENDS = ("FLASH_ATTN", "TRITON_FLASH_ATTN")
FLASHINFER_BACKENDS = ("FLASHINFER", "TRITON_FLASHINFER")
IF_SELECTED = f"[{STYLE_DIM}](if selected)[/] "


def fa_lines(g: GroupExplanation) -> list[tuple[str, str]]:
    """(label, value) lines of the FlashAttention version block."""
    v = g.fa_version
    label = f"[{STYLE_HEAD}]FA version[/]"
    if g.cfg.use_mla:
        return [(label, f"n/a  [{STYLE_DIM}]({escape(v.trail[0].why)})[/]")]
    head = f"FlashAttention {v.version}" if v.version is not None else "no usable FlashAttention build"
    why = "; ".join(escape(s.why) for s in v.trail) or "-"
    cond = "" if g.selection.selected in FA_BACKENDS else IF_SELECTED
    lines = [(label, f"{cond}{head}  [{STYLE_DIM}]({why})[/]")]
    if g.fa_version_noarg.version != v.version:
        lines.append(("", f"[{STYLE_WARN}]vLLM's no-argument call (sink and per-head-scale support) "
                          f"resolves FA {g.fa_version_noarg.version}, not {v.version}[/]"))
    return lines


def flashinfer_lines(g: GroupExplanation) -> list[tuple[str, str]]:
    """(label, value) lines of FlashInfer's per-batch dispatch."""
    d = g.flashinfer
    if d is None:
        return []
    rows = d.describe()
    cond = "" if g.selection.selected in FLASHINFER_BACKENDS else IF_SELECTED
    return [(f"[{STYLE_HEAD}]FlashInfer[/]", cond + escape(rows[0]))] + [("", escape(r)) for r in rows[1:]]


def ranking_line(g: GroupExplanation) -> str | None:
    """Why the selected backend beat the others: vLLM takes the first valid
    backend of its priority list, so every other valid one ranks below it.
    None for an explicit backend (validated alone, nothing ranked)."""
    sel = g.selection
    if sel.selected is None or sel.backend:
        return None
    chosen = next(c for c in sel.candidates if c.name == sel.selected)
    below = [c.name for c in sel.candidates if c.valid and c.name != sel.selected]
    above = [c.name for c in sel.candidates if c.priority < chosen.priority]
    where = f"vLLM's priority list for SM{sel.cap.to_int()}"
    parts = []
    if below:
        parts.append(f"{_names(below)} {'was' if len(below) == 1 else 'were'} valid but "
                     f"{'ranks' if len(below) == 1 else 'rank'} below {sel.selected} in {where}")
    else:
        parts.append(f"the only valid backend in {where}")
    if above:
        parts.append(f"{_names(above)} {'ranks' if len(above) == 1 else 'rank'} above it but "
                     f"{'is' if len(above) == 1 else 'are'} invalid")
    return escape("; ".join(parts))


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def selector_line(g: GroupExplanation) -> str:
    from attn_select.selector.config import SelectorConfig

    defaults = SelectorConfig(0, "", None, None)._asdict()
    shown = []
    for k, v in g.cfg._asdict().items():
        if k in ("head_size", "dtype", "kv_cache_dtype", "block_size") or v != defaults[k]:
            shown.append(f"{k}={v}")
    if g.num_heads is not None:
        shown.append(f"num_heads={g.num_heads}")
    return escape(" ".join(shown)) + f" [{STYLE_DIM}](rest default)[/]"


# A reasons column narrower than this wraps into a ragged column of a few
# words per line: below it, each reason goes on its own lines under its row.
MIN_REASONS_WIDTH = 40


class _Row:
    """One candidate's cells as plain text, with the style of its name."""

    def __init__(self, prio: str, name: str, verdict: str, style: str, reasons: tuple[str, ...],
                 cudagraphs: str, blocks: str) -> None:
        self.prio, self.name, self.verdict, self.style = prio, name, verdict, style
        self.reasons, self.cudagraphs, self.blocks = reasons, cudagraphs, blocks

    def fixed(self) -> tuple[str, str, str, str, str]:
        """The cells that never wrap: all but the reasons."""
        return self.prio, self.name, self.verdict, self.cudagraphs, self.blocks


def verdict(name: str, valid: bool, selected: str | None) -> tuple[str, str]:
    """(verdict, style) of a backend named ``name`` among the candidates."""
    if name == selected:
        return "selected", STYLE_SELECTED
    if valid:
        return "valid", STYLE_VALID
    return "invalid", STYLE_INVALID


def verdict_of(candidate, selected: str | None) -> tuple[str, str]:
    """(verdict, style) of a candidate (a decode or MLA prefill backend)."""
    return verdict(candidate.name, candidate.valid, selected)


def candidate_rows(g: GroupExplanation) -> list[_Row]:
    facts = {f.name: f for f in g.backend_facts}
    sel = g.selection
    rows = []
    for c in sel.candidates:
        verdict, style = verdict_of(c, sel.selected)
        rows.append(_Row("-" if c.priority < 0 else str(c.priority), c.name, verdict, style, c.reasons,
                         facts[c.name].cudagraph_support, ", ".join(facts[c.name].kernel_block_sizes)))
    return rows


def group_table(g: GroupExplanation) -> Table:
    """The candidates as one table, reasons in a column (wrapped in it when long)."""
    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, expand=False)
    t.add_column("#", justify="right", no_wrap=True)
    t.add_column("backend", no_wrap=True)
    t.add_column("verdict", no_wrap=True)
    t.add_column("reasons", overflow="fold")
    t.add_column("cuda graphs", no_wrap=True, style=STYLE_DIM)
    t.add_column("kernel blocks", no_wrap=True, style=STYLE_DIM)
    for r in candidate_rows(g):
        t.add_row(
            r.prio,
            f"[{r.style}]{escape(r.name)}[/]",
            f"[{r.style}]{r.verdict}[/]",
            escape("; ".join(r.reasons)),
            r.cudagraphs,
            escape(r.blocks),
        )
    return t


def prefill_table(p) -> Table:
    """The MLA prefill candidates, in the order vLLM tries them."""
    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, expand=False)
    t.add_column("#", justify="right", no_wrap=True)
    t.add_column("prefill backend", no_wrap=True)
    t.add_column("verdict", no_wrap=True)
    t.add_column("reasons")
    for c in p.candidates:
        verdict, style = verdict_of(c, p.selected)
        t.add_row(
            "-" if c.priority < 0 else str(c.priority),
            f"[{style}]{escape(c.name)}[/]",
            f"[{style}]{verdict}[/]",
            escape("; ".join(c.reasons)),
        )
    return t


def mla_prefill_lines(console: Console, g: GroupExplanation) -> None:
    """The MLA layer's second decision: its prefill backend."""
    p = g.mla_prefill
    if p is None:
        if g.group is None and g.cfg.use_mla:
            hanging(console, f"[{STYLE_HEAD}]MLA prefill[/]", f"[{STYLE_DIM}]not selected without a MODEL (its "
                    "config reads the model's dtype and MLA dims)[/]", LABEL)
        return
    dims = p.cfg.mla_dimensions
    hanging(console, f"[{STYLE_HEAD}]MLA prefill[/]", f"[{STYLE_DIM}](the backend that runs the new prefill "
            "tokens and context chunks)[/]", LABEL)
    hanging(console, f"[{STYLE_DIM}]prefill_config[/]",
            f"dtype={p.cfg.dtype} qk_nope_head_dim={dims.qk_nope_head_dim} "
            f"qk_rope_head_dim={dims.qk_rope_head_dim} v_head_dim={dims.v_head_dim}", LABEL)
    if p.candidates:
        console.print(prefill_table(p))
    if p.selected is not None:
        how = ("explicit --mla-prefill-backend" if p.backend
               else "first valid in priority order; vLLM checks no further")
        hanging(console, f"[{STYLE_SELECTED}]prefill[/]",
                f"[{STYLE_SELECTED}]{escape(p.selected)}[/]  [{STYLE_DIM}]({how})[/]", LABEL)
    elif p.error is not None:
        hanging(console, f"[{STYLE_ERROR}]error[/]", escape(p.error), LABEL)
    else:
        why = p.skipped or "no valid MLA prefill backend; vLLM goes on without one for a sparse layer"
        hanging(console, f"[{STYLE_HEAD}]prefill[/]", f"none  [{STYLE_DIM}]({escape(why)})[/]", LABEL)
    if p.warning:
        hanging(console, f"[{STYLE_WARN}]warning[/]", escape(p.warning), LABEL)


def _table_fits(console: Console, g: GroupExplanation) -> bool:
    """Whether the one-table layout leaves the reasons column its natural
    width, or at least MIN_REASONS_WIDTH."""
    from rich.measure import Measurement

    rows = candidate_rows(g)
    # measured unbounded: a measurement is otherwise clamped to the console's width
    natural = Measurement.get(console, console.options.update_width(1 << 16), group_table(g)).maximum
    if natural <= console.width:
        return True
    longest = max([len("; ".join(r.reasons)) for r in rows] + [len("reasons")])
    return console.width - (natural - longest) >= MIN_REASONS_WIDTH


def _stacked(console: Console, g: GroupExplanation) -> None:
    """The candidates for a narrow terminal: as many of the short columns as
    fit on the row, the others and each reason on indented lines below it,
    wrapped at words (nothing cut)."""
    rows = candidate_rows(g)
    heads = ("#", "backend", "verdict", "cuda graphs", "kernel blocks")
    widths = [max([len(h)] + [len(r.fixed()[i]) for r in rows]) for i, h in enumerate(heads)]
    gap = 2
    inline = len(heads)  # columns on the row; at least #, backend and verdict
    while inline > 3 and sum(widths[:inline]) + gap * (inline - 1) > console.width:
        inline -= 1
    indent = widths[0] + gap + 2  # under the backend name, two further in

    def line(cells: list[tuple[str, str]]) -> Text:
        text = Text()
        for i, (cell, style) in enumerate(cells):
            last = i == len(cells) - 1
            text.append(cell.rjust(widths[0]) if i == 0 else (cell if last else cell.ljust(widths[i])), style)
            if not last:
                text.append(" " * gap)
        return text

    header = line([(h, STYLE_HEAD) for h in heads[:inline]])
    console.print(header)
    console.print("─" * min(len(header), console.width))
    for r in rows:
        cells = list(r.fixed())
        styles = ["", r.style, r.style, STYLE_DIM, STYLE_DIM]
        console.print(line(list(zip(cells, styles))[:inline]))
        rest = [f"{h} {c}" for h, c in zip(heads[inline:], cells[inline:])]
        if rest:
            hanging(console, "", Text("; ".join(rest), style=STYLE_DIM), indent)
        for reason in r.reasons:
            hanging(console, "", Text(reason), indent)


def candidates(console: Console, g: GroupExplanation) -> None:
    """The candidate table, laid out for the console's width."""
    if _table_fits(console, g):
        console.print(group_table(g))
    else:
        _stacked(console, g)


LABEL = 12  # the value column of a group's labelled lines
HEADER_LABEL = 9  # ... and of the report header's


def _group(console: Console, r: Explanation, g: GroupExplanation) -> None:
    a = g.group.attn if g.group else None
    title = f"[{STYLE_HEAD}]group {escape(g.name)}[/]"
    if g.group is not None and a is not None:
        title += f"  layers {layer_ranges(g.group.layers)}  head {a.head_size}"
        if a.head_size_v != a.head_size:
            title += f"/{a.head_size_v}"
        title += f"  {a.num_heads} q / {a.num_kv_heads} kv heads"
        extras = []
        if a.use_mla:
            extras.append("MLA" + (" sparse" if a.use_sparse else ""))
        if a.sliding_window:
            extras.append(f"sliding window {a.sliding_window}")
        if a.has_sink:
            extras.append("sinks")
        if a.logits_soft_cap:
            # a config's non-numeric soft cap is kept as written (vLLM only tests its truthiness)
            cap = a.logits_soft_cap
            extras.append(f"soft cap {cap:g}" if isinstance(cap, float) else f"soft cap {shown(cap)}")
        if a.attn_type != "decoder":
            extras.append(a.attn_type)
        if extras:
            title += "  (" + ", ".join(extras) + ")"
    console.print(title)
    hanging(console, f"[{STYLE_DIM}]selector_config[/]", selector_line(g), len("selector_config") + 1)
    candidates(console, g)
    sel = g.selection
    if sel.selected is not None:
        facts = next(f for f in g.backend_facts if f.name == sel.selected)
        src = r.backend_source
        how = ("explicit --backend" if src == "--attention-backend" else f"explicit backend from {src}") \
            if sel.backend else "highest-priority valid backend"
        hanging(console, f"[{STYLE_SELECTED}]selected[/]",
                f"[{STYLE_SELECTED}]{escape(sel.selected)}[/]  [{STYLE_DIM}]({how})[/]", LABEL)
        ranking = ranking_line(g)
        if ranking:
            hanging(console, f"[{STYLE_HEAD}]why[/]", ranking, LABEL)
        hanging(console, f"[{STYLE_HEAD}]KV cache[/]", escape(facts.kv_cache_shape or "-"), LABEL)
    else:
        hanging(console, f"[{STYLE_ERROR}]error[/]", escape(sel.error or ""), LABEL)
    if g.layer_error:
        hanging(console, f"[{STYLE_ERROR}]layer error[/]",
                f"{escape(g.layer_error)}  [{STYLE_DIM}](raised when vLLM builds the layer)[/]", LABEL)
    if sel.warning:
        hanging(console, f"[{STYLE_WARN}]warning[/]", escape(sel.warning), LABEL)
    for label, value in fa_lines(g) + flashinfer_lines(g):
        hanging(console, label, value, LABEL)
    mla_prefill_lines(console, g)
    console.print()


def device_and_kernels(console: Console, r: Explanation) -> None:
    """The report header's device and kernels lines (what the answer assumed)."""
    d = r.device
    hanging(console, f"[{STYLE_HEAD}]device[/]",
            f"{escape(d.name)}, capability {d.capability}  [{STYLE_DIM}]({escape(d.source)})[/]", HEADER_LABEL)
    present = " ".join(r.kernels.present()) or "none"
    hanging(console, f"[{STYLE_HEAD}]kernels[/]", f"{present}  [{STYLE_DIM}]({escape(r.kernels.source)})[/]",
            HEADER_LABEL)


def explanation_text(r: Explanation) -> str:
    buf = io.StringIO()
    console = make_console(buf)
    console.print(f"[{STYLE_HEAD}]attn-select explain[/]  engine vLLM {r.engine_version}")
    if r.model is not None:
        m = r.model
        hanging(console, f"[{STYLE_HEAD}]model[/]", f"{escape(m.name)} ({escape(m.architecture)}), {m.dtype}, "
                f"{m.num_layers} layers, tp {m.tp}", HEADER_LABEL)
        for other in m.other_layers:
            hanging(console, "", f"{len(other.layers)} {escape(other.kind)} layers "
                    "(not attention: no backend selected)", HEADER_LABEL)
    device_and_kernels(console, r)
    ctx = r.ctx.changed()
    if ctx:
        hanging(console, f"[{STYLE_HEAD}]engine[/]", escape(", ".join(f"{k}={v}" for k, v in ctx.items())),
                HEADER_LABEL)
    for step in r.engine_config_trail:
        hanging(console, f"[{STYLE_HEAD}]config[/]", escape(step.text()), HEADER_LABEL)
    for note in r.notes + r.input_notes:
        hanging(console, f"[{STYLE_DIM}]note[/]", f"[{STYLE_DIM}]{escape(note)}[/]", HEADER_LABEL)
    warning_lines(console, r.warnings, HEADER_LABEL)
    console.print()
    for g in r.groups:
        _group(console, r, g)
    return buf.getvalue()


# --- matrix (attn-select matrix) ---------------------------------------------


def matrix_text(m: FeatureMatrix) -> str:
    """One block per backend: a table this wide does not fit a terminal."""
    buf = io.StringIO()
    console = make_console(buf)
    where = f"  capability {m.capability}" if m.capability is not None else ""
    console.print(f"[{STYLE_HEAD}]attn-select matrix[/]  engine vLLM {m.engine_version}{where}")
    console.print(f"[{STYLE_DIM}](rule) = computed per configuration; the text describes the rule[/]")
    console.print()
    width = max(len(c.title) for c in m.columns) + 2
    for r in m.rows:
        console.print(f"[{STYLE_HEAD}]{escape(r.backend)}[/]  [{STYLE_DIM}]{escape(r.vllm_class)}[/]")
        for col, c in zip(m.columns, r.cells):
            mark = f"[{STYLE_DIM}](rule)[/] " if c.rule else ""
            console.print(f"  {col.title:<{width}}{mark}{escape(c.text)}")
        console.print()
    if m.unsupported:
        console.print(
            f"[{STYLE_INVALID}]not supported on {m.capability}[/]  "
            + escape(", ".join(r.backend for r in m.unsupported))
        )
        console.print()
    for p in m.priorities:
        console.print(f"[{STYLE_HEAD}]priority[/] {escape(p.label)}: " + escape(" > ".join(p.backends)))
    return buf.getvalue()


# --- check (attn-select check) -----------------------------------------------


def check_text(r: CheckReport) -> str:
    """Failures grouped by deployment and group, each with its lockfile
    line; then one summary line. Passing groups are only counted."""
    from attn_select.selector.lock import accept_command, show_value

    buf = io.StringIO()
    console = make_console(buf)
    console.soft_wrap = True  # one line per difference: the terminal wraps, rich does not
    by_case: dict[tuple[str, str | None], list[int]] = {}
    for i, d in enumerate(r.diffs):
        by_case.setdefault((d.deployment, d.group), []).append(i)
    # Align values after the field names; a rare long name just pushes its line.
    width = min(max((len(d.field) for d in r.diffs), default=0), 28) + 2
    warning_lines(console, r.warnings)
    for (dep, group), idx in by_case.items():
        where = f"{r.lockfile}:{min(r.lines[i] for i in idx)}"
        title = escape(dep) + (f" / {escape(group)}" if group is not None else "")
        console.print(f"[{STYLE_ERROR}]FAIL[/]  [{STYLE_HEAD}]{title}[/]  [{STYLE_DIM}]{escape(where)}[/]")
        for i in idx:
            d = r.diffs[i]
            locked, new = show_value(d.field, d.locked), show_value(d.field, d.new)
            console.print(
                f"      {escape(d.field):<{width}} [{STYLE_INVALID}]{escape(locked)}[/] -> "
                f"[{STYLE_VALID}]{escape(new)}[/]"
            )
            if d.detail:
                console.print(f"      {'':<{width}} [{STYLE_DIM}]{escape(d.detail)}[/]")
    from attn_select.cli.formats.words import plural, selections
    from attn_select.selector.lock.compare import SGLANG_CASE

    deps, groups, sglang = r.counts()
    failed = {c for c in by_case if c[1] is not None}
    failed_sglang = sum(1 for c in failed if c[1] == SGLANG_CASE)
    source = "inputs embedded in the lock" if r.inputs == "embedded" else f"inputs from {r.inputs}"
    if r.ok:
        checked = selections(groups, sglang)
        verb = "matches" if groups + sglang == 1 else "match"
        console.print(
            f"[{STYLE_SELECTED}]ok[/]  {checked} in {plural(deps, 'deployment')} {verb} "
            f"{escape(r.lockfile)}  [{STYLE_DIM}]({escape(source)})[/]"
        )
    else:
        checked = selections(groups, sglang, of=(len(failed) - failed_sglang, failed_sglang))
        console.print(
            f"[{STYLE_ERROR}]{plural(len(r.diffs), 'difference')}[/] in {checked} "
            f"({len({c[0] for c in by_case})} of {plural(deps, 'deployment')}) against {escape(r.lockfile)}  "
            f"[{STYLE_DIM}]({escape(source)}; accept with: {escape(accept_command(r))})[/]"
        )
    return buf.getvalue()


# --- SGLang (explain --engine sglang / both) ------------------------------------


def _sglang_header(console: Console, e, title: str | None = None) -> None:
    m, d, p = e.model, e.device, e.platform
    console.print(f"[{STYLE_HEAD}]attn-select explain[/]  {title or f'engine SGLang {e.engine_version}'}")
    archs = ", ".join(e.sgl_model.architectures)
    console.print(f"[{STYLE_HEAD}]model[/]    {escape(m.name)} ({escape(archs)}): {escape(e.sgl_model.describe())}")
    fi = "flashinfer installed" if p.has_flashinfer else "flashinfer not installed"
    console.print(
        f"[{STYLE_HEAD}]device[/]   {escape(d.name)}, capability {d.capability}, CUDA {p.cuda_text()} "
        f"[{STYLE_DIM}]({escape(p.cuda_version_source)})[/], {fi}  [{STYLE_DIM}]({escape(d.source)})[/]"
    )
    given = e.flags.given()
    flags = " ".join(f"--{k.replace('_', '-')} {v}" if v is not True else f"--{k.replace('_', '-')}"
                     for k, v in given.items())
    console.print(f"[{STYLE_HEAD}]flags[/]    {escape(flags) if flags else 'SGLang defaults'}")
    for note in e.notes:
        console.print(f"[{STYLE_DIM}]note     {escape(note)}[/]")
    warning_lines(console, e.warnings)


def _show(v: object) -> str:
    return "None" if v is None else str(v)


def sglang_text(e) -> str:
    buf = io.StringIO()
    console = make_console(buf)
    _sglang_header(console, e)
    _sglang_resolution(console, e.resolution)
    return buf.getvalue()


def _sglang_resolution(console: Console, r) -> None:
    """The default rule, the trail and the resolved fields."""
    console.print()
    if r.default_rule is not None:
        console.print(f"[{STYLE_HEAD}]default rule[/]  {escape(r.default_rule.backend)}  "
                      f"[{STYLE_DIM}]({escape(r.default_rule.branch)})[/]")
    else:
        console.print(f"[{STYLE_HEAD}]default rule[/]  not consulted  [{STYLE_DIM}]({escape(r.default_rule_skipped or '')})[/]")
    if r.trail:
        t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, expand=False)
        t.add_column("#", justify="right", no_wrap=True)
        t.add_column("pass", no_wrap=True)
        t.add_column("field", no_wrap=True)
        t.add_column("old -> new", no_wrap=True)
        t.add_column("why")
        prev = None
        for i, st in enumerate(r.trail, 1):
            # One declaration setting several fields: its reason once.
            why = "" if (st.source, st.why) == prev else st.why
            prev = (st.source, st.why)
            t.add_row(str(i), escape(st.source), escape(st.field),
                      escape(f"{_show(st.old)} -> {_show(st.new)}"), escape(why))
        console.print(t)
    else:
        console.print(f"[{STYLE_DIM}]no pass changed an attention field[/]")
    console.print()
    if r.error is not None:
        console.print(f"[{STYLE_ERROR}]error[/]             {escape(r.error.text())}  "
                      f"[{STYLE_DIM}](raised by {escape(r.error.source)}; SGLang does not start)[/]")
        return
    console.print(f"[{STYLE_SELECTED}]attention backend  {escape(_show(r.attention_backend))}[/]")
    kind = "hybrid" if r.hybrid else "not hybrid"
    console.print(f"[{STYLE_HEAD}]prefill / decode[/]   {escape(_show(r.prefill_backend))} / "
                  f"{escape(_show(r.decode_backend))}  [{STYLE_DIM}]({kind})[/]")
    console.print(f"[{STYLE_HEAD}]page size[/]          {r.page_size}  [{STYLE_DIM}](set by {escape(r.page_size_source())})[/]")
    kv = r.kv_cache_dtype_rewrite()
    if kv is not None:
        console.print(f"[{STYLE_HEAD}]KV-cache dtype[/]     {escape(_show(kv.new))}  "
                      f"[{STYLE_WARN}]rewritten from {escape(_show(kv.old))} by {escape(kv.source)}[/]")
    else:
        console.print(f"[{STYLE_HEAD}]KV-cache dtype[/]     {escape(_show(r.final['kv_cache_dtype']))}  [{STYLE_DIM}](as given)[/]")
    if r.final.get("dsa_prefill_backend") is not None:
        console.print(f"[{STYLE_HEAD}]DSA backends[/]       prefill {escape(_show(r.final['dsa_prefill_backend']))}, "
                      f"decode {escape(_show(r.final['dsa_decode_backend']))}")
    if r.final.get("speculative_algorithm") is not None:
        f = r.final
        console.print(f"[{STYLE_HEAD}]speculative[/]        {escape(_show(f['speculative_algorithm']))}: "
                      f"steps {f['speculative_num_steps']}, topk {f['speculative_eagle_topk']}, "
                      f"draft tokens {f['speculative_num_draft_tokens']}"
                      + (f", draft backend {f['speculative_draft_attention_backend']}"
                         if f.get("speculative_draft_attention_backend") else ""))


def comparison_text(c) -> str:
    buf = io.StringIO()
    console = make_console(buf)
    v, s = c.vllm, c.sglang
    console.print(f"[{STYLE_HEAD}]attn-select explain[/]  engines vLLM {v.engine_version} and SGLang {s.engine_version}")
    m, d = s.model, s.device
    console.print(f"[{STYLE_HEAD}]model[/]    {escape(m.name)} ({escape(m.architecture)}), {m.dtype}, "
                  f"{m.num_layers} layers, tp {m.tp}")
    console.print(f"[{STYLE_HEAD}]device[/]   {escape(d.name)}, capability {d.capability}, CUDA {s.platform.cuda_text()} "
                  f"for SGLang  [{STYLE_DIM}]({escape(d.source)})[/]")
    present = " ".join(v.kernels.present()) or "none"
    console.print(f"[{STYLE_HEAD}]kernels[/]  {present}  [{STYLE_DIM}]({escape(v.kernels.source)}; SGLang reads flashinfer)[/]")
    for note in s.notes:
        console.print(f"[{STYLE_DIM}]note     {escape(note)}[/]")
    warning_lines(console, c.warnings)
    console.print()
    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, expand=False)
    for col in ("group", "layers", "vLLM backend", "vLLM kernels", "block", "SGLang backend", "SGLang kernels", "page"):
        t.add_column(col, no_wrap=col not in ("vLLM kernels", "SGLang kernels"))
    for row in c.rows:
        same = row.vllm.family == row.sglang.family
        style = STYLE_VALID if same else STYLE_WARN
        t.add_row(escape(row.group), str(row.layers), escape(row.vllm.backend), f"[{style}]{escape(row.vllm.family)}[/]",
                  escape(row.vllm.page_size), escape(row.sglang.backend), f"[{style}]{escape(row.sglang.family)}[/]",
                  escape(row.sglang.page_size))
    console.print(t)
    console.print()
    if not c.differences:
        console.print(f"[{STYLE_SELECTED}]no differences[/]")
    console.soft_wrap = True
    for line in c.differences:
        console.print(f"[{STYLE_WARN}]difference[/]  {escape(line)}")
    return buf.getvalue()


# --- profiles (attn-select profiles) --------------------------------------------


def profiles_text(p) -> str:
    """The built-in model and device profiles, one per line (wrapped under
    the value column on a narrow terminal)."""
    buf = io.StringIO()
    console = make_console(buf)
    console.print(f"[{STYLE_HEAD}]model profiles[/]  [{STYLE_DIM}](MODEL; model: in deployments; "
                  "profiles/models/)[/]")
    width = max(len(m.name) for m in p.models) + 2
    for m in p.models:
        groups = ", ".join(m.groups) + (" (MLA)" if m.use_mla else "")
        facts = (f"{m.architecture}, {m.num_layers} layers, {m.num_heads} q / {m.num_kv_heads} kv heads, "
                 f"head {m.head_size}, {m.dtype}; attention groups: {groups}")
        hanging(console, f"[{STYLE_HEAD}]{escape(m.name)}[/]",
                f"{escape(facts)}  [{STYLE_DIM}]({escape(m.source)})[/]", width)
    console.print()
    console.print(f"[{STYLE_HEAD}]device profiles[/]  [{STYLE_DIM}](explain --device NAME; device: in "
                  "deployments; profiles/devices/)[/]")
    width = max(len(d.name) for d in p.devices) + 2
    for d in p.devices:
        facts = f"{d.gpu}, capability {d.capability}, {d.memory_gib:g} GiB, {d.bandwidth_tbs:g} TB/s"
        hanging(console, f"[{STYLE_HEAD}]{escape(d.name)}[/]", escape(facts), width)
    return buf.getvalue()


# --- explain --engine vllm-installed ---------------------------------------------


def _reasons_table(reasons: dict[str, tuple[str, ...]], priorities: tuple[str, ...] | list[str],
                   selected: str | None, backend_column: str = "backend") -> Table:
    """The installed vLLM's candidates: priority, name, verdict, reasons."""
    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, expand=False)
    t.add_column("#", justify="right", no_wrap=True)
    t.add_column(backend_column, no_wrap=True)
    t.add_column("verdict", no_wrap=True)
    t.add_column("reasons", overflow="fold")
    for name, why in reasons.items():
        prio = str(list(priorities).index(name)) if name in priorities else "-"
        word, style = verdict(name, not why, selected)
        t.add_row(prio, f"[{style}]{escape(name)}[/]", f"[{style}]{word}[/]", escape("; ".join(why)))
    return t


def _installed_mla_prefill(console: Console, g) -> None:
    """An MLA group's prefill decision as the installed vLLM makes it."""
    p = g.mla_prefill
    if p is None:
        return
    label = f"[{STYLE_HEAD}]MLA prefill[/]"
    if not p.get("exposed"):
        hanging(console, label, f"[{STYLE_DIM}]this release has no MLA prefill selection "
                "(vllm/v1/attention/backends/mla/prefill/): nothing to compare[/]", LABEL)
        return
    if not g.mla_prefill_asked():
        hanging(console, label, f"none  [{STYLE_DIM}](a sparse impl without a dense-MHA prefill path: "
                "the layer never asks)[/]", LABEL)
        return
    hanging(console, label, f"[{STYLE_DIM}]{escape(str(p.get('selector_config')))}[/]", LABEL)
    console.print(_reasons_table({k: tuple(v) for k, v in (p.get("reasons") or {}).items()},
                                 p.get("priorities") or (), p.get("selected"), "prefill backend"))
    error = g.mla_prefill_error()
    if p.get("selected") is not None:
        hanging(console, f"[{STYLE_SELECTED}]prefill[/]", f"[{STYLE_SELECTED}]{escape(p['selected'])}[/]", LABEL)
    elif error is not None:
        hanging(console, f"[{STYLE_ERROR}]error[/]", escape(error), LABEL)
    else:
        hanging(console, f"[{STYLE_HEAD}]prefill[/]", f"none  [{STYLE_DIM}](no valid MLA prefill backend; "
                "the sparse layer goes on without one)[/]", LABEL)


def _installed_group(console: Console, mirror: GroupExplanation, g, version: str) -> None:
    console.print(f"[{STYLE_HEAD}]group {escape(g.name)}[/]" + (
        f"  layers {layer_ranges(mirror.group.layers)}" if mirror.group is not None else ""))
    shown = [f"{k}={v}" for k, v in g.selector_config.items()
             if k in ("head_size", "dtype", "kv_cache_dtype", "block_size") or v not in (False, None, "decoder")]
    hanging(console, f"[{STYLE_DIM}]selector_config[/]", escape(" ".join(shown)), len("selector_config") + 1)
    if g.crash is not None:
        hanging(console, f"[{STYLE_ERROR}]error[/]", f"vLLM {escape(version)}'s code raised: "
                f"{escape(g.crash.splitlines()[0])}", LABEL)
        console.print()
        return
    console.print(_reasons_table(g.reasons, g.priorities, g.selected))
    if g.selected is not None:
        hanging(console, f"[{STYLE_SELECTED}]selected[/]", f"[{STYLE_SELECTED}]{escape(g.selected)}[/]", LABEL)
    else:
        hanging(console, f"[{STYLE_ERROR}]error[/]", escape(g.error or ""), LABEL)
    if g.warning:
        hanging(console, f"[{STYLE_WARN}]warning[/]", escape(g.warning), LABEL)
    if not mirror.cfg.use_mla:
        hanging(console, f"[{STYLE_HEAD}]FA version[/]", f"{escape(str(g.fa_version))}  [{STYLE_DIM}]"
                f"(get_flash_attn_version as the layer calls it; no-argument call: "
                f"{escape(str(g.fa_version_noarg))})[/]", LABEL)
    if g.trtllm is not None:
        hanging(console, f"[{STYLE_HEAD}]FlashInfer[/]", f"trtllm decode {escape(str(g.trtllm.get('decode')))}, "
                f"prefill {escape(str(g.trtllm.get('prefill')))}  [{STYLE_DIM}](use_trtllm_attention: "
                "8 decode tokens, 2048 prefill tokens, max_seq_len 4096)[/]", LABEL)
    _installed_mla_prefill(console, g)
    console.print()


def installed_text(r) -> str:
    from attn_select.selector.vllm_installed import engine_config_failure

    buf = io.StringIO()
    console = make_console(buf)
    m = r.mirror
    console.print(f"[{STYLE_HEAD}]attn-select explain[/]  engine vLLM {escape(r.engine_version)}, its own selection "
                  f"code  [{STYLE_DIM}](--engine vllm-installed; compared with the vLLM {m.engine_version} mirror)[/]")
    hanging(console, f"[{STYLE_HEAD}]python[/]", escape(r.python), HEADER_LABEL)
    if m.model is not None:
        hanging(console, f"[{STYLE_HEAD}]model[/]", f"{escape(m.model.name)} ({escape(m.model.architecture)}), "
                f"tp {m.model.tp}", HEADER_LABEL)
    device_and_kernels(console, m)
    stand_in_lines(console, r.stand_ins)
    if r.engine_config is not None:
        ec = ", ".join(f"{k}={v}" for k, v in r.engine_config.items())
        hanging(console, f"[{STYLE_HEAD}]config[/]", f"{escape(ec)}  [{STYLE_DIM}](EngineArgs.create_engine_config)[/]",
                HEADER_LABEL)
    warning_lines(console, r.warnings, HEADER_LABEL)
    console.print()
    for mirror, g in zip(m.groups, r.groups):
        _installed_group(console, mirror, g, r.engine_version)
    if r.error is not None:
        hanging(console, f"[{STYLE_ERROR}]error[/]", escape(engine_config_failure(r.engine_version, r.error)),
                HEADER_LABEL)
    difference_lines(console, r.differences, f"vLLM {m.engine_version}")
    return buf.getvalue()


def sglang_installed_text(r) -> str:
    buf = io.StringIO()
    console = make_console(buf)
    m = r.mirror
    _sglang_header(console, r.installed, f"engine SGLang {escape(r.engine_version)}, its own resolution code  "
                   f"[{STYLE_DIM}](--engine sglang-installed; compared with the SGLang {m.engine_version} mirror)[/]")
    hanging(console, f"[{STYLE_HEAD}]python[/]", escape(r.python), HEADER_LABEL)
    stand_in_lines(console, r.stand_ins)
    _sglang_resolution(console, r.installed.resolution)
    if r.messages:
        console.print()
        console.print(f"[{STYLE_HEAD}]SGLang logged[/]")
        for func, level, text in r.messages:
            hanging(console, f"[{STYLE_DIM}]{escape(level.lower())}[/]", f"{escape(text)}  [{STYLE_DIM}]({escape(func)})[/]",
                    LABEL)
    console.print()
    difference_lines(console, r.differences, f"SGLang {m.engine_version}")
    return buf.getvalue()


def stand_in_lines(console: Console, stand_ins: tuple[str, ...]) -> None:
    """Every stand-in the installed engine's code ran with, or that none was."""
    for s in stand_ins:
        hanging(console, f"[{STYLE_WARN}]stand-in[/]", escape(s), HEADER_LABEL)
    if not stand_ins:
        hanging(console, f"[{STYLE_DIM}]stand-in[/]", f"[{STYLE_DIM}]none: this machine's driver and GPU answer[/]",
                HEADER_LABEL)


def difference_lines(console: Console, differences: tuple[str, ...], mirror: str) -> None:
    """The count of differences from the mirror, then each."""
    if differences:
        n = len(differences)
        console.print(f"[{STYLE_WARN}]{n} difference{'s' if n != 1 else ''} from the {mirror} mirror[/]")
        for line in differences:
            hanging(console, f"[{STYLE_WARN}]difference[/]", escape(line), LABEL)
    else:
        console.print(f"[{STYLE_SELECTED}]0 differences from the {mirror} mirror[/]")


# --- doctor (attn-select doctor) ------------------------------------------------


DOCTOR_FOOT = len("--kernels  ")  # the value column of the closing --kernels / explain lines


def doctor_text(r) -> str:
    """Per section, one line per check: its name, then the value and why,
    wrapped under the value column as explain's lines are."""
    buf = io.StringIO()
    console = make_console(buf)
    hanging(console, f"[{STYLE_HEAD}]attn-select doctor[/]", escape(r.python), len("attn-select doctor  "))
    warning_lines(console, r.warnings)
    for section in r.sections:
        console.print()
        console.print(f"[{STYLE_HEAD}]{escape(section.title)}[/]")
        column = 2 + max((len(c.name) for c in section.checks), default=0) + 2
        for c in section.checks:
            style = {True: STYLE_VALID, False: STYLE_INVALID, None: ""}[c.ok]
            value = f"[{style}]{escape(c.value)}[/]" if style else escape(c.value)
            detail = f"  [{STYLE_DIM}]{escape(c.detail)}[/]" if c.detail else ""
            hanging(console, f"  {escape(c.name)}", value + detail, column)
    console.print()
    hanging(console, f"[{STYLE_HEAD}]--kernels[/]", escape(r.kernels_flag), DOCTOR_FOOT)
    hanging(console, f"[{STYLE_DIM}]explain[/]", f"[{STYLE_DIM}]{escape(r.kernels_assumed)}[/]", DOCTOR_FOOT)
    return buf.getvalue()


render = by_report_type("text", Explanation=explanation_text, FeatureMatrix=matrix_text, CheckReport=check_text,
                        SGLangExplanation=sglang_text, EngineComparison=comparison_text,
                        ProfileListing=profiles_text, DoctorReport=doctor_text, InstalledExplanation=installed_text,
                        SGLangInstalledExplanation=sglang_installed_text)
