"""`attn-select run`'s text report from hand-made reports (no torch, no
kernels): the terminal width, folded skips, what a CPU row shows, and the
CPU run's exit status."""

from __future__ import annotations

import pytest

from attn_select.backends.run.report import BackendRow, Check, GroupRun, Perf, RunReport
from attn_select.cli.formats.run_text import fold_skipped, run_text
from attn_select.cli.run import exit_status

SHAPES = ("decode", "prefill", "mixed")
ATTN = dict(num_heads=32, num_kv_heads=8, head_size=128, head_size_v=128, sliding_window=None,
            soft_cap=None, has_sink=False, use_mla=False)


def perf(method: str, us: float = 12.5) -> Perf:
    return Perf(per_layer_us=us, min_us=us, method=method, samples=3, layers_timed=1, first_call_s=2.0,
                build_us=70.0, kv_bytes=1 << 20, kv_read_tbs=1e-5 if method == "wall" else 2.5,
                ceiling_fraction=None if method == "wall" else 0.8, num_layers=32, step_us=470.0,
                build_share=0.15)


def ran(shape: str, backend: str, method: str | None, err: float = 1e-3, kernel: str = "kernel k") -> BackendRow:
    return BackendRow(group="full", shape=shape, backend=backend, status="ran", kernel=kernel,
                      check=Check([err], 1e-2, 0), perf=perf(method) if method else None)


def skipped(shape: str, backend: str, reason: str, selected: bool = False, variant: str = "") -> BackendRow:
    return BackendRow(group="full", shape=shape, backend=backend, variant=variant, reason=reason,
                      selected=selected)


def report(rows: list[BackendRow], *, cpu: bool, selected: str = "FLASH_ATTN", verdict: str = "missing",
           detail: str = "FlashAttention needs a CUDA GPU", allow_missing: bool = False) -> RunReport:
    g = GroupRun(name="full", layers=32, attention=dict(ATTN), selected=selected, selection_error=None,
                 fa_version=3, flashinfer_decode=None, rows=rows, verdict=verdict, verdict_detail=detail)
    rep = RunReport(model="llama-3.1-8b", device="cpu" if cpu else "NVIDIA H200", capability=None if cpu else "9.0",
                    torch="2.13.0", dtype="bfloat16", kv_cache_dtype="auto", page_size=16,
                    shapes={s: s for s in SHAPES}, copy_ceiling_tbs=None if cpu else 4.0, kernels_source="")
    rep.groups.append(g)
    rep.exit_code, rep.summary = exit_status(rep, allow_missing)
    return rep


def cpu_rows(method: str | None = "wall") -> list[BackendRow]:
    rows = []
    for s in SHAPES:
        rows.append(skipped(s, "FLASH_ATTN", "FlashAttention needs a CUDA GPU", selected=True))
        rows.append(skipped(s, "FLASHINFER", "FlashInfer needs a CUDA GPU"))
        if s != "prefill":
            rows.append(skipped(s, "FLASHINFER", "FlashInfer needs a CUDA GPU", variant="native decode"))
        rows.append(ran(s, "TRITON_ATTN", method))
        rows.append(ran(s, "FLEX_ATTENTION", method))
        rows.append(skipped(s, "TURBOQUANT", "attn-select run has no adapter for this backend"))
    return rows


def test_a_backend_skipped_alike_on_every_shape_is_one_line():
    kept, folded = fold_skipped(cpu_rows())
    assert {r.backend for r in kept} == {"TRITON_ATTN", "FLEX_ATTENTION"}
    assert folded == [
        (["FLASH_ATTN *"], "FlashAttention needs a CUDA GPU"),
        (["FLASHINFER", "FLASHINFER (native decode)"], "FlashInfer needs a CUDA GPU"),
        (["TURBOQUANT"], "attn-select run has no adapter for this backend"),
    ]
    text = run_text(report(cpu_rows(), cpu=True), width=100)
    assert text.count("FlashInfer needs a CUDA GPU") == 1
    assert "skipped  FLASHINFER, FLASHINFER (native decode) on every shape: FlashInfer needs a CUDA GPU" in text


def test_an_mla_model_skipping_everything_prints_no_table():
    names = ["FLASH_ATTN_MLA", "FLASHMLA", "FLASHINFER_MLA", "TRITON_MLA"]
    rows = [skipped(s, n, "MLA layers: attn-select run has no MLA adapters", selected=n == "FLASH_ATTN_MLA")
            for s in SHAPES for n in names]
    why = "MLA layers: attn-select run has no MLA adapters"
    rep = report(rows, cpu=True, selected="FLASH_ATTN_MLA", detail=why)
    assert rep.exit_code == 1  # nothing ran: nothing was checked
    text = run_text(rep, width=120)
    assert " ".join(text.split()).count(why) == 3  # the skip line, the verdict and the summary
    assert "skipped  FLASH_ATTN_MLA *, FLASHMLA, FLASHINFER_MLA, TRITON_MLA on every shape: MLA layers" in text
    assert "kernel / reason" not in text and "rel err" not in text


def test_a_backend_skipped_for_different_reasons_stays_in_the_table():
    rows = [skipped("decode", "FLASHINFER", "flashinfer not installed"),
            skipped("prefill", "FLASHINFER", "not valid for this config per the selector: x"),
            ran("decode", "TRITON_ATTN", None), ran("prefill", "TRITON_ATTN", None)]
    kept, folded = fold_skipped(rows)
    assert kept == rows and folded == []


@pytest.mark.parametrize("width", [60, 80, 100, 140, 200])
@pytest.mark.parametrize("cpu", [True, False])
def test_run_text_follows_the_width(width, cpu):
    rows = cpu_rows("wall" if cpu else "events")
    text = run_text(report(rows, cpu=cpu), width=width)
    assert max(len(line) for line in text.splitlines()) <= width
    assert "…" not in text
    flat = " ".join(text.split())
    assert "kernel k" in flat and "1.0e-03" in flat


def test_cpu_rows_show_what_a_cpu_measures():
    text = run_text(report(cpu_rows("wall"), cpu=True), width=200)
    for gpu_only in ("KV TB/s", "% ceil", "L x t us", "copy ceiling", "(SM"):
        assert gpu_only not in text
    for measured in ("us/layer", "build c us", "first s", "rel err"):
        assert measured in text
    gpu = run_text(report(cpu_rows("events"), cpu=False), width=200)
    for column in ("KV TB/s", "% ceil", "L x t us", "copy ceiling 4.00 TB/s"):
        assert column in gpu


def test_narrow_rows_stack_kernel_and_timing_under_the_row():
    text = run_text(report(cpu_rows("wall"), cpu=True), width=70)
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("decode") and "TRITON_ATTN" in line)
    assert "ok" in lines[at] and "rel err 1.0e-03" in lines[at]
    assert lines[at + 1].strip() == "kernel k"
    assert lines[at + 2].strip() == "us/layer 12.5; build c us 70.0; first s 2.0"


def test_cpu_run_passes_when_every_cpu_backend_ran_and_says_the_selection_is_unconfirmed():
    rep = report(cpu_rows(), cpu=True)
    assert rep.exit_code == 0
    assert rep.summary.startswith("every backend that runs on a CPU ran and was correct (TRITON_ATTN, FLEX_ATTENTION)")
    assert rep.summary.endswith(
        "the selection was not confirmed (full: FLASH_ATTN: FlashAttention needs a CUDA GPU): run on a GPU to confirm it")
    assert "not confirmed on this CPU: FlashAttention needs a CUDA GPU" in run_text(rep, width=120)


def test_cpu_run_of_a_selection_with_no_adapter_does_not_send_you_to_a_gpu():
    # TOKENSPEED_MLA (SM100) has no run adapter: a GPU run could not confirm it either
    rows = [skipped(s, "TOKENSPEED_MLA", "attn-select run has no adapter for this backend", selected=True)
            for s in SHAPES] + [ran(s, "TRITON_MLA", None) for s in SHAPES]
    rep = report(rows, cpu=True, selected="TOKENSPEED_MLA", detail="attn-select run has no adapter for this backend")
    assert rep.exit_code == 0
    assert rep.summary.endswith("(full: TOKENSPEED_MLA: attn-select run has no adapter for this backend)")


def test_cpu_run_fails_on_any_wrong_backend():
    rows = cpu_rows()
    rows[3] = ran("decode", "TRITON_ATTN", "wall", err=0.5)
    rows[3].reason = "wrong result: rel. error 5.00e-01 > 1e-02"
    rep = report(rows, cpu=True)
    assert rep.exit_code == 1
    assert rep.summary == "full/decode: TRITON_ATTN was wrong on the CPU: wrong result: rel. error 5.00e-01 > 1e-02"


def test_cpu_run_where_nothing_ran_or_a_cpu_backend_is_selected_keeps_the_gpu_rule():
    nothing = [skipped(s, "FLASH_ATTN", "FlashAttention needs a CUDA GPU", selected=True) for s in SHAPES]
    assert report(nothing, cpu=True).exit_code == 1
    assert report(nothing, cpu=True, allow_missing=True).exit_code == 0
    # TRITON_ATTN runs on a CPU: selected and not run here is a finding
    rows = [skipped(s, "TRITON_ATTN", "triton not installed", selected=True) for s in SHAPES]
    rows += [ran(s, "FLEX_ATTENTION", None) for s in SHAPES]
    assert report(rows, cpu=True, selected="TRITON_ATTN", detail="triton not installed").exit_code == 1


def test_gpu_run_exit_status_is_unchanged():
    rows = cpu_rows("events")
    assert report(rows, cpu=False).exit_code == 1  # the selected backend did not run
