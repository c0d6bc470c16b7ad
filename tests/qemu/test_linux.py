# SPDX-License-Identifier: MIT
"""Static Linux programs run unchanged (issue 11): glibc and musl builds of user/linux/lxtest.c,
Debian's busybox-static, the interactive busybox shell, a glibc isolation client, and
syscall_debug=1.

Checks are grouped so each boot runs many of them and prints one line per check, which the
tests parse: `make test` time is spent on checks, not on boots.  busybox-static and musl-dev
(arm64) are test inputs fetched by tools/fetch-debs; without them the tests that need them
say skipped, with the reason.
"""

import re

import pytest

import zt

BIN = zt.BUILD / "initrd" / "bin"
DEBS = zt.BUILD / "debs"
TIMEOUT = 300

LXTEST_CHECKS = ["hello", "threads", "forkexec", "signals", "files", "badfd", "emfile",
                 "badexec", "pipes", "tmpfull", "threadexec", "vfork"]


def skip_without(path, package):
    if not path.exists():
        why = DEBS / f"{package}.skip"
        reason = why.read_text().strip() if why.exists() else "not fetched"
        pytest.skip(f"{package} (arm64) unavailable: {reason}")


def check_lines(console, prefix):
    """{name: "ok" or the failure text} from lines "PREFIX NAME: ok|FAILED: ..."."""
    out = {}
    for m in re.finditer(rf"^{prefix} (\S+): (ok|FAILED.*)$", console.replace("\r", ""), re.M):
        out[m.group(1)] = m.group(2)
    return out


def run_lxtest(prog):
    b = zt.boot(cpus=4, bootargs=f"quiet syscall_debug=1 init=/bin/{prog} -- "
                + " ".join(LXTEST_CHECKS), timeout=TIMEOUT)
    assert "panic" not in b.console, b
    got = check_lines(b.console, "lxtest")
    assert set(got) == set(LXTEST_CHECKS), b
    bad = {k: v for k, v in got.items() if v != "ok"}
    assert not bad, b
    assert b.status == 0, b
    return b


def test_lx01_glibc_checks():
    """LX-01: a glibc static program (aarch64-linux-gnu-gcc -static) passes every lxtest
    check: printf/malloc/fopen/qsort, pthreads across CPUs, fork+execve+waitpid, signals with
    and without SA_RESTART, /tmp files, EBADF, EMFILE, execve errors, pipes with poll, /tmp
    full and every page back, execve from a thread of three, vfork sharing the parent's memory
    and posix_spawn; syscall_debug=1 names the one
    call glibc tries that does not exist (rseq) once per process."""
    b = run_lxtest("lxtest")
    reports = re.findall(r"syscall_debug: pid (\d+) \(([^)]*)\) called (\d+) \((\w+)\)", b.console)
    assert reports, b
    assert {r[3] for r in reports} == {"rseq"}, reports
    pids = [r[0] for r in reports]
    assert len(pids) == len(set(pids)), reports  # once per process


def test_lx02_musl_checks():
    """LX-02: the same program built against Debian's arm64 musl passes the same checks."""
    skip_without(BIN / "lxtest-musl", "musl-dev")
    run_lxtest("lxtest-musl")


BB_CHECKS = None


def bb_expected():
    text = (zt.REPO / "tests" / "linux" / "bbtest.sh").read_text()
    return re.findall(r"^t (\S+) ", text, re.M)


def test_lx03_busybox_script():
    """LX-03: Debian's busybox-static runs a sh script (tests/linux/bbtest.sh) of pipes,
    redirections, $(...), loops, exit statuses, ls -l, cat, wc, grep, sort, head, seq, sleep,
    test, /tmp files, kill, awk, sed, find, /proc/self/exe, /tmp full (ENOSPC) ...: every
    check prints ok."""
    skip_without(BIN / "busybox", "busybox-static")
    b = zt.boot(cpus=2, bootargs="quiet init=/bin/busybox -- sh /etc/bbtest.sh", timeout=TIMEOUT)
    assert "panic" not in b.console, b
    got = check_lines(b.console, "bb")
    want = bb_expected()
    assert len(want) > 40
    assert set(got) == set(want), (sorted(set(want) - set(got)), b)
    bad = {k: v for k, v in got.items() if v != "ok"}
    assert not bad, bad
    assert "bb: all checks ran" in b.console, b
    assert b.status == 0, b


def test_lx04_busybox_interactive():
    """LX-04: the interactive busybox shell on the console, typed through QEMU's serial
    input: line editing (backspace), a pipeline, Ctrl-C dropping a line, and `exit 3` ending
    init with status 3."""
    skip_without(BIN / "busybox", "busybox-static")
    con = zt.Console(cpus=2, bootargs="quiet init=/bin/busybox -- sh")
    try:
        con.expect(r"# ", timeout=TIMEOUT)
        con.send("echo abX\x7fc | tr a-z A-Z\r")
        con.expect(r"\nABC\n", timeout=TIMEOUT)
        con.expect(r"# ", timeout=TIMEOUT)
        con.send("echo dropped\x03")
        con.expect(r"# ", timeout=TIMEOUT)
        con.send("echo after\r")
        con.expect(r"\nafter\n", timeout=TIMEOUT)
        assert "\ndropped\n" not in con.output, con.output
        con.send("exit 3\r")
        assert con.wait(timeout=TIMEOUT) == 3, con.output[-2000:]
    finally:
        con.close()


@pytest.mark.parallel_vcpus
def test_lx05_glibc_isolation_client():
    """LX-05: a glibc program pinned to dataplane CPU 3 isolates itself (strict) through
    glibc's prctl() and spins 2 s: QEMU's log shows nothing on CPU 3 between the two marker
    calls but the two prctl system calls themselves (0 interruptions)."""
    b = zt.boot(cpus=4, bootargs="quiet dataplane=3 init=/bin/lxtest -- isol 3 2",
                timeout=TIMEOUT, exclog=True)
    assert b.status == 0, b
    assert re.search(r"lxtest isol: cpu 3 prctl 0/0, \d+ spins", b.console), b
    rep = b.exclog(windows=True)
    wins = [w for w in rep["windows"] if w["cpu"] == 3]
    assert len(wins) == 1 and wins[0]["close_line"] is not None, rep["windows"]
    c = wins[0]["counts"]
    assert c["total"] == 2 and c["kinds"]["sync-svc"] == 2, c
    assert list(c["svc_imm"].values()) == [2], c
