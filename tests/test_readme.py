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
