/* SPDX-License-Identifier: MIT */
/*
 * tmpfs.c — the bytes of /tmp's files, in whole pages (contract in include/kernel/vfs.h).
 *
 * A file's data pages are found through two levels of tables (kmem pages of TABLE_SLOTS
 * entries each: `pages` points to the top one), made on first use.  Every page up to the
 * file's size exists and is zero where nothing was written (a write past the end fills the
 * gap with zeroed pages, no holes).  All files together hold at most TMPFS_MAX_PAGES data
 * pages: a write that would take more writes what fits and then fails with -ENOSPC.  Truncation and
 * the last reference of an unlinked file give the pages back at once.
 *
 * Locks: vfs_lock guards every table and size; user copies are made with it held, one page at a
 * time (order vfs_lock -> vm lock, whose holds are one page each).  vfs_lock is taken with
 * interrupts enabled (lockrank.h), so a read or write of the whole of /tmp (TMPFS_MAX_PAGES
 * pages, 8 MiB: 30-48 ms under TCG) never keeps a CPU from its interrupts; it looks for a fatal
 * signal before every page after the first, so a killed reader or writer stops within one page.
 * A truncation walks at most TMPFS_MAX_PAGES slots.
 */
#include "kernel/kmem.h"
#include "kernel/lib.h"
#include "kernel/page.h"
#include "kernel/signal.h"
#include "kernel/task.h"
#include "kernel/vfs.h"
#include "uapi/zt_errno.h"

#define TABLE_SLOTS (PAGE_SIZE / sizeof(paddr_t))

static unsigned pages_used; /* vfs_lock */

/* The slot holding data page i of ino, making the tables on the way when `make`; NULL if
 * absent (or out of memory). */
static paddr_t *slot(struct inode *ino, uint64_t i, bool make)
{
    paddr_t **top = (paddr_t **)&ino->pages;
    if (!*top && make) {
        *top = kmem_alloc(PAGE_SIZE);
    }
    if (!*top) {
        return 0;
    }
    paddr_t **mid = (paddr_t **)*top + i / TABLE_SLOTS;
    if (!*mid && make) {
        *mid = kmem_alloc(PAGE_SIZE);
    }
    return *mid ? &(*mid)[i % TABLE_SLOTS] : 0;
}

static uint64_t pages_for(uint64_t size)
{
    return (size + PAGE_SIZE - 1) / PAGE_SIZE;
}

/* Between two pages of a long copy: stop (keeping what was done) when the caller is being
 * killed. */
static bool copy_must_stop(long done)
{
    return done > 0 && signal_fatal_pending(current());
}

unsigned tmpfs_pages_used(void)
{
    return __atomic_load_n(&pages_used, __ATOMIC_RELAXED);
}

/* Make pages [0, n) exist (lock held).  0, or -ENOSPC with what fit kept.  Every page below
 * the size exists already, so only the ones past it are looked at (a long write grows the
 * file a page at a time: looking from 0 each time was quadratic). */
static int grow_locked(struct inode *ino, uint64_t n)
{
    for (uint64_t i = pages_for(ino->size); i < n; i++) {
        paddr_t *s = slot(ino, i, true);
        if (s && *s) {
            continue;
        }
        if (!s || pages_used >= TMPFS_MAX_PAGES) {
            return -ENOSPC;
        }
        *s = page_alloc();
        if (!*s) {
            return -ENOSPC;
        }
        pages_used++;
    }
    return 0;
}

/* Data page i of ino (it exists: i is below the size). */
static char *page_of(struct inode *ino, uint64_t i)
{
    return phys_to_virt(*slot(ino, i, false));
}

int tmpfs_truncate_locked(struct inode *ino, uint64_t size)
{
    if (size > (uint64_t)TMPFS_MAX_PAGES * PAGE_SIZE) {
        return -EFBIG;
    }
    if (size > ino->size) {
        int r = grow_locked(ino, pages_for(size));
        if (r) {
            return r;
        }
    }
    for (uint64_t i = pages_for(size); ino->pages && i < TMPFS_MAX_PAGES; i++) {
        paddr_t *s = slot(ino, i, false);
        if (s && *s) {
            page_free(*s);
            *s = 0;
            pages_used--;
        }
    }
    paddr_t *last = size % PAGE_SIZE ? slot(ino, size / PAGE_SIZE, false) : 0;
    if (last && *last && size < ino->size) {
        char *p = phys_to_virt(*last);
        memset(p + size % PAGE_SIZE, 0, PAGE_SIZE - size % PAGE_SIZE); /* reads as zeros */
    }
    ino->size = size;
    ino->mtime_ns = vfs_now_ns();
    return 0;
}

void tmpfs_free_data(struct inode *ino)
{
    spin_lock(&vfs_lock);
    tmpfs_truncate_locked(ino, 0);
    spin_unlock(&vfs_lock);
    paddr_t **top = (paddr_t **)ino->pages;
    for (unsigned i = 0; top && i < TABLE_SLOTS; i++) {
        if (top[i]) {
            kmem_free(top[i], PAGE_SIZE);
        }
    }
    if (top) {
        kmem_free(top, PAGE_SIZE);
    }
    ino->pages = 0;
}

static long tmpfs_read(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    struct inode *ino = f->inode;
    struct vm *vm = current_vm();
    long done = 0;
    spin_lock(&vfs_lock);
    while ((size_t)done < n && *pos < ino->size && !copy_must_stop(done)) {
        uint64_t off = *pos % PAGE_SIZE;
        size_t k =
            (size_t)MIN(MIN((uint64_t)(n - (size_t)done), PAGE_SIZE - off), ino->size - *pos);
        const char *src = page_of(ino, *pos / PAGE_SIZE);
        if (copy_to_user(vm, ubuf + (uint64_t)done, src + off, k)) {
            done = done ? done : -EFAULT;
            break;
        }
        done += (long)k;
        *pos += k;
    }
    spin_unlock(&vfs_lock);
    return done;
}

static long tmpfs_write(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    struct inode *ino = f->inode;
    struct vm *vm = current_vm();
    long done = 0;
    spin_lock(&vfs_lock);
    if (f->flags & O_APPEND) {
        *pos = ino->size;
    }
    while ((size_t)done < n && !copy_must_stop(done)) {
        uint64_t off = *pos % PAGE_SIZE, page = *pos / PAGE_SIZE;
        size_t k = (size_t)MIN((uint64_t)(n - (size_t)done), PAGE_SIZE - off);
        int r = page >= TMPFS_MAX_PAGES ? -ENOSPC : grow_locked(ino, page + 1);
        if (r == 0 && copy_from_user(vm, page_of(ino, page) + off, ubuf + (uint64_t)done, k)) {
            r = -EFAULT;
        }
        if (r) {
            done = done ? done : r;
            break;
        }
        done += (long)k;
        *pos += k;
        ino->size = MAX(ino->size, *pos);
    }
    ino->mtime_ns = vfs_now_ns();
    spin_unlock(&vfs_lock);
    return done;
}

const struct file_ops tmpfs_file_ops = {.read = tmpfs_read, .write = tmpfs_write};
