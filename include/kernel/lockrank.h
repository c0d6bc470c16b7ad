/* SPDX-License-Identifier: MIT */
/*
 * lockrank.h — THE lock order of the kernel, in one place.
 *
 * Every lock that nests with another has a rank.  A CPU may take a ranked lock only while
 * every ranked lock it already holds has a lower rank; two locks of the same rank (two
 * CPUs' timer queues) only in increasing address order.  An interrupt handler's locks count
 * against what the code it interrupted holds, so a lock held with IRQs enabled must rank
 * below everything an IRQ handler takes.  The checked kernel (what `make test` boots;
 * `make run DEBUG=1`) enforces this on every acquisition (kernel/lib/lockcheck.c) and panics,
 * naming both locks, instead of deadlocking some day; the release kernel does not look.
 * Rank 0 means "never nested": such a lock is not tracked.
 *
 * Taken with interrupts enabled (no interrupt handler takes them; they rank below everything
 * one does, so the work done under them, which user input sizes, never masks interrupts):
 *   an open file         its position (file->lock: held across a positioned read or write)
 *   -> the file tree     vfs_lock (tmpfs data is copied to and from user memory under it,
 *                        a page at a time)
 *   -> an address space's changes  vm->map_lock (mmap, munmap, brk, mprotect, fork's copy:
 *                        held across the change, which takes vm->lock a step at a time)
 * Taken with interrupts masked (each holds for bounded work):
 *   -> proc_lock         process tree, thread lists, signal state
 *   -> a wait queue      futex buckets, a process's child_exit, the worker's queue, a task's
 *                        sleep queue, a pipe, the terminal's input, the poll queue
 *   -> an address space  vm->lock (futex_wait reads the user word under its bucket lock;
 *                        signal delivery writes the frame under proc_lock)
 *   -> a run queue       (wakeups, from under wait-queue locks)
 *   -> a timer queue     (two at once only in CPU order: timer_move)
 *   -> leaf bookkeeping  kernel stacks, ids, ASIDs, the isolation-free report ring, traces,
 *                        the GIC's distributor, descriptor tables, the random generator
 *   -> the allocators    an object size class, the kernel page tables (both allocate pages)
 *   -> the page allocator
 *   -> the console
 */
#ifndef ZT_KERNEL_LOCKRANK_H
#define ZT_KERNEL_LOCKRANK_H

enum lock_rank {
    LOCK_UNRANKED = 0,
    LOCK_FILE = 3,   /* interrupts enabled */
    LOCK_VFS = 6,    /* interrupts enabled */
    LOCK_VM_MAP = 8, /* interrupts enabled */
    LOCK_PROC = 10,
    LOCK_WAITQ = 20,
    LOCK_VM = 30,
    LOCK_RQ = 40,
    LOCK_TIMERQ = 50,
    LOCK_LEAF = 60,
    LOCK_ALLOC = 70,
    LOCK_PAGE = 80,
    LOCK_CONSOLE = 90,
};

#endif
