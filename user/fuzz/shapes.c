/* SPDX-License-Identifier: MIT */
/*
 * shapes.c — arguments of the right kinds for the calls the fuzzer knows, and the sandbox
 * rules that keep a draw from ending the test or, unannounced, the life.
 *
 * Each shaper starts from six mixed-pool values (fz_shape) and overwrites the arguments it
 * knows.  The rules, by kind of danger:
 *   - blocking: a sleep, futex wait or console read that could last is bounded (a short
 *     timeout, a value that does not match, a buffer that fails first), except now and then,
 *     when the waker thread's SIGALRM ends it (-EINTR);
 *   - signals: only this life and its own children get signals that act; anyone else (the
 *     runner, init, other workers, process groups) gets 0 or SIGURG, which the fuzzer's
 *     processes leave ignored; SIGKILL to pid 1 is kept (the kernel must refuse it);
 *   - the signals that can arrive unasked (SIGALRM, SIGCHLD, SIGURG, SIGWINCH) keep their
 *     handlers and stay unblocked;
 *   - ranges (munmap, mmap MAP_FIXED, brk) that the kernel would honour over the life's own
 *     memory are moved to the playground;
 *   - what ends the life (exit_group, rt_sigreturn, a fatal signal to itself, strict
 *     isolation with any signal but SIGALRM, whose handler it keeps (a violation with an
 *     unhandled signal is SIGKILL), a thread on a garbage stack) is made 1 time in
 *     lethal_den, after the report (FZ_PLAN_LETHAL); power-off never (FZ_PLAN_FILTER).
 */
#include "fuzz.h"

#include <stdio.h>
#include <string.h>

#include "uapi/zt_device.h"

#define NS_MS        1000000ll
#define SHORT_NS     (20 * NS_MS)
#define FZ_SA_KNOWN  (ZT_SA_SIGINFO | ZT_SA_RESTORER | ZT_SA_NODEFER | ZT_SA_RESETHAND)
#define ISO_SAFE_SIG SIGALRM /* handled (a no-op): a strict violation only signals */

void fz_noop_handler(int sig);

static bool lethal_roll(struct fz_env *e)
{
    return fz_chance(&e->rng, 1, e->lethal_den);
}

/* Signals that may arrive without this life asking: their disposition is kept (SIGPIPE,
 * which a write to a pipe with no reader sends, stays ignored: worker.c). */
static bool sig_protected(long sig)
{
    return sig == SIGALRM || sig == SIGCHLD || sig == SIGURG || sig == 28 /* SIGWINCH */ ||
           sig == SIGPIPE;
}

static bool is_child(const struct fz_env *e, int64_t pid)
{
    for (int i = 0; i < e->nchildren; i++) {
        if (e->children[i] == pid) {
            return true;
        }
    }
    return false;
}

/* A signal number that acts: 1..64. */
static bool sig_acts(int64_t sig)
{
    return sig >= 1 && sig <= ZT_NSIG;
}

/*
 * The signal `sig` for process `pid` (tid: a thread of it, or 0): keep it for children;
 * for this life, fatal ones are a lethal draw; everyone else gets 0 or SIGURG, except
 * SIGKILL to init.
 */
static enum fz_plan steer_signal(struct fz_env *e, int64_t pid, uint64_t *sig)
{
    if (!sig_acts((int64_t)*sig) || (pid > 0 && is_child(e, pid))) {
        return FZ_PLAN_CALL;
    }
    if (pid == e->pid) {
        if (sig_protected((long)*sig)) {
            return FZ_PLAN_CALL; /* SIGALRM runs the no-op handler; the others are ignored */
        }
        if (lethal_roll(e)) {
            return FZ_PLAN_LETHAL;
        }
        *sig = fz_chance(&e->rng, 1, 2) ? SIGURG : SIGALRM;
        return FZ_PLAN_CALL;
    }
    if (pid == 1 && *sig == SIGKILL) {
        return FZ_PLAN_CALL; /* init gets only the signals it handles: refused */
    }
    *sig = fz_chance(&e->rng, 1, 2) ? 0 : SIGURG;
    return FZ_PLAN_CALL;
}

/* A struct timespec in scratch: short or invalid (or, abs, near now), or a hostile pointer. */
static uint64_t timespec_arg(struct fz_env *e, bool abs)
{
    uint64_t p = fz_buf(e, 16, 6);
    if (!fz_in_scratch(e, p, 16)) {
        return p;
    }
    int64_t *ts = (int64_t *)(uintptr_t)p, ns = 0;
    switch (fz_below(&e->rng, 10)) {
    case 0:
        ts[0] = 0, ts[1] = 1000000000 + (int64_t)fz_below(&e->rng, 5); /* invalid */
        return p;
    case 1:
        ts[0] = -(int64_t)fz_below(&e->rng, 3) - 1, ts[1] = 0;
        return p;
    case 2:
        ts[0] = 0, ts[1] = -1;
        return p;
    case 3:
        ts[0] = (int64_t)(1ull << 33), ts[1] = 0; /* far: valid, a sleep the waker ends */
        return p;
    case 4:
        ns = 0;
        break;
    default:
        ns = (int64_t)fz_below(&e->rng, SHORT_NS);
    }
    if (abs) {
        ns += (int64_t)zt_now_ns();
    }
    ts[0] = ns / 1000000000, ts[1] = ns % 1000000000;
    return p;
}

/* ---------------------------------------------------------------- console, identity */

static enum fz_plan shape_read(struct fz_env *e, struct fz_args *c)
{
    static const int fds[] = {0, 0, 1, 2, -1, 3, 1000};
    int64_t file = fz_file_fd(e);
    c->a[0] = file >= 0 && fz_chance(&e->rng, 1, 3) ? (uint64_t)file
                                                    : (uint64_t)(long)fds[fz_below(&e->rng, 7)];
    c->a[1] = fz_chance(&e->rng, 1, 2) ? fz_buf(e, 512, 0) : fz_ptr(e, FZ_OUT);
    c->a[2] = fz_len(e);
    if (fz_is_console(e, c->a[0]) && c->a[2] && fz_in_scratch(e, c->a[1], 1) &&
        !fz_chance(&e->rng, 1, 64)) {
        c->a[1] = e->hole; /* a valid buffer would wait for console input */
    }
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_write(struct fz_env *e, struct fz_args *c)
{
    static const int fds[] = {1, 2, 1, 0, -1, 3, 1000};
    int64_t file = fz_file_fd(e);
    c->a[0] = file >= 0 && fz_chance(&e->rng, 1, 4) ? (uint64_t)file
                                                    : (uint64_t)(long)fds[fz_below(&e->rng, 7)];
    c->a[1] = fz_ptr(e, FZ_IN);
    c->a[2] = fz_chance(&e->rng, 1, 2) ? fz_below(&e->rng, 70) : fz_len(e);
    if (fz_is_console(e, c->a[0]) && c->a[1] && c->a[1] < 0x0000008000000000ull) {
        /* what the console may print: NUL bytes only, at most 64 before a hole */
        c->a[1] = e->zeros + fz_below(&e->rng, 64);
    }
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_ioctl(struct fz_env *e, struct fz_args *c)
{
    static const uint64_t reqs[] = {TIOCGPGRP, TIOCSPGRP, TIOCGPGRP, 0, 0x5401, ~0ull};
    c->a[0] = fz_below(&e->rng, 4) - 1;
    c->a[1] = reqs[fz_below(&e->rng, 6)];
    c->a[2] = fz_chance(&e->rng, 1, 2) ? fz_buf(e, 4, 0) : fz_ptr(e, FZ_OUT);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_uname(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_chance(&e->rng, 1, 2) ? fz_buf(e, 390, 0) : fz_ptr(e, FZ_OUT);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_getcpu(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_chance(&e->rng, 1, 2) ? fz_buf(e, 4, 0) : fz_ptr(e, FZ_OUT);
    c->a[1] = fz_chance(&e->rng, 1, 2) ? fz_buf(e, 4, 0) : fz_ptr(e, FZ_OUT);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_set_tid_address(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_chance(&e->rng, 1, 2) ? fz_buf(e, 4, 0) : fz_ptr(e, FZ_OUT);
    return FZ_PLAN_CALL;
}

/* ---------------------------------------------------------------- time */

static enum fz_plan shape_nanosleep(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = timespec_arg(e, false);
    c->a[1] = fz_chance(&e->rng, 1, 2) ? 0 : fz_ptr(e, FZ_OUT);
    return FZ_PLAN_CALL;
}

static uint64_t clock_id(struct fz_env *e)
{
    return fz_chance(&e->rng, 3, 4) ? fz_below(&e->rng, 5) : fz_int(e);
}

static enum fz_plan shape_clock_nanosleep(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = clock_id(e);
    c->a[1] = fz_chance(&e->rng, 3, 4) ? fz_below(&e->rng, 2) : fz_flags(e, TIMER_ABSTIME);
    c->a[2] = timespec_arg(e, c->a[1] == TIMER_ABSTIME);
    c->a[3] = fz_chance(&e->rng, 1, 2) ? 0 : fz_ptr(e, FZ_OUT);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_clock_gettime(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = clock_id(e);
    c->a[1] = fz_chance(&e->rng, 1, 2) ? fz_buf(e, 16, 0) : fz_ptr(e, FZ_OUT);
    return FZ_PLAN_CALL;
}

/* ---------------------------------------------------------------- futex */

static enum fz_plan shape_futex(struct fz_env *e, struct fz_args *c)
{
    static const uint64_t ops[] = {FUTEX_WAIT,
                                   FUTEX_WAKE,
                                   FUTEX_WAIT | FUTEX_PRIVATE_FLAG,
                                   FUTEX_WAKE | FUTEX_PRIVATE_FLAG,
                                   2,
                                   3,
                                   4,
                                   5,
                                   9,
                                   10,
                                   12,
                                   13};
    struct fz_rng *r = &e->rng;
    c->a[0] = fz_chance(r, 2, 3) ? fz_buf(e, 4, 0) + 4 * fz_below(r, 2) : fz_ptr(e, FZ_IN);
    c->a[1] = fz_chance(r, 7, 8) ? ops[fz_below(r, 12)] : fz_int(e);
    c->a[2] = fz_chance(r, 1, 2) ? fz_below(r, 4) : fz_int(e);
    c->a[3] = fz_chance(r, 1, 2) ? 0 : timespec_arg(e, false);
    if ((c->a[1] & ~(uint64_t)FUTEX_PRIVATE_FLAG) == FUTEX_WAIT && fz_in_scratch(e, c->a[0], 4) &&
        (c->a[0] & 3) == 0) {
        uint32_t now = *(volatile uint32_t *)(uintptr_t)c->a[0];
        if (fz_chance(r, 1, 2)) {
            c->a[2] = now; /* it would wait: bounded by a short timeout */
            c->a[3] = timespec_arg(e, false);
            if (fz_in_scratch(e, c->a[3], 16)) {
                int64_t *ts = (int64_t *)(uintptr_t)c->a[3];
                ts[0] = 0, ts[1] = (int64_t)fz_below(r, SHORT_NS);
            }
        } else if (!fz_chance(r, 1, 64)) {
            c->a[2] = (uint64_t)now + 1; /* no wait: -EAGAIN */
        }
    }
    return FZ_PLAN_CALL;
}

/* ---------------------------------------------------------------- scheduling */

/* A CPU set of up to 128 bytes (glibc's cpu_set_t): CPUs 0-63 from fz_cpumask, the words
 * past them (CPUs 64-1023: the kernel has 512) mostly empty, sometimes anything. */
static uint64_t mask_arg(struct fz_env *e)
{
    uint64_t p = fz_buf(e, 128, 5);
    if (fz_in_scratch(e, p, 128)) {
        volatile uint64_t *w = (volatile uint64_t *)(uintptr_t)p;
        w[0] = fz_cpumask(e);
        for (int i = 1; i < 16; i++) {
            w[i] = fz_chance(&e->rng, 7, 8) ? 0 : fz_int(e);
        }
    }
    return p;
}

static uint64_t mask_len(struct fz_env *e)
{
    static const uint64_t v[] = {8, 8, 8, 16, 64, 128, 4, 7, 72, 0};
    return fz_chance(&e->rng, 7, 8) ? v[fz_below(&e->rng, 10)] : fz_len(e);
}

static enum fz_plan shape_sched_setaffinity(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = (uint64_t)fz_pid(e);
    c->a[1] = mask_len(e);
    c->a[2] = mask_arg(e);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_sched_getaffinity(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = (uint64_t)fz_pid(e);
    c->a[1] = mask_len(e);
    c->a[2] = fz_chance(&e->rng, 1, 2) ? fz_buf(e, 16, 0) : fz_ptr(e, FZ_OUT);
    return FZ_PLAN_CALL;
}

/* ---------------------------------------------------------------- signals */

static enum fz_plan shape_kill(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = (uint64_t)fz_pid(e);
    c->a[1] = (uint64_t)(int64_t)fz_sig(e);
    return steer_signal(e, (int64_t)(int32_t)c->a[0], &c->a[1]);
}

static enum fz_plan shape_tgkill(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = (uint64_t)fz_pid(e);
    c->a[1] = fz_chance(&e->rng, 1, 2) ? c->a[0] : (uint64_t)fz_pid(e);
    c->a[2] = (uint64_t)(int64_t)fz_sig(e);
    return steer_signal(e, (int64_t)(int32_t)c->a[0], &c->a[2]);
}

static enum fz_plan shape_tkill(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = (uint64_t)fz_pid(e);
    c->a[1] = (uint64_t)(int64_t)fz_sig(e);
    return steer_signal(e, (int64_t)(int32_t)c->a[0], &c->a[1]);
}

/* A siginfo for rt_(tg)sigqueueinfo: mostly SI_QUEUE, else a code only the caller's own
 * threads may claim (SI_USER, SI_TKILL, a kernel code: -EPERM for anyone else) or any int. */
static uint64_t siginfo_arg(struct fz_env *e)
{
    static const int32_t codes[] = {-1, -1, -1, 0, -6, 0x80, 1, -60};
    uint64_t p = fz_buf(e, 128, 5);
    if (fz_in_scratch(e, p, 128)) {
        volatile int32_t *w = (volatile int32_t *)(uintptr_t)p;
        w[2] = fz_chance(&e->rng, 7, 8) ? codes[fz_below(&e->rng, 8)] : (int32_t)fz_int(e);
    }
    return p;
}

static enum fz_plan shape_rt_sigqueueinfo(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = (uint64_t)fz_pid(e);
    c->a[1] = (uint64_t)(int64_t)fz_sig(e);
    c->a[2] = siginfo_arg(e);
    return steer_signal(e, (int64_t)(int32_t)c->a[0], &c->a[1]);
}

static enum fz_plan shape_rt_tgsigqueueinfo(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = (uint64_t)fz_pid(e);
    c->a[1] = fz_chance(&e->rng, 1, 2) ? c->a[0] : (uint64_t)fz_pid(e);
    c->a[2] = (uint64_t)(int64_t)fz_sig(e);
    c->a[3] = siginfo_arg(e);
    return steer_signal(e, (int64_t)(int32_t)c->a[0], &c->a[2]);
}

/* A signal number whose disposition may change: not a protected one. */
static uint64_t free_sig(struct fz_env *e)
{
    uint64_t s = (uint64_t)(int64_t)fz_sig(e);
    while (sig_protected((long)s)) {
        s = 1 + fz_below(&e->rng, ZT_NSIG);
    }
    return s;
}

static enum fz_plan shape_rt_sigaction(struct fz_env *e, struct fz_args *c)
{
    struct fz_rng *r = &e->rng;
    c->a[0] = free_sig(e);
    const uint64_t noop = (uint64_t)(uintptr_t)fz_noop_handler;
    const uint64_t trampoline = (uint64_t)(uintptr_t)zt_sigreturn_trampoline;
    bool kills = false;
    c->a[1] = fz_chance(r, 1, 4) ? 0 : fz_buf(e, 32, 4);
    if (fz_in_scratch(e, c->a[1], 32)) {
        /* in a slot of the life's own: a later shaping's bytes in scratch must not become a
         * handler (a collide program shapes all its calls first) */
        uint64_t *act = e->acts[e->nacts++ % FZ_PROG_CALLS];
        static const uint64_t handlers[] = {0, 1, 0, 1, 2};
        act[0] = fz_chance(r, 1, 3)   ? noop
                 : fz_chance(r, 1, 2) ? handlers[fz_below(r, 5)]
                                      : fz_ptr(e, FZ_IN);
        act[1] = fz_flags(e, FZ_SA_KNOWN);
        act[2] = fz_chance(r, 1, 2) ? trampoline : fz_ptr(e, FZ_IN);
        act[3] = fz_next(r);
        /* A handler, or a way back from one, that faults when the signal comes ends the life
         * then, unannounced (signals arrive unasked: SIGIO, SIGXFSZ, SIGTTIN...): installed
         * only as a lethal draw, else made the no-op handler's. */
        kills = (act[0] > 1 && act[0] != noop) ||
                (act[0] == noop && (act[1] & ZT_SA_RESTORER) && act[2] != trampoline);
        if (kills && !lethal_roll(e)) {
            act[0] = noop;
            act[2] = trampoline;
            kills = false;
        }
        c->a[1] = (uint64_t)(uintptr_t)act;
    }
    c->a[2] = fz_chance(r, 1, 2) ? 0 : fz_ptr(e, FZ_OUT);
    c->a[3] = fz_chance(r, 7, 8) ? 8 : fz_len(e);
    return kills ? FZ_PLAN_LETHAL : FZ_PLAN_CALL;
}

static enum fz_plan shape_rt_sigprocmask(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_chance(&e->rng, 7, 8) ? fz_below(&e->rng, 3) : fz_int(e);
    c->a[1] = fz_chance(&e->rng, 1, 4) ? 0 : fz_buf(e, 8, 4);
    c->a[2] = fz_chance(&e->rng, 1, 2) ? 0 : fz_ptr(e, FZ_OUT);
    c->a[3] = fz_chance(&e->rng, 7, 8) ? 8 : fz_len(e);
    return FZ_PLAN_CALL; /* the life unblocks SIGALRM again after the call (worker.c) */
}

static enum fz_plan shape_rt_sigreturn(struct fz_env *e, struct fz_args *c)
{
    /* restores a frame from the stack pointer: the fuzzer's own stack, so garbage */
    return lethal_roll(e) ? FZ_PLAN_LETHAL : FZ_PLAN_FILTER;
}

/* ---------------------------------------------------------------- memory */

/* [*addr, +len) would be honoured by the kernel over the life's own memory: move it. */
enum fz_plan fz_steer_range(struct fz_env *e, uint64_t *addr, uint64_t len)
{
    const uint64_t top = 0x0000008000000000ull;
    if (*addr >= top || *addr + len < *addr || *addr + len > top ||
        !fz_hits_protected(e, *addr, len)) {
        return FZ_PLAN_CALL; /* harmless, or refused by any correct kernel */
    }
    if (lethal_roll(e)) {
        return FZ_PLAN_LETHAL;
    }
    *addr = FZ_PLAY_BASE + (fz_below(&e->rng, FZ_PLAY_SIZE) & ~(FZ_PAGE - 1));
    if (*addr + len > FZ_PLAY_BASE + FZ_PLAY_SIZE || fz_hits_protected(e, *addr, len)) {
        *addr = 0x0000008000000000ull - FZ_PAGE; /* still refused: past the top */
    }
    return FZ_PLAN_CALL;
}

static uint64_t map_len(struct fz_env *e)
{
    struct fz_rng *r = &e->rng;
    switch (fz_below(r, 16)) {
    case 0:
        return fz_len(e);
    case 1:
        return (1ull << 40) + fz_below(r, 1ull << 40); /* more than memory: -ENOMEM at once */
    case 2:
        return fz_chance(r, 1, 16) ? (4 + fz_below(r, 28)) << 20 : 1 + fz_below(r, 8192);
    default:
        return (1 + fz_below(r, 64)) * FZ_PAGE;
    }
}

/* A file offset for mmap: page-aligned or not, at or past a small file's end, huge, wrapping
 * with the length. */
static uint64_t map_offset(struct fz_env *e)
{
    static const uint64_t offs[] = {FZ_PAGE,      1,          FZ_PAGE - 1, 2 * FZ_PAGE,
                                    16 * FZ_PAGE, 1ull << 40, -FZ_PAGE,    -2 * FZ_PAGE};
    struct fz_rng *r = &e->rng;
    return fz_chance(r, 7, 8) ? offs[fz_below(r, 8)] : fz_int(e);
}

/*
 * A mapping of a file the life opened (an initrd program, a /tmp/fz file, a /proc or /sys file,
 * a directory, a pipe reopened through /proc/self/fd): private or shared, fixed in the
 * playground at times, at offset 0 or a few pages in, a few pages long, readable, writable or
 * both, so the file mapping paths run past their checks (the kernel refuses what is not a
 * regular file of the initrd, /tmp or /dev/shm, or not opened for what prot asks).
 */
static enum fz_plan shape_mmap_file(struct fz_env *e, struct fz_args *c, int64_t fd)
{
    static const uint64_t flags[] = {
        MAP_PRIVATE,           MAP_PRIVATE, MAP_SHARED, MAP_SHARED, MAP_PRIVATE | MAP_FIXED,
        MAP_SHARED | MAP_FIXED};
    static const uint64_t prots[] = {
        PROT_READ,  PROT_READ, PROT_READ | PROT_WRITE, PROT_READ | PROT_WRITE,
        PROT_WRITE, PROT_NONE, PROT_READ | PROT_EXEC};
    struct fz_rng *r = &e->rng;
    c->a[0] = 0;
    c->a[1] = fz_chance(r, 3, 4) ? (1 + fz_below(r, 4)) * FZ_PAGE : 1 + fz_below(r, 3 * FZ_PAGE);
    c->a[2] = prots[fz_below(r, 7)];
    c->a[3] = flags[fz_below(r, 6)];
    c->a[4] = (uint64_t)fd;
    c->a[5] = fz_chance(r, 2, 3) ? 0 : fz_below(r, 4) * FZ_PAGE;
    if (c->a[3] & MAP_FIXED) {
        c->a[0] = FZ_PLAY_BASE + (fz_below(r, FZ_PLAY_SIZE) & ~(FZ_PAGE - 1));
        return fz_steer_range(e, &c->a[0], c->a[1]);
    }
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_mmap(struct fz_env *e, struct fz_args *c)
{
    struct fz_rng *r = &e->rng;
    int64_t fd = fz_file_fd(e);
    if (fd >= 0 && fz_chance(r, 1, 3)) {
        return shape_mmap_file(e, c, fd);
    }
    static const uint64_t flags[] = {MAP_PRIVATE | MAP_ANONYMOUS,
                                     MAP_PRIVATE | MAP_ANONYMOUS,
                                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                                     MAP_SHARED | MAP_ANONYMOUS,
                                     MAP_PRIVATE,
                                     MAP_ANONYMOUS,
                                     MAP_SHARED,
                                     MAP_SHARED | MAP_FIXED};
    c->a[1] = map_len(e);
    c->a[2] = fz_chance(r, 3, 4) ? fz_below(r, 8) : fz_flags(e, 7);
    c->a[3] = fz_chance(r, 5, 6) ? flags[fz_below(r, 8)] : fz_flags(e, 0x33);
    c->a[0] = fz_chance(r, 1, 3)   ? 0
              : fz_chance(r, 1, 2) ? FZ_PLAY_BASE + (fz_below(r, FZ_PLAY_SIZE) & ~(FZ_PAGE - 1))
                                   : fz_ptr(e, FZ_OUT);
    /* a descriptor: none, one of the life's (a /tmp file, a program, a pipe, the console), or
     * any number; an offset for the files */
    c->a[4] = fz_chance(r, 3, 4) ? (uint64_t)-1 : fz_chance(r, 2, 3) ? fz_fd(e) : fz_int(e);
    c->a[5] = fz_chance(r, 3, 4) ? 0 : map_offset(e);
    if (c->a[3] & MAP_FIXED) {
        return fz_steer_range(e, &c->a[0], c->a[1]);
    }
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_munmap(struct fz_env *e, struct fz_args *c)
{
    struct fz_rng *r = &e->rng;
    if (e->nmaps && fz_chance(r, 1, 2)) {
        const struct fz_range *m = &e->maps[fz_below(r, (uint64_t)e->nmaps)];
        c->a[0] = fz_chance(r, 1, 2) ? m->lo : m->lo + fz_below(r, m->hi - m->lo);
        c->a[1] = fz_chance(r, 1, 2) ? m->hi - m->lo : fz_len(e);
    } else {
        c->a[0] = fz_chance(r, 1, 2) ? FZ_PLAY_BASE + (fz_below(r, FZ_PLAY_SIZE) & ~(FZ_PAGE - 1))
                                     : fz_ptr(e, FZ_OUT);
        c->a[1] = fz_chance(r, 1, 2) ? (1 + fz_below(r, 16)) * FZ_PAGE : fz_len(e);
    }
    return fz_steer_range(e, &c->a[0], c->a[1]);
}

static enum fz_plan shape_brk(struct fz_env *e, struct fz_args *c)
{
    struct fz_rng *r = &e->rng;
    switch (fz_below(r, 4)) {
    case 0:
        c->a[0] = 0;
        break;
    case 1:
        c->a[0] = e->brk0 + fz_below(r, 256) * FZ_PAGE + fz_below(r, 2) * fz_below(r, FZ_PAGE);
        break;
    case 2:
        c->a[0] = fz_ptr(e, FZ_OUT);
        break;
    default:
        c->a[0] = e->brk0 + fz_len(e);
    }
    if (c->a[0] && c->a[0] < e->brk0) {
        if (lethal_roll(e)) {
            return FZ_PLAN_LETHAL; /* below the break the life started with: its heap */
        }
        c->a[0] = e->brk0 + FZ_PAGE * fz_below(r, 16);
    }
    return FZ_PLAN_CALL;
}

/* ---------------------------------------------------------------- threads, processes */

static enum fz_plan shape_exit(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_int(e);
    return lethal_roll(e) ? FZ_PLAN_LETHAL : FZ_PLAN_EXIT_THR;
}

static enum fz_plan shape_exit_group(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_int(e);
    return lethal_roll(e) ? FZ_PLAN_LETHAL : FZ_PLAN_FILTER;
}

static enum fz_plan shape_clone(struct fz_env *e, struct fz_args *c)
{
    struct fz_rng *r = &e->rng;
    const uint64_t thread = CLONE_VM | CLONE_THREAD | CLONE_SIGHAND;
    const uint64_t known = thread | CLONE_FS | CLONE_FILES | CLONE_SYSVSEM | CLONE_SETTLS |
                           CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID | CLONE_CHILD_SETTID;
    c->a[0] = fz_chance(r, 1, 2) ? thread | (fz_next(r) & known) : fz_flags(e, known);
    c->a[1] = 0; /* fz_clone gives a stack the child can run on, unless: */
    if (fz_chance(r, 1, 8)) {
        c->a[1] = fz_chance(r, 1, 2) ? fz_ptr(e, FZ_OUT) : (uint64_t)e->scratch + 8;
        if (c->a[1] && !(c->a[1] & 15) && (c->a[0] & thread) == thread) {
            /* a thread on a stack that is not one: it faults, and kills the process */
            return lethal_roll(e) ? FZ_PLAN_LETHAL : FZ_PLAN_FILTER;
        }
    }
    c->a[2] = fz_chance(r, 1, 2) ? fz_buf(e, 4, 0) : fz_ptr(e, FZ_OUT);
    c->a[3] = fz_next(r); /* TLS: the child never uses it */
    c->a[4] = fz_chance(r, 1, 2) ? fz_buf(e, 4, 0) : fz_ptr(e, FZ_OUT);
    /* A new process (fork, vfork): its exit signal, the low byte, comes back to this life
     * when the child ends, at once; one that acts is a signal to itself. */
    uint64_t sig = c->a[0] & 0xff;
    if (!(c->a[0] & CLONE_THREAD) && sig_acts((int64_t)sig) && !sig_protected((long)sig)) {
        if (lethal_roll(e)) {
            return FZ_PLAN_LETHAL;
        }
        c->a[0] = (c->a[0] & ~0xffull) | (fz_chance(r, 1, 2) ? SIGCHLD : SIGURG);
    }
    return FZ_PLAN_CLONE;
}

static enum fz_plan shape_wait4(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_chance(&e->rng, 1, 3) ? (uint64_t)-1 : (uint64_t)fz_pid(e);
    c->a[1] = fz_chance(&e->rng, 1, 2) ? fz_buf(e, 4, 0) : fz_ptr(e, FZ_OUT);
    c->a[2] = fz_chance(&e->rng, 3, 4) ? fz_below(&e->rng, 2) : fz_flags(e, WNOHANG);
    c->a[3] = fz_chance(&e->rng, 7, 8) ? 0 : fz_ptr(e, FZ_OUT);
    return FZ_PLAN_CALL;
}

/* ---------------------------------------------------------------- prctl, isolation */

static uint64_t iso_flags(struct fz_env *e)
{
    struct fz_rng *r = &e->rng;
    const uint64_t en = PR_TASK_ISOLATION_ENABLE, strict = PR_TASK_ISOLATION_STRICT;
    switch (fz_below(r, 6)) {
    case 0:
        return 0;
    case 1:
        return en;
    case 2:
    case 3:
        return en | strict | PR_TASK_ISOLATION_SET_SIG(ISO_SAFE_SIG);
    case 4:
        return en | strict | PR_TASK_ISOLATION_SET_SIG(fz_below(r, 0x80));
    default:
        return fz_flags(e, 0x7f03);
    }
}

static enum fz_plan shape_prctl(struct fz_env *e, struct fz_args *c)
{
    static const uint64_t opts[] = {PR_SET_NAME,
                                    PR_GET_NAME,
                                    PR_SET_TASK_ISOLATION,
                                    PR_SET_TASK_ISOLATION,
                                    PR_GET_TASK_ISOLATION,
                                    0,
                                    ~0ull,
                                    1000};
    c->a[0] = opts[fz_below(&e->rng, 8)];
    switch (c->a[0]) {
    case PR_SET_NAME:
        c->a[1] = fz_chance(&e->rng, 1, 2) ? fz_buf(e, 16, 0) : fz_ptr(e, FZ_IN);
        break;
    case PR_GET_NAME:
        c->a[1] = fz_chance(&e->rng, 1, 2) ? fz_buf(e, 16, 0) : fz_ptr(e, FZ_OUT);
        break;
    case PR_SET_TASK_ISOLATION: {
        c->a[1] = iso_flags(e);
        uint64_t f = c->a[1], sig = PR_TASK_ISOLATION_GET_SIG(f);
        bool strict = (f & PR_TASK_ISOLATION_ENABLE) && (f & PR_TASK_ISOLATION_STRICT);
        if (strict && !(f & ~0x7f03ull) && sig != ISO_SAFE_SIG) {
            /* a violation would kill (or run an unknown handler): the next call is one */
            return lethal_roll(e) ? FZ_PLAN_LETHAL : FZ_PLAN_FILTER;
        }
        break;
    }
    default:
        break;
    }
    return FZ_PLAN_CALL;
}

/* ---------------------------------------------------------------- zerotick's calls */

/* A NUL-terminated path in scratch (from a pool of real and unreal programs: `which` 0-2
 * and 9, relative to /, name real ones; 10-15 corrupt dynamic ones), or hostile. */
uint64_t fz_program_path(struct fz_env *e, int *which)
{
    static const char *const paths[] = {
        "/bin/true", "/bin/hello", "/bin/fuzz", "/bin/notelf", "/bin/badelf", "/bin/nope", "",
        "/bin/", "/bin/true/x", "bin/true",
        /* corrupt dynamic programs (tools/mkbadelf): each refused, none ever runs */
        "/bin/dynbad-nointerp", "/bin/dynbad-unterminated", "/bin/dynbad-interpdyn",
        "/bin/dynbad-interpnotelf", "/bin/dynbad-overlap", "/bin/dynbad-pastend"};
    enum { NPATHS = sizeof(paths) / sizeof(paths[0]) };
    *which = (int)fz_below(&e->rng, NPATHS + 1);
    uint64_t p = fz_buf(e, 512, 0);
    char *s = (char *)(uintptr_t)p;
    if (*which < NPATHS) {
        strcpy(s, paths[*which]);
    } else {
        memset(s, 'a', 300); /* too long, then straddling the hole without a NUL */
        s[300] = 0;
        if (fz_chance(&e->rng, 1, 2)) {
            p = (uint64_t)(uintptr_t)e->scratch + FZ_SCRATCH - 5;
            memset((void *)(uintptr_t)p, 'b', 5);
        }
    }
    return fz_chance(&e->rng, 1, 8) ? fz_ptr(e, FZ_IN) : p;
}

static uint64_t str_in_scratch(struct fz_env *e, const char *s)
{
    uint64_t p = fz_buf(e, 32, 0);
    strcpy((char *)(uintptr_t)p, s);
    return p;
}

uint64_t fz_argv(struct fz_env *e, int which)
{
    struct fz_rng *r = &e->rng;
    uint64_t p = fz_buf(e, 8 * 8, 0), *v = (uint64_t *)(uintptr_t)p;
    if (which == 2) { /* /bin/fuzz: only as a victim, never as a runner */
        v[0] = str_in_scratch(e, "fuzz");
        v[1] = str_in_scratch(e, "-v");
        v[2] = 0;
        return p;
    }
    switch (fz_below(r, 6)) {
    case 0:
        return fz_ptr(e, FZ_IN);
    case 1: /* pointers with no NULL before the hole */
        p = (uint64_t)(uintptr_t)e->scratch + FZ_SCRATCH - 8 * (1 + fz_below(r, 8));
        for (uint64_t *w = (uint64_t *)(uintptr_t)p; (uint64_t)(uintptr_t)w < e->hole; w++) {
            *w = str_in_scratch(e, "x");
        }
        return p;
    case 2: /* an argument the kernel must refuse (a readable one would be printed) */
        v[0] = str_in_scratch(e, "hello"), v[1] = fz_ptr(e, FZ_IN), v[2] = 0;
        if (v[1] && v[1] < 0x0000008000000000ull) {
            v[1] = fz_chance(r, 1, 2) ? e->hole : e->none;
        }
        return p;
    default:
        v[0] = str_in_scratch(e, "hello");
        v[1] = str_in_scratch(e, fz_chance(r, 1, 2) ? "3" : "0");
        v[2] = 0;
        return p;
    }
}

static enum fz_plan shape_zt_spawn(struct fz_env *e, struct fz_args *c)
{
    int which;
    c->a[0] = fz_program_path(e, &which);
    c->a[1] = fz_argv(e, which);
    c->a[2] = fz_chance(&e->rng, 1, 3) ? 0 : fz_buf(e, sizeof(struct zt_spawn_attr), 4);
    if (fz_in_scratch(e, c->a[2], sizeof(struct zt_spawn_attr))) {
        struct zt_spawn_attr *attr = (struct zt_spawn_attr *)(uintptr_t)c->a[2];
        attr->affinity.bits[0] = fz_cpumask(e);
        for (int i = 1; i < ZT_CPUSET_WORDS; i++) {
            attr->affinity.bits[i] = fz_chance(&e->rng, 7, 8) ? 0 : fz_int(e);
        }
        attr->flags = fz_chance(&e->rng, 3, 4) ? 0 : (uint32_t)fz_int(e);
        attr->reserved = fz_chance(&e->rng, 3, 4) ? 0 : (uint32_t)fz_int(e);
    }
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_zt_buf_n(struct fz_env *e, struct fz_args *c)
{
    c->a[1] = fz_chance(&e->rng, 1, 2) ? fz_below(&e->rng, 70) : fz_len(e);
    c->a[0] = fz_chance(&e->rng, 1, 2) ? fz_buf(e, FZ_SCRATCH / 2, 0) : fz_ptr(e, FZ_OUT);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_zt_meminfo(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_chance(&e->rng, 1, 2) ? fz_buf(e, 32, 0) : fz_ptr(e, FZ_OUT);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_zt_isolstat(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = (uint64_t)(int64_t)fz_cpu(e);
    c->a[1] = fz_chance(&e->rng, 1, 2) ? fz_buf(e, 512, 0) : fz_ptr(e, FZ_OUT);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_zt_trace(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = (uint64_t)(int64_t)fz_cpu(e);
    c->a[1] = fz_chance(&e->rng, 1, 2) ? fz_buf(e, 4096, 0) : fz_ptr(e, FZ_OUT);
    c->a[2] = fz_chance(&e->rng, 1, 2) ? fz_below(&e->rng, 200) : fz_len(e);
    c->a[3] = fz_chance(&e->rng, 1, 2) ? fz_below(&e->rng, 2) : fz_int(e);
    return FZ_PLAN_CALL;
}

/* zt_hwnoise(duration_us, threshold_us, out, size): mostly short passes (IRQs are masked
 * for the whole duration on a dataplane CPU), the size mostly right. */
static enum fz_plan shape_zt_hwnoise(struct fz_env *e, struct fz_args *c)
{
    struct fz_rng *r = &e->rng;
    c->a[0] = fz_chance(r, 3, 4) ? fz_below(r, 2000) : fz_int(e);
    c->a[1] = fz_chance(r, 3, 4) ? fz_below(r, 20) : fz_int(e);
    c->a[2] = fz_chance(r, 1, 2) ? fz_buf(e, sizeof(struct zt_hwnoise), 0) : fz_ptr(e, FZ_OUT);
    c->a[3] = fz_chance(r, 3, 4) ? sizeof(struct zt_hwnoise) : fz_len(e);
    return FZ_PLAN_CALL;
}

/* zt_irqsoff(cpu, out, size, flags): CPUs around the machine's, the size mostly right; never
 * the reset flag alone (the records are the run's measurement: the runner prints them at
 * the end), but unknown flags with it. */
static enum fz_plan shape_zt_irqsoff(struct fz_env *e, struct fz_args *c)
{
    struct fz_rng *r = &e->rng;
    c->a[0] = (uint64_t)(int64_t)fz_cpu(e);
    c->a[1] = fz_chance(r, 1, 2) ? fz_buf(e, sizeof(struct zt_irqsoff), 0) : fz_ptr(e, FZ_OUT);
    c->a[2] = fz_chance(r, 3, 4) ? sizeof(struct zt_irqsoff) : fz_len(e);
    c->a[3] = fz_chance(r, 3, 4) ? 0 : fz_int(e) | 2;
    return FZ_PLAN_CALL;
}

/* zt_kcov(op, arg, size): every op and some that are not; buffers large enough for a bitmap
 * of the coverage kernel's text (it needs under 16 KiB) or hostile; sizes mostly right.  In a
 * coverage run, a fuzzed DISABLE is undone right after (worker.c). */
static enum fz_plan shape_zt_kcov(struct fz_env *e, struct fz_args *c)
{
    struct fz_rng *r = &e->rng;
    uint64_t op = fz_chance(r, 7, 8) ? fz_below(r, 6) : fz_int(e);
    bool info = op == ZT_KCOV_INFO, plain = op == ZT_KCOV_ENABLE || op == ZT_KCOV_DISABLE;
    c->a[0] = op;
    c->a[1] = plain && fz_chance(r, 3, 4) ? 0
              : fz_chance(r, 3, 4)        ? fz_buf(e, info ? sizeof(struct zt_kcov_info) : 16384, 0)
                                          : fz_ptr(e, FZ_OUT);
    c->a[2] = plain && fz_chance(r, 3, 4) ? 0
              : fz_chance(r, 3, 4)        ? (info ? sizeof(struct zt_kcov_info) : 16384)
                                          : fz_len(e);
    return FZ_PLAN_CALL;
}

/* zt_partition(list, len, op, flags): lists real and broken, ops and flags mostly valid, so
 * CPUs really move, go offline and come back under fire; the length sometimes lies. */
static enum fz_plan shape_zt_partition(struct fz_env *e, struct fz_args *c)
{
    static const char *const lists[] = {"1",   "2",     "3",     "1-3",       "0",        "1,3",
                                        "63",  "64",    "63-64", "122",       "123",      "511",
                                        "512", "0-511", "1-511", "1-511:2/3", "1-70:1/8", "1-",
                                        "x",   "none",  "3-1",   "1:1/2",     ""};
    struct fz_rng *r = &e->rng;
    const char *l = lists[fz_below(r, sizeof(lists) / sizeof(lists[0]))];
    c->a[0] = fz_chance(r, 1, 8) ? fz_ptr(e, FZ_IN) : str_in_scratch(e, l);
    c->a[1] = fz_chance(r, 3, 4) ? strlen(l) : fz_len(e);
    if (fz_chance(r, 1, 16)) { /* a long list: every other CPU from 1 up, 700-1600 bytes */
        char *p = (char *)(uintptr_t)fz_buf(e, 1700, 0);
        size_t n = 0, want = 700 + fz_below(r, 900);
        for (unsigned cpu = 1; n < want; cpu += 2) {
            n += (size_t)snprintf(p + n, 1700 - n, "%s%u", n ? "," : "", cpu);
        }
        c->a[0] = (uint64_t)(uintptr_t)p, c->a[1] = n;
    }
    c->a[2] = fz_chance(r, 7, 8) ? fz_below(r, 6) : fz_int(e);
    c->a[3] = fz_chance(r, 7, 8) ? ZT_PART_QUIET | fz_below(r, 8) : fz_int(e);
    return FZ_PLAN_CALL;
}

/* zt_claim(slot, dma_bytes, flags, out): slots around the 32 transports and the PCI functions
 * after them, DMA sizes around the page and ZT_DMA_MAX edges, the flags a driver passes (what
 * is claimed is released at the latest when the life ends: the kernel resets the device
 * first); `out` room for the version-2 result. */
static enum fz_plan shape_zt_claim(struct fz_env *e, struct fz_args *c)
{
    static const uint64_t sizes[] = {4096, 8192, 65536, ZT_DMA_MAX, ZT_DMA_MAX + 4096, 4095, 0};
    static const uint64_t flags[] = {ZT_CLAIM_UNCONFINED_DMA, ZT_CLAIM_UNCONFINED_DMA | ZT_CLAIM_V2,
                                     ZT_CLAIM_V2, 0};
    c->a[0] = fz_chance(&e->rng, 3, 4) ? fz_below(&e->rng, 70) : fz_int(e);
    if (e->device_slots && fz_chance(&e->rng, 1, 2)) { /* a slot with a device: claimable */
        for (c->a[0] = fz_below(&e->rng, 64); !(e->device_slots >> c->a[0] & 1);) {
            c->a[0] = (c->a[0] + 1) % 64;
        }
    }
    c->a[1] = fz_chance(&e->rng, 3, 4) ? sizes[fz_below(&e->rng, 7)] : fz_len(e);
    c->a[2] = fz_chance(&e->rng, 7, 8) ? flags[fz_below(&e->rng, 4)] : fz_flags(e, 0);
    c->a[3] = fz_chance(&e->rng, 1, 2) ? fz_buf(e, sizeof(struct zt_claim), 0) : fz_ptr(e, FZ_OUT);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_zt_release(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_chance(&e->rng, 3, 4) ? fz_below(&e->rng, 70) : fz_int(e);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_filter(struct fz_env *e, struct fz_args *c)
{
    return FZ_PLAN_FILTER; /* zt_poweroff: the end of every test */
}

static enum fz_plan shape_noargs(struct fz_env *e, struct fz_args *c)
{
    return FZ_PLAN_CALL; /* the mixed-pool arguments stay: the kernel must ignore them */
}

static const struct {
    const char *name;
    fz_shape_fn fn;
} shapers[] = {
    {"read", shape_read},
    {"write", shape_write},
    {"ioctl", shape_ioctl},
    {"uname", shape_uname},
    {"getcpu", shape_getcpu},
    {"set_tid_address", shape_set_tid_address},
    {"nanosleep", shape_nanosleep},
    {"clock_nanosleep", shape_clock_nanosleep},
    {"clock_gettime", shape_clock_gettime},
    {"futex", shape_futex},
    {"sched_setaffinity", shape_sched_setaffinity},
    {"sched_getaffinity", shape_sched_getaffinity},
    {"sched_yield", shape_noargs},
    {"getpid", shape_noargs},
    {"getppid", shape_noargs},
    {"gettid", shape_noargs},
    {"getuid", shape_noargs},
    {"geteuid", shape_noargs},
    {"getgid", shape_noargs},
    {"getegid", shape_noargs},
    {"setsid", shape_noargs},
    {"kill", shape_kill},
    {"tgkill", shape_tgkill},
    {"tkill", shape_tkill},
    {"rt_sigqueueinfo", shape_rt_sigqueueinfo},
    {"rt_tgsigqueueinfo", shape_rt_tgsigqueueinfo},
    {"rt_sigaction", shape_rt_sigaction},
    {"rt_sigprocmask", shape_rt_sigprocmask},
    {"rt_sigreturn", shape_rt_sigreturn},
    {"mmap", shape_mmap},
    {"munmap", shape_munmap},
    {"brk", shape_brk},
    {"exit", shape_exit},
    {"exit_group", shape_exit_group},
    {"clone", shape_clone},
    {"wait4", shape_wait4},
    {"prctl", shape_prctl},
    {"zt_spawn", shape_zt_spawn},
    {"zt_tasks", shape_zt_buf_n},
    {"zt_cpus", shape_zt_buf_n},
    {"zt_poweroff", shape_filter},
    {"zt_meminfo", shape_zt_meminfo},
    {"zt_isolstat", shape_zt_isolstat},
    {"zt_trace", shape_zt_trace},
    {"zt_partition", shape_zt_partition},
    {"zt_hwnoise", shape_zt_hwnoise},
    {"zt_irqsoff", shape_zt_irqsoff},
    {"zt_kcov", shape_zt_kcov},
    {"zt_devices", shape_zt_buf_n},
    {"zt_claim", shape_zt_claim},
    {"zt_release", shape_zt_release},
};

fz_shape_fn fz_shaper(const char *name)
{
    for (size_t i = 0; i < sizeof(shapers) / sizeof(shapers[0]); i++) {
        if (!strcmp(shapers[i].name, name)) {
            return shapers[i].fn;
        }
    }
    fz_shape_fn fn = fz_file_shaper(name);
    fn = fn ? fn : fz_abi_shaper(name);
    return fn ? fn : fz_proc_shaper(name);
}
