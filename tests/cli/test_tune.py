"""`attn-select tune`: bad workloads (one line, exit 2), and a real tiny CPU
sweep (TRITON_ATTN and FLEX_ATTENTION under Triton's interpreter) whose PNG
is checked from its header, re-run from the cache."""

from __future__ import annotations

import importlib.util
import json
import struct
import subprocess
import sys

import pytest

from attn_select.cli.app import main

needs_run = pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("torch", "triton", "numpy", "matplotlib")),
    reason="the CPU sweep needs torch, triton, numpy and matplotlib (the [test] extra)")


@pytest.fixture(autouse=True)
def _interpret(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")


def png_size(path) -> tuple[int, int]:
    """Width and height from a PNG's signature and IHDR chunk (asserts it is one)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    length, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR" and length == 13
    return struct.unpack(">II", data[16:24])


@pytest.mark.parametrize("text", ["decode:32x", "prefill:4x512/abc", "decode:32x4096/1024"])
def test_a_bad_workload_shape_is_one_line_and_exit_2(tiny_model, capsys, text):
    assert main(["tune", tiny_model, "--device", "cpu", "--workload", text]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: --workload: ")


def test_a_bad_shape_in_a_workload_file_is_one_line_and_exit_2(tiny_model, tmp_path, capsys):
    f = tmp_path / "mix.yaml"
    f.write_text("workload:\n  - {decode: 32x4096, weight: 3}\n  - {prefill: 4by512}\n")
    assert main(["tune", tiny_model, "--device", "cpu", "--workload", str(f)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "item 2" in err and "bad shape" in err


@pytest.mark.parametrize("args, words", [
    (["--batches", "1" * 5000], "--batches: batches of 5000 digits is too large"),  # int() refused: internal error
    (["--batches", str(10**30)], "--batches: batches of 31 digits is too large"),
    (["--contexts", "9" * 25 + "k"], "--contexts: contexts of 25 digits is too large"),
    (["--plot", ""], "--plot '.': give a file name for the plots"),  # with_suffix on '.': internal error after the sweep
])
def test_an_absurd_count_or_plot_name_is_one_line_before_the_sweep(tiny_model, capsys, args, words):
    assert main(["tune", tiny_model, "--device", "cpu", "--max-seconds", "0", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err, err


def test_a_huge_batch_is_skipped_as_not_fitting_not_listed_per_request(tiny_model, capsys):
    """The whole-model estimate listed one length per request (--batches
    10**19: OverflowError; 10**9: gigabytes of list) before the point was
    found not to fit; it now counts requests per length."""
    rc = main(["tune", tiny_model, "--device", "cpu", "--max-seconds", "0", "--batches", str(10**19),
               "--format", "json"])
    out, err = capsys.readouterr()
    assert rc in (0, 1) and "internal error" not in err, err
    huge = [p for p in json.loads(out)["points"] if p["batch"] == 10**19]  # the workload's own shapes run too
    assert huge and all(p["status"] == "skipped" and "does not fit" in p["reason"] for p in huge), huge


def test_a_device_profile_is_refused_as_on_run(tiny_model, capsys):
    assert main(["tune", tiny_model, "--device", "h100"]) == 2
    assert "--device on run takes cuda, cuda:N or cpu" in capsys.readouterr().err


@needs_run
@pytest.mark.slow
def test_cpu_sweep_plots_a_valid_png_and_reruns_from_the_cache(tiny_model, tmp_path, capsys):
    from attn_select.cli.tune_plot import SIZE_PX

    plot, cache = tmp_path / "t.png", tmp_path / "cache"
    args = ["tune", tiny_model, "--device", "cpu", "--cache-dir", cache, "--contexts", "16"]
    rc = main([str(a) for a in [*args, "--plot", plot]])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert png_size(plot) == SIZE_PX
    assert plot.with_suffix(".svg").read_text().lstrip().startswith("<?xml")
    assert "per-layer latency (us)" in out and "TRITON_ATTN" in out and "FLEX_ATTENTION" in out
    assert "CUDA-only, not runnable on a CPU" in out  # vLLM's default here is FLASH_ATTN

    rc = main([str(a) for a in [*args, "--workload", "decode:2x16", "--format", "json"]])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0
    ran = [p for p in doc["points"] if p["status"] == "ok"]
    assert {p["setting"] for p in ran} == {"TRITON_ATTN", "FLEX_ATTENTION"}
    assert all(p["cached"] for p in ran)  # nothing measured twice
    assert all(p["rel_error"] is not None and p["per_layer_us"] > 0 for p in ran)
    assert doc["schema"] == "attn-select.tune/1" and doc["recommendation"]["recommend"] is False


@needs_run
@pytest.mark.slow
def test_tune_llama_on_the_cpu_writes_a_valid_png(tmp_path):
    """The issue's CPU check, through the real entry point."""
    from attn_select.cli.tune_plot import SIZE_PX

    out = subprocess.run([sys.executable, "-m", "attn_select.cli.app", "tune", "llama-3.1-8b", "--device", "cpu",
                          "--plot", "t.png", "--no-cache"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert png_size(tmp_path / "t.png") == SIZE_PX
    assert "Traceback" not in out.stderr


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")
def test_no_gpu_is_exit_2_with_one_line(tiny_model, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is visible")
    assert main(["tune", tiny_model]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "`tune --device cpu`" in err
