/* SPDX-License-Identifier: MIT */
/*
 * mounts.c — the file systems of the one tree, as Linux names them: /proc/mounts and
 * statfs/fstatfs (what df reads).
 *
 * zerotick has no mount table that can change: the tree is built at boot (vfs.h) and each of
 * its parts is one file system for the tools' sake: a directory of the root that the table
 * names, and everything below it.  Each file carries its file system's number (inode->dev,
 * st_dev: the table index + 1), which a new file takes from its directory (vfs_link_locked);
 * df finds a file's file system by comparing st_dev, as on Linux.  Sizes: the root is the initrd
 * (read-only; its size is the archives' bytes, all used), /tmp is bounded to TMPFS_MAX_PAGES pages
 * (free = what is not used), /dev, /proc and /sys hold no data (0 blocks: df leaves them out, as it
 * does on Linux). Descriptors outside the tree (pipes) are pipefs, as on Linux.
 */
#include "kernel/mounts.h"
#include "arch.h"
#include "kernel/fd.h"
#include "kernel/initrd.h"
#include "kernel/lib.h"
#include "kernel/synth.h"
#include "kernel/task.h"
#include "kernel/vfs.h"
#include "uapi/zt_errno.h"

#define RAMFS_MAGIC  0x858458f6
#define TMPFS_MAGIC  0x01021994
#define PROC_MAGIC   0x9fa0
#define SYSFS_MAGIC  0x62656572
#define PIPEFS_MAGIC 0x50495045
#define AT_FDCWD     (-100)
#define ST_RDONLY    1
#define ST_NOSUID    2
#define ST_NODEV     4
#define ST_NOEXEC    8

struct mount {
    const char *dir;    /* where it is in the tree */
    const char *source; /* /proc/mounts' first field */
    const char *type;
    const char *options;
    uint64_t magic;
    unsigned flags; /* ST_* */
};

static const struct mount mounts[] = {
    {"/", "rootfs", "rootfs", "ro", RAMFS_MAGIC, ST_RDONLY},
    {"/dev", "devtmpfs", "devtmpfs", "rw,relatime,mode=755", TMPFS_MAGIC, ST_NOSUID},
    {"/proc", "proc", "proc", "ro,nosuid,nodev,noexec,relatime", PROC_MAGIC,
     ST_RDONLY | ST_NOSUID | ST_NODEV | ST_NOEXEC},
    {"/sys", "sysfs", "sysfs", "ro,nosuid,nodev,noexec,relatime", SYSFS_MAGIC,
     ST_RDONLY | ST_NOSUID | ST_NODEV | ST_NOEXEC},
    {"/tmp", "tmpfs", "tmpfs", "rw,relatime", TMPFS_MAGIC, 0},
};

/* The mount of a file: its number in st_dev is its index + 1. */
static const struct mount *mount_of(const struct inode *ino)
{
    return ino->dev >= 1 && ino->dev <= ARRAY_SIZE(mounts) ? &mounts[ino->dev - 1] : 0;
}

/* Give every inode under dir (vfs_lock held) the number of its file system: dev, or the
 * mount's own where one starts. */
static void mark_locked(struct inode *dir, uint32_t dev, int depth)
{
    ASSERT_HELD(&vfs_lock);
    dir->dev = dev;
    list_for_each(p, &dir->children) {
        struct inode *c = container_of(p, struct inode, sibling);
        uint32_t cdev = dev;
        for (size_t i = 1; depth == 0 && i < ARRAY_SIZE(mounts); i++) {
            cdev = strcmp(c->name, mounts[i].dir + 1) == 0 ? (uint32_t)i + 1 : cdev;
        }
        if (S_ISDIR(c->mode)) {
            mark_locked(c, cdev, depth + 1);
        } else {
            c->dev = cdev;
        }
    }
}

void mounts_init(void)
{
    unsigned long flags = spin_lock_irqsave(&vfs_lock);
    mark_locked(vfs_root, 1, 0); /* the mounts other than / are directories of the root */
    spin_unlock_irqrestore(&vfs_lock, flags);
}

static int show_mounts(const struct inode *ino, struct sbuf *b)
{
    for (size_t i = 0; i < ARRAY_SIZE(mounts); i++) {
        const struct mount *m = &mounts[i];
        sbuf_printf(b, "%s %s %s %s", m->source, m->dir, m->type, m->options);
        if (m->magic == TMPFS_MAGIC && strcmp(m->dir, "/tmp") == 0) {
            sbuf_printf(b, ",size=%uk", TMPFS_MAX_PAGES * (unsigned)(PAGE_SIZE / 1024));
        }
        sbuf_printf(b, " 0 0\n");
    }
    return 0;
}

const struct synth_ops procfs_mounts_ops = {.show = show_mounts, .show_fresh = true};

/* Linux's struct statfs on 64-bit architectures (asm-generic/statfs.h). */
struct statfs_k {
    int64_t type, bsize;
    uint64_t blocks, bfree, bavail, files, ffree;
    int32_t fsid[2];
    int64_t namelen, frsize, flags, spare[4];
};

static void fill_statfs(const struct inode *ino, struct statfs_k *st)
{
    memset(st, 0, sizeof(*st));
    st->bsize = st->frsize = PAGE_SIZE;
    st->namelen = VFS_NAME_MAX;
    const struct mount *m = mount_of(ino);
    if (!m) { /* a pipe */
        st->type = PIPEFS_MAGIC;
        return;
    }
    st->type = (int64_t)m->magic;
    st->flags = m->flags;
    st->fsid[0] = (int32_t)(m - mounts) + 1;
    if (m == &mounts[0]) {
        st->blocks = (initrd_bytes() + PAGE_SIZE - 1) / PAGE_SIZE; /* all used */
    } else if (strcmp(m->dir, "/tmp") == 0) {
        st->blocks = TMPFS_MAX_PAGES;
        st->bfree = st->bavail = TMPFS_MAX_PAGES - MIN(tmpfs_pages_used(), TMPFS_MAX_PAGES);
    }
}

static long statfs_out(struct inode *ino, uint64_t ubuf)
{
    struct statfs_k st;
    fill_statfs(ino, &st);
    inode_put(ino);
    return copy_to_user(current_vm(), ubuf, &st, sizeof(st)) ? -EFAULT : 0;
}

long sys_statfs(struct trap_frame *f)
{
    char path[VFS_PATH_MAX];
    struct inode *base, *ino;
    int r = fs_at_path(AT_FDCWD, arch_frame_arg(f, 0), path, &base);
    if (r) {
        return r;
    }
    r = vfs_lookup(base, path, true, &ino);
    inode_put(base);
    return r ? r : statfs_out(ino, arch_frame_arg(f, 1));
}

long sys_fstatfs(struct trap_frame *f)
{
    struct file *file = fd_get((int)arch_frame_arg(f, 0));
    if (!file) {
        return -EBADF;
    }
    struct inode *ino = file->inode;
    if (ino) {
        inode_get(ino);
    }
    file_put(file);
    return ino ? statfs_out(ino, arch_frame_arg(f, 1)) : -EINVAL;
}
