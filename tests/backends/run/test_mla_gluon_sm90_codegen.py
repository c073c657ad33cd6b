"""What the Gluon MLA decode kernel (backends/run/mla_gluon.py) compiles to
for sm_90, from the installed Triton's own compiler on the CPU: no GPU, no
launch. It runs where the installed Triton has the Gluon API the kernel is
written against (Triton 3.6, ``gluon_gate.GLUON_TRITON``; e.g. a 3.6 wheel
unpacked on PYTHONPATH) and skips with the reason otherwise. The speed is
measured on the H200 (benchmarks/run_gluon_mla.py), never here."""

from __future__ import annotations

import pytest

from attn_select.backends.run.triton_mla import SMEM_LIMIT
from tests.backends.run.conftest import compile_in_child, gluon_compile_missing

WHY_NOT = gluon_compile_missing()
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")

_COMPILE = """
import json, sys
sys.path.insert(0, sys.argv[1])
import mla_gluon_aot_report as aot
from attn_select.backends.run.mla_gluon import GLUON_VARIANTS
rows = [aot.report(t, page) for page in (64, 16) for t in GLUON_VARIANTS]
print(json.dumps(rows))
"""


@pytest.fixture(scope="module")
def compiled():
    return compile_in_child(_COMPILE, timeout=900)


def test_every_launch_shape_compiles_for_sm90_within_shared_memory_without_spills(compiled):
    from attn_select.backends.run.mla_gluon import GLUON_VARIANTS

    assert len(compiled) == 2 * len(GLUON_VARIANTS)
    for row in compiled:
        assert "error" not in row, row
        assert row["shared"] <= SMEM_LIMIT, row
        # the allocations the model counts, plus barriers and the max exchange's scratch
        assert 0 <= row["shared"] - row["smem_model"] < 2048, row
        assert row["spill_bytes"] == 0 and row["local_ld_st"] == 0, row
        assert row["regs"] <= 255, row
        # the shared-dot kernel: 8 warps; the warp-specialised one: an idle default warpgroup + two workers
        assert row["num_warps"] == (12 if row["schedule"] in ("ws", "wsc") else 8), row


def test_both_dots_are_wgmma_and_the_keys_arrive_by_tma(compiled):
    for row in compiled:
        assert row["wgmma"] > 0, row
        assert row["tma_loads"] > 0, row


def test_the_warp_specialised_kernel_scores_64_keys_a_warpgroup_within_the_register_file(compiled):
    from attn_select.backends.run import mla_gluon_ws as ws

    rows = [r for r in compiled if r["schedule"] in ("ws", "wsc")]
    assert {r["schedule"] for r in rows} == {"ws", "wsc"}
    for row in rows:
        # a pair of blocks: per warpgroup 36 score instructions 64 wide (K = 256 + 256 + 64) and
        # 2 output dots of 4 instructions 256 wide (K = 64 keys)
        assert row["wgmma_shapes"] == {"64x64x16": 72, "64x256x16": 16}, row
        wg0, wg1 = int(ws.WG0_REGS), int(ws.WG1_REGS)
        assert {24, wg0, wg1} <= set(row["setmaxnreg"]), row
        # three warpgroups' budgets after setmaxnreg, and the launch's, fit 64 Ki registers
        assert (24 + wg0 + wg1) * 128 <= 65536 and ws.MAXNREG * 384 <= 65536, row
        assert row["regs"] <= ws.MAXNREG, row
    shared = [r for r in compiled if r["schedule"] == "shared" and r["block_n"] == 64]
    assert all(r["wgmma_shapes"].get("64x32x16") for r in shared)  # the split tile the ws form avoids
