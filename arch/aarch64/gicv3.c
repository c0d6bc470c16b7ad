/* SPDX-License-Identifier: MIT */
/*
 * gicv3.c — the GICv3 interrupt controller (ARM IHI 0069, "GICv3 and GICv4 Architecture
 * Specification"): distributor, one redistributor per CPU, system-register CPU interface.
 *
 * What it does: puts every interrupt in Group 1 at one priority, routes SPIs to a single
 * CPU by affinity (GICD_IROUTERn, affinity routing on), enables/disables SGIs and PPIs per
 * CPU in that CPU's redistributor, sends SGIs (ICC_SGI1R_EL1), acknowledges and ends
 * interrupts.  It makes no policy: which CPU gets which SPI is kernel/cpu/irq.c's decision.
 *
 * Redistributors: QEMU virt has room for 123 in its first region (0x080a0000, 128 KiB
 * each); a machine with more CPUs gets a second region high in the address space (the device
 * tree's #redistributor-regions = <2>, at 0x40_0000_0000: hw/arm/virt.c puts the other
 * CPUs' frames there), which mmu_map_device maps outside the linear map.  The boot CPU walks
 * every region once, reading each frame's GICR_TYPER until the frame marked Last, and pairs
 * each frame with the logical CPU of the same affinity: frames come in CPU order, so the
 * frame's position names its CPU and the walk is linear in the number of CPUs (a CPU found
 * elsewhere costs a search, never a wrong pairing).
 *
 * Reads of another CPU's enable state go to that CPU's redistributor frame in memory and
 * never interrupt it.  Writes to GICD are serialised by gic_lock; each redistributor is
 * written only by its own CPU (and by the boot CPU before that CPU starts).
 */
#include "arch.h"
#include "kernel/spinlock.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_syscall.h"
#include "platform.h"

/* Distributor (IHI 0069 12.9) */
#define GICD_CTLR       0x0000
#define GICD_TYPER      0x0004
#define GICD_IGROUPR    0x0080
#define GICD_ISENABLER  0x0100
#define GICD_ICENABLER  0x0180
#define GICD_ICPENDR    0x0280
#define GICD_IPRIORITYR 0x0400
#define GICD_ICFGR      0x0c00
#define GICD_IROUTER    0x6000
#define GICD_CTLR_RWP   (1u << 31)
#define GICD_CTLR_ARE   (1u << 4)
#define GICD_CTLR_G1    (1u << 1)

/* Redistributor: RD_base frame, then SGI_base frame 64 KiB above (IHI 0069 12.10/12.11) */
#define GICR_CTLR       0x0000
#define GICR_TYPER      0x0008
#define GICR_WAKER      0x0014
#define GICR_SGI_BASE   0x10000
#define GICR_IGROUPR0   (GICR_SGI_BASE + 0x0080)
#define GICR_ISENABLER0 (GICR_SGI_BASE + 0x0100)
#define GICR_ICENABLER0 (GICR_SGI_BASE + 0x0180)
#define GICR_ICPENDR0   (GICR_SGI_BASE + 0x0280)
#define GICR_IPRIORITYR (GICR_SGI_BASE + 0x0400)
#define GICR_CTLR_RWP   (1u << 3)
#define GICR_TYPER_LAST (1u << 4)
#define GICR_TYPER_VLPI (1u << 1)
#define GICR_WAKER_PS   (1u << 1)
#define GICR_WAKER_CA   (1u << 2)

#define IRQ_PRIORITY 0xa0

static uint8_t *gicd;
static uint8_t *gicr_of[ARCH_MAX_CPUS]; /* RD_base per logical CPU (gicr_pair_all) */
PERCPU_ARRAY(gicr_of);
static unsigned nr_intids; /* supported INTIDs, from GICD_TYPER */
/* Logical CPU + 1 each SPI was last routed to by arch_irq_route (0: CPU 0, the boot route):
 * arch_irq_route_of checks the register against it instead of searching every CPU. */
static uint16_t route_cpu[1020];
static spinlock_t gic_lock = SPINLOCK_INIT_RANK(LOCK_LEAF);

static inline uint32_t rd32(uint8_t *base, unsigned off)
{
    return *(volatile uint32_t *)(base + off);
}

static inline void wr32(uint8_t *base, unsigned off, uint32_t v)
{
    *(volatile uint32_t *)(base + off) = v;
}

static inline uint64_t rd64(uint8_t *base, unsigned off)
{
    return *(volatile uint64_t *)(base + off);
}

static inline void wr64(uint8_t *base, unsigned off, uint64_t v)
{
    *(volatile uint64_t *)(base + off) = v;
}

/* Wait until a register write (enable/disable, control) has taken effect. */
static void gicd_wait_rwp(void)
{
    while (rd32(gicd, GICD_CTLR) & GICD_CTLR_RWP) {
    }
}

static void gicr_wait_rwp(uint8_t *rd)
{
    while (rd32(rd, GICR_CTLR) & GICR_CTLR_RWP) {
    }
}

static void gicr_pair_all(void);

/* SPI `intid` edge-triggered (GICD_ICFGR<n>: Int_config bit 1 of its two bits; IHI 0069
 * 12.9.9); 0 = none.  Boot, with the distributor disabled. */
static void set_edge(unsigned intid)
{
    if (intid >= 32 && intid < nr_intids) {
        unsigned off = GICD_ICFGR + intid / 16 * 4;
        wr32(gicd, off, rd32(gicd, off) | 2u << (2 * (intid % 16)));
    }
}

/* Boot CPU, once: all SPIs Group 1, priority IRQ_PRIORITY, level, disabled, routed to CPU 0;
 * then every redistributor frame is paired with its CPU. */
void gic_init_distributor(void)
{
    gicd = phys_to_virt(platform.gicd.base);
    nr_intids = 32 * ((rd32(gicd, GICD_TYPER) & 0x1f) + 1);
    if (nr_intids > 1020) {
        nr_intids = 1020;
    }
    wr32(gicd, GICD_CTLR, rd32(gicd, GICD_CTLR) & ~GICD_CTLR_G1);
    gicd_wait_rwp();
    for (unsigned i = 32; i < nr_intids; i += 32) {
        wr32(gicd, GICD_ICENABLER + i / 8, 0xffffffff);
        wr32(gicd, GICD_ICPENDR + i / 8, 0xffffffff);
        wr32(gicd, GICD_IGROUPR + i / 8, 0xffffffff);
    }
    for (unsigned i = 32; i < nr_intids; i += 4) {
        wr32(gicd, GICD_IPRIORITYR + i, IRQ_PRIORITY * 0x01010101u);
    }
    for (unsigned i = 32; i < nr_intids; i += 16) {
        wr32(gicd, GICD_ICFGR + i / 4, 0); /* level-sensitive */
    }
    set_edge(platform.smmu_eventq_intid); /* the SMMU pulses its wired interrupts (edge, as */
    set_edge(
        platform.smmu_gerror_intid); /* its device-tree node says): a level SPI would drop them */
    gicd_wait_rwp();
    for (unsigned i = 32; i < nr_intids; i++) {
        wr64(gicd, GICD_IROUTER + 8 * i, platform.cpu_mpidr[0] & 0xff00ffffffull);
    }
    wr32(gicd, GICD_CTLR, GICD_CTLR_ARE | GICD_CTLR_G1 | (rd32(gicd, GICD_CTLR) & (1u << 6)));
    gicd_wait_rwp();
    gicr_pair_all();
}

/* GICR_TYPER holds the affinity as Aff3.Aff2.Aff1.Aff0 in bits 63:32. */
static uint32_t mpidr_to_typer_aff(uint64_t mpidr)
{
    return (uint32_t)(((mpidr >> 32) & 0xff) << 24 | (mpidr & 0xffffff));
}

/* The logical CPU whose affinity is `aff` (GICR_TYPER form): `guess` if it is that one,
 * else the first that is; -1 if none. */
static int cpu_of_aff(uint32_t aff, unsigned guess)
{
    if (guess < platform.ncpus && mpidr_to_typer_aff(platform.cpu_mpidr[guess]) == aff) {
        return (int)guess;
    }
    for (unsigned i = 0; i < platform.ncpus; i++) {
        if (mpidr_to_typer_aff(platform.cpu_mpidr[i]) == aff) {
            return (int)i;
        }
    }
    return -1;
}

/* Walk every redistributor region (until its Last frame or its end) and give each logical
 * CPU its frame.  A frame whose CPU the device tree does not list is left alone. */
static void gicr_pair_all(void)
{
    unsigned k = 0; /* frames seen: QEMU's k-th frame is CPU k's */
    for (unsigned r = 0; r < platform.ngicr; r++) {
        uint8_t *rd = mmu_map_device(platform.gicr[r].base, platform.gicr[r].size);
        uint8_t *end = rd ? rd + platform.gicr[r].size : rd;
        while (rd < end) {
            uint64_t typer = rd64(rd, GICR_TYPER);
            int cpu = cpu_of_aff((uint32_t)(typer >> 32), k++);
            if (cpu >= 0 && !gicr_of[cpu]) {
                gicr_of[cpu] = rd;
            }
            if (typer & GICR_TYPER_LAST) {
                break;
            }
            rd += (typer & GICR_TYPER_VLPI) ? 0x40000 : 0x20000;
        }
    }
}

/*
 * This CPU's redistributor and CPU interface.  Wakes the redistributor, puts SGIs/PPIs in
 * Group 1, disables all of them (the kernel enables what this CPU may take), then enables
 * the system-register interface with every priority unmasked.
 */
int gic_init_cpu(unsigned id, uint64_t mpidr)
{
    uint8_t *rd = id < ARCH_MAX_CPUS ? gicr_of[id] : 0;
    if (!rd || (uint32_t)(rd64(rd, GICR_TYPER) >> 32) != mpidr_to_typer_aff(mpidr)) {
        return -ENODEV;
    }
    wr32(rd, GICR_WAKER, rd32(rd, GICR_WAKER) & ~GICR_WAKER_PS);
    while (rd32(rd, GICR_WAKER) & GICR_WAKER_CA) {
    }
    wr32(rd, GICR_ICENABLER0, 0xffffffff);
    wr32(rd, GICR_ICPENDR0, 0xffffffff);
    wr32(rd, GICR_IGROUPR0, 0xffffffff);
    for (unsigned i = 0; i < 32; i += 4) {
        wr32(rd, GICR_IPRIORITYR + i, IRQ_PRIORITY * 0x01010101u);
    }
    gicr_wait_rwp(rd);

    sysreg_write(ICC_SRE_EL1, sysreg_read(ICC_SRE_EL1) | 1); /* system registers, not MMIO */
    isb(); /* SRE changes how the ICC_* registers below are accessed: it must take effect
              before the first of them (IHI 0069 12.1.1: ICC_SRE_EL1, "an ISB is required") */
    sysreg_write(ICC_PMR_EL1, 0xff); /* every priority may interrupt */
    sysreg_write(ICC_BPR1_EL1, 0);   /* no priority grouping: no preemption between IRQs */
    sysreg_write(ICC_CTLR_EL1, 0);   /* EOImode 0: EOIR drops priority and deactivates */
    sysreg_write(ICC_IGRPEN1_EL1, 1);
    isb(); /* the CPU interface is configured and Group 1 enabled before this CPU unmasks IRQs */
    return 0;
}

/* This CPU is about to power off: take nothing more (Group 1 off at the CPU interface, every
 * SGI and PPI disabled), then mark its redistributor asleep and wait until it says so
 * (GICR_WAKER.ProcessorSleep / ChildrenAsleep, IHI 0069 9.11.46).  gic_init_cpu undoes it. */
void gic_sleep_cpu(unsigned id)
{
    uint8_t *rd = gicr_of[id];
    sysreg_write(ICC_IGRPEN1_EL1, 0);
    isb(); /* the CPU interface stops signalling before the redistributor is put to sleep */
    wr32(rd, GICR_ICENABLER0, 0xffffffff);
    gicr_wait_rwp(rd);
    wr32(rd, GICR_WAKER, rd32(rd, GICR_WAKER) | GICR_WAKER_PS);
    while (!(rd32(rd, GICR_WAKER) & GICR_WAKER_CA)) {
    }
}

uint32_t gic_ack(void)
{
    uint32_t iar = (uint32_t)sysreg_read(ICC_IAR1_EL1);
    dsb(sy); /* the device's state is read only after the acknowledge (IHI 0069 4.1.1) */
    return iar;
}

void gic_eoi(uint32_t iar)
{
    sysreg_write(ICC_EOIR1_EL1, iar);
    isb(); /* the priority drop and deactivation take effect before the handler returns and
              unmasks IRQs, so the same interrupt is not taken again as still active */
}

void arch_irq_set_enabled(unsigned intid, bool enabled)
{
    if (intid < 32) {
        uint8_t *rd = gicr_of[arch_this_cpu_id()];
        wr32(rd, enabled ? GICR_ISENABLER0 : GICR_ICENABLER0, 1u << intid);
        gicr_wait_rwp(rd);
        return;
    }
    if (intid >= nr_intids) {
        return;
    }
    unsigned long flags = arch_irq_save();
    spin_lock(&gic_lock);
    wr32(gicd, (enabled ? GICD_ISENABLER : GICD_ICENABLER) + (intid / 32) * 4, 1u << (intid % 32));
    gicd_wait_rwp();
    spin_unlock(&gic_lock);
    arch_irq_restore(flags);
}

bool arch_irq_is_enabled(unsigned cpu, unsigned intid)
{
    if (intid < 32) {
        uint8_t *rd = cpu < ARCH_MAX_CPUS ? gicr_of[cpu] : 0;
        return rd && (rd32(rd, GICR_ISENABLER0) >> intid) & 1;
    }
    if (intid >= nr_intids) {
        return false;
    }
    return (rd32(gicd, GICD_ISENABLER + (intid / 32) * 4) >> (intid % 32)) & 1;
}

int arch_irq_route(unsigned intid, unsigned cpu)
{
    if (intid < 32 || intid >= nr_intids || cpu >= ARCH_MAX_CPUS || !arch_cpus[cpu]) {
        return -EINVAL;
    }
    wr64(gicd, GICD_IROUTER + 8 * intid, arch_cpus[cpu]->hwid & 0xff00ffffffull);
    route_cpu[intid] = (uint16_t)(cpu + 1);
    return 0;
}

int arch_irq_route_of(unsigned intid)
{
    if (intid < 32 || intid >= nr_intids) {
        return -1;
    }
    uint64_t route = rd64(gicd, GICD_IROUTER + 8 * intid);
    if (route & (1ull << 31)) {
        return -1; /* 1-of-N routing: no single CPU */
    }
    unsigned guess = route_cpu[intid] ? route_cpu[intid] - 1u : 0;
    if (arch_cpus[guess] && (arch_cpus[guess]->hwid & 0xff00ffffffull) == route) {
        return (int)guess; /* where arch_irq_route put it, as the register confirms */
    }
    for (unsigned i = 0; i < ARCH_MAX_CPUS; i++) {
        if (arch_cpus[i] && (arch_cpus[i]->hwid & 0xff00ffffffull) == route) {
            return (int)i;
        }
    }
    return -1;
}

/* IPI n is SGI n: enabled in this CPU's redistributor. */
void arch_ipi_set_enabled(unsigned ipi, bool enabled)
{
    if (ipi < ARCH_NR_IPIS) {
        arch_irq_set_enabled(ipi, enabled);
    }
}

/* isolstat's view of one CPU: SGIs (IPIs) and PPIs enabled in its redistributor, SPIs routed
 * to it and enabled in the distributor. */
void arch_irq_audit(unsigned cpu, struct zt_isol_audit *out)
{
    for (unsigned id = 0; id < ARCH_IRQ_FIRST_DEVICE; id++) {
        if (arch_irq_is_enabled(cpu, id)) {
            if (id < ARCH_NR_IPIS) {
                out->sgis_enabled |= 1u << id;
            } else {
                out->ppis_enabled |= 1u << (id - ARCH_NR_IPIS);
            }
        }
    }
    for (unsigned id = ARCH_IRQ_FIRST_DEVICE; id < ARCH_NR_IRQS && out->nspis < ZT_AUDIT_MAX_SPIS;
         id++) {
        if (arch_irq_route_of(id) == (int)cpu && arch_irq_is_enabled(cpu, id)) {
            out->spis[out->nspis++] = (uint16_t)id;
        }
    }
    out->timer_intid = arch_timer_irq();
}

/* ICC_SGI1R_EL1: Aff3 [55:48], RS [47:44], Aff2 [39:32], INTID [27:24], Aff1 [23:16],
 * TargetList [15:0] = bit (Aff0 % 16) with RS = Aff0 / 16.  IPI n is sent as SGI n. */
/* Per CPU, the ICC_SGI1R_EL1 value that sends SGI 0 to it alone (its affinity and its bit in
 * the target list; never 0), computed at its first IPI: a CPU's MPIDR never changes.  Written
 * by any sender (relaxed: every writer stores the same value). */
static uint64_t sgi_target[ARCH_MAX_CPUS];
PERCPU_ARRAY(sgi_target);

static uint64_t sgi1r_of(uint64_t mpidr)
{
    uint64_t aff0 = mpidr & 0xff;
    return ((mpidr >> 32) & 0xff) << 48 | (aff0 / 16) << 44 | ((mpidr >> 16) & 0xff) << 32 |
           ((mpidr >> 8) & 0xff) << 16 | (1ull << (aff0 % 16));
}

void arch_send_ipi(unsigned cpu, unsigned sgi)
{
    if (cpu >= ARCH_MAX_CPUS || sgi >= ARCH_NR_IPIS) {
        return;
    }
    uint64_t *target = percpu_elem(sgi_target, cpu);
    uint64_t v = __atomic_load_n(target, __ATOMIC_RELAXED);
    if (__builtin_expect(!v, 0)) {
        const struct arch_cpu *c = arch_cpus[cpu];
        if (!c) {
            return; /* never set up */
        }
        v = sgi1r_of(c->hwid);
        __atomic_store_n(target, v, __ATOMIC_RELAXED);
    }
    v |= (uint64_t)sgi << 24;
    dsb(ishst); /* stores before the SGI are visible to its receiver */
    sysreg_write(ICC_SGI1R_EL1, v);
    isb(); /* the SGI is sent now, not at some later context synchronization: a sender that
              goes on to wait for the receiver must not delay its own request */
}
