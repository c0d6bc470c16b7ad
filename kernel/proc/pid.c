/* SPDX-License-Identifier: MIT */
/*
 * pid.c — process and thread ids (contract in include/kernel/pid.h).
 */
#include "kernel/pid.h"
#include "kernel/lib.h"
#include "kernel/panic.h"
#include "kernel/spinlock.h"
#include "uapi/zt_errno.h"

void pid_map_init(struct pid_map *m)
{
    memset(m, 0, sizeof(*m));
    m->used[0] = 1; /* 0 is never an id */
}

bool pid_map_is_taken(const struct pid_map *m, int id)
{
    return id > 0 && id < PID_MAX && (m->used[id / 64] >> (id % 64) & 1);
}

/* The first free id in [from, PID_MAX), or 0. */
static unsigned first_free_from(const struct pid_map *m, unsigned from)
{
    for (unsigned w = from / 64; w < PID_MAX / 64; w++) {
        uint64_t free = ~m->used[w];
        if (w == from / 64) {
            free &= ~0ull << (from % 64);
        }
        if (free) {
            return w * 64 + (unsigned)__builtin_ctzll(free);
        }
    }
    return 0;
}

int pid_map_alloc(struct pid_map *m)
{
    ASSERT(m->used[0] & 1); /* pid_map_init ran: 0 is never an id */
    unsigned id = first_free_from(m, m->last + 1 < PID_MAX ? m->last + 1 : 2);
    if (!id) {
        id = first_free_from(m, 2); /* wrap: 1 belongs to init for good */
    }
    if (!id) {
        return -EAGAIN;
    }
    m->used[id / 64] |= 1ull << (id % 64);
    m->last = id;
    m->nused++;
    return (int)id;
}

void pid_map_free(struct pid_map *m, int id)
{
    ASSERT(pid_map_is_taken(m, id) && m->nused > 0);
    m->used[id / 64] &= ~(1ull << (id % 64));
    m->nused--;
}

static spinlock_t pid_lock = SPINLOCK_INIT_RANK(LOCK_LEAF);
static struct pid_map pids = {.used = {1}};
static void (*free_observer)(int id);

void pid_set_free_observer(void (*fn)(int id))
{
    free_observer = fn;
}

int pid_alloc(void)
{
    unsigned long flags = spin_lock_irqsave(&pid_lock);
    int id = pid_map_alloc(&pids);
    spin_unlock_irqrestore(&pid_lock, flags);
    return id;
}

void pid_free(int id)
{
    unsigned long flags = spin_lock_irqsave(&pid_lock);
    pid_map_free(&pids, id);
    spin_unlock_irqrestore(&pid_lock, flags);
    if (free_observer) {
        free_observer(id);
    }
}

bool pid_is_taken(int id)
{
    unsigned long flags = spin_lock_irqsave(&pid_lock);
    bool taken = pid_map_is_taken(&pids, id);
    spin_unlock_irqrestore(&pid_lock, flags);
    return taken;
}

void pid_stats(unsigned *taken, int *last)
{
    unsigned long flags = spin_lock_irqsave(&pid_lock);
    *taken = pids.nused;
    *last = (int)pids.last;
    spin_unlock_irqrestore(&pid_lock, flags);
}
