/* SPDX-License-Identifier: MIT */
/*
 * signal.h — signals: kill, faults turned into signals, default actions and user handlers.
 *
 * A signal is recorded as pending (on the process, or on one thread for faults and
 * tgkill) under proc_lock, with what its siginfo says (struct sig_info, task.h: who sent it
 * and how); the target is then kicked: woken from an interruptible sleep (-EINTR) or, if it
 * runs on another CPU, sent IPI_SIGNAL so it enters the kernel.  Pending signals are acted on
 * only in signal_deliver(), on the way back to user space: ignore, terminate the process
 * (default action), or run the handler installed with rt_sigaction (a frame with the
 * interrupted registers and Linux's siginfo is pushed on the user stack; rt_sigreturn pops
 * it).  As on Linux, a signal sent while the same one is pending is merged into it, and the
 * first one's siginfo is the one delivered (real-time signals are not queued here).
 */
#ifndef ZT_KERNEL_SIGNAL_H
#define ZT_KERNEL_SIGNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "uapi/zt_syscall.h"

struct task;
struct process;
struct trap_frame;
struct sig_info;

/* si_code values (Linux's) */
#define SI_USER       0    /* kill */
#define SI_KERNEL     0x80 /* the kernel: the terminal, isolation */
#define SI_QUEUE      (-1) /* sigqueue */
#define SI_TKILL      (-6) /* tkill, tgkill (raise) */
#define CLD_EXITED    1    /* SIGCHLD: si_status is the exit code */
#define CLD_KILLED    2    /* SIGCHLD: si_status is the signal */
#define SEGV_MAPERR   1    /* SIGSEGV: no mapping at si_addr */
#define SEGV_ACCERR   2    /* SIGSEGV: a mapping that does not allow the access */
#define SIGINFO_BYTES 128

#define SA_SIGINFO   0x00000004
#define SA_RESTORER  0x04000000
#define SA_ONSTACK   0x08000000
#define SA_RESTART   0x10000000
#define SA_NODEFER   0x40000000
#define SA_RESETHAND 0x80000000
#define SIG_DFL      0
#define SIG_IGN      1

/* Is a signal pending that would interrupt a sleep (or the process exiting)? */
bool signal_pending(const struct task *t);
/* Will t die at its next return to user space (SIGKILL, exit_group)?  Long kernel loops
 * look at this and stop early.  No lock needed. */
bool signal_fatal_pending(const struct task *t);
/* Is a signal pending for t that will do something (run a handler or end the process),
 * not one that will be ignored?  Long interruptible calls stop early for these. */
bool signal_interrupts(const struct task *t);
/* The siginfo of a signal the calling task sends with kill (SI_USER) or tkill/tgkill
 * (SI_TKILL): si_pid is its process's id. */
struct sig_info signal_info_from_caller(int code);
/* The siginfo of a signal the kernel sends on no process's behalf (SI_KERNEL). */
extern const struct sig_info signal_info_kernel;
/* Send sig to process p / to thread t (proc_lock held) with `info` (kept while the signal
 * is pending; a second send of a pending signal keeps the first's).  0 or -EINVAL. */
int signal_send_proc_locked(struct process *p, int sig, const struct sig_info *info);
int signal_send_task_locked(struct task *t, int sig, const struct sig_info *info);
/* Take the signal signal_deliver would act on next off t's pending sets (proc_lock held):
 * its number, and its siginfo in *info; 0 if none is deliverable. */
int signal_dequeue_locked(struct task *t, struct sig_info *info);
/* Linux's siginfo (SIGINFO_BYTES: si_signo, si_errno, si_code, then the union laid out as
 * si_code says: si_pid and si_uid with si_value or si_status, or si_addr for a fault). */
void signal_siginfo(int sig, const struct sig_info *info, int32_t out[SIGINFO_BYTES / 4]);
/* The part of a siginfo from user space (rt_sigqueueinfo) that zerotick keeps, read with the
 * same layout rules: si_code, si_pid and si_value, or si_addr for a fault's code. */
struct sig_info signal_info_from_siginfo(int sig, const int32_t in[SIGINFO_BYTES / 4]);
/* Has t something to act on now: its process ending, another thread's execve ending it, or
 * a signal it does not block that will run a handler or end the process?  What ends a wait
 * and what signal_kick acts on (Linux wakes a thread only for a signal it will take: a
 * blocked one waits until it is unblocked, an ignored one is dropped). */
bool signal_wakes(const struct task *t);
/* Make t notice pending work if signal_wakes(t): interrupt its sleep, or IPI its CPU if it
 * runs elsewhere.  Otherwise nothing: the signal waits in its pending set. */
void signal_kick(struct task *t);
/* On the way to user space: act on pending signals.  May not return (process death). */
void signal_deliver(struct trap_frame *f);
/* Send sig to every process of group pgid (proc_lock held); sig 0 only checks.  0 or
 * -ESRCH when the group is empty. */
int signal_send_pgrp_locked(int pgid, int sig, const struct sig_info *info);
/* The last step before user space: restart a call interrupted by a signal no handler
 * took, and restore a mask rt_sigsuspend/ppoll/pselect6 put in force. */
void signal_exit_to_user(struct trap_frame *f);
/* Block `mask` until the way back to user space (or the handler's sigreturn) restores the
 * mask in force now. */
void signal_set_temp_mask(uint64_t mask);
long sys_rt_sigsuspend(uint64_t umask, uint64_t sigsetsize);
long sys_sigaltstack(uint64_t uss, uint64_t uold);
long sys_rt_sigpending(uint64_t uset, uint64_t sigsetsize);
/* rt_sigaction / rt_sigprocmask / rt_sigreturn */
long sys_rt_sigaction(int sig, uint64_t act, uint64_t oldact, uint64_t sigsetsize);
long sys_rt_sigprocmask(int how, uint64_t set, uint64_t oldset, uint64_t sigsetsize);
long sys_rt_sigreturn(struct trap_frame *f);
/* A fault the current task took in user space: deliver `sig`; when the default action
 * kills, print "pid P (NAME) killed: WHAT at ADDR (pc PC)" first. */
void signal_fault(int sig, const char *what, uint64_t addr, uint64_t pc);
const char *signal_name(int sig);

#endif
