"""FLASH_ATTN: vLLM 0.33.0's ``FlashAttentionBackend``
(vllm/v1/attention/backends/flash_attn.py) on CUDA.

Most of its predicates ask ``get_flash_attn_version`` or
``is_fa_version_supported`` (fa_utils.py), so they are Rules over the
installed builds (``Kernels``), the GPU and the engine context. Which call
shape each predicate uses matters and is named on each rule: most use the
no-argument call, ``supports_combination`` passes the selector's head size,
sinks and block size.

The pieces here are also the facts of TRITON_FLASH_ATTN's causal child
(``_FABackend``, a real subclass), which reuses them.
"""

from __future__ import annotations

from attn_select.backends.spec import (
    ALL_ATTN_TYPES,
    BackendSpec,
    BlockSize,
    CapabilityRange,
    MultipleOf,
    Rule,
    rule,
)
from attn_select.selector import fa_version as fa
from attn_select.selector import reasons as R
from attn_select.selector.config import Capability, Query, is_quantized_kv_cache

# FlashAttentionBackend.supported_kv_cache_dtypes, in vLLM's order.
FA_KV_CACHE_DTYPES = ("auto", "float16", "bfloat16", "fp8", "fp8_e4m3")

# FlashAttentionBackend.supports_combination's reason strings.
SINK_BEFORE_SM90 = "sink not supported on compute capability < 9.0"
SM90_FP8_MM_PREFIX = "SM90 FP8 KV with mm_prefix requires Triton"
FP8_KV_NEEDS = (
    "FP8 KV cache requires FA3 on SM90, FA4 with head_size=512 on SM90, or FA4 on SM100"
)
MM_PREFIX_NEEDS_FA4 = (
    "mm_prefix (PrefixLM bidirectional attention) requires FlashAttention v4, "
    "which does not resolve for this head_size"
)

# The SM90 FA4 FP8-KV dequant kernel reads one 64-token TMA tile per page.
SM90_FA4_FP8_KV_PAGE = 64


def noarg_version(q: Query) -> int | None:
    """``get_flash_attn_version()`` with no arguments."""
    return fa.resolve_fa_version(q.cap, q.kernels, q.ctx).version


# --- 1. head size -------------------------------------------------------------


@rule("multiple of 8, <= 256; <= 512 where FA4 is supported (9.x/10.x/11.x with FA4 installed)")
def supports_head_size(q: Query) -> bool:
    head = q.cfg.head_size
    if head % 8:
        return False
    if head <= 256:
        return True
    return fa.is_fa_version_supported(4, q.cap, q.kernels) and head <= 512


# --- 3. KV-cache dtype -----------------------------------------------------------


@rule("auto/float16/bfloat16; fp8/fp8_e4m3 where flash_attn_supports_kv_cache_dtype() (no-arg FA3 on 9.x, FA4 on 9.x/10.x)")
def supports_kv_cache_dtype(q: Query) -> bool:
    kv = q.cfg.kv_cache_dtype
    if kv is None:
        return True
    if kv not in FA_KV_CACHE_DTYPES:
        return False
    if is_quantized_kv_cache(kv):
        # Called with the dtype only: no head size, so SM90 FA4 counts.
        return fa.fa_supports_kv_cache_dtype(q.cap, q.kernels, q.ctx, kv)
    return True


# --- 4. kernel block sizes -----------------------------------------------------


def sm90_fa4_fp8_kv_block_size(q: Query) -> int | None:
    """``_get_sm90_fa4_fp8_kv_block_size()`` without a KV spec: the current
    model's head size and the run-wide cache dtype."""
    ctx = q.ctx
    if not ctx.has_model:
        return None
    head = ctx.model_head_size
    if (
        q.cap.is_family(90)
        and ctx.cache_dtype in ("fp8", "fp8_e4m3")
        and head == 512
        and fa.resolve_fa_version(q.cap, q.kernels, ctx, head_size=head).version == 4
    ):
        return SM90_FA4_FP8_KV_PAGE
    return None


def fa4_hd256_block_size(q: Query, head_size_v: int | None = None) -> int | None:
    """``_get_fa4_hd256_block_size()`` without a KV spec: the model's head
    size and the backend class's ``head_size_v`` (None for FlashAttention
    and its subclasses here)."""
    ctx = q.ctx
    if not ctx.has_model:
        return None
    head = ctx.model_head_size
    if fa.uses_fa4_hd256_kernel(q.cap, head, head_size_v) and (
        fa.resolve_fa_version(
            q.cap, q.kernels, ctx, head_size=head, head_size_v=head_size_v,
            supports_fa4_hd256=True,
        ).version
        == 4
    ):
        return fa.FA4_HD256_PAGE_SIZE
    return None


@rule(
    "multiple of 16; [64] for an SM90 FA4 fp8-KV head-512 model; "
    "[128] for a Blackwell FA4 head-256 model"
)
def kernel_block_sizes(q: Query) -> tuple[BlockSize, ...]:
    # get_supported_kernel_block_sizes(): the base supports_block_size calls
    # it with no KV spec, so the model-level facts decide.
    size = sm90_fa4_fp8_kv_block_size(q) or fa4_hd256_block_size(q)
    if size:
        return (size,)
    return (MultipleOf(16),)


# --- 5.-10. feature predicates ----------------------------------------------------


@rule("FA4 supported on this GPU (is_fa_version_supported(4))")
def supports_mm_prefix(q: Query) -> bool:
    return fa.is_fa_version_supported(4, q.cap, q.kernels)


@rule("no-arg FA version is 3 or 4 (flash_attn_supports_sinks)")
def supports_sink(q: Query) -> bool:
    # is_flash_attn_varlen_func_available() is always True on CUDA.
    return fa.fa_supports_sinks(q.cap, q.kernels, q.ctx)


@rule("no-arg FA version >= 3")
def supports_per_head_quant_scales(q: Query) -> bool:
    version = noarg_version(q)
    return version is not None and version >= 3


# --- 21. supports_combination ------------------------------------------------------


def combination_reason(q: Query) -> str | None:
    """``FlashAttentionBackend.supports_combination``: its four checks in
    order, with the arguments vLLM passes (head_size_v = head_size)."""
    cfg, cap = q.cfg, q.cap
    kv = cfg.kv_cache_dtype
    quantized = kv is not None and is_quantized_kv_cache(kv)
    if cfg.has_sink and cap < Capability(9, 0):
        return SINK_BEFORE_SM90
    if cfg.use_mm_prefix and quantized and cap == Capability(9, 0):
        return SM90_FP8_MM_PREFIX
    if quantized and not fa.fa_supports_kv_cache_dtype(
        cap, q.kernels, q.ctx, kv,
        head_size=cfg.head_size,
        head_size_v=cfg.head_size,
        has_sinks=cfg.has_sink,
        kv_cache_block_size=cfg.block_size,
        supports_fa4_hd256=True,
    ):
        return FP8_KV_NEEDS
    if cfg.use_mm_prefix and fa.resolve_fa_version(
        cap, q.kernels, q.ctx,
        head_size=cfg.head_size,
        has_sinks=cfg.has_sink,
        kv_cache_block_size=cfg.block_size,
        supports_fa4_hd256=True,
    ).version != 4:
        return MM_PREFIX_NEEDS_FA4
    return None


# --- import and report facts -------------------------------------------------------


@rule("ImportError when neither _vllm_fa2_C nor _vllm_fa3_C is installed")
def import_error(q: Query) -> str | None:
    # flash_attn.py imports fa_utils, whose module level imports
    # vllm.vllm_flash_attn; that package's __init__ raises without FA2/FA3.
    message = fa.fa_package_import_error(q.kernels)
    return None if message is None else R.import_failure("ImportError", message)


@rule("ALWAYS when the no-arg FA version is 3 or 4, else UNIFORM_BATCH")
def cudagraph_support(q: Query) -> str:
    # FlashAttentionMetadataBuilder._cudagraph_support, evaluated when
    # flash_attn.py is imported. FA2 graphs captured at max_query_len=1 do
    # not serve mixed prefill-decode batches.
    return "ALWAYS" if noarg_version(q) in (3, 4) else "UNIFORM_BATCH"


# vLLM 0.33.0 has no get_kv_cache_shape: the per-layer cache is the logical
# [B, H, N, C] view of the KV spec (compute_layer_kv_cache_shape_bytes), C
# holding K then V (FlashAttentionImpl.forward splits it at head_size). The
# physical order is the engine-wide KVCacheLayout (default LBNHC).
KV_CACHE_SHAPE = "(num_blocks, num_kv_heads, block_size, head_size + head_size_v)"


FLASH_ATTN = BackendSpec(
    name="FLASH_ATTN",
    vllm_class="vllm.v1.attention.backends.flash_attn.FlashAttentionBackend",
    family="flash_attn",
    summary="vllm-flash-attn: FA2 (8.x+), FA3 (Hopper) or FA4 (CuTe DSL, Hopper/Blackwell)",
    head_sizes=supports_head_size,
    dtypes=("float16", "bfloat16"),
    kv_cache_dtypes=FA_KV_CACHE_DTYPES,
    kv_cache_dtype_rule=supports_kv_cache_dtype,
    kernel_block_sizes=kernel_block_sizes,
    mm_prefix=supports_mm_prefix,
    is_mla=False,
    sink=supports_sink,
    is_sparse=False,
    per_head_quant_scales=supports_per_head_quant_scales,
    capability=CapabilityRange(min=Capability(8, 0)),
    attn_types=ALL_ATTN_TYPES,
    sliding_window=True,
    rswa=True,
    non_causal=True,
    non_causal_dcp=False,  # the builder has no supports_non_causal_multi_token_dcp
    batch_invariance=True,
    kv_connector=True,
    pcp=False,  # FlashAttentionImpl keeps AttentionImpl's supports_pcp = False
    dcp=True,  # FlashAttentionImpl.supports_dcp = True
    device_cpu_query_lens_mismatch=True,  # not an SSM backend
    combination=Rule(
        "sink < 9.0; SM90 fp8 KV with mm_prefix; fp8 KV without FA3/FA4; mm_prefix without FA4",
        combination_reason,
    ),
    import_error=import_error,
    cudagraph_support=cudagraph_support,
    kv_cache_shape=KV_CACHE_SHAPE,
    run_adapter="attn_select.backends.run.flash_attn:FlashAttnAdapter",
    kv_cache_layouts=None,  # no supported_kv_cache_layouts override: any layout
    alibi_sqrt=False,
)
