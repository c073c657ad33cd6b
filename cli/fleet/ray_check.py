"""``attn-select check LOCK --ray ADDRESS``: the lock's selection check (as
``check`` does on the driver) plus, for each locked deployment, a ``run``
confirmation on a node of its device type: the task runs the deployment's
model with its tp, dtype, KV-cache dtype, block size and backend, and
passes when the backend the lock records for every group is the one the
node selects and confirms there.

A deployment's device is matched with the cluster's GPU types through the
device profiles (``h100`` <- Ray's ``H100``; a ``capability`` deployment
takes every type whose profile has that capability). A device type the
cluster does not have is bad input (exit 2), as the deployment could not
be confirmed at all. Deployments without a model (a raw selector config)
or of SGLang only have nothing to run and are skipped cases.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from attn_select.cli.fleet.job import Job, model_files, sigkill_labels
from attn_select.cli.fleet.ray_cluster import NodeInfo, connect, gpu_types, nodes, profile_for
from attn_select.cli.fleet.ray_run import Target, check_versions, gather
from attn_select.cli.fleet.units import Unit
from attn_select.selector.errors import UserError

# Deployment overrides that ``run`` takes; any other what-if is named in the case.
RUN_OVERRIDES = ("tp", "dtype", "quantization", "kv_cache_dtype", "block_size", "backend")


@dataclass
class RunCase:
    deployment: str
    device: str  # the deployment's device (profile) or capability
    target: str  # the unit's label: "llama-8b on H100"
    gpu_type: str | None
    skipped: str = ""  # why nothing ran
    unit: Unit | None = None
    problems: list[str] = field(default_factory=list)  # why it failed, one line each
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.skipped) or (self.unit is not None and not self.problems)


@dataclass
class FleetCheckReport:
    selection: Any  # the CheckReport of the lock on the driver
    cases: list[RunCase]
    notes: list[str]
    context: dict[str, Any]

    @property
    def ok(self) -> bool:
        return self.selection.ok and all(c.ok for c in self.cases)

    def to_dict(self) -> dict[str, Any]:
        cases = []
        for c in self.cases:
            u = c.unit
            cases.append({"deployment": c.deployment, "device": c.device, "target": c.target, "gpu_type": c.gpu_type,
                          "ok": c.ok, "skipped": c.skipped or None, "problems": c.problems, "notes": c.notes,
                          "status": u.status if u else None, "verdict": u.verdict if u else None,
                          "host": u.host if u else None, "node": u.node if u else None})
        return {"schema": "attn-select.fleet-check/1", "ok": self.ok, "selection_ok": self.selection.ok,
                "selection_differences": [d.message() for d in self.selection.diffs], "cases": cases,
                "notes": self.notes, "context": self.context}


def _capability_of(profile: str):
    from attn_select.selector.profiles import load_device

    return load_device(profile).capability


def device_types(inputs, types: dict[str, list[NodeInfo]], name: str) -> list[str]:
    """The cluster's GPU types a deployment's device stands for."""
    from attn_select.selector.config import Capability
    from attn_select.selector.profiles import device_profile_names

    profiles = device_profile_names()
    of_type = {t: profile_for(t, profiles) for t in types}
    if inputs.device is not None:
        wanted = profile_for(inputs.device, profiles)
        if wanted is None:
            raise UserError(f"deployment {name}: unknown device type {inputs.device!r} (device profiles: "
                            f"{', '.join(profiles)})")
        found = [t for t, p in of_type.items() if p == wanted]
        what = f"device {inputs.device}"
    else:
        cap = Capability.parse(str(inputs.capability))
        found = [t for t, p in of_type.items() if p is not None and _capability_of(p) == cap]
        what = f"capability {inputs.capability}"
    if not found:
        have = ", ".join(f"{t} ({p or 'no profile'})" for t, p in sorted(of_type.items()))
        raise UserError(f"deployment {name}: no node of its {what} in the cluster (GPU types there: {have})")
    return sorted(found)


def _run_kwargs(inputs, lock_dir: Path, opts: dict[str, Any], gpu_profile: str | None) -> tuple[dict[str, Any], list[str]]:
    from attn_select.selector.lock.evaluate import model_ref

    ov = inputs.overrides.model_dump(exclude_unset=True)
    model, _ = model_ref(inputs.model, lock_dir)
    run = {"model": model, **{k: ov[k] for k in RUN_OVERRIDES if ov.get(k) is not None}, **opts}
    if inputs.trust_remote_code:  # the deployment's, as the lock read the model
        run["trust_remote_code"] = True
    if run.get("device") == "cpu" and gpu_profile is not None:
        # a CPU stand-in selects for the GPU it stands in for
        run["capability"] = str(_capability_of(gpu_profile))
    notes = []
    other = sorted(k for k in ov if k not in RUN_OVERRIDES)
    if other:
        notes.append("what-ifs not applied to the run (it selects as the node is): " + ", ".join(other))
    if inputs.kernels is not None:
        notes.append("the lock's kernels list is not applied to the run: the node's installed kernels are")
    return run, notes


def _problems(case: RunCase, locked: dict[str, str | None]) -> list[str]:
    u = case.unit
    if u is None:
        return ["not run"]
    if not u.confirmed:
        return [u.verdict]
    out = []
    got = {g.name: g.selected for g in u.report.groups}
    for group, backend in locked.items():
        if group not in got:
            out.append(f"group {group}: not in the run on this node")
        elif backend is not None and got[group] != backend:
            out.append(f"group {group}: the lock selects {backend}, the node selects {got[group]} (its installed "
                       "kernels or GPU differ from the lock's inputs)")
    return out


def run_check_ray(lock, lock_dir: Path, selection, *, address: str, every_node: bool,
                  opts: dict[str, Any], timeout_s: float,
                  progress: Callable[[str, str], None] = lambda u, m: None) -> FleetCheckReport:
    from attn_select.selector.profiles import device_profile_names

    ray, how, connected = connect(address)
    try:
        cpu = opts.get("device") == "cpu"
        types = gpu_types(nodes(ray), cpu, how)
        profiles = device_profile_names()
        cases: list[RunCase] = []
        targets: list[Target] = []
        jobs: dict[str, Job] = {}
        kill = sigkill_labels()
        for d in lock.deployments:
            inputs = d.inputs
            device = inputs.device or f"capability {inputs.capability}"
            if inputs.model is None:
                cases.append(RunCase(d.name, device, f"{d.name} on {device}", None,
                                     skipped="a raw selector config: no model to run"))
                continue
            if inputs.engine == "sglang":
                cases.append(RunCase(d.name, device, f"{d.name} on {device}", None,
                                     skipped="SGLang only: run executes vLLM's selection"))
                continue
            for t in device_types(inputs, types, d.name):
                run, notes = _run_kwargs(inputs, lock_dir, opts, profile_for(t, profiles))
                on = [None] if not every_node else types[t]
                for n in on:
                    label = f"{d.name} on {t}" + (f" @ {n.host}" if n is not None else "")
                    targets.append(Target(label, t, n))
                    jobs[label] = Job(label=label, run=run, windows=1, model_files=model_files(run["model"]),
                                      sigkill_after_window=1 if label in kill else None)
                    cases.append(RunCase(d.name, device, label, t, notes=notes))
        used = {n.node_id: n for t in targets for n in ([t.node] if t.node else types[t.gpu_type])}
        notes = check_versions(ray, list(used.values()))
        units = {u.label: u for u in gather(ray, targets, types, jobs, cpu=cpu, timeout_s=timeout_s,
                                            progress=progress)}
    finally:
        if connected:
            ray.shutdown()
    locked = {d.name: {g.group: g.selected for g in d.groups} for d in lock.deployments}
    for c in cases:
        if not c.skipped:
            c.unit = units.get(c.target)
            c.problems = _problems(c, locked[c.deployment])
    if cpu:
        notes.append("--device cpu: tasks ran on CPUs; the GPU types they were scheduled by stand in for GPUs")
    context = {"address": address, "reached": how, "types": {t: [n.host for n in ns] for t, ns in types.items()}}
    return FleetCheckReport(selection=selection, cases=cases, notes=notes, context=context)
