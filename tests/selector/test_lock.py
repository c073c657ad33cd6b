"""Deployments and lockfiles: parsing with line numbers, make_lock,
compare (only the fields present), and shared work across deployments."""

from __future__ import annotations

from pathlib import Path

import pytest

from attn_select.selector import lock as L
from attn_select.selector.errors import UserError
from attn_select.selector.lock import evaluate as lock_evaluate  # where the Evaluator looks up explain

DEPLOYMENTS = """\
deployments:
  - name: dense
    selector: {head_size: 128}
    capability: "9.0"
  - name: dense-fp8
    selector: {head_size: 128, kv_cache_dtype: fp8}
    capability: "9.0"
    overrides:
      block_size: 16
  - name: mla
    selector: {head_size: 576, use_mla: true}
    capability: 9.0
    kernels: [fa2, fa3, flashinfer]
  - name: invalid-backend
    selector: {head_size: 128}
    capability: "9.0"
    overrides: {backend: TURBOQUANT}
"""


def make(text: str = DEPLOYMENTS) -> tuple[L.Lockfile, str]:
    deps, doc = L.parse_deployments(text, "deployments.yaml")
    lock, paths = L.lock_deployments(deps, doc, Path("."), Path("."))
    return lock, L.dump_lock(lock, paths)


def recheck(lock_text: str) -> L.CheckReport:
    lock, doc = L.parse_lockfile(lock_text, "x.lock")
    return L.run_check(lock, doc, Path("."))


# --- YAML with lines ------------------------------------------------------------


def test_lines_of_keys_and_items():
    doc = L.load_yaml("a:\n  b: 1\n  c:\n    - x\n    - y: 2\n", "f.yaml")
    assert doc.line(("a",)) == 1
    assert doc.line(("a", "b")) == 2
    assert doc.line(("a", "c", 1)) == 5
    assert doc.line(("a", "c", 1, "y")) == 5
    assert doc.line(("a", "c", 7, "nope")) == 3  # nearest ancestor


def test_dotted():
    assert L.dotted(("deployments", 2, "overrides", "tp")) == "deployments[2].overrides.tp"


# --- bad input: one line, file and line -----------------------------------------

BASE = 'deployments:\n  - name: a\n    selector: {head_size: 128}\n    capability: "9.0"\n'


@pytest.mark.parametrize(
    "text, line, words",
    [
        ("deployments:\n  - name: a\n    selector: {head_size: 128\n", 4, "YAML syntax error"),
        ("", 1, "empty"),
        ("- 1\n- 2\n", 1, "Input should be"),
        (BASE + "    kernel: [fa2]\n", 5, "unknown field 'kernel'; did you mean 'kernels'?"),
        (BASE + "    overrides: {block_size: sixteen}\n", 5, "overrides.block_size: Input should be a valid integer"),
        (BASE + "    overrides: {tp: true}\n", 5, "valid integer"),
        (BASE + "    overrides:\n      backend: FLASH_ATN\n", 6, "did you mean FLASH_ATTN?"),
        (BASE + "    overrides:\n      kv_cache_dtype: fp9\n", 6, "unknown KV-cache dtype 'fp9'"),
        (BASE + "    kernels: [fa2, fa5]\n", 5, "unknown kernel name(s) fa5"),
        ('deployments:\n  - name: a\n    selector: {head_size: 128}\n    capability: "sm_x"\n', 4, "not a compute capability"),
        ("deployments:\n  - name: a\n    selector: {head_size: 128}\n", 2, "exactly one of 'device'"),
        ('deployments:\n  - name: a\n    capability: "9.0"\n', 2, "exactly one of 'model'"),
        ('deployments:\n  - name: a\n    selector: {use_mla: true}\n    capability: "9.0"\n', 3, "missing required field 'head_size'"),
        (BASE + '  - name: a\n    selector: {head_size: 64}\n    capability: "8.0"\n', 5, "duplicate deployment name 'a'"),
        (BASE + "    capability: 10.0\n", 5, "duplicate key 'capability'"),
        (BASE + "    overrides: {block_size: 16}\n    selector: {}\n", 6, "duplicate key"),
        ('deployments:\n  - name: a\n    selector: {head_size: 128, block_size: 16}\n    capability: "9.0"\n'
         "    overrides: {block_size: 32}\n", 2, "block_size given in both"),
    ],
)
def test_bad_deployments_name_file_and_line(text, line, words):
    with pytest.raises(L.BadInput) as exc:
        L.parse_deployments(text, "deploy.yaml")
    msg = str(exc.value)
    assert isinstance(exc.value, UserError)
    assert msg.startswith(f"deploy.yaml:{line}: "), msg
    assert words in msg
    assert "\n" not in msg


def test_bare_list_is_accepted():
    deps, doc = L.parse_deployments('- name: a\n  selector: {head_size: 64}\n  capability: "8.0"\n', "d.yaml")
    assert deps.deployments[0].name == "a"
    assert doc.line(("deployments", 0, "selector")) == 2


def test_capability_number_is_normalised():
    deps, _ = L.parse_deployments(DEPLOYMENTS, "d.yaml")
    assert deps.deployments[2].capability == "9.0"


def test_bad_lockfiles_name_file_and_line():
    _, text = make()
    cases = [
        (text.replace("schema: attn-select.lock/1", "schema: attn-select.lock/9"), "unsupported lockfile schema"),
        (text.replace("selected: FLASH_ATTN\n", "selected: FLASH_ATN\n", 1), "did you mean FLASH_ATTN?"),
        (text.replace("      TRITON_ATTN: []", "      TRITON_ATN: []", 1), "Unknown attention backend: 'TRITON_ATN'"),
        (text.replace("flash_attn_version: 3", "flash_attn_version: three", 1), "valid integer"),
        (text.replace("    selected: FLASH_ATTN\n", "    selected: FLASH_ATTN\n    chosen: X\n", 1), "unknown field 'chosen'"),
        (text.replace("  - group: config\n", "  - group: config\n    group: again\n", 1), "duplicate key 'group'"),
    ]
    for bad, words in cases:
        changed = next(i for i, (a, b) in enumerate(zip(text.splitlines(), bad.splitlines())) if a != b) + 1
        with pytest.raises(L.BadInput) as exc:
            L.parse_lockfile(bad, "x.lock")
        msg = str(exc.value)
        assert words in msg, msg
        assert msg.startswith(f"x.lock:{changed}: ") or msg.startswith(f"x.lock:{changed + 1}: "), (msg, changed)


# --- make_lock ------------------------------------------------------------------


def test_lock_is_deterministic_and_round_trips():
    lock, text = make()
    assert make()[1] == text
    parsed, _ = L.parse_lockfile(text, "x.lock")
    assert parsed == lock
    assert "engine:\n  name: vllm\n  version: 0.33.0\n" in text
    assert recheck(text).ok


def test_lock_records_every_field_in_priority_order():
    lock, _ = make()
    dense = lock.deployments[0].groups[0]
    # an MHA group: every field but the MLA prefill decision, which only MLA groups record
    assert dense.present() == tuple(f for f in L.GROUP_FIELDS if not f.startswith("mla_prefill"))
    from attn_select.selector.config import Capability
    from attn_select.selector.priorities import backend_priorities

    assert list(dense.candidates) == list(backend_priorities(use_mla=False, cap=Capability(9, 0)))
    failed = lock.deployments[3].groups[0]
    # An explicit backend that fails validation: vLLM raises, the lock keeps the text.
    assert failed.selected is None
    assert failed.error.startswith("Selected backend AttentionBackendEnum.TURBOQUANT is not valid")


def test_inputs_embedded_in_canonical_form():
    lock, text = make()
    assert lock.deployments[1].inputs.as_yaml(None) == {
        "selector": {"head_size": 128, "kv_cache_dtype": "fp8"},
        "capability": "9.0",
        "overrides": {"block_size": 16},
    }
    assert "kernels:\n    - fa2\n    - fa3\n    - flashinfer\n" in text


# --- compare --------------------------------------------------------------------


def _group(**kw) -> L.LockGroup:
    return L.LockGroup(group="full", **kw)


NOW = _group(
    selected="FLASHINFER", flash_attn_version=4, error=None, warning=None,
    candidates={"FLASHINFER": [], "FLASH_ATTN": ["head_size not supported", "dtype not supported"]},
)


def test_only_present_fields_are_compared():
    assert L.compare_group("d", _group(selected="FLASHINFER"), NOW, ()) == []
    assert L.compare_group("d", _group(), NOW, ()) == []
    diffs = L.compare_group("d", _group(flash_attn_version=3), NOW, ())
    assert [(x.field, x.locked, x.new) for x in diffs] == [("flash_attn_version", 3, 4)]


def test_reasons_compare_as_ordered_lists():
    locked = _group(candidates={"FLASHINFER": [], "FLASH_ATTN": ["dtype not supported", "head_size not supported"]})
    (d,) = L.compare_group("d", locked, NOW, ("deployments", 0, "groups", 0))
    assert d.field == "candidates.FLASH_ATTN"
    assert d.loc == ("deployments", 0, "groups", 0, "candidates", "FLASH_ATTN")


def test_candidate_order_is_compared():
    locked = _group(candidates={"FLASH_ATTN": NOW.candidates["FLASH_ATTN"], "FLASHINFER": []})
    (d,) = L.compare_group("d", locked, NOW, ())
    assert d.field == "candidates (priority order)"
    assert d.new == ["FLASHINFER", "FLASH_ATTN"]


def test_errors_compare_as_exact_text():
    now = _group(selected=None, error="No valid attention backend found for cuda.")
    assert L.compare_group("d", _group(error="No valid attention backend found for cuda."), now, ()) == []
    (d,) = L.compare_group("d", _group(error="No valid attention backend found for cuda"), now, ())
    assert d.field == "error"


def test_invalidated_selection_shows_its_reasons():
    (d,) = L.compare_group("d", _group(selected="FLASH_ATTN"), NOW, ())
    assert (d.deployment, d.group, d.field, d.locked, d.new) == ("d", "full", "selected", "FLASH_ATTN", "FLASHINFER")
    assert d.detail == "FLASH_ATTN is now invalid: head_size not supported; dtype not supported"
    assert d.message() == "selected: FLASH_ATTN -> FLASHINFER"


def test_outranked_selection_says_so():
    now = NOW.model_copy(update={"candidates": {"FLASHINFER": [], "FLASH_ATTN": []}})
    (d,) = L.compare_group("d", _group(selected="FLASH_ATTN"), now, ())
    assert d.detail == ("FLASH_ATTN is still valid, but FLASHINFER now comes before it "
                        "(priority order: FLASHINFER > FLASH_ATTN)")


def test_group_changes_are_diffs():
    lock, _ = make()
    dep = lock.deployments[0]
    renamed = (dep.groups[0].model_copy(update={"group": "sliding"}),)
    diffs = L.compare_deployment(dep, L.Recomputed(renamed), ("deployments", 0))
    assert {(d.group, d.locked, d.new) for d in diffs} == {("config", "present", L.ABSENT), ("sliding", L.ABSENT, "present")}


def test_engine_version_is_checked():
    lock, _ = make()
    old = lock.model_copy(update={"engine": L.Engine(name="vllm", version="0.32.0")})
    now = {d.name: L.Recomputed(tuple(d.groups)) for d in lock.deployments}
    (d,) = L.compare(old, now)
    assert d.field == "engine" and d.locked == "vllm 0.32.0"


def test_unchanged_lock_passes_and_moved_capability_fails():
    _, text = make()
    assert recheck(text).ok
    report = recheck(text.replace("capability: '9.0'", "capability: '10.0'"))
    assert not report.ok
    sel = [d for d in report.diffs if d.field == "selected"]
    # vLLM's SM100 list puts FLASHINFER first for MHA; MLA gets FLASHINFER_MLA first.
    assert ("dense", "config") in {(d.deployment, d.group) for d in sel}
    assert all(d.detail for d in sel)
    for d, line in zip(report.diffs, report.lines):
        if d.field == "selected":
            assert text.splitlines()[line - 1].strip() == f"selected: {d.locked}"


# --- shared work ----------------------------------------------------------------


def test_equal_inputs_are_explained_once(monkeypatch):
    calls = []
    real = lock_evaluate.explain

    def counting(*args):
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(lock_evaluate, "explain", counting)
    many = "deployments:\n" + "".join(
        f'  - name: d{i}\n    selector: {{head_size: {64 * (1 + i % 3)}}}\n    capability: "9.0"\n' for i in range(30)
    )
    deps, doc = L.parse_deployments(many, "d.yaml")
    lock, _ = L.lock_deployments(deps, doc, Path("."), Path("."))
    assert len(lock.deployments) == 30
    assert len(calls) == 3


def test_explain_errors_point_at_the_deployment(monkeypatch):
    def broken(*args):
        raise UserError("head size must be a positive integer")

    monkeypatch.setattr(lock_evaluate, "explain", broken)
    deps, doc = L.parse_deployments(DEPLOYMENTS, "d.yaml")
    with pytest.raises(L.BadInput, match=r"^d\.yaml:2: deployments\[0\]: head size"):
        L.lock_deployments(deps, doc, Path("."), Path("."))


def test_duplicate_group_in_lock_is_reported_at_its_line():
    text = (
        "schema: attn-select.lock/1\nengine: {name: vllm, version: 0.33.0}\ndeployments:\n"
        "- name: a\n  inputs: {selector: {head_size: 128}, capability: '9.0'}\n  groups:\n"
        "  - group: full\n    selected: FLASH_ATTN\n"
        "  - group: full\n    selected: FLASHINFER\n"
    )
    with pytest.raises(L.BadInput, match=r"^x\.lock:9: deployments\[0\]\.groups\[1\]\.group: duplicate group 'full'$"):
        L.parse_lockfile(text, "x.lock")
