"""From model + device + kernels + what-if overrides to one ``Explanation``:
per attention group, the selector config vLLM builds, every candidate's
reasons, the choice, the FlashAttention version and FlashInfer's dispatch.

Data flows one way: ModelFacts -> SelectorConfig/EngineContext -> Selection
-> Explanation. Nothing here renders; ``cli/`` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from attn_select.backends import registry
from attn_select.backends.spec import BackendSpec, resolve
from attn_select.selector.config import (
    KV_CACHE_DTYPES,
    SELECTOR_FIELDS,
    AttentionType,
    Capability,
    EngineContext,
    Kernels,
    Query,
    SelectorConfig,
)
from attn_select.selector.device import Device
from attn_select.selector.engine_config import EngineConfig, EngineStep, engine_config
from attn_select.selector.engines import VLLM, VLLM_VERSION
from attn_select.selector.errors import UserError, shown
from attn_select.selector.fa_version import FAVersion, TrailStep, layer_fa_version, resolve_fa_version
from attn_select.selector.mla_prefill_config import mla_prefill_selector_config
from attn_select.selector.mla_prefill_select import MLAPrefillSelection, layer_mla_prefill
from attn_select.selector.model_facts import AttentionGroup, LayerAttention, ModelFacts
from attn_select.selector.overrides import Overrides
from attn_select.selector.quant_methods import E5M2_REFUSAL, kv_method_refuses_e5m2
from attn_select.selector.select import Selection, select
from attn_select.selector.vllm_names import dtype_error, forced_dtype, max_model_len_note

if TYPE_CHECKING:  # imported only where FLASHINFER is valid (explain's start-up budget)
    from attn_select.selector.flashinfer_dispatch import FlashInferDispatch

ENGINE, ENGINE_VERSION = VLLM, VLLM_VERSION


class EngineConfigRefusal(UserError):
    """vLLM 0.33.0 refuses the engine config (create_engine_config and its
    hooks): bad input here, and a question another vLLM release may answer
    otherwise (--engine vllm-installed asks it)."""


E5M2_LAYER_ERROR = f"ValueError: {E5M2_REFUSAL}"  # a group's layer_error, as vLLM raises it
MLA_PCP_DCP_LAYER_ERROR = "NotImplementedError: MLAAttention does not support PCP+DCP."
# Architectures whose MLA layers are DeepseekV32Attention (supports_pcp_dcp) on CUDA.
_PCP_DCP_MLA_ARCHS = frozenset({"DeepseekV32ForCausalLM", "GlmMoeDsaForCausalLM"})


def override_problem(name: str, value: object, label: str | None = None) -> str | None:
    """Why a what-if value is one explain refuses (vLLM would too), or None.
    The one check for explain's flags and a deployments file's overrides;
    ``label`` names the value in the message (the flag, or the field)."""
    if value is None:
        return None
    label = label or name
    if name == "backend":
        try:
            registry.get(str(value))
        except UserError as exc:
            return str(exc)
    elif name == "mla_prefill_backend":
        from attn_select.backends.mla.prefill import registry as prefill_registry

        try:
            prefill_registry.get(str(value))
        except UserError as exc:
            return str(exc)
    elif name == "dtype" and dtype_error(str(value)):
        return dtype_error(str(value))
    elif name == "kv_cache_dtype" and value not in KV_CACHE_DTYPES:
        return f"unknown KV-cache dtype {shown(value)}; choose from {', '.join(KV_CACHE_DTYPES)}"
    elif name == "attn_type" and value not in {t.value for t in AttentionType}:
        return f"unknown attention type {shown(value)}; choose from {', '.join(t.value for t in AttentionType)}"
    elif name in ("block_size", "head_size", "tp", "num_heads", "dcp_size", "pcp_size") and value < 1:  # type: ignore[operator]
        return f"{label} must be a positive integer, got {value}"
    elif name == "max_model_len" and value < 1 and value != -1:  # type: ignore[operator]
        return f"{label} must be a positive integer or -1 (auto), got {value}"
    elif name == "flash_attn_version" and value not in (2, 3, 4):
        return f"{label} must be 2, 3 or 4, got {value}"
    return None


def check_overrides(ov: Overrides, flag: bool = False) -> None:
    """Every what-if value, checked by ``override_problem``; with ``flag``
    the message names the command-line flag (``--flash-attn-version``)."""
    for name, value in zip(ov._fields, ov):
        problem = override_problem(name, value, "--" + name.replace("_", "-") if flag else None)
        if problem is not None:
            raise UserError(problem)


# Raw selector fields that an Overrides value replaces one for one.
_RAW_FIELDS = tuple(n for n in SELECTOR_FIELDS if n not in ("dtype", "kv_cache_dtype", "block_size"))


class BackendFacts(NamedTuple):
    """Per-backend facts for this group, reported beside the verdict."""

    name: str
    cudagraph_support: str
    kernel_block_sizes: tuple[str, ...]
    kv_cache_shape: str


class GroupExplanation(NamedTuple):
    group: AttentionGroup | None  # None when explaining a raw selector config
    cfg: SelectorConfig
    num_heads: int | None
    selection: Selection
    fa_version: FAVersion  # the call the FlashAttention layer makes for this group
    fa_version_noarg: FAVersion  # the no-argument call (sink / per-head-scale support)
    flashinfer: FlashInferDispatch | None  # when FLASHINFER is valid here
    backend_facts: tuple[BackendFacts, ...]
    # What the selected backend's layer raises after selection passed (vLLM
    # checks some combinations only in the impl's __init__), or None.
    layer_error: str | None = None
    # The MLA layer's second decision, its prefill backend; None for
    # non-MLA layers, a raw selector config, or a failed first decision.
    mla_prefill: MLAPrefillSelection | None = None

    @property
    def name(self) -> str:
        return self.group.name if self.group else "config"


class Explanation(NamedTuple):
    model: ModelFacts | None
    device: Device
    kernels: Kernels
    ctx: EngineContext
    overrides: Overrides
    groups: tuple[GroupExplanation, ...]
    engine: str = ENGINE
    engine_version: str = ENGINE_VERSION
    notes: tuple[str, ...] = ()
    # What vLLM's engine-config build (create_engine_config, the model's
    # MODELS_CONFIG_MAP hook) changed in the selection inputs, in order.
    engine_config_trail: tuple[EngineStep, ...] = ()
    # About the inputs themselves: a flag that changes nothing (--max-model-len),
    # what a pasted vllm serve line's other flags were taken as.
    input_notes: tuple[str, ...] = ()
    # The installed engine against the mirrored one, removed variables set
    # here (selector.installed.EngineWarning), attached at the CLI edge.
    warnings: tuple = ()

    @property
    def ok(self) -> bool:
        return all(
            g.selection.selected is not None and g.layer_error is None
            and (g.mla_prefill is None or g.mla_prefill.error is None)
            for g in self.groups
        )

    @property
    def backend_source(self) -> str | None:
        """Who made the backend explicit: the last engine-config step that set
        attention_config.backend, else --attention-backend, else None."""
        for step in reversed(self.engine_config_trail):
            if step.field == "attention_config.backend":
                return step.hook
        return "--attention-backend" if self.overrides.backend else None


def engine_context(
    model: ModelFacts | None, ov: Overrides, engine: EngineConfig | None = None
) -> EngineContext:
    """The VllmConfig-level facts vLLM's predicates read, for this run.

    ``engine`` carries the cache dtype and FlashAttention version after
    vLLM's engine-config steps (``engine_config``); without it the flags
    are taken as they are, "auto" resolved by the checkpoint's KV scheme.
    """
    if engine is not None:
        cache_dtype, fa_version = engine.cache_dtype, engine.flash_attn_version
    else:
        cache_dtype, fa_version = ov.kv_cache_dtype or "auto", ov.flash_attn_version
        if model is not None and model.kv_cache_scheme and cache_dtype == "auto":
            # A quantized checkpoint's KV scheme (compressed-tensors -> fp8,
            # ModelOpt -> fp8_e4m3 / nvfp4) is what "auto" resolves to; vLLM
            # honours it only when the user did not pick a cache dtype.
            cache_dtype = model.kv_cache_scheme
    dcp = ov.dcp_size if ov.dcp_size is not None else (2 if ov.use_dcp else 1)
    base = EngineContext(
        cache_dtype=cache_dtype,
        flash_attn_version=fa_version,
        use_trtllm_attention=ov.use_trtllm_attention,
        dcp_size=dcp,
        pcp_size=ov.pcp_size if ov.pcp_size is not None else (2 if ov.use_pcp else 1),
        batch_invariant=bool(ov.use_batch_invariant),
    )
    if model is None:
        return base
    return base._replace(
        has_model=True,
        model_head_size=model.head_size,
        model_num_heads=model.num_heads,
        model_num_kv_heads=model.num_kv_heads,
        attn_logit_softcapping=bool(model.attn_logit_softcapping),
        is_mm_prefix_lm=model.is_mm_prefix_lm,
        rswa_window=model.rswa_window,
        is_diffusion=model.is_diffusion,
        # Only Gemma-4's sliding layers clamp the window to the mm prefix
        # (mm_prefix_clamp_sliding_window); any other sliding layer is unclamped.
        unclamped_sliding_window=any(
            g.attn.sliding_window is not None for g in model.groups
        ) and not model.model_type.startswith("gemma4"),
        **_mla_context(model),
    )


def _mla_context(model: ModelFacts) -> dict[str, object]:
    """The hf_text_config attributes MLA backends' checks read: index_topk
    and the MLA dims, as the config object holds them. A forced MLA backend
    reads them off a non-MLA model's config too, where they may be any value
    (FlashInfer MLA: "but got []")."""
    # hf_text_config's own attributes, not the layer's (which reads an absent
    # one as 0): FlashInfer MLA's getattr default is 1
    nope, rope, v_head, rank = model.mla_config_dims
    return {"mla_index_topk": model.index_topk, "mla_qk_nope_head_dim": nope, "mla_qk_rope_head_dim": rope,
            "mla_v_head_dim": v_head, "mla_kv_lora_rank": rank, "mla_dims_absent": model.mla_dims_absent,
            "text_config_class": model.text_config_class}


def selector_config(
    attn: LayerAttention, dtype: str, ctx: EngineContext, ov: Overrides
) -> tuple[SelectorConfig, int | None]:
    """What vLLM's layer passes to ``get_attn_backend``, plus ``num_heads``.

    MLA layers (``MLAAttention``) pass only use_mla/use_sparse/num_heads;
    MHA layers pass sinks, mm-prefix, per-head scales, attn type and the
    sliding window. The rest comes from the engine config for every layer.
    """
    # A layer in kv_cache_dtype_skip_layers keeps "auto" whatever the run-wide
    # dtype; ctx.cache_dtype already holds --kv-cache-dtype.
    kv = attn.kv_cache_dtype or ctx.cache_dtype
    common = dict(
        head_size=attn.head_size,
        dtype=forced_dtype(ov.dtype) or dtype,
        kv_cache_dtype=kv,
        block_size=ov.block_size,
        use_non_causal=False,
        use_batch_invariant=ctx.batch_invariant,
        use_pcp=ctx.pcp_size > 1,  # get_attn_backend: parallel_config.prefill_context_parallel_size > 1
        use_dcp=ctx.dcp_size > 1,
        use_rswa=ctx.rswa_window is not None,
    )
    if attn.use_mla:
        cfg = SelectorConfig(use_mla=True, use_sparse=attn.use_sparse, **common)
        num_heads: int | None = attn.num_heads
    else:
        cfg = SelectorConfig(
            has_sink=attn.has_sink,
            use_mm_prefix=attn.use_mm_prefix,
            use_per_head_quant_scales=attn.use_per_head_quant_scales,
            attn_type=attn.attn_type,
            has_sliding_window=attn.sliding_window is not None,
            **common,
        )
        num_heads = None
    cfg = cfg._replace(**_raw_fields(ov))
    if ov.num_heads is not None:
        num_heads = ov.num_heads
    return cfg, num_heads


def _raw_fields(ov: Overrides) -> dict[str, object]:
    """The raw AttentionSelectorConfig fields given as what-if flags."""
    return {n: getattr(ov, n) for n in _RAW_FIELDS if getattr(ov, n) is not None}


def raw_selector_config(ov: Overrides) -> tuple[SelectorConfig, int | None]:
    """``explain`` with no model: the config is exactly the flags."""
    if ov.head_size is None:
        raise UserError("explain needs a MODEL or --head-size (a raw selector config); see --help")
    cfg = SelectorConfig(
        head_size=ov.head_size,
        dtype=forced_dtype(ov.dtype) or "bfloat16",  # "auto" with no model: the raw config's default
        kv_cache_dtype=ov.kv_cache_dtype or "auto",
        block_size=ov.block_size,
    )
    cfg = cfg._replace(**_raw_fields(ov))
    if ov.use_dcp is None and ov.dcp_size is not None:
        cfg = cfg._replace(use_dcp=ov.dcp_size > 1)
    if ov.use_pcp is None and ov.pcp_size is not None:
        cfg = cfg._replace(use_pcp=ov.pcp_size > 1)
    return cfg, ov.num_heads


def check_values(cfg: SelectorConfig) -> None:
    """Bad values become one-line user errors before anything is selected."""
    from attn_select.selector.config import DTYPES, KV_CACHE_DTYPES

    if cfg.head_size <= 0:
        raise UserError(f"head size must be a positive integer, got {cfg.head_size}")
    if cfg.dtype not in DTYPES:
        from attn_select.selector.vllm_names import dtype_error

        raise UserError(dtype_error(cfg.dtype) or f"unknown dtype {cfg.dtype!r}; choose from {', '.join(DTYPES)}")
    if cfg.kv_cache_dtype is not None and cfg.kv_cache_dtype not in KV_CACHE_DTYPES:
        raise UserError(
            f"unknown KV-cache dtype {cfg.kv_cache_dtype!r}; choose from {', '.join(KV_CACHE_DTYPES)}"
        )
    if cfg.block_size is not None and cfg.block_size <= 0:
        raise UserError(f"block size must be a positive integer, got {cfg.block_size}")
    if cfg.attn_type not in {t.value for t in AttentionType}:
        raise UserError(
            f"unknown attention type {cfg.attn_type!r}; choose from "
            + ", ".join(t.value for t in AttentionType)
        )


def _block_sizes_text(spec: BackendSpec, q: Query) -> tuple[str, ...]:
    return tuple(str(s) for s in spec.block_sizes(q))


def backend_facts(names: tuple[str, ...], q: Query) -> tuple[BackendFacts, ...]:
    out = []
    for name in names:
        spec = registry.BACKENDS[name]
        out.append(
            BackendFacts(
                name=name,
                cudagraph_support=str(resolve(spec.cudagraph_support, q)),
                kernel_block_sizes=_block_sizes_text(spec, q),
                kv_cache_shape=spec.kv_cache_shape,
            )
        )
    return tuple(out)


def _fa_versions(
    cfg: SelectorConfig, cap: Capability, kernels: Kernels, ctx: EngineContext,
    attn: LayerAttention | None,
) -> tuple[FAVersion, FAVersion]:
    """The version the FlashAttention layer runs, and vLLM's no-argument call.

    MLA layers never run the MHA FlashAttention path, so there is no
    per-layer version to report: the MLA backends pin their own.
    """
    noarg = resolve_fa_version(cap, kernels, ctx)
    if cfg.use_mla:
        why = ("MLA layers do not run FLASH_ATTN: FLASH_ATTN_MLA and FLASH_ATTN_MLA_SPARSE "
               "pin FA3, FLASH_ATTN_MLA_SPARSE_FA4 pins FA4")
        return FAVersion(None, (TrailStep("mla", None, None, why),)), noarg
    return layer_fa_version(cfg, cap, kernels, ctx, attn), noarg


def _flashinfer_dispatch(sel: Selection, attn: LayerAttention | None, q: Query) -> FlashInferDispatch | None:
    """FlashInfer's inner kernels, when FLASHINFER is a valid candidate."""
    if not any(c.name == "FLASHINFER" and c.valid for c in sel.candidates):
        return None
    from attn_select.selector.flashinfer_dispatch import flashinfer_dispatch

    heads = attn.num_heads if attn else (q.ctx.model_num_heads or 32)
    kv_heads = attn.num_kv_heads if attn else (q.ctx.model_num_kv_heads or 8)
    return flashinfer_dispatch(
        q.cfg, q.cap, q.kernels, q.ctx,
        num_qo_heads=heads, num_kv_heads=kv_heads, has_sinks=q.cfg.has_sink,
    )


def _mla_prefill(
    group: AttentionGroup | None, sel: Selection, q: Query, backend: str | None
) -> MLAPrefillSelection | None:
    """The prefill backend an ``MLAAttention`` layer selects once its
    attention backend is chosen (and only then: a failed selection raises
    first). A raw selector config has no model_config to read the dtype and
    MLA dims from, so it gets none."""
    if group is None or not group.attn.use_mla or sel.selected is None:
        return None
    spec = registry.BACKENDS[sel.selected]
    return layer_mla_prefill(
        mla_prefill_selector_config(q.ctx, q.cfg.dtype), q.cap, q.kernels, q.ctx.batch_invariant,
        backend, spec.name, sparse=spec.is_sparse, dense_mha_prefill=resolve(spec.dense_mha_prefill, q),
    )


# TritonAttentionImpl / TritonMLAImpl.__init__ name themselves so in their refusals
_TRITON_IMPLS = {"TRITON_ATTN": "Triton attention backend", "TRITON_MLA": "Triton MLA backend"}


def triton_impl_error(backend: str, kv: str, device: Device) -> str | None:
    """What TritonAttentionImpl / TritonMLAImpl.__init__ raise on CUDA for the
    layer's cache dtype (triton_attn.py:510-533, mla/triton_mla.py:198-221):
    an fp8 cache below SM89 (no native fp8e4nv), a bfloat16 one below SM80.
    Selection passes them; the layer then fails to build."""
    cap = device.capability
    where = f"on {device.name} (compute capability {cap.major}.{cap.minor})"
    if kv.startswith("fp8") and (cap.major, cap.minor) < (8, 9):
        suggested = "float16" if (cap.major, cap.minor) < (8, 0) else "bfloat16"
        return (f"ValueError: FP8 KV cache is not supported by the {_TRITON_IMPLS[backend]} {where}; native FP8 "
                f"(fp8e4nv) requires SM89+. Re-run with --kv-cache-dtype {suggested}.")
    if kv == "bfloat16" and (cap.major, cap.minor) < (8, 0):
        what = "" if backend == "TRITON_ATTN" else f" by the {_TRITON_IMPLS[backend]}"
        return (f"ValueError: bfloat16 KV cache is not supported{what} {where}; bfloat16 requires SM80+. Re-run "
                "with --kv-cache-dtype float16.")
    return None


def explain_group(
    group: AttentionGroup | None,
    cfg: SelectorConfig,
    num_heads: int | None,
    device: Device,
    kernels: Kernels,
    ctx: EngineContext,
    backend: str | None,
    mla_prefill_backend: str | None = None,
) -> GroupExplanation:
    check_values(cfg)
    sel = select(cfg, device.capability, kernels, ctx, num_heads, backend)
    q = Query(cfg, device.capability, kernels, ctx)
    attn = group.attn if group else None
    per_layer, noarg = _fa_versions(cfg, device.capability, kernels, ctx, attn)
    names = tuple(c.name for c in sel.candidates)
    layer_error = None
    if sel.selected == "FLASH_ATTN":
        from attn_select.selector.fa_version import layer_init_error

        layer_error = layer_init_error(cfg, device.capability, kernels, ctx, attn)
    if sel.selected in _TRITON_IMPLS:
        layer_error = triton_impl_error(sel.selected, cfg.kv_cache_dtype or ctx.cache_dtype, device)
    if sel.selected is not None and attn is not None and attn.use_alibi_sqrt \
            and not registry.BACKENDS[sel.selected].alibi_sqrt:
        # Attention.__init__ checks the chosen backend's supports_alibi_sqrt
        layer_error = f"ValueError: use_alibi_sqrt is not supported by backend {sel.selected}."
    if sel.selected not in (None, "TRITON_ATTN") and attn is not None and attn.chunk_lookback:
        # Attention.__init__ asserts it for a layer built with chunk_lookback > -1 (Rnj-1's chunked layers)
        layer_error = ("AssertionError: Chunked attention with lookback requires the Triton backend, but got "
                       f"{sel.selected}.")
    return GroupExplanation(
        group=group,
        cfg=cfg,
        num_heads=num_heads,
        selection=sel,
        fa_version=per_layer,
        fa_version_noarg=noarg,
        flashinfer=_flashinfer_dispatch(sel, attn, q),
        backend_facts=backend_facts(names, q),
        layer_error=layer_error,
        mla_prefill=_mla_prefill(group, sel, q, mla_prefill_backend),
    )


def engine_overrides(ov: Overrides, engine: EngineConfig) -> Overrides:
    """The flags as vLLM's engine config holds them after its own steps: what
    the selection reads. The report keeps the user's ``ov``."""
    return ov._replace(
        kv_cache_dtype=engine.cache_dtype,
        flash_attn_version=engine.flash_attn_version,
        backend=engine.backend,
        # attention_config.use_non_causal reaches every layer's selector config
        use_non_causal=True if engine.use_non_causal else ov.use_non_causal,
    )


# attention types whose layer class asks get_attn_backend itself with
# cache_config.cache_dtype before Attention.__init__ applies the skip list
# (CrossAttention, EncoderOnlyAttention): their selection keeps the run-wide dtype
_OWN_BACKEND_TYPES = frozenset({"encoder_decoder", "encoder_only"})


def split_skip_layers(groups: tuple[AttentionGroup, ...], skip: tuple[int, ...]) -> tuple[AttentionGroup, ...]:
    """Layers in kv_cache_dtype_skip_layers build with kv_cache_dtype "auto"
    (Attention/MLAAttention.__init__), so they leave their group; a cross or
    encoder-only layer selected its backend before that and stays."""
    if not skip:
        return groups
    out: list[AttentionGroup] = []
    for g in groups:
        if g.attn.attn_type in _OWN_BACKEND_TYPES and not g.attn.use_mla:
            out.append(g)
            continue
        kept = tuple(i for i in g.layers if i not in skip)
        skipped = tuple(i for i in g.layers if i in skip)
        if kept:
            out.append(g._replace(layers=kept))
        if skipped:
            out.append(AttentionGroup(f"{g.name} kv-auto", skipped, g.attn._replace(kv_cache_dtype="auto")))
    return tuple(out)


def explain(
    model: ModelFacts | None, device: Device, kernels: Kernels, ov: Overrides,
    input_notes: tuple[str, ...] = (),
) -> Explanation:
    """The whole report for one deployment. ``input_notes`` are the caller's
    notes about its inputs (a pasted vllm serve line's other flags)."""
    if ov.backend is not None:
        registry.get(ov.backend)  # unknown name -> user error with a suggestion
    if ov.mla_prefill_backend is not None:
        from attn_select.backends.mla.prefill import registry as prefill_registry

        prefill_registry.get(ov.mla_prefill_backend)  # the same, for prefill names
        if model is None:
            raise UserError("--mla-prefill-backend needs a MODEL: vLLM builds the MLA prefill selector "
                            "config from the model's dtype and MLA dims")
    check_max_model_len(model, ov.max_model_len)
    engine = engine_config(model, ov, device.capability, kernels)
    if engine.error is not None:
        raise EngineConfigRefusal(f"vLLM {ENGINE_VERSION} refuses this engine config: {engine.error}")
    eff = engine_overrides(ov, engine)
    ctx = engine_context(model, eff, engine)
    groups: list[GroupExplanation] = []
    if model is None:
        cfg, num_heads = raw_selector_config(ov)
        groups.append(explain_group(None, cfg, num_heads, device, kernels, ctx, ov.backend))
    else:
        for group in split_skip_layers(model.groups, engine.kv_skip_layers):
            cfg, num_heads = selector_config(group.attn, model.dtype, ctx, eff)
            g = explain_group(group, cfg, num_heads, device, kernels, ctx, eff.backend, ov.mla_prefill_backend)
            groups.append(_with_mla_pcp_dcp_refusal(_with_kv_quant_refusal(g, engine, model), model, ctx))
    _refuse_if_first_layer_error_refuses(groups)
    return Explanation(
        model=model, device=device, kernels=kernels, ctx=ctx, overrides=ov,
        groups=tuple(groups), notes=model.notes if model else (),
        engine_config_trail=engine.trail, input_notes=tuple(input_notes) + _flag_notes(ov),
    )


def _with_kv_quant_refusal(g: GroupExplanation, engine: EngineConfig, model: ModelFacts) -> GroupExplanation:
    """_init_kv_cache_quant's fp8_e5m2 refusal, raised after get_attn_backend
    chose the backend (and, for Attention, after the impl's own __init__,
    whose error then comes first). MLAAttention first rewrites a quantized
    dtype to fp8_ds_mla when FLASHMLA_SPARSE was chosen, which then passes."""
    sel = g.selection.selected
    if sel is None or g.layer_error is not None:
        return g
    if g.cfg.kv_cache_dtype != "fp8_e5m2" or (g.cfg.use_mla and sel == "FLASHMLA_SPARSE"):
        return g
    if not kv_method_refuses_e5m2(engine.quant_config_class, model.checkpoint_quant, g.cfg.use_mla):
        return g
    return g._replace(layer_error=E5M2_LAYER_ERROR)


def _with_mla_pcp_dcp_refusal(g: GroupExplanation, model: ModelFacts, ctx: EngineContext) -> GroupExplanation:
    """MLAAttention.__init__ refuses PCP and DCP together once its backend
    and prefill backend are chosen: its forward merges a full-batch LSE,
    which only DeepSeek-V3.2's DSA layer (DeepseekV32Attention, also
    GLM-5.2's GlmMoeDsaForCausalLM on CUDA) replaces (supports_pcp_dcp)."""
    if not g.cfg.use_mla or ctx.pcp_size <= 1 or ctx.dcp_size <= 1 or model.architecture in _PCP_DCP_MLA_ARCHS:
        return g
    if g.selection.selected is None or g.layer_error is not None:
        return g
    if g.mla_prefill is not None and g.mla_prefill.error is not None:
        return g
    return g._replace(layer_error=MLA_PCP_DCP_LAYER_ERROR)


def _refuse_if_first_layer_error_refuses(groups: list[GroupExplanation]) -> None:
    """vLLM builds the layers in index order and stops at the first that
    raises; when that is the fp8_e5m2 refusal or MLA's PCP+DCP refusal (a
    deployment no backend choice can fix) the server never starts, so it
    refuses the deployment like an engine-config refusal (exit 2)."""
    failing = [g for g in groups if g.group is not None and g.group.layers and (
        g.selection.selected is None or g.layer_error is not None
        or (g.mla_prefill is not None and g.mla_prefill.error is not None))]
    if not failing:
        return
    first = min(failing, key=lambda g: min(g.group.layers))
    layer = "MLAAttention" if first.cfg.use_mla else "Attention"
    # not the engine config (vLLM builds that), the first layer: the server never starts
    where = f"vLLM {ENGINE_VERSION} refuses this deployment when it builds its layers: {layer}.__init__"
    if first.layer_error == E5M2_LAYER_ERROR:
        raise UserError(f"{where} (_init_kv_cache_quant), layer {min(first.group.layers)}: {E5M2_REFUSAL}")
    if first.layer_error == MLA_PCP_DCP_LAYER_ERROR:
        raise UserError(f"{where}, layer {min(first.group.layers)}: {MLA_PCP_DCP_LAYER_ERROR} "
                        "Set --decode-context-parallel-size 1 or --prefill-context-parallel-size 1.")


def check_max_model_len(model: ModelFacts | None, max_model_len: int | None) -> None:
    """ModelConfig's _get_and_verify_max_len: a --max-model-len above the
    model's derived maximum (and above its model_max_length) is refused
    unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1, which explain does not read."""
    if model is None or model.derived_max_len is None or max_model_len in (None, -1):
        return
    key, derived, model_max_length = model.derived_max_len
    if max_model_len > derived and (model_max_length is None or max_model_len > model_max_length):
        raise EngineConfigRefusal(
            f"vLLM {ENGINE_VERSION} refuses this engine config: User-specified max_model_len ({max_model_len}) is "
            f"greater than the derived max_model_len ({key}={derived} or model_max_length={model_max_length} in "
            "model's config.json). To allow overriding this maximum, set the env var "
            f"VLLM_ALLOW_LONG_MAX_MODEL_LEN=1; or give --max-model-len {int(derived)} or less")


def _flag_notes(ov: Overrides) -> tuple[str, ...]:
    """What-ifs vLLM takes but its selection never reads, said as such."""
    return (max_model_len_note(ov.max_model_len),) if ov.max_model_len is not None else ()
