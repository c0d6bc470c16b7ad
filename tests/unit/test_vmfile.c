/* SPDX-License-Identifier: MIT */
/*
 * test_vmfile.c — host unit tests of file mappings in kernel/mm/vm.c (vm_mmap_file and what
 * every other call does with a file's region), over the fake arch.
 *
 * The "file" is a fake vm_object with counted references and a few pages of its own; each
 * test checks which pages are mapped where, that a shared region's pages are never freed by
 * the address space and a private one's always are, that every reference taken is given back
 * (and never under the address space's lock), and, in the teardown, that no page leaked.
 * MAP-1n: mapping; MAP-2n: unmapping and splits; MAP-3n: protection, advice, fork, teardown.
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
#include "kernel/vm.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_syscall.h"
#include "fake.h"
#include "fixture.h"

#define TEST_STATE void **state __attribute__((unused))

#define P          ((uint64_t)PAGE_SIZE)
#define POOL_PAGES 512
#define BRK0       0x500000ull
#define X          0x10000000ull
#define RW         (PROT_READ | PROT_WRITE)
#define NPAGES     8

static struct vm vm;
static size_t free0;

/* The fake file: NPAGES pages of its own, and its references counted. */
struct fake_file {
    struct vm_object obj;
    paddr_t page[NPAGES];
    int refs, shared_refs;
    int puts_under_lock; /* a put while vm.lock was held: never allowed */
};

static struct fake_file file;

static void file_get(struct vm_object *o, bool shared)
{
    struct fake_file *f = container_of(o, struct fake_file, obj);
    f->refs++;
    f->shared_refs += shared;
}

static void file_put(struct vm_object *o, bool shared)
{
    struct fake_file *f = container_of(o, struct fake_file, obj);
    f->puts_under_lock += spin_is_locked(&vm.lock) != 0;
    f->refs--;
    f->shared_refs -= shared;
}

static const struct vm_object_ops file_ops = {.get = file_get, .put = file_put};

static int group_setup(void **state)
{
    return fixture_pages_and_cpu0(POOL_PAGES) ? 0 : -1;
}

static int test_setup(void **state)
{
    fake_reset();
    memset(&vm, 0, sizeof(vm));
    assert_int_equal(vm_init(&vm), 0);
    vm.brk_start = vm.brk = BRK0;
    free0 = page_free_count();
    memset(&file, 0, sizeof(file));
    file.obj.ops = &file_ops;
    for (int i = 0; i < NPAGES; i++) {
        file.page[i] = page_alloc();
        assert_true(file.page[i] != 0);
        memset(phys_to_virt(file.page[i]), 'a' + i, PAGE_SIZE);
    }
    return 0;
}

static int test_teardown(void **state)
{
    vm_destroy(&vm);
    int bad = file.refs != 0 || file.shared_refs != 0 || file.puts_under_lock != 0;
    for (int i = 0; i < NPAGES; i++) {
        page_free(file.page[i]); /* still there to free: the mappings never freed them */
    }
    if (bad || page_free_count() != free0 || fake.mapped_pages != 0) {
        fprintf(stderr, "refs %d shared %d puts under lock %d; %zu free pages, %zu at the start\n",
                file.refs, file.shared_refs, file.puts_under_lock, page_free_count(), free0);
        return -1;
    }
    return 0;
}

/* Map n pages of the fake file from page `first`: shared (its own pages) or private (fresh
 * copies).  The caller's reference, taken here, passes to the region. */
static long map_file(uint64_t addr, unsigned n, unsigned first, unsigned prot, unsigned flags,
                     bool shared, unsigned denied)
{
    struct vm_pagevec pv;
    assert_int_equal(vm_pagevec_init(&pv, n), 0);
    for (unsigned i = 0; i < n; i++) {
        paddr_t pa = shared ? file.page[first + i] : page_alloc();
        if (!shared) {
            memcpy(phys_to_virt(pa), phys_to_virt(file.page[first + i]), PAGE_SIZE);
        }
        *vm_pagevec_slot(&pv, i) = pa;
    }
    file_get(&file.obj, shared);
    struct vm_file_map m = {&file.obj, first, denied, shared, &pv};
    long r = vm_mmap_file(&vm, addr, n * P, prot, flags, &m);
    if (r < 0) {
        file_put(&file.obj, shared);
    }
    vm_pagevec_fini(&pv, r < 0 && !shared);
    return r;
}

static struct vma *region_at(uint64_t va)
{
    list_for_each(pos, &vm.vmas) {
        struct vma *v = container_of(pos, struct vma, link);
        if (v->start <= va && va < v->end) {
            return v;
        }
    }
    return NULL;
}

static char byte_at(uint64_t va)
{
    char c = 0;
    assert_int_equal(copy_from_user(&vm, &c, va, 1), 0);
    return c;
}

/* MAP-10: a shared file mapping maps the file's own pages in order, at the address asked
 * (MAP_FIXED) or one mmap picks, as one VMA_SHARED region holding the file once; the address
 * space does not count them as its own */
static void map10_shared_maps_the_files_pages(TEST_STATE)
{
    assert_int_equal(map_file(X, 4, 2, RW, MAP_SHARED | MAP_FIXED, true, 0), (long)X);
    for (unsigned i = 0; i < 4; i++) {
        unsigned prot;
        assert_int_equal(arch_as_lookup(&vm.as, X + i * P, &prot), file.page[2 + i]);
        assert_int_equal(prot, RW);
    }
    struct vma *v = region_at(X);
    assert_non_null(v);
    assert_int_equal(v->kind, VMA_SHARED);
    assert_int_equal(v->pgoff, 2);
    assert_int_equal(v->end, X + 4 * P);
    assert_int_equal(file.refs, 1);
    assert_int_equal(file.shared_refs, 1);
    assert_int_equal(vm.pages, 0);
    long a = map_file(0, 1, 0, PROT_READ, MAP_SHARED, true, PROT_WRITE);
    assert_true(a > 0 && (uint64_t)a < USER_MMAP_TOP);
    assert_int_equal(byte_at((uint64_t)a), 'a');
    assert_int_equal(file.refs, 2);
}

/* MAP-11: a private file mapping's pages are the address space's own: counted, and freed by
 * munmap (every page back), while the file is held until then */
static void map11_private_pages_are_owned(TEST_STATE)
{
    size_t before = page_free_count();
    assert_int_equal(map_file(X, 3, 1, RW, MAP_PRIVATE | MAP_FIXED, false, 0), (long)X);
    assert_int_equal(vm.pages, 3);
    assert_int_equal(region_at(X)->kind, VMA_MMAP);
    assert_int_equal(byte_at(X + 2 * P), 'd');
    assert_true(arch_as_lookup(&vm.as, X, NULL) != file.page[1]);
    assert_int_equal(file.refs, 1);
    assert_int_equal(file.shared_refs, 0);
    assert_int_equal(vm_munmap(&vm, X, 3 * P), 0);
    assert_int_equal(file.refs, 0);
    assert_int_equal(vm.pages, 0);
    assert_int_equal(page_free_count(), before);
}

/* MAP-12: refusals change nothing: bad arguments (W^X, neither shared nor private, an
 * unaligned or kernel MAP_FIXED address), a page vector of the wrong length */
static void map12_refusals(TEST_STATE)
{
    size_t before = page_free_count();
    assert_int_equal(map_file(X, 1, 0, RW | PROT_EXEC, MAP_SHARED | MAP_FIXED, true, 0), -EINVAL);
    assert_int_equal(map_file(X, 1, 0, RW, MAP_FIXED, true, 0), -EINVAL);
    assert_int_equal(map_file(X + 8, 1, 0, RW, MAP_SHARED | MAP_FIXED, true, 0), -EINVAL);
    assert_int_equal(map_file(USER_VA_TOP, 1, 0, RW, MAP_PRIVATE | MAP_FIXED, false, 0), -EINVAL);
    struct vm_pagevec pv;
    assert_int_equal(vm_pagevec_init(&pv, 2), 0);
    *vm_pagevec_slot(&pv, 0) = file.page[0];
    *vm_pagevec_slot(&pv, 1) = file.page[1];
    struct vm_file_map m = {&file.obj, 0, 0, true, &pv};
    assert_int_equal(vm_mmap_file(&vm, X, 3 * P, RW, MAP_SHARED | MAP_FIXED, &m), -EINVAL);
    vm_pagevec_fini(&pv, false);
    assert_int_equal(vm_pagevec_init(&pv, VM_PAGEVEC_MAX + 1), -ENOMEM);
    assert_true(list_empty(&vm.vmas));
    assert_int_equal(file.refs, 0);
    assert_int_equal(page_free_count(), before);
}

/* MAP-20: munmap of a shared mapping unmaps the file's pages without freeing them; a hole in
 * the middle leaves two regions, each holding the file, the second at the right file page;
 * cutting the start moves the region's file page too */
static void map20_unmap_and_split(TEST_STATE)
{
    size_t before = page_free_count();
    assert_int_equal(map_file(X, 6, 1, RW, MAP_SHARED | MAP_FIXED, true, 0), (long)X);
    assert_int_equal(vm_munmap(&vm, X + 2 * P, P), 0); /* file page 3 */
    assert_int_equal(file.refs, 2);
    assert_int_equal(file.shared_refs, 2);
    struct vma *hi = region_at(X + 3 * P);
    assert_non_null(hi);
    assert_int_equal(hi->start, X + 3 * P);
    assert_int_equal(hi->pgoff, 4);
    assert_int_equal(region_at(X)->pgoff, 1);
    assert_null(region_at(X + 2 * P));
    assert_int_equal(vm_munmap(&vm, X + 3 * P, P), 0); /* the start of the high one */
    assert_int_equal(hi->start, X + 4 * P);
    assert_int_equal(hi->pgoff, 5);
    assert_int_equal(byte_at(X + 4 * P), 'f');
    assert_int_equal(vm_munmap(&vm, X, 6 * P), 0);
    assert_int_equal(file.refs, 0);
    assert_int_equal(file.puts_under_lock, 0);
    assert_true(list_empty(&vm.vmas));
    assert_int_equal(fake.mapped_pages, 0);
    assert_int_equal(page_free_count(), before); /* the file's pages were not freed */
    for (int i = 0; i < NPAGES; i++) {
        assert_int_equal(*(char *)phys_to_virt(file.page[i]), 'a' + i); /* nor zeroed */
    }
}

/* MAP-21: MAP_FIXED over a shared mapping (anonymous or another file mapping) releases it;
 * an anonymous region next to a file region never merges into it */
static void map21_fixed_over_and_no_merge(TEST_STATE)
{
    assert_int_equal(map_file(X, 2, 0, RW, MAP_SHARED | MAP_FIXED, true, 0), (long)X);
    assert_int_equal(vm_mmap(&vm, X, P, RW, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
                     (long)X);
    assert_int_equal(file.refs, 1); /* the remaining page's region */
    assert_int_equal(region_at(X)->kind, VMA_MMAP);
    assert_null(region_at(X)->obj);
    assert_int_equal(region_at(X + P)->pgoff, 1);
    assert_int_equal(map_file(X + 2 * P, 1, 5, RW, MAP_PRIVATE | MAP_FIXED, false, 0),
                     (long)(X + 2 * P));
    assert_int_equal(vm_mmap(&vm, X + 3 * P, P, RW, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
                     (long)(X + 3 * P));
    assert_int_equal(region_at(X + 2 * P)->end, X + 3 * P); /* not grown by the anonymous page */
    assert_null(region_at(X + 3 * P)->obj);
    assert_int_equal(map_file(X, 4, 0, RW, MAP_SHARED | MAP_FIXED, true, 0), (long)X);
    assert_int_equal(file.refs, 1);
    assert_int_equal(file.puts_under_lock, 0);
}

/* MAP-30: mprotect never adds what a region denies (PROT_WRITE on a shared mapping of a file
 * opened read-only: -EACCES, nothing changed); a split by mprotect holds the file twice */
static void map30_protect(TEST_STATE)
{
    assert_int_equal(map_file(X, 2, 0, PROT_READ, MAP_SHARED | MAP_FIXED, true, PROT_WRITE),
                     (long)X);
    assert_int_equal(vm_mprotect(&vm, X, 2 * P, RW), -EACCES);
    unsigned prot;
    assert_true(arch_as_lookup(&vm.as, X, &prot) != 0);
    assert_int_equal(prot, PROT_READ);
    assert_int_equal(vm_mprotect(&vm, X + P, P, PROT_NONE), 0);
    assert_int_equal(file.refs, 2);
    assert_int_equal(region_at(X + P)->pgoff, 1);
    assert_int_equal(region_at(X + P)->denied, PROT_WRITE);
    assert_int_equal(vm_mprotect(&vm, X + P, P, PROT_READ | PROT_EXEC), 0);
    assert_int_equal(map_file(X + 4 * P, 1, 0, PROT_READ, MAP_PRIVATE | MAP_FIXED, false, 0),
                     (long)(X + 4 * P));
    assert_int_equal(vm_mprotect(&vm, X + 4 * P, P, RW), 0); /* a private copy may be written */
}

/* MAP-31: madvise(MADV_DONTNEED) zeroes anonymous memory but leaves a file's pages, shared
 * or private, as they are */
static void map31_dontneed(TEST_STATE)
{
    assert_int_equal(map_file(X, 1, 0, RW, MAP_SHARED | MAP_FIXED, true, 0), (long)X);
    assert_int_equal(map_file(X + P, 1, 1, RW, MAP_PRIVATE | MAP_FIXED, false, 0), (long)(X + P));
    assert_int_equal(vm_mmap(&vm, X + 2 * P, P, RW, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
                     (long)(X + 2 * P));
    assert_int_equal(copy_to_user(&vm, X + 2 * P, "z", 1), 0);
    assert_int_equal(vm_madvise_dontneed(&vm, X, 3 * P), 0);
    assert_int_equal(byte_at(X), 'a');
    assert_int_equal(byte_at(X + P), 'b');
    assert_int_equal(byte_at(X + 2 * P), 0);
}

/* MAP-32: fork's copy maps the same pages of a shared file mapping in the child (a store in
 * one is seen by the other) and copies a private one; each child region holds the file;
 * destroying the child gives those references back and frees only its private copies */
static void map32_fork_shares(TEST_STATE)
{
    assert_int_equal(map_file(X, 2, 0, RW, MAP_SHARED | MAP_FIXED, true, 0), (long)X);
    assert_int_equal(map_file(X + 2 * P, 1, 3, RW, MAP_PRIVATE | MAP_FIXED, false, 0),
                     (long)(X + 2 * P));
    struct vm child;
    memset(&child, 0, sizeof(child));
    assert_int_equal(vm_init(&child), 0);
    size_t before = page_free_count();
    assert_int_equal(vm_copy(&child, &vm), 0);
    assert_int_equal(file.refs, 4);
    assert_int_equal(file.shared_refs, 2);
    assert_int_equal(arch_as_lookup(&child.as, X + P, NULL), file.page[1]);
    assert_true(arch_as_lookup(&child.as, X + 2 * P, NULL) !=
                arch_as_lookup(&vm.as, X + 2 * P, NULL));
    assert_int_equal(copy_to_user(&child, X + P, "C", 1), 0);
    assert_int_equal(byte_at(X + P), 'C');
    assert_int_equal(copy_to_user(&child, X + 2 * P, "P", 1), 0);
    assert_int_equal(byte_at(X + 2 * P), 'd');
    vm_destroy(&child);
    assert_int_equal(file.refs, 2);
    assert_int_equal(file.shared_refs, 1);
    assert_int_equal(page_free_count(), before);
}

/* MAP-33: vm_destroy (exit, execve) gives back every reference, frees the private copies and
 * leaves the file's own pages (the teardown checks the pages) */
static void map33_destroy(TEST_STATE)
{
    assert_int_equal(map_file(X, 3, 0, RW, MAP_SHARED | MAP_FIXED, true, 0), (long)X);
    assert_int_equal(map_file(X + 4 * P, 3, 2, RW, MAP_PRIVATE | MAP_FIXED, false, 0),
                     (long)(X + 4 * P));
    assert_int_equal(vm_munmap(&vm, X + P, P), 0);
    assert_int_equal(file.refs, 3);
    vm_destroy(&vm);
    assert_int_equal(file.refs, 0);
    assert_int_equal(file.puts_under_lock, 0);
    assert_int_equal(vm_init(&vm), 0); /* for the teardown */
}

#define T_(f) cmocka_unit_test_setup_teardown(f, test_setup, test_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T_(map10_shared_maps_the_files_pages),
        T_(map11_private_pages_are_owned),
        T_(map12_refusals),
        T_(map20_unmap_and_split),
        T_(map21_fixed_over_and_no_merge),
        T_(map30_protect),
        T_(map31_dontneed),
        T_(map32_fork_shares),
        T_(map33_destroy),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
