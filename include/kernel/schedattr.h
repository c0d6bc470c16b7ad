/* SPDX-License-Identifier: MIT */
/*
 * schedattr.h — Linux's scheduling policy calls (kernel/proc/schedattr.c says what the
 * policies mean here: recorded and reported, one scheduling class).
 */
#ifndef ZT_KERNEL_SCHEDATTR_H
#define ZT_KERNEL_SCHEDATTR_H

struct trap_frame;

long sys_sched_setscheduler(struct trap_frame *f);
long sys_sched_getscheduler(struct trap_frame *f);
long sys_sched_setparam(struct trap_frame *f);
long sys_sched_getparam(struct trap_frame *f);
long sys_sched_get_priority_max(struct trap_frame *f);
long sys_sched_get_priority_min(struct trap_frame *f);
long sys_sched_rr_get_interval(struct trap_frame *f);

#endif
