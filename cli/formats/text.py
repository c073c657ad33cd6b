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

from attn_select.selector.explain import Explanation, GroupExplanation
from attn_select.cli.formats import by_report_type

if TYPE_CHECKING:
    from attn_select.selector.lock import CheckReport, accept_command, show_value
    from attn_select.selector.matrix import FeatureMatrix


STYLE_SELECTED = "bold green"
STYLE_VALID = "green"
STYLE_INVALID = "red"
STYLE_DIM = "dim"
STYLE_HEAD = "bold"
STYLE_ERROR = "bold red"
STYLE_WARN = "yellow"


def make_console(buf: io.StringIO) -> Console:
    """One Console for all text output: colour only on a terminal without
    NO_COLOR; width from COLUMNS or the terminal, at least 100 columns."""
    tty = sys.stdout.isatty() and "NO_COLOR" not in os.environ
    width = int(os.environ.get("COLUMNS", 0)) or max(shutil.get_terminal_size((120, 40)).columns, 100)
    return Console(
        file=buf, width=width, force_terminal=tty, no_color=not tty,
        color_system="auto" if tty else None, highlight=False, soft_wrap=False,
        # no ":name:" emoji codes: a model or path may contain colons, and
        # the code table is a large import
        emoji=False,
    )


def warning_lines(console: Console, warnings: tuple) -> None:
    """The report's engine warnings (another installed release, a removed
    variable set here), one line each; the terminal wraps them."""
    soft = console.soft_wrap
    console.soft_wrap = True
    for w in warnings:
        console.print(f"[{STYLE_WARN}]warning[/]  {escape(w.message)}")
    console.soft_wrap = soft


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


def fa_line(g: GroupExplanation) -> str:
    v = g.fa_version
    if g.cfg.use_mla:
        return f"[{STYLE_HEAD}]FA version[/]  n/a  [{STYLE_DIM}]({escape(v.trail[0].why)})[/]"
    head = f"FlashAttention {v.version}" if v.version is not None else "no usable FlashAttention build"
    why = "; ".join(escape(s.why) for s in v.trail) or "-"
    line = f"[{STYLE_HEAD}]FA version[/]  {head}  [{STYLE_DIM}]({why})[/]"
    if g.fa_version_noarg.version != v.version:
        line += (
            f"\n            [{STYLE_WARN}]vLLM's no-argument call (sink and per-head-scale support) "
            f"resolves FA {g.fa_version_noarg.version}, not {v.version}[/]"
        )
    return line


def flashinfer_lines(g: GroupExplanation) -> list[str]:
    d = g.flashinfer
    if d is None:
        return []
    rows = d.describe()
    return [f"[{STYLE_HEAD}]FlashInfer[/]  " + escape(rows[0])] + [
        "            " + escape(r) for r in rows[1:]
    ]


def selector_line(g: GroupExplanation) -> str:
    from attn_select.selector.config import SelectorConfig

    defaults = SelectorConfig(0, "", None, None)._asdict()
    shown = []
    for k, v in g.cfg._asdict().items():
        if k in ("head_size", "dtype", "kv_cache_dtype", "block_size") or v != defaults[k]:
            shown.append(f"{k}={v}")
    if g.num_heads is not None:
        shown.append(f"num_heads={g.num_heads}")
    return f"[{STYLE_DIM}]selector_config[/] " + escape(" ".join(shown)) + f" [{STYLE_DIM}](rest default)[/]"


def group_table(g: GroupExplanation) -> Table:
    facts = {f.name: f for f in g.backend_facts}
    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, expand=False)
    t.add_column("#", justify="right", no_wrap=True)
    t.add_column("backend", no_wrap=True)
    t.add_column("verdict", no_wrap=True)
    t.add_column("reasons")
    t.add_column("cuda graphs", no_wrap=True, style=STYLE_DIM)
    t.add_column("kernel blocks", no_wrap=True, style=STYLE_DIM)
    sel = g.selection
    for c in sel.candidates:
        if c.name == sel.selected:
            verdict, style = "selected", STYLE_SELECTED
        elif c.valid:
            verdict, style = "valid", STYLE_VALID
        else:
            verdict, style = "invalid", STYLE_INVALID
        prio = "-" if c.priority < 0 else str(c.priority)
        t.add_row(
            prio,
            f"[{style}]{escape(c.name)}[/]",
            f"[{style}]{verdict}[/]",
            escape("; ".join(c.reasons)) if c.reasons else "",
            facts[c.name].cudagraph_support,
            escape(", ".join(facts[c.name].kernel_block_sizes)),
        )
    return t


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
            extras.append(f"soft cap {a.logits_soft_cap:g}")
        if a.attn_type != "decoder":
            extras.append(a.attn_type)
        if extras:
            title += "  (" + ", ".join(extras) + ")"
    console.print(title)
    console.print(selector_line(g))
    console.print(group_table(g))
    sel = g.selection
    if sel.selected is not None:
        facts = next(f for f in g.backend_facts if f.name == sel.selected)
        src = r.backend_source
        how = ("explicit --backend" if src == "--attention-backend" else f"explicit backend from {src}") \
            if sel.backend else "highest-priority valid backend"
        console.print(f"[{STYLE_SELECTED}]selected    {escape(sel.selected)}[/]  [{STYLE_DIM}]({how})[/]")
        console.print(f"[{STYLE_HEAD}]KV cache[/]    {escape(facts.kv_cache_shape or '-')}")
    else:
        console.print(f"[{STYLE_ERROR}]error[/]       {escape(sel.error or '')}")
    if g.layer_error:
        console.print(f"[{STYLE_ERROR}]layer error[/] {escape(g.layer_error)}  [{STYLE_DIM}](raised when vLLM builds the layer)[/]")
    if sel.warning:
        console.print(f"[{STYLE_WARN}]warning[/]     {escape(sel.warning)}")
    console.print(fa_line(g))
    for line in flashinfer_lines(g):
        console.print(line)
    console.print()


def explanation_text(r: Explanation) -> str:
    buf = io.StringIO()
    console = make_console(buf)
    console.print(f"[{STYLE_HEAD}]attn-select explain[/]  engine vLLM {r.engine_version}")
    if r.model is not None:
        m = r.model
        console.print(
            f"[{STYLE_HEAD}]model[/]    {escape(m.name)} ({escape(m.architecture)}), {m.dtype}, "
            f"{m.num_layers} layers, tp {m.tp}"
        )
        for other in m.other_layers:
            console.print(
                f"         {len(other.layers)} {escape(other.kind)} layers (not attention: no backend selected)"
            )
    d = r.device
    console.print(
        f"[{STYLE_HEAD}]device[/]   {escape(d.name)}, capability {d.capability}  [{STYLE_DIM}]({escape(d.source)})[/]"
    )
    present = " ".join(r.kernels.present()) or "none"
    console.print(f"[{STYLE_HEAD}]kernels[/]  {present}  [{STYLE_DIM}]({escape(r.kernels.source)})[/]")
    ctx = r.ctx.changed()
    if ctx:
        console.print(
            f"[{STYLE_HEAD}]engine[/]   " + escape(", ".join(f"{k}={v}" for k, v in ctx.items()))
        )
    for step in r.engine_config_trail:
        console.print(f"[{STYLE_HEAD}]config[/]   {escape(step.text())}")
    for note in r.notes:
        console.print(f"[{STYLE_DIM}]note     {escape(note)}[/]")
    warning_lines(console, r.warnings)
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
    failed = len({c for c in by_case if c[1] is not None})
    deps = len({c[0] for c in r.cases})
    source = "inputs embedded in the lock" if r.inputs == "embedded" else f"inputs from {r.inputs}"
    if r.ok:
        console.print(
            f"[{STYLE_SELECTED}]ok[/]  {len(r.cases)} attention groups in {deps} deployments match "
            f"{escape(r.lockfile)}  [{STYLE_DIM}]({escape(source)})[/]"
        )
    else:
        console.print(
            f"[{STYLE_ERROR}]{len(r.diffs)} differences[/] in {failed} of {len(r.cases)} attention groups "
            f"({len({c[0] for c in by_case})} of {deps} deployments) against {escape(r.lockfile)}  "
            f"[{STYLE_DIM}]({escape(source)}; accept with: {escape(accept_command(r))})[/]"
        )
    return buf.getvalue()


# --- SGLang (explain --engine sglang / both) ------------------------------------


def _sglang_header(console: Console, e) -> None:
    m, d, p = e.model, e.device, e.platform
    console.print(f"[{STYLE_HEAD}]attn-select explain[/]  engine SGLang {e.engine_version}")
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
    console.print()
    r = e.resolution
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
        return buf.getvalue()
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
    return buf.getvalue()


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


# --- explain --engine vllm-installed ---------------------------------------------


def _installed_group(console: Console, mirror: GroupExplanation, g, version: str) -> None:
    console.print(f"[{STYLE_HEAD}]group {escape(g.name)}[/]" + (
        f"  layers {layer_ranges(mirror.group.layers)}" if mirror.group is not None else ""))
    shown = [f"{k}={v}" for k, v in g.selector_config.items()
             if k in ("head_size", "dtype", "kv_cache_dtype", "block_size") or v not in (False, None, "decoder")]
    console.print(f"[{STYLE_DIM}]selector_config[/] " + escape(" ".join(shown)))
    if g.crash is not None:
        console.print(f"[{STYLE_ERROR}]error[/]       vLLM {escape(version)}'s code raised: "
                      f"{escape(g.crash.splitlines()[0])}")
        console.print()
        return
    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, expand=False)
    t.add_column("#", justify="right", no_wrap=True)
    t.add_column("backend", no_wrap=True)
    t.add_column("verdict", no_wrap=True)
    t.add_column("reasons")
    for name, reasons in g.reasons.items():
        prio = str(g.priorities.index(name)) if name in g.priorities else "-"
        if name == g.selected:
            verdict, style = "selected", STYLE_SELECTED
        elif not reasons:
            verdict, style = "valid", STYLE_VALID
        else:
            verdict, style = "invalid", STYLE_INVALID
        t.add_row(prio, f"[{style}]{escape(name)}[/]", f"[{style}]{verdict}[/]", escape("; ".join(reasons)))
    console.print(t)
    if g.selected is not None:
        console.print(f"[{STYLE_SELECTED}]selected    {escape(g.selected)}[/]")
    else:
        console.print(f"[{STYLE_ERROR}]error[/]       {escape(g.error or '')}")
    if g.warning:
        console.print(f"[{STYLE_WARN}]warning[/]     {escape(g.warning)}")
    if not mirror.cfg.use_mla:
        console.print(f"[{STYLE_HEAD}]FA version[/]  {escape(str(g.fa_version))}  "
                      f"[{STYLE_DIM}](get_flash_attn_version as the layer calls it; no-argument call: "
                      f"{escape(str(g.fa_version_noarg))})[/]")
    if g.trtllm is not None:
        console.print(f"[{STYLE_HEAD}]FlashInfer[/]  trtllm decode {escape(str(g.trtllm.get('decode')))}, "
                      f"prefill {escape(str(g.trtllm.get('prefill')))}  [{STYLE_DIM}](use_trtllm_attention: "
                      "8 decode tokens, 2048 prefill tokens, max_seq_len 4096)[/]")
    console.print()


def installed_text(r) -> str:
    buf = io.StringIO()
    console = make_console(buf)
    m = r.mirror
    console.print(f"[{STYLE_HEAD}]attn-select explain[/]  engine vLLM {escape(r.engine_version)}, its own selection "
                  f"code  [{STYLE_DIM}](--engine vllm-installed; compared with the vLLM {m.engine_version} mirror)[/]")
    console.print(f"[{STYLE_HEAD}]python[/]   {escape(r.python)}")
    if m.model is not None:
        console.print(f"[{STYLE_HEAD}]model[/]    {escape(m.model.name)} ({escape(m.model.architecture)}), "
                      f"tp {m.model.tp}")
    d = m.device
    console.print(f"[{STYLE_HEAD}]device[/]   {escape(d.name)}, capability {d.capability}  "
                  f"[{STYLE_DIM}]({escape(d.source)})[/]")
    present = " ".join(m.kernels.present()) or "none"
    console.print(f"[{STYLE_HEAD}]kernels[/]  {present}  [{STYLE_DIM}]({escape(m.kernels.source)})[/]")
    console.soft_wrap = True
    for s in r.stand_ins:
        console.print(f"[{STYLE_WARN}]stand-in[/] {escape(s)}")
    if not r.stand_ins:
        console.print(f"[{STYLE_DIM}]stand-in none: this machine's driver and GPU answer[/]")
    if r.engine_config is not None:
        ec = ", ".join(f"{k}={v}" for k, v in r.engine_config.items())
        console.print(f"[{STYLE_HEAD}]config[/]   {escape(ec)}  [{STYLE_DIM}](EngineArgs.create_engine_config)[/]")
    warning_lines(console, r.warnings)
    console.soft_wrap = False
    console.print()
    for mirror, g in zip(m.groups, r.groups):
        _installed_group(console, mirror, g, r.engine_version)
    console.soft_wrap = True
    if r.error is not None:
        console.print(f"[{STYLE_ERROR}]error[/]  vLLM {escape(r.engine_version)} refuses this engine config: "
                      f"{escape(r.error)}")
    if r.differences:
        console.print(f"[{STYLE_WARN}]{len(r.differences)} differences from the vLLM {m.engine_version} mirror[/]")
        for line in r.differences:
            console.print(f"[{STYLE_WARN}]difference[/]  {escape(line)}")
    else:
        console.print(f"[{STYLE_SELECTED}]0 differences from the vLLM {m.engine_version} mirror[/]")
    return buf.getvalue()


# --- doctor (attn-select doctor) ------------------------------------------------


def doctor_text(r) -> str:
    buf = io.StringIO()
    console = make_console(buf)
    console.soft_wrap = True  # long paths and reasons: the terminal wraps
    console.print(f"[{STYLE_HEAD}]attn-select doctor[/]  {escape(r.python)}")
    warning_lines(console, r.warnings)
    for section in r.sections:
        console.print()
        console.print(f"[{STYLE_HEAD}]{escape(section.title)}[/]")
        width = max((len(c.name) for c in section.checks), default=0) + 2
        for c in section.checks:
            style = {True: STYLE_VALID, False: STYLE_INVALID, None: ""}[c.ok]
            value = f"[{style}]{escape(c.value)}[/]" if style else escape(c.value)
            detail = f"  [{STYLE_DIM}]{escape(c.detail)}[/]" if c.detail else ""
            console.print(f"  {escape(c.name):<{width}}{value}{detail}")
    console.print()
    console.print(f"[{STYLE_HEAD}]--kernels[/]  {escape(r.kernels_flag)}")
    console.print(f"[{STYLE_DIM}]explain    {escape(r.kernels_assumed)}[/]")
    return buf.getvalue()


render = by_report_type("text", Explanation=explanation_text, FeatureMatrix=matrix_text, CheckReport=check_text,
                        SGLangExplanation=sglang_text, EngineComparison=comparison_text, DoctorReport=doctor_text,
                        InstalledExplanation=installed_text)
