/*
 * syscall.h — system-call dispatch (kernel/syscall.c): the entry point the arch trap code
 * calls for a system call from user space, and the names of every call.
 */
#ifndef ZT_KERNEL_SYSCALL_H
#define ZT_KERNEL_SYSCALL_H

struct trap_frame;

#include <stdint.h>

#define ZT_RELEASE "0.1"

/* The name of system call `nr` ("write", "zt_trace"), or "unknown": from the dispatch
 * table itself, so a new call is never missing from reports. */
const char *syscall_name(uint64_t nr);

typedef long (*syscall_fn)(struct trap_frame *f);

/* The calls the system-call fast path may run with a partial frame, by number (NULL: the full
 * path; numbers from SYSCALL_FAST_NR on always take it).  syscall.c says which and why. */
#define SYSCALL_FAST_NR 512
extern const syscall_fn syscall_fast_table[SYSCALL_FAST_NR];

/* Called with IRQs masked; classifies the call for task isolation first, then runs it with
 * IRQs enabled and returns with them masked.  svc_imm: the SVC instruction's immediate
 * (ignored for dispatch, as on Linux; the window markers 0x5a5a/0xa5a5 are traced). */
/* Trace the call, apply isolation's strict mode, then syscall_run. */
void syscall_dispatch(struct trap_frame *f, unsigned svc_imm);
/* Run the call the frame names, IRQs enabled while it runs; its result in the frame. */
void syscall_run(struct trap_frame *f);

#endif
