"""The runner on an MLA group, on the CPU with fakes of vLLM's kernels: each
row runs with its own page size and layer kind, rows whose requests vLLM
routes to the MLA prefill backend are skipped as routed and do not count
against the verdict, and the MLA prefill row runs the prefills."""

from __future__ import annotations

from attn_select.backends.run import runner
from attn_select.backends.run.flashattn_mla import FlashAttnMLAAdapter
from attn_select.backends.run.flashmla import INTERFACE, FlashMLAAdapter
from attn_select.backends.run.mla_prefill import MLAPrefillFlashAttnAdapter
from attn_select.backends.run.report import ROUTED_ELSEWHERE
from attn_select.selector.model_facts import LayerAttention
from attn_select.selector.run_plan import MLA_PREFILL, GroupPlan, RowPlan, Shape, ShapePlan

from mla_fake_kernels import FakeFlashMLA, FakeVllmFlashAttnMLA

ATTN = LayerAttention(576, 512, 4, 1, use_mla=True, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128,
                      kv_lora_rank=512)
DECODE = Shape("decode", decodes=2, decode_context=70)
MIXED = Shape("mixed", decodes=1, decode_context=30, prefills=2, prefill_new=4, prefill_context=20)


def test_an_mla_group_runs_each_row_with_its_page_and_kind(monkeypatch):
    fa, mla = FakeVllmFlashAttnMLA(), FakeFlashMLA()
    mods = {"vllm.vllm_flash_attn": fa, INTERFACE: mla}
    classes = {"FLASHMLA": FlashMLAAdapter, "FLASH_ATTN_MLA": FlashAttnMLAAdapter,
               MLA_PREFILL: MLAPrefillFlashAttnAdapter}
    monkeypatch.setattr(runner, "load_adapter",
                        lambda row, env, p: classes[row.backend](env, p, row, importer=mods.__getitem__))
    rows = (RowPlan("FLASHMLA", selected=True, adapter="x", page_size=64),
            RowPlan("FLASH_ATTN_MLA", adapter="x", page_size=16))
    prefill_row = RowPlan(MLA_PREFILL, "FLASH_ATTN", adapter="x", fa_version=3, mla_prefill="FLASH_ATTN")
    plan = GroupPlan("mla", 3, ATTN, "FLASHMLA", None, None, None,
                     (ShapePlan(DECODE, rows), ShapePlan(MIXED, rows + (prefill_row,))))
    opts = runner.RunOptions(device="cpu", checks=1, time_budget_s=0.05)
    env = runner.make_env(opts, "bfloat16", "auto", lambda m: None)
    g = runner.run_group(plan, env, opts, 16, None)
    got = {(r.shape, r.label): r for r in g.rows}
    assert got[("decode", "FLASHMLA")].correct and "page 64" in got[("decode", "FLASHMLA")].kernel
    assert got[("decode", "FLASH_ATTN_MLA")].correct and "page 16" in got[("decode", "FLASH_ATTN_MLA")].kernel
    # FLASHMLA's builder wants one query length for all: the prefills go to the MLA prefill backend
    routed = got[("mixed", "FLASHMLA")]
    assert routed.status == "skipped" and routed.routed_elsewhere and routed.reason.startswith(ROUTED_ELSEWHERE)
    assert "sends 2 of these 3 requests to the MLA prefill backend" in routed.reason
    assert got[("mixed", "FLASH_ATTN_MLA")].correct  # 4 <= 512 new tokens: its decode path
    pre = got[("mixed", "MLA prefill (FLASH_ATTN)")]
    assert pre.correct and "context chunk" in pre.kernel
    assert g.verdict == "confirmed", g.verdict_detail  # the routed prefill shape does not count
    assert pre.perf is not None and pre.perf.tflops > 0
    assert g.fastest["mixed"] == "FLASH_ATTN_MLA"  # the MLA prefill row does other work: no contender
