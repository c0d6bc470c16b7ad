/* SPDX-License-Identifier: MIT */
/*
 * cpu.c — the CPU table: every CPU's struct cpu and the CPU sets (contract in
 * include/kernel/cpu.h).  Bringing the CPUs up is smp.c's.
 */
#include "kernel/cpu.h"
#include "uapi/zt_syscall.h"

/* User space passes CPU sets in this layout (sched_setaffinity, zt_spawn, zt_tasks). */
_Static_assert(sizeof(cpumask_t) == sizeof(struct zt_cpuset) && MAX_CPUS == ZT_MAX_CPUS,
               "cpumask_t and struct zt_cpuset must share their layout");
/* Every CPU the arch can report has a place in the kernel's tables. */
_Static_assert(ARCH_MAX_CPUS <= MAX_CPUS, "the arch reports more CPUs than MAX_CPUS");

struct cpu cpus[MAX_CPUS];
PERCPU_ARRAY(cpus);
unsigned ncpus;
cpumask_t cpus_online;
cpumask_t cpus_housekeeping;
cpumask_t cpus_dataplane;
