# SPDX-License-Identifier: MIT
"""512 CPUs (issue 14): QEMU virt's largest machine, booted once with dataplane=1-511.

QEMU gives a GICv3 machine of more than 123 CPUs a second redistributor region (hw/arm/virt.c:
123 frames fit at 0x080a0000, the rest go to 0x40_0000_0000).  The boot runs, in order, on an
otherwise idle machine:

* a strict isolated spinner on CPU 511 (/bin/isol, its window marked in QEMU's log);
* two spinners sharing CPU 122 (the last CPU of the first region), then CPU 123 (the first of
  the second): contention arms their time-slice timers, so both take timer interrupts and
  wakeup IPIs, each through its own redistributor;
* the views that walk every CPU: isolstat of the edge CPUs and 511, `cpus` (a summary at
  512), `cpus -c LIST`, `partition`;
* CPU 123 offline and back (its redistributor asleep and woken), CPU 122 to housekeeping and
  back (device interrupt routing by affinity).

Counts come from QEMU's own exception log (tools/exclog) and the kernel's exit statistics,
never from wall time.
"""

import re

import pytest

import zt

EDGE_LAST, EDGE_FIRST = 122, 123  # the last CPU of the first redistributor region, the first
SPINNER = 511                     # of the second; the strict isolated spinner's CPU
COMMAND = (f"isol -c {SPINNER} -t 2 -s; "
           f"spin -c {EDGE_LAST} -t 0.3 -n 2; spin -c {EDGE_FIRST} -t 0.3 -n 2; "
           f"isolstat -c {EDGE_LAST}-{EDGE_FIRST},{SPINNER}; cpus; "
           f"cpus -c 0,{EDGE_LAST}-{EDGE_FIRST},{SPINNER}; "
           f"partition offline {EDGE_FIRST}; partition online-dataplane {EDGE_FIRST}; "
           f"partition housekeeping {EDGE_LAST}; partition dataplane {EDGE_LAST}; partition")


@pytest.fixture(scope="module")
def big():
    """The one 512-CPU boot, its console lines and QEMU's exception log."""
    b = zt.boot(cpus=512, bootargs=f"dataplane=1-511 exit_stats=1 init=/bin/sh -- -c '{COMMAND}'",
                exclog=True, timeout=900)
    (zt.BUILD / "tmp").mkdir(parents=True, exist_ok=True)
    (zt.BUILD / "tmp" / "test_scale.log").write_text(b.console)
    assert b.status == 0, b
    return b, b.exclog(windows=True)


def test_scale01_every_cpu_online_within_the_memory_budget(big):
    """SCALE-01: `smp: 512 of 512 CPUs online`; the kernel's own count of what a CPU costs
    (its share of the per-CPU arrays plus what its bring-up allocated) is at most 64 KiB; the
    boot summary is one line per run of alike CPUs."""
    b, _ = big
    assert "smp: 512 of 512 CPUs online" in b.lines(), b
    m = re.search(r"smp: per-CPU memory (\d+) bytes: (\d+) static \(per-CPU arrays\), (\d+) "
                  r"allocated at boot", b.console)
    assert m, b
    total, static, dynamic = (int(x) for x in m.groups())
    assert total == static + dynamic and 0 < static and 0 < dynamic, m.group(0)
    assert total <= 64 * 1024, m.group(0)
    summary = b.console.split("cpus      role")[1].split("boot: all CPUs online")[0]
    rows = [l for l in summary.replace("\r", "").split("\n")[1:] if l.strip()]
    assert [r.split()[:2] for r in rows] == [["0", "housekeeping"], ["1-511", "dataplane"]], rows


def test_scale02_strict_spinner_on_cpu_511_takes_nothing(big):
    """SCALE-02: a strict isolated spinner on CPU 511, the other 510 dataplane CPUs idle:
    QEMU's log shows 0 exceptions on CPU 511 in its 2 s window, and no isolation report."""
    b, rep = big
    assert re.search(rf"isol: isolated on cpu {SPINNER} for 2\.\d+ s", b.console), b
    assert "isolation: pid" not in b.console, b
    wins = [w for w in rep["windows"] if w["cpu"] == SPINNER]
    assert len(wins) == 1 and wins[0]["close_line"] is not None, rep["windows"]
    assert wins[0]["counts"]["total"] == 0, wins[0]["counts"]


@pytest.mark.parametrize("cpu", [EDGE_LAST, EDGE_FIRST])
def test_scale03_hidden_edge_cpus_take_their_interrupts(big, cpu):
    """SCALE-03: CPU 122 (last in the first redistributor region) and CPU 123 (first in the
    second): two spinners sharing each get time slices, so QEMU's log shows interrupts in the
    spin window on that CPU; the audit reads their redistributors (every IPI and the timer PPI
    enabled); CPU 123 goes offline and comes back, CPU 122 becomes housekeeping and returns."""
    b, rep = big
    assert re.search(rf"spin: window 1 cpu {cpu} tasks 2 ms", b.console), b
    wins = [w for w in rep["windows"] if w["cpu"] == cpu]
    assert len(wins) == 1 and wins[0]["close_line"] is not None, rep["windows"]
    assert wins[0]["counts"]["kinds"]["irq"] >= 5, wins[0]["counts"]
    audit = b.console.split(f"cpu {cpu}: dataplane, no isolated task")[1]
    assert re.match(r"\s+enabled: SGI mask 0xffff \(IPIs\), local timer PPI 27 on", audit), b
    assert f"isolstat: cpu {cpu} clean" in b.lines(), b
    lines = b.lines()
    if cpu == EDGE_FIRST:
        assert "partition: CPU 123 is offline and in neither set" in lines, b
        assert "partition: housekeeping 0, dataplane 1-122,124-511" in lines, b
    else:
        assert "partition: housekeeping 0,122, dataplane 1-121,123-511" in lines, b
    assert "partition: dataplane 1-511" in lines, b  # the final `partition`: all back


def test_scale04_kernel_counts_equal_qemus_on_every_cpu(big):
    """SCALE-04: the kernel's exception counters (exit_stats=1, runs of equal CPUs expanded)
    equal QEMU's log on each of the 512 CPUs."""
    b, rep = big
    kernel = zt.exit_stats(b.console)
    assert sorted(kernel) == list(range(512)), sorted(set(range(512)) - set(kernel))
    for cpu, (sync, irq, fiq, serror, _svc, _timer) in kernel.items():
        q = rep["cpus"].get(str(cpu))
        if q is None:
            assert (sync, irq, fiq, serror) == (0, 0, 0, 0), (cpu, kernel[cpu])
            continue
        k = q["kinds"]
        # PSCI calls are HVCs QEMU handles itself: logged, but never reach the kernel.
        assert (sync, irq, fiq, serror) == (k["sync-svc"] + k["sync-other"] - q["psci"],
                                            k["irq"], k["fiq"], k["serror"]), (cpu, k)


def test_scale05_views_stay_readable(big):
    """SCALE-05: at 512 CPUs `cpus` is a summary (a line per run of alike CPUs), `cpus -c
    LIST` shows just the CPUs asked for, and the exit statistics are a few lines."""
    b, _ = big
    text = b.console.replace("\r", "")
    assert "cpus: 512 CPUs: 1 housekeeping, 511 dataplane, 0 offline" in text, b
    summary = text.split("cpus: 512 CPUs:")[1].split("\ncpu0:")[0].strip().split("\n")
    assert 2 <= len(summary) <= 8, summary
    assert re.search(r"^  1-511\s+dataplane\s+idle\s", text, re.M), b
    shown = re.findall(r"^cpu(\d+): (?:housekeeping|dataplane), online, running", text, re.M)
    assert shown == ["0", "122", "123", "511"], shown
    stats = [l for l in text.split("\n") if l.startswith("exit-stats: ")]
    assert 3 <= len(stats) <= 12, stats
