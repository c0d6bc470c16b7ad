/* SPDX-License-Identifier: MIT */
/*
 * poll.h — waiting for any of several files (ppoll, pselect6).
 *
 * One global wait queue and a generation counter: every change that can make a file
 * readable or writable (pipe data or space, a pipe end closed, terminal input) calls
 * poll_notify(), which bumps the generation and wakes every poller; a poller reads the
 * generation, checks its files, and sleeps only if the generation has not moved since.
 * Simple and lost-wakeup free; the cost is that every poller rechecks on every change,
 * which is fine for a console and a few pipes.
 */
#ifndef ZT_KERNEL_POLL_H
#define ZT_KERNEL_POLL_H

#include <stdint.h>

struct trap_frame;

/* Something some poller may wait for has happened.  Any context but under a wait queue
 * lock. */
void poll_notify(void);
/* Boot. */
void poll_init(void);

long sys_ppoll(struct trap_frame *f);
long sys_pselect6(struct trap_frame *f);

#endif
