# SPDX-License-Identifier: MIT
"""Platform bring-up under QEMU (issue 2): SMP, EL2 entry, exit status, panics, bad
device trees, CPUs that fail to start, bad command lines.

Every test boots the real kernel and asserts on what it printed and on QEMU's exit status
(the kernel's status, through semihosting).  debug_exit=N powers off right after boot.
"""

import re

import pytest

import zt


def boot_log_tail(boot):
    """Boot-log lines up to the debug_exit message (what the kernel printed while booting)."""
    lines = [l for l in boot.lines() if l.strip()]
    for i, line in enumerate(lines):
        if line.startswith("debug_exit:"):
            return lines[:i]
    return lines


@pytest.mark.parametrize("cpus", [1, 2, 4, 8, 64])
def test_boot01_every_cpu_online(cpus):
    """BOOT-01: at -smp N the boot log ends with exactly 'smp: N of N CPUs online'."""
    b = zt.boot(cpus=cpus, bootargs="debug_exit=0")
    assert b.status == 0, b
    assert boot_log_tail(b)[-1] == f"smp: {cpus} of {cpus} CPUs online", b
    assert b.line_matching(r"^boot: all CPUs online \d+ us"), b


def test_boot02_entry_at_el2():
    """BOOT-02: entered at EL2 (virtualization=on, PSCI over SMC) the kernel drops to EL1 and
    brings every CPU up the same way."""
    b = zt.boot(cpus=4, bootargs="debug_exit=0", el2=True)
    assert b.status == 0, b
    assert boot_log_tail(b)[-1] == "smp: 4 of 4 CPUs online", b


@pytest.mark.parametrize("status", [0, 1, 42, 255])
def test_boot03_exit_status_reaches_qemu(status):
    """BOOT-03: the status the kernel powers off with is QEMU's exit status."""
    b = zt.boot(cpus=2, bootargs=f"debug_exit={status}")
    assert b.status == status, b
    assert f"debug_exit: powering off with status {status}" in b.console


def test_boot04_poweroff_without_semihosting():
    """BOOT-04: without -semihosting the exit-status call traps; the kernel notices and
    powers off through PSCI SYSTEM_OFF instead (QEMU then exits 0)."""
    b = zt.boot(cpus=2, bootargs="debug_exit=7", semihosting=False)
    assert b.status == 0, b
    assert "debug_exit: powering off with status 7" in b.console
    assert "panic" not in b.console


PANICS = {
    "data": r"unexpected exception at EL1: data abort \(same EL\) .*FAR 0x0000000000000010",
    "undef": r"unexpected exception at EL1: unknown reason",
    "overflow": r"kernel stack overflow: SP 0x[0-9a-f]+ ran into the guard page",
    "write-text": r"unexpected exception at EL1: data abort \(same EL\) \(ESR 0x9600004f",
    "exec-data": r"unexpected exception at EL1: instruction abort \(same EL\) \(ESR 0x8600000f",
    "guard": r"unexpected exception at EL1: data abort \(same EL\) \(ESR 0x96000007",
}


@pytest.mark.parametrize("kind", sorted(PANICS))
def test_boot05_panic_prints_register_dump(kind):
    """BOOT-05: a fault in the kernel panics with the decoded ESR class, FAR, ELR, SPSR and
    x0-x30, then powers off with status 125.  write-text and exec-data are permission
    faults (ISS 0x0f: level-3 permission) — the image is mapped W^X; guard is a level-3
    translation fault (0x07) — the page below the boot stack is unmapped."""
    b = zt.boot(cpus=2, bootargs=f"debug_fault={kind}")
    assert b.status == zt.PANIC_STATUS, b
    assert re.search(r"panic: CPU 0: " + PANICS[kind], b.console), b
    assert "panic: CPU 0 was running idle/0 (tid 0, kernel)" in b.console, b  # names the task
    assert re.search(r"ELR  ffffff80[0-9a-f]{8}  SPSR [0-9a-f]{16}", b.console), b
    for reg in range(31):
        assert re.search(rf"x{reg:<2d} [0-9a-f]{{16}}", b.console), f"x{reg} missing\n{b}"
    assert "panic: stopping (exit status 125)" in b.console


def test_boot06_panic_stops_other_cpus():
    """BOOT-06: a panic on CPU 0 stops CPUs 1-3 with IPI_STOP (SGI 15): QEMU's own
    interrupt trace shows each of them acknowledging INTID 15."""
    b = zt.boot(cpus=4, bootargs="debug_fault=data", trace_irqs=True)
    assert b.status == zt.PANIC_STATUS, b
    irqs = b.exclog(irqs=True)["irqs"]
    for cpu in ("1", "2", "3"):
        assert irqs.get(cpu, {}).get("intids", {}).get("15", 0) >= 1, (cpu, irqs)


def edited_dtb(tmp_path, cpus, edit):
    dtb = tmp_path / "orig.dtb"
    zt.dump_dtb(dtb, cpus)
    out = tmp_path / "edited.dtb"
    zt.dts_to_dtb(edit(zt.dtb_to_dts(dtb)), out)
    return out


def test_boot07_missing_timer_node_stops_boot(tmp_path):
    """BOOT-07: a device tree without the architected timer stops the boot with one message
    naming it.  (QEMU re-adds /psci and /memory to any tree given with -dtb, so those
    cases are covered by the host unit tests of the parser instead.)"""
    dtb = edited_dtb(tmp_path, 4, lambda s: s.replace('"arm,armv8-timer\\0arm,armv7-timer"',
                                                      '"arm,no-timer"'))
    b = zt.boot(cpus=4, bootargs="debug_exit=0", dtb=dtb)
    assert b.status == zt.PANIC_STATUS, b
    assert "zerotick: cannot boot: device tree: no arm,armv8-timer node" in b.console, b
    assert "smp:" not in b.console


def test_boot08_missing_uart_node_stops_boot(tmp_path):
    """BOOT-08: no PL011 in the tree: the boot stops with that reason, printed on the
    early console at QEMU virt's fixed UART address."""
    dtb = edited_dtb(tmp_path, 2, lambda s: s.replace('"arm,pl011\\0arm,primecell"',
                                                      '"arm,pl012"'))
    b = zt.boot(cpus=2, bootargs="debug_exit=0", dtb=dtb)
    assert b.status == zt.PANIC_STATUS, b
    assert re.search(r"cannot boot: device tree: .*pl011", b.console), b


def test_boot09_cpu_that_fails_cpu_on(tmp_path):
    """BOOT-09: the tree lists 8 CPUs but QEMU has 7: CPU_ON for CPU 7 fails, the kernel
    names it and boots on without it."""
    dtb = edited_dtb(tmp_path, 8, lambda s: s)  # through dtc: QEMU's raw 1 MiB dump + its
    b = zt.boot(cpus=7, bootargs="debug_exit=0", dtb=dtb)  # fix-ups would not fit below us
    assert b.status == 0, b
    assert re.search(r"smp: CPU 7 failed to start \(PSCI CPU_ON error -2\)", b.console), b
    assert boot_log_tail(b)[-1] == "smp: 7 of 8 CPUs online", b


def test_boot10_bad_command_line_is_reported_not_fatal():
    """BOOT-10: bad parameters each get a message saying what is used instead; the boot
    goes on with safe values."""
    b = zt.boot(cpus=4, bootargs="hz=0 dataplane=0-x tick=fast frobnicate debug_exit=3")
    assert b.status == 3, b
    assert "bootargs: hz=0 out of range 1..1000; using hz=100" in b.console, b
    assert re.search(r"bootargs: dataplane=0-x is not a CPU list", b.console), b
    assert re.search(r"bootargs: tick=fast unknown", b.console), b
    assert "bootargs: unknown parameter 'frobnicate' ignored" in b.console, b
    assert "partition: housekeeping 0-3, dataplane none" in b.console, b


def test_boot11_partition_line():
    """BOOT-11: dataplane=LIST (and its Linux aliases) gives the partition line in cpulist
    form; CPU 0 and CPUs that do not exist are refused with a message."""
    b = zt.boot(cpus=6, bootargs="nohz_full=1,3-5 debug_exit=0")
    assert "partition: housekeeping 0,2, dataplane 1,3-5" in b.console, b
    b = zt.boot(cpus=4, bootargs="dataplane=0-3,9 debug_exit=0")
    assert "partition: housekeeping 0, dataplane 1-3" in b.console, b
    assert re.search(r"partition: CPU 0 is always housekeeping", b.console), b
    assert b.status == 0, b
