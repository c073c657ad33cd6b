"""Sweep our Triton paged-attention kernel (TRITON_ATTN) on the Llama-3.1-8B
shapes (32 / 8 heads, head 128, page 16, bf16) on the H200 and time it beside
the peers in the same process: FlashInfer's decode kernels and vLLM's FA3.

    python3 benchmarks/run_triton_sweep.py --phase compile --part 0/6   # fill Triton's cache (parallel)
    python3 benchmarks/run_triton_sweep.py --phase sweep --out $OUT      # every variant, checked, then timed
    python3 benchmarks/run_triton_sweep.py --phase final --out $OUT --best $OUT/triton_sweep.json --tag run1
    python3 benchmarks/run_h200.py --stage sweep                         # the sweep, as run_h200 stages it

Cases: decode 32 x 4096 with a bf16 and with an fp8 (e4m3) cache, prefill
4 x 512 new on 1024 cached, prefill 1 x 8192 from empty, mixed (the decode
and the first prefill in one batch). Every row is checked against the
float32 reference first (fresh random inputs, NaN-poisoned output; the fp8
check with k / v scales 0.5 / 2.0, so the scale path is checked too), then
timed: one layer's launches over enough distinct layer caches that a step
reads over 1 GiB (the L2 holds none of it), captured in a CUDA graph and
replayed between CUDA events after the clock settles (``harness.time_device``),
median per layer.

``final`` times, per case, the sweep's fastest correct variant, the table's
entry (what ``attn-select run`` launches), the kernel as it was before this
change when ``--old`` names a folder holding its two modules (the copy from
git the device driver makes), and the peers through ``runner.run_group``: the
rows ``attn-select run llama-3.1-8b --backend TRITON_ATTN,FLASHINFER,FLASH_ATTN``
runs, on these shapes (FlashInfer's native tensor-core decode too).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

SM = 132
SHAPE_ARGS = {
    "decode": ("decode", 32, 4096, 0, 0, 0),
    "prefill": ("prefill", 0, 0, 4, 512, 1024),
    "prefill8k": ("prefill", 0, 0, 1, 8192, 0),
    "mixed": ("mixed", 32, 4096, 4, 512, 1024),
}
CASES = [("decode", "auto"), ("decode", "fp8"), ("prefill", "auto"), ("prefill8k", "auto"), ("mixed", "auto")]
CHECK_SCALES = (0.5, 2.0)


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _decode_cfg(n: int, stages: int, splits: int, warps: int = 4, base: int = 32 * 8, fp8_dot: int = 0,
                **extra):
    """A decode-only config cutting each of the 32 x 8 (request, KV head) rows into ``splits``."""
    from attn_select.backends.run.triton_attn import KernelConfig

    return KernelConfig(block_m=0, block_n=0, num_stages=0, small_m=16, small_n=n, small_stages=stages,
                        num_warps=warps, target_programs=base * splits, min_split_tokens=256, fp8_dot=fp8_dot,
                        **extra)


def configs(kind: str, fp8: bool = False) -> list:
    """The variants of one case (labels are asdict of the config)."""
    from attn_select.backends.run import triton_attn as ta

    if kind == "decode":
        # (keys per tile, stages, warps): stages 5 / 7 give the K/V loads 2 / 3 buffers
        # (the block-table load ahead of them shares the stages); benchmarks/triton_attn_aot_report.py
        tiles = ([(128, 2, 4), (128, 5, 4), (128, 7, 4), (64, 5, 4)] if fp8 else
                 [(128, 2, 4), (64, 5, 4), (64, 7, 4), (128, 5, 4), (32, 5, 4)])
        out = [_decode_cfg(n, st, sp, w) for n, st, w in tiles for sp in (1, 2, 3, 4)]
        if fp8:  # the fp8 dots (Q.K, then P.V too): no widening, e4m3 tensor-core MMAs
            out += [_decode_cfg(n, st, sp, w, fp8_dot=dot) for dot in (1, 2)
                    for n, st, w in [(128, 5, 4), (64, 5, 4), (128, 3, 4), (256, 3, 4)] for sp in (1, 2)]
            # V widened where it is loaded (no byte-wise gather into the P.V operand): the sm_90 key loop
            # 1358 -> 853 instructions a 128-key tile, but 107 KB of shared memory at 5 stages (2 an SM);
            # with and without the table's register cap
            out += [_decode_cfg(n, st, sp, w, widen_v=True, max_registers=cap, page_vector=pv)
                    for n, st, w in [(128, 5, 4), (128, 4, 4), (64, 5, 4), (64, 4, 4)] for sp in (1, 2)
                    for cap in (0, 168) for pv in (False, True)]
        else:  # around the table's 64-key, 5-stage entry
            out += [_decode_cfg(n, st, sp, w) for n, st, w in [(64, 4, 4), (64, 6, 4), (64, 5, 8)] for sp in (1, 2)]
        return out
    if kind == "prefill":
        tiles = [(128, 128, 3, 8), (128, 128, 5, 8), (128, 64, 5, 8), (128, 64, 7, 8), (64, 64, 5, 4),
                 (128, 32, 7, 8)]
        out = [replace(ta.PREFILL_CONFIG, block_m=m, block_n=n, num_stages=st, num_warps=w) for m, n, st, w in tiles]
        return out + [replace(ta.PREFILL_CONFIG, page_vector=True)]  # the block table once a page
    return [ta.MIXED_CONFIG,
            replace(ta.MIXED_CONFIG, fused_merge_max=0 if ta.MIXED_CONFIG.fused_merge_max else 640),  # the merge
            replace(ta.MIXED_CONFIG, target_programs=256 * 2),
            # decodes unsplit: as long as the decode-only batch runs them (131 us), launched first, with
            # the prefill blocks filling the SMs beside them, and no merge at all
            replace(ta.MIXED_CONFIG, target_programs=1),
            replace(ta.MIXED_CONFIG, page_vector=True),
            replace(ta.MIXED_CONFIG, block_m=128, block_n=64, num_stages=5, small_n=64, small_stages=5, num_warps=8)]


def case_configs(case: tuple[str, str]) -> list:
    shape, kv = case
    return configs("prefill" if shape.startswith("prefill") else shape, kv != "auto")


class Case:
    """One shape and cache dtype: the batch, the reference, the timed layer caches."""

    def __init__(self, shape_name: str, kv: str, dev, check: bool = True, timed: bool = True, page: int = 16,
                 layout=None):
        """``layout(env, params)``: the adapter whose cache layout the caches take
        (``alloc_cache`` / ``kv_views``; TRITON_ATTN's by default), so a peer is
        checked and timed on the same batch."""
        import torch

        from attn_select.backends.run.adapter import RunEnv
        from attn_select.backends.run.batch import fill_random_, make_batch, random_inputs, write_new_tokens
        from attn_select.backends.run.layer_kind import MHA
        from attn_select.backends.run.reference import AttnParams, reference_attention
        from attn_select.backends.run.triton_attn import TritonAttnAdapter
        from attn_select.selector.run_plan import Shape

        self.name, self.kv, self.dev = shape_name, kv, dev
        self.shape = Shape(*SHAPE_ARGS[shape_name])
        self.p = AttnParams(32, 8, 128, 128, 128 ** -0.5)
        self.env = RunEnv(dev, torch.cuda.get_device_capability(dev) if dev.type == "cuda" else None,
                          torch.bfloat16, kv)
        self.page = page
        self.batch = make_batch(self.shape, page, dev, seed=3, spare_pages=64)
        ad = (layout or TritonAttnAdapter)(self.env, self.p)
        gen = torch.Generator().manual_seed(5)
        self.check_cache = ad.alloc_cache(self.batch.num_pages, page)
        fill_random_(self.check_cache, gen)
        k, v = ad.kv_views(self.check_cache)
        self.inp = random_inputs(self.batch, 32, 8, 128, 128, torch.bfloat16, False, gen)
        write_new_tokens(k, v, self.batch, self.inp)
        self.scales = CHECK_SCALES if kv != "auto" else (1.0, 1.0)
        self.ref = self.ref_unscaled = None
        if check:
            self.ref = reference_attention(self.inp.q, k.float() * self.scales[0], v.float() * self.scales[1],
                                           self.batch, self.p)
            # the kernel before this change read no scales: it is checked at 1.0
            self.ref_unscaled = (reference_attention(self.inp.q, k, v, self.batch, self.p)
                                 if self.scales != (1.0, 1.0) else self.ref)
        mha = MHA(self.p)
        elem = k.element_size()
        self.kv_bytes = mha.kv_bytes(self.batch, elem)
        self.flops = mha.flops(self.batch)
        layer = mha.layer_bytes(self.batch, elem)
        n = (max(2, math.ceil((1 << 30) / max(1, layer))) if dev.type == "cuda" else 2) if timed else 0
        self.caches = []
        for _ in range(n):
            c = ad.alloc_cache(self.batch.num_pages, page)
            fill_random_(c)
            self.caches.append(c)
        self.out = torch.empty_like(self.inp.q)

    def adapter(self, cls=None):
        from attn_select.backends.run.triton_attn import TritonAttnAdapter

        return (cls or TritonAttnAdapter)(self.env, self.p)

    def check(self, ad, cfg) -> tuple[float, object]:
        from attn_select.backends.run.reference import relative_error

        if hasattr(ad, "kv_scales"):
            ad.kv_scales = self.scales
        plan = ad.build(self.batch, cfg) if cfg is not None else ad.build(self.batch)
        self.out.fill_(float("nan"))
        ad.run(plan, self.inp.q, self.check_cache, None, self.out)
        _sync(self.dev)
        ref = self.ref if hasattr(ad, "kv_scales") else self.ref_unscaled
        err = relative_error(self.out, ref) if ref is not None else float("nan")
        if hasattr(ad, "kv_scales"):
            ad.kv_scales = (1.0, 1.0)
        return err, plan

    def time(self, ad, plan, seconds: float, settle: float) -> dict:
        from attn_select.backends.run.harness import time_device

        n = len(self.caches)

        def step():
            for c in self.caches:
                ad.run(plan, self.inp.q, c, None, self.out)

        t = time_device(step, self.dev, calls=max(1, 8 // n), samples=50, warmup=2, max_seconds=seconds,
                        settle_s=settle)
        us = t.median_us / n
        return dict(us=round(us, 2), min_us=round(t.min_us / n, 2), tbs=round(self.kv_bytes / us / 1e6, 3),
                    tflops=round(self.flops / us / 1e6, 1), method=t.method)

    def free(self):
        import torch

        self.caches = self.check_cache = self.ref = self.ref_unscaled = None
        torch.cuda.empty_cache()


def _sync(dev):
    import torch

    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:240]


def phase_compile(part: int, parts: int, dev) -> None:
    """Build and run every variant once (no check, no timing): fills Triton's
    on-disk cache so the timing process finds each kernel compiled."""
    from attn_select.backends.run.triton_attn import kernel_key

    jobs = [(case, cfg) for case in CASES for cfg in case_configs(case)]
    seen, mine = set(), []
    for case, cfg in jobs:  # splits do not change the compiled kernel; whether they merge in-kernel does
        key = (case[1], case[0] == "mixed", cfg.fused_merge_max, kernel_key(cfg, bool(cfg.fused_merge_max)))
        if key not in seen:
            seen.add(key)
            mine.append((case, cfg))
    mine = mine[part::parts]
    cases = {}
    for case, cfg in mine:
        if case not in cases:
            cases[case] = Case(case[0], case[1], dev, check=False, timed=False)
        c = cases[case]
        t0 = time.time()
        try:
            c.check(c.adapter(), cfg)
            log(f"compiled {case} {cfg} in {time.time() - t0:.1f} s")
        except Exception as e:
            log(f"compile FAILED {case} {cfg}: {_one_line(e)}")


def phase_sweep(out: Path, dev, seconds: float = 0.4) -> dict:
    from attn_select.backends.run.harness import copy_ceiling

    ceiling = copy_ceiling(dev) or 0.0  # None on a CPU (the smoke run)
    log(f"copy ceiling {ceiling / 1e12:.2f} TB/s")
    results, best = [], {}
    for case in CASES:
        c = Case(case[0], case[1], dev)
        tag = f"{case[0]}/{case[1]}"
        first = True
        for cfg in case_configs(case):
            row = dict(case=tag, cfg=asdict(cfg))
            try:
                ad = c.adapter()
                err, plan = c.check(ad, cfg)
                row.update(err=err, splits=plan.max_splits, items=plan.num_items, kernel=ad.kernel_name(plan))
                row.update(c.time(ad, plan, seconds, 0.5 if first else 0.1))
                first = False
            except Exception as e:
                row["error"] = _one_line(e)
            results.append(row)
            log(json.dumps(row))
            tol = 8e-2 if case[1] != "auto" else 2e-2
            if "us" in row and row["err"] < tol and (tag not in best or row["us"] < best[tag]["us"]):
                best[tag] = row
        c.free()
        # written after every case: a run stopped at its time limit keeps what it measured
        doc = dict(ceiling_tbs=ceiling / 1e12, device=_device_name(dev), results=results, best=best)
        (out / "triton_sweep.json").write_text(json.dumps(doc, indent=1))
    for tag, row in best.items():
        log(f"best {tag}: {row['kernel']} {row['cfg']} {row['us']:.1f} us {row['tbs']:.2f} TB/s "
            f"{row['tflops']:.0f} TFLOP/s err {row['err']:.1e}")
    return best


def _device_name(dev) -> str:
    import torch

    return torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"


def load_old(folder: Path):
    """The adapter class of the kernel before this change, from ``folder``
    (old_triton_kernel.py, old_triton_attn.py; the latter imports the former)."""
    sys.path.insert(0, str(folder))
    spec = importlib.util.spec_from_file_location("old_triton_attn", folder / "old_triton_attn.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["old_triton_attn"] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod.TritonAttnAdapter


def peer_rows(case: tuple[str, str], dev, ceiling, progress) -> list[dict]:
    """The rows attn-select run makes for Llama-3.1-8B on this shape:
    TRITON_ATTN (the table's entry), FLASHINFER (+ native decode; decode
    only), FLASH_ATTN."""
    from attn_select.backends.run.runner import RunOptions, make_env, run_group
    from attn_select.cli.run import run_target
    from attn_select.selector.explain import explain
    from attn_select.selector.overrides import Overrides
    from attn_select.selector.profiles import load_model
    from attn_select.selector.run_plan import Shape, plan_run

    shape_name, kv = case
    sdev, _, kern = run_target("cuda" if dev.type == "cuda" else "cpu", None)
    facts = load_model("llama-3.1-8b", tp=1, dtype="auto", capability=sdev.capability)
    ov = Overrides(dtype=None, kv_cache_dtype=None if kv == "auto" else kv, block_size=None, backend=None, tp=1)
    exp = explain(facts, sdev, kern, ov)
    # FlashInfer's prefill JIT-compiles for ~85 s on that machine: its decode
    # kernels only (the prefill target is vLLM's FA3)
    backends = ("TRITON_ATTN", "FLASHINFER", "FLASH_ATTN") if shape_name == "decode" else ("TRITON_ATTN", "FLASH_ATTN")
    plan = plan_run(exp, facts.dtype, kv, [Shape(*SHAPE_ARGS[shape_name])], 16, backends)
    opts = RunOptions(device=str(dev), checks=2, timing=True, time_budget_s=0.8, build_span_s=0.0, progress=progress)
    env = make_env(opts, plan.dtype, kv, progress)
    rows = []
    for g in plan.groups:
        run = run_group(g, env, opts, 16, ceiling, None)
        for r in run.rows:
            pf = r.perf
            rows.append(dict(backend=r.backend + (f" ({r.variant})" if r.variant else ""), status=r.status,
                             kernel=r.kernel, reason=r.reason,
                             err=max(r.check.rel_errors) if r.check else None,
                             us=round(pf.per_layer_us, 2) if pf else None,
                             tbs=round(pf.kv_read_tbs, 3) if pf else None,
                             tflops=round(pf.tflops, 1) if pf else None))
    env.workspace.clear()
    return rows


def phase_final(out: Path, dev, best_path: Path | None, tag: str, old: Path | None, seconds: float = 0.6,
                peers: bool = True) -> None:
    from attn_select.backends.run.harness import copy_ceiling
    from attn_select.backends.run.triton_attn import KernelConfig

    ceiling = copy_ceiling(dev) or 0.0
    best = json.loads(best_path.read_text())["best"] if best_path and best_path.exists() else {}
    old_cls = load_old(old) if old else None
    doc = dict(ceiling_tbs=ceiling / 1e12, device=_device_name(dev), tag=tag, cases={})
    for case in CASES:
        ctag = f"{case[0]}/{case[1]}"
        c = Case(case[0], case[1], dev)
        rows = []
        variants = [("table", None, None)]
        if ctag in best:
            variants.append(("sweep best", KernelConfig(**best[ctag]["cfg"]), None))
        if old_cls is not None:
            variants.append(("before (old kernel, its table)", None, old_cls))
        for i, (label, cfg, cls) in enumerate(variants):
            row = dict(variant=label)
            try:
                ad = c.adapter(cls)
                err, plan = c.check(ad, cfg)
                row.update(err=err, kernel=ad.kernel_name(plan), cfg=asdict(plan.cfg))
                row.update(c.time(ad, plan, seconds, 0.5 if i == 0 else 0.2))
            except Exception as e:
                row["error"] = _one_line(e)
            rows.append(row)
            log(f"{ctag} {json.dumps(row)}")
        c.free()
        if peers:
            try:
                rows += peer_rows(case, dev, ceiling, log)
            except Exception as e:
                rows.append(dict(backend="peers", error=_one_line(e)))
            for r in rows[-4:]:
                log(f"{ctag} {json.dumps(r)}")
        doc["cases"][ctag] = rows
        (out / f"triton_final.{tag}.json").write_text(json.dumps(doc, indent=1))
    print_table(doc)


def print_table(doc: dict) -> None:
    print(f"\n{doc['device']}, copy ceiling {doc['ceiling_tbs']:.2f} TB/s, {doc['tag']}")
    for ctag, rows in doc["cases"].items():
        for r in rows:
            name = r.get("variant") or r.get("backend")
            what = (r.get("kernel") or r.get("reason") or r.get("error") or "")[:70]
            print(f"{ctag:16} {name[:34]:34} {str(r.get('us')):>9} us {str(r.get('tbs')):>7} TB/s "
                  f"{str(r.get('tflops')):>6} TF  err {r.get('err')}  {what}")


def sweep(out: Path, log_fn=log) -> dict:
    """run_h200.py --stage sweep: the sweep; the fastest config per decode / prefill / mixed (bf16)."""
    import torch

    best = phase_sweep(out, torch.device("cuda"))
    return {k.split("/")[0]: v["cfg"] for k, v in best.items() if k.endswith("/auto") and k != "prefill8k/auto"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--phase", choices=("compile", "sweep", "final"), required=True)
    ap.add_argument("--part", default="0/1")
    ap.add_argument("--out", default=os.environ.get("OUT", "out"))
    ap.add_argument("--best", default=None)
    ap.add_argument("--old", default=None)
    ap.add_argument("--tag", default="run1")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--cases", default=None, help="comma list of shape/kv, e.g. decode/fp8,prefill/auto")
    a = ap.parse_args()
    import torch

    global CASES
    if a.cases:
        CASES = [tuple(x.split("/")) for x in a.cases.split(",")]
    dev = torch.device("cuda")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    if a.phase == "compile":
        i, n = (int(x) for x in a.part.split("/"))
        phase_compile(i, n, dev)
    elif a.phase == "sweep":
        phase_sweep(out, dev)
    else:
        phase_final(out, dev, Path(a.best) if a.best else None, a.tag, Path(a.old) if a.old else None,
                    peers=not a.no_peers)


if __name__ == "__main__":
    main()
