"""`attn-select check`: the CI gate. Recompute every locked deployment and
compare with the lockfile."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from attn_select.cli.exit import ExitCode
from attn_select.cli.options import EngineTimeoutOpt, SglangPythonOpt, attach_warnings, seconds

app = typer.Typer()
FLEET = "Fleet (a Ray cluster)"


class CheckFormat(str, Enum):
    text = "text"
    json = "json"
    junit = "junit"
    github = "github"


@app.command("check")
def check_cmd(
    lockfile: Annotated[str, typer.Argument(help="Lockfile written by `attn-select lock`.", show_default=False)],
    deployments: Annotated[Optional[str], typer.Option("--deployments", "-d", help="Recompute from this deployments file (matched by name) instead of the inputs embedded in the lock; changed inputs are differences too.")] = None,
    fmt: Annotated[CheckFormat, typer.Option("--format", "-f", help="text, json, junit (XML) or github (workflow annotations on the lockfile lines).")] = CheckFormat.text,
    output: Annotated[Optional[str], typer.Option("--output", "-o", help="Write the report here instead of stdout.")] = None,
    engine: Annotated[Optional[str], typer.Option("--engine", help="Engine for deployments that name none (vllm, sglang or both); default: what the lock records, else vllm.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the failures (text and github formats): nothing when all match. The exit code is the same.")] = False,
    ray: Annotated[Optional[str], typer.Option("--ray", help="Also confirm each deployment with a run on a node of its device type in this Ray cluster (auto, local or an address; docs/fleet.md).", rich_help_panel=FLEET)] = None,
    every_node: Annotated[bool, typer.Option("--every-node", help="With --ray: on every node of the type, not one.", rich_help_panel=FLEET)] = False,
    device: Annotated[Optional[str], typer.Option("--device", help="With --ray: cpu runs the tasks on CPUs, the GPU types standing in (trying it out, CI).", rich_help_panel=FLEET)] = None,
    shapes: Annotated[str, typer.Option("--shapes", help="With --ray: the run's batch shapes.", rich_help_panel=FLEET)] = "decode,prefill,mixed",
    worker_timeout: Annotated[float, typer.Option("--worker-timeout", click_type=seconds(1.0), help="With --ray: seconds before a task is cancelled and reported as hung.", rich_help_panel=FLEET)] = 1200.0,
    vllm_python: Annotated[Optional[str], typer.Option("--vllm-python", metavar="PATH", help="Upgrade preview: evaluate every locked vLLM deployment with the vLLM installed in this Python (its own selection code, in a subprocess) and list what would change: backend, FlashAttention version, KV-cache layout, FlashInfer's trtllm decision.", rich_help_panel="Installed engines")] = None,
    sglang_python: SglangPythonOpt = None,
    engine_timeout: EngineTimeoutOpt = 900,
) -> None:
    """Check that every deployment still selects what the lockfile says.

    Only the fields present in a locked group are compared (reasons as
    ordered lists, errors as exact text). Exit 0 when all match, 1 when any
    differ, 2 for bad input.
    """
    from attn_select.cli.formats import render
    from attn_select.cli.lock import check_engine, check_output_folder, refuse_overwriting, write_text
    from attn_select.selector.host.engine_packages import lock_warnings
    from attn_select.selector.lock import parse_deployments, parse_lockfile, run_check
    from attn_select.selector.safe_yaml import read_text

    check_engine(engine)
    refuse_overwriting(output, lockfile=lockfile, deployments_file=deployments)
    check_output_folder(output, "report")
    if quiet and fmt in (CheckFormat.json, CheckFormat.junit):
        from attn_select.selector.errors import UserError

        raise UserError(f"--quiet is for --format text or github; {fmt.value} is a whole report for a tool to read")
    lock, doc = parse_lockfile(read_text(lockfile, "lockfile"), lockfile)
    deps = None
    if deployments is not None:
        dep_file, dep_doc = parse_deployments(read_text(deployments, "deployments file"), deployments)
        deps = (dep_file, dep_doc, Path(deployments).parent)
    if vllm_python is not None:
        from attn_select.selector.errors import UserError

        if deps is not None:
            raise UserError("--vllm-python previews the locked deployments as they are; drop --deployments")
        if ray is not None:
            raise UserError("--vllm-python previews selection only; a fleet check (--ray) runs the lock as it is: give one of them")
        report = upgrade_preview(lock, doc, Path(lockfile).parent, vllm_python, engine, engine_timeout)
    else:
        report = run_check(lock, doc, Path(lockfile).parent, deps, engine)
        from attn_select.selector.lock.evaluate import Evaluator

        runs = Evaluator(default_engine=engine).engine_for
        named = [(d.name, runs(d.inputs)) for d in lock.deployments]
        report = attach_warnings(report, lock_warnings(named, None, sglang_python,
                                                       own_code="check --vllm-python PATH"))
    if ray is not None:
        from attn_select.cli.fanout import check_fleet

        text, ok = check_fleet(lock, Path(lockfile).parent, report, address=ray, every_node=every_node,
                               device=device, shapes=shapes, timeout_s=worker_timeout, fmt=fmt.value)
        write_text(output, text, "report") if output is not None else typer.echo(text, nl=False)
        raise typer.Exit(ExitCode.OK if ok else ExitCode.FINDINGS)
    if every_node or device is not None:
        from attn_select.selector.errors import UserError

        raise UserError("--every-node and --device are for a fleet check: add --ray ADDRESS")
    # --quiet: a passing check prints nothing; a failing one its whole report
    text = "" if quiet and report.ok else render(report, fmt.value)
    if output is None:
        typer.echo(text, nl=False)
    else:
        write_text(output, text, "report")
    raise typer.Exit(ExitCode.OK if report.ok else ExitCode.FINDINGS)


def upgrade_preview(lock, doc, lock_dir: Path, vllm_python: str, engine: str | None, timeout: float):
    """check --vllm-python: the preview, with the installed vLLM run by
    cli/installed_engine.py (the command's edge; the preview itself is
    selector/lock/preview.py)."""
    from attn_select.cli import installed_engine as ie
    from attn_select.selector.lock.preview import preview_check

    python, version = ie.engine_python(vllm_python)
    with ie.temp_models() as tmp:
        return preview_check(
            lock, doc, lock_dir, engine, python=python, version=version,
            run_selection=lambda cases, kernels: ie.run_selection(python, cases, live=False, kernels=kernels,
                                                                  artifactory=None, timeout=timeout),
            model_folder=lambda spec, load: ie.model_folder(spec, tmp, load))
