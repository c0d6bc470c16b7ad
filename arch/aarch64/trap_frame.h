/* SPDX-License-Identifier: MIT */
/*
 * trap_frame.h — the register frame saved on every exception, and the Linux/aarch64 system
 * call convention read from it.  Plain C: the host fake arch (arch/host) uses this same
 * frame, so the unit tests drive syscall code with the layout vectors.S really saves.
 */
#ifndef ZT_TRAP_FRAME_H
#define ZT_TRAP_FRAME_H

#include <stdint.h>

struct trap_frame {
    uint64_t x[31];
    uint64_t sp_el0;
    uint64_t elr;
    uint64_t spsr;
};

/* Syscall registers: number in x8, arguments in x0-x5, result in x0. */
static inline uint64_t arch_frame_sysno(const struct trap_frame *f)
{
    return f->x[8];
}

static inline uint64_t arch_frame_arg(const struct trap_frame *f, unsigned i)
{
    return f->x[i];
}

static inline void arch_frame_set_return(struct trap_frame *f, uint64_t v)
{
    f->x[0] = v;
}

static inline uint64_t arch_frame_pc(const struct trap_frame *f)
{
    return f->elr;
}

static inline uint64_t arch_frame_sp(const struct trap_frame *f)
{
    return f->sp_el0;
}

static inline void arch_frame_set_sp(struct trap_frame *f, uint64_t sp)
{
    f->sp_el0 = sp;
}

/* Run the system call that returned through f again, with `arg0` as its first argument
 * (restarting after a signal): back to the SVC instruction. */
static inline void arch_frame_restart_syscall(struct trap_frame *f, uint64_t arg0)
{
    f->x[0] = arg0;
    f->elr -= 4;
}

#endif
