/*
 * cpumask.h — sets of CPUs (MAX_CPUS bits, a few 64-bit words) and Linux "cpulist" text
 * (0-3,7).
 *
 * A cpumask_t is a small value type: assign it, pass it and return it like an integer, and
 * combine sets with the functions below (cpumask_and, cpumask_or, ...), which the compiler
 * inlines into a loop over CPUMASK_WORDS words.  Bit N of the set is bit N % 64 of word N / 64.
 *
 * Shared sets (cpus_online, a task's affinity) change one CPU at a time with atomic word
 * operations (cpumask_set_atomic, cpumask_clear_atomic) and are read with cpumask_load, which
 * reads each word whole (relaxed or acquire, per word): a reader sees every CPU's bit as it
 * was at some moment, never a torn word, but two words of one set are not read as one
 * snapshot.  Writers of a whole set at once (cpumask_store) rely on a lock the readers that
 * need a consistent set also take (sched.c says which).
 *
 * cpulist_parse/cpulist_format are pure functions (kernel/cpumask.c), unit-tested on the host.
 */
#ifndef ZT_KERNEL_CPUMASK_H
#define ZT_KERNEL_CPUMASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most CPUs the kernel supports: QEMU virt's GICv3 limit (uapi/zt_syscall.h says so to
 * user space as ZT_MAX_CPUS; ZT_MAX_CPUS_BUILD is for tools/percpu's measurement build). */
#ifdef ZT_MAX_CPUS_BUILD
#define MAX_CPUS ZT_MAX_CPUS_BUILD
#else
#define MAX_CPUS 512
#endif
#define CPUMASK_WORDS (MAX_CPUS / 64)

typedef struct {
    uint64_t w[CPUMASK_WORDS];
} cpumask_t;

#define CPUMASK_NONE ((cpumask_t){{0}})

/*
 * A static array with one element per CPU is declared PERCPU (`static struct x xs[MAX_CPUS]
 * PERCPU;`): the linker gathers them between __percpu_start and __percpu_end (linker.ld), so
 * the kernel can say what a CPU costs in static memory (smp_percpu_static_bytes).  Zeroed
 * like the rest of .bss.  tools/percpu checks that nothing else grows with MAX_CPUS.
 */
#ifdef ZT_HOST
#define PERCPU
#else
#define PERCPU __attribute__((section(".bss.percpu")))
#endif

/* The set {cpu} (empty if cpu >= MAX_CPUS). */
static inline cpumask_t cpumask_of(unsigned cpu)
{
    cpumask_t m = CPUMASK_NONE;
    if (cpu < MAX_CPUS) {
        m.w[cpu / 64] = 1ull << (cpu % 64);
    }
    return m;
}

/* CPUs 0-63 from one 64-bit word (bit N = CPU N), as older interfaces give them. */
static inline cpumask_t cpumask_from_u64(uint64_t low)
{
    cpumask_t m = CPUMASK_NONE;
    m.w[0] = low;
    return m;
}

static inline bool cpumask_has(cpumask_t m, unsigned cpu)
{
    return cpu < MAX_CPUS && (m.w[cpu / 64] >> (cpu % 64) & 1) != 0;
}

static inline void cpumask_set(cpumask_t *m, unsigned cpu)
{
    if (cpu < MAX_CPUS) {
        m->w[cpu / 64] |= 1ull << (cpu % 64);
    }
}

static inline void cpumask_clear(cpumask_t *m, unsigned cpu)
{
    if (cpu < MAX_CPUS) {
        m->w[cpu / 64] &= ~(1ull << (cpu % 64));
    }
}

static inline bool cpumask_empty(cpumask_t m)
{
    uint64_t any = 0;
    for (unsigned i = 0; i < CPUMASK_WORDS; i++) {
        any |= m.w[i];
    }
    return any == 0;
}

static inline bool cpumask_equal(cpumask_t a, cpumask_t b)
{
    uint64_t diff = 0;
    for (unsigned i = 0; i < CPUMASK_WORDS; i++) {
        diff |= a.w[i] ^ b.w[i];
    }
    return diff == 0;
}

static inline cpumask_t cpumask_and(cpumask_t a, cpumask_t b)
{
    for (unsigned i = 0; i < CPUMASK_WORDS; i++) {
        a.w[i] &= b.w[i];
    }
    return a;
}

static inline cpumask_t cpumask_or(cpumask_t a, cpumask_t b)
{
    for (unsigned i = 0; i < CPUMASK_WORDS; i++) {
        a.w[i] |= b.w[i];
    }
    return a;
}

/* a without the CPUs of b (a & ~b). */
static inline cpumask_t cpumask_andnot(cpumask_t a, cpumask_t b)
{
    for (unsigned i = 0; i < CPUMASK_WORDS; i++) {
        a.w[i] &= ~b.w[i];
    }
    return a;
}

static inline bool cpumask_intersects(cpumask_t a, cpumask_t b)
{
    return !cpumask_empty(cpumask_and(a, b));
}

/*
 * Number of CPUs in m.  Not __builtin_popcountll: with -mgeneral-regs-only GCC turns that into
 * a call to libgcc's __popcountdi2, and the kernel links without libgcc.
 */
static inline unsigned cpumask_weight(cpumask_t m)
{
    unsigned n = 0;
    for (unsigned i = 0; i < CPUMASK_WORDS; i++) {
        for (uint64_t w = m.w[i]; w != 0; w &= w - 1) {
            n++;
        }
    }
    return n;
}

/* Lowest CPU of m at or above `from`; MAX_CPUS when there is none. */
static inline unsigned cpumask_next(cpumask_t m, unsigned from)
{
    for (unsigned i = from / 64; i < CPUMASK_WORDS; i++) {
        uint64_t w = m.w[i];
        if (i == from / 64) {
            w &= ~0ull << (from % 64);
        }
        if (w) {
            return i * 64 + (unsigned)__builtin_ctzll(w);
        }
    }
    return MAX_CPUS;
}

/* Lowest CPU in m; MAX_CPUS when m is empty. */
static inline unsigned cpumask_first(cpumask_t m)
{
    return cpumask_next(m, 0);
}

/* Every CPU of m in ascending order (m is evaluated once per step: pass a variable). */
#define for_each_cpu(cpu, m)                                                                       \
    for (unsigned cpu = cpumask_first(m); cpu < MAX_CPUS; cpu = cpumask_next((m), cpu + 1))

/* Is m exactly one CPU? */
static inline bool cpumask_is_single(cpumask_t m)
{
    unsigned first = cpumask_first(m);
    return first < MAX_CPUS && cpumask_next(m, first + 1) == MAX_CPUS;
}

/* All CPUs 0 .. n-1 (n is clamped to MAX_CPUS). */
static inline cpumask_t cpumask_first_n(unsigned n)
{
    cpumask_t m = CPUMASK_NONE;
    for (unsigned i = 0; i < CPUMASK_WORDS; i++) {
        unsigned lo = i * 64;
        m.w[i] = n >= lo + 64 ? ~0ull : n > lo ? (1ull << (n - lo)) - 1 : 0;
    }
    return m;
}

/* ---- shared sets: one CPU changes at a time, readers take each word whole ---- */

/* Read a shared set: each word with an acquire load. */
static inline cpumask_t cpumask_load(const cpumask_t *m)
{
    cpumask_t v;
    for (unsigned i = 0; i < CPUMASK_WORDS; i++) {
        v.w[i] = __atomic_load_n(&m->w[i], __ATOMIC_ACQUIRE);
    }
    return v;
}

/* Write a whole shared set (word by word, release): the writer's lock orders it. */
static inline void cpumask_store(cpumask_t *m, cpumask_t v)
{
    for (unsigned i = 0; i < CPUMASK_WORDS; i++) {
        __atomic_store_n(&m->w[i], v.w[i], __ATOMIC_RELEASE);
    }
}

/* Is `cpu` in the shared set m?  One word read. */
static inline bool cpumask_test_atomic(const cpumask_t *m, unsigned cpu)
{
    return cpu < MAX_CPUS && (__atomic_load_n(&m->w[cpu / 64], __ATOMIC_ACQUIRE) >> (cpu % 64) & 1);
}

/* Add or remove one CPU of a shared set (sequentially consistent, like the read-modify-writes
 * on whole 64-bit sets before). */
static inline void cpumask_set_atomic(cpumask_t *m, unsigned cpu)
{
    if (cpu < MAX_CPUS) {
        __atomic_fetch_or(&m->w[cpu / 64], 1ull << (cpu % 64), __ATOMIC_SEQ_CST);
    }
}

static inline void cpumask_clear_atomic(cpumask_t *m, unsigned cpu)
{
    if (cpu < MAX_CPUS) {
        __atomic_fetch_and(&m->w[cpu / 64], ~(1ull << (cpu % 64)), __ATOMIC_SEQ_CST);
    }
}

/*
 * Parse a Linux cpulist: comma-separated items, each "N", "N-M" or "N-M:USED/GROUP" (Linux's
 * stride form: of each GROUP CPUs starting at N, take the first USED; 1 <= USED <= GROUP),
 * or the word "none" for the empty set (what cpulist_format writes for it).  Decimal numbers
 * only, no sign, no whitespace.  `len` bytes of `s` are read (it need not be NUL-terminated;
 * a NUL inside them is just a bad character).
 * Returns 0 and sets *out; -ERANGE if a CPU number is >= MAX_CPUS (and sets *bad_cpu to the
 * first such number, when bad_cpu is not NULL; ~0u for one too big for an unsigned); -EINVAL
 * for anything malformed, including an empty list.  -EINVAL wins when both apply.  *out is
 * left untouched on error.  Time is linear in the text and the CPUs named.
 */
int cpulist_parse(const char *s, size_t len, cpumask_t *out, unsigned *bad_cpu);

/*
 * Write m in Linux cpulist form, ranges collapsed ("0,2-5", "0-1"); "none" for an empty set.
 * Always NUL-terminates when size > 0 (buf may be NULL when size is 0); a truncated text is
 * the first size-1 characters of the full one.  Returns the length the full text needs (like
 * snprintf), so a return >= size means it was truncated.  No set needs more than
 * CPULIST_MAX_LEN bytes with the NUL (the longest, 1293 characters, is two CPUs of every
 * three: "0-1,3-4,...").
 */
int cpulist_format(cpumask_t m, char *buf, size_t size);
#define CPULIST_MAX_LEN 1536

#endif
