"""`attn-select doctor`: on this Python (no vLLM), and on a stand-in for
another Python whose site folder holds a vLLM 0.31.0 dist-info and modules
that import, fail, crash and hang, so every kind of import finding shows."""

from __future__ import annotations

import http.server
import json
import socket
import stat
import sys
import threading
from pathlib import Path

import pytest

from attn_select.selector.engine_env import SELECTION_VARS
from tests.cli.helpers import run


def _doc(capsys, *argv):
    rc, out, err = run(capsys, "doctor", *argv, "--format", "json")
    assert rc == 0, err
    return json.loads(out)


def _checks(doc) -> dict[str, dict]:
    return {c["name"]: c for s in doc["sections"] for c in s["checks"]}


def test_doctor_on_this_python(capsys, monkeypatch):
    monkeypatch.delenv("VLLM_ATTENTION_BACKEND", raising=False)
    rc, out, _ = run(capsys, "doctor")
    assert rc == 0
    assert out.startswith(f"attn-select doctor  {sys.executable}")
    for heading in ("machine", "packages in", "FlashAttention", "FlashInfer JIT prerequisites", "trtllm cubins",
                    "environment variables that change selection", "--kernels"):
        assert heading in out
    doc = _doc(capsys)
    assert doc["schema"] == "attn-select.doctor/1"
    checks = _checks(doc)
    assert checks["vLLM"]["value"] == "not installed"
    assert checks["vLLM FA2"]["value"] == "not installed"
    assert {v.name for v in SELECTION_VARS} <= set(checks)  # every selection variable, set or not
    assert checks["trtllm cubins"]["value"] == "need the network"  # nothing was sent


def _fake_site(root: Path) -> Path:
    site = root / "site"
    info = site / "vllm-0.31.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: vllm\nVersion: 0.31.0\n")
    fa = site / "vllm" / "vllm_flash_attn"
    fa.mkdir(parents=True)
    (site / "vllm" / "__init__.py").write_text("")
    (fa / "__init__.py").write_text("raise ImportError('stand-in: no CUDA extensions')\n")
    (fa / "_vllm_fa2_C.abi3.so").write_bytes(b"not an ELF file")
    (site / "flash_attn_interface.py").write_text("import os\nos.abort()\n")  # crashes the interpreter
    fi = site / "flash_attn-2.8.3.dist-info"
    fi.mkdir()
    (fi / "METADATA").write_text("Metadata-Version: 2.1\nName: flash-attn\nVersion: 2.8.3\n")
    (site / "flash_attn_2_cuda.py").write_text("import time\ntime.sleep(60)\n")  # hangs
    (site / "flashinfer").mkdir()
    (site / "flashinfer" / "__init__.py").write_text("")
    return site


def _python(root: Path, site: Path) -> Path:
    script = root / "bin" / "python"
    script.parent.mkdir(parents=True)
    script.write_text(f"#!/bin/sh\nPYTHONPATH={site} exec {sys.executable} \"$@\"\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_doctor_on_another_python_reports_each_import_finding(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("VLLM_ATTENTION_BACKEND", "FLASHINFER")
    python = _python(tmp_path, _fake_site(tmp_path))
    doc = _doc(capsys, "--vllm-python", python, "--import-timeout", "5")
    checks = _checks(doc)
    assert checks["vLLM"]["value"] == "0.31.0"
    assert checks["vLLM FA2"]["value"] == "does not import"
    assert "stand-in: no CUDA extensions" in checks["vLLM FA2"]["detail"]
    assert checks["vLLM FA3"]["value"] == "not installed"  # no _vllm_fa3_C file in that wheel
    assert checks["flash_attn_interface (FA3)"]["value"] == "crashes"
    assert checks["flash-attn (FA2)"]["value"] == "does not import"
    assert "did not finish within 5 s" in checks["flash-attn (FA2)"]["detail"]
    assert checks["FlashInfer"]["value"] == "imports"  # tested after the crash and the hang
    assert doc["kernels"].split(",")[0] == "fa2"  # the file is there: vLLM's probe would count it
    kinds = [w["kind"] for w in doc["warnings"]]
    assert kinds == ["version", "environment"]
    assert "vLLM 0.31.0 is installed" in doc["warnings"][0]["message"]
    assert checks["VLLM_ATTENTION_BACKEND"]["ok"] is False


def _server() -> tuple[http.server.HTTPServer, str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):  # keep pytest's output clean
            pass

    srv = http.server.HTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_address[1]}/"


def test_probe_network_is_one_head_request(capsys, monkeypatch):
    srv, url = _server()
    try:
        monkeypatch.setenv("FLASHINFER_CUBINS_REPOSITORY", url)
        monkeypatch.delenv("VLLM_HAS_FLASHINFER_CUBIN", raising=False)
        c = _checks(_doc(capsys, "--probe-network"))["trtllm cubins"]
        assert c["value"] == "reachable" and "HTTP 200" in c["detail"]
    finally:
        srv.shutdown()
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("FLASHINFER_CUBINS_REPOSITORY", f"http://127.0.0.1:{port}/")
    c = _checks(_doc(capsys, "--probe-network"))["trtllm cubins"]
    assert c["value"] == "unreachable" and "without trtllm-cubins" in c["detail"]


def test_cubin_env_variable_means_no_request(capsys, monkeypatch):
    monkeypatch.setenv("VLLM_HAS_FLASHINFER_CUBIN", "1")
    monkeypatch.setenv("FLASHINFER_CUBINS_REPOSITORY", "http://127.0.0.1:9/never-asked")
    c = _checks(_doc(capsys, "--probe-network"))["trtllm cubins"]
    assert c["value"] == "available"


def test_doctor_bad_python_is_one_line(tmp_path, capsys):
    rc, out, err = run(capsys, "doctor", "--vllm-python", tmp_path / "missing")
    assert rc == 2 and err.count("\n") == 1 and "no such file" in err


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_hostile_environment_values_are_cut_and_escaped(capsys, monkeypatch, fmt):
    """CUDA_HOME and FLASHINFER_CUBINS_REPOSITORY were echoed whole: 100 KB
    of them, or a terminal escape and a newline, went into the report as set.
    (100 KB: a longer variable could not reach doctor's own subprocesses.)"""
    url = "http://mirror/" + "y" * 100_000 + "\x1b]0;title\x07\n"
    monkeypatch.setenv("FLASHINFER_CUBINS_REPOSITORY", url)
    monkeypatch.setenv("CUDA_HOME", "/opt/cuda\x1b[31m\nred")
    monkeypatch.delenv("VLLM_HAS_FLASHINFER_CUBIN", raising=False)
    rc, out, _ = run(capsys, "doctor", "--format", fmt)
    assert rc == 0 and "\x1b" not in out and "\x07" not in out and len(out) < 20_000
    if fmt == "json":
        checks = _checks(json.loads(out))
        assert checks["CUDA_HOME"]["value"] == "'/opt/cuda\\x1b[31m\\nred'"
        assert checks["FLASHINFER_CUBINS_REPOSITORY"]["value"].endswith("\\x07\\n' (100,025 characters)")
        assert "(100,025 characters)" in checks["trtllm cubins"]["detail"]
    else:
        assert out.count("(100,025 characters)") == 2 and "'/opt/cuda\\x1b[31m\\nred'" in out
