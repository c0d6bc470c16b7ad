/*
 * vm.c — user address spaces (contract in include/kernel/vm.h).
 *
 * A region (struct vma) is created fully populated and removed fully unmapped: the page
 * tables hold exactly the pages of the regions.  mmap places regions top-down below
 * USER_MMAP_TOP in the first gap that fits; MAP_FIXED replaces whatever was there.
 * munmap may cut a region in pieces.  Every change and every user copy runs under
 * vm->lock, so a concurrent munmap in another thread can never free a page while the
 * kernel copies through it.
 */
#include "kernel/vm.h"
#include "kernel/kmem.h"
#include "kernel/lib.h"
#include "kernel/page.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_syscall.h"

#define PAGE_MASK ((uint64_t)PAGE_SIZE - 1)

static uint64_t page_round_up(uint64_t v)
{
    return (v + PAGE_MASK) & ~PAGE_MASK;
}

int vm_init(struct vm *vm)
{
    vm->lock = (spinlock_t)SPINLOCK_INIT;
    list_init(&vm->vmas);
    vm->pages = 0;
    return arch_as_init(&vm->as);
}

static void unmap_pages(struct vm *vm, uint64_t start, uint64_t end)
{
    for (uint64_t va = start; va < end; va += PAGE_SIZE) {
        paddr_t pa = arch_as_unmap(&vm->as, va);
        if (pa) {
            page_free(pa);
            vm->pages--;
        }
    }
}

/* Unmap the kernel's pages of a VMA_KERNEL region without freeing them (lock held). */
static void unmap_kernel_pages(struct vm *vm, uint64_t start, uint64_t end)
{
    for (uint64_t va = start; va < end; va += PAGE_SIZE) {
        arch_as_unmap(&vm->as, va);
    }
}

void vm_destroy(struct vm *vm)
{
    list_for_each_safe(pos, tmp, &vm->vmas)
    {
        struct vma *v = container_of(pos, struct vma, link);
        if (v->kind == VMA_KERNEL) {
            unmap_kernel_pages(vm, v->start, v->end);
        } else {
            unmap_pages(vm, v->start, v->end);
        }
        list_del(&v->link);
        kmem_free(v, sizeof(*v));
    }
    arch_as_destroy(&vm->as);
}

/* The first region ending above `addr`, or the list head. */
static struct list *first_after(struct vm *vm, uint64_t addr)
{
    list_for_each(pos, &vm->vmas)
    {
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

/* Insert a populated region (lock held).  On failure nothing stays mapped. */
static int map_region_locked(struct vm *vm, uint64_t start, uint64_t end, unsigned prot,
                             enum vma_kind kind)
{
    struct vma *v = kmem_alloc(sizeof(*v));
    if (!v) {
        return -ENOMEM;
    }
    for (uint64_t va = start; va < end; va += PAGE_SIZE) {
        paddr_t pa = page_alloc();
        if (!pa || arch_as_map(&vm->as, va, pa, prot) != 0) {
            page_free(pa);
            unmap_pages(vm, start, va);
            kmem_free(v, sizeof(*v));
            return -ENOMEM;
        }
        vm->pages++;
    }
    v->start = start;
    v->end = end;
    v->prot = prot;
    v->kind = kind;
    struct list *pos = first_after(vm, start);
    list_insert_between(&v->link, pos->prev, pos);
    return 0;
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
    unsigned long flags = spin_lock_irqsave(&vm->lock);
    int r = range_is_free(vm, start, start + len)
                ? map_region_locked(vm, start, start + len, prot, kind)
                : -EEXIST;
    spin_unlock_irqrestore(&vm->lock, flags);
    return r;
}

/* Remove [start, end) from every region it touches (lock held), splitting as needed. */
static int unmap_range_locked(struct vm *vm, uint64_t start, uint64_t end)
{
    list_for_each_safe(pos, tmp, &vm->vmas)
    {
        struct vma *v = container_of(pos, struct vma, link);
        if (v->end <= start || v->start >= end) {
            continue;
        }
        if (v->kind == VMA_KERNEL) {
            return -EINVAL; /* the kernel's pages stay where they are */
        }
        if (v->start < start && v->end > end) { /* a hole in the middle: split in two */
            struct vma *tail = kmem_alloc(sizeof(*tail));
            if (!tail) {
                return -ENOMEM;
            }
            *tail = *v;
            tail->start = end;
            list_insert_between(&tail->link, &v->link, v->link.next);
            v->end = start;
            unmap_pages(vm, start, end);
            return 0;
        }
        uint64_t cut_start = MAX(v->start, start), cut_end = MIN(v->end, end);
        unmap_pages(vm, cut_start, cut_end);
        if (cut_start == v->start && cut_end == v->end) {
            list_del(&v->link);
            kmem_free(v, sizeof(*v));
        } else if (cut_start == v->start) {
            v->start = cut_end;
        } else {
            v->end = cut_start;
        }
    }
    return 0;
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
        struct list *pos = first_after(vm, va);
        list_insert_between(&v->link, pos->prev, pos);
    }
    spin_unlock_irqrestore(&vm->lock, flags);
    if (r) {
        kmem_free(v, sizeof(*v));
    }
    return r;
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
    if (!(flags & MAP_ANONYMOUS) || fd != -1) {
        return -EBADF; /* no files to map */
    }
    len = page_round_up(len);
    unsigned long irq = spin_lock_irqsave(&vm->lock);
    long r;
    if (flags & MAP_FIXED) {
        r = range_is_valid(addr, len) ? unmap_range_locked(vm, addr, addr + len) : -EINVAL;
    } else {
        addr = find_gap(vm, len);
        r = addr ? 0 : -ENOMEM;
    }
    if (r == 0) {
        r = map_region_locked(vm, addr, addr + len, prot, VMA_MMAP);
    }
    spin_unlock_irqrestore(&vm->lock, irq);
    return r == 0 ? (long)addr : r;
}

int vm_munmap(struct vm *vm, uint64_t addr, uint64_t len)
{
    len = page_round_up(len);
    if (!range_is_valid(addr, len)) {
        return -EINVAL;
    }
    unsigned long flags = spin_lock_irqsave(&vm->lock);
    int r = unmap_range_locked(vm, addr, addr + len);
    spin_unlock_irqrestore(&vm->lock, flags);
    return r;
}

/* brk(0) reports the break; otherwise move it within [brk_start, brk_start + USER_BRK_MAX)
 * and return the new break, or the old one if the move is impossible (Linux semantics). */
long vm_brk(struct vm *vm, uint64_t newbrk)
{
    unsigned long flags = spin_lock_irqsave(&vm->lock);
    uint64_t old = vm->brk;
    if (newbrk < vm->brk_start || newbrk > vm->brk_start + USER_BRK_MAX) {
        spin_unlock_irqrestore(&vm->lock, flags);
        return (long)old;
    }
    uint64_t old_end = page_round_up(old), new_end = page_round_up(newbrk);
    int r = 0;
    if (new_end > old_end) {
        r = range_is_free(vm, old_end, new_end)
                ? map_region_locked(vm, old_end, new_end, PROT_READ | PROT_WRITE, VMA_HEAP)
                : -ENOMEM;
    } else if (new_end < old_end) {
        r = unmap_range_locked(vm, new_end, old_end);
    }
    if (r == 0) {
        vm->brk = newbrk;
    }
    spin_unlock_irqrestore(&vm->lock, flags);
    return (long)vm->brk;
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
        paddr_t pa = arch_as_lookup(&vm->as, uaddr & ~PAGE_MASK, &prot);
        if (!pa || (prot & need) != need) {
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
        if (!arch_as_lookup(&vm->as, va, &prot) || (prot & need) != need) {
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
    for (size_t i = 0; i < max; i++) {
        if (copy_from_user(vm, &dst[i], usrc + i, 1) != 0) {
            return -EFAULT;
        }
        if (dst[i] == 0) {
            return (long)i;
        }
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

/* Split the region holding `addr` so that a region boundary falls at addr (lock held).
 * 0 or -ENOMEM; nothing to do when addr is already a boundary or in no region. */
static int split_at_locked(struct vm *vm, uint64_t addr)
{
    list_for_each(pos, &vm->vmas)
    {
        struct vma *v = container_of(pos, struct vma, link);
        if (v->start < addr && addr < v->end) {
            struct vma *tail = kmem_alloc(sizeof(*tail));
            if (!tail) {
                return -ENOMEM;
            }
            *tail = *v;
            tail->start = addr;
            v->end = addr;
            list_insert_between(&tail->link, &v->link, v->link.next);
            return 0;
        }
    }
    return 0;
}

/* Is [start, end) covered by regions with no gap, none of them the kernel's (lock held)? */
static bool range_is_user_mapped(struct vm *vm, uint64_t start, uint64_t end)
{
    uint64_t at = start;
    list_for_each(pos, &vm->vmas)
    {
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

/* Give every page of [start, end) protection `prot` (lock held; the range is mapped). */
static void reprotect_locked(struct vm *vm, uint64_t start, uint64_t end, unsigned prot)
{
    for (uint64_t va = start; va < end; va += PAGE_SIZE) {
        paddr_t pa = arch_as_unmap(&vm->as, va);
        if (pa) {
            arch_as_map(&vm->as, va, pa, prot); /* the table is there: cannot fail */
        }
    }
    list_for_each(pos, &vm->vmas)
    {
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
    unsigned long flags = spin_lock_irqsave(&vm->lock);
    int r = range_is_user_mapped(vm, addr, addr + len) ? 0 : -ENOMEM;
    if (r == 0) {
        r = split_at_locked(vm, addr);
    }
    if (r == 0) {
        r = split_at_locked(vm, addr + len);
    }
    if (r == 0) {
        reprotect_locked(vm, addr, addr + len, prot);
    }
    spin_unlock_irqrestore(&vm->lock, flags);
    return r;
}

int vm_madvise_dontneed(struct vm *vm, uint64_t addr, uint64_t len)
{
    len = page_round_up(len);
    if ((addr & PAGE_MASK) || addr + len < addr || addr + len > USER_VA_TOP) {
        return -EINVAL;
    }
    unsigned long flags = spin_lock_irqsave(&vm->lock);
    int r = range_is_user_mapped(vm, addr, addr + len) ? 0 : -ENOMEM;
    for (uint64_t va = addr; r == 0 && va < addr + len; va += PAGE_SIZE) {
        paddr_t pa = arch_as_lookup(&vm->as, va, 0);
        if (pa) {
            arch_zero_page(phys_to_virt(pa)); /* what the next read sees on Linux too */
        }
    }
    spin_unlock_irqrestore(&vm->lock, flags);
    return r;
}

/* Copy region v of src into dst (both locks held): fresh pages with the same contents, or
 * the same kernel pages for VMA_KERNEL. */
static int copy_region_locked(struct vm *dst, struct vm *src, const struct vma *v)
{
    if (v->kind == VMA_KERNEL) {
        struct vma *k = kmem_alloc(sizeof(*k));
        if (!k) {
            return -ENOMEM;
        }
        for (uint64_t va = v->start; va < v->end; va += PAGE_SIZE) {
            if (arch_as_map(&dst->as, va, arch_as_lookup(&src->as, va, 0), v->prot) != 0) {
                unmap_kernel_pages(dst, v->start, va);
                kmem_free(k, sizeof(*k));
                return -ENOMEM;
            }
        }
        *k = *v;
        list_add_tail(&dst->vmas, &k->link);
        return 0;
    }
    int r = map_region_locked(dst, v->start, v->end, v->prot, v->kind);
    for (uint64_t va = v->start; r == 0 && va < v->end; va += PAGE_SIZE) {
        paddr_t from = arch_as_lookup(&src->as, va, 0), to = arch_as_lookup(&dst->as, va, 0);
        if (from && to) {
            memcpy(phys_to_virt(to), phys_to_virt(from), PAGE_SIZE);
        }
    }
    return r;
}

int vm_copy(struct vm *dst, struct vm *src)
{
    unsigned long flags = spin_lock_irqsave(&src->lock);
    spin_lock(&dst->lock);
    int r = 0;
    list_for_each(pos, &src->vmas)
    {
        r = copy_region_locked(dst, src, container_of(pos, struct vma, link));
        if (r) {
            break;
        }
    }
    dst->brk_start = src->brk_start;
    dst->brk = src->brk;
    spin_unlock(&dst->lock);
    spin_unlock_irqrestore(&src->lock, flags);
    return r;
}

void vm_move(struct vm *dst, struct vm *src)
{
    dst->as = src->as;
    dst->brk_start = src->brk_start;
    dst->brk = src->brk;
    dst->pages = src->pages;
    if (list_empty(&src->vmas)) {
        list_init(&dst->vmas);
    } else {
        dst->vmas = src->vmas;
        dst->vmas.next->prev = &dst->vmas;
        dst->vmas.prev->next = &dst->vmas;
    }
    list_init(&src->vmas);
    src->pages = 0;
}
