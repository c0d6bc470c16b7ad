# SPDX-License-Identifier: MIT
"""zt.py — boot zerotick under QEMU from pytest, and talk to its console.

Two ways to run the kernel:

* ``boot(...)`` runs QEMU to completion (the kernel powers off: init exits, a panic, or
  ``debug_exit=N``) and returns a ``Boot`` with the console text and QEMU's exit status,
  which under semihosting is the kernel's status.
* ``Console(...)`` starts QEMU and lets a test type into the UART and wait for output,
  for interactive shell sessions.

Optionally QEMU's own exception log is recorded (``exclog=True``): ``-d int,tid`` writes one
file per vCPU thread into the boot's log directory, which ``tools/exclog`` reads.  Nothing
here measures wall-clock time; timeouts exist only so a hung kernel fails the test.
"""

import importlib.util
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from importlib.machinery import SourceFileLoader
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# `make test` sets ZT_KERNEL to the checked kernel (assertions on); run by hand, the tests
# boot the release build unless ZT_KERNEL names another.
KERNEL = REPO / os.environ.get("ZT_KERNEL", "build/kernel.elf")
# The same kernel as a Linux arm64 Image (make builds both): how QEMU hands over an initrd.
IMAGE = KERNEL.with_suffix(".bin")
BUILD = REPO / "build"
QEMU = "qemu-system-aarch64"
DEFAULT_TIMEOUT = 180  # seconds of host time before a boot counts as hung
sys.path.insert(0, str(REPO / "tools"))
import uapi  # noqa: E402  (tools/uapi.py: the numbers and names of include/uapi/)

PANIC_STATUS = uapi.PANIC_STATUS


_tools = {}


def tool_module(name):
    """tools/NAME (exclog, trace2json, plot-noise...) imported as a module, once: the tools
    have no .py suffix."""
    if name not in _tools:
        loader = SourceFileLoader(name.replace("-", "_"), str(REPO / "tools" / name))
        spec = importlib.util.spec_from_loader(loader.name, loader)
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
        _tools[name] = module
    return _tools[name]


EXIT_STATS_RE = re.compile(r"^exit-stats: (?:cpu (\d+)|cpus (\d+)-(\d+)) sync (\d+) irq (\d+) "
                           r"fiq (\d+) serror (\d+) svc (\d+) timer (\d+)( each)?$", re.M)


def exit_stats(console):
    """{cpu: (sync, irq, fiq, serror, svc, timer)} from the kernel's exit_stats=1 lines, a run
    of equal CPUs ("exit-stats: cpus 2-510 ... each", machines of more than 16 CPUs) expanded
    to every CPU of it."""
    out = {}
    for m in EXIT_STATS_RE.finditer(console.replace("\r", "")):
        first = int(m.group(1) or m.group(2))
        last = int(m.group(1) or m.group(3))
        counts = tuple(int(m.group(i)) for i in range(4, 10))
        for cpu in range(first, last + 1):
            out[cpu] = counts
    return out


def repro_shift():
    """REPRO=1 in the environment (make test REPRO=1) runs every boot under -icount with
    ICOUNT_SHIFT (default 4): bit-for-bit repeatable, single-threaded TCG."""
    if os.environ.get("REPRO") == "1":
        return int(os.environ.get("ICOUNT_SHIFT", "4"))
    return None


def qemu_cmd(cpus=4, bootargs=None, mem="512M", el2=False, semihosting=True, dtb=None,
             icount=None, extra=(), cpu="cortex-a72", machine_opts="", kernel=None, initrd=None):
    """kernel: another kernel file than KERNEL (e.g. the release build's).  initrd: a cpio
    archive handed over as Linux's initrd is (-initrd): the kernel is then booted as a Linux
    Image (IMAGE), since QEMU ignores -initrd for an ELF file."""
    machine = "virt,gic-version=3" + (",virtualization=on" if el2 else "") + machine_opts
    cmd = [QEMU, "-M", machine, "-cpu", cpu, "-m", mem, "-nographic", "-nic", "none",
           "-smp", str(cpus), "-kernel", str(kernel or (IMAGE if initrd else KERNEL))]
    if initrd:
        cmd += ["-initrd", str(initrd)]
    if semihosting:
        cmd += ["-semihosting-config", "enable=on,target=native,userspace=off"]
    if bootargs:
        cmd += ["-append", bootargs]
    if dtb:
        cmd += ["-dtb", str(dtb)]
    if icount is None:
        icount = repro_shift()
    if icount is not None:
        cmd += ["-icount", f"shift={icount},sleep=off"]
    return cmd + list(extra)


class Boot:
    """The outcome of one QEMU run."""

    def __init__(self, cmd, console, status, log_dir):
        self.cmd = cmd
        self.console = console
        self.status = status
        self.log_dir = log_dir

    def lines(self):
        return self.console.replace("\r", "").split("\n")

    def line_matching(self, pattern):
        for line in self.lines():
            if re.search(pattern, line):
                return line
        return None

    def exclog(self, windows=False, irqs=False):
        """QEMU's exception log of this boot, as tools/exclog's --json report (a dict)."""
        assert self.log_dir, "boot(..., exclog=True) records the log"
        ex = tool_module("exclog")
        files = sorted(str(p) for p in Path(self.log_dir).glob("exc*.log"))
        return ex.report(ex.parse_files(files), want_windows=windows, want_irqs=irqs)

    def __repr__(self):
        tail = "\n".join(self.lines()[-40:])
        return f"Boot(status={self.status}, cmd={' '.join(self.cmd)!r})\n--- console tail ---\n{tail}"


def new_log_dir(prefix="qemu-"):
    """A fresh directory under build/tmp for one boot's QEMU logs."""
    base = BUILD / "tmp"
    base.mkdir(parents=True, exist_ok=True)
    return tempfile.mkdtemp(prefix=prefix, dir=base)


def log_options(exclog=False, trace_irqs=False):
    """(log directory, QEMU options) that record QEMU's exception log (exclog) and/or its GIC
    acknowledge trace (trace_irqs) one file per vCPU thread, as Boot.exclog reads them;
    (None, []) for neither."""
    if not (exclog or trace_irqs):
        return None, []
    log_dir = new_log_dir()
    what = ",".join((["int"] if exclog else []) + (["trace:gicv3_icc_iar1_read"]
                                                     if trace_irqs else []))
    return log_dir, ["-d", what + ",tid", "-D", os.path.join(log_dir, "exc%d.log")]


def net_options(kind="user", legacy=False):
    """QEMU options for one virtio-net device on loopback, and the host's way in.
    kind "user": QEMU user networking, datagrams to 127.0.0.1:port are forwarded to the guest's
    UDP port 7 and those to 127.0.0.1:ctl to its port 9 (udpecho -x 9 stops on one); returns
    (options, {"port": port, "ctl": ctl}).  kind "dgram": raw Ethernet frames, sent to
    127.0.0.1:to, and the guest's frames arrive on 127.0.0.1:listen; returns (options,
    {"to": to, "listen": listen}).  Ports are picked free by the OS, so parallel runs do not
    collide.  The transport is modern (virtio 1.x) unless legacy=True."""
    ports = tool_module("netload").free_ports(2)
    if kind == "user":
        netdev = (f"user,id=n0,hostfwd=udp:127.0.0.1:{ports[0]}-:7,"
                  f"hostfwd=udp:127.0.0.1:{ports[1]}-:9")
        where = {"port": ports[0], "ctl": ports[1]}
    else:
        netdev = (f"dgram,id=n0,local.type=inet,local.host=127.0.0.1,local.port={ports[0]},"
                  f"remote.type=inet,remote.host=127.0.0.1,remote.port={ports[1]}")
        where = {"to": ports[0], "listen": ports[1]}
    opts = [] if legacy else ["-global", "virtio-mmio.force-legacy=false"]
    return opts + ["-netdev", netdev, "-device", "virtio-net-device,netdev=n0"], where


def pci_net_options(kind="user", queues=1, iommu_platform=True, tap=None):
    """QEMU options for one modern virtio-net-pci (disable-legacy=on, no option ROM) and the
    host's way in.  kind "user" and "dgram" as net_options; kind "tap": the multi-queue tap
    `tap` (an MqTap) with `queues` queues, mq=on and rss=on on the device.  iommu_platform=True
    makes the device offer VIRTIO_F_ACCESS_PLATFORM, so that its DMA goes through the SMMU
    (machine_opts=",iommu=smmuv3"); without it, QEMU's virtio-pci bypasses any IOMMU."""
    dev = "virtio-net-pci,netdev=n0,disable-legacy=on,romfile="
    dev += ",iommu_platform=on" if iommu_platform else ""
    if kind == "tap":
        netdev = (f"tap,id=n0,ifname={tap.name},script=no,downscript=no,queues={queues},"
                  "vhost=off")
        dev += f",mq=on,rss=on,vectors={2 * queues + 2}"
        return ["-netdev", netdev, "-device", dev], {"host": tap.guest_ip}
    opts, where = net_options(kind)
    netdev = opts[opts.index("-netdev") + 1]
    return ["-netdev", netdev, "-device", dev], where


class MqTap:
    """A host-only tap for one test: created on entry (ip tuntap ..., multi_queue for queues > 1:
    QEMU opens a one-queue tap without IFF_MULTI_QUEUE, which a multi-queue tap refuses;
    10.77.N.1/24 on it, a permanent neighbour entry for the guest's 10.77.N.2 and QEMU's
    default MAC, no route but the tap's own subnet), removed on exit.  `skip_reason` says why
    it could not be made (not root, no /dev/net/tun, no ip command) and nothing is made then."""

    count = 0

    def __init__(self, queues=2):
        MqTap.count += 1
        self.mode = ["mode", "tap"] + (["multi_queue"] if queues > 1 else [])
        n = (os.getpid() + MqTap.count) % 250 + 1
        self.name = f"ztq{os.getpid() % 100000}{MqTap.count % 10}"[:15]
        self.host_ip, self.guest_ip = f"10.77.{n}.1", f"10.77.{n}.2"
        self.skip_reason = None
        self.made = False

    def _ip(self, *args):
        return subprocess.run(["ip", *args], capture_output=True, text=True)

    def __enter__(self):
        if os.geteuid() != 0:
            self.skip_reason = "needs root to create a host-only multi-queue tap"
        elif not os.path.exists("/dev/net/tun"):
            self.skip_reason = "no /dev/net/tun on this host: no tap can be made"
        else:
            try:
                r = self._ip("tuntap", "add", "dev", self.name, *self.mode)
            except FileNotFoundError:
                r = None
            if r is None or r.returncode != 0:
                self.skip_reason = ("ip tuntap add failed: " + (r.stderr.strip() if r else
                                                                 "no ip command"))
                return self
            self.made = True
            for args in (("addr", "add", f"{self.host_ip}/24", "dev", self.name),
                         ("link", "set", self.name, "up"),
                         ("neigh", "replace", self.guest_ip, "lladdr", "52:54:00:12:34:56",
                          "dev", self.name, "nud", "permanent")):
                r = self._ip(*args)
                if r.returncode != 0:
                    self.skip_reason = f"ip {' '.join(args)} failed: {r.stderr.strip()}"
                    break
        return self

    def __exit__(self, *exc):
        if self.made:
            self._ip("tuntap", "del", "dev", self.name, *self.mode)


def net_devices(k):
    """QEMU options for k modern virtio-net devices, each on its own -netdev dgram on
    127.0.0.1 with its own MAC (52:54:00:12:34:56 + i: the first -device takes the highest
    free slot, 31, the next 30, ...), and [(to, listen, mac)] per device, in -device order, for
    netload's RawPath/MultiPath."""
    opts, where = ["-global", "virtio-mmio.force-legacy=false"], []
    for i in range(k):
        to, listen = tool_module("netload").free_ports(2)
        mac = bytes([0x52, 0x54, 0x00, 0x12, 0x34, 0x56 + i])
        opts += ["-netdev", f"dgram,id=n{i},local.type=inet,local.host=127.0.0.1,"
                 f"local.port={to},remote.type=inet,remote.host=127.0.0.1,remote.port={listen}",
                 "-device", f"virtio-net-device,netdev=n{i},mac={mac.hex(':')}"]
        where.append((to, listen, mac))
    return opts, where


def boot(cpus=4, bootargs=None, timeout=DEFAULT_TIMEOUT, exclog=False, trace_irqs=False,
         stdin_data=None, **kw):
    """Run QEMU until it exits; return a Boot.  A hang raises TimeoutError with the output."""
    log_dir, log_extra = log_options(exclog, trace_irqs)
    extra = list(kw.pop("extra", ())) + log_extra
    cmd = qemu_cmd(cpus=cpus, bootargs=bootargs, extra=extra, **kw)
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        out, _ = proc.communicate(input=stdin_data, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        raise TimeoutError(f"QEMU did not exit within {timeout}s: {' '.join(cmd)}\n"
                           + out.decode(errors="replace")[-4000:])
    return Boot(cmd, out.decode(errors="replace"), proc.returncode, log_dir)


class Console:
    """An interactive QEMU: send bytes to the UART, wait for patterns in the output."""

    def __init__(self, cpus=4, bootargs=None, cmd=None, **kw):
        """cmd: a whole QEMU command line instead of zt's (e.g. a Linux boot, tools/linuxvm)."""
        self.cmd = cmd or qemu_cmd(cpus=cpus, bootargs=bootargs, **kw)
        self.proc = subprocess.Popen(self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self.output = ""
        self.pos = 0  # expect() searches from here

    def _read(self, deadline):
        fd = self.proc.stdout.fileno()
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        ready, _, _ = select.select([fd], [], [], min(left, 1.0))
        if ready:
            data = os.read(fd, 65536)
            if not data:
                return False
            self.output += data.decode(errors="replace").replace("\r", "")
        return True

    def expect(self, pattern, timeout=DEFAULT_TIMEOUT):
        """Wait until `pattern` (regex) appears after the previous match; return the match."""
        deadline = time.monotonic() + timeout
        rx = re.compile(pattern)
        while True:
            m = rx.search(self.output, self.pos)
            if m:
                self.pos = m.end()
                return m
            if not self._read(deadline):
                if self.proc.poll() is not None or time.monotonic() >= deadline:
                    raise TimeoutError(f"never saw {pattern!r}; output tail:\n"
                                       + self.output[-3000:])

    def send(self, text):
        self.proc.stdin.write(text.encode())
        self.proc.stdin.flush()

    def sendline(self, text):
        self.send(text + "\r")

    def wait(self, timeout=DEFAULT_TIMEOUT):
        """Wait for QEMU to exit; returns its status (reads the rest of the output)."""
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            self._read(deadline)
        if self.proc.poll() is None:
            self.close()
            raise TimeoutError("QEMU did not exit; output tail:\n" + self.output[-3000:])
        # QEMU has exited: what is left in the pipe ends at EOF, and the deadline is fixed,
        # so this ends even if the pipe stays open.
        drain_deadline = time.monotonic() + 1.0
        while self._read(drain_deadline):
            pass
        return self.proc.returncode

    def close(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def dump_dtb(path, cpus, el2=False, bootargs="x"):
    """Have QEMU write its device tree for this machine shape to `path`."""
    machine = "virt,gic-version=3" + (",virtualization=on" if el2 else "")
    cmd = [QEMU, "-M", f"{machine},dumpdtb={path}", "-cpu", "cortex-a72", "-m", "512M",
           "-nic", "none", "-smp", str(cpus), "-kernel", str(KERNEL), "-append", bootargs]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def dtb_to_dts(dtb):
    return subprocess.run(["dtc", "-I", "dtb", "-O", "dts", str(dtb)], check=True,
                          capture_output=True, text=True).stdout


def dts_to_dtb(dts_text, dtb):
    subprocess.run(["dtc", "-I", "dts", "-O", "dtb", "-o", str(dtb), "-"], input=dts_text,
                   check=True, capture_output=True, text=True)
