/* SPDX-License-Identifier: MIT */
/*
 * irqsoff.c — the irqs-off check's records as `cpus -i`, the fuzzer and the stress suite
 * print them (zt_irqsoff_print, format in zt.h): what the QEMU tests and tools read.
 *
 * Kernel addresses are printed as they are; tools/covreport --symbolize, or addr2line on the
 * kernel's ELF file, names them.
 */
#include "zt.h"

#include <stdio.h>

static void print_us(const char *what, uint64_t ns)
{
    printf(" %s %llu.%03llu us", what, (unsigned long long)(ns / 1000),
           (unsigned long long)(ns % 1000));
}

static void print_cpu(unsigned cpu, const struct zt_irqsoff *r, bool dataplane)
{
    printf("irqsoff: cpu %u %s spans %llu", cpu, dataplane ? "dataplane" : "housekeeping",
           (unsigned long long)r->spans);
    print_us("longest", r->longest_ns);
    printf(" start 0x%llx end 0x%llx bt", (unsigned long long)r->start_pc,
           (unsigned long long)r->end_pc);
    for (int i = 0; i < ZT_IRQSOFF_BT && r->end_bt[i]; i++) {
        printf(" 0x%llx", (unsigned long long)r->end_bt[i]);
    }
    printf("\n");
    printf("irqsoff: cpu %u hist", cpu);
    for (int k = 0; k < ZT_IRQSOFF_BUCKETS; k++) {
        if (k == 0) {
            printf(" <1us:%llu", (unsigned long long)r->hist[0]);
        } else {
            printf(" %lluus:%llu", 1ull << (k - 1), (unsigned long long)r->hist[k]);
        }
    }
    printf("\n");
    for (int i = 0; i < ZT_IRQSOFF_PLACES && r->places[i].start_pc; i++) {
        const struct zt_irqsoff_place *p = &r->places[i];
        printf("irqsoff: cpu %u place %d", cpu, i);
        print_us("longest", p->longest_ns);
        printf(" count %llu start 0x%llx end 0x%llx\n", (unsigned long long)p->count,
               (unsigned long long)p->start_pc, (unsigned long long)p->end_pc);
    }
    if (r->hwnoise_windows) {
        printf("irqsoff: cpu %u hwnoise windows %llu", cpu, (unsigned long long)r->hwnoise_windows);
        print_us("longest", r->hwnoise_longest_ns);
        printf("\n");
    }
}

long zt_irqsoff_print(unsigned flags)
{
    static struct zt_cpu_info ci[ZT_MAX_CPUS];
    long n = zt_cpus(ci, ZT_MAX_CPUS), longest = 0;
    if (n < 0) {
        return n;
    }
    for (long c = 0; c < n && c < ZT_MAX_CPUS; c++) {
        struct zt_irqsoff r;
        long e = zt_irqsoff((unsigned)c, &r, flags);
        if (e < 0) {
            return e;
        }
        if (!ci[c].online) {
            continue;
        }
        bool dataplane = ci[c].dataplane || r.dataplane;
        print_cpu((unsigned)c, &r, dataplane);
        if (!dataplane && (long)r.longest_ns > longest) {
            longest = (long)r.longest_ns;
        }
    }
    fflush(stdout);
    return longest;
}

long zt_irqsoff_reset(void)
{
    long n = zt_cpus(NULL, 0);
    for (long c = 0; c < n; c++) {
        struct zt_irqsoff r;
        long e = zt_irqsoff((unsigned)c, &r, ZT_IRQSOFF_RESET);
        if (e < 0) {
            return e;
        }
    }
    return n < 0 ? n : 0;
}
