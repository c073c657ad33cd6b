"""Compile our paged-attention kernel (TRITON_ATTN) ahead of time for sm_90
(no GPU needed) and report, per launch config: shared memory, the K/V
buffers Triton's pipeliner made, the copy groups each key loop leaves in
flight at its wait (0: every copy is waited on right after it is issued, no
overlap), wgmma or mma.sync, ptxas's registers / spills, and the shared-memory
loads that gather a tile byte by byte against the 16-bit transposing ones
(``widen_v``).

    python3 benchmarks/triton_attn_aot_report.py                # the table's configs, Llama-3.1-8B heads
    python3 benchmarks/triton_attn_aot_report.py --sweep        # and run_triton_sweep.py's variants

Shared memory decides how many programs an SM holds (228 KB each on the
H200), which the split-KV count is chosen against. Use the H200 image's
Triton (3.6.0; a wheel unpacked into a folder on PYTHONPATH will do on any
x86-64 CPU): another Triton lays things out differently. Uses Triton's
compiler entry points (``triton.compile`` on an ``ASTSource`` with a
``GPUTarget``), not a launch.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
sys.path.insert(0, str(Path(__file__).parent))


def compile_config(cfg, fp8: bool, path: str, heads=(32, 8), head=128, page=16, fused: bool = False,
                   e5m2: bool = False):
    """The kernel of one launch config; ``fused``: as a split plan that merges in-kernel compiles it;
    ``e5m2``: an fp8 cache in e5m2 (else e4m3)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from attn_select.backends.run import triton_kernel as tk

    g = heads[0] // heads[1]
    g_pad = 1 << (g - 1).bit_length()
    kv = ("*fp8e5" if e5m2 else "*fp8e4nv") if fp8 else "*bf16"
    ptrs = dict(q_ptr="*bf16", k_ptr=kv, v_ptr=kv, out_ptr="*bf16", part_acc_ptr="*fp32", part_m_ptr="*fp32",
                part_l_ptr="*fp32", counter_ptr="*i32", block_table_ptr="*i32", sinks_ptr="*bf16",
                k_scale_ptr="*fp32", v_scale_ptr="*fp32", work_ptr="*i32")
    strides = ["stride_w", "stride_qt", "stride_qh", "stride_kp", "stride_kt", "stride_kh", "stride_vp", "stride_vt",
               "stride_vh", "stride_ot", "stride_oh", "stride_bt", "stride_ps", "stride_pt", "stride_ph"]
    sig = dict(ptrs)
    sig.update({s: "i32" for s in strides})
    sig.update(sm_scale="fp32", soft_cap="fp32", window="i32")
    small = path == "decode"
    bq = max(1, max(cfg.block_m, g_pad, 16) // g_pad) if cfg.block_m and not small else 0
    sq = max(1, max(cfg.small_m, g_pad, 16) // g_pad) if cfg.small_m and small else 0
    const = dict(G=g, G_PAD=g_pad, HEAD=head, HEAD_PAD=head, HEAD_V=head, HEAD_V_PAD=head, PAGE=page,
                 HAS_SOFTCAP=False, HAS_WINDOW=False, HAS_SINK=False,
                 BLOCK_Q=bq, BLOCK_N=cfg.block_n if bq else 0, NUM_STAGES=cfg.num_stages if bq else 0,
                 SMALL_Q=sq, SMALL_N=cfg.small_n if sq else 0, SMALL_STAGES=cfg.small_stages if sq else 0,
                 FP8_KV=fp8, DOT_F32=False, FP8_DOT=cfg.fp8_dot, FUSED_MERGE=cfg.merge_chunk if fused else 0,
                 PAGE_VEC=cfg.page_vector, WIDEN_V=cfg.widen_v and fp8, DEAL_TILES=cfg.deals_tiles)
    sig.update({k: "constexpr" for k in const})
    names = list(sig)
    # what the launcher specialises on real tensors: 16-byte aligned pointers, strides divisible by 16
    aligned = list(ptrs) + [s for s in strides if s not in ("stride_oh", "stride_w")]
    attrs = {(names.index(n),): [["tt.divisibility", 16]] for n in aligned}
    src = ASTSource(tk.paged_attention_kernel, sig, const, attrs)
    stages = max(cfg.num_stages if bq else 0, cfg.small_stages if sq else 0)
    options = dict(num_warps=cfg.num_warps, num_stages=max(stages, 1))
    if cfg.max_registers:
        options["maxnreg"] = cfg.max_registers
    return triton.compile(src, target=GPUTarget("cuda", 90, 32), options=options)


def disassemble(kernel) -> str:
    """The kernel's SASS, from the nvdisasm that ships in Triton's NVIDIA backend."""
    import subprocess
    import tempfile

    from mla_aot_report import nvidia_tools

    nvdisasm = nvidia_tools() / "nvdisasm"
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(kernel.asm["cubin"])
        f.flush()
        return subprocess.run([str(nvdisasm), "-c", f.name], capture_output=True, text=True, check=True).stdout


def shared_loads(sass: str) -> dict[str, int]:
    """Shared-memory loads by kind: ``byte`` (LDS.U8: an 8-bit tile gathered a
    value at a time), ``transposing`` (16-bit ldmatrix.trans, LDSM.16.MT88),
    ``matrix`` (ldmatrix), ``other`` (LDS of 16-128 bits)."""
    ops = re.findall(r"\b(LDSM\.16\.MT88|LDSM|LDS\.U8|LDS)\b", sass)
    kinds = {"LDSM.16.MT88": "transposing", "LDSM": "matrix", "LDS.U8": "byte", "LDS": "other"}
    out = dict.fromkeys(kinds.values(), 0)
    for op in ops:
        out[kinds[op]] += 1
    return out


def report(label: str, cfg, fp8: bool, path: str, heads=(32, 8), head=128) -> str:
    from mla_aot_report import ptxas_report

    if head > 128:  # as TritonAttnAdapter.build does
        cfg = replace(cfg, block_n=min(cfg.block_n, 32), small_n=min(cfg.small_n, 32))
    rows, n = (cfg.small_m, cfg.small_n) if path == "decode" else (cfg.block_m, cfg.block_n)
    stages = cfg.small_stages if path == "decode" else cfg.num_stages
    label = (f"{label}: {heads[0]}/{heads[1]} heads x {head}, {rows}x{n} {stages} stages {cfg.num_warps} warps "
             f"{'fp8 ' if fp8 else 'bf16'}")
    try:
        k = compile_config(cfg, fp8, path, heads, head)
    except Exception as e:
        return f"{label}: COMPILE FAILED {type(e).__name__}: {str(e).splitlines()[0][:160]}"
    g = k.asm["ttgir"]
    bufs = sorted(set(re.findall(r"memdesc<(\d+x\d+x\d+)x", g)))
    mma = "wgmma" if "warp_group_dot" in g else "mma.sync"
    waits = re.findall(r"async_wait .*?\{num = (\d+)", g)
    per_sm = 228 * 1024 // max(1, k.metadata.shared + 1024)  # 1 KB reserved per block
    loads = shared_loads(disassemble(k))
    return (f"{label}: shared {k.metadata.shared} B ({per_sm}/SM by smem), buffers {bufs or 'none'}, "
            f"waits leave {waits or '-'} in flight, {mma}, {ptxas_report(k.asm['ptx'])}, "
            f"shared loads {loads['byte']} byte / {loads['transposing']} transposing")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sweep", action="store_true")
    a = ap.parse_args(argv)
    from attn_select.backends.run import triton_attn as ta

    # a decode plan that folds no tail launches without the tile dealing (TritonAttnAdapter.build)
    table = [("decode", replace(ta.DECODE_CONFIG, fold_tail=0), False, "decode"),
             ("decode, a folded plan", ta.DECODE_CONFIG, False, "decode"),
             ("fp8 decode", replace(ta.FP8_DECODE_CONFIG, fold_tail=0), True, "decode"),
             ("fp8 decode, V widened", replace(ta.FP8_DECODE_CONFIG, widen_v=True, fold_tail=0), True, "decode"),
             ("fp8 decode, one-warp programs", ta.FP8_DECODE_ONE_WARP, True, "decode"),
             ("prefill", ta.PREFILL_CONFIG, False, "prefill"), ("fp8 prefill", ta.PREFILL_CONFIG, True, "prefill"),
             ("mixed: decode", ta.MIXED_CONFIG, False, "decode"), ("mixed: prefill", ta.MIXED_CONFIG, False, "prefill")]
    # Llama-3.1-8B, gpt-oss-20b (head 64, 8 heads a KV head), Gemma-2-9B (head 256)
    models = [((32, 8), 128), ((64, 8), 64), ((16, 8), 256)]
    jobs = [(label, cfg, fp8, path, heads, head) for heads, head in models for label, cfg, fp8, path in table]
    if a.sweep:
        import run_triton_sweep as sw

        for kind, fp8 in (("decode", False), ("decode", True), ("prefill", False)):
            jobs += [(f"sweep {kind}", c, fp8, kind, (32, 8), 128) for c in sw.configs(kind, fp8)]
    seen = set()
    for label, cfg, fp8, path, heads, head in jobs:
        key = (ta.kernel_key(cfg, False), fp8, path, heads, head)
        if key in seen:
            continue
        seen.add(key)
        print(report(label, cfg, fp8, path, heads, head), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
