/* SPDX-License-Identifier: MIT */
/*
 * pid.h — process and thread ids: one number space for both (a process's id is its first
 * thread's), handed out in increasing order and reused once freed, as on Linux: after
 * PID_MAX - 1 the search wraps to the lowest free id above 1 (init keeps 1), so ids are
 * not reused sooner than they must be.  An id is taken by pid_alloc and held until its
 * owner frees it: a thread's id at task_free, a process's id when its parent reaps it (a
 * zombie keeps it).
 *
 * The allocator is pure logic over a bitmap the caller provides (unit-tested on the host);
 * kernel/proc/pid.c also keeps the kernel's one instance, locked by pid_lock (leaf, IRQs masked).
 */
#ifndef ZT_KERNEL_PID_H
#define ZT_KERNEL_PID_H

#include <stdbool.h>
#include <stdint.h>

#define PID_MAX 32768 /* ids are 1 .. PID_MAX - 1, as Linux's default pid_max */

struct pid_map {
    uint64_t used[PID_MAX / 64]; /* bit n: id n taken (bit 0 always: 0 is never an id) */
    unsigned last;               /* the id handed out last */
    unsigned nused;
};

/* Empty map: every id free but 0. */
void pid_map_init(struct pid_map *m);
/* The next free id after the last one handed out (wrapping), or -EAGAIN when all are taken. */
int pid_map_alloc(struct pid_map *m);
/* Give `id` back (it must be taken). */
void pid_map_free(struct pid_map *m, int id);
bool pid_map_is_taken(const struct pid_map *m, int id);

/* The kernel's ids (pid_map_* under pid_lock). */
int pid_alloc(void);
void pid_free(int id);
/* Is `id` taken now (a live thread, or a process not yet reaped)?  A leaf lock: callable under
 * vfs_lock, which is how /proc's lookups know /proc/ID exists. */
bool pid_is_taken(int id);
/* Boot: fn(id) is called after every pid_free, outside pid_lock, in the freeing context (a
 * task's exit on its CPU, a reap): /proc forgets what it cached for the id.  fn may only
 * queue work. */
void pid_set_free_observer(void (*fn)(int id));
/* How many ids are taken (threads, and processes not yet reaped) and the one handed out last
 * (/proc/loadavg). */
void pid_stats(unsigned *taken, int *last);

#endif
