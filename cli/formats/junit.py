"""JUnit XML for CI test reports (built with xml.etree.ElementTree).

`attn-select check`: one testcase per (deployment, attention group), named
after the group with the deployment as its class; each difference is one
line of the failure text. Differences that belong to no group (changed
inputs, a removed deployment, another engine version) get a testcase of
their own, named ``(deployment)`` or ``(lockfile)``. Engine warnings (another
installed release than the mirrored one) are suite properties named
``warning`` and the suite's ``system-err``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

from attn_select.cli.formats import by_report_type
from attn_select.cli.formats.xml_doc import xml_document

if TYPE_CHECKING:
    from attn_select.selector.lock import CheckReport, Diff

SUITE = "attn-select check"


def _failure_text(diffs: list[tuple[Diff, int]], lockfile: str) -> str:
    lines = []
    for d, line in diffs:
        lines.append(f"{lockfile}:{line}: {d.message()}")
        if d.detail:
            lines.append(f"    {d.detail}")
    return "\n".join(lines) + "\n"


def check_suite(root: ET.Element, r: CheckReport) -> tuple[int, int]:
    """Add the check's testsuite to ``root``; (tests, failures)."""
    by_case: dict[tuple[str, str | None], list[tuple[Diff, int]]] = {}
    for d, line in zip(r.diffs, r.lines):
        by_case.setdefault((d.deployment, d.group), []).append((d, line))
    cases: list[tuple[str, str | None]] = list(r.cases)
    cases += [c for c in by_case if c not in set(r.cases)]  # group-less differences
    failures = sum(1 for c in cases if c in by_case)

    suite = ET.SubElement(
        root, "testsuite", name=r.lockfile, tests=str(len(cases)), failures=str(failures),
        errors="0", skipped="0",
    )
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="inputs", value=r.inputs)
    for w in r.warnings:  # another installed engine release, a removed variable set here
        ET.SubElement(props, "property", name="warning", value=w.message)
    for dep, group in cases:
        case = ET.SubElement(
            suite, "testcase", classname=dep,
            name=group if group is not None else ("(lockfile)" if dep == "(lockfile)" else "(deployment)"),
            file=r.lockfile,
        )
        found = by_case.get((dep, group))
        if found:
            case.set("line", str(found[0][1]))
            failure = ET.SubElement(
                case, "failure", type="LockMismatch",
                message=found[0][0].message() + (f" (and {len(found) - 1} more)" if len(found) > 1 else ""),
            )
            failure.text = _failure_text(found, r.lockfile)
    if r.warnings:
        # CI report viewers show a suite's system-err; properties they often hide
        ET.SubElement(suite, "system-err").text = "".join(f"warning: {w.message}\n" for w in r.warnings)
    return len(cases), failures


def check_junit(r: CheckReport) -> str:
    root = ET.Element("testsuites", name=SUITE)
    tests, failures = check_suite(root, r)
    for k, v in (("tests", tests), ("failures", failures), ("errors", 0)):
        root.set(k, str(v))
    return xml_document(root)


render = by_report_type("JUnit", CheckReport=check_junit)
