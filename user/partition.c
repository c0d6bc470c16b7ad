/* SPDX-License-Identifier: MIT */
/*
 * partition — show or change the role of CPUs at run time (zt_partition, docs/partition.md).
 *
 *   partition                                  show the partition, each set a cpulist
 *   partition [-b] [-q] [-x ERRNO] ROLE LIST   change every CPU of LIST (a Linux cpulist)
 *   partition -n N [-b] ROLE LIST              N cycles of the change and its reverse
 *   partition -T                               the system call's argument checks
 *
 * ROLE: housekeeping, dataplane, offline, online (joins as housekeeping) or
 * online-dataplane.  The kernel prints the new "partition:" lines (unless -q) and says why
 * when it refuses; this program prints "partition: ROLE LIST: -ERRNO" on failure.
 *   -b        refuse (-EBUSY) rather than end the isolation of a task isolated on a CPU
 *   -q        the kernel prints nothing (ZT_PART_QUIET)
 *   -x ERRNO  expect the change to fail with -ERRNO (e.g. EBUSY): exit 0 if it does
 *   -n N      do the change and its reverse (dataplane <-> housekeeping, offline <-> online;
 *             after an offline each CPU comes back in the role it had) N times, quietly, then print
 * what each kind cost, in guest microseconds read from CNTVCT_EL0 around the system call (median,
 * min, max) and instructions from PMU event counter 0 (only under -icount, else "n/a"), and the
 * free page and kernel stack counts before and after: partition: N cycles of LIST: ROLE median X us
 * (min A, max B), instructions I partition: free pages F1 before, F2 after; kernel stacks K1
 * before, K2 after -T        call zt_partition with bad arguments (unknown op or flags, a list too
 * long, empty, unmapped, not NUL-free) and print one line per case: partition: check NAME: -ERRNO
 * (expected -ERRNO) ok|WRONG ending with "partition: argument checks: N ok, M wrong" Exit status 0,
 * 1 if a change failed (or did not fail as -x expected), 2 for bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zt.h"

#define MAX_CYCLES 100000

static int quiet, refuse_isolated, cycles;
static const char *expect_err;

static void usage(void)
{
    fprintf(stderr, "usage: partition [-b] [-q] [-x ERRNO] [-n N] "
                    "housekeeping|dataplane|offline|online|online-dataplane LIST\n");
    exit(2);
}

static int parse_role(const char *role, unsigned *op, unsigned *flags)
{
    static const struct {
        const char *name;
        unsigned op, flags;
    } roles[] = {
        {"housekeeping", ZT_PART_HOUSEKEEPING, 0},
        {"dataplane", ZT_PART_DATAPLANE, 0},
        {"offline", ZT_PART_OFFLINE, 0},
        {"online", ZT_PART_ONLINE, 0},
        {"online-dataplane", ZT_PART_ONLINE, ZT_PART_AS_DATAPLANE},
    };
    for (size_t i = 0; i < sizeof(roles) / sizeof(roles[0]); i++) {
        if (!strcmp(role, roles[i].name)) {
            *op = roles[i].op;
            *flags |= roles[i].flags;
            return 0;
        }
    }
    return -1;
}

/* The partition from zt_cpus: one line per role, its CPUs as a cpulist ("1-511"). */
static int show(void)
{
    static const char *const what[] = {"housekeeping", "dataplane", "offline"};
    static char text[2048]; /* the longest cpulist of 512 CPUs is 1293 characters */
    struct zt_cpuset sets[3];
    long n;
    struct zt_cpu_info *info = zt_cpus_all(&n);
    if (info == NULL) {
        printf("partition: zt_cpus failed: -%s\n", zt_errno_name((int)-n));
        return 1;
    }
    for (int k = 0; k < 3; k++) {
        zt_cpuset_zero(&sets[k]);
    }
    for (long i = 0; i < n; i++) {
        zt_cpuset_add(&sets[!info[i].online ? 2 : info[i].dataplane ? 1 : 0], (int)info[i].cpu);
    }
    for (int k = 0; k < 3; k++) {
        zt_cpulist_format(&sets[k], text, sizeof(text));
        printf("partition: %s %s\n", what[k], text);
    }
    free(info);
    return 0;
}

/* PMU event counter 0, which the kernel programs to INST_RETIRED (0 without -icount). */
static inline uint32_t inst_read(void)
{
    uint64_t v;
    __asm__ volatile("isb; mrs %0, pmevcntr0_el0" : "=r"(v)::"memory");
    return (uint32_t)v;
}

struct cost {
    const char *role;
    uint64_t *cycles; /* counter cycles per change */
    uint64_t insts;   /* instructions, all changes */
};

/* One step of a cycle: up to two calls (the online that undoes an offline puts the CPUs
 * that were dataplane back with ZT_PART_AS_DATAPLANE and the others without it). */
struct step {
    const char *list[2];
    unsigned op, flags[2];
};

static long measured(struct cost *c, int i, const struct step *st)
{
    uint32_t i0 = inst_read();
    uint64_t t0 = zt_counter();
    long r = 0;
    for (int k = 0; k < 2 && r == 0; k++) {
        r = st->list[k] ? zt_partition(st->list[k], st->op, st->flags[k]) : 0;
    }
    uint64_t t1 = zt_counter();
    c->insts += (uint32_t)(inst_read() - i0);
    c->cycles[i] = t1 - t0;
    return r;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *list, const struct cost *c)
{
    qsort(c->cycles, (size_t)cycles, sizeof(uint64_t), cmp_u64);
    printf("partition: %d cycles of %s: %s median %.1f us (min %.1f, max %.1f), instructions ",
           cycles, list, c->role, zt_counter_to_ns(c->cycles[cycles / 2]) / 1000.0,
           zt_counter_to_ns(c->cycles[0]) / 1000.0,
           zt_counter_to_ns(c->cycles[cycles - 1]) / 1000.0);
    if (c->insts) {
        printf("%llu\n", (unsigned long long)(c->insts / (uint64_t)cycles));
    } else {
        printf("n/a\n");
    }
}

static const char *role_name(unsigned op, unsigned flags)
{
    switch (op) {
    case ZT_PART_HOUSEKEEPING:
        return "housekeeping";
    case ZT_PART_DATAPLANE:
        return "dataplane";
    case ZT_PART_OFFLINE:
        return "offline";
    default:
        return flags & ZT_PART_AS_DATAPLANE ? "online-dataplane" : "online";
    }
}

/* The CPUs of `list` that are online dataplane CPUs now, and the others, as cpulists (NULL
 * when empty); 0, or 1 after a message. */
static int split_by_role(const char *list, char *dp, char *hk, size_t size, const char **dpl,
                         const char **hkl)
{
    struct zt_cpuset want, sets[2];
    long n;
    struct zt_cpu_info *info = zt_cpus_all(&n);
    if (info == NULL || zt_cpulist_parse(list, &want) != 0) {
        printf("partition: cannot read the roles of %s\n", list);
        free(info);
        return 1;
    }
    zt_cpuset_zero(&sets[0]);
    zt_cpuset_zero(&sets[1]);
    for (long i = 0; i < n; i++) {
        if (zt_cpuset_has(&want, (int)info[i].cpu)) {
            zt_cpuset_add(&sets[info[i].online && info[i].dataplane], (int)info[i].cpu);
        }
    }
    free(info);
    zt_cpulist_format(&sets[1], dp, size);
    zt_cpulist_format(&sets[0], hk, size);
    *dpl = zt_cpuset_count(&sets[1]) ? dp : NULL;
    *hkl = zt_cpuset_count(&sets[0]) ? hk : NULL;
    return 0;
}

/* The step that undoes `op` on `list`: each CPU goes back to the role it has now.  An offline
 * is undone by an online that puts the dataplane CPUs back as dataplane. */
static int reverse(const char *list, unsigned op, unsigned flags, struct step *back)
{
    static char dp[2048], hk[2048];
    const char *dpl, *hkl;
    *back = (struct step){{list, NULL}, 0, {flags, 0}};
    switch (op) {
    case ZT_PART_HOUSEKEEPING:
        back->op = ZT_PART_DATAPLANE;
        return 0;
    case ZT_PART_DATAPLANE:
        back->op = ZT_PART_HOUSEKEEPING;
        return 0;
    case ZT_PART_OFFLINE:
        if (split_by_role(list, dp, hk, sizeof(dp), &dpl, &hkl)) {
            return 1;
        }
        back->op = ZT_PART_ONLINE;
        back->list[0] = hkl ? hkl : dpl;
        back->flags[0] = hkl ? flags : flags | ZT_PART_AS_DATAPLANE;
        back->list[1] = hkl ? dpl : NULL;
        back->flags[1] = flags | ZT_PART_AS_DATAPLANE;
        return 0;
    default:
        back->op = ZT_PART_OFFLINE;
        back->flags[0] &= ~(unsigned)ZT_PART_AS_DATAPLANE;
        return 0;
    }
}

static int run_cycles(const char *list, unsigned op, unsigned flags)
{
    struct step fwd_step = {{list, NULL}, op, {flags | ZT_PART_QUIET, 0}}, back_step;
    if (reverse(list, op, flags | ZT_PART_QUIET, &back_step)) {
        return 1;
    }
    const char *back_role = back_step.op != ZT_PART_ONLINE
                                ? role_name(back_step.op, back_step.flags[0])
                            : back_step.list[1] ? "online/online-dataplane"
                                                : role_name(back_step.op, back_step.flags[0]);
    struct cost fwd = {role_name(op, flags), calloc((size_t)cycles, 8), 0};
    struct cost back = {back_role, calloc((size_t)cycles, 8), 0};
    struct zt_meminfo before, after;
    if (!fwd.cycles || !back.cycles) {
        printf("partition: out of memory\n");
        return 1;
    }
    /* The counts are global: let the shell that started us settle into wait4 first. */
    zt_sleep_ns(200 * 1000 * 1000);
    zt_meminfo(&before);
    for (int i = 0; i < cycles; i++) {
        long r = measured(&fwd, i, &fwd_step);
        long r2 = r ? 0 : measured(&back, i, &back_step);
        if (r || r2) {
            printf("partition: cycle %d: %s %s: -%s\n", i, r ? fwd.role : back.role, list,
                   zt_errno_name((int)-(r ? r : r2)));
            return 1;
        }
    }
    zt_meminfo(&after);
    report(list, &fwd);
    report(list, &back);
    printf("partition: free pages %llu before, %llu after; kernel stacks %llu before, %llu "
           "after\n",
           (unsigned long long)before.free_pages, (unsigned long long)after.free_pages,
           (unsigned long long)before.kstacks_used, (unsigned long long)after.kstacks_used);
    return 0;
}

/* Each bad call, and what it must return.  Nothing may change: the list names CPU 1. */
static int argument_checks(void)
{
    static char big[ZT_PART_LIST_MAX + 2];
    memset(big, '1', sizeof(big) - 1);
    const struct {
        const char *name;
        long r, want;
    } c[] = {
        {"op 0", zt_syscall4(SYS_zt_partition, "1", 1, 0, 0), -EINVAL},
        {"op 5", zt_syscall4(SYS_zt_partition, "1", 1, 5, 0), -EINVAL},
        {"op 2^32+1", zt_syscall4(SYS_zt_partition, "1", 1, (1ull << 32) + 1, 0), -EINVAL},
        {"flags 0x8", zt_syscall4(SYS_zt_partition, "1", 1, ZT_PART_DATAPLANE, 8), -EINVAL},
        {"as-dataplane without online",
         zt_syscall4(SYS_zt_partition, "1", 1, ZT_PART_OFFLINE, ZT_PART_AS_DATAPLANE), -EINVAL},
        {"length 0", zt_syscall4(SYS_zt_partition, "1", 0, ZT_PART_DATAPLANE, 0), -EINVAL},
        {"length too long",
         zt_syscall4(SYS_zt_partition, big, sizeof(big) - 1, ZT_PART_DATAPLANE, 0), -EINVAL},
        {"unmapped list", zt_syscall4(SYS_zt_partition, 0x10, 1, ZT_PART_DATAPLANE, 0), -EFAULT},
        {"NUL inside", zt_syscall4(SYS_zt_partition, "1\0", 2, ZT_PART_DATAPLANE, 0), -EINVAL},
        {"cpu 64", zt_syscall4(SYS_zt_partition, "64", 2, ZT_PART_DATAPLANE, 0), -ERANGE},
        {"cpu 512", zt_syscall4(SYS_zt_partition, "512", 3, ZT_PART_DATAPLANE, 0), -ERANGE},
    };
    int ok = 0, n = (int)(sizeof(c) / sizeof(c[0]));
    for (int i = 0; i < n; i++) {
        bool good = c[i].r == c[i].want;
        ok += good;
        printf("partition: check %s: %s%s (expected -%s) %s\n", c[i].name, c[i].r ? "-" : "",
               c[i].r ? zt_errno_name((int)-c[i].r) : "0", zt_errno_name((int)-c[i].want),
               good ? "ok" : "WRONG");
    }
    printf("partition: argument checks: %d ok, %d wrong\n", ok, n - ok);
    return ok == n ? 0 : 1;
}

int main(int argc, char **argv)
{
    unsigned op = 0, flags = 0;
    int i = 1;
    if (argc == 1) {
        return show();
    }
    if (argc == 2 && !strcmp(argv[1], "-T")) {
        return argument_checks();
    }
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "-b")) {
            refuse_isolated = 1;
        } else if (!strcmp(argv[i], "-q")) {
            quiet = 1;
        } else if (!strcmp(argv[i], "-x") && i + 1 < argc) {
            expect_err = argv[++i];
        } else if (!strcmp(argv[i], "-n") && i + 1 < argc) {
            cycles = atoi(argv[++i]);
            if (cycles < 1 || cycles > MAX_CYCLES) {
                usage();
            }
        } else {
            usage();
        }
    }
    if (argc - i != 2 || parse_role(argv[i], &op, &flags) != 0) {
        usage();
    }
    const char *list = argv[i + 1];
    flags |= (refuse_isolated ? ZT_PART_REFUSE_ISOLATED : 0) | (quiet ? ZT_PART_QUIET : 0);
    if (cycles) {
        return run_cycles(list, op, flags);
    }
    long r = zt_partition(list, op, flags);
    if (expect_err) {
        printf("partition: %s %s: %s%s, expected -%s\n", argv[i], list, r ? "-" : "",
               r ? zt_errno_name((int)-r) : "0", expect_err);
        return r < 0 && !strcmp(zt_errno_name((int)-r), expect_err) ? 0 : 1;
    }
    if (r) {
        printf("partition: %s %s: -%s\n", argv[i], list, zt_errno_name((int)-r));
        return 1;
    }
    return 0;
}
