"""Detection of the installed vLLM / SGLang from package metadata, and the
warning every explain, lock and check output carries when it is not the
mirrored release; removed selection variables set in the environment.

The installed engine is a stand-in: a ``vllm-0.31.0.dist-info`` folder
holding only ``METADATA``, on ``sys.path`` (this Python) or on the
``PYTHONPATH`` of a wrapper script standing for another Python.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from attn_select.selector.host import engine_packages as detect
from attn_select.selector.engines import SGLANG_VERSION, VLLM_VERSION
from attn_select.selector.installed import InstalledEngine, metadata_version, release, version_warning
from tests.cli.helpers import doc, labelled, run

EXAMPLE = Path(__file__).resolve().parents[2] / "profiles" / "lock" / "deployments.yaml"
OLD = "0.31.0"


def stand_in(folder: Path, project: str = "vllm", version: str = OLD) -> Path:
    """A dist-info with only its METADATA file, as a bare wheel unpack leaves."""
    info = folder / f"{project}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project}\nVersion: {version}\n\nlong description\n"
                                   "Version: 9.9.9 (in the body: not a header)\n")
    return folder


@pytest.fixture
def old_vllm_here(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(stand_in(tmp_path / "site")))
    return tmp_path / "site"


@pytest.fixture
def clean_env(monkeypatch):
    for name in ("VLLM_ATTENTION_BACKEND", "VLLM_FLASH_ATTN_VERSION", "VLLM_BATCH_INVARIANT",
                 "VLLM_USE_TRTLLM_ATTENTION", "VLLM_MLA_DISABLE", "VLLM_KV_CACHE_LAYOUT"):
        monkeypatch.delenv(name, raising=False)


def other_python(tmp_path: Path, site: Path | None) -> Path:
    """A script that runs this machine's python3 with ``site`` on its path:
    another Python, as far as the metadata probe can tell."""
    script = tmp_path / "bin" / "python"
    script.parent.mkdir(parents=True, exist_ok=True)
    path = f"PYTHONPATH={site} " if site else "PYTHONPATH= "
    script.write_text(f"#!/bin/sh\n{path}exec {sys.executable} \"$@\"\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


# --- detection ------------------------------------------------------------------


def test_metadata_version_reads_the_header_only():
    assert metadata_version("Name: vllm\nVersion: 0.31.0\n\nVersion: 1.0\n") == "0.31.0"
    assert metadata_version("Name: vllm\n\nVersion: 1.0\n") is None


def test_release_ignores_the_local_build_tag():
    assert release("0.33.0+cu129") == "0.33.0"
    assert not InstalledEngine("vllm", "0.33.0+cu129", "x").differs
    assert InstalledEngine("vllm", "0.33.0rc1", "x").differs
    assert not InstalledEngine("vllm", None, "x").differs


def test_stand_in_dist_info_is_found_in_this_python(old_vllm_here):
    assert detect.installed_here("vllm") == (OLD, str(old_vllm_here))
    found = detect.find_engine("vllm")
    assert found.version == OLD and str(old_vllm_here) in found.where


@pytest.mark.parametrize("project", ["typer", "rich", "PyYAML", "pydantic_core"])
def test_fast_scan_agrees_with_importlib_metadata(project):
    import importlib.metadata as md

    assert detect.installed_here(project)[0] == md.version(project)


def test_absent_engine_is_no_warning(clean_env):
    assert detect.installed_here("surely-not-installed-here") is None
    found = detect.find_engine("sglang")
    assert version_warning(found._replace(version=None)) is None


def test_mirrored_release_gives_no_warning(tmp_path, monkeypatch, capsys, clean_env):
    monkeypatch.syspath_prepend(str(stand_in(tmp_path, version=VLLM_VERSION)))
    rc, out, _ = run(capsys, "explain", "llama-3.1-8b", "--device", "h100")
    assert rc == 0 and "warning" not in out
    rc, d = doc(capsys, "explain", "llama-3.1-8b", "--device", "h100")
    assert d["warnings"] == []


# --- explain ----------------------------------------------------------------------


def test_explain_text_json_markdown_name_the_installed_version(old_vllm_here, capsys, clean_env):
    rc, out, _ = run(capsys, "explain", "llama-3.1-8b", "--device", "h100")
    assert rc == 0
    line = labelled(out, "warning")[0]
    assert f"vLLM {OLD} is installed" in line and f"mirrors vLLM {VLLM_VERSION}" in line
    assert "backend choice" in line and "FlashAttention version" in line  # the answers affected
    assert "--engine vllm-installed" in line
    rc, d = doc(capsys, "explain", "llama-3.1-8b", "--device", "h100")
    (w,) = d["warnings"]
    assert w["kind"] == "version" and w["engine"] == "vllm" and OLD in w["message"]
    rc, md, _ = run(capsys, "explain", "llama-3.1-8b", "--device", "h100", "--format", "markdown")
    assert f"> **warning**: vLLM {OLD} is installed" in md


def test_sglang_engine_warns_about_sglang_only(tmp_path, monkeypatch, capsys, clean_env):
    site = stand_in(tmp_path / "site")
    stand_in(site, "sglang", "0.5.9")
    monkeypatch.syspath_prepend(str(site))
    rc, d = doc(capsys, "explain", "llama-3.1-8b", "--device", "h100", "--engine", "sglang")
    assert [w["engine"] for w in d["warnings"]] == ["sglang"]
    assert f"SGLang 0.5.9 is installed" in d["warnings"][0]["message"] and SGLANG_VERSION in d["warnings"][0]["message"]
    assert "--engine sglang-installed runs 0.5.9's own resolution" in d["warnings"][0]["message"]
    rc, d = doc(capsys, "explain", "llama-3.1-8b", "--device", "h100", "--engine", "both")
    assert [w["engine"] for w in d["warnings"]] == ["vllm", "sglang"]
    rc, out, _ = run(capsys, "explain", "llama-3.1-8b", "--device", "h100", "--engine", "both")
    assert out.count("warning  ") == 2


def test_vllm_python_names_another_environment(tmp_path, capsys, clean_env):
    python = other_python(tmp_path, stand_in(tmp_path / "venv-site"))
    rc, d = doc(capsys, "explain", "llama-3.1-8b", "--device", "h100", "--vllm-python", python)
    assert rc == 0
    (w,) = d["warnings"]
    assert f"vLLM {OLD} is installed (--vllm-python {python})" in w["message"]


# --- lock and check -----------------------------------------------------------------


def test_lock_and_check_name_the_affected_deployments(old_vllm_here, tmp_path, capsys, clean_env):
    deps = tmp_path / "deployments.yaml"
    deps.write_text(EXAMPLE.read_text())
    lock = tmp_path / "attn-select.lock"
    rc, _, err = run(capsys, "lock", deps, "-o", lock)
    assert rc == 0
    assert f"warning: vLLM {OLD} is installed" in err and "may be affected: llama-8b, " in err
    assert f"# warning: vLLM {OLD} is installed" in lock.read_text()

    rc, out, _ = run(capsys, "check", lock)
    assert rc == 0 and out.startswith(f"warning  vLLM {OLD} is installed")
    rc, out, _ = run(capsys, "check", lock, "--format", "json")
    (w,) = json.loads(out)["warnings"]
    assert "llama-8b" in w["affects"] and "deepseek-v3" in w["affects"]
    rc, out, _ = run(capsys, "check", lock, "--format", "junit")
    suite = ET.fromstring(out.split("?>", 1)[1]).find("testsuite")
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert OLD in props["warning"]
    assert f"warning: vLLM {OLD} is installed" in suite.find("system-err").text
    rc, out, _ = run(capsys, "check", lock, "--format", "github")
    assert out.startswith("::warning title=attn-select check::vLLM " + OLD)


SGLANG_DEPLOYMENTS = """deployments:
  - name: llama-sgl
    model: llama-3.1-8b
    device: h100
    engine: sglang
  - name: llama-vllm
    model: llama-3.1-8b
    device: h100
"""


def test_lock_and_check_name_the_sglang_deployments(tmp_path, monkeypatch, capsys, clean_env):
    monkeypatch.syspath_prepend(str(stand_in(tmp_path / "site", "sglang", "0.5.9")))
    deps = tmp_path / "deployments.yaml"
    deps.write_text(SGLANG_DEPLOYMENTS)
    lock = tmp_path / "attn-select.lock"
    rc, _, err = run(capsys, "lock", deps, "-o", lock)
    assert rc == 0
    assert "warning: SGLang 0.5.9 is installed" in err and "may be affected: llama-sgl" in err
    assert "llama-vllm" not in err and "vLLM" not in err.split("mirrors SGLang")[0]
    assert "# warning: SGLang 0.5.9 is installed" in lock.read_text()
    rc, out, _ = run(capsys, "check", lock)
    assert rc == 0 and out.startswith("warning  SGLang 0.5.9 is installed")
    rc, out, _ = run(capsys, "check", lock, "--format", "json")
    (w,) = json.loads(out)["warnings"]
    assert w["engine"] == "sglang" and w["affects"] == ["llama-sgl"]
    rc, out, _ = run(capsys, "check", lock, "--format", "junit")
    suite = ET.fromstring(out.split("?>", 1)[1]).find("testsuite")
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert "SGLang 0.5.9" in props["warning"]


def test_check_without_installed_engine_has_no_warning(tmp_path, capsys, clean_env):
    deps = tmp_path / "deployments.yaml"
    deps.write_text(EXAMPLE.read_text())
    lock = tmp_path / "attn-select.lock"
    assert run(capsys, "lock", deps, "-o", lock)[0] == 0
    assert "# warning" not in lock.read_text()
    rc, out, _ = run(capsys, "check", lock, "--format", "json")
    assert json.loads(out)["warnings"] == []


# --- removed and unread variables -------------------------------------------------------


def test_removed_attention_backend_variable_is_warned_about(monkeypatch, capsys, clean_env):
    monkeypatch.setenv("VLLM_ATTENTION_BACKEND", "FLASHINFER")
    rc, out, _ = run(capsys, "explain", "llama-3.1-8b", "--device", "h100")
    line = labelled(out, "warning")[0]
    assert "VLLM_ATTENTION_BACKEND=FLASHINFER" in line and "no longer reads it" in line
    assert "--attention-backend FLASHINFER" in line and "explain: --attention-backend FLASHINFER" in line
    # ignored, as vLLM ignores it: the selection is unchanged
    assert "selected    FLASH_ATTN" in out


def test_each_removed_variable_names_its_replacement(monkeypatch):
    from attn_select.selector.engine_env import REMOVED_VARS, removed_var_warnings

    env = {v.name: "3" for v in REMOVED_VARS}
    texts = removed_var_warnings(env)
    assert len(texts) == len(REMOVED_VARS)
    for var, text in zip(REMOVED_VARS, texts):
        assert text.startswith(f"{var.name}=3 is set") and var.replacement.format(value="3") in text


@pytest.mark.parametrize("name", ["VLLM_ATTENTION_BACKEND", "VLLM_BATCH_INVARIANT"])
def test_a_huge_or_unprintable_variable_value_is_cut_and_escaped(monkeypatch, capsys, clean_env, name):
    """A 100 KB value was echoed whole, three times over, and a newline or a
    terminal escape in it went into the report as is."""
    monkeypatch.setenv(name, "x" * 100_000)
    rc, d = doc(capsys, "explain", "llama-3.1-8b", "--device", "h100")
    (w,) = d["warnings"]
    assert rc == 0 and len(w["message"]) < 1000 and "\u2026" in w["message"]
    monkeypatch.setenv(name, "a\x1b[31mred\nb")
    rc, d = doc(capsys, "explain", "llama-3.1-8b", "--device", "h100")
    (w,) = d["warnings"]
    assert "\x1b" not in w["message"] and "\n" not in w["message"]
    assert f"{name}='a\\x1b[31mred\\nb' is set" in w["message"]


def test_batch_invariant_set_but_not_passed_is_said(monkeypatch, capsys, clean_env):
    monkeypatch.setenv("VLLM_BATCH_INVARIANT", "1")
    rc, d = doc(capsys, "explain", "llama-3.1-8b", "--device", "h100")
    (w,) = d["warnings"]
    assert w["kind"] == "environment" and "--use-batch-invariant" in w["message"]


# --- bad --vllm-python ------------------------------------------------------------------


def _one_line_error(capsys, *argv) -> str:
    rc, out, err = run(capsys, *argv)
    assert rc == 2, (out, err)
    assert err.count("\n") == 1 and err.startswith("error: "), err
    return err


def test_vllm_python_that_does_not_exist(tmp_path, capsys):
    err = _one_line_error(capsys, "explain", "llama-3.1-8b", "--device", "h100", "--vllm-python", tmp_path / "nope")
    assert "no such file" in err


def test_vllm_python_that_is_a_folder(tmp_path, capsys):
    err = _one_line_error(capsys, "explain", "llama-3.1-8b", "--device", "h100", "--vllm-python", tmp_path)
    assert "is a folder" in err and "bin/python" in err


def test_vllm_python_that_is_not_executable(tmp_path, capsys):
    f = tmp_path / "python"
    f.write_text("not a program\n")
    err = _one_line_error(capsys, "explain", "llama-3.1-8b", "--device", "h100", "--vllm-python", f)
    assert "not executable" in err


def test_vllm_python_that_is_another_program(tmp_path, capsys):
    f = tmp_path / "python"
    f.write_text("#!/bin/sh\necho 'I am not python' >&2\nexit 3\n")
    f.chmod(0o755)
    err = _one_line_error(capsys, "explain", "llama-3.1-8b", "--device", "h100", "--vllm-python", f)
    assert "not a Python" in err and "I am not python" in err


def test_vllm_python_that_is_not_a_program_at_all(tmp_path, capsys):
    f = tmp_path / "python"
    f.write_bytes(b"\x7fELF garbage")
    f.chmod(0o755)
    err = _one_line_error(capsys, "explain", "llama-3.1-8b", "--device", "h100", "--vllm-python", f)
    assert "is not a Python interpreter" in err


def test_vllm_python_that_hangs_is_cut_off(tmp_path, capsys, monkeypatch):
    f = tmp_path / "python"
    f.write_text("#!/bin/sh\nexec sleep 30\n")
    f.chmod(0o755)
    monkeypatch.setattr(detect, "PROBE_TIMEOUT_S", 0.5)
    err = _one_line_error(capsys, "explain", "llama-3.1-8b", "--device", "h100", "--vllm-python", f)
    assert "did not answer" in err and "0.5 s" in err


@pytest.mark.parametrize("args", [
    ("--sglang-python", "{missing}"),  # vLLM's answer shown, SGLang's Python named
    ("--engine", "sglang", "--vllm-python", "{missing}"),  # and the other way round
])
def test_a_bad_python_of_an_engine_not_shown_is_still_refused(tmp_path, capsys, args):
    args = [a.format(missing=tmp_path / "no-such-python") for a in args]
    err = _one_line_error(capsys, "explain", "llama-3.1-8b", "--device", "h100", *args)
    assert "no such file" in err and ("--sglang-python" in err or "--vllm-python" in err)


def test_vllm_python_without_vllm(tmp_path, capsys):
    python = other_python(tmp_path, None)
    err = _one_line_error(capsys, "explain", "llama-3.1-8b", "--device", "h100", "--vllm-python", python)
    assert "has no vllm installed" in err


def test_lock_records_the_engine_that_produced_each_entry(tmp_path, capsys, clean_env):
    deps = tmp_path / "deployments.yaml"
    deps.write_text(EXAMPLE.read_text())
    lock = tmp_path / "attn-select.lock"
    assert run(capsys, "lock", deps, "-o", lock, "--record-engine")[0] == 0
    text = lock.read_text()
    assert text.count(f"  produced_by: vllm {VLLM_VERSION} (attn-select mirror)\n") == text.count("\n- name: ")
    assert run(capsys, "check", lock)[0] == 0  # read back, not compared
    plain = tmp_path / "plain.lock"
    assert run(capsys, "lock", deps, "-o", plain)[0] == 0
    assert "produced_by" not in plain.read_text()  # off by default: existing locks stay byte-identical


def test_another_python_reports_its_own_install_not_the_working_folder(tmp_path, monkeypatch, capsys, clean_env):
    """``python -c`` would put the working folder on sys.path: a stand-in
    dist-info lying there must not pass for the other Python's vLLM."""
    stand_in(tmp_path / "cwd")
    monkeypatch.chdir(tmp_path / "cwd")
    python = other_python(tmp_path, stand_in(tmp_path / "venv-site", version=VLLM_VERSION))
    rc, d = doc(capsys, "explain", "llama-3.1-8b", "--device", "h100", "--vllm-python", python)
    assert d["warnings"] == []


@pytest.mark.parametrize("name", ["VLLM_BATCH_INVARIANT", "VLLM_ATTENTION_BACKEND"])
def test_doctor_cuts_and_escapes_a_variable_value(name):
    """doctor's variable rows echoed a 100 KB value whole, and a terminal escape as is."""
    from attn_select.selector.doctor import env_checks

    (row,) = [c for c in env_checks({name: "x" * 100_000}) if c.name == name]
    assert len(str(row.value)) < 300 and str(row.value).endswith("(100,000 characters)")
    assert len(str(row.detail)) < 1000
    (row,) = [c for c in env_checks({name: "1\x1b[31m"}) if c.name == name]
    assert "\x1b" not in str(row.value) + str(row.detail)
