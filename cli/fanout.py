"""``attn-select run MODEL --gpus ...`` / ``--ray ADDRESS``: the command's
inputs checked once here (bad input is one line and exit 2 before any
worker starts), handed to ``fleet.node`` or ``fleet.ray_run``, and the
merged report rendered as text, JSON or JUnit.
"""

from __future__ import annotations

import sys
from typing import Any

from attn_select.selector.errors import UserError


def check_shapes(text: str) -> None:
    from attn_select.cli.run import KINDS

    kinds = [k.strip() for k in text.split(",") if k.strip()]
    bad = [k for k in kinds if k not in KINDS]
    if bad or not kinds:
        raise UserError(f"--shapes: unknown batch shape {', '.join(bad) or '(none)'}; choose from {', '.join(KINDS)}")


def check_inputs(run: dict[str, Any]) -> None:
    """The checks ``execute`` makes before it runs anything, made on the
    driver so a typo fails once, not once per worker."""
    from attn_select.cli.run import parse_backends
    from attn_select.selector.explain import override_problem
    from attn_select.selector.vllm_names import dtype_error

    device = run.get("device")
    if device not in (None, "cuda", "cpu"):
        raise UserError(f"--device must be cuda or cpu with --gpus or --ray, got {device!r}")
    if run.get("block_size") is not None and run["block_size"] <= 0:
        raise UserError(f"block size must be a positive integer, got {run['block_size']}")
    if run.get("dtype") is not None and dtype_error(run["dtype"]):  # vLLM's names, as a single run takes them
        raise UserError(dtype_error(run["dtype"]))
    kv = run.get("kv_cache_dtype")
    if kv is not None and override_problem("kv_cache_dtype", kv):  # "fp8xyz" failed on every worker
        raise UserError(override_problem("kv_cache_dtype", kv))
    if kv not in (None, "auto") and not kv.startswith("fp8"):
        raise UserError(f"attn-select run supports --kv-cache-dtype auto or fp8*, got {kv!r}")
    check_shapes(run["shapes"])
    parse_backends(run.get("backend"))
    from attn_select.cli.inputs import parse_capability
    from attn_select.selector.profiles import load_model

    # the model must load; the real load happens on each worker, for its GPU
    load_model(run["model"], tp=run.get("tp") or 1, dtype=run.get("dtype") or "auto",
               capability=parse_capability(run.get("capability") or "9.0"),
               trust_remote_code=bool(run.get("trust_remote_code")))


def _progress(unit: str, line: str) -> None:
    print(f"[{unit}] {line}", file=sys.stderr, flush=True)


def run_fanout(run: dict[str, Any], *, gpus: str | None, ray: str | None, every_node: bool, windows: int,
               timeout_s: float, jit_cache: str | None, fail_on_slow: bool, fmt: str) -> int:
    """Run, render to stdout, return the exit code."""
    if gpus is not None and ray is not None:
        raise UserError("give either --gpus (this node) or --ray (a cluster), not both")
    if every_node and ray is None:
        raise UserError("--every-node needs --ray ADDRESS")
    check_inputs(run)
    if gpus is not None:
        from attn_select.cli.fleet.node import parse_gpus, run_node

        report = run_node(run, gpus=parse_gpus(gpus), windows=windows, timeout_s=timeout_s, jit_cache=jit_cache,
                          fail_on_slow=fail_on_slow, progress=_progress)
    else:
        from attn_select.cli.fleet.ray_run import run_ray

        report = run_ray(run, address=ray, every_node=every_node, windows=windows, timeout_s=timeout_s,
                         fail_on_slow=fail_on_slow, progress=_progress)
    from attn_select.cli.formats.fleet import render_junit, render_text

    if fmt == "json":
        print(report.to_json())
    elif fmt == "junit":
        sys.stdout.write(render_junit(report))
    else:
        render_text(report)
    return report.exit_code


def check_fleet(lock, lock_dir, selection, *, address: str, every_node: bool, device: str | None, shapes: str,
                timeout_s: float, fmt: str) -> tuple[str, bool]:
    """``check LOCK --ray``: (the rendered report, whether it passed)."""
    import io

    if device not in (None, "cpu"):
        raise UserError(f"--device with --ray is cpu (GPU types as stand-ins) or left out, got {device!r}")
    if fmt == "github":
        raise UserError("--format github is not available with --ray; use text, json or junit")
    check_shapes(shapes)
    from attn_select.cli.fleet.ray_check import run_check_ray

    # correctness is what a gate confirms: one window, no timing
    opts = {"device": device, "shapes": shapes, "checks": 2, "timing": False, "build_span": 0.0}
    report = run_check_ray(lock, lock_dir, selection, address=address, every_node=every_node, opts=opts,
                           timeout_s=timeout_s, progress=_progress)
    from attn_select.cli.formats.fleet import render_check_junit, render_check_text

    if fmt == "json":
        import json

        return json.dumps(report.to_dict(), indent=2, sort_keys=True) + "\n", report.ok
    if fmt == "junit":
        return render_check_junit(report), report.ok
    buf = io.StringIO()
    render_check_text(report, file=buf)
    return buf.getvalue(), report.ok
