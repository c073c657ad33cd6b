"""Check and time TRITON_ATTN's Gluon prefill kernel (backends/run/attn_gluon.py)
on the H200, beside our ``tl`` kernel and vLLM's FA3, in one call.

    python3 benchmarks/run_gluon_prefill.py --out $OUT [--budget 125]

1. Correctness first, each launch kind (the adapter's rule, the ``tl``
   table's prefill entry, every ``PREFILL_VARIANTS`` shape) at page 16 and
   page 64 in its own process (in parallel; this also compiles every kernel
   the timing launches into the shared Triton cache): ragged prefills with
   context (NaN in every slot no request reads, NaN-filled output), a
   single-block request split over its context (the merge kernel), and
   4 x 512 new on 1024 cached; each against the float32 reference. A
   failure is its exception's first lines; a hang is killed at
   ``--check-cap``; the others go on.
2. Timing of the kinds that passed on issue 13's two prefill shapes (Llama-3.1-8B
   heads: 32 / 8, head 128, bf16): "4 x 512 new on 1024 cached" and
   "1 x 8192 from empty", page 16 (vLLM's block size) then page 64, with
   vLLM's FA3 (the FLASH_ATTN adapter as ``attn-select run`` plans it,
   ``$VLLM_SITE`` on PYTHONPATH) and the ``tl`` kernel, through
   run_triton_sweep.py's ``Case`` (each row checked again on fresh inputs,
   then CUDA-graph replays over layer caches that defeat the L2,
   ``harness.time_device``, median per layer).
3. ``$OUT/gluon_prefill.json`` (rewritten after every row, so a timeout keeps
   what was measured) and a summary on stdout and in
   ``$OUT/gluon_prefill_summary.txt``: us per layer and the share of FA3's
   speed (FA3's us / ours; issue 13's target: >= 0.8).

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

PAGES = (16, 64)
SHAPES = ("prefill", "prefill8k")  # run_triton_sweep.SHAPE_ARGS: 4 x 512 on 1024, 1 x 8192 from empty
SHAPE_TEXT = {"prefill": "4 x 512 new on 1024 cached", "prefill8k": "1 x 8192 from empty"}
TARGET = 0.8  # issue 13: >= 80 % of FA3's speed


def _params():
    from attn_select.backends.run.reference import AttnParams

    return AttnParams(32, 8, 128, 128, 128 ** -0.5)


def _tiles_of(kind: str):
    """'rule': the adapter's own choice; 'tl': the table's prefill entry on the tl kernel; else a
    ``PrefillTiles.label`` of ``PREFILL_VARIANTS``."""
    from attn_select.backends.run.attn_gluon import PREFILL_VARIANTS

    return {t.label: t for t in PREFILL_VARIANTS}.get(kind)


def adapter_for(kind: str, env, p):
    """A TRITON_ATTN adapter whose ``build(batch)`` makes the plan of ``kind``
    (so run_triton_sweep's ``Case`` checks and times it unchanged)."""
    from attn_select.backends.run.triton_attn import PREFILL_CONFIG, TritonAttnAdapter

    tiles = _tiles_of(kind)

    class Kind(TritonAttnAdapter):
        def build(self, batch, cfg=None, gluon=None):
            if kind == "tl":
                return super().build(batch, cfg or PREFILL_CONFIG)
            return super().build(batch, cfg, gluon=tiles)

    return Kind(env, p)


def _check_batch(kind: str, batch, dev, seed: int, poison: bool) -> dict:
    from attn_select.backends.run.adapter import RunEnv
    from attn_select.backends.run.batch import fill_random_, poison_unread_slots, random_inputs, write_new_tokens
    from attn_select.backends.run.reference import reference_attention, relative_error, tolerance

    p = _params()
    cap = torch.cuda.get_device_capability(dev) if dev.type == "cuda" else None
    ad = adapter_for(kind, RunEnv(dev, cap, torch.bfloat16, "auto"), p)
    gen = torch.Generator().manual_seed(seed)
    cache = fill_random_(ad.alloc_cache(batch.num_pages, batch.page_size), gen)
    k, v = ad.kv_views(cache)
    inp = random_inputs(batch, 32, 8, 128, 128, torch.bfloat16, False, gen)
    write_new_tokens(k, v, batch, inp)
    ref = reference_attention(inp.q, k, v, batch, p)
    if poison:
        poison_unread_slots(k, v, batch)
    plan = ad.build(batch)
    out = torch.full_like(inp.q, float("nan"))
    ad.run(plan, inp.q, cache, None, out)
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
    err = relative_error(out, ref)
    return dict(err=err, ok=bool(err <= tolerance("bfloat16")), unwritten=int(torch.isnan(out).sum()),
                splits=plan.max_splits, kernel=ad.kernel_name(plan))


def check_job(job) -> dict:
    """In a worker process: every check of one (kind, page)."""
    kind, page, budget_end = job
    os.environ.pop("TRITON_INTERPRET", None)
    from attn_select.backends.run.batch import make_batch, make_prefill_batch
    from attn_select.selector.run_plan import Shape

    dev = torch.device("cuda")
    cases = [
        ("ragged prefills with context, NaN in unread slots",
         lambda: make_prefill_batch([40, 7, 300, 129], [100, 0, 1000, 33], page, dev, seed=1, spare_pages=8), True),
        ("one 20-token block on 3000 cached (split + merge), NaN in unread slots",
         lambda: make_prefill_batch([20], [3000], page, dev, seed=2, spare_pages=8), True),
        ("4 x 512 new on 1024 cached",
         lambda: make_batch(Shape("prefill", prefills=4, prefill_new=512, prefill_context=1024), page, dev, seed=3,
                            spare_pages=16), False),
    ]
    return checked_rows(kind, page, budget_end, [
        (dict(check=label), lambda i=i, batch_fn=batch_fn, poison=poison:
         _check_batch(kind, batch_fn(), dev, seed=10 + i, poison=poison))
        for i, (label, batch_fn, poison) in enumerate(cases)])


def fa_row(shape_name: str, page: int, device: str = "cuda"):
    """FLASH_ATTN's row as ``attn-select run llama-3.1-8b`` plans it on this GPU (its FA version,
    its builder facts; ``device`` "cpu": the selection for sm_90)."""
    import run_triton_sweep as sw
    from attn_select.cli.run import run_target
    from attn_select.selector.explain import explain
    from attn_select.selector.overrides import Overrides
    from attn_select.selector.profiles import load_model
    from attn_select.selector.run_plan import Shape, plan_run

    sdev, _, kern = run_target(device, None)
    facts = load_model("llama-3.1-8b", tp=1, dtype="auto", capability=sdev.capability)
    ov = Overrides(dtype=None, kv_cache_dtype=None, block_size=page, backend=None, tp=1)
    exp = explain(facts, sdev, kern, ov)
    plan = plan_run(exp, facts.dtype, "auto", [Shape(*sw.SHAPE_ARGS[shape_name])], page, ("FLASH_ATTN",))
    return next(r for g in plan.groups for sp in g.shapes for r in sp.rows if r.backend == "FLASH_ATTN")


def run_checks(a, kinds, t_start, deadline, result) -> None:
    jobs = [(k, pg, min(deadline - 30, t_start + a.check_cap - 10)) for pg in a.pages for k in kinds]
    for res in run_check_jobs(check_job, jobs, a.workers, min(deadline - 20, t_start + a.check_cap)):
        result["checks"].append(res)
        print_check(res, 14)
        if res["kind"] == "rule" and res["checks"] and res["checks"][0].get("kernel"):
            print(f"    rule runs: {res['checks'][0]['kernel']}", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT", ""))
    ap.add_argument("--budget", type=float, default=125.0, help="seconds from the driver's start to stop timing")
    ap.add_argument("--seconds", type=float, default=0.3, help="device time per timed row")
    ap.add_argument("--workers", type=int, default=16)
    ap.add_argument("--check-cap", type=float, default=65.0,
                    help="seconds from the start after which unfinished checks are killed (a hang)")
    ap.add_argument("--pages", type=int, nargs="+", default=list(PAGES))
    a = ap.parse_args(argv)
    t_start = float(os.environ.get("GLUON_DRV_T0", time.time()))
    deadline = t_start + a.budget
    out_dir = Path(a.out) if a.out else None
    if out_dir:
        out_dir.mkdir(parents=True, exist_ok=True)

    import triton

    import run_triton_sweep as sw
    from attn_select.backends.run import attn_gluon
    from attn_select.backends.run.adapter import RunEnv
    from attn_select.backends.run.attn_gluon import DEFAULT_PREFILL_TILES, PREFILL_VARIANTS
    from attn_select.backends.run.flash_attn import FlashAttnAdapter
    from attn_select.backends.run.harness import copy_ceiling
    from attn_select.backends.run.triton_attn import gluon_prefill_unavailable

    dev = torch.device("cuda")
    cap = torch.cuda.get_device_capability(dev)
    kinds = ["rule", "tl"] + [t.label for t in PREFILL_VARIANTS]
    head = dict(device=torch.cuda.get_device_name(dev), capability=cap, torch=torch.__version__,
                triton=triton.__version__, kernel_source=attn_gluon.__file__,
                gluon_rule_p16=gluon_prefill_unavailable(True, cap, 2, _params(), 16) or "Gluon",
                default_tiles=DEFAULT_PREFILL_TILES.label)
    print(json.dumps(head), flush=True)
    result = dict(head=head, checks=[], timings=[])

    def save():
        if out_dir:
            (out_dir / "gluon_prefill.json").write_text(json.dumps(result, indent=1, default=str))

    # 1. checks (and compiles), one process per (kind, page)
    t0 = time.time()
    run_checks(a, kinds, t_start, deadline, result)
    print(f"checks done in {time.time() - t0:.1f} s", flush=True)
    save()
    good = {(r["kind"], r["page"]) for r in result["checks"] if r["all_ok"]}

    # 2. timing: page 16 first (the target's), the 4 x 512 shape first
    try:
        ceiling = copy_ceiling(dev)
        head["copy_ceiling_tbs"] = round(ceiling / 1e12, 3)
    except Exception as e:
        print(f"FAIL copy ceiling: {first_lines(e)}", flush=True)
    p = _params()
    env = RunEnv(dev, cap, torch.bfloat16, "auto")
    first = True
    for pg in a.pages:
        for shape in SHAPES:
            if time.time() > deadline:
                print(f"out of budget: page {pg} {shape} not timed", flush=True)
                continue
            fa_us = None
            # FA3 on its own layout, the same batch (seed) as ours
            try:
                try:
                    row = fa_row(shape, pg)
                except Exception as e:  # the row without run's plan: vLLM's FA3 on sm_90 all the same
                    from attn_select.selector.run_plan import RowPlan

                    print(f"FA3 row as run plans it: FAIL {first_lines(e)}; FA3 with default builder facts",
                          flush=True)
                    row = RowPlan("FLASH_ATTN", fa_version=3)
                c = sw.Case(shape, "auto", dev, page=pg, layout=lambda e, q, row=row: FlashAttnAdapter(e, q, row))
                try:
                    fa = FlashAttnAdapter(env, p, row)
                    why = fa.unavailable()
                    if why:
                        raise RuntimeError(why)
                    err, plan = c.check(fa, None)
                    r = dict(err=err, kernel=fa.kernel_name(plan), **c.time(fa, plan, a.seconds, 0.5 if first else 0.1))
                    first = False
                    fa_us = r["us"]
                except Exception as e:
                    r = dict(error=first_lines(e))
                finally:
                    c.free()
            except Exception as e:
                r = dict(error=first_lines(e))
            r = dict(page=pg, shape=shape, label="FA3", **r)
            result["timings"].append(r)
            save()
            _print_row(r)
            # ours: the rule's choice (the default Gluon shape), tl, the other Gluon shapes
            ours = [k for k in kinds if (k, pg) in good and k != DEFAULT_PREFILL_TILES.label]
            c = sw.Case(shape, "auto", dev, page=pg)
            for k in ours:
                if time.time() > deadline:
                    print(f"out of budget: page {pg} {shape} {k} not timed", flush=True)
                    break
                try:
                    ad = adapter_for(k, env, p)
                    err, plan = c.check(ad, None)
                    r = dict(err=err, correct=bool(err < 2e-2), kernel=ad.kernel_name(plan),
                             **c.time(ad, plan, a.seconds, 0.5 if first else 0.1))
                    first = False
                except Exception as e:
                    r = dict(error=first_lines(e))
                r = dict(page=pg, shape=shape, label=k, **r)
                if fa_us and "us" in r:
                    r["of_fa3_speed"] = round(fa_us / r["us"], 3)
                result["timings"].append(r)
                save()
                _print_row(r)
            c.free()

    # 3. summary
    lines = ["", f"== Gluon prefill (TRITON_ATTN), Llama-3.1-8B heads, bf16: us per layer; x = FA3's us / ours "
                 f"(target x >= {TARGET}); rule = {DEFAULT_PREFILL_TILES.label} =="]
    for r in result["timings"]:
        name = f"page {r['page']:>2} {SHAPE_TEXT[r['shape']]:>27} {r['label']:>14}"
        if "us" in r:
            lines.append(f"{name}: {r['us']:9.2f} us {r['tflops']:6.1f} TFLOP/s  x{r.get('of_fa3_speed', '-')}  "
                         f"err {r['err']:.1e}{'' if r.get('correct', True) else ' WRONG'}")
        else:
            lines.append(f"{name}: FAIL {r.get('error')}")
    for res in result["checks"]:
        bad = [c for c in res["checks"] if not c.get("ok")]
        lines.append(f"checks {res['kind']:>14} page {res['page']:>2}: "
                     + ("all ok" if not bad else "; ".join(f"{c['check']}: " + (c.get('error') or f"err {c.get('err')}")
                                                        for c in bad)))
    lines.append(f"total {time.time() - t_start:.1f} s")
    text = "\n".join(lines)
    print(text, flush=True)
    if out_dir:
        (out_dir / "gluon_prefill_summary.txt").write_text(text + "\n")
    save()
    return 0


def _print_row(r: dict) -> None:
    head = f"time page {r['page']:>2} {r['shape']:>9} {r['label']:>14}"
    if "us" in r:
        print(f"{head}: {r['us']:9.2f} us {r['tflops']:6.1f} TFLOP/s err {r['err']:.1e}"
              f"{' x' + str(r['of_fa3_speed']) if r.get('of_fa3_speed') else ''}"
              + (f"  [{r.get('kernel', '')}]" if r["label"] in ("rule", "FA3") else ""), flush=True)
    else:
        print(f"{head}: FAIL {r.get('error')}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
