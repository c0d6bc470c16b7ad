/* SPDX-License-Identifier: MIT */
/*
 * test_fuzzprog.c — host unit tests of user/fuzz/prog.c, the coverage-guided fuzzer's
 * programs, corpus, mutations and records: the parts that need no kernel.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "prog.h"

#define TEST_STATE void **state __attribute__((unused))

/* The picker: numbers 1..40, so a test can tell a picked call from anything else. */
static int32_t pick(struct fz_rng *r, void *ctx)
{
    (*(int *)ctx)++;
    return 1 + (int32_t)fz_below(r, 40);
}

static bool valid(const struct fz_prog *p)
{
    if (p->n < 1 || p->n > FZ_PROG_CALLS || (p->flags & ~FZ_PROG_COLLIDE)) {
        return false;
    }
    for (uint32_t i = 0; i < p->n; i++) {
        if (p->c[i].nr < 1 || p->c[i].nr > 40) {
            return false;
        }
    }
    return true;
}

/* FZ-20: a new program has 1..FZ_PROG_NEW calls, each picked by the caller with a seed of
 * its own, and the same stream makes the same program */
static void fz20_generate(TEST_STATE)
{
    struct fz_rng r = {.s = 1}, r2 = {.s = 1};
    struct fz_prog p, q;
    int picks = 0, lengths[FZ_PROG_NEW + 1] = {0};
    for (int k = 0; k < 1000; k++) {
        fz_prog_generate(&p, &r, pick, &picks);
        assert_true(valid(&p));
        assert_true(p.n <= FZ_PROG_NEW);
        lengths[p.n]++;
        for (uint32_t i = 1; i < p.n; i++) {
            assert_true(p.c[i].seed != p.c[i - 1].seed);
        }
        fz_prog_generate(&q, &r2, pick, &picks);
        assert_int_equal(fz_prog_hash(&p), fz_prog_hash(&q));
    }
    for (int n = 1; n <= FZ_PROG_NEW; n++) {
        assert_true(lengths[n] > 100); /* every length occurs */
    }
}

/* FZ-21: a flip replaces exactly the draw it names: the stream before and after it is the
 * unflipped one, so a flipped call keeps the rest of its shaping */
static void fz21_flip_one_draw(TEST_STATE)
{
    struct fz_pcall c;
    memset(&c, 0, sizeof(c));
    c.seed = 0x1234;
    struct fz_rng a = fz_pcall_rng(&c);
    uint64_t plain[10];
    for (int i = 0; i < 10; i++) {
        plain[i] = fz_next(&a);
    }
    c.flip_at[1] = 4; /* the 4th draw */
    c.flip_val[1] = 77;
    struct fz_rng b = fz_pcall_rng(&c);
    for (int i = 0; i < 10; i++) {
        uint64_t v = fz_next(&b);
        assert_true(i == 3 ? v == 77 : v == plain[i]);
    }
    assert_int_equal(b.drawn, 10);
}

/* FZ-22: 20,000 mutations (splices from a corpus included) keep every program valid, make
 * every kind of mutation, and change the program almost every time */
static void fz22_mutations_keep_programs_valid(TEST_STATE)
{
    static struct fz_prog progs[64], p;
    static uint32_t gain[64];
    static uint64_t hash[64];
    struct fz_corpus c;
    struct fz_rng r = {.s = 7};
    int picks = 0, unchanged = 0;
    unsigned seen = 0;
    fz_corpus_init(&c, progs, gain, hash, 64);
    for (int k = 0; k < 64; k++) {
        fz_prog_generate(&p, &r, pick, &picks);
        fz_corpus_add(&c, &p, 1 + (uint32_t)k);
    }
    for (int k = 0; k < 20000; k++) {
        if (k % 50 == 0) {
            p = *fz_corpus_pick(&c, &r);
        }
        uint64_t before = fz_prog_hash(&p);
        unsigned done;
        fz_prog_mutate(&p, &r, &c, pick, &picks, &done);
        assert_true(valid(&p));
        assert_int_not_equal(done, 0);
        seen |= done;
        unchanged += fz_prog_hash(&p) == before;
    }
    assert_int_equal(seen, (1u << FZ_MUT_NR) - 1);
    assert_true(unchanged < 200); /* a flip that redraws the same value, a swap of equals */
}

/* FZ-23: each sequence mutation does what it says on a program of known calls, and does
 * nothing where it cannot apply (remove from one call, insert into a full program, splice
 * without a corpus) */
static void fz23_sequence_mutations(TEST_STATE)
{
    struct fz_prog p;
    struct fz_rng r = {.s = 3};
    int picks = 0;
    for (int k = 0; k < 500; k++) {
        for (int m = 0; m < FZ_MUT_NR; m++) {
            memset(&p, 0, sizeof(p));
            p.n = 4;
            for (int i = 0; i < 4; i++) {
                p.c[i].nr = 10 + i;
                p.c[i].seed = 100 + (uint64_t)i;
            }
            int before = picks, sum = 0, moved = 0, twice = 0;
            bool made = fz_prog_mutate_one(&p, (enum fz_mutation)m, &r, NULL, pick, &picks);
            for (uint32_t i = 0; i < p.n; i++) {
                sum += p.c[i].nr;
                moved += i < 4 && p.c[i].nr != 10 + (int)i;
                twice += i && p.c[i].nr == p.c[i - 1].nr && p.c[i].seed == p.c[i - 1].seed;
            }
            switch (m) {
            case FZ_MUT_REMOVE:
                assert_true(made && p.n == 3);
                break;
            case FZ_MUT_INSERT:
                assert_true(made && p.n == 5 && picks == before + 1);
                break;
            case FZ_MUT_DUP:
                assert_true(made && p.n == 5 && twice == 1);
                break;
            case FZ_MUT_SWAP: /* two different places, or none */
                assert_true(made ? moved == 2 : moved == 0);
                assert_int_equal(sum, 10 + 11 + 12 + 13);
                break;
            case FZ_MUT_RESEED:
            case FZ_MUT_FLIP:
                assert_true(made && p.n == 4 && moved == 0);
                break;
            case FZ_MUT_COLLIDE:
                assert_true(made && p.flags == FZ_PROG_COLLIDE);
                break;
            case FZ_MUT_SPLICE:
                assert_false(made);
                assert_int_equal(p.n, 4);
                break;
            }
        }
        p.n = 1;
        assert_false(fz_prog_mutate_one(&p, FZ_MUT_REMOVE, &r, NULL, pick, &picks));
        p.n = FZ_PROG_CALLS;
        assert_false(fz_prog_mutate_one(&p, FZ_MUT_INSERT, &r, NULL, pick, &picks));
        assert_false(fz_prog_mutate_one(&p, FZ_MUT_DUP, &r, NULL, pick, &picks));
    }
}

/* FZ-24: the corpus refuses a program it has, replaces its oldest when full, and picks
 * only what it holds, the programs added last more often than the others */
static void fz24_corpus(TEST_STATE)
{
    static struct fz_prog progs[32], p;
    static uint32_t gain[32];
    static uint64_t hash[32];
    struct fz_corpus c;
    struct fz_rng r = {.s = 11};
    int picks = 0;
    fz_corpus_init(&c, progs, gain, hash, 32);
    assert_null(fz_corpus_pick(&c, &r));
    fz_prog_generate(&p, &r, pick, &picks);
    assert_true(fz_corpus_add(&c, &p, 5));
    assert_false(fz_corpus_add(&c, &p, 9)); /* the same program again */
    assert_int_equal(c.n, 1);
    uint64_t first = fz_prog_hash(&p);
    for (int k = 0; k < 40; k++) { /* 40 more: the first 9 added go */
        p.c[0].seed = 1000 + (uint64_t)k;
        assert_true(fz_corpus_add(&c, &p, 1));
    }
    assert_int_equal(c.n, 32);
    int counts[32] = {0};
    for (int k = 0; k < 32000; k++) {
        const struct fz_prog *q = fz_corpus_pick(&c, &r);
        assert_true(q >= progs && q < progs + 32);
        assert_int_not_equal(fz_prog_hash(q), first);
        counts[q - progs]++;
    }
    /* the 16 added last get half of the picks on top of their share of the other half */
    int recent = 0;
    for (int k = 0; k < 16; k++) {
        recent += counts[(c.next + 31 - k) % 32];
    }
    assert_true(recent > 32000 * 6 / 10);
}

/* FZ-25: a record decodes to the program it encodes, with its gain; a record cut short asks
 * for more; a changed byte, a wrong magic or call count is refused; records follow each
 * other in one buffer (a corpus file) */
static void fz25_records(TEST_STATE)
{
    struct fz_prog p, q;
    struct fz_rng r = {.s = 5};
    int picks = 0;
    uint8_t buf[3 * FZ_REC_MAX];
    uint32_t gain;
    fz_prog_generate(&p, &r, pick, &picks);
    p.flags = FZ_PROG_COLLIDE;
    p.c[0].flip_at[0] = 3, p.c[0].flip_val[0] = 99;
    size_t len = fz_prog_encode(&p, 42, buf);
    assert_true(len <= FZ_REC_MAX);
    assert_int_equal(fz_prog_decode(buf, len, &q, &gain), (long)len);
    assert_int_equal(gain, 42);
    assert_int_equal(fz_prog_hash(&q), fz_prog_hash(&p));
    for (size_t cut = 0; cut < len; cut++) {
        assert_int_equal(fz_prog_decode(buf, cut, &q, &gain), 0);
    }
    for (size_t i = 0; i < len; i++) {
        uint8_t save = buf[i];
        buf[i] ^= 0x10;
        long d = fz_prog_decode(buf, len, &q, &gain);
        assert_true(d == -1 || (i >= 4 && i < 8 && d == 0)); /* a larger count: wants more */
        buf[i] = save;
    }
    uint32_t n = FZ_PROG_CALLS + 1;
    memcpy(buf + 4, &n, 4);
    assert_int_equal(fz_prog_decode(buf, len, &q, &gain), -1);
    /* three records in a row */
    struct fz_prog a[3];
    size_t at = 0;
    for (int k = 0; k < 3; k++) {
        fz_prog_generate(&a[k], &r, pick, &picks);
        at += fz_prog_encode(&a[k], (uint32_t)k, buf + at);
    }
    size_t off = 0;
    for (int k = 0; k < 3; k++) {
        long d = fz_prog_decode(buf + off, at - off, &q, &gain);
        assert_true(d > 0);
        assert_int_equal(gain, (uint32_t)k);
        assert_int_equal(fz_prog_hash(&q), fz_prog_hash(&a[k]));
        off += (size_t)d;
    }
    assert_int_equal(off, at);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* FZ-27: the lives of nearby run seeds are all different: seeds 1..64, workers 0..7 and
 * generations 0..1023 give 524,288 distinct life seeds (the first version XORed the worker
 * and generation into the raw seed, so life g of seed 11 was life g^6 of seed 13) */
static void fz27_life_seeds_distinct(TEST_STATE)
{
    enum { SEEDS = 64, WORKERS = 8, GENS = 1024, N = SEEDS * WORKERS * GENS };
    uint64_t *v = malloc(N * sizeof(*v));
    assert_non_null(v);
    size_t n = 0;
    for (uint64_t s = 1; s <= SEEDS; s++) {
        for (int w = 0; w < WORKERS; w++) {
            for (int g = 0; g < GENS; g++) {
                v[n++] = fz_life_seed(s, w, g);
            }
        }
    }
    assert_int_not_equal(fz_life_seed(11, 0, 0), fz_life_seed(13, 0, 6));
    qsort(v, n, sizeof(*v), cmp_u64);
    size_t same = 0;
    for (size_t i = 1; i < n; i++) {
        same += v[i] == v[i - 1];
    }
    free(v);
    assert_int_equal(same, 0);
    /* the same triple gives the same seed: a printed life replays */
    assert_int_equal(fz_life_seed(15, 2, 156), fz_life_seed(15, 2, 156));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fz20_generate),
        cmocka_unit_test(fz21_flip_one_draw),
        cmocka_unit_test(fz22_mutations_keep_programs_valid),
        cmocka_unit_test(fz23_sequence_mutations),
        cmocka_unit_test(fz24_corpus),
        cmocka_unit_test(fz25_records),
        cmocka_unit_test(fz27_life_seeds_distinct),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
