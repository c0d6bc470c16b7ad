/*
 * partition.c — the housekeeping/dataplane split (contract in include/kernel/partition.h).
 *
 * partition_decide() is pure (unit-tested on the host, PD-nn in tests/unit/test_bootargs.c);
 * partition_setup() and partition_print() apply and report its result on the boot CPU, before
 * and after the other CPUs start.  Nothing here changes after boot.
 */
#include "kernel/partition.h"
#include "kernel/cpu.h"
#include "kernel/lib.h"
#include "kernel/printk.h"

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
    cpumask_t want = (ba != NULL && ba->has_dataplane) ? ba->dataplane : 0;
    cpumask_t dp = want & exist & ~CPUMASK_BIT(0);
    char line[BOOTARGS_WARN_LEN];
    struct tbuf tb;
    int nmsg = 0;

    if (want & ~exist) {
        cpumask_t gone = want & ~exist;
        bool one = (gone & (gone - 1)) == 0;
        tbuf_init(&tb, line, sizeof(line));
        tbuf_str(&tb, one ? "partition: CPU " : "partition: CPUs ");
        tb_cpulist(&tb, gone);
        tbuf_str(&tb, one ? " does not exist on this " : " do not exist on this ");
        tbuf_dec(&tb, n);
        tbuf_str(&tb, "-CPU machine; dropped");
        nmsg = msg_add(msg, maxmsg, nmsg, line);
    }
    if (want & exist & CPUMASK_BIT(0)) {
        tbuf_init(&tb, line, sizeof(line));
        tbuf_str(&tb, "partition: CPU 0 is always housekeeping; ");
        if (dp != 0) {
            tbuf_str(&tb, "dataplane ");
            tb_cpulist(&tb, dp);
            tbuf_str(&tb, " used instead");
        } else {
            tbuf_str(&tb, "removed from dataplane");
        }
        nmsg = msg_add(msg, maxmsg, nmsg, line);
    }
    if (want != 0 && dp == 0) {
        nmsg = msg_add(msg, maxmsg, nmsg, "partition: no dataplane CPUs remain");
    }
    *dataplane = dp;
    *housekeeping = exist & ~dp;
    return nmsg;
}

void partition_setup(const struct bootargs *ba, unsigned ncpus)
{
    char msg[4][BOOTARGS_WARN_LEN];
    int n = partition_decide(ba, ncpus, &cpus_housekeeping, &cpus_dataplane, msg, 4);
    for (int i = 0; i < n; i++) {
        printk("%s\n", msg[i]);
    }
    for (unsigned c = 0; c < ncpus; c++) {
        cpus[c].dataplane = cpumask_has(cpus_dataplane, c);
    }
}

void partition_print(void)
{
    cpumask_t online = __atomic_load_n(&cpus_online, __ATOMIC_ACQUIRE);
    cpumask_t offline = cpumask_first_n(ncpus) & ~online;
    cpus_housekeeping &= online;
    cpus_dataplane &= online;
    char hk[160], dp[160], off[160];
    cpulist_format(cpus_housekeeping, hk, sizeof(hk));
    cpulist_format(cpus_dataplane, dp, sizeof(dp));
    if (offline) {
        cpulist_format(offline, off, sizeof(off));
        printk("partition: %s %s %s offline and in neither set\n",
               cpumask_weight(offline) == 1 ? "CPU" : "CPUs", off,
               cpumask_weight(offline) == 1 ? "is" : "are");
    }
    printk("partition: housekeeping %s, dataplane %s\n", hk, dp);
}
