"""The CLI layer holds typer commands, option parsing and rendering: what
they show is decided below it, and nothing below imports it back.

Checked on every import in a file (function-level ones included), as
tests/backends/run/test_run_layering.py checks the run layer.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.module_imports import imports

ROOT = Path(__file__).resolve().parents[2]
CLI = sorted((ROOT / "cli").rglob("*.py"))
BELOW = sorted(p for top in ("selector", "backends", "profiles") for p in (ROOT / top).rglob("*.py"))

# cli modules still running processes of their own, each for a reason:
# installed_engine.py runs the installed vLLM (its move to selector/host/ is
# pending: another branch changes it); fleet/ starts and watches the fleet's
# workers and reads their GPUs.
RUNS_PROCESSES = {"installed_engine.py", "fleet/gpuinfo.py", "fleet/pool.py"}
# private names still imported across modules by cli/installed_engine.py
PRIVATE_ALLOWED = {("installed_engine.py", "attn_select.selector.profiles._profile_for_repo")}


def _rel(path: Path) -> str:
    return path.relative_to(ROOT / "cli").as_posix()


def test_the_layers_have_modules():
    assert {"app.py", "doctor.py", "check.py", "lock.py"} <= {p.name for p in CLI}
    assert RUNS_PROCESSES <= {_rel(p) for p in CLI}  # an allowance outlives no module
    assert (ROOT / "selector" / "doctor.py") in BELOW and (ROOT / "selector" / "host" / "doctor_probe.py") in BELOW


@pytest.mark.parametrize("path", BELOW, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_nothing_below_the_cli_imports_it(path):
    bad = [f"{path.relative_to(ROOT)}:{line} imports {name}" for line, name in imports(path)
           if name == "attn_select.cli" or name.startswith("attn_select.cli.")]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("path", [p for p in CLI if _rel(p) not in RUNS_PROCESSES], ids=_rel)
def test_cli_modules_run_no_processes(path):
    """Running nvidia-smi or another Python is finding facts: selector/host/ does it."""
    bad = [f"{_rel(path)}:{line} imports {name}" for line, name in imports(path)
           if name.split(".")[0] == "subprocess"]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("path", CLI, ids=_rel)
def test_cli_modules_import_no_private_names(path):
    bad = [f"{_rel(path)}:{line} imports {name}" for line, name in imports(path)
           if name.startswith("attn_select.") and name.rsplit(".", 1)[1].startswith("_")
           and not name.rsplit(".", 1)[1].startswith("__") and (_rel(path), name) not in PRIVATE_ALLOWED]
    assert not bad, "\n".join(bad)


def test_the_checks_find_what_they_look_for(tmp_path):
    """Guard on the checks themselves: function-level imports are found."""
    f = tmp_path / "x.py"
    f.write_text("def f():\n    import subprocess\n    from attn_select.cli.run import _parse\n")
    names = [name for _, name in imports(f)]
    assert names == ["subprocess", "attn_select.cli.run._parse"]



def _below(nodes) -> set[str]:
    """The names ``nodes`` import from below the CLI."""
    import ast

    return {a.asname or a.name for n in nodes if isinstance(n, ast.ImportFrom) and n.module
            and n.module.split(".")[:2] in (["attn_select", top] for top in ("selector", "backends", "profiles"))
            for a in n.names}


def _forwarders(path: Path) -> list[str]:
    """Module functions whose body (past a docstring and imports) is only
    ``return f(...)`` of their own parameters, in order, ``f`` imported from
    below the CLI: a second name for a function there."""
    import ast

    tree = ast.parse(path.read_text(), str(path))
    out = []
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        body = [s for s in node.body if not isinstance(s, (ast.Import, ast.ImportFrom))
                and not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        params = [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
        call = body[0].value if len(body) == 1 and isinstance(body[0], ast.Return) else None
        if (isinstance(call, ast.Call) and not call.keywords and getattr(call.func, "id", None)
                in _below(tree.body + node.body) and [getattr(a, "id", None) for a in call.args] == params):
            out.append(f"{path.name}:{node.lineno} {node.name}")
    return out


@pytest.mark.parametrize("path", CLI, ids=_rel)
def test_cli_modules_hold_no_forwarders(path):
    """A cli function that only calls one below with the same arguments
    (lock.py's read_text did, for safe_yaml's): callers call the real one."""
    assert not _forwarders(path)


def test_the_forwarder_check_finds_one(tmp_path):
    f = tmp_path / "x.py"
    f.write_text('from attn_select.backends.x import y\n\n'
                 'def read_text(path, what):\n    """Doc."""\n    from attn_select.selector.m import read_text as r\n\n'
                 '    return r(path, what)\n\ndef g(a):\n    return y(a, 1)\n\ndef h(a):\n    return y(a)\n\n'
                 'def seam():\n    return versions()\n')
    assert _forwarders(f) == ["x.py:3 read_text", "x.py:12 h"]
