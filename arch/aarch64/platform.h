/* SPDX-License-Identifier: MIT */
/*
 * platform.h — declarations shared inside arch/aarch64 (not visible to kernel/).
 */
#ifndef ZT_PLATFORM_H
#define ZT_PLATFORM_H

#include <stdbool.h>
#include <stdint.h>

#include "arch.h"
#include "dt.h"

#define ICC_SRE_EL1     S3_0_C12_C12_5
#define ICC_PMR_EL1     S3_0_C4_C6_0
#define ICC_BPR1_EL1    S3_0_C12_C12_3
#define ICC_CTLR_EL1    S3_0_C12_C12_4
#define ICC_IGRPEN1_EL1 S3_0_C12_C12_7
#define ICC_IAR1_EL1    S3_0_C12_C12_0
#define ICC_EOIR1_EL1   S3_0_C12_C12_1
#define ICC_SGI1R_EL1   S3_0_C12_C11_5

extern struct dt_info platform;                   /* the parsed device tree (dt.h) */
extern struct arch_cpu *arch_cpus[ARCH_MAX_CPUS]; /* by logical id, filled as CPUs are set up */

/* pl011.c */
void pl011_init(paddr_t base, unsigned intid);

/* gicv3.c */
void gic_init_distributor(void);
int gic_init_cpu(unsigned id, uint64_t mpidr); /* this CPU's redistributor + CPU interface */
void gic_sleep_cpu(unsigned id);               /* before it powers off: the reverse */
uint32_t gic_ack(void);                        /* ICC_IAR1_EL1: INTID, 1023 if spurious */
void gic_eoi(uint32_t iar);

/* gtimer.c */
void gtimer_init_cpu(void);
void pmu_init_cpu(void);

/* psci.c */
int psci_cpu_on(uint64_t mpidr, paddr_t entry, uint64_t context);
_Noreturn void psci_system_off(void);
_Noreturn void psci_cpu_off(void);
int psci_affinity_info(uint64_t mpidr);
void semihost_exit(int status);          /* returns only if semihosting is off */
bool semihost_check_fault(uint64_t elr); /* trap.c: was this the probe's HLT? */

/* mmio.c: the device windows (virtio-mmio transports, the PCIe host bridge, the SMMUv3) into
 * arch_boot_info; then, once the MMU is up, the kernel mappings arch_mmio_* use. */
void mmio_fill_devices(struct arch_boot_info *info);
void mmio_map_windows(struct arch_boot_info *info);

/* rtc.c: the PL031's time (seconds since the Epoch) and the counter when it was read, into
 * info->rtc_seconds/rtc_counter; both 0 without an RTC.  Boot CPU, first GiB mapped. */
void rtc_read_boot_time(const void *blob, size_t max_len, struct arch_boot_info *info);

/* mmu.c */
void mmu_init(void);
void mmu_init_secondary(void);
/* A device region's kernel address: in the first GiB, its linear-map address; elsewhere (the
 * GICv3's second redistributor region at 256 GiB, beyond the linear map) a fresh mapping in
 * the MMIO window.  Boot CPU, after mmu_init; NULL if the window is full. */
void *mmu_map_device(paddr_t pa, uint64_t size);
/* Does this CPU have Privileged Access Never (FEAT_PAN)?  mmu_init_secondary turns it on. */
bool mmu_has_pan(void);

/* boot.S */
extern char secondary_entry[];
void mmu_switch_ttbr1(paddr_t table);

#endif
