/* SPDX-License-Identifier: MIT */
/*
 * prog.h — what the coverage-guided fuzzer keeps: programs (short sequences of calls), the
 * corpus of programs that reached new kernel code, the mutations that make new programs of
 * old ones, and the records programs are stored in.  Pure logic (no system call, no libc
 * beyond memcpy/memset): tests/unit/test_fuzzprog.c runs it on the host.
 *
 * A call of a program is not its arguments but the random stream they are shaped from: the
 * call's number, the seed of the stream its shaper draws from (shapes.c), and up to
 * FZ_FLIPS draws of that stream replaced by other values.  Replaying a call shapes it again,
 * so every sandbox rule of the shapers holds for a mutated call too (a mutation never hands
 * the kernel a value no shaper would); flipping one draw changes one decision or one value
 * of the shaping and keeps the rest, which is what a small mutation of the arguments is.
 * syzkaller's programs and mutations are the model (its argument types are our shapers).
 */
#ifndef ZT_USER_FUZZ_PROG_H
#define ZT_USER_FUZZ_PROG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the random stream (splitmix64: any seed, every value, cheap) ---- */
#define FZ_FLIPS 2

struct fz_rng {
    uint64_t s;
    uint32_t drawn;              /* values drawn so far */
    uint32_t flip_at[FZ_FLIPS];  /* draw number (1-based) whose value is replaced; 0: none */
    uint64_t flip_val[FZ_FLIPS]; /* ... by this */
};

/* splitmix64's finaliser: a bijection of 64-bit values that spreads every input bit. */
static inline uint64_t fz_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline uint64_t fz_next(struct fz_rng *r)
{
    uint64_t z = fz_mix(r->s += 0x9e3779b97f4a7c15ull);
    r->drawn++;
    for (int i = 0; i < FZ_FLIPS; i++) {
        if (__builtin_expect(r->flip_at[i] == r->drawn, 0)) {
            z = r->flip_val[i];
        }
    }
    return z;
}

/* The seed of life `gen` of worker `worker` in a run seeded with `seed`.  The run seed is
 * mixed before the worker and generation are folded in: XORing them into the raw seed made
 * life g of seed 11 the same as life g^6 of seed 13, so nearby seeds replayed each other's
 * lives (FZ-27).  Both steps are bijections, so distinct (seed, worker, gen) triples collide
 * only when mix(s1) ^ mix(s2) happens to equal a worker/generation pattern. */
static inline uint64_t fz_life_seed(uint64_t seed, int worker, int gen)
{
    uint64_t wg = ((uint64_t)(unsigned)worker << 40) ^ (uint64_t)(unsigned)gen;
    return fz_mix(fz_mix(seed + 0x9e3779b97f4a7c15ull) ^ wg);
}

/* A value in [0, n) (n > 0). */
static inline uint64_t fz_below(struct fz_rng *r, uint64_t n)
{
    return fz_next(r) % n;
}

/* True with probability num/den. */
static inline bool fz_chance(struct fz_rng *r, unsigned num, unsigned den)
{
    return fz_below(r, den) < num;
}

/* ---- programs ---- */
#define FZ_PROG_CALLS 16 /* calls in a program, at most */
#define FZ_PROG_NEW   6  /* a new program has 1..FZ_PROG_NEW calls */

struct fz_pcall {
    int32_t nr;      /* the system call's number */
    uint16_t ndraws; /* draws its shaping took when last run (0: not run yet) */
    uint16_t pad;
    uint64_t seed; /* its shaping's stream */
    uint32_t flip_at[FZ_FLIPS];
    uint64_t flip_val[FZ_FLIPS];
};

#define FZ_PROG_COLLIDE 1u /* run by several threads at once (worker.c) */

struct fz_prog {
    uint32_t n;     /* calls */
    uint32_t flags; /* FZ_PROG_* */
    struct fz_pcall c[FZ_PROG_CALLS];
};

/* The stream call c is shaped from. */
static inline struct fz_rng fz_pcall_rng(const struct fz_pcall *c)
{
    struct fz_rng r = {.s = c->seed};
    for (int i = 0; i < FZ_FLIPS; i++) {
        r.flip_at[i] = c->flip_at[i];
        r.flip_val[i] = c->flip_val[i];
    }
    return r;
}

/* Which call a new call makes: the caller's choice (worker.c draws from the kernel's table
 * and, now and then, a number outside it). */
typedef int32_t (*fz_pick_nr_fn)(struct fz_rng *r, void *ctx);

/* A new program of 1..FZ_PROG_NEW calls. */
void fz_prog_generate(struct fz_prog *p, struct fz_rng *r, fz_pick_nr_fn pick, void *ctx);

/* A hash of what a program does (its calls, not how often it ran or what its shaping drew):
 * equal programs hash equal. */
uint64_t fz_prog_hash(const struct fz_prog *p);

/* ---- the corpus ---- */
struct fz_corpus {
    struct fz_prog *progs; /* cap entries, owned by the caller */
    uint32_t *gain;        /* blocks each reached first when it was added */
    uint64_t *hash;
    int n, cap;
    int next; /* where the next program goes once full (the oldest, round robin) */
};

void fz_corpus_init(struct fz_corpus *c, struct fz_prog *progs, uint32_t *gain, uint64_t *hash,
                    int cap);
/* Add p (it reached `gain` new blocks).  false if an equal program is there already.  Full:
 * it replaces the oldest. */
bool fz_corpus_add(struct fz_corpus *c, const struct fz_prog *p, uint32_t gain);
/* A program to mutate (NULL if empty): half of the time one of the 16 added last (what
 * reached new code recently is near more), else any, weighted towards larger gains. */
const struct fz_prog *fz_corpus_pick(const struct fz_corpus *c, struct fz_rng *r);

/* ---- mutation ---- */
enum fz_mutation {
    FZ_MUT_FLIP,    /* replace one draw of one call's stream (an argument, a decision) */
    FZ_MUT_RESEED,  /* a new stream for one call (all its arguments) */
    FZ_MUT_INSERT,  /* a new call somewhere */
    FZ_MUT_REMOVE,  /* one call less */
    FZ_MUT_SWAP,    /* two calls change places */
    FZ_MUT_DUP,     /* a call twice (the same arguments again) */
    FZ_MUT_SPLICE,  /* the start of this program, the end of another of the corpus */
    FZ_MUT_COLLIDE, /* run by several threads at once, or not */
    FZ_MUT_NR,
};

/* One mutation of kind m, if it applies to p (a program of one call loses none, a full one
 * gains none, a splice needs another program); whether it was made. */
bool fz_prog_mutate_one(struct fz_prog *p, enum fz_mutation m, struct fz_rng *r,
                        const struct fz_corpus *c, fz_pick_nr_fn pick, void *ctx);
/* Mutate p in place: 1..3 mutations, each one that applies to p; which ones it made go to
 * `done` (a bit per enum fz_mutation) if not NULL.  `c` (may be NULL or empty) gives splice
 * partners.  p stays a valid program: 1..FZ_PROG_CALLS calls. */
void fz_prog_mutate(struct fz_prog *p, struct fz_rng *r, const struct fz_corpus *c,
                    fz_pick_nr_fn pick, void *ctx, unsigned *done);

/* ---- records (the corpus files) ---- */
#define FZ_REC_MAGIC 0x3150465au /* "ZFP1" */
#define FZ_REC_MAX   (16 + FZ_PROG_CALLS * sizeof(struct fz_pcall) + 8)

/* Record: magic, call count, flags, gain (4 bytes each), the calls as struct fz_pcall, and an
 * FNV-1a hash of all that (8 bytes).  Little-endian, as both ends are. */

/* p, which reached `gain` new blocks, as a record in buf (at least FZ_REC_MAX bytes); its
 * length. */
size_t fz_prog_encode(const struct fz_prog *p, uint32_t gain, uint8_t *buf);
/* The record at the start of buf[0..len): its length (p and *gain filled), 0 if buf holds
 * only the start of one, -1 if it is not a valid record (bad magic, call count or hash). */
long fz_prog_decode(const uint8_t *buf, size_t len, struct fz_prog *p, uint32_t *gain);

#endif
