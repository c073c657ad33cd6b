"""TRITON_ATTN's fp8 decode as the table builds it (the ``widen_v`` rule included), checked
and timed on 32 x 4096, Llama-3.1-8B heads, page 16, beside the entry without the rule:

    python3 benchmarks/check_fp8_rule.py

Prints each launch's kernel name, error against the float32 reference (scales 0.5 / 2.0)
and us per layer (run_triton_sweep's ``Case``: CUDA-graph replays over layer caches)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def main() -> int:
    import torch

    import run_triton_sweep as sw
    from attn_select.backends.run.triton_attn import FP8_DECODE_CONFIG

    dev = torch.device("cuda")
    c = sw.Case("decode", "fp8", dev)
    ad = c.adapter()
    for label, cfg in (("table (rule)", None), ("entry without widening", FP8_DECODE_CONFIG)):
        err, plan = c.check(ad, cfg)
        t = c.time(ad, plan, 0.5, 0.5)
        print(f"{label}: {t['us']:.2f} us, err {err:.2e}, {ad.kernel_name(plan)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
