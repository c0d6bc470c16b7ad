/* SPDX-License-Identifier: MIT */
/*
 * sysdebug.h — syscall_debug=1: report unimplemented system calls by their Linux names, once
 * per process, printed by a housekeeping CPU (hklog; kernel/sys/sysdebug.c).
 */
#ifndef ZT_KERNEL_SYSDEBUG_H
#define ZT_KERNEL_SYSDEBUG_H

#include <stdbool.h>
#include <stdint.h>

/* Boot: `on` from the command line (syscall_debug=1). */
void sysdebug_init(bool on);
/* The current task called `nr`, which has no implementation (syscall context). */
void sysdebug_unknown(uint64_t nr);
/* "rseq", or "not a Linux system call". */
const char *linux_syscall_name(uint64_t nr);

#endif
