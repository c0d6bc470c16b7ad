/*
 * syscall.h — system calls implemented outside syscall.c (sysinfo.c: spawn, the
 * introspection calls and power-off).
 */
#ifndef ZT_KERNEL_SYSCALL_H
#define ZT_KERNEL_SYSCALL_H

struct trap_frame;

#define ZT_RELEASE "0.1"

long sys_zt_spawn(struct trap_frame *f);
long sys_zt_tasks(struct trap_frame *f);
long sys_zt_cpus(struct trap_frame *f);
long sys_zt_poweroff(struct trap_frame *f);
long sys_zt_meminfo(struct trap_frame *f);
long sys_zt_isolstat(struct trap_frame *f);
long sys_zt_trace(struct trap_frame *f);

#endif
