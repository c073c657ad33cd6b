"""The feature matrix is read from the backend declarations: change a
declaration in the registry and the cell changes (data and markdown)."""

from __future__ import annotations

import re

import pytest

from attn_select.backends import registry
from attn_select.backends.spec import CapabilityRange, MultipleOf, Rule
from attn_select.cli.formats import render
from attn_select.selector.config import Capability, Kernels
from attn_select.selector.matrix import COLUMNS, build_matrix, cell, supports_capability
from attn_select.selector.priorities import backend_priorities

# For each column: spec field values to declare and the text the cell must show.
STATIC = {
    "dtypes": ({"dtypes": ("float32",)}, "float32"),
    "kv_cache_dtypes": ({"kv_cache_dtype_rule": None, "kv_cache_dtypes": ("fp8_e5m2", "nvfp4")}, "fp8_e5m2, nvfp4"),
    "kernel_block_sizes": ({"kernel_block_sizes": (MultipleOf(48), 4096)}, "multiple of 48, 4096"),
    "head_sizes": ({"head_sizes": (77, 99)}, "77, 99"),
    "compute_capability": ({"capability": CapabilityRange(min=Capability(7, 7), max=Capability(8, 9))}, "7.7-8.9"),
    "sink": ({"sink": True}, "yes"),
    "sparse": ({"is_sparse": True}, "yes"),
    "mla": ({"is_mla": True}, "yes"),
    "mm_prefix": ({"mm_prefix": True}, "yes"),
    "attn_types": ({"attn_types": ("encoder_only",)}, "encoder_only"),
    "cudagraph_support": ({"cudagraph_support": "UNIFORM_SINGLE_TOKEN_DECODE"}, "UNIFORM_SINGLE_TOKEN_DECODE"),
}
NEGATED = {"sink": {"sink": False}, "sparse": {"is_sparse": False}, "mla": {"is_mla": False},
           "mm_prefix": {"mm_prefix": False}}
# Columns whose spec field may hold a Rule; the cell then shows its doc.
RULE_FIELDS = {
    "kv_cache_dtypes": "kv_cache_dtype_rule",
    "kernel_block_sizes": "kernel_block_sizes",
    "head_sizes": "head_sizes",
    "compute_capability": "capability",
    "sink": "sink",
    "mm_prefix": "mm_prefix",
    "cudagraph_support": "cudagraph_support",
}


def test_every_column_has_a_case():
    assert set(STATIC) == {c.key for c in COLUMNS}


def test_one_row_per_backend_in_enum_order():
    m = build_matrix()
    assert [r.backend for r in m.rows] == list(registry.ENUM_ORDER)
    assert all(len(r.cells) == len(COLUMNS) for r in m.rows)


def _cell(m, backend, key):
    row = next(r for r in m.rows if r.backend == backend)
    return row.cells[[c.key for c in COLUMNS].index(key)]


def _md_cells(md: str, backend: str) -> list[str]:
    line = next(ln for ln in md.splitlines() if ln.startswith(f"| `{backend}` |"))
    parts = [p.strip() for p in re.split(r"(?<!\\)\|", line)[1:-1]]
    return parts[1:]


@pytest.mark.parametrize("key", list(STATIC))
@pytest.mark.parametrize("backend", list(registry.ENUM_ORDER))
def test_static_declaration_is_the_cell(monkeypatch, key, backend):
    values, text = STATIC[key]
    monkeypatch.setitem(registry.BACKENDS, backend, registry.BACKENDS[backend]._replace(**values))
    c = _cell(build_matrix(), backend, key)
    assert c.text == text and not c.rule
    if key in NEGATED:
        monkeypatch.setitem(registry.BACKENDS, backend, registry.BACKENDS[backend]._replace(**NEGATED[key]))
        assert _cell(build_matrix(), backend, key).text == "no"


@pytest.mark.parametrize("key", list(RULE_FIELDS))
@pytest.mark.parametrize("backend", ["TRITON_ATTN", "FLASH_ATTN", "FLASHMLA", "TURBOQUANT"])
def test_rule_declaration_shows_its_doc(monkeypatch, key, backend):
    doc = f"computed fact for {key} of {backend}"
    rule = Rule(doc, lambda q: True)
    monkeypatch.setitem(registry.BACKENDS, backend, registry.BACKENDS[backend]._replace(**{RULE_FIELDS[key]: rule}))
    c = _cell(build_matrix(), backend, key)
    assert (c.text, c.value, c.rule, c.field) == (doc, doc, True, RULE_FIELDS[key])


def test_kv_cache_rule_takes_precedence_over_the_list(monkeypatch):
    spec = registry.BACKENDS["TRITON_ATTN"]._replace(kv_cache_dtypes=("auto",),
                                                     kv_cache_dtype_rule=Rule("only what the rule says", lambda q: True))
    monkeypatch.setitem(registry.BACKENDS, "TRITON_ATTN", spec)
    assert _cell(build_matrix(), "TRITON_ATTN", "kv_cache_dtypes").text == "only what the rule says"


def test_empty_lists_mean_any(monkeypatch):
    spec = registry.BACKENDS["TRITON_ATTN"]._replace(head_sizes=(), kv_cache_dtype_rule=None, kv_cache_dtypes=())
    monkeypatch.setitem(registry.BACKENDS, "TRITON_ATTN", spec)
    m = build_matrix()
    assert _cell(m, "TRITON_ATTN", "head_sizes").text == "any"
    assert _cell(m, "TRITON_ATTN", "kv_cache_dtypes").text == "any"


@pytest.mark.parametrize("key", list(STATIC))
def test_markdown_cell_follows_the_declaration(monkeypatch, key):
    """The generated docs table changes with the declaration, in the right column."""
    backend = "FLEX_ATTENTION"
    before = _md_cells(render(build_matrix(), "markdown"), backend)
    values, text = STATIC[key]
    monkeypatch.setitem(registry.BACKENDS, backend, registry.BACKENDS[backend]._replace(**values))
    after = _md_cells(render(build_matrix(), "markdown"), backend)
    i = [c.key for c in COLUMNS].index(key)
    assert after[i] == text
    assert [a for j, a in enumerate(after) if j != i] == [b for j, b in enumerate(before) if j != i]
    if key in RULE_FIELDS:
        rule = Rule(f"rule * for | {key}", lambda q: True)
        monkeypatch.setitem(registry.BACKENDS, backend, registry.BACKENDS[backend]._replace(**{RULE_FIELDS[key]: rule}))
        assert _md_cells(render(build_matrix(), "markdown"), backend)[i] == f"*rule \\* for \\| {key}*"


def test_markdown_has_every_backend_and_column():
    md = render(build_matrix(), "markdown")
    header = next(ln for ln in md.splitlines() if ln.startswith("| backend |"))
    assert [h.strip() for h in header.split("|")[2:-1]] == [c.title for c in COLUMNS]
    for name in registry.ENUM_ORDER:
        cells = _md_cells(md, name)
        assert len(cells) == len(COLUMNS)
        spec = registry.BACKENDS[name]
        for col, text in zip(COLUMNS, cells):
            c = cell(spec, col)
            shown = c.text.replace("|", "\\|").replace("*", "\\*")
            assert text == (f"*{shown}*" if c.rule else shown)


def test_capability_range_narrows_rows(monkeypatch):
    spec = registry.BACKENDS["TRITON_ATTN"]._replace(capability=CapabilityRange(majors=(7,)))
    monkeypatch.setitem(registry.BACKENDS, "TRITON_ATTN", spec)
    on_hopper = build_matrix(Capability(9, 0))
    assert "TRITON_ATTN" in [r.backend for r in on_hopper.unsupported]
    assert "TRITON_ATTN" not in [r.backend for r in on_hopper.rows]
    assert "TRITON_ATTN" in [r.backend for r in build_matrix(Capability(7, 5)).rows]


def test_capability_rule_is_evaluated_for_the_gpu(monkeypatch):
    seen = []

    def only_hopper(q):
        seen.append(q)
        return q.cap.major == 9

    spec = registry.BACKENDS["FLEX_ATTENTION"]._replace(capability=Rule("Hopper only", only_hopper))
    monkeypatch.setitem(registry.BACKENDS, "FLEX_ATTENTION", spec)
    assert "FLEX_ATTENTION" in [r.backend for r in build_matrix(Capability(9, 0)).rows]
    assert "FLEX_ATTENTION" in [r.backend for r in build_matrix(Capability(10, 0)).unsupported]
    assert seen[0].cfg.use_mla is False and seen[0].kernels == Kernels()


def test_capability_rule_sees_the_kernels(monkeypatch):
    spec = registry.BACKENDS["FLEX_ATTENTION"]._replace(capability=Rule("needs FA3", lambda q: q.kernels.fa3))
    monkeypatch.setitem(registry.BACKENDS, "FLEX_ATTENTION", spec)
    no_fa3 = Kernels.from_names(["fa2"], source="test")
    assert not supports_capability(spec, Capability(9, 0), no_fa3)
    assert "FLEX_ATTENTION" in [r.backend for r in build_matrix(Capability(9, 0), no_fa3).unsupported]


@pytest.mark.parametrize("cap", ["8.0", "9.0", "10.0", "12.0"])
def test_priorities_come_from_the_priority_function(cap):
    c = Capability.parse(cap)
    m = build_matrix(c)
    lists = {p.label: p.backends for p in m.priorities}
    assert lists["MHA"] == backend_priorities(use_mla=False, cap=c)
    assert lists["MLA"] == backend_priorities(use_mla=True, cap=c)
    # A variant is listed only where it changes the order.
    for label, order in lists.items():
        if label not in ("MHA", "MLA"):
            assert order != lists[label.split(",")[0]]


def test_b200_puts_flashinfer_first_for_mha():
    m = build_matrix(Capability(10, 0))
    assert next(p for p in m.priorities if p.label == "MHA").backends[0] == "FLASHINFER"


def test_no_capability_no_priorities():
    m = build_matrix()
    assert m.priorities == () and m.unsupported == ()
