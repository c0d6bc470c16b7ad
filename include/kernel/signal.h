/* SPDX-License-Identifier: MIT */
/*
 * signal.h — signals: kill, faults turned into signals, default actions and user handlers.
 *
 * A signal is recorded as pending (on the process, or on one thread for faults and
 * tgkill) under proc_lock; the target is then kicked: woken from an interruptible sleep
 * (-EINTR) or, if it runs on another CPU, sent IPI_SIGNAL so it enters the kernel.  Pending
 * signals are acted on only in signal_deliver(), on the way back to user space: ignore,
 * terminate the process (default action), or run the handler installed with rt_sigaction
 * (a frame with the interrupted registers is pushed on the user stack; rt_sigreturn pops it).
 */
#ifndef ZT_KERNEL_SIGNAL_H
#define ZT_KERNEL_SIGNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "uapi/zt_syscall.h"

struct task;
struct process;
struct trap_frame;

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
/* Send sig to process p / to thread t (proc_lock held).  0 or -EINVAL. */
int signal_send_proc_locked(struct process *p, int sig);
int signal_send_task_locked(struct task *t, int sig);
/* Make t notice pending work: interrupt its sleep, or IPI its CPU if it runs elsewhere. */
void signal_kick(struct task *t);
/* On the way to user space: act on pending signals.  May not return (process death). */
void signal_deliver(struct trap_frame *f);
/* Send sig to every process of group pgid (proc_lock held); sig 0 only checks.  0 or
 * -ESRCH when the group is empty. */
int signal_send_pgrp_locked(int pgid, int sig);
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
