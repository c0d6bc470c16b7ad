/* SPDX-License-Identifier: MIT */
/*
 * test_vm.c — host unit tests of kernel/mm/vm.c: user address spaces over the fake arch's flat
 * page table (fake.ptes, fake.mapped_pages).
 *
 * Every test gets a fresh address space with its break at BRK0 and, in its teardown,
 * destroys it and checks that page_free_count() is back where the test started — so every
 * test is also a leak test.  IDs: VM-0n create and map, VM-1n mmap, VM-2n munmap, VM-3n brk,
 * VM-4n user copies, VM-5n teardown, VM-6n fork's copy; NEW-01/02 PROT_NONE reservations;
 * HRD-25 (issue 20, item 6): how many page-table entries a change writes with interrupts masked.
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
#include "kernel/page.h"
#include "kernel/sched.h"
#include "kernel/vm.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_syscall.h"
#include "fake.h"
#include "fixture.h"
#include "unit.h"

/* cmocka passes every test a state pointer; these tests need none. */
#define P          ((uint64_t)PAGE_SIZE)
#define POOL_PAGES 512
#define BRK0       0x500000ull   /* end of a pretend program image */
#define X          0x10000000ull /* a free area for regions */
#define T          USER_MMAP_TOP /* mmap grows down from here */
#define RW         (PROT_READ | PROT_WRITE)
#define ANON       (MAP_PRIVATE | MAP_ANONYMOUS)

static void *pool;
static struct vm vm;
static size_t free0; /* free pages when the test started */

static int group_setup(void **state)
{
    pool = fixture_pages_and_cpu0(POOL_PAGES);
    return pool ? 0 : -1;
}

static int test_setup(void **state)
{
    fake_reset();
    memset(&vm, 0, sizeof(vm));
    assert_int_equal(vm_init(&vm), 0);
    vm.brk_start = vm.brk = BRK0;
    free0 = page_free_count();
    return 0;
}

static int test_teardown(void **state)
{
    vm_destroy(&vm);
    if (page_free_count() != free0 || fake.mapped_pages != 0) {
        fprintf(stderr, "leak: %zu free pages, %zu at the start; %zu pages still mapped\n",
                page_free_count(), free0, fake.mapped_pages);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ helpers */

struct want_vma {
    uint64_t start, end;
    unsigned prot;
    enum vma_kind kind;
};

/* The region list is exactly `n` regions, in order. */
static void expect_vmas(unsigned n, const struct want_vma *want)
{
    unsigned i = 0;
    list_for_each(pos, &vm.vmas) {
        const struct vma *v = container_of(pos, struct vma, link);
        if (i >= n) {
            fail_msg("extra region %u: [%#llx, %#llx)", i, (unsigned long long)v->start,
                     (unsigned long long)v->end);
        }
        if (v->start != want[i].start || v->end != want[i].end || v->prot != want[i].prot ||
            v->kind != want[i].kind) {
            fail_msg("region %u is [%#llx, %#llx) prot %u kind %d, want [%#llx, %#llx) prot %u "
                     "kind %d",
                     i, (unsigned long long)v->start, (unsigned long long)v->end, v->prot, v->kind,
                     (unsigned long long)want[i].start, (unsigned long long)want[i].end,
                     want[i].prot, want[i].kind);
        }
        i++;
    }
    if (i != n) {
        fail_msg("%u regions, want %u", i, n);
    }
}

#define EXPECT_VMAS(...)                                                                           \
    do {                                                                                           \
        const struct want_vma w_[] = {__VA_ARGS__};                                                \
        expect_vmas(sizeof(w_) / sizeof(w_[0]), w_);                                               \
    } while (0)

static paddr_t pa_of(uint64_t va, unsigned *prot)
{
    return arch_as_lookup(&vm.as, va, prot);
}

/* Every page of [start, end) is mapped with `prot`. */
static void expect_mapped(uint64_t start, uint64_t end, unsigned prot)
{
    for (uint64_t va = start; va < end; va += P) {
        unsigned got = 99;
        if (!pa_of(va, &got) || got != prot) {
            fail_msg("page %#llx: mapped %d prot %u, want mapped prot %u", (unsigned long long)va,
                     pa_of(va, NULL) != 0, got, prot);
        }
    }
}

static void expect_unmapped(uint64_t start, uint64_t end)
{
    for (uint64_t va = start; va < end; va += P) {
        if (pa_of(va, NULL)) {
            fail_msg("page %#llx is mapped, want unmapped", (unsigned long long)va);
        }
    }
}

/* Write a distinct byte pattern into each page of [start, end) (loader access). */
static void stamp(uint64_t start, uint64_t end)
{
    for (uint64_t va = start; va < end; va += P) {
        unsigned char b[16];
        memset(b, (int)(va / P) & 0xff, sizeof(b));
        assert_int_equal(vm_write_initial(&vm, va, b, sizeof(b)), 0);
    }
}

static void expect_stamp(uint64_t start, uint64_t end)
{
    for (uint64_t va = start; va < end; va += P) {
        unsigned char *k = (unsigned char *)(uintptr_t)pa_of(va, NULL);
        assert_non_null(k);
        for (unsigned i = 0; i < 16; i++) {
            if (k[i] != ((va / P) & 0xff)) {
                fail_msg("page %#llx byte %u is %#x, want %#x", (unsigned long long)va, i, k[i],
                         (unsigned)((va / P) & 0xff));
            }
        }
    }
}

static bool page_is_zero(uint64_t va)
{
    const unsigned char *k = (const unsigned char *)(uintptr_t)pa_of(va, NULL);
    assert_non_null(k);
    for (unsigned i = 0; i < PAGE_SIZE; i++) {
        if (k[i]) {
            return false;
        }
    }
    return true;
}

/* ------------------------------------------------------------------ create and map */

/* VM-01: a new address space has no regions, no pages and its own ASID */
static void vm01_init(TEST_STATE)
{
    struct vm other;
    memset(&other, 0, sizeof(other));
    assert_int_equal(vm_init(&other), 0);
    assert_true(list_empty(&vm.vmas));
    long a = vm_mmap(&vm, 0, P, RW, ANON, 3, 0); /* MAP_ANONYMOUS ignores fd, as on Linux */
    assert_true(a > 0);
    assert_int_equal(vm_munmap(&vm, (uint64_t)a, P), 0);
    assert_int_equal(vm.pages, 0);
    assert_true(vm.as.root != 0);
    assert_true(other.as.asid != vm.as.asid);
    assert_int_equal(fake.mapped_pages, 0);
    vm_destroy(&other);
    assert_int_equal(other.as.root, 0);
}

/* VM-02: vm_map_region maps exactly the rounded-up pages, zeroed, with the region's prot */
static void vm02_map_region(TEST_STATE)
{
    assert_int_equal(vm_map_region(&vm, X, 3 * P, RW, VMA_IMAGE), 0);
    assert_int_equal(vm_map_region(&vm, X + 8 * P, 1, PROT_READ, VMA_STACK), 0);
    EXPECT_VMAS({X, X + 3 * P, RW, VMA_IMAGE}, {X + 8 * P, X + 9 * P, PROT_READ, VMA_STACK});
    expect_mapped(X, X + 3 * P, RW);
    expect_mapped(X + 8 * P, X + 9 * P, PROT_READ);
    expect_unmapped(X - P, X);
    expect_unmapped(X + 3 * P, X + 8 * P);
    expect_unmapped(X + 9 * P, X + 10 * P);
    assert_int_equal(vm.pages, 4);
    assert_int_equal(fake.mapped_pages, 4);
    assert_true(page_is_zero(X) && page_is_zero(X + 2 * P) && page_is_zero(X + 8 * P));
    assert_true(page_free_count() <= free0 - 4);
}

/* VM-03: bad ranges are -EINVAL and overlaps -EEXIST, leaving everything as it was */
static void vm03_map_region_errors(TEST_STATE)
{
    assert_int_equal(vm_map_region(&vm, X, 2 * P, RW, VMA_IMAGE), 0);
    size_t free1 = page_free_count();
    assert_int_equal(vm_map_region(&vm, X + 4 * P, 0, RW, VMA_IMAGE), -EINVAL);
    assert_int_equal(vm_map_region(&vm, X + 4 * P + 8, P, RW, VMA_IMAGE), -EINVAL);
    assert_int_equal(vm_map_region(&vm, 0, P, RW, VMA_IMAGE), -EINVAL); /* page 0 */
    assert_int_equal(vm_map_region(&vm, USER_VA_TOP - P, 2 * P, RW, VMA_IMAGE), -EINVAL);
    assert_int_equal(vm_map_region(&vm, USER_VA_TOP, P, RW, VMA_IMAGE), -EINVAL);
    assert_int_equal(vm_map_region(&vm, 0xffff000000000000ull, P, RW, VMA_IMAGE), -EINVAL);
    assert_int_equal(vm_map_region(&vm, X + 4 * P, UINT64_MAX - P, RW, VMA_IMAGE), -EINVAL);
    assert_int_equal(vm_map_region(&vm, X, P, RW, VMA_IMAGE), -EEXIST);
    assert_int_equal(vm_map_region(&vm, X - P, 2 * P, RW, VMA_IMAGE), -EEXIST);
    assert_int_equal(vm_map_region(&vm, X + P, 4 * P, RW, VMA_IMAGE), -EEXIST);
    assert_int_equal(vm_map_region(&vm, X - P, 8 * P, RW, VMA_IMAGE), -EEXIST);
    EXPECT_VMAS({X, X + 2 * P, RW, VMA_IMAGE});
    assert_int_equal(fake.mapped_pages, 2);
    assert_int_equal(page_free_count(), free1);
    /* right next to it on both sides is fine */
    assert_int_equal(vm_map_region(&vm, X - P, P, PROT_READ, VMA_IMAGE), 0);
    assert_int_equal(vm_map_region(&vm, X + 2 * P, P, PROT_READ, VMA_IMAGE), 0);
    EXPECT_VMAS({X - P, X, PROT_READ, VMA_IMAGE}, {X, X + 2 * P, RW, VMA_IMAGE},
                {X + 2 * P, X + 3 * P, PROT_READ, VMA_IMAGE});
}

/* VM-04: a mapping that fails part-way leaves nothing mapped and no page taken */
static void vm04_map_failure_rolls_back(TEST_STATE)
{
    fake.map_fail_after = 3; /* the third page's mapping fails */
    assert_int_equal(vm_map_region(&vm, X, 5 * P, RW, VMA_IMAGE), -ENOMEM);
    assert_true(list_empty(&vm.vmas));
    assert_int_equal(vm.pages, 0);
    assert_int_equal(fake.mapped_pages, 0);
    assert_int_equal(page_free_count(), free0);
    expect_unmapped(X, X + 5 * P);
}

/* VM-05: running out of pages is -ENOMEM and gives back what was taken */
static void vm05_out_of_pages(TEST_STATE)
{
    uint64_t n = page_free_count() + 1;
    assert_int_equal(vm_map_region(&vm, X, n * P, RW, VMA_IMAGE), -ENOMEM);
    assert_true(list_empty(&vm.vmas));
    assert_int_equal(fake.mapped_pages, 0);
    assert_int_equal(page_free_count(), free0);
    assert_int_equal(vm_map_region(&vm, X, 2 * P, RW, VMA_IMAGE), 0); /* still usable */
}

/* ------------------------------------------------------------------ mmap */

/* VM-10: mmap places regions top-down below USER_MMAP_TOP, into the highest gap that fits;
 * adjacent ones with the same protection are one region */
static void vm10_mmap_top_down(TEST_STATE)
{
    assert_int_equal(vm_mmap(&vm, 0, 3 * P, RW, ANON, -1, 0), (long)(T - 3 * P));
    assert_int_equal(vm_mmap(&vm, 0, 2 * P - 100, RW, ANON, -1, 0), (long)(T - 5 * P));
    EXPECT_VMAS({T - 5 * P, T, RW, VMA_MMAP});
    assert_int_equal(vm_munmap(&vm, T - 3 * P, 3 * P), 0);
    assert_int_equal(vm_mmap(&vm, 0, 2 * P, PROT_READ, ANON, -1, 0), (long)(T - 2 * P));
    /* the one-page hole [T-3P, T-2P) is too small for two pages: below everything */
    assert_int_equal(vm_mmap(&vm, 0, 2 * P, PROT_READ, ANON, -1, 0), (long)(T - 7 * P));
    /* ...but takes one page */
    assert_int_equal(vm_mmap(&vm, 0, P, PROT_READ, ANON, -1, 0), (long)(T - 3 * P));
    EXPECT_VMAS({T - 7 * P, T - 5 * P, PROT_READ, VMA_MMAP}, {T - 5 * P, T - 3 * P, RW, VMA_MMAP},
                {T - 3 * P, T, PROT_READ, VMA_MMAP});
    assert_int_equal(vm.pages, 7);
    assert_int_equal(fake.mapped_pages, 7);
    assert_true(page_is_zero(T - 7 * P));
}

/* VM-11: regions above USER_MMAP_TOP (the stack) do not move mmap's placement */
static void vm11_mmap_ignores_stack(TEST_STATE)
{
    uint64_t stack = USER_STACK_TOP - USER_STACK_SIZE;
    assert_int_equal(vm_map_region(&vm, stack, USER_STACK_SIZE, RW, VMA_STACK), 0);
    assert_int_equal(vm_mmap(&vm, 0, P, RW, ANON, -1, 0), (long)(T - P));
    EXPECT_VMAS({T - P, T, RW, VMA_MMAP}, {stack, USER_STACK_TOP, RW, VMA_STACK});
}

/* VM-12: mmap never takes the heap's room [brk_start, brk_start + USER_BRK_MAX) */
static void vm12_mmap_keeps_heap_room(TEST_STATE)
{
    vm.brk_start = vm.brk = T - USER_BRK_MAX - 2 * P; /* room for exactly two pages above */
    assert_int_equal(vm_mmap(&vm, 0, 2 * P, RW, ANON, -1, 0), (long)(T - 2 * P));
    assert_int_equal(vm_mmap(&vm, 0, P, RW, ANON, -1, 0), -ENOMEM);
    EXPECT_VMAS({T - 2 * P, T, RW, VMA_MMAP});
}

/* VM-13: ...also when the program image lies below the heap */
static void vm13_mmap_keeps_heap_room_above_image(TEST_STATE)
{
    uint64_t image = T - USER_BRK_MAX - 3 * P;
    assert_int_equal(vm_map_region(&vm, image, P, PROT_READ | PROT_EXEC, VMA_IMAGE), 0);
    vm.brk_start = vm.brk = image + P; /* heap room ends at T - 2P */
    assert_int_equal(vm_mmap(&vm, 0, 2 * P, RW, ANON, -1, 0), (long)(T - 2 * P));
    long r = vm_mmap(&vm, 0, P, RW, ANON, -1, 0);
    if (r != -ENOMEM) {
        fail_msg("mmap placed a page at %#lx, inside the heap's room [%#llx, %#llx)", r,
                 (unsigned long long)vm.brk_start,
                 (unsigned long long)(vm.brk_start + USER_BRK_MAX));
    }
}

/* VM-14: MAP_FIXED replaces whatever was there: fresh zeroed pages, the rest untouched */
static void vm14_map_fixed_replaces(TEST_STATE)
{
    assert_int_equal(vm_mmap(&vm, X, 4 * P, RW, ANON | MAP_FIXED, -1, 0), (long)X);
    stamp(X, X + 4 * P);
    paddr_t first = pa_of(X, NULL), last = pa_of(X + 3 * P, NULL);
    size_t free1 = page_free_count();
    assert_int_equal(vm_mmap(&vm, X + P, 2 * P, PROT_READ, ANON | MAP_FIXED, -1, 0), (long)(X + P));
    EXPECT_VMAS({X, X + P, RW, VMA_MMAP}, {X + P, X + 3 * P, PROT_READ, VMA_MMAP},
                {X + 3 * P, X + 4 * P, RW, VMA_MMAP});
    expect_mapped(X, X + P, RW);
    expect_mapped(X + P, X + 3 * P, PROT_READ);
    expect_mapped(X + 3 * P, X + 4 * P, RW);
    assert_true(page_is_zero(X + P) && page_is_zero(X + 2 * P));
    expect_stamp(X, X + P);
    expect_stamp(X + 3 * P, X + 4 * P);
    assert_int_equal(pa_of(X, NULL), first);
    assert_int_equal(pa_of(X + 3 * P, NULL), last);
    assert_int_equal(fake.mapped_pages, 4);
    assert_int_equal(page_free_count(), free1);

    /* over a region of another kind, and spanning two regions */
    assert_int_equal(vm_map_region(&vm, X + 4 * P, P, PROT_READ, VMA_IMAGE), 0);
    assert_int_equal(vm_mmap(&vm, X + 3 * P, 2 * P, RW, ANON | MAP_FIXED, -1, 0),
                     (long)(X + 3 * P));
    EXPECT_VMAS({X, X + P, RW, VMA_MMAP}, {X + P, X + 3 * P, PROT_READ, VMA_MMAP},
                {X + 3 * P, X + 5 * P, RW, VMA_MMAP});
    assert_int_equal(fake.mapped_pages, 5);
}

/* VM-15: W+X, unknown prot bits, bad flags or lengths, file mappings: refused, nothing mapped;
 * an anonymous mapping ignores fd */
static void vm15_mmap_refusals(TEST_STATE)
{
    assert_int_equal(vm_mmap(&vm, 0, P, PROT_WRITE | PROT_EXEC, ANON, -1, 0), -EINVAL);
    assert_int_equal(vm_mmap(&vm, 0, P, RW | PROT_EXEC, ANON, -1, 0), -EINVAL);
    assert_int_equal(vm_mmap(&vm, X, P, RW | PROT_EXEC, ANON | MAP_FIXED, -1, 0), -EINVAL);
    assert_int_equal(vm_mmap(&vm, 0, P, 8, ANON, -1, 0), -EINVAL);
    assert_int_equal(vm_mmap(&vm, 0, P, PROT_READ | 0x100, ANON, -1, 0), -EINVAL);
    assert_int_equal(vm_mmap(&vm, 0, P, RW, MAP_ANONYMOUS, -1, 0), -EINVAL); /* no type */
    assert_int_equal(vm_mmap(&vm, 0, 0, RW, ANON, -1, 0), -EINVAL);
    assert_int_equal(vm_mmap(&vm, 0, USER_VA_TOP + 1, RW, ANON, -1, 0), -EINVAL);
    assert_int_equal(vm_mmap(&vm, 0, UINT64_MAX, RW, ANON, -1, 0), -EINVAL);
    assert_int_equal(vm_mmap(&vm, 0, P, RW, MAP_PRIVATE, 3, 0), -EBADF); /* a file */
    assert_int_equal(vm_mmap(&vm, X + 1, P, RW, ANON | MAP_FIXED, -1, 0), -EINVAL);
    assert_int_equal(vm_mmap(&vm, 0, P, RW, ANON | MAP_FIXED, -1, 0), -EINVAL); /* page 0 */
    assert_int_equal(vm_mmap(&vm, USER_VA_TOP - P, 2 * P, RW, ANON | MAP_FIXED, -1, 0), -EINVAL);
    assert_int_equal(vm_mmap(&vm, 0, USER_VA_TOP, RW, ANON, -1, 0), -ENOMEM); /* no room */
    assert_true(list_empty(&vm.vmas));
    assert_int_equal(fake.mapped_pages, 0);
    assert_int_equal(page_free_count(), free0);
    /* R+X and PROT_NONE are fine */
    assert_int_equal(vm_mmap(&vm, 0, P, PROT_READ | PROT_EXEC, ANON, -1, 0), (long)(T - P));
    assert_int_equal(vm_mmap(&vm, 0, P, PROT_NONE, MAP_SHARED | MAP_ANONYMOUS, -1, 0),
                     (long)(T - 2 * P));
    expect_mapped(T - P, T, PROT_READ | PROT_EXEC);
    expect_unmapped(T - 2 * P, T - P); /* PROT_NONE reserves: NEW-01 */
    EXPECT_VMAS({T - 2 * P, T - P, PROT_NONE, VMA_MMAP},
                {T - P, T, PROT_READ | PROT_EXEC, VMA_MMAP});
}

/* NEW-01: mmap with PROT_NONE reserves address space and takes no page (glibc reserves 64 MiB
 * for each thread's heap that way); mprotect populates exactly the pages it makes accessible,
 * zeroed, and only those; back to PROT_NONE keeps them; munmap gives every page back. */
static void new01_prot_none_reserves(TEST_STATE)
{
    const uint64_t n = 64;
    assert_int_equal(vm_mmap(&vm, X, n * P, PROT_NONE, ANON | MAP_FIXED, -1, 0), (long)X);
    assert_true(free0 - page_free_count() <= 1); /* the region's record (a kmem slab) only */
    assert_int_equal(vm.pages, 0);
    assert_int_equal(fake.mapped_pages, 0);
    expect_unmapped(X, X + n * P);
    size_t before = page_free_count();
    assert_int_equal(vm_mprotect(&vm, X + 8 * P, 3 * P, RW), 0);
    assert_int_equal(before - page_free_count(), 3);
    assert_int_equal(vm.pages, 3);
    expect_mapped(X + 8 * P, X + 11 * P, RW);
    assert_true(page_is_zero(X + 8 * P) && page_is_zero(X + 10 * P));
    expect_unmapped(X, X + 8 * P);
    expect_unmapped(X + 11 * P, X + n * P);
    EXPECT_VMAS({X, X + 8 * P, PROT_NONE, VMA_MMAP}, {X + 8 * P, X + 11 * P, RW, VMA_MMAP},
                {X + 11 * P, X + n * P, PROT_NONE, VMA_MMAP});
    stamp(X + 8 * P, X + 11 * P);
    /* Back to PROT_NONE: the pages stay (their contents too), inaccessible. */
    assert_int_equal(vm_mprotect(&vm, X + 8 * P, 3 * P, PROT_NONE), 0);
    assert_int_equal(vm.pages, 3);
    expect_mapped(X + 8 * P, X + 11 * P, PROT_NONE);
    /* The whole range readable: the 61 holes are populated, the 3 pages keep their bytes. */
    assert_int_equal(vm_mprotect(&vm, X, n * P, PROT_READ), 0);
    assert_int_equal(vm.pages, n);
    expect_mapped(X, X + n * P, PROT_READ);
    assert_false(page_is_zero(X + 9 * P));
    assert_true(page_is_zero(X + 12 * P));
    assert_int_equal(vm_munmap(&vm, X, n * P), 0);
    assert_int_equal(vm.pages, 0);
    assert_int_equal(page_free_count(), free0);
}

/* NEW-02: an mprotect that cannot map a populated page (no page for a table) fails with
 * -ENOMEM and leaves the reservation as it was: no page mapped, every page back. */
static void new02_prot_none_fill_failure(TEST_STATE)
{
    assert_int_equal(vm_mmap(&vm, X, 8 * P, PROT_NONE, ANON | MAP_FIXED, -1, 0), (long)X);
    fake.map_fail_after = 3; /* the third page's mapping fails */
    size_t before = page_free_count();
    assert_int_equal(vm_mprotect(&vm, X, 8 * P, RW), -ENOMEM);
    assert_int_equal(vm.pages, 0);
    assert_int_equal(fake.mapped_pages, 0);
    expect_unmapped(X, X + 8 * P);
    assert_int_equal(page_free_count(), before);
    fake.map_fail_after = 0;
    assert_int_equal(vm_mprotect(&vm, X, 8 * P, RW), 0);
    expect_mapped(X, X + 8 * P, RW);
}

/* ------------------------------------------------------------------ munmap */

/* A five-page RW image region at X with distinct bytes in each page; *pas gets their pages. */
static void five_pages(paddr_t pas[5])
{
    assert_int_equal(vm_map_region(&vm, X, 5 * P, RW, VMA_IMAGE), 0);
    stamp(X, X + 5 * P);
    for (unsigned i = 0; i < 5; i++) {
        pas[i] = pa_of(X + i * P, NULL);
    }
}

static void expect_same_pages(const paddr_t pas[5], unsigned keep_mask)
{
    for (unsigned i = 0; i < 5; i++) {
        paddr_t pa = pa_of(X + i * P, NULL);
        if ((keep_mask >> i & 1) ? pa != pas[i] : pa != 0) {
            fail_msg("page %u: %s", i, (keep_mask >> i & 1) ? "moved or lost" : "still mapped");
        }
    }
}

/* VM-20: munmap in the middle splits the region in two and frees exactly those pages */
static void vm20_munmap_middle(TEST_STATE)
{
    paddr_t pas[5];
    five_pages(pas);
    size_t free1 = page_free_count();
    assert_int_equal(vm_munmap(&vm, X + 2 * P, P), 0);
    EXPECT_VMAS({X, X + 2 * P, RW, VMA_IMAGE}, {X + 3 * P, X + 5 * P, RW, VMA_IMAGE});
    expect_same_pages(pas, 0x1b);
    expect_stamp(X, X + 2 * P);
    expect_stamp(X + 3 * P, X + 5 * P);
    assert_int_equal(fake.mapped_pages, 4);
    assert_int_equal(vm.pages, 4);
    assert_int_equal(page_free_count(), free1 + 1);
}

/* VM-21: munmap at the start of a region trims it */
static void vm21_munmap_start(TEST_STATE)
{
    paddr_t pas[5];
    five_pages(pas);
    size_t free1 = page_free_count();
    assert_int_equal(vm_munmap(&vm, X, 2 * P), 0);
    EXPECT_VMAS({X + 2 * P, X + 5 * P, RW, VMA_IMAGE});
    expect_same_pages(pas, 0x1c);
    expect_stamp(X + 2 * P, X + 5 * P);
    assert_int_equal(fake.mapped_pages, 3);
    assert_int_equal(page_free_count(), free1 + 2);
}

/* VM-22: munmap at the end of a region trims it */
static void vm22_munmap_end(TEST_STATE)
{
    paddr_t pas[5];
    five_pages(pas);
    size_t free1 = page_free_count();
    assert_int_equal(vm_munmap(&vm, X + 3 * P, 2 * P), 0);
    EXPECT_VMAS({X, X + 3 * P, RW, VMA_IMAGE});
    expect_same_pages(pas, 0x07);
    expect_stamp(X, X + 3 * P);
    assert_int_equal(fake.mapped_pages, 3);
    assert_int_equal(page_free_count(), free1 + 2);
}

/* VM-23: munmap over two regions and the hole between trims both */
static void vm23_munmap_across_regions(TEST_STATE)
{
    assert_int_equal(vm_map_region(&vm, X, 2 * P, RW, VMA_IMAGE), 0);
    assert_int_equal(vm_map_region(&vm, X + 4 * P, 2 * P, PROT_READ, VMA_MMAP), 0);
    stamp(X, X + 2 * P);
    stamp(X + 4 * P, X + 6 * P);
    size_t free1 = page_free_count();
    assert_int_equal(vm_munmap(&vm, X + P, 4 * P), 0);
    EXPECT_VMAS({X, X + P, RW, VMA_IMAGE}, {X + 5 * P, X + 6 * P, PROT_READ, VMA_MMAP});
    expect_mapped(X, X + P, RW);
    expect_unmapped(X + P, X + 5 * P);
    expect_mapped(X + 5 * P, X + 6 * P, PROT_READ);
    expect_stamp(X, X + P);
    expect_stamp(X + 5 * P, X + 6 * P);
    assert_int_equal(fake.mapped_pages, 2);
    assert_int_equal(page_free_count(), free1 + 2);
}

/* VM-24: unmapping a whole region removes it; unmapping nothing succeeds and changes nothing */
static void vm24_munmap_whole_and_nothing(TEST_STATE)
{
    assert_int_equal(vm_map_region(&vm, X, 2 * P, RW, VMA_IMAGE), 0);
    assert_int_equal(vm_map_region(&vm, X + 4 * P, P, RW, VMA_IMAGE), 0);
    size_t free1 = page_free_count();
    assert_int_equal(vm_munmap(&vm, X + 10 * P, 3 * P), 0);
    assert_int_equal(vm_munmap(&vm, X + 2 * P, 2 * P), 0); /* exactly the hole */
    assert_int_equal(page_free_count(), free1);
    assert_int_equal(vm_munmap(&vm, X, 2 * P), 0);
    EXPECT_VMAS({X + 4 * P, X + 5 * P, RW, VMA_IMAGE});
    assert_int_equal(fake.mapped_pages, 1);
    assert_int_equal(vm.pages, 1);
    assert_int_equal(page_free_count(), free1 + 2);
    assert_int_equal(vm_munmap(&vm, X + 4 * P, 1), 0); /* length rounds up to a page */
    assert_true(list_empty(&vm.vmas));
    assert_int_equal(fake.mapped_pages, 0);
}

/* VM-25: munmap with an unaligned address, no length or outside user space is -EINVAL */
static void vm25_munmap_errors(TEST_STATE)
{
    assert_int_equal(vm_map_region(&vm, X, 2 * P, RW, VMA_IMAGE), 0);
    assert_int_equal(vm_munmap(&vm, X + 8, P), -EINVAL);
    assert_int_equal(vm_munmap(&vm, X, 0), -EINVAL);
    assert_int_equal(vm_munmap(&vm, 0, P), -EINVAL);
    assert_int_equal(vm_munmap(&vm, USER_VA_TOP - P, 2 * P), -EINVAL);
    assert_int_equal(vm_munmap(&vm, X, UINT64_MAX - P), -EINVAL);
    EXPECT_VMAS({X, X + 2 * P, RW, VMA_IMAGE});
    assert_int_equal(fake.mapped_pages, 2);
}

/* VM-26: a munmap or MAP_FIXED over a range that reaches the kernel's pages is refused and
 * changes nothing, also in the regions before those pages (issue 9, bug 5: the regions
 * before were already gone when the refusal came) */
static void vm26_refused_unmap_changes_nothing(TEST_STATE)
{
    paddr_t kpage = (paddr_t)(uintptr_t)&vm; /* any kernel page will do: never freed */
    kpage &= ~(paddr_t)(P - 1);
    assert_int_equal(vm_map_region(&vm, X, 2 * P, RW, VMA_IMAGE), 0);
    assert_int_equal(vm_map_kernel_pages(&vm, X + 2 * P, &kpage, 1, PROT_READ), 0);
    stamp(X, X + 2 * P);
    size_t free1 = page_free_count();
    assert_int_equal(vm_munmap(&vm, X, 3 * P), -EINVAL);
    assert_int_equal(vm_mmap(&vm, X, 3 * P, RW, ANON | MAP_FIXED, -1, 0), -EINVAL);
    EXPECT_VMAS({X, X + 2 * P, RW, VMA_IMAGE}, {X + 2 * P, X + 3 * P, PROT_READ, VMA_KERNEL});
    expect_stamp(X, X + 2 * P);
    assert_int_equal(page_free_count(), free1);
    assert_int_equal(vm_munmap(&vm, X, 2 * P), 0);
}

/* VM-27: a munmap over a huge range costs the pages it finds, not the range: the kernel
 * walks its regions, not every page of 1 GiB (found by /bin/fuzz: a munmap of all user
 * space kept a CPU in the kernel for half a minute, deaf to SIGKILL) */
static void vm27_munmap_huge_range_walks_regions(TEST_STATE)
{
    assert_int_equal(vm_map_region(&vm, X, 2 * P, RW, VMA_IMAGE), 0);
    assert_int_equal(vm_map_region(&vm, X + (1ull << 29), P, RW, VMA_MMAP), 0);
    fake.as_unmaps = 0;
    assert_int_equal(vm_munmap(&vm, X + P, 1ull << 30), 0);
    EXPECT_VMAS({X, X + P, RW, VMA_IMAGE});
    assert_int_equal(fake.mapped_pages, 1);
    assert_true(fake.as_unmaps <= 2); /* the two pages it unmapped */
    fake.as_unmaps = 0;
    assert_int_equal(vm_munmap(&vm, X + P, 1ull << 30), 0); /* nothing there at all */
    assert_int_equal(fake.as_unmaps, 0);
}

/* Times the page allocator's lock was taken since the last call, and how many of them
 * while this CPU held another lock (the address space's). */
static uint64_t lock_taken, lock_nested;

static void page_lock_since(uint64_t *taken, uint64_t *nested)
{
    uint64_t t, n;
    page_lock_stats(&t, &n);
    *taken = t - lock_taken, *nested = n - lock_nested;
    lock_taken = t, lock_nested = n;
}

/* VM-28: munmap gives its pages back after it has let go of the address space's lock, all
 * at once: the allocator's lock is taken about once, never with the address space locked
 * (found by /bin/fuzz: munmaps of thousands of pages queued on the allocator's lock page by
 * page with the address space locked and interrupts masked; on a loaded host, where a
 * lock's next holder may be a vCPU the host is not running, CPUs took no interrupt for up
 * to 17 s, and the threads and tasks behind them stalled as long) */
static void vm28_munmap_frees_after_the_lock_at_once(TEST_STATE)
{
    uint64_t taken, nested;
    assert_int_equal(vm_map_region(&vm, X, 256 * P, RW, VMA_MMAP), 0);
    page_lock_since(&taken, &nested);
    assert_int_equal(vm_munmap(&vm, X, 256 * P), 0);
    page_lock_since(&taken, &nested);
    assert_int_equal(nested, 0);
    assert_true(taken <= 2);
    assert_int_equal(fake.mapped_pages, 0);
    /* the same for a MAP_FIXED mapping that replaces another, and a heap that shrinks */
    assert_int_equal(vm_map_region(&vm, X, 128 * P, RW, VMA_MMAP), 0);
    page_lock_since(&taken, &nested);
    assert_int_equal(vm_mmap(&vm, X, 128 * P, RW, ANON | MAP_FIXED, -1, 0), (long)X);
    page_lock_since(&taken, &nested);
    assert_int_equal(nested, 0);
    assert_true(taken <= 128 / 16 + 2);
    assert_int_equal(vm_brk(&vm, BRK0 + 128 * P), (long)(BRK0 + 128 * P));
    page_lock_since(&taken, &nested);
    assert_int_equal(vm_brk(&vm, BRK0), (long)BRK0);
    page_lock_since(&taken, &nested);
    assert_int_equal(nested, 0);
    assert_true(taken <= 2);
}

/* VM-29: populating a region takes the allocator's lock once per batch of pages, not once
 * per page (the same queue, on the way in) */
static void vm29_mmap_takes_pages_in_batches(TEST_STATE)
{
    uint64_t taken, nested;
    page_drain_local(); /* every page comes from the global list */
    page_lock_since(&taken, &nested);
    assert_true(vm_mmap(&vm, 0, 256 * P, RW, ANON, -1, 0) > 0);
    page_lock_since(&taken, &nested);
    assert_true(taken <= 256 / 16 + 2);
}

/* VM-16: an mmap larger than free memory fails at once: nothing taken, nothing mapped */
static void vm16_mmap_more_than_free(TEST_STATE)
{
    uint64_t n = page_free_count() + 1;
    assert_int_equal(vm_mmap(&vm, 0, n * P, RW, ANON, -1, 0), -ENOMEM);
    assert_int_equal(vm_mmap(&vm, X, n * P, RW, ANON | MAP_FIXED, -1, 0), -ENOMEM);
    assert_true(list_empty(&vm.vmas));
    assert_int_equal(fake.mapped_pages, 0);
    assert_int_equal(page_free_count(), free0);
}

/* ------------------------------------------------------------------ brk */

/* Every region is heap, RW; [BRK0, end) is mapped and the page at `end` is not. */
static void expect_heap(uint64_t end)
{
    list_for_each(pos, &vm.vmas) {
        const struct vma *v = container_of(pos, struct vma, link);
        assert_int_equal(v->kind, VMA_HEAP);
        assert_int_equal(v->prot, RW);
    }
    expect_mapped(BRK0, end, RW);
    expect_unmapped(end, end + 4 * P);
    assert_int_equal(vm.pages, (end - BRK0) / P);
}

/* VM-30: brk grows and shrinks by whole pages and returns the new break */
static void vm30_brk_grow_shrink(TEST_STATE)
{
    assert_int_equal(vm_brk(&vm, 0), (long)BRK0);
    assert_true(list_empty(&vm.vmas));
    assert_int_equal(vm_brk(&vm, BRK0 + 1), (long)(BRK0 + 1));
    expect_heap(BRK0 + P);
    assert_int_equal(vm_brk(&vm, BRK0 + P), (long)(BRK0 + P)); /* same page */
    expect_heap(BRK0 + P);
    stamp(BRK0, BRK0 + P);
    assert_int_equal(vm_brk(&vm, BRK0 + 2 * P + 0x800), (long)(BRK0 + 2 * P + 0x800));
    expect_heap(BRK0 + 3 * P);
    expect_stamp(BRK0, BRK0 + P); /* growing keeps what was there */
    assert_true(page_is_zero(BRK0 + 2 * P));
    assert_int_equal(vm_brk(&vm, 0), (long)(BRK0 + 2 * P + 0x800));

    size_t free1 = page_free_count();
    assert_int_equal(vm_brk(&vm, BRK0 + P), (long)(BRK0 + P));
    expect_heap(BRK0 + P);
    expect_stamp(BRK0, BRK0 + P);
    assert_int_equal(page_free_count(), free1 + 2);
    assert_int_equal(vm_brk(&vm, BRK0), (long)BRK0);
    assert_true(list_empty(&vm.vmas));
    assert_int_equal(fake.mapped_pages, 0);
}

/* VM-31: a break below the start or beyond the limit fails: the old break is returned */
static void vm31_brk_limits(TEST_STATE)
{
    assert_int_equal(vm_brk(&vm, BRK0 + 0x1234), (long)(BRK0 + 0x1234));
    size_t free1 = page_free_count();
    assert_int_equal(vm_brk(&vm, BRK0 - 1), (long)(BRK0 + 0x1234));
    assert_int_equal(vm_brk(&vm, 1), (long)(BRK0 + 0x1234));
    assert_int_equal(vm_brk(&vm, BRK0 + USER_BRK_MAX + 1), (long)(BRK0 + 0x1234));
    assert_int_equal(vm_brk(&vm, UINT64_MAX), (long)(BRK0 + 0x1234));
    assert_int_equal(vm.brk, BRK0 + 0x1234);
    expect_heap(BRK0 + 2 * P);
    assert_int_equal(page_free_count(), free1);
}

/* VM-32: out of memory at the limit: the old break, nothing mapped, nothing lost */
static void vm32_brk_out_of_memory(TEST_STATE)
{
    assert_int_equal(vm_brk(&vm, BRK0 + P), (long)(BRK0 + P));
    size_t free1 = page_free_count();
    assert_int_equal(vm_brk(&vm, BRK0 + USER_BRK_MAX), (long)(BRK0 + P));
    expect_heap(BRK0 + P);
    assert_int_equal(page_free_count(), free1);
}

/* VM-33: the heap does not grow over another mapping; up to it is fine */
static void vm33_brk_blocked_by_mapping(TEST_STATE)
{
    assert_int_equal(vm_map_region(&vm, BRK0 + 2 * P, P, PROT_READ, VMA_MMAP), 0);
    size_t free1 = page_free_count();
    assert_int_equal(vm_brk(&vm, BRK0 + 3 * P), (long)BRK0);
    assert_int_equal(vm_brk(&vm, BRK0 + 2 * P + 1), (long)BRK0);
    assert_int_equal(page_free_count(), free1);
    assert_int_equal(fake.mapped_pages, 1);
    assert_int_equal(vm_brk(&vm, BRK0 + 2 * P), (long)(BRK0 + 2 * P));
    EXPECT_VMAS({BRK0, BRK0 + 2 * P, RW, VMA_HEAP},
                {BRK0 + 2 * P, BRK0 + 3 * P, PROT_READ, VMA_MMAP});
}

/* VM-34: a heap grown one page per call is one region (issue 9, bug 8: one region per call,
 * and every call walked them all); shrinking cuts it */
static void vm34_brk_page_by_page_is_one_region(TEST_STATE)
{
    for (unsigned i = 1; i <= 64; i++) {
        assert_int_equal(vm_brk(&vm, BRK0 + i * P), (long)(BRK0 + i * P));
    }
    EXPECT_VMAS({BRK0, BRK0 + 64 * P, RW, VMA_HEAP});
    assert_int_equal(vm.nregions, 1);
    assert_int_equal(vm_brk(&vm, BRK0 + 10 * P), (long)(BRK0 + 10 * P));
    EXPECT_VMAS({BRK0, BRK0 + 10 * P, RW, VMA_HEAP});
    expect_heap(BRK0 + 10 * P);
}

/* ------------------------------------------------------------------ user copies */

/* VM-40: copies in and out cross page boundaries and land in the right physical pages */
static void vm40_copy_round_trip(TEST_STATE)
{
    assert_int_equal(vm_map_region(&vm, X, 2 * P, RW, VMA_IMAGE), 0);
    assert_int_equal(copy_to_user(&vm, X + P - 3, "abcdef", 6), 0);
    char back[7] = {0};
    assert_int_equal(copy_from_user(&vm, back, X + P - 3, 6), 0);
    assert_string_equal(back, "abcdef");
    const char *p0 = (const char *)(uintptr_t)pa_of(X, NULL);
    const char *p1 = (const char *)(uintptr_t)pa_of(X + P, NULL);
    assert_memory_equal(p0 + P - 3, "abc", 3);
    assert_memory_equal(p1, "def", 3);
    static char big[2 * PAGE_SIZE], big_back[2 * PAGE_SIZE];
    for (unsigned i = 0; i < sizeof(big); i++) {
        big[i] = (char)(i * 7);
    }
    assert_int_equal(copy_to_user(&vm, X, big, sizeof(big)), 0);
    assert_int_equal(copy_from_user(&vm, big_back, X, sizeof(big)), 0);
    assert_memory_equal(big, big_back, sizeof(big));
}

/* VM-41: a copy touching an unmapped page, or across a hole, is -EFAULT */
static void vm41_copy_unmapped(TEST_STATE)
{
    assert_int_equal(vm_map_region(&vm, X, P, RW, VMA_IMAGE), 0);
    assert_int_equal(vm_map_region(&vm, X + 2 * P, P, RW, VMA_IMAGE), 0);
    char buf[P + 16];
    memset(buf, 'q', sizeof(buf));
    assert_int_equal(copy_from_user(&vm, buf, X + P, 1), -EFAULT);
    assert_int_equal(copy_from_user(&vm, buf, X + P - 2, 4), -EFAULT);
    assert_int_equal(copy_from_user(&vm, buf, X + 2 * P - 2, 4), -EFAULT);
    assert_int_equal(copy_from_user(&vm, buf, X + P - 8, P + 16), -EFAULT); /* over the hole */
    assert_int_equal(copy_to_user(&vm, X + P, buf, 1), -EFAULT);
    assert_int_equal(copy_to_user(&vm, X + P - 8, buf, P + 16), -EFAULT);
    assert_int_equal(copy_from_user(&vm, buf, 0, 1), -EFAULT);
    assert_int_equal(copy_from_user(&vm, buf, X + 3 * P - 1, 2), -EFAULT);
    assert_int_equal(vm_check_range(&vm, X + P - 8, P + 16, PROT_READ), -EFAULT);
    assert_int_equal(vm_check_range(&vm, X, P, PROT_READ), 0);
    assert_int_equal(vm_check_range(&vm, X + 2 * P, P, PROT_WRITE), 0);
    assert_int_equal(vm_check_range(&vm, X, 3 * P, PROT_READ), -EFAULT);
    assert_int_equal(vm_check_range(&vm, X + P - 1, 1, PROT_READ), 0);
    assert_int_equal(vm_check_range(&vm, X + P - 1, 2, PROT_READ), -EFAULT);
}

/* VM-42: reading needs PROT_READ and writing PROT_WRITE, page by page */
static void vm42_copy_permissions(TEST_STATE)
{
    assert_int_equal(vm_map_region(&vm, X, P, PROT_READ, VMA_IMAGE), 0);
    assert_int_equal(vm_map_region(&vm, X + P, P, PROT_EXEC, VMA_IMAGE), 0);
    assert_int_equal(vm_map_region(&vm, X + 2 * P, P, PROT_NONE, VMA_MMAP), 0);
    assert_int_equal(vm_map_region(&vm, X + 3 * P, P, PROT_WRITE, VMA_MMAP), 0);
    assert_int_equal(vm_map_region(&vm, X + 4 * P, P, RW, VMA_MMAP), 0);
    assert_int_equal(vm_map_region(&vm, X + 5 * P, P, PROT_READ, VMA_MMAP), 0);
    assert_int_equal(vm_write_initial(&vm, X + 10, "ro", 2), 0);
    char b[4] = {0};
    assert_int_equal(copy_from_user(&vm, b, X + 10, 2), 0);
    assert_string_equal(b, "ro");
    assert_int_equal(copy_to_user(&vm, X + 10, "xx", 2), -EFAULT);
    assert_memory_equal((const char *)(uintptr_t)pa_of(X, NULL) + 10, "ro", 2); /* unchanged */
    assert_int_equal(copy_from_user(&vm, b, X + P, 1), -EFAULT);                /* execute-only */
    assert_int_equal(copy_to_user(&vm, X + P, "x", 1), -EFAULT);
    assert_int_equal(copy_from_user(&vm, b, X + 2 * P, 1), -EFAULT); /* PROT_NONE */
    assert_int_equal(copy_to_user(&vm, X + 2 * P, "x", 1), -EFAULT);
    assert_int_equal(copy_to_user(&vm, X + 3 * P, "w", 1), 0); /* write-only */
    assert_int_equal(copy_from_user(&vm, b, X + 3 * P, 1), -EFAULT);
    assert_int_equal(copy_to_user(&vm, X + 5 * P - 2, "rw", 2), 0);
    /* a write starting in the RW page and running into the read-only one */
    assert_int_equal(copy_to_user(&vm, X + 6 * P - 1, "ab", 2), -EFAULT);
    assert_int_equal(vm_check_range(&vm, X, P, PROT_READ), 0);
    assert_int_equal(vm_check_range(&vm, X, P, PROT_WRITE), -EFAULT);
    assert_int_equal(vm_check_range(&vm, X, P, RW), -EFAULT);
    assert_int_equal(vm_check_range(&vm, X + P, 1, PROT_READ), -EFAULT);
    assert_int_equal(vm_check_range(&vm, X + 3 * P, 1, PROT_WRITE), 0);
    assert_int_equal(vm_check_range(&vm, X + 3 * P, 2 * P, PROT_WRITE), 0);
    assert_int_equal(vm_check_range(&vm, X + 3 * P, 2 * P, PROT_READ), -EFAULT);
    assert_int_equal(vm_check_range(&vm, X + 4 * P, P, RW), 0);
}

/* VM-43: ranges that wrap, reach past user space or lie in kernel space are -EFAULT */
static void vm43_copy_bad_addresses(TEST_STATE)
{
    char b[8];
    assert_int_equal(copy_from_user(&vm, b, UINT64_MAX - 1, 4), -EFAULT);
    assert_int_equal(copy_to_user(&vm, UINT64_MAX - 1, b, 4), -EFAULT);
    assert_int_equal(copy_from_user(&vm, b, USER_VA_TOP - 1, 2), -EFAULT);
    assert_int_equal(copy_from_user(&vm, b, 0xffff000000001000ull, 1), -EFAULT);
    assert_int_equal(vm_check_range(&vm, UINT64_MAX - 1, 4, PROT_READ), -EFAULT);
    assert_int_equal(vm_check_range(&vm, USER_VA_TOP - 1, 2, PROT_READ), -EFAULT);
    assert_int_equal(vm_check_range(&vm, 0xffff000000001000ull, 1, PROT_READ), -EFAULT);
    assert_int_equal(vm_check_range(&vm, X, SIZE_MAX, PROT_READ), -EFAULT);
}

/* VM-44: zero bytes are always there: a zero-length copy or check succeeds anywhere in user
 * space, aligned or not */
static void vm44_zero_length(TEST_STATE)
{
    char b[1];
    assert_int_equal(copy_from_user(&vm, b, X + 5, 0), 0);
    assert_int_equal(copy_to_user(&vm, X + 5, b, 0), 0);
    assert_int_equal(vm_check_range(&vm, X, 0, PROT_READ), 0);
    assert_int_equal(vm_check_range(&vm, X + 5, 0, PROT_READ), 0);
}

/* VM-45: strncpy_from_user copies up to the NUL; -ENAMETOOLONG when max bytes hold none */
static void vm45_strncpy_from_user(TEST_STATE)
{
    assert_int_equal(vm_map_region(&vm, X, 2 * P, RW, VMA_IMAGE), 0);
    assert_int_equal(copy_to_user(&vm, X + 10, "hello", 6), 0);
    char dst[32];
    memset(dst, 'z', sizeof(dst));
    assert_int_equal(strncpy_from_user(&vm, dst, X + 10, sizeof(dst)), 5);
    assert_string_equal(dst, "hello");
    assert_int_equal(strncpy_from_user(&vm, dst, X + 10, 6), 5);
    assert_int_equal(strncpy_from_user(&vm, dst, X + 10, 5), -ENAMETOOLONG);
    assert_int_equal(strncpy_from_user(&vm, dst, X + 10, 1), -ENAMETOOLONG);
    assert_int_equal(strncpy_from_user(&vm, dst, X + 10, 0), -ENAMETOOLONG);
    assert_int_equal(strncpy_from_user(&vm, dst, X + 15, 1), 0); /* the empty string */
    assert_string_equal(dst, "");
    /* across a page boundary */
    assert_int_equal(copy_to_user(&vm, X + P - 4, "boundary", 9), 0);
    assert_int_equal(strncpy_from_user(&vm, dst, X + P - 4, sizeof(dst)), 8);
    assert_string_equal(dst, "boundary");
    /* unterminated up to the end of the mapping: a fault, not a long name */
    static char fill[16];
    memset(fill, 'a', sizeof(fill));
    assert_int_equal(copy_to_user(&vm, X + 2 * P - sizeof(fill), fill, sizeof(fill)), 0);
    assert_int_equal(strncpy_from_user(&vm, dst, X + 2 * P - sizeof(fill), sizeof(dst)), -EFAULT);
    assert_int_equal(strncpy_from_user(&vm, dst, X + 2 * P - sizeof(fill), sizeof(fill)),
                     -ENAMETOOLONG);
    assert_int_equal(strncpy_from_user(&vm, dst, X + 4 * P, sizeof(dst)), -EFAULT);
}

/* VM-46: the loader's write ignores the protection but not the mapping */
static void vm46_write_initial(TEST_STATE)
{
    assert_int_equal(vm_map_region(&vm, X, P, PROT_READ | PROT_EXEC, VMA_IMAGE), 0);
    assert_int_equal(vm_map_region(&vm, X + P, P, PROT_EXEC, VMA_IMAGE), 0);
    assert_int_equal(vm_write_initial(&vm, X + P - 2, "code", 4), 0);
    assert_memory_equal((const char *)(uintptr_t)pa_of(X, NULL) + P - 2, "co", 2);
    assert_memory_equal((const char *)(uintptr_t)pa_of(X + P, NULL), "de", 2);
    assert_int_equal(vm_write_initial(&vm, X + 2 * P - 1, "xy", 2), -EFAULT);
}

/* ------------------------------------------------------------------ teardown */

/* VM-50: vm_destroy after a mix of everything returns every page */
static void vm50_destroy_returns_everything(TEST_STATE)
{
    struct vm other;
    memset(&other, 0, sizeof(other));
    assert_int_equal(vm_init(&other), 0);
    other.brk_start = other.brk = BRK0;
    size_t start = page_free_count();
    assert_int_equal(vm_map_region(&other, 0x400000, 3 * P, PROT_READ | PROT_EXEC, VMA_IMAGE), 0);
    assert_int_equal(vm_brk(&other, BRK0 + 5 * P), (long)(BRK0 + 5 * P));
    assert_int_equal(vm_brk(&other, BRK0 + 2 * P), (long)(BRK0 + 2 * P));
    for (unsigned i = 0; i < 10; i++) {
        assert_true(vm_mmap(&other, 0, (i % 3 + 1) * P, RW, ANON, -1, 0) > 0);
    }
    assert_int_equal(vm_munmap(&other, T - 4 * P, 2 * P), 0);
    assert_int_equal(vm_mmap(&other, X, 8 * P, RW, ANON | MAP_FIXED, -1, 0), (long)X);
    assert_int_equal(vm_munmap(&other, X + 2 * P, P), 0);
    assert_int_equal(vm_munmap(&other, X + 5 * P, P), 0);
    assert_int_equal(
        vm_map_region(&other, USER_STACK_TOP - USER_STACK_SIZE, USER_STACK_SIZE, RW, VMA_STACK), 0);
    assert_true(page_free_count() < start);
    assert_int_equal(fake.mapped_pages, other.pages);
    vm_destroy(&other);
    assert_int_equal(page_free_count(), start);
    assert_int_equal(fake.mapped_pages, 0);
    assert_int_equal(other.as.root, 0);
}

/* VM-51: a teardown gives its pages back in one go (the worker that runs it is not
 * preempted: page by page through the allocator's lock, a task queued behind it on a loaded
 * host waited for seconds) */
static void vm51_destroy_frees_at_once(TEST_STATE)
{
    uint64_t taken, nested;
    assert_int_equal(vm_map_region(&vm, X, 256 * P, RW, VMA_MMAP), 0);
    assert_int_equal(vm_map_region(&vm, X + 512 * P, 64 * P, RW, VMA_IMAGE), 0);
    page_lock_since(&taken, &nested);
    vm_destroy(&vm);
    page_lock_since(&taken, &nested);
    assert_true(taken <= 4);
    assert_int_equal(fake.mapped_pages, 0);
    memset(&vm, 0, sizeof(vm));
    assert_int_equal(vm_init(&vm), 0); /* for the teardown's check */
}

/* VM-52: the stack is populated at its top only; a page below is populated when the kernel
 * copies to it, when the task faults on it, or all at once by vm_populate_stack; nothing
 * outside the stack is populated by a fault, nor with an access the region does not allow */
static void vm52_stack_populated_on_touch(TEST_STATE)
{
    const uint64_t top = USER_STACK_TOP, size = 16 * P;
    size_t before = page_free_count();
    assert_int_equal(vm_map_stack(&vm, top, size, 2 * P), 0);
    assert_int_equal(vm.pages, 2);
    assert_true(vm.stack_partial);
    expect_vmas(1, (struct want_vma[]){{top - size, top, RW, VMA_STACK}});
    expect_mapped(top - 2 * P, top, RW);
    expect_unmapped(top - size, top - 2 * P);
    assert_int_equal(vm_map_stack(&vm, top, size, 2 * P), -EEXIST);

    assert_int_equal(copy_to_user(&vm, top - 10 * P + 8, "deep", 5), 0); /* kernel copy */
    expect_mapped(top - 10 * P, top - 9 * P, RW);
    assert_int_equal(vm.pages, 3);
    char back[5];
    assert_int_equal(copy_from_user(&vm, back, top - 10 * P + 8, 5), 0);
    assert_string_equal(back, "deep");

    assert_int_equal(vm_fault(&vm, top - 12 * P + 100, PROT_WRITE), 0); /* the task's touch */
    expect_mapped(top - 12 * P, top - 11 * P, RW);
    assert_int_equal(vm_fault(&vm, top - 12 * P, PROT_READ), 0);          /* populated meanwhile */
    assert_int_equal(vm_fault(&vm, top - 13 * P, PROT_EXEC), -EFAULT);    /* no exec on a stack */
    assert_int_equal(vm_fault(&vm, top - size - P, PROT_WRITE), -EFAULT); /* below it */
    assert_int_equal(vm_fault(&vm, X, PROT_READ), -EFAULT);               /* nothing there */
    assert_int_equal(vm.pages, 4);

    assert_int_equal(vm_populate_stack(&vm), 0);
    assert_false(vm.stack_partial);
    expect_mapped(top - size, top, RW);
    assert_int_equal(vm.pages, 16);
    assert_true(before - page_free_count() >= 16);
    assert_int_equal(copy_from_user(&vm, back, top - 10 * P + 8, 5), 0);
    assert_string_equal(back, "deep"); /* what was there stays */
}

/* VM-53: fork's copy of a partly populated stack copies what is there and leaves the rest
 * to be populated in the child; munmap of an unpopulated part is fine */
static void vm53_stack_copy_and_unmap(TEST_STATE)
{
    const uint64_t top = USER_STACK_TOP, size = 8 * P;
    assert_int_equal(vm_map_stack(&vm, top, size, P), 0);
    assert_int_equal(copy_to_user(&vm, top - 5 * P, "x", 1), 0);
    struct vm child;
    memset(&child, 0, sizeof(child));
    assert_int_equal(vm_init(&child), 0);
    assert_int_equal(vm_copy(&child, &vm), 0);
    assert_int_equal(child.pages, 2);
    assert_true(child.stack_partial);
    char c = 0;
    assert_int_equal(copy_from_user(&child, &c, top - 5 * P, 1), 0);
    assert_int_equal(c, 'x');
    assert_int_equal(vm_fault(&child, top - 7 * P, PROT_WRITE), 0);
    assert_int_equal(child.pages, 3);
    vm_destroy(&child);
    assert_int_equal(vm_munmap(&vm, top - 4 * P, 2 * P), 0); /* none of it populated */
    assert_int_equal(vm.pages, 2);
    assert_int_equal(vm_fault(&vm, top - 4 * P, PROT_WRITE), -EFAULT); /* a hole now */
}

/* ------------------------------------------------------------------ fork's copy */

/* A fresh address space for a fork's child; destroyed by the caller. */
static void child_init(struct vm *child)
{
    memset(child, 0, sizeof(*child));
    assert_int_equal(vm_init(child), 0);
}

/* VM-60: vm_copy gives the child its own pages with the parent's contents, its regions and
 * its break, and takes exactly the pages it copies */
static void vm60_fork_copies_regions(TEST_STATE)
{
    struct vm child;
    child_init(&child);
    assert_int_equal(vm_map_region(&vm, X, 2 * P, RW, VMA_IMAGE), 0);
    assert_int_equal(vm_brk(&vm, BRK0 + 3 * P), (long)(BRK0 + 3 * P));
    assert_int_equal(copy_to_user(&vm, X + P, "fork", 4), 0);
    size_t before = page_free_count();
    assert_int_equal(vm_copy(&child, &vm), 0);
    assert_int_equal(child.pages, vm.pages);
    assert_true(page_free_count() <= before - vm.pages); /* the pages (and page tables) */
    char back[5] = {0};
    assert_int_equal(copy_from_user(&child, back, X + P, 4), 0);
    assert_string_equal(back, "fork");
    assert_true(pa_of(X + P, NULL) != arch_as_lookup(&child.as, X + P, 0));
    assert_int_equal(child.brk, vm.brk);
    vm_destroy(&child);
    assert_int_equal(page_free_count(), before);
}

/* VM-61: a fork does not copy a claimed device's register window or DMA region: the child
 * has no mapping there (the claim is the parent's) and vm_copy takes no page beyond those it
 * reserved (it copied them, reserving none: the reserve ran out, the list of spare pages
 * underflowed, and freeing its "rest" walked garbage: a kernel panic, found by /bin/fuzz
 * with a virtio-net device present) */
static void vm61_fork_skips_device_regions(TEST_STATE)
{
    struct vm child;
    child_init(&child);
    paddr_t dma = page_alloc_contig(4), regs = page_alloc();
    assert_true(dma && regs);
    long vregs = vm_map_phys(&vm, regs, 1, RW, true);
    long vdma = vm_map_phys(&vm, dma, 4, RW, false);
    assert_true(vregs > 0 && vdma > 0);
    assert_int_equal(vm_map_region(&vm, X, P, RW, VMA_MMAP), 0);
    size_t before = page_free_count();
    assert_int_equal(vm_copy(&child, &vm), 0);
    assert_int_equal(child.pages, 1);
    assert_int_equal(arch_as_lookup(&child.as, (uint64_t)vregs, 0), 0);
    assert_int_equal(arch_as_lookup(&child.as, (uint64_t)vdma, 0), 0);
    assert_true(arch_as_lookup(&child.as, X, 0) != 0);
    assert_int_equal(arch_as_lookup(&vm.as, (uint64_t)vdma, 0), dma); /* the parent keeps it */
    vm_destroy(&child);
    assert_int_equal(page_free_count(), before);
    assert_int_equal(vm_unmap_phys(&vm, (uint64_t)vregs, P), 0);
    assert_int_equal(vm_unmap_phys(&vm, (uint64_t)vdma, 4 * P), 0);
    page_free_contig(dma, 4);
    page_free(regs);
}

/* VM-62: vm_copy (fork) of an address space with a claimed device's region: the owned
 * pages are copied, the device region is not (the child gets no mapping of a device it does
 * not own, and no fresh page is spent on it); the device's pages stay the device's */
static void vm62_copy_leaves_device_regions(TEST_STATE)
{
    paddr_t dev = page_alloc(), dev2 = page_alloc(); /* stand-ins for device.c's pages */
    assert_true(dev && dev2);
    assert_int_equal(vm_map_region(&vm, X, 2 * P, RW, VMA_MMAP), 0);
    long va = vm_map_phys(&vm, dev, 1, RW, true);
    long va2 = vm_map_phys(&vm, dev2, 1, RW, false);
    assert_true(va > 0 && va2 > 0);
    stamp(X, X + 2 * P);
    struct vm child;
    memset(&child, 0, sizeof(child));
    assert_int_equal(vm_init(&child), 0);
    size_t before = page_free_count();
    assert_int_equal(vm_copy(&child, &vm), 0);
    assert_int_equal(child.pages, vm.pages);
    assert_int_equal(before - page_free_count(), 2); /* the two owned pages, no more */
    assert_int_equal(arch_as_lookup(&child.as, (uint64_t)va, 0), 0);
    assert_int_equal(arch_as_lookup(&child.as, (uint64_t)va2, 0), 0);
    assert_int_equal(arch_as_lookup(&vm.as, (uint64_t)va, 0), dev);
    char buf[2];
    assert_int_equal(copy_from_user(&child, buf, X + P, 2), 0);
    vm_destroy(&child);
    assert_int_equal(page_free_count(), before);
    assert_int_equal(vm_unmap_phys(&vm, (uint64_t)va, P), 0);
    assert_int_equal(vm_unmap_phys(&vm, (uint64_t)va2, P), 0);
    page_free(dev);
    page_free(dev2);
}

#define T_(f) cmocka_unit_test_setup_teardown(f, test_setup, test_teardown)

/* The longest run of page-table entries written with interrupts masked during `what`. */
#define MASKED_RUN(what)                                                                           \
    ({                                                                                             \
        fake.pte_writes_masked_max = 0;                                                            \
        what;                                                                                      \
        fake.pte_writes_masked_max;                                                                \
    })

/* HRD-25 (issue 20, item 6): a change of an address space writes at most VM_STEP_PAGES
 * page-table entries (an mprotect: two per page) or copies VM_COPY_STEP_PAGES pages with
 * interrupts masked before it unmasks them: mmap, MAP_FIXED over it, mprotect, fork's copy,
 * munmap, brk and a device region of 200 pages.  Before the fix each wrote all of its entries in
 * one hold of the address-space lock with interrupts masked (a 1 GiB mmap: 262,144, about 200 ms).
 */
static void hrd25_changes_work_in_bounded_steps(TEST_STATE)
{
    enum { N = 200 };
    long a;
    unsigned run = MASKED_RUN(a = vm_mmap(&vm, 0, N * P, RW, ANON, -1, 0));
    assert_true(a > 0);
    assert_in_range(run, 1, VM_STEP_PAGES);
    run = MASKED_RUN(
        assert_int_equal(vm_mmap(&vm, (uint64_t)a, N * P, RW, ANON | MAP_FIXED, -1, 0), a));
    assert_in_range(run, 1, VM_STEP_PAGES);
    run = MASKED_RUN(assert_int_equal(vm_mprotect(&vm, (uint64_t)a, N * P, PROT_READ), 0));
    assert_in_range(run, 1, 2 * VM_STEP_PAGES);
    struct vm child;
    memset(&child, 0, sizeof(child));
    assert_int_equal(vm_init(&child), 0);
    run = MASKED_RUN(assert_int_equal(vm_copy(&child, &vm), 0));
    assert_in_range(run, 1, VM_COPY_STEP_PAGES);
    assert_int_equal(child.pages, N);
    vm_destroy(&child);
    run = MASKED_RUN(assert_int_equal(vm_munmap(&vm, (uint64_t)a, N * P), 0));
    assert_in_range(run, 1, VM_STEP_PAGES);
    run = MASKED_RUN(assert_int_equal(vm_brk(&vm, BRK0 + N * P), BRK0 + N * P));
    assert_in_range(run, 1, VM_STEP_PAGES);
    run = MASKED_RUN(assert_int_equal(vm_brk(&vm, BRK0), BRK0));
    assert_in_range(run, 1, VM_STEP_PAGES);
    long d; /* a device's DMA region: pages the vm does not own */
    run = MASKED_RUN(d = vm_map_phys(&vm, 0x80000000, N, RW, false));
    assert_true(d > 0);
    assert_in_range(run, 1, VM_STEP_PAGES);
    run = MASKED_RUN(assert_int_equal(vm_unmap_phys(&vm, (uint64_t)d, N * P), 0));
    assert_in_range(run, 1, VM_STEP_PAGES);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        T_(vm01_init),
        T_(vm02_map_region),
        T_(vm03_map_region_errors),
        T_(vm04_map_failure_rolls_back),
        T_(vm05_out_of_pages),
        T_(vm10_mmap_top_down),
        T_(vm11_mmap_ignores_stack),
        T_(vm12_mmap_keeps_heap_room),
        T_(vm13_mmap_keeps_heap_room_above_image),
        T_(vm14_map_fixed_replaces),
        T_(vm15_mmap_refusals),
        T_(new01_prot_none_reserves),
        T_(new02_prot_none_fill_failure),
        T_(vm16_mmap_more_than_free),
        T_(vm20_munmap_middle),
        T_(vm21_munmap_start),
        T_(vm22_munmap_end),
        T_(vm23_munmap_across_regions),
        T_(vm24_munmap_whole_and_nothing),
        T_(vm25_munmap_errors),
        T_(vm26_refused_unmap_changes_nothing),
        T_(vm27_munmap_huge_range_walks_regions),
        T_(vm28_munmap_frees_after_the_lock_at_once),
        T_(vm29_mmap_takes_pages_in_batches),
        T_(vm30_brk_grow_shrink),
        T_(vm31_brk_limits),
        T_(vm32_brk_out_of_memory),
        T_(vm33_brk_blocked_by_mapping),
        T_(vm34_brk_page_by_page_is_one_region),
        T_(vm40_copy_round_trip),
        T_(vm41_copy_unmapped),
        T_(vm42_copy_permissions),
        T_(vm43_copy_bad_addresses),
        T_(vm44_zero_length),
        T_(vm45_strncpy_from_user),
        T_(vm46_write_initial),
        T_(vm50_destroy_returns_everything),
        T_(vm51_destroy_frees_at_once),
        T_(vm52_stack_populated_on_touch),
        T_(vm53_stack_copy_and_unmap),
        T_(vm60_fork_copies_regions),
        T_(vm61_fork_skips_device_regions),
        T_(vm62_copy_leaves_device_regions),
        T_(hrd25_changes_work_in_bounded_steps),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
