"""Fakes of the FlashAttention entry points FLASH_ATTN's run adapter calls, for CPU tests.

``FakeVllmFlashAttn`` stands for ``vllm.vllm_flash_attn`` of vLLM 0.33.0's
wheel: ``flash_attn_varlen_func`` and ``get_scheduler_metadata`` with the
parameter lists of vllm/vllm_flash_attn/flash_attn_interface.py (the tests
compare them with that file where it is present), the checks that wrapper and
its C++ ops make before launching, and a record of every call's arguments.
Each fake computes paged varlen attention itself from exactly the arguments it
is given (``attend``), so a wrong argument gives a wrong result as well as a
failed assertion.
"""

from __future__ import annotations

import functools
import math

import torch

DEFAULT_FA_VERSION = 2  # flash_attn_interface.DEFAULT_FA_VERSION
FP8 = (torch.float8_e4m3fn, torch.float8_e5m2)


def attend(q, k_cache, v_cache, q_starts, kv_lens, pages, scale, causal, left, softcap, sinks,
           q_descale=None, k_descale=None, v_descale=None):
    """Paged varlen attention. Pages [P, page, Hkv, D] (any strides); request
    r's queries q_starts[r]:q_starts[r+1] are the last of its kv_lens[r] keys
    (bottom-right causal); ``left`` keys before each query (None or -1: all).
    Descales are [B, Hkv], as the kernels read them; an fp8 tensor without its
    descale is refused, as the real kernels cannot read it."""
    assert causal
    hkv = k_cache.shape[2]
    for t, d in ((q, q_descale), (k_cache, k_descale), (v_cache, v_descale)):
        if t.dtype in FP8:
            assert d is not None and tuple(d.shape) == (len(kv_lens), hkv), "fp8 input without its [B, Hkv] descale"
    out = torch.empty(q.shape[0], q.shape[1], v_cache.shape[-1])
    ps = k_cache.shape[1]
    g = q.shape[1] // hkv
    for r in range(len(kv_lens)):
        a, b, n = int(q_starts[r]), int(q_starts[r + 1]), int(kv_lens[r])
        used = pages[r, : math.ceil(n / ps)].long()
        k = k_cache[used].reshape(-1, hkv, k_cache.shape[-1])[:n].repeat_interleave(g, 1)
        v = v_cache[used].reshape(-1, hkv, v_cache.shape[-1])[:n].repeat_interleave(g, 1)

        def deq(t, d):
            return t.float() if t.dtype not in FP8 else t.float() * d[r].float().repeat_interleave(g)[None, :, None]

        s = torch.einsum("qhd,khd->hqk", deq(q[a:b], q_descale), deq(k, k_descale)) * scale
        if softcap:
            s = softcap * torch.tanh(s / softcap)
        qpos = torch.arange(n - (b - a), n)[:, None]
        kpos = torch.arange(n)[None]
        ok = kpos <= qpos
        if left is not None and left >= 0:
            ok &= kpos >= qpos - left
        s = s.masked_fill(~ok, float("-inf"))
        if sinks is not None:
            p = torch.softmax(torch.cat([s, sinks.float()[:, None, None].expand(-1, b - a, 1)], -1), -1)[..., :-1]
        else:
            p = torch.softmax(s, -1)
        out[a:b] = torch.einsum("hqk,khd->qhd", p, deq(v, v_descale))
    return out


def metadata_len(batch_size: int) -> int:
    """FA3's scheduler_metadata: 1 + round_up(batch_size, 4) * 4 int32 (flash_api.cpp)."""
    return 1 + -(-batch_size // 4) * 4 * 4


class FakeVllmFlashAttn:
    """``vllm.vllm_flash_attn`` with the FA versions ``versions`` built in."""

    def __init__(self, versions=(2, 3)):
        self.versions = set(versions)
        self.calls: list[dict] = []  # flash_attn_varlen_func's arguments, one dict per call
        self.schedules: list[dict] = []  # get_scheduler_metadata's arguments
        self.issued: list[torch.Tensor] = []  # the metadata it returned
        # (positional count, keyword names) each entry point was called with
        self.passed: dict[str, list[tuple[int, frozenset]]] = {}
        for name in ("flash_attn_varlen_func", "get_scheduler_metadata"):
            setattr(self, name, self._recorded(name, getattr(self, name)))

    def _recorded(self, name, fn):
        @functools.wraps(fn)  # inspect.signature still reads fn's parameters
        def call(*args, **kwargs):
            self.passed.setdefault(name, []).append((len(args), frozenset(kwargs)))
            return fn(*args, **kwargs)

        return call

    def is_fa_version_supported(self, fa_version):
        return fa_version in self.versions

    def fa_version_unsupported_reason(self, fa_version):
        return None if fa_version in self.versions else f"FA{fa_version} is unavailable (fake)"

    # NOTE only used in FA3 (as in vLLM's file); the parameter list is vLLM 0.33.0's
    def get_scheduler_metadata(self, batch_size, max_seqlen_q, max_seqlen_k, num_heads_q, num_heads_kv, headdim,
                               cache_seqlens, qkv_dtype=torch.bfloat16, headdim_v=None, cu_seqlens_q=None,
                               cu_seqlens_k_new=None, cache_leftpad=None, page_size=None, max_seqlen_k_new=0,
                               causal=False, window_size=(-1, -1), has_softcap=False, num_splits=0, pack_gqa=None,
                               sm_margin=0):
        args = dict(locals())
        del args["self"]
        self.schedules.append(args)
        assert 3 in self.versions, "get_scheduler_metadata calls _vllm_fa3_C"
        assert cache_seqlens.dtype == torch.int32 and cache_seqlens.shape == (batch_size,)
        # a stand-in schedule the fake kernel can recognise: nonzero, one per batch
        meta = torch.arange(1, metadata_len(batch_size) + 1, dtype=torch.int32) + 1000 * len(self.issued)
        self.issued.append(meta.clone())
        return meta.to(cache_seqlens.device)

    def flash_attn_varlen_func(self, q, k, v, max_seqlen_q, cu_seqlens_q, max_seqlen_k, cu_seqlens_k=None,
                               seqused_k=None, q_v=None, dropout_p=0.0, softmax_scale=None, causal=False,
                               window_size: list[int] | None = None, softcap=0.0, alibi_slopes=None,
                               deterministic=False, return_attn_probs=False, block_table=None,
                               return_softmax_lse=False, out=None, scheduler_metadata=None, q_descale=None,
                               k_descale=None, v_descale=None, num_splits: int = 0, output_scale=None,
                               fa_version: int = DEFAULT_FA_VERSION, s_aux=None, cp_world_size=1, cp_rank=0,
                               cp_tot_seqused_k=None, mask_mod=None, block_sparse_tensors=None, aux_tensors=None,
                               aux_tensor_leading_dims=None, dynamic_causal: "torch.Tensor | None" = None,
                               gather_kv_indices=None, gather_kv_valid_length=None):
        args = dict(locals())
        del args["self"]
        self.calls.append(args)
        # the wrapper's own checks
        assert cu_seqlens_k is not None or seqused_k is not None, "cu_seqlens_k or seqused_k must be provided"
        assert fa_version == 4 or cu_seqlens_k is None or seqused_k is None
        assert block_table is None or seqused_k is not None
        assert fa_version in self.versions, f"FA{fa_version} is not built in"
        return self._varlen(**args)

    def _varlen(self, q, k, v, max_seqlen_q, cu_seqlens_q, max_seqlen_k, cu_seqlens_k, seqused_k, q_v,
                softmax_scale, causal, window_size, softcap, alibi_slopes, block_table, out, scheduler_metadata,
                q_descale, k_descale, v_descale, num_splits, fa_version, s_aux, **rest):
        """The build's kernel behind the wrapper: paged K/V as the MHA path passes them (a subclass
        takes other layouts)."""
        if fa_version == 2:
            if scheduler_metadata is not None and q_descale is not None and k_descale is not None \
                    and v_descale is not None:
                raise NotImplementedError("FA2 does not support scheduler_metadata, q_descale, k_descale, v_descale")
            if s_aux is not None:
                raise NotImplementedError("FA2 does not support s_aux")
            if num_splits > 1:
                raise NotImplementedError("FA2 does not support num_splits > 1")
        if fa_version == 3:
            assert alibi_slopes is None, "Alibi is not supported in FA3"
            assert q.dtype == k.dtype == v.dtype, "FA3 takes q, k and v in one dtype"
            # flash_api.cpp: "We only support bf16 dtype for S aux": the sinks come as the layer
            # holds them, in the model dtype (bf16 on a GPU; the CPU tests' model is float32)
            assert s_aux is None or s_aux.dtype == out.dtype, "s_aux not in the model dtype"
        if scheduler_metadata is not None:  # what FA3 reads must be what the scheduler wrote for this batch
            assert any(torch.equal(scheduler_metadata.cpu(), m) for m in self.issued), "stale scheduler metadata"
        for t in (cu_seqlens_q, seqused_k, block_table):
            assert t.dtype == torch.int32
        assert out is not None
        assert k.stride(-1) == 1 and v.stride(-1) == 1
        # descales of non-fp8 inputs are ignored (attend reads them only for fp8)
        left, right = window_size if window_size is not None else (-1, -1)
        assert right in (-1, 0), "causal windows only"
        lens = seqused_k if seqused_k is not None else cu_seqlens_k[1:] - cu_seqlens_k[:-1]
        out.copy_(attend(q, k, v, cu_seqlens_q, lens, block_table, softmax_scale, causal, left, softcap, s_aux,
                         q_descale, k_descale, v_descale))
        return out
