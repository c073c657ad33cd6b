"""``attn-select run MODEL --ray ADDRESS``: one Ray task per GPU type (or
per node with ``--every-node``), each running ``job.run_job``, the same
code as the local ``run``, on a node of that type; one merged report with
a column per GPU type (per node).

Before any run task, a probe task on each node reads its attn-select and
vLLM versions: a node that differs from the driver is refused in one line
(the nodes' packages are Ray's business: a runtime_env or an image).

Each task asks for one GPU (``--device cpu``: none), one CPU, and its GPU
type's ``accelerator_type:X`` resource (a node label only: pinned to a node
of that type), with no retries, so a failure is reported, not hidden. A
task past its time limit is cancelled; a task whose node left the cluster
is reported as vanished as soon as Ray drops the node; a task whose worker
died is crashed; in every case the others still finish.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from attn_select.cli.fleet.job import Job, model_files, run_job, sigkill_labels, versions
from attn_select.cli.fleet.merge import FleetReport, merge
from attn_select.cli.fleet.ray_cluster import CPU_TYPE, NodeInfo, connect, gpu_types, nodes
from attn_select.cli.fleet.units import CRASHED, ERROR, OOM, TIMEOUT, UNSCHEDULED, VANISHED, Unit, unit_from_payload
from attn_select.selector.errors import UserError

PROBE_TIMEOUT_S = 120.0
COMPARED = ("attn-select", "vllm")  # versions that must equal the driver's


@dataclass
class Target:
    label: str
    gpu_type: str
    node: NodeInfo | None  # --every-node: this node; else any node of the type


def _task_body(job_json: str) -> dict[str, Any]:
    """What runs on the node (in a Ray worker process)."""
    import sys

    import ray

    job = Job.from_json(job_json)

    def progress(msg: str) -> None:
        print(f"[{job.label}] {msg}", file=sys.stderr, flush=True)

    payload = run_job(job, progress)
    payload["node"] = ray.get_runtime_context().get_node_id()
    return payload


def _probe_body() -> dict[str, Any]:
    import socket

    import ray

    return {"versions": versions(), "node": ray.get_runtime_context().get_node_id(), "host": socket.gethostname()}


def driver_versions() -> dict[str, str | None]:
    return versions()


def _pin(ray, node: NodeInfo) -> dict[str, Any]:
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return {"scheduling_strategy": NodeAffinitySchedulingStrategy(node_id=node.node_id, soft=False)}


def check_versions(ray, targets_nodes: list[NodeInfo], timeout_s: float = PROBE_TIMEOUT_S) -> list[str]:
    """Refuse (UserError) when a node's attn-select or vLLM differs from
    the driver's; returns notes for nodes that did not answer."""
    probe = ray.remote(_probe_body)
    mine = driver_versions()
    refs = {probe.options(num_cpus=0, max_retries=0, **_pin(ray, n)).remote(): n for n in targets_nodes}
    ready, not_ready = ray.wait(list(refs), num_returns=len(refs), timeout=timeout_s)
    notes = []
    for ref in not_ready:
        ray.cancel(ref, force=True)
        notes.append(f"node {refs[ref].host} did not answer the version probe within {timeout_s:.0f} s")
    for ref in ready:
        n = refs[ref]
        try:
            theirs = ray.get(ref)["versions"]
        except Exception as e:
            notes.append(f"node {n.host}: version probe failed: {type(e).__name__}")
            continue
        diff = [k for k in COMPARED if theirs.get(k) != mine.get(k)]
        if diff:
            def show(v):
                return ", ".join(f"{k} {v.get(k) or 'not installed'}" for k in COMPARED)

            raise UserError(f"node {n.host} ({', '.join(n.types) or 'no GPU type'}) runs {show(theirs)}; the driver "
                            f"runs {show(mine)}: give every node the driver's versions (runtime_env or image)")
    return notes


def plan(types: dict[str, list[NodeInfo]], every_node: bool) -> list[Target]:
    if not every_node:
        return [Target(t, t, None) for t in sorted(types)]
    return [Target(f"{t} @ {n.host}", t, n) for t in sorted(types) for n in types[t]]


def _options(ray, t: Target, types: dict[str, list[NodeInfo]], cpu: bool) -> dict[str, Any]:
    opts: dict[str, Any] = {"num_cpus": 1, "num_gpus": 0 if cpu else 1, "max_retries": 0, "retry_exceptions": False}
    if t.node is not None:
        opts.update(_pin(ray, t.node))
    elif t.gpu_type != CPU_TYPE and all(t.gpu_type in n.by_resource for n in types[t.gpu_type]):
        opts["resources"] = {f"accelerator_type:{t.gpu_type}": 0.001}
    elif t.gpu_type != CPU_TYPE:  # a type known from node labels only: pin to its first node
        opts.update(_pin(ray, types[t.gpu_type][0]))
    return opts


def _classify(ray, e: BaseException, gone: bool) -> tuple[str, str]:
    exc = ray.exceptions
    first = (str(e).strip().splitlines() or [""])[0]
    if gone or isinstance(e, exc.NodeDiedError):
        return VANISHED, "its node left the cluster during the run"
    if isinstance(e, exc.OutOfMemoryError):
        return OOM, "Ray's memory monitor killed the task (node out of host memory)"
    if isinstance(e, exc.WorkerCrashedError):
        return CRASHED, "the worker process died mid-run (killed, or a crash in native code)"
    if isinstance(e, exc.TaskCancelledError):
        return TIMEOUT, "cancelled"
    if isinstance(e, exc.TaskUnschedulableError):
        return UNSCHEDULED, first
    if isinstance(e, exc.RayTaskError):  # run_job never raises: this is the node's set-up (an import, a package)
        cause = e.cause if getattr(e, "cause", None) is not None else e
        lines = str(cause).strip().splitlines()
        return ERROR, f"{type(cause).__name__}: {lines[-1] if lines else ''}"
    return ERROR, f"{type(e).__name__}: {first}"


def gather(ray, targets: list[Target], types: dict[str, list[NodeInfo]], jobs: dict[str, Job], *, cpu: bool,
           timeout_s: float, progress: Callable[[str, str], None] = lambda u, m: None,
           body: Callable[[str], dict[str, Any]] = _task_body, poll_s: float = 1.0) -> list[Unit]:
    """Submit one task per target and wait for all, each to its own end."""
    task = ray.remote(body)
    started = time.monotonic()
    refs = {}
    for t in targets:
        refs[task.options(**_options(ray, t, types, cpu)).remote(jobs[t.label].to_json())] = t
        progress(t.label, "submitted" + (f" to node {t.node.host}" if t.node else f" to a {t.gpu_type} node"))
    units: dict[str, Unit] = {}
    pending = list(refs)
    while pending:
        ready, pending = ray.wait(pending, num_returns=len(pending), timeout=poll_s)
        alive = {n.node_id for n in nodes(ray) if n.alive}
        for ref in ready:
            t = refs[ref]
            try:
                payload = ray.get(ref)
                units[t.label] = unit_from_payload(t.label, t.gpu_type, payload, node=payload.get("node"))
            except Exception as e:
                status, detail = _classify(ray, e, _gone(t, types, alive))
                units[t.label] = Unit(t.label, t.gpu_type, status, detail,
                                      node=t.node.node_id if t.node else None)
        for ref in list(pending):
            t = refs[ref]
            if _gone(t, types, alive):
                ray.cancel(ref, force=True)
                units[t.label] = Unit(t.label, t.gpu_type, VANISHED,
                                      "its node left the cluster during the run", node=t.node.node_id if t.node else None)
                pending.remove(ref)
            elif time.monotonic() - started > timeout_s:
                ray.cancel(ref, force=True)
                units[t.label] = Unit(t.label, t.gpu_type, TIMEOUT,
                                      f"no report within {timeout_s:g} s (queued or running): cancelled")
                pending.remove(ref)
    return [units[t.label] for t in targets]


def _gone(t: Target, types: dict[str, list[NodeInfo]], alive: set[str]) -> bool:
    """The target's node (or every node of its type) is no longer alive."""
    if t.node is not None:
        return t.node.node_id not in alive
    return not any(n.node_id in alive for n in types.get(t.gpu_type, []))


def _stand_in(run: dict[str, Any], gpu_type: str) -> dict[str, Any]:
    """With --device cpu and no --capability, a task selects for the GPU its
    type stands in for (the device profile's capability), if there is one."""
    if run.get("device") != "cpu" or run.get("capability"):
        return run
    from attn_select.cli.fleet.ray_cluster import profile_for
    from attn_select.selector.profiles import device_profile_names, load_device

    profile = profile_for(gpu_type, device_profile_names())
    return run if profile is None else {**run, "capability": str(load_device(profile).capability)}


def make_jobs(run: dict[str, Any], targets: list[Target], windows: int) -> dict[str, Job]:
    files = model_files(run["model"])
    kill = sigkill_labels()
    return {t.label: Job(label=t.label, run=_stand_in(run, t.gpu_type), windows=windows, model_files=files,
                         sigkill_after_window=1 if t.label in kill or t.gpu_type in kill else None) for t in targets}


def run_ray(run: dict[str, Any], *, address: str, every_node: bool, windows: int, timeout_s: float,
            fail_on_slow: bool = False, progress: Callable[[str, str], None] = lambda u, m: None) -> FleetReport:
    ray, how, connected = connect(address)
    try:
        cpu = run.get("device") == "cpu"
        types = gpu_types(nodes(ray), cpu, how)
        targets = plan(types, every_node)
        used = {n.node_id: n for t in targets for n in ([t.node] if t.node else types[t.gpu_type])}
        notes = check_versions(ray, list(used.values()))
        units = gather(ray, targets, types, make_jobs(run, targets, windows), cpu=cpu, timeout_s=timeout_s,
                       progress=progress)
    finally:
        if connected:
            ray.shutdown()
    if cpu:
        notes.append("--device cpu: tasks ran on CPUs; the GPU types they were scheduled by stand in for GPUs")
    context = {"address": address, "reached": how, "types": {t: [n.host for n in ns] for t, ns in types.items()}}
    return merge(units, mode="ray", model=run["model"], tp=int(run.get("tp") or 1),
                 windows=windows if run.get("timing", True) else 1, fail_on_slow=fail_on_slow,
                 noun="task", notes=notes, context=context)
