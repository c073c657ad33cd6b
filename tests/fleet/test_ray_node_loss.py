"""A node that leaves a Ray cluster during `run --ray --every-node`: a
two-node local cluster (ray.cluster_utils.Cluster, one CPU each, a
stand-in GPU type each); the A100 node is removed while its task starts or
runs. Its row says vanished and the H100 node's task still finishes.
Skipped without Ray."""

from __future__ import annotations

import threading
import time

import pytest

ray = pytest.importorskip("ray")

from attn_select.cli.fleet import ray_run  # noqa: E402
from attn_select.cli.fleet.units import RAN, VANISHED  # noqa: E402
from tests.conftest import TINY  # noqa: E402
from tests.fleet.test_node import interpreter  # noqa: E402


@interpreter
def test_a_node_that_leaves_mid_run_is_its_own_row(tmp_path, monkeypatch):
    import json

    from ray.cluster_utils import Cluster

    monkeypatch.setenv("TRITON_INTERPRET", "1")
    (tmp_path / "config.json").write_text(json.dumps(TINY))
    if ray.is_initialized():
        ray.shutdown()
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "resources": {"accelerator_type:H100": 1}, "include_dashboard": False})
    try:
        leaving = cluster.add_node(num_cpus=1, resources={"accelerator_type:A100": 1})
        ray.init(address=cluster.address, log_to_driver=False)
        cluster.wait_for_nodes()
        removers = []

        def progress(label, line):
            if label.startswith("A100") and line.startswith("submitted"):
                t = threading.Thread(target=lambda: (time.sleep(2), cluster.remove_node(leaving)))
                t.start()
                removers.append(t)

        run = dict(model=str(tmp_path / "config.json"), device="cpu", backend="TRITON_ATTN", shapes="decode",
                   checks=1, build_span=0.0)
        rep = ray_run.run_ray(run, address="auto", every_node=True, windows=2, timeout_s=600, progress=progress)
        for t in removers:
            t.join()
        a100, h100 = rep.units
        assert a100.label.startswith("A100 @ ") and a100.status == VANISHED
        assert "left the cluster" in a100.detail
        assert h100.status == RAN and h100.confirmed
        assert rep.exit_code == 1 and rep.findings[0].startswith(a100.label + ": vanished")
    finally:
        ray.shutdown()
        cluster.shutdown()
