/* SPDX-License-Identifier: MIT */
/*
 * udpecho — a UDP echo server polled on a dataplane CPU, driving a virtio-net device from
 * user space (user/net/): the data plane runs with no kernel on its path.
 *
 *   udpecho -c CPU [-n COUNT] [-t SECONDS] [-p PORT] [-a IP] [-s SLOT] [-x PORT] [-g IP] [-m]
 *
 * Pins itself to CPU, claims the network device (the lowest net slot, or -s SLOT), brings it
 * up, asks once who has the gateway (-g, default 10.0.2.2, "-g none" to skip: lets QEMU's user
 * networking learn our MAC), prints a "ready" line, isolates in strict mode (the isolating
 * prctl issued as `svc #0x5a5a`, the one ending isolation as `svc #0xa5a5`, like isol), and
 * polls: answers ARP for its address and ping, echoes UDP datagrams to PORT (default 7, the
 * echo port) at IP (default 10.0.2.15, QEMU's guest address), counts and drops the rest.
 * It stops after COUNT datagrams echoed, after SECONDS (default 30) of guest time, or when a
 * datagram reaches the control port (-x PORT); ends isolation; prints its totals (received,
 * sent, drops by reason, polls and empty polls, rx-ring-full events, the share of the window
 * spent on received frames ("busy"), instructions per packet, the CPU's exceptions over the
 * window); resets and releases the device.
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
static long count;
static unsigned port = 7, ctl_port;
static double seconds = 30;
static uint8_t ip[4] = {10, 0, 2, 15}, gateway[4] = {10, 0, 2, 2};
static bool ask_gateway = true;
static volatile int mapper_stop;
static struct nic nic;

static void usage(void)
{
    fprintf(stderr, "usage: udpecho -c CPU [-n COUNT] [-t SECONDS] [-p PORT] [-a IP] [-s SLOT] "
                    "[-x PORT] [-g IP|none] [-m]\n");
    exit(2);
}

static bool parse_ip(const char *s, uint8_t out[4])
{
    unsigned a, b, c, d;
    char end;
    if (sscanf(s, "%u.%u.%u.%u%c", &a, &b, &c, &d, &end) != 4 || a > 255 || b > 255 || c > 255 ||
        d > 255) {
        return false;
    }
    out[0] = (uint8_t)a, out[1] = (uint8_t)b, out[2] = (uint8_t)c, out[3] = (uint8_t)d;
    return true;
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
    if (!parse_ip(v, out)) {
        usage();
    }
}

static void option(char opt, const char *v)
{
    switch (opt) {
    case 'c':
        cpu = (int)number(v, 0, 63);
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
        slot = (int)number(v, 0, 31);
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
    if (cpu < 0 || cpu >= zt_nr_cpus() || !(seconds > 0 && seconds <= 3600)) {
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

/* Exceptions this CPU has taken, from its counters page (no system call). */
static uint64_t exceptions(void)
{
    const volatile struct zt_cpu_counters *c = zt_counters_of((unsigned)cpu);
    return zt_counters_exceptions(c);
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
    if (slot < 0 && (slot = dev_find(ZT_VIRTIO_ID_NET)) < 0) {
        printf("udpecho: no virtio network device (QEMU: -device virtio-net-device,...)\n");
        return 1;
    }
    long r = zt_claim((unsigned)slot, nic_dma_bytes(), 0, c);
    if (r) {
        printf("udpecho: cannot claim slot %d: -%s\n", slot, zt_errno_name((int)-r));
        return 1;
    }
    char err[200];
    if (nic_open(&nic, c, ip, (uint16_t)port, err, sizeof(err)) != 0) {
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

struct window {
    uint64_t ticks, exc, insts;
    bool stopped; /* by the control port */
};

/* The isolated part: poll until COUNT, the deadline or a control datagram. */
static void poll_loop(struct window *w)
{
    uint64_t start = zt_counter(), limit = (uint64_t)(seconds * (double)zt_counter_freq());
    uint64_t exc0 = exceptions();
    uint32_t last = inst_read();
    const struct frame_stats *fs = &nic.st.frames;
    while (zt_counter() - start < limit && (!count || (long)fs->udp_echoes < count) &&
           !fs->ctl_datagrams) {
        nic_poll(&nic);
        uint32_t now = inst_read();
        w->insts += (uint32_t)(now - last);
        last = now;
    }
    w->exc = exceptions() - exc0;
    w->ticks = zt_counter() - start;
    w->stopped = fs->ctl_datagrams != 0;
}

static void report(const struct window *w)
{
    const struct nic_stats *s = &nic.st;
    const struct frame_stats *f = &s->frames;
    printf("udpecho: done after %.3f s%s: rx %llu tx %llu udp-echoes %llu icmp-echoes %llu "
           "arp-replies %llu arp-seen %llu\n",
           (double)zt_counter_to_ns(w->ticks) / 1e9, w->stopped ? " (control port)" : "",
           (unsigned long long)s->rx, (unsigned long long)s->tx, (unsigned long long)f->udp_echoes,
           (unsigned long long)f->icmp_echoes, (unsigned long long)f->arp_replies,
           (unsigned long long)f->arp_seen);
    printf("udpecho: dropped:");
    for (int d = 0; d < DROP_KINDS; d++) {
        printf(" %s %llu", frame_drop_name((enum frame_drop)d), (unsigned long long)f->drops[d]);
    }
    printf(" bad-len %llu\n", (unsigned long long)s->bad_len);
    printf("udpecho: polls %llu empty %llu rx-ring-full %llu notifies %llu busy %.2f%%\n",
           (unsigned long long)s->polls, (unsigned long long)s->empty_polls,
           (unsigned long long)s->rx_ring_full, (unsigned long long)s->notifies,
           w->ticks ? 100.0 * (double)s->busy_ticks / (double)w->ticks : 0.0);
    uint64_t busy = s->busy_insts, idle = w->insts > busy ? w->insts - busy : 0;
    if (w->insts) {
        printf("udpecho: instructions: %llu per received frame, %llu per empty poll\n",
               (unsigned long long)(s->rx ? busy / s->rx : 0),
               (unsigned long long)(s->empty_polls ? idle / s->empty_polls : 0));
    } else {
        printf("udpecho: instructions: n/a (the PMU counts only under -icount, REPRO=1)\n");
    }
    printf("udpecho: cpu %d exceptions in the window: %llu\n", cpu, (unsigned long long)w->exc);
}

int main(int argc, char **argv)
{
    zt_thread_t *sibling = NULL;
    struct zt_claim c;
    struct window w = {0};
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
    printf("udpecho: ready: slot %d, mac %02x:%02x:%02x:%02x:%02x:%02x, ip %u.%u.%u.%u, udp port "
           "%u, cpu %d\n",
           slot, nic.cfg.mac[0], nic.cfg.mac[1], nic.cfg.mac[2], nic.cfg.mac[3], nic.cfg.mac[4],
           nic.cfg.mac[5], ip[0], ip[1], ip[2], ip[3], port, cpu);
    fflush(stdout);
    long r = zt_syscall6_mark_open(SYS_prctl, PR_SET_TASK_ISOLATION,
                                   PR_TASK_ISOLATION_ENABLE | PR_TASK_ISOLATION_STRICT, 0, 0, 0, 0);
    if (r == 0) {
        poll_loop(&w);
    }
    zt_syscall6_mark_close(SYS_prctl, PR_SET_TASK_ISOLATION, 0, 0, 0, 0, 0);
    mapper_stop = 1;
    if (sibling) {
        zt_thread_join(sibling);
    }
    if (r != 0) {
        printf("udpecho: prctl(PR_SET_TASK_ISOLATION) failed: -%s\n", zt_errno_name((int)-r));
    } else {
        report(&w);
    }
    nic_close(&nic);
    zt_release((unsigned)slot);
    return r != 0 || (count && (long)nic.st.frames.udp_echoes < count);
}
