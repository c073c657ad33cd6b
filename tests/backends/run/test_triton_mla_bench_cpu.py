"""benchmarks/run_triton_mla.py on the CPU: a smoke run of the whole script
(our kernel under the interpreter on tiny shapes) with fakes of vLLM's
FlashMLA entry points, written to vLLM 0.33.0's signatures, so the peer's
call path (metadata, query/cache shapes, fp8 descales) is exercised before
the script reaches a GPU."""

from __future__ import annotations

import json
import sys
import types

import pytest
import torch

from tests.backends.run.conftest import load_benchmark, needs_interpreter


def _load_bench():
    return load_benchmark("run_triton_mla")


def _dense_mla(q, k_cache, block_table, cache_seqlens, head_dim_v, scale, q_mult=1.0, k_mult=1.0):
    """What FlashMLA computes for decode rows (s_q = 1), written densely."""
    b, s_q, h, d = q.shape
    assert s_q == 1 and k_cache.dim() == 4 and k_cache.shape[2] == 1 and k_cache.shape[3] == d
    page = k_cache.shape[1]
    out = torch.empty(b, 1, h, head_dim_v, dtype=torch.bfloat16)
    for r in range(b):
        n = int(cache_seqlens[r])
        kv = k_cache[block_table[r, :-(-n // page)].long()].reshape(-1, d)[:n].float() * k_mult
        s = (q[r, 0].float() * q_mult) @ kv.T * scale
        out[r, 0] = (torch.softmax(s, -1) @ kv[:, :head_dim_v]).to(torch.bfloat16)
    return out, torch.zeros(b, h, 1)


def _fake_vllm(calls: list) -> dict[str, types.ModuleType]:
    iface = types.ModuleType("vllm.third_party.flashmla.flash_mla_interface")

    class FlashMLASchedMeta:
        have_initialized = False

    def get_mla_metadata(*args, **kwargs):
        return FlashMLASchedMeta(), None

    def flash_mla_with_kvcache(q, k_cache, block_table, cache_seqlens, head_dim_v, tile_scheduler_metadata,
                               num_splits=None, softmax_scale=None, causal=False, is_fp8_kvcache=False,
                               indices=None, attn_sink=None, extra_k_cache=None, extra_indices_in_kvcache=None,
                               topk_length=None, extra_topk_length=None, out=None, enable_batch_invariant=False):
        assert isinstance(tile_scheduler_metadata, FlashMLASchedMeta) and num_splits is None
        assert q.dtype == torch.bfloat16 and k_cache.dtype == torch.bfloat16 and not is_fp8_kvcache
        calls.append("bf16")
        return _dense_mla(q, k_cache, block_table, cache_seqlens, head_dim_v, softmax_scale)

    iface.FlashMLASchedMeta = FlashMLASchedMeta
    iface.get_mla_metadata = get_mla_metadata
    iface.flash_mla_with_kvcache = flash_mla_with_kvcache

    ops = types.ModuleType("vllm.v1.attention.ops.flashmla")

    def get_mla_metadata_dense_fp8(cache_seqlens, num_q_tokens_per_head_k, num_heads_k):
        return torch.zeros(4, 8, dtype=torch.int32), torch.zeros(cache_seqlens.numel() + 1, dtype=torch.int32)

    def flash_mla_with_kvcache_fp8(q, k_cache, block_table, cache_seqlens, head_dim_v, tile_scheduler_metadata,
                                   num_splits, softmax_scale=None, causal=False, descale_q=None, descale_k=None):
        assert q.dtype == torch.float8_e4m3fn and k_cache.dtype == torch.float8_e4m3fn
        assert descale_q.shape == (1,) and descale_k.shape == (1,)
        calls.append("fp8")
        return _dense_mla(q, k_cache, block_table, cache_seqlens, head_dim_v, softmax_scale,
                          float(descale_q), float(descale_k))

    ops.get_mla_metadata_dense_fp8 = get_mla_metadata_dense_fp8
    ops.flash_mla_with_kvcache_fp8 = flash_mla_with_kvcache_fp8
    mods = {name: types.ModuleType(name) for name in ("vllm", "vllm.third_party", "vllm.third_party.flashmla",
                                                      "vllm.v1", "vllm.v1.attention", "vllm.v1.attention.ops")}
    mods["vllm"].__version__ = "0.33.0 (fake)"
    mods[iface.__name__] = iface
    mods[ops.__name__] = ops
    return mods


@needs_interpreter
def test_benchmark_script_runs_ours_and_the_flashmla_call_path_on_cpu(monkeypatch, tmp_path, capsys):
    calls: list[str] = []
    for name, mod in _fake_vllm(calls).items():
        monkeypatch.setitem(sys.modules, name, mod)
    bench = _load_bench()
    rc = bench.main(["--device", "cpu", "--heads", "16", "--batch", "2", "--context", "40", "--page", "16",
                     "--seconds", "0.01", "--kv-cache-dtype", "auto", "fp8", "--kv-scale", "0.5",
                     "--out", str(tmp_path)])
    assert rc == 0
    rows = json.loads((tmp_path / "mla_bench.json").read_text())["rows"]
    assert [(r["kv"], r["backend"]) for r in rows] == [
        ("auto", "TRITON_MLA (ours)"), ("auto", "FLASHMLA (vLLM)"), ("fp8", "TRITON_MLA (ours)"),
        ("fp8", "FLASHMLA (vLLM)")]
    assert all(r["correct"] for r in rows), rows
    assert {"bf16", "fp8"} <= set(calls)
    assert "ours_over_peer_speed" in rows[1] and "FAIL" not in capsys.readouterr().out


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU exit")
def test_benchmark_script_reports_a_missing_gpu_in_one_line(capsys):
    bench = _load_bench()
    assert bench.main(["--heads", "16"]) == 2
    assert capsys.readouterr().out.count("\n") == 1


def test_sweep_variants_fit_shared_memory():
    bench = _load_bench()
    from attn_select.backends.run.triton_mla import SMEM_LIMIT, smem_bytes

    for heads in (16, 128):
        for elem in (1, 2):
            vs = bench.sweep_variants(heads, elem)
            assert len(vs) >= 5 and all(smem_bytes(t, 576, elem) <= SMEM_LIMIT for t in vs)
