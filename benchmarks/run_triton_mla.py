"""Time our Triton MLA decode kernel (TRITON_MLA) on the H200, with FlashMLA
as the peer when vLLM's build of it imports.

    python3 benchmarks/run_triton_mla.py                        # 16 and 128 heads, 32 x 4096, page 64, bf16
    python3 benchmarks/run_triton_mla.py --kv-cache-dtype auto fp8 --sweep --out $OUT

Each row is checked first (fresh random inputs, poisoned output, float32
latent reference, relative error), then timed: the launches of one step over
several layer caches (together over 1 GiB, so the L2 holds none of them),
captured in a CUDA graph and replayed between CUDA events after the clocks
settle (``harness.time_device``); the median per layer is kept. Bytes are the
latent vectors read once (576 dims per token: K and V are the same memory),
FLOPs 2 x 576 + 2 x 512 per head and key. Targets from issue 12: 16 heads at
least FlashMLA's 2.83 TB/s, 128 heads at least 90% of FlashMLA (470 TFLOP/s
there -> 423).

``--sweep`` also times a short list of other tiles and split counts per
shape (each checked before it is timed) and prints the fastest correct one:
the numbers to put into ``TILES`` / ``choose_splits`` in
backends/run/triton_mla.py.

Every failure is one line (``FAIL what: why``) and the script goes on; the
summary table is printed last; ``--out`` gets the JSON.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from dataclasses import asdict
from pathlib import Path

import torch

from attn_select.backends.run.adapter import RunEnv, quantize_fp8
from attn_select.backends.run.batch import Shape, fill_random_, make_batch
from attn_select.backends.run.harness import copy_ceiling, time_device
from attn_select.backends.run.mla_check import check_mla_decode, random_mla_inputs, write_latents
from attn_select.backends.run.mla_reference import MLAParams, mla_flops, mla_kv_bytes, reference_mla_attention
from attn_select.backends.run.reference import relative_error, tolerance
from attn_select.backends.run.triton_mla import (
    SMEM_LIMIT, MLATiles, TritonMLAAdapter, choose_splits, choose_tiles, smem_bytes,
)

DEEPSEEK_SCALE = 192 ** -0.5 * (0.1 * math.log(40.0) + 1.0) ** 2  # qk_head_dim 192, yarn factor 40, mscale_all_dim 1
FLASHMLA_TBS_16 = 2.83  # issue 12, measured on the H200
FLASHMLA_TFLOPS_128 = 470.0


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:240]


def fail(what: str, e: BaseException) -> dict:
    print(f"FAIL {what}: {one_line(e)}", flush=True)
    return dict(what=what, error=one_line(e))


def _sync(dev) -> None:
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def _layer_caches(alloc, layer_bytes: int, dev) -> list[torch.Tensor]:
    """Enough layer caches that one timed step reads over 1 GiB (2 on the CPU smoke run)."""
    n = max(2, math.ceil((1 << 30) / max(1, layer_bytes))) if dev.type == "cuda" else 2
    caches = []
    for _ in range(n):
        c = alloc()
        fill_random_(c)  # random data: zeros can run faster than real data
        caches.append(c)
    return caches


def _free(dev) -> None:
    if dev.type == "cuda":
        torch.cuda.empty_cache()


def _timed(run_one, caches, dev, seconds: float) -> tuple[float, float, str]:
    """(median us per layer, min us per layer, method)."""
    n = len(caches)

    def step():
        for c in caches:
            run_one(c)

    cuda = dev.type == "cuda"
    t = time_device(step, dev, calls=max(1, 8 // n), samples=50 if cuda else 1, warmup=3 if cuda else 1,
                    max_seconds=seconds, settle_s=0.3 if cuda else 0.0)
    return t.median_us / n, t.min_us / n, t.method


def _figures(us: float, nbytes: int, flops: int, ceiling: float | None) -> dict:
    tbs = nbytes / (us * 1e-6) / 1e12
    return dict(us=round(us, 2), tbs=round(tbs, 3), tflops=round(flops / (us * 1e-6) / 1e12, 1),
                of_copy_ceiling=round(tbs * 1e12 / ceiling, 3) if ceiling else None)


# -- our kernel -------------------------------------------------------------------


def time_ours(batch, p: MLAParams, kv: str, dev, ceiling, seconds: float, tiles: MLATiles | None = None,
              num_splits: int | None = None) -> dict:
    env = RunEnv(dev, torch.cuda.get_device_capability(dev) if dev.type == "cuda" else None, torch.bfloat16, kv)
    ad = TritonMLAAdapter(env, p)
    missing = ad.unavailable()
    if missing:
        raise RuntimeError(missing)
    kw = {k: v for k, v in (("tiles", tiles), ("num_splits", num_splits)) if v is not None}
    chk = check_mla_decode(batch, p, dev, torch.bfloat16, kv, checks=2, seed=1, adapter=ad, **kw)
    plan = ad.build(batch, **kw)
    elem = ad.kv_elem()
    caches = _layer_caches(lambda: ad.alloc_cache(batch.num_pages, batch.page_size),
                           batch.num_pages * batch.page_size * p.latent_dim * elem, dev)
    inp = random_mla_inputs(batch, p, torch.bfloat16, torch.Generator().manual_seed(7))
    out = torch.empty(batch.num_tokens, p.num_heads, p.kv_lora_rank, dtype=torch.bfloat16, device=dev)
    us, us_min, method = _timed(lambda c: ad.run(plan, inp.q, c, None, out), caches, dev, seconds)
    del caches
    _free(dev)
    t = ad._fallback.get(plan.tiles, plan.tiles)
    return dict(backend="TRITON_MLA (ours)", kernel=ad.kernel_name(plan), tiles=asdict(t), splits=plan.num_splits,
                err=max(chk.errors), tol=chk.tolerance, correct=chk.ok, unwritten=chk.unwritten,
                min_us=round(us_min, 2), method=method,
                **_figures(us, mla_kv_bytes(batch, p, elem), mla_flops(batch, p), ceiling))


# -- FlashMLA (vLLM's build), the peer --------------------------------------------------


def flashmla_unavailable() -> str | None:
    try:
        import vllm.third_party.flashmla.flash_mla_interface  # noqa: F401
    except Exception as e:
        return f"vllm.third_party.flashmla not importable ({one_line(e)})"
    return None


def _flashmla_fp8_entry_points():
    """vLLM's dense-fp8 FlashMLA wrappers (vllm/v1/attention/ops/flashmla.py);
    where only the compiled extension was carried (the H200 calls carry
    vLLM's kernels, not its Python tree), the same two calls made on its
    torch ops directly, with the wrappers' argument order."""
    try:
        from vllm.v1.attention.ops.flashmla import flash_mla_with_kvcache_fp8, get_mla_metadata_dense_fp8

        return flash_mla_with_kvcache_fp8, get_mla_metadata_dense_fp8
    except ImportError:
        import vllm._flashmla_extension_C  # noqa: F401  (registers torch.ops._flashmla_extension_C)

    ops = torch.ops._flashmla_extension_C

    def get_mla_metadata_dense_fp8(cache_seqlens, num_q_tokens_per_head_k, num_heads_k):
        return ops.get_mla_decoding_metadata_dense_fp8(cache_seqlens, num_q_tokens_per_head_k, num_heads_k)

    def flash_mla_with_kvcache_fp8(q, k_cache, block_table, cache_seqlens, head_dim_v, tile_scheduler_metadata,
                                   num_splits, softmax_scale=None, causal=False, descale_q=None, descale_k=None):
        return ops.fwd_kvcache_mla_fp8(q, k_cache, head_dim_v, cache_seqlens, block_table, softmax_scale, causal,
                                       tile_scheduler_metadata, num_splits, descale_q, descale_k)

    return flash_mla_with_kvcache_fp8, get_mla_metadata_dense_fp8


def time_flashmla(batch, p: MLAParams, kv: str, dev, ceiling, seconds: float) -> dict:
    """FlashMLA as vLLM's FLASHMLA backend calls it: bf16 through
    ``get_mla_metadata`` + ``flash_mla_with_kvcache`` (the scheduler metadata
    is made by the first call and reused); fp8 through vLLM's dense-fp8
    extension with an fp8 query (``get_mla_metadata_dense_fp8`` +
    ``flash_mla_with_kvcache_fp8``, descale_q = 1, descale_k = kv_scale)."""
    fp8 = kv.startswith("fp8")
    b, h, d = batch.num_requests, p.num_heads, p.latent_dim
    cdt = torch.float8_e4m3fn if fp8 else torch.bfloat16
    bt, sl = batch.block_table, batch.seq_lens
    kv_scale = torch.tensor([p.kv_scale], dtype=torch.float32, device=dev)
    one = torch.ones(1, dtype=torch.float32, device=dev)
    if fp8:
        flash_mla_with_kvcache_fp8, get_mla_metadata_dense_fp8 = _flashmla_fp8_entry_points()
        sched, splits = get_mla_metadata_dense_fp8(sl, h, 1)

        def call(q, cache):
            q8 = q if q.dtype == cdt else quantize_fp8(q, cdt, 1.0)
            return flash_mla_with_kvcache_fp8(q8.view(b, 1, h, d), cache.unsqueeze(-2), bt, sl, p.kv_lora_rank,
                                              sched, splits, softmax_scale=p.scale, causal=True,
                                              descale_q=one, descale_k=kv_scale)[0]
    else:
        from vllm.third_party.flashmla.flash_mla_interface import flash_mla_with_kvcache, get_mla_metadata

        sched, _ = get_mla_metadata(sl, h, 1, is_fp8_kvcache=False)

        def call(q, cache):
            return flash_mla_with_kvcache(q.view(b, 1, h, d), cache.unsqueeze(-2), bt, sl, p.kv_lora_rank, sched,
                                          softmax_scale=p.scale, causal=True, is_fp8_kvcache=False)[0]

    # check: the same cache and reference as ours
    errs = []
    for c in range(2):
        gen = torch.Generator().manual_seed(100 + c)
        cache = fill_random_(torch.empty(batch.num_pages, batch.page_size, d, dtype=cdt, device=dev), gen)
        inp = random_mla_inputs(batch, p, torch.bfloat16, gen)
        write_latents(cache, batch, inp.latent_new, p.kv_scale)
        q = quantize_fp8(inp.q, cdt, 1.0) if fp8 else inp.q
        o = call(q, cache).reshape(b, h, p.kv_lora_rank)
        _sync(dev)
        ref = reference_mla_attention(q.to(torch.bfloat16) if fp8 else q, cache, batch, p)
        errs.append(relative_error(o, ref))
    caches = _layer_caches(lambda: torch.empty(batch.num_pages, batch.page_size, d, dtype=cdt, device=dev),
                           batch.num_pages * batch.page_size * d * cdt.itemsize, dev)
    q = quantize_fp8(inp.q, cdt, 1.0) if fp8 else inp.q
    us, us_min, method = _timed(lambda c: call(q, c), caches, dev, seconds)
    del caches
    _free(dev)
    tol = tolerance("bfloat16", kv)
    return dict(backend="FLASHMLA (vLLM)", kernel="flash_mla_with_kvcache" + ("_fp8" if fp8 else ""),
                err=max(errs), tol=tol, correct=max(errs) <= tol, min_us=round(us_min, 2), method=method,
                **_figures(us, mla_kv_bytes(batch, p, cdt.itemsize), mla_flops(batch, p), ceiling))


# -- FLASH_ATTN_MLA (vLLM's FA3 build), the second peer ------------------------------


def time_fa_mla(batch, p: MLAParams, kv: str, dev, ceiling, seconds: float) -> dict:
    """vLLM's FLASH_ATTN_MLA through our adapter (its builder's metadata made
    once, FA3's separate value input), checked like ours, then timed."""
    from attn_select.backends.run.flashattn_mla import FlashAttnMLAAdapter

    env = RunEnv(dev, torch.cuda.get_device_capability(dev) if dev.type == "cuda" else None, torch.bfloat16, kv)
    ad = FlashAttnMLAAdapter(env, p)
    missing = ad.unavailable()
    if missing:
        raise RuntimeError(missing)
    chk = check_mla_decode(batch, p, dev, torch.bfloat16, kv, checks=2, seed=1, adapter=ad)
    plan = ad.build(batch)
    caches = _layer_caches(lambda: ad.alloc_cache(batch.num_pages, batch.page_size),
                           batch.num_pages * batch.page_size * p.latent_dim * 2, dev)
    inp = random_mla_inputs(batch, p, torch.bfloat16, torch.Generator().manual_seed(7))
    out = torch.empty(batch.num_tokens, p.num_heads, p.kv_lora_rank, dtype=torch.bfloat16, device=dev)
    us, us_min, method = _timed(lambda c: ad.run(plan, inp.q, c, None, out), caches, dev, seconds)
    del caches
    _free(dev)
    return dict(backend="FLASH_ATTN_MLA (vLLM)", kernel=ad.kernel_name(plan), err=max(chk.errors),
                tol=chk.tolerance, correct=chk.ok, min_us=round(us_min, 2), method=method,
                **_figures(us, mla_kv_bytes(batch, p, 2), mla_flops(batch, p), ceiling))


# -- the sweep --------------------------------------------------------------------


def sweep_variants(num_heads: int, kv_elem: int) -> list[MLATiles]:
    """A short list around the table's choice (the table's entry first), each
    compiled ahead of time for sm_90 with Triton 3.6 by
    benchmarks/mla_aot_report.py --sweep (pipelined, within shared memory
    by ``smem_bytes``; spills are noted); the adapter falls back if this
    GPU's compiler disagrees. (block_h, block_n, num_stages, num_warps,
    programs per SM, value loaded apart.)"""
    if num_heads <= 16 and kv_elem == 2:
        shapes = [(16, 64, 5, 8, 1, False), (16, 32, 5, 4, 2, False), (16, 32, 7, 4, 1, False),
                  (16, 32, 5, 8, 2, False), (16, 16, 7, 4, 3, False)]
    elif num_heads <= 16:
        shapes = [(16, 32, 5, 4, 2, True), (16, 64, 7, 8, 1, True), (16, 32, 9, 4, 1, True),
                  (16, 32, 9, 8, 1, True), (16, 64, 5, 8, 1, True)]
    elif kv_elem == 2:
        # the last two: keys-major scores (each computed once, on mma.sync: the sm_90 compile has 72
        # HMMA a warp a 32-key tile, against the head-major form's 72 HGMMA 64x16 a warpgroup, both
        # warpgroups the same), dims-major output on wgmma
        shapes = [(64, 32, 7, 8, 1, False), (64, 32, 5, 8, 1, False), (64, 64, 3, 8, 1, False),
                  (64, 64, 1, 8, 1, False), (64, 32, 3, 8, 1, False), (64, 32, 7, 8, 1, False, True),
                  (64, 32, 9, 8, 1, False, True)]
    else:
        shapes = [(64, 64, 5, 8, 1, False), (64, 64, 3, 8, 1, False), (64, 32, 7, 8, 1, False),
                  (64, 32, 9, 8, 1, False), (64, 32, 5, 8, 1, False)]
    out = []
    for bh, bn, st, w, ctas, sv, *tr in shapes:
        t = MLATiles(bh, bn, st, w, ctas, 256, split_v=sv, transposed=bool(tr and tr[0]))
        if smem_bytes(t, 576, kv_elem) <= SMEM_LIMIT:
            out.append(t)
    return out


def sweep_jobs(num_heads: int, kv: str, batch_size: int, max_seq_len: int, sms: int) -> list[tuple[MLATiles, int]]:
    """(tiles, splits) to time: each variant at the split rule's count, the
    table's entry (the first) also at half that where the rule splits more
    than twice (fewer partials to merge, against fuller SMs)."""
    jobs = []
    for i, t in enumerate(sweep_variants(num_heads, 1 if kv.startswith("fp8") else 2)):
        groups = -(-num_heads // t.block_h)
        rule = choose_splits(batch_size, groups, max_seq_len, t, sms)
        for ns in ([rule, rule // 2] if i == 0 and rule > 2 else [rule]):
            jobs.append((t, ns))
    return jobs


def _tiles_label(t: MLATiles) -> str:
    return (f"{t.block_h}x{t.block_n} st{t.num_stages} w{t.num_warps}"
            f"{' splitV' if t.split_v else ''}{' transposed' if t.transposed else ''}")


def run_sweep(batch, p, kv, dev, ceiling, seconds, deadline: float) -> list[dict]:
    rows = []
    sms = TritonMLAAdapter(RunEnv(dev, None, torch.bfloat16, kv), p).sm_count
    for t, ns in sweep_jobs(p.num_heads, kv, batch.num_requests, batch.max_seq_len, sms):
        if time.time() > deadline:
            print(f"FAIL sweep {p.num_heads} heads {kv}: out of time, {len(rows)} variants done", flush=True)
            return rows
        what = f"sweep {p.num_heads} heads {kv} tiles {_tiles_label(t)} splits {ns}"
        try:
            r = time_ours(batch, p, kv, dev, ceiling, seconds, tiles=t, num_splits=ns)
            r.update(what=what)
            log(f"{what}: {r['us']} us {r['tbs']} TB/s {r['tflops']} TFLOP/s err {r['err']:.1e}")
            rows.append(r)
        except Exception as e:
            rows.append(fail(what, e))
    return rows


# -- compiling ahead, in parallel --------------------------------------------------


def _shape_of(h: int, kv: str, a) -> tuple[MLAParams, object]:
    p = MLAParams(h, 512, 64, DEEPSEEK_SCALE, kv_scale=a.kv_scale if kv.startswith("fp8") else 1.0)
    batch = make_batch(Shape("decode", decodes=a.batch, decode_context=a.context), a.page, torch.device("cuda"),
                       seed=3, spare_pages=64)
    return p, batch


def _compile_one(job) -> str:
    """In a worker process: one launch of a (shape, tiles, splits), so that
    Triton compiles it into the shared cache (TRITON_CACHE_DIR) with the same
    specialisation the timed run will ask for."""
    h, kv, ns, tiles, a = job
    t0 = time.time()
    try:
        p, batch = _shape_of(h, kv, a)
        dev = torch.device("cuda")
        env = RunEnv(dev, torch.cuda.get_device_capability(dev), torch.bfloat16, kv)
        ad = TritonMLAAdapter(env, p)
        check_mla_decode(batch, p, dev, torch.bfloat16, kv, checks=1, seed=1, adapter=ad, tiles=tiles, num_splits=ns)
        return f"compiled {h} heads {kv} {_tiles_label(tiles)} splits {ns}: {time.time() - t0:.1f} s"
    except Exception as e:
        return f"compile {h} heads {kv} {_tiles_label(tiles)} splits {ns} failed: {one_line(e)}"


def precompile(a, workers: int) -> None:
    """Compile every launch this run will time, ``workers`` processes at a
    time (each compile is single-threaded and takes seconds; the device
    machine has the cores, and its time is what the lease counts)."""
    import concurrent.futures
    import multiprocessing

    jobs = []
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for kv in a.kv_cache_dtype:
        for h in a.heads:
            table = choose_tiles(h, 1 if kv.startswith("fp8") else 2)
            wanted = [(table, choose_splits(a.batch, -(-h // table.block_h), a.context + 1, table, sms))]
            if a.sweep:
                wanted += sweep_jobs(h, kv, a.batch, a.context + 1, sms)
            for t, ns in dict.fromkeys(wanted):  # the table's launch is usually the sweep's first
                jobs.append((h, kv, ns, t, a))
    t0 = time.time()
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers,
                                                mp_context=multiprocessing.get_context("spawn")) as ex:
        for msg in ex.map(_compile_one, jobs):
            log(msg)
    log(f"precompiled {len(jobs)} launches in {time.time() - t0:.1f} s")


# -- main -----------------------------------------------------------------------


def peer_row(label: str, timer, timed: tuple, mine: dict | None) -> dict:
    """One peer's row on the same batch (``timed``: ``timer``'s arguments), with its speed
    against ours, or the failure."""
    try:
        peer = timer(*timed)
    except Exception as e:
        return fail(label, e)
    if mine is not None:
        peer["ours_over_peer_speed"] = round(peer["us"] / mine["us"], 3)
    log(f"{label}: {peer['us']} us {peer['tbs']} TB/s {peer['tflops']} TFLOP/s err {peer['err']:.1e}")
    return peer


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--heads", type=int, nargs="+", default=[16, 128])
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--context", type=int, default=4096)
    ap.add_argument("--page", type=int, default=64)
    ap.add_argument("--kv-cache-dtype", nargs="+", default=["auto"], choices=["auto", "fp8", "fp8_e4m3"])
    ap.add_argument("--kv-scale", type=float, default=1.0, help="per-tensor fp8 scale (vLLM's layer._k_scale)")
    ap.add_argument("--seconds", type=float, default=1.0, help="device time spent timing one row")
    ap.add_argument("--sweep", action="store_true", help="also time other tiles / split counts")
    ap.add_argument("--max-seconds", type=float, default=540.0, help="stop sweeping after this long")
    ap.add_argument("--no-peer", action="store_true", help="skip both peers")
    ap.add_argument("--no-flashmla", action="store_true", help="skip FlashMLA (it takes page 64 only)")
    ap.add_argument("--precompile", type=int, default=0, metavar="N",
                    help="compile every launch first in N parallel processes (GPU only)")
    ap.add_argument("--out", default=os.environ.get("OUT", ""), help="directory for mla_bench.json")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                    help="cpu: a smoke run of this script under TRITON_INTERPRET=1 (tiny shapes; times mean nothing)")
    a = ap.parse_args(argv)
    t_end = time.time() + a.max_seconds
    if a.device == "cuda" and not torch.cuda.is_available():
        print("no CUDA device: this benchmark times the kernel on a GPU (tests/ check it on CPU)")
        return 2
    if a.device == "cpu" and os.environ.get("TRITON_INTERPRET") != "1":
        print("--device cpu needs TRITON_INTERPRET=1 in the environment")
        return 2
    dev = torch.device(a.device)
    import triton

    cuda = dev.type == "cuda"
    head = dict(device=torch.cuda.get_device_name(dev) if cuda else "cpu (Triton interpreter)",
                capability=torch.cuda.get_device_capability(dev) if cuda else None,
                torch=torch.__version__, triton=triton.__version__)
    try:
        import vllm

        # the device pack's stand-in vllm package (pack-vllm-kernels.sh) has kernels, no version
        head["vllm"] = getattr(vllm, "__version__", "kernels only (no version: the device pack's stand-in)")
    except Exception as e:
        head["vllm"] = f"not importable ({type(e).__name__})"
    ceiling = None
    if cuda:
        try:
            ceiling = copy_ceiling(dev)
            head["copy_ceiling_tbs"] = round(ceiling / 1e12, 3)
        except Exception as e:
            fail("copy ceiling", e)
    from attn_select.backends.run import mla_kernel

    head["kernel_source"] = mla_kernel.__file__  # which checkout's kernel ran
    log(json.dumps(head))
    if cuda and a.precompile > 0:
        precompile(a, a.precompile)
    peer_missing = None if not (a.no_peer or a.no_flashmla) else "skipped (--no-peer / --no-flashmla)"
    if peer_missing is None:
        peer_missing = flashmla_unavailable()
    if peer_missing:
        print(f"FAIL FlashMLA peer: {peer_missing}", flush=True)

    rows, sweeps = [], []
    for kv in a.kv_cache_dtype:
        for h in a.heads:
            try:
                p = MLAParams(h, 512, 64, DEEPSEEK_SCALE, kv_scale=a.kv_scale if kv.startswith("fp8") else 1.0)
                batch = make_batch(Shape("decode", decodes=a.batch, decode_context=a.context), a.page, dev, seed=3,
                                   spare_pages=64)  # the same batch as _shape_of's (precompiled launches)
            except Exception as e:
                rows.append(fail(f"{h} heads {kv}: batch", e))
                continue
            shape = dict(heads=h, kv=kv, batch=a.batch, context=a.context, page=a.page)
            mine = None
            try:
                mine = time_ours(batch, p, kv, dev, ceiling, a.seconds)
                rows.append({**shape, **mine})
                log(f"ours {h} heads {kv}: {mine['us']} us {mine['tbs']} TB/s {mine['tflops']} TFLOP/s "
                    f"err {mine['err']:.1e} ({mine['kernel']})")
            except Exception as e:
                rows.append({**shape, **fail(f"TRITON_MLA {h} heads {kv}", e)})
            timed = (batch, p, kv, dev, ceiling, a.seconds)
            if not peer_missing:
                rows.append({**shape, **peer_row(f"FlashMLA {h} heads {kv}", time_flashmla, timed, mine)})
            # vLLM's FA3 MLA path takes no fp8 cache; on the CPU smoke run it has no
            # call path to show (its fakes are tests/backends/run/test_mla_vendor_fakes.py)
            if cuda and not a.no_peer and not kv.startswith("fp8"):
                rows.append({**shape, **peer_row(f"FLASH_ATTN_MLA {h} heads {kv}", time_fa_mla, timed, mine)})
            if a.sweep:
                for r in run_sweep(batch, p, kv, dev, ceiling, a.seconds, t_end):
                    sweeps.append({**shape, **r})
            del batch
            _free(dev)

    if a.out:
        try:
            Path(a.out).mkdir(parents=True, exist_ok=True)
            (Path(a.out) / "mla_bench.json").write_text(json.dumps(dict(head=head, rows=rows, sweep=sweeps), indent=1))
        except Exception as e:
            fail("writing the JSON", e)
    _print_table(head, rows, sweeps)
    return 0


def _print_table(head: dict, rows: list[dict], sweeps: list[dict]) -> None:
    print(f"\n{head.get('device')} sm {head.get('capability')} torch {head.get('torch')} triton {head.get('triton')} "
          f"vllm {head.get('vllm')} copy ceiling {head.get('copy_ceiling_tbs')} TB/s")
    print(f"{'heads':>5} {'kv':>5} {'backend':<18} {'us':>8} {'TB/s':>6} {'TFLOP/s':>8} {'err':>8} ok  vs peer  target")
    for r in rows:
        if "error" in r:
            print(f"{r.get('heads', ''):>5} {r.get('kv', ''):>5} FAILED: {r['error']}")
            continue
        target = ""
        if r["backend"].startswith("TRITON"):
            target = (f"TB/s >= {FLASHMLA_TBS_16}" if r["heads"] <= 16 else
                      f"TFLOP/s >= {0.9 * FLASHMLA_TFLOPS_128:.0f}")
            met = r["tbs"] >= FLASHMLA_TBS_16 if r["heads"] <= 16 else r["tflops"] >= 0.9 * FLASHMLA_TFLOPS_128
            target += " met" if met else " missed"
        ratio = r.get("ours_over_peer_speed")
        print(f"{r['heads']:>5} {r['kv']:>5} {r['backend']:<18} {r['us']:>8.1f} {r['tbs']:>6.2f} {r['tflops']:>8.1f} "
              f"{r['err']:>8.1e} {'y' if r['correct'] else 'N':>2}  {('ours ' + format(ratio, '.2f') + 'x') if ratio else '':>8}"
              f"  {target}")
    ok = [s for s in sweeps if "us" in s and s.get("correct")]
    for key in sorted({(s["heads"], s["kv"]) for s in ok}):
        best = min((s for s in ok if (s["heads"], s["kv"]) == key), key=lambda s: s["us"])
        print(f"best swept {key[0]} heads {key[1]}: {MLATiles(**best['tiles'])} "
              f"splits {best['splits']}: {best['us']} us {best['tbs']} TB/s {best['tflops']} TFLOP/s")


if __name__ == "__main__":
    sys.exit(main())
