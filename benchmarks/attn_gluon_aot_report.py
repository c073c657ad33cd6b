"""Compile TRITON_ATTN's Gluon prefill kernel (backends/run/attn_gluon.py)
ahead of time for sm_90 on the CPU and report per launch shape: shared
memory, ptxas's registers and spills, and what the SASS holds (HGMMA,
UTMALDG, barriers, local loads / stores).

    PYTHONPATH=/path/to/triton-3.6 python3 benchmarks/attn_gluon_aot_report.py [--page 16 64]

Needs Triton 3.6's Gluon Hopper API (the H200 image's Triton; a 3.6 wheel
unpacked into a folder on PYTHONPATH will do on any x86-64 CPU). Uses
Triton's compiler entry points (``triton.compile`` on a ``GluonASTSource``
with a ``GPUTarget``), no launch, no GPU. Llama-3.1-8B heads (32 / 8, head
128, bf16) unless told otherwise.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from mla_gluon_aot_report import ptxas_stats, sass_counts  # noqa: E402


def compile_tiles(t, page: int = 16, heads=(32, 8), head: int = 128, arch: int = 90, dtype: str = "bfloat16"):
    import torch
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource
    from triton.runtime.jit import mangle_type

    from attn_select.backends.run import attn_gluon as ag

    g = heads[0] // heads[1]
    g_pad = 1 << (g - 1).bit_length()
    # a CPU tensor stands in for the cache: only its dtype, the box and the layout reach the signature
    cache = torch.empty(8, 2, page, heads[1], head, dtype=getattr(torch, dtype))
    desc = ag.kv_descriptor(cache, t, page, head)
    act = {"bfloat16": "*bf16", "float16": "*fp16"}[dtype]
    sig = dict(q_ptr=act, kv_desc=mangle_type(desc), out_ptr=act, part_acc_ptr="*fp32",
               part_m_ptr="*fp32", part_l_ptr="*fp32", block_table_ptr="*i32", work_ptr="*i32", stride_w="i32",
               stride_qt="i32", stride_qh="i32", stride_ot="i32", stride_oh="i32", stride_bt="i32",
               stride_ps="i32", stride_pt="i32", stride_ph="i32", qk_scale="fp32")
    const = dict(G=g, G_PAD=g_pad, BLOCK_Q=t.block_m // g_pad, HEAD=head, PAGE=page, BLOCK_N=t.block_n,
                 STAGES=t.stages, OVERLAP=t.overlap, WARP_SPEC=t.warp_spec, PINGPONG=t.pingpong)
    sig.update({k: "constexpr" for k in const})
    names = list(sig)
    # what a launch specialises on: 16-byte aligned pointers, strides divisible by 16 (stride_w is
    # not specialised: do_not_specialize)
    div16 = ["q_ptr", "out_ptr", "part_acc_ptr", "part_m_ptr", "part_l_ptr", "block_table_ptr", "work_ptr",
             "stride_qt", "stride_qh", "stride_ot", "stride_oh"]
    attrs = {(names.index(n),): [["tt.divisibility", 16]] for n in div16}
    src = GluonASTSource(ag.attn_gluon_prefill_kernel, sig, const, attrs)
    opts = dict(num_warps=t.num_warps, **({"maxnreg": ag.PINGPONG_MAXNREG} if t.pingpong else {}))
    return triton.compile(src, target=GPUTarget("cuda", arch, 32), options=opts)


def report(t, page: int, head: int = 128, dtype: str = "bfloat16") -> dict:
    import re

    from attn_select.backends.run.attn_gluon import prefill_smem_bytes

    row = dict(shape=t.label, block_m=t.block_m, block_n=t.block_n, stages=t.stages, overlap=t.overlap,
               warp_spec=t.warp_spec, pingpong=t.pingpong, page=page, smem_model=prefill_smem_bytes(t, head))
    try:
        k = compile_tiles(t, page, head=head, dtype=dtype)
    except Exception as e:
        return dict(row, error=f"{type(e).__name__}: {' | '.join(str(e).strip().splitlines()[:8])[:900]}")
    ptx = k.asm["ptx"]
    row.update(shared=k.metadata.shared, num_warps=k.metadata.num_warps, **ptxas_stats(ptx),
               **sass_counts(k.asm["cubin"]))
    # the warp-specialised shape's register split, and how the consumers' barriers are lowered
    row["setmaxnreg"] = sorted(set([int(x) for x in re.findall(r"setmaxnreg\.\w+\.sync\.aligned\.u32\s+(\d+)", ptx)]))
    row["named_barriers"] = len(re.findall(r"bar\.sync\s+\d+,\s*\d+", ptx))
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--page", type=int, nargs="+", default=[16, 64])
    a = ap.parse_args(argv)
    from attn_select.backends.run.attn_gluon import PREFILL_VARIANTS

    for page in a.page:
        for t in PREFILL_VARIANTS:
            print(report(t, page), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
