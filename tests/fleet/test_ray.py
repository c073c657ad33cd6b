"""`run --ray` / `check --ray` on a local Ray cluster (ray.init with 2 CPUs)
whose `accelerator_type:H100` and `accelerator_type:A100` custom resources
stand in for two GPU types, with `--device cpu` tasks: scheduling per type
and per node, the merge, a task killed mid-run, a hung task, a node that
left, the version refusal, the JUnit output. Skipped without Ray."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

ray = pytest.importorskip("ray")

from attn_select.cli.formats.fleet import render_junit  # noqa: E402
from attn_select.cli.fleet import ray_run  # noqa: E402
from attn_select.cli.fleet.job import Job  # noqa: E402
from attn_select.cli.fleet.ray_cluster import NodeInfo, gpu_types, nodes, profile_for  # noqa: E402
from attn_select.cli.fleet.units import CRASHED, RAN, TIMEOUT, VANISHED  # noqa: E402
from tests.cli.helpers import run as cli  # noqa: E402
from tests.conftest import TINY  # noqa: E402
from tests.fleet.test_node import interpreter  # noqa: E402

pytestmark = interpreter
TYPES = {"accelerator_type:H100": 1, "accelerator_type:A100": 1}


@pytest.fixture(scope="module")
def cluster():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # the task processes inherit the cluster's environment
    if ray.is_initialized():
        ray.shutdown()
    ray.init(num_cpus=2, resources=TYPES, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.fixture
def tiny_dir(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(TINY))
    return tmp_path


def small_run(model: str) -> dict:
    return dict(model=model, device="cpu", backend="TRITON_ATTN", shapes="decode", checks=1, build_span=0.0)


def test_one_task_per_gpu_type_and_one_killed_mid_run(cluster, tiny_dir, monkeypatch):
    monkeypatch.setenv("ATTN_SELECT_TEST_SIGKILL", "A100")  # the A100 task SIGKILLs itself after window 1
    rep = ray_run.run_ray(small_run(str(tiny_dir / "config.json")), address="auto", every_node=False, windows=2,
                          timeout_s=600)
    a100, h100 = rep.units
    assert (a100.label, h100.label) == ("A100", "H100")  # one task per type, a column each
    assert a100.status == CRASHED and "died mid-run" in a100.detail and not a100.reports
    assert h100.status == RAN and h100.confirmed and len(h100.reports) == 2
    assert h100.node == nodes(cluster)[0].node_id and h100.versions["attn-select"]
    (row,) = rep.rows
    assert set(row.cells) == {"H100"} and row.cells["H100"].status == "ok"
    # the task read the model's config.json shipped with the job, not the driver's path
    assert h100.report.groups[0].attention["num_heads"] == TINY["num_attention_heads"]
    assert rep.exit_code == 1 and rep.findings == ["A100: crashed: the worker process died mid-run (killed, or a "
                                                   "crash in native code)"]
    root = ET.fromstring(render_junit(rep))
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert set(cases) == {"A100", "H100"} and root.get("tests") == "2" and root.get("failures") == "1"
    assert cases["A100"].find("failure").get("type") == CRASHED and cases["H100"].find("failure") is None
    assert json.loads(rep.to_json())["context"]["types"] == {"A100": [nodes(cluster)[0].host],
                                                             "H100": [nodes(cluster)[0].host]}


def test_every_node_pins_each_task_to_its_node(cluster, tiny_dir, capsys):
    rc, out, _ = cli(capsys, "run", tiny_dir / "config.json", "--ray", "auto", "--every-node", "--device", "cpu",
                     "--backend", "TRITON_ATTN", "--shapes", "decode", "--checks", "1", "--build-span", "0",
                     "--windows", "1", "--format", "json")
    doc = json.loads(out)
    host = nodes(cluster)[0].host
    assert rc == 0 and [u["label"] for u in doc["units"]] == [f"A100 @ {host}", f"H100 @ {host}"]
    assert all(u["confirmed"] and u["node"] == nodes(cluster)[0].node_id for u in doc["units"])
    # a CPU task selects for the GPU its type stands in for
    a100, h100 = (" ".join(u["reports"][0]["notes"]) for u in doc["units"])
    assert "selection is for SM80" in a100 and "selection is for SM90" in h100
    assert any("no run-to-run noise" in n for n in doc["notes"])


def test_a_hung_task_is_cancelled_at_its_limit_and_a_node_that_left_is_vanished(cluster):
    def hang(job_json: str) -> dict:  # local, so Ray ships it by value to its worker
        import time

        time.sleep(600)
        return {}

    types = gpu_types(nodes(cluster), cpu=True, where="test")
    gone = NodeInfo("ab" * 28, "10.9.9.9", alive=False, gpus=0.0, types=["H200"])  # left after discovery
    targets = [ray_run.Target("H100", "H100", None), ray_run.Target("H200 @ 10.9.9.9", "H200", gone)]
    jobs = {t.label: Job(t.label, {}) for t in targets}
    units = ray_run.gather(cluster, targets, {**types, "H200": [gone]}, jobs, cpu=True, timeout_s=3, body=hang,
                           poll_s=0.5)
    hung, left = units
    assert hung.status == TIMEOUT and "no report within 3 s" in hung.detail
    assert left.status == VANISHED and "left the cluster" in left.detail


def test_check_lock_on_the_fleet_one_junit(cluster, tiny_dir, capsys):
    (tiny_dir / "deployments.yaml").write_text(
        "deployments:\n"
        "  - {name: tiny-h100, model: config.json, device: h100, overrides: {backend: TRITON_ATTN}}\n"
        "  - {name: tiny-a100, model: config.json, device: a100, overrides: {backend: TRITON_ATTN}}\n"
        "  - {name: raw, selector: {head_size: 128}, device: h100}\n")
    lock = tiny_dir / "attn-select.lock"
    assert cli(capsys, "lock", tiny_dir / "deployments.yaml", "-o", lock)[0] == 0
    rc, out, err = cli(capsys, "check", lock, "--ray", "auto", "--device", "cpu", "--shapes", "decode",
                       "--format", "junit")
    assert rc == 0, err
    root = ET.fromstring(out)
    selection, fleet = root.findall("testsuite")
    assert [c.get("classname") for c in selection.iter("testcase")] == ["tiny-h100", "tiny-a100", "raw"]
    cases = {(c.get("classname"), c.get("name")): c for c in fleet.iter("testcase")}
    assert set(cases) == {("tiny-h100", "run on H100"), ("tiny-a100", "run on A100"), ("raw", "run on h100")}
    assert cases[("raw", "run on h100")].find("skipped") is not None
    assert all(c.find("failure") is None for c in cases.values())
    assert root.get("tests") == "6" and root.get("failures") == "0"
    # a deployment on a GPU type the cluster lacks: one line, exit 2
    (tiny_dir / "b200.yaml").write_text(
        "deployments:\n  - {name: tiny-b200, model: config.json, device: b200, overrides: {backend: TRITON_ATTN}}\n")
    assert cli(capsys, "lock", tiny_dir / "b200.yaml", "-o", tiny_dir / "b200.lock")[0] == 0
    rc, _, err = cli(capsys, "check", tiny_dir / "b200.lock", "--ray", "auto", "--device", "cpu")
    assert rc == 2 and "deployment tiny-b200: no node of its device b200 in the cluster" in err and err.count("\n") == 1


def test_a_node_with_other_versions_is_refused_in_one_line(cluster, tiny_dir, capsys, monkeypatch):
    monkeypatch.setattr(ray_run, "driver_versions", lambda: {"attn-select": "9.9.9", "vllm": None})
    rc, _, err = cli(capsys, "run", tiny_dir / "config.json", "--ray", "auto", "--device", "cpu", "--shapes", "decode")
    assert rc == 2 and err.count("\n") == 1
    assert "runs attn-select 0.1.0, vllm not installed; the driver runs attn-select 9.9.9" in err


def test_a_cluster_without_gpus_is_exit_2(cluster, tiny_dir, capsys):
    rc, _, err = cli(capsys, "run", tiny_dir / "config.json", "--ray", "auto")
    assert rc == 2 and "has no GPUs" in err and err.count("\n") == 1


def test_an_unreachable_address_is_one_line_exit_2(tiny_dir):
    # a fresh process: this one is connected to the test cluster
    p = subprocess.run([sys.executable, "-m", "attn_select.cli.app", "run", str(tiny_dir / "config.json"),
                        "--ray", "127.0.0.1:1", "--device", "cpu"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and p.stderr.count("\n") == 1
    assert "--ray 127.0.0.1:1: cannot reach a Ray cluster there" in p.stderr


@pytest.mark.parametrize("where", ["RAY_ADDRESS", "ray start's address file"])
def test_auto_with_a_stale_address_is_one_line_exit_2(tiny_dir, tmp_path, where):
    # `auto` follows RAY_ADDRESS, else the address a `ray start` left in Ray's temp folder; either
    # can outlive its cluster, and Ray then retries for minutes
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "RAY_TMPDIR")}
    if where == "RAY_ADDRESS":
        env["RAY_ADDRESS"] = "127.0.0.1:1"
        said = "--ray auto (RAY_ADDRESS 127.0.0.1:1): cannot reach a Ray cluster there"
    else:
        (tmp_path / "ray").mkdir()
        (tmp_path / "ray" / "ray_current_cluster").write_text("127.0.0.1:1\n")
        env["RAY_TMPDIR"] = str(tmp_path)
        said = f"--ray auto ({tmp_path / 'ray' / 'ray_current_cluster'} 127.0.0.1:1): cannot reach"
    p = subprocess.run([sys.executable, "-m", "attn_select.cli.app", "run", str(tiny_dir / "config.json"),
                        "--ray", "auto", "--device", "cpu"], capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert said in p.stderr


def test_ray_types_match_device_profiles():
    profiles = ["a100", "h100", "h200", "rtx-pro-6000", "rtx5090", "gb200"]
    assert profile_for("A100-80G", profiles) == "a100" and profile_for("H200", profiles) == "h200"
    assert profile_for("RTX-PRO-6000", profiles) == "rtx-pro-6000"
    assert profile_for("GeForce-RTX-5090", profiles) == "rtx5090" and profile_for("GB200", profiles) == "gb200"
    assert profile_for("MI300X", profiles) is None


def test_address_forms_are_checked_before_ray_is_asked():
    from attn_select.cli.fleet.ray_cluster import _reachable
    from attn_select.selector.errors import UserError

    for bad, said in (("garbage", "fix or unset RAY_ADDRESS"), ("127.0.0.1:70000", "fix or unset RAY_ADDRESS")):
        with pytest.raises(UserError, match=said):
            _reachable(bad, flag=f"--ray auto (RAY_ADDRESS {bad})")
    with pytest.raises(UserError, match="give auto, local, HOST:PORT"):
        _reachable("127.0.0.1:0")
    with pytest.raises(UserError, match=r"--ray \[::1\]:1: cannot reach a Ray cluster there"):
        _reachable("[::1]:1")  # brackets taken off the IPv6 host: a refused port, not an unknown name
