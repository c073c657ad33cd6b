"""GitHub Actions workflow commands: one ``::error`` annotation per
difference, on the lockfile line it concerns, then a plain summary line.

Escaping follows actions/toolkit (packages/core/src/command.ts): message
data escapes ``%``, CR and LF; property values also ``:`` and ``,``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attn_select.cli.formats import by_report_type

if TYPE_CHECKING:
    from attn_select.selector.lock import CheckReport


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **props: object) -> str:
    """``::name k=v,k=v::message`` with both parts escaped."""
    args = ",".join(f"{k}={escape_property(str(v))}" for k, v in props.items() if v is not None)
    return f"::{name}{' ' + args if args else ''}::{escape_data(message)}"


def check_github(r: CheckReport) -> str:
    from attn_select.selector.lock import accept_command

    out = [command("warning", w.message, title="attn-select check") for w in r.warnings]
    for d, line in zip(r.diffs, r.lines):
        where = d.deployment + (f" / {d.group}" if d.group is not None else "")
        message = d.message() + (f"\n{d.detail}" if d.detail else "")
        out.append(command("error", message, file=r.lockfile, line=line, title=f"attn-select check: {where}"))
    from attn_select.cli.formats.words import plural, selections

    if r.ok:
        _, groups, sglang = r.counts()
        verb = "matches" if groups + sglang == 1 else "match"
        out.append(f"attn-select check: {selections(groups, sglang)} {verb} {r.lockfile}")
    else:
        out.append(
            f"attn-select check: {plural(len(r.diffs), 'difference')} against {r.lockfile}; "
            f"accept them with: {accept_command(r)}"
        )
    return "\n".join(out) + "\n"


render = by_report_type("GitHub annotation", CheckReport=check_github)
