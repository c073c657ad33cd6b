"""The run layer executes the selector's run plan and decides nothing again.

Every module under backends/run/ may import the run layer itself and
``selector.run_plan`` (the plan's types), and nothing else of attn-select:
no selection module, no backend declaration, no registry. The runner's
entry points take the plan's types, never ``Any``.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from tests.module_imports import imports

RUN_DIR = Path(__file__).resolve().parents[3] / "backends" / "run"
ALLOWED = ("attn_select.backends.run", "attn_select.selector.run_plan")


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every attn_select module ``path`` imports, at any depth of the file."""
    return [(line, name) for line, name in imports(path) if name.startswith("attn_select")]


RUN_MODULES = sorted(RUN_DIR.glob("*.py"))


def test_the_run_layer_has_modules():
    assert {"runner.py", "adapter.py", "flashinfer.py", "flash_attn.py"} <= {p.name for p in RUN_MODULES}


@pytest.mark.parametrize("path", RUN_MODULES, ids=lambda p: p.name)
def test_run_modules_import_only_the_run_layer_and_the_plan(path):
    bad = [f"{path.name}:{line} imports {name}" for line, name in _imports(path)
           if not any(name == a or name.startswith(a + ".") for a in ALLOWED)]
    assert not bad, "\n".join(bad)


# The probe scripts (backends/run/probes/) run in ANOTHER Python, the one that
# has vLLM: they may import vLLM and torch (which is why they live under
# backends/run/) but nothing of attn-select at all, not even the run layer,
# which that Python does not have.
PROBE_SCRIPTS = sorted((RUN_DIR / "probes").glob("*.py"))


def test_the_probe_scripts_are_there():
    assert {"vllm_selection.py", "environment.py", "libcuda_standin.py"} <= {p.name for p in PROBE_SCRIPTS}


@pytest.mark.parametrize("path", PROBE_SCRIPTS, ids=lambda p: p.name)
def test_probe_scripts_import_nothing_of_attn_select(path):
    found = [f"{path.name}:{line} imports {name}" for line, name in _imports(path)]
    assert not found, "\n".join(found)


def test_the_check_catches_a_selection_import(tmp_path):
    """Guard on the check itself: a function-level import of a selection module is found."""
    f = tmp_path / "x.py"
    f.write_text("def f():\n    from attn_select.selector.validate import check\n"
                 "from attn_select.backends import registry\n")
    assert sorted(name for _, name in _imports(f)) == ["attn_select.backends.registry",
                                                       "attn_select.selector.validate.check"]


def test_runner_entry_points_take_the_plan_not_any():
    from attn_select.backends.run import runner

    for fn in (runner.run_model, runner.run_group, runner.load_adapter, runner.run_backend):
        annotations = [str(p.annotation) for p in inspect.signature(fn).parameters.values()]
        assert not any("Any" in a for a in annotations), (fn.__name__, annotations)
    assert "RunPlan" in str(inspect.signature(runner.run_model).parameters["plan"].annotation)
    assert "GroupPlan" in str(inspect.signature(runner.run_group).parameters["g"].annotation)


def test_runnable_backends_follow_the_specs():
    """RUNNABLE is derived: a backend runs exactly when its spec names an adapter."""
    from attn_select.backends import registry
    from attn_select.selector.run_plan import runnable_backends

    both = set(runnable_backends()) | set(runnable_backends(use_mla=True))
    assert both == {n for n, s in registry.BACKENDS.items() if s.run_adapter}
    assert runnable_backends() == ("FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLEX_ATTENTION")
    assert all(registry.BACKENDS[n].is_mla for n in runnable_backends(use_mla=True))
    assert "TRITON_MLA" in runnable_backends(use_mla=True)
