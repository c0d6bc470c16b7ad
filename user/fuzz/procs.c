/* SPDX-License-Identifier: MIT */
/*
 * procs.c — arguments for the Linux process-model calls that are not about files: execve,
 * memory protection and advice, signal waits and stacks, identity, groups and sessions,
 * limits, times and system information.
 *
 * The rules: execve of a real program with a valid argument vector would turn the life
 * into that program, so it is a lethal draw (made after the report, 1 time in lethal_den),
 * or, one time in four, made by a fork of the life (worker.c), which becomes the program;
 * otherwise its vector runs into a hole, so the kernel loads the program and then refuses.
 * mprotect and madvise over the life's own memory are steered to the playground (as
 * munmap is, shapes.c).  rt_sigsuspend's mask never blocks SIGALRM, so the waker ends the
 * wait.  Identity calls may succeed only for root (the one user); sessions and groups may
 * change: the sandbox's signal rules look at pids, never at groups.
 */
#include "fuzz.h"

#include <string.h>

static uint64_t out_buf(struct fz_env *e, uint64_t bytes)
{
    return fz_chance(&e->rng, 2, 3) ? fz_buf(e, bytes, 0) : fz_ptr(e, FZ_OUT);
}

/* ---------------------------------------------------------------- execve */

/* An argument vector with no NULL before the hole: the kernel fails while copying it. */
static uint64_t unterminated_vector(struct fz_env *e)
{
    uint64_t p = (uint64_t)(uintptr_t)e->scratch + FZ_SCRATCH - 8 * (1 + fz_below(&e->rng, 4));
    for (uint64_t *w = (uint64_t *)(uintptr_t)p; (uint64_t)(uintptr_t)w < e->hole; w++) {
        *w = fz_buf(e, 8, 0);
        *(char *)(uintptr_t)*w = 0; /* "" */
    }
    return p;
}

static enum fz_plan shape_execve(struct fz_env *e, struct fz_args *c)
{
    int which;
    c->a[0] = fz_program_path(e, &which);
    c->a[1] = fz_argv(e, which);
    c->a[2] = fz_chance(&e->rng, 1, 3) ? 0 : fz_argv(e, 3); /* envp */
    bool real = which <= 2 || which == 9; /* /bin/true, hello, fuzz; bin/true from / */
    if (real && fz_in_scratch(e, c->a[0], 1)) {
        if (fz_chance(&e->rng, 1, e->lethal_den)) {
            c->a[2] = 0;
            return FZ_PLAN_LETHAL; /* the life becomes that program */
        }
        if (fz_chance(&e->rng, 1, 4)) {
            c->a[5] = fz_next(&e->rng); /* bit 0: a second thread in the child first */
            return FZ_PLAN_EXEC_CHILD;  /* a fork of the life becomes that program */
        }
        c->a[fz_chance(&e->rng, 1, 2) ? 1 : 2] = unterminated_vector(e);
    }
    return FZ_PLAN_CALL;
}

/* ---------------------------------------------------------------- memory */

static uint64_t range_addr(struct fz_env *e)
{
    struct fz_rng *r = &e->rng;
    if (e->nmaps && fz_chance(r, 1, 2)) {
        const struct fz_range *m = &e->maps[fz_below(r, (uint64_t)e->nmaps)];
        return m->lo + (fz_chance(r, 1, 2) ? 0 : fz_below(r, m->hi - m->lo) & ~(FZ_PAGE - 1));
    }
    return fz_chance(r, 1, 2) ? FZ_PLAY_BASE + (fz_below(r, FZ_PLAY_SIZE) & ~(FZ_PAGE - 1))
                              : fz_ptr(e, FZ_OUT);
}

static uint64_t range_len(struct fz_env *e)
{
    return fz_chance(&e->rng, 2, 3) ? (1 + fz_below(&e->rng, 32)) * FZ_PAGE : fz_len(e);
}

static enum fz_plan shape_mprotect(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = range_addr(e);
    c->a[1] = range_len(e);
    c->a[2] = fz_chance(&e->rng, 7, 8) ? fz_below(&e->rng, 8) : fz_flags(e, 7);
    return fz_steer_range(e, &c->a[0], c->a[1]);
}

static enum fz_plan shape_madvise(struct fz_env *e, struct fz_args *c)
{
    static const uint64_t advice[] = {0, 1, 2, 3, 4, 4, 8, 9, 12, 14, 100};
    c->a[0] = range_addr(e);
    c->a[1] = range_len(e);
    c->a[2] = fz_chance(&e->rng, 7, 8) ? advice[fz_below(&e->rng, 11)] : fz_int(e);
    return fz_steer_range(e, &c->a[0], c->a[1]);
}

/* msync changes nothing: any range, unaligned at times, flags mostly of the three known. */
static enum fz_plan shape_msync(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = range_addr(e) + (fz_chance(&e->rng, 1, 8) ? 1 : 0);
    c->a[1] = range_len(e);
    c->a[2] = fz_chance(&e->rng, 7, 8) ? fz_below(&e->rng, 9) : fz_int(e);
    return FZ_PLAN_CALL;
}

/* ---------------------------------------------------------------- signals */

static enum fz_plan shape_rt_sigsuspend(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_temp_mask(e, 6); /* the waker ends it */
    c->a[1] = fz_chance(&e->rng, 7, 8) ? 8 : fz_len(e);
    return FZ_PLAN_CALL;
}

static bool in_maps(const struct fz_env *e, uint64_t p)
{
    for (int i = 0; i < e->nmaps; i++) {
        if (p >= e->maps[i].lo && p < e->maps[i].hi) {
            return true;
        }
    }
    return false;
}

static enum fz_plan shape_sigaltstack(struct fz_env *e, struct fz_args *c)
{
    struct fz_rng *r = &e->rng;
    c->a[0] = fz_chance(r, 1, 4) ? 0 : fz_buf(e, 24, 6);
    if (fz_in_scratch(e, c->a[0], 24)) { /* {sp, flags, size} */
        uint64_t *ss = (uint64_t *)(uintptr_t)c->a[0];
        ss[0] = fz_ptr(e, FZ_OUT);
        /* a valid stack is the life's own protected one: a signal frame in memory that other
         * calls write (scratch, the fuzzed mappings, the playground) would be overwritten by a
         * collider's read before its rt_sigreturn (the life then ends by SIGTRAP, unreported) */
        if (fz_chance(r, 1, 2) || fz_in_scratch(e, ss[0], 1) ||
            (ss[0] >= FZ_PLAY_BASE && ss[0] < FZ_PLAY_BASE + FZ_PLAY_SIZE) || in_maps(e, ss[0])) {
            ss[0] = e->altstack;
        }
        ss[1] = fz_chance(r, 3, 4) ? fz_below(r, 3) * 2 : fz_int(e); /* 0, SS_DISABLE */
        ss[2] = fz_chance(r, 1, 2) ? 4096 + fz_below(r, FZ_ALTSTACK - 4096) : fz_len(e);
        if (ss[0] == e->altstack && ss[2] > FZ_ALTSTACK) {
            ss[2] = fz_chance(r, 1, 2) ? FZ_ALTSTACK : fz_below(r, 2048); /* too small: refused */
        }
    }
    c->a[1] = fz_chance(r, 1, 2) ? 0 : out_buf(e, 24);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_rt_sigpending(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = out_buf(e, 8);
    c->a[1] = fz_chance(&e->rng, 7, 8) ? 8 : fz_len(e);
    return FZ_PLAN_CALL;
}

/* ---------------------------------------------------------------- identity, groups */

static enum fz_plan shape_id(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_chance(&e->rng, 1, 2) ? 0 : fz_int(e); /* setuid, setgid: root only */
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_three_out(struct fz_env *e, struct fz_args *c)
{
    for (int i = 0; i < 3; i++) { /* getresuid, getresgid */
        c->a[i] = out_buf(e, 4);
    }
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_getgroups(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_chance(&e->rng, 3, 4) ? fz_below(&e->rng, 70) : fz_int(e);
    c->a[1] = out_buf(e, 256);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_setpgid(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = (uint64_t)fz_pid(e);
    c->a[1] = (uint64_t)fz_pid(e);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_pid_only(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = (uint64_t)fz_pid(e); /* getpgid, getsid */
    return FZ_PLAN_CALL;
}

/* ---------------------------------------------------------------- limits, time, info */

static uint64_t rlimit_arg(struct fz_env *e)
{
    struct fz_rng *r = &e->rng;
    uint64_t p = fz_buf(e, 16, 6);
    if (fz_in_scratch(e, p, 16)) { /* {cur, max}: sometimes cur > max, sometimes infinity */
        uint64_t *l = (uint64_t *)(uintptr_t)p;
        l[0] = fz_chance(r, 1, 2) ? fz_below(r, 512) : fz_len(e);
        l[1] = fz_chance(r, 1, 2) ? l[0] + fz_below(r, 512) : ~0ull;
    }
    return p;
}

static uint64_t resource(struct fz_env *e)
{
    return fz_chance(&e->rng, 7, 8) ? fz_below(&e->rng, 17) : fz_int(e);
}

static enum fz_plan shape_prlimit64(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_chance(&e->rng, 1, 2) ? 0 : (uint64_t)fz_pid(e);
    c->a[1] = resource(e);
    c->a[2] = fz_chance(&e->rng, 1, 2) ? 0 : rlimit_arg(e);
    c->a[3] = fz_chance(&e->rng, 1, 2) ? 0 : out_buf(e, 16);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_getrlimit(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = resource(e);
    c->a[1] = out_buf(e, 16);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_setrlimit(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = resource(e);
    c->a[1] = rlimit_arg(e);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_getrusage(struct fz_env *e, struct fz_args *c)
{
    static const int64_t who[] = {0, -1, 1, 2, -2};
    c->a[0] = fz_chance(&e->rng, 7, 8) ? (uint64_t)who[fz_below(&e->rng, 5)] : fz_int(e);
    c->a[1] = out_buf(e, 144);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_out_struct(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_chance(&e->rng, 1, 6) ? 0 : out_buf(e, 128); /* times, sysinfo */
    c->a[1] = fz_chance(&e->rng, 1, 2) ? 0 : out_buf(e, 16);  /* gettimeofday's tz */
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_clock_getres(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_chance(&e->rng, 3, 4) ? fz_below(&e->rng, 12) : fz_int(e);
    c->a[1] = fz_chance(&e->rng, 1, 4) ? 0 : out_buf(e, 16);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_getrandom(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = out_buf(e, 1024);
    c->a[1] = fz_chance(&e->rng, 3, 4) ? fz_below(&e->rng, 1024) : fz_len(e);
    c->a[2] = fz_chance(&e->rng, 3, 4) ? fz_below(&e->rng, 8) : fz_int(e);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_set_robust_list(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_chance(&e->rng, 1, 2) ? fz_buf(e, 24, 0) : fz_ptr(e, FZ_IN);
    c->a[1] = fz_chance(&e->rng, 3, 4) ? 24 : fz_len(e);
    return FZ_PLAN_CALL;
}

static const struct {
    const char *name;
    fz_shape_fn fn;
} proc_shapers[] = {
    {"execve", shape_execve},
    {"mprotect", shape_mprotect},
    {"madvise", shape_madvise},
    {"msync", shape_msync},
    {"rt_sigsuspend", shape_rt_sigsuspend},
    {"sigaltstack", shape_sigaltstack},
    {"rt_sigpending", shape_rt_sigpending},
    {"setuid", shape_id},
    {"setgid", shape_id},
    {"getresuid", shape_three_out},
    {"getresgid", shape_three_out},
    {"getgroups", shape_getgroups},
    {"setpgid", shape_setpgid},
    {"getpgid", shape_pid_only},
    {"getsid", shape_pid_only},
    {"prlimit64", shape_prlimit64},
    {"getrlimit", shape_getrlimit},
    {"setrlimit", shape_setrlimit},
    {"getrusage", shape_getrusage},
    {"times", shape_out_struct},
    {"sysinfo", shape_out_struct},
    {"gettimeofday", shape_out_struct},
    {"clock_getres", shape_clock_getres},
    {"getrandom", shape_getrandom},
    {"set_robust_list", shape_set_robust_list},
};

fz_shape_fn fz_proc_shaper(const char *name)
{
    for (size_t i = 0; i < sizeof(proc_shapers) / sizeof(proc_shapers[0]); i++) {
        if (!strcmp(proc_shapers[i].name, name)) {
            return proc_shapers[i].fn;
        }
    }
    return NULL;
}
