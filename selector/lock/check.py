"""``attn-select check``: recompute every deployment of a lockfile and
compare, into one ``CheckReport`` for every output format.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attn_select.selector.lock.compare import Diff, Recomputed, compare
from attn_select.selector.lock.deployments import DeploymentInputs, DeploymentsFile
from attn_select.selector.lock.evaluate import Evaluator, _model_ref
from attn_select.selector.lock.lockfile import Lockfile
from attn_select.selector.lock.yamlmarks import Located


@dataclass(frozen=True)
class CheckReport:
    """What ``attn-select check`` found, for every output format."""

    lockfile: str  # as given on the command line (annotations point at it)
    inputs: str  # "embedded" or the deployments file
    cases: tuple[tuple[str, str], ...]  # (deployment, group) checked, lock order then new
    diffs: tuple[Diff, ...]
    lines: tuple[int, ...]  # lockfile line of each diff
    warnings: tuple = ()  # selector.installed.EngineWarning, attached at the CLI edge

    @property
    def ok(self) -> bool:
        return not self.diffs

    def failed_cases(self) -> set[tuple[str, str | None]]:
        return {(d.deployment, d.group) for d in self.diffs}


def accept_command(r: CheckReport) -> str:
    """The command that rewrites the lock to accept what check found."""
    if any(w.kind == "preview" for w in r.warnings):
        # an upgrade preview: the lock holds the mirror's answers, which did not change
        return "nothing to accept yet: these are what the installed vLLM would change once attn-select mirrors it"
    deployments = "DEPLOYMENTS" if r.inputs == "embedded" else r.inputs
    return f"attn-select lock {deployments} -o {r.lockfile}"


def inputs_view(inputs: DeploymentInputs, base_dir: Path, engine: str | None = None) -> dict[str, Any]:
    """The inputs with the model resolved, so a lock and a deployments file
    in different folders compare equal when they name the same file; a
    deployment naming no engine runs ``engine`` (check --engine)."""
    spec = None if inputs.model is None else _model_ref(inputs.model, base_dir)[0]
    view = inputs.as_yaml(spec)
    if inputs.engine is None and engine not in (None, "vllm"):
        view["engine"] = engine
    return view


def run_check(
    lock: Lockfile,
    lock_doc: Located,
    lock_dir: Path,
    deployments: tuple[DeploymentsFile, Located, Path] | None = None,
    engine: str | None = None,
) -> CheckReport:
    """Recompute every deployment (from the lock's embedded inputs, or from
    a deployments file matched by name) and compare with the lock."""
    ev = Evaluator(default_engine=engine)
    now: dict[str, Recomputed] = {}
    if deployments is None:
        for i, d in enumerate(lock.deployments):
            groups, sgl = ev.evaluate(d.inputs, lock_dir, lock_doc, ("deployments", i, "inputs"))
            now[d.name] = Recomputed(groups, sglang=sgl)
        inputs = "embedded"
    else:
        dep_file, dep_doc, dep_dir = deployments
        locked_inputs = {d.name: d.inputs for d in lock.deployments}
        for i, d in enumerate(dep_file.deployments):
            groups, sgl = ev.evaluate(d, dep_dir, dep_doc, ("deployments", i))
            old = locked_inputs.get(d.name)
            now[d.name] = Recomputed(
                groups,
                None if old is None else inputs_view(old, lock_dir, engine),
                inputs_view(d, dep_dir, engine),
                sglang=sgl,
            )
        inputs = dep_doc.source
    diffs = compare(lock, now)
    cases: list[tuple[str, str]] = []
    for d in lock.deployments:
        cases += [(d.name, g.group) for g in d.groups] + ([(d.name, "sglang")] if d.sglang is not None else [])
    seen = set(cases)
    for name, r in now.items():
        cases += [(name, g.group) for g in r.groups if (name, g.group) not in seen]
        if r.sglang is not None and (name, "sglang") not in seen:
            cases.append((name, "sglang"))
    return CheckReport(
        lockfile=lock_doc.source,
        inputs=inputs,
        cases=tuple(cases),
        diffs=tuple(diffs),
        lines=tuple(lock_doc.line(d.loc) for d in diffs),
    )
