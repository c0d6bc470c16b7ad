# SPDX-License-Identifier: MIT
"""The packet pipeline (issue 23): /bin/pipeline's stages on isolated dataplane CPUs, joined by
rings, driving the virtio-net device(s) from user space.  Traffic comes from the host over
loopback only (QEMU -netdev dgram on 127.0.0.1, tools/netload builds the frames).  Every test
asserts counts — datagrams echoed intact and in flow order, packets forwarded and dropped by
route, ring-full drops, exceptions in QEMU's own log — never a rate (those are make bench's).
"""

import re

import zt

netload = zt.tool_module("netload")
READY = r"pipeline: ready: "
PIPE_CPUS = (2, 3, 4, 5)


class PipeBoot:
    """A QEMU run of a shell command with /bin/pipeline in it: wait for the ready line, drive
    traffic, then the console, the status and QEMU's exception log."""

    def __init__(self, cmd, k=1, cpus=6, exclog=True, timeout=300):
        self.opts, self.where = zt.net_devices(k)
        self.log_dir, log_opts = zt.log_options(exclog)
        self.console = zt.Console(cpus=cpus, bootargs=f"quiet dataplane=2-{cpus - 1} init=/bin/sh "
                                  f"-- -c '{cmd}'", extra=self.opts + log_opts)
        self.timeout = timeout

    def ready(self):
        return self.console.expect(READY, timeout=self.timeout)

    def path(self):
        paths = [netload.RawPath(to, listen, mac=mac) for to, listen, mac in self.where]
        return paths[0] if len(paths) == 1 else netload.MultiPath(paths)

    def finish(self):
        status = self.console.wait(timeout=self.timeout)
        return zt.Boot(self.console.cmd, self.console.output, status, self.log_dir)

    def close(self):
        self.console.close()


def stages(console):
    """{name: {field: value}} from the per-stage lines."""
    out = {}
    for m in re.finditer(r"pipeline: stage (\w+) cpu (\d+): (.*)", console):
        words = m.group(3).replace("%", "").split()
        out[m.group(1)] = {"cpu": int(m.group(2)),
                           **{words[i]: words[i + 1] for i in range(0, len(words) - 1, 2)}}
    return out


def totals(console):
    m = re.search(r"pipeline: done after [\d.]+ s \([\w ]+\): (.*)", console)
    assert m, console[-3000:]
    words = m.group(1).split()
    t = {words[i]: int(words[i + 1]) for i in range(0, len(words), 2)}
    d = re.search(r"pipeline: dropped: (.*)", console).group(1).split()
    t["drops"] = {d[i]: int(d[i + 1]) for i in range(0, len(d), 2)}
    t["exceptions"] = int(re.search(r"pipeline: exceptions on the pipeline cpus: (\d+)",
                                    console).group(1))
    return t


def windows_zero(boot, cpus):
    """Each CPU has exactly one closed isolation window in QEMU's log, with 0 exceptions."""
    wins = boot.exclog(windows=True)["windows"]
    for cpu in cpus:
        mine = [w for w in wins if w["cpu"] == cpu]
        assert len(mine) == 1 and mine[0]["close_line"] is not None, (cpu, mine)
        assert mine[0]["counts"]["total"] == 0, (cpu, mine[0])


def test_pipe20_two_workers_echo_in_flow_order():
    """PIPE-20: RX on CPU 2, two workers on CPUs 3 and 4, TX on CPU 5, each isolated in strict
    mode: 1,000 datagrams in 8 flows all come back intact and in order within each flow; both
    workers handled some; QEMU's log shows 0 exceptions on each of the four CPUs between the
    isolation markers."""
    pb = PipeBoot("pipeline -c 2,3,4,5 -n 1000 -t 300 -g none -r /etc/routes")
    try:
        pb.ready()
        res = netload.run(pb.path(), 1000, size=64, window=16, flows=8)
        b = pb.finish()
    finally:
        pb.close()
    assert (res["sent"], res["received"], res["lost"]) == (1000, 1000, 0), res
    assert (res["corrupted"], res["reordered"], res["duplicated"]) == (0, 0, 0), res
    assert b.status == 0, b
    t, st = totals(b.console), stages(b.console)
    assert t["udp-echoes"] == 1000 and t["exceptions"] == 0, t
    assert int(st["rx"]["packets"]) == 1000 and int(st["tx"]["sent"]) == 1000, st
    w0, w1 = int(st["worker0"]["packets"]), int(st["worker1"]["packets"])
    assert w0 + w1 == 1000 and w0 > 0 and w1 > 0, st
    assert all(int(s["exceptions"]) == 0 for s in st.values()), st
    windows_zero(b, PIPE_CPUS)


def test_pipe21_bad_route_table_refused_naming_the_line():
    """PIPE-21: a route table with a bad entry (line 5 sets address bits beyond its /24) is
    refused before anything starts, with a message naming the file, the line, the word and the
    reason; the program exits 1 and claims no device (lsdev shows no holder afterwards)."""
    b = zt.boot(cpus=6, bootargs="quiet dataplane=2-5 init=/bin/sh -- -c "
                "'pipeline -c 2,3,4,5 -r /etc/routes-bad; echo status $?; lsdev'",
                extra=zt.net_devices(1)[0])
    assert ("pipeline: /etc/routes-bad: refused: line 5: '10.9.8.7/24': address bits set "
            "beyond the length") in b.console, b
    assert "status 1" in b.console, b
    assert "pipeline: ready" not in b.console, b
    assert re.search(r"31  0x0a003e00  0x200     79  net\s+2\s+-\s+-", b.console), b


def test_pipe22_forward_drop_and_endpoint():
    """PIPE-22: with /etc/routes, datagrams to 10.9.1.x are forwarded to next hop
    02:00:00:00:09:01 and those to 10.9.8.x (a longer prefix) to 02:00:00:00:09:08, each with
    TTL one less, a right header checksum, our MAC as source and the rest unchanged; those to
    10.9.8.200 (a /25 drop route) are dropped and counted; pings to 10.0.2.15 are answered
    through the same stages; 0 exceptions on the pipeline CPUs."""
    pb = PipeBoot("pipeline -c 2,3,4,5 -t 300 -x 9 -g none -r /etc/routes")
    try:
        pb.ready()
        path = pb.path()
        sent = []
        for i in range(40):
            dst = bytes([10, 9, 1, i + 1]) if i % 2 == 0 else bytes([10, 9, 8, i + 1])
            frame = netload.ether(netload.ipv4(17, netload.udp(b"route %d" % i, dst=dst), dst=dst,
                                               ttl=30))
            path.send_frame(frame)
            sent.append(frame)
        for i in range(10):
            dst = bytes([10, 9, 8, 200])
            path.send_frame(netload.ether(netload.ipv4(17, netload.udp(b"x", dst=dst), dst=dst)))
        got = []
        for _ in range(200):  # at most 10 s: the 40 forwarded frames, as raw frames
            netload.wait_readable(path, 0.05)
            while (f := path.recv_frame()) is not None:
                got.append(f)
            if len(got) >= 40:
                break
        pings = netload.ping(path, 3, wait_s=10)
        path.send_frame(netload.udp_frame(b"stop", dport=9))
        b = pb.finish()
    finally:
        pb.close()
    assert pings["answered"] == 3, pings
    assert len(got) == 40, len(got)
    by_payload = {f[42:]: f for f in got}
    for i, frame in enumerate(sent):
        out = by_payload[frame[42:]]
        hop = bytes.fromhex("020000000901" if i % 2 == 0 else "020000000908")
        assert out[:6] == hop and out[6:12] == netload.GUEST_MAC, out[:12].hex()
        assert out[22] == 29 and netload.checksum(out[14:34]) == 0, out[14:34].hex()
        assert out[12:22] + out[23:24] + out[26:] == frame[12:22] + frame[23:24] + frame[26:]
    t = totals(b.console)
    assert t["forwarded"] == 40 and t["routed-drops"] == 10, t
    assert t["icmp-echoes"] == 3 and t["exceptions"] == 0, t
    windows_zero(b, PIPE_CPUS)


def test_pipe23_full_ring_drops_at_rx_counted():
    """PIPE-23: back-pressure: with rings of 4 slots and the workers held until RX has taken
    100 packets (-H 100), 100 datagrams of one flow fill that flow's worker ring with 4 and RX
    drops the other 96, counting them as ring-full, without blocking; once the workers start,
    exactly the 4 queued ones are echoed."""
    pb = PipeBoot("pipeline -c 2,3,4,5 -q 4 -H 100 -n 4 -t 300 -g none")
    try:
        pb.ready()
        res = netload.run(pb.path(), 100, size=64, wait_s=10)
        b = pb.finish()
    finally:
        pb.close()
    st, t = stages(b.console), totals(b.console)
    assert int(st["rx"]["packets"]) == 100 and int(st["rx"]["ring-full"]) == 96, st
    assert t["udp-echoes"] == 4 and int(st["tx"]["sent"]) == 4, (t, st)
    assert res["sent"] == 100 and res["received"] == 4 and res["corrupted"] == 0, res
    assert b.status == 0, b


def test_pipe24_run_to_completion_two_devices():
    """PIPE-24: run-to-completion on two CPUs, each with a device of its own (two
    virtio-net-device instances, each on its own netdev): 1,000 datagrams in 8 flows, each flow
    on one device, all echoed intact and in flow order; both CPUs echoed some; 0 exceptions
    on CPUs 2 and 3 in QEMU's log."""
    pb = PipeBoot("pipeline -m rtc -c 2,3 -n 1000 -t 300 -g none", k=2, cpus=4)
    try:
        pb.ready()
        res = netload.run(pb.path(), 1000, size=64, window=16, flows=8)
        b = pb.finish()
    finally:
        pb.close()
    assert (res["sent"], res["received"], res["lost"]) == (1000, 1000, 0), res
    assert (res["corrupted"], res["reordered"], res["duplicated"]) == (0, 0, 0), res
    st, t = stages(b.console), totals(b.console)
    assert t["udp-echoes"] == 1000 and t["exceptions"] == 0, t
    assert int(st["rtc0"]["sent"]) > 0 and int(st["rtc1"]["sent"]) > 0, st
    assert int(st["rtc0"]["sent"]) + int(st["rtc1"]["sent"]) == 1000, st
    assert b.status == 0, b
    windows_zero(b, (2, 3))
