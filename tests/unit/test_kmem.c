/* SPDX-License-Identifier: MIT */
/*
 * test_kmem.c — host unit tests of kernel/mm/kmem.c: kernel objects in power-of-two classes
 * carved from pages of the page allocator.
 *
 * The page allocator gets a heap buffer once; every test records page_free_count() first and
 * checks in its teardown that freeing everything brought it back exactly (kmem returns a
 * slab's page when its last object is freed).  IDs: KM-0n.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/cpu.h"
#include "kernel/kmem.h"
#include "kernel/page.h"
#include "kernel/sched.h"
#include "fake.h"
#include "fixture.h"
#include "unit.h"

/* cmocka passes every test a state pointer; these tests need none. */
#define POOL_PAGES 256
#define MAX_LIVE   4096

static void *pool;
static size_t free0;

static int group_setup(void **state)
{
    pool = fixture_pages_and_cpu0(POOL_PAGES);
    return pool ? 0 : -1;
}

static int test_setup(void **state)
{
    free0 = page_free_count();
    return 0;
}

static int test_teardown(void **state)
{
    if (page_free_count() != free0) {
        fprintf(stderr, "leak: %zu free pages, %zu at the start\n", page_free_count(), free0);
        return -1;
    }
    return 0;
}

/* The class an object of `size` bytes gets: the next power of two, at least 32. */
static size_t class_of(size_t size)
{
    size_t c = 32;
    while (c < size) {
        c *= 2;
    }
    return c;
}

static bool all_zero(const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        if (b[i]) {
            return false;
        }
    }
    return true;
}

static bool all_byte(const void *p, size_t n, unsigned char v)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        if (b[i] != v) {
            return false;
        }
    }
    return true;
}

struct live {
    unsigned char *p;
    size_t size;
    unsigned char tag;
};

static int by_address(const void *a, const void *b)
{
    const struct live *x = a, *y = b;
    return x->p < y->p ? -1 : x->p > y->p;
}

/* No two live objects overlap (each occupies its whole class). */
static void expect_disjoint(struct live *objs, size_t n)
{
    qsort(objs, n, sizeof(*objs), by_address);
    for (size_t i = 1; i < n; i++) {
        if (objs[i - 1].p + class_of(objs[i - 1].size) > objs[i].p) {
            fail_msg("objects %p (size %zu) and %p overlap", (void *)objs[i - 1].p,
                     objs[i - 1].size, (void *)objs[i].p);
        }
    }
}

static struct live objs[MAX_LIVE];

/* KM-01: objects of every class are distinct, aligned to their class, zeroed, writable */
static void km01_every_class(TEST_STATE)
{
    static const size_t sizes[] = {1,   8,   31,  32,  33,   64,   65,   100,  128,
                                   129, 256, 300, 512, 1000, 1024, 1025, 2047, 2048};
    size_t n = 0;
    for (unsigned s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        for (unsigned k = 0; k < 20; k++) {
            unsigned char *p = kmem_alloc(sizes[s]);
            assert_non_null(p);
            size_t c = class_of(sizes[s]);
            if ((uintptr_t)p % c != 0) {
                fail_msg("kmem_alloc(%zu) = %p, not %zu-aligned", sizes[s], (void *)p, c);
            }
            if (!all_zero(p, c)) {
                fail_msg("kmem_alloc(%zu) = %p is not zeroed", sizes[s], (void *)p);
            }
            memset(p, 0xa0 + (int)s, c);
            objs[n++] = (struct live){p, sizes[s], (unsigned char)(0xa0 + s)};
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (!all_byte(objs[i].p, class_of(objs[i].size), objs[i].tag)) {
            fail_msg("object %p (size %zu) was overwritten", (void *)objs[i].p, objs[i].size);
        }
    }
    expect_disjoint(objs, n);
    for (size_t i = 0; i < n; i++) {
        kmem_free(objs[i].p, objs[i].size);
    }
}

/* KM-02: a reused object comes back zeroed */
static void km02_reuse_is_zeroed(TEST_STATE)
{
    for (size_t c = 32; c <= 2048; c *= 2) {
        void *keep = kmem_alloc(c); /* keeps the slab page alive so the object is reused */
        unsigned char *p = kmem_alloc(c);
        assert_non_null(keep);
        assert_non_null(p);
        memset(p, 0xff, c);
        kmem_free(p, c);
        unsigned char *q = kmem_alloc(c);
        assert_non_null(q);
        if (!all_zero(q, c)) {
            fail_msg("object of class %zu reused without zeroing", c);
        }
        kmem_free(q, c);
        kmem_free(keep, c);
    }
}

/* KM-03: freeing every object of a class returns every page, in any order */
static void km03_free_all_returns_pages(TEST_STATE)
{
    for (size_t c = 32; c <= 2048; c *= 2) {
        size_t n = 3 * (PAGE_SIZE / c) + 1; /* several slab pages of every class */
        for (size_t i = 0; i < n; i++) {
            objs[i].p = kmem_alloc(c);
            assert_non_null(objs[i].p);
        }
        assert_true(page_free_count() < free0);
        /* free the odd ones, then the even ones backwards */
        for (size_t i = 1; i < n; i += 2) {
            kmem_free(objs[i].p, c);
        }
        for (size_t i = n; i-- > 0;) {
            if (i % 2 == 0) {
                kmem_free(objs[i].p, c);
            }
        }
        if (page_free_count() != free0) {
            fail_msg("class %zu: %zu free pages after freeing all, %zu before", c,
                     page_free_count(), free0);
        }
    }
}

/* KM-04: objects over half a page are whole pages: page-aligned, zeroed, one page each */
static void km04_large_objects_are_pages(TEST_STATE)
{
    static const size_t sizes[] = {2049, 3000, 4095, 4096};
    for (unsigned i = 0; i < 4; i++) {
        size_t before = page_free_count();
        unsigned char *p = kmem_alloc(sizes[i]);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % PAGE_SIZE, 0);
        assert_int_equal(page_free_count(), before - 1);
        assert_true(all_zero(p, PAGE_SIZE));
        memset(p, 0x5a, PAGE_SIZE);
        kmem_free(p, sizes[i]);
        assert_int_equal(page_free_count(), before);
    }
}

/* KM-05: more than a page is refused, taking nothing; NULL frees are ignored */
static void km05_too_big_and_null(TEST_STATE)
{
    assert_null(kmem_alloc(PAGE_SIZE + 1));
    assert_null(kmem_alloc(SIZE_MAX));
    assert_int_equal(page_free_count(), free0);
    kmem_free(NULL, 64);
    kmem_free(NULL, PAGE_SIZE);
    assert_int_equal(page_free_count(), free0);
}

static uint64_t rng_state = 0xda942042e4dd58b5ull;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* KM-06: a fixed-seed interleaving of allocations and frees of mixed sizes never hands out
 * overlapping memory or loses an object's contents, and ends with every page back */
static void km06_interleaved(TEST_STATE)
{
    size_t n = 0;
    for (unsigned step = 0; step < 40000; step++) {
        bool do_alloc = n == 0 || (n < 400 && rng() % 100 < 55);
        if (do_alloc) {
            size_t size = 1 + (size_t)(rng() % (rng() % 8 == 0 ? PAGE_SIZE : 300));
            unsigned char *p = kmem_alloc(size);
            if (!p) {
                fail_msg("step %u: kmem_alloc(%zu) failed with %zu objects live", step, size, n);
            }
            size_t c = size > PAGE_SIZE / 2 ? PAGE_SIZE : class_of(size);
            if (!all_zero(p, c) || (uintptr_t)p % c != 0) {
                fail_msg("step %u: object %p of %zu bytes not zeroed or aligned", step, (void *)p,
                         size);
            }
            unsigned char tag = (unsigned char)(1 + step % 255);
            memset(p, tag, size);
            objs[n++] = (struct live){p, size, tag};
        } else {
            size_t i = (size_t)(rng() % n);
            if (!all_byte(objs[i].p, objs[i].size, objs[i].tag)) {
                fail_msg("step %u: object %p (size %zu) was overwritten", step, (void *)objs[i].p,
                         objs[i].size);
            }
            kmem_free(objs[i].p, objs[i].size);
            objs[i] = objs[--n];
        }
        if (step % 5000 == 0 && n > 1) {
            static struct live copy[MAX_LIVE];
            memcpy(copy, objs, n * sizeof(*objs));
            for (size_t i = 0; i < n; i++) {
                if (copy[i].size > PAGE_SIZE / 2) {
                    copy[i].size = PAGE_SIZE; /* so class_of gives the whole page */
                }
            }
            expect_disjoint(copy, n);
        }
    }
    while (n > 0) {
        n--;
        assert_true(all_byte(objs[n].p, objs[n].size, objs[n].tag));
        kmem_free(objs[n].p, objs[n].size);
    }
}

/* KM-07: when the page allocator is empty kmem_alloc returns NULL, and works again after */
static void km07_out_of_pages(TEST_STATE)
{
    static paddr_t pages[POOL_PAGES + 1];
    size_t n = 0;
    paddr_t pa;
    while ((pa = page_alloc()) != 0) {
        assert_true(n < POOL_PAGES);
        pages[n++] = pa;
    }
    assert_null(kmem_alloc(64));
    assert_null(kmem_alloc(3000));
    page_free(pages[--n]);
    void *p = kmem_alloc(64);
    assert_non_null(p);
    kmem_free(p, 64);
    while (n > 0) {
        page_free(pages[--n]);
    }
}

#define T_(f) cmocka_unit_test_setup_teardown(f, test_setup, test_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T_(km01_every_class),
        T_(km02_reuse_is_zeroed),
        T_(km03_free_all_returns_pages),
        T_(km04_large_objects_are_pages),
        T_(km05_too_big_and_null),
        T_(km06_interleaved),
        T_(km07_out_of_pages),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
