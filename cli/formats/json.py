"""JSON: a stable, documented document per report (README: "JSON output").

Keys are sorted and nothing time-dependent is included, so the same input
gives byte-identical output. Field names are vLLM's where vLLM has one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import dataclasses
import json

from attn_select.selector.explain import ENGINE_VERSION, Explanation, GroupExplanation
from attn_select.cli.formats import by_report_type

if TYPE_CHECKING:
    from attn_select.selector.lock import CheckReport
    from attn_select.selector.matrix import Column, FeatureMatrix, Row


EXPLAIN_SCHEMA = "attn-select.explain/1"


def plain(value: object) -> object:
    """Dataclasses, NamedTuples, tuples and enums to JSON-ready values. A
    NamedTuple is a record (an object of its fields), not a list."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {name: plain(v) for name, v in zip(value._fields, value)}
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "value") and hasattr(value, "name") and not isinstance(value, (int, str)):
        return value.value
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def dumps(doc: object) -> str:
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def warnings_doc(warnings: tuple) -> list[dict]:
    """The engine warnings: another installed release (``kind`` version,
    ``affects`` the deployments concerned) or a variable set here."""
    return [{"kind": w.kind, "engine": w.engine, "message": w.message, "affects": list(w.affects)}
            for w in warnings]


def fa_doc(fa) -> dict:
    return {
        "version": fa.version,
        "trail": [s._asdict() for s in fa.trail],  # fields are plain values
    }


def mla_prefill_doc(p) -> dict:
    """An MLA layer's prefill backend selection (README: "JSON")."""
    return {
        "selector_config": {"dtype": p.cfg.dtype, "mla_dimensions": plain(p.cfg.mla_dimensions)},
        "backend": p.backend,
        "priority_order": list(p.priority_order),
        "candidates": [
            {"backend": c.name, "priority": c.priority, "valid": c.valid, "reasons": list(c.reasons)}
            for c in p.candidates
        ],
        "selected": p.selected,
        "error": p.error,
        "warning": p.warning,
        "skipped": p.skipped,
    }


def group_doc(g: GroupExplanation) -> dict:
    facts = {f.name: f for f in g.backend_facts}
    sel = g.selection
    doc = {
        "name": g.name,
        "layers": list(g.group.layers) if g.group else [],
        "attention": plain(g.group.attn) if g.group else None,
        "num_heads": g.num_heads,
        "selector_config": {k: plain(v) for k, v in g.cfg._asdict().items()},
        "backend": sel.backend,
        "priority_order": list(sel.priority_order),
        "candidates": [
            {
                "backend": c.name,
                "priority": c.priority,
                "valid": c.valid,
                "reasons": list(c.reasons),
                "cudagraph_support": facts[c.name].cudagraph_support,
                "kernel_block_sizes": list(facts[c.name].kernel_block_sizes),
                "kv_cache_shape": facts[c.name].kv_cache_shape,
            }
            for c in sel.candidates
        ],
        "selected": sel.selected,
        "error": sel.error,
        "warning": sel.warning,
        "layer_error": g.layer_error,
        "flash_attn_version": fa_doc(g.fa_version),
        "flash_attn_version_noarg": fa_doc(g.fa_version_noarg),
        "flashinfer_dispatch": plain(g.flashinfer) if g.flashinfer is not None else None,
    }
    # Only MLA groups carry the key, so every other group's document is unchanged.
    if g.mla_prefill is not None or g.cfg.use_mla:
        doc["mla_prefill"] = mla_prefill_doc(g.mla_prefill) if g.mla_prefill is not None else None
    return doc


def explanation_doc(r: Explanation) -> dict:
    doc = _explanation_doc(r)
    if r.input_notes:  # only when there are some: the schema of every other report stays as it was
        doc["input_notes"] = list(r.input_notes)
    return doc


def _explanation_doc(r: Explanation) -> dict:
    m = r.model
    return {
        "schema": EXPLAIN_SCHEMA,
        "engine": {"name": r.engine, "version": r.engine_version},
        "model": None if m is None else {
            "name": m.name, "architecture": m.architecture, "model_type": m.model_type,
            "dtype": m.dtype, "num_layers": m.num_layers, "tp": m.tp,
            "other_layers": plain(m.other_layers), "notes": list(m.notes),
        },
        "device": {
            "name": r.device.name, "capability": str(r.device.capability),
            "profile": r.device.profile, "source": r.device.source,
        },
        "kernels": {**{n: getattr(r.kernels, n.replace("-", "_")) for n in r.kernels.NAMES},
                    "source": r.kernels.source},
        "engine_context": plain(r.ctx),
        "overrides": plain(r.overrides.given()),
        # vLLM's engine-config steps that changed a selection input, in order
        "engine_config_trail": [
            {"hook": s.hook, "field": s.field, "old": plain(s.old), "new": plain(s.new), "why": s.why}
            for s in r.engine_config_trail
        ],
        "backend_source": r.backend_source,
        "warnings": warnings_doc(r.warnings),
        "ok": r.ok,
        "groups": [group_doc(g) for g in r.groups],
    }


# --- matrix (attn-select matrix) ---------------------------------------------

MATRIX_SCHEMA = "attn-select.matrix/1"


def _matrix_row(columns: tuple[Column, ...], row: Row) -> dict:
    return {
        "backend": row.backend,
        "vllm_class": row.vllm_class,
        "summary": row.summary,
        "facts": {
            col.key: {"value": c.value, "rule": c.rule, "field": c.field}
            for col, c in zip(columns, row.cells)
        },
    }


def matrix_doc(m: FeatureMatrix) -> dict:
    return {
        "schema": MATRIX_SCHEMA,
        "engine": {"name": "vllm", "version": m.engine_version},
        "capability": None if m.capability is None else str(m.capability),
        "columns": [{"key": c.key, "title": c.title, "fields": list(c.fields)} for c in m.columns],
        "backends": [_matrix_row(m.columns, r) for r in m.rows],
        "unsupported": [r.backend for r in m.unsupported],
        "priorities": [{"label": p.label, "backends": list(p.backends)} for p in m.priorities],
    }


# --- check (attn-select check) ------------------------------------------------

CHECK_SCHEMA = "attn-select.check/1"


def check_doc(r: CheckReport) -> dict:
    from attn_select.selector.lock.compare import SGLANG_CASE

    failed = {(d.deployment, d.group) for d in r.diffs}
    deployments, groups, sglang = r.counts()
    doc = {
        "schema": CHECK_SCHEMA,
        "engine": {"name": "vllm", "version": ENGINE_VERSION},
        "lockfile": r.lockfile,
        "inputs": r.inputs,
        "warnings": warnings_doc(r.warnings),
        "ok": r.ok,
        "deployments": deployments,
        # vLLM's attention groups, as `lock` counts them; SGLang's resolutions apart
        "groups": groups,
        "failed_groups": len([c for c in r.cases if c in failed and c[1] != SGLANG_CASE]),
        "differences": [
            {
                "deployment": d.deployment,
                "group": d.group,
                "field": d.field,
                "locked": d.locked,
                "new": d.new,
                "line": line,
                "detail": d.detail,
                "message": d.message(),
            }
            for d, line in zip(r.diffs, r.lines)
        ],
    }
    if sglang:  # only locks with SGLang sections: a vLLM lock's report is as before
        doc["sglang_resolutions"] = sglang
        doc["failed_sglang_resolutions"] = len([c for c in r.cases if c in failed and c[1] == SGLANG_CASE])
    return doc


# --- SGLang (explain --engine sglang / both; docs/sglang.md) ------------------

SGLANG_SCHEMA = "attn-select.explain-sglang/1"
BOTH_SCHEMA = "attn-select.explain-both/1"


def sglang_doc(e) -> dict:
    r = e.resolution
    kv = r.kv_cache_dtype_rewrite()
    final = r.final
    return {
        "schema": SGLANG_SCHEMA,
        "engine": {"name": e.engine, "version": e.engine_version},
        "model": {
            "name": e.model.name, "architectures": list(e.sgl_model.architectures),
            "attention": "MLA" if e.sgl_model.use_mla else "MHA",
            "has_attention_sinks": e.sgl_model.has_attention_sinks,
            "has_asymmetric_kv": e.sgl_model.has_asymmetric_kv,
            "is_deepseek_dsa": e.sgl_model.is_deepseek_dsa,
            "tp": e.model.tp,
        },
        "device": {
            "name": e.device.name, "capability": str(e.device.capability), "profile": e.device.profile,
            "source": e.device.source, "cuda_version": e.platform.cuda_text(),
            "cuda_version_source": e.platform.cuda_version_source, "has_flashinfer": e.platform.has_flashinfer,
            "gpu_memory_mib": e.platform.gpu_memory_mib,
        },
        "flags": plain(e.flags),
        "notes": list(e.notes),
        "warnings": warnings_doc(e.warnings),
        "default_rule": None if r.default_rule is None else plain(r.default_rule),
        "default_rule_skipped": r.default_rule_skipped,
        "trail": [plain(st) for st in r.trail],
        "attention_backend": r.attention_backend,
        "prefill_backend": r.prefill_backend,
        "decode_backend": r.decode_backend,
        "hybrid": r.hybrid,
        "page_size": r.page_size,
        "page_size_source": r.page_size_source(),
        "kv_cache_dtype": final["kv_cache_dtype"],
        "kv_cache_dtype_rewrite": None if kv is None else {"from": kv.old, "to": kv.new, "source": kv.source},
        "dsa_backends": None if final["dsa_prefill_backend"] is None else {
            "prefill": final["dsa_prefill_backend"], "decode": final["dsa_decode_backend"]},
        "speculative": None if final["speculative_algorithm"] is None else {
            "algorithm": final["speculative_algorithm"], "num_steps": final["speculative_num_steps"],
            "eagle_topk": final["speculative_eagle_topk"], "num_draft_tokens": final["speculative_num_draft_tokens"],
            "draft_attention_backend": final["speculative_draft_attention_backend"]},
        "resolved": {k: plain(v) for k, v in final.items()},
        "error": None if r.error is None else {"kind": r.error.kind, "message": r.error.message,
                                               "source": r.error.source},
        "ok": e.ok,
    }


def comparison_doc(c) -> dict:
    return {
        "schema": BOTH_SCHEMA,
        "engines": [{"name": c.vllm.engine, "version": c.vllm.engine_version},
                    {"name": c.sglang.engine, "version": c.sglang.engine_version}],
        "rows": [plain(row) for row in c.rows],
        "differences": list(c.differences),
        "warnings": warnings_doc(c.warnings),
        "ok": c.ok,
        "vllm": explanation_doc(c.vllm),
        "sglang": sglang_doc(c.sglang),
    }


# --- profiles (attn-select profiles) ---------------------------------------------

PROFILES_SCHEMA = "attn-select.profiles/1"


def profiles_doc(p) -> dict:
    return {"schema": PROFILES_SCHEMA, "models": plain(p.models), "devices": plain(p.devices)}


# --- explain --engine vllm-installed ---------------------------------------------

INSTALLED_SCHEMA = "attn-select.explain-vllm-installed/1"


def _installed_head(r, schema: str, engine: str) -> dict:
    """What every --engine *-installed report starts with: which code ran, where, and its stand-ins."""
    return {
        "schema": schema,
        "engine": {"name": engine, "version": r.engine_version, "python": r.python, "code": "installed"},
        "mirror": {"name": r.mirror.engine, "version": r.mirror.engine_version},
        "stand_ins": list(r.stand_ins),
    }


def installed_doc(r) -> dict:
    return {
        **_installed_head(r, INSTALLED_SCHEMA, "vllm"),
        "engine_config": r.engine_config,
        "error": r.error,
        "groups": [{**{k: plain(v) for k, v in g._asdict().items()}, "reasons": {k: list(v) for k, v in g.reasons.items()}}
                   for g in r.groups],
        "differences": list(r.differences),
        "warnings": warnings_doc(r.warnings),
        "ok": r.ok,
        "explain": explanation_doc(r.mirror),
    }


# --- explain --engine sglang-installed ------------------------------------------

SGLANG_INSTALLED_SCHEMA = "attn-select.explain-sglang-installed/1"


def sglang_installed_doc(r) -> dict:
    """SGLang's own resolution in ``--engine sglang``'s shape, beside the mirror's."""
    return {
        **_installed_head(r, SGLANG_INSTALLED_SCHEMA, "sglang"),
        "resolution": sglang_doc(r.installed),
        "messages": [{"function": f, "level": level, "text": text} for f, level, text in r.messages],
        "differences": list(r.differences),
        "changes": [plain(c) for c in r.changes],
        "ok": r.ok,
        "explain": sglang_doc(r.mirror),
    }


# --- doctor -------------------------------------------------------------------

DOCTOR_SCHEMA = "attn-select.doctor/1"


def doctor_doc(r) -> dict:
    return {
        "schema": DOCTOR_SCHEMA,
        "python": r.python,
        "sections": [{"title": s.title, "checks": [plain(c) for c in s.checks]} for s in r.sections],
        "kernels": r.kernels_flag,
        "kernels_assumed": r.kernels_assumed,
        "warnings": warnings_doc(r.warnings),
    }


render = by_report_type("JSON", DoctorReport=lambda r: dumps(doctor_doc(r)),
                        InstalledExplanation=lambda r: dumps(installed_doc(r)), Explanation=lambda r: dumps(explanation_doc(r)),
                        FeatureMatrix=lambda r: dumps(matrix_doc(r)), CheckReport=lambda r: dumps(check_doc(r)),
                        SGLangExplanation=lambda r: dumps(sglang_doc(r)),
                        SGLangInstalledExplanation=lambda r: dumps(sglang_installed_doc(r)),
                        EngineComparison=lambda r: dumps(comparison_doc(r)),
                        ProfileListing=lambda r: dumps(profiles_doc(r)))
