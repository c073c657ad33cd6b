"""What our Triton paged kernel compiles to for sm_90 (the H200), from the
installed Triton's own compiler on the CPU: no GPU, no launch. It checks the
code property a launch choice exists for; the speed it buys is measured on
the device (benchmarks/, BENCHMARKS.md), never here."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from attn_select.backends.run.triton_attn import DECODE_CONFIG, FP8_DECODE_CONFIG, KernelConfig, widens_v
from tests.backends.run.conftest import compile_in_child, load_benchmark, nvidia_tools_missing


_NO_TOOLS = nvidia_tools_missing()
needs_nvidia_tools = pytest.mark.skipif(_NO_TOOLS is not None, reason=_NO_TOOLS or "")


_COMPILE = """
import json, sys
from dataclasses import replace
sys.path.insert(0, sys.argv[1])
import triton_attn_aot_report as aot
from attn_select.backends.run.triton_attn import FP8_DECODE_CONFIG
out = {}
for heads, head, e5m2 in json.loads(sys.argv[2]):
    k = aot.compile_config(replace(FP8_DECODE_CONFIG, widen_v=True), True, "decode", tuple(heads), head, e5m2=e5m2)
    out[f"{heads[0]}/{heads[1]}x{head}{' e5m2' if e5m2 else ''}"] = aot.shared_loads(aot.disassemble(k))
print(json.dumps(out))
"""
CASES = [((32, 8), 128, False), ((32, 8), 128, True), ((64, 8), 64, False)]


@pytest.fixture(scope="module")
def widened_loads():
    return compile_in_child(_COMPILE, json.dumps(CASES), timeout=300)


@needs_nvidia_tools
def test_widened_fp8_values_reach_the_dot_without_byte_loads(widened_loads):
    """widen_v: the value tile reaches the fp16 P.V dot through 16-bit
    transposing shared-memory loads (ldmatrix.trans), not one byte load a
    value, as Triton lowers the plain widening on sm_90 (e4m3 and e5m2,
    heads 128 and 64)."""
    assert len(widened_loads) == len(CASES)
    for case, loads in widened_loads.items():
        assert loads["byte"] == 0, (case, loads)
        assert loads["transposing"] > 0, (case, loads)


def test_shared_loads_sorts_the_disassembly_by_kind():
    aot = load_benchmark("triton_attn_aot_report")
    sass = """
        /*0100*/ LDS.U8 R4, [R2+0x80] ;
        /*0110*/ LDSM.16.MT88.4 R8, [R3] ;
        /*0120*/ LDSM.16.M88.4 R12, [R5] ;
        /*0130*/ LDS.64 R16, [R6] ;
        /*0140*/ LDS R18, [R6+0x4] ;
        /*0150*/ LDS.U8 R19, [R2+0x100] ;
    """
    assert aot.shared_loads(sass) == {"transposing": 1, "matrix": 1, "byte": 2, "other": 2}


@pytest.mark.parametrize("cfg,fp8_dot,nbytes,cap,gpu,want", [
    (replace(FP8_DECODE_CONFIG, widen_v=True), 0, 1, (9, 0), True, True),
    (replace(FP8_DECODE_CONFIG, widen_v=True), 1, 1, (8, 9), True, True),  # Q.K in fp8, P.V still fp16
    (replace(FP8_DECODE_CONFIG, widen_v=True), 2, 1, (9, 0), True, False),  # P.V in fp8: V stays fp8
    (replace(FP8_DECODE_CONFIG, widen_v=True), 0, 1, (8, 0), True, False),  # A100: no cvt.f16x2.e4m3x2
    (replace(FP8_DECODE_CONFIG, widen_v=True), 0, 1, None, False, False),  # the interpreter: no PTX
    (replace(DECODE_CONFIG, widen_v=True), 0, 2, (9, 0), True, False),  # a bf16 cache widens nothing
    (FP8_DECODE_CONFIG, 0, 1, (9, 0), True, FP8_DECODE_CONFIG.widen_v),
])
def test_widens_v_only_where_the_instructions_and_an_fp16_dot_are(cfg: KernelConfig, fp8_dot, nbytes, cap, gpu,
                                                                   want):
    assert widens_v(cfg, fp8_dot, nbytes, cap, gpu) is want


_COMPILE_FOLDED = """
import json, sys
from dataclasses import replace
sys.path.insert(0, sys.argv[1])
import triton_attn_aot_report as aot
from mla_aot_report import ptxas_report
from attn_select.backends.run.triton_attn import DECODE_CONFIG
out = {}
for fold in (0, 4):
    k = aot.compile_config(replace(DECODE_CONFIG, fold_tail=fold), False, "decode", (32, 8), 128, fused=True)
    regs, _, rest = ptxas_report(k.asm["ptx"]).partition(" regs, ")
    out[fold] = dict(regs=int(regs), spills=int(rest.split()[0]), sass=len(aot.disassemble(k).splitlines()))
print(json.dumps(out))
"""


@needs_nvidia_tools
def test_the_folded_tail_variant_compiles_for_sm90_beside_the_table():
    """fold_tail's kernel (DEAL_TILES: two integer divisions a program where the table's has one)
    compiles for sm_90 without spills, within a few registers and instructions of the table's bf16
    decode with the in-kernel merge (Triton 3.6: 168 registers both, 2964 against 3004 lines)."""
    got = compile_in_child(_COMPILE_FOLDED, timeout=300)
    table, folded = got["0"], got["4"]
    assert table["spills"] == folded["spills"] == 0, got
    assert folded["regs"] <= table["regs"] + 8 and folded["sass"] <= table["sass"] + 40, got


_COMPILE_ONE_WARP = """
import json, sys
sys.path.insert(0, sys.argv[1])
import triton
import triton_attn_aot_report as aot
from mla_aot_report import ptxas_report
from attn_select.backends.run.triton_attn import FP8_DECODE_ONE_WARP
k = aot.compile_config(FP8_DECODE_ONE_WARP, True, "decode", (32, 8), 128)
regs, _, rest = ptxas_report(k.asm["ptx"]).partition(" regs, ")
print(json.dumps(dict(regs=int(regs), spills=int(rest.split()[0]), warps=k.metadata.num_warps,
                      loads=aot.shared_loads(aot.disassemble(k)), triton=triton.__version__)))
"""


@needs_nvidia_tools
def test_the_one_warp_fp8_decode_entry_compiles_for_sm90():
    """FP8_DECODE_ONE_WARP (fp8_decode_one_warp's batches): one warp a program, within ptxas's
    255 registers, its value tiles reaching the P.V dot widened (no byte loads). With the device's
    Triton 3.6 (the one measured) it does not spill; Triton 3.9 lays it out with 4 bytes of spill
    at 255 registers, so the spill check holds for 3.6 alone."""
    got = compile_in_child(_COMPILE_ONE_WARP, timeout=300)
    assert got["warps"] == 1 and got["regs"] <= 255, got
    assert got["loads"]["byte"] == 0 and got["loads"]["transposing"] > 0, got
    if got["triton"].startswith("3.6."):
        assert got["spills"] == 0, got


_COMPILE_FP8_SMALL = """
import json, sys
sys.path.insert(0, sys.argv[1])
import triton_attn_aot_report as aot
from mla_aot_report import ptxas_report
from attn_select.backends.run.triton_attn import FP8_DECODE_SMALL
out = {}
for fused in (False, True):
    k = aot.compile_config(FP8_DECODE_SMALL, True, "decode", (32, 8), 128, fused=fused)
    regs, _, rest = ptxas_report(k.asm["ptx"]).partition(" regs, ")
    out[str(fused)] = dict(regs=int(regs), spills=int(rest.split()[0]), loads=aot.shared_loads(aot.disassemble(k)))
print(json.dumps(out))
"""


@needs_nvidia_tools
def test_the_small_step_fp8_decode_entry_compiles_for_sm90():
    """FP8_DECODE_SMALL (bf16's decode entry on an fp8 cache, V widened), split and merged
    in-kernel: within its 168-register cap without spills (Triton 3.6: 160 / 163 registers;
    3.9: 130 / 126), the value tiles reaching the P.V dot through transposing loads."""
    got = compile_in_child(_COMPILE_FP8_SMALL, timeout=300)
    for launch in got.values():
        assert launch["regs"] <= 168 and launch["spills"] == 0, got
        assert launch["loads"]["byte"] == 0 and launch["loads"]["transposing"] > 0, got
