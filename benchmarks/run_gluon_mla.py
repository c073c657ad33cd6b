"""Check and time TRITON_MLA's Gluon decode kernel (backends/run/mla_gluon.py)
on the H200, beside our ``tl`` kernel, FlashMLA and FA3-MLA, in one call.

    python3 benchmarks/run_gluon_mla.py --out $OUT [--budget 120]

1. Correctness first, each launch shape (every ``GLUON_VARIANTS`` entry, the
   rule's default, the ``tl`` table's entry) at page 64 and page 16 in its own
   process (in parallel; this also compiles every launch the timing asks for
   into the shared Triton cache): ragged small batches (1 to 2047 keys, one
   split with the log-sum-exp, several splits), stale slots poisoned with NaN,
   and 32 x 4096 at 128 and 64 heads; each against the float32 latent
   reference. A failure is its exception's first lines; the others go on.
2. Timing of the shapes that passed, at 128 and 64 heads (16 for
   information), page 64 then page 16, with FlashMLA (page 64) and FA3-MLA in
   the same run (run_triton_mla.py's timers: CUDA-graph replays over layer
   caches that defeat the L2, each row checked again before it is timed).
3. ``$OUT/gluon_mla.json`` (rewritten after every row, so a timeout keeps
   what was measured) and a summary table on stdout and in
   ``$OUT/gluon_mla_summary.txt``.

Stops timing when ``--budget`` seconds have passed since ``GLUON_DRV_T0``
(the driver's start, epoch seconds) or since this script started.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import torch  # noqa: E402
from check_pool import checked_rows, first_lines, print_check, run_check_jobs  # noqa: E402

SMALL_CTX = [1, 63, 64, 65, 300, 1000, 2047]


def ragged_batch(ctx: list[int], page: int, dev, seed: int = 0):
    """Decode rows with the given cached lengths over a shuffled page pool."""
    from attn_select.backends.run.batch import make_decode_batch

    return make_decode_batch(ctx, page, dev, seed=seed, spare_pages=8)


def _params(h: int):
    from attn_select.backends.run.mla_reference import MLAParams
    from run_triton_mla import DEEPSEEK_SCALE

    return MLAParams(h, 512, 64, DEEPSEEK_SCALE)


def _tiles_of(kind: str, h: int):
    """'rule': the adapter's own choice; 'tl': the tl table's entry; 'g<N>x<S>o' / 's': a Gluon
    shape (N keys a tile, S buffers; o: overlapped dots, s: one tile at a time); 'ws64': the
    warp-specialised Gluon kernel (mla_gluon_ws: a 64-key block a warpgroup); 'wsc64': the same,
    each buffer's late half copied in 4 chunks."""
    from attn_select.backends.run.mla_gluon import WS_TILES, WSC_TILES, GluonTiles
    from attn_select.backends.run.triton_mla import choose_tiles

    if kind == "rule":
        return None
    if kind == "tl":
        return choose_tiles(h, 2)
    if kind == "ws64":
        return WS_TILES
    if kind == "wsc64":
        return WSC_TILES
    n, s = kind[1:-1].split("x")
    return GluonTiles(int(n), int(s), overlap=kind.endswith("o"))


def _kind(t) -> str:
    if t.schedule in ("ws", "wsc"):
        return f"{t.schedule}{t.block_n}"
    return f"g{t.block_n}x{t.stages}{'o' if t.overlap else 's'}"


def _adapter(h: int, dev):
    from attn_select.backends.run.adapter import RunEnv
    from attn_select.backends.run.triton_mla import TritonMLAAdapter

    cap = torch.cuda.get_device_capability(dev) if dev.type == "cuda" else None
    return TritonMLAAdapter(RunEnv(dev, cap, torch.bfloat16, "auto"), _params(h))


def _poisoned_check(h: int, page: int, tiles, dev) -> float:
    """Slots no request reads hold NaN: the output must not see them."""
    from attn_select.backends.run.batch import fill_random_
    from attn_select.backends.run.mla_check import random_mla_inputs, write_latents
    from attn_select.backends.run.mla_reference import reference_mla_attention
    from attn_select.backends.run.reference import relative_error

    p = _params(h)
    batch = ragged_batch([37, 100, 255, 1], page, dev, seed=4)
    ad = _adapter(h, dev)
    gen = torch.Generator().manual_seed(5)
    cache = fill_random_(ad.alloc_cache(batch.num_pages, page), gen)
    inp = random_mla_inputs(batch, p, torch.bfloat16, gen)
    write_latents(cache, batch, inp.latent_new, p.kv_scale)
    keep = torch.zeros(batch.num_pages, page, dtype=torch.bool)
    for r in range(batch.num_requests):
        s = int(batch.seq_lens_cpu[r])
        k = torch.arange(s)
        keep[batch.block_table_cpu[r, k // page].long(), k % page] = True
    poisoned = cache.clone()
    poisoned[~keep.to(dev)] = float("nan")
    out = torch.full((batch.num_tokens, h, 512), float("nan"), dtype=torch.bfloat16, device=dev)
    kw = {"tiles": tiles} if tiles is not None else {}
    plan = ad.build(batch, num_splits=2, **kw)
    ad.run(plan, inp.q, poisoned, None, out)
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
    return relative_error(out, reference_mla_attention(inp.q, cache, batch, p))


def check_job(job) -> dict:
    """In a worker process: every check of one (launch kind, page)."""
    kind, page, budget_end = job
    os.environ.pop("TRITON_INTERPRET", None)
    from attn_select.backends.run.batch import Shape, make_batch
    from attn_select.backends.run.mla_check import check_mla_decode
    from attn_select.backends.run.reference import tolerance

    dev = torch.device("cuda")
    tol = tolerance("bfloat16", "auto")

    def check(h, ctx, ns) -> dict:
        tiles = _tiles_of(kind, h)
        if ctx is None:
            err = _poisoned_check(h, page, tiles, dev)
            return dict(err=err, ok=bool(err <= tol))
        batch = (make_batch(Shape("decode", decodes=32, decode_context=4096), page, dev, seed=3, spare_pages=64)
                 if ctx == "big" else ragged_batch(ctx, page, dev, seed=h))
        kw = {k: v for k, v in (("tiles", tiles), ("num_splits", ns)) if v is not None}
        ad = _adapter(h, dev)
        r = check_mla_decode(batch, _params(h), dev, torch.bfloat16, "auto", checks=1, seed=1, adapter=ad, **kw)
        return dict(err=max(r.errors), ok=bool(r.ok), unwritten=r.unwritten, splits=r.plan.num_splits,
                    kernel=ad.kernel_name(r.plan))

    cases = [("small ragged, rule splits", 128, SMALL_CTX, None), ("small ragged, one split", 64, SMALL_CTX, 1),
             ("small ragged, 3 splits", 64, SMALL_CTX, 3), ("small ragged, 7 splits (empty ones)", 128, [5, 70], 7),
             ("poisoned stale slots", 128, None, 2), ("32 x 4096", 128, "big", None), ("32 x 4096", 64, "big", None)]
    return checked_rows(kind, page, budget_end, [(dict(check=label, heads=h, splits=ns),
                                                  lambda h=h, ctx=ctx, ns=ns: check(h, ctx, ns))
                                                 for label, h, ctx, ns in cases])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT", ""))
    ap.add_argument("--budget", type=float, default=125.0, help="seconds from the driver's start to stop timing")
    ap.add_argument("--seconds", type=float, default=0.4, help="device time per timed row")
    ap.add_argument("--workers", type=int, default=16)
    ap.add_argument("--check-cap", type=float, default=70.0,
                    help="seconds from the start after which unfinished checks are killed (a hang)")
    ap.add_argument("--pages", type=int, nargs="+", default=[64, 16])
    a = ap.parse_args(argv)
    t_start = float(os.environ.get("GLUON_DRV_T0", time.time()))
    deadline = t_start + a.budget
    out_dir = Path(a.out) if a.out else None
    if out_dir:
        out_dir.mkdir(parents=True, exist_ok=True)

    import triton

    import run_triton_mla as rt
    from attn_select.backends.run import mla_gluon
    from attn_select.backends.run.batch import Shape, make_batch
    from attn_select.backends.run.harness import copy_ceiling
    from attn_select.backends.run.mla_gluon import GLUON_VARIANTS
    from attn_select.backends.run.triton_mla import choose_splits, gluon_unavailable

    dev = torch.device("cuda")
    kinds = ["rule", "tl"] + [_kind(t) for t in GLUON_VARIANTS]
    head = dict(device=torch.cuda.get_device_name(dev), capability=torch.cuda.get_device_capability(dev),
                torch=torch.__version__, triton=triton.__version__, kernel_source=mla_gluon.__file__,
                gluon_rule_128_p64=gluon_unavailable(True, torch.cuda.get_device_capability(dev), 2, 128, 64, 512, 64)
                or "Gluon")
    print(json.dumps(head), flush=True)
    result = dict(head=head, checks=[], timings=[])

    def save():
        if out_dir:
            (out_dir / "gluon_mla.json").write_text(json.dumps(result, indent=1, default=str))

    # 1. checks (and compiles), one process per (kind, page)
    t0 = time.time()
    jobs = [(k, pg, min(deadline - 30, t_start + a.check_cap - 10)) for pg in a.pages for k in kinds]
    for res in run_check_jobs(check_job, jobs, a.workers, min(deadline - 20, t_start + a.check_cap)):
        result["checks"].append(res)
        print_check(res, 7)
    print(f"checks done in {time.time() - t0:.1f} s", flush=True)
    save()
    good = {(r["kind"], r["page"]) for r in result["checks"] if r["all_ok"]}
    # a kind whose 32 x 4096 checks passed may still be timed where a small check failed: marked
    big_ok = {(r["kind"], r["page"]) for r in result["checks"]
              if [c.get("ok") for c in r["checks"] if c["check"] == "32 x 4096"] == [True, True]}

    # 2. timing
    try:
        ceiling = copy_ceiling(dev)
        head["copy_ceiling_tbs"] = round(ceiling / 1e12, 3)
    except Exception as e:
        ceiling = None
        print(f"FAIL copy ceiling: {first_lines(e)}", flush=True)
    flashmla_missing = rt.flashmla_unavailable()
    if flashmla_missing:
        print(f"FAIL FlashMLA peer: {flashmla_missing}", flush=True)
    sms = torch.cuda.get_device_properties(dev).multi_processor_count
    flash_us = {}  # heads -> FlashMLA's time at page 64 (it takes no other page): the target for every page
    order = [(pg, h) for h in (128, 64) for pg in a.pages] + [(pg, 16) for pg in a.pages]
    order.sort(key=lambda ph: (ph[1] == 16, a.pages.index(ph[0]), -ph[1]))
    for pg, h in order:
        if time.time() > deadline:
            print(f"out of budget: page {pg} {h} heads not timed", flush=True)
            continue
        p = _params(h)
        batch = make_batch(Shape("decode", decodes=32, decode_context=4096), pg, dev, seed=3, spare_pages=64)
        timed = (batch, p, "auto", dev, ceiling, a.seconds)
        rows = []
        if pg == 64 and not flashmla_missing:
            rows.append(("FlashMLA", lambda: rt.time_flashmla(*timed)))
        # the rule's row is the default Gluon shape's (named in its kernel column): not timed twice
        ours = ["rule"] if h == 16 else [k for k in kinds if (k, pg) in big_ok and k not in (
            "tl", _kind(mla_gluon.DEFAULT_GLUON_TILES))]
        for k in ours:
            rows.append((k, lambda k=k: rt.time_ours(*timed, tiles=_tiles_of(k, h))))
        if h >= 64 and (_kind(GLUON_VARIANTS[0]), pg) in big_ok:
            t = GLUON_VARIANTS[0]
            ns = 2 * choose_splits(32, -(-h // 64), 4097, t, sms)
            rows.append((f"{_kind(t)} splits {ns}",
                         lambda t=t, ns=ns: rt.time_ours(*timed, tiles=t, num_splits=ns)))
        rows.append(("FA3-MLA", lambda: rt.time_fa_mla(*timed)))
        if h >= 64 and ("tl", pg) in big_ok:
            rows.append(("tl", lambda: rt.time_ours(*timed, tiles=_tiles_of("tl", h))))
        ref_us = flash_us.get(h)
        for label, fn in rows:
            if time.time() > deadline:
                print(f"out of budget: page {pg} {h} heads {label} not timed", flush=True)
                break
            try:
                r = fn()
            except Exception as e:
                r = dict(error=first_lines(e))
            r = dict(page=pg, heads=h, label=label, all_checks_ok=(label, pg) in good if label in kinds else None,
                     **r)
            if label == "FlashMLA" and "us" in r:
                ref_us = flash_us[h] = r["us"]
            if ref_us and "us" in r:
                r["of_flashmla_speed"] = round(ref_us / r["us"], 3)
            result["timings"].append(r)
            save()
            print(f"time page {pg} {h:>3} heads {label:>16}: "
                  + (f"{r['us']:8.2f} us {r['tflops']:6.1f} TFLOP/s {r['tbs']:5.2f} TB/s err {r['err']:.1e}"
                     f"{' of FlashMLA ' + str(r.get('of_flashmla_speed')) if r.get('of_flashmla_speed') else ''}"
                     + (f"  [{r.get('kernel', '')}]" if label == "rule" else "")  # the others: in the JSON
                     if "us" in r else f"FAIL {r.get('error')}"), flush=True)
        del batch
        torch.cuda.empty_cache()

    # 3. summary
    lines = ["", "== Gluon MLA decode, 32 x 4096, bf16 (us; x = FlashMLA's us at page 64 / ours; target x >= 0.9) =="]
    for r in result["timings"]:
        if "us" in r:
            lines.append(f"page {r['page']:>2} {r['heads']:>3} heads {r['label']:>18}: {r['us']:8.2f} us "
                         f"{r['tflops']:6.1f} TFLOP/s  x{r.get('of_flashmla_speed', '-')}  "
                         f"{'' if r.get('correct', True) else 'WRONG '}{'' if r.get('all_checks_ok') in (True, None) else '(a small check failed) '}"
                         f"splits {r.get('splits', '-')}")
        else:
            lines.append(f"page {r['page']:>2} {r['heads']:>3} heads {r['label']:>18}: FAIL {r.get('error')}")
    for res in result["checks"]:
        bad = [c for c in res["checks"] if not c.get("ok")]
        lines.append(f"checks {res['kind']:>7} page {res['page']:>2}: "
                     + ("all ok" if not bad else "; ".join(f"{c['heads']}h {c['check']}: "
                                                        + (c.get('error') or f"err {c.get('err')}") for c in bad)))
    lines.append(f"total {time.time() - t_start:.1f} s")
    text = "\n".join(lines)
    print(text, flush=True)
    if out_dir:
        (out_dir / "gluon_mla_summary.txt").write_text(text + "\n")
    save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
