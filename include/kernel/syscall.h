/*
 * syscall.h — system calls implemented outside syscall.c (sysinfo.c: spawn, the
 * introspection calls and power-off), and the names of them all.
 */
#ifndef ZT_KERNEL_SYSCALL_H
#define ZT_KERNEL_SYSCALL_H

struct trap_frame;

#include <stdint.h>

#define ZT_RELEASE "0.1"

/* The name of system call `nr` ("write", "zt_trace"), or "unknown": from the dispatch
 * table itself, so a new call is never missing from reports. */
const char *syscall_name(uint64_t nr);

long sys_zt_spawn(struct trap_frame *f);
long sys_zt_tasks(struct trap_frame *f);
long sys_zt_cpus(struct trap_frame *f);
long sys_zt_poweroff(struct trap_frame *f);
long sys_zt_meminfo(struct trap_frame *f);
long sys_zt_isolstat(struct trap_frame *f);
long sys_zt_trace(struct trap_frame *f);

#endif
