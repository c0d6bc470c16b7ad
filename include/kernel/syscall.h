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

/* Called with IRQs masked; classifies the call for task isolation first, then runs it with
 * IRQs enabled and returns with them masked.  svc_imm: the SVC instruction's immediate
 * (ignored for dispatch, as on Linux; the window markers 0x5a5a/0xa5a5 are traced). */
void syscall_dispatch(struct trap_frame *f, unsigned svc_imm);

#endif
