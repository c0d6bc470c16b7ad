/* SPDX-License-Identifier: MIT */
/*
 * vm.c — user address spaces (contract in include/kernel/vm.h).
 *
 * A region (struct vma) is created fully populated (the stack: its top part; below it a page
 * is populated by stack_fault_in_locked when first touched by the task or copied to by the
 * kernel; an mmap with PROT_NONE reserves address space only, and mprotect populates its
 * pages when it makes them accessible, so only a PROT_NONE region has holes) and removed
 * fully unmapped: the page tables hold only pages of the regions, and a
 * table left empty by an unmap is freed at once (arch_as_trim).  mmap places regions top-down below
 * USER_MMAP_TOP in the first gap that fits; MAP_FIXED replaces whatever was there.  munmap may cut
 * a region in pieces; adjacent anonymous regions with the same protection are one region (brk grown
 * a page at a time stays one heap region).  A page is only ever read or written by the kernel
 * under vm->lock, so a concurrent munmap in another thread can never free a page while the
 * kernel copies through it.
 *
 * Every change checks everything first (range, the kernel's own pages, memory for the
 * region records, the pages themselves) and then acts, so a refused call changes nothing.
 * New pages are allocated and zeroed before any lock is taken, with interrupts enabled,
 * checking for a fatal signal every POPULATE_BATCH pages.
 *
 * Two locks.  vm->map_lock serialises the changes of one address space (mmap, munmap, brk,
 * mprotect, madvise, fork's copy, device and file maps): it is taken with interrupts enabled
 * (no interrupt handler takes it; lockrank.h), and held across a whole change, so the region
 * records cannot change under a change that works in steps.  vm->lock guards the page
 * tables, the records and the counts, and every user copy; it is taken with IRQs masked
 * (code that IRQ handlers interrupt takes it inside wait-queue locks and proc_lock, so
 * holding it with IRQs enabled could deadlock against a timer callback), so everything
 * done under it is bounded (issue 20, item 6: a 1 GiB mmap wrote 262,144 entries in one hold,
 * about 200 ms without an interrupt):
 *   - page-table entries are written, changed, looked up or cleared VM_STEP_PAGES (64) at a
 *     time, a range's tables trimmed with its last step (measured rate under TCG: 0.76 us a
 *     page, so about 50 us a hold);
 *   - pages are copied (fork) or zeroed (madvise) VM_COPY_STEP_PAGES (8) at a time (about
 *     15-23 us a page under TCG: under 200 us a hold);
 *   - a user copy holds it for one page at a time;
 *   - the region records are walked whole (at most one record per mapping the process made).
 * Between two steps interrupts are taken, and a change that may be cut short (a mapping,
 * a fork's copy) looks for a fatal signal and undoes what it did.  While an unmap clears a
 * range step by step, `busy_start..busy_end` tells the stack's first-touch population to
 * leave that range alone.  A device's window and DMA region, a file's pages and the holes
 * mprotect fills in a PROT_NONE reservation are mapped and unmapped in steps too; the
 * kernel's pages (a few) in one hold.
 * The pages an unmap takes out are collected and given back after the last step, all at
 * once (page_free_list): freeing them one by one under the lock queued on the allocator's
 * lock once per page with interrupts masked, which on a loaded emulation host left CPUs deaf
 * to interrupts for seconds (docs/security.md, "What the fuzzer found").  A stack page
 * populated on first touch is one page, allocated and zeroed under vm->lock (a few hundred
 * instructions with IRQs masked, mostly from this CPU's cache).
 *
 * Regions whose pages the address space does not own (VMA_KERNEL: the counters; VMA_DEVICE:
 * a claimed device's registers and DMA region, kernel/dev/device.c) are unmapped without being
 * freed and cannot be munmapped; the user copies never go through device registers
 * (ARCH_PROT_DEVICE).  A shared mapping of a file (VMA_SHARED) does not own its pages either,
 * but is unmapped like any region: its pages are the file's.  A file region, shared or a
 * private copy, holds a reference on its file (struct vm_object), taken for every record that
 * shows it (a split, a fork's copy) and given back for every record removed; since giving it
 * back may take the file system's lock, an unmap collects the records with its freed pages and
 * drops them after the address-space locks (list_free).
 */
#include "kernel/vm.h"
#include "kernel/kmem.h"
#include "kernel/lib.h"
#include "kernel/page.h"
#include "kernel/signal.h"
#include "kernel/task.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_syscall.h"

#define PAGE_MASK      ((uint64_t)PAGE_SIZE - 1)
#define POPULATE_BATCH 64 /* pages between two looks for a fatal signal */

static uint64_t page_round_up(uint64_t v)
{
    return (v + PAGE_MASK) & ~PAGE_MASK;
}

int vm_init(struct vm *vm)
{
    spin_lock_init(&vm->lock, LOCK_VM);
    spin_lock_init(&vm->map_lock, LOCK_VM_MAP);
    vm->busy_start = vm->busy_end = 0;
    list_init(&vm->vmas);
    vm->pages = 0;
    vm->nregions = 0;
    vm->stack_partial = false;
    vm->users = 1;
    return arch_as_init(&vm->as);
}

struct vm *vm_create(void)
{
    struct vm *vm = kmem_alloc(sizeof(*vm));
    if (vm && vm_init(vm) != 0) {
        kmem_free(vm, sizeof(*vm));
        vm = 0;
    }
    return vm;
}

void vm_get(struct vm *vm)
{
    ASSERT(__atomic_load_n(&vm->users, __ATOMIC_RELAXED) > 0);
    __atomic_add_fetch(&vm->users, 1, __ATOMIC_RELAXED);
}

void vm_put(struct vm *vm)
{
    unsigned left = __atomic_sub_fetch(&vm->users, 1, __ATOMIC_ACQ_REL);
    ASSERT(left + 1 > 0); /* no put without its get */
    if (left == 0) {
        vm_destroy(vm);
        kmem_free(vm, sizeof(*vm));
    }
}

/* Put v into the sorted region list before `pos` (lock held) / take it out (lock held, or the
 * vm is no one's any more: vm_destroy). */
static void vma_link(struct vm *vm, struct vma *v, struct list *pos)
{
    ASSERT_HELD(&vm->lock);
    ASSERT(v->start < v->end && !((v->start | v->end) & PAGE_MASK));
    /* the list stays sorted, its regions disjoint */
    ASSERT(pos == &vm->vmas || container_of(pos, struct vma, link)->start >= v->end);
    ASSERT(pos->prev == &vm->vmas || container_of(pos->prev, struct vma, link)->end <= v->start);
    list_insert_between(&v->link, pos->prev, pos);
    __atomic_store_n(&vm->nregions, vm->nregions + 1, __ATOMIC_RELAXED);
}

static void vma_unlink(struct vm *vm, struct vma *v)
{
    ASSERT(vm->nregions > 0 && !list_empty(&v->link)); /* v is on the list */
    list_del(&v->link);
    __atomic_store_n(&vm->nregions, vm->nregions - 1, __ATOMIC_RELAXED);
}

/* Pages linked through their first word: fresh zeroed pages for a new region (taken before
 * the lock), or pages an unmap took out of the address space (freed after the lock), and the
 * records of file regions an unmap removed (linked through link.next), whose objects are put
 * after the lock too (their put may take the file system's lock). */
struct page_list {
    paddr_t head;
    size_t n;
    struct vma *dead;
};

static void list_push(struct page_list *l, paddr_t pa)
{
    ASSERT(pa && !(pa & PAGE_MASK));
    *(uint64_t *)phys_to_virt(pa) = (uint64_t)l->head;
    l->head = pa;
    l->n++;
}

/* Drop the region's reference on its file and free the record (no lock held). */
static void vma_free(struct vma *v)
{
    if (v->obj) {
        v->obj->ops->put(v->obj, v->kind == VMA_SHARED);
    }
    kmem_free(v, sizeof(*v));
}

/* A record an unmap removed (lock held): freed now, or, holding a file, after the lock. */
static void vma_retire(struct vma *v, struct page_list *l)
{
    if (!v->obj) {
        kmem_free(v, sizeof(*v));
        return;
    }
    v->link.next = (struct list *)l->dead;
    l->dead = v;
}

/* Give every page of l back, with one acquisition of the allocator's lock, and the records
 * it holds with their files. */
static void list_free(struct page_list *l)
{
    page_free_list(l->head, l->n);
    for (struct vma *v = l->dead, *next; v; v = next) {
        next = (struct vma *)v->link.next;
        vma_free(v);
    }
    *l = (struct page_list){0};
}

struct unmap_ctx {
    struct vm *vm;
    struct page_list *freed;
};

/* A page the TLB no longer holds: it joins the caller's list (freed once the lock is
 * released, so the lock is never held while the allocator's lock is queued for). */
static void collect_unmapped(paddr_t pa, void *ctx)
{
    struct unmap_ctx *u = ctx;
    ASSERT(u->vm->pages > 0); /* every page mapped in a region was counted */
    list_push(u->freed, pa);
    u->vm->pages--;
}

static void unmap_pages(struct vm *vm, uint64_t start, uint64_t end, struct page_list *freed)
{
    struct unmap_ctx u = {vm, freed};
    arch_as_unmap_range(&vm->as, start, end, collect_unmapped, &u);
}

/* Are the region's pages the address space's own (freed when unmapped)? */
static bool vma_owns_pages(const struct vma *v)
{
    return v->kind != VMA_KERNEL && v->kind != VMA_DEVICE && v->kind != VMA_SHARED;
}

/* Unmap the pages of a region the vm does not own without freeing them (lock held, or the vm
 * is no one's any more: vm_destroy). */
static void unmap_kernel_pages(struct vm *vm, uint64_t start, uint64_t end)
{
    for (uint64_t va = start; va < end; va += PAGE_SIZE) {
        arch_as_unmap(&vm->as, va);
    }
}

/* Is the caller being killed (between two steps of a long change)? */
static bool must_stop(void)
{
    struct task *t = current();
    return t && signal_fatal_pending(t);
}

/* Where a step that starts at va ends: `per` pages on, or at `end`. */
static uint64_t step_end(uint64_t va, uint64_t end, unsigned per)
{
    return end - va > (uint64_t)per * PAGE_SIZE ? va + (uint64_t)per * PAGE_SIZE : end;
}

/* Unmap [start, end), VM_STEP_PAGES entries per hold of vm->lock, each step's tables trimmed
 * when left empty; the pages join `freed` (map_lock held, or the space is the caller's
 * alone). */
static void unmap_steps(struct vm *vm, uint64_t start, uint64_t end, struct page_list *freed)
{
    for (uint64_t va = start; va < end;) {
        uint64_t to = step_end(va, end, VM_STEP_PAGES);
        unsigned long irq = spin_lock_irqsave(&vm->lock);
        unmap_pages(vm, va, to, freed);
        arch_as_trim(&vm->as, va, to);
        spin_unlock_irqrestore(&vm->lock, irq);
        va = to;
    }
}

/* Unmap [start, end) of pages the vm does not own, VM_STEP_PAGES per hold of vm->lock, the
 * tables left empty trimmed (map_lock held). */
static void unmap_kernel_steps(struct vm *vm, uint64_t start, uint64_t end)
{
    for (uint64_t va = start; va < end;) {
        uint64_t to = step_end(va, end, VM_STEP_PAGES);
        unsigned long irq = spin_lock_irqsave(&vm->lock);
        unmap_kernel_pages(vm, va, to);
        arch_as_trim(&vm->as, va, to);
        spin_unlock_irqrestore(&vm->lock, irq);
        va = to;
    }
}

void vm_destroy(struct vm *vm)
{
    struct page_list freed = {0};
    list_for_each_safe(pos, tmp, &vm->vmas) {
        struct vma *v = container_of(pos, struct vma, link);
        if (!vma_owns_pages(v)) {
            unmap_kernel_pages(vm, v->start, v->end);
        } else {
            unmap_pages(vm, v->start, v->end, &freed);
        }
        vma_unlink(vm, v);
        vma_free(v); /* no lock held here: a file's put may run */
    }
    ASSERT(vm->pages == 0 && vm->nregions == 0); /* pages exist only inside regions */
    arch_as_destroy(&vm->as);
    list_free(&freed); /* all at once: the worker that runs a teardown is not preempted */
}

/* The first region ending above `addr`, or the list head (lock held). */
static struct list *first_after(struct vm *vm, uint64_t addr)
{
    ASSERT_HELD(&vm->lock);
    list_for_each(pos, &vm->vmas) {
        if (container_of(pos, struct vma, link)->end > addr) {
            return pos;
        }
    }
    return &vm->vmas;
}

static bool range_is_free(struct vm *vm, uint64_t start, uint64_t end)
{
    struct list *pos = first_after(vm, start);
    return pos == &vm->vmas || container_of(pos, struct vma, link)->start >= end;
}

/* ---- pages for a new region, taken before the lock ---- */

static paddr_t list_pop(struct page_list *l)
{
    ASSERT(l->n > 0 && l->head);
    paddr_t pa = l->head;
    uint64_t *first = phys_to_virt(pa);
    l->head = (paddr_t)*first;
    *first = 0; /* the page is zeroed again */
    l->n--;
    return pa;
}

/* Take n pages: 0, -ENOMEM (more than is free: nothing taken) or -EINTR (a fatal signal
 * arrived: what was taken is given back). */
static int list_fill(struct page_list *l, size_t n)
{
    *l = (struct page_list){0};
    if (!page_have_free(n)) {
        page_drain_all(); /* memory is short: ask the CPUs' caches back, as page_alloc does */
        return -ENOMEM;   /* and fail at once: populating then undoing took seconds */
    }
    while (l->n < n) {
        if (l->n % POPULATE_BATCH == 0 && l->n && signal_fatal_pending(current())) {
            list_free(l);
            return -EINTR;
        }
        paddr_t pa = page_alloc();
        if (!pa) {
            list_free(l);
            return -ENOMEM;
        }
        list_push(l, pa);
    }
    return 0;
}

/* Can a region [start, end) of this kind and prot extend v (same record)? */
static bool can_merge(const struct vma *v, unsigned prot, enum vma_kind kind)
{
    return v->prot == prot && v->kind == kind && (kind == VMA_HEAP || kind == VMA_MMAP) &&
           !v->obj && !v->denied; /* never into a file's region */
}

/* Record the mapped range [start, end) as a region, merged with a neighbour when it can
 * be; `spare` is a record for a new region (consumed, or freed). */
static void add_region(struct vm *vm, uint64_t start, uint64_t end, unsigned prot,
                       enum vma_kind kind, struct vma *spare)
{
    struct list *pos = first_after(vm, start);
    struct vma *next = pos != &vm->vmas ? container_of(pos, struct vma, link) : 0;
    struct vma *prev = pos->prev != &vm->vmas ? container_of(pos->prev, struct vma, link) : 0;
    ASSERT((!prev || prev->end <= start) && (!next || next->start >= end)); /* a free range */
    if (prev && prev->end == start && can_merge(prev, prot, kind)) {
        prev->end = end;
        if (next && next->start == end && can_merge(next, prot, kind)) {
            prev->end = next->end;
            vma_unlink(vm, next);
            kmem_free(next, sizeof(*next));
        }
        kmem_free(spare, sizeof(*spare));
        return;
    }
    if (next && next->start == end && can_merge(next, prot, kind)) {
        next->start = start;
        kmem_free(spare, sizeof(*spare));
        return;
    }
    *spare = (struct vma){.start = start, .end = end, .prot = prot, .kind = kind};
    vma_link(vm, spare, pos);
}

/* Map the pages of `l` at [start, end) (map_lock held, no region there), VM_STEP_PAGES per
 * hold of vm->lock.  No memory for a page table (-ENOMEM), or a fatal signal between two
 * steps (-EINTR, `interruptible` only), unmaps what was mapped: nothing stays, every page is
 * back in `l` for the caller to free. */
static int map_steps(struct vm *vm, uint64_t start, uint64_t end, unsigned prot,
                     struct page_list *l, bool interruptible)
{
    ASSERT(start < end && l->n >= (end - start) / PAGE_SIZE);
    uint64_t va = start;
    int r = 0;
    while (va < end && r == 0) {
        if (interruptible && va > start && must_stop()) {
            r = -EINTR;
            break;
        }
        uint64_t to = step_end(va, end, VM_STEP_PAGES);
        unsigned long irq = spin_lock_irqsave(&vm->lock);
        ASSERT(va > start || range_is_free(vm, start, end)); /* map_lock keeps it so */
        for (; va < to; va += PAGE_SIZE) {
            paddr_t pa = list_pop(l);
            if (arch_as_map(&vm->as, va, pa, prot) != 0) { /* rare: no page for a table */
                list_push(l, pa);
                r = -ENOMEM;
                break;
            }
            vm->pages++;
        }
        spin_unlock_irqrestore(&vm->lock, irq);
    }
    if (r) {
        unmap_steps(vm, start, va, l);
    }
    return r;
}

/* Map the pages of `l` at [start, end) as a region (map_lock held, range free), the record
 * added once every page is mapped; `spare` is consumed (or freed on failure). */
static int map_list(struct vm *vm, uint64_t start, uint64_t end, unsigned prot, enum vma_kind kind,
                    struct page_list *l, struct vma *spare)
{
    int r = map_steps(vm, start, end, prot, l, true);
    if (r) {
        kmem_free(spare, sizeof(*spare));
        return r;
    }
    unsigned long irq = spin_lock_irqsave(&vm->lock);
    add_region(vm, start, end, prot, kind, spare);
    spin_unlock_irqrestore(&vm->lock, irq);
    return 0;
}

/* Is [start, end) free of regions (map_lock held: it stays so until the caller changes it)? */
static bool range_is_free_now(struct vm *vm, uint64_t start, uint64_t end)
{
    unsigned long irq = spin_lock_irqsave(&vm->lock);
    bool r = range_is_free(vm, start, end);
    spin_unlock_irqrestore(&vm->lock, irq);
    return r;
}

/* Take the pages and the record for a region of len bytes (no lock held). */
static int prepare_region(uint64_t len, struct page_list *l, struct vma **spare)
{
    *spare = kmem_alloc(sizeof(**spare));
    if (!*spare) {
        return -ENOMEM;
    }
    int r = list_fill(l, len / PAGE_SIZE);
    if (r) {
        kmem_free(*spare, sizeof(**spare));
    }
    return r;
}

static bool range_is_valid(uint64_t start, uint64_t len)
{
    return len && (start & PAGE_MASK) == 0 && start >= PAGE_SIZE && start + len > start &&
           start + len <= USER_VA_TOP;
}

int vm_map_region(struct vm *vm, uint64_t start, uint64_t len, unsigned prot, enum vma_kind kind)
{
    len = page_round_up(len);
    if (!range_is_valid(start, len)) {
        return -EINVAL;
    }
    struct page_list l;
    struct vma *spare;
    int r = prepare_region(len, &l, &spare);
    if (r) {
        return r;
    }
    spin_lock(&vm->map_lock);
    if (range_is_free_now(vm, start, start + len)) {
        r = map_list(vm, start, start + len, prot, kind, &l, spare);
    } else {
        r = -EEXIST;
        kmem_free(spare, sizeof(*spare));
    }
    spin_unlock(&vm->map_lock);
    list_free(&l); /* what was not mapped (all of it on failure) */
    return r;
}

int vm_map_stack(struct vm *vm, uint64_t top, uint64_t size, uint64_t populated)
{
    uint64_t start = top - size, from = top - page_round_up(MIN(populated, size));
    if (!range_is_valid(start, size) || (size & PAGE_MASK) || from == top) {
        return -EINVAL;
    }
    struct page_list l;
    struct vma *spare;
    int r = prepare_region(top - from, &l, &spare);
    if (r) {
        return r;
    }
    spin_lock(&vm->map_lock);
    r = range_is_free_now(vm, start, top)
            ? map_steps(vm, from, top, PROT_READ | PROT_WRITE, &l, true)
            : -EEXIST;
    if (r == 0) {
        unsigned long irq = spin_lock_irqsave(&vm->lock);
        add_region(vm, start, top, PROT_READ | PROT_WRITE, VMA_STACK, spare);
        vm->stack_partial = from > start;
        spin_unlock_irqrestore(&vm->lock, irq);
    } else {
        kmem_free(spare, sizeof(*spare));
    }
    spin_unlock(&vm->map_lock);
    list_free(&l); /* what was not mapped (all of it on failure) */
    return r;
}

/* Page va of a VMA_STACK region, not mapped (lock held): map a fresh zeroed page there if the
 * region allows `need` (0: any).  0, -EFAULT (no such region, or not allowed) or -ENOMEM. */
static int stack_fault_in_locked(struct vm *vm, uint64_t va, unsigned need)
{
    ASSERT_HELD(&vm->lock);
    ASSERT(!(va & PAGE_MASK) && va < USER_VA_TOP);
    struct list *pos = first_after(vm, va);
    const struct vma *v = pos != &vm->vmas ? container_of(pos, struct vma, link) : 0;
    if (!v || v->kind != VMA_STACK || v->start > va || (v->prot & need) != need ||
        !(v->prot & (PROT_READ | PROT_WRITE))) {
        return -EFAULT;
    }
    if (va >= vm->busy_start && va < vm->busy_end) {
        return -EFAULT; /* an unmap is taking this range away, step by step */
    }
    paddr_t pa = page_alloc(); /* zeroed */
    if (!pa) {
        return -ENOMEM;
    }
    if (arch_as_map(&vm->as, va, pa, v->prot) != 0) {
        page_free(pa);
        return -ENOMEM;
    }
    vm->pages++;
    return 0;
}

/* lookup_locked's rare half: populate va if it is a stack page not populated yet. */
static __attribute__((noinline)) paddr_t lookup_populate_locked(struct vm *vm, uint64_t va,
                                                                unsigned *prot, unsigned need)
{
    ASSERT_HELD(&vm->lock);
    if (!vm->stack_partial || stack_fault_in_locked(vm, va, need) != 0) {
        return 0;
    }
    return arch_as_lookup(&vm->as, va, prot);
}

/* The page at va, populated first if it is a stack page not populated yet (lock held). */
static inline paddr_t lookup_locked(struct vm *vm, uint64_t va, unsigned *prot, unsigned need)
{
    ASSERT_HELD(&vm->lock);
    paddr_t pa = arch_as_lookup(&vm->as, va, prot);
    return pa ? pa : lookup_populate_locked(vm, va, prot, need);
}

int vm_fault(struct vm *vm, uint64_t addr, unsigned access)
{
    if (addr >= USER_VA_TOP) {
        return -EFAULT;
    }
    uint64_t va = addr & ~PAGE_MASK;
    unsigned prot;
    unsigned long irq = spin_lock_irqsave(&vm->lock);
    int r;
    if (arch_as_lookup(&vm->as, va, &prot)) { /* populated by another thread meanwhile? */
        struct list *pos = first_after(vm, va);
        bool stack = pos != &vm->vmas && container_of(pos, struct vma, link)->kind == VMA_STACK;
        r = stack && (prot & access) == access ? 0 : -EFAULT;
    } else {
        r = vm->stack_partial ? stack_fault_in_locked(vm, va, access) : -EFAULT;
    }
    spin_unlock_irqrestore(&vm->lock, irq);
    return r;
}

/* The highest page below `below` of an accessible VMA_STACK region that is not populated,
 * or 0 (lock held). */
static uint64_t stack_hole_locked(struct vm *vm, uint64_t below)
{
    ASSERT_HELD(&vm->lock);
    uint64_t hole = 0;
    list_for_each(pos, &vm->vmas) {
        const struct vma *v = container_of(pos, struct vma, link);
        if (v->kind != VMA_STACK || !(v->prot & (PROT_READ | PROT_WRITE))) {
            continue;
        }
        for (uint64_t va = MIN(v->end, below); va > MAX(v->start, hole);) {
            va -= PAGE_SIZE;
            if (!arch_as_lookup(&vm->as, va, 0)) {
                hole = va;
                break;
            }
        }
    }
    return hole;
}

int vm_populate_stack(struct vm *vm)
{
    if (!__atomic_load_n(&vm->stack_partial, __ATOMIC_RELAXED)) {
        return 0;
    }
    int r = 0;
    for (uint64_t va = USER_VA_TOP; va && r == 0;) {
        unsigned long irq = spin_lock_irqsave(&vm->lock); /* a page at a time: IRQs return */
        va = stack_hole_locked(vm, va);
        if (va) {
            r = stack_fault_in_locked(vm, va, 0);
        } else {
            vm->stack_partial = false;
        }
        spin_unlock_irqrestore(&vm->lock, irq);
    }
    return r;
}

/* Make `rec` the part of region v from `at` on (v itself is cut by the caller): same kind,
 * protection and file, which gains a reference for it (lock held: get is an atomic count). */
static void split_record(struct vma *rec, const struct vma *v, uint64_t at)
{
    *rec = *v;
    rec->start = at;
    rec->pgoff = v->pgoff + (at - v->start) / PAGE_SIZE;
    if (rec->obj) {
        rec->obj->ops->get(rec->obj, rec->kind == VMA_SHARED);
    }
}

/* Can [start, end) be unmapped, and with what?  Nothing of the kernel's may be in it, and
 * a hole in the middle of one region needs one more record: *split is set to a fresh one
 * then.  0, -EINVAL or -ENOMEM; nothing changed (lock held). */
static int check_unmap_locked(struct vm *vm, uint64_t start, uint64_t end, struct vma **split)
{
    ASSERT_HELD(&vm->lock);
    ASSERT(start < end && !((start | end) & PAGE_MASK));
    *split = 0;
    for (struct list *pos = first_after(vm, start); pos != &vm->vmas; pos = pos->next) {
        struct vma *v = container_of(pos, struct vma, link);
        if (v->start >= end) {
            break;
        }
        if (v->kind == VMA_KERNEL || v->kind == VMA_DEVICE) {
            return -EINVAL; /* the kernel's and a claimed device's pages stay where they are */
        }
        if (v->start < start && v->end > end) {
            *split = kmem_alloc(sizeof(**split));
            return *split ? 0 : -ENOMEM;
        }
    }
    return 0;
}

/* Cut [start, end) out of the records of every region it touches (vm->lock held; its pages
 * are unmapped already), splitting as needed with `split` (freed if not needed); a record
 * removed whole goes to `freed` if it holds a file (vma_retire). */
static void cut_records_locked(struct vm *vm, uint64_t start, uint64_t end, struct vma *split,
                               struct page_list *freed)
{
    ASSERT_HELD(&vm->lock);
    list_for_each_safe(pos, tmp, &vm->vmas) {
        struct vma *v = container_of(pos, struct vma, link);
        if (v->end <= start || v->start >= end) {
            continue;
        }
        uint64_t cut_start = MAX(v->start, start), cut_end = MIN(v->end, end);
        if (v->start < start && v->end > end) { /* a hole in the middle: split in two */
            ASSERT(split);                      /* check_unmap_locked gave the record */
            split_record(split, v, end);
            v->end = start; /* first: vma_link checks that the list stays sorted */
            vma_link(vm, split, v->link.next);
            split = 0;
            break;
        }
        if (cut_start == v->start && cut_end == v->end) {
            vma_unlink(vm, v);
            vma_retire(v, freed);
        } else if (cut_start == v->start) {
            v->pgoff += (cut_end - v->start) / PAGE_SIZE;
            v->start = cut_end;
        } else {
            v->end = cut_start;
        }
    }
    kmem_free(split, sizeof(*split)); /* not needed after all */
}

/* Remove [start, end) from the address space (map_lock held; check_unmap_locked said yes and
 * gave `split`): the pages of every region part in the range are unmapped in steps while the
 * records still stand (`busy` keeps the stack's first-touch population out of the range),
 * then the records are cut in one hold.  The pages go to `freed`, for the caller to free
 * after; a shared file's pages are only unmapped (the file keeps them).  Only the parts of
 * regions are walked page by page (pages exist only inside regions), so the cost is the
 * pages found, whatever the range: a munmap of all user space is not minutes of page-table
 * walks. */
static void unmap_range(struct vm *vm, uint64_t start, uint64_t end, struct vma *split,
                        struct page_list *freed)
{
    ASSERT(start < end && !((start | end) & PAGE_MASK));
    unsigned long irq = spin_lock_irqsave(&vm->lock);
    vm->busy_start = start;
    vm->busy_end = end;
    spin_unlock_irqrestore(&vm->lock, irq);
    list_for_each(pos, &vm->vmas) { /* the records change only under map_lock: ours */
        const struct vma *v = container_of(pos, struct vma, link);
        if (v->end <= start || v->start >= end) {
            continue;
        }
        if (vma_owns_pages(v)) {
            unmap_steps(vm, MAX(v->start, start), MIN(v->end, end), freed);
        } else {
            unmap_kernel_steps(vm, MAX(v->start, start), MIN(v->end, end));
        }
    }
    irq = spin_lock_irqsave(&vm->lock);
    cut_records_locked(vm, start, end, split, freed);
    vm->busy_start = vm->busy_end = 0;
    spin_unlock_irqrestore(&vm->lock, irq);
}

/* Can [start, end) be unmapped (map_lock held)?  As check_unmap_locked. */
static int check_unmap(struct vm *vm, uint64_t start, uint64_t end, struct vma **split)
{
    unsigned long irq = spin_lock_irqsave(&vm->lock);
    int r = check_unmap_locked(vm, start, end, split);
    spin_unlock_irqrestore(&vm->lock, irq);
    return r;
}

/* Highest gap of `len` bytes below USER_MMAP_TOP and above the heap's room
 * [brk_start, brk_start + USER_BRK_MAX), which stays free for brk (lock held); 0 if none. */
static uint64_t find_gap(struct vm *vm, uint64_t len)
{
    ASSERT_HELD(&vm->lock);
    ASSERT(len && !(len & PAGE_MASK));
    uint64_t floor = vm->brk_start + USER_BRK_MAX, top = USER_MMAP_TOP;
    if (len > top - floor) {
        return 0;
    }
    for (struct list *pos = vm->vmas.prev; pos != &vm->vmas; pos = pos->prev) {
        struct vma *v = container_of(pos, struct vma, link);
        if (v->start >= top) {
            continue; /* above the mmap area (the stack) */
        }
        if (v->end <= top - len) {
            break; /* the gap between v and top fits */
        }
        top = v->start;
        if (top < floor + len) {
            return 0;
        }
    }
    return top - len >= floor ? top - len : 0;
}

int vm_map_kernel_pages(struct vm *vm, uint64_t va, const paddr_t *pa, unsigned n, unsigned prot)
{
    uint64_t len = (uint64_t)n * PAGE_SIZE;
    if (!n || !range_is_valid(va, len)) {
        return -EINVAL;
    }
    struct vma *v = kmem_alloc(sizeof(*v));
    if (!v) {
        return -ENOMEM;
    }
    spin_lock(&vm->map_lock);
    unsigned long flags = spin_lock_irqsave(&vm->lock); /* n: a few pages, one hold */
    int r = range_is_free(vm, va, va + len) ? 0 : -EEXIST;
    for (unsigned i = 0; r == 0 && i < n; i++) {
        r = arch_as_map(&vm->as, va + (uint64_t)i * PAGE_SIZE, pa[i], prot);
        if (r) {
            unmap_kernel_pages(vm, va, va + (uint64_t)i * PAGE_SIZE);
        }
    }
    if (r == 0) {
        *v = (struct vma){.start = va, .end = va + len, .prot = prot, .kind = VMA_KERNEL};
        vma_link(vm, v, first_after(vm, va));
    }
    spin_unlock_irqrestore(&vm->lock, flags);
    spin_unlock(&vm->map_lock);
    if (r) {
        kmem_free(v, sizeof(*v));
    }
    return r;
}

/* Map n pages from pa at va (map_lock held, no region there), VM_STEP_PAGES per hold of
 * vm->lock; on failure nothing stays mapped. */
static int map_phys_steps(struct vm *vm, uint64_t va, paddr_t pa, size_t n, unsigned prot,
                          bool device)
{
    ASSERT(n && !(va & PAGE_MASK) && !(pa & PAGE_MASK));
    uint64_t end = va + n * PAGE_SIZE, at = va;
    int r = 0;
    while (at < end && r == 0) {
        uint64_t to = step_end(at, end, VM_STEP_PAGES);
        unsigned long irq = spin_lock_irqsave(&vm->lock);
        for (; at < to && r == 0; at += PAGE_SIZE) {
            paddr_t page = pa + (at - va);
            r = device ? arch_as_map_device(&vm->as, at, page, prot)
                       : arch_as_map(&vm->as, at, page, prot);
        }
        spin_unlock_irqrestore(&vm->lock, irq);
    }
    if (r) {
        unmap_kernel_steps(vm, va, end);
    }
    return r;
}

long vm_map_phys(struct vm *vm, paddr_t pa, size_t n, unsigned prot, bool device)
{
    uint64_t len = (uint64_t)n * PAGE_SIZE;
    if (!n || n > USER_VA_TOP / PAGE_SIZE || (prot & ~(unsigned)(PROT_READ | PROT_WRITE))) {
        return -EINVAL;
    }
    struct vma *v = kmem_alloc(sizeof(*v));
    if (!v) {
        return -ENOMEM;
    }
    spin_lock(&vm->map_lock);
    unsigned long irq = spin_lock_irqsave(&vm->lock);
    uint64_t va = find_gap(vm, len);
    spin_unlock_irqrestore(&vm->lock, irq);
    int r = va ? map_phys_steps(vm, va, pa, n, prot, device) : -ENOMEM;
    if (r == 0) {
        irq = spin_lock_irqsave(&vm->lock);
        *v = (struct vma){.start = va, .end = va + len, .prot = prot, .kind = VMA_DEVICE};
        vma_link(vm, v, first_after(vm, va));
        spin_unlock_irqrestore(&vm->lock, irq);
    }
    spin_unlock(&vm->map_lock);
    if (r) {
        kmem_free(v, sizeof(*v));
    }
    return r ? r : (long)va;
}

int vm_unmap_phys(struct vm *vm, uint64_t va, uint64_t len)
{
    struct vma *found = 0;
    spin_lock(&vm->map_lock);
    unsigned long irq = spin_lock_irqsave(&vm->lock);
    list_for_each(pos, &vm->vmas) {
        struct vma *v = container_of(pos, struct vma, link);
        if (v->kind == VMA_DEVICE && v->start == va && v->end - v->start == len) {
            found = v;
            break;
        }
    }
    spin_unlock_irqrestore(&vm->lock, irq);
    if (found) { /* the record stands until its pages are gone: nothing else maps there */
        unmap_kernel_steps(vm, found->start, found->end);
        irq = spin_lock_irqsave(&vm->lock);
        vma_unlink(vm, found);
        spin_unlock_irqrestore(&vm->lock, irq);
    }
    spin_unlock(&vm->map_lock);
    if (found) {
        kmem_free(found, sizeof(*found));
    }
    return found ? 0 : -EINVAL;
}

long vm_mmap(struct vm *vm, uint64_t addr, uint64_t len, unsigned prot, unsigned flags, long fd,
             uint64_t off)
{
    if (!len || len > USER_VA_TOP || (prot & ~(unsigned)(PROT_READ | PROT_WRITE | PROT_EXEC))) {
        return -EINVAL;
    }
    if ((flags & (MAP_PRIVATE | MAP_SHARED)) == 0 || (prot & PROT_WRITE && prot & PROT_EXEC)) {
        return -EINVAL; /* W^X holds for user memory too */
    }
    if (!(flags & MAP_ANONYMOUS)) {
        return -EBADF; /* no files to map; an anonymous mapping ignores fd, as on Linux */
    }
    len = page_round_up(len);
    if ((flags & MAP_FIXED) && !range_is_valid(addr, len)) {
        return -EINVAL;
    }
    struct page_list l, freed = {0};
    struct vma *spare, *split = 0;
    long r = prepare_region(prot == PROT_NONE ? 0 : len, &l, &spare);
    if (r) {
        return r;
    }
    spin_lock(&vm->map_lock);
    if (flags & MAP_FIXED) {
        r = check_unmap(vm, addr, addr + len, &split);
        if (r == 0) {
            unmap_range(vm, addr, addr + len, split, &freed);
        }
    } else {
        unsigned long irq = spin_lock_irqsave(&vm->lock);
        addr = find_gap(vm, len);
        spin_unlock_irqrestore(&vm->lock, irq);
        r = addr ? 0 : -ENOMEM;
    }
    if (r == 0 && prot == PROT_NONE) {
        unsigned long irq = spin_lock_irqsave(&vm->lock);
        add_region(vm, addr, addr + len, prot, VMA_MMAP, spare); /* a reservation: no pages */
        spin_unlock_irqrestore(&vm->lock, irq);
    } else if (r == 0) {
        r = map_list(vm, addr, addr + len, prot, VMA_MMAP, &l, spare); /* consumes spare */
    } else {
        kmem_free(spare, sizeof(*spare));
    }
    spin_unlock(&vm->map_lock);
    list_free(&l); /* what was not mapped: all of it on failure */
    list_free(&freed);
    return r == 0 ? (long)addr : r;
}

int vm_munmap(struct vm *vm, uint64_t addr, uint64_t len)
{
    len = page_round_up(len);
    if (!range_is_valid(addr, len)) {
        return -EINVAL;
    }
    struct vma *split;
    struct page_list freed = {0};
    spin_lock(&vm->map_lock);
    int r = check_unmap(vm, addr, addr + len, &split);
    if (r == 0) {
        unmap_range(vm, addr, addr + len, split, &freed);
    }
    spin_unlock(&vm->map_lock);
    list_free(&freed);
    return r;
}

/* Grow the heap from old_end to new_end (page-aligned; map_lock held).  0 or -errno. */
static int brk_grow(struct vm *vm, uint64_t old_end, uint64_t new_end)
{
    struct page_list l;
    struct vma *spare;
    int r = prepare_region(new_end - old_end, &l, &spare);
    if (r) {
        return r;
    }
    if (range_is_free_now(vm, old_end, new_end)) { /* nothing mapped in the way */
        r = map_list(vm, old_end, new_end, PROT_READ | PROT_WRITE, VMA_HEAP, &l, spare);
    } else {
        r = -ENOMEM;
        kmem_free(spare, sizeof(*spare));
    }
    list_free(&l); /* what was not mapped: all of it on failure */
    return r;
}

/* brk(0) reports the break; otherwise move it within [brk_start, brk_start + USER_BRK_MAX)
 * and return the new break, or the old one if the move is impossible (Linux semantics). */
long vm_brk(struct vm *vm, uint64_t newbrk)
{
    spin_lock(&vm->map_lock); /* the break, too, changes only under it */
    uint64_t old = vm->brk;
    if (newbrk < vm->brk_start || newbrk > vm->brk_start + USER_BRK_MAX) {
        spin_unlock(&vm->map_lock);
        return (long)old;
    }
    uint64_t old_end = page_round_up(old), new_end = page_round_up(newbrk);
    int r = 0;
    struct page_list freed = {0};
    if (new_end > old_end) {
        r = brk_grow(vm, old_end, new_end);
    } else if (new_end < old_end) {
        struct vma *split;
        r = check_unmap(vm, new_end, old_end, &split);
        if (r == 0) {
            unmap_range(vm, new_end, old_end, split, &freed);
        }
    }
    unsigned long irq = spin_lock_irqsave(&vm->lock);
    if (r == 0) {
        vm->brk = newbrk;
    }
    long result = (long)vm->brk;
    spin_unlock_irqrestore(&vm->lock, irq);
    spin_unlock(&vm->map_lock);
    list_free(&freed);
    return result;
}

/* Copy n bytes between user `uaddr` and kernel `kbuf` in either direction, holding vm->lock
 * for one page at a time (a copy of megabytes must not mask interrupts for its whole length;
 * a page cannot be freed while the lock is held on it).  Every page must be mapped with
 * `need` (PROT_READ or PROT_WRITE; 0 = any). */
static int user_copy(struct vm *vm, uint64_t uaddr, void *kbuf, size_t n, unsigned need,
                     bool to_user)
{
    if (uaddr + n < uaddr || uaddr + n > USER_VA_TOP) {
        return -EFAULT;
    }
    char *k = kbuf;
    while (n) {
        unsigned prot;
        size_t chunk = MIN(n, PAGE_SIZE - (uaddr & PAGE_MASK));
        unsigned long flags = spin_lock_irqsave(&vm->lock);
        paddr_t pa = lookup_locked(vm, uaddr & ~PAGE_MASK, &prot, need);
        bool ok = pa && (prot & need) == need && !(prot & ARCH_PROT_DEVICE);
        if (ok) {
            char *u = (char *)phys_to_virt(pa) + (uaddr & PAGE_MASK);
            memcpy(to_user ? u : k, to_user ? k : u, chunk);
        }
        spin_unlock_irqrestore(&vm->lock, flags);
        if (!ok) {
            return -EFAULT;
        }
        uaddr += chunk, k += chunk, n -= chunk;
    }
    return 0;
}

/* Every page of [uaddr, uaddr+n) mapped with `need`?  VM_STEP_PAGES pages per hold of
 * vm->lock; stops at the first hole, so a huge n costs only as many steps as there are
 * mapped pages before it. */
int vm_check_range(struct vm *vm, uint64_t uaddr, size_t n, unsigned need)
{
    if (n == 0) {
        return 0; /* nothing to access: like copy_*_user of 0 bytes */
    }
    if (uaddr + n < uaddr || uaddr + n > USER_VA_TOP) {
        return -EFAULT;
    }
    uint64_t end = uaddr + n;
    for (uint64_t va = uaddr & ~PAGE_MASK; va < end;) {
        uint64_t to = step_end(va, end, VM_STEP_PAGES);
        unsigned long flags = spin_lock_irqsave(&vm->lock);
        for (; va < to; va += PAGE_SIZE) {
            unsigned prot;
            if (!lookup_locked(vm, va, &prot, need) || (prot & need) != need ||
                (prot & ARCH_PROT_DEVICE)) {
                spin_unlock_irqrestore(&vm->lock, flags);
                return -EFAULT;
            }
        }
        spin_unlock_irqrestore(&vm->lock, flags);
    }
    return 0;
}

int vm_read_u32(struct vm *vm, uint64_t uaddr, uint32_t *out)
{
    if (uaddr & 3) {
        return -EFAULT; /* within one page, and a whole load */
    }
    unsigned prot;
    unsigned long flags = spin_lock_irqsave(&vm->lock);
    paddr_t pa = uaddr < USER_VA_TOP ? lookup_locked(vm, uaddr & ~PAGE_MASK, &prot, PROT_READ) : 0;
    bool ok = pa && (prot & PROT_READ) && !(prot & ARCH_PROT_DEVICE);
    if (ok) {
        *out = *(volatile uint32_t *)((char *)phys_to_virt(pa) + (uaddr & PAGE_MASK));
    }
    spin_unlock_irqrestore(&vm->lock, flags);
    return ok ? 0 : -EFAULT;
}

int copy_from_user(struct vm *vm, void *dst, uint64_t usrc, size_t n)
{
    return user_copy(vm, usrc, dst, n, PROT_READ, false);
}

int copy_to_user(struct vm *vm, uint64_t udst, const void *src, size_t n)
{
    return user_copy(vm, udst, (void *)src, n, PROT_WRITE, true);
}

int vm_write_initial(struct vm *vm, uint64_t udst, const void *src, size_t n)
{
    return user_copy(vm, udst, (void *)src, n, 0, true);
}

void vm_sync_icache(struct vm *vm, uint64_t addr, uint64_t len)
{
    for (uint64_t va = addr & ~PAGE_MASK; va < addr + len && va < USER_VA_TOP; va += PAGE_SIZE) {
        unsigned long irq = spin_lock_irqsave(&vm->lock);
        paddr_t pa = arch_as_lookup(&vm->as, va, 0);
        if (pa) {
            arch_sync_icache(phys_to_virt(pa), PAGE_SIZE);
        }
        spin_unlock_irqrestore(&vm->lock, irq);
    }
}

long strncpy_from_user(struct vm *vm, char *dst, uint64_t usrc, size_t max)
{
    size_t n = 0;
    while (n < max) { /* a chunk at a time, never past the page the string goes on in */
        size_t chunk = MIN(MIN((size_t)64, max - n), PAGE_SIZE - ((usrc + n) & PAGE_MASK));
        if (copy_from_user(vm, dst + n, usrc + n, chunk) != 0) {
            return -EFAULT;
        }
        for (size_t i = 0; i < chunk; i++) {
            if (dst[n + i] == 0) {
                return (long)(n + i);
            }
        }
        n += chunk;
    }
    return -ENAMETOOLONG;
}

long strnlen_user(struct vm *vm, uint64_t usrc, size_t max)
{
    size_t n = 0;
    char buf[64];
    while (n < max) {
        size_t chunk = MIN(MIN(sizeof(buf), max - n), PAGE_SIZE - ((usrc + n) & PAGE_MASK));
        if (copy_from_user(vm, buf, usrc + n, chunk) != 0) {
            return -EFAULT;
        }
        for (size_t i = 0; i < chunk; i++) {
            if (buf[i] == 0) {
                return (long)(n + i);
            }
        }
        n += chunk;
    }
    return -ENAMETOOLONG;
}

/* Split the region holding `addr` so that a region boundary falls at addr (lock held),
 * using `spare` for the new record (consumed: true).  Nothing to do when addr is already a
 * boundary or in no region. */
static bool split_at_locked(struct vm *vm, uint64_t addr, struct vma *spare)
{
    ASSERT_HELD(&vm->lock);
    ASSERT(spare && !(addr & PAGE_MASK));
    list_for_each(pos, &vm->vmas) {
        struct vma *v = container_of(pos, struct vma, link);
        if (v->start < addr && addr < v->end) {
            split_record(spare, v, addr);
            v->end = addr;
            vma_link(vm, spare, v->link.next);
            return true;
        }
    }
    return false;
}

/* Is [start, end) covered by regions with no gap, none of them the kernel's (lock held)? */
static bool range_is_user_mapped(struct vm *vm, uint64_t start, uint64_t end)
{
    ASSERT_HELD(&vm->lock);
    uint64_t at = start;
    list_for_each(pos, &vm->vmas) {
        struct vma *v = container_of(pos, struct vma, link);
        if (v->end <= at || v->start >= end) {
            continue;
        }
        if (v->start > at || v->kind == VMA_KERNEL) {
            return false;
        }
        at = v->end;
        if (at >= end) {
            return true;
        }
    }
    return false;
}

/* Does a region in [start, end) deny any bit of `prot` (vm->lock held)? */
static bool range_denies(struct vm *vm, uint64_t start, uint64_t end, unsigned prot)
{
    ASSERT_HELD(&vm->lock);
    list_for_each(pos, &vm->vmas) {
        const struct vma *v = container_of(pos, struct vma, link);
        if (v->start < end && v->end > start && (v->denied & prot)) {
            return true;
        }
    }
    return false;
}

/* Give the records of [start, end) protection `prot` (vm->lock held; the range is mapped and
 * split at its ends).  Before the pages, so a stack page populated meanwhile gets the new
 * one. */
static void reprotect_records_locked(struct vm *vm, uint64_t start, uint64_t end, unsigned prot)
{
    ASSERT_HELD(&vm->lock);
    list_for_each(pos, &vm->vmas) {
        struct vma *v = container_of(pos, struct vma, link);
        if (v->start >= start && v->end <= end) {
            v->prot = prot;
        }
    }
}

/* Give every page of [start, end) protection `prot`, VM_STEP_PAGES per hold of vm->lock
 * (map_lock held).  Unmapping and mapping the same page again cannot need a table. */
static void reprotect_steps(struct vm *vm, uint64_t start, uint64_t end, unsigned prot)
{
    for (uint64_t va = start; va < end;) {
        uint64_t to = step_end(va, end, VM_STEP_PAGES);
        unsigned long irq = spin_lock_irqsave(&vm->lock);
        for (; va < to; va += PAGE_SIZE) {
            paddr_t pa = arch_as_unmap(&vm->as, va);
            if (pa) {
                int r = arch_as_map(&vm->as, va, pa, prot);
                ASSERT(r == 0); /* the page's table is still there: no allocation, no failure */
            }
        }
        spin_unlock_irqrestore(&vm->lock, irq);
    }
}

/* A region whose missing pages mprotect populates: an owned PROT_NONE mmap region, the only
 * kind with holes besides the stack (which fills its own on first touch). */
static bool is_reservation(const struct vma *v)
{
    return v->prot == PROT_NONE && v->kind == VMA_MMAP;
}

/* What a walk over the pages of the reservations in [start, end) does with one page (vm->lock
 * held): count a hole, fill it from `l`, or take back a page fill mapped. */
enum hole_op { HOLE_COUNT, HOLE_FILL, HOLE_UNFILL };

struct hole_walk {
    enum hole_op op;
    unsigned prot;       /* HOLE_FILL: the new protection */
    struct page_list *l; /* HOLE_FILL takes from it, HOLE_UNFILL gives back to it */
    size_t n;            /* HOLE_COUNT: holes found */
    int r;               /* HOLE_FILL: -ENOMEM when no page was left for a table */
};

static void hole_page_locked(struct vm *vm, uint64_t va, struct hole_walk *w)
{
    unsigned mapped;
    paddr_t pa = arch_as_lookup(&vm->as, va, &mapped);
    if (w->op == HOLE_COUNT) {
        w->n += pa == 0;
    } else if (w->op == HOLE_FILL && !pa) {
        pa = list_pop(w->l);
        if (arch_as_map(&vm->as, va, pa, w->prot) != 0) { /* rare: no page for a table */
            list_push(w->l, pa);
            w->r = -ENOMEM;
            return;
        }
        vm->pages++;
    } else if (w->op == HOLE_UNFILL && pa && (mapped & ~ARCH_PROT_DEVICE) != 0) {
        list_push(w->l, arch_as_unmap(&vm->as, va)); /* accessible in a PROT_NONE region: ours */
        vm->pages--;
    }
}

/* Walk the pages of the reservations in [start, end) (map_lock held: the records stand
 * still), VM_STEP_PAGES per hold of vm->lock; a fill stops at its first failure. */
static void walk_holes(struct vm *vm, uint64_t start, uint64_t end, struct hole_walk *w)
{
    list_for_each(pos, &vm->vmas) {
        const struct vma *v = container_of(pos, struct vma, link);
        if (!is_reservation(v) || v->end <= start || v->start >= end) {
            continue;
        }
        uint64_t last = MIN(v->end, end);
        for (uint64_t va = MAX(v->start, start); va < last && w->r == 0;) {
            uint64_t from = va, to = step_end(va, last, VM_STEP_PAGES);
            unsigned long irq = spin_lock_irqsave(&vm->lock);
            for (; va < to && w->r == 0; va += PAGE_SIZE) {
                hole_page_locked(vm, va, w);
            }
            if (w->op == HOLE_UNFILL) {
                arch_as_trim(&vm->as, from, to); /* tables a failed fill left empty */
            }
            spin_unlock_irqrestore(&vm->lock, irq);
        }
        if (w->r) {
            return;
        }
    }
}

/* Populate the holes of reservations in [start, end) with pages of `l` (which holds enough),
 * mapped with `prot` (map_lock held).  On failure (no page for a table) the pages it mapped,
 * the only pages of a PROT_NONE region with an accessible mapping, go back to `l`, and
 * -ENOMEM. */
static int fill_holes(struct vm *vm, uint64_t start, uint64_t end, unsigned prot,
                      struct page_list *l)
{
    struct hole_walk w = {.op = HOLE_FILL, .prot = prot, .l = l};
    walk_holes(vm, start, end, &w);
    if (w.r) {
        struct hole_walk undo = {.op = HOLE_UNFILL, .l = l};
        walk_holes(vm, start, end, &undo);
    }
    return w.r;
}

int vm_mprotect(struct vm *vm, uint64_t addr, uint64_t len, unsigned prot)
{
    if ((addr & PAGE_MASK) || (prot & ~(unsigned)(PROT_READ | PROT_WRITE | PROT_EXEC))) {
        return -EINVAL;
    }
    if ((prot & PROT_WRITE) && (prot & PROT_EXEC)) {
        return -EACCES; /* W^X holds for user memory */
    }
    len = page_round_up(len);
    if (len == 0) {
        return 0;
    }
    if (addr + len < addr || addr + len > USER_VA_TOP) {
        return -ENOMEM;
    }
    struct vma *spare[2] = {kmem_alloc(sizeof(struct vma)), kmem_alloc(sizeof(struct vma))};
    struct page_list l = {0};
    int r = spare[0] && spare[1] ? 0 : -ENOMEM;
    spin_lock(&vm->map_lock); /* the records stand still until the end */
    unsigned long irq = spin_lock_irqsave(&vm->lock);
    if (r == 0 && !range_is_user_mapped(vm, addr, addr + len)) {
        r = -ENOMEM;
    }
    if (r == 0 && range_denies(vm, addr, addr + len, prot)) {
        r = -EACCES; /* a shared mapping of a file opened read-only stays read-only */
    }
    spin_unlock_irqrestore(&vm->lock, irq);
    if (r == 0 && prot != PROT_NONE) { /* pages for the holes an accessible one populates */
        struct hole_walk count = {.op = HOLE_COUNT};
        walk_holes(vm, addr, addr + len, &count);
        r = count.n ? list_fill(&l, count.n) : 0;
    }
    if (r == 0) {
        irq = spin_lock_irqsave(&vm->lock);
        spare[0] = split_at_locked(vm, addr, spare[0]) ? 0 : spare[0];
        spare[1] = split_at_locked(vm, addr + len, spare[1]) ? 0 : spare[1];
        spin_unlock_irqrestore(&vm->lock, irq);
    }
    if (r == 0 && l.n) {
        r = fill_holes(vm, addr, addr + len, prot, &l);
    }
    if (r == 0) {
        irq = spin_lock_irqsave(&vm->lock);
        reprotect_records_locked(vm, addr, addr + len, prot);
        spin_unlock_irqrestore(&vm->lock, irq);
        reprotect_steps(vm, addr, addr + len, prot);
    }
    spin_unlock(&vm->map_lock);
    list_free(&l); /* what was not needed */
    for (int i = 0; i < 2; i++) {
        if (spare[i]) {
            kmem_free(spare[i], sizeof(struct vma));
        }
    }
    return r;
}

/* The page mapped at va if it is anonymous memory (not a file's, shared or a private copy),
 * else 0 (lock held). */
static paddr_t anonymous_page_locked(struct vm *vm, uint64_t va)
{
    struct list *pos = first_after(vm, va);
    const struct vma *v = pos != &vm->vmas ? container_of(pos, struct vma, link) : 0;
    if (!v || v->start > va || v->obj || !vma_owns_pages(v)) {
        return 0;
    }
    return arch_as_lookup(&vm->as, va, 0);
}

int vm_madvise_dontneed(struct vm *vm, uint64_t addr, uint64_t len)
{
    len = page_round_up(len);
    if ((addr & PAGE_MASK) || addr + len < addr || addr + len > USER_VA_TOP) {
        return -EINVAL;
    }
    spin_lock(&vm->map_lock);
    unsigned long irq = spin_lock_irqsave(&vm->lock);
    int r = range_is_user_mapped(vm, addr, addr + len) ? 0 : -ENOMEM;
    spin_unlock_irqrestore(&vm->lock, irq);
    for (uint64_t va = addr; r == 0 && va < addr + len;) {
        uint64_t to = step_end(va, addr + len, VM_COPY_STEP_PAGES);
        irq = spin_lock_irqsave(&vm->lock);
        for (; va < to; va += PAGE_SIZE) {
            paddr_t pa = anonymous_page_locked(vm, va);
            if (pa) {
                arch_zero_page(phys_to_virt(pa)); /* what the next read sees on Linux too */
            }
        }
        spin_unlock_irqrestore(&vm->lock, irq);
    }
    spin_unlock(&vm->map_lock);
    return r;
}

/* Both address spaces' locks, in address order (two locks of one rank: lockrank.h). */
static unsigned long lock_two(struct vm *a, struct vm *b)
{
    struct vm *first = (uintptr_t)a < (uintptr_t)b ? a : b, *second = first == a ? b : a;
    unsigned long irq = spin_lock_irqsave(&first->lock);
    spin_lock(&second->lock);
    return irq;
}

static void unlock_two(struct vm *a, struct vm *b, unsigned long irq)
{
    struct vm *first = (uintptr_t)a < (uintptr_t)b ? a : b, *second = first == a ? b : a;
    spin_unlock(&second->lock);
    spin_unlock_irqrestore(&first->lock, irq);
}

/* Copy the pages of region v of src in [va, to) into dst (both vm->locks held): fresh pages
 * from `l` with the same contents, or the same pages for a region the space does not own
 * (VMA_KERNEL, a shared file's).  A stack page src populated after `l` was filled takes a
 * page from the allocator.  0 or -ENOMEM. */
static int copy_pages_locked(struct vm *dst, struct vm *src, const struct vma *v, uint64_t va,
                             uint64_t to, struct page_list *l)
{
    ASSERT_HELD(&dst->lock);
    ASSERT_HELD(&src->lock);
    for (; va < to; va += PAGE_SIZE) {
        paddr_t from = arch_as_lookup(&src->as, va, 0), page = from;
        if (!from) {
            continue;
        }
        if (vma_owns_pages(v)) {
            page = l->n ? list_pop(l) : page_alloc();
            if (!page) {
                return -ENOMEM;
            }
            memcpy(phys_to_virt(page), phys_to_virt(from), PAGE_SIZE);
        }
        if (arch_as_map(&dst->as, va, page, v->prot) != 0) {
            if (vma_owns_pages(v)) {
                page_free(page);
            }
            return -ENOMEM;
        }
        dst->pages += vma_owns_pages(v);
    }
    return 0;
}

/* Copy region v of src into dst (src's map_lock held, so its records stand still), its
 * record linked first so a failure leaves dst for vm_destroy; VM_COPY_STEP_PAGES pages per
 * hold of the two vm->locks, a look for a fatal signal between steps (-EINTR).  Never a
 * VMA_DEVICE region (vm_copy skips them: `l` holds exactly src->pages pages, which do not
 * count a device's registers or DMA region). */
static int copy_region(struct vm *dst, struct vm *src, const struct vma *v, struct page_list *l)
{
    ASSERT(v->kind != VMA_DEVICE);
    struct vma *rec = kmem_alloc(sizeof(*rec));
    if (!rec) {
        return -ENOMEM;
    }
    *rec = *v;
    if (rec->obj) {
        rec->obj->ops->get(rec->obj, rec->kind == VMA_SHARED); /* the child maps the file too */
    }
    unsigned long irq = lock_two(dst, src);
    vma_link(dst, rec, &dst->vmas); /* src is sorted: appending keeps dst sorted */
    unlock_two(dst, src, irq);
    int r = 0;
    for (uint64_t va = v->start; va < v->end && r == 0;) {
        if (va > v->start && must_stop()) {
            return -EINTR; /* the caller is being killed: dst is for vm_destroy */
        }
        uint64_t to = step_end(va, v->end, VM_COPY_STEP_PAGES);
        irq = lock_two(dst, src);
        r = copy_pages_locked(dst, src, v, va, to, l);
        unlock_two(dst, src, irq);
        va = to;
    }
    return r;
}

int vm_copy(struct vm *dst, struct vm *src)
{
    struct page_list l;
    /* The pages first, outside the locks; a page src gained meanwhile (another thread's
     * mmap, a stack page touched) comes from the allocator during the copy. */
    int r = list_fill(&l, __atomic_load_n(&src->pages, __ATOMIC_RELAXED));
    spin_lock(&src->map_lock); /* dst is the caller's alone until the child runs */
    list_for_each(pos, &src->vmas) {
        const struct vma *v = container_of(pos, struct vma, link);
        if (r || v->kind == VMA_DEVICE) {
            continue; /* the holder's alone: its pages are device.c's, not counted in pages */
        }
        r = copy_region(dst, src, v, &l);
    }
    unsigned long irq = lock_two(dst, src);
    dst->brk_start = src->brk_start;
    dst->brk = src->brk;
    dst->arg_start = src->arg_start;
    dst->arg_end = src->arg_end;
    dst->stack_partial = src->stack_partial; /* what src never populated, dst has not either */
    unlock_two(dst, src, irq);
    spin_unlock(&src->map_lock);
    list_free(&l); /* what src no longer had */
    return r;
}

/* ---- file mappings (the pages come from the file system: kernel/fs/filemap.c) ---- */

int vm_mmap_check(uint64_t addr, uint64_t len, unsigned prot, unsigned flags)
{
    if (!len || len > USER_VA_TOP || (prot & ~(unsigned)(PROT_READ | PROT_WRITE | PROT_EXEC))) {
        return -EINVAL;
    }
    if ((flags & (MAP_PRIVATE | MAP_SHARED)) == 0 || (prot & PROT_WRITE && prot & PROT_EXEC)) {
        return -EINVAL; /* W^X holds for user memory too */
    }
    if ((flags & MAP_FIXED) && !range_is_valid(addr, page_round_up(len))) {
        return -EINVAL;
    }
    return 0;
}

int vm_pagevec_init(struct vm_pagevec *v, size_t n)
{
    v->n = n;
    memset(v->leaf, 0, sizeof(v->leaf));
    if (n > VM_PAGEVEC_MAX) {
        return -ENOMEM;
    }
    for (size_t i = 0; i < (n + VM_PAGEVEC_SLOTS - 1) / VM_PAGEVEC_SLOTS; i++) {
        v->leaf[i] = kmem_alloc(PAGE_SIZE); /* zeroed: every slot empty */
        if (!v->leaf[i]) {
            vm_pagevec_fini(v, false);
            return -ENOMEM;
        }
    }
    return 0;
}

void vm_pagevec_fini(struct vm_pagevec *v, bool free_pages)
{
    for (size_t i = 0; i < VM_PAGEVEC_LEAVES && v->leaf[i]; i++) {
        for (size_t j = 0; free_pages && j < VM_PAGEVEC_SLOTS; j++) {
            if (v->leaf[i][j]) {
                page_free(v->leaf[i][j]);
            }
        }
        kmem_free(v->leaf[i], PAGE_SIZE);
        v->leaf[i] = 0;
    }
}

/* Map page i of pv at start + i pages, for every i (map_lock held, no region there),
 * VM_STEP_PAGES per hold of vm->lock.  On failure (no page for a table) nothing stays
 * mapped. */
static int map_vec_steps(struct vm *vm, uint64_t start, unsigned prot, struct vm_pagevec *pv)
{
    size_t i = 0;
    int r = 0;
    while (i < pv->n && r == 0) {
        size_t last = MIN(pv->n, i + VM_STEP_PAGES);
        unsigned long irq = spin_lock_irqsave(&vm->lock);
        for (; i < last; i++) {
            if (arch_as_map(&vm->as, start + i * PAGE_SIZE, *vm_pagevec_slot(pv, i), prot) != 0) {
                r = -ENOMEM;
                break;
            }
        }
        spin_unlock_irqrestore(&vm->lock, irq);
    }
    if (r) {
        unmap_kernel_steps(vm, start, start + pv->n * PAGE_SIZE); /* the caller keeps the pages */
    }
    return r;
}

long vm_mmap_file(struct vm *vm, uint64_t addr, uint64_t len, unsigned prot, unsigned flags,
                  const struct vm_file_map *m)
{
    int r = vm_mmap_check(addr, len, prot, flags);
    len = page_round_up(len);
    if (r || m->pages->n != len / PAGE_SIZE) {
        return r ? r : -EINVAL;
    }
    struct vma *rec = kmem_alloc(sizeof(*rec)), *split = 0;
    if (!rec) {
        return -ENOMEM;
    }
    struct page_list freed = {0};
    spin_lock(&vm->map_lock);
    if (flags & MAP_FIXED) {
        r = check_unmap(vm, addr, addr + len, &split);
        if (r == 0) {
            unmap_range(vm, addr, addr + len, split, &freed);
        }
    } else {
        unsigned long irq = spin_lock_irqsave(&vm->lock);
        addr = find_gap(vm, len);
        spin_unlock_irqrestore(&vm->lock, irq);
        r = addr ? 0 : -ENOMEM;
    }
    if (r == 0) {
        r = map_vec_steps(vm, addr, prot, m->pages);
    }
    if (r == 0) {
        unsigned long irq = spin_lock_irqsave(&vm->lock);
        *rec = (struct vma){.start = addr,
                            .end = addr + len,
                            .prot = prot,
                            .denied = m->denied,
                            .kind = m->shared ? VMA_SHARED : VMA_MMAP,
                            .obj = m->obj,
                            .pgoff = m->pgoff};
        vma_link(vm, rec, first_after(vm, addr));
        vm->pages += m->shared ? 0 : m->pages->n; /* private copies are the space's own */
        rec = 0;
        spin_unlock_irqrestore(&vm->lock, irq);
    }
    spin_unlock(&vm->map_lock);
    list_free(&freed);
    if (rec) {
        kmem_free(rec, sizeof(*rec));
    }
    return r ? r : (long)addr;
}

int vm_check_mapped(struct vm *vm, uint64_t addr, uint64_t len)
{
    len = page_round_up(len);
    if ((addr & PAGE_MASK) || addr + len < addr || addr + len > USER_VA_TOP) {
        return -EINVAL;
    }
    if (len == 0) {
        return 0;
    }
    unsigned long irq = spin_lock_irqsave(&vm->lock);
    int r = range_is_user_mapped(vm, addr, addr + len) ? 0 : -ENOMEM;
    spin_unlock_irqrestore(&vm->lock, irq);
    return r;
}
