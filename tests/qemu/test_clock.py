# SPDX-License-Identifier: MIT
"""The clocks a glibc program asks for (issue 21, item 1): user/linux/lxclock.c, a static
glibc program, checks every Linux clock id through glibc and through raw system calls.  The
rules it holds the kernel to are written in the program from Linux's own, not taken from
zerotick's header (include/uapi/zt_clock.h); the host unit tests CLK-02..05 check the header.
"""

import re

import zt

LXCLOCK_CHECKS = ["ids", "time", "order", "sleep", "cpu", "cpusleep", "condwait", "mtime"]


def test_clk01_glibc_clocks():
    """CLK-01: a glibc static program gets Linux's answer for every clock id: REALTIME (and
    time(), gettimeofday, REALTIME_COARSE, TAI) is wall time from QEMU's RTC, after 2020;
    MONOTONIC_RAW/_COARSE and BOOTTIME read the monotonic time in order; sleeps on each clock
    that sleeps last at least what was asked; the CPU-time clocks, clock_getcpuclockid and
    pthread_getcpuclockid ids, another process's clock and a foreign thread's (EINVAL); a
    sleep on the process CPU clock; a CLOCK_REALTIME deadline in pthread_cond_timedwait;
    ALARM ids EINVAL and EOPNOTSUPP as on Linux without a wake-up RTC; a file's mtime is wall
    time."""
    b = zt.boot(cpus=4, bootargs="quiet init=/bin/lxclock -- " + " ".join(LXCLOCK_CHECKS),
                timeout=300)
    assert "panic" not in b.console, b
    got = dict(re.findall(r"^lxclock (\w+): (ok|FAILED.*)$", b.console.replace("\r", ""), re.M))
    assert set(got) == set(LXCLOCK_CHECKS), b
    assert all(v == "ok" for v in got.values()), {k: v for k, v in got.items() if v != "ok"}
    m = re.search(r"lxclock time: time\(\) (\d+), (\d{4})-", b.console)
    assert m and int(m.group(1)) >= 1577836800 and int(m.group(2)) >= 2020, b
    assert b.status == 0, b
