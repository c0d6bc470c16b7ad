/* SPDX-License-Identifier: MIT */
/*
 * latstat.c — latency and gap statistics in whole-microsecond buckets (contract in
 * latstat.h).  Pure arithmetic on the caller's struct; no locks, any context.
 */
#include "latstat.h"

const uint64_t latstat_pct[LATSTAT_NPCT][2] = {{50, 100},   {90, 100},     {99, 100},
                                               {999, 1000}, {9999, 10000}, {99999, 100000}};
const char *const latstat_pct_names[LATSTAT_NPCT] = {"p50",   "p90",    "p99",
                                                     "p99.9", "p99.99", "p99.999"};

void latstat_add(struct latstat *s, int64_t ns)
{
    uint64_t v = 0;
    if (ns < 0) {
        s->early++;
    } else {
        v = (uint64_t)ns;
    }
    if (s->n == 0 || v < s->min_ns) {
        s->min_ns = v;
    }
    if (v > s->max_ns) {
        s->max_ns = v;
    }
    s->n++;
    s->sum_ns += v;
    uint64_t us = v / 1000;
    s->us[us < LATSTAT_BUCKETS ? us : LATSTAT_BUCKETS]++;
}

uint64_t latstat_avg_ns(const struct latstat *s)
{
    return s->n ? s->sum_ns / s->n : 0;
}

unsigned latstat_percentile(const uint64_t *buckets, uint64_t n, uint64_t num, uint64_t den)
{
    uint64_t rank = (n * num + den - 1) / den, seen = 0;
    if (n == 0) {
        return 0;
    }
    for (unsigned b = 0; b <= LATSTAT_BUCKETS; b++) {
        seen += buckets[b];
        if (seen >= rank && seen > 0) {
            return b;
        }
    }
    return LATSTAT_BUCKETS;
}
