/* SPDX-License-Identifier: MIT */
/*
 * masks.h — CPU sets in host unit tests: most tests name small machines, whose sets fit in
 * one 64-bit word, so they write and compare them as words (bit N = CPU N).  Include after
 * <cmocka.h>.
 */
#ifndef ZT_TEST_MASKS_H
#define ZT_TEST_MASKS_H

#include <stdint.h>

#include "kernel/cpumask.h"

/* CPUs 0-63 as a set. */
#define M64(x) cpumask_from_u64(x)

/* CPUs 0-63 of m as a word; fails the test if m holds a CPU past 63 (a small machine's set
 * never does). */
static inline uint64_t low64(cpumask_t m)
{
    for (unsigned i = 1; i < CPUMASK_WORDS; i++) {
        if (m.w[i] != 0) {
            fail_msg("a set with CPUs past 63: word %u is %#llx", i, (unsigned long long)m.w[i]);
        }
    }
    return m.w[0];
}

#endif
