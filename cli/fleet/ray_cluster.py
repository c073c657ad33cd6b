"""A Ray cluster as the fleet sees it: connecting (``auto``, ``local`` or
an address, with an unreachable one refused in bounded time) and the GPU
types of its nodes, from Ray's ``accelerator_type:X`` resources and the
``ray.io/accelerator-type`` node label. Ray is imported only here and in
``ray_run`` / ``ray_check``, and only when a fleet command runs.

A Ray accelerator type is the GPU's model name ("H200", "A100",
"RTX-PRO-6000", "GeForce-RTX-5090"); ``profile_for`` matches it with
attn-select's device profiles for ``check --ray``.
"""

from __future__ import annotations

import os
import re
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attn_select.selector.errors import UserError

RESOURCE_PREFIX = "accelerator_type:"
TYPE_LABEL = "ray.io/accelerator-type"
CPU_TYPE = "cpu"  # --device cpu: a node that names no accelerator type
CONNECT_TIMEOUT_S = 5.0


def import_ray():
    try:
        import ray
    except ImportError:
        raise UserError("--ray needs Ray: pip install 'attn-select[fleet]'") from None
    return ray


@dataclass
class NodeInfo:
    node_id: str
    host: str
    alive: bool
    gpus: float
    types: list[str] = field(default_factory=list)  # accelerator types, resource ones first
    by_resource: set[str] = field(default_factory=set)  # types schedulable through their resource


def _reachable(address: str, flag: str | None = None) -> None:
    """A TCP connection to the GCS (or Ray Client) port, so a wrong address
    is one line within seconds rather than Ray's minutes of retries."""
    flag = flag or f"--ray {address}"
    hostport = address.split("://", 1)[-1]
    host, _, port = hostport.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")  # [::1]:6379
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        fix = "fix or unset RAY_ADDRESS" if "RAY_ADDRESS" in flag else "give auto, local, HOST:PORT or ray://HOST:PORT"
        raise UserError(f"{flag}: not an address; {fix}")
    try:
        with socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as e:
        reason = e.strerror or type(e).__name__
        raise UserError(f"{flag}: cannot reach a Ray cluster there ({reason}); start its head with "
                        "`ray start --head` or check the address") from None


def _auto_address() -> tuple[str, str] | None:
    """Where ``ray.init(address="auto")`` will look, and what named it: RAY_ADDRESS, else the
    address a ``ray start`` on this machine left in Ray's temp folder. Both can outlive their
    cluster (a stale RAY_ADDRESS, a head that died), and Ray then retries for minutes."""
    env = os.environ.get("RAY_ADDRESS", "").strip()
    if env and env not in ("auto", "local"):
        return env, "RAY_ADDRESS"
    if env:
        return None
    # Ray's own default temp folder: RAY_TMPDIR, else TMPDIR on Linux, else /tmp there
    base = os.environ.get("RAY_TMPDIR") or (os.environ.get("TMPDIR") if sys.platform.startswith("linux") else None)
    current = Path(base or "/tmp") / "ray" / "ray_current_cluster"
    try:
        text = current.read_text().strip()
    except OSError:
        return None
    return (text, str(current)) if text else None


def connect(address: str) -> tuple[Any, str, bool]:
    """(the ray module, how the cluster was reached, whether this call
    connected, so the caller disconnects again)."""
    ray = import_ray()
    if ray.is_initialized():
        return ray, "the Ray cluster this process is connected to", False
    kwargs: dict[str, Any] = {"log_to_driver": True, "include_dashboard": False}
    if address == "local":
        target, how = None, "a local Ray instance started for this run"
    elif address == "auto":
        target, how = "auto", "the Ray cluster of this machine (auto)"
        found = _auto_address()
        if found:
            _reachable(found[0], flag=f"--ray auto ({found[1]} {found[0]})")
    else:
        _reachable(address)
        target, how = address, f"the Ray cluster at {address}"
    try:
        if target is None:
            ray.init(**kwargs)
        else:
            ray.init(address=target, **kwargs)
    except (ConnectionError, RuntimeError, ValueError) as e:
        if address == "auto" and isinstance(e, ConnectionError):
            raise UserError("--ray auto: no Ray cluster runs on this machine (RAY_ADDRESS unset, no `ray start` "
                            "here); start one with `ray start --head`, give its address, or use --ray local") from None
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise UserError(f"--ray {address}: {first}") from None
    return ray, how, True


def nodes(ray) -> list[NodeInfo]:
    out = []
    for n in ray.nodes():
        res = n.get("Resources") or {}
        labels = n.get("Labels") or {}
        by_resource = {k[len(RESOURCE_PREFIX):] for k in res if k.startswith(RESOURCE_PREFIX)}
        types = sorted(by_resource)
        if labels.get(TYPE_LABEL) and labels[TYPE_LABEL] not in by_resource:
            types.append(labels[TYPE_LABEL])
        out.append(NodeInfo(node_id=n["NodeID"], host=n.get("NodeManagerAddress") or n.get("NodeName") or "?",
                            alive=bool(n.get("Alive", n.get("alive"))), gpus=float(res.get("GPU", 0.0)),
                            types=types, by_resource=by_resource))
    return out


def gpu_types(all_nodes: list[NodeInfo], cpu: bool, where: str) -> dict[str, list[NodeInfo]]:
    """GPU type -> the alive nodes that have it. With ``cpu`` (tasks run
    with --device cpu) a node needs no GPU: its accelerator types are
    stand-ins, and a node naming none counts as type ``cpu``."""
    types: dict[str, list[NodeInfo]] = {}
    alive = [n for n in all_nodes if n.alive]
    for n in alive:
        if cpu:
            for t in n.types or [CPU_TYPE]:
                types.setdefault(t, []).append(n)
        elif n.gpus > 0:
            for t in n.types or ["GPU"]:
                types.setdefault(t, []).append(n)
    if not types:
        if cpu:
            raise UserError(f"{where} has no alive node")
        raise UserError(f"{where} has no GPUs ({len(alive)} alive node{'s' if len(alive) != 1 else ''}, none with "
                        "a GPU resource); start GPU nodes, or use --device cpu to try it on CPUs")
    return types


def _norm(name: str) -> str:
    n = name.lower().removeprefix("nvidia-").removeprefix("geforce-")
    n = re.sub(r"-\d+g$", "", n)  # A100-80G: the memory size is not another GPU model
    return n.replace("-", "").replace(" ", "")


def profile_for(ray_type: str, profiles: list[str]) -> str | None:
    """The device profile of a Ray accelerator type, if attn-select has one."""
    want = _norm(ray_type)
    for p in profiles:
        if _norm(p) == want:
            return p
    return None
