"""``--engine vllm-installed``, ``check --vllm-python`` and ``--engine
sglang-installed`` on Pythons whose engine is a stand-in package: every way
the installed engine can fail is one line on stderr and exit 2, in bounded
time. No real vLLM or SGLang is needed."""

from __future__ import annotations

import stat
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from tests.cli.helpers import run

EXAMPLE = Path(__file__).resolve().parents[2] / "profiles" / "lock" / "deployments.yaml"


def fake_vllm(root: Path, init: str, version: str = "0.31.0", name: str = "vllm") -> Path:
    """A Python whose ``name`` package (vllm, sglang) runs ``init`` when imported."""
    site = root / "site"
    info = site / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (site / name).mkdir()
    (site / name / "__init__.py").write_text(init)
    script = root / "bin" / "python"
    script.parent.mkdir(parents=True)
    script.write_text(f"#!/bin/sh\nPYTHONPATH={site} exec {sys.executable} \"$@\"\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def one_line(capsys, *argv) -> str:
    rc, out, err = run(capsys, *argv)
    assert rc == 2, (out, err)
    assert err.count("\n") == 1 and err.startswith("error: "), err
    return err


EXPLAIN = ("explain", "llama-3.1-8b", "--device", "h100", "--engine", "vllm-installed")


class Engine(NamedTuple):
    """One installed-engine mode, as its bad-input tests need it."""

    name: str  # the package and the --NAME-python flag
    title: str
    version: str  # the stand-in package's release
    loading: str  # what its code loads before the first case, in the error

    def explain(self, *more) -> tuple:
        return ("explain", "llama-3.1-8b", "--device", "h100", "--engine", f"{self.name}-installed", *more)

    def python(self, root: Path, init: str) -> Path:
        return fake_vllm(root, init, version=self.version, name=self.name)


ENGINES = [Engine("vllm", "vLLM", "0.31.0", "its selector"), Engine("sglang", "SGLang", "0.5.20", "its server arguments")]
each_engine = pytest.mark.parametrize("engine", ENGINES, ids=[e.name for e in ENGINES])


@each_engine
def test_a_release_whose_code_raises(tmp_path, capsys, engine):
    python = engine.python(tmp_path, "raise RuntimeError('this release is broken')\n")
    err = one_line(capsys, *engine.explain(f"--{engine.name}-python", python))
    assert f"{engine.title} {engine.version}'s own code raised while loading {engine.loading}" in err
    assert "RuntimeError: this release is broken" in err


@each_engine
def test_a_release_that_hangs_is_cut_off(tmp_path, capsys, engine):
    python = engine.python(tmp_path, "import time\ntime.sleep(120)\n")
    err = one_line(capsys, *engine.explain(f"--{engine.name}-python", python, "--engine-timeout", "3"))
    assert f"installed {engine.title}'s code did not finish its import within 3 s" in err
    assert "--engine-timeout" in err


@each_engine
def test_a_release_that_kills_the_interpreter(tmp_path, capsys, engine):
    python = engine.python(tmp_path, "import os\nos._exit(7)\n")
    err = one_line(capsys, *engine.explain(f"--{engine.name}-python", python))
    assert f"installed {engine.title}'s code died without an answer during its import" in err


@each_engine
def test_a_python_without_the_engine(tmp_path, capsys, engine):
    script = tmp_path / "python"
    script.write_text(f"#!/bin/sh\nPYTHONPATH= exec {sys.executable} \"$@\"\n")
    script.chmod(0o755)
    err = one_line(capsys, *engine.explain(f"--{engine.name}-python", script))
    assert f"--{engine.name}-python" in err and f"has no {engine.name} installed" in err


@each_engine
def test_this_python_without_the_engine(capsys, engine):
    err = one_line(capsys, *engine.explain())
    assert f"{engine.title} is not installed in this Python" in err and f"--{engine.name}-python" in err


@each_engine
def test_not_a_python(tmp_path, capsys, engine):
    err = one_line(capsys, *engine.explain(f"--{engine.name}-python", tmp_path / "nope"))
    assert f"--{engine.name}-python" in err and "no such file" in err


def test_no_c_compiler_says_so(tmp_path, capsys, monkeypatch):
    import attn_select.selector.host.kernel_probe as probe
    import attn_select.backends.run.probes.libcuda_standin as standin

    python = fake_vllm(tmp_path, "")
    monkeypatch.setattr(probe, "driver_present", lambda: False)
    monkeypatch.setattr(standin, "DEFAULT_DIR", tmp_path / "libcuda")  # nothing built there yet
    monkeypatch.setattr(standin, "compiler", lambda: None)
    err = one_line(capsys, *EXPLAIN, "--vllm-python", python)
    assert "needs a libcuda.so.1 stand-in" in err and "C compiler" in err


def test_raw_selector_config_needs_a_model(capsys):
    err = one_line(capsys, "explain", "--capability", "9.0", "--head-size", "128", "--engine", "vllm-installed")
    assert "needs a MODEL" in err


def test_check_preview_with_a_broken_release(tmp_path, capsys):
    deps = tmp_path / "deployments.yaml"
    deps.write_text(EXAMPLE.read_text())
    lock = tmp_path / "attn-select.lock"
    assert run(capsys, "lock", deps, "-o", lock)[0] == 0
    python = fake_vllm(tmp_path / "venv", "raise ImportError('no torch here')\n")
    err = one_line(capsys, "check", lock, "--vllm-python", python)
    assert "ImportError: no torch here" in err


# --- --engine sglang-installed ------------------------------------------------------


def test_sglang_needs_a_model(capsys):
    err = one_line(capsys, "explain", "--capability", "9.0", "--head-size", "128", "--engine", "sglang-installed")
    assert "needs a MODEL" in err


def test_sglang_a_vllm_what_if_is_refused(capsys):
    err = one_line(capsys, *ENGINES[1].explain("--block-size", "16"))
    assert "vLLM what-if" in err
