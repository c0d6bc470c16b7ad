# SPDX-License-Identifier: MIT
"""make compare's zerotick side as make test's regression gate (tools/compare, issue 15).

CMP-01 is the gate for the central promise: every interruption scenario of `make compare`,
run on zerotick exactly as the comparison runs it (short windows), leaves the isolated CPU 3
without a single exception in its window, as QEMU's own log counts them; the one window
where two tasks share the CPU must show the slice timer instead.  The Linux side is
informational and not part of make test (Linux boots slowly under TCG).
Run: /usr/bin/python3 -m pytest tests/qemu/test_compare.py
"""

import re
import subprocess

import zt

import linuxvm  # noqa: E402  (tools/linuxvm.py, on the path through zt)

compare = zt.tool_module("compare")


def test_cmp01_scenarios_leave_isolated_cpu_alone():
    """CMP-01: no exception on isolated CPU 3 in any compare scenario under zerotick."""
    b, rows = compare.irq_boot("zerotick", None, quick=True)
    for (key, which), row in zip(compare.expected_windows(), rows.values()):
        assert not row["open"], f"{key}/{which}: window never closed"
        if (key, which) in compare.EXPECTED_NOISE:
            # two tasks on one CPU: the slice timer (INTID 27) must run, and only it
            assert row["total"] > 0 and set(row["intids"]) == {"27"}, (key, which, row)
        else:
            assert row["total"] == 0, f"{key}/{which} took {row}\n{b!r}"
    # the disturbances really happened: both loads did work, the dumps and changes ran
    loads = re.findall(r"load: [\d.]+ s: (\d+) spawns, (\d+) writes", b.console)
    assert len(loads) == 2 and all(int(s) > 0 for s, _w in loads), loads
    assert int(loads[1][1]) > int(loads[0][1]), "the flood wrote no more than -q"
    assert b.console.count("T end") == 2, b
    assert not re.search(r"partition: (offline|online) 1: -", b.console), b
    # CPU 1 went off and came back inside the hotplug window (CPU_OFF, CPU_ON at least)
    assert rows["hotplug/window"]["psci"] >= 2, rows["hotplug/window"]
    assert b.line_matching(r"spin: window 2 cpu 3 tasks 1"), b


def test_cmp02_cpio_writer():
    """CMP-02: the initramfs writer's archive reads back with cpio: names, kinds, sizes."""
    data = linuxvm.cpio([("d", "dir", None), ("d/f", "file", b"12345"),
                         ("d/l", "symlink", "f"), ("dev/console", "chardev", (5, 1))])
    out = subprocess.run(["cpio", "-itv", "--quiet"], input=data, capture_output=True,
                         check=True).stdout.decode()
    lines = [line.split() for line in out.strip().split("\n")]
    assert [ln[-1] for ln in lines] == ["d", "d/f", "f", "dev/console"]  # symlink: "d/l -> f"
    assert lines[0][0].startswith("d") and lines[1][0].startswith("-")
    assert lines[2][0].startswith("l") and lines[2][-3:] == ["d/l", "->", "f"]
    assert lines[3][0].startswith("c") and "5," in lines[3]
    assert lines[1][4] == "5"  # the file's size


def test_cmp03_time_derived_count_is_the_instruction_count():
    """CMP-03: under -icount, guest ns / 2^shift per op equals the PMU's count on zerotick,
    the figure make compare gives for Linux, whose EL0 cannot read the PMU."""
    b = compare.run("zerotick", None, 2, "dataplane=1",
                    "bench -c 1 null=500 yield=50 futex=20; bench -c 0 -w 1 xcpu=20")
    found = compare.BENCH_RE.findall(b.console)
    assert [f[0] for f in found] == ["null", "yield", "futex", "xcpu"], b
    for name, _n, ns, pmu in found:
        assert abs(float(ns) / (1 << compare.SHIFT) - int(pmu)) <= 1, (name, ns, pmu)


def test_cmp04_latency_part_reads_both_kernels_outputs():
    """CMP-04: make compare's hwnoise/timerlat part: on zerotick (one short boot) the parsed
    figures are osnoise -w's 3 passes and timerlat's 200 wake-ups, each with its matched timer
    interrupt; Linux's answers (the refusal, the unavailable IRQ side), as the programs print
    them, are read as refused and unavailable, never as numbers."""
    b = compare.run("zerotick", None, 4, "dataplane=2-3",
                    "osnoise -w -c 3 -t 0.3 -P; timerlat -c 3 -t 0.2")
    assert b.status == 0, b
    hw, tl = compare.parse_hwnoise(b.console), compare.parse_timerlat(b.console)
    assert hw and hw["runtime_us"] >= 300000 and "refused" not in hw, (hw, b)
    assert set(hw["pct"]) == {"p50_us", "p90_us", "p99_us", "p99.9_us", "p99.99_us",
                              "p99.999_us"}, hw
    assert tl["wakeups"] == 200 and tl["timer_irqs"] == "200" and tl["unmatched"] == "0", tl
    assert tl["irq"]["n"] == tl["task"]["n"] == 200, tl
    assert "irq_unavailable" not in tl, tl
    linux_console = (
        "osnoise: cpu 3: zt_hwnoise failed: -ENOSYS (Linux has no such call: its hardware-noise"
        " mode is the osnoise tracer's, rtla hwnoise)\r\n"
        "timerlat: cpu 3 wakeups 5 overruns 0 timer_irqs - unmatched -\r\n"
        "timerlat: cpu 3 irq unavailable (Linux 6.1.0-57-arm64: no counter page; Linux's "
        "IRQ-side figure is its timerlat tracer's)\r\n"
        "timerlat: cpu 3 task n 5 min_ns 10 avg_ns 20 max_ns 30 p50_us 0 p90_us 0 p99_us 0 "
        "p99.9_us 0 p99.99_us 0 p99.999_us 0 early 0\r\n")
    assert compare.parse_hwnoise(linux_console)["refused"].startswith("-ENOSYS (Linux"), \
        compare.parse_hwnoise(linux_console)
    tl = compare.parse_timerlat(linux_console)
    assert "irq" not in tl and tl["irq_unavailable"].startswith("Linux 6.1.0-57-arm64"), tl
    assert tl["task"] == {"n": 5, "min_ns": 10, "avg_ns": 20, "max_ns": 30,
                          "pct": {p: 0 for p in ("p50_us", "p90_us", "p99_us", "p99.9_us",
                                                 "p99.99_us", "p99.999_us")}}, tl


def _net_column(insts, cpus, kinds):
    flat = {"echoed_pps": 1000.0, "lost": 0, "sent": 100, "reordered": 0}
    lat = {"rtt_us": {"median": 100.0, "p99": 200.0, "p99.9": 300.0}, "reordered": 0}
    return {"insts": insts, "cpus": cpus, "kinds": kinds, "flat": flat, "ndr": 500.0,
            "latency": lat, "cmd": "qemu ...", "repro_cmd": "qemu -icount ..."}


def test_cmp10_net_table_goals_and_skipped_peer():
    """CMP-10: make compare's networking table (tools/netcompare) puts every system in a
    column with its exceptions by kind, judges the two goals from the figures it is given
    (the pipeline at 1/10 or less of Linux's instructions per packet; run to completion at or
    below DPDK's) and says "skipped:" with the reason for a peer that could not run."""
    nc = zt.tool_module("netcompare")
    res = {"params": nc.QUICK, "flows": 8,
           "zerotick": {"pipeline": _net_column(800.0, [2, 3, 4, 5], {2: {"total": 0}}),
                        "rtc": _net_column(500.0, [2], {2: {"total": 0}})},
           "linux": {**_net_column(9000.0, [2, 3], {2: {"total": 7, "irq": 5, "sync-svc": 2}}),
                     "insts_raw": 9100.0, "idle_per_s": 10.0, "window_s": 1.0,
                     "threads": [("2", "60"), ("3", "40")]},
           "dpdk": {"skipped": "dpdk: apt-get download failed"}}
    text = "\n".join(nc.table(res))
    assert "| zerotick pipeline (RX, 2 workers, TX) | zerotick run-to-completion (1 core) | " \
           "Linux sockets (2 threads) |" in text, text
    assert "**DPDK testpmd 5tswap (1 core): skipped:** dpdk: apt-get download failed" in text
    assert "CPU 2: 7 (5 irq, 2 sync-svc)" in text, text
    assert "800 against 9,000, 1/11.2: **met**" in text, text
    assert "run-to-completion echo at or below DPDK" not in text, text  # no DPDK figure
    res["linux"]["insts"] = 7000.0
    res["dpdk"] = _net_column(450.0, [2], {2: {"total": 3}})
    text = "\n".join(nc.table(res))
    assert "800 against 7,000, 1/8.8: **not met**" in text, text
    assert "500 against 450: **not met**" in text, text
