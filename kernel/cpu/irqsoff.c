/* SPDX-License-Identifier: MIT */
/*
 * irqsoff.c — the irqs-off latency check of the checked kernel (contract in
 * include/kernel/irqsoff.h, ABI in include/uapi/zt_debug.h).
 *
 * Each CPU times every span it runs with interrupts masked: the arch reports the start
 * (irqsoff_masked) and the end (irqsoff_unmasked) of each, on that CPU, with interrupts
 * masked (arch.h).  A span's place is the return address of the report, i.e. the function
 * that masked or unmasked (spin_lock_irqsave is inline: the place is its caller).  At the end
 * of a span the CPU counts it in its histogram and, if it is the longest so far, keeps its
 * length, both places and the return addresses above the end, for zt_irqsoff.
 *
 * State per CPU, written only by that CPU, always with its interrupts masked (nothing else
 * runs there meanwhile).  Readers on other CPUs copy the longest span's fields under the
 * record's sequence count (odd while its owner rewrites them) and the counts with relaxed
 * loads.  A reset is a request: the reader moves the CPU's `want_epoch` on, readers report
 * an empty record from then on, and the owner starts a new record at the end of its next
 * span (an idle CPU's record stays old, and reported empty, until it wakes).
 *
 * Release builds compile only irqsoff_read's -ENODEV: the arch makes no call.
 */
#include "kernel/irqsoff.h"
#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/cycles.h"
#include "kernel/lib.h"
#include "uapi/zt_debug.h"
#include "uapi/zt_errno.h"

#ifdef ZT_CHECKED

struct span_state {
    uint64_t start;    /* counter at the open span's start; 0: no span open */
    uint64_t start_pc; /* where it started */
    bool hwnoise;      /* the open span is a zt_hwnoise window */
    uint32_t seq;      /* odd while the longest span's fields are rewritten */
    uint32_t epoch;    /* the record's; want_epoch != epoch: a reset is due */
    uint32_t want_epoch;
    /* the record, times in counter cycles */
    uint64_t spans, longest, longest_start_pc, longest_end_pc, longest_end;
    uint64_t bt[ZT_IRQSOFF_BT];
    bool dataplane;
    uint64_t hist[ZT_IRQSOFF_BUCKETS];
    uint64_t hwnoise_windows, hwnoise_longest;
    struct {
        uint64_t start_pc, end_pc, longest, count;
    } places[ZT_IRQSOFF_PLACES]; /* unsorted; start_pc 0: free */
};

static struct span_state spans[MAX_CPUS];
PERCPU_ARRAY(spans);
static bool recording;        /* set once the boot CPU's struct cpu is in place */
static uint64_t floor_cycles; /* ZT_IRQSOFF_FLOOR_NS: spans kept by place from this long */

#define STORE(field, v) __atomic_store_n(&(field), (v), __ATOMIC_RELAXED)
#define LOAD(field)     __atomic_load_n(&(field), __ATOMIC_RELAXED)

void irqsoff_init(void)
{
    floor_cycles = cycles_from_ns(ZT_IRQSOFF_FLOOR_NS);
    __atomic_store_n(&recording, true, __ATOMIC_RELEASE);
}

/* Histogram bucket of a span of `us` microseconds: 0 below 1 us, k for [2^(k-1), 2^k). */
static unsigned bucket_of(uint64_t us)
{
    unsigned k = us ? 64 - (unsigned)__builtin_clzll(us) : 0;
    return k < ZT_IRQSOFF_BUCKETS ? k : ZT_IRQSOFF_BUCKETS - 1;
}

static void new_epoch(struct span_state *s, uint32_t epoch)
{
    STORE(s->seq, s->seq + 1);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    STORE(s->spans, 0);
    STORE(s->longest, 0);
    STORE(s->longest_start_pc, 0);
    STORE(s->longest_end_pc, 0);
    STORE(s->longest_end, 0);
    for (int i = 0; i < ZT_IRQSOFF_BUCKETS; i++) {
        STORE(s->hist[i], 0);
    }
    STORE(s->hwnoise_windows, 0);
    STORE(s->hwnoise_longest, 0);
    for (int i = 0; i < ZT_IRQSOFF_PLACES; i++) {
        STORE(s->places[i].start_pc, 0);
        STORE(s->places[i].end_pc, 0);
        STORE(s->places[i].longest, 0);
        STORE(s->places[i].count, 0);
    }
    STORE(s->epoch, epoch);
    __atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELEASE);
}

/* A new longest span: its fields under the sequence count. */
static void keep_longest(struct span_state *s, uint64_t len, uint64_t now, uintptr_t end_pc)
{
    uint64_t bt[ZT_IRQSOFF_BT + 1] = {0};
    int n = arch_backtrace(bt, ZT_IRQSOFF_BT + 1); /* bt[0]: this file's own frame */
    STORE(s->seq, s->seq + 1);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    STORE(s->longest, len);
    STORE(s->longest_start_pc, s->start_pc);
    STORE(s->longest_end_pc, end_pc);
    STORE(s->longest_end, now);
    for (int i = 0; i < ZT_IRQSOFF_BT; i++) {
        STORE(s->bt[i], i + 1 < n ? bt[i + 1] : 0);
    }
    STORE(s->dataplane, this_cpu()->dataplane);
    __atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELEASE);
}

/* A span of at least floor_cycles between start_pc and end_pc: counted in its place's entry,
 * which it makes (in a free entry, or instead of the shortest if that is shorter). */
static void keep_place(struct span_state *s, uint64_t len, uintptr_t end_pc)
{
    int slot = -1, shortest = 0;
    for (int i = 0; i < ZT_IRQSOFF_PLACES; i++) {
        if (s->places[i].start_pc == s->start_pc && s->places[i].end_pc == end_pc) {
            slot = i;
            break;
        }
        if (s->places[i].longest < s->places[shortest].longest) {
            shortest = i;
        }
    }
    bool new_place = slot < 0;
    if (new_place && s->places[shortest].longest >= len) {
        return; /* every entry holds a longer span */
    }
    slot = new_place ? shortest : slot;
    STORE(s->seq, s->seq + 1);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    if (new_place) {
        STORE(s->places[slot].start_pc, s->start_pc);
        STORE(s->places[slot].end_pc, end_pc);
        STORE(s->places[slot].longest, 0);
        STORE(s->places[slot].count, 0);
    }
    STORE(s->places[slot].count, s->places[slot].count + 1);
    STORE(s->places[slot].longest, MAX(s->places[slot].longest, len));
    __atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELEASE);
}

void irqsoff_masked(void)
{
    if (!__atomic_load_n(&recording, __ATOMIC_ACQUIRE)) {
        return;
    }
    struct span_state *s = percpu_elem(spans, arch_this_cpu_id());
    if (s->start) {
        return; /* already open: an exception entry's report after an earlier mask */
    }
    s->start_pc = (uintptr_t)__builtin_return_address(0);
    s->start = arch_counter_read();
}

void irqsoff_unmasked(void)
{
    if (!__atomic_load_n(&recording, __ATOMIC_ACQUIRE)) {
        return;
    }
    struct span_state *s = percpu_elem(spans, arch_this_cpu_id());
    if (!s->start) {
        return; /* none open: interrupts were masked before recording began */
    }
    uint64_t now = arch_counter_read(), len = now - s->start;
    uint32_t want = __atomic_load_n(&s->want_epoch, __ATOMIC_ACQUIRE);
    if (s->epoch != want) {
        new_epoch(s, want);
    }
    s->start = 0;
    if (s->hwnoise) {
        s->hwnoise = false;
        STORE(s->hwnoise_windows, s->hwnoise_windows + 1);
        STORE(s->hwnoise_longest, MAX(s->hwnoise_longest, len));
        return;
    }
    STORE(s->spans, s->spans + 1);
    unsigned b = bucket_of(cycles_to_us(len));
    STORE(s->hist[b], s->hist[b] + 1);
    uintptr_t end_pc = (uintptr_t)__builtin_return_address(0);
    if (len >= floor_cycles) {
        keep_place(s, len, end_pc);
    }
    if (len > s->longest) {
        keep_longest(s, len, now, end_pc);
    }
}

void irqsoff_hwnoise_window(void)
{
    if (__atomic_load_n(&recording, __ATOMIC_ACQUIRE)) {
        percpu_elem(spans, arch_this_cpu_id())->hwnoise = true;
    }
}

/* The places, longest first (a reader's sort: the owner keeps them unsorted). */
static void read_places(struct span_state *s, struct zt_irqsoff *out)
{
    int n = 0;
    for (int i = 0; i < ZT_IRQSOFF_PLACES; i++) {
        struct zt_irqsoff_place p = {LOAD(s->places[i].start_pc), LOAD(s->places[i].end_pc),
                                     LOAD(s->places[i].longest), LOAD(s->places[i].count)};
        if (!p.start_pc) {
            continue;
        }
        int j = n++;
        for (; j > 0 && out->places[j - 1].longest_ns < p.longest_ns; j--) {
            out->places[j] = out->places[j - 1];
        }
        out->places[j] = p; /* longest_ns in cycles until read_longest converts */
    }
    for (int i = n; i < ZT_IRQSOFF_PLACES; i++) {
        out->places[i] = (struct zt_irqsoff_place){0, 0, 0, 0};
    }
}

void irqsoff_cpu_off(void)
{
    if (__atomic_load_n(&recording, __ATOMIC_ACQUIRE)) {
        struct span_state *s = percpu_elem(spans, arch_this_cpu_id());
        s->start = 0;
        s->hwnoise = false;
    }
}

/* The longest span's fields, consistent with each other (retried while the owner rewrites
 * them); false if the record is of an older epoch than readers asked for (reported empty). */
static bool read_longest(struct span_state *s, struct zt_irqsoff *out)
{
    uint32_t seq;
    bool current;
    do {
        while ((seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE)) & 1) {
            arch_cpu_relax();
        }
        current = LOAD(s->epoch) == __atomic_load_n(&s->want_epoch, __ATOMIC_ACQUIRE);
        out->longest_ns = cycles_to_ns(LOAD(s->longest));
        out->start_pc = LOAD(s->longest_start_pc);
        out->end_pc = LOAD(s->longest_end_pc);
        out->end_ns = cycles_to_ns(LOAD(s->longest_end));
        for (int i = 0; i < ZT_IRQSOFF_BT; i++) {
            out->end_bt[i] = LOAD(s->bt[i]);
        }
        out->dataplane = LOAD(s->dataplane);
        read_places(s, out);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
    } while (__atomic_load_n(&s->seq, __ATOMIC_RELAXED) != seq);
    for (int i = 0; i < ZT_IRQSOFF_PLACES; i++) {
        out->places[i].longest_ns = cycles_to_ns(out->places[i].longest_ns);
    }
    return current;
}

int irqsoff_read(unsigned cpu, struct zt_irqsoff *out, bool reset)
{
    struct span_state *s = percpu_elem(spans, cpu);
    memset(out, 0, sizeof(*out));
    if (read_longest(s, out)) {
        out->spans = LOAD(s->spans);
        for (int i = 0; i < ZT_IRQSOFF_BUCKETS; i++) {
            out->hist[i] = LOAD(s->hist[i]);
        }
        out->hwnoise_windows = LOAD(s->hwnoise_windows);
        out->hwnoise_longest_ns = cycles_to_ns(LOAD(s->hwnoise_longest));
    } else {
        memset(out, 0, sizeof(*out));
    }
    if (reset) {
        __atomic_fetch_add(&s->want_epoch, 1, __ATOMIC_RELEASE);
    }
    return 0;
}

#else /* release: no check */

int irqsoff_read(unsigned cpu, struct zt_irqsoff *out, bool reset)
{
    return -ENODEV;
}

#endif
