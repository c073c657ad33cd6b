"""tune's rendering on a synthetic sweep (no torch, no kernels): the text
report and its terminal plot, the JSON document, and the PNG/SVG plots."""

from __future__ import annotations

import importlib.util
import json

import pytest

from attn_select.cli.formats.tune_text import tune_text
from attn_select.cli.tune import TuneReport
from attn_select.selector.tune_result import PointResult, best_per_point, point_name, recommend
from attn_select.selector.tune_settings import DEFAULT_LABEL, candidate_settings
from tests.cli.test_tune import png_size

SETTINGS = {s.label: s for s in candidate_settings(False)}
NAMES = [(DEFAULT_LABEL, 1.0), ("FLASHINFER trtllm off", 0.85), ("TRITON_ATTN", 1.3)]


def synthetic(points=((1, 1024), (8, 1024), (1, 4096), (8, 4096)), noise=0.01) -> TuneReport:
    res = []
    for b, c in points:
        for name, f in NAMES:
            us = 5 + b * c / 1000 * f
            res.append(PointResult(point=point_name("decode", b, c, 1), kind="decode", batch=b, context=c,
                                   new_tokens=1, page_size=16, kv_cache_dtype="auto", setting=name, status="ok",
                                   per_layer_us=us, step_us=us * 32 + 20, kv_read_tbs=b * c / us / 1e3,
                                   repeats_us=[us * (1 + noise)] if name == DEFAULT_LABEL else []))
    rec = recommend(res, [(point_name("decode", 8, 4096, 1), 1.0)], SETTINGS, DEFAULT_LABEL)
    return TuneReport(model="m", device="NVIDIA H200", dtype="bfloat16",
                      settings=[SETTINGS[n].to_dict() for n, _ in NAMES],
                      dropped=[dict(setting="FLASH_ATTN fa2", page_size=16, kv_cache_dtype="auto", reason="sinks")],
                      points=res, best=best_per_point(res, DEFAULT_LABEL), recommendation=rec,
                      default_label=DEFAULT_LABEL)


def test_text_report_marks_the_default_and_recommends_in_vllm_flags():
    text = tune_text(synthetic())
    assert "*vLLM default" in text and "dropped  FLASH_ATTN fa2" in text
    assert text.rstrip().splitlines()[-1].startswith(
        "recommendation: --attention-backend FLASHINFER --attention-config '{\"use_trtllm_attention\": false}'")
    plot = text[text.index("per-layer latency (us)"):]
    bars = [ln for ln in plot.splitlines() if "#" in ln]
    assert len(bars) == 4 * len(NAMES)  # every point, every setting
    slowest = [ln for ln in bars if "TRITON_ATTN" in ln]
    assert all(ln.count("#") == 40 for ln in slowest)


def test_noise_larger_than_the_win_gives_no_recommendation():
    text = tune_text(synthetic(noise=0.5))
    assert "vLLM's default is within noise" in text and "recommendation:" not in text


def test_a_large_grid_plots_only_the_workload_points_in_the_terminal():
    grid = [(b, c) for b in (1, 8, 32) for c in (1024, 4096, 16384)]
    text = tune_text(synthetic(points=grid))
    plot = text[text.index("per-layer latency (us)"):]
    assert sum("#" in ln for ln in plot.splitlines()) == len(NAMES)


def test_json_has_every_point():
    doc = json.loads(synthetic().to_json())
    assert doc["schema"] == "attn-select.tune/1" and len(doc["points"]) == 4 * len(NAMES)
    assert doc["recommendation"]["recommend"] is True


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="needs matplotlib (the [plot] extra)")
def test_plots_are_a_png_of_the_fixed_size_and_an_svg(tmp_path):
    from attn_select.cli.tune_plot import SIZE_PX, save_plots

    png, svg = save_plots(synthetic(), tmp_path / "plot.png")
    assert png_size(png) == SIZE_PX == (1200, 800)
    assert "<svg" in svg.read_text()
