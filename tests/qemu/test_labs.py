# SPDX-License-Identifier: MIT
"""The labs' machinery (labs/README.md, tools/lab): the quick form of the lab check that
`make test` runs.  The full grading of every lab's starting tree, reference and wrong
solutions is `make lab-ci` (run by .ci/run after make test).

LAB-01  the body finder on fixture files: braces in comments, strings, characters and
        directives; attributes; old-style (K&R) definitions; prototypes and uses are not
        definitions; a name defined twice, or a file it cannot read, is an error naming it
LAB-02  on every file a lab names, the finder's definitions are exactly the functions gcc
        emits (-O0 -fkeep-static-functions)
LAB-03  every lab description holds against this tree; one naming a function that no longer
        exists fails with the lab, the file and the function
LAB-04  bad input: make lab LAB=unknown lists the labs, make grade outside a lab tree says how
        to start one, a lab tree refuses to make labs and to grade another lab
LAB-05  every lab's starting tree builds and boots to the shell; it differs from this tree
        only inside the bodies the lab names
LAB-06  make lab's worktree: one parentless commit on lab/NAME, stubs in, wrong solutions out;
        handin's patch, and collect takes only the lab's files from it
LAB-07  make grade's report: one line per graded test with its points, and the score
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import zt

REPO = zt.REPO
DATA = Path(__file__).resolve().parent / "data" / "labs"
lab = zt.tool_module("lab")


def run(args, cwd=REPO, **kw):
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, **kw)


# ---------------------------------------------------------------- LAB-01


def test_lab01_body_finder_fixtures(tmp_path):
    """LAB-01: the body finder finds the one definition of a name past braces and the name in
    comments, strings, characters and directives, past a prototype, a use and a member; it
    handles attributes, K&R parameter lists and parameters over several lines; replacing a
    body changes nothing else; a name defined twice, absent, or in a file it cannot scan is
    an error that names the function."""
    text = (DATA / "tricky.c.in").read_text()
    f = lab.find_function("tricky.c", "target", text)
    body = f.body(text)
    assert "BODY-START" in body and "BODY-END" in body and "a string with" not in body, body
    assert text[f.open_at] == "{" and text[f.close_at] == "}"
    assert f.line == text[:text.index("target(void)\n{")].count("\n") + 1, f.line
    new = lab.replace_body(text, f, "/* lab: yours */\nreturn -1;")
    assert new == text[:f.open_at + 1] + "\n    /* lab: yours */\n    return -1;\n" + \
        text[f.close_at:], new
    assert lab.defined_names(new) == ["call", "target", "after"], lab.defined_names(new)

    kr = (DATA / "kr.c.in").read_text()
    assert lab.defined_names(kr) == ["old_style", "multi_line", "copy_it"], lab.defined_names(kr)
    for name, mark in (("old_style", "OLD-BODY"), ("multi_line", "MULTI-BODY"),
                       ("copy_it", "COPY-BODY")):
        assert mark in lab.find_function("kr.c", name, kr).body(kr), name
    for missing in ("prototype_only", "returns_pointer", "REGISTER_SOMETHING", "__attribute__"):
        with pytest.raises(lab.LabError, match=f"kr.c: no function named {missing} is defined"):
            lab.find_function("kr.c", missing, kr)

    with pytest.raises(lab.LabError, match=r"twice.c: function pick is defined 2 times "
                                           r"\(lines 3, 5\)"):
        lab.find_function("twice.c", "pick", (DATA / "twice.c.in").read_text())
    with pytest.raises(lab.LabError, match=r"broken.c: cannot scan it for function lost: "
                                           r"comment opened at offset 0 never closes"):
        lab.find_function("broken.c", "lost", (DATA / "broken.c.in").read_text())
    with pytest.raises(lab.LabError, match=r"no-such.c: cannot read it .* function lost"):
        lab.find_function(tmp_path / "no-such.c", "lost")


# ---------------------------------------------------------------- LAB-02


def always_inline(text, name):
    f = lab.find_function("x", name, text)
    return "always_inline" in text[max(0, f.name_at - 200):f.name_at]


def test_lab02_finder_agrees_with_the_compiler(tmp_path):
    """LAB-02: for every file a lab names, compiled by gcc at -O0 with every static and inline
    function kept (kernel files with the kernel's includes, user files with picolibc's; a
    header through a file that includes it): every function the finder says the file
    defines is emitted (but always_inline ones), and every function emitted is one the finder
    finds in that file or in one of the tree's headers (a C library's reserved names aside)."""
    files = sorted({f["file"] for n in lab.lab_names() for f in lab.Lab(n).functions})
    assert len(files) >= 6, files
    headers = set()
    for pattern in ("include/**/*.h", "arch/aarch64/*.h", "user/**/*.h"):
        for h in REPO.glob(pattern):
            headers |= set(lab.defined_names(h.read_text()))
    assert {"this_cpu_id", "dataplane_quiesce", "virtq_bytes"} - headers == {"virtq_bytes"}
    cc = "aarch64-linux-gnu-gcc"
    common = ["-std=gnu11", "-O0", "-fkeep-static-functions", "-fkeep-inline-functions",
              "-Iinclude", "-Iarch/aarch64", "-Ibuild/include", "-Iuser/lib", "-Iuser", "-c",
              "-o", str(tmp_path / "x.o")]
    kernel = ["-ffreestanding", "-fno-builtin", "-mgeneral-regs-only"]
    for rel in files:
        src = REPO / rel
        if rel.endswith(".h"):  # a header's inline functions: compile a file that includes it
            src = tmp_path / "h.c"
            src.write_text(f'#include "{rel.removeprefix("include/")}"\n')
        extra = ["--specs=picolibc.specs"] if rel.startswith("user/") else kernel
        r = run([cc] + common + extra + [str(src)])
        assert r.returncode == 0, (rel, r.stderr[-2000:])
        nm = run(["aarch64-linux-gnu-nm", "--defined-only", str(tmp_path / "x.o")]).stdout
        emitted = {parts[2] for parts in (line.split() for line in nm.splitlines())
                   if len(parts) == 3 and parts[1] in "Tt" and "." not in parts[2]}
        text = (REPO / rel).read_text()
        found = set(lab.defined_names(text))
        missing = {n for n in found - emitted if not always_inline(text, n)}
        unknown = {n for n in emitted - found - headers  # a C library's (reserved names) aside
                   if not re.match(r"__|_[A-Z]", n)}
        assert not missing and not unknown, (rel, "not emitted:", missing, "not found:", unknown)


# ---------------------------------------------------------------- LAB-03


def test_lab03_descriptions_hold(tmp_path):
    """LAB-03: tools/lab check passes on this tree for every lab (functions, cut texts, test
    IDs, points, wrong solutions that apply, handouts); a copy of a lab whose description
    names a function that no longer exists fails with the lab, the file and the name."""
    r = run([sys.executable, "tools/lab", "check"])
    names = lab.lab_names()
    assert r.returncode == 0 and f"{len(names)} labs hold" in r.stdout, r.stdout + r.stderr
    assert len(names) >= 5, names

    root = tmp_path / "tree"
    shutil.copytree(REPO / "labs" / "timer", root / "labs" / "timer")
    (root / "kernel").mkdir()
    shutil.copy(REPO / "kernel" / "timer.c", root / "kernel" / "timer.c")
    t = root / "labs" / "timer" / "lab.toml"
    t.write_text(t.read_text().replace('name = "timer_note_idle"', 'name = "timer_note_sleep"'))
    problems = lab.check_lab(lab.Lab("timer", root), root, index=lab.test_index(REPO))
    assert ("lab timer: " + str(root / "kernel/timer.c") +
            ": no function named timer_note_sleep is defined there") in problems, problems
    assert len([p for p in problems if "no function named" in p]) == 1, problems


# ---------------------------------------------------------------- LAB-04


def test_lab04_bad_input(tmp_path):
    """LAB-04: `make lab LAB=unknown` fails and lists every lab; `make lab` without LAB lists
    them; `make grade` outside a lab tree fails saying how to start one; in a lab tree,
    making a lab and grading another lab are refused."""
    r = run(["make", "--no-print-directory", "lab", "LAB=unknown"])
    assert r.returncode != 0, r.stdout
    assert "there is no lab named 'unknown'" in r.stderr + r.stdout, r.stdout + r.stderr
    for n in lab.lab_names():
        assert re.search(rf"\d\. {n} ", r.stderr + r.stdout), (n, r.stdout + r.stderr)
    r = run(["make", "--no-print-directory", "lab"])
    assert r.returncode != 0 and "make lab LAB=NAME" in r.stdout, r.stdout
    r = run(["make", "--no-print-directory", "grade"])
    assert r.returncode != 0, r.stdout
    assert "this is not a lab tree" in r.stdout and "make lab LAB=NAME" in r.stdout, r.stdout

    tree = tmp_path / "labtree"
    (tree / "tools").mkdir(parents=True)
    shutil.copy(REPO / "tools" / "lab", tree / "tools" / "lab")
    shutil.copytree(REPO / "labs", tree / "labs")
    (tree / ".lab").write_text('lab = "timer"\nreference = "0"\n')
    r = run([sys.executable, "tools/lab", "start", "pollrx", "--dir", str(tmp_path / "x")],
            cwd=tree)
    assert r.returncode == 2 and "this is already a lab tree" in r.stderr, r.stderr
    r = run([sys.executable, "tools/lab", "grade", "pollrx"], cwd=tree)
    assert r.returncode == 2 and "made for lab timer, not pollrx" in r.stderr, r.stderr


# ---------------------------------------------------------------- LAB-05

QUICK_BUILD = ("checked", "user", "initrd", "include", "initrd.cpio", "initrd-prog.txt",
               "linux.stamp", "asm-offsets.s", "asm-offsets.d")


@pytest.mark.parametrize("name", lab.lab_names())
def test_lab05_starting_tree_builds_and_boots(name, tmp_path, monkeypatch):
    """LAB-05: the lab's starting tree (this tree with the lab's bodies stubbed, built from a
    copy that reuses this tree's objects) builds the checked kernel with -Werror and boots
    to the shell, which runs a command and powers off; every file it changed differs from
    this tree's only inside the bodies (and cut texts) the lab names."""
    d = lab.Lab(name)
    tree = REPO / "build" / "lab" / f"quick-{name}"
    try:
        lab.copy_tree(REPO, tree, build_parts=QUICK_BUILD)
        changed = lab.apply_stubs(d, tree)
        lab.touch_now(tree, changed)
        for rel in changed:
            ref, new = (REPO / rel).read_text(), (tree / rel).read_text()
            funcs = [f for f in d.functions if f["file"] == rel]
            for f in funcs:  # the stub is in the body
                body = lab.find_function(rel, f["name"], new).body(new)
                flat = [x.strip() for x in body.splitlines() if x.strip()]
                assert flat == [x.strip() for x in f["stub"].splitlines() if x.strip()], \
                    (rel, f["name"], body)
            for f in funcs:  # and outside the bodies nothing changed
                a = lab.find_function(rel, f["name"], ref)
                ref = ref[:a.open_at] + "{}" + ref[a.close_at + 1:]
                b = lab.find_function(rel, f["name"], new)
                new = new[:b.open_at] + "{}" + new[b.close_at + 1:]
            for c in d.cuts:
                if c["file"] == rel:
                    ref = ref.replace(c["text"], "", 1)
            assert ref == new, f"{rel}: changed outside the lab's bodies"
        r = run(["make", "--no-print-directory", "-j2", "build/checked/kernel.elf"], cwd=tree)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        monkeypatch.setattr(zt, "KERNEL", tree / "build" / "checked" / "kernel.elf")
        with zt.Console(cpus=4, bootargs="quiet dataplane=2-3") as con:
            con.expect(r"zt\$ ", timeout=120)
            con.sendline("hello 0; poweroff 0")
            con.expect(r"poweroff: requested by pid \d+, exit status 0", timeout=120)
            status = con.wait(timeout=120)
        assert status == 0, con.output[-3000:]
    finally:
        shutil.rmtree(tree, ignore_errors=True)


# ---------------------------------------------------------------- LAB-06


def test_lab06_make_lab_worktree_handin_collect(tmp_path):
    """LAB-06: in a clone, `make lab LAB=timer DIR=...` makes a worktree on branch lab/timer
    whose one commit has no parent, with the lab's bodies stubbed, a .lab file naming the lab
    and the reference commit, and no labs/*/wrong/; a student's commit there (the reference
    body of one function back, and a test edited) becomes handin's patch; collect applies
    the lab's file from it to a fresh starting tree and lists the test as left out."""
    clone = tmp_path / "zt"
    r = run(["git", "clone", "-q", "--shared", str(REPO), str(clone)])
    assert r.returncode == 0, r.stderr
    # The clone has the committed tree; let it see this tree's tools/lab and labs/ as they are.
    shutil.copy(REPO / "tools" / "lab", clone / "tools" / "lab")
    shutil.rmtree(clone / "labs")
    shutil.copytree(REPO / "labs", clone / "labs")
    run(["git", "add", "-A"], cwd=clone)
    run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "now"], cwd=clone)
    head = run(["git", "rev-parse", "HEAD"], cwd=clone).stdout.strip()
    dest = tmp_path / "student"
    r = run([sys.executable, "tools/lab", "start", "timer", "--dir", str(dest)], cwd=clone,
            env=dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
                     GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"then: cd {dest} && make grade" in r.stdout, r.stdout
    assert run(["git", "rev-parse", "--abbrev-ref", "HEAD"], cwd=dest).stdout.strip() == "lab/timer"
    assert run(["git", "rev-list", "--count", "HEAD"], cwd=dest).stdout.strip() == "1"
    assert run(["git", "rev-list", "--parents", "-1", "HEAD"], cwd=dest).stdout.split() == \
        [run(["git", "rev-parse", "HEAD"], cwd=dest).stdout.strip()]
    assert (dest / ".lab").read_text() == f'lab = "timer"\nreference = "{head}"\n'
    assert not list((dest / "labs").glob("*/wrong/*")), list((dest / "labs").glob("*/wrong/*"))
    timer = (dest / "kernel" / "timer.c").read_text()
    assert "return in->earliest_timer;" in lab.find_function("t", "compute_deadline", timer).body(
        timer)
    assert (dest / "kernel" / "sched.c").read_text() == (REPO / "kernel" / "sched.c").read_text()

    # The student writes compute_deadline (the reference's, here) and edits a test.
    ref = (REPO / "kernel" / "timer.c").read_text()
    f_ref = lab.find_function("r", "compute_deadline", ref)
    f_new = lab.find_function("t", "compute_deadline", timer)
    (dest / "kernel" / "timer.c").write_text(
        timer[:f_new.open_at] + ref[f_ref.open_at:f_ref.close_at + 1] + timer[f_new.close_at + 1:])
    with open(dest / "tests" / "unit" / "test_timer.c", "a") as f:
        f.write("/* a student's edit */\n")
    run(["git", "-c", "user.name=s", "-c", "user.email=s@s", "commit", "-qam", "mine"], cwd=dest)
    r = run([sys.executable, "tools/lab", "handin"], cwd=dest)
    assert r.returncode == 0, r.stderr
    patch = dest / "handin-timer.patch"
    assert "2 files changed" in r.stdout and patch.is_file(), r.stdout

    fresh = REPO / "build" / "lab" / "collect-test"
    try:
        left_out = lab.collect(lab.Lab("timer"), patch, fresh)
        assert left_out == ["tests/unit/test_timer.c"], left_out
        got = (fresh / "kernel" / "timer.c").read_text()
        body = lab.find_function("c", "compute_deadline", got).body(got)
        assert body == f_ref.body(ref), body
        assert "return in->earliest_timer;" not in body
        assert "timer_note_change(" not in lab.find_function("c", "timer_note_slice", got).body(
            got)  # still the stub: the student did not write it
        assert (fresh / "tests" / "unit" / "test_timer.c").read_text() == \
            (REPO / "tests" / "unit" / "test_timer.c").read_text()
    finally:
        shutil.rmtree(fresh, ignore_errors=True)
        run(["git", "worktree", "remove", "--force", str(dest)], cwd=clone)


# ---------------------------------------------------------------- LAB-07

FIXTURE_LAB = """
title = "fixture"
order = 1
hours = "1"

[[function]]
file = "kernel/timer.c"
name = "compute_deadline"
stub = "return 0;"

[[test]]
name = "first_part"
ids = ["TMR-01"]
points = 40

[[test]]
name = "second_part"
ids = ["TMR-02", "TMR-03"]
points = 60
"""


def test_lab07_grade_report(tmp_path):
    """LAB-07: grading this tree (the reference) for a lab of two graded tests, one of two
    IDs: one `== Test NAME == ok (N pts)` line per test, in the description's order, then
    `Score: 100/100`; the JSON report has the score and each test's result.  A failed unit
    test's reason is its own: cmocka's lines after its result line (and what it printed
    before it), never its neighbour's."""
    (tmp_path / "labs" / "fixture").mkdir(parents=True)
    (tmp_path / "labs" / "fixture" / "lab.toml").write_text(FIXTURE_LAB)
    lines = []
    results, score = lab.grade(lab.Lab("fixture", tmp_path), REPO, out=lines.append,
                               json_path=tmp_path / "grade.json")
    report = [line for line in lines if line.startswith(("==", "Score"))]
    assert report == ["== Test first_part == ok (40 pts)", "== Test second_part == ok (60 pts)",
                      "Score: 100/100"], lines
    assert score == 100
    assert '"score": 100' in (tmp_path / "grade.json").read_text()

    fake = tmp_path / "build" / "host" / "tests" / "test_fake"
    fake.parent.mkdir(parents=True)
    fake.write_text(CMOCKA_TAP)
    fake.chmod(0o755)
    got = lab.run_unit(tmp_path, "test_fake", dict(os.environ))
    assert got["first_case"] == (False, "# 0 != 0x8\n# t.c:10: error: Failure!"), got
    assert got["second_case"] == (False, "# 0x1 != 0\n# t.c:20: error: Failure!\n"
                                         "printed by the second case"), got
    assert got["third_case"] == (True, ""), got
    assert got["__binary__"][0] is False, got


# What a cmocka binary prints with CMOCKA_MESSAGE_OUTPUT=TAP (cmocka 1.1), two of three failing.
CMOCKA_TAP = """#!/bin/sh
cat <<'EOF'
1..3
not ok 1 - first_case
# 0 != 0x8
# t.c:10: error: Failure!
printed by the second case
not ok 2 - second_case
# 0x1 != 0
# t.c:20: error: Failure!
ok 3 - third_case
# not ok - tests
EOF
exit 1
"""
