/* SPDX-License-Identifier: MIT */
/*
 * smmu.h — the SMMUv3 in front of the PCIe root complex (kernel/dev/smmu.c): which memory each
 * PCI function's DMA may reach.
 *
 * At boot smmu_init points the SMMU at a linear stream table whose every entry aborts (no
 * event), a command queue and an event queue, routes the event and global-error interrupts to
 * housekeeping and enables translation; from then on no function reaches memory until it is
 * claimed.  A claim attaches its stream (smmu_attach): a context descriptor with its own ASID
 * and I/O page tables that map exactly the holder's DMA region, then the stream table entry,
 * then CMD_CFGI_STE and CMD_SYNC.  Release detaches it (smmu_detach): the entry back to abort,
 * CMD_CFGI_STE, CMD_TLBI_NH_ASID, CMD_SYNC — and only once the SYNC has completed may the
 * caller free the region's pages; the tables are freed here.  A DMA outside the region is a
 * translation fault the SMMU records in its event queue and signals by interrupt; the handler
 * (on a housekeeping CPU) copies the records out and the housekeeping worker hands each to the
 * fault handler device.c registered.
 *
 * Contexts: smmu_attach/smmu_detach in task context, any CPU (a leaf lock serialises the
 * command queue, IRQs masked while a command completes — a bounded wait); the event interrupt
 * on housekeeping; the fault handler in the worker, on housekeeping.  No IPI is ever sent.
 * Spec: ARM IHI 0070 (SMMUv3), chapters 3 (operation), 4 (commands), 5 (STE, CD), 6 (registers),
 * 7 (events).
 */
#ifndef ZT_KERNEL_SMMU_H
#define ZT_KERNEL_SMMU_H

#include <stdbool.h>
#include <stdint.h>

#include "arch.h"
#include "kernel/iopt.h"

#define SMMU_STREAMS    256  /* stream table entries: the root bus's 256 requester ids */
#define SMMU_EVT_FAULT  0x10 /* F_TRANSLATION; 0x11-0x13 address size, access, permission */
#define SMMU_STE_DWORDS 8
#define SMMU_CD_DWORDS  8

/* One event record, decoded (IHI 0070 7.3). */
struct smmu_fault {
    uint32_t sid;
    uint8_t type;       /* event id: SMMU_EVT_FAULT, C_BAD_STE (0x04), ... */
    bool write;         /* the transaction wrote (RnW = 0) */
    uint64_t addr;      /* its input (I/O virtual) address, for the fault events */
    unsigned repeats;   /* more records of the same stream and type right after it (one
                           transfer faults once per access: they are reported as one) */
    uint64_t last_addr; /* the address of the last of them */
};

/* A stream translating one DMA region while its function is claimed. */
struct smmu_context {
    uint32_t sid;
    uint16_t asid;
    paddr_t cd;     /* the context descriptor's page */
    struct iopt pt; /* its I/O page tables */
    bool attached;
};

struct smmu_stats {
    uint64_t commands; /* commands the SMMU consumed */
    uint64_t syncs;    /* CMD_SYNCs completed */
    uint64_t events;   /* event records read from the queue */
    uint64_t lost;     /* records lost: the queue overflowed, or the copy-out ring was full */
    uint64_t gerrors;  /* global errors acknowledged */
};

/* Boot, before PCI enumeration: take the SMMU (nothing if !s->present).  Prints one line unless
 * quiet, and one line with the reason if it cannot be used.  0, -ENODEV or -EIO. */
int smmu_init(const struct arch_smmu *s, bool quiet);
/* Does the SMMU translate (every stream aborts unless attached)? */
bool smmu_active(void);
/* Translate stream `sid` with `asid`: [iova, iova + pages * 4 KiB) -> [pa, ...), read/write.
 * 0, -EINVAL (sid out of the table, bad range), -ENOMEM, or -EIO (the SMMU did not complete
 * the commands: nothing is attached and the entry aborts). */
int smmu_attach(struct smmu_context *c, uint32_t sid, uint16_t asid, uint64_t iova, paddr_t pa,
                size_t pages);
/* Abort the stream, forget its configuration and TLB entries, wait for CMD_SYNC, free the
 * tables.  0, or -EIO if the SMMU did not complete the SYNC: then the tables are kept (the SMMU
 * may still walk them) and the caller must keep the DMA pages too. */
int smmu_detach(struct smmu_context *c);
/* Who hears of DMA faults (device.c), called in the housekeeping worker, one record a call. */
void smmu_set_fault_handler(void (*fn)(const struct smmu_fault *f));
/* The interrupt handler's part: copy every record out of the event queue (and acknowledge a
 * global error); the worker reports them.  IRQs masked.  Host tests call it directly. */
void smmu_poll_events(void);
/* The worker's part: report what smmu_poll_events copied out.  Host tests call it directly. */
void smmu_report_events(void);
/* Dword i of stream `sid`'s table entry, and a copy of the counters (tests, reports). */
uint64_t smmu_ste_dword(uint32_t sid, unsigned i);
struct smmu_stats smmu_stats(void);

#endif
