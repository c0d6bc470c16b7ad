/* SPDX-License-Identifier: MIT */
/*
 * vm.c — user address spaces (contract in include/kernel/vm.h).
 *
 * A region (struct vma) is created fully populated (the stack: its top part; below it a page
 * is populated by stack_fault_in_locked when first touched by the task or copied to by the
 * kernel) and removed fully unmapped: the page tables hold only pages of the regions, and a
 * table left empty by an unmap is freed at once (arch_as_trim).  mmap places regions top-down below
 * USER_MMAP_TOP in the first gap that fits; MAP_FIXED replaces whatever was there.  munmap may cut
 * a region in pieces; adjacent anonymous regions with the same protection are one region (brk grown
 * a page at a time stays one heap region).  Every change and every user copy runs under vm->lock,
 * so a concurrent munmap in another thread can never free a page while the kernel copies through
 * it.
 *
 * Every change checks everything first (range, the kernel's own pages, memory for the
 * region records, the pages themselves) and then acts, so a refused call changes nothing.
 * New pages are allocated and zeroed before the lock is taken, with interrupts enabled,
 * checking for a fatal signal every POPULATE_BATCH pages; under the lock (IRQs masked: code
 * that IRQ handlers interrupt takes it inside wait-queue locks and proc_lock, so holding it
 * with IRQs enabled could deadlock against a timer callback) only the page-table entries
 * are written, and a large unmap invalidates the TLB once per batch of pages instead of
 * once per page.  The pages an unmap takes out are collected under the lock and given back
 * after it, all at once (page_free_list): freeing them one by one under the lock queued on
 * the allocator's lock once per page with interrupts masked, which on a loaded emulation
 * host left CPUs deaf to interrupts for seconds (docs/security.md, "What the fuzzer found").
 * The exception is a stack page populated on first touch: one page, allocated and zeroed
 * under the lock (a few hundred instructions with IRQs masked, mostly from this CPU's cache).
 *
 * Regions whose pages the address space does not own (VMA_KERNEL: the counters; VMA_DEVICE:
 * a claimed device's registers and DMA region, kernel/sys/device.c) are unmapped without being
 * freed and cannot be munmapped; the user copies never go through device registers
 * (ARCH_PROT_DEVICE).
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
    list_init(&vm->vmas);
    vm->pages = 0;
    vm->nregions = 0;
    vm->stack_partial = false;
    return arch_as_init(&vm->as);
}

/* Put v into the sorted region list before `pos` / take it out (lock held). */
static void vma_link(struct vm *vm, struct vma *v, struct list *pos)
{
    list_insert_between(&v->link, pos->prev, pos);
    __atomic_store_n(&vm->nregions, vm->nregions + 1, __ATOMIC_RELAXED);
}

static void vma_unlink(struct vm *vm, struct vma *v)
{
    list_del(&v->link);
    __atomic_store_n(&vm->nregions, vm->nregions - 1, __ATOMIC_RELAXED);
}

/* Pages linked through their first word: fresh zeroed pages for a new region (taken before
 * the lock), or pages an unmap took out of the address space (freed after the lock). */
struct page_list {
    paddr_t head;
    size_t n;
};

static void list_push(struct page_list *l, paddr_t pa)
{
    *(uint64_t *)phys_to_virt(pa) = (uint64_t)l->head;
    l->head = pa;
    l->n++;
}

/* Give every page of l back, with one acquisition of the allocator's lock. */
static void list_free(struct page_list *l)
{
    page_free_list(l->head, l->n);
    *l = (struct page_list){0, 0};
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
    return v->kind != VMA_KERNEL && v->kind != VMA_DEVICE;
}

/* Unmap the pages of a region the vm does not own without freeing them (lock held). */
static void unmap_kernel_pages(struct vm *vm, uint64_t start, uint64_t end)
{
    for (uint64_t va = start; va < end; va += PAGE_SIZE) {
        arch_as_unmap(&vm->as, va);
    }
}

void vm_destroy(struct vm *vm)
{
    struct page_list freed = {0, 0};
    list_for_each_safe(pos, tmp, &vm->vmas) {
        struct vma *v = container_of(pos, struct vma, link);
        if (!vma_owns_pages(v)) {
            unmap_kernel_pages(vm, v->start, v->end);
        } else {
            unmap_pages(vm, v->start, v->end, &freed);
        }
        vma_unlink(vm, v);
        kmem_free(v, sizeof(*v));
    }
    arch_as_destroy(&vm->as);
    list_free(&freed); /* all at once: the worker that runs a teardown is not preempted */
}

/* The first region ending above `addr`, or the list head. */
static struct list *first_after(struct vm *vm, uint64_t addr)
{
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
    *l = (struct page_list){0, 0};
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
    return v->prot == prot && v->kind == kind && (kind == VMA_HEAP || kind == VMA_MMAP);
}

/* Record the mapped range [start, end) as a region, merged with a neighbour when it can
 * be; `spare` is a record for a new region (consumed, or freed). */
static void add_region(struct vm *vm, uint64_t start, uint64_t end, unsigned prot,
                       enum vma_kind kind, struct vma *spare)
{
    struct list *pos = first_after(vm, start);
    struct vma *next = pos != &vm->vmas ? container_of(pos, struct vma, link) : 0;
    struct vma *prev = pos->prev != &vm->vmas ? container_of(pos->prev, struct vma, link) : 0;
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

/* Map the pages of `l` at [start, end) (lock held, range free).  On failure (no memory for
 * a page table) nothing stays mapped, `spare` is freed and every page is back in `l`, for the
 * caller to free once it has released the lock. */
static int map_pages_locked(struct vm *vm, uint64_t start, uint64_t end, unsigned prot,
                            struct page_list *l, struct vma *spare)
{
    for (uint64_t va = start; va < end; va += PAGE_SIZE) {
        paddr_t pa = list_pop(l);
        if (arch_as_map(&vm->as, va, pa, prot) != 0) { /* rare: no page for a table */
            list_push(l, pa);
            unmap_pages(vm, start, va, l);
            arch_as_trim(&vm->as, start, end);
            kmem_free(spare, sizeof(*spare));
            return -ENOMEM; /* the caller frees l after the lock */
        }
        vm->pages++;
    }
    return 0;
}

/* Map the pages of `l` at [start, end) as a region (lock held, range free). */
static int map_list_locked(struct vm *vm, uint64_t start, uint64_t end, unsigned prot,
                           enum vma_kind kind, struct page_list *l, struct vma *spare)
{
    int r = map_pages_locked(vm, start, end, prot, l, spare);
    if (r == 0) {
        add_region(vm, start, end, prot, kind, spare);
    }
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
    unsigned long irq = spin_lock_irqsave(&vm->lock);
    r = range_is_free(vm, start, start + len)
            ? map_list_locked(vm, start, start + len, prot, kind, &l, spare)
            : -EEXIST;
    spin_unlock_irqrestore(&vm->lock, irq);
    list_free(&l); /* what was not mapped (all of it on failure) */
    if (r == -EEXIST) {
        kmem_free(spare, sizeof(*spare));
    }
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
    unsigned long irq = spin_lock_irqsave(&vm->lock);
    r = range_is_free(vm, start, top)
            ? map_pages_locked(vm, from, top, PROT_READ | PROT_WRITE, &l, spare)
            : -EEXIST;
    if (r == 0) {
        add_region(vm, start, top, PROT_READ | PROT_WRITE, VMA_STACK, spare);
        vm->stack_partial = from > start;
    }
    spin_unlock_irqrestore(&vm->lock, irq);
    list_free(&l); /* what was not mapped (all of it on failure) */
    if (r == -EEXIST) {
        kmem_free(spare, sizeof(*spare));
    }
    return r;
}

/* Page va of a VMA_STACK region, not mapped (lock held): map a fresh zeroed page there if the
 * region allows `need` (0: any).  0, -EFAULT (no such region, or not allowed) or -ENOMEM. */
static int stack_fault_in_locked(struct vm *vm, uint64_t va, unsigned need)
{
    struct list *pos = first_after(vm, va);
    const struct vma *v = pos != &vm->vmas ? container_of(pos, struct vma, link) : 0;
    if (!v || v->kind != VMA_STACK || v->start > va || (v->prot & need) != need ||
        !(v->prot & (PROT_READ | PROT_WRITE))) {
        return -EFAULT;
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
    if (!vm->stack_partial || stack_fault_in_locked(vm, va, need) != 0) {
        return 0;
    }
    return arch_as_lookup(&vm->as, va, prot);
}

/* The page at va, populated first if it is a stack page not populated yet (lock held). */
static inline paddr_t lookup_locked(struct vm *vm, uint64_t va, unsigned *prot, unsigned need)
{
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

/* Can [start, end) be unmapped, and with what?  Nothing of the kernel's may be in it, and
 * a hole in the middle of one region needs one more record: *split is set to a fresh one
 * then.  0, -EINVAL or -ENOMEM; nothing changed (lock held). */
static int check_unmap_locked(struct vm *vm, uint64_t start, uint64_t end, struct vma **split)
{
    *split = 0;
    for (struct list *pos = first_after(vm, start); pos != &vm->vmas; pos = pos->next) {
        struct vma *v = container_of(pos, struct vma, link);
        if (v->start >= end) {
            break;
        }
        if (!vma_owns_pages(v)) {
            return -EINVAL; /* the kernel's and a claimed device's pages stay where they are */
        }
        if (v->start < start && v->end > end) {
            *split = kmem_alloc(sizeof(**split));
            return *split ? 0 : -ENOMEM;
        }
    }
    return 0;
}

/* Remove [start, end) from every region it touches (lock held, check_unmap_locked said
 * yes and gave `split`), splitting as needed, and free the tables left empty; the pages go
 * to `freed`, which the caller frees after releasing the lock.  Only the
 * parts of regions are walked page by page (pages exist only inside regions), so the cost
 * is the pages found, whatever the range: a munmap of all user space is not minutes of
 * page-table walks. */
static void unmap_range_locked(struct vm *vm, uint64_t start, uint64_t end, struct vma *split,
                               struct page_list *freed)
{
    list_for_each_safe(pos, tmp, &vm->vmas) {
        struct vma *v = container_of(pos, struct vma, link);
        if (v->end <= start || v->start >= end) {
            continue;
        }
        uint64_t cut_start = MAX(v->start, start), cut_end = MIN(v->end, end);
        unmap_pages(vm, cut_start, cut_end, freed);
        if (v->start < start && v->end > end) { /* a hole in the middle: split in two */
            *split = *v;
            split->start = end;
            vma_link(vm, split, v->link.next);
            v->end = start;
            split = 0;
            break;
        }
        if (cut_start == v->start && cut_end == v->end) {
            vma_unlink(vm, v);
            kmem_free(v, sizeof(*v));
        } else if (cut_start == v->start) {
            v->start = cut_end;
        } else {
            v->end = cut_start;
        }
    }
    arch_as_trim(&vm->as, start, end);
    kmem_free(split, sizeof(*split)); /* not needed after all */
}

/* Highest gap of `len` bytes below USER_MMAP_TOP and above the heap's room
 * [brk_start, brk_start + USER_BRK_MAX), which stays free for brk (lock held); 0 if none. */
static uint64_t find_gap(struct vm *vm, uint64_t len)
{
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
    unsigned long flags = spin_lock_irqsave(&vm->lock);
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
    if (r) {
        kmem_free(v, sizeof(*v));
    }
    return r;
}

/* Map n pages from pa at va (lock held); on failure nothing stays mapped. */
static int map_phys_locked(struct vm *vm, uint64_t va, paddr_t pa, size_t n, unsigned prot,
                           bool device)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t at = va + i * PAGE_SIZE;
        int r = device ? arch_as_map_device(&vm->as, at, pa + i * PAGE_SIZE, prot)
                       : arch_as_map(&vm->as, at, pa + i * PAGE_SIZE, prot);
        if (r) {
            unmap_kernel_pages(vm, va, at);
            arch_as_trim(&vm->as, va, va + n * PAGE_SIZE);
            return r;
        }
    }
    return 0;
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
    unsigned long irq = spin_lock_irqsave(&vm->lock);
    uint64_t va = find_gap(vm, len);
    int r = va ? map_phys_locked(vm, va, pa, n, prot, device) : -ENOMEM;
    if (r == 0) {
        *v = (struct vma){.start = va, .end = va + len, .prot = prot, .kind = VMA_DEVICE};
        vma_link(vm, v, first_after(vm, va));
    }
    spin_unlock_irqrestore(&vm->lock, irq);
    if (r) {
        kmem_free(v, sizeof(*v));
    }
    return r ? r : (long)va;
}

int vm_unmap_phys(struct vm *vm, uint64_t va, uint64_t len)
{
    struct vma *found = 0;
    unsigned long irq = spin_lock_irqsave(&vm->lock);
    list_for_each(pos, &vm->vmas) {
        struct vma *v = container_of(pos, struct vma, link);
        if (v->kind == VMA_DEVICE && v->start == va && v->end - v->start == len) {
            found = v;
            break;
        }
    }
    if (found) {
        unmap_kernel_pages(vm, found->start, found->end);
        arch_as_trim(&vm->as, found->start, found->end);
        vma_unlink(vm, found);
    }
    spin_unlock_irqrestore(&vm->lock, irq);
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
    struct page_list l, freed = {0, 0};
    struct vma *spare, *split = 0;
    long r = prepare_region(len, &l, &spare);
    if (r) {
        return r;
    }
    unsigned long irq = spin_lock_irqsave(&vm->lock);
    if (flags & MAP_FIXED) {
        r = check_unmap_locked(vm, addr, addr + len, &split);
        if (r == 0) {
            unmap_range_locked(vm, addr, addr + len, split, &freed);
        }
    } else {
        addr = find_gap(vm, len);
        r = addr ? 0 : -ENOMEM;
    }
    bool spare_used = r == 0;
    if (r == 0) {
        r = map_list_locked(vm, addr, addr + len, prot, VMA_MMAP, &l, spare);
    }
    spin_unlock_irqrestore(&vm->lock, irq);
    list_free(&l); /* what was not mapped: all of it on failure */
    list_free(&freed);
    if (!spare_used) {
        kmem_free(spare, sizeof(*spare));
    }
    return r == 0 ? (long)addr : r;
}

int vm_munmap(struct vm *vm, uint64_t addr, uint64_t len)
{
    len = page_round_up(len);
    if (!range_is_valid(addr, len)) {
        return -EINVAL;
    }
    struct vma *split;
    struct page_list freed = {0, 0};
    unsigned long irq = spin_lock_irqsave(&vm->lock);
    int r = check_unmap_locked(vm, addr, addr + len, &split);
    if (r == 0) {
        unmap_range_locked(vm, addr, addr + len, split, &freed);
    }
    spin_unlock_irqrestore(&vm->lock, irq);
    list_free(&freed);
    return r;
}

/* Grow the heap from old_end to new_end (page-aligned; no lock held).  0 or -errno. */
static int brk_grow(struct vm *vm, uint64_t old_end, uint64_t new_end)
{
    struct page_list l;
    struct vma *spare;
    int r = prepare_region(new_end - old_end, &l, &spare);
    if (r) {
        return r;
    }
    unsigned long irq = spin_lock_irqsave(&vm->lock);
    /* Still the break it was (no other thread moved it), and nothing mapped in the way. */
    bool ok = page_round_up(vm->brk) == old_end && range_is_free(vm, old_end, new_end);
    r = ok ? map_list_locked(vm, old_end, new_end, PROT_READ | PROT_WRITE, VMA_HEAP, &l, spare)
           : -ENOMEM;
    spin_unlock_irqrestore(&vm->lock, irq);
    list_free(&l); /* what was not mapped: all of it on failure */
    if (!ok) {
        kmem_free(spare, sizeof(*spare));
    }
    return r;
}

/* brk(0) reports the break; otherwise move it within [brk_start, brk_start + USER_BRK_MAX)
 * and return the new break, or the old one if the move is impossible (Linux semantics). */
long vm_brk(struct vm *vm, uint64_t newbrk)
{
    unsigned long irq = spin_lock_irqsave(&vm->lock);
    uint64_t old = vm->brk;
    spin_unlock_irqrestore(&vm->lock, irq);
    if (newbrk < vm->brk_start || newbrk > vm->brk_start + USER_BRK_MAX) {
        return (long)old;
    }
    uint64_t old_end = page_round_up(old), new_end = page_round_up(newbrk);
    int r = 0;
    if (new_end > old_end) {
        r = brk_grow(vm, old_end, new_end);
    }
    struct page_list freed = {0, 0};
    irq = spin_lock_irqsave(&vm->lock);
    uint64_t cur_end = page_round_up(vm->brk);
    if (r == 0 && new_end < cur_end) {
        struct vma *split;
        r = check_unmap_locked(vm, new_end, cur_end, &split);
        if (r == 0) {
            unmap_range_locked(vm, new_end, cur_end, split, &freed);
        }
    }
    if (r == 0) {
        vm->brk = newbrk;
    }
    long result = (long)vm->brk;
    spin_unlock_irqrestore(&vm->lock, irq);
    list_free(&freed);
    return result;
}

/* Copy n bytes between user `uaddr` and kernel `kbuf` in either direction (lock held).
 * Every page must be mapped with `need` (PROT_READ or PROT_WRITE; 0 = any). */
static int user_copy_locked(struct vm *vm, uint64_t uaddr, void *kbuf, size_t n, unsigned need,
                            bool to_user)
{
    if (uaddr + n < uaddr || uaddr + n > USER_VA_TOP) {
        return -EFAULT;
    }
    char *k = kbuf;
    while (n) {
        unsigned prot;
        paddr_t pa = lookup_locked(vm, uaddr & ~PAGE_MASK, &prot, need);
        if (!pa || (prot & need) != need || (prot & ARCH_PROT_DEVICE)) {
            return -EFAULT;
        }
        size_t chunk = MIN(n, PAGE_SIZE - (uaddr & PAGE_MASK));
        char *u = (char *)phys_to_virt(pa) + (uaddr & PAGE_MASK);
        memcpy(to_user ? u : k, to_user ? k : u, chunk);
        uaddr += chunk, k += chunk, n -= chunk;
    }
    return 0;
}

/* Every page of [uaddr, uaddr+n) mapped with `need` (lock held)?  Stops at the first hole,
 * so a huge n costs only as many steps as there are mapped pages before it. */
static int check_range_locked(struct vm *vm, uint64_t uaddr, size_t n, unsigned need)
{
    if (n == 0) {
        return 0; /* nothing to access: like copy_*_user of 0 bytes */
    }
    if (uaddr + n < uaddr || uaddr + n > USER_VA_TOP) {
        return -EFAULT;
    }
    for (uint64_t va = uaddr & ~PAGE_MASK; va < uaddr + n; va += PAGE_SIZE) {
        unsigned prot;
        if (!lookup_locked(vm, va, &prot, need) || (prot & need) != need ||
            (prot & ARCH_PROT_DEVICE)) {
            return -EFAULT;
        }
    }
    return 0;
}

int vm_check_range(struct vm *vm, uint64_t uaddr, size_t n, unsigned prot)
{
    unsigned long flags = spin_lock_irqsave(&vm->lock);
    int r = check_range_locked(vm, uaddr, n, prot);
    spin_unlock_irqrestore(&vm->lock, flags);
    return r;
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
    unsigned long flags = spin_lock_irqsave(&vm->lock);
    int r = user_copy_locked(vm, usrc, dst, n, PROT_READ, false);
    spin_unlock_irqrestore(&vm->lock, flags);
    return r;
}

int copy_to_user(struct vm *vm, uint64_t udst, const void *src, size_t n)
{
    unsigned long flags = spin_lock_irqsave(&vm->lock);
    int r = user_copy_locked(vm, udst, (void *)src, n, PROT_WRITE, true);
    spin_unlock_irqrestore(&vm->lock, flags);
    return r;
}

int vm_write_initial(struct vm *vm, uint64_t udst, const void *src, size_t n)
{
    unsigned long flags = spin_lock_irqsave(&vm->lock);
    int r = user_copy_locked(vm, udst, (void *)src, n, 0, true);
    spin_unlock_irqrestore(&vm->lock, flags);
    return r;
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
    list_for_each(pos, &vm->vmas) {
        struct vma *v = container_of(pos, struct vma, link);
        if (v->start < addr && addr < v->end) {
            *spare = *v;
            spare->start = addr;
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

/* Give every page of [start, end) protection `prot` (lock held; the range is mapped and
 * split at its ends).  Unmapping and mapping the same page again cannot need a table. */
static void reprotect_locked(struct vm *vm, uint64_t start, uint64_t end, unsigned prot)
{
    for (uint64_t va = start; va < end; va += PAGE_SIZE) {
        paddr_t pa = arch_as_unmap(&vm->as, va);
        if (pa) {
            arch_as_map(&vm->as, va, pa, prot);
        }
    }
    list_for_each(pos, &vm->vmas) {
        struct vma *v = container_of(pos, struct vma, link);
        if (v->start >= start && v->end <= end) {
            v->prot = prot;
        }
    }
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
    int r = spare[0] && spare[1] ? 0 : -ENOMEM;
    unsigned long irq = spin_lock_irqsave(&vm->lock);
    if (r == 0 && !range_is_user_mapped(vm, addr, addr + len)) {
        r = -ENOMEM;
    }
    if (r == 0) {
        spare[0] = split_at_locked(vm, addr, spare[0]) ? 0 : spare[0];
        spare[1] = split_at_locked(vm, addr + len, spare[1]) ? 0 : spare[1];
        reprotect_locked(vm, addr, addr + len, prot);
    }
    spin_unlock_irqrestore(&vm->lock, irq);
    for (int i = 0; i < 2; i++) {
        if (spare[i]) {
            kmem_free(spare[i], sizeof(struct vma));
        }
    }
    return r;
}

int vm_madvise_dontneed(struct vm *vm, uint64_t addr, uint64_t len)
{
    len = page_round_up(len);
    if ((addr & PAGE_MASK) || addr + len < addr || addr + len > USER_VA_TOP) {
        return -EINVAL;
    }
    unsigned long irq = spin_lock_irqsave(&vm->lock);
    int r = range_is_user_mapped(vm, addr, addr + len) ? 0 : -ENOMEM;
    for (uint64_t va = addr; r == 0 && va < addr + len; va += PAGE_SIZE) {
        paddr_t pa = arch_as_lookup(&vm->as, va, 0);
        if (pa) {
            arch_zero_page(phys_to_virt(pa)); /* what the next read sees on Linux too */
        }
    }
    spin_unlock_irqrestore(&vm->lock, irq);
    return r;
}

/* Copy region v of src into dst (both locks held), its record linked first so a failure
 * leaves dst for vm_destroy: fresh pages from `l` with the same contents, or the same
 * kernel pages for VMA_KERNEL.  Never a VMA_DEVICE region (vm_copy skips them: `l` holds
 * exactly src->pages pages, which do not count a device's registers or DMA region). */
static int copy_region_locked(struct vm *dst, struct vm *src, const struct vma *v,
                              struct page_list *l)
{
    struct vma *rec = kmem_alloc(sizeof(*rec));
    if (!rec) {
        return -ENOMEM;
    }
    *rec = *v;
    vma_link(dst, rec, &dst->vmas); /* src is sorted: appending keeps dst sorted */
    for (uint64_t va = v->start; va < v->end; va += PAGE_SIZE) {
        paddr_t from = arch_as_lookup(&src->as, va, 0), to = from;
        if (!from) {
            continue;
        }
        if (vma_owns_pages(v)) {
            to = list_pop(l);
            memcpy(phys_to_virt(to), phys_to_virt(from), PAGE_SIZE);
        }
        if (arch_as_map(&dst->as, va, to, v->prot) != 0) {
            if (vma_owns_pages(v)) {
                page_free(to);
            }
            return -ENOMEM;
        }
        dst->pages += vma_owns_pages(v);
    }
    return 0;
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

int vm_copy(struct vm *dst, struct vm *src)
{
    struct page_list l;
    unsigned long irq;
    for (;;) { /* the pages first, outside the locks; again if src grew meanwhile */
        int r = list_fill(&l, __atomic_load_n(&src->pages, __ATOMIC_RELAXED));
        if (r) {
            return r;
        }
        irq = lock_two(dst, src);
        if (src->pages <= l.n) {
            break;
        }
        unlock_two(dst, src, irq);
        list_free(&l);
    }
    int r = 0;
    list_for_each(pos, &src->vmas) {
        const struct vma *v = container_of(pos, struct vma, link);
        if (v->kind == VMA_DEVICE) {
            continue; /* the holder's alone: its pages are device.c's, not counted in pages */
        }
        r = copy_region_locked(dst, src, v, &l);
        if (r) {
            break;
        }
    }
    dst->brk_start = src->brk_start;
    dst->brk = src->brk;
    dst->arg_start = src->arg_start;
    dst->arg_end = src->arg_end;
    dst->stack_partial = src->stack_partial; /* what src never populated, dst has not either */
    unlock_two(dst, src, irq);
    list_free(&l);
    return r;
}

void vm_move(struct vm *dst, struct vm *src)
{
    dst->as = src->as;
    dst->brk_start = src->brk_start;
    dst->brk = src->brk;
    dst->arg_start = src->arg_start;
    dst->arg_end = src->arg_end;
    dst->pages = src->pages;
    dst->nregions = src->nregions;
    dst->stack_partial = src->stack_partial;
    if (list_empty(&src->vmas)) {
        list_init(&dst->vmas);
    } else {
        dst->vmas = src->vmas;
        dst->vmas.next->prev = &dst->vmas;
        dst->vmas.prev->next = &dst->vmas;
    }
    list_init(&src->vmas);
    src->pages = 0;
    src->nregions = 0;
}
