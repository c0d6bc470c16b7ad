# SPDX-License-Identifier: MIT
"""Tests of tools/exclog, the exception-log oracle, on QEMU 7.2 logs stored in data/exclog/.

No QEMU runs here: the logs were recorded once from a probe (data/exclog/README.md says
how, and why each file is there). Each test has a stable ID (EXL-nn) and proves one behaviour.
Run: /usr/bin/python3 -m pytest tests/qemu/test_exclog.py
"""

import json
import subprocess
from pathlib import Path

import pytest

import zt

TOOL = zt.REPO / "tools" / "exclog"
DATA = Path(__file__).resolve().parent / "data" / "exclog"

exclog = zt.tool_module("exclog")

# What the probe did on each CPU (data/exclog/README.md): the expected counts, by hand.
KINDS_CPU0 = {"sync-svc": 10, "sync-other": 6, "irq": 2, "fiq": 0, "serror": 0, "semihost": 0}
KINDS_CPU1 = {"sync-svc": 10, "sync-other": 4, "irq": 2, "fiq": 0, "serror": 0, "semihost": 0}
BUSY_KINDS = {"sync-svc": 4, "sync-other": 4, "irq": 1, "fiq": 0, "serror": 0, "semihost": 0}
NO_KINDS = dict.fromkeys(KINDS_CPU0, 0)
SVC_IMMS = {"0x1": 3, "0x2": 1, "0x3": 1, "0x77": 1, "0x5a5a": 2, "0xa5a5": 2}


def counts_of(*names):
    return exclog.count(exclog.parse_files([str(DATA / n) for n in names]).events)


def windows_of(*names):
    return exclog.windows(exclog.parse_files([str(DATA / n) for n in names]))


def run_cli(*args):
    return subprocess.run([str(TOOL), *map(str, args)], capture_output=True, text=True,
                          timeout=60)


def write(tmp_path, text, name="log"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_exl01_counts_per_cpu():
    """EXL-01: per-CPU totals and kinds from one -d int,tid file per vCPU."""
    counts = counts_of("tid2")
    assert list(counts) == [0, 1]
    assert (counts[0]["total"], counts[0]["kinds"]) == (18, KINDS_CPU0)
    assert (counts[1]["total"], counts[1]["kinds"]) == (16, KINDS_CPU1)


def test_exl02_source_exception_level():
    """EXL-02: exceptions split by the EL they came from (EL1->EL1 ones are logged too)."""
    counts = counts_of("tid2")
    assert counts[0]["from_el"]["0"] == {**NO_KINDS, "sync-svc": 9, "sync-other": 4, "irq": 1}
    assert counts[0]["from_el"]["1"] == {**NO_KINDS, "sync-svc": 1, "sync-other": 2, "irq": 1}
    assert counts[1]["from_el"]["1"] == {**NO_KINDS, "sync-svc": 1, "irq": 1}
    assert "unknown" not in counts[0]["from_el"]


def test_exl03_sync_other_by_ec_and_psci():
    """EXL-03: sync-other broken down by ESR class; the PSCI HVCs are marked as such."""
    counts = counts_of("tid2")
    assert counts[0]["sync_other_ec"] == {"0x00": 1, "0x16": 2, "0x20": 1, "0x24": 1, "0x3c": 1}
    assert counts[1]["sync_other_ec"] == {"0x00": 1, "0x20": 1, "0x24": 1, "0x3c": 1}
    assert (counts[0]["psci"], counts[1]["psci"]) == (2, 0)


def test_exl04_svc_immediates_decoded():
    """EXL-04: SVC immediates come from ESR bits 15:0; IRQ blocks' stale ESR is dropped."""
    log = exclog.parse_files([str(DATA / "tid2" / "exc7379.log")])
    assert exclog.count(log.events)[1]["svc_imm"] == SVC_IMMS
    first, irq = log.events[0], log.events[1]
    assert (first.line, first.esr, first.svc_imm, first.from_el) == (1, 0x56000077, 0x77, 1)
    assert (irq.kind, irq.esr, irq.svc_imm, irq.elr) == ("irq", None, None, 0x402000E8)
    dabt = next(ev for ev in log.events if ev.name == "Data Abort")
    assert (dabt.ec, dabt.far, dabt.from_el) == (0x24, 0x50000008, 0)


def test_exl05_busy_window_contents():
    """EXL-05: a window holds exactly what its CPU took between the markers (markers excluded)."""
    wins = windows_of("tid2")
    busy = [w for w in wins if w.index == 0]
    assert [(w.cpu, w.open_line, w.close_line) for w in busy] == [(0, 18, 80), (1, 14, 76)]
    for w in busy:
        d = w.to_dict()
        assert (d["counts"]["total"], d["counts"]["kinds"]) == (9, BUSY_KINDS)
        assert d["counts"]["svc_imm"] == {"0x1": 3, "0x2": 1}
        assert d["counts"]["from_el"] == {"0": BUSY_KINDS}
        assert [e["name"] for e in d["events"]][3:7] == [
            "Undefined Instruction", "Breakpoint", "Data Abort", "Prefetch Abort"]


def test_exl06_quiet_window_is_empty():
    """EXL-06: a window with no exception between its markers counts 0."""
    quiet = [w for w in windows_of("tid2") if w.index == 1]
    assert [(w.cpu, len(w.events), w.close_line is None) for w in quiet] == [
        (0, 0, False), (1, 0, False)]


def test_exl07_multiple_windows_and_totals():
    """EXL-07: every window is reported, then per-CPU totals and what lies outside windows."""
    rep = exclog.report(exclog.parse_files([str(DATA / "tid2")]), want_windows=True)
    assert [(w["cpu"], w["index"], w["counts"]["total"]) for w in rep["windows"]] == [
        (0, 0, 9), (0, 1, 0), (1, 0, 9), (1, 1, 0)]
    totals = rep["window_totals"]
    assert (totals["0"]["windows"], totals["0"]["open"], totals["0"]["counts"]["total"]) == (
        2, 0, 9)
    outside = rep["outside_windows"]
    assert (outside["0"]["total"], outside["1"]["total"]) == (18 - 9, 16 - 9)
    assert outside["1"]["svc_imm"] == {"0x3": 1, "0x77": 1, "0x5a5a": 2, "0xa5a5": 2}


def test_exl08_open_window_counts_to_end():
    """EXL-08: a window never closed is reported open and counts to the end of the log."""
    wins = windows_of("open")
    cpu1 = [w for w in wins if w.cpu == 1]
    assert [len(w.events) for w in cpu1] == [9, 0, 2]
    last = cpu1[-1].to_dict()
    assert (last["open"], last["close_line"], last["open_line"]) == (True, None, 94)
    assert last["counts"]["svc_imm"] == {"0x1": 2}
    assert all(w.close_line is not None for w in wins if w.cpu == 0)


def test_exl09_one_thread_serving_all_cpus():
    """EXL-09: single-threaded TCG (-icount) puts both CPUs' blocks in one tid file."""
    log = exclog.parse_files([str(DATA / "icount")])
    assert len(log.files) == 1 and log.files[0].unreliable_blocks == 0
    counts = exclog.count(log.events)
    assert (counts[0]["kinds"], counts[1]["kinds"]) == (KINDS_CPU0, KINDS_CPU1)
    wins = exclog.windows(log)
    assert [(w.cpu, w.index, len(w.events)) for w in wins] == [
        (0, 0, 9), (0, 1, 0), (1, 0, 9), (1, 1, 0)]


def test_exl10_mttcg_single_file_windows_per_cpu():
    """EXL-10: in one MTTCG file, CPU 1's window spans CPU 0's blocks but holds only its own."""
    log = exclog.parse_files([str(DATA / "mttcg-single.log")])
    assert log.files[0].unreliable_blocks == 0
    wins = exclog.windows(log)
    cpu1_busy = next(w for w in wins if (w.cpu, w.index) == (1, 0))
    assert (cpu1_busy.open_line, cpu1_busy.close_line) == (29, 178)
    assert {ev.cpu for ev in cpu1_busy.events} == {1} and len(cpu1_busy.events) == 9
    assert exclog.count(log.events)[0]["kinds"] == KINDS_CPU0


def test_exl11_foreign_return_lines_inside_blocks():
    """EXL-11: other CPUs' 'Exception return' lines inside a block do not disturb it."""
    log = exclog.parse_files([str(DATA / "mttcg-stress-excerpt.log")])
    counts = exclog.count(log.events)
    assert {cpu: c["svc_imm"] for cpu, c in counts.items()} == {0: {"0x1": 5}, 1: {"0x1": 2}}
    assert (log.files[0].unreliable_blocks, log.files[0].stray_lines) == (0, 0)
    assert all(ev.from_el == 0 for ev in log.events)


def test_exl12_interleaved_file_counts_stay_exact():
    """EXL-12: overlapping blocks lose their details, but CPU and kind counts stay exact."""
    log = exclog.parse_files([str(DATA / "interleaved.log")])
    assert (log.files[0].blocks, log.files[0].unreliable_blocks) == (34, 2)
    counts = exclog.count(log.events)
    assert (counts[0]["kinds"], counts[1]["kinds"]) == (KINDS_CPU0, KINDS_CPU1)
    assert counts[0]["from_el"]["unknown"] == {**NO_KINDS, "sync-svc": 1}
    assert counts[1]["from_el"]["unknown"] == {**NO_KINDS, "sync-svc": 1}
    assert counts[0]["svc_imm"]["unknown"] == 1 and counts[0]["svc_imm"]["0x1"] == 2


def test_exl13_interleaved_file_refuses_windows():
    """EXL-13: windows need every SVC's immediate; an unattributable one is an error."""
    log = exclog.parse_files([str(DATA / "interleaved.log")])
    with pytest.raises(exclog.ExclogError, match=r"interleaved\.log:27: CPU 0 SVC"):
        exclog.windows(log)
    res = run_cli("--window", DATA / "interleaved.log")
    assert res.returncode == 1 and "unknown immediate" in res.stderr, res


def test_exl14_iar_trace_per_cpu_and_intid():
    """EXL-14: iar1 trace lines counted per CPU and INTID; affinity 0x100 is CPU 16 on virt."""
    irqs = exclog.irq_counts(exclog.parse_files([str(DATA / "iar-smp18.log")]).acks)
    assert list(irqs) == list(range(18))
    assert all(e["acked"] == 2 and e["intids"] == {27: 2} for e in irqs.values())
    assert (irqs[16]["affinity"], irqs[17]["affinity"]) == ("0x100", "0x101")
    raw = exclog.parse_files([str(DATA / "iar-smp18.log")], cluster_size=0).acks
    assert sorted({a.cpu for a in raw})[-2:] == [0x100, 0x101]


def test_exl15_iar_trace_with_timestamps():
    """EXL-15: the -msg timestamp=on form (TID@SECONDS: prefix) parses the same."""
    irqs = exclog.irq_counts(exclog.parse_files([str(DATA / "iar-timestamp.log")]).acks)
    assert {cpu: e["intids"] for cpu, e in irqs.items()} == {0: {27: 2}, 1: {27: 2}}


def test_exl16_iar_lines_name_intids_inside_windows():
    """EXL-16: with -d int,tid,trace:gicv3_icc_iar1_read a window lists the INTIDs it took."""
    wins = windows_of("tid2-iar")
    assert [(w.cpu, w.index, w.intids) for w in wins] == [
        (0, 0, {27: 1}), (0, 1, {}), (1, 0, {27: 1}), (1, 1, {})]
    assert exclog.count(exclog.parse_files([str(DATA / "tid2-iar")]).events)[0]["kinds"] == (
        KINDS_CPU0)


def test_exl17_spurious_intid_counted_apart(tmp_path):
    """EXL-17: INTID 1023 (spurious) is not an acknowledged interrupt."""
    line = "gicv3_icc_iar1_read GICv3 ICC_IAR1 read cpu 0x2 value 0x{:x}\n"
    path = write(tmp_path, line.format(27) + line.format(1023) + line.format(1023))
    irqs = exclog.irq_counts(exclog.parse_files([path]).acks)
    assert irqs == {2: {"affinity": "0x2", "acked": 1, "spurious": 2, "intids": {27: 1}}}


def test_exl18_bad_taking_line_is_an_error():
    """EXL-18: an unparseable 'Taking exception' line stops exclog with file and line."""
    with pytest.raises(exclog.ExclogError, match=r"bad-taking\.log:7: cannot parse exception"):
        exclog.parse_files([str(DATA / "bad-taking.log")])
    res = run_cli(DATA / "bad-taking.log")
    assert res.returncode == 1 and res.stdout == "", res
    assert "bad-taking.log:7" in res.stderr


def test_exl19_bad_iar_line_is_an_error():
    """EXL-19: an unparseable gicv3_icc_iar1_read line is an error too."""
    with pytest.raises(exclog.ExclogError, match=r"bad-iar\.log:12: cannot parse iar1"):
        exclog.parse_files([str(DATA / "bad-iar.log")])
    assert run_cli("--irqs", DATA / "bad-iar.log").returncode == 1


def test_exl20_file_ending_inside_a_block(tmp_path):
    """EXL-20: a block cut by the end of the file is counted, and the file is flagged."""
    log = exclog.parse_files([str(DATA / "truncated.log")])
    assert log.files[0].truncated_last and log.files[0].unreliable_blocks == 0
    assert [(ev.kind, ev.from_el) for ev in log.events] == [("sync-svc", 1), ("irq", 1)]
    # Two blocks open at the end: only the last may be cut, so the pair is not trusted.
    path = write(tmp_path, "Taking exception 5 [IRQ] on CPU 0\n...from EL0 to EL1\n"
                           "Taking exception 5 [IRQ] on CPU 1\n...from EL1 to EL1\n")
    log = exclog.parse_files([path])
    assert (log.files[0].truncated_last, log.files[0].unreliable_blocks) == (True, 2)
    assert [(ev.cpu, ev.kind, ev.from_el) for ev in log.events] == [
        (0, "irq", None), (1, "irq", None)]


def test_exl21_semihosting_call_kind():
    """EXL-21: a semihosting call is its own kind (QEMU handles it; no ESR, no vector)."""
    counts = counts_of("semihost-cpu0.log")
    assert counts[0]["kinds"] == {**KINDS_CPU0, "sync-other": 5, "semihost": 1}
    assert counts[0]["from_el"]["1"]["semihost"] == 1 and counts[0]["psci"] == 1


def test_exl22_unknown_lines_ignored_and_stray_counted(tmp_path):
    """EXL-22: lines exclog does not know are ignored; lone continuation lines are 'stray'."""
    path = write(tmp_path, "".join([
        "...with ELR 0x40200130\n", "...to EL1 PC 0x40200c00 PSTATE 0x3c5\n",
        "some_trace_event cpu 0x1\n", "Exception return from AArch64 EL1 to AArch64 EL0 PC 0x0\n",
        "Taking exception 6 [FIQ] on CPU 3\n", "...from EL0 to EL1\n",
        "...with ESR 0x15/0x56000001\n", "...with ELR 0x40200130\n",
        "...to EL1 PC 0x40200d00 PSTATE 0x3c5\n", "qemu-system-aarch64: terminating\n"]))
    log = exclog.parse_files([path])
    assert (log.files[0].blocks, log.files[0].stray_lines) == (1, 2)
    ev = log.events[0]
    assert (ev.cpu, ev.kind, ev.from_el, ev.esr) == (3, "fiq", 0, None)


def test_exl23_marker_oddities_warn(tmp_path):
    """EXL-23: a second open inside a window, or a close outside one, is counted and warned."""
    block = ("Taking exception 2 [SVC] on CPU 0\n...from EL0 to EL1\n"
             "...with ESR 0x15/0x5600{:04x}\n...with ELR 0x0\n...to EL1 PC 0x0 PSTATE 0x3c5\n")
    path = write(tmp_path, "".join(block.format(i) for i in (0xA5A5, 0x5A5A, 0x5A5A, 0xA5A5)))
    warnings = []
    wins = exclog.windows(exclog.parse_files([path]), warnings)
    assert [(w.open_line, w.close_line, len(w.events)) for w in wins] == [(6, 16, 1)]
    assert len(warnings) == 2 and "not open" in warnings[0] and "already open" in warnings[1]


def test_exl24_paths_directory_glob_and_missing():
    """EXL-24: a directory, a glob and the list of files name the same logs; a bad path fails."""
    by_dir = exclog.expand_paths([str(DATA / "tid2")])
    by_glob = exclog.expand_paths([str(DATA / "tid2" / "exc*.log")])
    assert by_dir == by_glob == sorted(str(p) for p in (DATA / "tid2").glob("*.log"))
    with pytest.raises(exclog.ExclogError, match="no such file"):
        exclog.expand_paths([str(DATA / "nothing-here")])
    assert run_cli(DATA / "nothing-here").returncode == 1


def test_exl25_cli_json_end_to_end():
    """EXL-25: the CLI's --json output has the documented keys and the exact counts."""
    res = run_cli("--json", "--window", "--irqs", DATA / "tid2-iar")
    assert res.returncode == 0, res.stderr
    rep = json.loads(res.stdout)
    assert list(rep) == ["version", "files", "cpus", "windows", "window_totals",
                         "outside_windows", "irqs", "warnings"]
    assert rep["version"] == 1 and [f["blocks"] for f in rep["files"]] == [18, 16]
    assert (rep["cpus"]["0"]["kinds"], rep["cpus"]["1"]["kinds"]) == (KINDS_CPU0, KINDS_CPU1)
    busy = rep["windows"][0]
    assert (busy["cpu"], busy["open"], busy["counts"]["kinds"], busy["intids"]) == (
        0, False, BUSY_KINDS, {"27": 1})
    assert busy["events"][0] == {
        "file": rep["files"][0]["path"], "line": 25, "cpu": 0, "excp": 2, "name": "SVC",
        "kind": "sync-svc", "from_el": 0, "to_el": 1, "ec": "0x15", "svc_imm": "0x1",
        "elr": "0x40200130", "far": None, "psci": None}
    assert rep["irqs"]["1"] == {"affinity": "0x1", "acked": 2, "spurious": 0,
                                "intids": {"27": 2}}
    plain = json.loads(run_cli("--json", DATA / "tid2").stdout)
    assert (plain["windows"], plain["irqs"]) == (None, None)


def test_exl26_cli_text_and_help():
    """EXL-26: the text table shows per-CPU rows; --help documents the JSON schema."""
    res = run_cli("--window", "--ec", DATA / "tid2")
    assert res.returncode == 0, res.stderr
    rows = [line.split() for line in res.stdout.splitlines()]
    assert ["0", "all", "18", "10", "6", "2", "0", "0", "0"] in rows
    assert ["1", "EL1", "2", "1", "0", "1", "0", "0", "0"] in rows
    assert "CPU 1 window 1 (exc7379.log lines 82-88): 0 exceptions: none" in res.stdout
    helptext = run_cli("--help")
    assert helptext.returncode == 0 and "window_totals" in helptext.stdout
