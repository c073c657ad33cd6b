"""`attn-select lock`: deterministic lockfiles, embedded inputs, model
paths relative to the lockfile, one-line errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from attn_select.selector.profiles import MODELS_DIR
from tests.cli.helpers import run

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "profiles" / "lock" / "deployments.yaml"
EXAMPLE_LOCK = ROOT / "profiles" / "lock" / "attn-select.lock"



def test_same_input_gives_byte_identical_lockfile(tmp_path, capsys):
    a, b = tmp_path / "a.lock", tmp_path / "b.lock"
    assert run(capsys, "lock", EXAMPLE, "-o", a)[0] == 0
    rc, _, err = run(capsys, "lock", EXAMPLE, "-o", b)
    assert rc == 0
    assert a.read_bytes() == b.read_bytes()
    assert err.startswith(f"wrote {b}: 8 deployments, ")
    # Nothing time-dependent; the engine version is recorded.
    text = a.read_text()
    assert not re.search(r"20\d\d-\d\d-\d\d", text)
    assert yaml.safe_load(text)["engine"] == {"name": "vllm", "version": "0.33.0"}


def test_stdout_equals_file(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run(capsys, "lock", EXAMPLE, "-o", "x.lock")
    rc, out, _ = run(capsys, "lock", EXAMPLE)
    assert rc == 0 and out == (tmp_path / "x.lock").read_text()


def test_lock_embeds_inputs_and_every_group_field(tmp_path, capsys):
    lock = tmp_path / "x.lock"
    run(capsys, "lock", EXAMPLE, "-o", lock)
    doc = yaml.safe_load(lock.read_text())
    source = yaml.safe_load(EXAMPLE.read_text())["deployments"]
    assert [d["name"] for d in doc["deployments"]] == [d["name"] for d in source]
    for d, s in zip(doc["deployments"], source):
        assert d["inputs"] == {k: v for k, v in s.items() if k != "name"}
        for g in d["groups"]:
            fields = ["group", "selected", "flash_attn_version", "error", "warning", "candidates"]
            if g["selected"] is not None and g["selected"].endswith("MLA"):  # dense MLA: the prefill choice too
                fields += ["mla_prefill_backend", "mla_prefill_error", "mla_prefill_candidates"]
                assert all(isinstance(r, list) for r in g["mla_prefill_candidates"].values())
            assert list(g) == fields
            assert all(isinstance(r, list) for r in g["candidates"].values())
    assert any("mla_prefill_backend" in g for d in doc["deployments"] for g in d["groups"])


def test_a_changed_mla_prefill_choice_fails_check_and_an_old_lock_without_it_passes(tmp_path, capsys):
    deployments = tmp_path / "d.yaml"
    deployments.write_text("deployments:\n  - name: dsv3\n    model: deepseek-v3\n    device: b200\n")
    lock = tmp_path / "x.lock"
    assert run(capsys, "lock", deployments, "-o", lock)[0] == 0
    text = lock.read_text()
    doc = yaml.safe_load(text)
    (group,) = doc["deployments"][0]["groups"]
    chosen = group["mla_prefill_backend"]
    assert chosen is not None and chosen in group["mla_prefill_candidates"]
    # another choice locked: check names the field and both values
    other = next(n for n in group["mla_prefill_candidates"] if n != chosen)
    lock.write_text(text.replace(f"mla_prefill_backend: {chosen}", f"mla_prefill_backend: {other}"))
    rc, out, _ = run(capsys, "check", lock)
    assert rc == 1 and f"mla_prefill_backend   {other} -> {chosen}" in out
    # a lock written before the field existed: nothing to compare, still ok
    doc_old = yaml.safe_load(text)
    for d in doc_old["deployments"]:
        for g in d["groups"]:
            for f in ("mla_prefill_backend", "mla_prefill_error", "mla_prefill_candidates"):
                g.pop(f, None)
    lock.write_text(yaml.safe_dump(doc_old, sort_keys=False))
    rc, out, _ = run(capsys, "check", lock)
    assert rc == 0, out


def test_example_lockfile_is_current(capsys):
    """profiles/lock/attn-select.lock is what `lock` writes for the example
    (regenerate: attn-select lock profiles/lock/deployments.yaml -o profiles/lock/attn-select.lock)."""
    rc, out, _ = run(capsys, "check", EXAMPLE_LOCK, "--deployments", EXAMPLE)
    assert rc == 0, out


def test_model_paths_are_relative_to_the_lockfile(tmp_path, capsys, monkeypatch):
    profile = yaml.safe_load((MODELS_DIR / "llama-3.1-8b.yaml").read_text())
    model_dir = tmp_path / "models" / "llama"
    model_dir.mkdir(parents=True)
    (model_dir / "config.json").write_text(json.dumps(profile["config"]))
    (tmp_path / "deploy").mkdir()
    deps = tmp_path / "deploy" / "d.yaml"
    deps.write_text(
        "deployments:\n"
        "  - name: file\n    model: ../models/llama/config.json\n    capability: '9.0'\n"
        "  - name: folder\n    model: ../models/llama\n    capability: '9.0'\n"
    )
    (tmp_path / "ci").mkdir()
    lock = tmp_path / "ci" / "x.lock"
    monkeypatch.chdir(tmp_path / "deploy")  # the cwd must not matter
    rc, _, err = run(capsys, "lock", deps, "-o", lock)
    assert rc == 0, err
    inputs = [d["inputs"]["model"] for d in yaml.safe_load(lock.read_text())["deployments"]]
    assert inputs == ["../models/llama/config.json", "../models/llama"]
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "check", lock)[0] == 0
    assert run(capsys, "check", lock, "-d", deps)[0] == 0


@pytest.mark.parametrize(
    "body, line, words",
    [
        ("deployments:\n  - name: a\n    model: llama-9b\n    device: h100\n", 3, "unknown model profile 'llama-9b'"),
        ("deployments:\n  - name: a\n    model: llama-3.1-8b\n    device: h1000\n", 4, "unknown device profile 'h1000'"),
        ("deployments:\n  - name: a\n    model: llama-3.1-8b\n    device: h100\n    overrides: {backnd: X}\n", 5,
         "unknown field 'backnd'; did you mean 'backend'?"),
        ("deployments:\n  - name: a\n    model: llama-3.1-8b\n    device: h100\n  - oops\n", 5, "valid dictionary"),
        ("deployments:\n  - name: a\n    model: llama-3.1-8b\n    device: h100\n    overrides: {tp: 0}\n", 5,
         "tp must be a positive integer"),
        ("deployments:\n  - name: a\n    model: llama-3.1-8b\n    device: h100\n  name: b\n", 5, "YAML syntax error"),
        ("deployments:\n  - name: a\n    model: deepseek-v3\n    device: h100\n"
         "    overrides: {mla_prefill_backend: flashinfr}\n", 5,
         "unknown MLA prefill backend 'flashinfr'; did you mean FLASHINFER?"),
        # a name heads report lines, JUnit cases and annotations: not empty, nothing a log acts on
        ("deployments:\n  - name: ' '\n    model: llama-3.1-8b\n    device: h100\n", 2,
         "the deployment name is empty"),
        ('deployments:\n  - name: "a\\e[31mb"\n    model: llama-3.1-8b\n    device: h100\n', 2,
         "deployment name 'a\\x1b[31mb' holds the unprintable character U+001B"),
        ('deployments:\n  - name: "a\\nb"\n    model: llama-3.1-8b\n    device: h100\n', 2,
         "holds the unprintable character U+000A"),
        ('deployments:\n  - name: "a\\uFFFEb"\n    model: llama-3.1-8b\n    device: h100\n', 2,
         "holds the unprintable character U+FFFE"),
        ("deployments: []\n", 1, "no deployments; list at least one"),
    ],
)
def test_bad_deployments_file_is_one_line(tmp_path, capsys, body, line, words):
    deps = tmp_path / "d.yaml"
    deps.write_text(body)
    rc, out, err = run(capsys, "lock", deps, "-o", tmp_path / "x.lock")
    assert rc == 2 and out == ""
    assert err.startswith(f"error: {deps}:{line}: "), err
    assert words in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "x.lock").exists()


@pytest.mark.parametrize("command", ["lock", "check"])
def test_a_file_that_is_not_utf8_names_its_line_and_what_to_do(tmp_path, capsys, command):
    """It was Python's codec message ("can't decode byte 0xff in position
    33"), which names neither the line nor the fix."""
    f = tmp_path / "f.yaml"
    f.write_bytes(b"deployments:\n  - name: caf\xe9\n    model: llama-3.1-8b\n    device: h100\n")
    rc, out, err = run(capsys, command, f)
    what = "deployments file" if command == "lock" else "lockfile"
    assert rc == 2 and out == ""
    assert err == f"error: {f}:2: the {what} is not UTF-8 text (byte 0xe9); save it as UTF-8\n"


def test_missing_deployments_file(tmp_path, capsys):
    rc, _, err = run(capsys, "lock", tmp_path / "none.yaml")
    assert rc == 2 and err == f"error: deployments file not found: {tmp_path / 'none.yaml'}\n"


def test_unwritable_output_is_exit_2(tmp_path, capsys):
    target = tmp_path / "missing-folder" / "x.lock"
    rc, _, err = run(capsys, "lock", EXAMPLE, "-o", target)
    assert rc == 2 and err == f"error: cannot write lockfile {target}: No such file or directory\n"
