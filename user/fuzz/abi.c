/* SPDX-License-Identifier: MIT */
/*
 * abi.c — shapes for the calls real-time programs and test harnesses make (docs/linux-abi.md):
 * statfs, the chown family, itimers and POSIX timers, the scheduling policy calls, memory
 * locking, membarrier, capabilities, memory policy.
 *
 * Sandbox rules (shapes.c says why each kind matters): a signal a timer sends to the whole
 * process may reach any of its threads, a thread on a garbage stack too, which would die
 * unannounced; so a POSIX timer signals the process only with SIGURG, which it ignores (the
 * timer still fires: its callback and overruns are exercised), the life's main thread
 * (SIGEV_THREAD_ID) with SIGALRM, whose no-op handler it keeps, or with a number the kernel
 * must refuse (0, past 64); ITIMER_REAL, whose SIGALRM goes to the process, is armed only
 * with a first expiry of 5 s or more and no period (it is set, read and disarmed, and the
 * life is over before it fires).  A period is at least 50 ms (a life may hold 33 timers: at
 * 1 ms the signals alone took every CPU under emulation), so a life is interrupted, not
 * drowned.  chown draws paths from the file pool (only /tmp/fz can change).
 */
#include "fuzz.h"

#include <string.h>

#define AT_FDCWD_ARG ((uint64_t)-100ll)
#define MS           1000000ll

static uint64_t out_or_hostile(struct fz_env *e, uint64_t bytes)
{
    return fz_chance(&e->rng, 3, 4) ? fz_buf(e, bytes, 0) : fz_ptr(e, FZ_OUT);
}

/* ---- files ---- */

static enum fz_plan shape_statfs(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_path(e);
    c->a[1] = out_or_hostile(e, 120);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_fstatfs(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_fd(e);
    c->a[1] = out_or_hostile(e, 120);
    return FZ_PLAN_CALL;
}

static uint64_t owner_id(struct fz_env *e)
{
    static const uint64_t ids[] = {0, 1, 65534, 0xffffffffu, 1000};
    return fz_chance(&e->rng, 4, 5) ? ids[fz_below(&e->rng, 5)] : fz_int(e);
}

static enum fz_plan shape_fchownat(struct fz_env *e, struct fz_args *c)
{
    static const uint64_t flags[] = {0, 0x100, 0x1000, 0x1100};
    c->a[0] = fz_chance(&e->rng, 2, 3) ? AT_FDCWD_ARG : fz_fd(e);
    c->a[1] = fz_path(e);
    c->a[2] = owner_id(e);
    c->a[3] = owner_id(e);
    c->a[4] = fz_chance(&e->rng, 3, 4) ? flags[fz_below(&e->rng, 4)] : fz_flags(e, 0x1100);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_fchown(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_fd(e);
    c->a[1] = owner_id(e);
    c->a[2] = owner_id(e);
    return FZ_PLAN_CALL;
}

/* ---- timers ---- */

/* Two time values (interval, then value) in scratch, as timeval (unit 1000 ns) or timespec
 * (unit 1): a period of 50 ms or more, or none; a short first expiry, or none; or a field out
 * of range; or a hostile pointer. */
static uint64_t times_arg(struct fz_env *e, int64_t unit, bool abs)
{
    uint64_t p = fz_buf(e, 32, 6);
    if (!fz_in_scratch(e, p, 32)) {
        return p;
    }
    int64_t *t = (int64_t *)(uintptr_t)p, per_s = 1000000000 / unit;
    int64_t period = fz_chance(&e->rng, 1, 2) ? 0 : 50 * MS + (int64_t)fz_below(&e->rng, 50 * MS);
    int64_t first = fz_chance(&e->rng, 1, 4) ? 0 : (int64_t)fz_below(&e->rng, 20 * MS) + 1;
    if (abs) {
        first += (int64_t)zt_now_ns();
    }
    t[0] = period / 1000000000, t[1] = period % 1000000000 / unit;
    t[2] = first / 1000000000, t[3] = first % 1000000000 / unit;
    switch (fz_below(&e->rng, 8)) {
    case 0:
        t[1] = per_s + (int64_t)fz_below(&e->rng, 3); /* out of range */
        break;
    case 1:
        t[2] = -1;
        break;
    default:
        break;
    }
    return p;
}

static enum fz_plan shape_getitimer(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_chance(&e->rng, 3, 4) ? fz_below(&e->rng, 4) : fz_int(e);
    c->a[1] = out_or_hostile(e, 32);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_setitimer(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_chance(&e->rng, 3, 4) ? 0 /* ITIMER_REAL: SIGALRM */ : fz_below(&e->rng, 4);
    c->a[1] = fz_chance(&e->rng, 1, 8) ? 0 : times_arg(e, 1000, false);
    c->a[2] = fz_chance(&e->rng, 1, 2) ? 0 : out_or_hostile(e, 32);
    if (fz_in_scratch(e, c->a[1], 32)) {
        int64_t *t = (int64_t *)(uintptr_t)c->a[1];
        t[0] = t[1] = 0;                                     /* no period */
        t[2] = t[2] ? 5 + (int64_t)fz_below(&e->rng, 5) : 0; /* 5-9 s, or disarm */
    }
    return FZ_PLAN_CALL;
}

/* A struct sigevent: a way of telling and a signal the life survives (SIGURG to the process,
 * SIGALRM to its main thread) or one the kernel refuses, a thread; or a hostile pointer (not
 * NULL: that is SIGALRM to the process). */
static uint64_t sigevent_arg(struct fz_env *e)
{
    static const int32_t how[] = {0 /* SIGNAL */, 1 /* NONE */, 4 /* THREAD_ID */, 2, 99};
    static const int32_t bad[] = {0, 65, -1};
    if (fz_chance(&e->rng, 1, 8)) {
        uint64_t p = fz_ptr(e, FZ_IN);
        return p ? p : e->hole;
    }
    uint64_t p = fz_buf(e, 64, 0);
    int32_t *ev = (int32_t *)(uintptr_t)(p + 8);
    ev[1] = how[fz_below(&e->rng, 5)];
    ev[0] = ev[1] == 4 ? SIGALRM : SIGURG;
    ev[0] = fz_chance(&e->rng, 1, 4) ? bad[fz_below(&e->rng, 3)] : ev[0];
    ev[2] = ev[1] != 4 || fz_chance(&e->rng, 3, 4) ? (int32_t)e->pid : (int32_t)fz_pid(e);
    if (ev[1] == 4 && ev[2] != (int32_t)e->pid && ev[0] == SIGALRM) {
        ev[0] = SIGURG; /* another thread of the life may be one on a garbage stack */
    }
    return p;
}

static enum fz_plan shape_timer_create(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_chance(&e->rng, 3, 4) ? fz_below(&e->rng, 3) : fz_int(e);
    c->a[1] = sigevent_arg(e);
    c->a[2] = out_or_hostile(e, 8);
    return FZ_PLAN_CALL;
}

static uint64_t timer_id(struct fz_env *e)
{
    return fz_chance(&e->rng, 3, 4) ? fz_below(&e->rng, 34) : fz_int(e);
}

static enum fz_plan shape_timer_settime(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = timer_id(e);
    c->a[1] = fz_chance(&e->rng, 3, 4) ? fz_below(&e->rng, 2) : fz_flags(e, 1);
    c->a[2] = times_arg(e, 1, c->a[1] == 1);
    c->a[3] = fz_chance(&e->rng, 1, 2) ? 0 : out_or_hostile(e, 32);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_timer_id_buf(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = timer_id(e); /* timer_gettime, timer_getoverrun, timer_delete */
    c->a[1] = out_or_hostile(e, 32);
    return FZ_PLAN_CALL;
}

/* ---- scheduling policy ---- */

static uint64_t policy_arg(struct fz_env *e)
{
    return fz_chance(&e->rng, 3, 4)
               ? fz_below(&e->rng, 8) | (fz_chance(&e->rng, 1, 8) ? 0x40000000 : 0)
               : fz_int(e);
}

static uint64_t param_arg(struct fz_env *e)
{
    uint64_t p = fz_buf(e, 8, 6);
    if (fz_in_scratch(e, p, 8)) {
        *(int32_t *)(uintptr_t)p =
            fz_chance(&e->rng, 3, 4) ? (int32_t)fz_below(&e->rng, 101) : (int32_t)fz_int(e);
    }
    return fz_chance(&e->rng, 1, 10) ? 0 : p;
}

static enum fz_plan shape_sched_setscheduler(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = (uint64_t)fz_pid(e);
    c->a[1] = policy_arg(e);
    c->a[2] = param_arg(e);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_sched_param(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = (uint64_t)fz_pid(e); /* setparam, getparam, getscheduler, rr_get_interval */
    c->a[1] = fz_chance(&e->rng, 1, 2) ? param_arg(e) : out_or_hostile(e, 16);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_sched_priority(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = policy_arg(e);
    return FZ_PLAN_CALL;
}

/* ---- memory locking, membarrier ---- */

static enum fz_plan shape_mlock(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_chance(&e->rng, 1, 2) ? fz_buf(e, 64, 0) : fz_any(e); /* and munlock, mlock2 */
    c->a[1] = fz_len(e);
    c->a[2] = fz_chance(&e->rng, 3, 4) ? fz_below(&e->rng, 2) : fz_flags(e, 1);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_mlockall(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_chance(&e->rng, 3, 4) ? fz_below(&e->rng, 8) : fz_flags(e, 7);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_membarrier(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_chance(&e->rng, 3, 4)
                  ? (fz_chance(&e->rng, 1, 3) ? 0 : 1ull << fz_below(&e->rng, 10))
                  : fz_int(e);
    c->a[1] = fz_chance(&e->rng, 3, 4) ? 0 : fz_flags(e, 1);
    c->a[2] = (uint64_t)fz_cpu(e);
    return FZ_PLAN_CALL;
}

/* ---- capabilities, memory policy ---- */

/* A capability header: one of Linux's three versions or another, a pid; or hostile. */
static uint64_t cap_header_arg(struct fz_env *e)
{
    static const uint32_t versions[] = {0x19980330u, 0x20071026u, 0x20080522u, 1};
    uint64_t p = fz_buf(e, 8, 6);
    if (fz_in_scratch(e, p, 8)) {
        uint32_t *h = (uint32_t *)(uintptr_t)p;
        h[0] = versions[fz_below(&e->rng, 4)];
        h[1] = fz_chance(&e->rng, 1, 2) ? 0 : (uint32_t)fz_pid(e);
    }
    return p;
}

static enum fz_plan shape_capget(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = cap_header_arg(e); /* and capset: what a life drops stays with it */
    c->a[1] = fz_chance(&e->rng, 1, 8) ? 0 : out_or_hostile(e, 24);
    return FZ_PLAN_CALL;
}

/* A node mask of a few words, node 0 or others in it; or hostile. */
static uint64_t nodes_arg(struct fz_env *e)
{
    uint64_t p = fz_buf(e, 16, 6);
    if (fz_in_scratch(e, p, 16)) {
        *(uint64_t *)(uintptr_t)p = fz_chance(&e->rng, 3, 4) ? fz_below(&e->rng, 4) : fz_any(e);
    }
    return fz_chance(&e->rng, 1, 8) ? 0 : p;
}

static uint64_t maxnode_arg(struct fz_env *e)
{
    return fz_chance(&e->rng, 3, 4) ? fz_below(&e->rng, 130) : fz_len(e);
}

static enum fz_plan shape_set_mempolicy(struct fz_env *e, struct fz_args *c)
{
    c->a[0] =
        fz_chance(&e->rng, 3, 4) ? fz_below(&e->rng, 7) | (fz_below(&e->rng, 2) << 15) : fz_int(e);
    c->a[1] = nodes_arg(e);
    c->a[2] = maxnode_arg(e);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_get_mempolicy(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_chance(&e->rng, 1, 4) ? 0 : out_or_hostile(e, 8);
    c->a[1] = fz_chance(&e->rng, 1, 4) ? 0 : out_or_hostile(e, 32);
    c->a[2] = maxnode_arg(e);
    c->a[3] = fz_chance(&e->rng, 1, 2) ? 0 : fz_buf(e, 8, 4);
    c->a[4] = fz_chance(&e->rng, 3, 4) ? fz_below(&e->rng, 8) : fz_flags(e, 7);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_mbind(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_chance(&e->rng, 1, 2) ? fz_buf(e, 64, 0) & ~4095ull : fz_any(e);
    c->a[1] = fz_len(e);
    c->a[2] = fz_chance(&e->rng, 3, 4) ? fz_below(&e->rng, 7) : fz_int(e);
    c->a[3] = nodes_arg(e);
    c->a[4] = maxnode_arg(e);
    c->a[5] = fz_chance(&e->rng, 3, 4) ? fz_below(&e->rng, 8) : fz_flags(e, 7);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_noargs(struct fz_env *e, struct fz_args *c)
{
    return FZ_PLAN_CALL; /* munlockall: the mixed-pool arguments stay, and are ignored */
}

static const struct {
    const char *name;
    fz_shape_fn fn;
} abi_shapers[] = {
    {"statfs", shape_statfs},
    {"fstatfs", shape_fstatfs},
    {"fchownat", shape_fchownat},
    {"fchown", shape_fchown},
    {"getitimer", shape_getitimer},
    {"setitimer", shape_setitimer},
    {"timer_create", shape_timer_create},
    {"timer_settime", shape_timer_settime},
    {"timer_gettime", shape_timer_id_buf},
    {"timer_getoverrun", shape_timer_id_buf},
    {"timer_delete", shape_timer_id_buf},
    {"sched_setscheduler", shape_sched_setscheduler},
    {"sched_setparam", shape_sched_param},
    {"sched_getparam", shape_sched_param},
    {"sched_getscheduler", shape_sched_param},
    {"sched_rr_get_interval", shape_sched_param},
    {"sched_get_priority_max", shape_sched_priority},
    {"sched_get_priority_min", shape_sched_priority},
    {"mlock", shape_mlock},
    {"munlock", shape_mlock},
    {"mlock2", shape_mlock},
    {"mlockall", shape_mlockall},
    {"munlockall", shape_noargs},
    {"membarrier", shape_membarrier},
    {"capget", shape_capget},
    {"capset", shape_capget},
    {"set_mempolicy", shape_set_mempolicy},
    {"get_mempolicy", shape_get_mempolicy},
    {"mbind", shape_mbind},
};

fz_shape_fn fz_abi_shaper(const char *name)
{
    for (size_t i = 0; i < sizeof(abi_shapers) / sizeof(abi_shapers[0]); i++) {
        if (!strcmp(abi_shapers[i].name, name)) {
            return abi_shapers[i].fn;
        }
    }
    return NULL;
}
