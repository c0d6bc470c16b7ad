/* SPDX-License-Identifier: MIT */
/*
 * kcov.h — coverage of the kernel's code by system calls, in the coverage kernel
 * (kernel/sys/kcov.c; ABI: zt_kcov in include/uapi/zt_debug.h).  Linux's kcov is the model.
 *
 * `make cover` builds build/cover/kernel.elf: the checked kernel with every kernel/ file but
 * kcov.c compiled with -fsanitize-coverage=trace-pc, so the compiler calls
 * __sanitizer_cov_trace_pc at the start of every basic block.  kcov.c records each block
 * reached in the machine's bitmap of blocks reached anywhere and, while a task that asked
 * for it (ZT_KCOV_ENABLE) is in a system call and not in an interrupt, in that task's own
 * bitmap.  The entry path says when a task is in a call (kcov_call_begins, kcov_call_ends)
 * and the arch when an interrupt runs on top of one (kcov_irq_enter, kcov_irq_exit).
 *
 * Other builds compile none of it: these functions are empty and zt_kcov answers -ENODEV.
 */
#ifndef ZT_KERNEL_KCOV_H
#define ZT_KERNEL_KCOV_H

#include <stdint.h>

#include "kernel/cpu.h"
#include "kernel/task.h"

struct trap_frame;

long sys_zt_kcov(struct trap_frame *f);

#ifdef ZT_COVER
/* Start recording (boot CPU, once its struct cpu is in place). */
void kcov_init(void);
/* Per CPU: interrupts being handled on top of whatever ran (their blocks are not the
 * interrupted call's). */
extern uint32_t kcov_irq_depth[MAX_CPUS];

static inline void kcov_call_begins(void)
{
    this_cpu()->current_task->kcov_in_call = true;
}
static inline void kcov_call_ends(void)
{
    this_cpu()->current_task->kcov_in_call = false;
}
static inline void kcov_irq_enter(void)
{
    kcov_irq_depth[this_cpu_id()]++;
}
static inline void kcov_irq_exit(void)
{
    kcov_irq_depth[this_cpu_id()]--;
}
#else
static inline void kcov_init(void)
{
}
static inline void kcov_call_begins(void)
{
}
static inline void kcov_call_ends(void)
{
}
static inline void kcov_irq_enter(void)
{
}
static inline void kcov_irq_exit(void)
{
}
#endif

#endif
