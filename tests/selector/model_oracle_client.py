"""The test side of model_oracle.py: vLLM 0.33.0's own model build for a
list of cases, run in the vLLM python (ATTN_SELECT_VLLM_PYTHON), and the
comparison the hostile-config tests share."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from attn_select.selector.errors import UserError

HERE = Path(__file__).resolve().parent
VLLM_PYTHON = os.environ.get("ATTN_SELECT_VLLM_PYTHON", "/tmp/vllm-venv/bin/python")


def vllm_python() -> str:
    """The vLLM python's path; the test skips without it."""
    if not Path(VLLM_PYTHON).exists():
        pytest.skip(f"no vLLM python at {VLLM_PYTHON} (set ATTN_SELECT_VLLM_PYTHON)")
    return VLLM_PYTHON


def run_model_oracle(cases: list[dict], timeout: float) -> list[dict]:
    """model_oracle.py's answer for each case; the test skips without the vLLM python."""
    proc = subprocess.run([vllm_python(), str(HERE / "model_oracle.py")], input=json.dumps(cases),
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def facts_agreeing_with_vllm(res: dict, facts: Callable[[], object], refusal: str | None, name: str = ""):
    """With ``refusal``: vLLM's error holds it and ``facts()`` refuses too
    (None). Otherwise vLLM built the model and ``facts()`` agrees on its
    dtype, head size, MLA and KV heads; returned for the caller's own checks.
    ``name``: the case, for a failure's message where one test checks many."""
    if refusal is not None:
        assert res["error"] and refusal in res["error"], (name, res["error"])
        with pytest.raises(UserError):
            facts()
        return None
    assert res["error"] is None, (name, res["error"])
    f = facts()
    model = res["model"]
    assert (f.dtype, f.head_size, f.model_use_mla, f.num_kv_heads) == (
        model["dtype"], model["head_size"], model["use_mla"], model["num_kv_heads"]), name
    return f


def head_size_agrees_with_vllm(res: dict, facts: Callable[[], object], want: int | str, name: str = "") -> None:
    """A case written as (config, ``want``): vLLM's head size where it builds
    (an int), else a piece of its refusal; ``facts()`` agrees with vLLM's
    build (``facts_agreeing_with_vllm``) and with ``want``."""
    f = facts_agreeing_with_vllm(res, facts, None if isinstance(want, int) else want, name)
    if f is not None:
        assert f.head_size == want, name


def head_size_differential(cases: list[tuple[str, dict, int | str]], capability, timeout: float = 900,
                           fixture: str = "vllm_answers"):
    """A module-scoped fixture of vLLM's answers and the parametrized test
    against them for a module whose cases are (name, config, want)
    (``head_size_agrees_with_vllm``), built once here. A module binds both
    at its top level, the fixture under the name ``fixture``:
    ``vllm_answers, test_against_vllm = head_size_differential(CASES, H100)``."""
    from attn_select.selector.model.facts import model_facts

    @pytest.fixture(scope="module", name=fixture)
    def answers():
        cap = [capability.major, capability.minor]
        return run_model_oracle([{"config": c, "capability": cap} for _, c, _ in cases], timeout)

    @pytest.mark.vllm
    @pytest.mark.slow
    @pytest.mark.parametrize("index", range(len(cases)), ids=[c[0] for c in cases])
    def test_against_vllm(request, index):
        name, config, want = cases[index]
        res = request.getfixturevalue(fixture)[index]
        head_size_agrees_with_vllm(res, lambda: model_facts(config, name="m", capability=capability), want, name)

    return answers, test_against_vllm


def builds_or_refuses(config: dict, want: int | str, refusal: str, capability, *, mentions: str = "") -> None:
    """The unit side of a (config, ``want``) case: the head size where
    ``want`` is one (vLLM builds the model), else a one-line refusal that
    matches the pattern ``refusal`` and holds ``mentions``."""
    from attn_select.selector.model.facts import model_facts

    if isinstance(want, int):
        assert model_facts(config, name="m", capability=capability).head_size == want
        return
    with pytest.raises(UserError, match=refusal) as exc:
        model_facts(config, name="m", capability=capability)
    assert "\n" not in str(exc.value) and mentions in str(exc.value)
