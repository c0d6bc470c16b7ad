# SPDX-License-Identifier: MIT
"""What a newcomer ran into (issue 21): each test reproduces one report and fails without its
fix.  Item numbers are the issue's.
"""

import re

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
    reason, per exec, naming who asked: text, a header cut short, program headers past the
    end, a machine other than AArch64, a program whose interpreter exists nowhere, and (with
    busybox's cp) a file outside the initrd.  Printed through hklog, so a refusal on a
    dataplane CPU is printed by housekeeping."""
    has_cp = (zt.BUILD / "initrd" / "bin" / "busybox").exists()
    cmd = "notelf; badelf; badphdr; badmachine; badmachine; nointerp"
    if has_cp:
        cmd += "; cp /bin/hello /tmp/h; /tmp/h"
    b = sh(cmd)
    lines = [ln for ln in b.lines() if ln.startswith("exec: ")]
    want = [("/bin/notelf", "not an ELF file"), ("/bin/badelf", "not an ELF file"),
            ("/bin/badphdr", "program headers out of bounds"),
            ("/bin/badmachine", "AArch64"), ("/bin/badmachine", "AArch64"),
            ("/bin/nointerp", "")]
    if has_cp:
        want.append(("/tmp/h", "not in the initrd"))
    assert len(lines) == len(want), b  # one line per exec, no more
    for line, (path, why) in zip(lines, want):
        m = re.match(r"exec: pid (\d+) \(sh\) cannot run (\S+): (.+) \((E[A-Z]+)\)$", line)
        assert m and m.group(2) == path and why in m.group(3), (line, path, why)
    assert re.search(r"sh: nointerp: cannot run: ENOEXEC", b.console), b


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
