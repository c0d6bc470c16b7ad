"""The system-call fuzzer (issue 9, item 11): short seeded rounds of /bin/fuzz, one on
housekeeping CPUs only and one with dataplane CPUs and task isolation steered at, each
judged by the fuzzer's own verdict (no worker stuck, no synchronous exception at EL1, free
pages and kernel stacks back at their baseline) and by tools/fuzzsum's totals; and the
fuzzer's watchdog, shown to catch a life that blocks for good.

The long run is `make fuzz` (docs/security.md has its figures).
"""

import re

import pytest

import zt

SEED = "0x5eed"
CALLS = 8000
TIMEOUT = 600


def fuzzsum():
    return zt.tool_module("fuzzsum")


# One virtio-net device (a slirp backend that binds no host port), so zt_claim and
# zt_release get past their slot checks.
NET = ["-netdev", "user,id=n0,restrict=on", "-device", "virtio-net-device,netdev=n0"]


def run(bootargs, cpus=4, extra=()):
    b = zt.boot(cpus=cpus, bootargs=bootargs, timeout=TIMEOUT, extra=list(extra))
    text = b.console.replace("\0", "")
    assert "panic" not in text, b
    return b, fuzzsum().summarize(text)


def check_round(b, s, calls):
    assert s["verdict"] == "PASS", b
    assert b.status == 0, b
    assert s["calls"] >= calls, (s, b)
    assert s["kernel_faults"] == 0, b
    assert s["unreported"] == 0, (s, b)  # every life that ended early said why first
    pages0, pages1, stacks0, stacks1 = s["memory"]
    assert pages0 == pages1 and stacks0 == stacks1, b
    # the pools reach refusals of every kind and successes
    for e in ("EFAULT", "EINVAL", "ENOSYS", "EBADF", "ESRCH"):
        assert s["errors"][e] > 0, (e, s)
    assert s["ok"] > calls // 10, s


@pytest.fixture(scope="module")
def housekeeping_round():
    return run(f"quiet init=/bin/fuzz -- -n {CALLS} -s {SEED} -w 4", extra=NET)


def test_fz01_short_round(housekeeping_round):
    """FZ-01: 8,000 fuzzed calls in 4 workers on 4 CPUs (a virtio-net device present, for
    zt_claim): the kernel survives, takes no
    synchronous exception at EL1, every life that ended early reported first, and free
    pages and kernel stacks are back at their baseline."""
    check_round(*housekeeping_round, CALLS)


def test_fz02_dataplane_round():
    """FZ-02: the same with dataplane CPUs 2-3 and workers steered onto them and into task
    isolation (strict with a handled signal, so violations signal instead of kill): the
    isolation paths run (admissions, refusals or violations are reported) and the kernel
    survives them."""
    b, s = run(f"quiet dataplane=2-3 init=/bin/fuzz -- -n {CALLS} -s {SEED} -w 4 -i")
    check_round(b, s, CALLS)
    assert b.line_matching(r"^isolation: "), b


def test_fz03_seed_and_replay_printed(housekeeping_round):
    """FZ-03: the run names its seed, and each life's report names the life's own seed, so a
    failure can be replayed (fuzz -W WORKER -G LIFE -s SEED -n CALLS)."""
    b, s = housekeeping_round
    assert s["runs"] and s["runs"][0]["seed"] == SEED, b
    text = b.console.replace("\0", "").replace("\r", "")
    assert re.search(r"^fuzz: life 0\.0 seed 0x[0-9a-f]+ calls \d+ ", text, re.M), b


def test_fz04_watchdog_catches_a_stuck_life():
    """FZ-04: a life that blocks for good (-T: SIGALRM blocked, then a futex wait with no
    timeout) is reported by the watchdog, killed, and the run fails: the watchdog is a
    check that can fail."""
    b = zt.boot(cpus=2, bootargs="quiet init=/bin/fuzz -- -n 200 -s 1 -w 1 -T", timeout=TIMEOUT)
    assert b.line_matching(r"^fuzz: watchdog: life 0\.0 .* made no progress for \d+ s: killed$"), b
    assert b.line_matching(r"^fuzz: FAIL \(a life was stuck\)"), b
    assert b.status == 1, b
