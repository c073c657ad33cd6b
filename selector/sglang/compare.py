"""vLLM beside SGLang for one deployment: per vLLM attention group, the
backend each engine runs, its kernel family and page size, and one line per
difference saying why each engine chose what it did.

vLLM selects per attention group (full, sliding, cross, ...); SGLang resolves
one backend (or a prefill/decode pair) and one page size for the server, so
its column is the same on every row.
"""

from __future__ import annotations

from dataclasses import dataclass

from attn_select.selector.sglang.explain import SGLangExplanation
from attn_select.selector.sglang.kernels import sglang_family, vllm_family

VLLM_DEFAULT_BLOCK = 16  # CacheConfig.DEFAULT_BLOCK_SIZE


@dataclass(frozen=True)
class Side:
    backend: str  # "FLASH_ATTN", "prefill fa3 / decode flashinfer", or "error"
    family: str
    page_size: str  # "16", "64", "-"
    page_why: str
    why: str  # why this engine chose it, in words


@dataclass(frozen=True)
class ComparisonRow:
    group: str
    layers: int
    vllm: Side
    sglang: Side


@dataclass(frozen=True)
class EngineComparison:
    vllm: object  # selector.explain.Explanation
    sglang: SGLangExplanation
    rows: tuple[ComparisonRow, ...]
    differences: tuple[str, ...]
    warnings: tuple = ()  # selector.installed.EngineWarning, attached at the CLI edge

    @property
    def ok(self) -> bool:
        return bool(self.vllm.ok) and self.sglang.ok


def _vllm_block(g, r) -> tuple[str, str]:
    """vLLM's KV block size for the group's selected backend."""
    from attn_select.backends import registry
    from attn_select.backends.spec import MultipleOf
    from attn_select.selector.config import Query

    sel = g.selection
    if g.cfg.block_size is not None:
        return str(g.cfg.block_size), "--block-size"
    if sel.selected is None:
        return "-", "nothing selected"
    if g.flashinfer is not None and sel.selected == "FLASHINFER":
        return str(g.flashinfer.page_size), "FlashInfer builder's page size"
    spec = registry.BACKENDS[sel.selected]
    sizes = spec.block_sizes(Query(g.cfg, r.device.capability, r.kernels, r.ctx))
    if not sizes:
        return str(VLLM_DEFAULT_BLOCK), "vLLM's default; the backend takes any size"
    fits = any((s.base and VLLM_DEFAULT_BLOCK % s.base == 0) if isinstance(s, MultipleOf) else s == VLLM_DEFAULT_BLOCK
               for s in sizes)
    if fits:
        why = "vLLM's default, which the backend's kernel block sizes include"
        if sel.selected == "FLASH_ATTN" and g.fa_version.version == 4:
            why += " (FA4's head-size 256 and SM90 fp8 rules can raise it)"
        return str(VLLM_DEFAULT_BLOCK), why
    smallest = min(s.base if isinstance(s, MultipleOf) else s for s in sizes)
    return str(smallest), f"the backend's smallest kernel block size (it does not take {VLLM_DEFAULT_BLOCK})"


def _vllm_side(g, r) -> Side:
    sel = g.selection
    page, page_why = _vllm_block(g, r)
    if sel.selected is None:
        return Side("error", "-", page, page_why, sel.error or "nothing valid")
    decode = g.flashinfer.decode_kernel if g.flashinfer is not None else None
    fam = vllm_family(sel.selected, g.fa_version.version, decode)
    if sel.backend:
        why = f"--backend {sel.backend}"
    else:
        skipped = [c for c in sel.candidates if c.priority >= 0 and c.priority < next(
            x.priority for x in sel.candidates if x.name == sel.selected) and not c.valid]
        why = f"{sel.selected} is the highest-priority valid backend (order: {' > '.join(sel.priority_order)})"
        if skipped:
            why += "; before it: " + "; ".join(f"{c.name} invalid ({', '.join(c.reasons)})" for c in skipped)
    if sel.selected == "FLASH_ATTN" and g.fa_version.trail:
        why += f"; FlashAttention {g.fa_version.version}: " + "; ".join(s.why for s in g.fa_version.trail)
    return Side(sel.selected, fam, page, page_why, why)


def _sglang_why(e: SGLangExplanation) -> str:
    res = e.resolution
    if res.error is not None:
        return f"SGLang raises {res.error.text()}"
    steps = [s for s in res.trail if s.field in ("attention_backend", "prefill_attention_backend",
                                                   "decode_attention_backend")]
    parts = []
    if e.flags.attention_backend is not None:
        parts.append(f"--attention-backend {e.flags.attention_backend}")
    parts += [f"{s.source}: {s.field} -> {s.new} ({s.why})" for s in steps]
    return "; ".join(parts) if parts else "no pass changed the backend"


def _sglang_side(e: SGLangExplanation) -> Side:
    res = e.resolution
    cap = e.device.capability
    page = "-" if res.page_size is None else str(res.page_size)
    if res.error is not None:
        return Side("error", "-", page, res.page_size_source(), _sglang_why(e))
    p, d = res.prefill_backend, res.decode_backend
    if res.hybrid:
        backend = f"prefill {p} / decode {d}"
        fam = f"{sglang_family(p, cap)} / {sglang_family(d, cap)}"
    else:
        backend, fam = str(d), sglang_family(d, cap)
    if res.attention_backend == "dsa":
        fam += f" ({res.final['dsa_prefill_backend']} prefill, {res.final['dsa_decode_backend']} decode)"
    return Side(backend, fam, page, res.page_size_source(), _sglang_why(e))


def compare(vllm_report, sglang_report: SGLangExplanation) -> EngineComparison:
    sside = _sglang_side(sglang_report)
    rows = []
    diffs: list[str] = []
    for g in vllm_report.groups:
        vside = _vllm_side(g, vllm_report)
        layers = len(g.group.layers) if g.group is not None else 0
        rows.append(ComparisonRow(g.name, layers, vside, sside))
        where = f"group {g.name}"
        if vside.family != sside.family:
            diffs.append(f"{where}: kernels differ: vLLM runs {vside.backend} ({vside.family}), "
                         f"SGLang runs {sside.backend} ({sside.family}). vLLM: {vside.why}. SGLang: {sside.why}.")
        elif vside.backend == "error" or sside.backend == "error":
            diffs.append(f"{where}: vLLM: {vside.why}. SGLang: {sside.why}.")
        if vside.page_size != sside.page_size and "-" not in (vside.page_size, sside.page_size):
            diffs.append(f"{where}: page size differs: vLLM {vside.page_size} ({vside.page_why}), "
                         f"SGLang {sside.page_size} ({sside.page_why}).")
        kv = _kv_difference(g, sglang_report)
        if kv:
            diffs.append(f"{where}: {kv}")
    return EngineComparison(vllm=vllm_report, sglang=sglang_report, rows=tuple(rows), differences=tuple(diffs))


def _kv_difference(g, e: SGLangExplanation) -> str | None:
    """The KV-cache dtypes when they name different caches (vLLM's fp8 and
    SGLang's fp8_e4m3 are the same cache)."""
    from attn_select.selector.sglang.choices import SGLANG_TO_VLLM_KV, VLLM_TO_SGLANG_KV

    res = e.resolution
    if res.error is not None:
        return None
    vllm_kv = g.cfg.kv_cache_dtype or "auto"
    sgl_kv = str(res.final["kv_cache_dtype"])
    if VLLM_TO_SGLANG_KV.get(vllm_kv, vllm_kv) == sgl_kv or SGLANG_TO_VLLM_KV.get(sgl_kv, sgl_kv) == vllm_kv:
        return None
    step = res.kv_cache_dtype_rewrite()
    why = f"rewritten by {step.source}: {step.why}" if step is not None else "as given"
    return f"KV-cache dtype differs: vLLM {vllm_kv}, SGLang {sgl_kv} ({why})."
