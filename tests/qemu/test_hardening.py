"""Hardening (issue 9): the outside audit's ten bugs and the other findings, each a test of
/bin/hardtests that failed before its fix, run in one boot with dataplane CPUs; plus what
the kernel prints about them (the admission refusal's reason).

One boot runs the whole suite (user/hardtests.c: one process per test, free pages and
kernel stacks checked around the suite); each pytest test below asserts its own lines.
"""

import re

import pytest

import zt

BOOTARGS = "quiet dataplane=2-3 max_procs=128 init=/bin/hardtests"
SUITE_TIMEOUT = 1200


@pytest.fixture(scope="module")
def suite():
    b = zt.boot(cpus=4, bootargs=BOOTARGS, timeout=SUITE_TIMEOUT)
    assert "panic" not in b.console, b
    return b


def ok(boot, name):
    """The suite printed `test NAME: OK` (and no FAILED line for it)."""
    assert f"test {name}: OK" in boot.lines(), boot
    assert not boot.line_matching(rf"^test {re.escape(name)}: FAILED"), boot


@pytest.mark.parametrize("name", ["iso_moved_sleeper"])
def test_hrd01_moved_isolated_sleeper(suite, name):
    """HRD-01 (bugs 1, 2): an isolated task moved away while asleep frees its CPU's slot at
    once (isolstat shows nothing, another task can isolate there), reports no isolation,
    and nothing names it after it exits (the use-after-free)."""
    ok(suite, name)


@pytest.mark.parametrize("name", ["iso_foreign_timer", "iso_admission_timer"])
def test_hrd02_timers_follow_their_task(suite, name):
    """HRD-02 (bug 3): a sleeper's timer moves with it, so a strict task isolated on the CPU
    it left is not killed by it; admission refuses (-EAGAIN) while another task's timer is
    queued on the CPU."""
    ok(suite, name)


def test_hrd02_admission_refusal_says_why(suite):
    """HRD-02: the refused admission is reported, on housekeeping, with the timer's owner."""
    assert suite.line_matching(
        r"^isolation: tid \d+ not admitted on cpu 2: a timer of tid \d+ \(armed at "
        r"[0-9a-f]+\) is queued there$"), suite


@pytest.mark.parametrize("name,bug", [
    ("prot_none", 4), ("munmap_refused", 5), ("tgkill_init", 6), ("thread_bursts", 7),
    ("mmap_irqs", 8), ("brk_merge", 8), ("futex_wake_fault", 9),
])
def test_hrd03_bugs_4_to_9(suite, name, bug):
    """HRD-03: PROT_NONE faults and is -EFAULT to copies (4); a refused munmap/MAP_FIXED
    changes nothing (5); tgkill cannot kill init (6); thread bursts return every stack and
    table (7); a long mmap takes interrupts, one larger than memory fails at once, and brk
    page by page is one region (8); FUTEX_WAKE on a bad address is -EFAULT (9)."""
    ok(suite, name)


def test_hrd04_affinity_storm_loses_no_wakeup(suite):
    """HRD-04 (bug 10): four threads pass a token through futexes while others move them at
    random: the ring never stops, and a thread moving itself runs only where it asked."""
    ok(suite, "affinity_storm")
    line = suite.line_matching(r"^affinity_storm: \d+ token passes, \d+ moves$")
    m = re.match(r"affinity_storm: (\d+) token passes, (\d+) moves", line or "")
    assert m and int(m.group(1)) == 12000 and int(m.group(2)) > 1000, suite


def test_hrd07_signal_during_a_nap_finds_a_wait_queue(suite):
    """HRD-07 (the timer race, second face): signals sent as fast as possible to a thread
    napping 50,000 times never reach a dead wait queue (sleep_until's queue lives in the
    task): no panic, no corrupted stack, every nap completes."""
    ok(suite, "sleep_signal_race")


@pytest.mark.parametrize("name", ["setaffinity_waits", "zombie_limit", "write_interrupted",
                                  "pmu_readonly", "pagetables_freed"])
def test_hrd05_other_findings(suite, name):
    """HRD-05: sched_setaffinity returns once the thread moved; zombies are bounded
    (max_procs=, -EAGAIN); a huge console write stops at a signal; user space cannot
    reprogram the shared PMU; page tables are freed at munmap."""
    ok(suite, name)


def test_hrd06_suite_leaks_nothing(suite):
    """HRD-06: the whole suite ends with free pages and kernel stacks at their baseline, and
    every test passed."""
    assert not suite.line_matching(r"^test leaks: FAILED"), suite
    assert suite.line_matching(r"^ALL TESTS PASSED$"), suite
    assert suite.status == 0, suite
