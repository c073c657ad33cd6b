"""Command-line conventions: -h, shell completion, the root switches after
the subcommand, FORCE_COLOR / NO_COLOR, check --quiet, and `attn-select
profiles`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from attn_select.cli.app import COMMANDS, hoist_root_switches
from attn_select.selector.profiles import device_profile_names, load_device, model_profile_names
from tests.cli.helpers import run

EXAMPLE = Path(__file__).resolve().parents[2] / "profiles" / "lock" / "deployments.yaml"
ANSI = "\x1b["


@pytest.mark.parametrize("argv", [[], *([c] for c in COMMANDS)])
def test_dash_h_is_help_everywhere(capsys, argv):
    rc, out, _ = run(capsys, *argv, "-h")
    assert rc == 0
    assert "Usage:" in out and "--help" in out and "-h" in out
    rc, long_out, _ = run(capsys, *argv, "--help")
    assert rc == 0 and long_out == out


def test_root_help_offers_shell_completion(capsys):
    _, out, _ = run(capsys, "--help")
    assert "--install-completion" in out and "--show-completion" in out


def _console_script() -> str:
    exe = shutil.which("attn-select", path=os.path.dirname(sys.executable))
    if exe is None:
        pytest.skip("the attn-select console script is not installed beside this Python")
    return exe


def _complete(words: str) -> list[str]:
    env = {**os.environ, "_ATTN_SELECT_COMPLETE": "complete_bash", "COMP_WORDS": words,
           "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1))}
    out = subprocess.run([_console_script()], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_shell_completion_completes_commands_options_and_profiles():
    assert _complete("attn-select ex") == ["explain"]
    assert "profiles" in _complete("attn-select pro")
    assert _complete("attn-select explain --device h") == ["h100", "h200"]
    assert _complete("attn-select explain llama") == ["llama-3.1-70b", "llama-3.1-8b"]


def test_show_completion_prints_a_bash_script():
    # typer names the shell from the calling process (shellingham): run from bash, as a user types it,
    # whatever launched pytest (a background job's parent may be no shell at all); a second command
    # keeps bash from replacing itself with the first
    out = subprocess.run(["bash", "-c", f"'{_console_script()}' --show-completion; exit $?"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "_ATTN_SELECT_COMPLETE=complete_bash" in out.stdout and "complete " in out.stdout


def test_hoisting_moves_root_switches_only_and_never_past_a_double_dash():
    assert hoist_root_switches(["explain", "m", "--debug", "--no-color"]) == ["--debug", "--no-color", "explain", "m"]
    assert hoist_root_switches(["--debug", "explain", "m"]) == ["--debug", "explain", "m"]
    assert hoist_root_switches(["explain", "--", "vllm", "serve", "m", "--debug"]) == \
        ["explain", "--", "vllm", "serve", "m", "--debug"]
    assert hoist_root_switches(["explain", "--no-color", "--", "x", "--debug"]) == \
        ["--no-color", "explain", "--", "x", "--debug"]
    assert hoist_root_switches([]) == []


def test_root_switches_work_after_the_subcommand(capsys, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    rc, out, _ = run(capsys, "explain", "llama-3.1-8b", "--device", "h100", "--no-color")
    assert rc == 0 and ANSI not in out and "FLASH_ATTN" in out
    # --debug after the subcommand: the traceback shows instead of one line
    with pytest.raises(Exception) as info:
        run(capsys, "explain", "llama-3.1-8b", "--device", "no-such-gpu", "--debug")
    assert "unknown device profile" in str(info.value)
    rc, _, err = run(capsys, "explain", "llama-3.1-8b", "--device", "no-such-gpu")
    assert rc == 2 and err.startswith("error: unknown device profile")


def test_force_color_colours_output_that_is_not_a_terminal(capsys, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    _, plain, _ = run(capsys, "explain", "llama-3.1-8b", "--device", "h100")
    assert ANSI not in plain  # captured output is not a terminal
    monkeypatch.setenv("FORCE_COLOR", "1")
    _, coloured, _ = run(capsys, "explain", "llama-3.1-8b", "--device", "h100")
    assert ANSI in coloured
    monkeypatch.setenv("NO_COLOR", "1")  # NO_COLOR wins
    _, out, _ = run(capsys, "explain", "llama-3.1-8b", "--device", "h100")
    assert ANSI not in out and out == plain
    monkeypatch.setenv("NO_COLOR", "")  # empty counts as unset
    _, out, _ = run(capsys, "explain", "llama-3.1-8b", "--device", "h100")
    assert ANSI in out


@pytest.fixture
def lock(tmp_path, capsys):
    deps = tmp_path / "deployments.yaml"
    deps.write_text(EXAMPLE.read_text())
    lock = tmp_path / "attn-select.lock"
    rc, _, err = run(capsys, "lock", deps, "-o", lock)
    assert rc == 0, err
    moved = tmp_path / "b200.yaml"
    moved.write_text(deps.read_text().replace("device: h100", "device: b200"))
    return lock, moved


def test_check_quiet_prints_only_failures(capsys, lock):
    lockfile, moved = lock
    rc, out, _ = run(capsys, "check", lockfile, "--quiet")
    assert rc == 0 and out == ""
    rc, out, _ = run(capsys, "check", lockfile, "-q", "--format", "github")
    assert rc == 0 and out == ""
    rc, loud, _ = run(capsys, "check", lockfile, "--deployments", moved)
    rc_quiet, quiet, _ = run(capsys, "check", lockfile, "--deployments", moved, "--quiet")
    assert rc == rc_quiet == 1
    assert quiet == loud and "FAIL" in quiet
    rc, _, err = run(capsys, "check", lockfile, "--quiet", "--format", "json")
    assert rc == 2 and err.startswith("error: --quiet is for --format text or github") and err.count("\n") == 1


def test_profiles_lists_every_model_and_device(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("NO_COLOR", "1")
    rc, out, _ = run(capsys, "profiles")
    assert rc == 0
    lines = out.splitlines()
    for name in model_profile_names() + device_profile_names():
        assert any(line.startswith(name + " ") for line in lines), name
    assert ("llama-3.1-8b        LlamaForCausalLM, 32 layers, 32 q / 8 kv heads, head 128, bfloat16; "
            "attention groups: full  (meta-llama/Llama-3.1-8B)") in lines
    assert "deepseek-v3         DeepseekV3ForCausalLM, 61 layers, 128 q / 1 kv heads, head 576, bfloat16; " \
           "attention groups: mla (MLA)  (deepseek-ai/DeepSeek-V3)" in lines
    assert "h100          NVIDIA H100 80GB HBM3, capability 9.0, 79.6 GiB, 3.35 TB/s" in lines


def test_profiles_json(capsys):
    rc, out, _ = run(capsys, "profiles", "--format", "json")
    assert rc == 0
    doc = json.loads(out)
    assert doc["schema"] == "attn-select.profiles/1"
    assert [m["name"] for m in doc["models"]] == model_profile_names()
    assert [d["name"] for d in doc["devices"]] == device_profile_names()
    gemma = next(m for m in doc["models"] if m["name"] == "gemma-2-9b")
    assert gemma == {
        "name": "gemma-2-9b", "source": "google/gemma-2-9b", "architecture": "Gemma2ForCausalLM",
        "description": gemma["description"], "num_layers": 42, "num_heads": 16, "num_kv_heads": 8,
        "head_size": 256, "dtype": "bfloat16", "use_mla": False, "groups": ["sliding", "full"],
    }
    for d in doc["devices"]:
        prof = load_device(d["name"])
        assert (d["gpu"], d["capability"]) == (prof.name, str(prof.capability))


@pytest.mark.parametrize("width", ["60", "80"])
def test_profiles_text_fits_the_width(capsys, monkeypatch, width):
    monkeypatch.setenv("COLUMNS", width)
    monkeypatch.setenv("NO_COLOR", "1")
    _, out, _ = run(capsys, "profiles")
    assert max(len(line) for line in out.splitlines()) <= int(width)
    assert "(deepseek-ai/DeepSeek-V3.2-Exp)" in out
