# SPDX-License-Identifier: MIT
"""User space under QEMU (issue 3): usertests, init's exit status, the shell non-interactive
(`init=/bin/sh -- -c '...'`) and interactive over the UART.

Every test boots the real kernel (tests/qemu/zt.py).  Interactive tests type into the UART
through QEMU's stdio and wait for the shell's prompt `zt$ ` between commands.  Timeouts only
catch a hung kernel; nothing here asserts on elapsed time.
"""

import re
import time

import pytest

import zt

PROMPT = r"zt\$ "
USERTESTS_TIMEOUT = 1800  # 1,000 spawns and 50 tests under TCG: minutes, not hours
SHELL_TIMEOUT = 120


def run_init(bootargs, cpus=2, timeout=SHELL_TIMEOUT):
    b = zt.boot(cpus=cpus, bootargs=bootargs, timeout=timeout)
    assert "panic" not in b.console, b
    return b


@pytest.mark.parametrize("cpus", [1, 4])
def test_user01_usertests_pass(cpus):
    """USER-01: usertests at -smp 1 and -smp 4: every test OK, its last line is ALL TESTS
    PASSED, and QEMU exits 0 (init's status, through the kernel's poweroff)."""
    b = run_init("init=/bin/usertests", cpus=cpus, timeout=USERTESTS_TIMEOUT)
    failed = [l for l in b.lines() if re.match(r"test \S+: FAILED", l)]
    assert not failed, b
    assert b.line_matching(r"^ALL TESTS PASSED$"), b
    assert b.line_matching(r"^init exited with status 0$"), b
    assert b.status == 0, b


def test_user02_usertests_one_line_per_test():
    """USER-02: a selection of tests prints exactly one `test NAME: OK` line each."""
    names = ["getpid", "nosys", "fault_null", "threads"]
    b = run_init("init=/bin/usertests -- " + " ".join(names), cpus=2)
    for name in names:
        assert sum(1 for l in b.lines() if l.startswith(f"test {name}: ")) == 1, b
        assert f"test {name}: OK" in b.lines(), b
    assert b.status == 0, b


@pytest.mark.parametrize("args,status", [("a b", 0), ("3", 3), ("255", 255)])
def test_user03_init_status_is_program_status(args, status):
    """USER-03: init runs init=/bin/PROG -- ARGS and exits with its status; QEMU exits with
    it too."""
    b = run_init(f"init=/bin/hello -- {args}")
    words = args.split()
    expect = " ".join(f"argv[{i + 1}]={w}" for i, w in enumerate(words))
    assert b.line_matching(r"^hello from pid \d+: argv\[0\]=\S+ " + re.escape(expect) + "$"), b
    assert b.line_matching(rf"^init exited with status {status}$"), b
    assert b.status == status, b


def test_user04_init_reports_signal_as_128_plus():
    """USER-04: a program killed by a signal makes init exit with 128 + signal."""
    b = run_init("init=/bin/usertests -- -h nullderef")
    assert b.line_matching(r"killed: data abort at 0x0 "), b
    assert b.line_matching(r"^init exited with status 139$"), b
    assert b.status == 139, b


def test_user05_sh_c_sequence_status():
    """USER-05: `sh -c 'hello 1; hello 2'` runs both in order and exits with the last
    foreground command's status (2); the non-zero status of the first is reported."""
    b = run_init("init=/bin/sh -- -c 'hello 1; hello 2'")
    out = b.lines()
    first = [i for i, l in enumerate(out) if "argv[1]=1" in l]
    second = [i for i, l in enumerate(out) if "argv[1]=2" in l]
    assert first and second and first[0] < second[0], b
    assert b.line_matching(r"^\[pid \d+\] exited with status 1$"), b
    assert b.status == 2, b


def test_user06_sh_c_background_does_not_count():
    """USER-06: `a & b`: the background job's status is not the shell's; sh -c waits for the
    job (its output is complete) and reports its non-zero status."""
    b = run_init("init=/bin/sh -- -c 'sleep 0.3 ; hello 7 & hello 0; echo fg-done'")
    assert b.line_matching(r"argv\[1\]=7$"), b
    assert b.line_matching(r"^fg-done$"), b
    assert b.line_matching(r"^\[pid \d+\] exited with status 7$"), b
    assert b.status == 0, b


def test_user07_sh_c_quoting():
    """USER-07: words split on blanks; '...' and "..." keep blanks, `;` and `&` literal."""
    b = run_init("init=/bin/sh -- -c \"echo 'a  b' x;echo \\\"c;d & e\\\"\"")
    assert b.line_matching(r"^a  b x$"), b
    assert b.line_matching(r"^c;d & e$"), b
    assert b.status == 0, b


def test_user08_sh_c_not_found():
    """USER-08: an unknown program is reported and gives status 127."""
    b = run_init("init=/bin/sh -- -c 'no-such-program'")
    assert b.line_matching(r"^sh: no-such-program: not found$"), b
    assert b.status == 127, b


# ---------------------------------------------------------------- interactive shell


class Shell:
    """An interactive shell on a booted kernel (no init=: init runs /bin/sh)."""

    def __init__(self, cpus):
        self.con = zt.Console(cpus=cpus)
        self.con.expect(PROMPT, timeout=SHELL_TIMEOUT)

    def run(self, line):
        """Type a line, wait for the next prompt, return what came between."""
        self.con.sendline(line)
        start = self.con.pos
        m = self.con.expect(PROMPT, timeout=SHELL_TIMEOUT)
        return self.con.output[start:m.start()]

    def close(self):
        self.con.close()


@pytest.fixture
def shell2():
    sh = Shell(cpus=2)
    yield sh
    sh.close()


@pytest.fixture
def shell4():
    sh = Shell(cpus=4)
    yield sh
    sh.close()


def test_user09_ps(shell2):
    """USER-09: `ps` lists one row per thread: init (pid 1, sleeping in wait4) and the shell
    itself (running), with CPU and times.  On a loaded host the vCPU running init may not
    have been scheduled since it spawned the shell (init is still on its way into wait4,
    runnable): ps is asked again, a few times, until it shows init asleep."""
    for _ in range(10):
        out = shell2.run("ps")
        if re.search(r"^\s*1\s+1\s+\d+\s+\d+\s+S\s+init\s", out, re.M):
            break
        time.sleep(0.5)
    assert re.search(r"PID\s+TID\s+PPID\s+CPU\s+S\s+NAME", out), out
    assert re.search(r"^\s*1\s+1\s+\d+\s+\d+\s+S\s+init\s", out, re.M), out
    assert re.search(r"^\s*\d+\s+\d+\s+1\s+\d+\s+R\s+sh\s", out, re.M), out


def test_user10_cpus(shell4):
    """USER-10: `cpus` shows every CPU with its role, the running task and its counters."""
    out = shell4.run("cpus")
    for cpu in range(4):
        assert re.search(rf"^cpu{cpu}: (housekeeping|dataplane), online, running ", out,
                         re.M), out
    assert re.search(r"running pid \d+ tid \d+ \(sh\)", out), out
    assert re.search(r"exceptions: sync \d+ irq \d+ fiq \d+ serror \d+; syscalls \d+", out), out
    assert re.search(r"interrupts: timer \d+ ipi \d+ uart \d+ other \d+", out), out
    assert re.search(r"time \(ms\): user \d+ sys \d+ idle \d+", out), out


def test_user11_run_program_with_args(shell2):
    """USER-11: `hello a b` runs /bin/hello with its arguments; a non-zero status is
    reported."""
    out = shell2.run("hello a b")
    assert re.search(r"hello from pid \d+: argv\[0\]=hello argv\[1\]=a argv\[2\]=b", out), out
    out = shell2.run("hello 3")
    assert re.search(r"^\[pid \d+\] exited with status 3$", out, re.M), out
    out = shell2.run("nope")
    assert "sh: nope: not found" in out, out


def test_user12_background_job(shell2):
    """USER-12: `sleep 0.5 &` returns to the prompt at once; the finished job is reaped and
    reported before a later prompt."""
    out = shell2.run("sleep 0.5 &")
    m = re.search(r"\[pid (\d+)\] sleep &", out)
    assert m, out
    pid = m.group(1)
    seen = ""
    for _ in range(100):
        seen += shell2.run("sleep 0.1")
        if f"[pid {pid}] done" in seen:
            break
    assert f"[pid {pid}] done" in seen, seen
    assert seen.count(f"[pid {pid}]") == 1, seen


def test_user13_ctrl_c_kills_foreground(shell2):
    """USER-13: Ctrl-C while `sleep 1000` runs sends it SIGINT; the shell reports it and
    carries on."""
    killed = r"\[pid \d+\] killed by signal 2 \(SIGINT\)"
    dropped = r"\^C\n" + PROMPT
    for attempt in range(10):
        shell2.con.sendline("sleep 1000")
        shell2.con.expect(r"sleep 1000\n", timeout=SHELL_TIMEOUT)
        time.sleep(0.2 * (attempt + 1))  # pacing only: the outcome is read from the console
        # The console echoes the line before the shell reads it.  A Ctrl-C that arrives
        # before the shell has read the line flushes it, as Linux's line discipline does
        # (`^C` and a fresh prompt: type it again); one that arrives before the shell has
        # handed the console over interrupts nothing.  Retry until the kill is reported.
        outcome = None
        for _ in range(30):
            shell2.con.send("\x03")
            try:
                m = shell2.con.expect(killed + "|" + dropped, timeout=2)
            except TimeoutError:
                continue
            outcome = "killed" if "SIGINT" in m.group(0) else "dropped"
            break
        if outcome == "killed":
            break
    else:
        raise AssertionError("no SIGINT report:\n" + shell2.con.output[-2000:])
    # A Ctrl-C typed after the kill reached the shell's line instead (it shows `^C` and a
    # fresh prompt), and the console echoes a line typed ahead before the shell's prompt:
    # both harmless, so look for the echo's output wherever it lands.
    shell2.con.sendline("echo alive")
    shell2.con.expect(r"(\n|\$ )alive\n" + PROMPT, timeout=SHELL_TIMEOUT)


def test_user14_line_editing(shell2):
    """USER-14: Backspace/DEL erase, Ctrl-C drops the typed line without running it."""
    out = shell2.run("echo abX\x7fc")
    assert re.search(r"^abc$", out, re.M), out
    shell2.con.send("hello dropped\x03")
    shell2.con.expect(r"\^C\n" + PROMPT, timeout=SHELL_TIMEOUT)
    out = shell2.run("echo after")
    assert "dropped" not in out and "after" in out, out


def test_user15_fault_reported(shell2):
    """USER-15: a program that faults is killed with one kernel line; the shell reports the
    signal and keeps going."""
    out = shell2.run("usertests -h nullderef")
    assert re.search(r"pid \d+ \(usertests\) killed: data abort at 0x0 \(pc 0x[0-9a-f]+\)",
                     out), out
    assert re.search(r"\[pid \d+\] killed by signal 11 \(SIGSEGV\)", out), out


def test_user16_poweroff_status():
    """USER-16: `poweroff 3` powers the machine off; QEMU exits with 3."""
    sh = Shell(cpus=2)
    try:
        sh.con.sendline("poweroff 3")
        assert sh.con.wait(timeout=SHELL_TIMEOUT) == 3, sh.con.output[-2000:]
    finally:
        sh.close()


def test_user17_exit_ends_init():
    """USER-17: `exit 4` in the shell that init started ends init with status 4."""
    sh = Shell(cpus=1)
    try:
        sh.con.sendline("exit 4")
        assert sh.con.wait(timeout=SHELL_TIMEOUT) == 4, sh.con.output[-2000:]
        assert "init exited with status 4" in sh.con.output
    finally:
        sh.close()
