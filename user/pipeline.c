/* SPDX-License-Identifier: MIT */
/*
 * pipeline — a multi-core packet pipeline on isolated CPUs, joined by lock-free rings
 * (user/lib/ring.h), driving virtio-net devices from user space (user/net/port.h).
 *
 *   pipeline -c RX,W1[,W2...],TX [-r ROUTES] [-n COUNT] [-t SECONDS] [-x PORT] [-p PORT]
 *            [-a IP] [-g IP|none] [-q SLOTS] [-s SECONDS] [-H PACKETS]
 *   pipeline -m rtc -c CPU1[,CPU2...] [the same options]
 *
 * Pipeline mode (the default): one thread per stage, each pinned to its CPU of the list and
 * isolated in strict mode (the isolating prctl issued as `svc #0x5a5a`, the one ending it as
 * `svc #0xa5a5`, so QEMU's log shows each CPU's window):
 *
 *   RX --ring--> worker 1 --ring--> TX        RX polls the device's receive queue and
 *      --ring--> worker 2 --ring-->           hashes each flow (fwd_flow_hash) to one worker;
 *      ...                                    a worker does the per-packet work (fwd_packet:
 *                                             route lookup, forward or echo, in place); TX
 *                                             posts to the transmit queue, round robin over
 *                                             the workers' rings, and frees sent buffers.
 * Every ring is SP/SC with SLOTS slots (-q, default 128); packets are pointers to buffers in
 * DMA memory (zero copy).  A flow always takes the same worker and every ring is FIFO, so a
 * flow stays in order.  Nothing waits: when a worker's ring is full RX drops the packet and
 * counts it (ring-full), a worker whose output ring is full keeps its packets and stops
 * taking new ones, TX keeps what the device's queue cannot take; the back-pressure ends at
 * RX's drop counter.
 *
 * Run-to-completion mode (-m rtc): K threads, each on its CPU with a device of its own (the
 * K lowest network slots: give QEMU K virtio-net-device instances), each doing receive,
 * fwd_packet and transmit itself: the same work without rings, so their cost shows.
 *
 * The route table (-r FILE, route.h's format) is read before anything starts; a bad line is
 * refused with its number and the program exits 1.  Without -r every destination is echoed.
 * Stops after COUNT UDP echoes (-n), SECONDS of guest time (-t, default 30) or a datagram to
 * the control port (-x); then RX (or each rtc thread) stops first and every later stage
 * drains its rings before it ends isolation.  Prints a ready line, with -s a status line
 * every SECONDS read live from the stages' counters (each stage publishes them with relaxed
 * stores: no lock, no system call), and at the end one line per stage (packets, ring-full
 * and no-buffer drops, empty polls, busy share of its window, instructions per packet where
 * the PMU counts, exceptions its CPU took in the window) and the totals.
 * -H PACKETS (a test of back-pressure): the workers start only once RX has taken PACKETS
 * packets, so that the rings fill and RX's drops show.
 * Exit status 0, or 1 if something failed or COUNT was given and not reached.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/dev.h"
#include "net/fwd.h"
#include "net/port.h"
#include "ring.h"
#include "zt.h"

#define MAX_STAGES  8
#define MAX_WORKERS (MAX_STAGES - 2)
#define BURST       32
#define POOL_PIPE   1536 /* buffers of the pipeline's one device: 3 MiB (a claim: 4 MiB) */
#define POOL_RTC                                                                                   \
    1024 /* buffers of each run-to-completion device: 256 posted for receive,                      \
            up to 256 waiting in the transmit queue, the rest in caches */
#define ROUTES_MAX 65536
/* Under -icount the PMU's INST_RETIRED counts every vCPU (QEMU's icount), and the vCPUs take
 * turns on one host thread: a round during which another stage's vCPU ran (its heartbeat,
 * bumped every round, moved) is left out of the per-packet figures, and counted. */

enum kind { RX, WORKER, TX, RTC };

/* What a stage publishes while it runs (relaxed stores by its thread, any thread reads). */
struct live {
    uint64_t pkts;       /* packets through this stage */
    uint64_t ring_full;  /* RX: dropped, the worker's ring full; worker: rounds its output
                            ring was full; TX/rtc: rounds the device's queue was full */
    uint64_t no_buffer;  /* RX, rtc: dropped for want of a fresh buffer */
    uint64_t empty;      /* polls that found nothing */
    uint64_t busy_ticks; /* counter ticks in rounds that moved packets */
    uint64_t echoes;     /* worker, rtc: UDP echoes */
    uint64_t ctl;        /* worker, rtc: datagrams to the control port */
};

struct stage {
    enum kind kind;
    int index, cpu;
    long error; /* the isolating prctl's -errno */
    struct live live;
    uint64_t window_ticks, exc;
    uint64_t busy_insts, counted_pkts, left_out; /* PMU, rounds within SWITCH_INSTS */
    struct zt_ring *in, *out;                    /* worker */
    struct fwd_stats fwd;                        /* worker, rtc */
    struct fwd_cfg cfg;                          /* worker, rtc: addresses, routes */
    uint64_t beat;     /* rounds begun: under -icount, another stage's moving shows a vCPU switch */
    struct port *port; /* RX, TX, rtc */
    int slot;
    int done; /* release-stored when the stage has ended */
} __attribute__((aligned(64)));

static struct stage stages[MAX_STAGES];
static int nstages, nworkers, rtc_mode;
static int cpus[MAX_STAGES], ncpus;
static const char *routes_path;
static long count;
static double seconds = 30, status_s;
static unsigned udp_port = 7, ctl_port, ring_slots = 128;
static long hold;   /* -H: workers start only once RX has taken this many packets */
static bool pmu_on; /* the PMU counts instructions (QEMU: only under -icount) */
static uint8_t ip[4] = {10, 0, 2, 15}, gateway[4] = {10, 0, 2, 2};
static bool ask_gateway = true;
static struct route_table routes;
static struct port ports[MAX_STAGES];
static int nports;
/* The start line: each stage adds itself and waits for all (no part for the main thread: a
 * sleeping housekeeping thread is not woken by its timer under -icount while other vCPUs
 * spin, QEMU's round-robin).  stop: set by the deciding stage (RX, or rtc0) on COUNT, the
 * control port or the deadline; RX (or each rtc thread) then ends and the rest drain. */
static int go, stop;
static const char *stop_why = "time";
static uint64_t stop_deadline; /* counter value at which the run ends */

static void usage(void)
{
    fprintf(stderr, "usage: pipeline [-m pipeline|rtc] -c CPULIST [-r ROUTES] [-n COUNT] "
                    "[-t SECONDS] [-x PORT] [-p PORT] [-a IP] [-g IP|none] [-q SLOTS] "
                    "[-s SECONDS] [-H PACKETS]\n");
    exit(2);
}

#define LIVE_ADD(s, field, v)                                                                      \
    __atomic_store_n(&(s)->live.field, (s)->live.field + (v), __ATOMIC_RELAXED)

static inline uint32_t inst_read(void)
{
    uint64_t v;
    __asm__ volatile("isb; mrs %0, pmevcntr0_el0" : "=r"(v)::"memory");
    return (uint32_t)v;
}

/* A round's start: the other stages' heartbeats (when the PMU counts), the instruction count
 * and the counter. */
struct round {
    uint64_t beats, t0; /* beats: read only when the PMU counts */
    uint32_t i0;
};

static uint64_t other_beats(const struct stage *s)
{
    uint64_t sum = 0;
    for (int i = 0; i < nstages; i++) {
        if (&stages[i] != s) {
            sum += __atomic_load_n(&stages[i].beat, __ATOMIC_RELAXED);
        }
    }
    return sum;
}

static inline void round_start(struct stage *s, struct round *r)
{
    r->beats = 0;
    if (pmu_on) {
        __atomic_store_n(&s->beat, s->beat + 1, __ATOMIC_RELAXED);
        r->beats = other_beats(s);
    }
    r->i0 = inst_read();
    r->t0 = zt_counter();
}

/* Account a round that moved n packets. */
static inline void busy_round(struct stage *s, unsigned n, const struct round *r)
{
    uint32_t d = inst_read() - r->i0;
    if (pmu_on && other_beats(s) != r->beats) {
        s->left_out++; /* another vCPU ran meanwhile: its instructions are in d */
    } else {
        s->busy_insts += d;
        s->counted_pkts += n;
    }
    LIVE_ADD(s, busy_ticks, zt_counter() - r->t0);
}

/* ---- the stages ---- */

static uint64_t live(const uint64_t *field)
{
    return __atomic_load_n(field, __ATOMIC_RELAXED);
}

/* The deciding stage, every STOP_EVERY rounds: has COUNT, the control port or the deadline
 * come?  Reads the other stages' counters (their cache lines) only then. */
#define STOP_EVERY 256
static bool should_stop(void)
{
    uint64_t echoes = 0, ctl = 0;
    for (int i = 0; i < nstages; i++) {
        echoes += live(&stages[i].live.echoes);
        ctl += live(&stages[i].live.ctl);
    }
    if (ctl) {
        stop_why = "control port";
    } else if (count && (long)echoes >= count) {
        stop_why = "count";
    } else if (zt_counter() < stop_deadline) {
        return false;
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    return true;
}

static unsigned worker_of(uint32_t hash)
{
    return (unsigned)(((uint64_t)hash * (unsigned)nworkers) >> 32);
}

static void rx_loop(struct stage *s)
{
    struct port_rxq *q = &s->port->rxq;
    struct pkt *pk[BURST], *by[MAX_WORKERS][BURST];
    for (unsigned round = 1;; round++) {
        if (round % STOP_EVERY == 0 && should_stop()) {
            break;
        }
        struct round rd;
        round_start(s, &rd);
        unsigned n = port_rx_burst(q, pk, BURST), nb[MAX_WORKERS] = {0};
        if (n == 0) {
            LIVE_ADD(s, empty, 1);
            continue;
        }
        for (unsigned i = 0; i < n; i++) {
            pk[i]->hash = fwd_flow_hash(pkt_data(pk[i]), pk[i]->len);
            unsigned w = worker_of(pk[i]->hash);
            by[w][nb[w]++] = pk[i];
        }
        unsigned dropped = 0;
        for (int w = 0; w < nworkers; w++) {
            unsigned put = zt_ring_sp_enqueue_burst(stages[1 + w].in, (void **)by[w], nb[w]);
            if (put < nb[w]) {
                port_rx_drop(q, by[w] + put, nb[w] - put);
                dropped += nb[w] - put;
            }
        }
        LIVE_ADD(s, pkts, n);
        LIVE_ADD(s, ring_full, dropped);
        __atomic_store_n(&s->live.no_buffer, q->no_buffer, __ATOMIC_RELAXED);
        busy_round(s, n, &rd);
    }
}

static void worker_loop(struct stage *s)
{
    struct pkt *pend[BURST];
    unsigned npend = 0, off = 0;
    const struct stage *rx = &stages[0];
    while (hold && (long)__atomic_load_n(&rx->live.pkts, __ATOMIC_RELAXED) < hold &&
           !__atomic_load_n(&rx->done, __ATOMIC_ACQUIRE)) {
        /* -H: let the rings fill, so that RX's drops show (a test of back-pressure) */
    }
    for (;;) {
        struct round rd;
        round_start(s, &rd);
        if (off == npend) {
            bool rx_done = __atomic_load_n(&rx->done, __ATOMIC_ACQUIRE);
            npend = zt_ring_sc_dequeue_burst(s->in, (void **)pend, BURST);
            off = 0;
            if (npend == 0) {
                if (rx_done) {
                    return; /* RX has ended and everything it passed on is handled */
                }
                LIVE_ADD(s, empty, 1);
                continue;
            }
            for (unsigned i = 0; i < npend; i++) {
                pend[i]->len =
                    (uint32_t)fwd_packet(&s->cfg, pkt_data(pend[i]), pend[i]->len, &s->fwd);
            }
            LIVE_ADD(s, pkts, npend);
            __atomic_store_n(&s->live.echoes, s->fwd.frames.udp_echoes, __ATOMIC_RELAXED);
            __atomic_store_n(&s->live.ctl, s->fwd.frames.ctl_datagrams, __ATOMIC_RELAXED);
        }
        unsigned put = zt_ring_sp_enqueue_burst(s->out, (void **)pend + off, npend - off);
        off += put;
        LIVE_ADD(s, ring_full, off < npend);
        busy_round(s, put, &rd);
    }
}

/* TX: have all workers ended, with nothing left in their rings? */
static bool workers_drained(void)
{
    for (int w = 0; w < nworkers; w++) {
        const struct stage *ws = &stages[1 + w];
        if (!__atomic_load_n(&ws->done, __ATOMIC_ACQUIRE) || zt_ring_count(ws->out) != 0) {
            return false;
        }
    }
    return true;
}

static void tx_loop(struct stage *s)
{
    struct port_txq *q = &s->port->txq;
    struct pkt *pend[MAX_WORKERS][BURST];
    unsigned npend[MAX_WORKERS] = {0}, off[MAX_WORKERS] = {0};
    q->defer_kick = true; /* the notify is written between rounds, outside the measured ones */
    for (;;) {
        port_tx_kick(q);
        bool ended = workers_drained(); /* before the last look at the rings */
        struct round rd;
        round_start(s, &rd);
        unsigned moved = port_tx_reclaim_low(q), sent = 0, left = 0;
        for (int w = 0; w < nworkers; w++) {
            if (off[w] == npend[w]) {
                npend[w] = zt_ring_sc_dequeue_burst(stages[1 + w].out, (void **)pend[w], BURST);
                off[w] = 0;
            }
            if (off[w] < npend[w]) {
                unsigned k = port_tx_post(q, pend[w] + off[w], npend[w] - off[w]);
                off[w] += k;
                sent += k;
                left += npend[w] - off[w];
            }
        }
        if (sent == 0 && moved == 0) {
            if (ended && left == 0) {
                break;
            }
            LIVE_ADD(s, empty, 1);
            continue;
        }
        LIVE_ADD(s, pkts, sent);
        __atomic_store_n(&s->live.ring_full, q->queue_full, __ATOMIC_RELAXED);
        busy_round(s, sent, &rd);
    }
    port_tx_kick(q);
    uint64_t until = zt_counter() + zt_counter_freq() / 100; /* 10 ms for the last sends */
    while (port_tx_inflight(q) && zt_counter() < until) {
        port_tx_reclaim(q);
    }
}

static void rtc_loop(struct stage *s)
{
    struct port_rxq *rq = &s->port->rxq;
    struct port_txq *tq = &s->port->txq;
    struct pkt *pk[BURST];
    for (unsigned round = 1;; round++) {
        if (round % STOP_EVERY == 0 &&
            (s->index == 0 ? should_stop() : __atomic_load_n(&stop, __ATOMIC_RELAXED))) {
            break;
        }
        struct round rd;
        round_start(s, &rd);
        unsigned n = port_rx_burst(rq, pk, BURST);
        if (n == 0) {
            if (port_tx_reclaim_low(tq)) {
                busy_round(s, 0, &rd); /* sent buffers back to the pool: work per packet */
            } else {
                LIVE_ADD(s, empty, 1);
            }
            continue;
        }
        for (unsigned i = 0; i < n; i++) {
            pk[i]->len = (uint32_t)fwd_packet(&s->cfg, pkt_data(pk[i]), pk[i]->len, &s->fwd);
        }
        unsigned done = port_tx_burst(tq, pk, n);
        if (done < n) { /* the transmit queue is full: drop the rest (length 0 frees them) */
            for (unsigned i = done; i < n; i++) {
                pk[i]->len = 0;
            }
            port_tx_burst(tq, pk + done, n - done);
            LIVE_ADD(s, ring_full, n - done);
        }
        LIVE_ADD(s, pkts, n);
        __atomic_store_n(&s->live.no_buffer, rq->no_buffer, __ATOMIC_RELAXED);
        __atomic_store_n(&s->live.echoes, s->fwd.frames.udp_echoes, __ATOMIC_RELAXED);
        __atomic_store_n(&s->live.ctl, s->fwd.frames.ctl_datagrams, __ATOMIC_RELAXED);
        busy_round(s, n, &rd);
    }
}

static uint64_t exceptions(int cpu)
{
    return zt_counters_exceptions(zt_counters_of((unsigned)cpu));
}

/* The gate: threads sleep here (futex) until the main thread has started them all.  Under
 * -icount, QEMU's round-robin does not wake a sleeping vCPU (the main thread's, waiting for
 * the next thread's start) while another vCPU spins: so no thread may spin before the main
 * thread is done with them all, and none ever waits for it afterwards. */
static int gate;

static void pass_gate(void)
{
    while (__atomic_load_n(&gate, __ATOMIC_ACQUIRE) == 0) {
        zt_futex_wait(&gate, 0, NULL);
    }
}

static void open_gate(void)
{
    __atomic_store_n(&gate, 1, __ATOMIC_RELEASE);
    zt_futex_wake(&gate, 1 << 30);
}

static long stage_main(void *arg)
{
    struct stage *s = arg;
    pass_gate();
    uint64_t exc0 = exceptions(s->cpu);
    s->error =
        zt_syscall6_mark_open(SYS_prctl, PR_SET_TASK_ISOLATION,
                              PR_TASK_ISOLATION_ENABLE | PR_TASK_ISOLATION_STRICT, 0, 0, 0, 0);
    if (__atomic_add_fetch(&go, 1, __ATOMIC_ACQ_REL) == nstages) {
        stop_deadline = zt_counter() + (uint64_t)(seconds * (double)zt_counter_freq());
        __atomic_add_fetch(&go, 1, __ATOMIC_RELEASE); /* the last one in starts the run */
    }
    while (__atomic_load_n(&go, __ATOMIC_ACQUIRE) <= nstages) {
        /* every stage isolated before the first packet moves */
    }
    uint64_t t0 = zt_counter();
    if (s->error == 0) {
        switch (s->kind) {
        case RX:
            rx_loop(s);
            break;
        case WORKER:
            worker_loop(s);
            break;
        case TX:
            tx_loop(s);
            break;
        case RTC:
            rtc_loop(s);
            break;
        }
    }
    s->window_ticks = zt_counter() - t0;
    s->exc = exceptions(s->cpu) - exc0 - 1; /* the opening svc is inside the window */
    __atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
    zt_syscall6_mark_close(SYS_prctl, PR_SET_TASK_ISOLATION, 0, 0, 0, 0, 0);
    return 0;
}

/* ---- setting up ---- */

static long number(const char *s, long lo, long hi)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == 0 || *end != 0 || v < lo || v > hi) {
        usage();
    }
    return v;
}

static void parse_cpus(const char *s)
{
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 0 || v >= zt_nr_cpus() || ncpus == MAX_STAGES ||
            (*end && *end != ',')) {
            usage();
        }
        cpus[ncpus++] = (int)v;
        s = *end ? end + 1 : end;
    }
}

static void option(char opt, const char *v)
{
    switch (opt) {
    case 'm':
        if (strcmp(v, "rtc") && strcmp(v, "pipeline")) {
            usage();
        }
        rtc_mode = !strcmp(v, "rtc");
        break;
    case 'c':
        parse_cpus(v);
        break;
    case 'r':
        routes_path = v;
        break;
    case 'n':
        count = number(v, 1, 1000000000);
        break;
    case 't':
        seconds = strtod(v, NULL);
        break;
    case 's':
        status_s = strtod(v, NULL);
        break;
    case 'p':
        udp_port = (unsigned)number(v, 1, 65535);
        break;
    case 'x':
        ctl_port = (unsigned)number(v, 1, 65535);
        break;
    case 'H':
        hold = number(v, 1, 1000000000);
        break;
    case 'q':
        ring_slots = (unsigned)number(v, 2, 4096);
        if (ring_slots & (ring_slots - 1)) {
            usage();
        }
        break;
    case 'a':
        if (!frame_parse_ip(v, ip)) {
            usage();
        }
        break;
    case 'g':
        ask_gateway = strcmp(v, "none") != 0;
        if (ask_gateway && !frame_parse_ip(v, gateway)) {
            usage();
        }
        break;
    default:
        usage();
    }
}

static void parse(int argc, char **argv)
{
    for (int i = 1; i < argc; i += 2) {
        const char *a = argv[i];
        if (a[0] != '-' || a[1] == 0 || a[2] != 0 || i + 1 >= argc) {
            usage();
        }
        option(a[1], argv[i + 1]);
    }
    if (!(seconds > 0 && seconds <= 3600) || status_s < 0 || (rtc_mode ? ncpus < 1 : ncpus < 3)) {
        usage();
    }
    for (int i = 0; i < ncpus; i++) {
        for (int j = 0; j < i; j++) {
            if (cpus[i] == cpus[j]) {
                usage();
            }
        }
    }
}

/* Read and check the route table; 0, or 1 after saying what is wrong. */
static int load_routes(void)
{
    route_init(&routes);
    if (!routes_path) {
        return 0;
    }
    static char text[ROUTES_MAX + 1];
    long fd = zt_syscall4(SYS_openat, -100 /* AT_FDCWD */, routes_path, 0, 0), n = 0, r;
    if (fd < 0) {
        printf("pipeline: %s: cannot open: -%s\n", routes_path, zt_errno_name((int)-fd));
        return 1;
    }
    while (n < ROUTES_MAX && (r = zt_read((int)fd, text + n, (size_t)(ROUTES_MAX - n))) > 0) {
        n += r;
    }
    zt_syscall1(SYS_close, fd);
    if (n == ROUTES_MAX) {
        printf("pipeline: %s: longer than %d bytes\n", routes_path, ROUTES_MAX);
        return 1;
    }
    char err[160];
    if (route_parse(&routes, text, (size_t)n, err, sizeof(err)) != 0) {
        printf("pipeline: %s: refused: %s\n", routes_path, err);
        return 1;
    }
    return 0;
}

/* The network slots in ascending order; how many. */
static int net_slots(int *out, int max)
{
    struct zt_device_info info[32];
    long n = zt_devices(info, 32);
    int k = 0;
    for (long i = 0; i < n && i < 32 && k < max; i++) {
        if (info[i].device_id == ZT_VIRTIO_ID_NET) {
            out[k++] = (int)info[i].slot;
        }
    }
    for (int i = 1; i < k; i++) { /* insertion sort: a handful */
        for (int j = i; j > 0 && out[j - 1] > out[j]; j--) {
            int t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    }
    return k;
}

/* Claim and open port i on `slot`; 0, or 1 after saying why not. */
static int open_port(int i, int slot, unsigned nbufs)
{
    struct zt_claim c;
    long r =
        zt_claim((unsigned)slot, port_dma_bytes(nbufs), ZT_CLAIM_V2 | ZT_CLAIM_UNCONFINED_DMA, &c);
    if (r) {
        printf("pipeline: cannot claim slot %d: -%s\n", slot, zt_errno_name((int)-r));
        return 1;
    }
    char err[200];
    if (port_open(&ports[i], &c, nbufs, err, sizeof(err)) != 0) {
        printf("pipeline: slot %d: %s\n", slot, err);
        zt_release((unsigned)slot);
        return 1;
    }
    nports = i + 1;
    if (ask_gateway) { /* lets QEMU's user networking learn our MAC */
        struct frame_cfg fc = {.udp_port = (uint16_t)udp_port};
        struct pkt *p;
        memcpy(fc.mac, ports[i].dev.cfg.mac, 6);
        memcpy(fc.ip, ip, 4);
        if (zt_ring_sc_dequeue(ports[i].free, (void **)&p)) {
            p->len = (uint32_t)frame_arp_request(&fc, gateway, pkt_data(p));
            port_tx_burst(&ports[i].txq, &p, 1);
        }
    }
    return 0;
}

static void close_ports(const int *slots)
{
    for (int i = 0; i < nports; i++) {
        port_close(&ports[i]);
        zt_release((unsigned)slots[i]);
    }
}

/* The stages of either mode, their CPUs, ports and rings; 0 or 1. */
static int build(const int *slots, int nslots)
{
    nstages = ncpus;
    if (rtc_mode) {
        if (nslots < ncpus) {
            printf("pipeline: rtc on %d cpus needs %d network devices, found %d (QEMU: one "
                   "-device virtio-net-device per cpu)\n",
                   ncpus, ncpus, nslots);
            return 1;
        }
        for (int i = 0; i < ncpus; i++) {
            stages[i] = (struct stage){.kind = RTC, .index = i, .cpu = cpus[i], .slot = slots[i]};
            if (open_port(i, slots[i], POOL_RTC)) {
                return 1;
            }
            stages[i].port = &ports[i];
        }
        return 0;
    }
    nworkers = ncpus - 2;
    if (nworkers > MAX_WORKERS || nslots < 1) {
        printf(nslots < 1 ? "pipeline: no virtio network device (QEMU: -device "
                            "virtio-net-device,...)\n"
                          : "pipeline: too many workers\n");
        return 1;
    }
    if (open_port(0, slots[0], POOL_PIPE)) {
        return 1;
    }
    stages[0] = (struct stage){.kind = RX, .cpu = cpus[0], .port = &ports[0], .slot = slots[0]};
    stages[ncpus - 1] =
        (struct stage){.kind = TX, .cpu = cpus[ncpus - 1], .port = &ports[0], .slot = slots[0]};
    for (int w = 0; w < nworkers; w++) {
        struct stage *s = &stages[1 + w];
        *s = (struct stage){.kind = WORKER, .index = w, .cpu = cpus[1 + w]};
        s->in = zt_ring_create(ring_slots, 8, ZT_RING_SP_ENQ | ZT_RING_SC_DEQ);
        s->out = zt_ring_create(ring_slots, 8, ZT_RING_SP_ENQ | ZT_RING_SC_DEQ);
        if (!s->in || !s->out) {
            printf("pipeline: no memory for the rings\n");
            return 1;
        }
    }
    return 0;
}

/* ---- watching and reporting ---- */

static const char *stage_name(const struct stage *s, char *buf, size_t n)
{
    static const char *const names[] = {"rx", "worker", "tx", "rtc"};
    if (s->kind == WORKER || s->kind == RTC) {
        snprintf(buf, n, "%s%d", names[s->kind], s->index);
    } else {
        snprintf(buf, n, "%s", names[s->kind]);
    }
    return buf;
}

static void status_line(double at)
{
    printf("pipeline: status %.1f s:", at);
    for (int i = 0; i < nstages; i++) {
        char name[16];
        const struct stage *s = &stages[i];
        printf(
            " %s %llu (full %llu, no-buffer %llu, empty %llu)", stage_name(s, name, 16),
            (unsigned long long)live(&s->live.pkts), (unsigned long long)live(&s->live.ring_full),
            (unsigned long long)live(&s->live.no_buffer), (unsigned long long)live(&s->live.empty));
    }
    printf("\n");
    fflush(stdout);
}

/* With -s: a status line every status_s seconds until every stage has ended (sleeping on
 * housekeeping: under -icount the lines come late, see `go`). */
static void watch(void)
{
    uint64_t start = zt_counter(), freq = zt_counter_freq();
    uint64_t next = (uint64_t)(status_s * (double)freq);
    for (;;) {
        bool all_done = true;
        for (int i = 0; i < nstages; i++) {
            all_done &= __atomic_load_n(&stages[i].done, __ATOMIC_ACQUIRE) != 0;
        }
        if (all_done) {
            return;
        }
        uint64_t now = zt_counter() - start;
        if (now >= next) {
            status_line((double)now / (double)freq);
            next += (uint64_t)(status_s * (double)freq);
        }
        zt_sleep_ns(10000000);
    }
}

static void print_per_packet(const struct stage *s, char *buf, size_t n)
{
    if (!pmu_on || s->busy_insts == 0 || s->counted_pkts == 0) {
        snprintf(buf, n, "n/a");
    } else {
        snprintf(buf, n, "%llu", (unsigned long long)(s->busy_insts / s->counted_pkts));
    }
}

static void add_fwd(struct fwd_stats *t, const struct fwd_stats *f)
{
    t->forwarded += f->forwarded;
    t->ttl_expired += f->ttl_expired;
    t->routed_drops += f->routed_drops;
    t->fast_echoes += f->fast_echoes;
    t->frames.arp_replies += f->frames.arp_replies;
    t->frames.icmp_echoes += f->frames.icmp_echoes;
    t->frames.udp_echoes += f->frames.udp_echoes;
    t->frames.ctl_datagrams += f->frames.ctl_datagrams;
    for (int d = 0; d < DROP_KINDS; d++) {
        t->frames.drops[d] += f->frames.drops[d];
    }
}

/* One line per stage, then the totals; 1 if a stage failed or took an exception. */
static int report(const char *why, struct fwd_stats *tot)
{
    uint64_t exc = 0, left_out = 0, per_packet = 0, worst = 0, w_insts = 0, w_pkts = 0;
    bool have_insts = pmu_on;
    int failed = 0;
    for (int i = 0; i < nstages; i++) {
        const struct stage *s = &stages[i];
        char name[16], ipp[24];
        stage_name(s, name, 16);
        if (s->error) {
            printf("pipeline: %s cpu %d: prctl(PR_SET_TASK_ISOLATION) failed: -%s\n", name, s->cpu,
                   zt_errno_name((int)-s->error));
            failed = 1;
            continue;
        }
        print_per_packet(s, ipp, sizeof(ipp));
        char sent[48] = "";
        if (s->kind == TX || s->kind == RTC) {
            snprintf(sent, sizeof(sent), " sent %llu freed %llu",
                     (unsigned long long)s->port->txq.tx,
                     (unsigned long long)s->port->txq.freed_drops);
        }
        printf("pipeline: stage %s cpu %d: packets %llu%s ring-full %llu no-buffer %llu "
               "empty-polls %llu busy %.2f%% insts-per-packet %s exceptions %llu\n",
               name, s->cpu, (unsigned long long)s->live.pkts, sent,
               (unsigned long long)s->live.ring_full, (unsigned long long)s->live.no_buffer,
               (unsigned long long)s->live.empty,
               s->window_ticks ? 100.0 * (double)s->live.busy_ticks / (double)s->window_ticks : 0.0,
               ipp, (unsigned long long)s->exc);
        exc += s->exc;
        worst = s->exc > worst ? s->exc : worst;
        left_out += s->left_out;
        if (s->kind == WORKER) { /* the workers share the packets: their cost per packet */
            w_insts += s->busy_insts;
            w_pkts += s->counted_pkts;
        } else if (s->counted_pkts) {
            per_packet += s->busy_insts * 1000 / s->counted_pkts;
        }
        if (s->kind == WORKER || s->kind == RTC) {
            add_fwd(tot, &s->fwd);
        }
    }
    per_packet += w_pkts ? w_insts * 1000 / w_pkts : 0;
    const struct frame_stats *f = &tot->frames;
    printf("pipeline: done after %.3f s (%s): udp-echoes %llu fast %llu forwarded %llu "
           "icmp-echoes %llu arp-replies %llu routed-drops %llu ttl-expired %llu\n",
           (double)zt_counter_to_ns(stages[0].window_ticks) / 1e9, why,
           (unsigned long long)f->udp_echoes, (unsigned long long)tot->fast_echoes,
           (unsigned long long)tot->forwarded, (unsigned long long)f->icmp_echoes,
           (unsigned long long)f->arp_replies, (unsigned long long)tot->routed_drops,
           (unsigned long long)tot->ttl_expired);
    printf("pipeline: dropped:");
    for (int d = 0; d < DROP_KINDS; d++) {
        printf(" %s %llu", frame_drop_name((enum frame_drop)d), (unsigned long long)f->drops[d]);
    }
    printf("\n");
    if (have_insts && !rtc_mode && stages[0].counted_pkts) {
        printf(
            "pipeline: instructions per packet, all stages: %llu.%03llu (rounds left out: %llu)\n",
            (unsigned long long)(per_packet / 1000), (unsigned long long)(per_packet % 1000),
            (unsigned long long)left_out);
    } else if (have_insts && rtc_mode) {
        uint64_t insts = 0, pk = 0;
        for (int i = 0; i < nstages; i++) {
            insts += stages[i].busy_insts;
            pk += stages[i].counted_pkts;
        }
        printf("pipeline: instructions per packet, all cpus: %llu (rounds left out: %llu)\n",
               (unsigned long long)(pk ? insts / pk : 0), (unsigned long long)left_out);
    } else {
        printf("pipeline: instructions: n/a (the PMU counts only under -icount, REPRO=1)\n");
    }
    printf("pipeline: exceptions on the pipeline cpus: %llu\n", (unsigned long long)exc);
    return failed || worst != 0;
}

static void print_ready(const int *slots)
{
    const uint8_t *m = ports[0].dev.cfg.mac;
    printf("pipeline: ready: %s, %d cpus (", rtc_mode ? "run-to-completion" : "pipeline", ncpus);
    for (int i = 0; i < nstages; i++) {
        char name[16];
        printf("%s%s %d", i ? ", " : "", stage_name(&stages[i], name, 16), stages[i].cpu);
    }
    printf("), slot%s", nports > 1 ? "s" : "");
    for (int i = 0; i < nports; i++) {
        printf(" %d", slots[i]);
    }
    printf(", mac %02x:%02x:%02x:%02x:%02x:%02x, ip %u.%u.%u.%u, udp port %u, routes %u\n", m[0],
           m[1], m[2], m[3], m[4], m[5], ip[0], ip[1], ip[2], ip[3], udp_port, routes.nroutes);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    parse(argc, argv);
    pmu_on = zt_have_el0_pmu() && inst_read() != inst_read();
    if (load_routes() != 0) {
        return 1;
    }
    int slots[MAX_STAGES];
    int nslots = net_slots(slots, MAX_STAGES);
    if (build(slots, nslots) != 0) {
        close_ports(slots);
        return 1;
    }
    for (int i = 0; i < nstages; i++) { /* each device's own MAC (rtc: one device each) */
        struct fwd_cfg *c = &stages[i].cfg;
        memcpy(c->frame.mac, ports[rtc_mode ? i : 0].dev.cfg.mac, 6);
        memcpy(c->frame.ip, ip, 4);
        c->frame.udp_port = (uint16_t)udp_port;
        c->frame.ctl_port = (uint16_t)ctl_port;
        c->routes = &routes;
    }
    print_ready(slots);
    zt_thread_t *t[MAX_STAGES];
    for (int i = 0; i < nstages; i++) {
        if (!(t[i] = zt_thread_create(stage_main, &stages[i], stages[i].cpu))) {
            printf("pipeline: cannot start a thread on cpu %d\n", stages[i].cpu);
            exit(1); /* the started ones wait at the gate: the process ends them */
        }
    }
    open_gate();
    if (status_s > 0) {
        watch();
    }
    for (int i = 0; i < nstages; i++) {
        zt_thread_join(t[i]);
    }
    struct fwd_stats tot;
    memset(&tot, 0, sizeof(tot));
    int failed = report(stop_why, &tot);
    close_ports(slots);
    return failed || (count && (long)tot.frames.udp_echoes < count);
}
