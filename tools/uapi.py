# SPDX-License-Identifier: MIT
"""uapi.py — the numbers and names that include/uapi/ defines once, for the host tools and
tests (tools/trace2json, tools/exclog, tools/bench, tools/plot-trace, tests/qemu/).

The C headers are the only place a trace type, an IPI reason, an exception kind, a window
marker, the panic status or QEMU virt's timer and UART interrupt numbers is written; this
module reads them (the X-macro lists and the #defines), so a tool never repeats a number.

    import uapi                       # with tools/ on sys.path
    uapi.TRACE_TYPES[1] == "exc-entry"; uapi.IPI_REASONS[2] == "kick"
    uapi.SYNC["SYSCALL"] == 0; uapi.SVC_WINDOW_OPEN == 0x5a5a; uapi.TIMER_INTID == 27

Python 3 standard library only.  A header that cannot be read or a list that is missing
raises at import: a tool must not run on guessed numbers.
"""

import re
from pathlib import Path

UAPI_DIR = Path(__file__).resolve().parents[1] / "include" / "uapi"


def _text(name):
    text = (UAPI_DIR / name).read_text()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)  # comments out
    return re.sub(r"\\\n", " ", text)  # continued lines joined


def xlist(macro, header="zt_events.h"):
    """The entries of X-macro list `macro`: [(number, NAME, "name")], in file order."""
    m = re.search(rf"#define\s+{macro}\(X\)(.*)", _text(header))
    if not m:
        raise LookupError(f"include/uapi/{header}: no #define {macro}(X)")
    body = m.group(1).split("#define")[0]
    items = re.findall(r'X\(\s*(\d+)\s*,\s*(\w+)\s*,\s*"([^"]*)"\s*\)', body)
    if not items:
        raise LookupError(f"include/uapi/{header}: {macro} lists nothing")
    return [(int(n), name, text) for n, name, text in items]


def defines(header, prefix=""):
    """{NAME: int} for every `#define NAME <number>` in header (decimal or 0x hex)."""
    out = {}
    for name, value in re.findall(r"#define\s+(\w+)\s+(0x[0-9a-fA-F]+|\d+)\b", _text(header)):
        if name.startswith(prefix):
            out[name] = int(value, 0)
    return out


def _names(macro):
    return {n: text for n, _name, text in xlist(macro)}


def _numbers(macro):
    return {name: n for n, name, _text in xlist(macro)}


EXC_ENTRIES = _names("ZT_EXC_ENTRIES")   # 0: "sync", 1: "irq", ...
EXC = _numbers("ZT_EXC_ENTRIES")         # "SYNC": 0, ...
SYNC_KINDS = _names("ZT_SYNC_KINDS")     # 0: "syscall", 1: "data abort", ...
SYNC = _numbers("ZT_SYNC_KINDS")         # "SYSCALL": 0, ...
IRQ_CLASSES = _names("ZT_IRQ_CLASSES")   # 0: "device", 1: "ipi", 2: "timer", 3: "spurious"
IRQ = _numbers("ZT_IRQ_CLASSES")
IPI_REASONS = _names("ZT_IPI_REASONS")   # 0: "resched", ..., 15: "stop"
IPI = _numbers("ZT_IPI_REASONS")
TRACE_TYPES = _names("ZT_TRACE_TYPES")   # 1: "exc-entry", ...

_EVENTS = defines("zt_events.h", "ZT_")
SVC_WINDOW_OPEN = _EVENTS["ZT_SVC_WINDOW_OPEN"]
SVC_WINDOW_CLOSE = _EVENTS["ZT_SVC_WINDOW_CLOSE"]
PANIC_STATUS = _EVENTS["ZT_PANIC_STATUS"]

_VIRT = defines("zt_virt.h", "ZT_VIRT_")
TIMER_INTID = _VIRT["ZT_VIRT_TIMER_INTID"]
UART_INTID = _VIRT["ZT_VIRT_UART_INTID"]
COUNTER_HZ = _VIRT["ZT_VIRT_COUNTER_HZ"]

SYSCALLS = {n: name[4:] for name, n in defines("zt_syscall.h", "SYS_").items()}  # 172: "getpid"


def ipi_reason_name(reason):
    """The kernel's name for an IPI reason ("kick"), "ipiN" for an unused number."""
    return IPI_REASONS.get(reason, f"ipi{reason}")
