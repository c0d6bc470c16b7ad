# SPDX-License-Identifier: MIT
"""The test suite's own rules, checked without booting anything.

META-01: every test has a stable ID (a pytest test's docstring starts with "XXX-NN:", a
cmocka test is preceded by a "/* XXX-NN: ... */" comment) and no ID names two tests.  A
parametrized test is one test: its cases share the ID.
META-02..03: the layers of docs/layout.md hold (tools/layers), and the check itself fails what
it should.  META-04: every source file carries its SPDX license line.  META-05: nothing names
a path outside the repository.
"""

import ast
import re
import subprocess
import sys
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


def run_layers(root):
    """tools/layers on a tree: (exit status, output)."""
    r = subprocess.run([sys.executable, str(REPO / "tools" / "layers"), "--root", str(root)],
                       capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout + r.stderr


def test_meta02_layers_hold():
    """META-02: no kernel file includes a header of a layer above its own (docs/layout.md)."""
    status, out = run_layers(REPO)
    assert status == 0 and "layers: clean" in out, out


LAYOUT_FIXTURE = """# fixture
```layers
low   kernel/low/
high  kernel/high/
```
```allow
%s
```
"""


def layer_fixture(tmp_path, low_includes, allow=""):
    """A two-layer tree: kernel/low/a.c includes `low_includes`, kernel/high/b.c includes a.h."""
    (tmp_path / "docs").mkdir(parents=True)
    (tmp_path / "docs" / "layout.md").write_text(LAYOUT_FIXTURE % allow)
    for d in ("kernel/low", "kernel/high", "include/kernel"):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / "include/kernel/a.h").write_text("/* a */\n")
    (tmp_path / "include/kernel/b.h").write_text("/* b */\n")
    (tmp_path / "kernel/low/a.c").write_text(
        '#include "kernel/a.h"\n' + "".join(f'#include "kernel/{h}.h"\n' for h in low_includes))
    (tmp_path / "kernel/high/b.c").write_text('#include "kernel/b.h"\n#include "kernel/a.h"\n')
    return tmp_path


def test_meta03_layer_check_fails_on_upward_include(tmp_path):
    """META-03: the layer check fails a fixture tree where a lower file includes a higher header,
    passes it once the allow block names the include with a reason, and fails a stale allow
    line."""
    status, out = run_layers(layer_fixture(tmp_path / "up", ["b"]))
    assert status == 1 and "kernel/low/a.c (low) includes kernel/b.h (high)" in out, out
    status, out = run_layers(layer_fixture(tmp_path / "ok", []))
    assert status == 0, out
    allowed = layer_fixture(tmp_path / "allowed", ["b"], "kernel/low/a.c -> kernel/b.h  # why")
    status, out = run_layers(allowed)
    assert status == 0, out
    stale = layer_fixture(tmp_path / "stale", [], "kernel/low/a.c -> kernel/b.h  # why")
    status, out = run_layers(stale)
    assert status == 1 and "matches no upward include" in out, out
    unplaced = layer_fixture(tmp_path / "unplaced", [])
    (unplaced / "kernel/c.c").write_text("/* in no layer */\n")
    status, out = run_layers(unplaced)
    assert status == 2 and "kernel/c.c is in no layer" in out, out


SPDX = "SPDX-License-Identifier: MIT"


def source_files():
    """Every source file git knows: C, assembly, linker scripts, Python, shell, make, tools."""
    files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True,
                           check=True).stdout.split()
    pick = re.compile(r"\.(c|h|S|ld|py|sh)$")
    return [f for f in files if not f.startswith("tests/qemu/data/") and
            (pick.search(f) or f in ("Makefile", ".ci/run") or f.startswith("tools/"))]


def test_meta04_every_source_file_has_its_license_line():
    """META-04: every source file names its license (LICENSE, MIT) in its first two lines."""
    files = source_files()
    assert len(files) > 200, f"only {len(files)} source files found"
    missing = [f for f in files if SPDX not in "".join((REPO / f).read_text().splitlines(True)[:2])]
    assert (REPO / "LICENSE").read_text().startswith("MIT License")
    assert not missing, f"files without '{SPDX}' in their first two lines: {missing}"


def test_meta05_nothing_points_outside_the_repository():
    """META-05: committed reports and sources name no absolute build path of the machine that
    wrote them, and nothing refers to files outside the repository (../shared and the like)."""
    files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True,
                           check=True).stdout.split()
    absolute = re.compile(r"""(^|[\s'"(=`])/[A-Za-z0-9._/-]+/build/""")
    outside = re.compile(r"\.\./shared\b|/work/")
    bad = []
    for f in files:
        if f.endswith(".png") or f.startswith("tests/qemu/data/"):
            continue
        text = (REPO / f).read_text(errors="replace")
        if f.endswith((".md", ".txt", ".json")) and absolute.search(text):
            bad.append(f"{f}: an absolute build path")
        if outside.search(text) and f != "tests/qemu/test_meta.py":
            bad.append(f"{f}: a path outside the repository")
    assert not bad, bad
