/* SPDX-License-Identifier: MIT */
/*
 * filemap.c — mmap of regular files and msync (contract in include/kernel/filemap.h).
 *
 * The pages are gathered here, with interrupts enabled and no lock held but vfs_lock for one
 * page at a time, then handed to vm_mmap_file in order (struct vm_pagevec), which maps them
 * under the address space's lock.  A private mapping's pages are fresh pages filled from the
 * file (a page copy each: the cost of mapping a file privately is one copy of the mapped part
 * at mmap time); a shared mapping's are the tmpfs file's own, made first where they do not
 * exist yet (past the end of a file a mapping reaches, or a file never written there).
 *
 * The region holds the inode through its vmobj: one inode reference per region, and for a
 * shared region one count in ino->maps, which keeps every page of the file alive while any
 * shared region maps it (tmpfs.c).  filemap_object_ops's put runs with no lock held (vm.c
 * defers it past its own lock) and takes vfs_lock.
 */
#include "kernel/filemap.h"
#include "arch.h"
#include "kernel/fd.h"
#include "kernel/kmem.h"
#include "kernel/lib.h"
#include "kernel/page.h"
#include "kernel/signal.h"
#include "kernel/task.h"
#include "kernel/vfs.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_syscall.h"

#define PAGE_MASK     ((uint64_t)PAGE_SIZE - 1)
#define SIGNAL_BATCH  64 /* pages between two looks for a fatal signal */
#define MS_ASYNC      1
#define MS_INVALIDATE 2
#define MS_SYNC       4

static struct inode *inode_of(struct vm_object *o)
{
    return container_of(o, struct inode, vmobj);
}

static void object_get(struct vm_object *o, bool shared)
{
    struct inode *ino = inode_of(o);
    inode_get(ino);
    if (shared) {
        __atomic_add_fetch(&ino->maps, 1, __ATOMIC_RELAXED); /* from >= 1: a region holds it */
    }
}

static void object_put(struct vm_object *o, bool shared)
{
    struct inode *ino = inode_of(o);
    if (shared) {
        spin_lock(&vfs_lock);
        if (__atomic_sub_fetch(&ino->maps, 1, __ATOMIC_RELAXED) == 0) {
            tmpfs_unmapped_locked(ino);
        }
        spin_unlock(&vfs_lock);
    }
    inode_put(ino);
}

const struct vm_object_ops filemap_object_ops = {.get = object_get, .put = object_put};

/* The first shared mapping of ino (0 -> 1 only under vfs_lock, so a truncation never frees a
 * page a mapping is being made of). */
static void hold_shared(struct inode *ino)
{
    spin_lock(&vfs_lock);
    __atomic_add_fetch(&ino->maps, 1, __ATOMIC_RELAXED);
    spin_unlock(&vfs_lock);
    inode_get(ino);
}

/* Fill pv with fresh pages holding the file's bytes from off (zeros past its end). */
static int copy_pages(struct inode *ino, uint64_t off, struct vm_pagevec *pv)
{
    if (!page_have_free(pv->n)) {
        return -ENOMEM; /* fail at once rather than after copying most of it */
    }
    for (size_t i = 0; i < pv->n; i++) {
        if (i % SIGNAL_BATCH == SIGNAL_BATCH - 1 && signal_fatal_pending(current())) {
            return -EINTR;
        }
        paddr_t pa = page_alloc(); /* zeroed */
        if (!pa) {
            return -ENOMEM;
        }
        *vm_pagevec_slot(pv, i) = pa;
        uint64_t at = off + i * PAGE_SIZE, size = __atomic_load_n(&ino->size, __ATOMIC_RELAXED);
        if (at < size) {
            /* -EIO: the file shrank meanwhile, and the page reads as zeros past its end */
            vfs_read_kernel(ino, at, phys_to_virt(pa), (size_t)MIN((uint64_t)PAGE_SIZE, size - at));
        }
        arch_sync_icache(phys_to_virt(pa), PAGE_SIZE); /* file pages are often code */
    }
    return 0;
}

/* Fill pv with the tmpfs file's own pages from page `first` (the caller holds a shared
 * count, so none of them can be freed meanwhile). */
static int share_pages(struct inode *ino, uint64_t first, struct vm_pagevec *pv)
{
    for (size_t i = 0; i < pv->n; i++) {
        spin_lock(&vfs_lock); /* a page at a time */
        int r = tmpfs_map_page_locked(ino, first + i, vm_pagevec_slot(pv, i));
        spin_unlock(&vfs_lock);
        if (r) {
            return -ENOMEM; /* /tmp's pages are all taken */
        }
    }
    return 0;
}

/* May `file` be mapped so?  0, or -errno (the header's order from -ENODEV on). */
static int check_file(const struct file *file, uint64_t len, unsigned prot, unsigned flags,
                      uint64_t off)
{
    const struct inode *ino = file->inode;
    unsigned acc = file->flags & O_ACCMODE;
    bool shared = (flags & (MAP_SHARED | MAP_PRIVATE)) == MAP_SHARED;
    if (!ino || (ino->kind != INODE_TMPFS_FILE && ino->kind != INODE_INITRD_FILE)) {
        return -ENODEV; /* a pipe, a directory, a device: nothing to map */
    }
    if (acc == O_WRONLY) {
        return -EACCES;
    }
    if (shared && (prot & PROT_WRITE) && (acc != O_RDWR || (file->flags & O_APPEND))) {
        return -EACCES;
    }
    uint64_t pages = (len + PAGE_MASK) / PAGE_SIZE;
    if (off + pages * PAGE_SIZE < off) {
        return -EOVERFLOW;
    }
    uint64_t size = __atomic_load_n(&ino->size, __ATOMIC_RELAXED);
    if (off >= ((size + PAGE_MASK) & ~PAGE_MASK)) {
        return -ENXIO; /* no byte of the file in the mapping */
    }
    if (pages > VM_PAGEVEC_MAX ||
        (shared && ino->kind == INODE_TMPFS_FILE && off / PAGE_SIZE + pages > TMPFS_MAX_PAGES)) {
        return -ENOMEM;
    }
    return 0;
}

/* Map `file` (checked) into vm. */
static long map_file(struct vm *vm, uint64_t addr, uint64_t len, unsigned prot, unsigned flags,
                     struct file *file, uint64_t off)
{
    struct inode *ino = file->inode;
    bool shared = (flags & (MAP_SHARED | MAP_PRIVATE)) == MAP_SHARED;
    bool share_pages_of_file = shared && ino->kind == INODE_TMPFS_FILE;
    struct vm_pagevec *pv = kmem_alloc(sizeof(*pv));
    if (!pv) {
        return -ENOMEM;
    }
    long r = vm_pagevec_init(pv, (len + PAGE_MASK) / PAGE_SIZE);
    struct vm_file_map m = {
        .obj = &ino->vmobj,
        .pgoff = off / PAGE_SIZE,
        /* a shared mapping may never write a file it could not write itself */
        .denied = shared && (file->flags & O_ACCMODE) != O_RDWR ? PROT_WRITE : 0,
        .shared = share_pages_of_file,
        .pages = pv,
    };
    bool held = r == 0; /* the reference the region will hold */
    if (held && share_pages_of_file) {
        hold_shared(ino);
        r = share_pages(ino, off / PAGE_SIZE, pv);
    } else if (held) {
        inode_get(ino);
        r = copy_pages(ino, off, pv);
    }
    if (r == 0) {
        r = vm_mmap_file(vm, addr, len, prot, flags, &m);
    }
    if (r < 0 && held) {
        object_put(&ino->vmobj, share_pages_of_file);
    }
    vm_pagevec_fini(pv, r < 0 && !share_pages_of_file); /* the copies, if nobody took them */
    kmem_free(pv, sizeof(*pv));
    return r;
}

long filemap_mmap(struct vm *vm, uint64_t addr, uint64_t len, unsigned prot, unsigned flags, int fd,
                  uint64_t off)
{
    int r = vm_mmap_check(addr, len, prot, flags);
    if (r == 0 && (off & PAGE_MASK)) {
        r = -EINVAL;
    }
    if (r) {
        return r;
    }
    struct file *file = fd_get(fd);
    if (!file) {
        return -EBADF;
    }
    r = check_file(file, len, prot, flags, off);
    long mapped = r ? r : map_file(vm, addr, len, prot, flags, file, off);
    file_put(file); /* the mapping holds the inode, not the descriptor's file */
    return mapped;
}

long filemap_mmap_anon_shared(struct vm *vm, uint64_t addr, uint64_t len, unsigned prot,
                              unsigned flags)
{
    int r = vm_mmap_check(addr, len, prot, flags);
    uint64_t pages = (len + PAGE_MASK) / PAGE_SIZE;
    if (r || pages > VM_PAGEVEC_MAX || !page_have_free(pages)) {
        return r ? r : -ENOMEM;
    }
    struct inode *ino = inode_new(INODE_TMPFS_FILE, S_IFREG | 0600); /* in no directory */
    if (!ino) {
        return -ENOMEM;
    }
    ino->anon = true;
    ino->size = pages * PAGE_SIZE;
    struct vm_pagevec *pv = kmem_alloc(sizeof(*pv));
    long mapped = pv ? vm_pagevec_init(pv, pages) : -ENOMEM;
    if (mapped == 0) {
        struct vm_file_map m = {.obj = &ino->vmobj, .shared = true, .pages = pv};
        hold_shared(ino);
        mapped = share_pages(ino, 0, pv);
        if (mapped == 0) {
            mapped = vm_mmap_file(vm, addr, len, prot, flags, &m);
        }
        if (mapped < 0) {
            object_put(&ino->vmobj, true);
        }
        vm_pagevec_fini(pv, false);
    }
    if (pv) {
        kmem_free(pv, sizeof(*pv));
    }
    inode_put(ino); /* the region holds it now, or nothing does: then its pages go */
    return mapped;
}

long sys_msync(struct trap_frame *f)
{
    unsigned flags = (unsigned)arch_frame_arg(f, 2);
    if ((flags & ~(unsigned)(MS_ASYNC | MS_INVALIDATE | MS_SYNC)) ||
        ((flags & MS_ASYNC) && (flags & MS_SYNC))) {
        return -EINVAL;
    }
    return vm_check_mapped(current_vm(), arch_frame_arg(f, 0), arch_frame_arg(f, 1));
}
