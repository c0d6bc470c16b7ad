/* SPDX-License-Identifier: MIT */
/*
 * devfs.c — /dev: null, zero, and the console terminal as console and tty (contract in
 * include/kernel/vfs.h; the line discipline is kernel/fs/tty.c).
 *
 * Terminal ioctls: TCGETS, TCSETS/TCSETSW/TCSETSF, TIOCGWINSZ/TIOCSWINSZ,
 * TIOCGPGRP/TIOCSPGRP (an existing process group), TIOCGSID, TIOCSCTTY/TIOCNOTTY (the console
 * is everybody's controlling terminal: nothing to do), FIONREAD, TCFLSH, TCXONC, FIONBIO;
 * anything else is -ENOTTY, as it is for null and zero.
 */
#include "kernel/lib.h"
#include "kernel/printk.h"
#include "kernel/signal.h"
#include "kernel/task.h"
#include "kernel/tty.h"
#include "kernel/vfs.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_syscall.h"

#define TCGETS     0x5401
#define TCSETS     0x5402
#define TCSETSW    0x5403
#define TCSETSF    0x5404
#define TCXONC     0x540a
#define TCFLSH     0x540b
#define TIOCSCTTY  0x540e
#define TIOCGWINSZ 0x5413
#define TIOCSWINSZ 0x5414
#define FIONREAD   0x541b
#define FIONBIO    0x5421
#define TIOCNOTTY  0x5422
#define TIOCGSID   0x5429

static long null_read(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    return 0;
}

static long null_write(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    return vm_check_range(current_vm(), ubuf, n, PROT_READ) ? -EFAULT : (long)n;
}

static long zero_read(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    static const char zeros[256];
    for (size_t done = 0; done < n;) {
        size_t k = MIN(n - done, sizeof(zeros));
        if (copy_to_user(current_vm(), ubuf + done, zeros, k)) {
            return done ? (long)done : -EFAULT;
        }
        done += k;
    }
    return (long)n;
}

static unsigned always_ready(struct file *f)
{
    return POLLIN | POLLOUT;
}

static long console_read(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    return tty_read(ubuf, n, f->flags & O_NONBLOCK);
}

static long console_write_op(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    char tmp[256];
    if (vm_check_range(current_vm(), ubuf, n, PROT_READ)) {
        return -EFAULT; /* nothing is written from a buffer that is not all there */
    }
    for (size_t done = 0; done < n;) {
        size_t chunk = MIN(n - done, sizeof(tmp));
        if (copy_from_user(current_vm(), tmp, ubuf + done, chunk) != 0) {
            return done ? (long)done : -EFAULT;
        }
        console_write(tmp, chunk);
        done += chunk;
        if (done < n && signal_interrupts(current())) {
            return (long)done; /* a terminal write stops at a signal with what it wrote */
        }
    }
    return (long)n;
}

static unsigned console_poll(struct file *f)
{
    return tty_poll();
}

static long put_int(uint64_t uarg, int v)
{
    return copy_to_user(current_vm(), uarg, &v, sizeof(v)) ? -EFAULT : 0;
}

static long set_pgrp(uint64_t uarg)
{
    int pgrp;
    if (copy_from_user(current_vm(), &pgrp, uarg, sizeof(pgrp))) {
        return -EFAULT;
    }
    if (pgrp <= 0) {
        return -EINVAL;
    }
    if (!pgrp_exists(pgrp)) {
        return -ESRCH;
    }
    tty_set_foreground(pgrp);
    return 0;
}

static long termios_ioctl(unsigned long req, uint64_t uarg)
{
    struct termios_k t;
    struct winsize_k ws;
    if (req == TCGETS) {
        tty_get_termios(&t);
        return copy_to_user(current_vm(), uarg, &t, sizeof(t)) ? -EFAULT : 0;
    }
    if (req == TIOCGWINSZ) {
        tty_winsize(&ws, 0);
        return copy_to_user(current_vm(), uarg, &ws, sizeof(ws)) ? -EFAULT : 0;
    }
    if (req == TIOCSWINSZ) {
        if (copy_from_user(current_vm(), &ws, uarg, sizeof(ws))) {
            return -EFAULT;
        }
        tty_winsize(&ws, &ws);
        return 0;
    }
    if (copy_from_user(current_vm(), &t, uarg, sizeof(t))) { /* TCSETS, TCSETSW, TCSETSF */
        return -EFAULT;
    }
    tty_set_termios(&t, req == TCSETSF);
    return 0;
}

static long console_ioctl(struct file *f, unsigned long req, uint64_t uarg)
{
    switch (req) {
    case TCGETS:
    case TCSETS:
    case TCSETSW:
    case TCSETSF:
    case TIOCGWINSZ:
    case TIOCSWINSZ:
        return termios_ioctl(req, uarg);
    case TIOCGPGRP:
        return put_int(uarg, tty_foreground());
    case TIOCSPGRP:
        return set_pgrp(uarg);
    case TIOCGSID:
        return put_int(uarg, current()->proc->sid);
    case TIOCSCTTY:
    case TIOCNOTTY:
    case TCXONC:
        return 0;
    case TCFLSH:
        if (uarg > 2) {
            return -EINVAL;
        }
        if (uarg != 1) {
            tty_flush_input(); /* TCIFLUSH or TCIOFLUSH; output is never queued */
        }
        return 0;
    case FIONREAD:
        return put_int(uarg, (int)tty_readable());
    default:
        return -ENOTTY;
    }
}

static const struct file_ops null_ops = {
    .read = null_read, .write = null_write, .poll = always_ready};
static const struct file_ops zero_ops = {
    .read = zero_read, .write = null_write, .poll = always_ready};
static const struct file_ops console_ops = {
    .read = console_read, .write = console_write_op, .ioctl = console_ioctl, .poll = console_poll};

static struct inode *console_inode;

static struct inode *add_device(struct inode *dev, const char *name, unsigned rdev,
                                const struct file_ops *ops)
{
    struct inode *ino = inode_new(INODE_DEVICE, S_IFCHR | 0666);
    if (ino) {
        ino->rdev = rdev;
        ino->fops = ops;
        spin_lock(&vfs_lock);
        vfs_link_locked(dev, ino, name);
        spin_unlock(&vfs_lock);
    }
    return ino;
}

void devfs_init(struct inode *dev)
{
    add_device(dev, "null", 1 << 8 | 3, &null_ops);
    add_device(dev, "zero", 1 << 8 | 5, &zero_ops);
    add_device(dev, "tty", 5 << 8 | 0, &console_ops);
    console_inode = add_device(dev, "console", 5 << 8 | 1, &console_ops);
}

int devfs_open_console(struct file **out)
{
    if (!console_inode) {
        return -ENODEV;
    }
    return vfs_open_inode(console_inode, O_RDWR, out);
}
