"""Compile our MLA decode kernel ahead of time for sm_90 (no GPU needed) and
report, per launch shape: shared memory, the key buffers Triton's pipeliner
made, how many copy groups the key loop leaves in flight at its wait (0:
the loop waits on each copy right after issuing it, i.e. is not pipelined),
wgmma or mma.sync, and ptxas's registers / spills.

    python3 benchmarks/mla_aot_report.py            # every TILES entry
    python3 benchmarks/mla_aot_report.py --sweep    # and the benchmark's sweep variants

This is how the table in backends/run/triton_mla.py was checked, with the
H200 image's Triton (3.6.0, its bundled ptxas; a wheel unpacked into a folder
on PYTHONPATH will do on any x86-64 CPU): another Triton may lay things out
differently, which the adapter's out-of-resources fallback and the H200
benchmark catch. Uses
Triton's compiler entry points (``triton.compile`` on an ``ASTSource`` with a
``GPUTarget``), not a launch.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")


def compile_tiles(t, fp8: bool, page: int = 64, rank: int = 512, rope: int = 64, arch: int = 90):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from attn_select.backends.run import mla_kernel as mk

    ptrs = ["q_nope_ptr", "q_pe_ptr", "kv_ptr", "out_ptr", "lse_ptr", "part_o_ptr", "part_lse_ptr",
            "block_table_ptr", "seq_lens_ptr", "kv_scale_ptr", "q_stage_ptr"]
    types = ["*bf16", "*bf16", "*fp8e4nv" if fp8 else "*bf16", "*bf16", "*fp32", "*fp32", "*fp32", "*i32", "*i32",
             "*fp32", "*fp16"]
    sig = dict(zip(ptrs, types))
    sig.update(num_heads="i32", num_splits="i32", sm_scale="fp32")
    strides = ["stride_qt", "stride_qh", "stride_pt", "stride_ph", "stride_kp", "stride_kt", "stride_bt",
               "stride_ot", "stride_oh", "stride_lt"]
    sig.update({s: "i32" for s in strides})
    const = dict(RANK=rank, RANK_PAD=rank, ROPE=rope, ROPE_PAD=rope, PAGE=page, BLOCK_H=t.block_h,
                 BLOCK_N=t.block_n, NUM_STAGES=t.num_stages, DIRECT=False, HAS_LSE=False, FP8_KV=fp8,
                 SPLIT_V=t.split_v, STAGE_Q=fp8 and t.block_h >= 64, DOT_F32=False,
                 TRANSPOSED=t.transposed)
    sig.update({k: "constexpr" for k in const})
    # what the launcher specialises on real tensors: 16-byte aligned pointers, strides divisible by 16
    names = list(sig)
    attrs = {(names.index(n),): [["tt.divisibility", 16]] for n in ptrs + strides}
    src = ASTSource(mk.mla_decode_kernel, sig, const, attrs)
    return triton.compile(src, target=GPUTarget("cuda", arch, 32),
                          options=dict(num_warps=t.num_warps, num_stages=t.num_stages))


def nvidia_tools() -> Path:
    """The folder of the ptxas and nvdisasm that ship in Triton's NVIDIA backend."""
    import triton

    return Path(triton.__file__).parent / "backends" / "nvidia" / "bin"


def ptxas_report(ptx: str, arch: str = "sm_90a") -> str:
    bindir = nvidia_tools()
    for name in ("ptxas-blackwell", "ptxas"):  # the newer one reads the newest PTX versions
        exe = bindir / name
        if not exe.exists():
            continue
        with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
            f.write(ptx)
        r = subprocess.run([str(exe), f"-arch={arch}", "-v", f.name, "-o", os.devnull], capture_output=True, text=True)
        os.unlink(f.name)
        if r.returncode == 0:
            regs = re.search(r"Used (\d+) registers", r.stderr)
            spill = re.search(r"(\d+) bytes spill stores", r.stderr)
            return f"{regs.group(1) if regs else '?'} regs, {spill.group(1) if spill else '?'} B spilled"
    return "ptxas not usable"


def report(t, fp8: bool, page: int) -> str:
    from attn_select.backends.run.triton_mla import smem_bytes

    label = (f"{t.block_h:>2} heads x {t.block_n:>3} keys, stages {t.num_stages}, warps {t.num_warps}"
             f"{', split V' if t.split_v else ''}, {'fp8 ' if fp8 else 'bf16'} page {page}")
    try:
        k = compile_tiles(t, fp8, page)
    except Exception as e:
        return f"{label}: COMPILE FAILED {type(e).__name__}: {str(e).splitlines()[0][:160]}"
    g = k.asm["ttgir"]
    bufs = sorted(set(re.findall(r"memdesc<(\d+x\d+x\d+)x", g)))
    mma = "wgmma" if "warp_group_dot" in g else "mma.sync"
    est = smem_bytes(t, 576, 1 if fp8 else 2)
    # the copies left in flight by the key loop's first wait: 0 means every
    # copy is waited on as soon as it is issued (no load/compute overlap)
    body = g[g.find("scf.for"):]
    wait = re.search(r"async_wait .*?\{num = (\d+)", body)
    return (f"{label}: shared {k.metadata.shared} B (model {est}), buffers {bufs or 'none'}, "
            f"in-loop wait leaves {wait.group(1) if wait else '-'} copy groups in flight, {mma}, "
            f"{ptxas_report(k.asm['ptx'])}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--page", type=int, default=64)
    a = ap.parse_args(argv)
    from attn_select.backends.run.triton_mla import TILES

    jobs = [(t, elem == 1) for (_, elem), t in TILES.items()]
    if a.sweep:
        spec = importlib.util.spec_from_file_location("run_triton_mla", Path(__file__).with_name("run_triton_mla.py"))
        bench = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(bench)
        for heads in (16, 128):
            for elem in (2, 1):
                jobs += [(t, elem == 1) for t in bench.sweep_variants(heads, elem)]
    seen = set()
    for t, fp8 in jobs:
        if (t, fp8) in seen:
            continue
        seen.add((t, fp8))
        print(report(t, fp8, a.page), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
