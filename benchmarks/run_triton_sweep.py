"""Sweep our Triton kernel's launch configs on the Llama-3.1-8B shapes
(decode 32 x 4096, prefill 4 x 512 on 1024; page 16, bf16, 32/8 heads, head
128), check each against the float32 reference, and return the fastest
correct config per shape. Called by run_h200.py --stage sweep."""

from __future__ import annotations

import itertools
import json
from dataclasses import asdict, replace
from pathlib import Path

import torch

from attn_select.backends.run.adapter import RunEnv
from attn_select.backends.run.batch import fill_random_, make_batch, random_inputs, write_new_tokens
from attn_select.selector.run_plan import standard_shapes
from attn_select.backends.run.harness import copy_ceiling, time_device
from attn_select.backends.run.reference import AttnParams, reference_attention, relative_error
from attn_select.backends.run.layer_kind import MHA
from attn_select.backends.run.triton_attn import TritonAttnAdapter

SM = 132


def configs(kind: str):
    from attn_select.backends.run import triton_attn as ta

    if kind == "decode":
        yield ta.DECODE_CONFIG
        for bn, st, tp in ((64, 2, SM * 4), (128, 2, SM * 4), (128, 3, SM * 4), (64, 3, SM * 6)):
            yield replace(ta.DECODE_CONFIG, small_n=bn, small_stages=st, target_programs=tp)
    elif kind == "prefill":
        yield ta.PREFILL_CONFIG
    else:
        yield ta.MIXED_CONFIG
        yield replace(ta.PREFILL_CONFIG, min_split_tokens=256)  # one large-tile path for everything
        for bm, bn, w in itertools.product((64, 128), (32, 64), (4, 8)):
            yield replace(ta.MIXED_CONFIG, block_m=bm, block_n=bn, num_warps=w)


def sweep(out: Path, log) -> dict:
    dev = torch.device("cuda")
    p = AttnParams(32, 8, 128, 128, 128 ** -0.5)
    env = RunEnv(dev, torch.cuda.get_device_capability(), torch.bfloat16, "auto")
    ad = TritonAttnAdapter(env, p)
    ceiling = copy_ceiling(dev)
    log(f"copy ceiling {ceiling / 1e12:.2f} TB/s")
    results, best = [], {}
    for shape in standard_shapes(kinds=("decode", "prefill", "mixed")):
        b = make_batch(shape, 16, dev, seed=3, spare_pages=64)
        caches = []
        for _ in range(2):
            c = ad.alloc_cache(b.num_pages, 16)
            fill_random_(c)
            caches.append(c)
        k, v = ad.kv_views(caches[0])
        inp = random_inputs(b, 32, 8, 128, 128, torch.bfloat16, False, torch.Generator().manual_seed(5))
        write_new_tokens(k, v, b, inp)
        ref = reference_attention(inp.q, k, v, b, p)
        nbytes = MHA(p).kv_bytes(b, 2)
        out_t = torch.empty_like(inp.q)
        for cfg in configs(shape.kind):
            try:
                plan = ad.build(b, cfg)
                out_t.fill_(float("nan"))
                ad.run(plan, inp.q, caches[0], None, out_t)
                torch.cuda.synchronize()
                err = relative_error(out_t, ref)

                def two_layers():
                    for c in caches:
                        ad.run(plan, inp.q, c, None, out_t)

                t = time_device(two_layers, dev, calls=4, max_seconds=0.6)
                us = t.median_us / 2
                row = dict(shape=shape.kind, cfg=asdict(cfg), us=us, tbs=nbytes / us / 1e6, err=err,
                           splits=plan.max_splits, items=plan.num_items)
            except Exception as e:
                row = dict(shape=shape.kind, cfg=asdict(cfg), error=f"{type(e).__name__}: {str(e)[:200]}")
            results.append(row)
            log(json.dumps(row))
            if "us" in row and row["err"] < 2e-2 and (shape.kind not in best or row["us"] < best[shape.kind]["us"]):
                best[shape.kind] = row
        del caches, k, v
        torch.cuda.empty_cache()
    (out / "triton_sweep.json").write_text(json.dumps(dict(ceiling_tbs=ceiling / 1e12, results=results), indent=1))
    for kind, row in best.items():
        log(f"best {kind}: {row['cfg']} {row['us']:.1f} us {row['tbs']:.2f} TB/s err {row['err']:.1e}")
    return {k: v["cfg"] for k, v in best.items()}
