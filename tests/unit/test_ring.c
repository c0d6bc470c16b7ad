/* SPDX-License-Identifier: MIT */
/*
 * test_ring.c — host unit tests of the dataplane rings (user/lib/ring.h, ring.c): their shape
 * checks, single/bulk/burst semantics on both kinds of side, index and slot wrap-around,
 * records, and producer and consumer threads running at once.  Built twice by the Makefile:
 * test_ring under ASan and UBSan (like every unit test) and test_ring_tsan under
 * ThreadSanitizer, whose happens-before model is C11's: an acquire or release missing from
 * ring.h is reported as a data race on the slots even on an x86 host, whose stronger
 * hardware ordering would hide it.
 *
 * RING-01..06: one thread.  RING-07..10: threads; every object seen exactly once, in order
 * for SP/SC (and per producer for each consumer of an MP/MC ring).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sched.h>

/* Up to eight threads share the host's CPUs: an MP/MC thread waiting for one that reserved
 * before it (and was preempted) gives its CPU away instead of spinning out its time slice.
 * On zerotick each stage owns its CPU and spins (ring.h's default). */
#define ZT_RING_PAUSE() sched_yield()
#include "ring.h"

#define TEST_STATE void **state __attribute__((unused))

#if defined(__SANITIZE_THREAD__)
#define STRESS_OBJECTS 200000u /* ThreadSanitizer runs the threads some 10x slower */
#else
#define STRESS_OBJECTS 1000000u
#endif

static void *obj(uintptr_t v)
{
    return (void *)v;
}

/* RING-01: zt_ring_bytes and zt_ring_init refuse a size that is 0, not a power of two or too
 * big, an esize that is 0, not a multiple of 8 or too big, unknown flags, NULL or misaligned
 * memory; a good ring starts empty with `size` free slots. */
static void ring01_shape_checks(TEST_STATE)
{
    static uint64_t mem[4096] __attribute__((aligned(ZT_RING_CACHE_LINE)));
    assert_int_equal(zt_ring_bytes(0, 8), 0);
    assert_int_equal(zt_ring_bytes(3, 8), 0);
    assert_int_equal(zt_ring_bytes(ZT_RING_SIZE_MAX * 2, 8), 0);
    assert_int_equal(zt_ring_bytes(16, 0), 0);
    assert_int_equal(zt_ring_bytes(16, 12), 0);
    assert_int_equal(zt_ring_bytes(16, ZT_RING_ESIZE_MAX + 8), 0);
    assert_int_equal(zt_ring_bytes(16, 8), sizeof(struct zt_ring) + 128);
    assert_int_equal(zt_ring_init(mem, 12, 8, 0), -22);
    assert_int_equal(zt_ring_init(mem, 16, 4, 0), -22);
    assert_int_equal(zt_ring_init(mem, 16, 8, 4), -22);
    assert_int_equal(zt_ring_init(NULL, 16, 8, 0), -22);
    assert_int_equal(zt_ring_init((char *)mem + 8, 16, 8, 0), -22);
    assert_null(zt_ring_create(12, 8, 0));
    assert_null(zt_ring_create(16, 8, 8));
    /* the layout: read-only fields, producer and consumer indices on three different lines */
    assert_true(offsetof(struct zt_ring, prod) >= ZT_RING_CACHE_LINE);
    assert_true(offsetof(struct zt_ring, cons) - offsetof(struct zt_ring, prod) >=
                ZT_RING_CACHE_LINE);
    assert_true(offsetof(struct zt_ring, slots) - offsetof(struct zt_ring, cons) >=
                ZT_RING_CACHE_LINE);
    assert_int_equal(zt_ring_init(mem, 16, 8, ZT_RING_SP_ENQ | ZT_RING_SC_DEQ), 0);
    struct zt_ring *r = (struct zt_ring *)mem;
    assert_int_equal(zt_ring_count(r), 0);
    assert_int_equal(zt_ring_free_count(r), 16);
    assert_int_equal(r->magic, ZT_RING_MAGIC);
}

/* One ring's single/bulk/burst behaviour, through the SP/SC or the MP/MC functions. */
static void exercise_single_bulk_burst(struct zt_ring *r, bool multi)
{
    void *out[64];
    void *in[64];
    for (uintptr_t i = 0; i < 64; i++) {
        in[i] = obj(1000 + i);
    }
    /* single: exactly `size` (16) fit, the 17th does not, they come back in order */
    for (uintptr_t i = 0; i < 16; i++) {
        assert_true(multi ? zt_ring_mp_enqueue(r, obj(i + 1)) : zt_ring_sp_enqueue(r, obj(i + 1)));
    }
    assert_false(multi ? zt_ring_mp_enqueue(r, obj(99)) : zt_ring_sp_enqueue(r, obj(99)));
    assert_int_equal(zt_ring_count(r), 16);
    for (uintptr_t i = 0; i < 16; i++) {
        void *o = NULL;
        assert_true(multi ? zt_ring_mc_dequeue(r, &o) : zt_ring_sc_dequeue(r, &o));
        assert_ptr_equal(o, obj(i + 1));
    }
    void *o = obj(7);
    assert_false(multi ? zt_ring_mc_dequeue(r, &o) : zt_ring_sc_dequeue(r, &o));
    assert_ptr_equal(o, obj(7)); /* untouched */
    /* bulk: all or nothing */
    assert_int_equal(
        multi ? zt_ring_mp_enqueue_bulk(r, in, 10) : zt_ring_sp_enqueue_bulk(r, in, 10), 10);
    assert_int_equal(
        multi ? zt_ring_mp_enqueue_bulk(r, in + 10, 7) : zt_ring_sp_enqueue_bulk(r, in + 10, 7), 0);
    assert_int_equal(zt_ring_count(r), 10);
    assert_int_equal(
        multi ? zt_ring_mc_dequeue_bulk(r, out, 11) : zt_ring_sc_dequeue_bulk(r, out, 11), 0);
    assert_int_equal(zt_ring_count(r), 10);
    /* burst: as many as fit (6 of 9), as many as there are (16 of 20) */
    assert_int_equal(multi ? zt_ring_mp_enqueue_burst(r, in + 10, 9)
                           : zt_ring_sp_enqueue_burst(r, in + 10, 9),
                     6);
    assert_int_equal(zt_ring_free_count(r), 0);
    assert_int_equal(
        multi ? zt_ring_mc_dequeue_burst(r, out, 20) : zt_ring_sc_dequeue_burst(r, out, 20), 16);
    for (int i = 0; i < 16; i++) {
        assert_ptr_equal(out[i], in[i]);
    }
    assert_int_equal(
        multi ? zt_ring_mc_dequeue_burst(r, out, 4) : zt_ring_sc_dequeue_burst(r, out, 4), 0);
    assert_int_equal(zt_ring_count(r), 0);
}

/* RING-02: SP/SC single, bulk and burst: exactly `size` objects fit; a bulk move that does
 * not fit or is not there moves nothing; a burst moves what fits or what is there; order
 * kept; a failed dequeue leaves the caller's variable alone. */
static void ring02_spsc_semantics(TEST_STATE)
{
    struct zt_ring *r = zt_ring_create(16, 8, ZT_RING_SP_ENQ | ZT_RING_SC_DEQ);
    assert_non_null(r);
    exercise_single_bulk_burst(r, false);
    zt_ring_free(r);
}

/* RING-03: the same behaviour through the MP/MC functions, and through the flag-following
 * zt_ring_enqueue/dequeue forms on both kinds of ring. */
static void ring03_mpmc_semantics(TEST_STATE)
{
    struct zt_ring *r = zt_ring_create(16, 8, 0);
    assert_non_null(r);
    exercise_single_bulk_burst(r, true);
    void *in[3] = {obj(5), obj(6), obj(7)}, *out[3];
    for (unsigned flags = 0; flags <= ZT_RING_FLAGS; flags++) {
        struct zt_ring *g = zt_ring_create(4, 8, flags);
        assert_int_equal(zt_ring_enqueue_bulk(g, in, 3), 3);
        assert_true(zt_ring_enqueue(g, obj(8)));
        assert_false(zt_ring_enqueue(g, obj(9)));
        assert_int_equal(zt_ring_enqueue_burst(g, in, 3), 0);
        assert_int_equal(zt_ring_dequeue_bulk(g, out, 3), 3);
        assert_ptr_equal(out[2], obj(7));
        void *o;
        assert_true(zt_ring_dequeue(g, &o));
        assert_ptr_equal(o, obj(8));
        assert_int_equal(zt_ring_dequeue_burst(g, out, 3), 0);
        zt_ring_free(g);
    }
    zt_ring_free(r);
}

/* Set every index of an empty ring to `start` (as if that many objects had passed). */
static void set_indices(struct zt_ring *r, uint32_t start)
{
    r->prod.head = r->prod.tail = r->prod.cache = start;
    r->cons.head = r->cons.tail = r->cons.cache = start;
}

/* RING-04: wrap-around: indices crossing 2^32 and slots wrapping at the ring's end, with bulk
 * and burst sizes that do not divide the ring, on both kinds of side: every object comes back
 * once and in order, and the counts stay right. */
static void ring04_wraparound(TEST_STATE)
{
    for (unsigned flags = 0; flags <= ZT_RING_FLAGS; flags++) {
        struct zt_ring *r = zt_ring_create(32, 8, flags);
        set_indices(r, 0xffffffffu - 100);
        uintptr_t next_in = 1, next_out = 1;
        void *buf[32];
        for (unsigned round = 0; round < 2000; round++) {
            uint32_t n = 1 + round % 13;
            for (uint32_t i = 0; i < n; i++) {
                buf[i] = obj(next_in + i);
            }
            uint32_t put =
                round % 2 ? zt_ring_enqueue_burst(r, buf, n) : zt_ring_enqueue_bulk(r, buf, n);
            assert_true(round % 2 ? put <= n : put == n || put == 0);
            next_in += put;
            assert_int_equal(zt_ring_count(r), next_in - next_out);
            uint32_t m = 1 + round % 7;
            uint32_t got =
                round % 3 ? zt_ring_dequeue_burst(r, buf, m) : zt_ring_dequeue_bulk(r, buf, m);
            for (uint32_t i = 0; i < got; i++) {
                assert_ptr_equal(buf[i], obj(next_out + i));
            }
            next_out += got;
        }
        assert_true(r->prod.tail < 0x80000000u); /* the indices did wrap */
        assert_true(next_out > 1000);
        zt_ring_free(r);
    }
}

struct rec24 {
    uint64_t seq, not_seq, tag;
};

/* RING-05: records of 24 bytes (and of the largest size, 64): whole records in, whole records
 * out, in order, across slot wrap-around; bulk all or nothing, burst what fits. */
static void ring05_records(TEST_STATE)
{
    struct zt_ring *r = zt_ring_create(8, sizeof(struct rec24), ZT_RING_SP_ENQ | ZT_RING_SC_DEQ);
    assert_non_null(r);
    struct rec24 in[5], out[8];
    uint64_t next_in = 0, next_out = 0;
    for (int round = 0; round < 100; round++) {
        for (int i = 0; i < 5; i++) {
            in[i] = (struct rec24){next_in + i, ~(next_in + i), 0xabcdef};
        }
        uint32_t put = zt_ring_enqueue_burst_elem(r, in, 5);
        next_in += put;
        uint32_t got = zt_ring_dequeue_burst_elem(r, out, round % 2 ? 8 : 3);
        for (uint32_t i = 0; i < got; i++) {
            assert_int_equal(out[i].seq, next_out + i);
            assert_int_equal(out[i].not_seq, ~(next_out + i));
            assert_int_equal(out[i].tag, 0xabcdef);
        }
        next_out += got;
    }
    assert_true(next_out > 200);
    uint32_t left = zt_ring_count(r);
    assert_int_equal(zt_ring_enqueue_bulk_elem(r, in, 9 - left), 0);
    assert_int_equal(zt_ring_dequeue_bulk_elem(r, out, left + 1), 0);
    zt_ring_free(r);

    uint64_t big[8], back[8];
    struct zt_ring *b = zt_ring_create(4, 64, 0);
    for (int round = 0; round < 10; round++) {
        for (int i = 0; i < 8; i++) {
            big[i] = (uint64_t)round * 100 + (uint64_t)i;
        }
        assert_int_equal(zt_ring_enqueue_bulk_elem(b, big, 1), 1);
        assert_int_equal(zt_ring_dequeue_bulk_elem(b, back, 1), 1);
        assert_memory_equal(big, back, sizeof(big));
    }
    zt_ring_free(b);
}

/* RING-06: a ring laid over caller memory at any cache-line-aligned address works the same as
 * an allocated one, and re-initialising empties it (zt_ring_init is the only setup). */
static void ring06_caller_memory(TEST_STATE)
{
    static uint8_t mem[8192] __attribute__((aligned(ZT_RING_CACHE_LINE)));
    for (size_t off = 0; off < 512; off += ZT_RING_CACHE_LINE) {
        struct zt_ring *r = (struct zt_ring *)(mem + off);
        assert_true(off + zt_ring_bytes(64, 8) <= sizeof(mem));
        assert_int_equal(zt_ring_init(r, 64, 8, ZT_RING_SP_ENQ), 0);
        assert_true(zt_ring_enqueue(r, obj(off + 1)));
        assert_int_equal(zt_ring_count(r), 1);
        assert_int_equal(zt_ring_init(r, 64, 8, ZT_RING_SP_ENQ), 0);
        assert_int_equal(zt_ring_count(r), 0);
    }
}

/* ---- threads ---- */

#define MAX_THREADS 4

struct stress {
    struct zt_ring *ring;
    unsigned producers, consumers;
    uint32_t per_producer;   /* objects each producer sends */
    bool single_p, single_c; /* use the SP / SC functions */
    bool ordered;            /* one producer, one consumer: check the global order */
    uint8_t *seen;           /* [producer * per_producer + seq]: how often consumed */
    uint64_t taken[MAX_THREADS];
    uint64_t bad_order[MAX_THREADS];
    uint32_t remaining; /* objects not consumed yet (consumers stop at 0) */
    unsigned ids;       /* thread index handed out */
};

/* An object: producer number in the top byte, its sequence number below; 0 is never sent. */
static uintptr_t tag(unsigned producer, uint32_t seq)
{
    return ((uintptr_t)producer << 40) | ((uintptr_t)seq + 1);
}

static unsigned next_id(struct stress *s)
{
    return __atomic_fetch_add(&s->ids, 1, __ATOMIC_RELAXED);
}

/* A small deterministic generator per thread, for bulk sizes. */
static uint32_t rnd(uint32_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 17;
    *x ^= *x << 5;
    return *x;
}

static void *producer(void *arg)
{
    struct stress *s = arg;
    unsigned me = next_id(s);
    uint32_t x = 0x9e3779b9u * (me + 1), seq = 0;
    void *batch[32];
    while (seq < s->per_producer) {
        uint32_t n = 1 + rnd(&x) % 32, kind = rnd(&x) % 3;
        if (n > s->per_producer - seq) {
            n = s->per_producer - seq;
        }
        for (uint32_t i = 0; i < n; i++) {
            batch[i] = obj(tag(me, seq + i));
        }
        uint32_t put;
        if (kind == 0) {
            put = s->single_p ? zt_ring_sp_enqueue(s->ring, batch[0])
                              : zt_ring_mp_enqueue(s->ring, batch[0]);
        } else if (kind == 1) {
            put = s->single_p ? zt_ring_sp_enqueue_bulk(s->ring, batch, n)
                              : zt_ring_mp_enqueue_bulk(s->ring, batch, n);
        } else {
            put = s->single_p ? zt_ring_sp_enqueue_burst(s->ring, batch, n)
                              : zt_ring_mp_enqueue_burst(s->ring, batch, n);
        }
        seq += put;
        if (put == 0) {
            zt_ring__pause();
        }
    }
    return NULL;
}

static void *consumer(void *arg)
{
    struct stress *s = arg;
    unsigned me = next_id(s) - s->producers;
    uint32_t x = 0x85ebca6bu * (me + 1);
    uint64_t last[MAX_THREADS] = {0}; /* per producer: the last tag seen by this consumer */
    uint64_t expect = 1;
    void *batch[32];
    while (__atomic_load_n(&s->remaining, __ATOMIC_RELAXED) > 0) {
        uint32_t n = 1 + rnd(&x) % 32, kind = rnd(&x) % 3, got;
        if (kind == 0) {
            got = s->single_c ? zt_ring_sc_dequeue(s->ring, batch)
                              : zt_ring_mc_dequeue(s->ring, batch);
        } else if (kind == 1) {
            got = s->single_c ? zt_ring_sc_dequeue_bulk(s->ring, batch, n)
                              : zt_ring_mc_dequeue_bulk(s->ring, batch, n);
        } else {
            got = s->single_c ? zt_ring_sc_dequeue_burst(s->ring, batch, n)
                              : zt_ring_mc_dequeue_burst(s->ring, batch, n);
        }
        for (uint32_t i = 0; i < got; i++) {
            uintptr_t t = (uintptr_t)batch[i];
            unsigned p = (unsigned)(t >> 40);
            uint64_t seq = (t & ((1ull << 40) - 1)) - 1;
            if (p >= s->producers || seq >= s->per_producer) {
                s->bad_order[me]++;
                continue;
            }
            /* each consumer sees each producer's objects in increasing order */
            if (t <= last[p] || (s->ordered && t != expect)) {
                s->bad_order[me]++;
            }
            last[p] = t;
            expect = t + 1;
            __atomic_fetch_add(&s->seen[p * s->per_producer + seq], 1, __ATOMIC_RELAXED);
        }
        s->taken[me] += got;
        if (got) {
            __atomic_fetch_sub(&s->remaining, got, __ATOMIC_RELAXED);
        } else {
            zt_ring__pause();
        }
    }
    return NULL;
}

/* Run producers and consumers over one ring; check every object seen exactly once. */
static void run_stress(unsigned producers, unsigned consumers, uint32_t size, bool ordered)
{
    struct stress s = {0};
    unsigned flags = (producers == 1 ? ZT_RING_SP_ENQ : 0) | (consumers == 1 ? ZT_RING_SC_DEQ : 0);
    s.ring = zt_ring_create(size, 8, flags);
    assert_non_null(s.ring);
    s.producers = producers;
    s.consumers = consumers;
    s.single_p = producers == 1;
    s.single_c = consumers == 1;
    s.ordered = ordered;
    s.per_producer = STRESS_OBJECTS / producers;
    s.remaining = s.per_producer * producers;
    s.seen = calloc((size_t)producers * s.per_producer, 1);
    assert_non_null(s.seen);
    pthread_t th[2 * MAX_THREADS];
    unsigned n = 0;
    for (unsigned i = 0; i < producers; i++) {
        assert_int_equal(pthread_create(&th[n++], NULL, producer, &s), 0);
    }
    while (__atomic_load_n(&s.ids, __ATOMIC_RELAXED) < producers) {
        zt_ring__pause(); /* producers take ids 0..P-1, consumers the next ones */
    }
    for (unsigned i = 0; i < consumers; i++) {
        assert_int_equal(pthread_create(&th[n++], NULL, consumer, &s), 0);
    }
    for (unsigned i = 0; i < n; i++) {
        pthread_join(th[i], NULL);
    }
    uint64_t taken = 0, bad = 0, wrong = 0;
    for (unsigned i = 0; i < consumers; i++) {
        taken += s.taken[i];
        bad += s.bad_order[i];
    }
    for (size_t i = 0; i < (size_t)producers * s.per_producer; i++) {
        wrong += s.seen[i] != 1;
    }
    if (taken != (uint64_t)producers * s.per_producer || bad || wrong || zt_ring_count(s.ring)) {
        fail_msg("%u producers, %u consumers: taken %llu of %llu, out of order %llu, not seen "
                 "exactly once %llu, left %u",
                 producers, consumers, (unsigned long long)taken,
                 (unsigned long long)producers * s.per_producer, (unsigned long long)bad,
                 (unsigned long long)wrong, zt_ring_count(s.ring));
    }
    free(s.seen);
    zt_ring_free(s.ring);
}

/* RING-07: one producer thread and one consumer thread (SP/SC), random single/bulk/burst
 * sizes over a 64-slot ring: every object arrives exactly once and in order. */
static void ring07_spsc_threads(TEST_STATE)
{
    run_stress(1, 1, 64, true);
}

/* RING-08: four producers and four consumers on one MP/MC ring of 128 slots: every object
 * arrives exactly once, and each consumer sees each producer's objects in increasing order. */
static void ring08_mpmc_threads(TEST_STATE)
{
    run_stress(4, 4, 128, false);
}

/* RING-09: the mixed sides: three producers into one SC consumer (MP/SC), one SP producer to
 * three consumers (SP/MC), over a small ring (16) so that it is full and empty often. */
static void ring09_mixed_sides(TEST_STATE)
{
    run_stress(3, 1, 16, false);
    run_stress(1, 3, 16, false);
}

struct rec_stress {
    struct zt_ring *ring;
    uint64_t n, bad;
};

static void *rec_producer(void *arg)
{
    struct rec_stress *s = arg;
    struct rec24 batch[8];
    for (uint64_t seq = 0; seq < s->n;) {
        uint32_t k = s->n - seq < 8 ? (uint32_t)(s->n - seq) : 8;
        for (uint32_t i = 0; i < k; i++) {
            batch[i] = (struct rec24){seq + i, ~(seq + i), (seq + i) * 0x9e3779b97f4a7c15ull};
        }
        seq += zt_ring_enqueue_burst_elem(s->ring, batch, k);
    }
    return NULL;
}

/* RING-10: records between threads: a 24-byte record is never seen torn or out of order (its
 * three words must agree with each other and with the count). */
static void ring10_record_threads(TEST_STATE)
{
    struct rec_stress s = {
        zt_ring_create(32, sizeof(struct rec24), ZT_RING_SP_ENQ | ZT_RING_SC_DEQ),
        STRESS_OBJECTS / 2, 0};
    pthread_t p;
    assert_int_equal(pthread_create(&p, NULL, rec_producer, &s), 0);
    struct rec24 batch[8];
    uint64_t next = 0;
    while (next < s.n) {
        uint32_t got = zt_ring_dequeue_burst_elem(s.ring, batch, 1 + next % 8);
        for (uint32_t i = 0; i < got; i++, next++) {
            s.bad += batch[i].seq != next || batch[i].not_seq != ~next ||
                     batch[i].tag != next * 0x9e3779b97f4a7c15ull;
        }
    }
    pthread_join(p, NULL);
    assert_int_equal(s.bad, 0);
    zt_ring_free(s.ring);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ring01_shape_checks),   cmocka_unit_test(ring02_spsc_semantics),
        cmocka_unit_test(ring03_mpmc_semantics), cmocka_unit_test(ring04_wraparound),
        cmocka_unit_test(ring05_records),        cmocka_unit_test(ring06_caller_memory),
        cmocka_unit_test(ring07_spsc_threads),   cmocka_unit_test(ring08_mpmc_threads),
        cmocka_unit_test(ring09_mixed_sides),    cmocka_unit_test(ring10_record_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
