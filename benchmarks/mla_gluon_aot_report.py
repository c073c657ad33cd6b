"""Compile the Gluon MLA decode kernel (backends/run/mla_gluon.py) ahead of
time for sm_90 on the CPU and report per launch shape: shared memory,
ptxas's registers and spills, and the wgmma instructions in the SASS.

    PYTHONPATH=/path/to/triton-3.6 python3 benchmarks/mla_gluon_aot_report.py

Needs Triton 3.6's Gluon Hopper API (the H200 image's Triton; a 3.6 wheel
unpacked into a folder on PYTHONPATH will do on any x86-64 CPU). Uses
Triton's compiler entry points (``triton.compile`` on a ``GluonASTSource``
with a ``GPUTarget``), no launch, no GPU.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def compile_tiles(t, page: int = 64, rank: int = 512, rope: int = 64, direct: bool = False, arch: int = 90):
    import torch
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource
    from triton.runtime.jit import mangle_type

    from attn_select.backends.run import mla_gluon as mg
    from attn_select.backends.run import mla_gluon_ws as ws

    # CPU tensors stand in for the device ones: only dtypes, block shapes and layouts reach the signature
    q = torch.empty(4, 128, rank + rope, dtype=torch.bfloat16)
    lat = torch.empty(8, page, rank + rope, dtype=torch.bfloat16)
    warp_specialised = t.schedule in mg.WS_SCHEDULES
    if warp_specialised:
        descs = ws.descriptors(q, lat, page, rank, mg.WS_SCHEDULES[t.schedule])
        names = ["q_half_desc", "q_pe_desc", "kv_desc", "kc_desc", "kp_desc"]
    else:
        descs = mg.descriptors(q, lat, t, page, rank)
        names = ["q_nope_desc", "q_pe_desc", "kn_desc", "kp_desc"]
    sig = dict(zip(names, [mangle_type(d) for d in descs]))
    sig.update(out_ptr="*bf16", lse_ptr="*fp32", part_o_ptr="*fp32", part_lse_ptr="*fp32",
               block_table_ptr="*i32", seq_lens_ptr="*i32", num_heads="i32", num_splits="i32", qk_scale="fp32",
               stride_bt="i32", stride_ot="i32", stride_oh="i32", stride_lt="i32")
    if warp_specialised:
        const = dict(RANK=rank, ROPE=rope, PAGE=page, DIRECT=direct, HAS_LSE=False, LC=mg.WS_SCHEDULES[t.schedule])
        kernel, options = ws.mla_gluon_ws_decode_kernel, dict(num_warps=int(ws.WG_WARPS), maxnreg=ws.MAXNREG)
    else:
        const = dict(RANK=rank, ROPE=rope, PAGE=page, BLOCK_H=t.block_h, BLOCK_N=t.block_n, STAGES=t.stages,
                     DIRECT=direct, HAS_LSE=False, OVERLAP=t.overlap)
        kernel, options = mg.mla_gluon_decode_kernel, dict(num_warps=t.num_warps)
    sig.update({k: "constexpr" for k in const})
    names = list(sig)
    ptrs = ["out_ptr", "lse_ptr", "part_o_ptr", "part_lse_ptr", "block_table_ptr", "seq_lens_ptr",
            "stride_bt", "stride_ot", "stride_oh"]
    attrs = {(names.index(n),): [["tt.divisibility", 16]] for n in ptrs}
    src = GluonASTSource(kernel, sig, const, attrs)
    return triton.compile(src, target=GPUTarget("cuda", arch, 32), options=options)


def nvidia_bin() -> Path:
    import triton

    return Path(triton.__file__).parent / "backends" / "nvidia" / "bin"


def ptxas_stats(ptx: str, arch: str = "sm_90a") -> dict:
    exe = nvidia_bin() / "ptxas"
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(ptx)
    r = subprocess.run([str(exe), f"-arch={arch}", "-v", f.name, "-o", os.devnull], capture_output=True, text=True)
    os.unlink(f.name)
    regs = re.search(r"Used (\d+) registers", r.stderr)
    spill = re.search(r"(\d+) bytes spill stores", r.stderr)
    return dict(regs=int(regs.group(1)) if regs else None, spill_bytes=int(spill.group(1)) if spill else None,
                ptxas_rc=r.returncode)


def sass_counts(cubin: bytes) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(cubin)
    r = subprocess.run([str(nvidia_bin() / "nvdisasm"), "-c", f.name], capture_output=True, text=True)
    os.unlink(f.name)
    s = r.stdout
    shapes = {}
    for m in re.findall(r"\bHGMMA\.(\d+x\d+x\d+)", s):
        shapes[m] = shapes.get(m, 0) + 1
    return dict(wgmma=len(re.findall(r"\bHGMMA\.", s)), wgmma_shapes=shapes,
                tma_loads=len(re.findall(r"\bUTMALDG\b", s)),
                bar_sync=len(re.findall(r"\bBAR\.SYNC", s)), local_ld_st=len(re.findall(r"\b(?:LDL|STL)\b", s)),
                mbarrier_waits=len(re.findall(r"\bSYNCS\.PHASECHK", s)),
                mbarrier_arrives=len(re.findall(r"\bSYNCS\.ARRIVE", s)))


def setmaxnreg(ptx: str) -> list[int]:
    """The register budgets a warp-specialised kernel's partitions switch to."""
    return sorted({int(n) for n in re.findall(r"setmaxnreg\.(?:inc|dec)\.sync\.aligned\.u32\s+(\d+)", ptx)})


def report(t, page: int) -> dict:
    from attn_select.backends.run.mla_gluon import gluon_smem_bytes

    row = dict(schedule=t.schedule, block_n=t.block_n, stages=t.stages, overlap=t.overlap, page=page,
               smem_model=gluon_smem_bytes(t))
    try:
        k = compile_tiles(t, page)
    except Exception as e:
        return dict(row, error=f"{type(e).__name__}: {' | '.join(str(e).strip().splitlines()[:6])[:600]}")
    row.update(shared=k.metadata.shared, num_warps=k.metadata.num_warps, **ptxas_stats(k.asm["ptx"]),
               setmaxnreg=setmaxnreg(k.asm["ptx"]), **sass_counts(k.asm["cubin"]))
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--page", type=int, nargs="+", default=[64, 16])
    a = ap.parse_args(argv)
    from attn_select.backends.run.mla_gluon import GLUON_VARIANTS

    for page in a.page:
        for t in GLUON_VARIANTS:
            print(report(t, page), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
