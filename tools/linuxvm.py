"""linuxvm.py — Debian's Linux on the very QEMU machine zerotick boots (tools/compare).

What it does
    kernel(debs): fetches Debian's current arm64 kernel with the ordinary package client
        (tools/fetch-debs: `apt-get download` with a private state under build/debs, never
        installed): the metapackage linux-image-arm64 names the versioned package it depends
        on (linux-image-6.1.0-NN-arm64), which holds boot/vmlinuz-*, an uncompressed Image
        QEMU loads as it is.  Returns a Kernel, or raises Unavailable with the reason.
    initramfs(...): writes the Linux initramfs, a cpio "newc" archive written here (no
        packaged tool makes device nodes without root): /init (tools/compare-init),
        /bb/busybox (Debian's busybox-static), /dev/console, and in /bin the very files of
        zerotick's /bin that the comparison runs, byte for byte (build/initrd/bin).
    qemu_cmd(...): the QEMU command line of a Linux boot: zt.qemu_cmd's machine, CPU, memory,
        options and -icount, with -kernel/-initrd for Linux.  Nothing else differs.
    boot(...): runs it to the end (compare-init powers off), like zt.boot, with QEMU's
        exception log when asked.

Contexts: a host tool module, used by tools/compare and tests; single-threaded.
"""

import os
import re
import signal
import stat
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "qemu"))
import zt  # noqa: E402

META = "linux-image-arm64"
BUSYBOX = "busybox-static"
# zerotick's programs that make compare runs under Linux too
PROGRAMS = ("bench", "osnoise", "isol", "spin", "load", "true", "t0")


class Unavailable(Exception):
    """A test input (the kernel, busybox) could not be had: the reason, for "skipped"."""


class Kernel:
    def __init__(self, image, package, version):
        self.image, self.package, self.version = image, package, version

    def __repr__(self):
        return f"{self.package} {self.version} ({self.image})"


def fetch(debs, *packages):
    """tools/fetch-debs for packages; raises Unavailable with fetch-debs's reason."""
    subprocess.run([str(REPO / "tools" / "fetch-debs"), str(debs), *packages], check=True)
    for p in packages:
        if not (Path(debs) / f"{p}.ok").exists():
            skip = Path(debs) / f"{p}.skip"
            why = skip.read_text().strip() if skip.exists() else "fetch-debs said nothing"
            raise Unavailable(f"{p}: {why}")


def kernel(debs):
    """Debian's current arm64 kernel image, fetched (once) under debs."""
    debs = Path(debs)
    fetch(debs, META)
    metas = sorted(debs.glob(f"{META}_*_arm64.deb"))
    if not metas:
        raise Unavailable(f"{META}: no .deb left in {debs}")
    depends = subprocess.run(["dpkg-deb", "-f", str(metas[-1]), "Depends"], check=True,
                             capture_output=True, text=True).stdout
    m = re.search(r"(linux-image-[0-9][^\s,(]*-arm64)", depends)
    if not m:
        raise Unavailable(f"{META} depends on no versioned image: '{depends.strip()}'")
    package = m.group(1)
    fetch(debs, package)
    images = sorted((debs / package / "boot").glob("vmlinuz-*"))
    if not images:
        raise Unavailable(f"{package} holds no boot/vmlinuz-*")
    deb = sorted(debs.glob(f"{package}_*_arm64.deb"))
    version = subprocess.run(["dpkg-deb", "-f", str(deb[-1]), "Version"], capture_output=True,
                             text=True).stdout.strip() if deb else "?"
    return Kernel(images[-1], package, version)


def busybox(debs):
    fetch(debs, BUSYBOX)
    return Path(debs) / BUSYBOX / "bin" / "busybox"


# ---------------------------------------------------------------- cpio newc

def _cpio_entry(name, mode, data=b"", rdev=(0, 0), ino=0):
    """One newc member: header (13 hex fields), name, padding to 4, data, padding to 4.
    Owner root, one link, time 0: the same inputs give the same archive."""
    name_b = name.encode() + b"\0"
    fields = (ino, mode, 0, 0, 1, 0, len(data), 0, 0, rdev[0], rdev[1], len(name_b), 0)
    out = b"070701" + "".join("%08X" % v for v in fields).encode() + name_b
    out += b"\0" * (-len(out) % 4)
    return out + data + b"\0" * (-len(data) % 4)


def cpio(members):
    """members: (name, kind, payload) with kind 'dir', 'file' (payload: bytes, executable),
    'symlink' (payload: target) or 'chardev' (payload: (major, minor)).  Returns the archive."""
    out = b""
    for ino, (name, kind, payload) in enumerate(members, start=1):
        if kind == "dir":
            out += _cpio_entry(name, stat.S_IFDIR | 0o755, ino=ino)
        elif kind == "file":
            out += _cpio_entry(name, stat.S_IFREG | 0o755, payload, ino=ino)
        elif kind == "symlink":
            out += _cpio_entry(name, stat.S_IFLNK | 0o777, payload.encode(), ino=ino)
        elif kind == "chardev":
            out += _cpio_entry(name, stat.S_IFCHR | 0o600, rdev=payload, ino=ino)
        else:
            raise ValueError(f"cpio: unknown kind {kind}")
    return out + _cpio_entry("TRAILER!!!", 0)


def initramfs(out, busybox_path, bin_dir=zt.BUILD / "initrd" / "bin"):
    """Writes the Linux initramfs to out; returns out."""
    members = [(d, "dir", None) for d in ("bin", "bb", "dev", "proc", "sys", "tmp")]
    members.append(("dev/console", "chardev", (5, 1)))
    members.append(("init", "file", (REPO / "tools" / "compare-init").read_bytes()))
    members.append(("bb/busybox", "file", Path(busybox_path).read_bytes()))
    for p in PROGRAMS:
        src = Path(bin_dir) / p
        if not src.exists():
            raise FileNotFoundError(f"{src}: build the kernel first (make)")
        members.append((f"bin/{p}", "file", src.read_bytes()))
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_bytes(cpio(members))
    return out


# ---------------------------------------------------------------- boots

def isolation_args(dataplane, housekeeping):
    """The full nohz_full isolation command line for CPUs dataplane (a cpulist)."""
    return (f"nohz_full={dataplane} isolcpus=nohz,domain,managed_irq,{dataplane} "
            f"rcu_nocbs={dataplane} irqaffinity={housekeeping} kpti=0")


def qemu_cmd(kern, initrd, cpus, append, icount=None, extra=()):
    cmd = zt.qemu_cmd(cpus=cpus, bootargs=append, icount=icount, extra=extra)
    i = cmd.index("-kernel")
    cmd[i + 1] = str(kern.image)
    return cmd[:i + 2] + ["-initrd", str(initrd)] + cmd[i + 2:]


def boot(kern, initrd, cpus, args, command, icount=None, exclog=False, timeout=900):
    """Boots Linux with kernel command line args, compare-init running command; a zt.Boot.
    The status is compare-init's "init exited with status N" (QEMU's own is 0 on poweroff)."""
    append = f"console=ttyAMA0 {args} -- {command}".replace("  ", " ")
    log_dir, log_extra = zt.log_options(exclog, exclog)
    cmd = qemu_cmd(kern, initrd, cpus, append, icount=icount, extra=log_extra)
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        raise TimeoutError(f"Linux did not power off within {timeout}s: {' '.join(cmd)}\n"
                           + out.decode(errors="replace")[-3000:])
    text = out.decode(errors="replace")
    m = re.search(r"init exited with status (\d+)", text)
    status = int(m.group(1)) if m else (proc.returncode or -1)
    return zt.Boot(cmd, text, status, log_dir)
