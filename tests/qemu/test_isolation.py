# SPDX-License-Identifier: MIT
"""Task isolation (issue 5): PR_SET_TASK_ISOLATION, strict mode and its reports, the signal
path, admission, the isolstat audit, and an isolated task under the heaviest housekeeping
load — proven with QEMU's own exception log, never with wall-clock time.

/bin/isol issues the isolating prctl as `svc #0x5a5a` and the one that ends isolation as
`svc #0xa5a5`, so tools/exclog's window on CPU 3 is exactly "from prctl to the end".
"""

import re

import pytest

import zt


def isolated_seconds(boot):
    """The length of /bin/isol's isolation window, from its closing line (None if absent)."""
    m = re.search(r"isol: isolated on cpu 3 for ([\d.]+) s", boot.console)
    return float(m.group(1)) if m else None


REPORT = r"isolation: pid (\d+) \(isol\) on cpu 3: "


def sh(cmd, extra="", cpus=4, **kw):
    bootargs = f"quiet dataplane=2-3 {extra} init=/bin/sh -- -c '{cmd}'"
    return zt.boot(cpus=cpus, bootargs=bootargs, **kw)


@pytest.mark.parametrize("kind,cause", [
    ("syscall", r"syscall 64 \(write\)"),
    ("fault", r"data abort \(lower EL\) at 0x10 \(pc 0x[0-9a-f]+\)"),
    ("undef", r"undefined instruction at 0x([0-9a-f]+) \(pc 0x\2\)"),
])
def test_iso01_strict_violation_kills_with_cause(kind, cause):
    """ISO-01: a strict isolated task that makes a syscall, faults on an unmapped address
    or runs an undefined instruction is killed (SIGKILL, status 137) after one report line
    naming the cause."""
    b = sh(f"isol -c 3 -t 2 -s -v {kind}")
    assert b.status == 128 + 9, b  # sh -c returns its last command's status
    m = re.search(REPORT + cause, b.console)
    assert m, b
    assert re.search(rf"\[pid {m.group(1)}\] killed by signal 9 \(SIGKILL\)", b.console), b
    assert "isol: isolated on cpu 3" not in b.console, b


@pytest.mark.parallel_vcpus
def test_iso09_interruption_from_elsewhere():
    """ISO-09: another program pinning a task onto the isolated CPU interrupts it with an
    IPI; the report names the sending CPU and the reason, and the strict task is killed."""
    b = sh("isol -c 3 -t 4 -s & sleep 1; spin -c 3 -t 0.5; wait")
    m = re.search(REPORT + r"IPI from cpu ([01]) \((wakeup|kick|resched)\)", b.console)
    assert m, b
    assert re.search(rf"\[pid {m.group(1)}\] killed by signal 9 \(SIGKILL\)", b.console), b
    assert re.search(r"spin: window 1 cpu 3 tasks 1", b.console), b


def test_iso02_signal_path():
    """ISO-02: with a handler installed and PR_TASK_ISOLATION_SET_SIG(SIGUSR1), a violation
    runs the handler; the task survives, no longer isolated, and exits 0.  The violating
    write itself does not run."""
    b = sh("isol -c 3 -t 2 -s -v syscall -g 10")
    assert re.search(REPORT + r"syscall 64 \(write\)", b.console), b
    assert "isol: signal 10 (SIGUSR1) received; still running, no longer isolated" in b.console
    assert "this write is a violation" not in b.console, b
    assert "isol: isolated on cpu 3 for" in b.console, b
    assert not re.search(r"\[pid \d+\] (killed|exited)", b.console), b
    assert b.status == 0, b


def test_iso03_ten_seconds_under_heavy_load():
    """ISO-03: a strict isolated task on CPU 3 runs 10 s of guest time while housekeeping
    spawns and reaps, floods the console, sleeps on timers, queues work, and a sibling
    thread of the same process maps and unmaps memory on CPU 0: it is not killed, and QEMU's
    log shows 0 exceptions on CPU 3 from prctl's return to the end of isolation."""
    b = sh("load -t 12 -f & isol -c 3 -t 10 -s -m", "exit_stats=1", exclog=True)
    assert b.status == 0, b
    assert isolated_seconds(b) >= 10.0, b
    assert "isolation: pid" not in b.console, b
    rep = b.exclog(windows=True)
    wins = [w for w in rep["windows"] if w["cpu"] == 3]
    assert len(wins) == 1 and wins[0]["close_line"] is not None, rep["windows"]
    assert wins[0]["counts"]["total"] == 0, wins[0]
    spawns = int(re.search(r"load: 12.0 s: (\d+) spawns", b.console).group(1))
    assert spawns > 0, b


def test_iso04_admission_errors():
    """ISO-04: the affinity must be exactly one dataplane CPU (-EINVAL otherwise); a second
    runnable task on that CPU makes prctl yield and then fail with -EAGAIN."""
    b = sh("isol -c 3 -t 1 -A -x EINVAL; isol -c 1 -t 1 -x EINVAL; "
           "spin -c 3 -t 3 & sleep 1; isol -c 3 -t 1 -x EAGAIN; wait")
    assert b.console.count("isol: prctl returned -EINVAL, expected -EINVAL") == 2, b
    assert "isol: prctl returned -EAGAIN, expected -EAGAIN" in b.console, b
    assert not re.search(r"\[pid \d+\] (killed|exited)", b.console), b  # sh reports failures


def test_iso11_enable_disable_cycles_do_not_leak():
    """ISO-11: 1,000 enable/disable cycles leave the free page count unchanged."""
    b = sh("isol -c 3 -r 1000")
    m = re.search(r"isol: 1000 enable/disable cycles, free pages (\d+) before, (\d+) after",
                  b.console)
    assert m and m.group(1) == m.group(2), b
    assert b.status == 0, b


@pytest.mark.parallel_vcpus
def test_iso05_isolstat_clean_then_names_the_timer():
    """ISO-05: the audit of a quiet isolated CPU is empty; while the isolated task sleeps on
    its own timer, the audit names the timer and the task that armed it."""
    b = sh("isol -c 3 -t 3 & sleep 1; isolstat -c 3; wait; "
           "isol -c 3 -t 2 -z 1500 & sleep 0.5; isolstat -c 3; wait")
    first, second = b.console.split("isolstat: cpu 3", 1)[0], b.console
    assert re.search(r"cpu 3: dataplane, isolated: pid \d+ tid \d+ \(isol\), not strict, "
                     r"in user space, .* 0 interruptions", first), b
    assert "isolstat: cpu 3 clean" in b.console, b
    m = re.search(r"isolated: pid (\d+) tid (\d+) \(isol\), not strict, in the kernel", second)
    assert m, b
    assert re.search(rf"! timer due in [\d.]+ ms, armed by tid {m.group(2)} at kernel address",
                     second), b
    assert re.search(r"isolstat: cpu 3: \d+ findings?", second), b


@pytest.mark.parallel_vcpus
def test_iso06_debug_mode_reports_without_killing():
    """ISO-06: isol_debug=1 reports an interruption of a non-strict isolated task with its
    source and the sending CPU's call path; the task keeps running."""
    b = sh("isol -c 3 -t 3 & sleep 1; spin -c 3 -t 0.3; wait", "isol_debug=1")
    assert re.search(REPORT + r"IPI from cpu [01] \(\w+\) \[debug: not strict, task continues\]",
                     b.console), b
    assert re.search(r"isolation:   sender's call path:( [0-9a-f]{16})+", b.console), b
    assert isolated_seconds(b) >= 3.0, b


def test_iso10_fault_with_handler():
    """ISO-10: a strict violation by a fault runs the isolation handler first; the faulting
    instruction then runs again, no longer isolated, and the fault kills as usual."""
    b = sh("isol -c 3 -t 2 -s -v fault -g 10")
    assert re.search(REPORT + r"data abort \(lower EL\) at 0x10", b.console), b
    assert re.search(r"pid \d+ \(isol\) killed: data abort at 0x10", b.console), b
    assert re.search(r"\[pid \d+\] killed by signal 11 \(SIGSEGV\)", b.console), b


@pytest.mark.parallel_vcpus
def test_iso07_cross_cpu_requests_are_deferred():
    """ISO-07: when memory runs out, every CPU is asked to drain its page cache; the CPU of
    a strict isolated task gets the request deferred, not an IPI: it is not killed, QEMU's
    log shows 0 exceptions in its window, and isolstat counts the deferred requests, run
    once isolation has ended."""
    b = sh("isol -c 3 -t 5 -s & sleep 0.5; memhog -r 2; wait; isolstat -c 3",
           mem="128M", exclog=True)
    assert b.status == 0, b
    assert "memhog: round 2:" in b.console and "said ENOMEM" in b.console, b
    assert isolated_seconds(b) >= 5.0, b
    m = re.search(r"requests deferred instead of interrupting it, since boot: (\d+)", b.console)
    assert m and int(m.group(1)) >= 2, b
    assert "isolstat: cpu 3 clean" in b.console, b  # nothing left pending afterwards
    (w,) = [w for w in b.exclog(windows=True)["windows"] if w["cpu"] == 3]
    assert w["counts"]["total"] == 0, w


def test_iso08_moving_an_isolated_task_ends_its_isolation():
    """ISO-08: a non-strict isolated task that moves itself to another CPU is no longer
    isolated (PR_GET_TASK_ISOLATION says 0), its old CPU is free again (a new isolation
    there succeeds), and the audit shows no isolated task left behind."""
    b = sh("isol -c 3 -t 1 -M 2; isolstat -c 3; isol -c 3 -t 1")
    assert "isol: moved to cpu 2 (0); isolation flags now 0" in b.console, b
    assert re.search(r"cpu 3: dataplane, no isolated task", b.console), b
    assert b.console.count("isol: isolated on cpu 3 for") == 2, b
    assert b.status == 0, b
