/* SPDX-License-Identifier: MIT */
/*
 * cpu.h — per-CPU identity and counters.
 *
 * struct cpu is owned by its CPU: only that CPU writes its counters (with relaxed atomic
 * stores), and any CPU may read them at any time (relaxed loads) without disturbing the
 * owner — this is how housekeeping CPUs report on dataplane CPUs.  Modules keep their own
 * per-CPU state in their own arrays indexed by CPU number (sched.c's run queues, timer.c's
 * timer queues); struct cpu holds only what every module shares.
 */
#ifndef ZT_KERNEL_CPU_H
#define ZT_KERNEL_CPU_H

#include <stdbool.h>
#include <stdint.h>

#include "arch.h"
#include "kernel/cpumask.h"

struct zt_cpu_counters;

/* How the CPU entered the kernel (uapi/zt_events.h): EXC_SYNC, EXC_IRQ, EXC_FIQ, EXC_SERROR. */
#define EXC_ENUM_(n, name, str) EXC_##name = n,
enum exc_kind { ZT_EXC_ENTRIES(EXC_ENUM_) EXC_NR_KINDS };
#undef EXC_ENUM_

enum exc_from {
    FROM_KERNEL = 0,
    FROM_USER,
    FROM_NR,
};

struct cpu_stats {
    uint64_t exc[EXC_NR_KINDS][FROM_NR];       /* exceptions taken by kind and source, system calls
                                                  not included (stats_exceptions adds them) */
    uint64_t sync[SYNC_NR_KINDS];              /* synchronous exceptions by generic kind (arch.h);
                                                  [SYNC_SYSCALL] stays 0: stats_syscalls() */
    uint64_t irq_class[IRQ_NR_CLASSES];        /* interrupts by class (spurious: acknowledged with
                                                  nothing pending) */
    uint64_t irq[ARCH_NR_IRQS];                /* timer and device interrupts by number */
    uint64_t ipi_recv[ARCH_NR_IPIS];           /* IPIs taken, by reason */
    uint64_t ipi_sent_by_reason[ARCH_NR_IPIS]; /* sent by this CPU (O(1) in the CPUs) */
    uint64_t ctx_switches;
    uint64_t timer_arms;    /* compare register written */
    uint64_t timer_disarms; /* timer switched off */
};

/* One CPU's time buckets, in struct cpu (the arithmetic and its rules: acct.h, acct.c).  user and
 * sys are adjacent: a user/kernel transition is one load-pair and one store-pair. */
struct acct_user_sys {
    uint64_t user;
    uint64_t sys;
};

struct cpu_acct {
    struct acct_user_sys us; /* copied as one value: one ldp, one stp */
    uint64_t idle;
};

struct cpu {
    struct arch_cpu arch; /* must be first (assembly offsets) */
    unsigned id;
    bool online;    /* set by the CPU itself once it can take work */
    bool dataplane; /* partition.c, repartition.c: its role; changed at run time only by the
                       CPU itself, or while it is offline */
    bool stopping;  /* going offline: its idle loop powers it off (smp.c) */
    /*
     * Why the way between user space and the kernel must take its slow path on this CPU:
     * each byte is one reason, written by the module named (plain or relaxed byte stores),
     * and slow_work reads them all with one load.  While it is 0 a system call does only what
     * the call needs (entry.c); the slow path looks at each reason again itself, so a byte set
     * just after the load is seen at the next kernel exit (a remote writer that cannot wait
     * follows its store with an IPI, as before).
     */
    union {
        struct {
            bool need_resched; /* sched.c: a switch is due (this CPU only) */
            bool timer_dirty;  /* timer.c: an input of this CPU's deadline changed (any CPU) */
            bool timer_stale;  /* timer.c: the compare register is unknown or has passed */
            bool timer_quick;  /* timer.c: this CPU's own last change left its deadline
                                  computed (timer_want); the hardware must get it */
            bool quiesce;      /* dataplane.h: this dataplane CPU has something to give
                                  back before user space runs again (a page in its cache:
                                  page.c; a deferred request: ipi.c, from any CPU) */
            bool isol_owned;   /* isolate.c: an isolated task owns this CPU */
            bool tracing;      /* trace.c: events are recorded on this CPU */
        };
        uint64_t slow_work;
    };
    struct zt_cpu_counters *counters; /* its public counter page (stats.c) */
    struct cpu_acct acct;             /* its time accounting (acct.c) */
    uint64_t online_counter;          /* counter value when it came online */
    uint64_t start_counter;           /* counter value at its first instruction (boot.S) */
    uint64_t kstack_top;              /* this CPU's idle/boot stack */
    struct task *current_task;        /* the task running here (sched.c keeps it) */
    uint64_t timer_want;              /* timer.c: the deadline timer_quick asks for (0: none) */
    struct cpu_stats stats;
} __attribute__((aligned(64)));

extern struct cpu cpus[MAX_CPUS];
extern unsigned ncpus; /* CPUs in the device tree (<= MAX_CPUS) */
extern cpumask_t cpus_online;
extern cpumask_t cpus_housekeeping;
extern cpumask_t cpus_dataplane;

static inline struct cpu *this_cpu(void)
{
    return arch_this_cpu();
}

static inline unsigned this_cpu_id(void)
{
    return arch_this_cpu_id();
}

/* Counter update by the owning CPU; readers elsewhere see whole values (64-bit aligned
 * stores are single-copy atomic).  Only the owner writes, so load+store is race-free. */
#define STAT_INC(field)                                                                            \
    __atomic_store_n(&this_cpu()->stats.field, this_cpu()->stats.field + 1, __ATOMIC_RELAXED)
#define STAT_READ(cpu, field) __atomic_load_n(&cpus[cpu].stats.field, __ATOMIC_RELAXED)

static inline bool cpu_is_dataplane(unsigned cpu)
{
    return cpumask_has(cpus_dataplane, cpu);
}

#endif
