"""`attn-select run`: usage errors, no-GPU exit, and a real CPU run on a tiny
model (reference + FLEX_ATTENTION + TRITON_ATTN under TRITON_INTERPRET=1)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from attn_select.cli.app import main  # noqa: E402

interpreter = pytest.mark.skipif(
    importlib.util.find_spec("triton") is None or importlib.util.find_spec("numpy") is None,
    reason="Triton interpreter needs triton and numpy",
)


@pytest.fixture(autouse=True)
def _interpret(monkeypatch):
    if not torch.cuda.is_available():
        monkeypatch.setenv("TRITON_INTERPRET", "1")


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is visible")
def test_no_gpu_is_exit_2_with_one_line(tiny_model, capsys):
    assert main(["run", tiny_model]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: no CUDA device visible;") and "\n" not in err
    assert "`run --device cpu`" in err


@pytest.mark.parametrize("name", ["h100", "H-100", "b200"])
def test_a_device_profile_on_run_is_pointed_to_explain(tiny_model, capsys, name):
    assert main(["run", tiny_model, "--device", name]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert err.startswith("error: --device on run takes cuda, cuda:N or cpu; ")
    profile = name.lower().replace("-", "")
    assert f"use `explain --device {profile}`" in err
    assert "`run --device cpu --capability " in err


def test_a_bad_cuda_index_is_exit_2(tiny_model, capsys):
    assert main(["run", tiny_model, "--device", "cuda:x"]) == 2
    assert capsys.readouterr().err.strip() == "error: --device on run takes cuda, cuda:N or cpu, got 'cuda:x'"


@pytest.mark.parametrize("args", [
    ["--device", "cpu", "--shapes", "decode,bogus"],
    ["--device", "cpu", "--backend", "NOPE_ATTN"],
    ["--device", "tpu"],
    ["--device", "cpu", "--dtype", "int8"],
])
def test_bad_usage_is_exit_2(tiny_model, args):
    assert main(["run", tiny_model, *args]) == 2


@pytest.mark.parametrize("args, words", [
    (["--build-span", "nan"], "'--build-span': 'nan' is not a number of seconds"),  # click's range let it through
    (["--build-span", "inf"], "'--build-span': 'inf': give a finite number of seconds"),  # would time builds forever
    (["--worker-timeout", "nan", "--gpus", "0"], "'--worker-timeout': 'nan' is not a number of seconds"),
])
def test_a_span_or_timeout_that_is_not_a_number_is_one_line(tiny_model, capsys, args, words):
    assert main(["run", tiny_model, "--device", "cpu", "--no-timing", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err, err


@pytest.mark.parametrize("args", [
    ["--batch", str(10**9)],  # the plan alone listed every request's length: MemoryError
    ["--context", str(10**30)],  # torch: "Overflow when unpacking long long"
    ["--block-size", str(10**30)],  # torch: "int too big to convert"
    ["--batch", str(10**400)],  # past a float
])
def test_a_batch_that_cannot_fit_is_one_line_before_anything_runs(tiny_model, capsys, args):
    assert main(["run", tiny_model, "--device", "cpu", "--no-timing", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error" not in err
    assert "GiB usable here; lower --batch, --context or --block-size" in err, err


def test_a_cpu_run_past_the_interpreters_bound_is_one_line_before_anything_runs(tiny_model, capsys):
    """Memory fits (about 1.6 GB), but Triton's interpreter would take many minutes: refused up front."""
    from attn_select.selector.tune_workload import CPU_STEP_ELEMENTS

    assert main(["run", tiny_model, "--device", "cpu", "--no-timing", "--batch", "64", "--context", "8192"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error" not in err
    assert err.startswith("error: --device cpu runs the kernels in Triton's interpreter: the decode batch "
                          "(64 x 1 new on 8192) reads "), err
    assert f"past the CPU bound of {CPU_STEP_ELEMENTS:,}" in err and "lower --batch or --context" in err


def test_the_cpu_bound_counts_cached_tokens_times_a_tokens_elements():
    from attn_select.selector.run_plan import Shape
    from attn_select.selector.tune_workload import CPU_STEP_ELEMENTS, cpu_run_size_error

    class Attn:  # Llama-3.1-8B's: 8 KV heads of 128, 2,048 elements a token
        use_mla, num_kv_heads, head_size, head_size_v = False, 8, 128, 128

    groups = [type("G", (), {"attn": Attn})()]
    fits = Shape("decode", decodes=16, decode_context=1024)  # 16 x 1025 tokens: 33.6 M elements (46 s here)
    assert fits.kv_tokens() * 2048 <= CPU_STEP_ELEMENTS and cpu_run_size_error([fits], groups) is None
    over = Shape("decode", decodes=16, decode_context=2048)
    assert "(16 x 1 new on 2048) reads 67,141,632 cached elements" in cpu_run_size_error([fits, over], groups)


@interpreter
def test_cpu_run_checks_flex_and_triton(tiny_model, capsys):
    code = main(["run", tiny_model, "--device", "cpu", "--no-timing", "--checks", "1",
                 "--shapes", "decode,mixed", "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    rows = {(r["shape"], r["backend"]): r for g in out["groups"] for r in g["rows"]}
    for shape in ("decode", "mixed"):
        for backend in ("TRITON_ATTN", "FLEX_ATTENTION"):
            r = rows[(shape, backend)]
            assert r["status"] == "ran" and r["correct"], r
            assert max(r["check"]["rel_errors"]) <= r["check"]["tolerance"] and r["check"]["unwritten"] == 0
        fa = rows[(shape, "FLASH_ATTN")]
        assert fa["status"] == "skipped" and fa["selected"]
    # the selected backend (FLASH_ATTN for SM90) cannot run on a CPU: every backend
    # that can ran and was correct, so exit 0, and the selection is not confirmed
    assert code == 0 and out["exit_code"] == 0
    assert out["groups"][0]["verdict"] == "missing"
    assert "the selection was not confirmed (full: FLASH_ATTN: FlashAttention needs a CUDA GPU)" in out["summary"]


@interpreter
def test_cpu_run_in_a_subprocess_exits_0_with_no_library_warnings(tiny_model):
    # a subprocess: pytest's own filterwarnings (pyproject) must not be what hides them
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONWARNINGS", "TRITON_INTERPRET")}
    out = subprocess.run([sys.executable, "-m", "attn_select.cli.app", "run", tiny_model, "--device", "cpu",
                          "--no-timing", "--checks", "1", "--shapes", "decode"],
                         capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Warning" not in out.stderr and "warn" not in out.stderr.lower(), out.stderr
    # stderr is not a terminal: plain progress lines, one per step
    assert all(line.startswith("[run] ") for line in out.stderr.splitlines()), out.stderr
    assert "not confirmed on this CPU: FlashAttention needs a CUDA GPU" in out.stdout
    assert "KV TB/s" not in out.stdout


def test_allow_missing_turns_missing_into_a_warning(tiny_model, capsys):
    # only FLASH_ATTN, which cannot run on a CPU: nothing was checked, so the
    # missing selection is a finding, or a warning with --allow-missing
    args = ["run", tiny_model, "--device", "cpu", "--no-timing", "--checks", "1", "--shapes", "decode",
            "--backend", "FLASH_ATTN"]
    assert main(args) == 1
    assert main([*args, "--allow-missing"]) == 0
    text = capsys.readouterr().out
    assert "warning: full: selected backend FLASH_ATTN not run here" in text


@interpreter
def test_cpu_run_of_a_cuda_only_selection_passes_when_the_rest_ran(tiny_model, capsys):
    code = main(["run", tiny_model, "--device", "cpu", "--no-timing", "--checks", "1", "--shapes", "decode",
                 "--backend", "FLASH_ATTN,TRITON_ATTN"])
    text = " ".join(capsys.readouterr().out.split())
    assert code == 0
    assert ("every backend that runs on a CPU ran and was correct (TRITON_ATTN); the selection was not confirmed "
            "(full: FLASH_ATTN: FlashAttention needs a CUDA GPU)") in text


@interpreter
def test_cpu_run_confirms_a_selected_backend_that_runs(tiny_model, capsys):
    # --backend with one name is vLLM's --attention-backend: TRITON_ATTN is selected and runs here
    code = main(["run", tiny_model, "--device", "cpu", "--no-timing", "--checks", "1", "--shapes", "prefill",
                 "--backend", "TRITON_ATTN", "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0, out["summary"]
    assert out["groups"][0]["verdict"] == "confirmed"


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_gpu_run_triton_and_flex(tiny_model, capsys):
    os.environ.pop("TRITON_INTERPRET", None)
    code = main(["run", tiny_model, "--backend", "TRITON_ATTN,FLEX_ATTENTION", "--batch", "4", "--context", "256",
                 "--format", "json", "--allow-missing"])
    out = json.loads(capsys.readouterr().out)
    ran = [r for g in out["groups"] for r in g["rows"] if r["status"] == "ran"]
    assert ran and all(r["correct"] for r in ran) and code == 0


def test_build_span_reaches_the_runner_and_refuses_negatives(tiny_model, monkeypatch):
    from attn_select.backends.run import runner

    seen = {}

    class Stop(Exception):
        pass

    def fake_run_model(plan, opts, **kw):
        seen["span"] = opts.build_span_s
        raise Stop

    monkeypatch.setattr(runner, "run_model", fake_run_model)
    from attn_select.cli.run import execute

    with pytest.raises(Stop):
        execute(tiny_model, device="cpu", shapes="decode", build_span=3.5)
    assert seen["span"] == 3.5
    assert main(["run", tiny_model, "--device", "cpu", "--build-span", "-1"]) == 2
