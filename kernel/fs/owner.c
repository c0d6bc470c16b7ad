/* SPDX-License-Identifier: MIT */
/*
 * owner.c — chown, lchown and fchown (fchownat and fchown): the owner and group of a file.
 *
 * One user, root, runs everything, and permission bits are not enforced for it; but a test
 * harness makes a directory and hands it to another user (nobody, /etc/passwd), and programs
 * look at what stat says.  So the owner and group are kept per inode and shown by stat, and
 * changed, as root may, to any ids, for what can change here: the files, directories and
 * links of /tmp.  The initrd and /dev, /proc and /sys are read-only (-EROFS).  As on Linux,
 * changing the owner or group of a regular file clears its set-user-id bit and, when group
 * execute is set, its set-group-id bit; an id of -1 leaves it as it is.
 *
 * Locks: vfs_lock while an inode's owner and mode change.
 */
#include "kernel/owner.h"
#include "arch.h"
#include "kernel/fd.h"
#include "kernel/task.h"
#include "kernel/vfs.h"
#include "uapi/zt_errno.h"

#define AT_FDCWD            (-100)
#define AT_SYMLINK_NOFOLLOW 0x100
#define AT_EMPTY_PATH       0x1000
#define S_ISUID             04000
#define S_ISGID             02000
#define NO_CHANGE           0xffffffffu

/* Can ino's owner change (a file, directory or link of /tmp)?  vfs_lock held. */
static bool changeable_locked(const struct inode *ino)
{
    ASSERT_HELD(&vfs_lock);
    return ino->kind == INODE_TMPFS_FILE || (S_ISDIR(ino->mode) && ino->writable_dir) ||
           (S_ISLNK(ino->mode) && ino->kind == INODE_SYMLINK && ino->parent &&
            ino->parent->writable_dir);
}

static int set_owner(struct inode *ino, uint32_t uid, uint32_t gid)
{
    unsigned long flags = spin_lock_irqsave(&vfs_lock);
    int r = changeable_locked(ino) ? 0 : -EROFS;
    if (r == 0 && (uid != NO_CHANGE || gid != NO_CHANGE)) {
        if (S_ISREG(ino->mode)) {
            ino->mode &= ~(unsigned)(S_ISUID | ((ino->mode & 010) ? S_ISGID : 0));
        }
        ino->uid = uid != NO_CHANGE ? uid : ino->uid;
        ino->gid = gid != NO_CHANGE ? gid : ino->gid;
    }
    spin_unlock_irqrestore(&vfs_lock, flags);
    return r;
}

/* fchown: the file of descriptor fd. */
static long chown_fd(int fd, uint32_t uid, uint32_t gid)
{
    struct file *file = fd_get(fd);
    if (!file) {
        return -EBADF;
    }
    int r = file->inode ? set_owner(file->inode, uid, gid) : -EINVAL;
    file_put(file);
    return r;
}

long sys_fchownat(struct trap_frame *f)
{
    char path[VFS_PATH_MAX];
    struct inode *base, *ino;
    unsigned flags = (unsigned)arch_frame_arg(f, 4);
    char first;
    if (flags & ~(unsigned)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) {
        return -EINVAL;
    }
    if (copy_from_user(current_vm(), &first, arch_frame_arg(f, 1), 1)) {
        return -EFAULT;
    }
    if (first == 0 && (flags & AT_EMPTY_PATH) && (int)arch_frame_arg(f, 0) != AT_FDCWD) {
        return chown_fd((int)arch_frame_arg(f, 0), (uint32_t)arch_frame_arg(f, 2),
                        (uint32_t)arch_frame_arg(f, 3)); /* the descriptor itself */
    }
    int r = fs_at_path((int)arch_frame_arg(f, 0), arch_frame_arg(f, 1), path, &base);
    if (r) {
        return r;
    }
    r = vfs_lookup(base, path[0] || !(flags & AT_EMPTY_PATH) ? path : ".",
                   !(flags & AT_SYMLINK_NOFOLLOW), &ino);
    inode_put(base);
    if (r) {
        return r;
    }
    r = set_owner(ino, (uint32_t)arch_frame_arg(f, 2), (uint32_t)arch_frame_arg(f, 3));
    inode_put(ino);
    return r;
}

long sys_fchown(struct trap_frame *f)
{
    return chown_fd((int)arch_frame_arg(f, 0), (uint32_t)arch_frame_arg(f, 1),
                    (uint32_t)arch_frame_arg(f, 2));
}
