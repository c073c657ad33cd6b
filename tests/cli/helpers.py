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
