"""Each MLA adapter of vLLM's kernels on a tiny shape on a real GPU (skipped
without CUDA): the kernel accepts the tensors as the adapter lays them out
and matches the float32 reference. An adapter whose kernel is not
installed, or not for this GPU, skips with its reason."""

from __future__ import annotations

import os

import pytest
import torch

from attn_select.backends.run.adapter import RunEnv
from attn_select.backends.run.batch import fill_random_, make_batch
from attn_select.backends.run.cutlass_mla import CutlassMLAAdapter
from attn_select.backends.run.flashattn_mla import FlashAttnMLAAdapter, FlashAttnMLASparseAdapter
from attn_select.backends.run.flashinfer_mla import FlashInferMLAAdapter
from attn_select.backends.run.flashmla import FlashMLAAdapter, FlashMLASparseAdapter
from attn_select.backends.run.layer_kind import MLA, MLAPrefill, MLASparse
from attn_select.backends.run.mla_prefill import MLAPrefillFlashAttnAdapter
from attn_select.backends.run.mla_reference import MLAParams
from attn_select.backends.run.reference import relative_error, tolerance
from attn_select.selector.run_plan import MLA_PREFILL, MLA_WRAPPER, FlashAttentionBuild, RowPlan, Shape

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

DECODE = Shape("decode", decodes=4, decode_context=300)
PREFILL = Shape("prefill", prefills=2, prefill_new=40, prefill_context=200)

CASES = [
    # (adapter, row, kv, page, kind, shape, extra MLAParams)
    (FlashMLAAdapter, RowPlan("FLASHMLA"), "auto", 64, MLA, DECODE, {}),
    (FlashMLAAdapter, RowPlan("FLASHMLA"), "fp8", 64, MLA, DECODE, {}),
    (FlashAttnMLAAdapter, RowPlan("FLASH_ATTN_MLA", flash_attn=FlashAttentionBuild(3, (None,))), "auto", 16, MLA,
     DECODE, {}),
    (FlashAttnMLAAdapter, RowPlan("FLASH_ATTN_MLA", flash_attn=FlashAttentionBuild(3, (None,))), "auto", 16, MLA,
     PREFILL, {}),
    (FlashAttnMLASparseAdapter, RowPlan("FLASH_ATTN_MLA_SPARSE"), "auto", 64, MLASparse, DECODE, {"topk": 128}),
    (FlashMLASparseAdapter, RowPlan("FLASHMLA_SPARSE"), "auto", 64, MLASparse, DECODE, {"topk": 128}),
    (MLAPrefillFlashAttnAdapter, RowPlan(MLA_PREFILL, "FLASH_ATTN", fa_version=3, mla_prefill="FLASH_ATTN"), "auto",
     16, MLAPrefill, PREFILL, {}),
    (FlashInferMLAAdapter, RowPlan("FLASHINFER_MLA", MLA_WRAPPER), "auto", 32, MLA, DECODE, {}),
    (FlashInferMLAAdapter, RowPlan("FLASHINFER_MLA"), "auto", 32, MLA, DECODE, {}),
    (CutlassMLAAdapter, RowPlan("CUTLASS_MLA"), "auto", 128, MLA, DECODE, {}),
]


@pytest.mark.parametrize("cls,row,kv,page,kind_cls,shape,extra", CASES,
                         ids=[f"{c[1].backend}{'-' + c[1].variant if c[1].variant else ''}-{c[2]}-{c[5].kind}"
                              for c in CASES])
@pytest.mark.parametrize("heads", [16, 128])
def test_mla_adapter_matches_the_reference_on_this_gpu(cls, row, kv, page, kind_cls, shape, extra, heads):
    os.environ.pop("TRITON_INTERPRET", None)
    dev = torch.device("cuda")
    env = RunEnv(dev, torch.cuda.get_device_capability(dev), torch.bfloat16, kv)
    p = MLAParams(heads, 512, 64, 192 ** -0.5, qk_nope_head_dim=128, v_head_dim=128, **extra)
    a = cls(env, p, row)
    why = a.unavailable()
    if why:
        pytest.skip(why)
    kind = kind_cls(p)
    batch = make_batch(shape, page, dev, seed=1, spare_pages=8)
    gen = torch.Generator().manual_seed(2)
    cache = fill_random_(a.alloc_cache(batch.num_pages, page), gen)
    inp = kind.inputs(batch, torch.bfloat16, gen)
    kind.write(a, cache, batch, inp)
    plan = a.build(batch)
    for _ in range(2):  # two layers on one plan, as a step runs them
        out = kind.output(batch, torch.bfloat16, dev, float("nan"))
        kind.run(a, plan, inp, cache, out)
        torch.cuda.synchronize()
        assert not torch.isnan(out).any()
        err = relative_error(out, kind.reference(a, cache, batch, inp))
        assert err <= tolerance("bfloat16", kv), (a.kernel_name(plan), err)
    a.close()
