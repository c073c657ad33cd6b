"""What TRITON_ATTN's Gluon prefill kernel (backends/run/attn_gluon.py)
compiles to for sm_90, from the installed Triton's own compiler on the CPU:
no GPU, no launch. It runs where the installed Triton has the Gluon API the
kernel is written against (Triton 3.6, ``gluon_gate.GLUON_TRITON``; e.g. a
3.6 wheel unpacked first on PYTHONPATH) and skips with the reason otherwise.
The speed is measured on the H200 (benchmarks/run_gluon_prefill.py), never
here."""

from __future__ import annotations

import pytest

from attn_select.backends.run.triton_mla import SMEM_LIMIT
from tests.backends.run.conftest import compile_in_child, gluon_compile_missing

WHY_NOT = gluon_compile_missing()
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")

_COMPILE = """
import json, sys
sys.path.insert(0, sys.argv[1])
import attn_gluon_aot_report as aot
from attn_select.backends.run.attn_gluon import DEFAULT_PREFILL_TILES, PREFILL_VARIANTS
rows = [aot.report(t, page) for page in (16, 64) for t in PREFILL_VARIANTS]
# the rule takes head 64 and fp16 caches too
rows.append(dict(aot.report(DEFAULT_PREFILL_TILES, 16, head=64), head=64))
rows.append(dict(aot.report(DEFAULT_PREFILL_TILES, 64, dtype="float16"), dtype="float16"))
print(json.dumps(rows))
"""


@pytest.fixture(scope="module")
def compiled():
    return compile_in_child(_COMPILE, timeout=1200)


def test_every_launch_shape_compiles_for_sm90_within_shared_memory_without_spills(compiled):
    from attn_select.backends.run.attn_gluon import PREFILL_VARIANTS

    assert len(compiled) == 2 * len(PREFILL_VARIANTS) + 2
    for row in compiled:
        assert "error" not in row, row
        assert row["shared"] <= SMEM_LIMIT, row
        # the allocations the model counts, plus the mbarriers (and the producer's hand-off)
        assert 0 <= row["shared"] - row["smem_model"] < 1024, row
        assert row["spill_bytes"] == 0 and row["local_ld_st"] == 0, row
        assert row["regs"] <= 255, row


def test_both_dots_are_wgmma_and_the_keys_arrive_by_tma(compiled):
    for row in compiled:
        assert row["wgmma"] > 0, row
        assert row["tma_loads"] > 0, row


def test_the_producer_warp_shapes_hand_the_consumers_240_registers(compiled):
    """warp_specialize: 8 consumer warps + 1 producer (launched as 12 warps),
    the producer down to 24 registers, the consumers up to 240 (setmaxnreg),
    their CTA barriers lowered to named barriers of their 256 threads; the
    ping-pong shape's two 4-warp halves the same, under a 168-register launch."""
    for row in compiled:
        if row.get("pingpong"):
            # 4 producer warps (the launch's) + two 4-warp halves; the idle workers wait at 120 and the
            # producer starts at 256 (Triton's switch loop), then 24 / 240 while they run
            assert row["num_warps"] == 12 and {24, 240} <= set(row["setmaxnreg"]) <= {24, 120, 240, 256}, row
            assert row["named_barriers"] > 0 and row["regs"] <= 168, row
        elif row["warp_spec"]:
            assert row["num_warps"] == 12 and row["setmaxnreg"] == [24, 240], row
            assert row["named_barriers"] > 0, row
        else:
            assert row["num_warps"] == row["block_m"] // 16 and row["setmaxnreg"] == [], row
