"""Markdown: for pull requests, wikis and docs. Pipes in cells are escaped."""

from __future__ import annotations

from functools import singledispatch

from attn_select.selector.explain import Explanation


def cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def explanation_md(r: Explanation) -> str:
    out = [f"# attn-select explain (vLLM {r.engine_version})", ""]
    if r.model is not None:
        m = r.model
        out.append(f"- **model**: {cell(m.name)} ({cell(m.architecture)}), {m.dtype}, {m.num_layers} layers, tp {m.tp}")
    out.append(f"- **device**: {cell(r.device.name)}, capability {r.device.capability} ({cell(r.device.source)})")
    out.append(f"- **kernels**: {' '.join(r.kernels.present()) or 'none'} ({cell(r.kernels.source)})")
    out.append("")
    for g in r.groups:
        out.append(f"## Group `{g.name}`")
        out.append("")
        if g.group is not None:
            out.append(f"Layers: {len(g.group.layers)}; head size {g.cfg.head_size}")
            out.append("")
        sel = g.selection
        if sel.selected:
            out.append(f"**Selected: `{sel.selected}`**")
        else:
            out.append(f"**Error:** {cell(sel.error)}")
        out.append("")
        v = g.fa_version
        out.append(f"FlashAttention version: {v.version if v.version is not None else 'none'}"
                   + (" (" + "; ".join(cell(s.why) for s in v.trail) + ")" if v.trail else ""))
        out.append("")
        out.append("| priority | backend | verdict | reasons |")
        out.append("|---:|---|---|---|")
        for c in sel.candidates:
            verdict = "selected" if c.name == sel.selected else ("valid" if c.valid else "invalid")
            prio = "-" if c.priority < 0 else c.priority
            out.append(f"| {prio} | `{c.name}` | {verdict} | {cell('; '.join(c.reasons))} |")
        out.append("")
    return "\n".join(out)


@singledispatch
def render(report: object) -> str:
    raise TypeError(f"no markdown format for {type(report).__name__}")


@render.register
def _(report: Explanation) -> str:
    return explanation_md(report)
