/* SPDX-License-Identifier: MIT */
/*
 * vfs.c — the tree: path lookup, inode and file lifetimes, opening, directory changes
 * (contract and locks in include/kernel/vfs.h).
 *
 * Lookup walks components under vfs_lock: "." stays, ".." goes to the parent (the root's
 * parent is the root), a symbolic link in the middle of a path — or at its end when asked —
 * is replaced by its target, resolved from the link's own directory, at most VFS_LINK_MAX
 * deep and at most VFS_LINKS_MAX links in the whole lookup (Linux's MAXSYMLINKS, 40, and
 * its ELOOP): the nesting limit alone let one stat() of a chain of links to links follow
 * 84^8 of them (issue 20, the link bomb).  So a lookup walks at most VFS_WALK_MAX_STEPS
 * components, and it looks for a fatal signal before each one: a killed walker stops at
 * once.  The inode found is returned with a reference taken before the lock is dropped.
 */
#include "kernel/vfs.h"
#include "kernel/acct.h"
#include "kernel/clock.h"
#include "kernel/cycles.h"
#include "kernel/filemap.h"
#include "kernel/kmem.h"
#include "kernel/lib.h"
#include "kernel/signal.h"
#include "kernel/synth.h"
#include "kernel/task.h"
#include "uapi/zt_errno.h"

spinlock_t vfs_lock = SPINLOCK_INIT_RANK(LOCK_VFS);
struct inode *vfs_root;
static uint64_t next_ino = 1;

uint64_t vfs_now_ns(void)
{
    return clock_realtime_ns(); /* file times are wall time, as on Linux */
}

unsigned vfs_umask(void)
{
    struct task *t = current();
    return t && t->proc ? t->proc->umask : 022;
}

struct inode *inode_new(enum inode_kind kind, unsigned mode)
{
    struct inode *ino = kmem_alloc(sizeof(*ino));
    if (!ino) {
        return 0;
    }
    ino->kind = kind;
    ino->mode = mode;
    ino->ino = __atomic_fetch_add(&next_ino, 1, __ATOMIC_RELAXED);
    ino->refs = 1;
    ino->mtime_ns = vfs_now_ns();
    list_init(&ino->children);
    list_init(&ino->sibling);
    ino->next_pos = 2; /* after "." and ".." */
    ino->vmobj.ops = &filemap_object_ops;
    return ino;
}

void inode_get(struct inode *ino)
{
    int refs = __atomic_add_fetch(&ino->refs, 1, __ATOMIC_RELAXED);
    ASSERT(refs > 1); /* taken from a live reference: the tree's, a lookup's, a file's */
}

void inode_put(struct inode *ino)
{
    int refs = __atomic_sub_fetch(&ino->refs, 1, __ATOMIC_ACQ_REL);
    ASSERT(refs >= 0);
    if (refs != 0) {
        return;
    }
    ASSERT(!ino->in_tree && ino != vfs_root); /* the tree holds a reference to its inodes */
    if (ino->kind == INODE_TMPFS_FILE) {
        tmpfs_free_data(ino);
    }
    if (ino->kind == INODE_SYMLINK && ino->data) {
        kmem_free((void *)ino->data, VFS_PATH_MAX); /* links own a copy of their target */
    }
    kmem_free(ino, sizeof(*ino));
}

void vfs_link_locked(struct inode *dir, struct inode *child, const char *name)
{
    ASSERT_HELD(&vfs_lock);
    ASSERT(S_ISDIR(dir->mode) && list_empty(&child->sibling)); /* in no directory now */
    kstrlcpy(child->name, name, sizeof(child->name));
    child->dev = child->dev ? child->dev : dir->dev; /* set by mounts_init for their roots */
    child->parent = dir;
    child->in_tree = true;
    child->dir_pos = dir->next_pos++; /* the list stays in position order */
    list_add_tail(&dir->children, &child->sibling);
    dir->mtime_ns = vfs_now_ns();
}

struct inode *vfs_child_locked(struct inode *dir, const char *name)
{
    ASSERT_HELD(&vfs_lock);
    list_for_each(pos, &dir->children) {
        struct inode *c = container_of(pos, struct inode, sibling);
        if (strcmp(c->name, name) == 0) {
            return c;
        }
    }
    return 0;
}

/* Copy the next component of *path into name; advance *path past it and its slashes.
 * 0, 1 at the end (nothing left), or -ENAMETOOLONG. */
static int next_component(const char **path, char *name)
{
    const char *p = *path;
    while (*p == '/') {
        p++;
    }
    if (!*p) {
        *path = p;
        return 1;
    }
    size_t n = 0;
    while (p[n] && p[n] != '/') {
        n++;
    }
    if (n > VFS_NAME_MAX) {
        return -ENAMETOOLONG;
    }
    memcpy(name, p, n);
    name[n] = 0;
    *path = p + n;
    return 0;
}

static bool only_slashes(const char *p)
{
    while (*p == '/') {
        p++;
    }
    return *p == 0;
}

/* One lookup: how deep in links it is, how many it followed, how many components it walked. */
struct walk {
    int depth;
    int links;
    unsigned steps;
};

#ifdef ZT_HOST
/* Host tests only: called before each component a lookup walks, with the step count, so a
 * test can count a lookup's work and send a signal in the middle of it (VFS-21, VFS-22). */
void (*vfs_walk_hook)(unsigned step);
#endif

/* Before each component: 0 to go on, or -EINTR when the caller is being killed. */
static int walk_step(struct walk *w)
{
    w->steps++;
#ifdef ZT_HOST
    if (vfs_walk_hook) {
        vfs_walk_hook(w->steps);
    }
#endif
    struct task *t = current();
    return t && signal_fatal_pending(t) ? -EINTR : 0;
}

static int walk_locked(struct inode *dir, const char *path, bool follow, struct walk *w,
                       struct inode **out);

/* A link met during a walk from `dir`: what it points to (vfs_lock held). */
static int follow_link_locked(struct inode *dir, struct inode *link, struct walk *w,
                              struct inode **out)
{
    ASSERT_HELD(&vfs_lock);
    ASSERT(S_ISLNK(link->mode));
    if (w->depth >= VFS_LINK_MAX || w->links >= VFS_LINKS_MAX) {
        return -ELOOP;
    }
    w->links++;
    if (link->kind == INODE_SYNTH) { /* /proc's links: a path to walk, or an inode */
        char target[VFS_PATH_MAX];
        *out = 0;
        int r = synth_follow_locked(link, target, sizeof(target), out);
        if (r || *out) {
            return r;
        }
        w->depth++;
        r = walk_locked(dir, target, true, w, out);
        w->depth--;
        return r;
    }
    w->depth++;
    int r = walk_locked(dir, link->data, true, w, out);
    w->depth--;
    return r;
}

static int walk_locked(struct inode *dir, const char *path, bool follow, struct walk *w,
                       struct inode **out)
{
    ASSERT_HELD(&vfs_lock);
    ASSERT(w->depth <= VFS_LINK_MAX);
    struct inode *cur = path[0] == '/' ? vfs_root : dir;
    char name[VFS_NAME_MAX + 1];
    bool trailing_slash = path[0] && path[strlen(path) - 1] == '/';
    for (;;) {
        int r = next_component(&path, name);
        if (r < 0) {
            return r;
        }
        if (r == 1) {
            break;
        }
        r = walk_step(w);
        if (r) {
            return r;
        }
        if (!S_ISDIR(cur->mode)) {
            return -ENOTDIR;
        }
        if (strcmp(name, ".") == 0) {
            continue;
        }
        if (strcmp(name, "..") == 0) {
            cur = cur->parent ? cur->parent : cur;
            continue;
        }
        struct inode *child =
            cur->kind == INODE_SYNTH ? synth_child_locked(cur, name) : vfs_child_locked(cur, name);
        if (!child) {
            return -ENOENT;
        }
        bool last = only_slashes(path);
        if (S_ISLNK(child->mode) && (!last || follow || trailing_slash)) {
            r = follow_link_locked(cur, child, w, &child);
            if (r) {
                return r;
            }
        }
        cur = child;
    }
    if (trailing_slash && !S_ISDIR(cur->mode)) {
        return -ENOTDIR;
    }
    *out = cur;
    return 0;
}

int vfs_lookup(struct inode *cwd, const char *path, bool follow, struct inode **out)
{
    if (!path[0]) {
        return -ENOENT;
    }
    struct walk w = {0, 0, 0};
    spin_lock(&vfs_lock);
    int r = walk_locked(cwd ? cwd : vfs_root, path, follow, &w, out);
    if (r == 0) {
        inode_get(*out);
    }
    spin_unlock(&vfs_lock);
    return r;
}

int vfs_lookup_parent(struct inode *cwd, const char *path, struct inode **dir, char *last,
                      bool *must_be_dir)
{
    size_t len = strlen(path);
    if (len == 0) {
        return -ENOENT;
    }
    if (len >= VFS_PATH_MAX) {
        return -ENAMETOOLONG;
    }
    char head[VFS_PATH_MAX];
    memcpy(head, path, len + 1);
    *must_be_dir = false;
    while (len > 1 && head[len - 1] == '/') {
        head[--len] = 0;
        *must_be_dir = true;
    }
    char *slash = 0;
    for (size_t i = 0; i < len; i++) {
        slash = head[i] == '/' ? &head[i] : slash;
    }
    const char *base = slash ? slash + 1 : head;
    if (strlen(base) > VFS_NAME_MAX) {
        return -ENAMETOOLONG;
    }
    kstrlcpy(last, base, VFS_NAME_MAX + 1);
    if (slash) {
        slash[slash == head ? 1 : 0] = 0; /* "/x" -> "/", "a/b" -> "a" */
    }
    int r = vfs_lookup(cwd, slash ? head : ".", true, dir);
    if (r == 0 && !S_ISDIR((*dir)->mode)) {
        inode_put(*dir);
        return -ENOTDIR;
    }
    return r;
}

struct file *file_alloc(struct inode *ino, const struct file_ops *ops, unsigned flags, void *priv)
{
    struct file *f = kmem_alloc(sizeof(*f));
    if (!f) {
        return 0;
    }
    f->refs = 1;
    f->flags = flags & (O_ACCMODE | O_APPEND | O_NONBLOCK);
    spin_lock_init(&f->lock, LOCK_FILE);
    f->inode = ino;
    f->ops = ops;
    f->priv = priv;
    if (ino) {
        inode_get(ino);
    }
    return f;
}

void file_get(struct file *f)
{
    int refs = __atomic_add_fetch(&f->refs, 1, __ATOMIC_RELAXED);
    ASSERT(refs > 1); /* taken from a live reference: a descriptor's or a call's */
}

void file_put(struct file *f)
{
    int refs = __atomic_sub_fetch(&f->refs, 1, __ATOMIC_ACQ_REL);
    ASSERT(refs >= 0);
    if (refs != 0) {
        return;
    }
    if (f->ops && f->ops->release) {
        f->ops->release(f);
    }
    if (f->inode) {
        inode_put(f->inode);
    }
    kmem_free(f, sizeof(*f));
}

/* May `ino` be opened with `flags`?  0 or -errno. */
static int check_open(const struct inode *ino, unsigned flags)
{
    unsigned acc = flags & O_ACCMODE;
    if (acc == 3) {
        return -EINVAL;
    }
    if ((flags & O_DIRECTORY) && !S_ISDIR(ino->mode)) {
        return -ENOTDIR;
    }
    if (S_ISDIR(ino->mode) && acc != O_RDONLY) {
        return -EISDIR;
    }
    if (ino->kind == INODE_INITRD_FILE && (acc != O_RDONLY || (flags & O_TRUNC))) {
        return -EROFS;
    }
    return 0;
}

int vfs_open_inode(struct inode *ino, unsigned flags, struct file **out)
{
    if (ino->kind == INODE_SYNTH) {
        return synth_open(ino, flags, out);
    }
    int r = check_open(ino, flags);
    if (r) {
        return r;
    }
    const struct file_ops *ops = ino->kind == INODE_TMPFS_FILE    ? &tmpfs_file_ops
                                 : ino->kind == INODE_INITRD_FILE ? &ro_file_ops
                                 : ino->kind == INODE_DIR         ? &dir_ops
                                                                  : ino->fops;
    if (ino->kind == INODE_TMPFS_FILE && (flags & O_TRUNC) && (flags & O_ACCMODE)) {
        spin_lock(&vfs_lock);
        tmpfs_truncate_locked(ino, 0);
        spin_unlock(&vfs_lock);
    }
    *out = file_alloc(ino, ops, flags, 0);
    return *out ? 0 : -ENOMEM;
}

/* Create a tmpfs file `name` in dir (vfs_lock held); -EROFS outside /tmp. */
static int create_locked(struct inode *dir, const char *name, unsigned mode, struct inode **out)
{
    ASSERT_HELD(&vfs_lock);
    ASSERT(S_ISDIR(dir->mode) && !vfs_child_locked(dir, name)); /* vfs_open looked */
    if (!dir->writable_dir || !dir->in_tree) {
        return dir->writable_dir ? -ENOENT : -EROFS;
    }
    if (!name[0] || !strcmp(name, ".") || !strcmp(name, "..")) {
        return -EISDIR;
    }
    struct inode *ino = inode_new(INODE_TMPFS_FILE, S_IFREG | (mode & 07777));
    if (!ino) {
        return -ENOMEM;
    }
    vfs_link_locked(dir, ino, name); /* the tree keeps the new inode's first reference */
    *out = ino;
    return 0;
}

int vfs_open(struct inode *cwd, const char *path, unsigned flags, unsigned mode, struct file **out)
{
    struct inode *dir, *ino;
    char last[VFS_NAME_MAX + 1];
    bool must_be_dir;
    if (!(flags & O_CREAT)) {
        int r = vfs_lookup(cwd, path, !(flags & O_NOFOLLOW), &ino);
        if (r) {
            return r;
        }
        r = S_ISLNK(ino->mode) ? -ELOOP : vfs_open_inode(ino, flags, out); /* O_NOFOLLOW */
        inode_put(ino);
        return r;
    }
    int r = vfs_lookup_parent(cwd, path, &dir, last, &must_be_dir);
    if (r) {
        return r;
    }
    struct walk w = {0, 0, 0};
    spin_lock(&vfs_lock);
    struct inode *found = 0;
    r = must_be_dir ? -EISDIR : walk_locked(dir, last[0] ? last : ".", true, &w, &found);
    if (r == 0 && (flags & O_EXCL)) {
        r = -EEXIST;
    } else if (r == -ENOENT && !vfs_child_locked(dir, last)) {
        r = create_locked(dir, last, mode & ~vfs_umask(), &found);
    }
    if (r == 0) {
        inode_get(found);
    }
    spin_unlock(&vfs_lock);
    inode_put(dir);
    if (r) {
        return r;
    }
    r = vfs_open_inode(found, flags, out);
    inode_put(found);
    return r;
}
