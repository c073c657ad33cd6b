"""benchmarks/run_triton_sweep.py on the CPU: the sweep and the final
comparison end to end on tiny shapes (our kernel under the interpreter),
with a second copy of the kernel loaded from a folder the way the device
driver loads the kernel from before a change, so the script's paths are
exercised before it reaches the H200."""

from __future__ import annotations

import json
from pathlib import Path

import torch

from tests.backends.run.conftest import load_benchmark, needs_interpreter

ROOT = Path(__file__).resolve().parents[3]


def _load_sweep():
    return load_benchmark("run_triton_sweep")


def _tiny(sw, monkeypatch):
    monkeypatch.setitem(sw.SHAPE_ARGS, "decode", ("decode", 3, 70, 0, 0, 0))
    monkeypatch.setattr(sw, "CASES", [("decode", "fp8")])
    full = sw.case_configs
    monkeypatch.setattr(sw, "case_configs", lambda case: full(case)[:2])


@needs_interpreter
def test_sweep_then_final_on_tiny_shapes(tmp_path, monkeypatch):
    sw = _load_sweep()
    _tiny(sw, monkeypatch)
    dev = torch.device("cpu")
    best = sw.phase_sweep(tmp_path, dev, seconds=0.01)
    doc = json.loads((tmp_path / "triton_sweep.json").read_text())
    assert len(doc["results"]) == 2 and all("error" not in r for r in doc["results"])
    # the fp8 check ran with k / v scales 0.5 / 2.0 and passed against the scaled reference
    assert set(best) == {"decode/fp8"} and best["decode/fp8"]["err"] < 2e-2

    old = tmp_path / "old"
    old.mkdir()
    for name in ("triton_kernel", "triton_attn"):
        text = (ROOT / f"backends/run/{name}.py").read_text()
        text = text.replace("from attn_select.backends.run import triton_kernel as tk",
                            "import old_triton_kernel as tk")
        (old / f"old_{name}.py").write_text(text)
    sw.phase_final(tmp_path, dev, tmp_path / "triton_sweep.json", "t", old, seconds=0.01, peers=False)
    fin = json.loads((tmp_path / "triton_final.t.json").read_text())
    rows = fin["cases"]["decode/fp8"]
    assert [r["variant"] for r in rows] == ["table", "sweep best", "before (old kernel, its table)"]
    assert all("error" not in r and r["err"] < 2e-2 for r in rows)
