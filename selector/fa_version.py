"""Which FlashAttention version vLLM 0.33.0 runs, and the trail of rules that
decided it. Mirrors ``get_flash_attn_version`` (vllm/v1/attention/backends/
fa_utils.py) step for step, with every input explicit and every
``logger.warning_once`` turned into a trail entry.

``is_fa_version_supported`` (vllm/vllm_flash_attn/flash_attn_interface.py)
depends on which builds are installed (``Kernels``) and on the GPU:
FA2 needs >= 8.0, FA3 the 9.x family, FA4 the 9.x, 10.x or 11.x family.

The package ``vllm.vllm_flash_attn`` itself refuses to import unless FA2 or
FA3 is built (its ``__init__`` raises ImportError), whatever FA4 says. Every
FA helper imports it first, so without FA2 and FA3 no version is usable.

Three call shapes matter, and they disagree:

* the no-argument call ``get_flash_attn_version()``: ``supports_sink``,
  ``supports_per_head_quant_scales``, the builder's ``_cudagraph_support``
  and its FA3 ahead-of-time scheduling. It knows no head size, ALiBi, sinks
  or soft cap, so none of the per-layer fallbacks apply to it.
* the layer's call in ``FlashAttentionImpl.__init__`` (``layer_fa_version``):
  the version the kernels actually run with.
* the metadata builder's call (``builder_fa_version``): head_size_v and the
  KV block size, used for its hd256 flag and JIT warmup only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from attn_select.selector.config import (
    AttentionType,
    Capability,
    EngineContext,
    Kernels,
    SelectorConfig,
    is_quantized_kv_cache,
)

if TYPE_CHECKING:  # only for annotations; model_facts imports nothing heavy either
    from attn_select.selector.model_facts import LayerAttention

# FA4's dedicated head_size=256 kernel needs one 128-token page per tile.
FA4_HD256_PAGE_SIZE = 128

# vllm/vllm_flash_attn/__init__.py raises this when neither C extension imports.
FA_PACKAGE_IMPORT_ERROR = (
    "vllm.vllm_flash_attn requires the CUDA flash attention extensions "
    "(_vllm_fa2_C or _vllm_fa3_C). On ROCm, use upstream flash_attn."
)


class TrailStep(NamedTuple):
    rule: str  # short name of the rule in get_flash_attn_version
    before: int | None
    after: int | None
    why: str


class FAVersion(NamedTuple):
    version: int | None  # None: vLLM's call returns None (no usable FA build)
    trail: tuple[TrailStep, ...]


def fa_package_import_error(kernels: Kernels) -> str | None:
    """The ImportError message of ``import vllm.vllm_flash_attn``, or None when
    it imports. Only the FA2/FA3 extensions count; FA4 is a Python tree."""
    if kernels.fa2 or kernels.fa3:
        return None
    return FA_PACKAGE_IMPORT_ERROR


def _extension_missing(name: str) -> str:
    # str() of the ImportError the relative ``from . import _vllm_faN_C`` raises
    # for a missing extension, inside the still-initialising package; vLLM
    # prints the real path where "..." stands.
    return (
        f"cannot import name '{name}' from partially initialized module "
        "'vllm.vllm_flash_attn' (most likely due to a circular import) "
        "(.../vllm/vllm_flash_attn/__init__.py)"
    )


def fa_unsupported_reason(version: int, cap: Capability, kernels: Kernels) -> str | None:
    """None when ``version`` is usable here, else why not: the text of
    ``fa_version_unsupported_reason``, or the package ImportError that makes
    fa_utils' ``is_fa_version_supported`` answer False."""
    if version not in (2, 3, 4):
        raise ValueError(f"Unsupported FA version: {version}")
    package_error = fa_package_import_error(kernels)
    if package_error is not None:
        return f"ImportError: {package_error}"
    if version == 2:
        if not kernels.fa2:
            return f"FA2 is unavailable due to: {_extension_missing('_vllm_fa2_C')}"
        if cap < Capability(8, 0):
            return "FA2 is only supported on devices with compute capability >= 8"
        return None
    if version == 3:
        if not kernels.fa3:
            return f"FA3 is unavailable due to: {_extension_missing('_vllm_fa3_C')}"
        if not cap.is_family(90):
            return "FA3 is only supported on devices with compute capability 9.x"
        return None
    if not kernels.fa4:
        return "FA4 is unavailable due to: vllm.vllm_flash_attn.cute.interface not found"
    if not (cap.is_family(90) or cap.is_family(100) or cap.is_family(110)):
        return "FA4 is only supported on devices with compute capability 9.x, 10.x, or 11.x"
    return None


def is_fa_version_supported(version: int, cap: Capability, kernels: Kernels) -> bool:
    """fa_utils ``is_fa_version_supported`` (False on the package ImportError)."""
    return fa_unsupported_reason(version, cap, kernels) is None


def uses_fa4_hd256_kernel(cap: Capability, head_size: int | None, head_size_v: int | None) -> bool:
    """FA4's dedicated hd256 kernel: head 256 (V too, or V unknown) on 10.x/11.x."""
    if head_size != 256:
        return False
    if head_size_v is not None and head_size_v != 256:
        return False
    return cap.major in (10, 11)


def _hd256_fallback_reason(
    ctx: EngineContext,
    has_sinks: bool,
    requires_softcap: bool,
    kv_cache_block_size: int | None,
) -> str | None:
    """``_fa4_hd256_fallback_reason``: what the hd256 kernel cannot do.

    vLLM reads the cache dtype and DCP size whenever a VllmConfig is current;
    EngineContext's defaults ("auto", 1) stand for "none set", so they are
    read unconditionally here. Model facts need a model."""
    if has_sinks:
        return "attention sinks"
    # The model-level soft cap is checked too, so per-layer and model-level
    # version choices agree.
    if requires_softcap or (ctx.has_model and ctx.attn_logit_softcapping):
        return "logits soft capping"
    if is_quantized_kv_cache(ctx.cache_dtype):
        return f"quantized KV cache dtype {ctx.cache_dtype}"
    if kv_cache_block_size is not None and kv_cache_block_size % FA4_HD256_PAGE_SIZE:
        # Larger blocks are split into 128-token kernel pages.
        return f"a KV cache block size of {kv_cache_block_size}"
    if ctx.has_model:
        if ctx.is_mm_prefix_lm:
            return "mm_prefix bidirectional attention"
        if ctx.rswa_window is not None:
            return "R-SWA"
    if ctx.dcp_size > 1:
        # DCP reuses an unsliced block table with a non-page-aligned length.
        return "decode context parallelism"
    return None


def resolve_fa_version(
    cap: Capability,
    kernels: Kernels,
    ctx: EngineContext,
    *,
    requires_alibi: bool = False,
    head_size: int | None = None,
    head_size_v: int | None = None,
    has_sinks: bool = False,
    requires_softcap: bool = False,
    kv_cache_block_size: int | None = None,
    supports_fa4_hd256: bool = False,
) -> FAVersion:
    """vLLM's ``get_flash_attn_version`` for these arguments, with its trail."""
    trail: list[TrailStep] = []
    version: int | None = None

    def step(rule: str, after: int | None, why: str) -> int | None:
        trail.append(TrailStep(rule, version, after, why))
        return after

    # 0. the function's first statement imports from vllm.vllm_flash_attn;
    #    its ImportError is caught and the call returns None.
    package_error = fa_package_import_error(kernels)
    if package_error is not None:
        step("import", None, f"ImportError: {package_error}")
        return FAVersion(None, tuple(trail))

    def supported(v: int) -> bool:
        return is_fa_version_supported(v, cap, kernels)

    # 1. default by architecture
    if cap.major == 9 and supported(3):
        version = step("default", 3, f"Hopper (SM{cap.to_int()}) with FA3 installed: prefer FA3")
    elif cap.major == 10 and supported(4):
        version = step("default", 4, f"Blackwell (SM{cap.to_int()}) with FA4 installed: prefer FA4")
    else:
        version = step("default", 2, f"capability {cap}: fall back to FA2")

    # 2. explicit override
    if ctx.flash_attn_version is not None:
        version = step(
            "override", ctx.flash_attn_version, "attention_config.flash_attn_version is set"
        )

    # 3. unsupported combinations
    if cap.major >= 10 and version == 3:
        version = step(
            "blackwell-no-fa3",
            4 if supported(4) else 2,
            "Cannot use FA version 3 on Blackwell platform, "
            "defaulting to FA version 4 if supported, otherwise FA2.",
        )
    if requires_alibi and version == 3:
        version = step("alibi", 2, "Cannot use FA version 3 with ALiBi, defaulting to FA version 2.")
    if requires_alibi and version == 4:
        version = step("alibi", 2, "Cannot use FA version 4 with ALiBi, defaulting to FA version 2.")

    # Some cases FA3 cannot serve on SM90 can use FA4 when it is installed.
    if version == 3 and cap.major == 9 and supported(4):
        upgrade = None
        if head_size is not None and head_size > 256:
            upgrade = f"FA3 does not support head_size={head_size} on SM90"
        elif has_sinks and head_size is not None and head_size_v is not None and head_size != head_size_v:
            upgrade = "Diff-KV with sinks"
        elif ctx.has_model and ctx.is_diffusion:
            upgrade = "Per-sequence causal (dynamic_causal) requires FA4"
        if upgrade:
            version = step("sm90-upgrade", 4, f"{upgrade}: upgrading FlashAttention 3 -> 4")

    # FA4's batch-shape-dependent scheduling breaks batch invariance.
    if ctx.batch_invariant and version == 4:
        version = step(
            "batch-invariant", 2,
            "Cannot use FA version 4 with batch invariance, defaulting to FA version 2.",
        )

    if version == 4 and uses_fa4_hd256_kernel(cap, head_size, head_size_v):
        if not supports_fa4_hd256:
            # vLLM logs nothing here.
            version = step(
                "fa4-hd256", 2,
                "FA4 would use its head_size=256 kernel and this caller does not support it",
            )
        else:
            reason = _hd256_fallback_reason(ctx, has_sinks, requires_softcap, kv_cache_block_size)
            if reason is not None:
                version = step(
                    "fa4-hd256", 2,
                    f"FA4's Blackwell head_size=256 kernel does not support {reason}, "
                    "defaulting to FA version 2.",
                )

    # FA4 head dimensions on Blackwell are limited by TMEM capacity.
    if (
        version == 4
        and cap.major >= 10
        and head_size is not None
        and head_size > 128
        and not (
            (head_size == 256 and head_size_v in (None, 256))
            or (head_size == 192 and head_size_v == 128)
        )
    ):
        version = step(
            "tmem", 2,
            f"FA4 on Blackwell does not support head_size={head_size} due to TMEM "
            "capacity limits, defaulting to FA version 2.",
        )

    assert version is not None
    unsupported = fa_unsupported_reason(version, cap, kernels)
    if unsupported is not None:
        # vLLM logs the error, its assert fails, and the except returns None.
        step(
            "unsupported", None,
            f"Cannot use FA version {version} is not supported due to {unsupported}",
        )
        return FAVersion(None, tuple(trail))
    return FAVersion(version, tuple(trail))


def fa_supports_kv_cache_dtype(
    cap: Capability,
    kernels: Kernels,
    ctx: EngineContext,
    kv_cache_dtype: str = "fp8_e4m3",
    *,
    requires_alibi: bool = False,
    head_size: int | None = None,
    head_size_v: int | None = None,
    has_sinks: bool = False,
    requires_softcap: bool = False,
    kv_cache_block_size: int | None = None,
    supports_fa4_hd256: bool = False,
) -> bool:
    """``flash_attn_supports_kv_cache_dtype``: fp8 KV needs FA3 on SM90, FA4
    with head_size 512 (or unknown) on SM90, or FA4 on the 10.x family.
    Only fp8_e5m2 is refused by name; any other dtype is judged by version."""
    if kv_cache_dtype == "fp8_e5m2":
        return False
    v = resolve_fa_version(
        cap, kernels, ctx,
        requires_alibi=requires_alibi, head_size=head_size, head_size_v=head_size_v,
        has_sinks=has_sinks, requires_softcap=requires_softcap,
        kv_cache_block_size=kv_cache_block_size, supports_fa4_hd256=supports_fa4_hd256,
    ).version
    sm90_ok = v == 3 or (v == 4 and head_size in (None, 512))
    return (sm90_ok and cap.is_family(90)) or (v == 4 and cap.is_family(100))


def fa_supports_sinks(cap: Capability, kernels: Kernels, ctx: EngineContext) -> bool:
    """``flash_attn_supports_sinks``: the no-argument version call is 3 or 4."""
    return resolve_fa_version(cap, kernels, ctx).version in (3, 4)


def fa_supports_mla(cap: Capability, kernels: Kernels) -> bool:
    """``flash_attn_supports_mla``: FA3 usable and a 9.x GPU (False when the
    package import fails, which its ``except ImportError`` swallows)."""
    return is_fa_version_supported(3, cap, kernels) and cap.is_family(90)


# --- the per-layer calls -----------------------------------------------------


def _uses_kv_cache(attn_type: str) -> bool:
    # FlashAttentionImpl: encoder and encoder-only attention read no KV cache.
    return attn_type not in (AttentionType.ENCODER.value, AttentionType.ENCODER_ONLY.value)


def layer_fa_version(
    cfg: SelectorConfig,
    cap: Capability,
    kernels: Kernels,
    ctx: EngineContext,
    attn: LayerAttention | None = None,
) -> FAVersion:
    """The version ``FlashAttentionImpl.__init__`` stores in
    ``vllm_flash_attn_version`` for this layer: the one its kernels run.

    vLLM passes ALiBi, head_size, sinks, the soft cap and
    ``supports_fa4_hd256=True``, but NOT head_size_v and NOT the block size
    (the final block size is unknown while the layer is built). So a
    192/128 layer on Blackwell runs FA2 (TMEM rule without head_size_v)
    even though the builder's call says FA4. An encoder layer with a
    sliding window that landed on the hd256 kernel is then moved to FA2.
    """
    alibi = bool(attn and attn.use_alibi)
    softcap = bool(attn and attn.logits_soft_cap)
    result = resolve_fa_version(
        cap, kernels, ctx,
        requires_alibi=alibi,
        head_size=cfg.head_size,
        has_sinks=cfg.has_sink,
        requires_softcap=softcap,
        supports_fa4_hd256=True,
    )
    hd256 = result.version == 4 and uses_fa4_hd256_kernel(cap, cfg.head_size, None)
    if hd256 and not _uses_kv_cache(cfg.attn_type) and cfg.has_sliding_window:
        # The hd256 kernel needs seqused_k for local attention.
        extra = TrailStep(
            "encoder-local-hd256", 4, 2,
            "FA4's Blackwell head_size=256 kernel does not support local "
            "attention on encoder inputs, defaulting to FA version 2.",
        )
        return FAVersion(2, result.trail + (extra,))
    return result


def builder_fa_version(
    cfg: SelectorConfig,
    cap: Capability,
    kernels: Kernels,
    ctx: EngineContext,
    attn: LayerAttention | None = None,
    *,
    block_size: int | None = None,
) -> FAVersion:
    """``FlashAttentionMetadataBuilder.__init__``'s call: the KV spec's head
    size, head_size_v (always set on the spec: the layer's, else head_size)
    and final block size (``block_size`` here, else the selector's), with
    ``supports_fa4_hd256=True``. No ALiBi, sinks or soft cap. vLLM uses the
    result only for its hd256 flag and Gemma-4 JIT warmup."""
    head_size_v = attn.head_size_v if attn is not None else cfg.head_size
    return resolve_fa_version(
        cap, kernels, ctx,
        head_size=cfg.head_size,
        head_size_v=head_size_v,
        kv_cache_block_size=block_size if block_size is not None else cfg.block_size,
        supports_fa4_hd256=True,
    )


def layer_init_error(
    cfg: SelectorConfig,
    cap: Capability,
    kernels: Kernels,
    ctx: EngineContext,
    attn: LayerAttention | None = None,
) -> str | None:
    """What ``FlashAttentionImpl.__init__`` raises for this layer, as
    "Type: message", or None. Selection can pass and the layer still fail:
    the impl checks the quantized KV dtype with ALiBi and the soft cap, which
    ``supports_combination`` does not pass. ``cfg.kv_cache_dtype`` is the
    layer's resolved cache dtype (None reads as the run-wide one)."""
    kv = cfg.kv_cache_dtype if cfg.kv_cache_dtype is not None else ctx.cache_dtype
    if is_quantized_kv_cache(kv) and not fa_supports_kv_cache_dtype(
        cap, kernels, ctx, kv,
        requires_alibi=bool(attn and attn.use_alibi),
        head_size=cfg.head_size,
        head_size_v=cfg.head_size,
        has_sinks=cfg.has_sink,
        requires_softcap=bool(attn and attn.logits_soft_cap),
        supports_fa4_hd256=True,
    ):
        return f"NotImplementedError: FlashAttention does not support {kv} kv-cache on this device."
    if cfg.has_sink and not fa_supports_sinks(cap, kernels, ctx):
        return "AssertionError: Sinks are only supported in FlashAttention 3"
    return None
