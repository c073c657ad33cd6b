"""FLASHINFER: FlashInfer paged attention with its trtllm-gen and XQA kernels
(vllm/v1/attention/backends/flashinfer.py, ``FlashInferBackend``).

Two layers live here:

* Mirrors of the availability helpers in vllm/utils/flashinfer.py
  (``supports_trtllm_attention``, ``can_use_trtllm_attention``,
  ``force_use_trtllm_attention``) and of the small module-level predicates of
  the backend file (``_nvfp4_kv_on_fa2``, ``_use_fa2_native_decode``,
  ``_is_xqa_head_dim_supported``). vLLM reads the GPU from
  ``current_platform``, the cubins from ``has_nvidia_artifactory()``, the
  override from the current VllmConfig and ``VLLM_BATCH_INVARIANT`` from the
  environment; here they are the explicit ``Capability``, ``Kernels`` and
  ``EngineContext``. ``selector/flashinfer_dispatch.py`` reuses them.
* The ``FLASHINFER`` spec, each computed predicate a ``Rule``.
"""

from __future__ import annotations

from attn_select.backends.spec import BackendSpec, BlockSize, CapabilityRange, Rule
from attn_select.selector.config import Capability, EngineContext, Kernels, Query
from attn_select.selector.reasons import import_failure

# --- availability helpers (vllm/utils/flashinfer.py) -------------------------


def force_use_trtllm(ctx: EngineContext) -> bool | None:
    """``force_use_trtllm_attention``: attention_config.use_trtllm_attention
    (None = auto). vLLM reads it from the current config, which exists even
    without a model, so ``has_model`` does not gate it."""
    return ctx.use_trtllm_attention


def is_xqa_arch(cap: Capability) -> bool:
    """SM90 exactly, or the 12.x family: the GPUs whose trtllm decode is XQA."""
    return cap == Capability(9, 0) or cap.is_family(120)


def trtllm_unsupported_reason(
    cap: Capability, kernels: Kernels, ctx: EngineContext, *, is_prefill: bool
) -> str | None:
    """Why ``supports_trtllm_attention(is_prefill)`` is False, or None when it
    is True. Same checks, same order."""
    phase = "prefill" if is_prefill else "decode"
    if ctx.batch_invariant:
        return "VLLM_BATCH_INVARIANT disables TRTLLM attention"
    if not kernels.trtllm_cubins:
        return "the trtllm cubins are not reachable (has_nvidia_artifactory() is False)"
    if is_xqa_arch(cap):
        if is_prefill:
            return f"SM{cap.to_int()} has the XQA decode kernel only, no TRTLLM prefill"
        return None
    if cap.is_family(100):
        return None
    return f"no TRTLLM {phase} kernel for compute capability {cap}"


def supports_trtllm_attention(
    cap: Capability, kernels: Kernels, ctx: EngineContext, *, is_prefill: bool = False
) -> bool:
    """``supports_trtllm_attention``: 10.x for both phases, SM90 and 12.x for
    decode (XQA) only, never under batch invariance or without cubins."""
    return trtllm_unsupported_reason(cap, kernels, ctx, is_prefill=is_prefill) is None


def can_use_trtllm_attention(
    cap: Capability,
    kernels: Kernels,
    ctx: EngineContext,
    num_qo_heads: int,
    num_kv_heads: int,
    *,
    is_prefill: bool = False,
) -> bool:
    """``can_use_trtllm_attention``: not forced off, supported here, and the
    query heads split evenly over the KV heads."""
    if force_use_trtllm(ctx) is False:
        return False
    return (
        supports_trtllm_attention(cap, kernels, ctx, is_prefill=is_prefill)
        and num_qo_heads % num_kv_heads == 0
    )


# --- module-level predicates of vllm/v1/attention/backends/flashinfer.py -----


def nvfp4_kv_on_fa2(cap: Capability) -> bool:
    """``_nvfp4_kv_on_fa2``: 8.x, 9.x and 12.x read an NVFP4 cache with fa2."""
    return cap.major in (8, 9, 12)


def use_fa2_native_decode(cap: Capability) -> bool:
    """``_use_fa2_native_decode``: below SM90 the native decode wrapper runs fa2."""
    return cap < Capability(9, 0)


def xqa_head_dim_supported(head_dim: int) -> bool:
    """``_is_xqa_head_dim_supported``: 16..256 in steps of 16."""
    return 16 <= head_dim <= 256 and head_dim % 16 == 0


def supports_sink(cap: Capability, kernels: Kernels, ctx: EngineContext) -> bool:
    """``FlashInferBackend.supports_sink``: sinks need the trtllm kernels (XQA
    decode on SM90/12.x; trtllm-gen prefill and decode on 10.x)."""
    if force_use_trtllm(ctx) is False:
        return False
    if is_xqa_arch(cap):
        return supports_trtllm_attention(cap, kernels, ctx, is_prefill=False)
    if not cap.is_family(100):
        return False
    return supports_trtllm_attention(
        cap, kernels, ctx, is_prefill=False
    ) and supports_trtllm_attention(cap, kernels, ctx, is_prefill=True)


SMALL_PAGES: tuple[BlockSize, ...] = (16, 32, 64)
LARGE_PAGES: tuple[BlockSize, ...] = (16, 32, 64, 128, 256, 512, 1024)


def uses_large_pages(cap: Capability, kernels: Kernels, ctx: EngineContext) -> bool:
    """The large-page test of ``get_supported_kernel_block_sizes``: a model
    (heads per rank from the current VllmConfig) with GQA/MQA on 10.x where
    trtllm decode is usable. Pages >= 128 run only on trtllm-gen."""
    if not ctx.has_model:
        return False
    num_qo, num_kv = ctx.model_num_heads, ctx.model_num_kv_heads
    if num_qo is None or num_kv is None:
        # vLLM always knows both once a model exists; without them the
        # helper cannot evaluate the rule, so it keeps the small pages.
        return False
    return (
        num_kv > 0
        and num_qo // num_kv > 1
        and cap.is_family(100)
        and can_use_trtllm_attention(cap, kernels, ctx, num_qo, num_kv)
    )


# --- FLASHINFER spec rules ---------------------------------------------------

FLASHINFER_KV_CACHE_DTYPES = (
    "auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "nvfp4", "nvfp4_4over6",
)


def _kv_cache_dtype(q: Query) -> bool:
    kv = q.cfg.kv_cache_dtype
    if kv is not None and kv.startswith("nvfp4"):
        # Any "nvfp4*" name takes this branch, list or not.
        if nvfp4_kv_on_fa2(q.cap):
            # fa2's slot-mapping writer has no scale search: plain nvfp4 only.
            return kv == "nvfp4"
        return (
            q.cap.is_family(100)
            and supports_trtllm_attention(q.cap, q.kernels, q.ctx, is_prefill=True)
            and supports_trtllm_attention(q.cap, q.kernels, q.ctx, is_prefill=False)
        )
    return kv is None or kv in FLASHINFER_KV_CACHE_DTYPES


def _kernel_block_sizes(q: Query) -> tuple[BlockSize, ...]:
    return LARGE_PAGES if uses_large_pages(q.cap, q.kernels, q.ctx) else SMALL_PAGES


def _sink(q: Query) -> bool:
    return supports_sink(q.cap, q.kernels, q.ctx)


def _device_cpu_query_lens_mismatch(q: Query) -> bool:
    # Only trtllm-gen decode (10.x) reads query offsets from the device tensor.
    if not q.cap.is_family(100):
        return False
    ctx = q.ctx
    if not ctx.has_model:
        return True
    if ctx.model_num_heads is None or ctx.model_num_kv_heads is None:
        return False
    return ctx.dcp_size == 1 and can_use_trtllm_attention(
        q.cap, q.kernels, ctx, ctx.model_num_heads, ctx.model_num_kv_heads, is_prefill=False
    )


NVFP4_HEAD_64 = "fa2 prefill misreads an NVFP4 KV cache at head_size 64"
NVFP4_SINK = "the sink prefill wrapper cannot read an NVFP4 KV cache"


def _combination(q: Query) -> str | None:
    kv = q.cfg.kv_cache_dtype
    if kv is not None and kv.startswith("nvfp4") and q.cap.major in (8, 9, 12):
        if q.cfg.head_size == 64:
            return NVFP4_HEAD_64
        if q.cfg.has_sink:
            return NVFP4_SINK
    return None


def _import_error(q: Query) -> str | None:
    # flashinfer.py imports ``flashinfer`` at module top, so only the package
    # matters (Kernels.flashinfer_python), not has_flashinfer(): a package
    # with neither cubins nor nvcc+ninja still imports, and vLLM then selects
    # FLASHINFER anyway. Same test as the MLA family's flashinfer_import_error.
    if q.kernels.flashinfer_python:
        return None
    return import_failure("ModuleNotFoundError", "No module named 'flashinfer'")


def cudagraph_support(q: Query) -> str:
    """``FlashInferMetadataBuilder.get_cudagraph_support`` for one attention
    spec whose KV heads are the model's (per rank) and whose head size and
    cache dtype are the query's."""
    cap, ctx = q.cap, q.ctx
    if ctx.dcp_size > 1:
        # XQA returns no LSE; variable-length trtllm-gen cannot be graphed under DCP.
        return "UNIFORM_SINGLE_TOKEN_DECODE"
    if use_fa2_native_decode(cap):
        return "UNIFORM_BATCH" if not q.cfg.use_non_causal else "UNIFORM_SINGLE_TOKEN_DECODE"
    xqa_arch = is_xqa_arch(cap)
    num_qo, num_kv = ctx.model_num_heads, ctx.model_num_kv_heads
    if num_qo is None or num_kv is None:
        # No head counts: assume they divide (as every vLLM-served model's do).
        heads_ok = supports_trtllm_attention(cap, q.kernels, ctx) and force_use_trtllm(ctx) is not False
    else:
        heads_ok = can_use_trtllm_attention(cap, q.kernels, ctx, num_qo, num_kv)
    kv = q.cfg.kv_cache_dtype or "auto"
    uniform = heads_ok and not (
        xqa_arch
        and (
            (kv.startswith("nvfp4") and not cap.is_family(120))
            or not xqa_head_dim_supported(q.cfg.head_size)
        )
    )
    if uniform and (not q.cfg.use_non_causal or xqa_arch):
        return "UNIFORM_BATCH"
    return "UNIFORM_SINGLE_TOKEN_DECODE"


def _kv_cache_layouts(q: Query) -> tuple[str, ...] | None:
    # trtllm-gen reads head-major block interiors; elsewhere no preference,
    # and vLLM's default preference then puts LBNHC (NHD) first.
    return ("LBHNC", "BLHNC") if q.cap.major == 10 else None


FLASHINFER = BackendSpec(
    name="FLASHINFER",
    vllm_class="vllm.v1.attention.backends.flashinfer.FlashInferBackend",
    family="flashinfer",
    summary=(
        "FlashInfer wrappers (fa2/fa3) plus trtllm-gen (10.x) and XQA decode "
        "(9.0/12.x) when the cubins are reachable"
    ),
    head_sizes=(64, 128, 256, 512),
    kv_cache_dtypes=FLASHINFER_KV_CACHE_DTYPES,
    kv_cache_dtype_rule=Rule(
        "auto/16-bit/fp8*; nvfp4 via fa2 on 8.x/9.x/12.x, "
        "nvfp4* via trtllm-gen on 10.x with cubins",
        _kv_cache_dtype,
    ),
    kernel_block_sizes=Rule(
        "16/32/64; up to 1024 on 10.x for GQA/MQA models with trtllm decode",
        _kernel_block_sizes,
    ),
    sink=Rule("trtllm decode (9.0/12.x) or trtllm prefill+decode (10.x), not forced off", _sink),
    # Raised to 8.0 while FlashInfer is broken on SM75 (flashinfer issue 3620).
    capability=CapabilityRange(min=Capability(8, 0), max=Capability(12, 1)),
    sliding_window=True,
    non_causal=True,
    dcp=True,  # FlashInferImpl.supports_dcp; supports_pcp stays False
    device_cpu_query_lens_mismatch=Rule(
        "10.x only, and with a model: no DCP and trtllm decode usable",
        _device_cpu_query_lens_mismatch,
    ),
    combination=Rule(
        "NVFP4 KV on 8.x/9.x/12.x: not head_size 64, not with sinks", _combination
    ),
    import_error=Rule("needs the flashinfer package", _import_error),
    cudagraph_support=Rule(
        "UNIFORM_BATCH when trtllm-gen/XQA (or fa2 below SM90) decodes "
        "multi-token queries, else UNIFORM_SINGLE_TOKEN_DECODE",
        cudagraph_support,
    ),
    # Logical per-layer page [B, H, N, C] with K and V side by side in C
    # (vLLM 0.33.0 has no get_kv_cache_shape; the layout permutes this view).
    kv_cache_shape=(
        "(num_blocks, num_kv_heads, block_size, head_size + head_size_v); "
        "nvfp4: (num_blocks, 2 * num_kv_heads, block_size, packed fp4 + fp8 scales)"
    ),
    run_adapter="attn_select.backends.run.flashinfer:FlashInferAdapter",
    kv_cache_layouts=Rule(
        "10.x: LBHNC, BLHNC (HND); else no preference (LBNHC/NHD first)",
        _kv_cache_layouts,
    ),
)
