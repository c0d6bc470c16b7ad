/* SPDX-License-Identifier: MIT */
/*
 * pools.c — hostile argument values for /bin/fuzz, and the arena they point into.
 *
 * Pointers come from the places a kernel must refuse (its text and linear map, its stack
 * window, non-canonical and tagged addresses, the user VA's top, the counter pages it maps
 * read-only, a hole, a PROT_NONE page, a read-only page for writes, buffers that straddle a
 * hole) and from valid scratch memory full of random bytes, so calls also get past their
 * checks.  Lengths, integers and flags mix the edges (0, -1, 2^31, 2^63, page +- 1) with
 * small values and every single bit.  Nothing here ever points at memory the life itself
 * depends on (the protected ranges): the kernel may write through any pointer it is given.
 */
#include "fuzz.h"

#include <string.h>

#define KERNEL_TEXT    0xffffff8040200000ull /* the kernel image in the linear map */
#define LINEAR_MAP     0xffffff8000000000ull /* VA = PA + this, 256 GiB */
#define KSTACK_WINDOW  0xffffffc000000000ull /* 32 KiB slots: 16 KiB stack, 16 KiB guard */
#define USER_VA_TOP    0x0000008000000000ull
#define USER_STACK_TOP 0x0000007ffff00000ull

static uint64_t pick(struct fz_env *e, const uint64_t *v, int n)
{
    return v[fz_below(&e->rng, (uint64_t)n)];
}

bool fz_in_scratch(const struct fz_env *e, uint64_t p, uint64_t bytes)
{
    uint64_t lo = (uint64_t)(uintptr_t)e->scratch;
    return p >= lo && bytes <= FZ_SCRATCH && p - lo <= FZ_SCRATCH - bytes;
}

/* Where a mask argument may be read from: scratch or the mask slots (8 bytes). */
static bool mask_readable(const struct fz_env *e, uint64_t p)
{
    uint64_t slots = (uint64_t)(uintptr_t)e->masks;
    return (fz_in_scratch(e, p, 8) || (p >= slots && p < slots + sizeof(e->masks))) && !(p & 7);
}

uint64_t fz_temp_mask(struct fz_env *e, unsigned hostile_den)
{
    uint64_t p = fz_buf(e, 8, hostile_den);
    if (fz_in_scratch(e, p, 8)) {
        uint64_t *slot = &e->masks[e->nmasks++ % FZ_PROG_CALLS];
        *slot = fz_next(&e->rng) & ~ZT_SIGBIT(SIGALRM);
        return (uint64_t)(uintptr_t)slot;
    }
    return p && p < 0x0000008000000000ull ? e->hole : p; /* unreadable: refused before a wait */
}

uint64_t fz_temp_mask_of(const struct fz_env *e, const struct fz_args *c)
{
    uint64_t p = 0;
    if (c->nr == SYS_ppoll) {
        p = c->a[3];
    } else if (c->nr == SYS_rt_sigsuspend) {
        p = c->a[0];
    } else if (c->nr == SYS_pselect6 && fz_in_scratch(e, c->a[5], 16) && !(c->a[5] & 7)) {
        p = *(const uint64_t *)(uintptr_t)c->a[5]; /* {const sigset_t *ss, size_t ss_len} */
    }
    return mask_readable(e, p) ? *(const uint64_t *)(uintptr_t)p : 0;
}

bool fz_hits_protected(const struct fz_env *e, uint64_t lo, uint64_t len)
{
    uint64_t hi = lo + len;
    if (len == 0) {
        len = 1;
        hi = lo + 1;
    }
    if (hi < lo) {
        return true;
    }
    for (int i = 0; i < e->nprot; i++) {
        /* page granularity: the kernel rounds ranges out to whole pages */
        uint64_t plo = e->prot[i].lo & ~(FZ_PAGE - 1), phi = e->prot[i].hi;
        if (lo < phi && (hi + FZ_PAGE - 1) > plo) {
            return true;
        }
    }
    return false;
}

/* A kernel address: text, linear map (RAM and MMIO), the stack window (stacks and guards). */
static uint64_t kernel_addr(struct fz_env *e)
{
    struct fz_rng *r = &e->rng;
    switch (fz_below(r, 5)) {
    case 0:
        return KERNEL_TEXT + fz_below(r, 1u << 20);
    case 1:
        return LINEAR_MAP + 0x40000000ull + (fz_below(r, 512ull << 20) & ~7ull); /* RAM */
    case 2:
        return LINEAR_MAP + fz_below(r, 1ull << 38); /* anywhere, MMIO included */
    case 3:
        return KSTACK_WINDOW + fz_below(r, 256) * 0x8000ull + fz_below(r, 0x8000) - 64;
    default:
        return 0xfffffffffffff000ull + fz_below(r, 4096);
    }
}

/* Addresses no translation accepts, or that only look like user addresses. */
static uint64_t odd_addr(struct fz_env *e)
{
    static const uint64_t v[] = {
        USER_VA_TOP,
        USER_VA_TOP - 1,
        USER_VA_TOP - 8,
        USER_VA_TOP - 4096,
        0x0000010000000000ull,
        0x0001000000000000ull,
        0x8000000000000000ull,
        0x00ff000000400000ull,
        0xff00000000400000ull,
        0x7fffffffffffffffull,
        0xffffff7ffffff000ull,
        USER_STACK_TOP,
        ZT_COUNTERS_VA,
        ZT_COUNTERS_VA + 8,
        ZT_COUNTERS_VA + 4095,
        0x1000,
        0x10,
        1,
    };
    uint64_t p = pick(e, v, (int)(sizeof(v) / sizeof(v[0])));
    if (fz_chance(&e->rng, 1, 4)) { /* a tagged copy of a valid pointer */
        p = ((uint64_t)(uintptr_t)e->scratch + fz_below(&e->rng, FZ_SCRATCH)) |
            (fz_next(&e->rng) << 56);
    }
    return p;
}

uint64_t fz_ptr(struct fz_env *e, enum fz_dir dir)
{
    struct fz_rng *r = &e->rng;
    uint64_t scratch = (uint64_t)(uintptr_t)e->scratch;
    switch (fz_below(r, 16)) {
    case 0:
        return 0;
    case 1:
    case 2:
    case 3:
    case 4:
        return fz_buf(e, 8 * (1 + fz_below(r, 64)), 0);
    case 5:
        return scratch + FZ_SCRATCH - 1 - fz_below(r, 16); /* straddles the hole after it */
    case 6:
        return e->hole + fz_below(r, FZ_PAGE);
    case 7:
        return (dir == FZ_OUT ? e->ro : e->none) + fz_below(r, FZ_PAGE);
    case 8:
        return dir == FZ_IN ? 0x400000 + fz_below(r, 64 * 1024) : e->ro; /* own text */
    case 9:
    case 10:
        return kernel_addr(e);
    case 11:
    case 12:
        return odd_addr(e);
    case 13:
        if (e->nmaps) {
            const struct fz_range *m = &e->maps[fz_below(r, (uint64_t)e->nmaps)];
            return m->lo + fz_below(r, m->hi - m->lo);
        }
        return scratch + 1 + fz_below(r, FZ_SCRATCH - 8); /* misaligned most of the time */
    case 14:
        return FZ_PLAY_BASE + fz_below(r, FZ_PLAY_SIZE);
    default:
        return fz_next(r);
    }
}

uint64_t fz_buf(struct fz_env *e, uint64_t bytes, unsigned hostile_den)
{
    if (hostile_den && fz_chance(&e->rng, 1, hostile_den)) {
        return fz_ptr(e, FZ_OUT);
    }
    if (bytes > FZ_SCRATCH) {
        bytes = FZ_SCRATCH;
    }
    uint64_t off = fz_below(&e->rng, FZ_SCRATCH - bytes + 1) & ~7ull;
    return (uint64_t)(uintptr_t)e->scratch + off;
}

uint64_t fz_len(struct fz_env *e)
{
    static const uint64_t v[] = {
        0,        1,          2,          7,          8,          15,          16,
        63,       64,         255,        4095,       4096,       4097,        8192,
        65536,    1ull << 20, 1ull << 31, 1ull << 32, 1ull << 39, 1ull << 63,  ~0ull,
        -4096ull, -4095ull,   -2ull,      0x7fffffff, 0x80000000, USER_VA_TOP,
    };
    if (fz_chance(&e->rng, 1, 3)) {
        return fz_below(&e->rng, 512);
    }
    if (fz_chance(&e->rng, 1, 8)) {
        return fz_next(&e->rng);
    }
    return pick(e, v, (int)(sizeof(v) / sizeof(v[0])));
}

uint64_t fz_int(struct fz_env *e)
{
    static const uint64_t v[] = {0,          1,          2,           3,          -1ull,
                                 0x7fffffff, 0x80000000, 0xffffffff,  1ull << 32, 1ull << 63,
                                 -2ull,      ~0ull >> 1, 0x100000000, 4,          128};
    switch (fz_below(&e->rng, 4)) {
    case 0:
        return fz_below(&e->rng, 64);
    case 1:
        return 1ull << fz_below(&e->rng, 64);
    case 2:
        return fz_next(&e->rng) >> fz_below(&e->rng, 64);
    default:
        return pick(e, v, (int)(sizeof(v) / sizeof(v[0])));
    }
}

uint64_t fz_flags(struct fz_env *e, uint64_t valid)
{
    switch (fz_below(&e->rng, 6)) {
    case 0:
        return 0;
    case 1:
        return 1ull << fz_below(&e->rng, 64); /* every single bit, in time */
    case 2:
        return ~0ull;
    case 3:
        return valid | (1ull << fz_below(&e->rng, 64));
    default:
        return fz_next(&e->rng) & valid;
    }
}

int fz_cpu(struct fz_env *e)
{
    static const int v[] = {-1, 64, 65, 1 << 20, -2147483647 - 1};
    if (fz_chance(&e->rng, 1, 6)) {
        return v[fz_below(&e->rng, 5)];
    }
    return (int)fz_below(&e->rng, (uint64_t)e->ncpus + 1); /* ncpus itself: one past */
}

uint64_t fz_cpumask(struct fz_env *e)
{
    struct fz_rng *r = &e->rng;
    switch (fz_below(r, 8)) {
    case 0:
        return 0;
    case 1:
        return ~0ull;
    case 2:
        return 1ull << fz_below(r, 64);
    case 3:
    case 4:
        if (e->dataplane) {
            uint64_t m = fz_next(r) & e->dataplane;
            return m ? m : e->dataplane;
        }
        return 1ull << fz_below(r, (uint64_t)e->ncpus);
    case 5:
        return 1ull << fz_below(r, (uint64_t)e->ncpus);
    default:
        return fz_next(r) & e->online;
    }
}

int64_t fz_pid(struct fz_env *e)
{
    struct fz_rng *r = &e->rng;
    switch (fz_below(r, 10)) {
    case 0:
        return 0;
    case 1:
    case 2:
        return e->pid;
    case 3:
        return e->waker_tid;
    case 4:
    case 5:
        if (e->nchildren) {
            return e->children[fz_below(r, (uint64_t)e->nchildren)];
        }
        return e->pid;
    case 6:
        return 1;
    case 7:
        return (int64_t)(2 + fz_below(r, 400)); /* someone, maybe */
    case 8:
        return -(int64_t)fz_below(r, 3);
    default:
        return (int32_t)fz_int(e);
    }
}

int fz_sig(struct fz_env *e)
{
    if (fz_chance(&e->rng, 1, 8)) {
        return (int)fz_int(e);
    }
    return (int)fz_below(&e->rng, 66);
}

/* A value for an argument whose meaning the fuzzer does not know. */
uint64_t fz_any(struct fz_env *e)
{
    switch (fz_below(&e->rng, 5)) {
    case 0:
    case 1:
        return fz_ptr(e, FZ_OUT);
    case 2:
        return fz_len(e);
    case 3:
        return (uint64_t)fz_pid(e);
    default:
        return fz_int(e);
    }
}

void fz_scratch_refill(struct fz_env *e)
{
    uint64_t *w = (uint64_t *)e->scratch;
    for (uint64_t i = 0; i < FZ_SCRATCH / 8; i++) {
        switch (fz_below(&e->rng, 8)) {
        case 0:
            w[i] = 0;
            break;
        case 1:
            w[i] = fz_ptr(e, FZ_OUT); /* pointers to pointers: argv, iovecs */
            break;
        case 2:
            w[i] = fz_int(e);
            break;
        default:
            w[i] = fz_next(&e->rng);
        }
    }
}

static void protect(struct fz_env *e, uint64_t lo, uint64_t hi)
{
    if (e->nprot < FZ_MAX_PROT) {
        e->prot[e->nprot++] = (struct fz_range){lo, hi};
    }
}

static uint64_t map_or_die(uint64_t at, uint64_t bytes, int prot)
{
    long r =
        zt_mmap((void *)(uintptr_t)at, bytes, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (r < 0) {
        zt_exit_group(3); /* no memory for the arena: the runner counts the life as failed */
    }
    return (uint64_t)r;
}

/*
 * Lay out the arena: [scratch 16 pages][hole][ro][none][zeros page][hole], made as one
 * mapping then carved (so the holes are real holes between mapped pages), at a fixed
 * address far below the mmap area, where no mmap without MAP_FIXED fills the holes (a
 * MAP_FIXED there is steered away: the arena is protected); and protect the
 * life's own memory: image and heap, main stack, the arena (the waker's stack is added by
 * the caller).
 */
void fz_arena_init(struct fz_env *e)
{
    const uint64_t pages = FZ_SCRATCH / FZ_PAGE + 5;
    uint64_t base = map_or_die(FZ_ARENA_BASE, pages * FZ_PAGE, PROT_READ | PROT_WRITE);
    e->scratch = (uint8_t *)(uintptr_t)base;
    e->hole = base + FZ_SCRATCH;
    e->ro = e->hole + FZ_PAGE;
    e->none = e->ro + FZ_PAGE;
    e->zeros = e->none + FZ_PAGE + FZ_PAGE - 64; /* 64 NUL bytes, then the second hole */
    zt_munmap((void *)(uintptr_t)e->hole, FZ_PAGE);
    zt_munmap((void *)(uintptr_t)e->ro, 2 * FZ_PAGE);
    zt_mmap((void *)(uintptr_t)e->ro, FZ_PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
            -1, 0);
    zt_mmap((void *)(uintptr_t)e->none, FZ_PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
            -1, 0);
    memset((void *)(uintptr_t)(e->none + FZ_PAGE), 0, FZ_PAGE);
    zt_munmap((void *)(uintptr_t)(e->none + 2 * FZ_PAGE), FZ_PAGE);
    e->brk0 = ((uint64_t)zt_brk(NULL) + FZ_PAGE - 1) & ~(FZ_PAGE - 1);
    protect(e, 0x400000, e->brk0 + 64 * FZ_PAGE); /* image, then heap room for stdio */
    protect(e, USER_STACK_TOP - (256 << 10), USER_STACK_TOP);
    protect(e, base, base + pages * FZ_PAGE);
    fz_scratch_refill(e);
}
