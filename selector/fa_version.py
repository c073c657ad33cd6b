"""Which FlashAttention version vLLM 0.33.0 runs, and the trail of rules that
decided it. Mirrors ``get_flash_attn_version`` (vllm/v1/attention/backends/
fa_utils.py) step for step, with every input explicit and every
``logger.warning_once`` turned into a trail entry.

``is_fa_version_supported`` (vllm/vllm_flash_attn/flash_attn_interface.py)
depends on which builds are installed (``Kernels``) and on the GPU:
FA2 needs >= 8.0, FA3 the 9.x family, FA4 the 9.x, 10.x or 11.x family.
"""

from __future__ import annotations

from dataclasses import dataclass

from attn_select.selector.config import Capability, EngineContext, Kernels, is_quantized_kv_cache

# FA4's dedicated head_size=256 kernel needs one 128-token page per tile.
FA4_HD256_PAGE_SIZE = 128


@dataclass(frozen=True)
class TrailStep:
    rule: str  # short name of the rule in get_flash_attn_version
    before: int | None
    after: int | None
    why: str


@dataclass(frozen=True)
class FAVersion:
    version: int | None  # None: vLLM's call returns None (no usable FA build)
    trail: tuple[TrailStep, ...]


def fa_unsupported_reason(version: int, cap: Capability, kernels: Kernels) -> str | None:
    """None when ``version`` is usable here, else the reason vLLM would give.
    The "unavailable" texts stand for the ImportError message vLLM records."""
    if version == 2:
        if not kernels.fa2:
            return "FA2 is unavailable (the _vllm_fa2_C build is not installed)"
        if cap < Capability(8, 0):
            return "FA2 is only supported on devices with compute capability >= 8"
        return None
    if version == 3:
        if not kernels.fa3:
            return "FA3 is unavailable (the _vllm_fa3_C build is not installed)"
        if not cap.is_family(90):
            return "FA3 is only supported on devices with compute capability 9.x"
        return None
    if version == 4:
        if not kernels.fa4:
            return "FA4 is unavailable (vllm_flash_attn/cute/interface.py is not installed)"
        if not (cap.is_family(90) or cap.is_family(100) or cap.is_family(110)):
            return "FA4 is only supported on devices with compute capability 9.x, 10.x, or 11.x"
        return None
    raise ValueError(f"Unsupported FA version: {version}")


def is_fa_version_supported(version: int, cap: Capability, kernels: Kernels) -> bool:
    return fa_unsupported_reason(version, cap, kernels) is None


def uses_fa4_hd256_kernel(cap: Capability, head_size: int | None, head_size_v: int | None) -> bool:
    """FA4's dedicated hd256 kernel: head 256 (V too) on 10.x/11.x."""
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
    """``_fa4_hd256_fallback_reason``: what the hd256 kernel cannot do."""
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

    def step(rule: str, after: int | None, why: str) -> int | None:
        trail.append(TrailStep(rule, version, after, why))
        return after

    # 1. default by architecture
    version: int | None = None
    if cap.major == 9 and is_fa_version_supported(3, cap, kernels):
        version = step("default", 3, f"Hopper (SM{cap.to_int()}) with FA3 installed: prefer FA3")
    elif cap.major == 10 and is_fa_version_supported(4, cap, kernels):
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
            4 if is_fa_version_supported(4, cap, kernels) else 2,
            "Cannot use FA version 3 on Blackwell platform, "
            "defaulting to FA version 4 if supported, otherwise FA2.",
        )
    if requires_alibi and version == 3:
        version = step("alibi", 2, "Cannot use FA version 3 with ALiBi, defaulting to FA version 2.")
    if requires_alibi and version == 4:
        version = step("alibi", 2, "Cannot use FA version 4 with ALiBi, defaulting to FA version 2.")

    # Some cases FA3 cannot serve on SM90 can use FA4 when it is installed.
    if version == 3 and cap.major == 9 and is_fa_version_supported(4, cap, kernels):
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
        step("unsupported", None, f"Cannot use FA version {version}: {unsupported}")
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
    with head_size 512 (or unknown) on SM90, or FA4 on the 10.x family."""
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
    """``flash_attn_supports_mla``: FA3 installed and a 9.x GPU."""
    return is_fa_version_supported(3, cap, kernels) and cap.is_family(90)
