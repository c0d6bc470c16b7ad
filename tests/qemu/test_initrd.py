# SPDX-License-Identifier: MIT
"""A file tree from the boot loader (issue 24 item 6): the kernel booted as a Linux Image with
QEMU's -initrd, the archive layered over the built-in tree (kernel/fs/initrd.c).

The archives are written here (tools/linuxvm.py's cpio writer, newc); the programs in them
are copies of the kernel's own, so nothing needs fetching.
"""

import gzip
import re

import zt

import linuxvm  # tools/linuxvm.py (zt puts tools/ on the path)

BIN = zt.BUILD / "initrd" / "bin"
TIMEOUT = 300


def overlay(path, members):
    path.write_bytes(linuxvm.cpio(members))
    return path


FIRST = [("opt", "dir", None), ("opt/x", "dir", None), ("opt/x/y", "file", b"yyy\n")]


def members():
    hello = (BIN / "hello").read_bytes()
    return FIRST + [("usr", "dir", None), ("usr/bin", "dir", None),
                    ("usr/bin/hello2", "file", hello),
                    ("bin/notelf", "file", b"replaced by the boot loader\n"),
                    ("bin/hl", "symlink", "hello")]


def dumped(console):
    text = console.replace("\r", "")
    return [(m.group(1), m.group(2)) for m in
            re.finditer(r"^@@@@ ([^\n]+)\n(.*?)^@@@@ end$", text, re.M | re.S)]


def test_ird05_archive_from_the_boot_loader(tmp_path):
    """IRD-05: booted as a Linux Image with -initrd, the archive's files are in the tree over
    the built-in ones: a new program in a new directory runs, a built-in file of the same path
    is replaced, a new directory and a link are there; after memhog has taken and given back
    every free page the files read the same (the archive's memory is never handed out)."""
    ird = overlay(tmp_path / "overlay.cpio", members())
    files = "/bin/notelf /opt/x/y"
    cmd = f"/usr/bin/hello2 7; /bin/hl 6; proctest dump {files}; memhog; proctest dump {files}"
    b = zt.boot(cpus=2, bootargs=f"quiet init=/bin/sh -- -c '{cmd}'", initrd=ird,
                timeout=TIMEOUT)
    assert b.status == 0, b
    assert "initrd: 8 members from the boot loader's archive" in b.console, b
    assert "argv[0]=/usr/bin/hello2 argv[1]=7" in b.console, b
    assert "argv[0]=/bin/hl argv[1]=6" in b.console, b  # the link to the built-in hello
    want = [("/bin/notelf", "replaced by the boot loader\n"), ("/opt/x/y", "yyy\n")]
    assert dumped(b.console) == want + want, b
    assert re.search(r"memhog: round 1: \d+ MiB", b.console), b


def test_ird06_archives_that_are_not_read(tmp_path):
    """IRD-06: a gzip-compressed archive is not read, and one cut short is read up to the
    damage: each is said on the console, and the machine boots with the built-in tree."""
    whole = linuxvm.cpio(members())
    gz = tmp_path / "overlay.cpio.gz"
    gz.write_bytes(gzip.compress(whole))
    b = zt.boot(cpus=2, bootargs="quiet init=/bin/proctest -- dump /bin/notelf", initrd=gz,
                timeout=TIMEOUT)
    assert b.status == 0, b
    assert "initrd: the boot loader's archive is gzip-compressed: not read" in b.console, b
    assert dumped(b.console)[0][1].startswith("not a program"), b
    cut = tmp_path / "cut.cpio"
    first = len(linuxvm.cpio(FIRST)) - len(linuxvm.cpio([]))  # FIRST without its trailer
    cut.write_bytes(whole[:first + 60])     # half of the next header
    b = zt.boot(cpus=2, bootargs="quiet init=/bin/proctest -- dump /opt/x/y /usr/bin/hello2",
                initrd=cut, timeout=TIMEOUT)
    assert b.status == 0, b
    assert re.search(r"initrd: the boot loader's archive is not a cpio newc archive from byte "
                     r"\d+ on: what comes before is used", b.console), b
    got = dumped(b.console)
    assert got[0] == ("/opt/x/y", "yyy\n"), got
    assert "No such file or directory" in got[1][1], got
