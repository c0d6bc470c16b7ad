# SPDX-License-Identifier: MIT
"""The documentation's samples are checked (issue 21, "make the docs checkable"): every block
a page marks with `<!-- doccheck: ... -->` is run and compared by tools/doccheck (its rules
are in its header; docs/README.md says how a page uses them).

DOC-01 checks the matcher itself on made-up consoles (no boot); DOC-02 runs every marked
sample of README.md and docs/*.md, one case per sample, named PAGE:LINE; DOC-03 checks that
the pages still mark the samples the issue asked for (README's boot, docs/boot.md's, the shown
runs of docs/isolation.md and docs/dataplane.md, the glibc example of docs/isolation.md).
"""

import pytest

import zt

doccheck = zt.tool_module("doccheck")
SAMPLES = doccheck.all_samples()


def test_doc01_matcher_rules():
    """DOC-01: the matcher's rules: consecutive lines, `...` lines and in-line `...`, `~N`
    for each shape of number, blanks of any length, and a mismatch names the line."""
    m = doccheck.match
    console = ["noise", "a: 1", "cpu  0  took   12 ms", "b: 0x1f3", "c: 1,234 and 5.5", "end"]
    assert m(["a: 1", "cpu 0 took ~7 ms", "b: ~0xa", "c: ~9,999 and ~1.0"], console) is None
    assert m(["a: 1", "...", "end"], console) is None
    assert m(["a: ...", "cpu ... ms"], console) is None
    assert m(["a: 1", "b: ~0xa"], console) is not None  # a line in between: not consecutive
    assert m(["cpu 0 took 13 ms"], console) is not None  # a number without ~ is exact
    assert m(["cpu 0 took ~7.5 ms"], console) is not None  # ~N.N wants a fraction
    assert m(["c: ~1 and ~1.0"], console) is not None  # ~N does not match 1,234
    assert m(["a: 1", "end"], console) is not None
    msg = m(["a: 1", "cpu 0 took 99 ms"], console)
    assert msg and "cpu 0 took 99 ms" in msg
    assert m([], console) is None and m(["..."], []) is None
    regs = ["  ELR  ffffff804020668c  SPSR 00000000600003c5", "panic: stopping"]
    assert m(["ELR ~ffffff8040200000 SPSR 00000000600003c5", "panic: stopping"], regs) is None
    assert m(["ELR ~ffffff8040200000 SPSR 00000000600003c6"], regs) is not None
    sample = doccheck.Sample("x.md", 1, "boot", {}, ["a: 1    # a note for the reader", ""])
    assert doccheck.expected_lines(sample) == ["a: 1"]
    assert doccheck.match(doccheck.expected_lines(sample), console) is None


@pytest.mark.parametrize("sample", SAMPLES, ids=[s.name for s in SAMPLES])
def test_doc02_samples_match_a_run(sample):
    """DOC-02: a marked sample of a page matches a run of what it shows (boot: the console to
    power-off; shell: each typed command's output; compile: the C builds against glibc)."""
    if sample.opts.get("parallel") == "1" and zt.repro_shift() is not None:
        pytest.skip("REPRO=1 (-icount) runs vCPUs round-robin; this sample needs them in parallel")
    problem = doccheck.check(sample, zt)
    assert problem is None, problem


def test_doc03_required_samples_marked():
    """DOC-03: the samples the issue named stay under the check: README's sample boot, each of
    docs/boot.md's console samples that a boot can show, isolation.md's audits and glibc
    example, dataplane.md's shown run (the guest's side), partition.md's session."""
    pages = {}
    for s in SAMPLES:
        pages.setdefault(s.page, []).append(s.kind)
    assert pages.get("README.md"), pages
    assert pages.get("docs/boot.md", []).count("boot") >= 5, pages
    assert "compile" in pages.get("docs/isolation.md", []), pages
    assert pages.get("docs/isolation.md", []).count("shell") >= 1, pages
    assert "shell" in pages.get("docs/partition.md", []), pages
    assert pages.get("docs/dataplane.md"), pages
