# SPDX-License-Identifier: MIT
"""The vDSO (issue 24 item 4): glibc's clock calls answered at EL0 by linux-vdso.so.1
(arch/aarch64/vdso/, kernel/proc/vdso.c), checked against the system calls, and proven to enter
no kernel by QEMU's own exception log (user/linux/vdsotest.c, built with Debian's cross
compiler, dynamically and statically).

The instruction count of one clock_gettime(CLOCK_MONOTONIC) through glibc is make bench's
figure (`clock` in bench/goals.txt), not a test's.
"""

import re

import pytest

import zt

TIMEOUT = 300


@pytest.mark.parametrize("prog", ["vdsotest", "vdsotest-static", "vdsotest-musl"])
def test_vdso01_agrees_with_the_system_calls(prog):
    """VDSO-01: every process gets AT_SYSINFO_EHDR pointing at an AArch64 ELF shared object
    named linux-vdso.so.1 with glibc's three symbols; through it, glibc's clock_gettime for
    every clock id from -8 to 16 lies between two raw system calls of the same clock (counter
    time) or fails with the system call's errno (the rest, which the vDSO passes to the
    kernel), clock_getres and gettimeofday agree too; for a dynamically linked program (the
    loader maps the vDSO as a library), a static one (glibc's start-up code does) and a
    dynamically linked musl program (musl looks the symbols up through DT_HASH)."""
    if not (zt.BUILD / "initrd" / "bin" / prog).exists():
        pytest.skip(f"{prog} not built: musl (arm64) unavailable")
    b = zt.boot(cpus=2, bootargs=f"quiet init=/bin/{prog} -- check", timeout=TIMEOUT)
    assert "panic" not in b.console, b
    assert re.search(r"^vdsotest check: ok\r?$", b.console, re.M), b
    assert "vdsotest check: the vDSO at 0x7fdffe1000, clock ids -8..16 agree with the " \
           "system calls, resolution 16 ns" in b.console, b
    assert b.status == 0, b


@pytest.mark.parallel_vcpus
def test_vdso02_clock_calls_take_no_exception():
    """VDSO-02: a glibc program isolated (strict) on dataplane CPU 3 calls
    clock_gettime(CLOCK_MONOTONIC), clock_gettime(CLOCK_REALTIME) and gettimeofday 100,000
    times each, and time never goes backwards: QEMU's log shows CPU 3 taking nothing between the
    two marker calls but the two prctl system calls themselves (a system call from the clock
    calls would have been a strict violation, and an exception in the log)."""
    b = zt.boot(cpus=4, bootargs="quiet dataplane=3 init=/bin/vdsotest -- isol 3 100000",
                timeout=TIMEOUT, exclog=True)
    assert b.status == 0, b
    assert re.search(r"vdsotest isol: cpu 3 prctl 0/0, 300000 clock calls over \d+ ns, "
                     r"0 backwards", b.console), b
    rep = b.exclog(windows=True)
    wins = [w for w in rep["windows"] if w["cpu"] == 3]
    assert len(wins) == 1 and wins[0]["close_line"] is not None, rep["windows"]
    c = wins[0]["counts"]
    assert c["total"] == 2 and c["kinds"]["sync-svc"] == 2, c
