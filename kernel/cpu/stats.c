/* SPDX-License-Identifier: MIT */
/*
 * stats.c — per-CPU event counters (contract in include/kernel/stats.h).
 *
 * The public counters are ZT_COUNTERS_STRIDE bytes per CPU, in page-aligned .bss: exec.c
 * maps their pages read-only at ZT_COUNTERS_VA in every process (32 CPUs a page: a process
 * maps 16 pages on 512 CPUs, not 512, and a CPU costs 128 bytes, not a page).  Each CPU's
 * block is two cache lines of its own, written only by that CPU.
 * Updates are relaxed stores by the owning CPU; 64-bit aligned stores are single-copy
 * atomic, so readers anywhere see whole values.
 *
 * A system call is counted once, in its CPU's public `syscalls` (stats_syscall, inline): no
 * other counter, public or not, includes system calls, and every reader of a total that does
 * (stats_exceptions, zt_counters_sync) adds that one counter.  So the system-call path pays
 * one increment and the totals stay exact.
 */
#include "kernel/stats.h"
#include "kernel/panic.h"
#include "kernel/trace.h"
#include "kernel/work.h"

struct counter_page {
    struct zt_cpu_counters c;
} __attribute__((aligned(ZT_COUNTERS_STRIDE)));

_Static_assert(sizeof(struct counter_page) == ZT_COUNTERS_STRIDE, "the uapi's stride");
_Static_assert(PAGE_SIZE % ZT_COUNTERS_STRIDE == 0, "no CPU's counters cross a page");

static struct counter_page pages[MAX_CPUS] __attribute__((aligned(PAGE_SIZE)));
PERCPU_ARRAY(pages);

#define BUMP(field) __atomic_store_n(&(field), (field) + 1, __ATOMIC_RELAXED)
/* STAT_INC with this CPU's struct cpu read once (each this_cpu() is a system-register read
 * the compiler may not merge). */
#define CPU_INC(c, field) BUMP((c)->stats.field)

struct zt_cpu_counters *stats_public(unsigned cpu)
{
    ASSERT(cpu < MAX_CPUS);
    return &pages[cpu].c;
}

void stats_init_cpu(unsigned cpu)
{
    cpus[cpu].counters = &pages[cpu].c;
}

uint64_t stats_syscalls(unsigned cpu)
{
    return __atomic_load_n(&pages[cpu].c.syscalls, __ATOMIC_RELAXED);
}

uint64_t stats_exceptions(unsigned cpu, enum exc_kind kind)
{
    uint64_t n = STAT_READ(cpu, exc[kind][FROM_USER]) + STAT_READ(cpu, exc[kind][FROM_KERNEL]);
    return kind == EXC_SYNC ? n + stats_syscalls(cpu) : n;
}

void stats_exception(enum exc_kind kind, enum exc_from from, enum sync_kind sync)
{
    struct cpu *c = this_cpu();
    struct zt_cpu_counters *pub = &pages[c->id].c; /* (an early fault: before stats_init_cpu) */
    CPU_INC(c, exc[kind][from]);
    trace_event(ZT_TR_EXC_ENTRY, (uint64_t)kind | (uint64_t)from << 8, kind == EXC_SYNC ? sync : 0);
    switch (kind) {
    case EXC_SYNC:
        CPU_INC(c, sync[sync < SYNC_NR_KINDS ? sync : SYNC_OTHER]);
        BUMP(pub->sync_other);
        if (from == FROM_USER) {
            BUMP(pub->faults);
        }
        break;
    case EXC_IRQ:
        BUMP(pub->exc_irq);
        break;
    case EXC_FIQ:
        BUMP(pub->exc_fiq);
        break;
    default:
        BUMP(pub->exc_serror);
        break;
    }
    if (from == FROM_USER) {
        BUMP(pub->user_other);
    }
}

void stats_irq_exception(enum exc_from from)
{
    struct cpu *c = this_cpu();
    struct zt_cpu_counters *pub = c->counters; /* one load: &pages[c->id].c */
    ASSERT(pub == &pages[c->id].c);
    CPU_INC(c, exc[EXC_IRQ][from]);
    BUMP(pub->exc_irq);
    if (from == FROM_USER) {
        BUMP(pub->user_other);
    }
    trace_event(ZT_TR_EXC_ENTRY, (uint64_t)EXC_IRQ | (uint64_t)from << 8, 0);
}

void stats_irq(enum irq_class cls, unsigned n)
{
    struct cpu *c = this_cpu();
    struct zt_cpu_counters *pub = c->counters; /* one load: &pages[c->id].c */
    ASSERT(pub == &pages[c->id].c && cls < IRQ_NR_CLASSES);
    CPU_INC(c, irq_class[cls]);
    if (cls == IRQ_CLASS_IPI) {
        BUMP(pub->irq_ipi); /* ipi_receive counts it by reason */
    } else if (cls == IRQ_CLASS_TIMER) {
        BUMP(pub->irq_timer);
    } else {
        BUMP(pub->irq_device);
    }
    if (cls != IRQ_CLASS_IPI && n < ARCH_NR_IRQS) {
        CPU_INC(c, irq[n]);
    }
    trace_event(ZT_TR_IRQ, n, cls); /* last: a tail call, no stack frame otherwise */
}

void stats_irq_spurious(unsigned n)
{
    STAT_INC(irq_class[IRQ_CLASS_SPURIOUS]);
    trace_event(ZT_TR_IRQ, n, IRQ_CLASS_SPURIOUS); /* the public counters keep acknowledged
                                                      ones only */
}

void stats_ctx_switch(void)
{
    struct cpu *c = this_cpu();
    ASSERT(c->counters == &pages[c->id].c);
    CPU_INC(c, ctx_switches);
    BUMP(c->counters->ctx_switches);
}

void stats_exception_exit(enum exc_kind kind)
{
    trace_event(ZT_TR_EXC_EXIT, kind, 0);
}

/* ---- the once-a-second sampler, on housekeeping ----
 * Rates for `cpus` (exceptions per second, per CPU) are folded here, by reading every
 * CPU's counters from a housekeeping CPU: no CPU is ever asked to fold its own statistics
 * (Linux's vmstat work does just that, on every CPU).  A kernel-internal timer, so it lives
 * on housekeeping: work_queue_delayed arms it there. */
static struct work sampler;
static uint64_t last_total[MAX_CPUS];
PERCPU_ARRAY(last_total);
static uint64_t rate[MAX_CPUS];
PERCPU_ARRAY(rate);

static uint64_t exceptions_of(unsigned cpu)
{
    return zt_counters_exceptions(&pages[cpu].c); /* volatile loads, each one whole */
}

static void sample(struct work *w)
{
    for (unsigned cpu = 0; cpu < ncpus; cpu++) {
        uint64_t total = exceptions_of(cpu);
        __atomic_store_n(&rate[cpu], total - last_total[cpu], __ATOMIC_RELAXED);
        last_total[cpu] = total;
    }
    work_queue_delayed(&sampler, arch_counter_freq());
}

void stats_start_sampler(void)
{
    work_init(&sampler, "stats sampler", sample);
    work_queue_delayed(&sampler, arch_counter_freq());
}

uint64_t stats_rate(unsigned cpu)
{
    return cpu < MAX_CPUS ? __atomic_load_n(&rate[cpu], __ATOMIC_RELAXED) : 0;
}

void stats_timer_fired(uint64_t deadline, uint64_t now)
{
    struct zt_cpu_counters *pub = &pages[this_cpu_id()].c;
    __atomic_store_n(&pub->timer_irq_deadline, deadline, __ATOMIC_RELAXED);
    __atomic_store_n(&pub->timer_irq_at, now, __ATOMIC_RELAXED);
}
