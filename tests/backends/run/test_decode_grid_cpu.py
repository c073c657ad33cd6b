"""benchmarks/run_decode_grid.py on the CPU: the grid, the rows each point
runs (ours, the variants deduplicated by their launches, the peers as
``attn-select run`` plans them) and the report, on tiny shapes under the
Triton interpreter, before the script reaches the H200."""

from __future__ import annotations

import json

import torch

from tests.backends.run.conftest import load_benchmark, needs_interpreter


def test_grid_points_are_capped_by_a_32_layer_deployment():
    g = load_benchmark("run_decode_grid")
    pts = g.points()
    # 3 heads x 2 GQA x 2 pages x 15 (batch, context), less what does not fit
    assert len(pts) < 180 and (32, 8, 128, 16, 32, 4096) in pts and (8, 1, 128, 16, 256, 32768) in pts
    assert (32, 8, 128, 16, 128, 32768) not in pts  # 16 GiB a layer
    assert all(b * c * kv * h * 4 <= g.LAYER_CAP for _, kv, h, _, b, c in pts)


@needs_interpreter
def test_sweep_on_tiny_points(tmp_path, monkeypatch):
    g = load_benchmark("run_decode_grid")
    pts = [(4, 1, 32, 16, 2, 600), (4, 2, 64, 16, 1, 40)]
    doc = g.phase_sweep(tmp_path, "cpu", "t", seconds=0.01, max_seconds=600, pts=pts)
    assert json.loads((tmp_path / "decode_grid.t.json").read_text())["points"] == doc["points"]
    assert len(doc["points"]) == 2
    for point in doc["points"]:
        rows = {r["row"]: r for r in point["rows"]}
        table = rows["TRITON_ATTN"]
        assert table["err"] < 2e-2 and "us" in table and not table.get("wrong")
        # the unsplit variant launches what no other does; the rest are timed or named as the same launch
        assert "us" in rows["TRITON_ATTN [unsplit]"] or "same_as" in rows["TRITON_ATTN [unsplit]"]
        for lab, r in rows.items():
            if lab.startswith("TRITON_ATTN"):
                assert "error" not in r and not r.get("wrong"), r  # every variant checked and correct
                assert ("us" in r) != ("same_as" in r)
        # the peers have no GPU package here: a reason each, never a crash
        peers = [r for lab, r in rows.items() if not lab.startswith("TRITON_ATTN")]
        assert peers and all("reason" in r or "error" not in r for r in peers)
    # the split point: the table's in-kernel merge and the two-launch variant are different launches
    rows = {r["row"]: r for r in doc["points"][0]["rows"]}
    assert rows["TRITON_ATTN"]["splits"] > 1 and "us" in rows["TRITON_ATTN [two launches]"]
    assert "in-kernel" in rows["TRITON_ATTN"]["kernel"]
    assert g.summary_line(doc["points"][0]).startswith("4/1 h32 p16 2x600")


@needs_interpreter
def test_warm_runs_every_variant_once_per_point(monkeypatch):
    g = load_benchmark("run_decode_grid")
    monkeypatch.setattr(g, "points", lambda *a, **k: [(4, 1, 32, 16, 2, 300)])
    ran = []
    import attn_select.backends.run.triton_attn as ta

    orig = ta.TritonAttnAdapter.run
    monkeypatch.setattr(ta.TritonAttnAdapter, "run", lambda self, plan, *a: ran.append(plan.cfg) or orig(self, plan, *a))
    g.phase_warm(1, 2, "cpu", heads=(32,))  # part 1 of 2: ours (part 0 takes the peers of head 32)
    assert ran[0] == ta.DECODE_CONFIG and len(ran) == 1 + len(g.variants())


def _row(name, us, cfg, kernel, splits):
    from dataclasses import asdict

    return dict(row=name, us=us, cfg=asdict(cfg), kernel=kernel, splits=splits, err=1e-3)


def test_table_report_takes_the_measured_launch_the_table_makes_now():
    """decode_grid_table.py: a point's "ours" is the row whose launch (work list,
    merge, tiles) is the table's now, never a row that merely ran; a point with
    no such row is "not measured"."""
    from dataclasses import replace

    from attn_select.backends.run.triton_attn import DECODE_CONFIG

    t = load_benchmark("decode_grid_table")
    base = replace(DECODE_CONFIG, short_split_tokens=0, few_programs=0)
    fused = "attn-select paged kernel (decode tiles 16x64, split-KV up to 5, merged in-kernel)"
    # 2 requests x 8 KV heads x 512 tokens: the table cuts them in 5 (128-key splits; 80 programs, past
    # few_programs) and merges in-kernel
    point = dict(q=32, kv=8, head=128, page=16, batch=2, context=512, rows=[
        dict(row="FLASH_ATTN", us=9.5), dict(row="FLASHINFER", us=8.4),
        _row("TRITON_ATTN", 11.1, replace(base, fused_merge_max=1 << 30), "... split-KV up to 3, merged in-kernel", 3),
        _row("TRITON_ATTN [two launches]", 11.2, replace(base, fused_merge_max=0), "... split-KV up to 3", 3),
        _row("TRITON_ATTN [in-kernel, 128-key splits]", 10.5,
             replace(base, fused_merge_max=1 << 30, min_split_tokens=128), fused, 5),
    ])
    doc = dict(kv_cache_dtype="auto", points=[point])
    (r,) = t.rows_of(doc)
    assert (r["ours"], r["splits"], r["fused"], r["fastest"], r["two"]) == (10.5, 5, True, "FLASHINFER", 11.2)
    # without the 128-key row the table's launch was not measured: no figure
    point["rows"] = point["rows"][:-1]
    (r,) = t.rows_of(doc)
    assert r["ours"] is None and "not measured" in t.render([r])
    s = t.summary(t.rows_of(dict(kv_cache_dtype="auto", points=[point])))
    assert s["measured"] == 0 and s["two_launch_median"] == round(100 * 8.4 / 11.2, 1)


def test_table_report_beside_a_repeat_run():
    """--repeat: the second run's figure and ratio per point in the last column,
    and the run-to-run difference (ours and the fastest peer) in the summary;
    a point the repeat lacks is "not measured" there, never borrowed."""
    from dataclasses import replace

    from attn_select.backends.run.triton_attn import DECODE_CONFIG

    t = load_benchmark("decode_grid_table")
    base = replace(DECODE_CONFIG, short_split_tokens=0, few_programs=0)
    fused = "attn-select paged kernel (decode tiles 16x64, split-KV up to 5, merged in-kernel)"
    cfg = replace(base, fused_merge_max=1 << 30, min_split_tokens=128)

    def doc(ours_us, peer_us, context=512):
        return dict(kv_cache_dtype="auto", points=[dict(q=32, kv=8, head=128, page=16, batch=2, context=context, rows=[
            dict(row="FLASHINFER", us=peer_us), _row("TRITON_ATTN", ours_us, cfg, fused, 5)])])

    first, again = t.rows_of(doc(10.0, 9.0)), t.rows_of(doc(10.2, 9.0))
    table = t.render(first, again)
    assert "repeat: ours us, vs fastest" in table and "| 10.2, 88.2% |" in table
    s = t.summary(first, again)
    assert (s["repeated"], s["repeat_ours_max_pct"], s["repeat_peer_max_pct"], s["repeat_within_3pct"]) == (1, 2.0, 0.0, 1)
    elsewhere = t.rows_of(doc(10.2, 9.0, context=4096))
    assert "not measured |" in t.render(first, elsewhere) and t.summary(first, elsewhere)["repeated"] == 0
