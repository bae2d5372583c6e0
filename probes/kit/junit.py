"""A campaign's verdicts as a JUnit XML report, and the exit status a CI job fails on.

CI systems (GitHub Actions, GitLab, Jenkins) show a JUnit report per test case: here one
test case per property × path (a path measured on several backends or repetitions is
one case per receipt, so none hides another), named ``<property> <path> [<backend>]``.
A label the maintainer chose to fail on (``--fail-on ✗,U``) is a ``<failure>`` carrying
the summary, the witness (the events that break the property) and the citation; n/a is
``<skipped>``; a harness error is an ``<error>`` (the measurement broke: no verdict).
Everything else passes. The report is written atomically.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Iterable, Sequence

from probes.core.atomic import atomic_write_bytes
from probes.core.checker import Label, Verdict
from probes.core.errors import UsageError
from probes.core.receipt import Receipt

# what --fail-on accepts: the labels, and their ASCII spellings for shells and YAML files
DEFAULT_FAIL_ON = frozenset({Label.FAIL, Label.UNDOC})  # a JUnit report without --fail-on: undocumented violations
LABEL_NAMES = {"✓": Label.PASS, "pass": Label.PASS, "✗": Label.FAIL, "x": Label.FAIL, "fail": Label.FAIL,
               "D": Label.DOC, "U": Label.UNDOC, "n/a": Label.NA, "na": Label.NA}


def parse_fail_on(text: str) -> frozenset[Label]:
    """``"✗,U"`` -> the labels that fail the run; an unknown name is a usage error (exit 2)."""
    labels = set()
    for name in (part.strip() for part in text.split(",")):
        if not name:
            continue
        label = LABEL_NAMES.get(name) or LABEL_NAMES.get(name.lower())
        if label is None:
            raise UsageError(f"--fail-on takes labels from {', '.join(sorted(set(LABEL_NAMES)))}, "
                             f"comma-separated; got {name!r}")
        labels.add(label)
    if not labels:
        raise UsageError("--fail-on needs at least one label, e.g. --fail-on '✗,U'")
    return frozenset(labels)


def failing(receipts: Iterable[Receipt], fail_on: frozenset[Label]) -> list[Verdict]:
    return [v for r in receipts for v in r.verdicts if v.label in fail_on]


def _case_name(v: Verdict) -> str:
    return f"{v.property.value} {v.path} [{v.backend}]"


def _failure_text(v: Verdict) -> str:
    lines = [v.summary]
    witness = v.evidence.get("witness")
    if witness:
        lines += ["witness:", *(json.dumps(e, sort_keys=True, ensure_ascii=False) for e in witness)]
    if v.doc is not None:
        lines.append(f"citation: {v.doc.cite()}")
    else:
        lines.append("citation: none (the documentation does not address this property)")
    return "\n".join(lines)


def report(campaign: str, receipts: Sequence[Receipt], fail_on: frozenset[Label]) -> ET.Element:
    """The JUnit ``<testsuites>`` tree: one suite per campaign probe family (the receipt's probe)."""
    root = ET.Element("testsuites", name=f"resume-contract {campaign}")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for r in sorted(receipts, key=lambda r: r.probe):
        suite = ET.SubElement(root, "testsuite", name=f"{campaign}.{r.probe}")
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        for error in r.harness_errors:
            case = ET.SubElement(suite, "testcase", classname=f"{campaign}.{r.probe}", name="harness")
            ET.SubElement(case, "error", message="harness error: no verdict").text = error
            counts["tests"] += 1
            counts["errors"] += 1
        for v in r.verdicts:
            case = ET.SubElement(suite, "testcase", classname=f"{campaign}.{r.probe}", name=_case_name(v))
            counts["tests"] += 1
            if v.label is Label.NA and Label.NA not in fail_on:
                ET.SubElement(case, "skipped", message=v.summary)
                counts["skipped"] += 1
            elif v.label in fail_on:
                failure = ET.SubElement(case, "failure", message=f"{v.label.value}: {v.summary}"[:500],
                                        type=v.label.value)
                failure.text = _failure_text(v)
                counts["failures"] += 1
            ET.SubElement(case, "system-out").text = f"{v.label.value} {v.summary}"
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
    for key, value in totals.items():
        root.set(key, str(value))
    return root


def write(path: Path, campaign: str, receipts: Sequence[Receipt], fail_on: frozenset[Label]) -> Path:
    tree = ET.ElementTree(report(campaign, receipts, fail_on))
    ET.indent(tree)
    data = ET.tostring(tree.getroot(), encoding="utf-8", xml_declaration=True) + b"\n"
    atomic_write_bytes(Path(path), data)
    return Path(path)
