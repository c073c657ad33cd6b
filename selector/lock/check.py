"""``attn-select check``: recompute every deployment of a lockfile and
compare, into one ``CheckReport`` for every output format.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attn_select.selector.lock.compare import SGLANG_CASE, Diff, Recomputed, compare
from attn_select.selector.lock.deployments import DeploymentInputs, DeploymentsFile
from attn_select.selector.lock.evaluate import Evaluator, model_ref
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
    engine: str | None = None  # the --engine that `lock` needs to write this lock again
    warnings: tuple = ()  # selector.installed.EngineWarning, attached at the CLI edge

    @property
    def ok(self) -> bool:
        return not self.diffs

    def counts(self) -> tuple[int, int, int]:
        """(deployments, vLLM attention groups, SGLang resolutions) checked:
        the same counts `lock` reports for the same file."""
        groups = sum(1 for c in self.cases if c[1] != SGLANG_CASE)
        return len({c[0] for c in self.cases}), groups, len(self.cases) - groups

    def failed_cases(self) -> set[tuple[str, str | None]]:
        return {(d.deployment, d.group) for d in self.diffs}


def accept_command(r: CheckReport) -> str:
    """The command that rewrites the lock to accept what check found (with
    the lock's engine: `lock --engine sglang` wrote it, so must its update)."""
    if any(w.kind == "preview" for w in r.warnings):
        # an upgrade preview: the lock holds the mirror's answers, which did not change
        return "nothing to accept yet: these are what the installed vLLM would change once attn-select mirrors it"
    deployments = "DEPLOYMENTS" if r.inputs == "embedded" else r.inputs
    engine = f" --engine {r.engine}" if r.engine not in (None, "vllm") else ""
    return f"attn-select lock {deployments}{engine} -o {r.lockfile}"


def lock_engine(lock: Lockfile) -> str | None:
    """The engine every deployment of ``lock`` records, when there is one:
    what `lock --engine` was given, as far as the lock can tell (an explicit
    ``engine:`` in the file would record the same). A raw selector config
    under ``both`` records none (it is locked for vLLM only)."""
    engines = {d.inputs.engine for d in lock.deployments
               if not (d.inputs.engine is None and d.inputs.model is None)}
    return engines.pop() if len(engines) == 1 else None


def inputs_view(inputs: DeploymentInputs, base_dir: Path, engine: str = "vllm") -> dict[str, Any]:
    """The inputs with the model resolved, so a lock and a deployments file
    in different folders compare equal when they name the same file; a
    deployment naming no engine shows the ``engine`` it runs."""
    spec = None if inputs.model is None else model_ref(inputs.model, base_dir)[0]
    view = inputs.as_yaml(spec)
    if inputs.engine is None and engine != "vllm":
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
    a deployments file matched by name) and compare with the lock.

    A deployment that names no engine runs ``engine`` (check --engine);
    without it, from a deployments file, the engine its lock entry records
    (a lock written by `lock --engine sglang` is checked as SGLang's, not as
    six differences from vLLM), and a new one the engine the whole lock
    records."""
    ev = Evaluator(default_engine=engine)
    default = engine if engine is not None else lock_engine(lock)
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
            old = locked_inputs.get(d.name)
            own = engine if engine is not None else (old.engine or "vllm") if old is not None else default
            groups, sgl = ev.evaluate(d, dep_dir, dep_doc, ("deployments", i), default=own)
            now[d.name] = Recomputed(
                groups,
                None if old is None else inputs_view(old, lock_dir, ev.engine_for(old)),
                inputs_view(d, dep_dir, ev.engine_for(d, own)),
                sglang=sgl,
            )
        inputs = dep_doc.source
    diffs = compare(lock, now)
    cases: list[tuple[str, str]] = []
    for d in lock.deployments:
        cases += [(d.name, g.group) for g in d.groups] + ([(d.name, SGLANG_CASE)] if d.sglang is not None else [])
    seen = set(cases)
    for name, r in now.items():
        cases += [(name, g.group) for g in r.groups if (name, g.group) not in seen]
        if r.sglang is not None and (name, SGLANG_CASE) not in seen:
            cases.append((name, SGLANG_CASE))
    return CheckReport(
        lockfile=lock_doc.source,
        inputs=inputs,
        cases=tuple(cases),
        diffs=tuple(diffs),
        lines=tuple(lock_doc.line(d.loc) for d in diffs),
        engine=default,
    )
