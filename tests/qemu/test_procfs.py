# SPDX-License-Identifier: MIT
"""/proc and /sys (issue 24 item 3): Linux's formats, the values behind them, what tools do
with them, and that reading them from housekeeping leaves a dataplane CPU alone.

The formats are checked against Linux's own files, captured from Debian's Linux on the same
QEMU machine by tools/linux-fixtures (tests/qemu/data/linux-proc/, with the kernel's version):
each check below is a parser of one file's shape (field counts, key names and order, columns),
run first on Linux's file — so it is shown to accept the real thing — and then on zerotick's.
The files are read by user/linux/proctest.c, ordinary glibc C that runs unchanged on both.
"""

import re

import pytest

import zt

DATA = zt.REPO / "tests" / "qemu" / "data" / "linux-proc"
TIMEOUT = 300

# What `proctest dump` prints (its standard list, user/linux/proctest.c), each compared with the
# fixture of the same path.
PID_FILES = ["/proc/self/stat", "/proc/self/status", "/proc/self/statm", "/proc/self/maps",
             "/proc/self/comm", "/proc/self/task/TID/stat"]


def fixture(path):
    return (DATA / path.replace("/", "%")).read_text()


def fixture_paths():
    return sorted(p.name.replace("%", "/") for p in DATA.iterdir() if p.name.startswith("%"))


def dumped(console):
    """{path: text} from proctest dump's marker lines."""
    text = console.replace("\r", "")
    return {m.group(1): m.group(2) for m in
            re.finditer(r"^@@@@ ([^\n]+)\n(.*?)^@@@@ end$", text, re.M | re.S)}


# ---------------------------------------------------------------- shapes

def pid_stat(text):
    """A /proc/PID/stat line: 52 fields, the comm in parentheses, numbers after the state."""
    m = re.fullmatch(r"(\d+) \((.{1,16})\) ([RSDZTtXI]) (.*)\n", text, re.S)
    assert m, text
    rest = m.group(4).split(" ")
    assert len(rest) == 49, (len(rest), text)  # + pid, comm, state = 52
    assert all(re.fullmatch(r"-?\d+", f) for f in rest), text
    return len(rest) + 3


def keys(text, sep=":"):
    return [line.split(sep, 1)[0].strip() for line in text.splitlines() if line.strip()]


def status(text):
    """Key:<tab>value lines; the keys in Linux's order."""
    assert all("\t" in line for line in text.splitlines()), text
    return keys(text)


def statm(text):
    f = text.split()
    assert len(f) == 7 and all(x.isdigit() for x in f), text
    return len(f)


MAPS_LINE = re.compile(r"([0-9a-f]{8,16})-([0-9a-f]{8,16}) [r-][w-][x-][ps] [0-9a-f]{8} "
                       r"[0-9a-f]{2}:[0-9a-f]{2} \d+ ?( +(\S.*))?")


def maps(text):
    """Every line in Linux's form; names, when there, start in column 74."""
    names = []
    for line in text.splitlines():
        m = MAPS_LINE.fullmatch(line)
        assert m, line
        if m.group(4):
            assert line.index(m.group(4)) == 73, line
            names.append(m.group(4))
    assert "[stack]" in names and "[heap]" in names, names
    return "ok"


def cpuinfo(text):
    """Blocks separated by an empty line, each with the same keys (arm64's set)."""
    blocks = [b for b in text.split("\n\n") if b.strip()]
    shapes = {tuple(k.strip() for k in keys(b)) for b in blocks}
    assert len(shapes) == 1, shapes
    return shapes.pop(), len(blocks)


def proc_stat(text):
    """cpu, cpuN (10 numbers each), intr, ctxt, btime, processes, procs_*, softirq (11)."""
    lines = [line.split() for line in text.splitlines()]
    names = [re.sub(r"^cpu\d+$", "cpuN", f[0]) for f in lines]
    for f in lines:
        assert all(x.isdigit() for x in f[1:]), f
        if f[0].startswith("cpu"):
            assert len(f) == 11, f
    assert len(lines[names.index("softirq")]) == 12
    return [n for i, n in enumerate(names) if i == 0 or n != names[i - 1]]


def meminfo(text):
    for line in text.splitlines():
        assert re.fullmatch(r"[\w()]+: +\d+( kB)?", line), line
    return keys(text)


def uptime(text):
    assert re.fullmatch(r"\d+\.\d\d \d+\.\d\d\n", text), text
    return "ok"


def loadavg(text):
    assert re.fullmatch(r"\d+\.\d\d \d+\.\d\d \d+\.\d\d \d+/\d+ \d+\n", text), text
    return "ok"


def mounts(text):
    for line in text.splitlines():
        f = line.split(" ")
        assert len(f) == 6 and f[4:] == ["0", "0"] and f[1].startswith("/"), line
    return "/proc" in text and "/sys" in text


def interrupts(text):
    """A header of CPUn columns; every line a label and one count per CPU column, then the
    interrupt's description; Err last."""
    lines = text.splitlines()
    cpus = lines[0].split()
    assert cpus == [f"CPU{i}" for i in range(len(cpus))], lines[0]
    for line in lines[1:-1]:
        f = line.split()
        assert re.fullmatch(r"(\d+|IPI\d+):", f[0]), line
        assert all(x.isdigit() for x in f[1:1 + len(cpus)]), line
        assert not f[1 + len(cpus)].isdigit(), line
    assert re.fullmatch(r"Err: +0", lines[-1]), lines[-1]
    return len(cpus), "arch_timer" in text


def filesystems(text):
    for line in text.splitlines():
        assert re.fullmatch(r"(nodev)?\t\w+", line), line
    return {"proc", "sysfs", "tmpfs"} <= set(text.split())


def cpulist(text):
    assert re.fullmatch(r"((\d+(-\d+)?)(,\d+(-\d+)?)*)?\n", text), text
    return "ok"


def one_line(pattern):
    def check(text):
        assert re.fullmatch(pattern + r"\n", text), text
        return "ok"
    return check


SHAPES = {
    "/proc/self/stat": pid_stat, "/proc/self/task/TID/stat": pid_stat, "/proc/self/status": status, "/proc/self/statm": statm,
    "/proc/self/maps": maps, "/proc/self/comm": one_line(r"\w+"),
    "/proc/cpuinfo": lambda t: cpuinfo(t)[0], "/proc/stat": proc_stat, "/proc/meminfo": meminfo,
    "/proc/uptime": uptime, "/proc/loadavg": loadavg, "/proc/mounts": mounts,
    "/proc/interrupts": lambda t: interrupts(t)[1], "/proc/filesystems": filesystems,
    "/proc/version": one_line(r"\w+ version \S+ .*"),
    "/proc/sys/kernel/ostype": one_line(r"\w+"), "/proc/sys/kernel/osrelease": one_line(r"\S+"),
    "/proc/sys/kernel/pid_max": one_line(r"\d+"),
    "/proc/sys/kernel/sched_rt_runtime_us": one_line(r"-?\d+"),
    "/proc/sys/kernel/random/boot_id": one_line(r"[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}"),
    "/sys/devices/system/cpu/online": cpulist, "/sys/devices/system/cpu/possible": cpulist,
    "/sys/devices/system/cpu/present": cpulist, "/sys/devices/system/cpu/offline": cpulist,
    "/sys/devices/system/cpu/isolated": cpulist, "/sys/devices/system/cpu/nohz_full": cpulist,
    "/sys/devices/system/cpu/kernel_max": one_line(r"\d+"),
    "/sys/devices/system/cpu/cpu1/online": one_line(r"[01]"),
    "/sys/devices/system/cpu/cpu1/topology/core_siblings_list": cpulist,
}

# What may differ from Linux's value of a shape (the shape itself must hold either way).
ONLY_SHAPE = {"/proc/mounts", "/proc/filesystems", "/proc/interrupts"}


@pytest.fixture(scope="module")
def dump_boot():
    """One boot: 4 CPUs, CPU 3 dataplane, proctest dumping every file; QEMU's log recorded."""
    b = zt.boot(cpus=4, bootargs="quiet dataplane=3 init=/bin/proctest -- dump", timeout=TIMEOUT,
                exclog=True)
    assert b.status == 0, b
    got = dumped(b.console)
    assert set(got) == set(fixture_paths()), (set(got) ^ set(fixture_paths()), b)
    assert not [p for p, t in got.items() if t.startswith("proctest: ")], b
    return b, got


def test_proc01_formats_match_linux(dump_boot):
    """PROC-01: every /proc and /sys file proctest reads has the shape of the same file on
    Debian's Linux 6.1 (tests/qemu/data/linux-proc): /proc/PID/stat's 52 fields, status's keys
    in Linux's order, statm's 7 numbers, maps lines with names in column 74, cpuinfo's key set
    per CPU, /proc/stat's lines and field counts, meminfo's keys in order, uptime, loadavg,
    mounts, interrupts' columns, the sysfs cpulists."""
    _, got = dump_boot
    assert set(SHAPES) == set(got), set(SHAPES) ^ set(got)
    for path in sorted(got):
        shape = SHAPES[path]
        linux = shape(fixture(path))  # the parser accepts Linux's own file
        mine = shape(got[path])
        if path not in ONLY_SHAPE:
            assert mine == linux, (path, mine, linux)


def test_proc02_values_are_the_kernels(dump_boot):
    """PROC-02: the values behind the formats: the sysfs sets name dataplane CPU 3 as isolated
    and nohz_full, cpuinfo has one block per CPU, status names the caller's affinity, MemTotal is the RAM the kernel manages; and
    /proc/interrupts' CPU 3 column is all zeros, as QEMU's log shows CPU 3 took no interrupt."""
    b, got = dump_boot
    assert got["/sys/devices/system/cpu/isolated"] == "3\n"
    assert got["/sys/devices/system/cpu/nohz_full"] == "3\n"
    assert got["/sys/devices/system/cpu/online"] == "0-3\n"
    assert got["/sys/devices/system/cpu/offline"] == "\n"
    assert got["/sys/devices/system/cpu/kernel_max"] == "511\n"
    assert cpuinfo(got["/proc/cpuinfo"])[1] == 4
    assert re.search(r"^Cpus_allowed_list:\t0-2$", got["/proc/self/status"], re.M)
    assert re.search(r"^Cpus_allowed:\t7$", got["/proc/self/status"], re.M)
    total = int(re.search(r"^MemTotal: +(\d+) kB", got["/proc/meminfo"], re.M).group(1))
    assert 400 * 1024 < total < 512 * 1024, total
    assert got["/proc/sys/kernel/ostype"] == "zerotick\n"
    ncpu, _ = interrupts(got["/proc/interrupts"])
    assert ncpu == 4
    rows = [line.split() for line in got["/proc/interrupts"].splitlines()[1:-1]]
    assert any(r[0] == "27:" for r in rows), rows  # the timer's line is there
    assert all(r[4] == "0" for r in rows), rows  # CPU 3's column
    assert sum(int(r[2]) + int(r[3]) for r in rows) > 0, rows  # 1 and 2 took some
    cpu3 = b.exclog()["cpus"].get("3", {}).get("kinds", {})
    assert cpu3.get("irq", 0) == 0, cpu3


PROCTEST_CHECKS = ["nprocs", "self", "listing", "errors", "reread", "stack", "statfs", "syscall",
                   "exact"]


def check_lines(console, prefix):
    return {m.group(1): m.group(2) for m in
            re.finditer(rf"^{prefix} (\S+): (ok|FAILED.*)$", console.replace("\r", ""), re.M)}


def test_proc03_what_programs_do_with_them():
    """PROC-03: glibc's sysconf(_SC_NPROCESSORS_*) and get_nprocs* read /sys and agree with it;
    /proc/self is the caller (stat, status, exe, cmdline); /proc lists this process and init,
    /proc/self/fd its descriptors, task/ its three threads; writes and creation are refused, a
    free pid and a closed descriptor's link are ENOENT; lseek(0) and read gives a new
    /proc/uptime; pthread_getattr_np finds the main thread's stack through /proc/self/maps;
    statfs of /tmp and /proc as df sees them; a thread blocked in read shows the call's number,
    its descriptor, buffer and length, SP and PC in its task/TID/syscall, and the reader's own
    /proc/self/syscall says "running"; /proc/CHILD/task/SELF, /proc/SELF/task/CHILD and
    /proc/CHILD/fd/200 (not open) are ENOENT while the child's open descriptor is there (a
    lookup made them all before: entries for every live id under every process)."""
    b = zt.boot(cpus=4, bootargs="quiet dataplane=3 init=/bin/proctest -- "
                + " ".join(PROCTEST_CHECKS), timeout=TIMEOUT)
    got = check_lines(b.console, "proctest")
    assert set(got) == set(PROCTEST_CHECKS), b
    assert {k: v for k, v in got.items() if v != "ok"} == {}, b
    assert "proctest nprocs: 4 online, 4 configured" in b.console, b
    assert b.status == 0, b


BUSYBOX = zt.BUILD / "initrd" / "bin" / "busybox"


def test_proc04_busybox_ps_top_free_df():
    """PROC-04: Debian's busybox-static: ps lists init and itself with their command lines, top
    shows the load and memory lines and its own row, free's total is MemTotal, df shows /tmp
    with its 8 MiB and what a file there uses, uptime prints the load averages, pidof finds
    init."""
    if not BUSYBOX.exists():
        why = zt.BUILD / "debs" / "busybox-static.skip"
        pytest.skip("busybox-static (arm64) unavailable: "
                    + (why.read_text().strip() if why.exists() else "not fetched"))
    cmd = ("ps; echo @@; top -b -n 1; echo @@; free; echo @@; dd if=/dev/zero of=/tmp/f "
           "bs=4096 count=100 2>/dev/null; df; echo @@; uptime; echo @@; pidof init")
    b = zt.boot(cpus=2, bootargs=f"quiet init=/bin/busybox -- sh -c '{cmd}'", timeout=TIMEOUT)
    assert b.status == 0, b
    out = b.console.replace("\r", "").split("@@\n")
    ps, top, free, df, up, pidof = out[-6:]
    assert re.search(r"^ +1 root +/bin/init", ps, re.M), ps
    assert re.search(r"^ +\d+ root +ps$|^ +\d+ root +\{ps\}", ps, re.M), ps
    assert re.search(r"^Mem: \d+K used, \d+K free", top, re.M), top
    assert re.search(r"^Load average: \d+\.\d\d \d+\.\d\d \d+\.\d\d \d+/\d+ \d+", top, re.M), top
    assert re.search(r"^ +\d+ +\d+ root +R .* top -b -n 1", top, re.M), top
    total = int(re.search(r"^Mem: +(\d+)", free, re.M).group(1))
    assert 400 * 1024 < total < 512 * 1024, free
    m = re.search(r"^tmpfs +8192 +(\d+) +(\d+) +\d+% /tmp$", df, re.M)
    assert m and int(m.group(1)) == 400 and int(m.group(2)) == 8192 - 400, df
    assert re.search(r"load average: \d+\.\d\d, \d+\.\d\d, \d+\.\d\d", up), up
    assert pidof.split()[0] == "1", pidof


@pytest.mark.parallel_vcpus
def test_proc05_reading_them_leaves_an_isolated_cpu_alone():
    """PROC-05: while a strict isolated task runs on dataplane CPU 3, proctest on housekeeping
    reads /proc and /sys in a loop (the machine's files, the isolated task's own /proc/PID
    files, /proc itself): the task is not killed, and
    QEMU's log shows 0 exceptions on CPU 3 from prctl's return to the end of isolation."""
    files = "/proc/stat /proc/interrupts /proc/meminfo /proc/loadavg /proc/uptime " \
            "/proc/cpuinfo /proc/@isol/stat /proc/@isol/status /proc/@isol/maps " \
            "/proc/@isol/task/@isol/stat /proc " \
            "/sys/devices/system/cpu/isolated /sys/devices/system/cpu/online"
    cmd = f"isol -c 3 -t 5 -s & proctest loop 4 {files}; wait"
    b = zt.boot(cpus=4, bootargs=f"quiet dataplane=2-3 init=/bin/sh -- -c '{cmd}'",
                timeout=TIMEOUT, exclog=True)
    assert b.status == 0, b
    m = re.search(r"proctest loop: (\d+) reads, (\d+) failed, on CPUs ([\d ]+)", b.console)
    assert m and int(m.group(1)) > 100 and m.group(2) == "0", b
    assert set(m.group(3).split()) <= {"0", "1"}, m.group(3)  # housekeeping only
    assert "isolation: pid" not in b.console, b  # not killed, nothing reported
    wins = [w for w in b.exclog(windows=True)["windows"] if w["cpu"] == 3]
    assert len(wins) == 1 and wins[0]["close_line"] is not None, wins
    assert wins[0]["counts"]["total"] == 0, wins[0]


def test_sysfs01_sets_follow_a_partition_change():
    """SYSFS-01: /sys/devices/system/cpu follows the partition as it changes at run time: after
    `partition dataplane 2` isolated and nohz_full read 2-3, after `partition offline 1`
    online reads 0,2-3, offline 1 and cpu1/online 0, and /proc/cpuinfo, /proc/stat and
    /proc/interrupts leave CPU 1 out (Linux shows online CPUs only); glibc's sysconf counts 3
    online CPUs of 4."""
    sets = " ".join(f"/sys/devices/system/cpu/{f}" for f in
                    ("online", "offline", "isolated", "nohz_full", "cpu1/online"))
    cmd = (f"partition -q dataplane 2; proctest dump {sets}; partition -q offline 1; "
           f"proctest dump {sets} /proc/cpuinfo /proc/stat /proc/interrupts; proctest nprocs")
    b = zt.boot(cpus=4, bootargs=f"quiet dataplane=3 init=/bin/sh -- -c '{cmd}'", timeout=TIMEOUT)
    assert b.status == 0, b
    text = b.console.replace("\r", "")
    first, second = text.split("@@@@ /sys/devices/system/cpu/online\n")[1:3]
    one, two = dumped("@@@@ /sys/devices/system/cpu/online\n" + first), \
        dumped("@@@@ /sys/devices/system/cpu/online\n" + second)
    cpu = "/sys/devices/system/cpu/"
    assert (one[cpu + "isolated"], one[cpu + "nohz_full"], one[cpu + "online"]) == \
        ("2-3\n", "2-3\n", "0-3\n"), one
    assert (two[cpu + "online"], two[cpu + "offline"], two[cpu + "cpu1/online"]) == \
        ("0,2-3\n", "1\n", "0\n"), two
    assert [p.split("\n")[0] for p in two["/proc/cpuinfo"].split("processor\t: ")[1:]] == \
        ["0", "2", "3"], two["/proc/cpuinfo"]
    assert re.findall(r"^cpu\d+", two["/proc/stat"], re.M) == ["cpu0", "cpu2", "cpu3"]
    assert two["/proc/interrupts"].split("\n")[0].split() == ["CPU0", "CPU2", "CPU3"]
    assert "proctest nprocs: 3 online, 4 configured" in text, b
