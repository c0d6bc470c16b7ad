/* SPDX-License-Identifier: MIT */
/*
 * ringtest — the dataplane rings (user/lib/ring.h) on zerotick's CPUs: a stress across
 * isolated CPUs, and what a ring operation costs in instructions.
 *
 *   ringtest stress -c A,B,C,D [-n OBJECTS]
 *   ringtest cost -c CPU [-d CPU2] [-n OBJECTS]
 *
 * stress: four threads, one on each of the four dataplane CPUs, each isolated in strict mode
 * (the isolating prctl issued as `svc #0x5a5a`, the one ending it as `svc #0xa5a5`, so QEMU's
 * log shows each CPU's window).  Two phases, OBJECTS objects each (default 100,000):
 *   spsc  A generates 1..OBJECTS into ring 1 (SP/SC, 1,024 slots), B and C pass them on
 *         through rings 2 and 3 in bursts, D checks that each is the one after the last;
 *   mpmc  A and B enqueue tagged objects (producer, sequence) into one MP/MC ring of 64
 *         slots by single, bulk and burst calls of random sizes; C and D dequeue the same
 *         ways, count every object in a table and check that each producer's objects come
 *         in increasing order; afterwards every object must have been counted exactly once.
 * Nothing waits in the kernel: a full ring makes a stage try again, an empty one poll again.
 * Prints one line per CPU and phase (objects moved, empty or full polls, exceptions the CPU
 * took in its window by its counters page) and a verdict line:
 *   ringtest: stress ok: spsc N in order, mpmc N exactly once, exceptions 0
 * Exit status 0 only if both phases passed and no CPU took an exception.
 *
 * cost: instructions per object (PMU event counter 0, INST_RETIRED: exact only under
 * -icount, make ... REPRO=1), for SP/SC and MP/MC rings, single and bulk-32 operations:
 *   one CPU   a loop of (enqueue n, dequeue n) on CPU, n = 1 or 32: every instruction of the
 *             loop divided by the objects (an enqueue plus a dequeue per object);
 *   two CPUs  (-d) a producer on CPU and a consumer on CPU2 stream OBJECTS objects through a
 *             1,024-slot ring: the instructions of the calls that moved objects, divided by
 *             the objects (the PMU read around each call, its own cost subtracted); the calls
 *             that found the ring full or empty are counted apart (under -icount the vCPUs
 *             take turns, so one side polls while the other is not running).
 *   ringtest: cost KIND OP cpus K objects N insts_per_object X [enq E deq D failed F]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"
#include "zt.h"

#define STRESS_CPUS  4
#define CHAIN_SLOTS  1024 /* spsc: a 4-vCPU chain on 2 host cores moves a ringful per host slice */
#define SHARED_SLOTS 64   /* mpmc: small, so that producers and consumers collide */
#define BURST        32
/* Under -icount the PMU's INST_RETIRED is QEMU's one instruction count for every vCPU
 * (icount_get_raw), and the vCPUs take turns on one host thread: a call during which the other
 * side's vCPU ran (its heartbeat, bumped every call, moved) is left out and counted. */

static int cpus[STRESS_CPUS], ncpus, cpu2 = -1;
static uint32_t objects = 100000;

static void usage(void)
{
    fprintf(stderr, "usage: ringtest stress -c A,B,C,D [-n OBJECTS]\n"
                    "       ringtest cost -c CPU [-d CPU2] [-n OBJECTS]\n");
    exit(2);
}

static inline uint32_t inst_read(void)
{
    uint64_t v;
    __asm__ volatile("isb; mrs %0, pmevcntr0_el0" : "=r"(v)::"memory");
    return (uint32_t)v;
}

static uint64_t exceptions(int cpu)
{
    return zt_counters_exceptions(zt_counters_of((unsigned)cpu));
}

/* ---- the stress ---- */

struct stage {
    int cpu, index;
    long error;               /* the isolating prctl's -errno */
    uint64_t moved, idle;     /* objects moved; polls that found the ring full or empty */
    uint64_t exc, bad;        /* exceptions in the window; objects out of order or unknown */
    struct zt_ring *in, *out; /* spsc: the rings around this stage */
};

static struct stage stages[STRESS_CPUS];
static struct zt_ring *chain[3], *shared;
static uint8_t *seen; /* mpmc: [producer * per + seq] times consumed */
static uint32_t per;  /* mpmc: objects per producer */
static int phase;     /* 1 spsc, 2 mpmc */
/* Threads isolated and waiting at the start line; the last to arrive starts them all.  The
 * main thread takes no part: a sleeping housekeeping thread is not woken by its timer under
 * -icount while other vCPUs spin (QEMU's round-robin; docs/dataplane.md). */
static int arrived;
static int remaining; /* mpmc: objects not consumed yet */

static uint32_t rnd(uint32_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 17;
    *x ^= *x << 5;
    return *x;
}

static void spsc_stage(struct stage *s)
{
    void *b[BURST];
    if (s->index == 0) {
        for (uintptr_t next = 1; next <= objects;) {
            uint32_t n = objects - next + 1 < BURST ? (uint32_t)(objects - next + 1) : BURST;
            for (uint32_t i = 0; i < n; i++) {
                b[i] = (void *)(next + i);
            }
            uint32_t put = zt_ring_sp_enqueue_burst(s->out, b, n);
            next += put;
            s->moved += put;
            s->idle += put == 0;
        }
        return;
    }
    uintptr_t expect = 1;
    while (s->moved < objects) {
        uint32_t n = zt_ring_sc_dequeue_burst(s->in, b, BURST);
        s->idle += n == 0;
        if (s->out) {
            for (uint32_t put = 0; put < n;) {
                put += zt_ring_sp_enqueue_burst(s->out, b + put, n - put); /* never drop */
            }
        } else {
            for (uint32_t i = 0; i < n; i++, expect++) {
                s->bad += (uintptr_t)b[i] != expect;
            }
        }
        s->moved += n;
    }
}

static void mpmc_producer(struct stage *s)
{
    uint32_t x = 0x9e3779b9u * (uint32_t)(s->index + 1), seq = 0;
    void *b[BURST];
    while (seq < per) {
        uint32_t n = 1 + rnd(&x) % BURST, kind = rnd(&x) % 3, put;
        n = n > per - seq ? per - seq : n;
        for (uint32_t i = 0; i < n; i++) {
            b[i] = (void *)(((uintptr_t)s->index << 40) | (seq + i + 1));
        }
        if (kind == 0) {
            put = zt_ring_mp_enqueue(shared, b[0]);
        } else if (kind == 1) {
            put = zt_ring_mp_enqueue_bulk(shared, b, n);
        } else {
            put = zt_ring_mp_enqueue_burst(shared, b, n);
        }
        seq += put;
        s->moved += put;
        s->idle += put == 0;
    }
}

static void mpmc_consumer(struct stage *s)
{
    uint32_t x = 0x85ebca6bu * (uint32_t)(s->index + 1);
    uintptr_t last[2] = {0, 0};
    void *b[BURST];
    while (__atomic_load_n(&remaining, __ATOMIC_RELAXED) > 0) {
        uint32_t n = 1 + rnd(&x) % BURST, kind = rnd(&x) % 3, got;
        if (kind == 0) {
            got = zt_ring_mc_dequeue(shared, b);
        } else if (kind == 1) {
            got = zt_ring_mc_dequeue_bulk(shared, b, n);
        } else {
            got = zt_ring_mc_dequeue_burst(shared, b, n);
        }
        for (uint32_t i = 0; i < got; i++) {
            uintptr_t t = (uintptr_t)b[i], p = t >> 40, seq = (t & ((1ull << 40) - 1)) - 1;
            if (p > 1 || seq >= per) {
                s->bad++;
                continue;
            }
            s->bad += t <= last[p];
            last[p] = t;
            __atomic_fetch_add(&seen[p * per + seq], 1, __ATOMIC_RELAXED);
        }
        s->moved += got;
        s->idle += got == 0;
        if (got) {
            __atomic_fetch_sub(&remaining, (int)got, __ATOMIC_RELAXED);
        }
    }
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
    __atomic_fetch_add(&arrived, 1, __ATOMIC_ACQ_REL);
    while (__atomic_load_n(&arrived, __ATOMIC_ACQUIRE) < STRESS_CPUS) {
        /* every stage isolated before any object moves */
    }
    if (s->error == 0) {
        if (phase == 1) {
            spsc_stage(s);
        } else if (s->index < 2) {
            mpmc_producer(s);
        } else {
            mpmc_consumer(s);
        }
    }
    s->exc = exceptions(s->cpu) - exc0 - 1; /* the opening svc itself is inside the window */
    zt_syscall6_mark_close(SYS_prctl, PR_SET_TASK_ISOLATION, 0, 0, 0, 0, 0);
    return 0;
}

/* Run one phase on the four CPUs; 0 if every stage isolated and the phase's checks held. */
static int run_phase(int which, const char *name)
{
    zt_thread_t *t[STRESS_CPUS];
    phase = which;
    arrived = gate = 0;
    for (int i = 0; i < STRESS_CPUS; i++) {
        stages[i] = (struct stage){.cpu = cpus[i], .index = i};
        if (which == 1) {
            stages[i].in = i > 0 ? chain[i - 1] : NULL;
            stages[i].out = i < 3 ? chain[i] : NULL;
        }
        if (!(t[i] = zt_thread_create(stage_main, &stages[i], cpus[i]))) {
            printf("ringtest: cannot start a thread on cpu %d\n", cpus[i]);
            exit(1);
        }
    }
    open_gate();
    int failed = 0;
    for (int i = 0; i < STRESS_CPUS; i++) {
        zt_thread_join(t[i]);
        struct stage *s = &stages[i];
        if (s->error) {
            printf("ringtest: cpu %d: prctl(PR_SET_TASK_ISOLATION) failed: -%s\n", s->cpu,
                   zt_errno_name((int)-s->error));
            failed = 1;
            continue;
        }
        printf("ringtest: %s cpu %d moved %llu idle-polls %llu bad %llu exceptions %llu\n", name,
               s->cpu, (unsigned long long)s->moved, (unsigned long long)s->idle,
               (unsigned long long)s->bad, (unsigned long long)s->exc);
        failed |= s->bad != 0 || s->exc != 0;
    }
    return failed;
}

static int stress(void)
{
    for (int i = 0; i < 3; i++) {
        chain[i] = zt_ring_create(CHAIN_SLOTS, 8, ZT_RING_SP_ENQ | ZT_RING_SC_DEQ);
    }
    shared = zt_ring_create(SHARED_SLOTS, 8, 0);
    per = objects / 2;
    seen = calloc(2 * (size_t)per, 1);
    if (!chain[0] || !chain[1] || !chain[2] || !shared || !seen) {
        printf("ringtest: out of memory\n");
        return 1;
    }
    int failed = run_phase(1, "spsc");
    uint64_t spsc_in_order = stages[3].moved == objects && stages[3].bad == 0 ? objects : 0;
    remaining = (int)(2 * per);
    failed |= run_phase(2, "mpmc");
    uint64_t once = 0, other = 0;
    for (size_t i = 0; i < 2 * (size_t)per; i++) {
        once += seen[i] == 1;
        other += seen[i] != 1;
    }
    uint64_t exc = 0;
    for (int i = 0; i < STRESS_CPUS; i++) {
        exc += stages[i].exc;
    }
    failed |= other != 0 || spsc_in_order != objects;
    printf("ringtest: stress %s: spsc %llu in order, mpmc %llu exactly once (%llu not), "
           "exceptions %llu\n",
           failed ? "FAILED" : "ok", (unsigned long long)spsc_in_order, (unsigned long long)once,
           (unsigned long long)other, (unsigned long long)exc);
    return failed;
}

/* ---- the cost ---- */

static void cost_line(const char *kind, const char *op, int ncpu, uint64_t n, uint64_t insts)
{
    printf("ringtest: cost %s %s cpus %d objects %llu insts_per_object %llu.%02llu\n", kind, op,
           ncpu, (unsigned long long)n, (unsigned long long)(insts / n),
           (unsigned long long)(insts % n * 100 / n));
}

/* One CPU: (enqueue `batch`, dequeue `batch`) until n objects went through. */
static void cost_one_cpu(bool multi, uint32_t batch)
{
    struct zt_ring *r = zt_ring_create(1024, 8, multi ? 0 : ZT_RING_FLAGS);
    void *b[BURST] = {0};
    uint32_t rounds = objects / batch, moved = 0;
    for (uint32_t i = 0; i < 64; i++) { /* warm up */
        moved +=
            multi ? zt_ring_mp_enqueue_bulk(r, b, batch) : zt_ring_sp_enqueue_bulk(r, b, batch);
        moved -=
            multi ? zt_ring_mc_dequeue_bulk(r, b, batch) : zt_ring_sc_dequeue_bulk(r, b, batch);
    }
    uint32_t i0 = inst_read();
    if (batch == 1) {
        for (uint32_t i = 0; i < rounds; i++) {
            moved += multi ? zt_ring_mp_enqueue(r, b[0]) : zt_ring_sp_enqueue(r, b[0]);
            moved -= multi ? zt_ring_mc_dequeue(r, b) : zt_ring_sc_dequeue(r, b);
        }
    } else {
        for (uint32_t i = 0; i < rounds; i++) {
            moved +=
                multi ? zt_ring_mp_enqueue_bulk(r, b, batch) : zt_ring_sp_enqueue_bulk(r, b, batch);
            moved -=
                multi ? zt_ring_mc_dequeue_bulk(r, b, batch) : zt_ring_sc_dequeue_bulk(r, b, batch);
        }
    }
    uint32_t insts = inst_read() - i0;
    if (moved != 0) {
        printf("ringtest: cost: the ring did not come back empty (%u)\n", moved);
        exit(1);
    }
    cost_line(multi ? "mpmc" : "spsc", batch == 1 ? "single" : "bulk32", 1,
              (uint64_t)rounds * batch, insts);
    zt_ring_free(r);
}

struct side {
    struct zt_ring *r;
    bool multi, producer;
    uint32_t batch, overhead;
    uint64_t moved, counted, insts, failed, failed_insts;
    uint64_t spans; /* calls left out: a vCPU switch fell inside them */
    uint64_t beat;  /* calls begun */
    const struct side *other;
};

/* Account one call that moved n objects in d instructions; beats: the other side's
 * heartbeat before the call. */
static void side_count(struct side *s, uint32_t n, uint32_t d, uint64_t beats)
{
    s->moved += n;
    if (__atomic_load_n(&s->other->beat, __ATOMIC_RELAXED) != beats) {
        s->spans++; /* another vCPU ran meanwhile: its instructions are in d */
    } else if (n) {
        s->counted += n;
        s->insts += d;
    } else {
        s->failed++;
        s->failed_insts += d;
    }
}

/* The loop of one side with CALL alone between the two PMU reads. */
#define SIDE_LOOP(CALL)                                                                            \
    while (s->moved < objects) {                                                                   \
        __atomic_store_n(&s->beat, s->beat + 1, __ATOMIC_RELAXED);                                 \
        uint64_t beats = __atomic_load_n(&s->other->beat, __ATOMIC_RELAXED);                       \
        uint32_t i0 = inst_read();                                                                 \
        uint32_t n = CALL;                                                                         \
        side_count(s, n, inst_read() - i0 - s->overhead, beats);                                   \
    }

static long cost_side(void *arg)
{
    struct side *s = arg;
    struct zt_ring *r = s->r;
    void *b[BURST];
    for (uint32_t i = 0; i < BURST; i++) {
        b[i] = (void *)(uintptr_t)(i + 1);
    }
    unsigned kind = (s->producer ? 4 : 0) | (s->multi ? 2 : 0) | (s->batch == 1 ? 1 : 0);
    switch (kind) {
    case 0:
        SIDE_LOOP(zt_ring_sc_dequeue_bulk(r, b, BURST));
        break;
    case 1:
        SIDE_LOOP(zt_ring_sc_dequeue(r, b));
        break;
    case 2:
        SIDE_LOOP(zt_ring_mc_dequeue_bulk(r, b, BURST));
        break;
    case 3:
        SIDE_LOOP(zt_ring_mc_dequeue(r, b));
        break;
    case 4:
        SIDE_LOOP(zt_ring_sp_enqueue_bulk(r, b, BURST));
        break;
    case 5:
        SIDE_LOOP(zt_ring_sp_enqueue(r, b[0]));
        break;
    case 6:
        SIDE_LOOP(zt_ring_mp_enqueue_bulk(r, b, BURST));
        break;
    default:
        SIDE_LOOP(zt_ring_mp_enqueue(r, b[0]));
        break;
    }
    return 0;
}

/* Two CPUs: a producer thread on cpus[0], a consumer on cpu2. */
static void cost_two_cpus(bool multi, uint32_t batch)
{
    uint32_t a = inst_read(), b = inst_read(), overhead = b - a; /* one read's own cost */
    struct zt_ring *r = zt_ring_create(1024, 8, multi ? 0 : ZT_RING_FLAGS);
    struct side p = {
        .r = r, .multi = multi, .producer = true, .batch = batch, .overhead = overhead};
    struct side c = {.r = r, .multi = multi, .batch = batch, .overhead = overhead, .other = &p};
    p.other = &c;
    zt_thread_t *tp = zt_thread_create(cost_side, &p, cpus[0]);
    zt_thread_t *tc = zt_thread_create(cost_side, &c, cpu2);
    if (!tp || !tc) {
        printf("ringtest: cannot start the threads on cpus %d and %d\n", cpus[0], cpu2);
        exit(1);
    }
    zt_thread_join(tp);
    zt_thread_join(tc);
    /* hundredths of an instruction per object, each side over the objects it counted */
    uint64_t enq = p.counted ? p.insts * 100 / p.counted : 0;
    uint64_t deq = c.counted ? c.insts * 100 / c.counted : 0;
    printf("ringtest: cost %s %s cpus 2 objects %llu insts_per_object %llu.%02llu enq %llu.%02llu "
           "deq %llu.%02llu failed %llu left-out %llu\n",
           multi ? "mpmc" : "spsc", batch == 1 ? "single" : "bulk32", (unsigned long long)p.moved,
           (unsigned long long)((enq + deq) / 100), (unsigned long long)((enq + deq) % 100),
           (unsigned long long)(enq / 100), (unsigned long long)(enq % 100),
           (unsigned long long)(deq / 100), (unsigned long long)(deq % 100),
           (unsigned long long)(p.failed + c.failed), (unsigned long long)(p.spans + c.spans));
    zt_ring_free(r);
}

static int cost(void)
{
    if (!zt_have_el0_pmu() || inst_read() == inst_read()) {
        printf("ringtest: cost: n/a (the PMU counts only under -icount, REPRO=1)\n");
        return 1;
    }
    if (zt_pin(cpus[0]) != 0) {
        printf("ringtest: cannot pin to cpu %d\n", cpus[0]);
        return 1;
    }
    for (int multi = 0; multi < 2; multi++) {
        cost_one_cpu(multi, 1);
        cost_one_cpu(multi, BURST);
    }
    if (cpu2 >= 0) {
        for (int multi = 0; multi < 2; multi++) {
            cost_two_cpus(multi, 1);
            cost_two_cpus(multi, BURST);
        }
    }
    return 0;
}

/* ---- options ---- */

static int parse_cpus(const char *s)
{
    char *end;
    ncpus = 0;
    while (*s && ncpus < STRESS_CPUS) {
        long v = strtol(s, &end, 10);
        if (end == s || v < 0 || v >= zt_nr_cpus()) {
            usage();
        }
        cpus[ncpus++] = (int)v;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') {
            usage();
        }
    }
    return ncpus;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage();
    }
    for (int i = 2; i < argc; i += 2) {
        if (i + 1 >= argc) {
            usage();
        }
        if (!strcmp(argv[i], "-c")) {
            parse_cpus(argv[i + 1]);
        } else if (!strcmp(argv[i], "-d")) {
            cpu2 = atoi(argv[i + 1]);
        } else if (!strcmp(argv[i], "-n")) {
            long n = atol(argv[i + 1]);
            if (n < BURST || n > 100000000) {
                usage();
            }
            objects = (uint32_t)n;
        } else {
            usage();
        }
    }
    if (!strcmp(argv[1], "stress") && ncpus == STRESS_CPUS) {
        return stress();
    }
    if (!strcmp(argv[1], "cost") && ncpus == 1 && cpu2 < zt_nr_cpus()) {
        return cost();
    }
    usage();
    return 2;
}
