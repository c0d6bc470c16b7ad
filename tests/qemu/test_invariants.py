# SPDX-License-Identifier: MIT
"""The kernel's own checks under QEMU: what the panic path does with what it finds.

Each test boots the checked kernel (ZT_KERNEL) with a deliberate fault and judges by what it
printed and by QEMU's exit status (the kernel's, through semihosting).
"""

import re

import zt


def test_inv01_panic_backtrace_walks_block_mapped_frames():
    """INV-01: a panic whose frame pointer leads into RAM the linear map covers with a 2 MiB
    block still prints its backtrace (the frame's return address, 1234) and powers off with
    status 125: the check that a frame is mapped understands block mappings.  It used to panic
    inside the panic, and the second panic halted the CPU silently: QEMU never exited."""
    b = zt.boot(cpus=2, bootargs="debug_fault=bad-frame", timeout=60)
    assert b.status == zt.PANIC_STATUS, b
    assert re.search(r"panic: CPU 0: unexpected exception at EL1: unknown reason", b.console), b
    assert re.search(r"backtrace: 1234\r?\n", b.console), b
    assert "panic: stopping (exit status 125)" in b.console, b
