/* SPDX-License-Identifier: MIT */
/*
 * synth.c — synthetic files (contract and locks in include/kernel/synth.h): text buffers,
 * opening, reading and listing, and the inodes a lookup makes.
 *
 * An open synthetic file holds a struct synth_file: the text (or the listing) taken at open.
 * A listing is a run of records, each a mode (4 bytes), an inode number (8) and a
 * NUL-terminated name; a directory position is 2 + the offset of the next record ("." and ".."
 * are 0 and 1), so positions stay meaningful for telldir/seekdir.
 */
#include "kernel/synth.h"
#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/lib.h"
#include "kernel/page.h"
#include "kernel/task.h"
#include "kernel/vfs.h"
#include "uapi/zt_errno.h"

/* ---- text buffers ---- */

void sbuf_init(struct sbuf *b)
{
    memset(b, 0, sizeof(*b));
}

void sbuf_put(struct sbuf *b, const char *s, size_t n)
{
    while (n && !b->err) {
        size_t pg = b->len / PAGE_SIZE, off = b->len % PAGE_SIZE;
        if (pg >= SBUF_MAX_PAGES) {
            b->err = -EFBIG;
            break;
        }
        if (!b->page[pg]) {
            paddr_t pa = page_alloc();
            if (!pa) {
                b->err = -ENOMEM;
                break;
            }
            b->page[pg] = phys_to_virt(pa);
        }
        size_t k = MIN(n, PAGE_SIZE - off);
        memcpy(b->page[pg] + off, s, k);
        b->len += k;
        s += k;
        n -= k;
    }
}

void sbuf_printf(struct sbuf *b, const char *fmt, ...)
{
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    int n = kvsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof(line)) {
        n = sizeof(line) - 1; /* callers print a line at a time, far below this */
    }
    sbuf_put(b, line, n > 0 ? (size_t)n : 0);
}

size_t sbuf_read(const struct sbuf *b, size_t off, char *dst, size_t n)
{
    size_t done = 0;
    while (done < n && off < b->len) {
        size_t pg = off / PAGE_SIZE, in = off % PAGE_SIZE;
        size_t k = MIN(MIN(n - done, PAGE_SIZE - in), b->len - off);
        memcpy(dst + done, b->page[pg] + in, k);
        done += k;
        off += k;
    }
    return done;
}

void sbuf_free(struct sbuf *b)
{
    for (size_t i = 0; i < SBUF_MAX_PAGES && b->page[i]; i++) {
        page_free(virt_to_phys(b->page[i]));
    }
    sbuf_init(b);
}

void sbuf_cpumask(struct sbuf *b, cpumask_t m)
{
    unsigned digits = (ncpus + 3) / 4;
    for (unsigned d = digits; d-- > 0;) {
        unsigned v = 0;
        for (unsigned bit = 0; bit < 4; bit++) {
            v |= cpumask_has(m, d * 4 + bit) ? 1u << bit : 0;
        }
        sbuf_printf(b, "%x%s", v, d && d % 8 == 0 ? "," : "");
    }
}

/* ---- listings ---- */

void synth_list_add(struct sbuf *b, const char *name, uint64_t ino, unsigned mode)
{
    uint32_t m = mode;
    sbuf_put(b, (const char *)&m, sizeof(m));
    sbuf_put(b, (const char *)&ino, sizeof(ino));
    sbuf_put(b, name, strlen(name) + 1);
}

void synth_table_list(struct sbuf *b, const struct synth_entry *table, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        synth_list_add(b, table[i].name, 0x80000000u + i, table[i].mode);
    }
}

/* The tree's children of dir as a listing (for directories without a list operation). */
static int list_children(const struct inode *dir, struct sbuf *b)
{
    unsigned long flags = spin_lock_irqsave(&vfs_lock);
    list_for_each(p, &dir->children) {
        const struct inode *c = container_of(p, struct inode, sibling);
        synth_list_add(b, c->name, c->ino, c->mode);
    }
    spin_unlock_irqrestore(&vfs_lock, flags);
    return b->err;
}

/* ---- the tree ---- */

struct inode *synth_add_locked(struct inode *dir, const char *name, unsigned mode,
                               const struct synth_ops *ops, int a, int b)
{
    ASSERT_HELD(&vfs_lock);
    struct inode *ino = inode_new(INODE_SYNTH, mode);
    if (!ino) {
        return 0;
    }
    ino->synth = ops;
    ino->synth_a = a;
    ino->synth_b = b;
    vfs_link_locked(dir, ino, name); /* the tree keeps the first reference */
    return ino;
}

struct inode *synth_table_lookup_locked(struct inode *dir, const struct synth_entry *table,
                                        size_t n, const char *name)
{
    ASSERT_HELD(&vfs_lock);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(table[i].name, name) == 0) {
            struct inode *c = vfs_child_locked(dir, name);
            return c ? c
                     : synth_add_locked(dir, name, table[i].mode, table[i].ops, dir->synth_a,
                                        dir->synth_b);
        }
    }
    return 0;
}

void synth_prune_locked(struct inode *ino)
{
    ASSERT_HELD(&vfs_lock);
    list_for_each_safe(p, next, &ino->children) {
        synth_prune_locked(container_of(p, struct inode, sibling));
    }
    list_del(&ino->sibling);
    ino->in_tree = false;
    ino->parent = 0;
    inode_put(ino); /* the tree's reference; an open file or cwd may keep it a while */
}

int synth_number(const char *name)
{
    int v = 0;
    if (!name[0] || (name[0] == '0' && name[1])) {
        return -1;
    }
    for (const char *p = name; *p; p++) {
        if (*p < '0' || *p > '9' || v > 100000000) {
            return -1;
        }
        v = v * 10 + (*p - '0');
    }
    return v;
}

struct inode *synth_child_locked(struct inode *dir, const char *name)
{
    ASSERT_HELD(&vfs_lock);
    if (dir->synth && dir->synth->lookup_locked) {
        return dir->in_tree ? dir->synth->lookup_locked(dir, name) : 0;
    }
    return vfs_child_locked(dir, name);
}

int synth_follow_locked(const struct inode *link, char *buf, size_t n, struct inode **direct)
{
    ASSERT_HELD(&vfs_lock);
    *direct = 0;
    return link->synth && link->synth->follow_locked
               ? link->synth->follow_locked(link, buf, n, direct)
               : -ENOENT;
}

long synth_readlink(const struct inode *ino, char *buf, size_t n)
{
    if (!S_ISLNK(ino->mode)) {
        return -EINVAL;
    }
    return ino->synth && ino->synth->readlink ? ino->synth->readlink(ino, buf, n) : -ENOENT;
}

/* ---- open files ---- */

/* An open file's state, in a page of its own (given back at the last close: no object
 * allocator class keeps it). */
struct synth_file {
    struct sbuf text; /* the file's text, or the directory's listing */
    bool fresh_taken; /* taken at open: the first read from 0 need not take it again */
};
_Static_assert(sizeof(struct synth_file) <= PAGE_SIZE, "struct synth_file fits in a page");

static struct synth_file *synth_file_new(void)
{
    paddr_t pa = page_alloc(); /* zeroed */
    return pa ? phys_to_virt(pa) : 0;
}

static void synth_file_free(struct synth_file *sf)
{
    sbuf_free(&sf->text);
    page_free(virt_to_phys(sf));
}

/* The text or listing of ino into b: 0 or -errno. */
static int take(const struct inode *ino, struct sbuf *b)
{
    const struct synth_ops *ops = ino->synth;
    int r;
    if (S_ISDIR(ino->mode)) {
        r = ops && ops->list ? ops->list(ino, b) : list_children(ino, b);
    } else {
        r = ops && ops->show ? ops->show(ino, b) : 0;
    }
    return r ? r : b->err;
}

static long synth_read(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    struct synth_file *sf = f->priv;
    const struct synth_ops *ops = f->inode->synth;
    if (*pos == 0 && ops && ops->show_fresh && !sf->fresh_taken) {
        struct sbuf again;
        sbuf_init(&again);
        if (take(f->inode, &again) == 0) { /* else keep the text there is */
            sbuf_free(&sf->text);
            sf->text = again;
        } else {
            sbuf_free(&again);
        }
    }
    sf->fresh_taken = false;
    size_t done = 0;
    char chunk[256];
    while (done < n && *pos < sf->text.len) {
        size_t k = sbuf_read(&sf->text, (size_t)*pos, chunk, MIN(n - done, sizeof(chunk)));
        if (copy_to_user(current_vm(), ubuf + done, chunk, k)) {
            return done ? (long)done : -EFAULT;
        }
        done += k;
        *pos += k;
    }
    return (long)done;
}

static long synth_dir_read(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    return -EISDIR;
}

static int synth_readdir(struct file *f, uint64_t *pos, char *name, uint64_t *ino, unsigned *type)
{
    struct synth_file *sf = f->priv;
    const struct inode *dir = f->inode;
    if (*pos < 2) {
        kstrlcpy(name, *pos ? ".." : ".", VFS_NAME_MAX + 1);
        *ino = *pos && dir->parent ? dir->parent->ino : dir->ino;
        *type = S_IFDIR >> 12;
        *pos += 1;
        return 1;
    }
    size_t off = (size_t)(*pos - 2);
    uint32_t mode;
    if (sbuf_read(&sf->text, off, (char *)&mode, sizeof(mode)) != sizeof(mode) ||
        sbuf_read(&sf->text, off + 4, (char *)ino, sizeof(*ino)) != sizeof(*ino)) {
        return 0;
    }
    size_t len = sbuf_read(&sf->text, off + 12, name, VFS_NAME_MAX + 1);
    name[len ? len - 1 : 0] = 0; /* records always end with their NUL */
    *type = (mode & S_IFMT) >> 12;
    *pos = 2 + off + 12 + strlen(name) + 1;
    return 1;
}

static void synth_release(struct file *f)
{
    synth_file_free(f->priv);
}

static const struct file_ops synth_file_ops = {.read = synth_read, .release = synth_release};
static const struct file_ops synth_dir_ops = {
    .read = synth_dir_read, .release = synth_release, .readdir = synth_readdir};

int synth_open(struct inode *ino, unsigned flags, struct file **out)
{
    bool dir = S_ISDIR(ino->mode);
    if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC)) {
        return dir ? -EISDIR : -EACCES;
    }
    if ((flags & O_DIRECTORY) && !dir) {
        return -ENOTDIR;
    }
    struct synth_file *sf = synth_file_new();
    if (!sf) {
        return -ENOMEM;
    }
    int r = take(ino, &sf->text);
    if (r) {
        synth_file_free(sf);
        return r == -ESRCH ? -ENOENT : r; /* its process went away since the lookup */
    }
    sf->fresh_taken = true;
    *out = file_alloc(ino, dir ? &synth_dir_ops : &synth_file_ops, flags, sf);
    if (!*out) {
        synth_file_free(sf);
        return -ENOMEM;
    }
    return 0;
}
