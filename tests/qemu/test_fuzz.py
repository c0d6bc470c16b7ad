# SPDX-License-Identifier: MIT
"""The system-call fuzzer (issue 9, item 11): short seeded rounds of /bin/fuzz, one on
housekeeping CPUs only and one with dataplane CPUs and task isolation steered at, each
judged by the fuzzer's own verdict (no worker stuck, no synchronous exception at EL1, free
pages and kernel stacks back at their baseline) and by tools/fuzzsum's totals; and the
fuzzer's watchdog, shown to catch a life that blocks for good.

The long run is `make fuzz` (docs/security.md has its figures).
"""

import os
import re
import signal
import time

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


MEMORY_FAIL = "FAIL (free pages or kernel stacks not back at their baseline)"


def check_round(b, s, calls, memory=True):
    """The round's checks; with memory=False the memory balance is left to another test
    (the verdict may then be the memory failure and nothing else)."""
    if memory:
        assert s["verdict"] == "PASS", b
        assert b.status == 0, b
    else:
        assert s["verdict"] == "PASS" or s["verdict"].startswith(MEMORY_FAIL), b
    assert s["calls"] >= calls, (s, b)
    assert s["kernel_faults"] == 0, b
    assert s["unreported"] == 0, (s, b)  # every life that ended early said why first
    pages0, pages1, stacks0, stacks1 = s["memory"]
    assert stacks0 == stacks1, b
    if memory:
        assert pages0 == pages1, b
    # the pools reach refusals of every kind and successes
    for e in ("EFAULT", "EINVAL", "ENOSYS", "EBADF", "ESRCH"):
        assert s["errors"][e] > 0, (e, s)
    assert s["ok"] > calls // 10, s


@pytest.fixture(scope="module")
def housekeeping_round():
    return run(f"quiet init=/bin/fuzz -- -n {CALLS} -s {SEED} -w 4", extra=NET)


def test_fz06_every_call_has_a_shape(housekeeping_round):
    """FZ-06: every call of the kernel's dispatch table gets arguments of the right kinds
    (a call added to the kernel without a shape is fuzzed with mixed-pool values only, and
    this test names it)."""
    b, s = housekeeping_round
    rx = r"^fuzz: (\d+) calls in the kernel's table, (\d+) with a shape$"
    m = re.match(rx, b.line_matching(rx) or "")
    assert m and int(m.group(1)) > 90, b
    assert m.group(1) == m.group(2), [l for l in b.lines() if "unshaped" in l]


def test_fz01_short_round(housekeeping_round):
    """FZ-01: 8,000 fuzzed calls in 4 workers on 4 CPUs (a virtio-net device present, for
    zt_claim): the kernel survives, takes no
    synchronous exception at EL1, every life that ended early reported first, and free
    pages and kernel stacks are back at their baseline."""
    check_round(*housekeeping_round, CALLS)


@pytest.fixture(scope="module")
def dataplane_round():
    return run(f"quiet dataplane=2-3 init=/bin/fuzz -- -n {CALLS} -s {SEED} -w 4 -i")


def test_fz02_dataplane_round(dataplane_round):
    """FZ-02: the same with dataplane CPUs 2-3 and workers steered onto them and into task
    isolation (strict with a handled signal, so violations signal instead of kill): the
    isolation paths run (admissions, refusals or violations are reported) and the kernel
    survives them (the free-page balance of this round is FZ-07's)."""
    b, s = dataplane_round
    check_round(b, s, CALLS, memory=False)
    assert b.line_matching(r"^isolation: "), b


def test_fz07_dataplane_round_memory(dataplane_round):
    """FZ-07: after FZ-02's round free pages are back at their baseline (it ended one page
    short while the runner kept /tmp/fz in its baseline: FZ-08)."""
    b, s = dataplane_round
    pages0, pages1, _, _ = s["memory"]
    assert pages0 == pages1, b


def test_fz09_balance_report_names_the_difference():
    """FZ-09: a run whose free pages do not come back says what the difference is made of
    (-B: the runner leaves a one-page file in /tmp after its baseline): the run fails its
    memory balance, and the report names the new /tmp file, the tmpfs page (meminfo's Shmem
    up 4 kB) and the object allocator's classes (/proc/slabinfo) that grew."""
    b = zt.boot(cpus=2, bootargs="quiet init=/bin/fuzz -- -n 300 -s 1 -w 1 -B", timeout=TIMEOUT)
    assert b.line_matching(r"^fuzz: FAIL \(free pages or kernel stacks not back"), b
    assert b.line_matching(r"^fuzz: balance: /tmp/fz-balance-test made$"), b
    m = re.search(r"^fuzz: balance: tmpfs pages \(Shmem\) (\d+) kB -> (\d+) kB$",
                  b.line_matching(r"^fuzz: balance: tmpfs") or "")
    assert m and int(m.group(2)) - int(m.group(1)) == 4, b
    grew = [l for l in b.lines() if re.match(r"^fuzz: balance: kmalloc-\w+: \d+ objects", l)]
    assert grew, b  # the file's inode and records
    assert b.status == 1, b


def test_fz10_deep_sandbox_tree_balances():
    """FZ-10: directories nested 250 deep in /tmp/fz (-N: the runner makes them after its
    baseline, as lives can through directory descriptors) are all removed at the end and free
    pages come back: the runner's stack, which grows on demand, is touched before the
    baseline (it grew by 56 pages removing 200 levels: the dataplane long runs' one page)."""
    b = zt.boot(cpus=2, bootargs="quiet init=/bin/fuzz -- -n 300 -s 1 -w 1 -N", timeout=TIMEOUT)
    s = fuzzsum().summarize(b.console.replace("\0", ""))
    pages0, pages1, stacks0, stacks1 = s["memory"]
    assert (pages0, stacks0) == (pages1, stacks1), b
    assert not b.line_matching(r"cannot remove|could not be removed|^fuzz: balance"), b
    assert s["verdict"] == "PASS" and b.status == 0, b


def test_fz08_sandbox_made_again_balances():
    """FZ-08: lives that remove /tmp/fz and make it again (-D: its new inode lands in another
    slab page than the old one, which its other objects keep) end with free pages at their
    baseline: the balance does not depend on where the sandbox directory's inode sits (the
    dataplane round's one page, FZ-07)."""
    b = zt.boot(cpus=2, bootargs="quiet init=/bin/fuzz -- -n 3 -s 1 -w 1 -l 1 -D",
                timeout=TIMEOUT)
    rx = r"^fuzz: replant: /tmp/fz removed \(ok\), 40 pipes, made again \(ok\)$"
    assert len([l for l in b.lines() if re.match(rx, l.replace("\0", ""))]) == 3, b
    s = fuzzsum().summarize(b.console.replace("\0", ""))
    pages0, pages1, stacks0, stacks1 = s["memory"]
    assert (pages0, stacks0) == (pages1, stacks1), b
    assert s["verdict"] == "PASS" and b.status == 0, b


def test_fz26_programs_and_collide_mode(housekeeping_round):
    """FZ-26: lives run programs (short sequences of shaped calls), and one program in eight
    also runs in three colliding threads of the life at once (collide mode, -x 8): the round
    ran such programs and every life reported its programs; no colliding call's signal mask
    blocked SIGALRM when the threads started (the masks have slots of their own: in scratch, a
    later call's shaping could write one, and the waker could no longer end that wait)."""
    b, s = housekeeping_round
    assert not [l for l in b.lines() if "would block SIGALRM" in l], b
    p = s["programs"]
    assert p["programs"] > CALLS // 16 and p["collided"] > p["programs"] // 20, p
    assert p["mutated"] == 0 and p["kept"] == 0, p  # no corpus without coverage (-c)
    text = b.console.replace("\0", "")
    lives = len(re.findall(r"fuzz: life \d+\.\d+ programs ", text))
    reports = s["lives_done"] + sum(s["lethal"].values())  # one report line each
    assert lives == reports > 0, (lives, reports)


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
    check that can fail.  The report names what the life's thread sleeps in (/proc's syscall
    file: futex, 98, with the user SP its switch kept: the fast call's frame has none) and
    shows SIGALRM (bit 13) in its blocked mask."""
    b = zt.boot(cpus=2, bootargs="quiet init=/bin/fuzz -- -n 200 -s 1 -w 1 -T", timeout=TIMEOUT)
    assert b.line_matching(r"^fuzz: watchdog: life 0\.0 .* made no progress for \d+ s: killed$"), b
    pat = r"^fuzz: stuck: task \d+\.\d+ syscall 98 0x[0-9a-f]+ .*SigBlk: ([0-9a-f]{16})"
    line = b.line_matching(pat)
    assert line and int(re.search(pat, line).group(1), 16) & (1 << 13), b
    assert " 0x7a7a7a7a7a7a7a7a " not in line, line  # the SP the switch kept, not frame poison
    assert b.line_matching(r"^fuzz: FAIL \(a life was stuck\)"), b
    assert b.status == 1, b


def test_fz05_a_frozen_machine_is_not_a_stuck_life():
    """FZ-05: QEMU stopped as a whole for 15 s in the middle of a run (SIGSTOP, then SIGCONT:
    what a starved host does to it): guest time jumps, yet no life is reported stuck (the
    watchdog's clock adds at most 1 s per round, so a freeze counts as one second)."""
    if zt.repro_shift() is not None:
        pytest.skip("under -icount guest time stands still while QEMU is stopped")
    with zt.Console(cpus=4, bootargs=f"quiet init=/bin/fuzz -- -n {CALLS} -s 0x5eed1 -w 4") as c:
        c.expect(r"fuzz: \d+ calls in the kernel's table", timeout=TIMEOUT)
        time.sleep(2)  # lives are running
        os.killpg(c.proc.pid, signal.SIGSTOP)
        time.sleep(15)
        os.killpg(c.proc.pid, signal.SIGCONT)
        status = c.wait(timeout=TIMEOUT)
    s = fuzzsum().summarize(c.output)
    assert "made no progress" not in c.output, c.output[-3000:]
    assert s["verdict"] == "PASS" and status == 0, c.output[-3000:]
