"""Issue 13's sweep table from a run of ``run_decode_grid.py``: per point, the
launch our TRITON_ATTN table makes now, found among the launches that run
measured, beside the fastest peer.

    python3 benchmarks/decode_grid_table.py benchmarks/results/h200/grid/decode_grid.run1.auto.json
    python3 benchmarks/decode_grid_table.py RUN.json --repeat REPEAT.json   # beside a repeat run

The table's launch is recomputed here (``TritonAttnAdapter.build`` on the
point's shape, on the CPU) and matched to the measured row with the same work
list, merge and kernel (``kernel_key``); a point where no measured row launched what the table launches
now is reported as not measured, never estimated. Also printed: the
two-launch row (the split policy before the decode grid, merge as a second
launch) for comparison, and the summary against the issue's 95 % target.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import fields
from pathlib import Path

OURS = "TRITON_ATTN"
PEERS = ("FLASH_ATTN", "FLASHINFER", "FLASHINFER (native decode)")


def _config(d: dict):
    """A measured row's KernelConfig (rows written before the merge became a threshold
    carry ``fused_merge``; the row's kernel name says whether it merged in-kernel)."""
    from attn_select.backends.run.triton_attn import KernelConfig

    names = {f.name for f in fields(KernelConfig)}
    return KernelConfig(**{k: v for k, v in d.items() if k in names})


class _Launches:
    """TritonAttnAdapter.build on the CPU for one point's shape: the work list,
    merge and config a launch gets from a config (the table's when None), as
    ``attn-select run`` would build them there."""

    def __init__(self, point: dict, fp8: bool):
        import torch

        from attn_select.backends.run.adapter import RunEnv
        from attn_select.backends.run.batch import make_batch
        from attn_select.backends.run.reference import AttnParams
        from attn_select.backends.run.triton_attn import TritonAttnAdapter
        from attn_select.selector.run_plan import Shape

        head = point["head"]
        env = RunEnv(torch.device("cpu"), None, torch.bfloat16, "fp8" if fp8 else "auto")
        self.adapter = TritonAttnAdapter(env, AttnParams(point["q"], point["kv"], head, head, head ** -0.5))
        self.batch = make_batch(Shape("decode", decodes=point["batch"], decode_context=point["context"]),
                                point["page"], "cpu", seed=3, spare_pages=64)

    def plan(self, cfg=None):
        return self.adapter.build(self.batch, cfg)


def measured_row(point: dict, table, launches: _Launches) -> dict | None:
    """The measured row that launched what the table launches now (``table``:
    its plan on this point), or None."""
    import torch

    from attn_select.backends.run.triton_attn import kernel_key

    fused = table.counters is not None
    for r in point["rows"]:
        if not r["row"].startswith(OURS) or "us" not in r or "cfg" not in r:
            continue
        rc = _config(r["cfg"])
        if ("merged in-kernel" in r["kernel"]) != fused or kernel_key(rc, fused) != kernel_key(table.cfg, fused):
            continue
        w = launches.plan(rc).work
        if w.shape == table.work.shape and torch.equal(w, table.work):
            return r
    return None


def rows_of(doc: dict) -> list[dict]:
    fp8 = doc.get("kv_cache_dtype", "auto") != "auto"
    out = []
    for p in doc["points"]:
        timed = {r["row"]: r for r in p["rows"] if "us" in r}
        peers = {k: timed[k]["us"] for k in PEERS if k in timed}
        fast = min(peers.items(), key=lambda kv: kv[1]) if peers else None
        launches = _Launches(p, fp8)
        table = launches.plan()
        ours = measured_row(p, table, launches)
        out.append(dict(q=p["q"], kv=p["kv"], head=p["head"], page=p["page"], batch=p["batch"], context=p["context"],
                        splits=table.max_splits, fused=table.counters is not None, ours=ours["us"] if ours else None,
                        ours_row=ours["row"] if ours else None, two=_two_launch_us(p), peers=peers,
                        fastest=fast[0] if fast else None, fastest_us=fast[1] if fast else None))
    return out


def _two_launch_us(point: dict) -> float | None:
    """The two-launch row's time (named by the same launch when it repeated one)."""
    rows = {r["row"]: r for r in point["rows"]}
    r = rows.get(f"{OURS} [two launches]")
    while r is not None and "same_as" in r:
        r = rows.get(r["same_as"])
    return r.get("us") if r else None


def _key(r: dict) -> tuple:
    return r["q"], r["kv"], r["head"], r["page"], r["batch"], r["context"]


def render(rows: list[dict], again: list[dict] | None = None) -> str:
    """The table; ``again``: a repeat run's rows, shown in place of the two-launch column."""
    rep = {_key(r): r for r in again or []}
    last = "repeat: ours us, vs fastest" if again is not None else "two-launch us"
    lines = ["| heads (q / kv) | head | page | batch x context | ours (table) us | splits | merge | vLLM FA3 | "
             f"FlashInfer XQA | FlashInfer native | fastest peer | ours vs fastest | {last} |",
             "|---|---:|---:|---|---:|---:|---|---:|---:|---:|---|---:|---:|"]
    for r in rows:
        p = r["peers"]
        cell = lambda k: f"{p[k]:.1f}" if k in p else "-"  # noqa: E731
        merge = "-" if r["splits"] == 1 else ("in-kernel" if r["fused"] else "2nd launch")
        ours = f"{r['ours']:.1f}" if r["ours"] else "not measured"
        pct = f"{100 * r['fastest_us'] / r['ours']:.1f}%" if r["ours"] and r["fastest_us"] else "-"
        fastest = (r["fastest"] or "-").replace("FLASHINFER (native decode)", "native").replace(
            "FLASHINFER", "XQA").replace("FLASH_ATTN", "FA3")
        two = f"{r['two']:.1f}" if r["two"] is not None else "-"
        if again is not None:
            b = rep.get(_key(r))
            two = (f"{b['ours']:.1f}, {100 * b['fastest_us'] / b['ours']:.1f}%"
                   if b and b["ours"] and b["fastest_us"] else "not measured")
        lines.append(f"| {r['q']} / {r['kv']} | {r['head']} | {r['page']} | {r['batch']} x {r['context']} | {ours} | "
                     f"{r['splits']} | {merge} | {cell('FLASH_ATTN')} | {cell('FLASHINFER')} | "
                     f"{cell('FLASHINFER (native decode)')} | {fastest} | {pct} | {two} |")
    return "\n".join(lines)


def summary(rows: list[dict], again: list[dict] | None = None) -> dict:
    pct = [100 * r["fastest_us"] / r["ours"] for r in rows if r["ours"] and r["fastest_us"]]
    two = [100 * r["fastest_us"] / r["two"] for r in rows if r["two"] and r["fastest_us"]]
    out = dict(points=len(rows), measured=len(pct), at_least_95=sum(p >= 95 for p in pct),
               at_least_100=sum(p >= 100 for p in pct),
               median=round(statistics.median(pct), 1) if pct else None, lowest=round(min(pct), 1) if pct else None,
               two_launch_median=round(statistics.median(two), 1) if two else None,
               two_launch_at_least_95=sum(p >= 95 for p in two))
    if again is not None:
        # run-to-run difference of the same point, ours and the fastest peer, in % of the smaller
        rep = {_key(r): r for r in again}
        pairs = [(r, rep[_key(r)]) for r in rows if _key(r) in rep and r["ours"] and rep[_key(r)]["ours"]]
        dev = lambda x, y: 100 * abs(x - y) / min(x, y)  # noqa: E731
        ours = [dev(a["ours"], b["ours"]) for a, b in pairs]
        peer = [dev(a["fastest_us"], b["fastest_us"]) for a, b in pairs if a["fastest_us"] and b["fastest_us"]]
        out.update(repeated=len(pairs), repeat_ours_max_pct=round(max(ours), 2) if ours else None,
                   repeat_ours_median_pct=round(statistics.median(ours), 2) if ours else None,
                   repeat_peer_max_pct=round(max(peer), 2) if peer else None,
                   repeat_within_3pct=sum(d <= 3 for d in ours))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report", type=Path)
    ap.add_argument("--repeat", type=Path, default=None, help="a repeat run of the same grid, shown beside it")
    a = ap.parse_args(argv)
    rows = rows_of(json.loads(a.report.read_text()))
    again = rows_of(json.loads(a.repeat.read_text())) if a.repeat else None
    print(render(rows, again))
    print()
    print(json.dumps(summary(rows, again)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
