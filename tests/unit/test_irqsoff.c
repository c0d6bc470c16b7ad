/* SPDX-License-Identifier: MIT */
/*
 * test_irqsoff.c — host unit tests of kernel/cpu/irqsoff.c, the irqs-off check: spans timed
 * by the (fake) counter between the arch's reports, the longest kept with its places, the
 * histogram, the longest spans by place, zt_hwnoise's windows kept apart, and a reset.
 *
 * The fake arch does not report its own mask operations: each test reports the transitions
 * itself, from small functions of its own, whose addresses are the places the check keeps.
 * Each test plays a CPU of its own, so the records do not mix.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/cpu.h"
#include "kernel/irqsoff.h"
#include "uapi/zt_debug.h"
#include "fake.h"

#define TEST_STATE void **state __attribute__((unused))
/* Counter cycles of `ns` nanoseconds (the fake counter runs at 62.5 MHz, 16 ns a cycle:
 * every duration below is a whole number of cycles). */
#define CYC(ns) ((ns) / 16)

static void on_cpu(unsigned id)
{
    cpus[id].id = id;
    cpus[id].arch.id = id;
    fake_cpu = &cpus[id];
    ncpus = ncpus > id ? ncpus : id + 1;
}

/* Two places that mask and two that unmask (noinline: each call returns into its own). */
static __attribute__((noinline)) uintptr_t mask_a(void)
{
    irqsoff_masked();
    return (uintptr_t)__builtin_return_address(0);
}

static __attribute__((noinline)) uintptr_t mask_b(void)
{
    irqsoff_masked();
    return (uintptr_t)__builtin_return_address(0);
}

/* Ten more places that mask, for the table of places. */
#define MASK_AT(n)                                                                                 \
    static __attribute__((noinline)) void mask_##n(void)                                           \
    {                                                                                              \
        irqsoff_masked();                                                                          \
        __asm__ volatile("" ::: "memory");                                                         \
    }
MASK_AT(0)
MASK_AT(1)
MASK_AT(2)
MASK_AT(3)
MASK_AT(4)
MASK_AT(5)
MASK_AT(6)
MASK_AT(7)
MASK_AT(8)
MASK_AT(9)
static void (*const masks[10])(void) = {mask_0, mask_1, mask_2, mask_3, mask_4,
                                        mask_5, mask_6, mask_7, mask_8, mask_9};

/* Which of masks[] a place is in: the one that starts closest below it. */
static int mask_of(uint64_t pc)
{
    int best = -1;
    for (int i = 0; i < 10; i++) {
        uintptr_t f = (uintptr_t)masks[i];
        if (f <= pc && (best < 0 || f > (uintptr_t)masks[best])) {
            best = i;
        }
    }
    return best;
}

static __attribute__((noinline)) void unmask_a(void)
{
    irqsoff_unmasked();
}

static __attribute__((noinline)) void unmask_b(void)
{
    irqsoff_unmasked();
}

/* A span of `ns` nanoseconds from mask_a to unmask_a. */
static void span_a(uint64_t ns)
{
    mask_a();
    fake_counter += CYC(ns);
    unmask_a();
}

static struct zt_irqsoff rec(unsigned cpu)
{
    struct zt_irqsoff r;
    assert_int_equal(irqsoff_read(cpu, &r, false), 0);
    return r;
}

static bool within(uint64_t addr, void *fn)
{
    return addr >= (uintptr_t)fn && addr < (uintptr_t)fn + 256;
}

static int setup(void **state)
{
    fake_reset();
    fake_counter = 1000000;
    irqsoff_init();
    return 0;
}

/* IRQO-10: a span lasts from the mask to the unmask; a second report of masking while one
 * is open (an exception's entry after an arch_irq_save) does not restart it, and an unmask
 * with none open (interrupts masked before recording began) counts nothing */
static void irqo10_span_from_mask_to_unmask(TEST_STATE)
{
    on_cpu(1);
    unmask_a(); /* none open */
    mask_a();
    fake_counter += CYC(100000);
    mask_b(); /* already open */
    fake_counter += CYC(50000);
    unmask_b();
    struct zt_irqsoff r = rec(1);
    assert_int_equal(r.spans, 1);
    assert_int_equal(r.longest_ns, 150000);
    assert_true(within(r.start_pc, mask_a));
    assert_true(within(r.end_pc, unmask_b));
}

/* IRQO-11: every span lands in its histogram bucket: < 1 us in [0], [2^(k-1), 2^k) us in
 * [k], 16384 us and longer in the last */
static void irqo11_histogram(TEST_STATE)
{
    on_cpu(2);
    span_a(496);
    span_a(1008);
    span_a(3008);
    span_a(1024000);
    span_a(20000000);
    struct zt_irqsoff r = rec(2);
    assert_int_equal(r.spans, 5);
    assert_int_equal(r.hist[0], 1);
    assert_int_equal(r.hist[1], 1);
    assert_int_equal(r.hist[2], 1);
    assert_int_equal(r.hist[11], 1);
    assert_int_equal(r.hist[ZT_IRQSOFF_BUCKETS - 1], 1);
}

/* IRQO-12: the longest span is kept with its places; a shorter one after it changes nothing
 * but the counts */
static void irqo12_longest_kept(TEST_STATE)
{
    on_cpu(3);
    span_a(10000);
    mask_b();
    fake_counter += CYC(700000);
    unmask_b();
    span_a(20000);
    struct zt_irqsoff r = rec(3);
    assert_int_equal(r.spans, 3);
    assert_int_equal(r.longest_ns, 700000);
    assert_true(within(r.start_pc, mask_b));
    assert_true(within(r.end_pc, unmask_b));
}

/* IRQO-13: spans of at least ZT_IRQSOFF_FLOOR_NS are counted by place (start, end), longest
 * first; shorter ones are not; with every entry taken, a new place replaces the shortest
 * entry only if it is longer */
static void irqo13_places(TEST_STATE)
{
    on_cpu(4);
    span_a(1008); /* below the floor */
    span_a(40000);
    span_a(60000);
    mask_b(), fake_counter += CYC(100000), unmask_a();
    struct zt_irqsoff r = rec(4);
    assert_int_equal(r.places[0].longest_ns, 100000);
    assert_int_equal(r.places[0].count, 1);
    assert_int_equal(r.places[1].longest_ns, 60000);
    assert_int_equal(r.places[1].count, 2); /* the 40 us and the 60 us spans */
    assert_int_equal(r.places[2].start_pc, 0);
    /* a new table: eight places of 40..112 us, then a ninth longer than the shortest (kept
     * instead of it), then a tenth shorter than all (not kept) */
    struct zt_irqsoff ignored;
    irqsoff_read(4, &ignored, true);
    for (int i = 0; i < 10; i++) {
        static const uint64_t ns[10] = {40000, 50000,  60000,  70000,  80000,
                                        96000, 100000, 112000, 500000, 35008};
        masks[i]();
        fake_counter += CYC(ns[i]);
        unmask_a();
    }
    r = rec(4);
    assert_int_equal(r.places[0].longest_ns, 500000);
    assert_int_equal(mask_of(r.places[0].start_pc), 8);
    assert_int_equal(r.places[ZT_IRQSOFF_PLACES - 1].longest_ns, 50000);
    for (int i = 0; i < ZT_IRQSOFF_PLACES; i++) {
        assert_int_equal(r.places[i].count, 1);
        assert_int_not_equal(mask_of(r.places[i].start_pc), 9); /* 35 us: shorter than all */
        assert_int_not_equal(mask_of(r.places[i].start_pc), 0); /* 40 us: replaced */
        if (i) {
            assert_true(r.places[i - 1].longest_ns > r.places[i].longest_ns);
        }
    }
}

/* IRQO-14: a zt_hwnoise window is counted apart, by name: not in the spans, the histogram
 * or the longest */
static void irqo14_hwnoise_apart(TEST_STATE)
{
    on_cpu(5);
    span_a(4000);
    mask_b();
    irqsoff_hwnoise_window();
    fake_counter += CYC(100000000);
    unmask_b();
    span_a(8000);
    struct zt_irqsoff r = rec(5);
    assert_int_equal(r.spans, 2);
    assert_int_equal(r.longest_ns, 8000);
    assert_int_equal(r.hist[ZT_IRQSOFF_BUCKETS - 1], 0);
    assert_int_equal(r.hwnoise_windows, 1);
    assert_int_equal(r.hwnoise_longest_ns, 100000000ull);
}

/* IRQO-15: a reset empties the record for readers at once; the CPU starts a new one at the
 * end of its next span, which is all it counts */
static void irqo15_reset(TEST_STATE)
{
    on_cpu(6);
    span_a(900000);
    struct zt_irqsoff r;
    assert_int_equal(irqsoff_read(6, &r, true), 0);
    assert_int_equal(r.longest_ns, 900000); /* read, then reset */
    r = rec(6);
    assert_int_equal(r.spans, 0);
    assert_int_equal(r.longest_ns, 0);
    span_a(30000);
    r = rec(6);
    assert_int_equal(r.spans, 1);
    assert_int_equal(r.longest_ns, 30000);
    assert_int_equal(r.hist[5], 1);
}

/* IRQO-16: a CPU that goes offline with a span open (its idle loop, interrupts masked) ends
 * it unrecorded: the first unmask after it comes back, much later, closes nothing */
static void irqo16_offline_cpu_forgets_its_span(TEST_STATE)
{
    on_cpu(7);
    span_a(10000);
    mask_a();
    fake_counter += CYC(5000000); /* 5 ms of work, then offline */
    irqsoff_cpu_off();
    fake_counter += CYC(2000000000); /* 2 s offline */
    unmask_a();                      /* its first unmask back online */
    struct zt_irqsoff r = rec(7);
    assert_int_equal(r.spans, 1);
    assert_int_equal(r.longest_ns, 10000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(irqo10_span_from_mask_to_unmask),
        cmocka_unit_test(irqo11_histogram),
        cmocka_unit_test(irqo12_longest_kept),
        cmocka_unit_test(irqo13_places),
        cmocka_unit_test(irqo14_hwnoise_apart),
        cmocka_unit_test(irqo15_reset),
        cmocka_unit_test(irqo16_offline_cpu_forgets_its_span),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
