"""FLASH_ATTN's upstream fallbacks (FA3, FA4, FA2) and the order the adapter
tries its builds in, on CPU: each fake has the real function's parameter list
and computes attention from exactly the arguments it is given (paged, varlen,
causal bottom-right, window, soft cap, sinks), so a wrong argument gives a
wrong result. vLLM's own build is test_flash_attn_vllm.py's."""

from __future__ import annotations

import types

import pytest
import torch

from attn_select.backends.run.adapter import RunEnv, Unsupported
from attn_select.backends.run.batch import fill_random_, make_batch, random_inputs, write_new_tokens
from attn_select.selector.run_plan import RowPlan, Shape
from attn_select.backends.run.flash_attn import IMPLS, FlashAttnAdapter
from attn_select.backends.run.reference import AttnParams, reference_attention, relative_error

from fa_fake_kernels import FakeVllmFlashAttn, attend


def fake_fa3():
    def flash_attn_with_kvcache(q, k_cache, v_cache, k=None, v=None, qv=None, rotary_cos=None, rotary_sin=None,
                                cache_seqlens=None, cache_batch_idx=None, cache_leftpad=None, page_table=None,
                                cu_seqlens_q=None, cu_seqlens_k_new=None, max_seqlen_q=None, rotary_seqlens=None,
                                q_descale=None, k_descale=None, v_descale=None, softmax_scale=None, causal=False,
                                window_size=(-1, -1), attention_chunk=0, softcap=0.0, rotary_interleaved=True,
                                scheduler_metadata=None, num_splits=0, pack_gqa=None, sm_margin=0,
                                return_softmax_lse=False):
        assert q.dtype == k_cache.dtype == v_cache.dtype, "FA3 takes q, k and v in one dtype"
        return attend(q, k_cache, v_cache, cu_seqlens_q, cache_seqlens, page_table, softmax_scale, causal,
                      window_size[0], softcap, None, q_descale, k_descale, v_descale)

    return types.SimpleNamespace(flash_attn_with_kvcache=flash_attn_with_kvcache)


def fake_fa4():
    def flash_attn_varlen_func(q, k, v, qv=None, cu_seqlens_q=None, cu_seqlens_k=None, max_seqlen_q=None,
                               max_seqlen_k=None, min_seqlen_k=None, seqused_q=None, seqused_k=None,
                               gather_kv_indices=None, page_table=None, softmax_scale=None, causal=False,
                               window_size=(None, None), learnable_sink=None, softcap=0.0, num_splits=1,
                               pack_gqa=None, deterministic=False, score_mod=None, score_mod_bwd=None,
                               mask_mod=None, block_sparse_tensors=None, aux_tensors=None, aux_scalars=None,
                               return_lse=False, scheduler_metadata=None, seqlen_k_per_split=None,
                               disable_scheduler_metadata=False, gather_bwd_recompute_p=False,
                               gather_bwd_token_chunk=None):
        assert page_table.dtype == torch.int32 and cu_seqlens_k is None
        o = attend(q, k, v, cu_seqlens_q, seqused_k, page_table, softmax_scale, causal, window_size[0], softcap,
                   learnable_sink)
        return o, None

    return types.SimpleNamespace(flash_attn_varlen_func=flash_attn_varlen_func)


def fake_fa2():
    def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p=0.0,
                               softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0,
                               alibi_slopes=None, deterministic=False, return_attn_probs=False, block_table=None):
        kv_lens = cu_seqlens_k[1:] - cu_seqlens_k[:-1]
        return attend(q, k, v, cu_seqlens_q, kv_lens, block_table, softmax_scale, causal, window_size[0], softcap,
                      None)

    return types.SimpleNamespace(flash_attn_varlen_func=flash_attn_varlen_func)


SHAPE = Shape("mixed", decodes=2, decode_context=13, prefills=1, prefill_new=5, prefill_context=3)


def _run(key, module, p, page=4, fa_version=3, importer=None, kv_cache_dtype="auto", capability=(9, 0)):
    env = RunEnv(torch.device("cpu"), capability, torch.float32, kv_cache_dtype)
    impl = next(i for i in IMPLS if i.key == key)
    a = FlashAttnAdapter(env, p, RowPlan("FLASH_ATTN", fa_version=fa_version), impls=(impl,),
                         importer=importer or (lambda name: module))
    b = make_batch(SHAPE, page, "cpu", seed=7, spare_pages=2)
    cache = a.alloc_cache(b.num_pages, page)
    fill_random_(cache, torch.Generator().manual_seed(1))
    k, v = a.kv_views(cache)
    inp = random_inputs(b, p.num_heads, p.num_kv_heads, p.head_size, p.head_size_v, torch.float32, p.has_sink,
                        torch.Generator().manual_seed(2))
    write_new_tokens(k, v, b, inp)
    plan = a.build(b)
    out = torch.full_like(inp.q, float("nan"))
    a.run(plan, inp.q, cache, inp.sinks, out)
    ref = reference_attention(inp.q, k, v, b, p, inp.sinks)
    return relative_error(out, ref), a, plan


SINKS = AttnParams(4, 2, 8, 8, 8 ** -0.5, sliding_window=6, soft_cap=5.0, has_sink=True)
NO_SINKS = AttnParams(4, 2, 8, 8, 8 ** -0.5, sliding_window=6, soft_cap=5.0)


def test_fa3_path():
    err, a, plan = _run("fa3", fake_fa3(), NO_SINKS)
    assert err < 1e-5
    assert a.kernel_name(plan) == "upstream FA3 (flash_attn_interface)"


def test_fa3_refuses_sinks():
    with pytest.raises(Unsupported):
        _run("fa3", fake_fa3(), SINKS)


def test_fa4_path_says_it_differs_from_vllms_version():
    err, a, plan = _run("fa4", fake_fa4(), SINKS, fa_version=3)
    assert err < 1e-5
    assert a.kernel_name(plan) == "upstream FA4 (flash_attn.cute); vLLM would use FA3"


def test_fa2_needs_pages_of_256():
    err, _, _ = _run("fa2", fake_fa2(), NO_SINKS, page=256)
    assert err < 1e-5
    with pytest.raises(Unsupported, match="multiple of 256"):
        _run("fa2", fake_fa2(), NO_SINKS, page=16)


def test_order_falls_through_import_failures():
    env = RunEnv(torch.device("cpu"), (9, 0), torch.float32, "auto")
    mods = {"flash_attn.cute": fake_fa4()}
    calls: list[str] = []

    def importer(name):
        calls.append(name)
        if name not in mods:
            raise ImportError(name)
        return mods[name]

    row = RowPlan("FLASH_ATTN", fa_version=3)
    a = FlashAttnAdapter(env, SINKS, row, importer=importer)
    assert a.unavailable() is None
    assert a.chosen[0].key == "fa4"
    assert a.tried == ["vllm.vllm_flash_attn: not importable (ImportError)",
                       "upstream FA3 (flash_attn_interface): not importable (ImportError)"]
    # resolved once per page size: later builds time metadata, not imports
    assert a.unavailable() is None and a.pick() is a.chosen and len(calls) == 3
    mods.clear()
    assert "no FlashAttention build runs here" in FlashAttnAdapter(env, SINKS, row, importer=importer).unavailable()


# fp8 KV cache: upstream FA3 takes descales (and the fp8 query vLLM's layer
# makes); upstream FA4 and FA2 take none. The fakes refuse an fp8 tensor
# without its descale and (FA3) mixed dtypes, so each wiring is checked.
FP8_TOL = 8e-2


def test_fp8_cache_upstream_fa3_quantizes_the_query():
    err, a, plan = _run("fa3", fake_fa3(), NO_SINKS, kv_cache_dtype="fp8")
    assert plan.quant_q and 1e-4 < err < FP8_TOL
    assert a.kernel_name(plan) == "upstream FA3 (flash_attn_interface) (fp8 KV, fp8 query)"


@pytest.mark.parametrize("key,fake,page", [("fa4", fake_fa4, 4), ("fa2", fake_fa2, 256)])
def test_fp8_cache_upstream_fa4_and_fa2_are_skipped_with_the_reason(key, fake, page):
    with pytest.raises(Unsupported, match="takes no fp8 KV cache"):
        _run(key, fake(), NO_SINKS, page=page, kv_cache_dtype="fp8")


def test_vllms_build_without_the_version_falls_back_to_upstream():
    # a vLLM wheel with FA2 only on an H200 where explain resolved FA3: upstream FA4 runs, and says so
    env = RunEnv(torch.device("cpu"), (9, 0), torch.float32, "auto")
    mods = {"vllm.vllm_flash_attn": FakeVllmFlashAttn(versions=(2,)), "flash_attn.cute": fake_fa4()}
    a = FlashAttnAdapter(env, SINKS, RowPlan("FLASH_ATTN", fa_version=3),
                         importer=lambda name: mods[name] if name in mods else _missing(name))
    assert a.unavailable() is None and a.chosen[0].key == "fa4"
    assert a.tried[0] == "vllm.vllm_flash_attn: has no FA3 here (FA3 is unavailable (fake))"


def _missing(name):
    raise ImportError(name)


@pytest.mark.parametrize("key,fake,page", [("fa3", fake_fa3, 4), ("fa4", fake_fa4, 4), ("fa2", fake_fa2, 256)])
def test_upstream_builds_read_vllms_cache_layout(key, fake, page):
    # one [num_blocks, block_size, Hkv, D + Dv] tensor, K and V strided views of it, for every build
    err, a, plan = _run(key, fake(), NO_SINKS, page=page)
    cache = a.alloc_cache(5, page)
    k, v = a.kv_views(cache)
    assert cache.shape == (5, page, 2, 16) and k.stride() == v.stride() == cache.stride()
    assert v.data_ptr() - k.data_ptr() == 8 * cache.element_size() and err < 1e-5
