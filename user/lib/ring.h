/* SPDX-License-Identifier: MIT */
/*
 * ring.h — fixed-size, lock-free rings of pointers or small records that join the stages of a
 * dataplane running on different CPUs (user/pipeline.c): no system call, no lock, no kernel
 * involvement, so an isolated CPU can use them without ever entering the kernel.
 *
 * Shape.  A ring has `size` slots (a power of two) of `esize` bytes each (8 for a pointer, or
 * a multiple of 8 up to ZT_RING_ESIZE_MAX for a small record) and holds up to `size` objects.
 * Four free-running 32-bit indices count objects, never slots (slot = index & mask):
 *
 *   prod.head  next object a producer reserves      prod.tail  objects published to consumers
 *   cons.head  next object a consumer reserves      cons.tail  slots given back to producers
 *
 * and always cons.tail <= cons.head <= prod.tail <= prod.head <= cons.tail + size (mod 2^32).
 * The producers' pair and the consumers' pair sit on separate cache lines
 * (ZT_RING_CACHE_LINE), and the read-only fields (size, mask, esize, flags) on a third, so a
 * producer and a consumer on two CPUs share exactly two lines: each writes its own and reads
 * the other's tail.  The ring contains no pointer to itself: it works in any memory both
 * sides map, threads of one process (what the pipeline uses) or a mapping shared by processes.
 *
 * Producers and consumers.  Each side is chosen at init, for the ring's whole life:
 * single-producer (ZT_RING_SP_ENQ) or multi-producer, single-consumer (ZT_RING_SC_DEQ) or
 * multi-consumer.  A single side is one thread at a time; a multi side takes any number of
 * threads.  The zt_ring_sp_ / mp_ / sc_ / mc_ functions name the side explicitly (calling an
 * sp_ function on an MP ring is a bug); zt_ring_enqueue* and zt_ring_dequeue* follow the
 * flags (one predictable branch).  Every operation comes in three kinds:
 *   single   one object: true if it moved
 *   bulk     n objects, all or nothing: n or 0 (the ring is never partly filled or emptied)
 *   burst    as many of n as fit / are there: how many moved (0..n)
 * and none ever waits for space or objects: a full or empty ring is the caller's to handle
 * (the pipeline drops at its entry and counts it).  An MP/MC operation may wait for another
 * thread of the same side that reserved earlier to publish (below): that thread is in the
 * middle of a few stores, not blocked on anything.
 *
 * Memory ordering (C11 atomics, as GCC's __atomic builtins; the aarch64 instructions in
 * brackets, ARM ARM B2.3): acquire loads and release stores only, no full barrier (DMB ISH) on
 * any path.
 *   - A producer writes the slots, then store-releases prod.tail [STLR].  A consumer
 *     load-acquires prod.tail [LDAR] before reading the slots: everything the producer wrote
 *     before publishing (the slots, and whatever the objects point to) is visible to it.
 *   - A consumer reads the slots, then store-releases cons.tail; a producer load-acquires
 *     cons.tail before writing slots: a slot is never overwritten before its reader is done.
 *   - SP and SC keep the other side's tail they last saw on their own line (prod.cache,
 *     cons.cache) and load-acquire the real one only when the cached value shows too little
 *     room or too few objects: in a steady stream most calls touch no line of the other side.
 *     A cached value is always a value the real tail once had, and tails only grow, so it can
 *     only underestimate; the ordering it needs was established by the acquire that read it.
 *   - MP (and MC the same on the consumer side): load-acquire prod.head, then load-acquire
 *     cons.tail (the head must be read first: a cons.tail older than the head could make the
 *     unsigned free count wrap), then compare-and-swap prod.head forward [LDAXR/STXR: an acquire
 *     CAS costs no barrier]; a failed CAS re-reads the head with acquire ordering before the
 *     next try.  After writing
 *     its slots, a producer waits (load-acquire, so the chain of releases carries every earlier
 *     producer's slots) until prod.tail reaches the head it reserved from, then store-releases
 *     prod.tail past its own objects: tails advance in reservation order.  No cached tail on
 *     these sides: two producers' caches could disagree and wrap the free count.
 * tests/unit/test_ring.c checks all of this on the host with producer and consumer threads
 * under ThreadSanitizer, which reasons in exactly this C11 model (a missing acquire or release
 * is a reported race even on x86, whose hardware would hide it).
 *
 * Contexts: any thread; no call allocates, blocks or enters the kernel.  zt_ring_init and
 * zt_ring_create (ring.c) set a ring up before any thread uses it.  The counts
 * (zt_ring_count, zt_ring_free_count) are snapshots while other threads run.
 * The design is DPDK's rte_ring (its C11 memory model variant) cut down: the same head/tail
 * pairs per side, without its peek, zero-copy and relaxed-tail-sync modes.
 */
#ifndef ZT_USER_RING_H
#define ZT_USER_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ZT_RING_CACHE_LINE 64 /* Cortex-A72 (and most aarch64 cores): 64-byte lines */
#define ZT_RING_SP_ENQ     1u /* one producer thread at a time */
#define ZT_RING_SC_DEQ     2u /* one consumer thread at a time */
#define ZT_RING_FLAGS      (ZT_RING_SP_ENQ | ZT_RING_SC_DEQ)
#define ZT_RING_SIZE_MAX   (1u << 24) /* slots, at most */
#define ZT_RING_ESIZE_MAX  64u        /* bytes per record, at most (a multiple of 8) */

/* A word of an object: may alias anything, since callers pass arrays of pointers or records. */
typedef uint64_t __attribute__((may_alias)) zt_ring__word;

struct zt_ring_side {
    uint32_t head;  /* next object this side reserves (written by this side only) */
    uint32_t tail;  /* objects this side has finished with (store-release) */
    uint32_t cache; /* SP/SC: the other side's tail when last read (this side's only) */
};

struct zt_ring {
    /* read-only after zt_ring_init */
    uint32_t size;  /* slots, a power of two */
    uint32_t mask;  /* size - 1 */
    uint32_t esize; /* bytes per object, a multiple of 8 */
    uint32_t flags; /* ZT_RING_SP_ENQ | ZT_RING_SC_DEQ */
    uint32_t magic; /* ZT_RING_MAGIC once initialised */
    struct zt_ring_side prod __attribute__((aligned(ZT_RING_CACHE_LINE)));
    struct zt_ring_side cons __attribute__((aligned(ZT_RING_CACHE_LINE)));
    zt_ring__word slots[] __attribute__((aligned(ZT_RING_CACHE_LINE)));
};

#define ZT_RING_MAGIC 0x52696e67u /* "Ring" */

/* ---- setting up (ring.c) ---- */

/* Bytes a ring of `size` slots of `esize` bytes takes; 0 if size or esize is unusable (size
 * not a power of two or above ZT_RING_SIZE_MAX; esize 0, not a multiple of 8 or above
 * ZT_RING_ESIZE_MAX). */
size_t zt_ring_bytes(uint32_t size, uint32_t esize);
/* Lay a ring over mem (zt_ring_bytes(size, esize) bytes, ZT_RING_CACHE_LINE-aligned), empty.
 * 0, or -EINVAL for a bad size, esize, flags or alignment (nothing written then). */
int zt_ring_init(void *mem, uint32_t size, uint32_t esize, unsigned flags);
/* A ring in memory of its own (aligned_alloc): the ring, or NULL (bad arguments, no memory). */
struct zt_ring *zt_ring_create(uint32_t size, uint32_t esize, unsigned flags);
void zt_ring_free(struct zt_ring *r);

/* Every operation is forced inline, so each call site compiles to the code of its own side
 * and kind with the constants folded (a call to one shared body costs a third more). */
#define ZT_RING_INLINE static inline __attribute__((always_inline))

/* ---- snapshots ---- */

ZT_RING_INLINE uint32_t zt_ring_count(const struct zt_ring *r)
{
    uint32_t ct = __atomic_load_n(&r->cons.tail, __ATOMIC_ACQUIRE);
    uint32_t pt = __atomic_load_n(&r->prod.tail, __ATOMIC_ACQUIRE);
    uint32_t n = pt - ct;
    return n > r->size ? r->size : n; /* read in two steps: never more than the ring holds */
}

ZT_RING_INLINE uint32_t zt_ring_free_count(const struct zt_ring *r)
{
    return r->size - zt_ring_count(r);
}

/* ---- the machinery (not for callers) ---- */

/* What a waiting MP/MC thread does between two looks at the tail (ZT_RING_PAUSE may name
 * something else, e.g. sched_yield for threads that share CPUs, as the host tests' do). */
ZT_RING_INLINE void zt_ring__pause(void)
{
#if defined(ZT_RING_PAUSE)
    ZT_RING_PAUSE();
#elif defined(__aarch64__)
    __asm__ volatile("yield" ::: "memory");
#elif defined(__x86_64__)
    __builtin_ia32_pause();
#endif
}

/* Copy n words into the ring's word array of `words` words (a power of two) from word index
 * `at` on, wrapping at the end; and the reverse.  Pairs of words per step: the objects of a
 * bulk move are contiguous in the caller's array and in at most two runs of the ring. */
ZT_RING_INLINE void zt_ring__copy_words(zt_ring__word *dst, const zt_ring__word *src, uint32_t n)
{
    uint32_t i = 0;
    for (; i + 2 <= n; i += 2) {
        uint64_t a = src[i], b = src[i + 1];
        dst[i] = a;
        dst[i + 1] = b;
    }
    if (i < n) {
        dst[i] = src[i];
    }
}

ZT_RING_INLINE void zt_ring__put(struct zt_ring *r, uint32_t words_per, uint32_t head,
                                 const void *objs, uint32_t n)
{
    uint32_t words = r->size * words_per, at = (head & r->mask) * words_per;
    if (__builtin_constant_p(n) && n == 1) { /* single: one object never wraps */
        zt_ring__copy_words(r->slots + at, (const zt_ring__word *)objs, words_per);
        return;
    }
    uint32_t total = n * words_per, first = words - at < total ? words - at : total;
    zt_ring__copy_words(r->slots + at, (const zt_ring__word *)objs, first);
    if (first < total) {
        zt_ring__copy_words(r->slots, (const zt_ring__word *)objs + first, total - first);
    }
}

ZT_RING_INLINE void zt_ring__get(const struct zt_ring *r, uint32_t words_per, uint32_t head,
                                 void *objs, uint32_t n)
{
    uint32_t words = r->size * words_per, at = (head & r->mask) * words_per;
    if (__builtin_constant_p(n) && n == 1) {
        zt_ring__copy_words((zt_ring__word *)objs, r->slots + at, words_per);
        return;
    }
    uint32_t total = n * words_per, first = words - at < total ? words - at : total;
    zt_ring__copy_words((zt_ring__word *)objs, r->slots + at, first);
    if (first < total) {
        zt_ring__copy_words((zt_ring__word *)objs + first, r->slots, total - first);
    }
}

/* Reserve up to n slots for a producer: how many (n or 0 when `all`, else 0..n), and the
 * first reserved index in *head. */
ZT_RING_INLINE uint32_t zt_ring__reserve_prod(struct zt_ring *r, bool single, bool all, uint32_t n,
                                              uint32_t *head)
{
    if (single) {
        uint32_t h = r->prod.head, room = r->size + r->prod.cache - h;
        if (room < n) {
            r->prod.cache = __atomic_load_n(&r->cons.tail, __ATOMIC_ACQUIRE);
            room = r->size + r->prod.cache - h;
            if (room < n) {
                n = all ? 0 : room;
            }
        }
        r->prod.head = h + n;
        *head = h;
        return n;
    }
    uint32_t h = __atomic_load_n(&r->prod.head, __ATOMIC_ACQUIRE), want = n;
    do {
        uint32_t room = r->size + __atomic_load_n(&r->cons.tail, __ATOMIC_ACQUIRE) - h;
        n = want;
        if (room < n) {
            n = all ? 0 : room;
        }
        if (n == 0) {
            return 0;
        }
    } while (!__atomic_compare_exchange_n(&r->prod.head, &h, h + n, true, __ATOMIC_ACQUIRE,
                                          __ATOMIC_ACQUIRE));
    *head = h;
    return n;
}

ZT_RING_INLINE uint32_t zt_ring__reserve_cons(struct zt_ring *r, bool single, bool all, uint32_t n,
                                              uint32_t *head)
{
    if (single) {
        uint32_t h = r->cons.head, ready = r->cons.cache - h;
        if (ready < n) {
            r->cons.cache = __atomic_load_n(&r->prod.tail, __ATOMIC_ACQUIRE);
            ready = r->cons.cache - h;
            if (ready < n) {
                n = all ? 0 : ready;
            }
        }
        r->cons.head = h + n;
        *head = h;
        return n;
    }
    uint32_t h = __atomic_load_n(&r->cons.head, __ATOMIC_ACQUIRE), want = n;
    do {
        uint32_t ready = __atomic_load_n(&r->prod.tail, __ATOMIC_ACQUIRE) - h;
        n = want;
        if (ready < n) {
            n = all ? 0 : ready;
        }
        if (n == 0) {
            return 0;
        }
    } while (!__atomic_compare_exchange_n(&r->cons.head, &h, h + n, true, __ATOMIC_ACQUIRE,
                                          __ATOMIC_ACQUIRE));
    *head = h;
    return n;
}

/* Publish this side's objects [head, head + n): a single side owns its tail; a multi side
 * first waits for the threads that reserved before it. */
ZT_RING_INLINE void zt_ring__publish(struct zt_ring_side *s, bool single, uint32_t head, uint32_t n)
{
    if (!single) {
        while (__atomic_load_n(&s->tail, __ATOMIC_ACQUIRE) != head) {
            zt_ring__pause();
        }
    }
    __atomic_store_n(&s->tail, head + n, __ATOMIC_RELEASE);
}

ZT_RING_INLINE uint32_t zt_ring__enqueue(struct zt_ring *r, const void *objs, uint32_t words_per,
                                         uint32_t n, bool single, bool all)
{
    uint32_t head;
    n = zt_ring__reserve_prod(r, single, all, n, &head);
    if (n) {
        zt_ring__put(r, words_per, head, objs, n);
        zt_ring__publish(&r->prod, single, head, n);
    }
    return n;
}

ZT_RING_INLINE uint32_t zt_ring__dequeue(struct zt_ring *r, void *objs, uint32_t words_per,
                                         uint32_t n, bool single, bool all)
{
    uint32_t head;
    n = zt_ring__reserve_cons(r, single, all, n, &head);
    if (n) {
        zt_ring__get(r, words_per, head, objs, n);
        zt_ring__publish(&r->cons, single, head, n);
    }
    return n;
}

/* ---- rings of pointers (esize 8) ---- */

#define ZT_RING__PTR_OPS(side, single)                                                             \
    ZT_RING_INLINE uint32_t zt_ring_##side##_enqueue_bulk(struct zt_ring *r, void *const *objs,    \
                                                          uint32_t n)                              \
    {                                                                                              \
        return zt_ring__enqueue(r, objs, 1, n, single, true);                                      \
    }                                                                                              \
    ZT_RING_INLINE uint32_t zt_ring_##side##_enqueue_burst(struct zt_ring *r, void *const *objs,   \
                                                           uint32_t n)                             \
    {                                                                                              \
        return zt_ring__enqueue(r, objs, 1, n, single, false);                                     \
    }                                                                                              \
    ZT_RING_INLINE bool zt_ring_##side##_enqueue(struct zt_ring *r, void *obj)                     \
    {                                                                                              \
        return zt_ring__enqueue(r, &obj, 1, 1, single, true) != 0;                                 \
    }

#define ZT_RING__PTR_DEQ(side, single)                                                             \
    ZT_RING_INLINE uint32_t zt_ring_##side##_dequeue_bulk(struct zt_ring *r, void **objs,          \
                                                          uint32_t n)                              \
    {                                                                                              \
        return zt_ring__dequeue(r, objs, 1, n, single, true);                                      \
    }                                                                                              \
    ZT_RING_INLINE uint32_t zt_ring_##side##_dequeue_burst(struct zt_ring *r, void **objs,         \
                                                           uint32_t n)                             \
    {                                                                                              \
        return zt_ring__dequeue(r, objs, 1, n, single, false);                                     \
    }                                                                                              \
    ZT_RING_INLINE bool zt_ring_##side##_dequeue(struct zt_ring *r, void **obj)                    \
    {                                                                                              \
        return zt_ring__dequeue(r, obj, 1, 1, single, true) != 0;                                  \
    }

/* zt_ring_sp_enqueue_bulk / _burst / zt_ring_sp_enqueue, and the mp_ forms */
ZT_RING__PTR_OPS(sp, true)
ZT_RING__PTR_OPS(mp, false)
/* zt_ring_sc_dequeue_bulk / _burst / zt_ring_sc_dequeue, and the mc_ forms */
ZT_RING__PTR_DEQ(sc, true)
ZT_RING__PTR_DEQ(mc, false)

/* The side the ring was made with. */
ZT_RING_INLINE uint32_t zt_ring_enqueue_bulk(struct zt_ring *r, void *const *objs, uint32_t n)
{
    return zt_ring__enqueue(r, objs, 1, n, r->flags & ZT_RING_SP_ENQ, true);
}

ZT_RING_INLINE uint32_t zt_ring_enqueue_burst(struct zt_ring *r, void *const *objs, uint32_t n)
{
    return zt_ring__enqueue(r, objs, 1, n, r->flags & ZT_RING_SP_ENQ, false);
}

ZT_RING_INLINE bool zt_ring_enqueue(struct zt_ring *r, void *obj)
{
    return zt_ring__enqueue(r, &obj, 1, 1, r->flags & ZT_RING_SP_ENQ, true) != 0;
}

ZT_RING_INLINE uint32_t zt_ring_dequeue_bulk(struct zt_ring *r, void **objs, uint32_t n)
{
    return zt_ring__dequeue(r, objs, 1, n, r->flags & ZT_RING_SC_DEQ, true);
}

ZT_RING_INLINE uint32_t zt_ring_dequeue_burst(struct zt_ring *r, void **objs, uint32_t n)
{
    return zt_ring__dequeue(r, objs, 1, n, r->flags & ZT_RING_SC_DEQ, false);
}

ZT_RING_INLINE bool zt_ring_dequeue(struct zt_ring *r, void **obj)
{
    return zt_ring__dequeue(r, obj, 1, 1, r->flags & ZT_RING_SC_DEQ, true) != 0;
}

/* ---- rings of records (esize bytes each, the ring's own; objs is an array of them, 8-byte
 * aligned); the side the ring was made with ---- */

ZT_RING_INLINE uint32_t zt_ring_enqueue_bulk_elem(struct zt_ring *r, const void *objs, uint32_t n)
{
    return zt_ring__enqueue(r, objs, r->esize / 8, n, r->flags & ZT_RING_SP_ENQ, true);
}

ZT_RING_INLINE uint32_t zt_ring_enqueue_burst_elem(struct zt_ring *r, const void *objs, uint32_t n)
{
    return zt_ring__enqueue(r, objs, r->esize / 8, n, r->flags & ZT_RING_SP_ENQ, false);
}

ZT_RING_INLINE uint32_t zt_ring_dequeue_bulk_elem(struct zt_ring *r, void *objs, uint32_t n)
{
    return zt_ring__dequeue(r, objs, r->esize / 8, n, r->flags & ZT_RING_SC_DEQ, true);
}

ZT_RING_INLINE uint32_t zt_ring_dequeue_burst_elem(struct zt_ring *r, void *objs, uint32_t n)
{
    return zt_ring__dequeue(r, objs, r->esize / 8, n, r->flags & ZT_RING_SC_DEQ, false);
}

#endif
