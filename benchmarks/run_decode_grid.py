"""Issue 13's decode sweep in one process: our Triton decode (TRITON_ATTN)
beside vLLM's FA3 and FlashInfer's XQA and tensor-core ("native") decode, on
the same shapes, over batch 1, 8, 32, 128, 256 x context 512, 4096, 32768 x
page 16, 64 x GQA 4 (32 q / 8 KV heads) and 8 (8 q / 1 KV head, a 70B model
at tp 8) x head 64, 128, 256, bf16.

    python3 benchmarks/run_decode_grid.py --phase warm --part 0/16   # JIT / compile, parallel
    python3 benchmarks/run_decode_grid.py --phase sweep --tag run1 --out $OUT

The peers are the rows ``attn-select run`` makes for a Llama-architecture
model with those heads (a config.json written for each), so each runs as
vLLM runs it (FA3 with its builder's scheduler metadata, FlashInfer's decode
as vLLM's builder dispatches it). Ours: the table's entry (what ``run``
launches) and variants of its split policy, merge and block-table reads
(``variants``), each timed only where its launch differs from one timed
already. Every row is checked once first
(fresh random inputs, NaN-poisoned output, against the float32 reference),
then timed: one layer's launches over enough distinct layer caches that a
step reads over 1 GiB (the L2 holds none of it), in a CUDA graph, median per
layer (``harness.time_device``).

A point is measured when 32 such layers' caches fit in 128 GiB (one layer at
most 4 GiB): the shapes a deployment on one H200 can hold.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from dataclasses import asdict, replace
from pathlib import Path

GQA = ((32, 8), (8, 1))
HEADS = (128, 64, 256)  # 128 first: the Llama shapes, where the table was chosen
PAGES = (16, 64)
BATCHES = (1, 8, 32, 128, 256)
CONTEXTS = (512, 4096, 32768)
LAYER_CAP = 4 << 30
PEERS = ("FLASH_ATTN", "FLASHINFER")
OURS = "TRITON_ATTN"
ONLY: frozenset[str] | None = None  # --variants: the labels timed beside the table (None: all)


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def points(heads=HEADS, gqa=GQA, pages=PAGES, batches=BATCHES, contexts=CONTEXTS, cap=LAYER_CAP):
    """(q heads, KV heads, head size, page, batch, context) of the grid, capped."""
    out = []
    for head in heads:
        for q, kv in gqa:
            for page in pages:
                for b in batches:
                    for ctx in contexts:
                        if b * ctx * kv * head * 2 * 2 <= cap:  # K and V, 2 bytes
                            out.append((q, kv, head, page, b, ctx))
    return out


# programs an SM of the decode entry's kernel by head size, from its sm_90 compile with Triton 3.6
# (benchmarks/triton_attn_aot_report.py), before the page vector: head 64 96 registers and 37 KB of
# shared memory (5), head 128 160 registers and 72 KB (3), head 256 189 registers (2: the table's 3
# overfilled the wave). With the page vector head 256 takes 128-168 registers (3 fit), yet the grid of
# 2026-12-02 measured 2 an SM (without it) faster at page 64: this variant keeps asking
SLOTS_PER_SM = {64: 5, 128: 3, 256: 2}


def _one_warp(T, head: int, split_tokens: int):
    """The decode entry as programs of one warp (two at head 256), 32-key tiles, 3 stages, up to 8 an SM,
    cut into ``split_tokens``-key splits, merged by the merge kernel (tens of splits)."""
    return replace(T, num_warps=2 if head > 128 else 1, small_n=32, small_stages=3, target_programs=132 * 8,
                   min_split_tokens=split_tokens, fused_merge_max=0, short_split_tokens=0, max_registers=0)


def variants(fp8: bool = False, head: int = 128, only: frozenset[str] | None = None):
    """Our split policy and merge around the table's decode entry: (label, config); ``only``: these
    labels alone (``--variants``)."""
    every = _variants(fp8, head)
    return every if only is None else [(label, c) for label, c in every if label in only]


def _variants(fp8: bool, head: int):
    from attn_select.backends.run.triton_attn import DECODE_CONFIG, FP8_DECODE_CONFIG

    T = FP8_DECODE_CONFIG if fp8 else DECODE_CONFIG

    # the table's split policy without its short-context rule; in-kernel merges for any split count
    base = replace(T, short_split_tokens=0)
    always = replace(base, fused_merge_max=1 << 30)
    return [
        # a decode's last split of at most a quarter split's keys folded into the others, the kernel
        # dealing the tiles out evenly (1 x 512 + 1: 4 splits of 128 keys, not 5 with one of 1 key):
        # never, and at any program count (the bf16 table folds past 132 split programs)
        ("tail unfolded", replace(T, fold_tail=0)),
        ("folded tail", replace(T, fold_tail=4, fold_programs=0)),
        ("two launches", replace(base, fused_merge_max=0)),
        # finer splits at any context (the table's merge rule: in-kernel up to 5 splits of head 128, else a
        # second launch): where the plan leaves SMs idle, a step lasts as long as its longest program
        ("128-key splits", replace(T, min_split_tokens=128, short_split_tokens=0, few_programs=0)),
        ("64-key splits", replace(T, min_split_tokens=64, short_split_tokens=0, few_programs=0)),
        # the bf16 table without its cut of plans that leave most SMs idle (the table before 2026-12-07);
        # fp8's four-warp entry as it was is "page vector" and "widened V" below (given, no one-warp rule)
        *([("no few-program cut", replace(T, few_programs=0))] if not fp8 else []),
        ("in-kernel merge", always),
        ("in-kernel, 128-key splits", replace(always, min_split_tokens=128)),
        ("in-kernel, 512-key splits", replace(always, min_split_tokens=512)),
        ("in-kernel, two waves", replace(always, target_programs=2 * T.target_programs)),
        ("unsplit", replace(base, target_programs=1)),
        ("in-kernel, 4 splits a step", replace(T, fused_merge_max=1 << 30, merge_chunk=4)),
        ("slots by occupancy", replace(T, target_programs=132 * SLOTS_PER_SM.get(head, 3))),
        # block table read once a page, not once a key: the key loop's sm_90 code 650 -> 420
        # instructions a 64-key tile (bf16, page 16), 1358 -> 1139 (fp8, 128 keys)
        # (on in the table since the grid of 2026-12-02: these two are then the table's launches, timed once)
        ("page vector", replace(T, page_vector=True)),
        ("page vector, 4 splits a step", replace(T, page_vector=True, fused_merge_max=1 << 30, merge_chunk=4)),
        # fp8: the register cap on and off, whichever the table has
        *([(f"in-kernel, {'no' if T.max_registers else '168'} register cap",
            replace(always, max_registers=0 if T.max_registers else 168))] if fp8 else []),
        # programs of eight warps on the entry's tiles: the warps share a tile's keys (each takes 8 of a
        # 64-key tile's score columns and 16 of the value columns), so a thread holds half the accumulator
        # (sm_90 compile under Triton 3.9, 32 / 8 heads: head 128 142 -> 80 registers, head 256 168 -> 124)
        # and an SM keeps 24 warps in flight where four-warp programs keep 12 (XQA: 23.4 at fp8 32 x 512).
        # Measured (2026-12-07, H100, BENCHMARKS.md "Eight-warp programs"): slower than the table on all 42
        # points asked, bf16 by 1-17 %, fp8 by 5-95 % (the row maxima and sums cross warps through shared memory)
        ("eight-warp programs", replace(T, num_warps=8, max_registers=0)),
        # programs of one warp (two at head 256, where one spills): a tile's keys and its softmax in one
        # warp, so no barrier between warps in the key loop (9 -> 2 a tile in the sm_90 compile) and 25-30 %
        # fewer instructions a key over the program, each program slower: for the batches that leave SMs idle,
        # cut into up to 8 programs an SM (215 registers, 21 KB at 32-key tiles and 3 stages)
        ("one-warp programs", _one_warp(T, head, 64)),
        ("one-warp programs, 128-key splits", _one_warp(T, head, 128)),
        *([("one-warp programs, widened V", replace(_one_warp(T, head, 64), widen_v=True))] if fp8 else []),
        # fp8: V widened to fp16 where it is loaded, so the P.V operand is not gathered byte by byte (the
        # sm_90 key loop 35-40 % shorter at heads 64-256; more shared memory: 64-key tiles keep 4 an SM)
        *([("widened V", replace(T, widen_v=True)),
           ("widened V, 64-key tiles", replace(T, widen_v=True, small_n=64)),
           ("widened V, 4 stages", replace(T, widen_v=True, small_stages=4)),
           # with the page vector too: 743 instructions a 128-key tile, 425 a 64-key one
           ("widened V, page vector", replace(T, widen_v=True, page_vector=True)),
           ("widened V, page vector, 64-key tiles", replace(T, widen_v=True, page_vector=True, small_n=64)),
           # fp8 on short contexts (63-67 % of XQA at 512 keys, where fp8 runs slower than bf16's entry on the
           # same plan: 9.1 against 7.7 us at 1 x 512): bf16's decode entry as it is (16x64 tiles, 4 warps, its
           # split rules, the few-program cut) with V widened; one-warp programs merging in-kernel 8 splits a
           # step instead of a second launch; and two-warp programs of 64-key tiles between the two entries
           ("bf16's entry, widened V", replace(DECODE_CONFIG, widen_v=True, max_registers=168)),
           # (the sm_90 compile under Triton 3.6: 163 registers; 255 and no spill with the merge split by split,
           # 2.4 KB spilled merging 8 a step; 168 capped, 39 KB of shared memory: 5 programs an SM)
           # bf16's entry (the table's on steps of few keys) cut finer, merged in-kernel: shorter programs
           # for the short fp8 steps still below XQA (8 x 512: 2 splits, 128 programs). Measured (2026-12-07,
           # H100): slower everywhere they ran (8 x 512 in 4 splits 12.57 against 11.64 us)
           ("bf16's entry, widened V, 128-key splits", replace(DECODE_CONFIG, widen_v=True, max_registers=168,
                                                              min_split_tokens=128, short_split_tokens=0,
                                                              few_programs=0, fused_merge_max=1 << 30)),
           ("bf16's entry, widened V, 64-key splits", replace(DECODE_CONFIG, widen_v=True, max_registers=168,
                                                             min_split_tokens=64, short_split_tokens=0,
                                                             few_programs=0, fused_merge_max=1 << 30, merge_chunk=4)),
           ("eight-warp programs, widened V", replace(T, widen_v=True, num_warps=8, max_registers=0)),
           ("bf16's entry, eight warps, widened V", replace(DECODE_CONFIG, widen_v=True, num_warps=8)),
           ("one-warp programs, widened V, in-kernel merge", replace(_one_warp(T, head, 64), widen_v=True,
                                                                     fused_merge_max=1 << 30)),
           ("two-warp programs, widened V", replace(T, num_warps=2, small_n=64, small_stages=3, widen_v=True,
                                                    target_programs=132 * 5, min_split_tokens=64,
                                                    fused_merge_max=0, short_split_tokens=0, max_registers=168))]
          if fp8 else []),
    ]


def model_dir(root: Path, q: int, kv: int, head: int) -> Path:
    """A Llama-architecture config.json with these heads (what the selector reads)."""
    d = root / f"llama-{q}q-{kv}kv-h{head}"
    d.mkdir(parents=True, exist_ok=True)
    cfg = dict(architectures=["LlamaForCausalLM"], model_type="llama", hidden_size=q * head,
               num_attention_heads=q, num_key_value_heads=kv, head_dim=head, num_hidden_layers=32,
               intermediate_size=4 * q * head, vocab_size=32000, max_position_embeddings=65536,
               rms_norm_eps=1e-5, rope_theta=500000.0, torch_dtype="bfloat16")
    (d / "config.json").write_text(json.dumps(cfg))
    return d


def plan_rows(root: Path, q: int, kv: int, head: int, page: int, shapes, device: str, kv_dtype: str = "auto"):
    """{(batch, context): [RowPlan]} and the group plan: TRITON_ATTN, FLASH_ATTN,
    FLASHINFER (and its native decode variant) as ``attn-select run`` plans them."""
    from attn_select.cli.run import run_target
    from attn_select.selector.explain import explain
    from attn_select.selector.overrides import Overrides
    from attn_select.selector.profiles import load_model
    from attn_select.selector.run_plan import Shape, plan_run

    sdev, _, kern = run_target(device, None)
    facts = load_model(str(model_dir(root, q, kv, head)), tp=1, dtype="auto", capability=sdev.capability)
    ov = Overrides(dtype=None, kv_cache_dtype=None if kv_dtype == "auto" else kv_dtype, block_size=page,
                   backend=None, tp=1)
    exp = explain(facts, sdev, kern, ov)
    sh = [Shape("decode", decodes=b, decode_context=c) for b, c in shapes]
    plan = plan_run(exp, facts.dtype, kv_dtype, sh, page, (OURS, *PEERS))
    (g,) = plan.groups
    return {(sp.shape.decodes, sp.shape.decode_context): sp.rows for sp in g.shapes}, g, plan.dtype


class Point:
    """One shape: its batch, the float32 check and the timed caches, per adapter."""

    def __init__(self, g, batch, env, seconds: float, seed: int):
        from attn_select.backends.run.layer_kind import layer_kind

        self.kind = layer_kind(g)
        self.batch, self.env, self.seconds, self.seed = batch, env, seconds, seed

    def measure(self, adapter, build, settle: float) -> dict:
        import torch

        from attn_select.backends.run.batch import fill_random_
        from attn_select.backends.run.harness import time_device
        from attn_select.backends.run.reference import relative_error, tolerance
        from attn_select.backends.run.runner import _sync

        b, kind, env, dev = self.batch, self.kind, self.env, self.env.device
        gen = torch.Generator().manual_seed(self.seed)
        cache = adapter.alloc_cache(b.num_pages, b.page_size)
        fill_random_(cache, gen)
        inp = kind.inputs(b, env.dtype, gen)
        kind.write(adapter, cache, b, inp)
        out = kind.output(b, env.dtype, dev, float("nan"))
        plan = build()
        kind.run(adapter, plan, inp, cache, out)
        _sync(dev)
        unwritten = int(torch.isnan(out).sum())
        err = relative_error(out, kind.reference(adapter, cache, b, inp))
        row = dict(err=err, unwritten=unwritten, kernel=adapter.kernel_name(plan))
        del cache
        if unwritten or err > tolerance(str(env.dtype).removeprefix("torch."), env.kv_cache_dtype):
            row["wrong"] = True
            return row
        elem = torch.empty(0, dtype=adapter.cache_torch_dtype()).element_size()
        n = max(2, math.ceil((1 << 30) / max(1, kind.layer_bytes(b, elem)))) if dev.type == "cuda" else 1
        caches = []
        for _ in range(n):
            c = adapter.alloc_cache(b.num_pages, b.page_size)
            fill_random_(c)
            caches.append(c)

        def step():
            for c in caches:
                kind.run(adapter, plan, inp, c, out)

        t = time_device(step, dev, calls=max(1, 8 // n), samples=50, warmup=2, max_seconds=self.seconds,
                        settle_s=settle)
        us = t.median_us / n
        row.update(us=round(us, 2), min_us=round(t.min_us / n, 2),
                   tbs=round(kind.kv_bytes(b, elem) / us / 1e6, 3), method=t.method)
        return row


def run_point(rows, g, batch, env, seconds: float, seed: int, ours: bool = True, peers: bool = True) -> list[dict]:
    """Every row of one point: the table's entry and the variants (deduplicated
    by their launches), then the peers."""
    from attn_select.backends.run.runner import _free, load_adapter, one_line

    pt = Point(g, batch, env, seconds, seed)
    out, launched = [], []
    settle = 0.3
    for r in rows:
        if r.backend == OURS and not ours or r.backend != OURS and not peers:
            continue
        label = r.backend + (f" ({r.variant})" if r.variant else "")
        if r.skip is not None:
            out.append(dict(row=label, reason=r.skip))
            continue
        try:
            ad = load_adapter(r, env, pt.kind.p)
            missing = ad.unavailable()
        except Exception as e:
            out.append(dict(row=label, reason=f"adapter failed to load: {one_line(e)}"))
            continue
        if missing:
            out.append(dict(row=label, reason=missing))
            continue
        cfgs = [("table", None)] + (variants(env.kv_cache_dtype != "auto", pt.kind.p.head_size, ONLY)
                                    if r.backend == OURS else [])
        for name, cfg in cfgs:
            lab = label if cfg is None else f"{OURS} [{name}]"
            res = dict(row=lab)
            try:
                if r.backend == OURS:
                    probe = ad.build(batch, cfg)
                    same = [x for x, (w, f, c) in launched if _same_launch(probe, w, f, c)]
                    if same:
                        out.append(dict(row=lab, same_as=same[0]))
                        continue
                    launched.append((lab, (probe.work, probe.counters is not None, probe.cfg)))
                    res["cfg"] = asdict(probe.cfg)
                    res["splits"] = probe.max_splits
                    res.update(pt.measure(ad, (lambda c=cfg: ad.build(batch, c)), settle))
                else:
                    res.update(pt.measure(ad, lambda: ad.build(batch), settle))
                settle = 0.05
            except Exception as e:
                res["error"] = one_line(e)
            out.append(res)
        ad.close()
        _free(env.device)
    return out


def _same_launch(plan, work, fused, cfg) -> bool:
    import torch

    from attn_select.backends.run.triton_attn import kernel_key

    mine = plan.counters is not None
    return (mine == fused and kernel_key(plan.cfg, mine) == kernel_key(cfg, fused)
            and plan.work.shape == work.shape and bool(torch.equal(plan.work, work)))


def grouped(pts):
    """The points per (q, kv, head, page): one plan each."""
    out: dict[tuple, list] = {}
    for q, kv, head, page, b, ctx in pts:
        out.setdefault((q, kv, head, page), []).append((b, ctx))
    return out


def phase_sweep(out: Path, device: str, tag: str, seconds: float, max_seconds: float, pts=None,
                ours: bool = True, peers: bool = True, kv_dtype: str = "auto") -> dict:
    import torch

    from attn_select.backends.run.batch import make_batch
    from attn_select.backends.run.harness import copy_ceiling
    from attn_select.backends.run.runner import RunOptions, make_env

    t0 = time.time()
    dev = torch.device(device)
    doc = dict(tag=tag, kv_cache_dtype=kv_dtype, device=torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu",
               ceiling_tbs=(copy_ceiling(dev) or 0.0) / 1e12, points=[])
    root = Path(tempfile.mkdtemp(prefix="decode-grid-"))
    for (q, kv, head, page), shapes in grouped(pts if pts is not None else points()).items():
        rows_at, g, dtype = plan_rows(root, q, kv, head, page, shapes, "cuda" if dev.type == "cuda" else "cpu",
                                      kv_dtype)
        env = make_env(RunOptions(device=device), dtype, kv_dtype, log)
        for b, ctx in shapes:
            if time.time() - t0 > max_seconds:
                doc["stopped"] = f"time limit {max_seconds:.0f} s"
                break
            from attn_select.selector.run_plan import Shape

            batch = make_batch(Shape("decode", decodes=b, decode_context=ctx), page, dev, seed=3, spare_pages=64)
            rows = run_point(rows_at[(b, ctx)], g, batch, env, seconds, seed=b * 7 + ctx, ours=ours, peers=peers)
            point = dict(q=q, kv=kv, head=head, page=page, batch=b, context=ctx, rows=rows)
            doc["points"].append(point)
            log(summary_line(point))
            del batch
            (out / f"decode_grid.{tag}.json").write_text(json.dumps(doc, indent=1))
        env.workspace.clear()
        if "stopped" in doc:
            break
    (out / f"decode_grid.{tag}.json").write_text(json.dumps(doc, indent=1))
    return doc


def ratios(point: dict) -> dict:
    """ours (table) and our best variant against the fastest correct peer, in per cent."""
    timed = [r for r in point["rows"] if "us" in r]
    peers = [r for r in timed if not r["row"].startswith(OURS)]
    table = next((r for r in timed if r["row"] == OURS), None)
    ours = [r for r in timed if r["row"].startswith(OURS)]
    if not peers or not ours:
        return {}
    fast = min(peers, key=lambda r: r["us"])
    best = min(ours, key=lambda r: r["us"])
    out = dict(peer=fast["row"], peer_us=fast["us"], best=best["row"], best_us=best["us"],
               best_pct=round(100 * fast["us"] / best["us"], 1))
    if table:
        out.update(table_us=table["us"], table_pct=round(100 * fast["us"] / table["us"], 1))
    return out


def summary_line(point: dict) -> str:
    r = ratios(point)
    head = f"{point['q']}/{point['kv']} h{point['head']} p{point['page']} {point['batch']}x{point['context']}"
    if not r:
        return f"{head}: " + "; ".join(f"{x['row']}: {x.get('reason') or x.get('error') or x.get('us')}"
                                       for x in point["rows"])
    return (f"{head}: table {r.get('table_us')} us ({r.get('table_pct')}%), best {r['best']} {r['best_us']} "
            f"({r['best_pct']}%), peer {r['peer']} {r['peer_us']}")


def phase_warm(part: int, parts: int, device: str, heads=HEADS, kv_dtypes=("auto",), gqa=GQA,
               pages=PAGES, batches=BATCHES, contexts=CONTEXTS) -> None:
    """Run rows once, no check, no timing: the peers on one small point per
    (heads, page) (FlashInfer JIT-compiles its decode kernels: per head size,
    so one process takes a head size's peers), ours on every point with every
    variant (Triton compiles per launch specialisation as well: the block
    table's stride, the merge kernel's split count), spread over the other
    parts, so the sweep finds everything compiled."""
    import torch

    from attn_select.backends.run.batch import fill_random_, make_batch
    from attn_select.backends.run.runner import RunOptions, _free, _sync, load_adapter, make_env, one_line
    from attn_select.selector.run_plan import Shape

    dev = torch.device(device)
    root = Path(tempfile.mkdtemp(prefix="decode-grid-warm-"))
    combos = [(c, kv, shapes) for kv in kv_dtypes for c, shapes in grouped(points(heads, gqa, pages, batches, contexts)).items()]
    peer_jobs = [("peers", c, kv, 1, 512) for c, kv, _ in combos]
    our_jobs = [("ours", c, kv, b, ctx) for c, kv, shapes in combos for b, ctx in shapes]
    # parts 0 .. len(heads)-1 take the peers, one head size each; the rest our kernels, round robin
    n_peer = len(heads) if parts > len(heads) else 0
    mine = [j for i, j in enumerate(peer_jobs) if (heads.index(j[1][2]) if n_peer else i % parts) == part]
    mine += [j for i, j in enumerate(our_jobs) if (n_peer + i % (parts - n_peer) if n_peer else i % parts) == part]
    for job in mine:
        who, (q, kv, head, page), kv_dtype, b, ctx = job
        t0 = time.time()
        try:
            rows_at, g, dtype = plan_rows(root, q, kv, head, page, [(b, ctx)], device, kv_dtype)
            env = make_env(RunOptions(device=device), dtype, kv_dtype, log)
            batch = make_batch(Shape("decode", decodes=b, decode_context=ctx), page, dev, seed=3, spare_pages=64)
            pt = Point(g, batch, env, 0.0, 1)
            for r in rows_at[(b, ctx)]:
                if (r.backend == OURS) != (who == "ours") or r.skip is not None:
                    continue
                ad = load_adapter(r, env, pt.kind.p)
                if ad.unavailable():
                    continue
                cfgs = [None] + ([c for _, c in variants(kv_dtype != "auto", head, ONLY)] if r.backend == OURS else [])
                inp = pt.kind.inputs(batch, env.dtype, None)
                cache = fill_random_(ad.alloc_cache(batch.num_pages, batch.page_size))
                for cfg in cfgs:
                    plan = ad.build(batch, cfg) if cfg is not None else ad.build(batch)
                    pt.kind.run(ad, plan, inp, cache, pt.kind.output(batch, env.dtype, dev, 0.0))
                    _sync(dev)
                del cache
                ad.close()
                _free(dev)
            log(f"warm {job} {time.time() - t0:.1f} s")
        except Exception as e:
            log(f"warm FAILED {job}: {one_line(e)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--phase", choices=("warm", "sweep"), required=True)
    ap.add_argument("--part", default="0/1")
    ap.add_argument("--out", default=os.environ.get("OUT", "out"))
    ap.add_argument("--tag", default="run1")
    ap.add_argument("--seconds", type=float, default=0.15, help="timing budget per row")
    ap.add_argument("--max-seconds", type=float, default=1e9, help="start no point after this")
    ap.add_argument("--heads", default=None, help="comma list of head sizes (default: all)")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--kv-cache-dtypes", default="auto", help="comma list: auto, fp8")
    ap.add_argument("--gqa", default=None, help="comma list of q/kv heads, e.g. 32/8 (default: 32/8,8/1)")
    ap.add_argument("--pages", default=None, help="comma list of page sizes (default: 16,64)")
    ap.add_argument("--batches", default=None, help="comma list of batch sizes (default: 1,8,32,128,256)")
    ap.add_argument("--contexts", default=None, help="comma list of cached tokens (default: 512,4096,32768)")
    ap.add_argument("--variants", default=None,
                    help="variant labels to time beside the table, comma separated, or semicolon separated "
                         "when a label has a comma ('none': the table alone)")
    a = ap.parse_args()
    global ONLY
    sep = ";" if a.variants and ";" in a.variants else ","
    ONLY = None if a.variants is None else frozenset(v.strip() for v in a.variants.split(sep)) - {"none"}
    unknown = (ONLY or frozenset()) - {label for fp8 in (False, True) for h in HEADS for label, _ in _variants(fp8, h)}
    if unknown:  # a misspelt label would otherwise time the table alone, and say nothing
        ap.error(f"unknown variant labels: {sorted(unknown)}")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    heads = tuple(int(x) for x in a.heads.split(",")) if a.heads else HEADS
    gqa = tuple(tuple(int(y) for y in x.split("/")) for x in a.gqa.split(",")) if a.gqa else GQA
    pages = tuple(int(x) for x in a.pages.split(",")) if a.pages else PAGES
    batches = tuple(int(x) for x in a.batches.split(",")) if a.batches else BATCHES
    contexts = tuple(int(x) for x in a.contexts.split(",")) if a.contexts else CONTEXTS
    kvs = tuple(a.kv_cache_dtypes.split(","))
    if a.phase == "warm":
        i, n = (int(x) for x in a.part.split("/"))
        phase_warm(i, n, "cuda", heads, kvs, gqa, pages, batches, contexts)
    else:
        for kv in kvs:
            phase_sweep(out, "cuda", f"{a.tag}.{kv}", a.seconds, a.max_seconds,
                        points(heads, gqa, pages, batches, contexts),
                        peers=not a.no_peers, kv_dtype=kv)


if __name__ == "__main__":
    main()
