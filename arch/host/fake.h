/* SPDX-License-Identifier: MIT */
/*
 * fake.h — what the host fake arch records, for unit tests to inspect and control.
 */
#ifndef ZT_FAKE_H
#define ZT_FAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <arch_defs.h>

#define FAKE_COUNTER_FREQ 62500000ull /* as QEMU virt: 16 ns per counter cycle */
#define FAKE_MAX_PTES     4096
#define FAKE_MAX_KMAPS    1024
#define FAKE_MMIO_REGS    256
#define FAKE_PCI_FNS      8
#define FAKE_SMMU_CMDS    512

struct fake_pte {
    uint16_t asid;
    uint64_t va;
    uint64_t pa; /* 0 = free slot */
    unsigned prot;
};

struct fake_state {
    uint64_t timer_deadline[ARCH_MAX_CPUS]; /* programmed deadline per CPU, 0 = disarmed */
    unsigned timer_writes;                  /* hardware timer writes, all CPUs */
    unsigned ipi_sent[ARCH_MAX_CPUS][16];   /* per receiving CPU and IPI reason */
    bool ipi_enabled[ARCH_MAX_CPUS][16];    /* per CPU and IPI reason */
    bool irq_enabled[ARCH_MAX_CPUS][288];   /* per CPU and interrupt number */
    int irq_route[288];                     /* CPU + 1, 0 = never routed */
    char console[8192];
    size_t console_len;
    char rx[256]; /* bytes the next arch_console_rx delivers */
    size_t rx_len;
    uint64_t tls;
    int cpu_start_error;
    unsigned as_trims;  /* arch_as_trim calls */
    uint64_t as_unmaps; /* arch_as_unmap calls (page-table walks), mapped page or not */
    /* Page-table entries written (mapped or cleared) with interrupts masked since they were
     * last unmasked, and the longest such run: the work of one IRQs-masked section. */
    unsigned pte_writes_masked_run;
    unsigned pte_writes_masked_max;
    struct fake_pte ptes[FAKE_MAX_PTES];
    size_t mapped_pages;
    unsigned map_fail_after; /* if non-zero: the Nth arch_as_map from now fails */
    struct {
        uint64_t va;
        uint64_t pa;         /* 0 = free slot */
    } kmaps[FAKE_MAX_KMAPS]; /* kernel pages mapped by arch_kmap_page */
    bool switch_returns;     /* arch_context_switch returns at once instead of aborting */
    unsigned switches;       /* context switches let through that way */
    /* Called by arch_send_ipi after counting (the test plays the receiving CPU). */
    void (*ipi_hook)(unsigned cpu, unsigned ipi);
    void (*cpu_start_hook)(unsigned id); /* called by a successful arch_cpu_start */
    bool cpu_off[ARCH_MAX_CPUS];         /* what arch_cpu_is_off answers */
    unsigned cpu_releases;               /* arch_cpu_release calls */
    struct {         /* device registers (arch_mmio_*): a read returns val, or 0 */
        uint64_t pa; /* if the register was never written; 0 = free slot */
        uint32_t val;
    } mmio[FAKE_MMIO_REGS];
    unsigned mmio_writes;   /* arch_mmio_write32 calls */
    uint64_t mmio_stuck_pa; /* if set: writes to this register are ignored (a device that
                               never finishes its reset) */
    /* PCI functions behind fake_boot_info.pci's ECAM window (bus pci.bus only): config space
       as the function shows it, with BAR sizing and the command register's writable bits */
    struct fake_pci_fn {
        bool present;
        unsigned dev, fn;
        uint32_t cfg[64];     /* the first 256 bytes of configuration space */
        uint64_t bar_size[6]; /* BAR i's size (a power of two, 0: none); a 64-bit BAR's size
                                 is in its lower index (cfg says its type) */
        uint16_t cmd_wmask;   /* command bits the function implements */
        unsigned cfg_writes;
    } pci[FAKE_PCI_FNS];
    /* The SMMU at fake_boot_info.smmu: CR0ACK follows CR0, IRQ_CTRLACK follows IRQ_CTRL; a write
       of CMDQ_PROD consumes every command up to it from the queue in memory (recorded here)
       and moves CMDQ_CONS there, as QEMU's model does synchronously */
    struct {
        uint64_t cmd[FAKE_SMMU_CMDS][2];
        unsigned ncmds;
        bool stuck; /* CMDQ_CONS never moves (a wedged SMMU) */
    } smmu;
};

extern struct fake_state fake;
extern uint64_t fake_counter;
extern __thread unsigned long fake_irq_masked;
extern __thread struct cpu *fake_cpu;

/* What arch_boot_info() returns: tests fill in devices[] (not cleared by fake_reset). */
struct arch_boot_info;
extern struct arch_boot_info fake_boot_info;

void fake_reset(void);
/* Preset the device register at pa (as the device would show it). */
void fake_mmio_set(uint64_t pa, uint32_t val);
/* The value of the register at pa (0 if never written). */
uint32_t fake_mmio_get(uint64_t pa);
/* A PCI function at dev.fn on the fake bus with this vendor:device, class (24 bits) and header
 * type 0; its BARs are added with fake_pci_bar.  Returns it. */
struct fake_pci_fn *fake_pci_add(unsigned dev, unsigned fn, uint16_t vendor, uint16_t device,
                                 uint32_t class_code);
/* BAR `i` of f: memory (32-bit, or 64-bit taking i and i + 1, prefetchable or not) or I/O. */
void fake_pci_bar(struct fake_pci_fn *f, unsigned i, uint64_t size, bool io, bool is64,
                  bool prefetch);

#endif
