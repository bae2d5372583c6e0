"""A test module that defines one name twice runs only the later definition: the earlier test is
silently gone (a merge left two copies in tests/test_headline_status.py once)."""

from __future__ import annotations

import ast
from collections import Counter

from tests.conftest import ROOT


def test_no_test_module_defines_a_name_twice() -> None:
    twice = {}
    for path in sorted((ROOT / "tests").glob("*.py")):
        tree = ast.parse(path.read_text())
        names = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
        repeated = sorted(name for name, count in Counter(names).items() if count > 1)
        if repeated:
            twice[path.name] = repeated
    assert twice == {}
