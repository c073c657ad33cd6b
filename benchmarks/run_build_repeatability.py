"""How reproducible is the host build cost c that `attn-select run` reports?

For Llama-3.1-8B's attention (32/8 heads, head 128, page 16) and the three
default batch shapes, times each runnable adapter's once-per-step metadata
build with ``backends.run.harness.time_host`` as `attn-select run` does, in
several independent measurements, once with torch's default intra-op threads
and once with one thread (what a vLLM 0.33.0 worker serves with),
interleaved so that a slow spell hits both alike. Prints, per adapter, shape and setting,
the round results and their spread (max - min) / min.

    python3 benchmarks/run_build_repeatability.py --rounds 6     # on a GPU machine

Adapters whose package is missing are left out; FlashInfer only with
``--flashinfer`` (its plan() needs the JIT-compiled modules).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import torch

from attn_select.backends.run.adapter import RunEnv
from attn_select.backends.run.batch import make_batch
from attn_select.selector.run_plan import standalone_row, standard_shapes
from attn_select.backends.run.harness import time_host
from attn_select.backends.run.reference import AttnParams
from attn_select.backends.run.runner import load_adapter


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--flashinfer", action="store_true")
    ap.add_argument("--spread", type=int, default=5, help="time_host rounds per measurement (1: one burst)")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    args = ap.parse_args()
    dev = torch.device("cuda")
    env = RunEnv(dev, torch.cuda.get_device_capability(dev), torch.bfloat16, "auto")
    p = AttnParams(32, 8, 128, 128, 128 ** -0.5)
    names = ["FLASH_ATTN", "TRITON_ATTN", "FLEX_ATTENTION"] + (["FLASHINFER"] if args.flashinfer else [])
    settings = {"default threads": None, "1 thread": 1}
    results: dict[str, list[float]] = {}
    for shape_i, shape in enumerate(standard_shapes(None, None, ("decode", "prefill", "mixed"))):
        batch = make_batch(shape, 16, dev, seed=shape_i, spare_pages=64)
        for name in names:
            adapter = load_adapter(standalone_row(name), env, p)
            if adapter.unavailable():
                print(f"{name}: {adapter.unavailable()}", file=sys.stderr)
                continue
            for _ in range(args.rounds):
                for label, threads in settings.items():
                    t = time_host(lambda: adapter.build(batch), dev, threads=threads, rounds=args.spread)
                    results.setdefault(f"{name} {shape.kind} {label}", []).append(t.min_us)
                    results.setdefault(f"{name} {shape.kind} {label} (CPU time)", []).append(t.cpu_min_us)
            adapter.close()
    print(f"torch default intra-op threads: {torch.get_num_threads()}")
    for key, mins in results.items():
        spread = (max(mins) - min(mins)) / min(mins)
        print(f"{key:45s} c = {min(mins):8.1f} .. {max(mins):8.1f} us  spread {100 * spread:5.1f}%  "
              + " ".join(f"{m:.0f}" for m in mins))
    with open(os.path.join(args.out, "build_repeatability.json"), "w") as f:
        json.dump({"threads_default": torch.get_num_threads(), "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
