"""FLASH_ATTN run adapter: whichever FlashAttention build is importable.

Tried in this order (the first that imports and can run here is used):

1. vLLM's bundled ``vllm.vllm_flash_attn`` with the FA version ``explain``
   resolved (``flash_attn_varlen_func(..., block_table=, fa_version=, s_aux=)``);
2. FA3, ``flash_attn_interface.flash_attn_with_kvcache`` (SM90 only; no sinks);
3. FA4, ``flash_attn.cute.flash_attn_varlen_func(..., page_table=, learnable_sink=)``;
4. FA2, ``flash_attn.flash_attn_varlen_func(..., block_table=)`` (paged KV needs a
   page size that is a multiple of 256; no sinks).

The row reports the version that ran and says so when it is not the one
vLLM would use.

fp8 KV cache (``--kv-cache-dtype fp8``), as vLLM 0.33.0's FlashAttentionImpl
serves it: the kernel gets per-(request, KV head) ``k_descale``/``v_descale``
(the layer's scales, 1.0 without calibrated ones) and, where vLLM's attention
layer quantizes the query (``supports_quant_query_input``: FA3, and FA4 off
SM90), an fp8 query with its ``q_descale``; vLLM's FA4 on SM90 dequantizes
fp8 K/V in-kernel and takes the bf16 query. Upstream FA4 and FA2 take no fp8
cache: they are skipped with that reason. Cache layout: vLLM's FLASH_ATTN one,
[2, num_pages, page_size, Hkv, D] (key and value caches unbound on dim 0).

``build`` computes the varlen metadata once per step: ``cu_seqlens_q`` int32
[B + 1] (= query_start_loc), ``seqused_k`` int32 [B] (= seq_lens), the block
table as int32 [B, P], and for FA2 ``cu_seqlens_k`` int32 [B + 1].
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable

import torch

from attn_select.backends.run.adapter import SeparateKVAdapter, Unsupported, quantize_fp8
from attn_select.backends.run.batch import Batch


@dataclass(frozen=True)
class FAImpl:
    key: str  # "vllm_fa" | "fa3" | "fa4" | "fa2"
    version: int  # FA major version this implementation runs
    label: str
    module: str  # what must import
    call: Callable[..., None]  # (mod, plan, q, k, v, p, sinks, out) -> None


@dataclass
class FAPlan:
    batch: Batch
    impl: FAImpl
    mod: Any
    cu_seqlens_q: torch.Tensor
    seqused_k: torch.Tensor
    cu_seqlens_k: torch.Tensor
    block_table: torch.Tensor
    max_seqlen_q: int
    max_seqlen_k: int
    fa_version: int  # the version passed to vllm_flash_attn / the one that ran
    # fp8 KV: descales [B, Hkv] (None on a bf16/fp16 cache); quant_q: the query goes in as fp8
    q_descale: torch.Tensor | None = None
    k_descale: torch.Tensor | None = None
    v_descale: torch.Tensor | None = None
    quant_q: bool = False


def _descales(plan: FAPlan) -> dict:
    return dict(q_descale=plan.q_descale, k_descale=plan.k_descale, v_descale=plan.v_descale)


def _window(p) -> tuple[int, int]:
    return (p.window_left, 0) if p.sliding_window is not None else (-1, -1)


def _call_vllm_fa(mod, plan: FAPlan, q, k, v, p, sinks, out) -> None:
    mod.flash_attn_varlen_func(
        q=q, k=k, v=v, max_seqlen_q=plan.max_seqlen_q, cu_seqlens_q=plan.cu_seqlens_q,
        max_seqlen_k=plan.max_seqlen_k, seqused_k=plan.seqused_k, softmax_scale=p.scale, causal=True,
        window_size=list(_window(p)), softcap=p.soft_cap or 0.0, block_table=plan.block_table, out=out,
        fa_version=plan.fa_version, s_aux=sinks, num_splits=0, **_descales(plan))


def _call_fa3(mod, plan: FAPlan, q, k, v, p, sinks, out) -> None:
    if sinks is not None:
        raise Unsupported("upstream FA3 (flash_attn_interface) has no attention sinks")
    res = mod.flash_attn_with_kvcache(
        q, k, v, cache_seqlens=plan.seqused_k, page_table=plan.block_table, cu_seqlens_q=plan.cu_seqlens_q,
        max_seqlen_q=plan.max_seqlen_q, softmax_scale=p.scale, causal=True, window_size=_window(p),
        softcap=p.soft_cap or 0.0, num_splits=0, **_descales(plan))
    out.copy_(res[0] if isinstance(res, tuple) else res)


def _call_fa4(mod, plan: FAPlan, q, k, v, p, sinks, out) -> None:
    left = p.window_left if p.sliding_window is not None else None
    res = mod.flash_attn_varlen_func(
        q, k, v, cu_seqlens_q=plan.cu_seqlens_q, max_seqlen_q=plan.max_seqlen_q, max_seqlen_k=plan.max_seqlen_k,
        seqused_k=plan.seqused_k, page_table=plan.block_table, softmax_scale=p.scale, causal=True,
        window_size=(left, 0 if left is not None else None), learnable_sink=sinks, softcap=p.soft_cap or 0.0,
        num_splits=0)
    out.copy_(res[0] if isinstance(res, tuple) else res)


def _call_fa2(mod, plan: FAPlan, q, k, v, p, sinks, out) -> None:
    if sinks is not None:
        raise Unsupported("FA2 (flash_attn) has no attention sinks")
    res = mod.flash_attn_varlen_func(
        q, k, v, plan.cu_seqlens_q, plan.cu_seqlens_k, plan.max_seqlen_q, plan.max_seqlen_k,
        softmax_scale=p.scale, causal=True, window_size=_window(p), softcap=p.soft_cap or 0.0,
        block_table=plan.block_table)
    out.copy_(res[0] if isinstance(res, tuple) else res)


IMPLS: tuple[FAImpl, ...] = (
    FAImpl("vllm_fa", 0, "vllm.vllm_flash_attn", "vllm.vllm_flash_attn", _call_vllm_fa),
    FAImpl("fa3", 3, "FA3 (flash_attn_interface)", "flash_attn_interface", _call_fa3),
    FAImpl("fa4", 4, "FA4 (flash_attn.cute)", "flash_attn.cute", _call_fa4),
    FAImpl("fa2", 2, "FA2 (flash_attn)", "flash_attn", _call_fa2),
)


def _import(name: str):
    return importlib.import_module(name)


class FlashAttnAdapter(SeparateKVAdapter):
    name = "FLASH_ATTN"

    def __init__(self, env, p, row=None, impls: tuple[FAImpl, ...] = IMPLS,
                 importer: Callable[[str], Any] = _import):
        super().__init__(env, p, row)
        self.impls = impls
        self.importer = importer
        self.tried: list[str] = []  # "FA3: why not" lines, for the report
        self.chosen: tuple[FAImpl, Any] | None = None
        # page size -> (chosen, tried): resolved once, so the per-step build
        # times metadata only, not failed imports searching sys.path again
        self._picked: dict[int | None, tuple[tuple[FAImpl, Any] | None, list[str]]] = {}
        self._scale: torch.Tensor | None = None

    def _runnable(self, impl: FAImpl, page_size: int | None) -> str | None:
        cap = self.env.capability
        if impl.key == "fa3" and cap is not None and cap[0] != 9:
            return "FA3 runs on SM90 only"
        if impl.key == "fa4" and cap is not None and cap[0] not in (9, 10, 11):
            return "FA4 runs on SM90/SM100/SM110 only"
        if impl.key == "fa2" and page_size is not None and page_size % 256:
            return f"FA2 paged KV needs a page size multiple of 256 (got {page_size})"
        if impl.key == "vllm_fa" and self.row.fa_version is None:
            return "explain resolved no FA version"
        if self.fp8_cache and impl.key in ("fa4", "fa2"):
            return "takes no fp8 KV cache (no descale arguments)"
        return None

    def _unit_scale(self, device: torch.device) -> torch.Tensor:
        """The layer's q/k/v scale, 1.0 without calibrated ones: one tensor the
        adapter keeps, as the layer keeps its _k_scale, not a per-step one."""
        if self._scale is None or self._scale.device != device:
            self._scale = torch.ones(1, dtype=torch.float32, device=device)
        return self._scale

    def _quantizes_query(self, version: int) -> bool:
        """vLLM's ``supports_quant_query_input``: true on CUDA except FA4's SM90
        fp8-KV path, which dequantizes K/V in-kernel and takes the bf16 query."""
        cap = self.env.capability
        return not (version == 4 and cap is not None and cap[0] == 9)

    def pick(self, page_size: int | None = None) -> tuple[FAImpl, Any] | None:
        """The first implementation that imports and can run; records why the others did not."""
        if page_size in self._picked:
            chosen, tried = self._picked[page_size]
            self.tried = list(tried)
            if chosen is not None:
                self.chosen = chosen
            return chosen
        chosen = self._pick(page_size)
        self._picked[page_size] = (chosen, list(self.tried))
        return chosen

    def _pick(self, page_size: int | None) -> tuple[FAImpl, Any] | None:
        self.tried = []
        for impl in self.impls:
            why = self._runnable(impl, page_size)
            if why is None:
                try:
                    mod = self.importer(impl.module)
                except Exception as e:  # ImportError, OSError from a broken build, ...
                    why = f"not importable ({type(e).__name__})"
                else:
                    self.chosen = (impl, mod)
                    return self.chosen
            self.tried.append(f"{impl.label}: {why}")
        return None

    def unavailable(self) -> str | None:
        if not self.env.is_cuda and self.importer is _import:
            return "FlashAttention needs a CUDA GPU"
        if self.pick() is None:
            return "no FlashAttention build runs here (" + "; ".join(self.tried) + ")"
        return None


    def build(self, batch: Batch) -> FAPlan:
        chosen = self.pick(batch.page_size)
        if chosen is None:
            raise Unsupported("no FlashAttention build runs this batch: " + "; ".join(self.tried))
        impl, mod = chosen
        seq = batch.seq_lens
        cu_k = torch.zeros(batch.num_requests + 1, dtype=torch.int32, device=seq.device)
        cu_k[1:] = torch.cumsum(seq, 0)
        version = int((self.row.fa_version if impl.key == "vllm_fa" else impl.version) or 0)
        plan = FAPlan(batch, impl, mod, batch.query_start_loc, seq, cu_k, batch.block_table.contiguous(),
                      batch.max_query_len, batch.max_seq_len, version)
        if self.fp8_cache:  # the layer's scales (1.0: no calibrated ones), expanded to [B, Hkv] as vLLM does
            one = self._unit_scale(seq.device).expand(batch.num_requests, self.p.num_kv_heads)
            plan.k_descale = plan.v_descale = one
            if self._quantizes_query(version):
                plan.q_descale, plan.quant_q = one, True
        return plan

    def run(self, plan: FAPlan, q: torch.Tensor, cache: torch.Tensor, sinks: torch.Tensor | None,
            out: torch.Tensor) -> None:
        k, v = self.kv_views(cache)
        if plan.quant_q:  # vLLM's attention layer quantizes the query before the kernel
            q = quantize_fp8(q)
        plan.impl.call(plan.mod, plan, q, k, v, self.p, sinks, out)

    def kernel_name(self, plan: FAPlan) -> str:
        label = plan.impl.label if plan.impl.key != "vllm_fa" else f"vllm.vllm_flash_attn FA{plan.fa_version}"
        if plan.k_descale is not None:
            query = "fp8" if plan.quant_q else str(self.env.dtype).removeprefix("torch.")
            label += f" (fp8 KV, {query} query)"
        want = self.row.fa_version
        if want and plan.fa_version != want:
            label += f"; vLLM would use FA{want}"
        return label
