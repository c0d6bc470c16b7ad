/* SPDX-License-Identifier: MIT */
/*
 * latstat.h — latency and gap statistics in whole-microsecond buckets (user/lib/latstat.c),
 * shared by osnoise's -P percentiles, its -w (hwnoise) and -L (timerlat) modes.  Pure: no
 * system call, no global state; built for the host too (tests/unit/test_latstat.c).
 */
#ifndef ZT_USER_LATSTAT_H
#define ZT_USER_LATSTAT_H

#include <stdint.h>

#define LATSTAT_BUCKETS 512 /* buckets 0..511 us; [LATSTAT_BUCKETS]: 512 us or longer */

/* One series of latencies in ns: count, sum, extremes and the per-microsecond buckets. */
struct latstat {
    uint64_t n, sum_ns, min_ns, max_ns;
    uint64_t early; /* values below 0 (counted as 0): the event came before it was due */
    uint64_t us[LATSTAT_BUCKETS + 1];
};

/* Add one latency (ns; negative counts as 0 and in `early`). */
void latstat_add(struct latstat *s, int64_t ns);
/* The mean in ns, rounded down; 0 for an empty series. */
uint64_t latstat_avg_ns(const struct latstat *s);
/* The lowest bucket b (whole us) such that buckets 0..b hold at least num/den of the n values
 * (the rank rounded up, as sysjitter does); LATSTAT_BUCKETS means "longer"; 0 if n is 0. */
unsigned latstat_percentile(const uint64_t *buckets, uint64_t n, uint64_t num, uint64_t den);

/* The six percentiles osnoise prints: 50, 90, 99, 99.9, 99.99, 99.999 %. */
#define LATSTAT_NPCT 6
extern const uint64_t latstat_pct[LATSTAT_NPCT][2];
extern const char *const latstat_pct_names[LATSTAT_NPCT];

#endif
