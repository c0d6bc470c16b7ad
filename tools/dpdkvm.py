# SPDX-License-Identifier: MIT
"""dpdkvm.py — DPDK on Debian's Linux, on the same QEMU machine, answering the same traffic as
zerotick's /bin/pipeline (tools/netcompare's DPDK column).

What it does
    inputs(): fetches Debian's DPDK 22.11 with the ordinary package client (tools/fetch-debs:
        `apt-get download`, a private state under build/debs, never installed): dpdk-dev
        (which holds dpdk-testpmd), the poll-mode driver librte-net-virtio23, the mempool
        driver librte-mempool-ring23, and every library they need, found by following the
        ELF NEEDED names of the programs and the Depends of the library packages; and the
        vfio modules of the kernel package tools/linuxvm.py fetched.
    initramfs members: the loader, the libraries and the plugin directory at their Debian
        paths (every driver there is one testpmd links anyway), dpdk-testpmd, the modules.
    measure(): two boots, -smp 4 with Linux's full isolation command line for CPUs 2-3:
        under -icount, testpmd's own count of busy cycles per packet (--record-core-cycles:
        CNTVCT ticks in the forwarding rounds that received packets, one per instruction at
        shift 4) for N datagrams one at a time; under plain TCG, flat out, NDR and round trips,
        then with QEMU's exception log the forwarding CPU's exceptions over testpmd's run.

The device.  DPDK's virtio driver drives PCI functions only (no virtio-mmio), so the machine
gets a modern virtio-net-pci (`disable-legacy=on,iommu_platform=on`) behind QEMU's SMMUv3
(`-M virt,iommu=smmuv3`), on the same -netdev dgram, bound to vfio-pci: Debian's kernel has
the SMMUv3 driver built in and is built without CONFIG_VFIO_NOIOMMU, so the IOMMU path is the
only one (it is also the safe one).  testpmd runs `--forward-mode=5tswap` (Ethernet, IPv4
addresses and UDP ports swapped: the echo), the main lcore on CPU 0 and the forwarding lcore
on isolated CPU 2, one queue pair, bursts of 32.

Under -icount QEMU 7.2's round-robin does not run a halted vCPU that an interrupt woke while
another vCPU spins (docs/dataplane.md), and testpmd's forwarding lcore spins: the -icount boot
adds `idle=poll` so that no vCPU halts (the console's `stop` must reach CPU 0).
Unavailable (the reason) when a package cannot be had.
"""

import re
import shutil
import subprocess
from pathlib import Path

import linuxvm

REPO = Path(__file__).resolve().parents[1]
DEBS = REPO / "build" / "debs"
BUILD = REPO / "build" / "compare"
# dpdk-testpmd, the drivers it loads, and libgcc_s (glibc opens it for pthread_cancel)
ROOTS = ["dpdk-dev", "librte-net-virtio23", "librte-mempool-ring23", "librte-bus-pci23",
         "libgcc-s1"]
PLUGINS = ["librte_net_virtio.so.23", "librte_mempool_ring.so.23", "librte_bus_pci.so.23"]
TESTPMD = "usr/bin/dpdk-testpmd"
PMDS = "usr/lib/aarch64-linux-gnu/dpdk/pmds-23.0"
LIBDIRS = ["lib/aarch64-linux-gnu", "usr/lib/aarch64-linux-gnu"]
# sonames whose package name does not follow from the name
SONAME_PKG = {"libc.so.6": "libc6", "libm.so.6": "libc6", "ld-linux-aarch64.so.1": "libc6",
              "libnuma.so.1": "libnuma1", "libfdt.so.1": "libfdt1",
              "libjansson.so.4": "libjansson4", "libbsd.so.0": "libbsd0",
              "libelf.so.1": "libelf1", "libpcap.so.0.8": "libpcap0.8",
              "libmlx5.so.1": "ibverbs-providers", "libibverbs.so.1": "libibverbs1",
              "libz.so.1": "zlib1g", "libmd.so.0": "libmd0", "libdbus-1.so.3": "libdbus-1-3",
              "libnl-3.so.200": "libnl-3-200", "libnl-route-3.so.200": "libnl-route-3-200",
              "libsystemd.so.0": "libsystemd0", "libgcc_s.so.1": "libgcc-s1",
              "libatomic.so.1": "libatomic1", "libcap.so.2": "libcap2",
              "liblzma.so.5": "liblzma5", "libzstd.so.1": "libzstd1", "liblz4.so.1": "liblz4-1",
              "libgcrypt.so.20": "libgcrypt20", "libgpg-error.so.0": "libgpg-error0",
              "libxdp.so.1": "libxdp1", "libbpf.so.1": "libbpf1", "libarchive.so.13": "libarchive13",
              "libisal.so.2": "libisal2", "libipsec_mb.so.1": "libipsec-mb1"}
VFIO = ["drivers/vfio/vfio.ko", "drivers/vfio/vfio_iommu_type1.ko", "drivers/vfio/vfio_virqfd.ko",
        "drivers/vfio/pci/vfio-pci-core.ko", "drivers/vfio/pci/vfio-pci.ko"]
MACHINE_OPTS = ",iommu=smmuv3"
DEVICE = "virtio-net-pci,netdev=n0,disable-legacy=on,iommu_platform=on,romfile=,mac=52:54:00:12:34:56"
CPU = 2  # the forwarding lcore's CPU


class Unavailable(Exception):
    """DPDK (or a library it needs) could not be had: the reason, for "skipped"."""


def soname_package(soname):
    if soname in SONAME_PKG:
        return SONAME_PKG[soname]
    m = re.fullmatch(r"librte_(\w+)\.so\.(\d+)", soname)
    if m:
        name = m.group(1).replace("_", "-")
        return f"librte-{name}{'-' if name[-1].isdigit() else ''}{m.group(2)}"
    raise Unavailable(f"no package known for {soname}")


def needed(path):
    out = subprocess.run(["aarch64-linux-gnu-readelf", "-d", str(path)], capture_output=True,
                         text=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def _fetch(pkgs):
    try:
        linuxvm.fetch(DEBS, *pkgs)
    except linuxvm.Unavailable as e:
        raise Unavailable(str(e))


def _files(pkg):
    """{soname or file name: path} of the shared objects a fetched package holds."""
    out = {}
    for d in LIBDIRS:
        for f in (DEBS / pkg / d).glob("*.so*"):
            out[f.name] = f
    return out


def closure():
    """The packages whose files testpmd and the plugins need, fetched; their names."""
    _fetch(ROOTS)
    pkgs, have = list(ROOTS), {}
    for p in pkgs:
        have.update(_files(p))
    missing = [p for p in PLUGINS if p not in have]
    if missing:
        raise Unavailable(f"{', '.join(ROOTS)} hold no {', '.join(missing)}")
    todo, done = [DEBS / "dpdk-dev" / TESTPMD] + [have[p] for p in PLUGINS], set()
    while todo:
        obj = todo.pop()
        if obj in done:
            continue
        done.add(obj)
        for soname in needed(obj):
            if soname not in have:
                pkg = soname_package(soname)
                if pkg in pkgs:
                    raise Unavailable(f"{pkg} holds no {soname}")
                _fetch([pkg])
                pkgs.append(pkg)
                have.update(_files(pkg))
                if soname not in have:
                    raise Unavailable(f"{pkg} holds no {soname}")
            todo.append(have[soname])
    return pkgs


def members(kern):
    """The initramfs members DPDK needs (linuxvm.initramfs's extra)."""
    pkgs = closure()
    out, dirs = [], set()

    def add_dir(d):
        parts = Path(d).parts
        for i in range(1, len(parts) + 1):
            sub = "/".join(parts[:i])
            if sub not in dirs:
                dirs.add(sub)
                out.append((sub, "dir", None))

    names = set()
    for pkg in pkgs:  # every shared object and link as the packages lay them out
        for d in LIBDIRS + [PMDS]:
            base = DEBS / pkg / d
            if not base.is_dir():
                continue
            add_dir(d)
            for f in sorted(base.iterdir()):
                if ".so" not in f.name or f"{d}/{f.name}" in names:
                    continue
                names.add(f"{d}/{f.name}")
                if f.is_symlink():
                    out.append((f"{d}/{f.name}", "symlink", str(f.readlink())))
                elif f.is_file():
                    out.append((f"{d}/{f.name}", "file", f.read_bytes()))
    add_dir("lib")
    if "lib/ld-linux-aarch64.so.1" not in names:
        out.append(("lib/ld-linux-aarch64.so.1", "symlink",
                    "/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1"))
    add_dir("usr/bin")
    out.append((TESTPMD, "file", (DEBS / "dpdk-dev" / TESTPMD).read_bytes()))
    root = kern.image.parents[1] / "lib" / "modules"
    mods = sorted(root.glob("*"))[-1] / "kernel"
    add_dir("lib/vfio")
    for m in VFIO:
        f = mods / m
        if not f.exists():
            raise Unavailable(f"{kern.package} has no {m}")
        out.append((f"lib/vfio/{f.name}", "file", f.read_bytes()))
    add_dir("mnt/huge")
    return out


# The boot's command: vfio with the SMMU, hugepages, the device bound to vfio-pci, testpmd on
# the console (interactive: `start`, then `stop`, `quit` typed by netcompare), between a pair
# of window markers on the forwarding CPU (sockecho -M).
COMMAND = (
    "for m in vfio vfio_virqfd vfio_iommu_type1 vfio-pci-core vfio-pci; do "
    "insmod /lib/vfio/$m.ko || exit 1; done; "
    "chmod 755 /; mkdir -p /var/run /mnt/huge; mount -t hugetlbfs nodev /mnt/huge; "
    "echo 64 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages; "
    "for d in /sys/bus/pci/devices/*; do [ $(cat $d/device) = 0x1041 ] && dev=${d##*/}; done; "
    "echo vfio-pci > /sys/bus/pci/devices/$dev/driver_override; "
    "echo $dev > /sys/bus/pci/drivers_probe; "
    "echo dpdkvm: $dev bound to $(basename $(readlink /sys/bus/pci/devices/$dev/driver)), "
    "iommu group $(basename $(readlink /sys/bus/pci/devices/$dev/iommu_group)); "
    f"sockecho -M open -c {CPU}; "
    f"/usr/bin/dpdk-testpmd -l 0,{CPU} -n 1 --huge-dir /mnt/huge --file-prefix zt -a $dev -- -i "
    "--forward-mode=5tswap --nb-cores=1 --rxq=1 --txq=1 --rxd=256 --txd=256 --burst=32 "
    "--total-num-mbufs=8192 --record-core-cycles --record-burst-stats; "
    f"sockecho -M close -c {CPU}")

CYCLES_RE = re.compile(r"CPU cycles/packet=([\d.]+) \((?:busy|total) cycles=(\d+) / total \w+ packets=(\d+)\)")
FWD_RE = re.compile(r"RX-packets: (\d+)\s+TX-packets: (\d+)\s+TX-dropped: (\d+)")


def measure(p, flows, payload, shift, progress):
    """The DPDK column of tools/netcompare."""
    import zt
    nc = zt.tool_module("netcompare")
    nl = zt.tool_module("netload")
    pb = zt.tool_module("pipebench")
    try:
        kern = linuxvm.kernel(DEBS)
        bb = linuxvm.busybox(DEBS)
    except (linuxvm.Unavailable, OSError) as e:
        raise Unavailable(str(e))
    extra = members(kern) + nc.linux_inputs()[2]
    initrd = {"out": BUILD / "initramfs-dpdk.cpio", "busybox_path": bb, "extra": extra}
    iso = linuxvm.isolation_args("2-3", "0-1")
    devs = ["-netdev", None, "-device", DEVICE]

    def boot(icount=None, exclog=False):
        to, listen = nl.free_ports(2)
        devs[1] = (f"dgram,id=n0,local.type=inet,local.host=127.0.0.1,local.port={to},"
                   f"remote.type=inet,remote.host=127.0.0.1,remote.port={listen}")
        args = f"quiet {iso}" + (" idle=poll" if icount else "")
        lb = nc.LinuxBoot(kern, initrd, 4, args, COMMAND, list(devs), icount=icount,
                          exclog=exclog, machine_opts=MACHINE_OPTS, expect=r"testpmd> ")
        lb.where = [(to, listen, bytes.fromhex("525400123456"))]
        lb.con.sendline("start")
        lb.con.expect(r"testpmd> ", timeout=300)
        return lb, nl.RawPath(to, listen)

    def finish(lb):
        lb.con.sendline("stop")
        lb.con.expect(r"Done\.", timeout=600)
        lb.con.sendline("quit")
        return lb.finish(timeout=600)

    out = {}
    progress(f"DPDK: -icount, {p['repro_n']} datagrams one at a time")
    lb, path = boot(icount=shift)
    try:
        res = nl.run(path, p["repro_n"], 0, payload, wait_s=30.0, window=1, flows=flows,
                     stall_s=120.0)
        b = finish(lb)
    finally:
        path.close()
        lb.close()
    m = CYCLES_RE.search(b.console)
    if not m or res["received"] != p["repro_n"]:
        raise RuntimeError(f"DPDK under -icount: {res['received']} of {p['repro_n']} echoed, "
                           f"no cycles line:\n{b.console[-3000:]}")
    out.update({"insts": float(m.group(1)), "busy_cycles": int(m.group(2)),
                "packets": int(m.group(3)), "repro_cmd": pb.cmd_text(b, lb.where),
                "bound": re.search(r"dpdkvm: (.*)", b.console).group(1)})
    progress("DPDK: flat out, NDR, latency (TCG)")
    lb, path = boot()
    try:
        flat = nl.run(path, p["flat"], 0, payload, wait_s=2.0, flows=flows)
        ndr, _ = nl.ndr(path, p["max_rate"], p["trial_s"], p["ndr_steps"], payload, flows=flows)
        lat = nl.run(path, p["lat_n"], p["lat_rate"], payload, wait_s=2.0, flows=flows)
        b = finish(lb)
    finally:
        path.close()
        lb.close()
    out.update({"flat": flat, "ndr": ndr, "latency": lat, "cmd": pb.cmd_text(b, lb.where)})
    progress(f"DPDK: {p['exc_n']} datagrams, QEMU's exception log")
    lb, path = boot(exclog=True)
    try:
        nl.run(path, p["exc_n"], p["exc_rate"], payload, wait_s=5.0, flows=flows)
        b = finish(lb)
    finally:
        path.close()
        lb.close()
    try:
        kinds = nc.windows(b, [CPU])
    finally:
        if b.log_dir:
            shutil.rmtree(b.log_dir, ignore_errors=True)
    out.update({"cpus": [CPU], "kinds": kinds, "exceptions": {c: k["total"] for c, k in
                                                               kinds.items()}})
    return out
