/* SPDX-License-Identifier: MIT */
/*
 * psci.c — firmware calls: PSCI (ARM DEN 0022, "Arm Power State Coordination Interface")
 * to start CPUs and power off, and Arm semihosting's SYS_EXIT to hand an exit status to QEMU.
 *
 * CPU_OFF, CPU_ON and AFFINITY_INFO take CPUs down and up at run time (kernel/part/partition.c).
 * The PSCI conduit (HVC or SMC) comes from the device tree's /psci "method".  Semihosting
 * is optional: arch_poweroff first tries SYS_EXIT (HLT #0xf000); if QEMU runs without
 * -semihosting that HLT is an undefined instruction, which trap.c recognises by its address
 * (semihost_check_fault) and skips, and PSCI SYSTEM_OFF powers off instead.
 */
#include "arch.h"
#include "platform.h"

#define PSCI_CPU_OFF                 0x84000002
#define PSCI_CPU_ON_64               0xc4000003
#define PSCI_AFFINITY_INFO_64        0xc4000004
#define PSCI_SYSTEM_OFF              0x84000008
#define SEMIHOST_SYS_EXIT            0x18
#define ADP_STOPPED_APPLICATION_EXIT 0x20026

static int64_t psci_call(uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3)
{
    register uint64_t x0 __asm__("x0") = fn;
    register uint64_t x1 __asm__("x1") = a1;
    register uint64_t x2 __asm__("x2") = a2;
    register uint64_t x3 __asm__("x3") = a3;
    if (platform.psci == DT_PSCI_SMC) {
        __asm__ volatile("smc #0" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3)::"memory");
    } else {
        __asm__ volatile("hvc #0" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3)::"memory");
    }
    return (int64_t)x0;
}

/* Returns 0 or the PSCI error (negative: -2 INVALID_PARAMETERS, -4 ALREADY_ON, ...). */
int psci_cpu_on(uint64_t mpidr, paddr_t entry, uint64_t context)
{
    return (int)psci_call(PSCI_CPU_ON_64, mpidr, entry, context);
}

/* CPU_OFF does not return when it succeeds (DEN 0022 5.1.3); on failure (DENIED: the
 * trusted OS lives on this CPU, never the case on QEMU virt) the CPU is parked instead. */
_Noreturn void psci_cpu_off(void)
{
    psci_call(PSCI_CPU_OFF, 0, 0, 0);
    arch_halt_cpu();
}

/* AFFINITY_INFO at level 0: 0 ON, 1 OFF, 2 ON_PENDING, or a negative error. */
int psci_affinity_info(uint64_t mpidr)
{
    return (int)psci_call(PSCI_AFFINITY_INFO_64, mpidr, 0, 0);
}

_Noreturn void psci_system_off(void)
{
    psci_call(PSCI_SYSTEM_OFF, 0, 0, 0);
    arch_halt_cpu();
}

extern char semihost_hlt[];
static volatile bool semihost_unavailable;

/* SYS_EXIT with {reason, status}: QEMU exits with status & 0xff (AArch64 semihosting). */
__attribute__((noinline)) void semihost_exit(int status)
{
    if (semihost_unavailable) {
        return;
    }
    volatile uint64_t block[2] = {ADP_STOPPED_APPLICATION_EXIT, (uint64_t)status};
    register uint64_t w0 __asm__("x0") = SEMIHOST_SYS_EXIT;
    register uint64_t x1 __asm__("x1") = (uint64_t)block;
    __asm__ volatile(".global semihost_hlt\nsemihost_hlt: hlt #0xf000"
                     : "+r"(w0)
                     : "r"(x1)
                     : "memory");
}

bool semihost_check_fault(uint64_t elr)
{
    if (elr != (uint64_t)semihost_hlt) {
        return false;
    }
    semihost_unavailable = true;
    return true;
}
