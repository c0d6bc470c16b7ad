/* SPDX-License-Identifier: MIT */
/*
 * cpuset.c — CPU sets as text: Linux "cpulist" ("0-3,7", "0-15:2/4", "none") to and from a
 * struct zt_cpuset (uapi), for the programs that take or show CPU lists (cpus -c, ps,
 * osnoise -c, partition).  The kernel has its own copy of this grammar (kernel/lib/cpumask.c,
 * unit-tested on the host); the two accept the same texts.
 *
 * Pure functions: no allocation, no global state, any thread.
 */
#include "zt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int zt_cpuset_count(const struct zt_cpuset *s)
{
    int n = 0;

    for (int i = 0; i < ZT_CPUSET_WORDS; i++) {
        for (uint64_t w = s->bits[i]; w != 0; w &= w - 1) {
            n++;
        }
    }
    return n;
}

/* A decimal number at *p: 0 and advances, -EINVAL without a digit, -ERANGE past 2^31. */
static int number(const char **p, long *out)
{
    long v = 0;
    const char *s = *p;

    if (*s < '0' || *s > '9') {
        return -EINVAL;
    }
    for (; *s >= '0' && *s <= '9'; s++) {
        if (v > 0x7fffffff) {
            return -ERANGE;
        }
        v = v * 10 + (*s - '0');
    }
    *p = s;
    *out = v;
    return 0;
}

/* One item (N, N-M or N-M:USED/GROUP) at *p, added to *s. */
static int item(const char **p, struct zt_cpuset *s)
{
    long first, last, used = 1, group = 1;
    int r = number(p, &first);

    last = first;
    if (r == 0 && **p == '-') {
        (*p)++;
        r = number(p, &last);
        if (r == 0 && **p == ':') {
            (*p)++;
            r = number(p, &used);
            if (r == 0 && *(*p)++ != '/') {
                return -EINVAL;
            }
            r = r == 0 ? number(p, &group) : r;
            if (r == 0 && (used < 1 || used > group)) {
                return -EINVAL;
            }
        }
    }
    if (r == 0 && first > last) {
        return -EINVAL;
    }
    if (r == 0 && last >= ZT_MAX_CPUS) {
        return -ERANGE;
    }
    for (long c = first; r == 0 && c <= last; c++) {
        if ((c - first) % group < used) {
            zt_cpuset_add(s, (int)c);
        }
    }
    return r;
}

int zt_cpulist_parse(const char *text, struct zt_cpuset *out)
{
    struct zt_cpuset s;
    const char *p = text;
    int r = 0;

    zt_cpuset_zero(&s);
    if (strcmp(text, "none") == 0) {
        *out = s;
        return 0;
    }
    for (;;) {
        r = item(&p, &s);
        if (r != 0 || *p != ',') {
            break;
        }
        p++; /* the next item must follow: a trailing comma starts none */
    }
    if (r == 0 && *p != '\0') {
        r = -EINVAL; /* a character that starts no item */
    }
    if (r == 0) {
        *out = s;
    }
    return r;
}

bool zt_cpulist_parse_machine(const char *text, struct zt_cpuset *s, int max)
{
    if (zt_cpulist_parse(text, s) != 0 || zt_cpuset_count(s) > max) {
        return false;
    }
    for (int c = zt_nr_cpus(); c < ZT_MAX_CPUS; c++) {
        if (zt_cpuset_has(s, c)) {
            return false;
        }
    }
    return true;
}

const char *zt_meter_option(const struct zt_meter_opts *o, char opt, const char *v)
{
    char *end;
    if (opt == 'c') {
        return zt_cpulist_parse_machine(v, o->cpus, o->max_cpus)
                   ? NULL
                   : "bad CPU list (at most 64 CPUs that exist, in the form 2-3,5)";
    }
    if (opt == 't') {
        double t = strtod(v, &end);
        if (end == v || *end || !(t > 0 && t <= 3600)) {
            return "bad number of seconds";
        }
        *o->seconds = t;
        return NULL;
    }
    unsigned long n = strtoul(v, &end, 10);
    if (end == v || *end || *v == '-' || n < o->lo || n > o->hi) {
        return o->num_bad;
    }
    *o->num = n;
    return NULL;
}

int zt_cpulist_format(const struct zt_cpuset *s, char *buf, size_t size)
{
    size_t need = 0;
    char item_text[24];

    if (size > 0) {
        buf[0] = '\0';
    }
    for (int c = 0; c < ZT_MAX_CPUS; c++) {
        if (!zt_cpuset_has(s, c)) {
            continue;
        }
        int last = c;
        while (last + 1 < ZT_MAX_CPUS && zt_cpuset_has(s, last + 1)) {
            last++;
        }
        int n = last == c
                    ? snprintf(item_text, sizeof(item_text), "%s%d", need ? "," : "", c)
                    : snprintf(item_text, sizeof(item_text), "%s%d-%d", need ? "," : "", c, last);
        if (need + (size_t)n < size) {
            memcpy(buf + need, item_text, (size_t)n + 1);
        } else if (need < size) {
            memcpy(buf + need, item_text, size - need - 1);
            buf[size - 1] = '\0';
        }
        need += (size_t)n;
        c = last;
    }
    if (need == 0) {
        if (size > 0) {
            snprintf(buf, size, "none");
        }
        need = 4;
    }
    return (int)need;
}
