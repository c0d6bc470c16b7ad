/* SPDX-License-Identifier: MIT */
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
 * cpulist_parse/cpulist_format are pure functions (kernel/lib/cpumask.c), unit-tested on the host.
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
 * A static array with one element per CPU is followed by PERCPU_ARRAY(name): its size goes
 * into a table the linker gathers between __percpu_sizes_start and __percpu_sizes_end
 * (linker.ld), so the kernel can say what a CPU costs in static memory
 * (arch_boot_info.percpu_bytes).  The array itself stays in .bss beside its neighbours, where
 * the compiler reaches it from a shared anchor: a section of its own would cost an address
 * computation at every use.  tools/percpu checks that nothing else grows with MAX_CPUS.
 */
/*
 * &arr[cpu] for a per-CPU array, with the array's address computed once.  A per-CPU array of
 * more than 4 KiB (512 elements make most of them that) gets no section anchor from GCC, which
 * then rebuilds "arr + offset of the field" from the symbol for every field it touches (two
 * instructions each); hiding the base in a register makes it one address and plain offsets.
 */
#define percpu_elem(arr, cpu)                                                                      \
    ({                                                                                             \
        __typeof__(&(arr)[0]) base_ = (arr);                                                       \
        __asm__("" : "+r"(base_));                                                                 \
        &base_[(cpu)];                                                                             \
    })

#ifdef ZT_HOST
#define PERCPU_ARRAY(name) _Static_assert(sizeof(name) % MAX_CPUS == 0, #name " per CPU")
#else
#define PERCPU_ARRAY(name)                                                                         \
    static const unsigned long percpu_size_##name                                                  \
        __attribute__((section(".rodata.percpu_sizes"), used)) = sizeof(name)
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

/*
 * The questions about a set are macros over functions of its words, so a set in memory (a
 * global, a task's affinity) is read where it lies and never copied: cpumask_has(cpus_online,
 * 3) is one load.  Any expression of type cpumask_t may be passed, a call's result too (its
 * words live until the end of the full expression, C11 6.2.4).
 */
#define cpumask_has(m, cpu) cpumask_has_w((m).w, (cpu))

static inline bool cpumask_has_w(const uint64_t *w, unsigned cpu)
{
    return cpu < MAX_CPUS && (w[cpu / 64] >> (cpu % 64) & 1) != 0;
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

#define cpumask_empty(m) cpumask_empty_w((m).w)

static inline bool cpumask_empty_w(const uint64_t *w)
{
    for (unsigned i = 0; i < CPUMASK_WORDS; i++) {
        if (w[i]) {
            return false;
        }
    }
    return true;
}

#define cpumask_equal(a, b) cpumask_equal_w((a).w, (b).w)

static inline bool cpumask_equal_w(const uint64_t *a, const uint64_t *b)
{
    for (unsigned i = 0; i < CPUMASK_WORDS; i++) {
        if (a[i] != b[i]) {
            return false;
        }
    }
    return true;
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

#define cpumask_intersects(a, b) cpumask_intersects_w((a).w, (b).w)

static inline bool cpumask_intersects_w(const uint64_t *a, const uint64_t *b)
{
    for (unsigned i = 0; i < CPUMASK_WORDS; i++) {
        if (a[i] & b[i]) {
            return true;
        }
    }
    return false;
}

/*
 * Number of CPUs in m.  Not __builtin_popcountll: with -mgeneral-regs-only GCC turns that into
 * a call to libgcc's __popcountdi2, and the kernel links without libgcc.
 */
#define cpumask_weight(m) cpumask_weight_w((m).w)

static inline unsigned cpumask_weight_w(const uint64_t *w)
{
    unsigned n = 0;
    for (unsigned i = 0; i < CPUMASK_WORDS; i++) {
        for (uint64_t x = w[i]; x != 0; x &= x - 1) {
            n++;
        }
    }
    return n;
}

/* Lowest CPU of m at or above `from`; MAX_CPUS when there is none. */
#define cpumask_next(m, from) cpumask_next_w((m).w, (from))

static inline unsigned cpumask_next_w(const uint64_t *w, unsigned from)
{
    for (unsigned i = from / 64; i < CPUMASK_WORDS; i++) {
        uint64_t x = w[i];
        if (i == from / 64) {
            x &= ~0ull << (from % 64);
        }
        if (x) {
            return i * 64 + (unsigned)__builtin_ctzll(x);
        }
    }
    return MAX_CPUS;
}

/* Lowest CPU in m; MAX_CPUS when m is empty. */
#define cpumask_first(m) cpumask_next_w((m).w, 0)

/* Every CPU of m in ascending order (m is evaluated once per step: pass a variable). */
#define for_each_cpu(cpu, m)                                                                       \
    for (unsigned cpu = cpumask_first(m); cpu < MAX_CPUS; cpu = cpumask_next((m), cpu + 1))

/* Is m exactly one CPU? */
#define cpumask_is_single(m) cpumask_is_single_w((m).w)

static inline bool cpumask_is_single_w(const uint64_t *w)
{
    unsigned first = cpumask_next_w(w, 0);
    return first < MAX_CPUS && cpumask_next_w(w, first + 1) == MAX_CPUS;
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

/* The hot paths' questions about shared sets, word by word with relaxed loads and early
 * exits, never a copy of a whole set (a placement asks them at every wakeup).  They read only
 * the words that can hold an existing CPU: every set they are given (the CPU sets, a task's
 * affinity, which is always cut to online CPUs) holds existing CPUs only, so on a machine of
 * up to 64 CPUs each is a one-word question. */

/* Words of a set that can hold an existing CPU: (ncpus + 63) / 64 once the machine is known
 * (cpumask_set_machine, at boot), CPUMASK_WORDS until then. */
extern unsigned cpumask_words_used;
/* Boot, before any CPU runs: the machine has `ncpus` CPUs. */
void cpumask_set_machine(unsigned ncpus);

/* The one CPU in a & b; MAX_CPUS if none, MAX_CPUS + 1 if several. */
static inline unsigned cpumask_only_of_and(const cpumask_t *a, const cpumask_t *b)
{
    unsigned found = MAX_CPUS;
    for (unsigned i = 0; i < cpumask_words_used; i++) {
        uint64_t w = __atomic_load_n(&a->w[i], __ATOMIC_RELAXED) &
                     __atomic_load_n(&b->w[i], __ATOMIC_RELAXED);
        if (w && (found < MAX_CPUS || (w & (w - 1)))) {
            return MAX_CPUS + 1;
        }
        if (w) {
            found = i * 64 + (unsigned)__builtin_ctzll(w);
        }
    }
    return found;
}

/* Do a, b and c share a CPU? */
static inline bool cpumask_intersects3(const cpumask_t *a, const cpumask_t *b, const cpumask_t *c)
{
    for (unsigned i = 0; i < cpumask_words_used; i++) {
        if (__atomic_load_n(&a->w[i], __ATOMIC_RELAXED) &
            __atomic_load_n(&b->w[i], __ATOMIC_RELAXED) &
            __atomic_load_n(&c->w[i], __ATOMIC_ACQUIRE)) {
            return true;
        }
    }
    return false;
}

/* Is m exactly {cpu}? */
static inline bool cpumask_is_only(const cpumask_t *m, unsigned cpu)
{
    for (unsigned i = 0; i < cpumask_words_used; i++) {
        uint64_t want = cpu < MAX_CPUS && i == cpu / 64 ? 1ull << (cpu % 64) : 0;
        if (__atomic_load_n(&m->w[i], __ATOMIC_RELAXED) != want) {
            return false;
        }
    }
    return cpu < MAX_CPUS;
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
