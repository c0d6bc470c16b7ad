# SPDX-License-Identifier: MIT
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
import select
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "qemu"))
import zt  # noqa: E402

META = "linux-image-arm64"
BUSYBOX = "busybox-static"
# zerotick's programs that make compare runs under Linux too
PROGRAMS = ("bench", "osnoise", "timerlat", "isol", "spin", "load", "true", "t0")


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


def initramfs(out, busybox_path, bin_dir=zt.BUILD / "initrd" / "bin", command=None, extra=()):
    """Writes the Linux initramfs to out; returns out.  command: /etc/command, the shell
    command line compare-init runs; extra: more cpio members (name, kind, payload), e.g. the
    network comparison's program and kernel modules (tools/netcompare)."""
    members = [(d, "dir", None) for d in ("bin", "bb", "dev", "etc", "proc", "sys", "tmp")]
    if command is not None:
        members.append(("etc/command", "file", command.encode() + b"\n"))
    members.append(("dev/console", "chardev", (5, 1)))
    members.append(("init", "file", (REPO / "tools" / "compare-init").read_bytes()))
    members.append(("bb/busybox", "file", Path(busybox_path).read_bytes()))
    for p in PROGRAMS:
        src = Path(bin_dir) / p
        if not src.exists():
            raise FileNotFoundError(f"{src}: build the kernel first (make)")
        members.append((f"bin/{p}", "file", src.read_bytes()))
    members += list(extra)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_bytes(cpio(members))
    return out


# ---------------------------------------------------------------- boots

def isolation_args(dataplane, housekeeping):
    """The full nohz_full isolation command line for CPUs dataplane (a cpulist)."""
    return (f"nohz_full={dataplane} isolcpus=nohz,domain,managed_irq,{dataplane} "
            f"rcu_nocbs={dataplane} irqaffinity={housekeeping} kpti=0")


# Machine options both kernels get from tools/compare: none.  (dtb-randomness=off, which
# leaves the random seeds out of the device tree, made Linux's CPU 0 busy throughout: every
# per-operation count grew tenfold, as the count covers all CPUs.)
MACHINE_OPTS = ""


def qemu_cmd(kern, initrd, cpus, append, icount=None, extra=()):
    cmd = zt.qemu_cmd(cpus=cpus, bootargs=append, icount=icount, extra=extra,
                      machine_opts=MACHINE_OPTS)
    i = cmd.index("-kernel")
    cmd[i + 1] = str(kern.image)
    return cmd[:i + 2] + ["-initrd", str(initrd)] + cmd[i + 2:]


# Intermittently (about one boot in four on the 2-core machine these were made on) Linux 6.1
# under -icount never reaches user space: CPU 0 takes timer interrupts at one kernel address
# forever and the console stays silent.  Such a boot is killed once it has printed no user
# line for HANG_SECONDS of host time and is made again, at most RETRIES times; Boot.retries
# says how often (tools/compare reports it).
HANG_SECONDS = 240
RETRIES = 3
USER_LINE = re.compile(rb"compare-init:|t0: ")


def _run(cmd, timeout):
    """Runs cmd; (output, returncode), or (output, None) when no user line came in time."""
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    out, start, seen = b"", time.monotonic(), False
    try:
        while True:
            limit = timeout if seen else HANG_SECONDS
            left = start + limit - time.monotonic()
            if left <= 0:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                if seen:
                    raise TimeoutError(f"Linux did not power off within {timeout}s: "
                                       f"{' '.join(cmd)}\n" + out.decode(errors="replace")[-3000:])
                return out, None
            ready, _, _ = select.select([proc.stdout], [], [], min(left, 5))
            if ready:
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    return out, proc.wait()
                out += chunk
                seen = seen or bool(USER_LINE.search(out))
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def boot(kern, initrd, cpus, args, command, icount=None, exclog=False, timeout=900,
         overlay=None):
    """Boots Linux with kernel command line args, compare-init running command (initrd: a
    list of initramfs() arguments, written with command as /etc/command); a zt.Boot.
    The status is compare-init's "init exited with status N" (QEMU's own is 0 on poweroff).
    overlay: another cpio archive appended to the initramfs (Linux unpacks concatenated
    archives one after the other): the one zerotick is handed as its -initrd (make compare's
    Debian part gives both kernels the same archive)."""
    append = f"console=ttyAMA0 {args}".strip()
    initrd = initramfs(*initrd, command=command)
    if overlay:
        with open(initrd, "ab") as f:
            f.write(Path(overlay).read_bytes())
    for attempt in range(RETRIES + 1):
        log_dir, log_extra = zt.log_options(exclog, exclog)
        cmd = qemu_cmd(kern, initrd, cpus, append, icount=icount, extra=log_extra)
        out, rc = _run(cmd, timeout)
        if rc is not None:
            break
        if log_dir:
            for p in Path(log_dir).glob("exc*.log"):
                p.unlink()
        print(f"linuxvm: Linux printed no user line in {HANG_SECONDS} s: boot again "
              f"({attempt + 1}/{RETRIES})", flush=True)
    else:
        raise TimeoutError(f"Linux hung in early boot {RETRIES + 1} times: {' '.join(cmd)}")
    text = out.decode(errors="replace")
    m = re.search(r"init exited with status (\d+)", text)
    status = int(m.group(1)) if m else (rc or 0)
    b = zt.Boot(cmd, text, status, log_dir)
    b.retries = attempt
    return b
