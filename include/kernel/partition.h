/* SPDX-License-Identifier: MIT */
/*
 * partition.h — which CPUs are housekeeping, which are dataplane, which are offline, and the
 * rules for changing that.
 *
 * The split is decided at boot, before any other CPU runs (their setup depends on their
 * role), from the dataplane= request of the command line, and kept in cpus_housekeeping,
 * cpus_dataplane, cpus_online (cpu.h) and each struct cpu's `dataplane` flag.  CPU 0 is always
 * housekeeping and always online.  Every policy that treats the kinds differently (interrupt
 * routing, work and timer placement, IPIs, isolation) reads those sets.  At run time one CPU
 * at a time changes role through kernel/part/repartition.c (docs/partition.md); this module holds
 * the decisions (which are pure) and the report line.
 */
#ifndef ZT_KERNEL_PARTITION_H
#define ZT_KERNEL_PARTITION_H

#include "kernel/bootargs.h"
#include "kernel/cpumask.h"

#include <stdbool.h>
#include <stddef.h>

/*
 * Decide the partition for a machine with `ncpus` CPUs (1..MAX_CPUS).
 * CPU 0 is always housekeeping: if requested it is removed from the dataplane set (which
 * also covers "every CPU").  CPUs that do not exist are dropped.  Sets *housekeeping and
 * *dataplane (disjoint, union = CPUs 0..ncpus-1) and returns the number of lines written to
 * msg[] (0 when the request was used as given; at most maxmsg; msg may be NULL when maxmsg
 * is 0), each saying what was wrong and what was done instead, e.g. "partition: CPU 0 is
 * always housekeeping; dataplane 1-3 used instead".  ncpus outside 1..MAX_CPUS is clamped.
 */
int partition_decide(const struct bootargs *ba, unsigned ncpus, cpumask_t *housekeeping,
                     cpumask_t *dataplane, char msg[][BOOTARGS_WARN_LEN], int maxmsg);

/* Boot, on the boot CPU before smp_boot: decide the split for `ncpus` CPUs from the
 * request in *ba, set cpus_housekeeping, cpus_dataplane and every cpus[c].dataplane, and print
 * one line for each part of the request that could not be used. */
void partition_setup(const struct bootargs *ba, unsigned ncpus);
/* Boot, once the CPUs are up: drop the CPUs that never came online from both sets and print
 * them (partition_print). */
void partition_boot_print(void);
/* Print "partition: housekeeping LIST, dataplane LIST", preceded by "partition: CPU(s) LIST
 * is/are offline and in neither set" when some are.  `deferred`: through hklog (never on
 * the console from a dataplane CPU); else printk. */
void partition_print(bool deferred);

/* A CPU's role. */
enum partition_role {
    PART_OFFLINE = 0,
    PART_HOUSEKEEPING,
    PART_DATAPLANE,
};

/* The partition as the rules see it. */
struct partition_state {
    unsigned ncpus;
    cpumask_t online;
    cpumask_t housekeeping; /* online CPUs among them count */
    cpumask_t dataplane;
    cpumask_t isolated; /* CPUs an isolated task owns */
};

/*
 * May CPU `cpu` change as zt_partition's `op` and `flags` ask (uapi/zt_syscall.h), given s?
 * Pure.  Returns 0 and updates *s to the partition after the change; 1 if the CPU already
 * is what is asked (s unchanged); or a refusal, with one line in msg (len bytes):
 *   -EINVAL unknown op or flags; -ERANGE no such CPU; -EPERM CPU 0, or the last housekeeping
 *   CPU; -ENODEV moving an offline CPU; -EALREADY onlining an online CPU or offlining an
 *   offline one; -EBUSY an isolated task owns it and ZT_PART_REFUSE_ISOLATED was given.
 * A list is checked by calling it for each CPU in turn on the same s.  (Tasks that could
 * not move off a CPU going offline are the caller's to check: that needs the task list.)
 */
int partition_step(struct partition_state *s, unsigned cpu, unsigned op, unsigned flags, char *msg,
                   size_t len);

#endif
