"""What FLASHINFER runs inside, as vLLM 0.33.0 decides it, with the trail of
rules that decided it.

vLLM picks FLASHINFER's kernels in two places:

* once, in ``FlashInferMetadataBuilder.__init__`` (flashinfer.py): the decode
  kernel (trtllm-gen on 10.x, XQA on SM90/12.x, else FlashInfer's own decode
  wrapper), the query dtypes, the page size check, the reorder threshold that
  decides whether speculative tokens decode or prefill, and the errors it
  raises for unsupported combinations;
* per batch, in ``FlashInferMetadataBuilder.build``: the decode/prefill split
  and whether the prefill part runs trtllm-gen (``use_trtllm_attention`` with
  ``is_prefill=True``) or a FlashInfer wrapper.

A FlashInfer wrapper created with ``backend="auto"`` resolves its kernel in
FlashInfer itself (0.7.2.post1, the version vLLM 0.33.0 pins):
``determine_attention_backend`` answers fa3 only on 9.x (CUDA >= 12.3, which
every vLLM CUDA wheel has), for a query/KV dtype pair FA3 serves and head
dims 64/128/256; fa2 otherwise. The decode wrapper (tensor cores on) asks it
only when the query or KV is fp8, and otherwise runs fa2.

Rules older descriptions mention that 0.33.0 no longer exercises: decode is
never decided per batch (``use_trtllm_attention`` is only called for
prefill), so its "decode if num_tokens <= 256" auto rule and its
speculative-decoding shortcut have no effect here.

Everything is an explicit input; nothing here imports torch.
"""

from __future__ import annotations

from typing import NamedTuple

from attn_select.backends import flashinfer as fi
from attn_select.selector.config import (
    Capability,
    EngineContext,
    Kernels,
    Query,
    SelectorConfig,
    is_quantized_kv_cache,
)

FP8_E4M3 = "float8_e4m3fn"  # current_platform.fp8_dtype() on CUDA
FP8_E5M2 = "float8_e5m2"
FP8_DTYPES = (FP8_E4M3, FP8_E5M2)
UINT8 = "uint8"  # how FlashInfer is told about an NVFP4 cache on the fa2 path
# envs.VLLM_FLASHINFER_WORKSPACE_BUFFER_SIZE default: the trtllm workspace
DEFAULT_WORKSPACE_BYTES = 394 * 1024 * 1024
DEFAULT_BLOCK_SIZE = 16  # CacheConfig.DEFAULT_BLOCK_SIZE
TRTLLM_GEN, XQA, NATIVE = "trtllm-gen", "xqa", "native"


class TrailStep(NamedTuple):
    rule: str  # short name of the vLLM rule
    why: str


class BatchShape(NamedTuple):
    """One batch as the builder sees it after reordering: ``groups`` are
    (number of requests, query length) in batch order, decodes first."""

    name: str
    groups: tuple[tuple[int, int], ...]
    max_seq_len: int = 4096
    causal: bool = True

    @property
    def query_lens(self) -> tuple[int, ...]:
        return tuple(q for n, q in self.groups for _ in range(n))


class BatchDispatch(NamedTuple):
    batch: BatchShape
    num_decodes: int
    num_decode_tokens: int
    num_prefills: int
    num_prefill_tokens: int
    prefill: str | None  # kernel for the prefill part; None when there is none
    decode: str | None  # kernel for the decode part; None when there is none
    error: str | None  # what build() raises for this batch, as "Type: message"
    trail: tuple[TrailStep, ...]


class FlashInferDispatch(NamedTuple):
    decode_kernel: str  # "trtllm-gen" | "xqa" | "native"
    native_decode_backend: str | None  # the decode wrapper's kernel when native
    page_size: int  # kernel block size the builder runs with
    kv_cache_dtype: str  # the KV dtype FlashInfer is given
    q_dtype_prefill: str
    q_dtype_decode: str
    reorder_batch_threshold: int  # longest query that still counts as a decode
    cudagraph_support: str  # AttentionCGSupport member name
    init_error: str | None  # what the builder's __init__ raises, as "Type: message"
    trail: tuple[TrailStep, ...]  # the builder-init decisions
    batches: tuple[BatchDispatch, ...]  # empty when init_error is set
    # what vLLM's calls silently leave out for this model (e.g. its soft cap)
    warnings: tuple[str, ...] = ()

    def describe(self) -> list[str]:
        """Short lines for the text report."""
        if self.init_error is not None:
            return [f"builder init fails: {self.init_error}"]
        decode = self.decode_kernel
        if decode == NATIVE:
            decode = f"native wrapper ({self.native_decode_backend})"
        rows = [
            f"decode {decode} (fixed at builder init); q {self.q_dtype_prefill} prefill / "
            f"{self.q_dtype_decode} decode, kv {self.kv_cache_dtype}, page {self.page_size}, "
            f"cuda graphs {self.cudagraph_support}"
        ]
        for b in self.batches:
            if b.error is not None:
                rows.append(f"{b.batch.name}: fails: {b.error}")
                continue
            parts = []
            if b.num_decodes:
                parts.append(f"{b.num_decodes} decodes -> {b.decode}")
            if b.num_prefills:
                parts.append(f"{b.num_prefills} prefills -> {b.prefill}")
            rows.append(f"{b.batch.name}: " + "; ".join(parts))
        rows += [f"warning: {w}" for w in self.warnings]
        return rows


# --- FlashInfer 0.7.2.post1 and vLLM helpers ---------------------------------


def auto_backend(cap: Capability, q_dtype: str, kv_dtype: str, head_dim: int) -> tuple[str, str]:
    """FlashInfer's ``determine_attention_backend`` as vLLM calls it (no
    custom mask, no RoPE in the kernel, no fp16 QK reduction, head_dim_qk ==
    head_dim_vo), with why."""
    if cap.major != 9:
        return "fa2", f"FlashInfer's auto picks FA3 only on 9.x, this is {cap}"
    if kv_dtype in FP8_DTYPES and q_dtype not in FP8_DTYPES:
        return "fa2", f"FA3 reads an fp8 KV cache only with an fp8 query (query {q_dtype})"
    if kv_dtype == UINT8:
        return "fa2", "FA3 has no NVFP4 (uint8) KV kernel"
    if head_dim not in (64, 128, 256):
        return "fa2", f"FA3 prefill has no head_dim {head_dim} kernel"
    return "fa3", f"SM{cap.to_int()}: FA3 serves q {q_dtype} / kv {kv_dtype} at head_dim {head_dim}"


def flashinfer_kv_dtype(kv_cache_dtype: str) -> str:
    """``FlashInferBackend.get_dtype_for_flashinfer``; ValueError otherwise."""
    if kv_cache_dtype in ("fp8", "fp8_e4m3"):
        return FP8_E4M3
    if kv_cache_dtype == "fp8_e5m2":
        return FP8_E5M2
    if kv_cache_dtype.startswith("nvfp4"):
        return UINT8
    raise ValueError(f"Unrecognized dtype: {kv_cache_dtype}")


def kernel_page_size(cache_block_size: int, kernel_sizes: tuple[int, ...]) -> int | None:
    """``select_common_block_size`` for FlashInfer's exact-size list: the
    cache block itself when listed, else the largest listed divisor."""
    if cache_block_size in kernel_sizes:
        return cache_block_size
    divisors = [s for s in kernel_sizes if cache_block_size % s == 0]
    return max(divisors) if divisors else None


def split_decodes_and_prefills(
    query_lens: tuple[int, ...], threshold: int, require_uniform: bool
) -> tuple[int, int, int, int]:
    """``split_decodes_and_prefills`` (backends/utils.py) on a reordered
    batch: (num_decodes, num_prefills, num_decode_tokens, num_prefill_tokens)."""
    n, tokens = len(query_lens), sum(query_lens)
    if max(query_lens) <= threshold and (not require_uniform or threshold <= 1):
        return n, 0, tokens, 0
    if query_lens[0] > threshold:
        return 0, n, 0, tokens
    if require_uniform:
        first = query_lens[0]
        if all(q in (first, 0) for q in query_lens):
            return n, 0, tokens, 0
        is_prefill = [q != first and q != 0 for q in query_lens]
    else:
        is_prefill = [q > threshold for q in query_lens]
    if not any(is_prefill):
        return n, 0, tokens, 0
    k = is_prefill.index(True)
    decode_tokens = sum(query_lens[:k])
    return k, n - k, decode_tokens, tokens - decode_tokens


def use_trtllm_attention(
    cap: Capability,
    kernels: Kernels,
    ctx: EngineContext,
    *,
    num_qo_heads: int,
    num_kv_heads: int,
    dcp_world_size: int,
    kv_cache_dtype: str,
    q_dtype: str,
    is_prefill: bool,
    force: bool | None,
    has_sinks: bool,
    num_tokens: int = 0,
    has_spec: bool = False,
) -> tuple[bool, str]:
    """``use_trtllm_attention`` (vllm/utils/flashinfer.py), step for step."""
    if force is not None and not force:
        return False, "use_trtllm_attention is forced off"
    if dcp_world_size > 1:
        return False, "TRTLLM prefill does not support DCP, reverting to FlashInfer"
    unsupported = fi.trtllm_unsupported_reason(cap, kernels, ctx, is_prefill=is_prefill)
    if unsupported is not None:
        return False, unsupported
    if num_qo_heads % num_kv_heads != 0:
        return False, f"{num_qo_heads} query heads do not split over {num_kv_heads} KV heads"
    if has_spec and not is_prefill:
        return True, "speculative decoding requires TRTLLM attention for decodes"
    if q_dtype == FP8_E4M3:
        return True, "the query is quantized (fp8)"
    if has_sinks:
        return True, "attention sinks need TRTLLM attention"
    if force is None:
        if is_prefill:
            ok = kv_cache_dtype == "auto"
            return ok, f"auto-detect prefill: {'unquantized' if ok else kv_cache_dtype} KV cache"
        if fi.is_xqa_arch(cap) and kv_cache_dtype.startswith("fp8"):
            return True, "auto-detect decode: SM90/12.x with an fp8 KV cache prefers XQA"
        ok = num_tokens <= 256 and kv_cache_dtype == "auto"
        return ok, f"auto-detect decode: {num_tokens} tokens, kv {kv_cache_dtype}"
    return True, "use_trtllm_attention is forced on"


def _error(exc_type: str, message: str) -> str:
    return f"{exc_type}: {message}"


def representative_batches(num_speculative_tokens: int, use_non_causal: bool) -> tuple[BatchShape, ...]:
    """A small and a large decode, a prefill, a mixed batch, and where they
    apply a speculative-verification batch and a non-causal draft batch."""
    out = [
        BatchShape("decode x8", ((8, 1),)),
        BatchShape("decode x512", ((512, 1),)),
        BatchShape("prefill 2x2048", ((2, 2048),)),
        BatchShape("mixed 32 decodes + 1x2048", ((32, 1), (1, 2048))),
    ]
    if num_speculative_tokens > 0:
        q = 1 + num_speculative_tokens
        out.append(BatchShape(f"spec verify 32x{q}", ((32, q),)))
    if use_non_causal:
        out.append(BatchShape("non-causal draft 8x16", ((8, 16),), causal=False))
    return tuple(out)


# --- the builder ---------------------------------------------------------------


class _Init(NamedTuple):
    """The decisions FlashInferMetadataBuilder.__init__ keeps."""

    cap: Capability
    kernels: Kernels
    ctx: EngineContext
    num_qo_heads: int
    num_kv_heads: int
    head_dim: int
    page_size: int
    cache_dtype: str  # "auto" when unquantized, as the builder stores it
    kv_dtype: str
    nvfp4_trtllm: bool
    is_nvfp4: bool
    q_prefill: str
    q_decode: str
    use_trtllm_decode: bool
    decode_kernel: str
    native_decode_backend: str | None
    use_xqa: bool
    varlen_decode: bool
    fa2_native_decode: bool
    reorder_threshold: int
    use_dcp: bool
    dcp_size: int
    trtllm_dcp_prefill: bool
    has_sinks: bool
    workspace_bytes: int


def _q_dtype(
    cap: Capability, ctx: EngineContext, model_dtype: str, cache_dtype: str,
    nvfp4_fa2: bool, *, is_prefill: bool,
) -> tuple[str, str]:
    """``FlashInferMetadataBuilder.get_q_data_type`` with why."""
    if ctx.disable_flashinfer_q_quantization:
        return model_dtype, "disable_flashinfer_q_quantization keeps the model dtype"
    if (
        fi.is_xqa_arch(cap)
        and not is_prefill
        and fi.force_use_trtllm(ctx) is not False
        and cache_dtype.startswith("fp8")
    ):
        return model_dtype, "XQA decode on SM90/12.x takes a 16-bit query with an fp8 cache"
    if cache_dtype.startswith("fp8"):
        if cap == Capability(9, 0) or cap.is_family(100):
            return flashinfer_kv_dtype(cache_dtype), "fp8 cache: the query matches it (FA3/trtllm-gen)"
        return model_dtype, f"fp8 cache on {cap}: only fa2 here, which takes no fp8 query"
    if cache_dtype.startswith("nvfp4"):
        if nvfp4_fa2:
            return model_dtype, "NVFP4 cache read by fa2: model-dtype query"
        return FP8_E4M3, "NVFP4 cache on trtllm-gen: fp8 query"
    return model_dtype, "unquantized cache: model-dtype query"


def _init(
    cfg: SelectorConfig, cap: Capability, kernels: Kernels, ctx: EngineContext, *,
    num_qo_heads: int, num_kv_heads: int, has_sinks: bool, page_size: int | None,
    num_speculative_tokens: int, window_left: int, has_softcap: bool, workspace_bytes: int,
    trail: list[TrailStep],
) -> _Init | str:
    """Builder init: the kept decisions, or the error it raises."""

    def step(rule: str, why: str) -> None:
        trail.append(TrailStep(rule, why))

    if page_size is None:
        sizes = tuple(int(s) for s in fi.FLASHINFER.block_sizes(Query(cfg, cap, kernels, ctx)))
        block = cfg.block_size if cfg.block_size is not None else DEFAULT_BLOCK_SIZE
        page = kernel_page_size(block, sizes)
        if page is None:
            return _error("ValueError", f"No common block size for {block} (FLASHINFER: {list(sizes)}).")
        step("page-size", f"cache block {block} -> kernel page {page} (kernel sizes {list(sizes)})")
    else:
        page = page_size
    dcp_size = ctx.dcp_size
    use_dcp = dcp_size > 1

    kv = cfg.kv_cache_dtype or "auto"
    quantized = is_quantized_kv_cache(kv)
    cache_dtype = kv if quantized else "auto"
    is_nvfp4 = cache_dtype.startswith("nvfp4")
    nvfp4_fa2 = is_nvfp4 and fi.nvfp4_kv_on_fa2(cap)
    nvfp4_trtllm = is_nvfp4 and not nvfp4_fa2
    if nvfp4_fa2 and use_dcp:
        return _error("NotImplementedError", "The DCP prefill wrapper cannot read NVFP4 block scales.")
    if nvfp4_fa2 and cfg.head_size == 64:
        return _error("NotImplementedError", "fa2 prefill misreads NVFP4 at head_size 64.")
    if nvfp4_trtllm:
        if (
            fi.force_use_trtllm(ctx) is False
            or not fi.supports_trtllm_attention(cap, kernels, ctx, is_prefill=True)
            or not fi.supports_trtllm_attention(cap, kernels, ctx, is_prefill=False)
        ):
            return _error(
                "ValueError",
                f"--kv-cache-dtype {cache_dtype} requires the SM100 trtllm-gen FlashInfer path.",
            )
        kv_dtype = "nvfp4"
    elif quantized:
        try:
            kv_dtype = flashinfer_kv_dtype(cache_dtype)
        except ValueError as e:
            return _error("ValueError", str(e))
    else:
        kv_dtype = cfg.dtype
    if is_nvfp4:
        step("nvfp4", "NVFP4 cache read by " + ("fa2 (8.x/9.x/12.x)" if nvfp4_fa2 else "trtllm-gen"))

    q_prefill, why = _q_dtype(cap, ctx, cfg.dtype, cache_dtype, nvfp4_fa2, is_prefill=True)
    step("q-dtype-prefill", f"{q_prefill}: {why}")
    q_decode, why = _q_dtype(cap, ctx, cfg.dtype, cache_dtype, nvfp4_fa2, is_prefill=False)
    step("q-dtype-decode", f"{q_decode}: {why}")

    # Decode: trtllm-gen / XQA whenever usable, chosen once for CUDA graphs.
    can_decode_api = fi.can_use_trtllm_attention(
        cap, kernels, ctx, num_qo_heads, num_kv_heads, is_prefill=False
    ) and (not nvfp4_fa2 or cap.is_family(120))
    if not can_decode_api:
        if fi.force_use_trtllm(ctx) is False:
            why = "use_trtllm_attention is forced off"
        elif (r := fi.trtllm_unsupported_reason(cap, kernels, ctx, is_prefill=False)) is not None:
            why = r
        elif num_qo_heads % num_kv_heads:
            why = f"{num_qo_heads} query heads do not split over {num_kv_heads} KV heads"
        else:
            why = "XQA reads an NVFP4 cache only on 12.x; SM90 decodes it with fa2"
        step("decode", f"native FlashInfer decode: {why}")
    if page > 64 and not (cap.is_family(100) and can_decode_api and num_qo_heads // num_kv_heads > 1):
        return _error("AssertionError", f"Unexpected FlashInfer page size {page} without trtllm-gen GQA")

    decode_kernel: str = NATIVE
    if can_decode_api:
        decode_kernel = XQA if fi.is_xqa_arch(cap) else TRTLLM_GEN
        step("decode", f"{decode_kernel}: trtllm decode usable on SM{cap.to_int()}")
    if decode_kernel == XQA and not fi.xqa_head_dim_supported(cfg.head_size):
        decode_kernel = NATIVE
        step("xqa-head-dim", f"FlashInfer XQA decode does not support head_dim={cfg.head_size}; "
             "reverting this KV-cache group to native FlashInfer decode.")
    if use_dcp and decode_kernel == XQA:
        decode_kernel = NATIVE
        step("xqa-dcp", "FlashInfer XQA decode does not support returning LSE and therefore "
             "does not support DCP, reverting to native FlashInfer decode.")
    use_trtllm_decode = decode_kernel != NATIVE
    use_xqa = decode_kernel == XQA
    varlen = cfg.use_adaptive_verification and decode_kernel == TRTLLM_GEN and not use_dcp
    fa2_native = fi.use_fa2_native_decode(cap)

    # _init_reorder_batch_threshold: spec tokens decode only on kernels that
    # take multi-token queries (trtllm-gen, XQA, fa2 below SM90), never under DCP.
    threshold = 1
    if (decode_kernel != NATIVE or fa2_native) and num_speculative_tokens > 0:
        threshold = max(1, 1 + num_speculative_tokens)
    if use_dcp:
        threshold = 1
    if num_speculative_tokens > 0:
        step("reorder", f"queries up to {threshold} tokens are decodes"
             + ("" if threshold > 1 else " (speculative tokens take the prefill path)"))

    native_backend: str | None = None
    if decode_kernel == NATIVE:
        if nvfp4_trtllm:
            native_backend = "trtllm-gen"
            why = "NVFP4 on 10.x: the wrapper runs trtllm-gen"
        elif fa2_native:
            native_backend = "fa2"
            why = "below SM90 the decode wrapper runs fa2"
        elif q_decode in FP8_DTYPES or kv_dtype in FP8_DTYPES:
            native_backend, why = auto_backend(cap, q_decode, kv_dtype, cfg.head_size)
            why = "auto with fp8: " + why
        else:
            native_backend = "fa2"
            why = "auto with tensor cores and no fp8 runs fa2"
            if cap in (Capability(10, 0), Capability(10, 3)):
                why += " (FlashInfer's cuDNN auto rule needs 2-4 query tokens per request)"
        step("native-decode", f"{native_backend}: {why}")

    trtllm_dcp_prefill = (
        use_dcp
        and fi.can_use_trtllm_attention(cap, kernels, ctx, num_qo_heads, num_kv_heads, is_prefill=True)
        and not quantized
        and window_left == -1
        and not has_softcap
    )
    if use_dcp:
        step("dcp-prefill", "context pass " + ("may run trtllm-gen" if trtllm_dcp_prefill
                                               else "runs the native paged wrapper"))

    if has_sinks and (nvfp4_fa2 or not fi.supports_sink(cap, kernels, ctx)):
        return _error(
            "NotImplementedError",
            "FlashInfer backend currently does not support attention sinks, please use trtllm "
            "on blackwell or flash attention on earlier GPUs.",
        )

    return _Init(
        cap=cap, kernels=kernels, ctx=ctx, num_qo_heads=num_qo_heads, num_kv_heads=num_kv_heads,
        head_dim=cfg.head_size, page_size=page, cache_dtype=cache_dtype, kv_dtype=kv_dtype,
        nvfp4_trtllm=nvfp4_trtllm, is_nvfp4=is_nvfp4, q_prefill=q_prefill, q_decode=q_decode,
        use_trtllm_decode=use_trtllm_decode, decode_kernel=decode_kernel,
        native_decode_backend=native_backend, use_xqa=use_xqa, varlen_decode=varlen,
        fa2_native_decode=fa2_native, reorder_threshold=threshold, use_dcp=use_dcp,
        dcp_size=dcp_size, trtllm_dcp_prefill=trtllm_dcp_prefill, has_sinks=has_sinks,
        workspace_bytes=workspace_bytes,
    )


def _fits_trtllm_workspace(b: _Init, prefill_lens: tuple[int, ...]) -> bool:
    """``TrtllmDCPContextWrapper.fits_workspace``: the LSE stats carve-out."""
    heads = b.num_qo_heads * b.dcp_size
    rounded = -(-max(prefill_lens) // 256) * 256
    return heads * len(prefill_lens) * rounded * 8 + (1 << 20) <= b.workspace_bytes


def _native_prefill(b: _Init, causal: bool, prefill_lens: tuple[int, ...]) -> tuple[str | None, str | None, str]:
    """``_get_prefill_wrapper``: (kernel, error, why)."""
    sink_arch = b.has_sinks and fi.is_xqa_arch(b.cap)
    if not causal:
        if b.is_nvfp4:
            return None, _error("NotImplementedError", "FlashInfer non-causal attention is not "
                                "supported with NVFP4 KV cache."), "non-causal"
        name, why = auto_backend(b.cap, b.q_prefill, b.kv_dtype, b.head_dim)
        wrapper = "sink wrapper" if sink_arch else "paged wrapper"
        return f"{wrapper} ({name})", None, f"non-causal {wrapper}, auto: {why}"
    if b.use_dcp:
        name, why = auto_backend(b.cap, b.q_prefill, b.kv_dtype, b.head_dim)
        context = f"paged wrapper ({name})"
        if b.trtllm_dcp_prefill and _fits_trtllm_workspace(b, prefill_lens):
            context, why = "trtllm-gen", "the trtllm-gen context kernel fits the workspace"
        return (f"DCP wrapper (context {context}, new tokens ragged wrapper auto)", None,
                f"DCP prefill: {why}")
    if sink_arch:
        name, why = auto_backend(b.cap, b.q_prefill, b.kv_dtype, b.head_dim)
        return f"sink wrapper ({name})", None, f"sinks on SM90/12.x: sink wrapper, auto: {why}"
    if b.nvfp4_trtllm:
        return "paged wrapper (trtllm-gen)", None, "NVFP4 on 10.x: the wrapper runs trtllm-gen"
    name, why = auto_backend(b.cap, b.q_prefill, b.kv_dtype, b.head_dim)
    return f"paged wrapper ({name})", None, f"auto: {why}"


def _build(b: _Init, batch: BatchShape) -> BatchDispatch:
    """``FlashInferMetadataBuilder.build`` for one batch shape."""
    trail: list[TrailStep] = []
    lens = batch.query_lens
    causal = batch.causal
    if causal or b.use_xqa:
        nd, np_, ndt, npt = split_decodes_and_prefills(
            lens, b.reorder_threshold, require_uniform=not (b.use_xqa or b.varlen_decode)
        )
    else:
        nd, np_, ndt, npt = 0, len(lens), 0, sum(lens)
        trail.append(TrailStep("route", "non-causal without XQA: every request takes the prefill path"))

    def done(prefill: str | None, decode: str | None, error: str | None = None) -> BatchDispatch:
        return BatchDispatch(batch, nd, ndt, np_, npt, prefill, decode, error, tuple(trail))

    force = True if b.page_size >= 128 else b.ctx.use_trtllm_attention
    if b.page_size >= 128:
        trail.append(TrailStep("large-page", f"page {b.page_size} >= 128 forces trtllm-gen prefill"))
    prefill_trtllm = False
    if causal:
        prefill_trtllm, why = use_trtllm_attention(
            b.cap, b.kernels, b.ctx, num_qo_heads=b.num_qo_heads, num_kv_heads=b.num_kv_heads,
            dcp_world_size=b.dcp_size, kv_cache_dtype=b.cache_dtype, q_dtype=b.q_prefill,
            is_prefill=True, force=force, has_sinks=b.has_sinks, num_tokens=npt,
            has_spec=b.reorder_threshold > 1,
        )
        if np_:
            trail.append(TrailStep("prefill-trtllm", f"{'yes' if prefill_trtllm else 'no'}: {why}"))
    decode_api = b.use_trtllm_decode and (causal or b.use_xqa)

    if not causal and b.use_dcp:
        return done(None, None, _error("NotImplementedError",
                                       "FlashInfer non-causal prefill is not supported with DCP yet."))
    all_trtllm = causal and (np_ == 0 or prefill_trtllm) and (nd == 0 or decode_api)
    if not all_trtllm and b.has_sinks and b.use_dcp:
        return done(None, None, _error(
            "NotImplementedError",
            "FlashInfer BatchDCPPrefillWrapper does not support attention sinks. Please use "
            "TRTLLM on Blackwell or FlashAttention on earlier GPUs.",
        ))

    prefill: str | None = None
    if np_:
        if prefill_trtllm:
            prefill = TRTLLM_GEN
            if b.q_prefill != FP8_E4M3 and b.cache_dtype.startswith("fp8"):
                trail.append(TrailStep("fp8-dequant", "16-bit query on an fp8 cache: the prefill "
                                       "pages are dequantized into a temporary cache first"))
        else:
            prefill, err, why = _native_prefill(b, causal, lens[nd:])
            trail.append(TrailStep("prefill-wrapper", why))
            if err is not None:
                return done(None, None, err)

    decode: str | None = None
    if nd:
        q_len = ndt // nd
        if decode_api:
            decode = b.decode_kernel
            if q_len > 1:
                trail.append(TrailStep("decode", f"{decode} takes {q_len} query tokens per request"))
        else:
            decode = f"decode wrapper ({b.native_decode_backend})"
            if b.fa2_native_decode and q_len > 1:
                trail.append(TrailStep("decode", f"fa2 decode plans {q_len} query tokens per request"))
    return done(prefill, decode)


def flashinfer_dispatch(
    cfg: SelectorConfig,
    cap: Capability,
    kernels: Kernels,
    ctx: EngineContext,
    *,
    num_qo_heads: int,
    num_kv_heads: int,
    has_sinks: bool,
    page_size: int | None = None,
    num_speculative_tokens: int = 0,
    window_left: int | None = None,
    has_softcap: bool | None = None,
    workspace_bytes: int = DEFAULT_WORKSPACE_BYTES,
    batches: tuple[BatchShape, ...] | None = None,
) -> FlashInferDispatch:
    """FLASHINFER's inner dispatch for one KV-cache group.

    ``num_qo_heads``/``num_kv_heads`` are per rank (the builder's
    ``num_qo_heads`` and the spec's ``num_kv_heads``). ``page_size`` is the
    kernel block size; None derives it from ``cfg.block_size`` (16 when
    unset) and FLASHINFER's kernel block sizes. ``window_left`` defaults to
    -1, or 0 when ``cfg.has_sliding_window`` (only "is there a window"
    matters); ``has_softcap`` to the model's ``attn_logit_softcapping``.
    ``workspace_bytes`` is VLLM_FLASHINFER_WORKSPACE_BUFFER_SIZE.
    """
    if window_left is None:
        window_left = 0 if cfg.has_sliding_window else -1
    if has_softcap is None:
        has_softcap = ctx.has_model and ctx.attn_logit_softcapping
    trail: list[TrailStep] = []
    b = _init(
        cfg, cap, kernels, ctx, num_qo_heads=num_qo_heads, num_kv_heads=num_kv_heads,
        has_sinks=has_sinks, page_size=page_size, num_speculative_tokens=num_speculative_tokens,
        window_left=window_left, has_softcap=has_softcap, workspace_bytes=workspace_bytes,
        trail=trail,
    )
    # get_cudagraph_support reads the model's query heads and the spec's KV heads.
    cg_ctx = ctx._replace(model_num_heads=num_qo_heads, model_num_kv_heads=num_kv_heads)
    cudagraph = fi.cudagraph_support(Query(cfg, cap, kernels, cg_ctx))
    if isinstance(b, str):
        return FlashInferDispatch(
            decode_kernel=NATIVE, native_decode_backend=None, page_size=page_size or 0,
            kv_cache_dtype="", q_dtype_prefill="", q_dtype_decode="", reorder_batch_threshold=1,
            cudagraph_support=cudagraph, init_error=b, trail=tuple(trail), batches=(),
        )
    shapes = batches if batches is not None else representative_batches(
        num_speculative_tokens, cfg.use_non_causal
    )
    built = tuple(_build(b, s) for s in shapes)
    return FlashInferDispatch(
        decode_kernel=b.decode_kernel,
        native_decode_backend=b.native_decode_backend,
        page_size=b.page_size,
        kv_cache_dtype=b.kv_dtype,
        q_dtype_prefill=b.q_prefill,
        q_dtype_decode=b.q_decode,
        reorder_batch_threshold=b.reorder_threshold,
        cudagraph_support=cudagraph,
        init_error=None,
        trail=tuple(trail),
        batches=built,
        warnings=_softcap_warnings(built) if has_softcap else (),
    )


def _softcap_warnings(batches: tuple[BatchDispatch, ...]) -> tuple[str, ...]:
    """vLLM 0.33.0 calls the XQA and trtllm-gen kernels (decode and context)
    without a logits soft cap argument, and nothing in its selection or
    builder steers a soft-capped model away from them: batches that run them
    compute attention without the model's cap. The native wrappers are
    planned with it."""
    kernels = sorted({k for d in batches if d.error is None
                      for k in (d.decode, d.prefill) if k in (XQA, TRTLLM_GEN)})
    if not kernels:
        return ()
    if len(kernels) == 1:
        subject, pronoun = f"{kernels[0]} takes", "it"
    else:
        subject, pronoun = f"{' and '.join(kernels)} take", "them"
    return (f"{subject} no logits soft cap, and vLLM passes none: batches run on {pronoun} "
            "ignore the model's attn_logit_softcapping",)
