"""FLASH_ATTN run adapter: what vLLM 0.33.0's FlashAttention backend does for a
decoder layer, on vLLM's own FlashAttention build when it is importable.

vLLM's backend has a once-per-step builder and a per-layer forward, and so
has this adapter. Facts from vllm/v1/attention/backends/flash_attn.py
(``FlashAttentionMetadataBuilder``, ``FlashAttentionImpl``), fa_utils.py,
vllm/vllm_flash_attn/flash_attn_interface.py and the attention layer
(model_executor/layers/attention/attention.py), under vLLM's defaults
(FULL_AND_PIECEWISE CUDA graphs, the default capture sizes and max_num_seqs):

KV cache. One tensor per layer, logically (num_blocks, Hkv, block_size, D + Dv);
vLLM's default layout (LBNHC) stores it as [num_blocks, block_size, Hkv, D + Dv]
and ``forward`` splits the last dim: K = [..., :D], V = [..., D:], two strided
views in which a token's K and V of one head sit side by side.

Build, once per step (``build``, timed as the build cost c):

- ``query_start_loc``, ``seq_lens`` and the block table go to the kernel as
  they are (``cu_seqlens_q``, ``seqused_k``, ``block_table``); no ``cu_seqlens_k``;
- the split bound: the builder's ``max_num_splits`` when the step has at most
  ``max_cudagraph_capture_size`` tokens, else 0 (FA3's own heuristic). The
  builder sets its bound at init to ``flash_attn_max_num_splits_for_cuda_graph``
  (32) when the no-argument FA version is 3, so that CUDA graphs capture big
  enough split buffers; otherwise it stays 0. ``VLLM_BATCH_INVARIANT`` makes it 1;
- scheduler metadata ("AOT scheduling"), ``get_scheduler_metadata(...)``: when the
  no-argument FA version is 3, unless the model's FlashAttention layers do not
  all share one sliding window (a model mixing windowed and full layers, as
  gpt-oss and Gemma-2 do, turns it off at the first build). Its result is
  copied into the builder's persistent int32 buffer of
  1 + round_up(max(max_num_seqs, capture size), 4) * 4 slots, the rest zeroed,
  and the kernel gets that buffer's head. vLLM passes no ``has_softcap``,
  ``headdim_v`` or ``pack_gqa`` there.

Forward, once per layer: ``flash_attn_varlen_func`` with the keywords vLLM's
forward passes (``VLLM_FORWARD_KEYWORDS``): the layer's FA version, causal,
window ``[W - 1, 0]`` (``[-1, -1]`` without a window), soft cap (0: none),
``s_aux`` = the sinks in the model dtype (the layer's parameter; FA3 takes
bf16 only), the step's metadata, and q/k/v descales: the layer's scales (1.0
without calibrated ones) expanded to [num_requests, Hkv], k and v always, q where the backend takes a quantized query
(``supports_quant_query_input``: all of CUDA but FA4's SM90 fp8-KV path, which
dequantizes K/V in-kernel and takes the bf16 query). With an fp8 KV cache the
attention layer quantizes the query first (static per-tensor ``QuantFP8``),
where vLLM fuses that into the preceding ops; here it is the first op of the
layer's timed call.

Facts from outside this layer come in the run plan's row: the FA version
vLLM runs here (``row.fa_version``), and for the builder
(``row.flash_attn``) the no-argument FA version (explain's
``flash_attn_version_noarg``), the sliding windows of the model's
FlashAttention layers and batch invariance. Where a row gives none (a
benchmark's standalone row), this group's own version and window stand in,
which is right for a model whose layers all share one window.

Fallbacks when vLLM's build is not importable, or lacks the FA version vLLM
would use, in order: upstream FA3 (``flash_attn_interface.flash_attn_with_kvcache``,
SM90, no sinks), upstream FA4 (``flash_attn.cute.flash_attn_varlen_func``),
upstream FA2 (``flash_attn.flash_attn_varlen_func``, pages a multiple of 256,
no sinks), each with the FA split heuristic and no scheduler metadata; upstream
FA4 and FA2 take no fp8 cache. The row names what ran and says when its FA
version is not the one vLLM would use.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable

import torch

from attn_select.backends.run.adapter import Adapter, Unsupported, quantize_fp8
from attn_select.backends.run.batch import Batch

# attention_config.flash_attn_max_num_splits_for_cuda_graph (vllm/config/attention.py).
MAX_SPLITS_FOR_CUDA_GRAPH = 32

# The keywords FlashAttentionImpl.forward passes to flash_attn_varlen_func
# (through _FA4_DENSE_ATTENTION_KERNEL, which forwards them unchanged) for a
# decoder layer without DCP; the tests hold the adapter to this set.
VLLM_FORWARD_KEYWORDS = frozenset((
    "q", "k", "v", "out", "cu_seqlens_q", "max_seqlen_q", "seqused_k", "max_seqlen_k", "softmax_scale",
    "causal", "alibi_slopes", "window_size", "block_table", "softcap", "scheduler_metadata", "fa_version",
    "q_descale", "k_descale", "v_descale", "dynamic_causal", "num_splits", "s_aux", "mask_mod", "aux_tensors",
))


def _round_up(x: int, m: int) -> int:
    return -(-x // m) * m


def vllm_max_num_seqs(total_memory_gib: float | None, name: str = "", capability: tuple[int, int] | None = None) -> int:
    """vLLM's default ``max_num_seqs`` (EngineArgs.get_batch_defaults): 1024 on
    GPUs of at least 70 GiB other than the A100 and GB10, else 256. Unknown
    memory (a CPU run) counts as large: every SM90 part has more than 70 GiB."""
    if total_memory_gib is None:
        return 1024
    small = "a100" in name.lower() or capability == (12, 1)
    return 1024 if total_memory_gib >= 70 and not small else 256


@dataclass(frozen=True)
class BuilderFacts:
    """What FlashAttentionMetadataBuilder decides per model, at init and on its
    first build; ``splits`` is its per-step split bound."""

    aot_schedule: bool  # get_scheduler_metadata in every build
    aot_window: tuple[int, int]  # the window it is given
    max_num_splits: int  # the bound for steps that fit a CUDA graph (0: FA3's heuristic)
    max_cudagraph_size: int  # max_cudagraph_capture_size
    metadata_slots: int  # the persistent scheduler-metadata buffer (0: none)
    batch_invariant: bool = False
    why_not_aot: str = ""

    def splits(self, num_tokens: int) -> int:
        if self.batch_invariant:
            return 1
        return self.max_num_splits if num_tokens <= self.max_cudagraph_size else 0


def builder_facts(noarg_version: int | None, layer_windows: tuple[int | None, ...], capability: tuple[int, int] | None,
                  max_num_seqs: int = 1024, batch_invariant: bool = False) -> BuilderFacts:
    """FlashAttentionMetadataBuilder.__init__ and its first build, for a model
    whose FlashAttention layers have ``layer_windows`` (tokens; None = full)."""
    # VllmConfig._set_cudagraph_sizes: min(max_num_seqs * 2, 512; 1024 on SM100)
    capture = min(2 * max_num_seqs, 1024 if capability is not None and capability[0] == 10 else 512)
    aot_at_init = noarg_version == 3  # get_flash_attn_version() == 3
    slots = 1 + _round_up(max(max_num_seqs, capture), 4) * 4 if aot_at_init else 0
    bound = MAX_SPLITS_FOR_CUDA_GRAPH if aot_at_init else 0
    # FlashAttentionImpl.sliding_window of a decoder layer: (W - 1, 0), or (-1, -1)
    windows = {(-1, -1) if w is None else (w - 1, 0) for w in layer_windows}
    aot, window, why = aot_at_init, (-1, -1), "" if aot_at_init else f"FA{noarg_version} (no-argument version)"
    if batch_invariant:
        aot, why = False, "batch invariance"
    elif aot and len(windows) == 1:
        window = next(iter(windows))
    elif aot and len(windows) > 1:
        aot, why = False, "the model's layers have different sliding windows"
    return BuilderFacts(aot, window, bound, capture, slots, batch_invariant, why)


@dataclass(frozen=True)
class FAImpl:
    key: str  # "vllm_fa" | "fa3" | "fa4" | "fa2"
    version: int  # FA major version this implementation runs (0: the one vLLM would use)
    label: str
    module: str  # what must import
    call: Callable[..., None]  # (adapter, plan, q, k, v, sinks, out) -> None


@dataclass
class FAPlan:
    """One step's metadata, reused by every layer."""

    batch: Batch
    impl: FAImpl
    mod: Any
    cu_seqlens_q: torch.Tensor  # int32 [B + 1]
    seqused_k: torch.Tensor  # int32 [B]
    block_table: torch.Tensor  # int32 [B, P]
    max_seqlen_q: int
    max_seqlen_k: int
    fa_version: int  # the version that runs
    num_splits: int = 0
    scheduler_metadata: torch.Tensor | None = None  # vLLM's AOT schedule (a view of the persistent buffer)
    cu_seqlens_k: torch.Tensor | None = None  # int32 [B + 1], upstream FA2 only
    quant_q: bool = False  # the query goes in as fp8


def _window(p) -> tuple[int, int]:
    return (p.window_left, 0) if p.sliding_window is not None else (-1, -1)


def _softcap(p):
    # FlashAttentionImpl: logits_soft_cap None -> 0 ("0 means no soft cap")
    return p.soft_cap if p.soft_cap else 0


def _call_vllm_fa(a: "FlashAttnAdapter", plan: FAPlan, q, k, v, sinks, out) -> None:
    p = a.p
    shape = (plan.batch.num_requests, p.num_kv_heads)  # descale_shape = (len(cu_seqlens_q) - 1, Hkv)
    q_descale = a.q_scale(q.device).expand(shape) if a.quant_query_input(plan.fa_version) else None
    plan.mod.flash_attn_varlen_func(
        q=q, k=k, v=v, out=out, cu_seqlens_q=plan.cu_seqlens_q, max_seqlen_q=plan.max_seqlen_q,
        seqused_k=plan.seqused_k, max_seqlen_k=plan.max_seqlen_k, softmax_scale=p.scale, causal=True,
        alibi_slopes=None, window_size=list(_window(p)), block_table=plan.block_table, softcap=_softcap(p),
        scheduler_metadata=plan.scheduler_metadata, fa_version=plan.fa_version, q_descale=q_descale,
        k_descale=a.k_scale(q.device).expand(shape), v_descale=a.v_scale(q.device).expand(shape),
        dynamic_causal=None, num_splits=plan.num_splits, s_aux=sinks, mask_mod=None, aux_tensors=None)


def _upstream_descales(a: "FlashAttnAdapter", plan: FAPlan, q) -> dict:
    if not a.fp8_cache:
        return {}
    shape = (plan.batch.num_requests, a.p.num_kv_heads)
    return dict(q_descale=a.q_scale(q.device).expand(shape), k_descale=a.k_scale(q.device).expand(shape),
                v_descale=a.v_scale(q.device).expand(shape))


def _call_fa3(a: "FlashAttnAdapter", plan: FAPlan, q, k, v, sinks, out) -> None:
    if sinks is not None:
        raise Unsupported("upstream FA3 (flash_attn_interface) has no attention sinks")
    p = a.p
    res = plan.mod.flash_attn_with_kvcache(
        q, k, v, cache_seqlens=plan.seqused_k, page_table=plan.block_table, cu_seqlens_q=plan.cu_seqlens_q,
        max_seqlen_q=plan.max_seqlen_q, softmax_scale=p.scale, causal=True, window_size=_window(p),
        softcap=float(_softcap(p)), num_splits=0, **_upstream_descales(a, plan, q))
    out.copy_(res[0] if isinstance(res, tuple) else res)


def _call_fa4(a: "FlashAttnAdapter", plan: FAPlan, q, k, v, sinks, out) -> None:
    p = a.p
    left = p.window_left if p.sliding_window is not None else None
    res = plan.mod.flash_attn_varlen_func(
        q, k, v, cu_seqlens_q=plan.cu_seqlens_q, max_seqlen_q=plan.max_seqlen_q, max_seqlen_k=plan.max_seqlen_k,
        seqused_k=plan.seqused_k, page_table=plan.block_table, softmax_scale=p.scale, causal=True,
        window_size=(left, 0 if left is not None else None), learnable_sink=sinks, softcap=float(_softcap(p)),
        num_splits=0)
    out.copy_(res[0] if isinstance(res, tuple) else res)


def _call_fa2(a: "FlashAttnAdapter", plan: FAPlan, q, k, v, sinks, out) -> None:
    if sinks is not None:
        raise Unsupported("upstream FA2 (flash_attn) has no attention sinks")
    p = a.p
    res = plan.mod.flash_attn_varlen_func(
        q, k, v, plan.cu_seqlens_q, plan.cu_seqlens_k, plan.max_seqlen_q, plan.max_seqlen_k,
        softmax_scale=p.scale, causal=True, window_size=_window(p), softcap=float(_softcap(p)),
        block_table=plan.block_table)
    out.copy_(res[0] if isinstance(res, tuple) else res)


IMPLS: tuple[FAImpl, ...] = (
    FAImpl("vllm_fa", 0, "vllm.vllm_flash_attn", "vllm.vllm_flash_attn", _call_vllm_fa),
    FAImpl("fa3", 3, "upstream FA3 (flash_attn_interface)", "flash_attn_interface", _call_fa3),
    FAImpl("fa4", 4, "upstream FA4 (flash_attn.cute)", "flash_attn.cute", _call_fa4),
    FAImpl("fa2", 2, "upstream FA2 (flash_attn)", "flash_attn", _call_fa2),
)


def _import(name: str):
    return importlib.import_module(name)


class FlashAttnAdapter(Adapter):
    name = "FLASH_ATTN"
    cuda_only = True  # unless a test's importer stands in for the builds

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
        self._scales: dict[str, torch.Tensor] = {}
        self._metadata_buf: torch.Tensor | None = None
        self._sinks: tuple[tuple[int, int], torch.Tensor] | None = None
        self.builder = self._builder_facts()

    # --- what vLLM's builder decided for this model -------------------------

    def _builder_facts(self) -> BuilderFacts:
        env, build = self.env, self.row.flash_attn
        noarg = build.version_noarg or self.row.fa_version
        windows = build.layer_windows or (self.p.sliding_window,)
        total = name = None
        if env.is_cuda:
            props = torch.cuda.get_device_properties(env.device)
            total, name = props.total_memory / 2 ** 30, props.name
        return builder_facts(noarg, tuple(windows), env.capability,
                             vllm_max_num_seqs(total, name or "", env.capability),
                             batch_invariant=build.batch_invariant)

    # --- the cache, in vLLM's FLASH_ATTN layout ------------------------------

    def alloc_cache(self, num_pages: int, page_size: int) -> torch.Tensor:
        p = self.p
        return torch.empty(num_pages, page_size, p.num_kv_heads, p.head_size + p.head_size_v,
                           dtype=self.cache_torch_dtype(), device=self.env.device)

    def kv_views(self, cache: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        d = self.p.head_size
        return cache[..., :d], cache[..., d:]

    # --- the layer's quantization scales --------------------------------------

    def _scale(self, which: str, device: torch.device) -> torch.Tensor:
        """The layer's _q_scale / _k_scale / _v_scale: 0-dim float32 1.0
        (set_default_quant_scales: no calibrated scales), kept by the layer."""
        t = self._scales.get(which)
        if t is None or t.device != device:
            t = self._scales[which] = torch.tensor(1.0, dtype=torch.float32, device=device)
        return t

    def q_scale(self, device):
        return self._scale("q", device)

    def k_scale(self, device):
        return self._scale("k", device)

    def v_scale(self, device):
        return self._scale("v", device)

    def quant_query_input(self, version: int) -> bool:
        """FlashAttentionImpl.supports_quant_query_input: true on CUDA except on
        FA4's SM90 fp8-KV path, which dequantizes K/V in-kernel."""
        cap = self.env.capability
        sm90_fa4_fp8 = version == 4 and cap is not None and cap[0] == 9 and self.env.kv_cache_dtype in ("fp8", "fp8_e4m3")
        return not sm90_fa4_fp8

    # --- which build runs -------------------------------------------------------

    def _runnable(self, impl: FAImpl, page_size: int | None) -> str | None:
        cap = self.env.capability
        if impl.key == "vllm_fa" and self.row.fa_version is None:
            return "explain resolved no FA version"
        if impl.key == "fa3" and cap is not None and cap[0] != 9:
            return "FA3 runs on SM90 only"
        if impl.key == "fa4" and cap is not None and cap[0] not in (9, 10, 11):
            return "FA4 runs on SM90/SM100/SM110 only"
        if impl.key == "fa2" and page_size is not None and page_size % 256:
            return f"FA2 paged KV needs a page size multiple of 256 (got {page_size})"
        if self.fp8_cache and impl.key in ("fa4", "fa2"):
            return "takes no fp8 KV cache (no descale arguments)"
        return None

    def _has_version(self, mod) -> str | None:
        """vLLM's build may lack the version vLLM would use (a wheel without FA3)."""
        want = int(self.row.fa_version)
        check = getattr(mod, "is_fa_version_supported", None)
        if check is None or check(want):
            return None
        why = getattr(mod, "fa_version_unsupported_reason", lambda v: None)(want)
        return f"has no FA{want} here" + (f" ({why})" if why else "")

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
                    why = self._has_version(mod) if impl.key == "vllm_fa" else None
                    if why is None:
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

    # --- once per step ---------------------------------------------------------

    def build(self, batch: Batch) -> FAPlan:
        chosen = self.pick(batch.page_size)
        if chosen is None:
            raise Unsupported("no FlashAttention build runs this batch: " + "; ".join(self.tried))
        impl, mod = chosen
        version = int(self.row.fa_version if impl.key == "vllm_fa" else impl.version)
        plan = FAPlan(batch, impl, mod, batch.query_start_loc, batch.seq_lens, batch.block_table,
                      batch.max_query_len, batch.max_seq_len, version,
                      quant_q=self.fp8_cache and self.quant_query_input(version))
        if impl.key == "vllm_fa":
            plan.num_splits = self.builder.splits(batch.num_tokens)
            if self.builder.aot_schedule:
                plan.scheduler_metadata = self._store(self._schedule(mod, batch, plan.num_splits))
        elif impl.key == "fa2":  # upstream FA2 reads K lengths from cu_seqlens_k
            cu_k = torch.zeros(batch.num_requests + 1, dtype=torch.int32, device=batch.device)
            cu_k[1:] = torch.cumsum(batch.seq_lens, 0)
            plan.cu_seqlens_k = cu_k
        return plan

    def _schedule(self, mod, batch: Batch, num_splits: int) -> torch.Tensor:
        """FlashAttentionMetadataBuilder._get_scheduler_metadata (no DCP)."""
        p = self.p
        # the fp8 dtype for a quantized cache, else the cache spec's dtype
        qkv_dtype = torch.float8_e4m3fn if self.fp8_cache else self.cache_torch_dtype()
        return mod.get_scheduler_metadata(
            batch_size=batch.num_requests, max_seqlen_q=batch.max_query_len, max_seqlen_k=batch.max_seq_len,
            num_heads_q=p.num_heads, num_heads_kv=p.num_kv_heads, headdim=p.head_size,
            cache_seqlens=batch.seq_lens, qkv_dtype=qkv_dtype, cu_seqlens_q=batch.query_start_loc,
            page_size=batch.page_size, causal=True, window_size=self.builder.aot_window, num_splits=num_splits)

    def _store(self, metadata: torch.Tensor) -> torch.Tensor:
        """_store_scheduler_metadata under full CUDA graphs: into the builder's
        persistent buffer, the rest zeroed (stale entries would let thread blocks
        overwrite the output), and the buffer's head goes to the kernel."""
        n = metadata.shape[0]
        buf = self._metadata_buf
        if buf is None or buf.device != metadata.device:
            buf = self._metadata_buf = torch.zeros(max(self.builder.metadata_slots, n), dtype=torch.int32,
                                                   device=metadata.device)
        buf[:n] = metadata
        buf[n:] = 0
        return buf[:n]

    # --- once per layer ----------------------------------------------------------

    def run(self, plan: FAPlan, q: torch.Tensor, cache: torch.Tensor, sinks: torch.Tensor | None,
            out: torch.Tensor) -> None:
        k, v = self.kv_views(cache)
        if plan.quant_q:  # the attention layer's static per-tensor QuantFP8 with _q_scale (1.0)
            q = quantize_fp8(q)
        plan.impl.call(self, plan, q, k, v, self._layer_sinks(sinks), out)

    def _layer_sinks(self, sinks: torch.Tensor | None) -> torch.Tensor | None:
        """The sinks as the layer holds them, a parameter in the model dtype (FA3's
        s_aux takes bf16 only); converted once per tensor, not in every call."""
        if sinks is None or sinks.dtype == self.env.dtype:
            return sinks
        key = (sinks.data_ptr(), sinks._version)
        if self._sinks is None or self._sinks[0] != key:
            self._sinks = (key, sinks.to(self.env.dtype))
        return self._sinks[1]

    def kernel_name(self, plan: FAPlan) -> str:
        if plan.impl.key == "vllm_fa":
            label = f"vLLM FA{plan.fa_version} (vllm.vllm_flash_attn)"
            if plan.scheduler_metadata is not None:
                label += ", AOT schedule"
            if plan.num_splits:
                label += f", max {plan.num_splits} splits"
        else:
            label = plan.impl.label
        if self.fp8_cache:
            query = "fp8" if plan.quant_q else str(self.env.dtype).removeprefix("torch.")
            label += f" (fp8 KV, {query} query)"
        want = self.row.fa_version
        if want and plan.fa_version != want:
            label += f"; vLLM would use FA{want}"
        return label

    def close(self) -> None:
        self._metadata_buf = None
        self._scales.clear()
