# SPDX-License-Identifier: MIT
"""Dynamically linked programs and file mappings (issue 24): Debian's glibc loader and libc
from the initrd, a static-pie, programs run from /tmp and /dev/shm, corrupt ELF files, and
mmap of files (user/linux/dyntest.c, maptest.c).

Two boots serve every test here (module fixtures): one runs the dyntest programs through
the shell, one runs every maptest check; each test reads its own lines.  Every program is
built by `make` with Debian's cross compiler; nothing is fetched.
"""

import re

import pytest

import zt

TIMEOUT = 300
BIN = zt.BUILD / "initrd" / "bin"
DEBS = zt.BUILD / "debs"
DYN_RUNS = ["dyntest a 'b c'", "dyntest-static-pie d e", "dyntest tmpexec", "dyntest badexec"]
if (BIN / "dyntest-musl").exists():
    DYN_RUNS.append("dyntest-musl m u")
MAP_CHECKS = ["shmfork", "anonfork", "private", "pages", "closed", "truncate", "protect", "sync", "advise",
              "exitdrop", "execdrop", "badmap"]


def check_lines(console, prefix):
    """{name: "ok" or the failure text} from lines "PREFIX NAME: ok|FAILED: ..."."""
    out = {}
    for m in re.finditer(rf"^{prefix} (\S+): (ok|FAILED.*)$", console.replace("\r", ""), re.M):
        out[m.group(1)] = m.group(2)
    return out


@pytest.fixture(scope="module")
def dyn_boot():
    script = "; ".join(DYN_RUNS)
    b = zt.boot(cpus=4, bootargs=f'quiet syscall_debug=1 init=/bin/sh -- -c "{script}"',
                timeout=TIMEOUT)
    assert "panic" not in b.console, b
    return b


@pytest.fixture(scope="module")
def map_boot():
    b = zt.boot(cpus=4, bootargs="quiet syscall_debug=1 init=/bin/maptest -- "
                + " ".join(MAP_CHECKS), timeout=TIMEOUT)
    assert "panic" not in b.console, b
    return b


def test_dyn10_dynamic_glibc(dyn_boot):
    """DYN-10: a dynamically linked glibc PIE built with Debian's cross compiler runs with
    ld-linux-aarch64.so.1 and libc.so.6 from the initrd (no ld.so.cache): it prints its
    arguments, finds AT_PHDR/AT_PHENT/AT_PHNUM/AT_ENTRY pointing at itself and AT_BASE at the
    loader, dlopen()s libztdyn.so from /usr/lib/aarch64-linux-gnu, calls it from two threads
    (its constructor ran, its thread-local counter is per thread) and dlclose()s it; the only
    call glibc makes that zerotick lacks is rseq."""
    c = dyn_boot.console.replace("\r", "")
    assert "dyntest arg 0: dyntest\ndyntest arg 1: a\ndyntest arg 2: b c\n" in c, dyn_boot
    assert check_lines(c, "dyntest").get("dynamic") == "ok", dyn_boot
    m = re.search(r"dyntest dynamic: loaded at (0x[0-9a-f]+), entry 0x[0-9a-f]+, interpreter at "
                  r"(0x[0-9a-f]+), (\d+) objects", c)
    assert m and int(m.group(1), 16) == 0x5555550000 and int(m.group(2), 16) >= 0x7e00000000, c
    assert int(m.group(3)) == 4, c  # the program, the vDSO, libc.so.6, the loader
    assert "dlopen /usr/lib/aarch64-linux-gnu/libztdyn.so: ok" in c, c
    calls = set(re.findall(r"syscall_debug: pid \d+ \(([^)]*)\) called \d+ \((\w+)\)", c))
    assert {name for prog, name in calls if prog != "dyntest-musl"} == {"rseq"}, calls


def test_dyn11_static_pie(dyn_boot):
    """DYN-11: the same program linked -static-pie (ET_DYN, no interpreter) is placed by the
    kernel, relocates itself, gets AT_BASE 0, and dlopen()s libztdyn.so (with libc.so.6 from the
    initrd) as the dynamic one does."""
    c = dyn_boot.console.replace("\r", "")
    assert "dyntest arg 0: dyntest-static-pie\ndyntest arg 1: d\ndyntest arg 2: e\n" in c, c
    assert check_lines(c, "dyntest").get("static-pie") == "ok", dyn_boot
    assert re.search(r"dyntest static-pie: loaded at 0x5555550000, entry 0x[0-9a-f]+, "
                     r"interpreter at 0, 2 objects", c), c  # the program, the vDSO


def test_dyn12_run_from_tmp(dyn_boot):
    """DYN-12: a dynamic program copied into /tmp and into /dev/shm runs from there (execve of
    a RAM file, read a page at a time), with its arguments, and exits 0."""
    c = dyn_boot.console.replace("\r", "")
    assert check_lines(c, "dyntest").get("tmpexec") == "ok", dyn_boot
    for path in ("/tmp/dyntest-copy", "/dev/shm/dyntest-copy"):
        assert f"dyntest arg 0: {path}\ndyntest arg 1: from\ndyntest arg 2: ram\n" in c, c


def test_dyn13_corrupt_programs(dyn_boot):
    """DYN-13: corrupt dynamic programs (tools/mkbadelf) are refused by execve with Linux's
    errno each: interpreter missing (ENOENT), its path not NUL-terminated (ENOEXEC), the
    interpreter itself dynamic or not an ELF file (ELIBBAD), overlapping segments or a segment
    past the end of the file (ENOEXEC); the kernel stays up and every page comes back."""
    c = dyn_boot.console.replace("\r", "")
    assert check_lines(c, "dyntest").get("badexec") == "ok", dyn_boot
    want = {"nointerp": "No such file or directory", "unterminated": "Exec format error",
            "interpdyn": "Accessing a corrupted shared library",
            "interpnotelf": "Accessing a corrupted shared library",
            "overlap": "Exec format error", "pastend": "Exec format error"}
    got = dict(re.findall(r"dyntest badexec: /bin/dynbad-(\S+) refused: (.*)", c))
    assert got == want, got
    assert dyn_boot.status == 0, dyn_boot


def test_dyn14_dynamic_musl(dyn_boot):
    """DYN-14: the same program built against Debian's arm64 musl, dynamically (its PT_INTERP
    names /lib/ld-musl-aarch64.so.1, musl's loader, which is its libc.so): placed, started at
    the loader's entry, AT_BASE at the loader, dlopen() of a musl-built libztdyn.so from
    /usr/lib called from two threads, exit 0."""
    if not (BIN / "dyntest-musl").exists():
        why = DEBS / "musl.skip"
        pytest.skip("musl (arm64) unavailable: "
                    + (why.read_text().strip() if why.exists() else "not fetched"))
    c = dyn_boot.console.replace("\r", "")
    assert "dyntest arg 0: dyntest-musl\ndyntest arg 1: m\ndyntest arg 2: u\n" in c, c
    assert "dyntest dynamic: dlopen /usr/lib/libztdyn.so: ok" in c, c
    assert c.count("dyntest dynamic: ok") >= 2, c  # glibc's run and musl's


def map_check(boot, *names):
    got = check_lines(boot.console, "maptest")
    for name in names:
        assert got.get(name) == "ok", (name, got.get(name), boot)


def test_map01_shared_fork_coherent(map_boot):
    """MAP-01: MAP_SHARED of a /dev/shm file: a parent and its forked child (4 CPUs) see each
    other's stores through their mappings, a pwrite() of one is in the other's mapping, a store
    through a mapping is what pread() returns, and 2 x 20,000 atomic adds from both processes
    sum up exactly."""
    map_check(map_boot, "shmfork")
    assert "maptest shmfork: parent and child agree, counter 40000" in map_boot.console


def test_map06_shared_anonymous(map_boot):
    """MAP-06: MAP_SHARED|MAP_ANONYMOUS memory is zeroed and shared with a forked child, as on
    Linux (a store of the child is the parent's to read, 2 x 10,000 atomic adds sum up), and
    every page comes back after munmap and the child's exit."""
    map_check(map_boot, "anonfork")


def test_map02_private_not_in_file(map_boot):
    """MAP-02: a MAP_PRIVATE mapping holds the file's bytes (from an offset too); a store into
    it is seen neither by pread() of the file nor through a MAP_SHARED mapping of it."""
    map_check(map_boot, "private")


def test_map03_every_page_back(map_boot):
    """MAP-03: unmapping returns every page, counted with sysinfo's exact free count: private
    copies, a file's shared pages (also those a mapping reaches past the end of a small file),
    anonymous memory; a mapping outlives close and unlink of its file and the file's pages go
    at the last munmap; a child that exits, or execs, holding mappings leaves no page behind."""
    map_check(map_boot, "pages", "closed", "exitdrop", "execdrop")
    m = re.search(r"maptest pages: (\d+) pages taken while mapped", map_boot.console)
    assert m and int(m.group(1)) >= 52, map_boot.console


def test_map04_truncate_protect_sync_advise(map_boot):
    """MAP-04: ftruncate of a mapped file (down, then up: the mapping and read() agree, the
    regrown part reads as zeros); mprotect (a shared mapping of a file opened read-only never
    becomes writable: EACCES; a private or read-write one may); msync (EINVAL for a bad address
    or flags, ENOMEM over a hole); madvise(MADV_DONTNEED) keeps a file's bytes and zeroes
    anonymous memory."""
    map_check(map_boot, "truncate", "protect", "sync", "advise")


def test_map05_bad_mappings(map_boot):
    """MAP-05: bad mmap arguments are refused with Linux's errno, and no page is kept: offset
    not page-aligned (EINVAL), at or past the end of the file (ENXIO), offset + length wrapping
    (EOVERFLOW), PROT_WRITE on a shared mapping of a file opened read-only or of an initrd file
    (EACCES), a write-only file (EACCES), a pipe or a directory (ENODEV), a bad descriptor
    (EBADF), neither shared nor private, writable and executable, length 0 (EINVAL)."""
    map_check(map_boot, "badmap")
    refused = re.findall(r"maptest badmap: (.*): (.*)", map_boot.console.replace("\r", ""))
    assert len(refused) == 13, refused
    assert map_boot.status == 0, map_boot
