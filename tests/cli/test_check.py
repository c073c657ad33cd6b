"""`attn-select check`: the CI gate, end to end through the console entry
point. A lock made on h100 passes unchanged; the same deployments on b200
fail with a readable diff; every output format validates."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from attn_select.cli.app import main
from attn_select.cli.formats.github import command, escape_data, escape_property
from attn_select.selector.config import Capability
from attn_select.selector.priorities import backend_priorities
from tests.cli.helpers import run

EXAMPLE = Path(__file__).resolve().parents[2] / "profiles" / "lock" / "deployments.yaml"



@pytest.fixture
def h100(tmp_path, capsys):
    """The example deployments (all on h100) and their lockfile."""
    deps = tmp_path / "deployments.yaml"
    deps.write_text(EXAMPLE.read_text())
    lock = tmp_path / "attn-select.lock"
    rc, _, err = run(capsys, "lock", deps, "-o", lock)
    assert rc == 0, err
    return deps, lock


def on_b200(path: Path) -> Path:
    moved = path.with_name("b200-" + path.name)
    moved.write_text(path.read_text().replace("device: h100", "device: b200"))
    return moved


def test_h100_lock_passes_unchanged(h100, capsys):
    deps, lock = h100
    rc, out, _ = run(capsys, "check", lock)
    assert rc == 0
    assert out.startswith("ok ")
    rc, out, _ = run(capsys, "check", lock, "--deployments", deps)
    assert rc == 0, out


def locked_mha_groups(lock: Path) -> list[tuple[str, str, str]]:
    """(deployment, group, selected) of groups vLLM picked automatically
    (no explicit backend) with a non-MLA candidate list."""
    doc = yaml.safe_load(lock.read_text())
    out = []
    for d in doc["deployments"]:
        if "backend" in d["inputs"].get("overrides", {}):
            continue
        for g in d["groups"]:
            if g["selected"] and "FLASH_ATTN" in g["candidates"]:
                out.append((d["name"], g["group"], g["selected"]))
    return out


def test_same_deployments_on_b200_fail_with_a_readable_diff(h100, capsys):
    deps, lock = h100
    rc, out, _ = run(capsys, "check", lock, "--deployments", on_b200(deps))
    assert rc == 1
    # Every deployment's device input changed: reported where the lock says h100.
    assert out.count("inputs.device") == 8
    assert re.search(r"inputs\.device +h100 -> b200", out)
    # vLLM's SM100 list puts FLASHINFER first for MHA, so every group vLLM
    # picked automatically on h100 differs on b200: each has a FAIL block.
    sm100 = backend_priorities(use_mla=False, cap=Capability(10, 0))
    assert sm100[0] == "FLASHINFER"
    for dep, group, selected in locked_mha_groups(lock):
        block = out.split(f"FAIL  {dep} / {group}  ")[1].split("FAIL  ")[0]
        assert block.count("\n") >= 2  # the header's line, then at least one field
        if "selected " in block:
            assert re.search(rf"\n +selected +{selected} -> ", block)
    assert "differences in" in out.splitlines()[-1]


def test_moving_the_embedded_inputs_fails_too(h100, capsys):
    _, lock = h100
    rc, out, _ = run(capsys, "check", on_b200(lock), "--format", "json")
    assert rc == 1
    doc = json.loads(out)
    assert doc["ok"] is False and doc["inputs"] == "embedded"
    # No input diffs: the inputs are the lock's own; only results differ.
    assert not any(d["field"].startswith("inputs.") for d in doc["differences"])
    assert any(d["field"] == "candidates (priority order)" for d in doc["differences"])


def test_selected_diff_names_deployment_group_field_and_values(h100, capsys):
    deps, lock = h100
    # Force a known change without depending on backend facts: lock a
    # deployment with an explicit backend, then ask for another one.
    text = deps.read_text().replace("backend: TRITON_ATTN", "backend: FLEX_ATTENTION")
    changed = deps.with_name("changed.yaml")
    changed.write_text(text)
    rc, out, _ = run(capsys, "check", lock, "-d", changed, "--format", "json")
    assert rc == 1
    diffs = json.loads(out)["differences"]
    fields = {(d["deployment"], d["group"], d["field"]) for d in diffs}
    assert ("qwen3-8b-triton", None, "inputs.overrides") in fields
    sel = [d for d in diffs if d["field"] == "selected"]
    assert [(d["deployment"], d["group"], d["locked"]) for d in sel] == [("qwen3-8b-triton", "full", "TRITON_ATTN")]
    assert sel[0]["new"] in ("FLEX_ATTENTION", None)
    lines = lock.read_text().splitlines()
    assert lines[sel[0]["line"] - 1].strip() == "selected: TRITON_ATTN"


def partial(lock: Path, keep: tuple[str, ...]) -> Path:
    doc = yaml.safe_load(lock.read_text())
    for d in doc["deployments"]:
        d["groups"] = [{k: v for k, v in g.items() if k in ("group",) + keep} for g in d["groups"]]
    out = lock.with_name("partial.lock")
    out.write_text(yaml.safe_dump(doc, sort_keys=False))
    return out


def test_partial_lock_compares_only_present_fields(h100, capsys):
    _, lock = h100
    only_selected = partial(lock, ("selected",))
    rc, out, _ = run(capsys, "check", only_selected)
    assert rc == 0, out
    rc, out, _ = run(capsys, "check", on_b200(only_selected), "--format", "json")
    fields = {d["field"] for d in json.loads(out)["differences"]}
    assert fields <= {"selected"}
    assert rc == (1 if fields else 0)


def test_json_output_validates(h100, capsys):
    _, lock = h100
    rc, out, _ = run(capsys, "check", on_b200(lock), "-f", "json")
    doc = json.loads(out)
    assert doc["schema"] == "attn-select.check/1"
    assert doc["engine"] == {"name": "vllm", "version": "0.33.0"}
    assert doc["deployments"] == 8 and doc["groups"] >= 8
    assert 0 < doc["failed_groups"] <= doc["groups"]
    keys = {"deployment", "group", "field", "locked", "new", "line", "detail", "message"}
    assert all(set(d) == keys for d in doc["differences"])
    assert all(isinstance(d["line"], int) and d["line"] > 0 for d in doc["differences"])


def test_junit_parses_and_counts_failures(h100, capsys):
    _, lock = h100
    moved = on_b200(lock)
    rc, out, _ = run(capsys, "check", moved, "-f", "junit")
    assert rc == 1
    root = ET.fromstring(out.encode())
    suite = root.find("testsuite")
    cases = suite.findall("testcase")
    failed = [c for c in cases if c.find("failure") is not None]
    groups = sum(len(d["groups"]) for d in yaml.safe_load(moved.read_text())["deployments"])
    assert len(cases) == groups == int(suite.get("tests")) == int(root.get("tests"))
    assert len(failed) == int(suite.get("failures")) == int(root.get("failures")) > 0
    for c in failed:
        assert c.get("classname") and c.get("name") and int(c.get("line")) > 0
        assert c.find("failure").text.startswith(f"{moved}:")
    rc, out, _ = run(capsys, "check", lock, "-f", "junit")
    assert rc == 0 and ET.fromstring(out.encode()).get("failures") == "0"


def test_junit_stays_xml_when_values_hold_characters_xml_cannot(h100, capsys, monkeypatch):
    """A hand-edited locked error with U+FFFE and a warning that echoes an
    environment variable holding a terminal escape: XML 1.0 cannot write
    either character, so each is spelled out and the file still parses."""
    _, lock = h100
    text = lock.read_text()
    edited = lock.with_name("edited.lock")
    edited.write_text(text.replace("error: null", 'error: "boom\\uFFFE"', 1))
    monkeypatch.setenv("VLLM_ATTENTION_BACKEND", "\x1b[31mx\x07")
    rc, out, _ = run(capsys, "check", edited, "-f", "junit")
    assert rc == 1
    root = ET.fromstring(out.encode())
    assert "boom\\ufffe" in root.find(".//failure").get("message")
    warning = next(p.get("value") for p in root.iter("property") if p.get("name") == "warning")
    assert "\\x1b[31mx\\x07" in warning and "\x1b" not in warning


def test_github_annotations_point_at_lockfile_lines(h100, capsys):
    _, lock = h100
    moved = on_b200(lock)
    rc, out, _ = run(capsys, "check", moved, "-f", "github")
    assert rc == 1
    errors = [ln for ln in out.splitlines() if ln.startswith("::error ")]
    assert errors
    lines = moved.read_text().splitlines()
    for ln in errors:
        m = re.match(r"::error file=([^,]+),line=(\d+),title=([^:]+)::(.+)$", ln)
        assert m, ln
        assert m.group(1) == escape_property(str(moved))
        assert 1 <= int(m.group(2)) <= len(lines)
        assert "%0A" not in m.group(3) and "\n" not in m.group(4)
    assert not out.splitlines()[-1].startswith("::")


def test_github_escaping_follows_actions_toolkit():
    assert escape_data("50% a\r\nb: c, d") == "50%25 a%0D%0Ab: c, d"
    assert escape_property("50% a\r\nb: c, d") == "50%25 a%0D%0Ab%3A c%2C d"
    assert command("error", "x: 1%\ny", file="a,b.lock", line=3, title="t: u") == (
        "::error file=a%2Cb.lock,line=3,title=t%3A u::x: 1%25%0Ay"
    )


def test_output_option_writes_the_report(h100, capsys, tmp_path):
    _, lock = h100
    report = tmp_path / "report.xml"
    rc, out, _ = run(capsys, "check", lock, "-f", "junit", "-o", report)
    assert rc == 0 and out == ""
    ET.parse(report)


# --- bad lockfiles: one line, file and line, exit 2 --------------------------------


def bad_variants(text: str) -> dict[str, tuple[str, str]]:
    """name -> (broken lockfile text, words the error must contain)."""
    return {
        "yaml syntax": (text.replace("  inputs:\n", "  inputs: [\n", 1), "YAML syntax error"),
        "unknown field": (text.replace("    selected:", "    chosen: X\n    selected:", 1), "unknown field 'chosen'"),
        "unknown backend": (text.replace("selected: FLASH_ATTN\n", "selected: FLASH_ATN\n", 1), "did you mean FLASH_ATTN"),
        "unknown device profile": (text.replace("device: h100", "device: h1000", 1), "unknown device profile 'h1000'"),
        "unknown model profile": (text.replace("model: llama-3.1-8b", "model: llama-9", 1), "llama-9"),
        "wrong type": (text.replace("      tp: 4", "      tp: four", 1), "valid integer"),
        "wrong type in group": (text.replace("flash_attn_version: 3", "flash_attn_version: [3]", 1), "valid integer"),
        "not a lockfile": ("- just\n- a list\n", "expected a mapping"),
        "name with a terminal escape": (text.replace("- name: llama-8b", '- name: "llama\\e[2J"', 1),
                                        "holds the unprintable character U+001B"),
        "empty name": (text.replace("- name: llama-8b", "- name: ''", 1), "the deployment name is empty"),
        # a lock can never be written empty; emptied by hand it would pass without checking anything
        "no deployments": (re.sub(r"(?ms)^deployments:.*", "deployments: []\n", text) or "x",
                           "locks no deployment; regenerate it"),
    }


@pytest.mark.parametrize("case", list(bad_variants("")))
def test_bad_lockfile_is_one_line_with_file_and_line(h100, capsys, case):
    _, lock = h100
    text = lock.read_text()
    bad_text, words = bad_variants(text)[case]
    assert bad_text != text
    bad = lock.with_name("bad.lock")
    bad.write_text(bad_text)
    changed = next(
        (i for i, (a, b) in enumerate(zip(text.splitlines(), bad_text.splitlines()), 1) if a != b), 1
    )
    rc, out, err = run(capsys, "check", bad)
    assert rc == 2
    assert out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    m = re.match(rf"error: {re.escape(str(bad))}:(\d+): ", err)
    assert m, err
    # The line of the change (or the next, where a key's value starts); a
    # YAML error may be found later and then names where its construct began.
    assert int(m.group(1)) in (changed, changed + 1) or f"started at line {changed}" in err, (err, changed)
    assert words in err


def test_missing_lockfile_is_exit_2(tmp_path, capsys):
    rc, _, err = run(capsys, "check", tmp_path / "nope.lock")
    assert rc == 2 and "lockfile not found" in err and err.count("\n") == 1


def test_check_imports_nothing_heavy(h100):
    _, lock = h100
    code = (
        "import sys\nfrom attn_select.cli.app import main\n"
        f"rc = main(['check', {str(lock)!r}, '-f', 'junit'])\n"
        "heavy = [m for m in ('torch', 'triton', 'flashinfer', 'numpy', 'vllm') if m in sys.modules]\n"
        "print('HEAVY=' + ','.join(heavy))\nsys.exit(rc)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "HEAVY="
