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
 *
 * Shared mappings (kernel/fs/filemap.c) map these very pages into address spaces.  While a
 * file has any (ino->maps), no page of it is freed, not even past its size: a truncation
 * keeps them (a mapping reads what it wrote past the end, where Linux would raise SIGBUS),
 * the bytes between the old size and the new one are zeroed when the file grows again, and
 * the pages past the size go back when the last mapping does (tmpfs_unmapped_locked).
 * Anonymous shared memory (mmap MAP_SHARED|MAP_ANONYMOUS) is a file of this kind outside the
 * tree (ino->anon), which /tmp's bound does not count: it is bounded by memory, as anonymous
 * private memory is.
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
 * absent (or out of memory), and for any i past what the two table levels reach. */
static paddr_t *slot(struct inode *ino, uint64_t i, bool make)
{
    paddr_t **top = (paddr_t **)&ino->pages;
    if (i >= (uint64_t)TABLE_SLOTS * TABLE_SLOTS) {
        return 0;
    }
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

/* The most data pages ino may have: /tmp's bound, or for anonymous shared memory (which
 * /tmp's bound does not count) what the two table levels hold. */
static uint64_t page_limit(const struct inode *ino)
{
    return ino->anon ? (uint64_t)TABLE_SLOTS * TABLE_SLOTS : TMPFS_MAX_PAGES;
}

/* Make data page i exist, zeroed (lock held): 0, or -ENOSPC. */
static int make_page_locked(struct inode *ino, uint64_t i)
{
    paddr_t *s = i < page_limit(ino) ? slot(ino, i, true) : 0;
    if (s && *s) {
        return 0;
    }
    if (!s || (!ino->anon && pages_used >= TMPFS_MAX_PAGES)) {
        return -ENOSPC;
    }
    *s = page_alloc();
    if (!*s) {
        return -ENOSPC;
    }
    pages_used += !ino->anon;
    ino->pages_end = MAX(ino->pages_end, i + 1);
    return 0;
}

/* Make pages [0, n) exist (lock held).  0, or -ENOSPC with what fit kept. */
static int grow_locked(struct inode *ino, uint64_t n)
{
    ASSERT_HELD(&vfs_lock);
    ASSERT(ino->kind == INODE_TMPFS_FILE && n <= TMPFS_MAX_PAGES);
    /* Every page below the size exists already, so only the ones past it are looked at (a
     * long write grows the file a page at a time: looking from 0 each time was quadratic). */
    for (uint64_t i = pages_for(ino->size); i < n; i++) {
        int r = make_page_locked(ino, i);
        if (r) {
            return r;
        }
    }
    return 0;
}

/* Data page i of ino (it exists: i is below the size). */
static char *page_of(struct inode *ino, uint64_t i)
{
    paddr_t *s = slot(ino, i, false);
    ASSERT(s && *s); /* every page up to the size exists */
    return phys_to_virt(*s);
}

/* Give back every page past `size` and zero the last page past it (lock held). */
static void drop_past_locked(struct inode *ino, uint64_t size)
{
    for (uint64_t i = pages_for(size); ino->pages && i < ino->pages_end; i++) {
        paddr_t *s = slot(ino, i, false);
        if (s && *s) {
            ASSERT(ino->anon || pages_used > 0);
            page_free(*s);
            *s = 0;
            pages_used -= !ino->anon;
        }
    }
    ino->pages_end = MIN(ino->pages_end, pages_for(size));
    paddr_t *last = size % PAGE_SIZE ? slot(ino, size / PAGE_SIZE, false) : 0;
    if (last && *last) {
        char *p = phys_to_virt(*last);
        memset(p + size % PAGE_SIZE, 0, PAGE_SIZE - size % PAGE_SIZE); /* reads as zeros */
    }
}

/* The file grows from its size to `to` over pages a shared mapping may have written past the
 * end: zero those bytes in the pages that exist, so the new part reads as zeros (lock held;
 * without a mapping nothing exists past the size but zeros).  Pages exist only below
 * pages_end, so the walk stops there: at most the file's page limit, whatever `to` is (a
 * write's offset may be anything up to 2^63). */
static void zero_past_size_locked(struct inode *ino, uint64_t to)
{
    bool mapped = __atomic_load_n(&ino->maps, __ATOMIC_RELAXED) != 0;
    to = MIN(to, ino->pages_end * PAGE_SIZE);
    for (uint64_t at = ino->size; mapped && at < to;) {
        uint64_t next = MIN(to, (at / PAGE_SIZE + 1) * PAGE_SIZE);
        paddr_t *s = slot(ino, at / PAGE_SIZE, false);
        if (s && *s) {
            memset((char *)phys_to_virt(*s) + at % PAGE_SIZE, 0, next - at);
        }
        at = next;
    }
}

int tmpfs_truncate_locked(struct inode *ino, uint64_t size)
{
    ASSERT_HELD(&vfs_lock);
    ASSERT(ino->kind == INODE_TMPFS_FILE);
    if (size > (uint64_t)TMPFS_MAX_PAGES * PAGE_SIZE) {
        return -EFBIG;
    }
    if (size > ino->size) {
        int r = grow_locked(ino, pages_for(size));
        if (r) {
            return r;
        }
        zero_past_size_locked(ino, size);
    } else if (!__atomic_load_n(&ino->maps, __ATOMIC_RELAXED)) {
        drop_past_locked(ino, size); /* while mapped, the mappings keep every page (maps) */
    }
    ino->size = size;
    ino->mtime_ns = vfs_now_ns();
    return 0;
}

int tmpfs_map_page_locked(struct inode *ino, uint64_t i, paddr_t *pa)
{
    int r = make_page_locked(ino, i);
    if (r == 0) {
        *pa = *slot(ino, i, false);
    }
    return r;
}

void tmpfs_unmapped_locked(struct inode *ino)
{
    drop_past_locked(ino, ino->size);
}

void tmpfs_free_data(struct inode *ino)
{
    ASSERT(ino->refs == 0 && !ino->in_tree); /* the last reference is gone */
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

int tmpfs_read_kernel(struct inode *ino, uint64_t off, void *buf, size_t n)
{
    char *dst = buf;
    while (n) { /* a page at a time, the lock taken for each (interrupts stay enabled) */
        size_t k = (size_t)MIN((uint64_t)n, PAGE_SIZE - off % PAGE_SIZE);
        spin_lock(&vfs_lock);
        bool inside = off <= ino->size && k <= ino->size - off;
        if (inside) {
            memcpy(dst, page_of(ino, off / PAGE_SIZE) + off % PAGE_SIZE, k);
        }
        spin_unlock(&vfs_lock);
        if (!inside) {
            return -EIO; /* the file shrank meanwhile */
        }
        dst += k, off += k, n -= k;
    }
    return 0;
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
    if (*pos > ino->size) {
        zero_past_size_locked(ino, *pos); /* the gap reads as zeros */
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
