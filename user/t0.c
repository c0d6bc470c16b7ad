/* SPDX-License-Identifier: MIT */
/*
 * t0 — the boot-time probe: prints the counter (CNTVCT_EL0) its own first instruction read.
 *
 *   t0
 *
 * Booted as the first program (zerotick: init=/bin/t0; Linux: rdinit=/bin/t0), the value is
 * the guest time from the machine's reset (the counter starts at 0 under QEMU, for both
 * kernels) to the first user instruction, and under -icount it is exact and repeatable.
 * crt0 reads the counter as the process's first instruction (user/lib/crt0.S):
 *   t0: first user instruction at counter 1266450 (20263 us) on Linux 6.1.0-57-arm64
 * Then it powers the machine off: under zerotick by exiting (init's exit powers off), under
 * Linux with reboot(POWER_OFF), since Linux panics when init exits.
 */
#include <stdio.h>

#include "zt.h"

#define LINUX_SYS_reboot          142 /* not a zerotick call: used only under Linux */
#define LINUX_REBOOT_MAGIC1       0xfee1deadul
#define LINUX_REBOOT_MAGIC2       672274793ul
#define LINUX_REBOOT_CMD_POWEROFF 0x4321fedcul

int main(void)
{
    uint64_t c = zt_start_counter;
    printf("t0: first user instruction at counter %llu (%llu us) on %s %s\n", (unsigned long long)c,
           (unsigned long long)(zt_counter_to_ns(c) / 1000), zt_on_linux() ? "Linux" : "zerotick",
           zt_kernel_release());
    fflush(stdout);
    if (zt_on_linux() && zt_getpid() == 1) {
        zt_syscall4(LINUX_SYS_reboot, LINUX_REBOOT_MAGIC1, LINUX_REBOOT_MAGIC2,
                    LINUX_REBOOT_CMD_POWEROFF, 0);
    }
    return 0;
}
