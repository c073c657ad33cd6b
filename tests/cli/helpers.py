"""Calling the command line in-process, for the CLI tests."""

from __future__ import annotations

import json

from attn_select.cli.app import main


def run(capsys, *argv):
    """(exit code, stdout, stderr) of ``attn-select ARGV``."""
    rc = main([str(a) for a in argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def doc(capsys, *argv):
    """(exit code, parsed JSON) of ``attn-select ARGV --format json``."""
    rc, out, _ = run(capsys, *argv, "--format", "json")
    return rc, json.loads(out)


def labelled(text: str, label: str) -> list[str]:
    """Each ``label`` line of a text report with its continuation lines
    (wrapped under the value column) joined back: one string per entry."""
    out: list[str] = []
    inside = False
    for ln in text.splitlines():
        if ln.startswith(label):
            out.append(ln.rstrip())
            inside = True
        elif inside and ln.startswith(" ") and ln.strip():
            out[-1] += " " + ln.strip()
        else:
            inside = False
    return out
