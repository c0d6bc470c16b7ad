/* SPDX-License-Identifier: MIT */
/*
 * prog.c — programs, the corpus, mutations and records of the coverage-guided fuzzer
 * (contract in prog.h).  Pure: the host unit tests run this file as it is.
 */
#include "prog.h"

#include <string.h>

static struct fz_pcall new_call(struct fz_rng *r, fz_pick_nr_fn pick, void *ctx)
{
    struct fz_pcall c;
    memset(&c, 0, sizeof(c));
    c.nr = pick(r, ctx);
    c.seed = fz_next(r);
    return c;
}

void fz_prog_generate(struct fz_prog *p, struct fz_rng *r, fz_pick_nr_fn pick, void *ctx)
{
    memset(p, 0, sizeof(*p));
    p->n = 1 + (uint32_t)fz_below(r, FZ_PROG_NEW);
    for (uint32_t i = 0; i < p->n; i++) {
        p->c[i] = new_call(r, pick, ctx);
    }
}

static uint64_t fnv(uint64_t h, const void *data, size_t n)
{
    const uint8_t *b = data;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ b[i]) * 0x100000001b3ull;
    }
    return h;
}

#define FNV_START 0xcbf29ce484222325ull

uint64_t fz_prog_hash(const struct fz_prog *p)
{
    uint64_t h = fnv(FNV_START, &p->n, sizeof(p->n));
    h = fnv(h, &p->flags, sizeof(p->flags));
    for (uint32_t i = 0; i < p->n && i < FZ_PROG_CALLS; i++) {
        const struct fz_pcall *c = &p->c[i];
        h = fnv(h, &c->nr, sizeof(c->nr));
        h = fnv(h, &c->seed, sizeof(c->seed));
        h = fnv(h, c->flip_at, sizeof(c->flip_at));
        h = fnv(h, c->flip_val, sizeof(c->flip_val));
    }
    return h;
}

/* ---------------------------------------------------------------- the corpus */

void fz_corpus_init(struct fz_corpus *c, struct fz_prog *progs, uint32_t *gain, uint64_t *hash,
                    int cap)
{
    c->progs = progs;
    c->gain = gain;
    c->hash = hash;
    c->n = 0;
    c->cap = cap;
    c->next = 0;
}

bool fz_corpus_add(struct fz_corpus *c, const struct fz_prog *p, uint32_t gain)
{
    uint64_t h = fz_prog_hash(p);
    for (int i = 0; i < c->n; i++) {
        if (c->hash[i] == h) {
            return false;
        }
    }
    int slot;
    if (c->n < c->cap) {
        slot = c->n++;
    } else { /* full: the oldest goes */
        slot = c->next;
        c->next = (c->next + 1) % c->cap;
    }
    c->progs[slot] = *p;
    c->gain[slot] = gain;
    c->hash[slot] = h;
    return true;
}

/* Index of the i-th program added last (0: the last). */
static int recent(const struct fz_corpus *c, int i)
{
    int newest = c->n < c->cap ? c->n - 1 : (c->next + c->cap - 1) % c->cap;
    return (newest - i + c->cap) % c->cap;
}

const struct fz_prog *fz_corpus_pick(const struct fz_corpus *c, struct fz_rng *r)
{
    if (c->n == 0) {
        return NULL;
    }
    if (fz_chance(r, 1, 2)) {
        int last = c->n < 16 ? c->n : 16;
        return &c->progs[recent(c, (int)fz_below(r, (uint64_t)last))];
    }
    /* two at random, the one that reached more new code wins */
    int a = (int)fz_below(r, (uint64_t)c->n), b = (int)fz_below(r, (uint64_t)c->n);
    return &c->progs[c->gain[a] >= c->gain[b] ? a : b];
}

/* ---------------------------------------------------------------- mutation */

static void remove_at(struct fz_prog *p, uint32_t i)
{
    memmove(&p->c[i], &p->c[i + 1], sizeof(p->c[0]) * (p->n - i - 1));
    p->n--;
}

static void insert_at(struct fz_prog *p, uint32_t i, const struct fz_pcall *c)
{
    memmove(&p->c[i + 1], &p->c[i], sizeof(p->c[0]) * (p->n - i));
    p->c[i] = *c;
    p->n++;
}

/* Replace one draw of call i's stream: a draw it is known to take (ndraws), or one of the
 * first few when it has not run yet. */
static void flip(struct fz_prog *p, uint32_t i, struct fz_rng *r)
{
    struct fz_pcall *c = &p->c[i];
    uint32_t draws = c->ndraws ? c->ndraws : 12;
    int slot = (int)fz_below(r, FZ_FLIPS);
    c->flip_at[slot] = 1 + (uint32_t)fz_below(r, draws);
    c->flip_val[slot] = fz_next(r);
}

bool fz_prog_mutate_one(struct fz_prog *p, enum fz_mutation m, struct fz_rng *r,
                        const struct fz_corpus *corpus, fz_pick_nr_fn pick, void *ctx)
{
    uint32_t i = (uint32_t)fz_below(r, p->n), j = (uint32_t)fz_below(r, p->n);
    switch (m) {
    case FZ_MUT_FLIP:
        flip(p, i, r);
        return true;
    case FZ_MUT_RESEED:
        p->c[i].seed = fz_next(r);
        memset(p->c[i].flip_at, 0, sizeof(p->c[i].flip_at));
        memset(p->c[i].flip_val, 0, sizeof(p->c[i].flip_val));
        p->c[i].ndraws = 0;
        return true;
    case FZ_MUT_INSERT:
        if (p->n == FZ_PROG_CALLS) {
            return false;
        }
        {
            struct fz_pcall c = new_call(r, pick, ctx);
            insert_at(p, (uint32_t)fz_below(r, p->n + 1), &c);
        }
        return true;
    case FZ_MUT_REMOVE:
        if (p->n < 2) {
            return false;
        }
        remove_at(p, i);
        return true;
    case FZ_MUT_SWAP:
        if (i == j) {
            return false;
        }
        {
            struct fz_pcall t = p->c[i];
            p->c[i] = p->c[j];
            p->c[j] = t;
        }
        return true;
    case FZ_MUT_DUP:
        if (p->n == FZ_PROG_CALLS) {
            return false;
        }
        insert_at(p, i + 1, &p->c[i]);
        return true;
    case FZ_MUT_SPLICE: {
        const struct fz_prog *o = corpus ? fz_corpus_pick(corpus, r) : NULL;
        if (!o || o == p) {
            return false;
        }
        uint32_t keep = 1 + (uint32_t)fz_below(r, p->n); /* this one's first `keep` calls */
        uint32_t from = (uint32_t)fz_below(r, o->n);     /* the other's calls from `from` */
        for (uint32_t k = from; k < o->n && keep < FZ_PROG_CALLS; k++) {
            p->c[keep++] = o->c[k];
        }
        p->n = keep;
        return true;
    }
    case FZ_MUT_COLLIDE:
        p->flags ^= FZ_PROG_COLLIDE;
        return true;
    default:
        return false;
    }
}

void fz_prog_mutate(struct fz_prog *p, struct fz_rng *r, const struct fz_corpus *c,
                    fz_pick_nr_fn pick, void *ctx, unsigned *done)
{
    /* weights: arguments most often, then the sequence; collide rarely */
    static const uint8_t weight[FZ_MUT_NR] = {
        [FZ_MUT_FLIP] = 8, [FZ_MUT_RESEED] = 4, [FZ_MUT_INSERT] = 4, [FZ_MUT_REMOVE] = 3,
        [FZ_MUT_SWAP] = 2, [FZ_MUT_DUP] = 2,    [FZ_MUT_SPLICE] = 2, [FZ_MUT_COLLIDE] = 1,
    };
    unsigned total = 0, want = 1 + (unsigned)fz_below(r, 3), made = 0;
    for (int m = 0; m < FZ_MUT_NR; m++) {
        total += weight[m];
    }
    if (done) {
        *done = 0;
    }
    for (int tries = 0; made < want && tries < 16; tries++) {
        unsigned x = (unsigned)fz_below(r, total);
        int m = 0;
        while (x >= weight[m]) {
            x -= weight[m++];
        }
        if (fz_prog_mutate_one(p, (enum fz_mutation)m, r, c, pick, ctx)) {
            made++;
            if (done) {
                *done |= 1u << m;
            }
        }
    }
}

/* ---------------------------------------------------------------- records */

#define REC_HEADER 16

size_t fz_prog_encode(const struct fz_prog *p, uint32_t gain, uint8_t *buf)
{
    uint32_t head[4] = {FZ_REC_MAGIC, p->n, p->flags, gain};
    size_t len = REC_HEADER + p->n * sizeof(struct fz_pcall);
    memcpy(buf, head, REC_HEADER);
    memcpy(buf + REC_HEADER, p->c, p->n * sizeof(struct fz_pcall));
    uint64_t h = fnv(FNV_START, buf, len);
    memcpy(buf + len, &h, sizeof(h));
    return len + sizeof(h);
}

long fz_prog_decode(const uint8_t *buf, size_t len, struct fz_prog *p, uint32_t *gain)
{
    uint32_t head[4];
    if (len < REC_HEADER) {
        return 0;
    }
    memcpy(head, buf, REC_HEADER);
    if (head[0] != FZ_REC_MAGIC || head[1] < 1 || head[1] > FZ_PROG_CALLS ||
        (head[2] & ~FZ_PROG_COLLIDE)) {
        return -1;
    }
    size_t body = REC_HEADER + head[1] * sizeof(struct fz_pcall);
    uint64_t h;
    if (len < body + sizeof(h)) {
        return 0;
    }
    memcpy(&h, buf + body, sizeof(h));
    if (h != fnv(FNV_START, buf, body)) {
        return -1;
    }
    memset(p, 0, sizeof(*p));
    p->n = head[1];
    p->flags = head[2];
    *gain = head[3];
    memcpy(p->c, buf + REC_HEADER, head[1] * sizeof(struct fz_pcall));
    return (long)(body + sizeof(h));
}
