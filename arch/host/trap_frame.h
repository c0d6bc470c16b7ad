/* SPDX-License-Identifier: MIT */
/*
 * trap_frame.h (host fake) — the fake arch's own exception frame and system-call convention.
 *
 * Deliberately unlike any real CPU's: named fields, no register file, the call number and
 * the result apart from the arguments.  kernel/ reaches a frame only through the
 * arch_frame_* accessors (the contract every arch provides, docs/porting.md), so a kernel
 * file that names an aarch64 register (x[8], sp_el0, elr) does not compile for the host
 * tests.  Unit tests build frames with fake_frame_syscall() (fake.h).
 */
#ifndef ZT_TRAP_FRAME_H
#define ZT_TRAP_FRAME_H

#include <stdint.h>

struct trap_frame {
    uint64_t pc;     /* where user space resumes */
    uint64_t sp;     /* its stack pointer */
    uint64_t sysno;  /* system-call number */
    uint64_t arg[6]; /* system-call arguments */
    uint64_t result; /* what the call returns */
    uint64_t tls;    /* unused by the fake: a field no real layout shares */
};

static inline uint64_t arch_frame_sysno(const struct trap_frame *f)
{
    return f->sysno;
}

static inline uint64_t arch_frame_arg(const struct trap_frame *f, unsigned i)
{
    return i < 6 ? f->arg[i] : 0;
}

static inline void arch_frame_set_return(struct trap_frame *f, uint64_t v)
{
    f->result = v;
}

static inline uint64_t arch_frame_pc(const struct trap_frame *f)
{
    return f->pc;
}

static inline uint64_t arch_frame_sp(const struct trap_frame *f)
{
    return f->sp;
}

static inline void arch_frame_set_sp(struct trap_frame *f, uint64_t sp)
{
    f->sp = sp;
}

/* Run the system call that returned through f again, with `arg0` as its first argument:
 * the fake's "instruction" is 4 bytes too. */
static inline void arch_frame_restart_syscall(struct trap_frame *f, uint64_t arg0)
{
    f->arg[0] = arg0;
    f->pc -= 4;
}

#endif
