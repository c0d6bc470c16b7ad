# SPDX-License-Identifier: MIT
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


def test_hrd12_admission_refusal_says_why(suite):
    """HRD-12 (bug 3): the refused admission is reported, on housekeeping, with the timer's
    owner."""
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


@pytest.mark.parametrize("cpu,pan", [("max", True), ("cortex-a72", False)])
def test_hrd08_pan_refuses_direct_user_access(cpu, pan):
    """HRD-08 (item 12): on a CPU with FEAT_PAN (-cpu max) PAN is on: the boot log says so,
    and a kernel load from a user page that bypasses the copies is a permission fault
    (ESR ISS 0x0f, FAR the user address).  Without FEAT_PAN (cortex-a72) the log says so and
    the same load succeeds."""
    b = zt.boot(cpus=2, bootargs="debug_fault=user-read debug_exit=0", cpu=cpu)
    if pan:
        assert "zerotick: memory protection: W^X kernel, PXN on user pages, PAN on" in b.lines()
        assert re.search(r"panic: CPU 0: unexpected exception at EL1: data abort \(same EL\) "
                         r"\(ESR 0x9600000f, FAR 0x0000000000400000\)", b.console), b
        assert b.status == zt.PANIC_STATUS, b
    else:
        assert b.line_matching(r"^zerotick: memory protection: .*no PAN"), b
        assert "debug_fault: the kernel read user page 0x400000 directly (value 0): this CPU " \
               "has no PAN" in b.lines(), b


def test_hrd09_suites_pass_with_pan_on():
    """HRD-09 (item 12): usertests and hardtests pass on -cpu max with PAN on: the kernel
    reaches user memory only through its checked copies (a direct access would panic)."""
    b = zt.boot(cpus=4, cpu="max", timeout=SUITE_TIMEOUT,
                bootargs="quiet dataplane=2-3 max_procs=128 init=/bin/sh -- -c "
                         "'usertests; hardtests'")
    assert "PAN on" in b.console and "panic" not in b.console, b
    assert b.console.count("ALL TESTS PASSED") == 2, b
    assert b.status == 0, b


def test_hrd10_watchdog_reports_masked_interrupts():
    """HRD-10 (item 14): CPU 0 keeps interrupts masked for 2 s; the watchdog (watchdog=200)
    reports it once, from the other housekeeping CPU, with a stall of at least 200 ms."""
    b = zt.boot(cpus=2, bootargs="debug_fault=irqs-off watchdog=200 debug_exit=0")
    reports = [l for l in b.lines() if l.startswith("watchdog: ")]
    assert len(reports) == 1, b
    m = re.match(r"watchdog: cpu 0 has taken no interrupt for (\d+) ms \(interrupts masked too "
                 r"long\?\), seen from cpu 1$", reports[0])
    assert m and int(m.group(1)) >= 200, b
    assert "debug_fault: cpu 0 kept interrupts masked for 2 s" in b.lines(), b
    assert b.status == 0, b


def test_hrd11_lock_order_is_checked():
    """HRD-11 (item 14): the checked kernel (what make test boots) panics, naming both locks,
    when a lock is taken against the order of include/kernel/lockrank.h."""
    b = zt.boot(cpus=2, bootargs="debug_fault=lock-order debug_exit=0")
    assert re.search(r"panic: CPU 0: lock order: CPU 0 takes proc_lock \(0x[0-9a-f]+, rank 10\) "
                     r"while it holds a run queue \(0x[0-9a-f]+, rank 40\)", b.console), b
    assert b.status == zt.PANIC_STATUS, b


def test_hrd20_link_bomb(suite):
    """HRD-20 (issue 20, item 1): the link bomb's top link is ELOOP after 40 links, as on
    Linux (40 links in one path are followed, the 41st is ELOOP), and a walker stat-ing it in
    a loop dies of SIGKILL; before the fix one stat followed up to 84^7 links with the file
    tree's lock held and interrupts masked, and the killed walker lived on."""
    ok(suite, "link_bomb")


def test_hrd21_tmpfs_write_takes_interrupts(suite):
    """HRD-21 (issue 20, item 6): an 8 MiB pwrite to /tmp takes interrupts while it copies (a
    timer a 1 ms napper keeps due on its CPU, or the IPI of a signal sent once it is seen
    under way): CPU 1 acknowledges one between two looks at the file's size that both see the
    write under way; the file tree's lock was held with interrupts masked for the whole copy
    before the fix."""
    ok(suite, "tmpfs_write_irqs")
    assert suite.line_matching(
        r"^tmpfs_write_irqs: CPU 1 took \d+ timer and \d+ IPI interrupts between \d+ and \d+ "
        r"bytes written"), suite


def test_hrd23_exec_ends_a_device_claim():
    """HRD-23 (issue 20, item 5): a holder of a claimed device that calls execve loses the
    claim with the image that made it: the new image is not the holder (zt_release says
    -EPERM), and finds the device free and reset; before the fix the claim survived with the
    old image's addresses (the new image was still the holder: exit 2). devtest's other checks
    pass too (HRD-22 is the host test of the same path)."""
    b = zt.boot(cpus=4, bootargs="quiet init=/bin/devtest", extra=zt.net_options("user")[0])
    assert "devtest: holder execs: the claim ends, device reset, claimable again: ok" in \
        b.console, b
    assert re.search(r"devtest: \d+ checks, 0 failed", b.console), b
    assert b.status == 0, b


def test_hrd24_mmap_takes_interrupts(suite):
    """HRD-24 (issue 20, item 6): an anonymous mmap of a third of free memory takes
    interrupts while it writes its page-table entries (a timer a 1 ms napper keeps due on its
    CPU, or the IPI of a signal sent once it is seen mapping): CPU 1 acknowledges one between
    two looks at the mapped pages that both see the mapping under way. Before the fix every
    entry was written in one hold of the address-space lock with interrupts masked."""
    ok(suite, "mmap_map_irqs")
    assert suite.line_matching(
        r"^mmap_map_irqs: CPU 1 took \d+ timer and \d+ IPI interrupts between \d+ and \d+ of "
        r"\d+ pages mapped"), suite


@pytest.mark.parametrize("name", ["siginfo_kill", "siginfo_queue", "siginfo_child",
                                  "siginfo_fault"])
def test_sig01_siginfo_as_linux_fills_it(suite, name):
    """SIG-01 (issue 20): a handler's siginfo is Linux's: kill says SI_USER, tgkill and tkill
    SI_TKILL, each with the sender's pid and uid 0 and nothing else set; rt_sigqueueinfo and
    rt_tgsigqueueinfo pass the caller's code, pid and value (-EPERM for a kernel code or
    SI_TKILL to another process); SIGCHLD says CLD_EXITED with the child's pid and status; a
    fault SEGV_MAPERR or SEGV_ACCERR with its address. Before: si_code 0 always, si_pid
    never written (the frame kept the user stack's bytes: 'unexpected signal 10 from 0'),
    rt_sigqueueinfo and tkill -ENOSYS."""
    ok(suite, name)


def test_sig02_sigreturn_keeps_the_interrupted_x0(suite):
    """SIG-02 (issue 20, the restart bug found while looking for the handler that ran
    millions of times): a handler that interrupts code holding -ERESTARTSYS (-512) in x0
    returns to it intact; rt_sigreturn's return value was taken for a call to restart, so the
    PC went back one instruction and x0 was replaced after every such handler (20 of 20)."""
    ok(suite, "sigreturn_keeps_x0")
    assert suite.line_matching(r"^sigreturn_keeps_x0: [1-9]\d* handlers interrupted x0 = -512, "
                               r"\d+ loops, 0 changed$"), suite


def test_fd20_huge_lengths_are_efault(suite):
    """FD-20 (issue 20): read, write, pread64 and pwrite64 with a length of 2^63 or SIZE_MAX
    return -EFAULT, as Linux (vfs_read/vfs_write check the buffer's range before the length's
    sign), after -EBADF for the descriptor and its mode; a buffer outside user space is
    -EFAULT for 0 bytes too; a negative vector length is -EINVAL. Before: -EINVAL."""
    ok(suite, "huge_lengths")


def test_hrd26_isolation_report_escapes_the_name(suite):
    """HRD-26 (issue 20): a strict isolated task named 'ev<ESC>[2J<BEL>il<LF>X' breaks its
    isolation; the report prints the name escaped, on one line, and no raw ESC or BEL byte
    reaches the console. Before: the bytes went out raw (a terminal cleared, the newline
    forged a line of its own)."""
    ok(suite, "isol_report_name")
    line = suite.line_matching(r"^isol_report_name: pid \d+$")
    assert line, suite
    pid = line.split()[-1]
    assert suite.line_matching(
        rf"^isolation: pid {pid} \(ev\\x1b\[2J\\x07il\\x0aX\) on cpu \d+: syscall \d+ "
        r"\(getpid\)$"), suite
    assert "\x1b" not in suite.console and "\x07" not in suite.console, suite


def test_sig13_blocked_or_ignored_signal_leaves_a_sleep(suite):
    """SIG-13 (issue 20): a signal the sleeper blocks, or one it ignores (SIGURG by default,
    SIGWINCH by SIG_IGN), does not end its nanosleep; the blocked one stays pending and is
    handled once unblocked; a handled one still ends the sleep with -EINTR. Before: every
    signal sent woke its target's wait with -EINTR."""
    ok(suite, "blocked_signal_sleeps")
    assert suite.line_matching(r"^blocked_signal_sleeps: blocked and ignored signals left 3 "
                               r"naps whole$"), suite


def test_sig14_vfork_parent_waits_through_signals(suite):
    """SIG-14 (issue 20): a vfork parent sent a handled or a blocked signal by its child still
    waits until the child exits (Linux: a killable wait). Before: the signal released the
    parent while the child still ran on its memory."""
    ok(suite, "vfork_waits")


def test_sig15_exec_is_not_interrupted_by_signals(suite):
    """SIG-15 (issue 20, the fuzzer's life left without its waker thread): execve from a
    process of two threads succeeds while the test streams signals at it; it waits for its
    other threads with only SIGKILL able to end the wait. Before: a signal ended the wait,
    execve returned -EINTR after telling the other threads to exit."""
    ok(suite, "exec_signalled")
    assert suite.line_matching(r"^exec_signalled: 40 execs under [1-9]\d* signals, none "
                               r"failed$"), suite


def test_sig16_kill_of_a_zombie_succeeds(suite):
    """SIG-16 (issue 20): kill(pid, 0) and kill(pid, SIGKILL) of a child that has exited but
    is not reaped return 0 and change nothing (it is reaped with its own exit status 7), as on
    Linux; once reaped, -ESRCH. Before: -ESRCH while it was a zombie."""
    ok(suite, "kill_zombie")
