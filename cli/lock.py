"""`attn-select lock`: evaluate a deployments file and write the lockfile
that `attn-select check` verifies."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Optional

import typer

from attn_select.cli.options import SglangPythonOpt, VllmPythonOpt, versioned

app = typer.Typer()


def write_text(path: str, text: str, what: str) -> None:
    """Write a file, or a one-line user error (missing folder, no permission)."""
    from attn_select.selector.errors import UserError

    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot write {what} {path}: {exc.strerror or exc}") from None


def refuse_overwriting(output: str | None, **inputs: str | None) -> None:
    """-o that names one of the command's input files (the deployments file,
    the lockfile) would replace it with the output: refused before any work,
    naming the input."""
    if output is None:
        return
    from attn_select.selector.errors import UserError, cut

    for what, path in inputs.items():
        if path is None:
            continue
        try:
            same = os.path.samefile(output, path)
        except (OSError, ValueError):  # the output is not there yet (or no path at all): nothing to replace
            same = False
        if same:
            raise UserError(f"--output {cut(output)} is the {what.replace('_', ' ')} itself; writing there would "
                            "replace it: give another file")


def check_output_folder(output: str | None, what: str) -> None:
    """-o's folder must be there before any work: it was found missing only
    when the file was written, after every deployment was evaluated."""
    if output is None:
        return
    from attn_select.selector.errors import UserError, cut

    folder = Path(output).parent
    try:
        ok = folder.is_dir()
        why = "No such file or directory" if not os.path.lexists(folder) else "Not a directory"
    except (OSError, ValueError):
        ok, why = False, "not a folder that can be opened"
    if not ok:  # the words the write would have failed with
        raise UserError(f"cannot write {what} {cut(output, 300)}: {why}")


def check_engine(engine: str | None) -> None:
    """--engine of lock and check: one of vllm, sglang, both (or unset)."""
    from attn_select.selector.errors import UserError

    if engine is not None and engine not in ("vllm", "sglang", "both"):
        raise UserError(f"--engine {engine!r}: choose vllm, sglang or both")


@app.command("lock")
@versioned
def lock_cmd(
    deployments: Annotated[str, typer.Argument(help="Deployments file (YAML); see profiles/lock/deployments.yaml.", show_default=False)],
    output: Annotated[Optional[str], typer.Option("--output", "-o", help="Write the lockfile here (default: stdout).")] = None,
    engine: Annotated[Optional[str], typer.Option("--engine", help="Engine for deployments that name none: vllm (default), sglang or both. Recorded in the lock.")] = None,
    vllm_python: VllmPythonOpt = None,
    sglang_python: SglangPythonOpt = None,
    record_engine: Annotated[bool, typer.Option("--record-engine", help="Record in each deployment which engine release produced its entry (produced_by), e.g. 'vllm 0.33.0 (attn-select mirror)'. check does not compare it.")] = False,
) -> None:
    """Record, per deployment and attention group, the backend vLLM {vllm}
    selects, its FlashAttention version and every candidate's reasons; for
    deployments on SGLang (engine: sglang / both), SGLang {sglang}'s resolved
    backends, page size and KV-cache dtype.

    The same input gives a byte-identical file. Each deployment's inputs are
    embedded, so `attn-select check LOCKFILE` needs nothing else.
    Exit 0 when written, 2 for bad input.
    """
    from attn_select.selector.host.engine_packages import lock_warnings
    from attn_select.selector.lock import dump_lock, lock_deployments, parse_deployments
    from attn_select.selector.lock.evaluate import Evaluator
    from attn_select.selector.lock.lockfile import produced_by
    from attn_select.selector.safe_yaml import read_text

    check_engine(engine)
    refuse_overwriting(output, deployments_file=deployments)
    check_output_folder(output, "lockfile")
    dep_file, doc = parse_deployments(read_text(deployments, "deployments file"), deployments)
    lock_dir = Path(output).parent if output else Path.cwd()
    lock, paths = lock_deployments(dep_file, doc, Path(deployments).parent, lock_dir, engine)
    runs = Evaluator(default_engine=engine).engine_for
    warnings = lock_warnings([(d.name, runs(d)) for d in dep_file.deployments], vllm_python, sglang_python)
    if record_engine:
        lock = lock.model_copy(update={"deployments": [
            d.model_copy(update={"produced_by": produced_by(d)}) for d in lock.deployments]})
    text = dump_lock(lock, paths, tuple(w.message for w in warnings))
    from attn_select.cli.formats.words import plural

    groups = [g for d in lock.deployments for g in d.groups]
    failed = sum(1 for g in groups if g.selected is None)
    summary = f"{plural(len(lock.deployments), 'deployment')}, {plural(len(groups), 'attention group')}"
    if failed:
        summary += f" ({failed} with no backend: vLLM would raise; recorded with its error)"
    sglang = [d.sglang for d in lock.deployments if d.sglang is not None]
    if sglang:
        summary += f", {plural(len(sglang), 'SGLang resolution')} ({sglang[0].engine})"
        raised = sum(1 for x in sglang if x.error is not None)
        if raised:
            summary += f" ({raised} raise: recorded with SGLang's error)"
    # --engine both: a raw selector config has no SGLang side (docs/ci-gate.md)
    vllm_only = [d.name for d in lock.deployments if engine == "both" and d.inputs.engine is None]
    if vllm_only:
        note = (f"{', '.join(vllm_only)}: a raw 'selector' config, locked for vLLM only "
                "(SGLang resolves from a model's config)")
        summary += f"; {note}"
        if output is None:
            typer.echo(f"note: {note}", err=True)
    for w in warnings:
        typer.echo(f"warning: {w.message}", err=True)
    if output is None:
        typer.echo(text, nl=False)
    else:
        write_text(output, text, "lockfile")
        typer.echo(f"wrote {output}: {summary}", err=True)
