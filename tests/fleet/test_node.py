"""`run --gpus`: the worker pool and the merge with real `--device cpu`
worker processes (two of them, one killed mid-run by the test), a hung and
a dying worker, the slow-GPU lines on reports with known timings, and the
GPU listing with a stand-in driver."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import sys
import threading
import xml.etree.ElementTree as ET

import pytest

from attn_select.backends.run.report import BackendRow, Check, GroupRun, Perf, RunReport
from attn_select.cli.formats.fleet import render_junit, render_text
from attn_select.cli.fleet import gpuinfo, node
from attn_select.cli.fleet.job import Job, _error_kind
from attn_select.cli.fleet.merge import merge
from attn_select.cli.fleet.pool import Slot, run_pool
from attn_select.cli.fleet.units import CRASHED, MISSING, OOM, RAN, TIMEOUT, Unit, report_from_dict, unit_from_payload
from attn_select.selector.errors import UserError
from tests.cli.helpers import run as cli

interpreter = pytest.mark.skipif(
    importlib.util.find_spec("triton") is None or importlib.util.find_spec("numpy") is None,
    reason="Triton interpreter needs triton and numpy",
)


def small_run(model: str) -> dict:
    # TRITON_ATTN is vLLM's choice when named alone, and runs on a CPU: each worker can confirm it
    return dict(model=model, device="cpu", backend="TRITON_ATTN", shapes="decode", checks=1, build_span=0.0)


@interpreter
def test_two_cpu_workers_one_killed_mid_run(tiny_model, tmp_path):
    pids: dict[str, int] = {}
    killed = threading.Event()

    def on_start(label, pid):
        pids[label] = pid

    def progress(label, line):
        # "cpu 1" is inside execute (a backend row started): kill it there
        if label == "cpu 1" and "TRITON_ATTN" in line and not killed.is_set():
            killed.set()
            os.kill(pids[label], signal.SIGKILL)

    # warmup=True: the compile-once pass a GPU run makes first (on a CPU it is off by default)
    rep = node.run_node(small_run(tiny_model), gpus=[0, 1], windows=2, timeout_s=600, jit_cache=str(tmp_path),
                        warmup=True, progress=progress, on_start=on_start)
    assert killed.is_set()
    assert rep.context["warmup_s"] > 0 and any(n.startswith("JIT warm-up on cpu 0: ") for n in rep.notes)
    ok, dead = rep.units
    assert (ok.label, dead.label) == ("cpu 0", "cpu 1")
    assert ok.status == RAN and ok.confirmed and len(ok.reports) == 2
    assert dead.status == CRASHED and "SIGKILL" in dead.detail and not dead.reports
    assert rep.exit_code == 1 and "cpu 1" in rep.summary
    assert [f for f in rep.findings if f.startswith("cpu 1")] and not [f for f in rep.findings if f.startswith("cpu 0")]
    (row,) = rep.rows
    assert (row.group, row.shape, row.backend, row.selected) == ("full", "decode", "TRITON_ATTN", True)
    cell = row.cells["cpu 0"]
    assert cell.status == "ok" and len(cell.windows_us) == 2 and cell.rel_err <= 0.02
    assert "cpu 1" not in row.cells
    assert rep.context["jit_cache"]["TRITON_CACHE_DIR"] == os.environ.get("TRITON_CACHE_DIR",
                                                                           str(tmp_path / "triton"))
    # JUnit: one case per worker, the killed one failed
    root = ET.fromstring(render_junit(rep))
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert set(cases) == {"cpu 0", "cpu 1"} and root.get("failures") == "1"
    assert cases["cpu 0"].find("failure") is None
    assert cases["cpu 1"].find("failure").get("type") == CRASHED
    # JSON keeps both units and the surviving worker's reports
    doc = json.loads(rep.to_json())
    assert [u["status"] for u in doc["units"]] == [RAN, CRASHED] and len(doc["units"][0]["reports"]) == 2


@interpreter
def test_cli_gpus_json_with_the_sigkill_hook(tiny_model, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("ATTN_SELECT_TEST_SIGKILL", "cpu 0")
    rc, out, _ = cli(capsys, "run", tiny_model, "--device", "cpu", "--gpus", "0,1", "--backend", "TRITON_ATTN",
                     "--shapes", "decode", "--checks", "1", "--build-span", "0", "--windows", "2",
                     "--jit-cache", tmp_path, "--format", "json")
    doc = json.loads(out)
    assert rc == 1 and doc["exit_code"] == 1 and doc["mode"] == "node"
    by = {u["label"]: u for u in doc["units"]}
    assert by["cpu 0"]["status"] == CRASHED and "SIGKILL after window 1" in by["cpu 0"]["detail"]
    assert by["cpu 1"]["confirmed"] and by["cpu 1"]["gpu_note"].startswith("cpu worker")


def _fake_argv(behaviour):
    def argv(job_path, out_path):
        label = json.loads(job_path.read_text())["label"]
        return [sys.executable, "-c", behaviour[label]]
    return argv


def test_a_hung_worker_is_killed_at_its_limit_and_a_dying_one_reported():
    slots = [Slot(Job("hang", {}), peer="x"), Slot(Job("dies", {}), peer="x")]
    units = run_pool(slots, timeout_s=3, argv=_fake_argv({
        "hang": "import time; print('started', flush=True); time.sleep(600)",
        "dies": "import sys; print('bad things', flush=True); sys.exit(3)",
    }))
    hang, dies = units
    assert hang.status == TIMEOUT and "no report within 3 s" in hang.detail and "started" in hang.detail
    assert dies.status == CRASHED and dies.detail == "exited with code 3 without a report: bad things"


def test_oom_and_bad_input_are_their_own_kinds():
    class OutOfMemoryError(RuntimeError):
        pass

    assert _error_kind(OutOfMemoryError("CUDA out of memory. Tried to allocate 2 GiB")) == "oom"
    assert _error_kind(UserError("no CUDA device visible")) == "bad-input"
    assert _error_kind(ValueError("x")) == "error"
    u = unit_from_payload("GPU 3", "H200", {"windows": [], "error": "OutOfMemoryError: CUDA out of memory",
                                              "error_kind": "oom"})
    assert u.status == OOM and not u.confirmed and u.verdict.startswith("out-of-memory: OutOfMemoryError")


# --- the merge on reports with known timings -------------------------------------------

def _report(us: float, exit_code: int = 0, correct: bool = True) -> RunReport:
    perf = Perf(per_layer_us=us, min_us=us, method="cuda-graph", samples=50, layers_timed=4, first_call_s=0.1,
                build_us=10.0, kv_bytes=1_000_000, kv_read_tbs=1e6 / (us * 1e-6) / 1e12, ceiling_fraction=0.5,
                num_layers=32, step_us=10 + 32 * us, build_share=0.01)
    row = BackendRow(group="full", shape="decode", backend="FLASH_ATTN", status="ran", kernel="fa3",
                     selected=True, check=Check([0.001 if correct else 0.5], 0.02, 0), perf=perf)
    g = GroupRun(name="full", layers=32, attention={}, selected="FLASH_ATTN", selection_error=None,
                 fa_version=3, flashinfer_decode=None, rows=[row], verdict="confirmed" if correct else "wrong")
    return RunReport(model="m", device="NVIDIA H200", capability="9.0", torch="t", dtype="bfloat16",
                     kv_cache_dtype="auto", page_size=16, shapes={}, copy_ceiling_tbs=4.0, kernels_source="",
                     groups=[g], exit_code=exit_code, summary="selected backend confirmed in every group")


def _unit(label: str, times: list[float], **kw) -> Unit:
    reps = [report_from_dict(json.loads(_report(t, **kw).to_json())) for t in times]  # through JSON, as workers send
    return Unit(label, "NVIDIA H200", RAN, reports=reps,
                gpu_before=gpuinfo.GpuState(int(label[-1]), "NVIDIA H200", f"GPU-{label[-1]}", 1980, 3201, 1980, 40),
                gpu_after=gpuinfo.GpuState(int(label[-1]), "NVIDIA H200", f"GPU-{label[-1]}", 1755, 3201, 1980, 71))


def test_a_gpu_slower_than_the_noise_is_named_and_the_others_are_not():
    units = [_unit("GPU 0", [100, 101, 99]), _unit("GPU 1", [100, 102, 100]), _unit("GPU 2", [101, 100, 99]),
             _unit("GPU 3", [120, 121, 119])]
    rep = merge(units, mode="node", model="m", tp=4, windows=3)
    slow = [f for f in rep.findings if "slow:" in f]
    assert len(slow) == 1 and slow[0].startswith("GPU 3 (NVIDIA H200, GPU-3, SM clock 1980->1755 MHz of 1980, 40->71 C)")
    assert rep.speed["GPU 3"].slow and not any(rep.speed[f"GPU {i}"].slow for i in range(3))
    assert rep.exit_code == 0  # slow is a line, not a failure ...
    assert merge(units, mode="node", model="m", tp=4, windows=3, fail_on_slow=True).exit_code == 1  # ... unless asked
    (row,) = rep.rows
    # per GPU the median of its windows (100, 100, 100, 120), the node's median of those 100
    assert row.spread["NVIDIA H200"] == pytest.approx(0.2)
    assert row.cells["GPU 3"].deviation == pytest.approx(0.2)
    assert row.cells["GPU 0"].noise == pytest.approx(2 / 100)


def test_a_gap_inside_the_run_to_run_noise_is_not_slow():
    units = [_unit("GPU 0", [100, 130, 90]), _unit("GPU 1", [110, 80, 125])]  # 10 us apart, 40 us of noise
    rep = merge(units, mode="node", model="m", tp=2, windows=3)
    assert not any(s.slow for s in rep.speed.values()) and not [f for f in rep.findings if "slow:" in f]


def test_one_window_measures_no_noise_so_calls_nothing_slow():
    rep = merge([_unit("GPU 0", [100]), _unit("GPU 1", [150])], mode="node", model="m", tp=2, windows=1)
    assert rep.speed == {} and any("no run-to-run noise" in n for n in rep.notes)


def test_wrong_or_unconfirmed_on_one_gpu_fails_the_node():
    units = [_unit("GPU 0", [100, 100]), _unit("GPU 1", [100, 100], exit_code=1, correct=False)]
    rep = merge(units, mode="node", model="m", tp=2, windows=2)
    assert rep.exit_code == 1 and rep.rows[0].cells["GPU 1"].status == "WRONG"
    assert rep.findings[0].startswith("GPU 1 (NVIDIA H200, GPU-1") and "not confirmed" in rep.findings[0]
    text = _text(rep)
    assert "WRONG" in text and "1 of 2 GPUs failed or did not confirm the selected backend: GPU 1" in text


def _text(rep) -> str:
    import io

    buf = io.StringIO()
    render_text(rep, file=buf)
    return buf.getvalue()


# --- which GPUs: the driver's list, CUDA_VISIBLE_DEVICES, a missing GPU ---------------------

def _gpus(n: int) -> list[gpuinfo.GpuState]:
    return [gpuinfo.GpuState(i, "NVIDIA H200", f"GPU-{i:04d}") for i in range(n)]


def test_targets_pin_by_uuid_and_a_gpu_not_visible_is_a_missing_unit(monkeypatch):
    monkeypatch.setattr(gpuinfo, "list_gpus", lambda: _gpus(8)[:5] + _gpus(8)[6:])  # GPU 5 fell off the bus
    targets, missing, _ = node.plan_targets([0, 5, 7], "cuda", {})
    assert [(t.label, t.ref, t.peer) for t in targets] == [("GPU 0", "GPU-0000", "NVIDIA H200"),
                                                           ("GPU 7", "GPU-0007", "NVIDIA H200")]
    assert [(u.label, u.status) for u in missing] == [("GPU 5", MISSING)]
    assert "visible: 0,1,2,3,4,6,7" in missing[0].detail
    targets, _, notes = node.plan_targets("all", "cuda", {"CUDA_VISIBLE_DEVICES": "GPU-0003,1"})
    assert [t.label for t in targets] == ["GPU 3", "GPU 1"] and "CUDA_VISIBLE_DEVICES" in notes[0]


def test_fewer_gpus_than_tp_fails(monkeypatch):
    units = [_unit(f"GPU {i}", [100, 100]) for i in range(3)]
    rep = merge(units, mode="node", model="m", tp=4, windows=2, require_units=4)
    assert rep.exit_code == 1 and any("only 3 GPUs for --tp 4" in f for f in rep.findings)


@pytest.mark.parametrize("argv, message", [
    (["--device", "cpu", "--gpus", "all"], "--gpus all with --device cpu"),
    (["--device", "cpu", "--gpus", "0,x"], "is not a GPU index"),
    (["--device", "cpu", "--gpus", "0,0"], "named twice"),
    (["--device", "cpu", "--gpus", "0", "--ray", "auto"], "not both"),
    (["--device", "cpu", "--gpus", "0", "--shapes", "bogus"], "unknown batch shape bogus"),
    (["--device", "cpu", "--format", "junit"], "add --gpus or --ray"),
])
def test_bad_fanout_input_is_one_line_exit_2(tiny_model, capsys, argv, message):
    rc, _, err = cli(capsys, "run", tiny_model, *argv)
    assert rc == 2 and message in err and err.count("\n") == 1


def test_no_driver_is_one_line_exit_2(tiny_model, capsys, monkeypatch):
    def none():
        raise gpuinfo.GpuQueryError("neither pynvml nor nvidia-smi is available")

    monkeypatch.setattr(gpuinfo, "list_gpus", none)
    rc, _, err = cli(capsys, "run", tiny_model, "--gpus", "all")
    assert rc == 2 and "cannot list this node's GPUs (neither pynvml nor nvidia-smi" in err
