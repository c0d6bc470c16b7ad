/* SPDX-License-Identifier: MIT */
/*
 * dir.c — directory changes (mkdir, unlink, rmdir, rename: tmpfs directories only), reading
 * directories and links, the read-only file operations of the initrd, and building the tree
 * at boot (contract and locks in include/kernel/vfs.h).
 */
#include "kernel/initrd.h"
#include "kernel/kmem.h"
#include "kernel/lib.h"
#include "kernel/mounts.h"
#include "kernel/printk.h"
#include "kernel/synth.h"
#include "kernel/task.h"
#include "kernel/vfs.h"
#include "uapi/zt_errno.h"

/* ---- changes under /tmp ---- */

static bool is_dot(const char *name)
{
    return !strcmp(name, ".") || !strcmp(name, "..");
}

int vfs_mkdir(struct inode *cwd, const char *path, unsigned mode)
{
    struct inode *dir;
    char last[VFS_NAME_MAX + 1];
    bool slash;
    int r = vfs_lookup_parent(cwd, path, &dir, last, &slash);
    if (r) {
        return r;
    }
    struct inode *d = inode_new(INODE_DIR, S_IFDIR | (mode & 07777 & ~vfs_umask()));
    spin_lock(&vfs_lock);
    r = !last[0] || is_dot(last) || vfs_child_locked(dir, last) ? -EEXIST
        : !dir->writable_dir                                    ? -EROFS
        : !dir->in_tree                                         ? -ENOENT
        : !d                                                    ? -ENOMEM
                                                                : 0;
    if (r == 0) {
        d->writable_dir = true;
        vfs_link_locked(dir, d, last); /* the tree holds d's first reference */
        d = 0;
    }
    spin_unlock(&vfs_lock);
    if (d) {
        inode_put(d);
    }
    inode_put(dir);
    return r;
}

int vfs_symlink(struct inode *cwd, const char *target, const char *path)
{
    struct inode *dir;
    char last[VFS_NAME_MAX + 1];
    bool slash;
    size_t len = strlen(target);
    if (len == 0 || len >= VFS_PATH_MAX) {
        return len ? -ENAMETOOLONG : -ENOENT;
    }
    int r = vfs_lookup_parent(cwd, path, &dir, last, &slash);
    if (r) {
        return r;
    }
    struct inode *l = inode_new(INODE_SYMLINK, S_IFLNK | 0777);
    char *copy = l ? kmem_alloc(VFS_PATH_MAX) : 0;
    if (copy) {
        memcpy(copy, target, len + 1);
        l->data = copy; /* freed with the inode */
        l->size = len;
    }
    spin_lock(&vfs_lock);
    r = !last[0] || is_dot(last) || slash || vfs_child_locked(dir, last) ? -EEXIST
        : !dir->writable_dir                                             ? -EROFS
        : !dir->in_tree                                                  ? -ENOENT
        : !copy                                                          ? -ENOMEM
                                                                         : 0;
    if (r == 0) {
        vfs_link_locked(dir, l, last); /* the tree holds l's first reference */
        l = 0;
    }
    spin_unlock(&vfs_lock);
    if (l) {
        inode_put(l);
    }
    inode_put(dir);
    return r;
}

int vfs_chmod(struct inode *ino, unsigned mode)
{
    bool tmp = ino->kind == INODE_TMPFS_FILE || (S_ISDIR(ino->mode) && ino->writable_dir);
    if (!tmp) {
        return -EROFS; /* the initrd, /dev and /proc keep their modes */
    }
    spin_lock(&vfs_lock);
    ino->mode = (ino->mode & S_IFMT) | (mode & 07777);
    spin_unlock(&vfs_lock);
    return 0;
}

/* Take ino out of the tree (lock held); the tree's reference is dropped by the caller. */
static void unlink_locked(struct inode *ino)
{
    ASSERT_HELD(&vfs_lock);
    ASSERT(ino->in_tree && ino->parent && !list_empty(&ino->sibling));
    list_del(&ino->sibling);
    ino->in_tree = false;
    ino->parent->mtime_ns = vfs_now_ns();
    ino->parent = 0;
}

/* May `victim` in `dir` be removed (dir: rmdir semantics)?  0 or -errno (lock held). */
static int check_remove(struct inode *dir, struct inode *victim, bool want_dir)
{
    ASSERT_HELD(&vfs_lock);
    ASSERT(victim->parent == dir);
    if (!dir->writable_dir) {
        return -EROFS;
    }
    if (want_dir && !S_ISDIR(victim->mode)) {
        return -ENOTDIR;
    }
    if (!want_dir && S_ISDIR(victim->mode)) {
        return -EISDIR;
    }
    if (want_dir && !list_empty(&victim->children)) {
        return -ENOTEMPTY;
    }
    return 0;
}

int vfs_unlink(struct inode *cwd, const char *path, bool want_dir)
{
    struct inode *dir;
    char last[VFS_NAME_MAX + 1];
    bool slash;
    int r = vfs_lookup_parent(cwd, path, &dir, last, &slash);
    if (r) {
        return r;
    }
    spin_lock(&vfs_lock);
    struct inode *victim = last[0] && !is_dot(last) ? vfs_child_locked(dir, last) : 0;
    r = !last[0] || is_dot(last) ? (want_dir ? -EBUSY : -EISDIR)
        : !victim                ? -ENOENT
        : slash && !want_dir     ? -ENOTDIR
                                 : check_remove(dir, victim, want_dir);
    if (r == 0) {
        unlink_locked(victim);
    }
    spin_unlock(&vfs_lock);
    if (r == 0) {
        inode_put(victim); /* the tree's reference: freed now unless still open */
    }
    inode_put(dir);
    return r;
}

/* Is `a` the directory `d` or one of its ancestors (lock held)? */
static bool is_ancestor_locked(const struct inode *a, const struct inode *d)
{
    ASSERT_HELD(&vfs_lock);
    for (; d; d = d->parent == d ? 0 : d->parent) {
        if (d == a) {
            return true;
        }
    }
    return false;
}

/* rename within /tmp (lock held): checks, then replaces any target. *gone: an inode that
 * left the tree, for the caller to release. */
static int rename_locked(struct inode *fd, const char *fname, struct inode *td, const char *tname,
                         struct inode **gone)
{
    ASSERT_HELD(&vfs_lock);
    ASSERT(S_ISDIR(fd->mode) && S_ISDIR(td->mode) && !*gone);
    struct inode *src = vfs_child_locked(fd, fname), *dst = vfs_child_locked(td, tname);
    if (!src) {
        return -ENOENT;
    }
    if (!fd->writable_dir || !td->writable_dir) {
        return -EROFS;
    }
    if (!td->in_tree) {
        return -ENOENT; /* a removed directory (someone's cwd): as for mkdir there */
    }
    if (S_ISDIR(src->mode) && is_ancestor_locked(src, td)) {
        return -EINVAL; /* a directory into itself */
    }
    if (dst == src) {
        return 0;
    }
    if (dst) {
        int r = S_ISDIR(src->mode) ? check_remove(td, dst, true) : check_remove(td, dst, false);
        if (r) {
            return r;
        }
        unlink_locked(dst);
        *gone = dst;
    }
    list_del(&src->sibling);
    fd->mtime_ns = vfs_now_ns();
    vfs_link_locked(td, src, tname);
    return 0;
}

int vfs_rename(struct inode *fcwd, const char *from, struct inode *tcwd, const char *to)
{
    struct inode *fd, *td, *gone = 0;
    char fname[VFS_NAME_MAX + 1], tname[VFS_NAME_MAX + 1];
    bool s1, s2;
    int r = vfs_lookup_parent(fcwd, from, &fd, fname, &s1);
    if (r) {
        return r;
    }
    r = vfs_lookup_parent(tcwd, to, &td, tname, &s2);
    if (r) {
        inode_put(fd);
        return r;
    }
    spin_lock(&vfs_lock);
    r = !fname[0] || !tname[0] || is_dot(fname) || is_dot(tname)
            ? -EBUSY
            : rename_locked(fd, fname, td, tname, &gone);
    spin_unlock(&vfs_lock);
    if (gone) {
        inode_put(gone);
    }
    inode_put(fd);
    inode_put(td);
    return r;
}

/* ---- reading directories and links ---- */

long vfs_readlink(struct inode *ino, char *buf, size_t n)
{
    if (ino->kind == INODE_SYNTH) {
        return synth_readlink(ino, buf, n);
    }
    if (ino->kind != INODE_SYMLINK) {
        return -EINVAL;
    }
    size_t len = strlen(ino->data);
    memcpy(buf, ino->data, MIN(len, n));
    return (long)MIN(len, n);
}

/* DT_* of a mode (dirent d_type). */
static unsigned dtype(unsigned mode)
{
    return (mode & S_IFMT) >> 12;
}

#ifdef ZT_HOST
/* Host tests only: called by vfs_dir_entry for "..", with the tree's lock held, before it
 * reads the directory's parent, so a test can play an rmdir of it meanwhile (VFS-25). */
void (*vfs_dotdot_hook)(struct inode *dir);
#endif

int vfs_dir_entry(struct inode *dir, uint64_t *pos, char *name, uint64_t *ino, unsigned *type)
{
    uint64_t index = *pos;
    spin_lock(&vfs_lock);
    if (index < 2) {
#ifdef ZT_HOST
        if (index == 1 && vfs_dotdot_hook) {
            vfs_dotdot_hook(dir);
        }
#endif
        /* The parent under the lock: rmdir clears it (a removed directory's ".." is itself). */
        const struct inode *up = index ? dir->parent : 0;
        kstrlcpy(name, index ? ".." : ".", VFS_NAME_MAX + 1);
        *ino = up ? up->ino : dir->ino;
        *type = dtype(S_IFDIR);
        *pos = index + 1;
        spin_unlock(&vfs_lock);
        return 1;
    }
    int found = 0;
    list_for_each(p, &dir->children) {
        struct inode *c = container_of(p, struct inode, sibling);
        ASSERT(c->parent == dir && c->in_tree && c->dir_pos < dir->next_pos);
        if (c->dir_pos >= index) { /* the entry at index, or the next if it went away */
            kstrlcpy(name, c->name, VFS_NAME_MAX + 1);
            *ino = c->ino;
            *type = dtype(c->mode);
            *pos = c->dir_pos + 1;
            found = 1;
            break;
        }
    }
    spin_unlock(&vfs_lock);
    return found;
}

long vfs_path_of(struct inode *ino, char *buf, size_t n)
{
    char tmp[VFS_PATH_MAX];
    size_t at = sizeof(tmp) - 1;
    tmp[at] = 0;
    spin_lock(&vfs_lock);
    long r = ino->in_tree || ino == vfs_root ? 0 : -ENOENT;
    for (struct inode *i = ino; r == 0 && i != vfs_root; i = i->parent) {
        if (!i->parent) {
            r = -ENOENT; /* not reachable from the root (cannot happen: rename_locked) */
            break;
        }
        size_t len = strlen(i->name);
        if (len + 1 > at) {
            r = -ENAMETOOLONG;
            break;
        }
        at -= len;
        memcpy(tmp + at, i->name, len);
        tmp[--at] = '/';
    }
    spin_unlock(&vfs_lock);
    if (r) {
        return r;
    }
    if (at == sizeof(tmp) - 1) {
        tmp[--at] = '/'; /* the root itself */
    }
    size_t len = sizeof(tmp) - 1 - at;
    if (len + 1 > n) {
        return -ERANGE;
    }
    memcpy(buf, tmp + at, len + 1);
    return (long)len;
}

int vfs_file_bytes(struct inode *ino, const void **data, uint64_t *size)
{
    if (ino->kind != INODE_INITRD_FILE) {
        return S_ISDIR(ino->mode) ? -EACCES : -ENOEXEC; /* only the initrd's files run */
    }
    *data = ino->data;
    *size = ino->size;
    return 0;
}

int vfs_read_kernel(struct inode *ino, uint64_t off, void *buf, size_t n)
{
    if (ino->kind == INODE_TMPFS_FILE) {
        return tmpfs_read_kernel(ino, off, buf, n);
    }
    if (ino->kind != INODE_INITRD_FILE) {
        return -EACCES;
    }
    if (off > ino->size || n > ino->size - off) {
        return -EIO;
    }
    memcpy(buf, (const char *)ino->data + off, n);
    return 0;
}

/* ---- read-only files and directories as files ---- */

static long ro_read(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    struct inode *ino = f->inode;
    if (*pos >= ino->size) {
        return 0;
    }
    size_t k = (size_t)MIN((uint64_t)n, ino->size - *pos);
    if (copy_to_user(current_vm(), ubuf, (const char *)ino->data + *pos, k)) {
        return -EFAULT;
    }
    *pos += k;
    return (long)k;
}

static long dir_read(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    return -EISDIR;
}

const struct file_ops ro_file_ops = {.read = ro_read};
const struct file_ops dir_ops = {.read = dir_read};

/* ---- the tree at boot ---- */

/* The directory `path` (relative, no trailing slash) under the root, made if missing. */
static struct inode *mkdir_p_locked(const char *path)
{
    ASSERT_HELD(&vfs_lock);
    struct inode *cur = vfs_root;
    char name[VFS_NAME_MAX + 1];
    while (*path) {
        size_t n = 0;
        while (path[n] && path[n] != '/') {
            n++;
        }
        if (n == 0 || n > VFS_NAME_MAX) {
            return 0;
        }
        memcpy(name, path, n);
        name[n] = 0;
        path += n + (path[n] == '/');
        struct inode *next = vfs_child_locked(cur, name);
        if (!next) {
            next = inode_new(INODE_DIR, S_IFDIR | 0755);
            if (!next) {
                return 0;
            }
            vfs_link_locked(cur, next, name);
        }
        if (!S_ISDIR(next->mode)) {
            return 0;
        }
        cur = next;
    }
    return cur;
}

/* A built-in file or link at `base` in dir that a boot loader's member replaces (vfs_lock
 * held): out of the tree, freed once nothing holds it.  A directory stays (the member is then
 * skipped). */
static void replace_locked(struct inode *dir, const char *base)
{
    struct inode *old = vfs_child_locked(dir, base);
    if (old && !S_ISDIR(old->mode)) {
        list_del(&old->sibling);
        old->in_tree = false;
        old->parent = 0;
        inode_put(old);
    }
}

/* One initrd member: a directory, a file or a symbolic link at `name` (vfs_lock held); one from
 * the boot loader's archive (over) replaces a built-in file or link of the same path. */
static void add_member(const char *name, unsigned mode, const void *data, size_t size, bool over)
{
    ASSERT_HELD(&vfs_lock);
    char dirpath[VFS_PATH_MAX];
    kstrlcpy(dirpath, name, sizeof(dirpath));
    char *slash = 0;
    for (char *p = dirpath; *p; p++) {
        slash = *p == '/' ? p : slash;
    }
    const char *base = slash ? slash + 1 : dirpath;
    if (slash) {
        *slash = 0;
    }
    struct inode *dir = mkdir_p_locked(slash ? dirpath : "");
    if (S_ISDIR(mode)) {
        mkdir_p_locked(name);
        return;
    }
    bool link = S_ISLNK(mode);
    char *target = link && size && size < VFS_PATH_MAX ? kmem_alloc(VFS_PATH_MAX) : 0;
    if (dir && over && !S_ISDIR(mode) && base[0]) {
        replace_locked(dir, base);
    }
    if (!dir || !base[0] || strlen(base) > VFS_NAME_MAX || vfs_child_locked(dir, base) ||
        (link && !target)) {
        printk("vfs: initrd member '%pE' skipped\n", name);
        return;
    }
    struct inode *ino = inode_new(link ? INODE_SYMLINK : INODE_INITRD_FILE,
                                  link ? (S_IFLNK | 0777) : (S_IFREG | (mode & 0555)));
    if (ino && link) {
        memcpy(target, data, size); /* cpio keeps a link's target without its NUL */
        ino->data = target;
    } else if (ino) {
        ino->data = data;
    }
    if (ino) {
        ino->size = size;
        vfs_link_locked(dir, ino, base);
    }
}

static struct inode *add_dir_locked(const char *name, unsigned mode, bool writable)
{
    ASSERT_HELD(&vfs_lock);
    struct inode *d = mkdir_p_locked(name);
    if (d) {
        d->mode = S_IFDIR | mode;
        d->writable_dir = writable;
    }
    return d;
}

void vfs_init(void)
{
    vfs_root = inode_new(INODE_DIR, S_IFDIR | 0755);
    if (!vfs_root) {
        return;
    }
    vfs_root->parent = vfs_root;
    spin_lock(&vfs_lock);
    initrd_walk(add_member);
    add_dir_locked("tmp", 01777, true);
    struct inode *dev = add_dir_locked("dev", 0755, false);
    add_dir_locked("dev/shm", 01777, true); /* POSIX shared memory: a RAM directory as /tmp */
    procfs_init_locked(vfs_root);           /* /proc and /sys: kernel/fs/synth.h */
    sysfs_init_locked(vfs_root);
    spin_unlock(&vfs_lock);
    if (dev) {
        devfs_init(dev);
    }
    mounts_init(); /* which file system each part of the tree is (st_dev, statfs) */
}
