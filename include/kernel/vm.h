/* SPDX-License-Identifier: MIT */
/*
 * vm.h — user address spaces: regions (VMAs), mmap/munmap/brk, and safe access to user
 * memory from the kernel.
 *
 * Nothing is demand-paged but the main thread's stack: every page of any other region is
 * allocated, zeroed and mapped when the region is created (a file's region: its pages are
 * handed in filled, vm_mmap_file).  The stack region is
 * USER_STACK_SIZE, of which only the top USER_STACK_POPULATED is populated by exec; a page
 * below is populated when the task first touches it (a fault, vm_fault) or the kernel first
 * copies to or from it, and all of it before the task is isolated (vm_populate_stack), so an
 * isolated task never takes a page fault it did not cause by touching memory it does not own,
 * and a program that needs a few KiB of stack does not pay for 256 (most of spawn's cost:
 * docs/measuring.md).  The kernel reads and writes user memory only through
 * copy_from_user/copy_to_user, which walk the page tables in software under vm->lock and
 * copy through the kernel's linear map: a bad user pointer is an -EFAULT, never a kernel
 * fault.  vm->lock is a leaf lock except for the page allocator; vm->map_lock, taken with
 * interrupts enabled, serialises the changes, which work under vm->lock in bounded steps
 * (vm.c says how many pages a step).
 */
#ifndef ZT_KERNEL_VM_H
#define ZT_KERNEL_VM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch.h"
#include "kernel/list.h"
#include "kernel/spinlock.h"

#define USER_STACK_TOP       0x0000007ffff00000ull /* main thread's stack ends here */
#define USER_STACK_SIZE      (256 * 1024)
#define USER_STACK_POPULATED (16 * 1024)           /* of it, populated by exec (vm_map_stack) */
#define USER_MMAP_TOP        0x0000007f00000000ull /* mmap regions grow down from here */
#define USER_BRK_MAX         (256ull << 20)        /* heap limit above the program's end */
#define VM_STEP_PAGES        64 /* page-table entries written or cleared in one hold of vm->lock */
#define VM_COPY_STEP_PAGES   8  /* pages copied or zeroed in one hold of vm->lock */

enum vma_kind {
    VMA_IMAGE = 0, /* ELF segment */
    VMA_STACK,
    VMA_HEAP,
    VMA_MMAP,   /* anonymous memory, or private copies of a file's pages (obj set) */
    VMA_KERNEL, /* kernel pages shown read-only (the per-CPU counters): never freed here */
    VMA_DEVICE, /* a claimed device's registers or DMA region (device.c owns the pages) */
    VMA_SHARED, /* a shared mapping of a file: the file's own pages (obj), never freed here */
};

/*
 * What a file mapping shows, seen from here without knowing files: a region that maps a file
 * holds one reference on its object, taken with get (any context, even under vm->lock: an
 * atomic count) and given back with put (never under vm->lock: it may take the file system's
 * lock and free the file's pages).  `shared`: the region is VMA_SHARED (it maps the file's
 * own pages, which the file must keep while any such region exists).
 */
struct vm_object;
struct vm_object_ops {
    void (*get)(struct vm_object *o, bool shared);
    void (*put)(struct vm_object *o, bool shared);
};
struct vm_object {
    const struct vm_object_ops *ops;
};

struct vma {
    uint64_t start, end; /* page-aligned, end exclusive */
    unsigned prot;       /* PROT_* */
    unsigned denied;     /* PROT_* bits mprotect may never add (a shared mapping of a file
                            not open for writing: PROT_WRITE) */
    enum vma_kind kind;
    struct vm_object *obj; /* the file mapped (one reference), or NULL */
    uint64_t pgoff;        /* the page of obj shown at start */
    struct list link;      /* in vm->vmas, sorted by start */
};

struct vm {
    spinlock_t lock;     /* page tables, records, counts, user copies (IRQs masked, bounded) */
    spinlock_t map_lock; /* one change at a time (IRQs enabled; held across a change) */
    uint64_t busy_start, busy_end; /* a range an unmap is clearing (lock): no stack fill */
    struct arch_as as;
    struct list vmas;
    uint64_t brk_start; /* end of the loaded image, page-aligned */
    uint64_t brk;       /* current break (byte granular, as the program sees it) */
    uint64_t arg_start; /* the argv strings exec wrote ([arg_start, arg_end): */
    uint64_t arg_end;   /* /proc/PID/cmdline) */
    size_t pages;       /* pages mapped */
    unsigned nregions;  /* regions in vmas (read without the lock by zt_tasks) */
    bool stack_partial; /* a VMA_STACK region may have pages not populated yet */
    unsigned users;     /* processes using it: 1, or more while vfork children share it */
};

int vm_init(struct vm *vm);
/* A new, empty address space with one user (vm_init on a kernel object).  NULL: no memory. */
struct vm *vm_create(void);
/* One more process uses vm (clone with CLONE_VM|CLONE_VFORK: the child runs on its parent's
 * address space until its execve or exit, as on Linux). */
void vm_get(struct vm *vm);
/* A process stops using vm (execve, exit); the last user destroys and frees it
 * (vm_destroy's rule: no CPU may have it active any more). */
void vm_put(struct vm *vm);
/* Unmap and free everything; the address space must not be active on any CPU. */
void vm_destroy(struct vm *vm);
/* Map [start, start+len) fresh zeroed pages with `prot`.  0 or -ENOMEM/-EINVAL/-EEXIST. */
int vm_map_region(struct vm *vm, uint64_t start, uint64_t len, unsigned prot, enum vma_kind kind);
/* The main thread's stack: a VMA_STACK region [top - size, top) of which the top `populated`
 * bytes are mapped now (fresh zeroed pages) and the rest when first touched.  0 or -errno. */
int vm_map_stack(struct vm *vm, uint64_t top, uint64_t size, uint64_t populated);
/* A fault of user space at `addr` (`access`: PROT_READ, PROT_WRITE or PROT_EXEC; IRQs masked):
 * 0 if it was a stack page not populated yet (now it is: the task retries the access), or
 * another thread populated it meanwhile; -EFAULT if the task touched memory it may not (the
 * caller signals it); -ENOMEM. */
int vm_fault(struct vm *vm, uint64_t addr, unsigned access);
/* Populate every page of the stack not populated yet (before isolation: no fault may come
 * later).  IRQs enabled.  0 or -ENOMEM. */
int vm_populate_stack(struct vm *vm);
/* Map kernel pages pa[0..n) at va.. with `prot` (never writable: the counters, the
 * signal-return page; VMA_KERNEL: munmap refuses them, destroy unmaps without freeing).
 * 0 or -errno. */
int vm_map_kernel_pages(struct vm *vm, uint64_t va, const paddr_t *pa, unsigned n, unsigned prot);
/* Map n physically contiguous pages from `pa` with `prot` at a free address the kernel picks
 * (as mmap does), as uncached device memory if `device`.  VMA_DEVICE: munmap refuses it,
 * the user copies refuse device pages, destroy unmaps without freeing.  Address or -errno. */
long vm_map_phys(struct vm *vm, paddr_t pa, size_t n, unsigned prot, bool device);
/* Remove the VMA_DEVICE region that starts at va and is len bytes long (pages not freed:
 * they are the caller's).  0, or -EINVAL if there is no such region. */
int vm_unmap_phys(struct vm *vm, uint64_t va, uint64_t len);
long vm_mmap(struct vm *vm, uint64_t addr, uint64_t len, unsigned prot, unsigned flags, long fd,
             uint64_t off);
/* The checks every mmap starts with (length, protection, MAP_SHARED/MAP_PRIVATE, W^X, a
 * MAP_FIXED range): 0 or -EINVAL. */
int vm_mmap_check(uint64_t addr, uint64_t len, unsigned prot, unsigned flags);

/* Pages in order for vm_mmap_file: a two-level table (kmem pages of slots) of at most
 * VM_PAGEVEC_MAX pages, filled by the caller. */
#define VM_PAGEVEC_LEAVES 256
#define VM_PAGEVEC_SLOTS  (PAGE_SIZE / sizeof(paddr_t))
#define VM_PAGEVEC_MAX    ((size_t)VM_PAGEVEC_LEAVES * VM_PAGEVEC_SLOTS)
struct vm_pagevec {
    size_t n;
    paddr_t *leaf[VM_PAGEVEC_LEAVES];
};
/* Room for n pages (all slots 0): 0, or -ENOMEM (no memory, or n > VM_PAGEVEC_MAX). */
int vm_pagevec_init(struct vm_pagevec *v, size_t n);
/* Free the table; with free_pages, every page in it too. */
void vm_pagevec_fini(struct vm_pagevec *v, bool free_pages);
static inline paddr_t *vm_pagevec_slot(struct vm_pagevec *v, size_t i)
{
    return &v->leaf[i / VM_PAGEVEC_SLOTS][i % VM_PAGEVEC_SLOTS];
}

/* A file mapping for vm_mmap_file: `pages` (len / PAGE_SIZE of them) show obj from page
 * pgoff; shared: they are obj's own (VMA_SHARED), else private copies the address space
 * takes over (VMA_MMAP); `denied`: PROT_* bits mprotect may never add. */
struct vm_file_map {
    struct vm_object *obj;
    uint64_t pgoff;
    unsigned denied;
    bool shared;
    struct vm_pagevec *pages;
};
/* mmap of a file: map m->pages at addr (MAP_FIXED: replacing what was there) or at a place
 * the kernel picks, as one region holding m->obj.  On success the caller's reference on obj
 * passes to the region, and private pages become the address space's (freed at unmap); on
 * failure nothing changed but a MAP_FIXED range's old contents, and the caller keeps both.
 * The address, or -EINVAL/-ENOMEM. */
long vm_mmap_file(struct vm *vm, uint64_t addr, uint64_t len, unsigned prot, unsigned flags,
                  const struct vm_file_map *m);
/* Is [addr, addr+len) covered by user regions (msync's check)?  0, -EINVAL (addr not
 * page-aligned, or past user space) or -ENOMEM (a hole). */
int vm_check_mapped(struct vm *vm, uint64_t addr, uint64_t len);
int vm_munmap(struct vm *vm, uint64_t addr, uint64_t len);
long vm_brk(struct vm *vm, uint64_t newbrk);
/* mprotect: [addr, addr+len) must be mapped user regions (-ENOMEM otherwise); regions are
 * split at the ends.  Writable and executable at once is refused (-EACCES, W^X), and so is
 * a protection a region denies (PROT_WRITE on a shared mapping of a file open read-only).
 * Pages stay populated whatever the protection. */
int vm_mprotect(struct vm *vm, uint64_t addr, uint64_t len, unsigned prot);
/* madvise(MADV_DONTNEED): the anonymous pages of the mapped range read as zeros afterwards
 * (they stay mapped: no demand paging); a file's pages keep what they hold (Linux would
 * read the file again: the same bytes for a page never written). */
int vm_madvise_dontneed(struct vm *vm, uint64_t addr, uint64_t len);

/* fork: fill the empty `dst` with a copy of every region of `src` (fresh pages, same
 * contents; the kernel's pages shared), except a claimed device's register window and DMA
 * region, which stay with the claimer alone (the child has nothing mapped there).  0 or
 * -ENOMEM (dst then holds part of a copy, for vm_destroy). */
int vm_copy(struct vm *dst, struct vm *src);

/* Could [uaddr, uaddr+n) be user memory at all?  Linux's access_ok: the range alone (inside
 * user space, no wrap), not whether it is mapped; n 0 included.  A read or write checks it
 * before anything else looks at n, as Linux's vfs_read/vfs_write do. */
static inline bool vm_range_ok(uint64_t uaddr, uint64_t n)
{
    return n <= USER_VA_TOP && uaddr <= USER_VA_TOP - n;
}

/* Is all of [uaddr, uaddr+n) mapped with `prot` (PROT_READ/PROT_WRITE)?  0 or -EFAULT.
 * Calls check with it before acting, so a bad buffer changes nothing. */
int vm_check_range(struct vm *vm, uint64_t uaddr, size_t n, unsigned prot);
/* Copy between kernel and user memory of `vm`.  0 or -EFAULT (nothing partial is promised). */
int copy_from_user(struct vm *vm, void *dst, uint64_t usrc, size_t n);
/* copy_from_user of one aligned 32-bit word (a futex), in one load: 0 or -EFAULT. */
int vm_read_u32(struct vm *vm, uint64_t uaddr, uint32_t *out);
int copy_to_user(struct vm *vm, uint64_t udst, const void *src, size_t n);
/* Copy a NUL-terminated string of at most max-1 bytes.  Length, -EFAULT or -ENAMETOOLONG. */
long strncpy_from_user(struct vm *vm, char *dst, uint64_t usrc, size_t max);
/* Length of the NUL-terminated user string at usrc (< max), -EFAULT or -ENAMETOOLONG;
 * reads a chunk at a time, not a byte per lock. */
long strnlen_user(struct vm *vm, uint64_t usrc, size_t max);
/* Loader access: write into the user pages regardless of their protection. */
int vm_write_initial(struct vm *vm, uint64_t udst, const void *src, size_t n);
/* Make what the kernel wrote into the pages of [addr, addr+len) visible to instruction fetch
 * (a loaded program's text): arch_sync_icache on each page mapped there, the lock taken for
 * one page at a time. */
void vm_sync_icache(struct vm *vm, uint64_t addr, uint64_t len);

#endif
