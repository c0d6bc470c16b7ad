/* SPDX-License-Identifier: MIT */
/*
 * random.c — the kernel's byte generator (contract in include/kernel/random.h).
 *
 * splitmix64 (Steele, Lea, Flood: "Fast splittable pseudorandom number generators", 2014):
 * the state advances by a fixed odd constant and each output is the state run through a
 * bijective mixer.  The counter is folded into the state on every call, so two calls at
 * different times differ even across boots with the same history.
 */
#include "kernel/random.h"
#include "arch.h"
#include "kernel/lib.h"
#include "kernel/spinlock.h"

static spinlock_t random_lock = SPINLOCK_INIT_RANK(LOCK_LEAF);
static uint64_t state;

static uint64_t next_locked(void)
{
    ASSERT_HELD(&random_lock);
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void random_bytes(void *buf, size_t n)
{
    unsigned char *out = buf;
    unsigned long flags = spin_lock_irqsave(&random_lock);
    state ^= arch_counter_read();
    while (n) {
        uint64_t v = next_locked();
        size_t k = MIN(n, sizeof(v));
        memcpy(out, &v, k);
        out += k;
        n -= k;
    }
    spin_unlock_irqrestore(&random_lock, flags);
}
