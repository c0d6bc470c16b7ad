# SPDX-License-Identifier: MIT
"""What a newcomer ran into (issue 21): each test reproduces one report and fails without its
fix.  Item numbers are the issue's.
"""

import re
import shutil
import subprocess

import zt


def sh(cmd, cpus=4, extra="", **kw):
    bootargs = f"quiet {extra} init=/bin/sh -- -c '{cmd}'"
    return zt.boot(cpus=cpus, bootargs=bootargs, **kw)


def test_new04_partition_cycles_restore_roles():
    """NEW-04 (item 2): `partition -n N offline LIST` brings each CPU back in the role it had:
    a dataplane CPU as dataplane (with ZT_PART_AS_DATAPLANE), a housekeeping one as
    housekeeping, in one list of both kinds too."""
    b = sh("partition -n 2 offline 3; partition; partition -n 2 offline 1-3; partition", cpus=4,
           extra="dataplane=2-3")
    assert b.status == 0, b
    shows = re.findall(r"^partition: dataplane (\S+)$", b.console.replace("\r", ""), re.M)
    assert shows == ["2-3", "2-3"], b
    assert re.search(r"cycles of 3: online-dataplane median", b.console), b
    assert re.search(r"cycles of 1-3: online/online-dataplane median", b.console), b
    assert b.console.count("partition: offline none") == 2, b


def test_new05_exec_refusals_say_why():
    """NEW-05 (item 4): every program the kernel refuses to run gets one console line with the
    reason and the errno, per exec, naming who asked: text, a header cut short, program headers
    past the end, a machine other than AArch64, and a program whose interpreter exists nowhere
    (ENOENT, as on Linux).  Printed through hklog, so a refusal on a dataplane CPU is printed
    by housekeeping.  (A program copied to /tmp is no longer refused: DYN-12 runs one.)"""
    b = sh("notelf; badelf; badphdr; badmachine; badmachine; nointerp")
    lines = [ln for ln in b.lines() if ln.startswith("exec: ")]
    want = [("/bin/notelf", "not an ELF file", "ENOEXEC"),
            ("/bin/badelf", "not an ELF file", "ENOEXEC"),
            ("/bin/badphdr", "program headers out of bounds", "ENOEXEC"),
            ("/bin/badmachine", "AArch64", "ENOEXEC"), ("/bin/badmachine", "AArch64", "ENOEXEC"),
            ("/bin/nointerp", "interpreter not found", "ENOENT")]
    assert len(lines) == len(want), b  # one line per exec, no more
    for line, (path, why, err) in zip(lines, want):
        m = re.match(r"exec: pid (\d+) \(sh\) cannot run (\S+): (.+) \((E[A-Z]+)\)$", line)
        assert m and m.group(2) == path and why in m.group(3) and m.group(4) == err, (line, path)
    assert re.search(r"sh: nointerp: cannot run: ENOENT", b.console), b


def test_new07_isolstat_housekeeping_is_not_a_finding():
    """NEW-07 (item 6): `isolstat -c` on housekeeping CPUs shows what is routed and queued
    there, marked "-", says the CPU is housekeeping and not audited, and counts no finding:
    exit status 0 where it reported "2 findings" and exited 2; a dataplane CPU in the same
    list is still audited."""
    b = sh("isolstat -c 0-1; isolstat -c 1,3", extra="dataplane=3")
    assert b.status == 0, b
    assert "[pid" not in b.console, b  # no program exited with a non-zero status
    assert not re.search(r"^  ! ", b.console, re.M), b
    assert not re.search(r"\d+ findings?$", b.console, re.M), b
    assert len(re.findall(r"^isolstat: cpu [01]: housekeeping, not audited", b.console,
                          re.M)) == 3, b
    assert re.search(r"^  - device interrupt SPI \d+ routed here", b.console, re.M), b
    assert "isolstat: cpu 3 clean" in b.console, b


def make(*args, timeout=600):
    """Run make in the repository; (status, output)."""
    p = subprocess.run(["make", "--no-print-directory", *args], cwd=zt.REPO, timeout=timeout,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def usr_bin():
    d = zt.BUILD / "initrd" / "usr" / "bin"
    return sorted(x.name for x in d.iterdir()) if d.exists() else []


def test_new08_run_prog_replaces_and_comes_first(tmp_path, monkeypatch):
    """NEW-08 (item 7): each `make ... PROG=FILE` leaves exactly that program in
    build/initrd/usr/bin (an earlier run's program is removed, so the image does not grow run
    after run; none without PROG=), and the shell finds /usr/bin before /bin: a program named
    hello (here a copy of /bin/true) is not shadowed by /bin/hello.  The release kernel is
    rebuilt without PROG at the end."""
    progs = []
    for name in ("hello", "other"):
        dst = tmp_path / name
        shutil.copy(zt.BUILD / "initrd" / "bin" / "true", dst)
        progs.append(dst)
    try:
        st, out = make(f"PROG={progs[0]}", "build/kernel.elf")
        assert st == 0, out
        assert usr_bin() == ["hello"], usr_bin()
        monkeypatch.setattr(zt, "KERNEL", zt.BUILD / "kernel.elf")
        b = sh("hello; hello 3; echo end")
        assert "hello from pid" not in b.console and "end" in b.console, b
        assert b.status == 0, b
        st, out = make(f"PROG={progs[1]}", "build/kernel.elf")
        assert st == 0, out
        assert usr_bin() == ["other"], usr_bin()
    finally:
        st, out = make("build/kernel.elf")
    assert st == 0, out
    assert usr_bin() == [], usr_bin()


def test_new09_clean_keeps_downloads(tmp_path):
    """NEW-09 (item 8): `make clean` removes the build but keeps build/debs (what only the
    archive can give back); `make distclean` removes everything.  Run on a build directory of
    its own (B=...), never the suite's."""
    b = tmp_path / "b"
    (b / "debs" / "busybox-static").mkdir(parents=True)
    (b / "debs" / "busybox-static.ok").write_text("")
    (b / "kernel.elf").write_text("x")
    (b / "initrd" / "bin").mkdir(parents=True)
    st, out = make(f"B={b}", "clean")
    assert st == 0, out
    assert sorted(x.name for x in b.iterdir()) == ["debs"], out
    assert (b / "debs" / "busybox-static.ok").exists()
    st, out = make(f"B={b}", "distclean")
    assert st == 0 and not b.exists(), out


def test_new10_help_lists_every_run_variable():
    """NEW-10 (item 10): `make help` names MEM= with CPUS=, BOOTARGS= and REPRO=, and the
    clean targets."""
    st, out = make("help")
    assert st == 0, out
    for word in ("CPUS=", "MEM=", "BOOTARGS=", "REPRO=1", "PROG=", "make distclean"):
        assert word in out, (word, out)


def test_new11_shell_pipes():
    """NEW-11 (item 10): the zt shell runs `a | b`: a built-in's output into a program (`echo
    hello 5 | sh`: the inner shell runs the line, status 5), a program's output into a program
    (`hello 1 | sh`: hello's own line becomes the inner shell's command), a pipe with no
    command on one side refused with status 2, and (with busybox's head) a built-in writing
    far more than a pipe holds into a reader that stops after two lines: no deadlock, no
    SIGPIPE report, the shell goes on."""
    has_head = (zt.BUILD / "initrd" / "bin" / "busybox").exists()
    cmd = "echo hello 5 | sh; echo status-next; hello 1 | sh; help"
    if has_head:
        cmd += "; cpus -a | head -2; echo after-head"
    b = sh(cmd, cpus=64 if has_head else 4)
    out = b.console.replace("\r", "")
    assert re.search(r"hello from pid \d+: argv\[0\]=hello argv\[1\]=5", out), b
    assert re.search(r"\[pid \d+\] exited with status 5\n(zt\$ \n)?\[pid \d+\] exited with "
                     r"status 5\nstatus-next", out), b
    assert re.search(r"hello from pid \d+: argv\[0\]=hello argv\[1\]=from argv\[2\]=pid", out), b
    assert "`a | b` a pipe" in out, b
    if has_head:
        m = re.search(r"after-head", out)
        assert m, b
        assert re.search(r"^cpu0: housekeeping, online", out, re.M), b
        assert len(re.findall(r"^cpu\d+: ", out, re.M)) == 1, b  # head stopped after 2 lines
        assert "SIGPIPE" not in out, b
    assert b.status == 0, b
    b = sh("echo a |")
    assert "sh: a pipe with no command on one side" in b.console and b.status == 2, b


def run_hints(kind):
    """Boot with the device `make run-net NET=kind` adds, run the guest command its hints name,
    then every host command exactly as printed; (boot, [(command, status, output)])."""
    netload = zt.tool_module("netload")
    opts, where = zt.net_options(kind)
    p1, p2 = (where["port"], where["ctl"]) if kind == "user" else (where["to"], where["listen"])
    hints = netload.hints(kind, p1, p2)
    guest = [cmd for w, cmd, _ in hints if w == "guest"]
    host = [cmd for w, cmd, _ in hints if w == "host"]
    assert len(guest) == 1 and not any(c.split()[0] == "nc" for c in host), hints
    con = zt.Console(cpus=4, bootargs=f"quiet dataplane=2-3 init=/bin/sh -- -c '{guest[0]}'",
                     extra=opts)
    ran = []
    try:
        con.expect(r"udpecho: ready:", timeout=300)
        for cmd in host:
            p = subprocess.run(cmd, shell=True, cwd=zt.REPO, timeout=120, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            ran.append((cmd, p.returncode, p.stdout))
        status = con.wait(timeout=300)
    finally:
        con.close()
    return zt.Boot(con.cmd, con.output, status, None), ran


def test_new12_run_net_hints_work_as_printed():
    """NEW-12 (item 9): what `make run-net` prints (tools/netload hints, which the recipe's
    tools/run-net calls) works as printed, for both NET=user and NET=dgram: the guest command names the
    control port (-x 9), the host commands need no nc (netload, or a one-line Python command
    whose echo comes back), every one exits 0, and the last one, `tools/netload stop` on the
    control port (user networking: the forward QEMU was given for the guest's port 9), ends
    udpecho."""
    mk = (zt.REPO / "Makefile").read_text()
    script = (zt.REPO / "tools" / "run-net").read_text()
    assert "tools/run-net" in mk and "nc -u" not in mk
    assert 'netload" hints --net "$hints"' in script and "nc -u" not in script
    for kind in ("user", "dgram"):
        b, ran = run_hints(kind)
        for cmd, st, out in ran:
            assert st == 0, (kind, cmd, out)
        assert "stop" in ran[-1][0], ran
        if kind == "user":
            assert any("b'hello'" in out for _, _, out in ran), ran
        assert re.search(r"udpecho: done after [\d.]+ s \(control port\)", b.console), b
        assert b.status == 0, b
