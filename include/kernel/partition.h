/*
 * partition.h — which CPUs are housekeeping and which are dataplane.
 *
 * The split is decided once at boot, before any other CPU runs (their setup depends on their
 * role), from the dataplane= request of the command line, and then kept in cpus_housekeeping,
 * cpus_dataplane (cpu.h) and each struct cpu's `dataplane` flag.  CPU 0 is always
 * housekeeping.  Every policy that treats the two kinds differently (interrupt routing, work
 * and timer placement, IPIs, isolation) reads those sets; this module only decides them.
 */
#ifndef ZT_KERNEL_PARTITION_H
#define ZT_KERNEL_PARTITION_H

#include "kernel/bootargs.h"
#include "kernel/cpumask.h"

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
 * "partition: housekeeping LIST, dataplane LIST" (and which CPUs are offline). */
void partition_print(void);

#endif
