"""The README's main-job example is the real output of the current build."""

import re
from pathlib import Path

from attn_select.cli.app import main

README = Path(__file__).resolve().parent.parent / "README.md"
COMMAND = "$ attn-select explain llama-3.1-8b --device h100"


def test_readme_main_job_output_is_current(capsys, monkeypatch):
    text = README.read_text(encoding="utf-8")
    block = re.search(re.escape(COMMAND) + r"\n(.*?)```", text, re.S)
    assert block, "README lost its main-job example"
    monkeypatch.setenv("COLUMNS", "110")
    monkeypatch.setenv("NO_COLOR", "1")
    assert main(["explain", "llama-3.1-8b", "--device", "h100"]) == 0
    # the README block drops the report's trailing blank line
    assert capsys.readouterr().out.rstrip("\n") + "\n" == block.group(1), (
        "README example is stale: regenerate it with "
        "COLUMNS=110 NO_COLOR=1 attn-select explain llama-3.1-8b --device h100"
    )


MLA_COMMAND = "$ attn-select explain deepseek-v3 --device b200"


def test_readme_mla_prefill_excerpt_is_current(capsys, monkeypatch):
    """The MLA prefill excerpt: each of its lines is a line of the real output."""
    text = README.read_text(encoding="utf-8")
    block = re.search(re.escape(MLA_COMMAND) + r"\n\.\.\.\n(.*?)```", text, re.S)
    assert block, "README lost its MLA prefill example"
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("NO_COLOR", "1")
    assert main(["explain", "deepseek-v3", "--device", "b200"]) == 0
    out = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    excerpt = block.group(1).splitlines()
    start = out.index(excerpt[0])
    assert out[start:start + len(excerpt)] == excerpt
