# SPDX-License-Identifier: MIT
"""The test suite's own rules, checked without booting anything.

META-01: every test has a stable ID (a pytest test's docstring starts with "XXX-NN:", a
cmocka test is preceded by a "/* XXX-NN: ... */" comment) and no ID names two tests.  A
parametrized test is one test: its cases share the ID.
"""

import ast
import re
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ID_RE = re.compile(r"^([A-Z]{2,5}-\d{2})\b")
UNIT_RE = re.compile(r"/\*\s*([A-Z]{2,5}-\d{2})\b[^*]*?(?:\*(?!/)[^*]*?)*\*/\s*\nstatic void (\w+)\(",
                     re.S)


def pytest_ids():
    """{ID: [file::function]} and the test functions that have no ID."""
    ids, missing = defaultdict(list), []
    for path in sorted((REPO / "tests" / "qemu").glob("test_*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                m = ID_RE.match(ast.get_docstring(node) or "")
                where = f"{path.name}::{node.name}"
                if m:
                    ids[m.group(1)].append(where)
                else:
                    missing.append(where)
    return ids, missing


def unit_ids():
    """{ID: [file::function]} for the cmocka tests."""
    ids = defaultdict(list)
    for path in sorted((REPO / "tests" / "unit").glob("test_*.c")):
        for m in UNIT_RE.finditer(path.read_text()):
            ids[m.group(1)].append(f"{path.name}::{m.group(2)}")
    return ids


def test_meta01_test_ids_are_unique():
    """META-01: every pytest test has an ID, and no ID (pytest or cmocka) names two tests."""
    py, missing = pytest_ids()
    unit = unit_ids()
    assert not missing, f"tests without an ID: {missing}"
    assert len(unit) > 50, f"only {len(unit)} cmocka IDs found: the pattern no longer matches"
    dup = {i: w for i, w in list(py.items()) + list(unit.items()) if len(w) > 1}
    shared = set(py) & set(unit)
    assert not dup, f"IDs used by more than one test: {dup}"
    assert not shared, f"IDs used in both suites: {sorted(shared)}"
