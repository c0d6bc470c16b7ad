/* SPDX-License-Identifier: MIT */
/*
 * partition.c — the housekeeping/dataplane split and its rules (contract in
 * include/kernel/partition.h).
 *
 * partition_decide() (the boot split) and partition_step() (may this CPU change role now,
 * and into what state) are pure: unit-tested on the host (PD-nn in tests/unit/
 * test_bootargs.c, PRT-nn in tests/unit/test_partition.c).  partition_setup() and
 * partition_boot_print() apply and report the boot split on the boot CPU, before and after
 * the other CPUs start; partition_print() reports the split at any time.  Changes at run
 * time are carried out by kernel/part/repartition.c, which asks partition_step first.
 */
#include "kernel/partition.h"
#include "kernel/cpu.h"
#include "kernel/dataplane.h"
#include "kernel/hklog.h"
#include "kernel/lib.h"
#include "kernel/panic.h"
#include "kernel/printk.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_syscall.h"

static void tb_cpulist(struct tbuf *tb, cpumask_t m)
{
    char list[BOOTARGS_WARN_LEN];

    cpulist_format(m, list, sizeof(list));
    tbuf_str(tb, list);
}

/* Adds one finished line to msg[] if there is room; returns the new count. */
static int msg_add(char msg[][BOOTARGS_WARN_LEN], int maxmsg, int n, const char *line)
{
    if (msg == NULL || n >= maxmsg) {
        return n;
    }
    for (int i = 0; i < BOOTARGS_WARN_LEN; i++) {
        msg[n][i] = line[i];
        if (line[i] == '\0') {
            break;
        }
    }
    return n + 1;
}

int partition_decide(const struct bootargs *ba, unsigned ncpus, cpumask_t *housekeeping,
                     cpumask_t *dataplane, char msg[][BOOTARGS_WARN_LEN], int maxmsg)
{
    unsigned n = ncpus < 1 ? 1 : (ncpus > MAX_CPUS ? MAX_CPUS : ncpus);
    cpumask_t exist = cpumask_first_n(n);
    cpumask_t want = (ba != NULL && ba->has_dataplane) ? ba->dataplane : CPUMASK_NONE;
    cpumask_t dp = cpumask_andnot(cpumask_and(want, exist), cpumask_of(0));
    char line[BOOTARGS_WARN_LEN];
    struct tbuf tb;
    int nmsg = 0;

    if (!cpumask_empty(cpumask_andnot(want, exist))) {
        cpumask_t gone = cpumask_andnot(want, exist);
        bool one = cpumask_is_single(gone);
        tbuf_init(&tb, line, sizeof(line));
        tbuf_str(&tb, one ? "partition: CPU " : "partition: CPUs ");
        tb_cpulist(&tb, gone);
        tbuf_str(&tb, one ? " does not exist on this " : " do not exist on this ");
        tbuf_dec(&tb, n);
        tbuf_str(&tb, "-CPU machine; dropped");
        nmsg = msg_add(msg, maxmsg, nmsg, line);
    }
    if (cpumask_has(cpumask_and(want, exist), 0)) {
        tbuf_init(&tb, line, sizeof(line));
        tbuf_str(&tb, "partition: CPU 0 is always housekeeping; ");
        if (!cpumask_empty(dp)) {
            tbuf_str(&tb, "dataplane ");
            tb_cpulist(&tb, dp);
            tbuf_str(&tb, " used instead");
        } else {
            tbuf_str(&tb, "removed from dataplane");
        }
        nmsg = msg_add(msg, maxmsg, nmsg, line);
    }
    if (!cpumask_empty(want) && cpumask_empty(dp)) {
        nmsg = msg_add(msg, maxmsg, nmsg, "partition: no dataplane CPUs remain");
    }
    *dataplane = dp;
    *housekeeping = cpumask_andnot(exist, dp);
    ASSERT(cpumask_has(*housekeeping, 0) && !cpumask_intersects(*housekeeping, dp));
    return nmsg;
}

void partition_setup(const struct bootargs *ba, unsigned ncpus)
{
    cpumask_set_machine(ncpus); /* the hot paths' set questions read only its words */
    char msg[4][BOOTARGS_WARN_LEN];
    int n = partition_decide(ba, ncpus, &cpus_housekeeping, &cpus_dataplane, msg, 4);
    for (int i = 0; i < n; i++) {
        printk("%s\n", msg[i]);
    }
    for (unsigned c = 0; c < ncpus; c++) {
        dataplane_set_role(&cpus[c], cpumask_has(cpus_dataplane, c));
    }
}

void partition_boot_print(void)
{
    cpumask_t online = cpumask_load(&cpus_online);
    cpus_housekeeping = cpumask_and(cpus_housekeeping, online);
    cpus_dataplane = cpumask_and(cpus_dataplane, online);
    partition_print(false);
}

/* m as a cpulist that fits `size` (a console line holds two of them): a list too long ends
 * in "..." (the CPUs it shows are all in m). */
static void list_text(cpumask_t m, char *buf, size_t size)
{
    if ((size_t)cpulist_format(m, buf, size) >= size && size > 4) {
        size_t end = size - 4;
        while (end > 0 && buf[end - 1] != ',') {
            end--; /* cut after a whole item */
        }
        kstrlcpy(buf + end, "...", size - end);
    }
}

void partition_print(bool deferred)
{
    cpumask_t online = cpumask_load(&cpus_online);
    cpumask_t offline = cpumask_andnot(cpumask_first_n(ncpus), online);
    char hk[64], dp[64], off[64];
    list_text(cpumask_and(cpumask_load(&cpus_housekeeping), online), hk, sizeof(hk));
    list_text(cpumask_and(cpumask_load(&cpus_dataplane), online), dp, sizeof(dp));
    bool one = cpumask_is_single(offline), any_off = !cpumask_empty(offline);
    if (any_off) {
        list_text(offline, off, sizeof(off));
    }
    if (deferred) { /* hklog: never on the console from a dataplane CPU */
        if (any_off) {
            hklog("partition: %s %s %s offline and in neither set", one ? "CPU" : "CPUs", off,
                  one ? "is" : "are");
        }
        hklog("partition: housekeeping %s, dataplane %s", hk, dp);
        return;
    }
    if (any_off) {
        printk("partition: %s %s %s offline and in neither set\n", one ? "CPU" : "CPUs", off,
               one ? "is" : "are");
    }
    printk("partition: housekeeping %s, dataplane %s\n", hk, dp);
}

/* ---- the rules of a change at run time ---- */

static enum partition_role role_of(const struct partition_state *s, unsigned cpu)
{
    if (!cpumask_has(s->online, cpu)) {
        return PART_OFFLINE;
    }
    return cpumask_has(s->dataplane, cpu) ? PART_DATAPLANE : PART_HOUSEKEEPING;
}

static const char *const role_names[] = {"offline", "housekeeping", "dataplane"};

/* The role `op` asks for (ZT_PART_ONLINE: as the flags say). */
static enum partition_role wanted(unsigned op, unsigned flags)
{
    switch (op) {
    case ZT_PART_HOUSEKEEPING:
        return PART_HOUSEKEEPING;
    case ZT_PART_DATAPLANE:
        return PART_DATAPLANE;
    case ZT_PART_ONLINE:
        return (flags & ZT_PART_AS_DATAPLANE) ? PART_DATAPLANE : PART_HOUSEKEEPING;
    default:
        return PART_OFFLINE;
    }
}

#define REFUSE(err, ...)                                                                           \
    do {                                                                                           \
        ksnprintf(msg, len, __VA_ARGS__);                                                          \
        return (err);                                                                              \
    } while (0)

int partition_step(struct partition_state *s, unsigned cpu, unsigned op, unsigned flags, char *msg,
                   size_t len)
{
    if (op < ZT_PART_HOUSEKEEPING || op > ZT_PART_ONLINE || (flags & ~ZT_PART_FLAGS) ||
        ((flags & ZT_PART_AS_DATAPLANE) && op != ZT_PART_ONLINE)) {
        REFUSE(-EINVAL, "partition: unknown request (op %u, flags %#x)", op, flags);
    }
    if (cpu >= s->ncpus) {
        REFUSE(-ERANGE, "partition: cpu %u does not exist (this machine has %u CPUs)", cpu,
               s->ncpus);
    }
    if (cpu == 0) {
        REFUSE(-EPERM, "partition: cpu 0 is always housekeeping and always online");
    }
    enum partition_role from = role_of(s, cpu), to = wanted(op, flags);
    if (op == ZT_PART_ONLINE && from != PART_OFFLINE) {
        REFUSE(-EALREADY, "partition: cpu %u is already online (%s)", cpu, role_names[from]);
    }
    if (op != ZT_PART_ONLINE && from == PART_OFFLINE) {
        REFUSE(op == ZT_PART_OFFLINE ? -EALREADY : -ENODEV, "partition: cpu %u is offline%s", cpu,
               op == ZT_PART_OFFLINE ? " already" : ": bring it online first");
    }
    if (from == to) {
        return 1; /* nothing to do */
    }
    if (from == PART_HOUSEKEEPING &&
        cpumask_empty(cpumask_andnot(cpumask_and(s->housekeeping, s->online), cpumask_of(cpu)))) {
        REFUSE(-EPERM, "partition: cpu %u is the last housekeeping CPU", cpu);
    }
    if (from == PART_DATAPLANE && cpumask_has(s->isolated, cpu) &&
        (flags & ZT_PART_REFUSE_ISOLATED)) {
        REFUSE(-EBUSY, "partition: cpu %u left as it is: an isolated task owns it", cpu);
    }
    cpumask_clear(&s->housekeeping, cpu);
    cpumask_clear(&s->dataplane, cpu);
    cpumask_clear(&s->isolated, cpu);
    if (to == PART_OFFLINE) {
        cpumask_clear(&s->online, cpu);
    } else {
        cpumask_set(&s->online, cpu);
        cpumask_set(to == PART_DATAPLANE ? &s->dataplane : &s->housekeeping, cpu);
    }
    /* what every change keeps: CPU 0 online housekeeping, the sets apart */
    ASSERT(cpumask_has(s->housekeeping, 0) && cpumask_has(s->online, 0));
    ASSERT(!cpumask_intersects(s->housekeeping, s->dataplane));
    return 0;
}
