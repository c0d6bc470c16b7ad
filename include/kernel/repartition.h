/* SPDX-License-Identifier: MIT */
/*
 * repartition.h — changing CPU roles at run time (zt_partition, /bin/partition).
 *
 * One CPU at a time moves between housekeeping and dataplane, goes offline (PSCI CPU_OFF)
 * or comes back online (PSCI CPU_ON, then the normal secondary start).  A change interrupts
 * the CPU being changed (IPI_PARTITION) and waits for it and for housekeeping CPUs only:
 * every other dataplane CPU is neither interrupted nor waited for.  What a change moves:
 * device interrupts, kernel timers and the sleep timers of tasks that leave, queued and
 * running tasks that may run on housekeeping, the worker thread, the watchdog, the CPU's
 * page cache and deferred requests; an isolated task loses its isolation with a report (or
 * the change is refused with -EBUSY when asked).  Protocol: docs/partition.md.
 * Context: task context, IRQs enabled; changes are serialised (a sleeping mutex).
 */
#ifndef ZT_KERNEL_REPARTITION_H
#define ZT_KERNEL_REPARTITION_H

#include "kernel/cpumask.h"
#include "kernel/partition.h"

struct trap_frame;

/* Boot, before user space: the IPI_PARTITION handler. */
void repartition_init(void);
/* Change every CPU of `m`, in CPU order, as op and flags say (uapi/zt_syscall.h, ZT_PART_*).
 * Every CPU is checked first (partition_step, and for offline that no task would be
 * stranded); nothing changes unless all pass.  0 or -errno; unless ZT_PART_QUIET, a refusal
 * prints its reason and a change prints the partition line.  A failure while applying
 * (-EIO, -ENOMEM) leaves the CPUs before it changed. */
int repartition_request(cpumask_t m, unsigned op, unsigned flags);
/* Change one CPU to `to` (checked already, mutex held): the protocol itself.  0 or -errno. */
int repartition_apply(unsigned cpu, enum partition_role to);
/* zt_partition(cpulist, len, op, flags). */
long sys_zt_partition(struct trap_frame *f);

#endif
