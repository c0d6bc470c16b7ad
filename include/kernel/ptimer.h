/* SPDX-License-Identifier: MIT */
/*
 * ptimer.h — timers that signal a process (kernel/proc/ptimer.c): setitimer/getitimer
 * (ITIMER_REAL, alarm) and the POSIX timers timer_create .. timer_delete.
 */
#ifndef ZT_KERNEL_PTIMER_H
#define ZT_KERNEL_PTIMER_H

#define PTIMER_MAX 32 /* POSIX timers a process may have */

struct process;
struct trap_frame;

/* execve: the POSIX timers go (ITIMER_REAL stays).  Task context, no lock held. */
void ptimer_exec(struct process *p);
/* The process is being torn down: every timer goes.  No lock held. */
void ptimer_exit(struct process *p);

long sys_getitimer(struct trap_frame *f);
long sys_setitimer(struct trap_frame *f);
long sys_timer_create(struct trap_frame *f);
long sys_timer_settime(struct trap_frame *f);
long sys_timer_gettime(struct trap_frame *f);
long sys_timer_getoverrun(struct trap_frame *f);
long sys_timer_delete(struct trap_frame *f);

#endif
