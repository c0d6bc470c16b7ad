# SPDX-License-Identifier: MIT
"""The user-space dataplane (issue 12): a virtio-net device handed to /bin/udpecho on dataplane
CPU 3, which polls it in strict isolation.  Traffic comes from the host over loopback only
(tools/netload; zt.net_options picks free ports): QEMU user networking with a host forward, or
raw Ethernet frames over -netdev dgram (there udpecho runs with -g none: no gateway to ask
for, so the only frames that come back are answers).  Every test asserts counts — datagrams echoed intact,
drops by reason, free pages, exceptions in QEMU's own log — never a rate or a latency (those
are `make bench`'s).
"""

import re

import pytest

import zt

netload = zt.tool_module("netload")
READY = r"udpecho: ready: slot (\d+), mac ([0-9a-f:]+), ip 10\.0\.2\.15, udp port 7, cpu 3"


class NetBoot:
    """A QEMU run with one virtio-net device: start it, wait for udpecho's ready line, drive
    traffic, then collect the console, QEMU's status and (optionally) its exception log."""

    def __init__(self, cmd, kind="user", exclog=False, legacy=False, timeout=300):
        self.opts, self.where = zt.net_options(kind, legacy)
        self.log_dir, log_opts = zt.log_options(exclog)
        bootargs = f"quiet dataplane=2-3 init=/bin/sh -- -c '{cmd}'"
        self.console = zt.Console(cpus=4, bootargs=bootargs, extra=self.opts + log_opts)
        self.timeout = timeout
        self.boot = None

    def ready(self):
        return self.console.expect(READY, timeout=self.timeout)

    def path(self):
        if "port" in self.where:
            return netload.UdpPath(self.where["port"])
        return netload.RawPath(self.where["to"], self.where["listen"])

    def finish(self):
        status = self.console.wait(timeout=self.timeout)
        self.boot = zt.Boot(self.console.cmd, self.console.output, status, self.log_dir)
        return self.boot

    def close(self):
        self.console.close()


def totals(console):
    """udpecho's closing lines as numbers: rx, tx, udp-echoes, ..., drops by reason, exceptions."""
    m = re.search(r"udpecho: done after [\d.]+ s(?: \(control port\))?: (.*)", console)
    assert m, console[-3000:]
    words = m.group(1).split()
    t = {words[i]: int(words[i + 1]) for i in range(0, len(words), 2)}
    d = re.search(r"udpecho: dropped: (.*)", console).group(1).split()
    t["drops"] = {d[i]: int(d[i + 1]) for i in range(0, len(d), 2)}
    t["exceptions"] = int(re.search(r"udpecho: cpu 3 exceptions in the window: (\d+)",
                                    console).group(1))
    return t


def window_total(boot):
    """Exceptions QEMU logged on CPU 3 between udpecho's markers (exactly one window)."""
    wins = [w for w in boot.exclog(windows=True)["windows"] if w["cpu"] == 3]
    assert len(wins) == 1 and wins[0]["close_line"] is not None, wins
    return wins[0]["counts"]["total"]


def test_net01_thousand_datagrams_echoed_intact():
    """NET-01: 1,000 UDP datagrams sent through QEMU's user networking (host forward on
    127.0.0.1) all come back intact and in order; udpecho counts 1,000 echoes, and QEMU's log
    shows 0 exceptions on dataplane CPU 3 between the isolation markers."""
    nb = NetBoot("udpecho -c 3 -n 1000 -t 300", exclog=True)
    try:
        nb.ready()
        res = netload.run(nb.path(), 1000, size=64, window=16)
        b = nb.finish()
    finally:
        nb.close()
    assert (res["sent"], res["received"], res["lost"]) == (1000, 1000, 0), res
    assert (res["corrupted"], res["reordered"], res["duplicated"]) == (0, 0, 0), res
    t = totals(b.console)
    assert t["udp-echoes"] == 1000 and t["exceptions"] == 0, t
    assert b.status == 0, b
    assert window_total(b) == 0


def test_net02_ping_answered():
    """NET-02: ICMP echo requests (raw frames over -netdev dgram) are answered with intact
    echo replies, 5 of 5, and udpecho counts them."""
    nb = NetBoot("udpecho -c 3 -t 300 -x 9 -g none", kind="dgram")
    try:
        nb.ready()
        path = nb.path()
        res = netload.ping(path, 5, wait_s=10)
        path.send_frame(netload.udp_frame(b"stop", dport=9))
        b = nb.finish()
    finally:
        nb.close()
    assert res["answered"] == 5, res
    assert totals(b.console)["icmp-echoes"] == 5, b


def test_net03_malformed_frames_dropped_and_counted():
    """NET-03: three frames of each malformed kind (short, oversize, truncated IP header, bad IP
    checksum, wrong IP/UDP lengths, fragments, options, bad ICMP/UDP checksums, foreign MAC,
    IPv6, other protocol, other port, bad ARP) are dropped and counted under their own reason,
    while the valid datagram sent after each one is still echoed; nothing else comes back."""
    nb = NetBoot("udpecho -c 3 -t 300 -x 9 -g none", kind="dgram")
    try:
        nb.ready()
        path = nb.path()
        res = netload.bad(path, k=3, wait_s=10)
        path.send_frame(netload.udp_frame(b"stop", dport=9))
        b = nb.finish()
    finally:
        nb.close()
    assert res["valid_echoed"] == res["valid_sent"] == 3 * len(netload.BAD_KINDS), res
    assert res["corrupted"] == 0 and res["other_frames"] == 0, res
    t = totals(b.console)
    for kind in netload.BAD_KINDS:
        assert t["drops"][kind] == 3, (kind, t["drops"])
    assert t["udp-echoes"] == res["valid_sent"], t
    assert t["drops"]["tx-full"] == 0 and t["drops"]["icmp-type"] == 0, t
    assert b.status == 0, b


def test_net04_claim_release_exit_kill():
    """NET-04: devtest's checks of the claim calls all pass: -EINVAL for a bad slot, an empty
    transport, size 0 or unaligned, flags; -ENOMEM past the bound; -EFAULT; -EBUSY for a second
    claim from the same and from another process; -EPERM for a release by a non-holder and for
    a claim without ZT_CLAIM_UNCONFINED_DMA (no IOMMU in front of virtio-mmio); version-1
    callers get the 48-byte entries and the 56-byte claim they know; the
    device is reset (status 0) by release, by the holder's exit and by its death (SIGKILL); a
    holder's fork() leaves the child without the device's mappings (it took the kernel down
    before vm_copy skipped them); madvise(MADV_DONTNEED) over the register window and the DMA
    region leaves both alone (the kernel zeroed the registers' page through an address mapping
    no RAM before: a fault in the kernel); and free memory and kernel stacks are back at their
    baseline after 200 more claim/release cycles."""
    b = zt.boot(cpus=4, bootargs="quiet init=/bin/devtest", extra=zt.net_options("user")[0])
    m = re.search(r"devtest: (\d+) checks, (\d+) failed", b.console)
    assert m and int(m.group(1)) >= 20 and m.group(2) == "0", b
    assert "devtest: free pages back at the baseline: ok" in b.console, b
    assert "devtest: holder forks: the child cannot reach the device (SIGSEGV): ok" in b.console, b
    assert "devtest: madvise(DONTNEED) leaves the device's pages alone: ok" in b.console, b
    assert "devtest: zt_claim version 1: 56 bytes written, no more: ok" in b.console, b
    assert "devtest: claim without ZT_CLAIM_UNCONFINED_DMA (no IOMMU) -> EPERM: ok" in b.console, b
    assert b.status == 0, b


@pytest.mark.parallel_vcpus
def test_net05_lsdev_shows_device_and_holder():
    """NET-05: lsdev lists the network device (slot 31 at 0x0a003e00, INTID 79, modern, its DMA
    UNCONFINED: no IOMMU in front of virtio-mmio) with no holder, then with udpecho's pid and
    DMA region while it runs, then free again."""
    nb = NetBoot("lsdev; udpecho -c 3 -t 300 -x 9 & sleep 1; lsdev; echo lsdev-done; wait; lsdev")
    try:
        nb.ready()
        nb.console.expect("lsdev-done")
        nb.path().send(b"x")  # any traffic before the stop
        netload.UdpPath(nb.where["ctl"]).send(b"stop")
        b = nb.finish()
    finally:
        nb.close()
    rows = re.findall(r"^\s+31  0x0a003e00  0x200     79  net\s+2\s+(\S+)  (- |\d+ KiB)\s+"
                      r"UNCONFINED\r?$", b.console, re.M)
    assert len(rows) == 3, b
    assert rows[0] == ("-", "- ") and rows[2] == ("-", "- "), rows
    assert rows[1][0].isdigit() and rows[1][1].endswith("KiB"), rows


def test_net06_zero_exceptions_under_load_and_sibling_mapper():
    """NET-06: while housekeeping floods the console and spawns, sleeps and maps (load -f),
    and a sibling thread of udpecho maps and unmaps memory on CPU 0 (-m), udpecho echoes 500
    datagrams and QEMU's log shows 0 exceptions on CPU 3 between the markers."""
    nb = NetBoot("load -t 20 -f & udpecho -c 3 -n 500 -t 300 -m -g none; wait", kind="dgram",
                 exclog=True)
    try:
        nb.ready()
        res = netload.run(nb.path(), 500, size=64, window=16)
        b = nb.finish()
    finally:
        nb.close()
    assert res["received"] == 500 and res["corrupted"] == 0, res
    t = totals(b.console)
    assert t["udp-echoes"] == 500 and t["exceptions"] == 0, t
    done, loaded = b.console.find("udpecho: done after"), b.console.find("load: 20.0 s:")
    assert 0 < done < loaded, "the load must still run when udpecho ends"
    spawns = int(re.search(r"load: 20.0 s: (\d+) spawns", b.console).group(1))
    assert spawns > 0, b
    assert window_total(b) == 0


def test_net07_legacy_transport_refused():
    """NET-07: a legacy (version 1) virtio-mmio transport is listed but refused by the driver
    with a clear message naming the QEMU option; the device is released again."""
    b = zt.boot(cpus=4, bootargs="quiet dataplane=2-3 init=/bin/sh -- -c "
                "'lsdev; udpecho -c 3 -t 5; lsdev'", extra=zt.net_options("user", legacy=True)[0])
    assert re.search(r"31  0x0a003e00  0x200     79  net\s+1\s+-", b.console), b
    assert ("udpecho: slot 31: slot 31 is a legacy (version 1) virtio-mmio transport; only virtio "
            "1.x (version 2) is supported: give QEMU -global virtio-mmio.force-legacy=false"
            in b.console), b
    assert b.console.count("KiB") == 0, b  # no holder left behind
