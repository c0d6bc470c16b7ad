# SPDX-License-Identifier: MIT
"""The dataplane rings (user/lib/ring.h) across isolated CPUs (issue 23): /bin/ringtest runs
four threads, one on each of dataplane CPUs 2-5, each isolated in strict mode, passing objects
through SP/SC rings (a chain) and one MP/MC ring (two producers, two consumers).  The test
asserts counts: every object delivered exactly once (in order through the chain), and 0
exceptions on each of the four CPUs in QEMU's own log between the isolation markers.  What a
ring operation costs is `make bench`'s (ringtest cost)."""

import re

import zt

CPUS = (2, 3, 4, 5)


def test_ring11_stress_four_isolated_cpus():
    """RING-11: 100,000 objects through a chain of three SP/SC rings (CPU 2 -> 3 -> 4 -> 5)
    arrive in order, and 100,000 tagged objects through one 64-slot MP/MC ring (producers on
    CPUs 2 and 3, consumers on 4 and 5) are each consumed exactly once, in each producer's
    order; no ring call enters the kernel: QEMU's log shows 0 exceptions on CPUs 2-5 in both
    phases' isolation windows."""
    b = zt.boot(cpus=6, bootargs="quiet dataplane=2-5 init=/bin/ringtest -- stress -c 2,3,4,5",
                exclog=True, timeout=600)
    assert b.status == 0, b
    assert ("ringtest: stress ok: spsc 100000 in order, mpmc 100000 exactly once (0 not), "
            "exceptions 0") in b.console, b
    moved = {(m.group(1), int(m.group(2))): int(m.group(3)) for m in re.finditer(
        r"ringtest: (spsc|mpmc) cpu (\d) moved (\d+) idle-polls \d+ bad 0 exceptions 0",
        b.console)}
    assert len(moved) == 8, b
    assert all(moved[("spsc", c)] == 100000 for c in CPUS), moved
    assert moved[("mpmc", 2)] + moved[("mpmc", 3)] == 100000, moved
    assert moved[("mpmc", 4)] + moved[("mpmc", 5)] == 100000, moved
    wins = b.exclog(windows=True)["windows"]
    for cpu in CPUS:
        mine = [w for w in wins if w["cpu"] == cpu]
        assert len(mine) == 2 and all(w["close_line"] is not None for w in mine), (cpu, mine)
        assert [w["counts"]["total"] for w in mine] == [0, 0], (cpu, mine)
