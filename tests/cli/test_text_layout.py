"""explain's text at terminal widths: nothing cut, long reasons wrapped whole,
the ranking line, and the (if selected) label on blocks of other backends."""

from __future__ import annotations

import json

import pytest

from tests.cli.helpers import run

CASES = [
    ("deepseek-v3", "h100"),  # long MLA reasons, a 26-character backend name
    ("deepseek-v3.2", "b200"),  # sparse MLA: many invalid candidates
    ("gemma-2-9b", "h100"),  # two reasons on one candidate, two groups
    ("gpt-oss-20b", "b200"),
    ("whisper-small", "t4"),
    ("llama-3.1-8b", "h100"),
]


def _words(text: str) -> str:
    return " ".join(text.split())


def _reasons(capsys, model: str, device: str) -> list[str]:
    rc, out, _ = run(capsys, "explain", model, "--device", device, "--format", "json")
    doc = json.loads(out)
    return [r for g in doc["groups"] for c in g["candidates"] for r in c["reasons"]]


@pytest.mark.parametrize("width", [80, 60])
@pytest.mark.parametrize("model,device", CASES)
def test_every_reason_appears_whole_at_narrow_widths(capsys, monkeypatch, model, device, width):
    reasons = _reasons(capsys, model, device)
    monkeypatch.setenv("COLUMNS", str(width))
    monkeypatch.setenv("NO_COLOR", "1")
    rc, out, _ = run(capsys, "explain", model, "--device", device)
    assert rc == 0
    assert "…" not in out
    assert max(len(line) for line in out.splitlines()) <= width
    flat = _words(out)
    for reason in reasons:
        assert _words(reason) in flat, reason
    # a reason on its own lines: wrapped at words, never mid-word
    for line in out.splitlines():
        assert not line.endswith("-") or line.strip() == "", line


def test_narrow_layout_puts_each_reason_under_its_backend(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("NO_COLOR", "1")
    _, out, _ = run(capsys, "explain", "deepseek-v3", "--device", "h100")
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if "FLASHINFER_MLA " in line and "invalid" in line)
    assert lines[at + 1].strip() == "compute capability not supported"
    assert lines[at + 1].startswith("     ")


def test_wide_layout_is_one_table(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "160")
    monkeypatch.setenv("NO_COLOR", "1")
    _, out, _ = run(capsys, "explain", "llama-3.1-8b", "--device", "h100")
    row = next(line for line in out.splitlines() if line.startswith("4   TURBOQUANT"))
    assert "kv_cache_dtype not supported" in row and "UNIFORM_BATCH" in row


def test_ranking_line_names_the_outranked_valid_backends(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("NO_COLOR", "1")
    _, out, _ = run(capsys, "explain", "llama-3.1-8b", "--device", "h100")
    assert ("why         FLASHINFER, TRITON_ATTN and FLEX_ATTENTION were valid but rank below FLASH_ATTN "
            "in vLLM's priority list for SM90\n") in out
    _, out, _ = run(capsys, "explain", "deepseek-v3.2", "--device", "b200")
    assert ("FLASHINFER_MLA_SPARSE was valid but ranks below FLASHMLA_SPARSE in vLLM's priority list for SM100; "
            "FLASHINFER_MLA, TOKENSPEED_MLA, CUTLASS_MLA, FLASH_ATTN_MLA, FLASHMLA and TRITON_MLA rank above it "
            "but are invalid") in _words(out)
    # an explicit backend is validated alone: nothing was ranked
    _, out, _ = run(capsys, "explain", "llama-3.1-8b", "--device", "h100", "--backend", "TRITON_ATTN")
    assert "\nwhy " not in out


def test_blocks_of_a_backend_not_selected_say_if_selected(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("NO_COLOR", "1")
    _, h100, _ = run(capsys, "explain", "llama-3.1-8b", "--device", "h100")  # FLASH_ATTN selected
    assert "FA version  FlashAttention 3" in h100
    assert "FlashInfer  (if selected) decode xqa" in h100
    _, b200, _ = run(capsys, "explain", "llama-3.1-8b", "--device", "b200")  # FLASHINFER selected
    assert "FA version  (if selected) FlashAttention" in b200
    assert "FlashInfer  decode trtllm-gen" in b200 or "FlashInfer  decode " in b200
    assert "FlashInfer  (if selected)" not in b200
