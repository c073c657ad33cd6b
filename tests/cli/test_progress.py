"""run's progress on stderr: plain "[run]" lines off a terminal (CI logs), a
transient live line on one."""

from __future__ import annotations

import io

from attn_select.cli.progress import run_progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_lines_when_not_a_terminal():
    log = io.StringIO()
    with run_progress(log) as progress:
        progress("full/decode: TRITON_ATTN")
        progress("TRITON_ATTN full/decode: first call (JIT compile / autotune if any) ...")
    assert log.getvalue() == ("[run] full/decode: TRITON_ATTN\n"
                              "[run] TRITON_ATTN full/decode: first call (JIT compile / autotune if any) ...\n")


def test_a_live_line_on_a_terminal_that_goes_away_at_the_end(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    term = Terminal()
    with run_progress(term) as progress:
        progress("full/decode: [TRITON_ATTN]")  # brackets are text, not markup
    out = term.getvalue()
    assert "[run]" not in out  # no log lines
    assert "full/decode: [TRITON_ATTN]" in out  # the live line showed the step
    assert out.endswith("\x1b[1A\x1b[2K")  # and was erased at the end (transient): stdout's report stands alone
