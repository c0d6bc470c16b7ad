# SPDX-License-Identifier: MIT
"""The coverage kernel and the fuzzer that follows it (issue 20): build/cover/kernel.elf
records, per task, the kernel blocks its system calls reach (zt_kcov, include/uapi/
zt_debug.h); /bin/fuzz -c keeps the programs that reached new blocks and mutates them; and
tools/covreport turns a run's bitmaps into blocks reached by file.  The long coverage runs
are `make fuzz FUZZ_COVER=1` (docs/security.md).
"""

import re

import pytest

import zt

COVER = zt.BUILD / "cover" / "kernel.elf"
TIMEOUT = 900
NET = ["-netdev", "user,id=n0,restrict=on", "-device", "virtio-net-device,netdev=n0"]


def cover_kernel():
    if not COVER.exists():
        pytest.skip("build/cover/kernel.elf not built (make test builds it: make cover)")
    return COVER


def covreport():
    return zt.tool_module("covreport")


def test_cov01_one_call_recorded():
    """COV-01: the coverage kernel boots, and one getpid recorded by zt_kcov reaches a
    non-zero number of blocks, every one a block of the kernel's instrumented code, among
    them sys_getpid's and the system-call entry's."""
    elf = cover_kernel()
    b = zt.boot(cpus=2, bootargs="quiet init=/bin/fuzz -- -k", kernel=elf)
    assert b.status == 0, b
    m = re.search(r"kcov: getpid reached (\d+) blocks", b.console)
    assert m and 0 < int(m.group(1)) < 300, b
    blocks = [int(x, 16) for x in re.findall(r"^kcov: block (0x[0-9a-f]+)", b.console, re.M)]
    assert len(blocks) == int(m.group(1)), b
    points = set(covreport().points(elf))
    assert set(blocks) <= points, sorted(set(blocks) - points)
    names = " ".join(zt.tool_module("ksym").names(elf, blocks).values())
    assert "sys_getpid" in names and "kernel_syscall_enter" in names, names


def test_cov02_kernels_without_coverage_say_so():
    """COV-02: the release and checked kernels have no instrumentation: zt_kcov answers
    -ENODEV (fuzz -k says so), and fuzz -c refuses to start on them."""
    b = zt.boot(cpus=1, bootargs="quiet init=/bin/fuzz -- -k")
    assert b.line_matching(r"^kcov: this kernel records no coverage"), b
    assert b.status == 1, b
    b = zt.boot(cpus=1, bootargs="quiet init=/bin/fuzz -- -n 10 -s 1 -c")
    assert b.line_matching(r"^fuzz: -c needs the coverage kernel"), b
    assert b.status == 2, b
    release = zt.BUILD / "kernel.elf"
    out = zt.tool_module("covreport").points(release) if release.exists() else []
    assert out == [], "the release kernel has %d coverage calls" % len(out)


@pytest.fixture(scope="module")
def cover_round():
    elf = cover_kernel()
    b = zt.boot(cpus=4, bootargs="quiet init=/bin/fuzz -- -n 1200 -s 0x5eed -w 4 -l 300 -c",
                timeout=TIMEOUT, extra=NET, kernel=elf)
    text = b.console.replace("\0", "")
    assert "panic" not in text, b
    return b, zt.tool_module("fuzzsum").summarize(text), covreport().report(elf, text)


def test_cov03_coverage_guided_round(cover_round):
    """COV-03: a short coverage-guided round (1,200 calls, 4 workers, lives of 300): the
    kernel survives it (PASS: no fault, memory back), lives keep programs that reached new
    blocks and mutate the corpus the others kept, and some programs ran in colliding
    threads."""
    b, s, r = cover_round
    assert s["verdict"] == "PASS" and b.status == 0, b
    p = s["programs"]
    assert p["kept"] > 0 and p["mutated"] > p["programs"] // 3 and p["collided"] > 0, p
    assert s["coverage"] and s["coverage"]["corpus"] == p["kept"], (s["coverage"], p)


def test_cov04_report_by_file(cover_round):
    """COV-04: tools/covreport reads the round's bitmaps against the coverage kernel: every
    bit names a block of the ELF file, the blocks reached add up to what the kernel counted,
    every kernel/ file is in the table, and most system-call handlers were reached."""
    b, s, r = cover_round
    t = r["total"]
    assert r["not_points"] == 0, r["not_points"]
    assert t["machine"] == s["coverage"]["machine"], (t, s["coverage"])
    assert t["everywhere"] == s["coverage"]["everywhere"], (t, s["coverage"])
    assert 0 < t["machine"] <= t["everywhere"] < t["blocks"], t
    assert "kernel/sys/syscall.c" in r["files"] and "kernel/fs/vfs.c" in r["files"], r["files"]
    reached = [h for h in r["handlers"] if h["reached"]]
    assert len(reached) > len(r["handlers"]) * 3 // 4, [h["call"] for h in r["handlers"]
                                                        if not h["reached"]]
