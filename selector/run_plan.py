"""What ``attn-select run`` executes, decided here, once, by the selector.

For each attention group and batch shape the plan records what vLLM 0.33.0
would run there: every backend's validity with its reasons, the FlashAttention
version, FlashInfer's trtllm-API decode kernel (fixed at builder init) and
whether this batch's prefills go to trtllm-gen context (decided per batch in
its ``build``). ``backends/run/`` executes the plan and imports nothing else
from the selector (tests/backends/run/test_run_layering.py checks that), so
no answer is computed twice and nothing travels through mutable state.

Data flows one way: ``Explanation`` (selector.explain) + batch shapes + page
size -> ``RunPlan`` -> the runner.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from attn_select.backends import registry
from attn_select.selector.config import Capability, Query
from attn_select.selector.errors import UserError, shown
from attn_select.selector.fa_version import resolve_fa_version
from attn_select.selector.flashinfer_dispatch import (
    DEFAULT_WORKSPACE_BYTES,
    TRTLLM_GEN,
    XQA,
    BatchShape,
    flashinfer_dispatch,
)
from attn_select.selector.model_facts import LayerAttention
from attn_select.selector.priorities import backend_priorities
from attn_select.selector.validate import check

if TYPE_CHECKING:
    from attn_select.selector.explain import Explanation, GroupExplanation

# Re-exported for the FlashInfer adapter: the trtllm-API kernel names and the
# workspace size vLLM allocates for them.
__all__ = ["DEFAULT_WORKSPACE_BYTES", "TRTLLM_GEN", "XQA"]

# Batch shapes the issue names: (requests, new tokens each, cached tokens each).
DECODE_DEFAULT = (32, 1, 4096)
PREFILL_DEFAULT = (4, 512, 1024)
NATIVE_DECODE = "native decode"  # the FLASHINFER row beside vLLM's trtllm-API decode
# FlashInfer's planned MLA wrapper beside FLASHINFER_MLA: a comparison row, not
# what vLLM runs (vLLM's FLASHINFER_MLA calls trtllm_batch_decode_with_kv_cache_mla)
MLA_WRAPPER = "BatchMLAPagedAttentionWrapper"
# The row of an MLA group's prefill tokens: vLLM's MLA prefill backend
# (MLACommonBaseImpl.forward_mha), not one of the attention backends
MLA_PREFILL = "MLA prefill"
# vLLM's MLA prefill backends that attn-select run executes (adapter per name)
MLA_PREFILL_ADAPTERS = {"FLASH_ATTN": "attn_select.backends.run.mla_prefill:MLAPrefillFlashAttnAdapter"}
# CacheConfig.DEFAULT_BLOCK_SIZE: the block size vLLM starts from when --block-size is not given
VLLM_DEFAULT_BLOCK_SIZE = 16


@dataclass(frozen=True)
class Shape:
    """One batch shape. ``decodes`` requests with 1 new token on ``decode_context``
    cached tokens, then ``prefills`` requests with ``prefill_new`` new tokens on
    ``prefill_context`` cached tokens."""

    kind: str  # "decode" | "prefill" | "mixed"
    decodes: int = 0
    decode_context: int = 0
    prefills: int = 0
    prefill_new: int = 0
    prefill_context: int = 0

    @property
    def num_requests(self) -> int:
        return self.decodes + self.prefills

    @property
    def num_tokens(self) -> int:
        return self.decodes + self.prefills * self.prefill_new

    def describe(self) -> str:
        parts = []
        if self.decodes:
            parts.append(f"{self.decodes} x 1 new on {self.decode_context}")
        if self.prefills:
            parts.append(f"{self.prefills} x {self.prefill_new} new on {self.prefill_context}")
        return " + ".join(parts)

    def kv_tokens(self) -> int:
        """Tokens every attention call must read from the cache (after the write)."""
        return self.decodes * (self.decode_context + 1) + self.prefills * (
            self.prefill_context + self.prefill_new
        )


def standard_shapes(
    batch: int | None = None, context: int | None = None, kinds: tuple[str, ...] = ("decode", "prefill", "mixed")
) -> list[Shape]:
    """The three default shapes. ``batch``/``context`` override the decode
    request count / decode context (prefill keeps its own sizes, scaled down
    when ``context`` is smaller than its cached length, for tiny CPU runs)."""
    nd, _, ctx = DECODE_DEFAULT
    npf, new, pctx = PREFILL_DEFAULT
    if batch is not None:
        nd = batch
        npf = max(1, min(npf, batch))
    if context is not None:
        ctx = context
        if context < pctx:
            pctx = context
            new = max(1, min(new, context // 2 or 1))
    out = []
    for kind in kinds:
        if kind == "decode":
            out.append(Shape("decode", decodes=nd, decode_context=ctx))
        elif kind == "prefill":
            out.append(Shape("prefill", prefills=npf, prefill_new=new, prefill_context=pctx))
        elif kind == "mixed":
            out.append(Shape("mixed", decodes=nd, decode_context=ctx, prefills=npf,
                             prefill_new=new, prefill_context=pctx))
        else:
            raise ValueError(f"unknown batch kind {kind!r}")
    return out


class FlashInferKernels(NamedTuple):
    """FlashInfer's inner kernels for one batch, as vLLM's builder picks them."""

    decode_api: str | None = None  # XQA / TRTLLM_GEN for decodes; None: the native decode wrapper
    prefill_trtllm: bool = False  # prefills on trtllm-gen context (else the paged prefill wrapper)


class FlashAttentionBuild(NamedTuple):
    """What FlashAttention's metadata builder reads beyond the layer: it
    decides at init and on its first build, for the whole model."""

    version_noarg: int | None = None  # get_flash_attn_version() without arguments: AOT scheduling when 3
    # sliding windows (tokens, None = full) of the model's FlashAttentionImpl
    # layers: AOT scheduling is turned off when they differ
    layer_windows: tuple[int | None, ...] = ()
    batch_invariant: bool = False  # VLLM_BATCH_INVARIANT: one split


class RowPlan(NamedTuple):
    """One row of ``run``: one backend (or its variant) on one batch shape."""

    backend: str
    variant: str = ""  # "" or NATIVE_DECODE
    selected: bool = False  # vLLM's choice for this group (its own row, not a variant)
    adapter: str | None = None  # "module:Class" under attn_select.backends.run
    skip: str | None = None  # why the row does not run, decided by the selector
    fa_version: int | None = None  # FlashAttention version vLLM runs for this group
    flash_attn: FlashAttentionBuild = FlashAttentionBuild()
    flashinfer: FlashInferKernels = FlashInferKernels()
    # MLA rows: the kernel block size vLLM runs this backend with (its preferred
    # block size, or the --block-size given); None: the plan's page size
    page_size: int | None = None
    # MLA rows: the name of the layer's MLA prefill backend (explain's choice:
    # FLASH_ATTN, TRTLLM_RAGGED, ...), None when the layer has none
    mla_prefill: str | None = None


class ShapePlan(NamedTuple):
    shape: Shape
    rows: tuple[RowPlan, ...]


class GroupPlan(NamedTuple):
    name: str
    layers: int
    attn: LayerAttention  # per-rank heads
    selected: str | None
    selection_error: str | None
    fa_version: int | None
    flashinfer_decode: str | None  # XQA / TRTLLM_GEN when vLLM's rules pick one, else None
    shapes: tuple[ShapePlan, ...]
    # sparse MLA: the model's index_topk (tokens each query attends to), else None
    index_topk: int | None = None


class RunPlan(NamedTuple):
    model: str
    dtype: str  # activations
    kv_cache_dtype: str  # "auto" or vLLM's fp8 spelling
    page_size: int
    groups: tuple[GroupPlan, ...]


def runnable_backends(use_mla: bool = False) -> tuple[str, ...]:
    """Backends with a run adapter for MHA (or MLA) layers, in the order vLLM
    prefers them on Hopper (its lists name each of them), then any others in
    enum order. An MLA layer never considers an MHA backend, nor the reverse."""
    order = backend_priorities(use_mla=use_mla, cap=Capability(9, 0))
    names = [name for name, spec in registry.BACKENDS.items() if spec.run_adapter and spec.is_mla == use_mla]
    return tuple(sorted(names, key=lambda n: (order.index(n) if n in order else len(order),
                                              registry.ENUM_ORDER.index(n))))


def standalone_row(backend: str, **facts: object) -> RowPlan:
    """A row outside any model's plan (benchmark scripts): the backend's
    adapter, with whatever facts the caller fixes (``fa_version=3``, ...)."""
    return RowPlan(backend, adapter=registry.BACKENDS[backend].run_adapter, **facts)  # type: ignore[arg-type]


def _validity(name: str, gexp: GroupExplanation) -> tuple[bool, str]:
    """(valid, reasons) of ``name`` for this group: the candidate's verdict, or
    the validation for a runnable backend outside the candidate list (an
    explicit backend leaves only itself there)."""
    for c in gexp.selection.candidates:
        if c.name == name:
            return c.valid, "; ".join(c.reasons)
    sel = gexp.selection
    reasons = check(registry.BACKENDS[name], Query(sel.cfg, sel.cap, sel.kernels, sel.ctx))
    return not reasons, "; ".join(reasons)


def trtllm_decode(gexp: GroupExplanation) -> str | None:
    """The trtllm-API decode kernel vLLM's FlashInfer builder fixes at init, if any."""
    fi = gexp.flashinfer
    return fi.decode_kernel if fi is not None and fi.decode_kernel in (XQA, TRTLLM_GEN) else None


def prefills_on_trtllm(gexp: GroupExplanation, attn: LayerAttention, shape: Shape, page_size: int) -> bool:
    """Does vLLM run this batch's prefills with trtllm-gen context?

    ``FlashInferMetadataBuilder.build`` decides it per batch
    (``use_trtllm_attention(..., is_prefill=True)``, the page >= 128 force):
    the dispatch mirror answers for this very batch shape and page size."""
    fi = gexp.flashinfer
    if fi is None or fi.init_error is not None or shape.prefills == 0:
        return False
    sel = gexp.selection
    groups = tuple((n, q) for n, q in ((shape.decodes, 1), (shape.prefills, shape.prefill_new)) if n)
    seq = max(shape.decode_context + 1 if shape.decodes else 0, shape.prefill_context + shape.prefill_new)
    d = flashinfer_dispatch(sel.cfg, sel.cap, sel.kernels, sel.ctx, num_qo_heads=attn.num_heads,
                            num_kv_heads=attn.num_kv_heads, has_sinks=attn.has_sink, page_size=page_size,
                            batches=(BatchShape(shape.kind, groups, max_seq_len=seq),))
    return bool(d.batches) and d.batches[0].error is None and d.batches[0].prefill == TRTLLM_GEN


def _skip(name: str, gexp: GroupExplanation) -> str | None:
    if registry.BACKENDS[name].run_adapter is None:
        return "attn-select run has no adapter for this backend"
    valid, why = _validity(name, gexp)
    return None if valid else f"not valid for this config per the selector: {why}"


# The backends whose layers are FlashAttentionImpl (TRITON_FLASH_ATTN's causal child is one).
FLASH_ATTN_IMPLS = ("FLASH_ATTN", "TRITON_FLASH_ATTN")


def fa_layer_windows(exp: Explanation, gexp: GroupExplanation) -> tuple[int | None, ...]:
    """The sliding windows FlashAttention's builder sees (``_get_sliding_window_configs``):
    every group vLLM serves with a FlashAttentionImpl, and this group, whose
    FLASH_ATTN row runs as if it were one."""
    groups = [g for g in exp.groups if g.selection.selected in FLASH_ATTN_IMPLS or g is gexp]
    return tuple(dict.fromkeys(g.group.attn.sliding_window for g in groups if g.group is not None))


def mla_page_size(name: str, gexp: GroupExplanation) -> int | None:
    """The kernel block size vLLM runs MLA backend ``name`` with, were it this
    group's backend. The cache block: the --block-size given, else
    ``update_block_size_for_backend``'s ``get_preferred_block_size(16)`` (16
    when the backend's ``supports_block_size`` takes it, else the smallest of
    its kernel sizes: FLASHMLA and the sparse backends 64, FLASHINFER_MLA 32,
    CUTLASS_MLA 128). Then ``select_common_block_size``: that block when a
    kernel size declares it (an int exactly, a MultipleOf by division), else
    the largest int kernel size dividing it. None: no kernel size fits."""
    spec = registry.BACKENDS[name]
    sel = gexp.selection
    q = Query(sel.cfg, sel.cap, sel.kernels, sel.ctx)
    sizes = spec.block_sizes(q)

    def declared(block: int) -> bool:  # _block_size_is_supported
        return not sizes or any(block == s if isinstance(s, int) else block % s.base == 0 for s in sizes)

    block = sel.cfg.block_size
    if block is None:
        block = VLLM_DEFAULT_BLOCK_SIZE
        if sizes and not spec.supports_block_size(q._replace(cfg=q.cfg._replace(block_size=block))):
            block = min(getattr(s, "base", s) for s in sizes)
    if declared(block):
        return block
    return max((s for s in sizes if isinstance(s, int) and block % s == 0), default=None)


def mla_prefill_backend(gexp: GroupExplanation) -> tuple[str | None, str | None]:
    """(vLLM's MLA prefill backend for this group, why there is none): explain's
    MLA prefill selection (``get_mla_prefill_backend``, made once the attention
    backend is chosen and depending on it: a sparse backend without a dense-MHA
    prefill path never asks, and a sparse layer without a valid one goes on
    without)."""
    sel = gexp.mla_prefill
    if sel is None:
        return None, ("vLLM's MLA layer selects its prefill backend once its attention backend is chosen, "
                      "and explain selected none")
    if sel.selected is not None:
        return sel.selected, None
    if sel.error is not None:
        return None, f"vLLM fails to build the layer: {sel.error}"
    if sel.skipped is not None:
        return None, f"the layer has no MLA prefill backend ({sel.skipped}): its prefills run on the sparse kernel"
    return None, f"the layer has no MLA prefill backend: {sel.warning}"


def _mla_prefill_row(gexp: GroupExplanation, attn: LayerAttention, fa_build: FlashAttentionBuild) -> RowPlan:
    """The MLA prefill row: the prefill tokens through vLLM's MLA prefill backend
    (explain's choice), with the FA version its FLASH_ATTN backend asks for
    (``get_flash_attn_version`` with the up-projected head sizes, qk nope +
    rope and v)."""
    prefill_backend, why = mla_prefill_backend(gexp)
    sel = gexp.selection
    version = resolve_fa_version(sel.cap, sel.kernels, sel.ctx, head_size=attn.qk_nope_head_dim + attn.qk_rope_head_dim,
                                 head_size_v=attn.v_head_dim).version
    adapter = MLA_PREFILL_ADAPTERS.get(prefill_backend) if prefill_backend else None
    if why is None and adapter is None:
        why = f"attn-select run has no adapter for vLLM's MLA prefill backend {prefill_backend}"
    return RowPlan(MLA_PREFILL, prefill_backend or "", adapter=adapter, skip=why, fa_version=version,
                   flash_attn=fa_build, mla_prefill=prefill_backend)


def plan_group(gexp: GroupExplanation, shapes: list[Shape], page_size: int,
               only: tuple[str, ...] | None = None, fa_windows: tuple[int | None, ...] = ()) -> GroupPlan:
    """The rows of one group: the runnable backends, then the priority list's
    other candidates (listed, not run), each on every shape.

    MLA groups also get, on shapes with prefill requests, the MLA prefill row
    (vLLM runs those tokens through its MLA prefill backend, not the
    attention backend), and beside FLASHINFER_MLA a comparison row on
    FlashInfer's ``BatchMLAPagedAttentionWrapper``. Each MLA row runs with the
    kernel block size vLLM would give its backend (``mla_page_size``)."""
    assert gexp.group is not None, "run plans are made for model groups"
    attn = gexp.group.attn
    fa_windows = fa_windows or (attn.sliding_window,)
    sel = gexp.selection
    runnable = runnable_backends(attn.use_mla)
    names = list(runnable) + [c.name for c in sel.candidates if c.name not in runnable]
    if only:
        names = [n for n in names if n in only]
    decode_api = trtllm_decode(gexp)
    fa_version = gexp.fa_version.version
    fa_build = FlashAttentionBuild(gexp.fa_version_noarg.version, fa_windows, sel.ctx.batch_invariant)
    skips = {name: _skip(name, gexp) for name in names}
    pages = {name: mla_page_size(name, gexp) for name in names} if attn.use_mla else {}
    prefill_row = None
    # the layer's MLA prefill backend: where its prefill requests go (a sparse
    # row sends them there only when it has one)
    mla_prefill = mla_prefill_backend(gexp)[0] if attn.use_mla else None
    if attn.use_mla and (not only or sel.selected in only):
        prefill_row = _mla_prefill_row(gexp, attn, fa_build)
    shape_plans = []
    for shape in shapes:
        kernels = FlashInferKernels(decode_api, prefills_on_trtllm(gexp, attn, shape, page_size))
        rows = []
        for name in names:
            common = dict(adapter=registry.BACKENDS[name].run_adapter, skip=skips[name], fa_version=fa_version,
                          flash_attn=fa_build, page_size=pages.get(name), mla_prefill=mla_prefill)
            rows.append(RowPlan(name, selected=name == sel.selected, flashinfer=kernels, **common))
            if name == "FLASHINFER" and decode_api and shape.decodes:
                rows.append(RowPlan(name, NATIVE_DECODE, flashinfer=kernels._replace(decode_api=None),
                                         **common))
            if name == "FLASHINFER_MLA" and common["adapter"] and not attn.use_sparse:
                # not vLLM's path, so not subject to FLASHINFER_MLA's validity (SM100 only);
                # dense attention, so no comparison for a sparse layer
                rows.append(RowPlan(name, MLA_WRAPPER, **{**common, "skip": None}))
        if prefill_row is not None and shape.prefills:
            rows.append(prefill_row)
        shape_plans.append(ShapePlan(shape, tuple(rows)))
    return GroupPlan(
        name=gexp.name, layers=len(gexp.group.layers), attn=attn, selected=sel.selected,
        selection_error=sel.error, fa_version=fa_version, flashinfer_decode=decode_api,
        shapes=tuple(shape_plans),
        index_topk=sel.ctx.mla_index_topk if attn.use_sparse else None)


def plan_run(exp: Explanation, dtype: str, kv_cache_dtype: str, shapes: list[Shape], page_size: int,
             only: tuple[str, ...] | None = None) -> RunPlan:
    """Every group of ``exp`` (a model's explanation) on every shape."""
    assert exp.model is not None, "run plans are made for a model"
    for g in exp.groups:
        cap = g.group.attn.logits_soft_cap if g.group is not None else None
        if cap is not None and not isinstance(cap, float):
            # explain mirrors vLLM, which only tests its truthiness; the kernels compute with it
            raise UserError(f"{g.group.name}: attn_logit_softcapping is {shown(cap)}, not a number: the attention "
                            "kernels cannot run with it; write a number or null")
    return RunPlan(
        model=exp.model.name, dtype=dtype, kv_cache_dtype=kv_cache_dtype, page_size=page_size,
        groups=tuple(plan_group(g, shapes, page_size, only, fa_layer_windows(exp, g)) for g in exp.groups))


def selected_only(plan: RunPlan) -> RunPlan:
    """``plan`` with only each group's selected backend's own row (no variant
    rows): what vLLM runs under the plan's setting, and nothing else (tune)."""
    groups = tuple(g._replace(shapes=tuple(
        sp._replace(rows=tuple(r for r in sp.rows if r.selected and not r.variant)) for sp in g.shapes))
        for g in plan.groups)
    return plan._replace(groups=groups)


def selected_backends(exp: Explanation) -> tuple[str, ...]:
    """The backends vLLM selected across the model's groups (for ``only=``)."""
    return tuple(dict.fromkeys(g.selection.selected for g in exp.groups if g.selection.selected))
