# SPDX-License-Identifier: MIT
"""PCIe, the SMMUv3 and the multi-queue virtio-net-pci (issue 22), on QEMU's virt board with
-M virt,iommu=smmuv3 (or without it, for the no-IOMMU mode): the functions lsdev shows, a BAR
that fits no window, devtest's claim checks on a PCI function, a hostile driver that aims its
receive buffers at the kernel and at another process's page (the SMMU fault is reported, the
kernel's text, read-only data and a data structure are byte for byte the same before and after,
read from outside through QEMU's monitor, and the system goes on), echoes over one queue pair
behind the SMMU and over 2 and 4 pairs on a host-only multi-queue tap (RSS spreads the flows),
each dataplane CPU at 0 exceptions in QEMU's own log.  Counts only: rates are make bench's.
"""

import hashlib
import os
import re
import socket
import subprocess
import threading
import time

import pytest

import zt

netload = zt.tool_module("netload")
SMMU = ",iommu=smmuv3"
KERNEL_VA = 0xffffff8000000000  # arch_defs.h KERNEL_VA_OFFSET: VA = PA + offset


def ready(n=1, cpu=3):
    return (rf"udpecho: ready: slot (\d+), mac ([0-9a-f:]+), ip [\d.]+, udp port 7, cpu {cpu}, "
            rf"queues {n}[^,]*, dma ([^\n]+)\n")


def cpu_windows(boot, cpus):
    """{cpu: exceptions QEMU logged between that CPU's markers}: exactly one closed window
    each."""
    out = {}
    wins = boot.exclog(windows=True)["windows"]
    for cpu in cpus:
        mine = [w for w in wins if w["cpu"] == cpu]
        assert len(mine) == 1 and mine[0]["close_line"] is not None, (cpu, mine)
        out[cpu] = mine[0]["counts"]["total"]
    return out


def udpecho_cpu_exceptions(console):
    return {int(c): int(n) for c, n in
            re.findall(r"udpecho: cpu (\d+) exceptions in the window: (\d+)", console)}


def udpecho_queues(console):
    """[(queue, cpu, rx, udp-echoes)] from udpecho's per-queue lines."""
    return [tuple(int(x) for x in m) for m in re.findall(
        r"udpecho: queue (\d+) cpu (\d+): rx (\d+) tx \d+ udp-echoes (\d+)", console)]


# ---------------------------------------------------------------- the bus and lsdev


def test_pci20_lsdev_behind_smmu():
    """PCI-20: behind the SMMU the boot log names the SMMU (256 streams aborting, events on
    INTID 106), each function with its ids, class and BARs (00:01.0, virtio net, BAR1 4 KiB,
    BAR4 16 KiB, INTA on INTID 36, off) and says PCI DMA is confined; lsdev shows the host
    bridge (no DMA) and the virtio-net function at slot 33 with its stream (smmu:8) and BARs."""
    opts, _ = zt.pci_net_options("user")
    b = zt.boot(cpus=2, bootargs="init=/bin/lsdev", extra=opts, machine_opts=SMMU)
    assert b.status == 0, b
    c = b.console.replace("\r", "")
    assert ("smmu: SMMUv3 at 0x9050000: 256 streams, every one aborting DMA until claimed; "
            "events on INTID 106, errors on INTID 109") in c, b
    assert re.search(r"pci 00:01\.0: 1af4:1041 class 020000 \(virtio net\), BAR1 0x[0-9a-f]+ "
                     r"\(4 KiB\), BAR4 0x[0-9a-f]+ \(16 KiB\), INTA INTID 36 \(off\)", c), b
    assert "devices: slot 33: pci 00:01.0, DMA confined by the SMMU" in c, b
    assert "devices: the SMMU confines PCI DMA" in c, b
    assert "UNCONFINED" not in c.split("boot: init starts")[0], b
    assert re.search(r"^  32  00:00\.0  1b36:0008  060000  host bridge +0  none +-  -$", c,
                     re.M), b
    assert re.search(r"^  33  00:01\.0  1af4:1041  020000  virtio net +36  smmu:8 +-  -$", c,
                     re.M), b
    assert re.search(r"^      BAR1 0x[0-9a-f]+ 4 KiB; BAR4 0x[0-9a-f]+ 16 KiB 64-bit "
                     r"prefetchable$", c, re.M), b


def test_pci21_bar_does_not_fit():
    """PCI-21: a function whose BAR fits no window the kernel can reach (ivshmem with 1 GiB of
    shared memory: its 64-bit BAR2 against the 752 MiB 32-bit window) is listed, its BAR left
    without an address, and the boot log says it cannot be claimed; lsdev shows it "no address";
    the virtio-net function beside it is set up as usual."""
    extra = zt.pci_net_options("user")[0] + [
        "-object", "memory-backend-ram,id=hm,size=1G", "-device", "ivshmem-plain,memdev=hm"]
    b = zt.boot(cpus=2, bootargs="init=/bin/lsdev", extra=extra, machine_opts=SMMU)
    c = b.console.replace("\r", "")
    m = re.search(r"pci (00:0[0-9a-f]\.0): BAR2 \(1 GiB, 64-bit\) fits no memory window of the "
                  r"host bridge: the function stays disabled and cannot be claimed", c)
    assert m, b
    assert re.search(rf"^  \d+  {m.group(1)}  1af4:1110  050000  other +\d+  no address ", c,
                     re.M), b
    assert re.search(r"^      BAR0 0x[0-9a-f]+ 256 bytes; BAR2 unassigned 1 GiB 64-bit "
                     r"prefetchable$", c, re.M), b
    assert "devices: slot 33: pci 00:01.0, DMA confined by the SMMU" in c, b
    assert f"devices: slot 34: pci {m.group(1)}, cannot be claimed (a BAR has no address)" in c, b
    assert b.status == 0, b


# ---------------------------------------------------------------- claims


class Blaster:
    """Datagrams to a host forward every 10 ms from a thread, so a device is receiving
    (mid-transfer) whenever a test kills or ends its holder."""

    def __init__(self, port):
        self.port, self.stop = port, False
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        while not self.stop:
            try:
                s.sendto(b"blast" * 8, ("127.0.0.1", self.port))
            except OSError:
                pass
            time.sleep(0.01)
        s.close()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop = True
        self.thread.join()


def devtest_checks(console):
    m = re.search(r"devtest: (\d+) checks, (\d+) failed", console)
    assert m, console[-3000:]
    return int(m.group(1)), int(m.group(2))


def test_pci22_devtest_behind_smmu():
    """PCI-22: devtest's checks on the virtio-net-pci function behind the SMMU, while the host
    sends it datagrams all along: every bad argument its errno (size 0 and 4095, an unknown
    flag, past ZT_DMA_MAX, a bad pointer, no ZT_CLAIM_V2, a function whose BAR fits no window
    -ENXIO, the unconfined-DMA flag or a DMA size on the host bridge, which cannot DMA), -EBUSY
    from the holder and another process, -EPERM for a non-holder's release, the device reset
    by release, exit and SIGKILL while it receives, the DMA region at ZT_IOVA_BASE, a fork's
    child without the mappings, and free pages and kernel stacks back at their baseline after
    200 claim/release cycles; a version-1 caller of zt_devices gets 48-byte entries."""
    opts, where = zt.pci_net_options("user")
    extra = opts + ["-object", "memory-backend-ram,id=hm,size=1G",
                    "-device", "ivshmem-plain,memdev=hm"]
    with Blaster(where["port"]):
        b = zt.boot(cpus=4, bootargs="quiet init=/bin/devtest", extra=extra, machine_opts=SMMU)
    c = b.console
    n, failed = devtest_checks(c)
    assert n >= 28 and failed == 0, b
    for line in ("devtest: slot 33: virtio-pci, DMA confined by the SMMU",
                 "devtest: claim a function whose BAR fits no window -> ENXIO: ok",
                 "devtest: claim a function that cannot DMA with ZT_CLAIM_UNCONFINED_DMA -> "
                 "EINVAL: ok",
                 "devtest: claim a PCI function without ZT_CLAIM_V2 -> EINVAL: ok",
                 "devtest: DMA region at the I/O address ZT_IOVA_BASE (behind the SMMU): ok",
                 "devtest: holder killed while receiving: device reset, claimable again: ok",
                 "devtest: 200 claim/release cycles: ok",
                 "devtest: zt_devices version 1: 48-byte entries, the same fields: ok",
                 "devtest: free pages back at the baseline: ok",
                 "devtest: kernel stacks back at the baseline: ok"):
        assert line in c, (line, b)
    assert b.status == 0, b


def test_pci23_no_iommu_needs_the_flag():
    """PCI-23: without an SMMU the boot log warns that PCI DMA is UNCONFINED, lsdev says so, a
    claim without ZT_CLAIM_UNCONFINED_DMA is refused with -EPERM, and with the flag devtest's
    checks all pass (the region's physical address is what the device is told)."""
    opts, _ = zt.pci_net_options("user", iommu_platform=False)
    b = zt.boot(cpus=4, bootargs="quiet init=/bin/sh -- -c 'lsdev; dmatest refuse 33 && devtest'",
                extra=opts)
    c = b.console.replace("\r", "")
    assert "devices: WARNING: PCI functions marked UNCONFINED reach all memory by DMA" in c, b
    assert re.search(r"^  33  00:01\.0  1af4:1041  020000  virtio net +36  UNCONFINED ", c,
                     re.M), b
    assert "dmatest: claim of slot 33 without ZT_CLAIM_UNCONFINED_DMA: -EPERM" in c, b
    assert "devtest: slot 33: virtio-pci, DMA unconfined (no IOMMU)" in c, b
    assert "devtest: DMA region physical address page-aligned, unconfined: ok" in c, b
    assert devtest_checks(c)[1] == 0, b
    assert b.status == 0, b


def test_pci24_virtio_bypassing_the_smmu():
    """PCI-24: behind the SMMU, a virtio-net-pci that does not offer VIRTIO_F_ACCESS_PLATFORM
    (QEMU's iommu_platform=off: its DMA bypasses the IOMMU, virtio 1.2 6.1) is treated as
    unconfined: the boot log says why, and a claim without the flag gets -EPERM."""
    opts, _ = zt.pci_net_options("user", iommu_platform=False)
    b = zt.boot(cpus=2, bootargs="init=/bin/dmatest -- refuse 33", extra=opts, machine_opts=SMMU)
    assert ("devices: slot 33: pci 00:01.0, DMA UNCONFINED (virtio without ACCESS_PLATFORM "
            "bypasses the SMMU)") in b.console, b
    assert "dmatest: claim of slot 33 without ZT_CLAIM_UNCONFINED_DMA: -EPERM" in b.console, b
    assert b.status == 0, b


# ---------------------------------------------------------------- the hostile driver


def kernel_symbols(*names):
    """Physical addresses of the kernel's symbols (from the ELF QEMU boots)."""
    out = subprocess.run(["aarch64-linux-gnu-nm", str(zt.KERNEL)], capture_output=True,
                         text=True, check=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] in names:
            syms[parts[2]] = int(parts[0], 16) - KERNEL_VA
    assert set(syms) == set(names), syms
    return syms


class Monitor:
    """QEMU's human monitor on a unix socket: pmemsave reads guest physical memory from
    outside the guest, which no guest code can fake."""

    def __init__(self, path):
        self.path = path
        self.sock = None

    def _until_prompt(self):
        data = b""
        deadline = time.monotonic() + 30
        while not data.endswith(b"(qemu) ") and time.monotonic() < deadline:
            chunk = self.sock.recv(4096)
            if not chunk:
                break
            data += chunk
        return data.decode(errors="replace")

    def command(self, text):
        if self.sock is None:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.connect(self.path)
            self._until_prompt()
        self.sock.sendall(text.encode() + b"\n")
        return self._until_prompt()

    def digest(self, pa, size, tmp):
        """SHA-256 of guest physical memory [pa, pa + size)."""
        if os.path.exists(tmp):
            os.unlink(tmp)
        self.command(f'pmemsave 0x{pa:x} 0x{size:x} "{tmp}"')
        with open(tmp, "rb") as f:
            data = f.read()
        assert len(data) == size, (len(data), size)
        return hashlib.sha256(data).hexdigest()

    def close(self):
        if self.sock:
            self.sock.close()


def wait_backlog_drained(path, tries=30):
    """Send one probe at a time until one is echoed (the number sent, or None after `tries`).
    While no driver runs, slirp leaves the blaster's datagrams in its host socket, whose
    receive buffer (net.core.rmem_default, 208 KiB: about 200 of them) fills; the host kernel
    drops whatever else arrives until slirp has passed the backlog to the new driver, so a
    measurement started at once can lose every datagram (SMMU-20 did, 1 run in 3)."""
    for n in range(1, tries + 1):
        if netload.run(path, 1, size=64, wait_s=1.0, window=1)["received"] == 1:
            return n
    return None


def test_smmu20_hostile_driver():
    """SMMU-20: a hostile driver (dmatest) claims the virtio-net-pci function behind the SMMU
    and aims every receive buffer at, in turn, the kernel's text, its read-only data, its
    device-tree record in .bss, and a page of another process (a victim holding a virtio-mmio
    transport, which knows its page's physical address) while the host sends frames: each time
    the SMMU's translation fault is reported with the process, the function and that address,
    the holder dies of SIGBUS and the function is free again; the kernel's text and read-only
    data and the record, read through QEMU's monitor before and after, are unchanged; the
    victim's page is intact; and afterwards udpecho on the same function echoes 200 of 200
    (once a probe comes back: see wait_backlog_drained)."""
    syms = kernel_symbols("__text_start", "__rodata_start", "__rodata_end", "platform")
    text, rodata = syms["__text_start"], syms["__rodata_start"]
    image_size = syms["__rodata_end"] - text
    record = syms["platform"]
    log_dir = zt.new_log_dir("smmu20-")
    mon = Monitor(os.path.join(log_dir, "monitor.sock"))
    opts, where = zt.pci_net_options("user")
    extra = opts + ["-global", "virtio-mmio.force-legacy=false", "-netdev", "user,id=n1",
                    "-device", "virtio-net-device,netdev=n1",
                    "-monitor", f"unix:{mon.path},server=on,wait=off"]
    c = zt.Console(cpus=4, bootargs="quiet dataplane=2-3", extra=extra, machine_opts=SMMU)
    try:
        c.expect(r"zt\$ ", timeout=120)
        tmp = os.path.join(log_dir, "mem.bin")
        before = (mon.digest(text, image_size, tmp), mon.digest(record, 4096, tmp))
        c.sendline("dmatest victim 31 60 &")
        victim = int(c.expect(r"dmatest: victim page (0x[0-9a-f]+)\n", timeout=60).group(1), 16)
        with Blaster(where["port"]):
            for target in (text, rodata, record, victim):
                c.sendline(f"dmatest hostile 33 {target:x} 20")
                m = c.expect(r"smmu: DMA fault: pid (\d+) \(dmatest\), slot 33 \(00:01\.0\): "
                             r"translation fault, write to I/O address (0x[0-9a-f]+)[^\n]* outside "
                             r"\[0x100000000, 0x[0-9a-f]+\): function reset, claim ended, "
                             r"SIGBUS sent", timeout=120)
                assert int(m.group(2), 16) == target, (hex(target), m.group(0))
                c.expect(r"dmatest: hostile child killed by SIGBUS", timeout=60)
        c.expect(rf"dmatest: victim page 0x{victim:x} intact", timeout=120)
        after = (mon.digest(text, image_size, tmp), mon.digest(record, 4096, tmp))
        assert before == after, "the kernel's text, rodata or its record changed"
        c.sendline("udpecho -c 3 -s 33 -t 120 -x 9")
        c.expect(ready(), timeout=60)
        path = netload.UdpPath(where["port"])
        probes = wait_backlog_drained(path)
        res = netload.run(path, 200, size=64, window=16)
        netload.UdpPath(where["ctl"]).send(b"stop")
        c.expect(r"udpecho: cpu 3 exceptions in the window: \d+", timeout=60)
        c.sendline("poweroff 0")
        status = c.wait(timeout=60)
    finally:
        mon.close()
        c.close()
        with open(os.path.join(log_dir, "console.txt"), "w") as f:
            f.write(c.output)
    assert probes is not None, f"no probe came back; console in {log_dir}"
    assert (res["sent"], res["received"], res["corrupted"]) == (200, 200, 0), (res, log_dir)
    assert "CHANGED" not in c.output
    assert status == 0, c.output[-3000:]


# ---------------------------------------------------------------- echoes


def test_netp01_echo_behind_smmu():
    """NETP-01: 1,000 UDP datagrams through QEMU's user networking to udpecho on the
    virtio-net-pci function behind the SMMU (I/O virtual addresses in every descriptor) come
    back intact and in order; udpecho counts 1,000 echoes and QEMU's log shows 0 exceptions on
    dataplane CPU 3 between the isolation markers."""
    opts, where = zt.pci_net_options("user")
    log_dir, log_opts = zt.log_options(exclog=True)
    c = zt.Console(cpus=4, bootargs="quiet dataplane=2-3 init=/bin/udpecho -- -c 3 -n 1000 -t 300",
                   extra=opts + log_opts, machine_opts=SMMU)
    try:
        m = c.expect(ready(), timeout=120)
        assert m.group(3) == "confined by the SMMU", m.group(0)
        res = netload.run(netload.UdpPath(where["port"]), 1000, size=64, window=16)
        status = c.wait(timeout=300)
    finally:
        c.close()
    b = zt.Boot(c.cmd, c.output, status, log_dir)
    assert (res["sent"], res["received"], res["lost"]) == (1000, 1000, 0), res
    assert (res["corrupted"], res["reordered"], res["duplicated"]) == (0, 0, 0), res
    assert re.search(r"udp-echoes 1000 ", b.console), b
    assert udpecho_cpu_exceptions(b.console) == {3: 0}, b
    assert b.status == 0, b
    assert cpu_windows(b, [3]) == {3: 0}


def multi_queue(n):
    """udpecho -q n on CPUs 2..n+1 over an n-queue host-only tap, 2,000 datagrams over 64 flows."""
    with zt.MqTap(n) as tap:
        if tap.skip_reason:
            pytest.skip(tap.skip_reason)
        opts, where = zt.pci_net_options("tap", queues=n, tap=tap)
        log_dir, log_opts = zt.log_options(exclog=True)
        cmd = f"udpecho -c 2 -q {n} -a {tap.guest_ip} -g none -n 2000 -t 300"
        c = zt.Console(cpus=2 + n, bootargs=f"quiet dataplane=2-{1 + n} init=/bin/sh -- -c '{cmd}'",
                       extra=opts + log_opts, machine_opts=SMMU)
        try:
            m = c.expect(ready(n, 2), timeout=120)
            path = netload.FlowsPath(tap.guest_ip, flows=64)
            res = netload.run(path, 2000, size=64, window=32)
            path.close()
            status = c.wait(timeout=300)
        finally:
            c.close()
    b = zt.Boot(c.cmd, c.output, status, log_dir)
    assert "(rss)" in m.group(0), m.group(0)
    assert (res["sent"], res["received"], res["lost"], res["corrupted"]) == (2000, 2000, 0, 0), res
    queues = udpecho_queues(b.console)
    assert [q[:2] for q in queues] == [(i, 2 + i) for i in range(n)], b
    assert all(rx > 0 and echoes > 0 for _, _, rx, echoes in queues), queues
    assert sum(echoes for *_, echoes in queues) == 2000, queues
    cpus = list(range(2, 2 + n))
    assert udpecho_cpu_exceptions(b.console) == {cpu: 0 for cpu in cpus}, b
    assert b.status == 0, b
    assert cpu_windows(b, cpus) == {cpu: 0 for cpu in cpus}


@pytest.mark.parallel_vcpus
def test_netp02_two_queues_rss():
    """NETP-02: udpecho -q 2 over a 2-queue host-only tap (virtio-net-pci mq=on rss=on behind
    the SMMU): every one of 2,000 datagrams over 64 flows is echoed, RSS gives both queue pairs
    traffic, and QEMU's log shows 0 exceptions on dataplane CPUs 2 and 3, each polling its own
    pair.  Skipped, with the reason, where the host cannot make a tap."""
    multi_queue(2)


@pytest.mark.parallel_vcpus
def test_netp03_four_queues_rss():
    """NETP-03: the same with -q 4 on CPUs 2-5 over a 4-queue tap: 2,000 of 2,000 echoed,
    each of the four pairs saw traffic, 0 exceptions on each of the four CPUs."""
    multi_queue(4)


def test_netp04_queues_the_device_lacks():
    """NETP-04: -q 2 on a device with one queue pair (user networking has one queue) is refused
    with a message naming what is missing; the device is released again."""
    opts, _ = zt.pci_net_options("user")
    b = zt.boot(cpus=4, bootargs="quiet dataplane=2-3 init=/bin/sh -- -c "
                "'udpecho -c 2 -q 2 -t 5; lsdev'", extra=opts, machine_opts=SMMU)
    assert ("udpecho: slot 33: 2 queue pairs asked for, but the device has one (no "
            "VIRTIO_NET_F_MQ: QEMU needs -device virtio-net-pci,mq=on and a backend with "
            "queues=2)") in b.console, b
    assert re.search(r"^  33  00:01\.0 .* smmu:8 +-  -$", b.console.replace("\r", ""), re.M), b
