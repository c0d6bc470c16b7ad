# SPDX-License-Identifier: MIT
"""Debian's own binaries as test inputs (issue 24 item 7 and its measured part): rt-tests'
oslat and cyclictest and stress-ng, unchanged from Debian's arm64 packages, with every
library they need, in an initrd overlay the kernel is handed (tools/fetch-debs --with-libs,
tools/deb-initrd; `make run DEB='rt-tests stress-ng'` boots the same).

When the packages cannot be had (no network to Debian's archive), each test says skipped with
fetch-debs's reason.  The programs are dynamically linked: until the kernel runs such programs
(issue 24 item 1), the tests that run them say skipped with the refusal the shell printed.
"""

import re
import subprocess

import pytest

import zt

DEBS = zt.BUILD / "debs"
ROOTS = ("rt-tests", "stress-ng")
PROGRAMS = ("usr/bin/oslat", "usr/bin/cyclictest", "usr/bin/stress-ng")
TIMEOUT = 600

deb_initrd = zt.tool_module("deb-initrd")


@pytest.fixture(scope="module")
def overlay():
    """The overlay archive and its members {path: (mode, size)}; skips when unavailable."""
    subprocess.run([str(zt.REPO / "tools" / "fetch-debs"), "--with-libs", str(DEBS), *ROOTS],
                   check=True, stdout=subprocess.DEVNULL)
    try:
        pkgs = deb_initrd.packages(ROOTS, DEBS)
    except deb_initrd.Unavailable as e:
        pytest.skip(f"Debian's packages unavailable: {e}")
    out = DEBS / "initrd-test.cpio"
    deb_initrd.archive(deb_initrd.entries(pkgs, DEBS), out)
    listing = subprocess.run(["cpio", "-itv", "--quiet"], stdin=open(out, "rb"),
                             capture_output=True, text=True, check=True).stdout
    members = {}
    for line in listing.splitlines():
        f = line.split()
        name = f[8] if len(f) > 8 else f[-1]
        members[name] = (f[0], int(f[4]))
    return out, members


def test_deb01_overlay_holds_what_the_programs_need(overlay):
    """DEB-01: the overlay holds oslat, cyclictest and stress-ng, their interpreter, and every
    library each needs, and each library's own (DT_NEEDED followed to the end, as ld.so does),
    at paths glibc's loader searches without ld.so.cache."""
    _, members = overlay
    search = ("lib/aarch64-linux-gnu", "usr/lib/aarch64-linux-gnu", "lib", "usr/lib")
    todo, seen = list(PROGRAMS), set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        assert path in members, path
        src = next((DEBS / p / path for p in deb_initrd.packages(ROOTS, DEBS)
                    if (DEBS / p / path).exists()), None)
        assert src is not None, path
        for need in deb_initrd.needed(src.resolve()):
            if need.startswith("/"):
                todo.append(need.lstrip("/"))
                continue
            found = [f"{d}/{need}" for d in search if f"{d}/{need}" in members]
            assert found, (path, need)
            todo.append(found[0])
    assert len(seen) > 20, seen  # stress-ng alone links a dozen, its GPU stressor's among them
    assert members["usr/bin/oslat"][0].startswith("-rwx"), members["usr/bin/oslat"]


def boot_overlay(overlay, cmd, cpus=4, extra="", **kw):
    ird, _ = overlay
    return zt.boot(cpus=cpus, bootargs=f"quiet {extra} init=/bin/sh -- -c '{cmd}'", initrd=ird,
                   timeout=TIMEOUT, **kw)


def skip_unless_runs(b, program):
    m = re.search(rf"sh: {re.escape(program)}: cannot run: (\w+)", b.console)
    if m:
        pytest.skip(f"{program} is dynamically linked and this kernel refuses it "
                    f"({m.group(1)}): dynamic ELF is issue 24 item 1")


def test_deb02_files_in_the_tree(overlay):
    """DEB-02: booted with the overlay, the packages' files are in the tree at their Debian
    paths with their sizes (the loader's link resolves to the library), and running one says
    what the kernel makes of it."""
    _, members = overlay
    b = boot_overlay(overlay, "proctest loop 0 /usr/bin/oslat /lib/ld-linux-aarch64.so.1 "
                     "/usr/lib/aarch64-linux-gnu; /usr/bin/oslat --help", cpus=2)
    assert re.search(r"proctest loop: 3 reads, 0 failed", b.console), b
    assert "initrd: " in b.console and "members from the boot loader's archive" in b.console, b
    skip_unless_runs(b, "/usr/bin/oslat")
    assert "oslat" in b.console.split("--help")[-1], b


@pytest.mark.parallel_vcpus
def test_deb03_oslat_on_an_isolated_cpu(overlay):
    """DEB-03: Debian's oslat runs 5 s on isolated CPU 3 and prints its summary (minimum,
    average, maximum of the gaps it saw)."""
    b = boot_overlay(overlay, "/usr/bin/oslat -c 3 -D 5", extra="dataplane=3")
    skip_unless_runs(b, "/usr/bin/oslat")
    assert b.status == 0, b
    for key in ("Minimum", "Average", "Maximum", "Max-Min", "Duration"):
        assert re.search(rf"^\s*{key}:\s+[\d.]+ \((us|sec)\)", b.console, re.M), (key, b)
    assert re.search(r"^\s*Core:\s+3\s*$", b.console, re.M), b  # it sampled CPU 3


@pytest.mark.parallel_vcpus
def test_deb04_cyclictest_isolated_and_housekeeping(overlay):
    """DEB-04: Debian's cyclictest runs 5 s with one thread on isolated CPU 3 and one on
    housekeeping CPU 1 and prints each thread's min/avg/max latency."""
    b = boot_overlay(overlay, "/usr/bin/cyclictest -m -q -D 5 -t 2 -a 3,1 -i 1000 -p 95",
                     extra="dataplane=3")
    skip_unless_runs(b, "/usr/bin/cyclictest")
    assert b.status == 0, b
    rows = re.findall(r"T: ?(\d) \(\s*\d+\) P:\s*(\d+) I:\s*\d+ C:\s*(\d+) Min:\s*(\d+) "
                      r"Act:\s*\d+ Avg:\s*(\d+) Max:\s*(\d+)", b.console)
    assert len(rows) == 2 and all(int(r[2]) > 0 and r[1] == "95" for r in rows), b


STRESSORS = ("cpu", "vm", "mmap", "fork", "pipe", "switch", "futex", "timer")
# Sizes and rates for an emulated machine: 16 MiB for vm (default 256 MiB, every page of it
# populated and verified), 8 MiB for mmap, 1 kHz for the timer (default 1 MHz); a writable
# place for the files some stressors make (the root is read-only).
STRESS_ARGS = ("--temp-path /tmp --vm-bytes 16M --mmap-bytes 8M --timer-freq 1000 --verify "
               "-t 10 --metrics-brief")


def test_deb05_stress_ng_stressors(overlay):
    """DEB-05: Debian's stress-ng runs cpu, vm, mmap, fork, pipe, switch, futex and timer (one
    instance each, --verify) for 10 s on housekeeping, each reports its bogo operations, and
    it ends with its success line."""
    args = " ".join(f"--{s} 1" for s in STRESSORS)
    b = boot_overlay(overlay, f"/usr/bin/stress-ng {args} {STRESS_ARGS}", extra="dataplane=3")
    skip_unless_runs(b, "/usr/bin/stress-ng")
    assert "successful run completed" in b.console, b
    for s in STRESSORS:
        assert re.search(rf"stress-ng: metrc: \[\d+\] {s} +\d+ ", b.console), (s, b)
    assert b.status == 0, b
