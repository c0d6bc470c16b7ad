# SPDX-License-Identifier: MIT
"""The noise meter /bin/osnoise (issue 6): rtla's table, isolated dataplane CPUs that see only
"HW" noise (the host, under TCG), housekeeping CPUs whose IRQ and Thread counts agree with the
kernel's counters and with QEMU's own exception log, the histogram and its plot, bad arguments.
Issue 15: osnoise -w (rtla hwnoise: the kernel samples with IRQs masked) and /bin/timerlat
(rtla timerlat: periodic absolute sleeps, IRQ and task wake-up latency).

Every boot has 4 CPUs with dataplane=2-3.  Nothing asserts on elapsed time or on how much
noise the host caused (that depends on the host); only on counts and on columns that must be
exact by construction.
"""

import json
import re
import subprocess

import pytest

import zt

PLOT_NOISE = zt.REPO / "tools" / "plot-noise"
# rtla osnoise top's column header (tools/tracing/rtla/src/osnoise_top.c), byte for byte.
RTLA_HEADER = ("CPU Period       Runtime        Noise  % CPU Aval   Max Noise   Max Single"
               "          HW          NMI          IRQ      Softirq       Thread")
COLUMNS = ("cpu", "periods", "runtime", "noise", "avail", "max_noise", "max_single", "hw", "nmi",
           "irq", "softirq", "thread")
RE_ROW = re.compile(r"^\s*(\d+) #(\d+)\s+(\d+)\s+(\d+)\s+(\d+\.\d{5})\s+(\d+)\s+(\d+)\s+(\d+)"
                    r"\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)$")
RE_DETAIL = re.compile(r"^osnoise: cpu (\d+) hw_noise_us (\d+) os_noise_us (\d+) samples (\d+) "
                       r"kernel_entries (\d+) ctx_switches (\d+)$")
RE_WINDOW = re.compile(r"^osnoise: cpu (\d+) window exceptions (\d+) syscalls (\d+) irqs (\d+)$")
RE_HIST = re.compile(r"^osnoise-hist: cpu (\d+) lo_us (\d+) hi_us (\d+) count (\d+)$")


def boot_sh(cmd, **kw):
    return zt.boot(cpus=4, bootargs=f"quiet dataplane=2-3 init=/bin/sh -- -c '{cmd}'", **kw)


def table(b):
    """{cpu: {column: value}} from osnoise's table; checks the header lines first."""
    lines = b.lines()
    i = lines.index(RTLA_HEADER)  # ValueError names the missing header
    assert lines[i - 2].strip() == "Operating System Noise", lines[i - 2:i + 1]
    assert re.fullmatch(r"duration: +\d+ \d\d:\d\d:\d\d \| time is in us", lines[i - 1]), \
        lines[i - 1]
    rows = {}
    for line in lines[i + 1:]:
        m = RE_ROW.match(line)
        if not m:
            break
        assert len(line.split()) == len(COLUMNS), line
        vals = [float(g) if k == "avail" else int(g) for k, g in zip(COLUMNS, m.groups())]
        rows[vals[0]] = dict(zip(COLUMNS, vals))
    return rows


def details(b):
    """{cpu: (hw_noise_us, os_noise_us, samples, kernel_entries, ctx_switches)},
    {cpu: (exceptions, syscalls, irqs)}."""
    det, win = {}, {}
    for line in b.lines():
        m = RE_DETAIL.match(line)
        if m:
            det[int(m.group(1))] = tuple(int(g) for g in m.groups()[1:])
        m = RE_WINDOW.match(line)
        if m:
            win[int(m.group(1))] = tuple(int(g) for g in m.groups()[1:])
    return det, win


def hist(b):
    """{cpu: {lo_us: count}}."""
    out = {}
    for line in b.lines():
        m = RE_HIST.match(line)
        if m:
            out.setdefault(int(m.group(1)), {})[int(m.group(2))] = int(m.group(4))
    return out


def qemu_windows(b, cpu):
    wins = [w for w in b.exclog(windows=True)["windows"] if w["cpu"] == cpu]
    assert len(wins) == 1 and wins[0]["close_line"] is not None, wins
    return wins[0]["counts"]


def check_row_arithmetic(row):
    """Columns that follow from others: available share, noise bounds, NMI/Softirq 0."""
    assert row["nmi"] == 0 and row["softirq"] == 0, row
    assert 0 <= row["noise"] <= row["runtime"], row
    assert row["max_single"] <= row["max_noise"] <= row["noise"], row
    avail = (row["runtime"] - row["noise"]) * 100 / row["runtime"]
    assert abs(row["avail"] - avail) <= 1e-5, (row, avail)
    if row["noise"] > 0:  # every noise sample is HW noise or came with an IRQ or a task
        assert row["hw"] + row["irq"] + row["thread"] > 0, row


@pytest.fixture(scope="module")
def hist_run():
    """One short run on a housekeeping and both dataplane CPUs, threshold 10 us, -H."""
    b = zt.boot(cpus=4, bootargs="quiet dataplane=2-3 init=/bin/osnoise -- -c 1-3 -t 1 -T 10 -H")
    assert b.status == 0, b
    return b


@pytest.mark.parallel_vcpus
def test_osn01_table_has_rtla_header_and_one_row_per_cpu(hist_run):
    """OSN-01: osnoise prints rtla osnoise top's title, duration line and column header, then
    exactly one 12-column row per requested CPU: 1 period of 1 s, NMI and Softirq 0, the
    available share computed from Runtime and Noise."""
    b = hist_run
    rows = table(b)
    assert sorted(rows) == [1, 2, 3], b
    for row in rows.values():
        assert row["periods"] == 1, row
        assert row["runtime"] >= 1000000, row
        check_row_arithmetic(row)
    det, win = details(b)
    assert sorted(det) == sorted(win) == [1, 2, 3], b
    for cpu, (hw_us, os_us, samples, entries, switches) in det.items():
        # each part is rounded down to whole microseconds on its own
        assert 0 <= rows[cpu]["noise"] - (hw_us + os_us) <= 1, (cpu, det[cpu], rows[cpu])
        assert samples > 0, det[cpu]


@pytest.mark.parallel_vcpus
def test_osn06_histogram_counts_every_sample(hist_run):
    """OSN-06: with -H, each CPU's log2 buckets add up to the samples it took, and the run's
    threshold is printed for tools/plot-noise."""
    b = hist_run
    assert "osnoise-hist: threshold_us 10" in b.lines(), b
    h, (det, _) = hist(b), details(b)
    assert sorted(h) == [1, 2, 3], b
    for cpu, buckets in h.items():
        assert sum(buckets.values()) == det[cpu][2], (cpu, buckets, det[cpu])
        assert min(buckets) == 0 and buckets[0] > 0, buckets


@pytest.mark.parametrize("flag", ["-i", "-s"])
def test_osn02_isolated_dataplane_sees_only_hw_noise(flag):
    """OSN-02: isolated (-i) or strictly isolated (-s) samplers on dataplane CPUs 2-3 for 5 s
    while /bin/load keeps housekeeping busy: IRQ and Thread are 0, all Noise is HW noise, the
    kernel counted nothing on those CPUs, and QEMU's log shows 0 exceptions in each sampling
    thread's window (from the isolating prctl to the one ending isolation)."""
    b = boot_sh(f"load -t 7 -q & osnoise -c 2-3 -t 5 {flag}; wait", exclog=True)
    assert b.status == 0, b
    assert "isolation: pid" not in b.console, b
    assert not re.search(r"\[pid \d+\] (killed|exited)", b.console), b
    assert int(re.search(r"load: 7.0 s: (\d+) spawns", b.console).group(1)) > 0, b
    rows = table(b)
    det, win = details(b)
    assert sorted(rows) == [2, 3], b
    for cpu, row in rows.items():
        check_row_arithmetic(row)
        assert row["periods"] == 5, row
        assert row["irq"] == 0 and row["thread"] == 0, row
        hw_us, os_us, samples, entries, switches = det[cpu]
        assert os_us == 0 and hw_us == row["noise"], (row, det[cpu])
        assert (row["hw"] > 0) == (row["noise"] > 0), row
        assert entries == 0 and switches == 0, det[cpu]
        assert win[cpu] == (0, 0, 0), win[cpu]
        counts = qemu_windows(b, cpu)
        assert counts["total"] == 0, (cpu, counts)


def test_osn03_housekeeping_noise_matches_kernel_counters():
    """OSN-03: a sampler on housekeeping CPU 1 (not isolated) under /bin/load sees IRQ or
    Thread noise; the window's exceptions, syscalls and IRQs the kernel counted equal QEMU's
    log between the markers; the IRQ column is at most the window's IRQs; Thread agrees with
    the context switches (each interruption that ran others has one switch back)."""
    b = boot_sh("load -t 5 -q & osnoise -c 1 -t 3; wait", exclog=True)
    assert b.status == 0, b
    row = table(b)[1]
    check_row_arithmetic(row)
    assert row["irq"] + row["thread"] > 0, row
    det, win = details(b)
    hw_us, os_us, samples, entries, switches = det[1]
    assert os_us > 0 and 0 <= row["noise"] - (hw_us + os_us) <= 1, (row, det[1])
    exceptions, syscalls, irqs = win[1]
    counts = qemu_windows(b, 1)
    assert (counts["total"], counts["kinds"]["sync-svc"], counts["kinds"]["irq"]) == \
        (exceptions, syscalls, irqs), (counts, win[1])
    assert row["irq"] <= irqs and entries > 0, (row, det[1], win[1])
    if switches:
        assert row["thread"] < switches <= 2 * row["thread"], (row, det[1])
    else:
        assert row["thread"] == 0, (row, det[1])


def test_osn04_isolation_refused_on_housekeeping():
    """OSN-04: -i on a housekeeping CPU: the isolating prctl fails with EINVAL, osnoise says
    so, prints no row for that CPU and exits 1."""
    b = zt.boot(cpus=4, bootargs="quiet dataplane=2-3 init=/bin/osnoise -- -c 1 -t 1 -i")
    assert b.status == 1, b
    assert "osnoise: cpu 1: prctl(PR_SET_TASK_ISOLATION) failed: -EINVAL" in b.console, b
    assert table(b) == {}, b


@pytest.mark.parametrize("args", [
    "",
    "-c 2",
    "-t 1",
    "-c 4 -t 1",
    "-c 3-2 -t 1",
    "-c 2, -t 1",
    "-c x -t 1",
    "-c 2 -t 0",
    "-c 2 -t 5s",
    "-c 2 -t 1 -T 0",
    "-c 2 -t 1 -T -3",
    "-c 2 -t 1 -x",
    "-c 2 -t",
    "-w -c 2 -t 1 -i",
    "-w -c 2 -t 1 -H",
], ids=lambda a: a.replace(" ", "_") or "none")
def test_osn07_bad_arguments(args):
    """OSN-07: a bad or missing argument prints the usage and exits 2, sampling nothing."""
    bootargs = "quiet dataplane=2-3 init=/bin/osnoise" + (f" -- {args}" if args else "")
    b = zt.boot(cpus=4, bootargs=bootargs)
    assert b.status == 2, b
    assert "usage: osnoise -c LIST -t SECONDS [-T US] [-i] [-s] [-H]" in b.console, b
    assert RTLA_HEADER not in b.console, b


@pytest.mark.parallel_vcpus
def test_osn05_plot_noise_reads_console_and_writes_png(hist_run, tmp_path):
    """OSN-05: tools/plot-noise finds the histogram and the table in a console log (buckets
    and rows equal to osnoise's) and writes a PNG."""
    log = tmp_path / "console.log"
    log.write_text(hist_run.console)
    runs = zt.tool_module("plot-noise").parse(hist_run.console)
    assert len(runs) == 1 and runs[0]["threshold_us"] == 10, runs
    h = hist(hist_run)
    parsed = runs[0]["hist"]
    assert {cpu: {lo: n for lo, (_, n) in bk.items()} for cpu, bk in parsed.items()} == h
    assert sorted(runs[0]["rows"]) == [1, 2, 3], runs[0]["rows"]
    pytest.importorskip("matplotlib")
    out = tmp_path / "noise.png"
    r = subprocess.run(["/usr/bin/python3", str(PLOT_NOISE), str(log), "-o", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", r.stdout


def test_osn08_percentiles_and_json_buckets_agree():
    """OSN-08: -P and -J (sysjitter's and oslat's outputs): the JSON buckets hold every
    sample, the interruptions are the gaps over the threshold, the percentiles rise with the
    rank and stay within the longest gap."""
    b = zt.boot(cpus=4, bootargs="quiet dataplane=2-3 init=/bin/osnoise -- -c 2-3 -t 0.5 -P -J -i")
    assert b.status == 0, b
    pct = {int(m.group(1)): m for m in re.finditer(
        r"osnoise-pct: cpu (\d+) interruptions (\d+) per_s ([\d.]+) p50_us (\d+) p90_us (\d+) "
        r"p99_us (\d+) p99.9_us (\d+) p99.99_us (\d+) p99.999_us (\d+) max_us (\d+)", b.console)}
    dets = {int(m.group(1)): m for line in b.lines() if (m := RE_DETAIL.match(line))}
    jsons = [json.loads(line.split("osnoise-json: ", 1)[1]) for line in b.lines()
             if line.startswith("osnoise-json: ")]
    assert sorted(pct) == [2, 3] and sorted(j["cpu"] for j in jsons) == [2, 3], b
    for j in jsons:
        cpu, m = j["cpu"], pct[j["cpu"]]
        assert sum(j["counts"]) + j["overflow"] == j["samples"] == int(dets[cpu].group(4)), j
        over = sum(j["counts"][j["threshold_us"] + 1:]) + j["overflow"]
        at_least = sum(j["counts"][j["threshold_us"]:]) + j["overflow"]
        assert over <= int(m.group(2)) <= at_least, (m.group(0), j)
        ps = [int(m.group(i)) for i in range(4, 10)]
        assert ps == sorted(ps), m.group(0)
        if int(m.group(2)):
            assert ps[-1] <= min(int(m.group(10)), 512), m.group(0)


def test_osn09_hwnoise_masks_irqs_on_dataplane_only():
    """OSN-09: osnoise -w on dataplane CPUs 2-3 for 0.3 s (3 passes of zt_hwnoise with IRQs
    masked) while /bin/load runs on housekeeping: every noise sample is HW noise, IRQ and
    Thread are 0, and QEMU's log shows exactly the 3 system calls per CPU in each window and
    no interrupt; on housekeeping CPU 1 the call is refused with EPERM, said plainly."""
    b = boot_sh("load -t 2 -q & osnoise -w -c 2-3 -t 0.3 -P; osnoise -w -c 1 -t 0.1; wait",
                exclog=True)
    assert b.status == 0, b
    assert "osnoise: cpu 1: zt_hwnoise failed: -EPERM (IRQs are masked only on a dataplane " \
        "CPU)" in b.console, b
    rows = table(b)
    det, win = details(b)
    assert sorted(rows) == [2, 3], b
    pct = {int(m.group(1)): int(m.group(2))
           for m in re.finditer(r"osnoise-pct: cpu (\d+) interruptions (\d+)", b.console)}
    for cpu, row in rows.items():
        check_row_arithmetic(row)
        assert row["periods"] == 1 and row["runtime"] >= 300000, row
        assert row["irq"] == 0 and row["thread"] == 0 and row["hw"] == pct[cpu], (row, pct)
        hw_us, os_us, samples, entries, switches = det[cpu]
        assert os_us == 0 and hw_us == row["noise"] and samples > 0, (row, det[cpu])
        assert entries == 3 and switches == 0, det[cpu]
        assert win[cpu] == (3, 3, 0), win[cpu]
        wins = [w for w in b.exclog(windows=True)["windows"] if w["cpu"] == cpu]
        assert len(wins) == 1, wins
        counts = wins[0]["counts"]
        assert (counts["total"], counts["kinds"]["sync-svc"]) == (3, 3), (cpu, counts)


def test_osn10_timerlat_takes_exactly_its_timer_interrupts():
    """OSN-10: /bin/timerlat on dataplane CPU 3 under -icount, 200 periods of 1 ms: QEMU's log
    shows in the window exactly 200 timer interrupts acknowledged (INTID 27, nothing else), all
    by the idle loop with IRQs masked (no IRQ exception), and 400 system calls
    (clock_nanosleep + clock_gettime per period), as the kernel's counters do; every wake-up
    came with one timer interrupt for its own deadline (a fired timer left armed would
    interrupt the woken task a second time), and the task ran after the handler."""
    b = boot_sh("timerlat -c 3 -t 0.2", exclog=True, trace_irqs=True, icount=4)
    assert b.status == 0, b
    console = "\n".join(b.lines())
    m = re.search(r"^timerlat: cpu 3 wakeups (\d+) overruns (\d+) timer_irqs (\d+) "
                  r"unmatched (\d+)$", console, re.M)
    assert m and [int(g) for g in m.groups()] == [200, 0, 200, 0], b
    lat = {k: dict(zip(("n", "min", "avg", "max"), map(int, v))) for k, *v in re.findall(
        r"^timerlat: cpu 3 (irq|task) n (\d+) min_ns (\d+) avg_ns (\d+) max_ns (\d+) ",
        console, re.M)}
    assert lat["irq"]["n"] == lat["task"]["n"] == 200, lat
    assert 0 < lat["irq"]["min"] < lat["task"]["min"], lat
    assert lat["irq"]["max"] < lat["task"]["max"], lat
    assert re.search(r"^timerlat: cpu 3 window exceptions 400 syscalls 400 irqs 0$",
                     console, re.M), b
    wins = [w for w in b.exclog(windows=True)["windows"] if w["cpu"] == 3]
    assert len(wins) == 1, wins
    counts = wins[0]["counts"]
    assert (counts["total"], counts["kinds"]["sync-svc"], counts["kinds"].get("irq", 0)) == \
        (400, 400, 0), counts
    assert wins[0]["intids"] == {"27": 200}, wins[0]


@pytest.mark.parametrize("args", ["", "-c 3", "-c 3 -t 1 -p 50", "-c 3 -t 0.0001",
                                  "-c 3 -t 1 -p", "-c 9 -t 1", "-c 3 -t 1 -x"],
                         ids=lambda a: a.replace(" ", "_") or "none")
def test_osn11_timerlat_bad_arguments(args):
    """OSN-11: timerlat with a bad or missing argument prints its usage and exits 2."""
    b = zt.boot(cpus=4, bootargs="quiet dataplane=2-3 init=/bin/timerlat"
                + (f" -- {args}" if args else ""))
    assert b.status == 2, b
    assert "usage: timerlat -c LIST -t SECONDS [-p PERIOD_US]" in b.console, b
    assert "wakeups" not in b.console, b
