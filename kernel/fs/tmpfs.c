/*
 * tmpfs.c — the bytes of /tmp's files, in whole pages (contract in include/kernel/vfs.h).
 *
 * A file's data is a table of up to TMPFS_FILE_PAGES page addresses (one kmem page),
 * allocated on its first write.  Every page up to the file's size exists and is zero where
 * nothing was written (a write past the end fills the gap with zeroed pages, no holes).
 * All files together hold at most TMPFS_MAX_PAGES pages: a write that would take more
 * writes what fits and then fails with -ENOSPC.  Truncation and the last reference of an
 * unlinked file give the pages back at once.
 * Locks: vfs_lock guards every table and size; user copies are made with it held, one page
 * at a time (order vfs_lock -> vm lock).
 */
#include "kernel/kmem.h"
#include "kernel/lib.h"
#include "kernel/page.h"
#include "kernel/task.h"
#include "kernel/vfs.h"
#include "uapi/zt_errno.h"

static unsigned pages_used; /* vfs_lock */

unsigned tmpfs_pages_used(void)
{
    return __atomic_load_n(&pages_used, __ATOMIC_RELAXED);
}

static uint64_t pages_for(uint64_t size)
{
    return (size + PAGE_SIZE - 1) / PAGE_SIZE;
}

/* Make pages [0, n) exist (lock held).  0, -ENOSPC or -ENOMEM with what fit kept. */
static int grow_locked(struct inode *ino, uint64_t n)
{
    if (!ino->pages) {
        ino->pages = kmem_alloc(TMPFS_FILE_PAGES * sizeof(paddr_t));
        if (!ino->pages) {
            return -ENOMEM;
        }
    }
    for (uint64_t i = 0; i < n; i++) {
        if (ino->pages[i]) {
            continue;
        }
        if (pages_used >= TMPFS_MAX_PAGES) {
            return -ENOSPC;
        }
        ino->pages[i] = page_alloc();
        if (!ino->pages[i]) {
            return -ENOSPC;
        }
        pages_used++;
    }
    return 0;
}

int tmpfs_truncate_locked(struct inode *ino, uint64_t size)
{
    if (size > (uint64_t)TMPFS_FILE_PAGES * PAGE_SIZE) {
        return -EFBIG;
    }
    if (size > ino->size) {
        int r = grow_locked(ino, pages_for(size));
        if (r) {
            return r;
        }
    }
    for (uint64_t i = pages_for(size); ino->pages && i < TMPFS_FILE_PAGES; i++) {
        if (ino->pages[i]) {
            page_free(ino->pages[i]);
            ino->pages[i] = 0;
            pages_used--;
        }
    }
    if (size % PAGE_SIZE && ino->pages && ino->pages[size / PAGE_SIZE] && size < ino->size) {
        char *p = phys_to_virt(ino->pages[size / PAGE_SIZE]);
        memset(p + size % PAGE_SIZE, 0, PAGE_SIZE - size % PAGE_SIZE); /* reads as zeros */
    }
    ino->size = size;
    ino->mtime_ns = vfs_now_ns();
    return 0;
}

void tmpfs_free_data(struct inode *ino)
{
    unsigned long flags = spin_lock_irqsave(&vfs_lock);
    tmpfs_truncate_locked(ino, 0);
    spin_unlock_irqrestore(&vfs_lock, flags);
    if (ino->pages) {
        kmem_free(ino->pages, TMPFS_FILE_PAGES * sizeof(paddr_t));
        ino->pages = 0;
    }
}

static long tmpfs_read(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    struct inode *ino = f->inode;
    struct vm *vm = &current()->proc->vm;
    long done = 0;
    unsigned long flags = spin_lock_irqsave(&vfs_lock);
    while ((size_t)done < n && *pos < ino->size) {
        uint64_t off = *pos % PAGE_SIZE;
        size_t k =
            (size_t)MIN(MIN((uint64_t)(n - (size_t)done), PAGE_SIZE - off), ino->size - *pos);
        const char *src = phys_to_virt(ino->pages[*pos / PAGE_SIZE]);
        if (copy_to_user(vm, ubuf + (uint64_t)done, src + off, k)) {
            done = done ? done : -EFAULT;
            break;
        }
        done += (long)k;
        *pos += k;
    }
    spin_unlock_irqrestore(&vfs_lock, flags);
    return done;
}

static long tmpfs_write(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    struct inode *ino = f->inode;
    struct vm *vm = &current()->proc->vm;
    long done = 0;
    unsigned long flags = spin_lock_irqsave(&vfs_lock);
    if (f->flags & O_APPEND) {
        *pos = ino->size;
    }
    while ((size_t)done < n) {
        uint64_t off = *pos % PAGE_SIZE, page = *pos / PAGE_SIZE;
        size_t k = (size_t)MIN((uint64_t)(n - (size_t)done), PAGE_SIZE - off);
        int r = page >= TMPFS_FILE_PAGES ? -EFBIG : grow_locked(ino, page + 1);
        if (r == 0 && copy_from_user(vm, (char *)phys_to_virt(ino->pages[page]) + off,
                                     ubuf + (uint64_t)done, k)) {
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
    spin_unlock_irqrestore(&vfs_lock, flags);
    return done;
}

const struct file_ops tmpfs_file_ops = {.read = tmpfs_read, .write = tmpfs_write};
