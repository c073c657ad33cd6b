"""One decode (or prefill) step of each backend under Nsight Compute, for where
our TRITON_ATTN kernel loses time against a peer (issue 13's fp8 decode, and
the Gluon prefill at page 16 against page 64).

    ncu --clock-control none --nvtx --nvtx-include "prof/" --section SpeedOfLight ... \\
        python3 benchmarks/profile_decode_ncu.py --kv fp8 --batch 32 --context 4096

Plans the rows as ``attn-select run`` does (run_decode_grid.plan_rows:
TRITON_ATTN, FLASH_ATTN, FLASHINFER and its native decode), checks each once
against the float32 reference and runs it twice to warm it (FlashInfer's JIT
included), then runs each once more inside the NVTX range ``prof``: only
those launches are profiled. Prints each row's kernel and error; the
profile is ncu's own report. ``--prefill-pages 16,64``: instead, the rule's
TRITON_ATTN prefill (4 x 512 new on 1024 cached, Llama-3.1-8B heads) at each
page, and vLLM's FA3 on the same batch (run_triton_sweep's ``Case``).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kv", default="fp8", help="auto or fp8")
    ap.add_argument("--heads", default="32/8")
    ap.add_argument("--head", type=int, default=128)
    ap.add_argument("--page", type=int, default=16)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--context", type=int, default=4096)
    ap.add_argument("--rows", default="TRITON_ATTN,FLASHINFER", help="comma list of row labels to profile")
    ap.add_argument("--prefill-pages", default="", help="comma list of page sizes: profile the prefill instead")
    a = ap.parse_args()
    if a.prefill_pages:
        return prefill([int(x) for x in a.prefill_pages.split(",")])

    import torch

    import run_decode_grid as grid
    from attn_select.backends.run.adapter import RunEnv
    from attn_select.backends.run.batch import fill_random_, make_batch
    from attn_select.backends.run.layer_kind import layer_kind
    from attn_select.backends.run.reference import relative_error
    from attn_select.backends.run.runner import load_adapter
    from attn_select.selector.run_plan import Shape

    q, kv = (int(x) for x in a.heads.split("/"))
    dev = torch.device("cuda")
    with tempfile.TemporaryDirectory() as root:
        rows, g, dtype = grid.plan_rows(Path(root), q, kv, a.head, a.page, [(a.batch, a.context)], "cuda", a.kv)
    env = RunEnv(dev, torch.cuda.get_device_capability(dev), getattr(torch, dtype), a.kv)
    kind = layer_kind(g)
    batch = make_batch(Shape("decode", decodes=a.batch, decode_context=a.context), a.page, dev, seed=3)
    want = set(a.rows.split(","))
    ready = []
    for r in rows[(a.batch, a.context)]:
        label = r.backend + (f" ({r.variant})" if r.variant else "")
        if label not in want or r.skip is not None:
            continue
        ad = load_adapter(r, env, kind.p)
        why = ad.unavailable()
        if why:
            print(f"{label}: {why}", flush=True)
            continue
        gen = torch.Generator().manual_seed(7)
        cache = ad.alloc_cache(batch.num_pages, batch.page_size)
        fill_random_(cache, gen)
        inp = kind.inputs(batch, env.dtype, gen)
        kind.write(ad, cache, batch, inp)
        out = kind.output(batch, env.dtype, dev, float("nan"))
        plan = ad.build(batch)
        for _ in range(2):
            kind.run(ad, plan, inp, cache, out)
        torch.cuda.synchronize()
        err = relative_error(out, kind.reference(ad, cache, batch, inp))
        print(f"{label}: {ad.kernel_name(plan)}, err {err:.2e}", flush=True)
        ready.append((label, ad, plan, inp, cache, out))
    for label, ad, plan, inp, cache, out in ready:
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push("prof")
        kind.run(ad, plan, inp, cache, out)
        torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
    return 0


def prefill(pages: list[int]) -> int:
    import torch

    import run_triton_sweep as sw
    from attn_select.backends.run.flash_attn import FlashAttnAdapter
    from attn_select.backends.run.triton_attn import TritonAttnAdapter
    from attn_select.selector.run_plan import RowPlan

    dev = torch.device("cuda")
    ready = []
    for page in pages:
        for label, cls in (("TRITON_ATTN", TritonAttnAdapter),
                           ("FLASH_ATTN", lambda e, q: FlashAttnAdapter(e, q, RowPlan("FLASH_ATTN", fa_version=3)))):
            c = sw.Case("prefill", "auto", dev, page=page, timed=False,
                        layout=None if label == "TRITON_ATTN" else cls)
            ad = cls(c.env, c.p)
            why = ad.unavailable()
            if why:
                print(f"{label} page {page}: {why}", flush=True)
                continue
            err, plan = c.check(ad, None)
            ad.run(plan, c.inp.q, c.check_cache, None, c.out)
            print(f"{label} page {page}: {ad.kernel_name(plan)}, err {err:.2e}", flush=True)
            ready.append((ad, plan, c))
    for ad, plan, c in ready:
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push("prof")
        ad.run(plan, c.inp.q, c.check_cache, None, c.out)
        torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
