# SPDX-License-Identifier: MIT
"""Repartition at run time (issue 13): CPUs move between housekeeping and dataplane, go
offline and come back (zt_partition, /bin/partition), while a bystander dataplane CPU is
not touched at all — judged by QEMU's own exception log, never by the guest.

Three boots, kept lean: the bystander scenario, the refusals and isolation endings, and the
offline/online cycles.  The host unit test of the rules is tests/unit/test_partition.c.
"""

import re

import pytest

import zt


def sh(cmd, cpus=6, extra="", **kw):
    bootargs = f"quiet dataplane=3 {extra} init=/bin/sh -- -c '{cmd}'"
    return zt.boot(cpus=cpus, bootargs=bootargs, **kw)


def cycles_line(boot, role):
    m = re.search(rf"partition: (\d+) cycles of [\d,]+: {role} median ([\d.]+) us", boot.console)
    return (int(m.group(1)), float(m.group(2))) if m else None


@pytest.mark.parallel_vcpus
def test_prt01_bystander_takes_nothing():
    """PRT-01: a strict isolated spinner on CPU 3 runs 10 s while CPUs 2 and 4 move between
    housekeeping and dataplane 200 times and CPU 5 goes offline and online 20 times, both
    programs at once: QEMU's log shows 0 exceptions on CPU 3 in its window, the spinner is
    not killed, and the changes really happened (each program's cycle counts, the IPIs the
    changed CPUs acknowledged and CPU 5's PSCI calls in QEMU's log)."""
    b = sh("isol -c 3 -t 10 -s & sleep 0.5; partition -n 200 dataplane 2,4 & "
           "partition -n 20 offline 5; wait; partition", exclog=True, trace_irqs=True,
           timeout=400)
    assert b.status == 0, b
    m = re.search(r"isol: isolated on cpu 3 for ([\d.]+) s", b.console)
    assert m and float(m.group(1)) >= 10.0, b
    assert "isolation: pid" not in b.console and "killed" not in b.console, b
    assert cycles_line(b, "dataplane")[0] == 200 and cycles_line(b, "housekeeping")[0] == 200, b
    assert cycles_line(b, "offline")[0] == 20 and cycles_line(b, "online")[0] == 20, b
    assert "partition: housekeeping 0-2,4-5" in b.lines(), b  # all back where they were
    rep = b.exclog(windows=True, irqs=True)
    wins = [w for w in rep["windows"] if w["cpu"] == 3]
    assert len(wins) == 1 and wins[0]["close_line"] is not None, rep["windows"]
    assert wins[0]["counts"]["total"] == 0, wins[0]
    # The changed CPUs did take the change: IPIs acknowledged on 2 and 4 (at the interrupt
    # controller: an idle CPU handles them without an exception), and CPU 5 powered off (a
    # PSCI call of its own) and started again 20 times.
    per_cpu = rep["cpus"]
    for cpu in ("2", "4"):
        assert any(int(i) < 16 for i in rep["irqs"].get(cpu, {}).get("intids", {})), rep["irqs"]
    assert per_cpu["5"]["psci"] >= 20, per_cpu["5"]


def test_prt02_refusals_and_isolation_endings():
    """PRT-02: every refusal with its errno and its message: CPU 0 (-EPERM), no such CPU
    (-ERANGE), a malformed list (-EINVAL), moving an offline CPU (-ENODEV), onlining an
    online CPU or offlining an offline one (-EALREADY), offlining a CPU a task is pinned to
    (-EBUSY; an isolated task too), bad system-call arguments; and a CPU whose isolated task
    is moved: not strict, its isolation ends with a report and it runs on; strict with -b,
    -EBUSY and nothing happens; strict without, the report and SIGKILL, as for any break of
    strict isolation."""
    refusals = [
        ("partition -x EPERM dataplane 0", r"partition: cpu 0 is always housekeeping and "
                                           r"always online"),
        ("partition -x ERANGE offline 6", r"partition: cpu 6 does not exist \(this machine "
                                          r"has 6 CPUs\)"),
        ("partition -x ERANGE dataplane 1,70", r"partition: cpu 70 does not exist"),
        ("partition -x EINVAL dataplane 1-", r'partition: malformed CPU list "1-"'),
        ("partition offline 5", r"partition: CPU 5 is offline and in neither set"),
        ("partition -x ENODEV dataplane 5", r"partition: cpu 5 is offline: bring it online "
                                            r"first"),
        ("partition -x EALREADY offline 5", r"partition: cpu 5 is offline already"),
        ("partition -x EALREADY online 4", r"partition: cpu 4 is already online "
                                           r"\(housekeeping\)"),
        ("partition online 5", r"partition: housekeeping 0-2,4-5, dataplane 3"),
        ("spin -c 5 -t 1 & sleep 0.3; partition -x EBUSY offline 5; wait",
         r"partition: cpu 5 left online: pid \d+ tid \d+ \(spin\) runs there and may run "
         r"on no other online CPU"),
        ("partition -T", r"partition: argument checks: 11 ok, 0 wrong"),
    ]
    with zt.Console(cpus=6, bootargs="quiet dataplane=3") as con:
        def run(line):
            con.sendline(line)
            start = con.pos
            m = con.expect(r"zt\$ ", timeout=120)
            return con.output[start:m.start()]

        con.expect(r"zt\$ ", timeout=120)
        for line, msg in refusals:
            out = run(line)
            assert re.search(msg, out), (line, msg, out)
            m = re.search(r"partition: \S+ \S+: (\S+), expected -(\w+)", out)
            assert not m or m.group(1) == "-" + m.group(2), (line, out)
            assert "exited with status" not in out, (line, out)  # sh reports a failure
        # Not strict: the report, and the task runs to its end, no longer isolated.
        out = run("isol -c 3 -t 2 -E & sleep 0.5; partition housekeeping 3; wait")
        assert re.search(r"isolation: pid \d+ \(isol\) on cpu 3: isolation ended: the cpu "
                         r"becomes housekeeping \[not strict, task continues\]", out), out
        assert "isol: isolation flags at the end 0" in out, out
        assert "partition: housekeeping 0-5, dataplane none" in out, out
        # Strict, with -b: refused, and the task stays isolated to its end.
        out = run("partition dataplane 3; isol -c 3 -t 2 -s -E & sleep 0.5; "
                  "partition -b -x EBUSY housekeeping 3; wait")
        assert re.search(r"partition: cpu 3 left as it is: an isolated task owns it", out), out
        assert re.search(r"isol: isolation flags at the end [1-9]", out), out
        assert "isolation:" not in out, out
        # Strict, without -b: reported and killed, as for any break of strict isolation.
        # (Offline is refused while it lives: an isolated task may run only there.)
        out = run("isol -c 3 -t 3 -s & sleep 0.5; partition -x EBUSY offline 3; "
                  "partition housekeeping 3; wait; partition offline 3; "
                  "partition online-dataplane 3")
        assert re.search(r"partition: cpu 3 left online: pid \d+ tid \d+ \(isol\) runs there "
                         r"and may run on no other online CPU", out), out
        m = re.search(r"isolation: pid (\d+) \(isol\) on cpu 3: isolation ended: the cpu "
                      r"becomes housekeeping\n", out)
        assert m, out
        assert re.search(rf"\[pid {m.group(1)}\] killed by signal 9 \(SIGKILL\)", out), out
        assert "partition: housekeeping 0-2,4-5, dataplane 3" in out.split("CPU 3 is offline")[-1]


def test_prt03_offline_online_cycles_leak_nothing():
    """PRT-03: 100 offline/online cycles of CPU 5 leave the free page count and the kernel
    stack count at their baselines (its stack, emergency stack and trace ring are freed each
    time it goes off), and afterwards every CPU is online and runs a task."""
    cmd = ("partition -n 100 offline 5; cpus; spin -c 5 -t 0.05; spin -c 4 -t 0.05; "
           "isol -c 3 -t 0.05")
    b = sh(cmd, timeout=400)
    m = re.search(r"partition: free pages (\d+) before, (\d+) after; kernel stacks (\d+) "
                  r"before, (\d+) after", b.console)
    assert m and m.group(1) == m.group(2) and m.group(3) == m.group(4), b
    assert cycles_line(b, "offline")[0] == 100 and cycles_line(b, "online")[0] == 100, b
    for cpu in range(6):
        assert re.search(rf"cpu{cpu}: \w+, online, running", b.console), (cpu, b)
    assert "spin: window 1 cpu 5 tasks 1" in b.console, b
    assert "isol: isolated on cpu 3 for" in b.console, b
    assert b.status == 0, b
