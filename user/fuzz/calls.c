/* SPDX-License-Identifier: MIT */
/*
 * calls.c — which system call a draw makes, and with which arguments.
 *
 * The table is the kernel's own: build/include/generated/fuzz_calls.h lists every entry of
 * kernel/sys/syscall.c's dispatch tables (the Makefile extracts the CALL()/ZT_CALL() lines), so
 * a call added to the kernel is fuzzed without a change here.  Draws: most pick a table
 * entry; some pick any number up to 1100 (a gap gets -ENOSYS, a dispatched number its own
 * shaping), some a number far out of range.  A call with a shaper (shapes.c) gets arguments
 * of the right kinds, valid-looking often enough to get past the first checks; a call
 * without one gets six values from the mixed pool.
 */
#include "fuzz.h"
#include "generated/fuzz_calls.h" /* FZ_SYSCALLS: the kernel's dispatch table */

#include <string.h>

static const struct {
    long nr;
    const char *name;
} dispatched[] = {
#define FZ_SYSCALL(nr, name) {nr, name},
    FZ_SYSCALLS(FZ_SYSCALL)
#undef FZ_SYSCALL
};

#define NDISPATCHED ((int)(sizeof(dispatched) / sizeof(dispatched[0])))

int fz_calls_init(struct fz_call *table, int max)
{
    int n = 0;
    for (int i = 0; i < NDISPATCHED && n < max; i++) {
        table[n].nr = dispatched[i].nr;
        table[n].name = dispatched[i].name;
        table[n].shape = fz_shaper(dispatched[i].name);
        n++;
    }
    return n;
}

static const struct fz_call unknown_call = {-1, "unknown", NULL};

static const struct fz_call *find(const struct fz_call *table, int n, long nr)
{
    for (int i = 0; i < n; i++) {
        if (table[i].nr == nr) {
            return &table[i];
        }
    }
    return NULL;
}

/* Numbers from outside the table: gaps below 1100, and values far out of range. */
static long odd_number(struct fz_env *e)
{
    static const long far[] = {-1,
                               -2,
                               1100,
                               2047,
                               2048,
                               4095,
                               65535,
                               1l << 31,
                               1l << 32,
                               (long)0x8000000000000000ull,
                               0x7fffffffffffffffl};
    if (fz_chance(&e->rng, 3, 4)) {
        return (long)fz_below(&e->rng, 1100);
    }
    return far[fz_below(&e->rng, sizeof(far) / sizeof(far[0]))];
}

const struct fz_call *fz_pick(struct fz_env *e, const struct fz_call *table, int n,
                              struct fz_args *c)
{
    const struct fz_call *call;
    if (fz_chance(&e->rng, 9, 10)) {
        call = &table[fz_below(&e->rng, (uint64_t)n)];
        c->nr = call->nr;
        return call;
    }
    c->nr = odd_number(e);
    call = find(table, n, c->nr);
    return call ? call : &unknown_call;
}

enum fz_plan fz_shape(struct fz_env *e, const struct fz_call *call, struct fz_args *c)
{
    for (int i = 0; i < 6; i++) {
        c->a[i] = fz_any(e);
    }
    return call->shape ? call->shape(e, c) : FZ_PLAN_CALL;
}

bool fz_is_forkish(const char *name)
{
    return !strcmp(name, "fork") || !strcmp(name, "vfork") || !strcmp(name, "clone3");
}
