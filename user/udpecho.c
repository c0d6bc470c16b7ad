/* SPDX-License-Identifier: MIT */
/*
 * udpecho — a UDP echo server polled on dataplane CPUs, driving a virtio-net device (virtio-mmio
 * or virtio-pci) from user space (user/net/): the data plane runs with no kernel on its path.
 *
 *   udpecho -c CPU [-q N] [-n COUNT] [-t SECONDS] [-p PORT] [-a IP] [-s SLOT] [-x PORT]
 *           [-g IP|none] [-m]
 *
 * Claims the network device (the lowest net slot, or -s SLOT; the claim accepts DMA no IOMMU
 * confines, and the ready line says which it got), brings it up with N queue pairs (-q, default
 * 1; more need a device with VIRTIO_NET_F_MQ, and its RSS spreads flows over them), asks once
 * who has the gateway (-g, default 10.0.2.2, "-g none" to skip: lets QEMU's user networking
 * learn our MAC), and prints a "ready" line.  Queue pair i is then polled by its own thread on
 * CPU + i (the main thread takes pair 0 on CPU), which isolates in strict mode (the isolating
 * prctl issued as `svc #0x5a5a`, the one ending isolation as `svc #0xa5a5`, like isol) and
 * polls only its pair: answers ARP for its address and ping, echoes UDP datagrams to PORT
 * (default 7, the echo port) at IP (default 10.0.2.15, QEMU's guest address), counts and drops
 * the rest.  All stop once COUNT datagrams were echoed in all, after SECONDS (default 30) of
 * guest time, or when a datagram reaches the control port (-x PORT); each ends isolation.  Then
 * it prints its totals (received, sent, drops by reason, polls and empty polls, rx-ring-full
 * events, the share of the window spent on received frames ("busy"), instructions per packet),
 * a line per queue pair with N > 1, and each CPU's exceptions over its window; resets and
 * releases the device.
 *   -m   a sibling thread maps and unmaps memory on CPU 0 meanwhile (as isol -m)
 * Exit status: 0, or 1 if something failed or COUNT was given and not reached in time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/dev.h"
#include "net/nic.h"
#include "zt.h"

static int cpu = -1, slot = -1, mapper_on;
static unsigned nqueues = 1;
static long count;
static unsigned port = 7, ctl_port;
static double seconds = 30;
static uint8_t ip[4] = {10, 0, 2, 15}, gateway[4] = {10, 0, 2, 2};
static bool ask_gateway = true;
static volatile int mapper_stop, stop;
static struct nic nic;
static uint64_t start_ticks, limit_ticks;

/* What one poller saw over its window. */
struct window {
    uint64_t ticks, exc, insts;
    long isolate; /* the prctl's result */
};
static struct window windows[NIC_MAX_QUEUES];

static void usage(void)
{
    fprintf(stderr, "usage: udpecho -c CPU [-q N] [-n COUNT] [-t SECONDS] [-p PORT] [-a IP] "
                    "[-s SLOT] [-x PORT] [-g IP|none] [-m]\n");
    exit(2);
}

static long number(const char *s, long lo, long hi)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == 0 || *end != 0 || v < lo || v > hi) {
        usage();
    }
    return v;
}

static void parse_addr(const char *v, uint8_t out[4])
{
    if (!frame_parse_ip(v, out)) {
        usage();
    }
}

static void option(char opt, const char *v)
{
    switch (opt) {
    case 'c':
        cpu = (int)number(v, 0, 63);
        break;
    case 'q':
        nqueues = (unsigned)number(v, 1, NIC_MAX_QUEUES);
        break;
    case 'n':
        count = number(v, 1, 1000000000);
        break;
    case 't':
        seconds = strtod(v, NULL);
        break;
    case 'p':
        port = (unsigned)number(v, 1, 65535);
        break;
    case 'x':
        ctl_port = (unsigned)number(v, 1, 65535);
        break;
    case 's':
        slot = (int)number(v, 0, ZT_DEVICE_SLOTS - 1);
        break;
    case 'a':
        parse_addr(v, ip);
        break;
    case 'g':
        ask_gateway = strcmp(v, "none") != 0;
        if (ask_gateway) {
            parse_addr(v, gateway);
        }
        break;
    default:
        usage();
    }
}

static void parse(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || a[1] == 0 || a[2] != 0) {
            usage();
        }
        if (a[1] == 'm') {
            mapper_on = 1;
            continue;
        }
        if (i + 1 >= argc) {
            usage();
        }
        option(a[1], argv[++i]);
    }
    if (cpu < 0 || cpu + (int)nqueues > zt_nr_cpus() || cpu + (int)nqueues > 64 ||
        !(seconds > 0 && seconds <= 3600)) {
        usage();
    }
}

static long mapper(void *arg)
{
    while (!mapper_stop) {
        long a =
            zt_mmap(NULL, 16 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (a > 0) {
            memset((void *)a, 1, 16 * 4096);
            zt_munmap((void *)a, 16 * 4096);
        }
    }
    return 0;
}

/* Exceptions CPU c has taken, from its counters page (no system call). */
static uint64_t exceptions(int c)
{
    const volatile struct zt_cpu_counters *k = zt_counters_of((unsigned)c);
    return zt_counters_exceptions(k);
}

static inline uint32_t inst_read(void)
{
    uint64_t v;
    __asm__ volatile("mrs %0, pmevcntr0_el0" : "=r"(v));
    return (uint32_t)v;
}

/* Claim the device and bring it up; 0, or 1 after saying why not. */
static int start(struct zt_claim *c)
{
    if (slot < 0 && (slot = dev_find(ZT_VIRTIO_ID_NET, 0)) < 0) {
        printf("udpecho: no virtio network device (QEMU: -device virtio-net-device,... or "
               "-device virtio-net-pci,...)\n");
        return 1;
    }
    long r = zt_claim((unsigned)slot, nic_dma_bytes_n(nqueues),
                      ZT_CLAIM_V2 | ZT_CLAIM_UNCONFINED_DMA, c);
    if (r) {
        printf("udpecho: cannot claim slot %d: -%s\n", slot, zt_errno_name((int)-r));
        return 1;
    }
    char err[240];
    if (nic_open_queues(&nic, c, nqueues, ip, (uint16_t)port, err, sizeof(err)) != 0) {
        printf("udpecho: slot %d: %s\n", slot, err);
        zt_release((unsigned)slot);
        return 1;
    }
    nic.cfg.ctl_port = (uint16_t)ctl_port;
    if (ask_gateway) {
        uint8_t frame[FRAME_MAX];
        nic_send(&nic, frame, frame_arp_request(&nic.cfg, gateway, frame));
    }
    return 0;
}

/* Echoes and control datagrams so far, over every pair (plain loads of the others'
 * counters: a stale value only delays the stop by a round). */
static bool should_stop(void)
{
    uint64_t echoes = 0, ctl = 0;
    for (unsigned i = 0; i < nqueues; i++) {
        echoes += __atomic_load_n(&nic.q[i].st.frames.udp_echoes, __ATOMIC_RELAXED);
        ctl += __atomic_load_n(&nic.q[i].st.frames.ctl_datagrams, __ATOMIC_RELAXED);
    }
    return ctl || (count && (long)echoes >= count) || zt_counter() - start_ticks >= limit_ticks;
}

/* The isolated part of pair i on CPU cpu + i: poll until everyone stops. */
static void poll_loop(unsigned i)
{
    struct window *w = &windows[i];
    struct nic_queue *q = &nic.q[i];
    int c = cpu + (int)i;
    w->isolate =
        zt_syscall6_mark_open(SYS_prctl, PR_SET_TASK_ISOLATION,
                              PR_TASK_ISOLATION_ENABLE | PR_TASK_ISOLATION_STRICT, 0, 0, 0, 0);
    if (w->isolate == 0) {
        uint64_t t0 = zt_counter(), exc0 = exceptions(c);
        uint32_t last = inst_read();
        for (unsigned k = 1; !stop; k++) {
            nic_queue_poll(q);
            uint32_t now = inst_read();
            w->insts += (uint32_t)(now - last);
            last = now;
            if (!(k & 15) && should_stop()) { /* every 16th round: the others' counters and
                                                 the clock are read a sixteenth as often */
                stop = 1;
            }
        }
        w->exc = exceptions(c) - exc0;
        w->ticks = zt_counter() - t0;
    }
    zt_syscall6_mark_close(SYS_prctl, PR_SET_TASK_ISOLATION, 0, 0, 0, 0, 0);
    if (w->isolate != 0) {
        stop = 1; /* the others must not wait for a pair nobody polls */
    }
}

static long poller(void *arg)
{
    poll_loop((unsigned)(uintptr_t)arg);
    return 0;
}

static void report_totals(uint64_t ticks, const struct nic_stats *s)
{
    const struct frame_stats *f = &s->frames;
    printf("udpecho: done after %.3f s%s: rx %llu tx %llu udp-echoes %llu icmp-echoes %llu "
           "arp-replies %llu arp-seen %llu\n",
           (double)zt_counter_to_ns(ticks) / 1e9, f->ctl_datagrams ? " (control port)" : "",
           (unsigned long long)s->rx, (unsigned long long)s->tx, (unsigned long long)f->udp_echoes,
           (unsigned long long)f->icmp_echoes, (unsigned long long)f->arp_replies,
           (unsigned long long)f->arp_seen);
    printf("udpecho: dropped:");
    for (int d = 0; d < DROP_KINDS; d++) {
        printf(" %s %llu", frame_drop_name((enum frame_drop)d), (unsigned long long)f->drops[d]);
    }
    printf(" bad-len %llu\n", (unsigned long long)s->bad_len);
}

static void report(void)
{
    struct nic_stats sum;
    uint64_t ticks = 0, insts = 0;
    nic_stats_sum(&nic, &sum);
    for (unsigned i = 0; i < nqueues; i++) {
        ticks = windows[i].ticks > ticks ? windows[i].ticks : ticks;
        insts += windows[i].insts;
    }
    report_totals(ticks, &sum);
    printf("udpecho: polls %llu empty %llu rx-ring-full %llu notifies %llu busy %.2f%%\n",
           (unsigned long long)sum.polls, (unsigned long long)sum.empty_polls,
           (unsigned long long)sum.rx_ring_full, (unsigned long long)sum.notifies,
           ticks ? 100.0 * (double)sum.busy_ticks / (double)(ticks * nqueues) : 0.0);
    uint64_t busy = sum.busy_insts, idle = insts > busy ? insts - busy : 0;
    if (insts) {
        printf("udpecho: instructions: %llu per received frame, %llu per empty poll\n",
               (unsigned long long)(sum.rx ? busy / sum.rx : 0),
               (unsigned long long)(sum.empty_polls ? idle / sum.empty_polls : 0));
    } else {
        printf("udpecho: instructions: n/a (the PMU counts only under -icount, REPRO=1)\n");
    }
    for (unsigned i = 0; nqueues > 1 && i < nqueues; i++) {
        const struct nic_stats *s = &nic.q[i].st;
        printf("udpecho: queue %u cpu %d: rx %llu tx %llu udp-echoes %llu polls %llu "
               "rx-ring-full %llu\n",
               i, cpu + (int)i, (unsigned long long)s->rx, (unsigned long long)s->tx,
               (unsigned long long)s->frames.udp_echoes, (unsigned long long)s->polls,
               (unsigned long long)s->rx_ring_full);
    }
    for (unsigned i = 0; i < nqueues; i++) {
        printf("udpecho: cpu %d exceptions in the window: %llu\n", cpu + (int)i,
               (unsigned long long)windows[i].exc);
    }
}

static void print_ready(const struct zt_claim *c)
{
    printf("udpecho: ready: slot %d, mac %02x:%02x:%02x:%02x:%02x:%02x, ip %u.%u.%u.%u, udp port "
           "%u, cpu %d, queues %u%s, dma %s\n",
           slot, nic.cfg.mac[0], nic.cfg.mac[1], nic.cfg.mac[2], nic.cfg.mac[3], nic.cfg.mac[4],
           nic.cfg.mac[5], ip[0], ip[1], ip[2], ip[3], port, cpu, nqueues, nic.rss ? " (rss)" : "",
           c->dma_mode == ZT_DEV_IOMMU ? "confined by the SMMU" : "UNCONFINED (no IOMMU)");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    zt_thread_t *sibling = NULL, *pollers[NIC_MAX_QUEUES] = {0};
    struct zt_claim c;
    parse(argc, argv);
    if (mapper_on && !(sibling = zt_thread_create(mapper, NULL, 0))) {
        printf("udpecho: cannot start the mapper thread\n");
        return 1;
    }
    if (zt_set_affinity(1ull << cpu) != 0) {
        printf("udpecho: cannot pin to cpu %d\n", cpu);
        return 1;
    }
    if (start(&c) != 0) {
        return 1;
    }
    print_ready(&c);
    start_ticks = zt_counter();
    limit_ticks = (uint64_t)(seconds * (double)zt_counter_freq());
    bool failed = false;
    for (unsigned i = 1; i < nqueues; i++) {
        pollers[i] = zt_thread_create(poller, (void *)(uintptr_t)i, cpu + (int)i);
        if (!pollers[i]) {
            printf("udpecho: cannot start the poller of queue %u on cpu %d\n", i, cpu + (int)i);
            stop = 1;
            failed = true;
        }
    }
    poll_loop(0);
    for (unsigned i = 1; i < nqueues; i++) {
        if (pollers[i]) {
            zt_thread_join(pollers[i]);
        }
    }
    mapper_stop = 1;
    if (sibling) {
        zt_thread_join(sibling);
    }
    for (unsigned i = 0; i < nqueues; i++) {
        if (windows[i].isolate != 0) {
            printf("udpecho: cpu %d: prctl(PR_SET_TASK_ISOLATION) failed: -%s\n", cpu + (int)i,
                   zt_errno_name((int)-windows[i].isolate));
            failed = true;
        }
    }
    if (!failed) {
        report();
    }
    nic_close(&nic);
    zt_release((unsigned)slot);
    struct nic_stats sum;
    nic_stats_sum(&nic, &sum);
    return failed || (count && (long)sum.frames.udp_echoes < count);
}
