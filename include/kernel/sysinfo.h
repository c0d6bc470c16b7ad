/* SPDX-License-Identifier: MIT */
/*
 * sysinfo.h — zerotick's own system calls (kernel/sys/sysinfo.c): spawn, the read-only views
 * that ps, cpus and isolstat show (tasks, CPUs, memory, isolation audit, trace rings, the
 * irqs-off record), and power-off.  Each takes the caller's frame; syscall.c's dispatch table
 * calls them.
 */
#ifndef ZT_KERNEL_SYSINFO_H
#define ZT_KERNEL_SYSINFO_H

struct trap_frame;

long sys_zt_spawn(struct trap_frame *f);
long sys_zt_tasks(struct trap_frame *f);
long sys_zt_cpus(struct trap_frame *f);
long sys_zt_poweroff(struct trap_frame *f);
long sys_zt_meminfo(struct trap_frame *f);
long sys_zt_isolstat(struct trap_frame *f);
long sys_zt_trace(struct trap_frame *f);
long sys_zt_irqsoff(struct trap_frame *f);

#endif
