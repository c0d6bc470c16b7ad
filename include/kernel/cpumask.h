/*
 * cpumask.h — sets of CPUs as one 64-bit word, and Linux "cpulist" text (0-3,7).
 *
 * zerotick supports at most MAX_CPUS = 64 CPUs, so a set is a uint64_t: bit N is CPU N.
 * cpulist_parse/cpulist_format are pure functions (kernel/cpumask.c), unit-tested on the host.
 */
#ifndef ZT_KERNEL_CPUMASK_H
#define ZT_KERNEL_CPUMASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAX_CPUS 64

typedef uint64_t cpumask_t;

#define CPUMASK_BIT(cpu) ((cpumask_t)1 << (cpu))

static inline bool cpumask_has(cpumask_t m, unsigned cpu)
{
    return cpu < MAX_CPUS && (m & CPUMASK_BIT(cpu)) != 0;
}

/*
 * Number of CPUs in m.  Not __builtin_popcountll: with -mgeneral-regs-only GCC turns that into
 * a call to libgcc's __popcountdi2, and the kernel links without libgcc.
 */
static inline unsigned cpumask_weight(cpumask_t m)
{
    unsigned n = 0;

    for (; m != 0; m &= m - 1) {
        n++;
    }
    return n;
}

/* Lowest CPU in m; MAX_CPUS when m is empty. */
static inline unsigned cpumask_first(cpumask_t m)
{
    return m ? (unsigned)__builtin_ctzll(m) : MAX_CPUS;
}

/* All CPUs 0 .. n-1. */
static inline cpumask_t cpumask_first_n(unsigned n)
{
    return n >= 64 ? ~(cpumask_t)0 : (CPUMASK_BIT(n) - 1);
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
 * left untouched on error.
 */
int cpulist_parse(const char *s, size_t len, cpumask_t *out, unsigned *bad_cpu);

/*
 * Write m in Linux cpulist form, ranges collapsed ("0,2-5", "0-1"); "none" for an empty set.
 * Always NUL-terminates when size > 0 (buf may be NULL when size is 0); a truncated text is
 * the first size-1 characters of the full one.  Returns the length the full text needs (like
 * snprintf), so a return >= size means it was truncated.
 */
int cpulist_format(cpumask_t m, char *buf, size_t size);

#endif
