/* SPDX-License-Identifier: MIT */
/*
 * pipe.c — pipe2(): a one-page ring buffer between a read end and a write end.
 *
 * Reads block until there are bytes (or no writer is left: end of file, 0); writes block
 * until there is room, and a write of at most PIPE_BUF bytes goes in whole, never
 * interleaved with another writer's.  Writing with no reader left sends SIGPIPE to the
 * writing thread and fails with -EPIPE.  O_NONBLOCK ends: -EAGAIN instead of blocking.
 * A signal interrupts a blocked call with -ERESTARTSYS when nothing was transferred yet
 * (restarted under SA_RESTART, -EINTR otherwise), else the call returns what it moved.
 *
 * Locks: the pipe's wait queue lock guards the ring and the end counts (IRQs masked); user
 * copies are made under it (order: pipe lock -> vm lock).  Readers and writers sleep on
 * the same queue and every change wakes them all; poll_notify() tells pollers after the
 * lock is dropped.
 */
#include "kernel/pipe.h"
#include "arch.h"
#include "kernel/fd.h"
#include "kernel/kmem.h"
#include "kernel/lib.h"
#include "kernel/page.h"
#include "kernel/poll.h"
#include "kernel/signal.h"
#include "kernel/task.h"
#include "kernel/vfs.h"
#include "kernel/wait.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_syscall.h"

#define PIPE_SIZE PAGE_SIZE
#define PIPE_BUF  PAGE_SIZE

struct pipe {
    struct waitq wq; /* its lock guards the rest */
    char *buf;
    uint64_t head, tail; /* read at head, write at tail; tail - head bytes held */
    int readers, writers;
};

/* Copy up to n held bytes to user memory (lock held).  Bytes copied or -EFAULT. */
static long drain_locked(struct pipe *p, uint64_t ubuf, size_t n)
{
    ASSERT_HELD(&p->wq.lock);
    ASSERT(p->tail - p->head <= PIPE_SIZE);
    size_t done = 0;
    while (done < n && p->head != p->tail) {
        size_t off = p->head % PIPE_SIZE;
        size_t k = MIN(MIN(n - done, (size_t)(p->tail - p->head)), PIPE_SIZE - off);
        if (copy_to_user(current_vm(), ubuf + done, p->buf + off, k)) {
            return done ? (long)done : -EFAULT;
        }
        p->head += k;
        done += k;
    }
    return (long)done;
}

static long fill_locked(struct pipe *p, uint64_t ubuf, size_t n)
{
    ASSERT_HELD(&p->wq.lock);
    ASSERT(p->tail - p->head <= PIPE_SIZE && p->readers > 0); /* pipe_write checked */
    size_t done = 0;
    while (done < n && p->tail - p->head < PIPE_SIZE) {
        size_t off = p->tail % PIPE_SIZE;
        size_t room = PIPE_SIZE - (size_t)(p->tail - p->head);
        size_t k = MIN(MIN(n - done, room), PIPE_SIZE - off);
        if (copy_from_user(current_vm(), p->buf + off, ubuf + done, k)) {
            return done ? (long)done : -EFAULT;
        }
        p->tail += k;
        done += k;
    }
    return (long)done;
}

static long pipe_read(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    struct pipe *p = f->priv;
    if (n == 0) {
        return 0;
    }
    for (;;) {
        unsigned long flags = spin_lock_irqsave(&p->wq.lock);
        if (p->head != p->tail || p->writers == 0) {
            long r = drain_locked(p, ubuf, n);
            waitq_wake_locked(&p->wq, 1 << 30);
            spin_unlock_irqrestore(&p->wq.lock, flags);
            poll_notify();
            return r;
        }
        if (f->flags & O_NONBLOCK) {
            spin_unlock_irqrestore(&p->wq.lock, flags);
            return -EAGAIN;
        }
        if (waitq_sleep_locked(&p->wq, flags, 0) == -EINTR) {
            return -ERESTARTSYS;
        }
    }
}

static long broken_pipe(void)
{
    struct sig_info info = signal_info_from_caller(SI_USER); /* Linux's SIGPIPE says so */
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    signal_send_task_locked(current(), SIGPIPE, &info);
    spin_unlock_irqrestore(&proc_lock, flags);
    return -EPIPE;
}

static long pipe_write(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    struct pipe *p = f->priv;
    size_t done = 0;
    while (done < n) {
        unsigned long flags = spin_lock_irqsave(&p->wq.lock);
        if (p->readers == 0) {
            spin_unlock_irqrestore(&p->wq.lock, flags);
            return done ? (long)done : broken_pipe();
        }
        size_t room = PIPE_SIZE - (size_t)(p->tail - p->head);
        bool atomic = n - done <= PIPE_BUF;
        if (room && (!atomic || room >= n - done)) {
            long r = fill_locked(p, ubuf + done, n - done);
            waitq_wake_locked(&p->wq, 1 << 30);
            spin_unlock_irqrestore(&p->wq.lock, flags);
            poll_notify();
            if (r < 0) {
                return done ? (long)done : r;
            }
            done += (size_t)r;
            continue;
        }
        if (f->flags & O_NONBLOCK) {
            spin_unlock_irqrestore(&p->wq.lock, flags);
            return done ? (long)done : -EAGAIN;
        }
        if (waitq_sleep_locked(&p->wq, flags, 0) == -EINTR) {
            return done ? (long)done : -ERESTARTSYS;
        }
    }
    return (long)done;
}

static unsigned pipe_poll(struct file *f)
{
    struct pipe *p = f->priv;
    unsigned long flags = spin_lock_irqsave(&p->wq.lock);
    unsigned m = 0;
    if ((f->flags & O_ACCMODE) == O_RDONLY) {
        m |= p->head != p->tail ? POLLIN : 0;
        m |= p->writers == 0 ? POLLHUP : 0;
    } else {
        m |= p->tail - p->head < PIPE_SIZE ? POLLOUT : 0;
        m |= p->readers == 0 ? POLLERR : 0;
    }
    spin_unlock_irqrestore(&p->wq.lock, flags);
    return m;
}

static void pipe_release(struct file *f)
{
    struct pipe *p = f->priv;
    unsigned long flags = spin_lock_irqsave(&p->wq.lock);
    ASSERT((f->flags & O_ACCMODE) == O_RDONLY ? p->readers > 0 : p->writers > 0);
    if ((f->flags & O_ACCMODE) == O_RDONLY) {
        p->readers--;
    } else {
        p->writers--;
    }
    bool last = p->readers == 0 && p->writers == 0;
    waitq_wake_locked(&p->wq, 1 << 30);
    spin_unlock_irqrestore(&p->wq.lock, flags);
    poll_notify();
    if (last) {
        page_free(virt_to_phys(p->buf));
        kmem_free(p, sizeof(*p));
    }
}

static const struct file_ops pipe_ops = {
    .read = pipe_read, .write = pipe_write, .poll = pipe_poll, .release = pipe_release};

/* Two files over a new pipe: ends[0] reads, ends[1] writes. */
static int pipe_create(unsigned flags, struct file **ends)
{
    struct pipe *p = kmem_alloc(sizeof(*p));
    paddr_t page = p ? page_alloc() : 0;
    struct inode *ino = page ? inode_new(INODE_PIPE, S_IFIFO | 0600) : 0;
    if (ino) {
        waitq_init(&p->wq);
        p->buf = phys_to_virt(page);
        p->readers = p->writers = 1;
        ends[0] = file_alloc(ino, &pipe_ops, O_RDONLY | (flags & O_NONBLOCK), p);
        ends[1] = ends[0] ? file_alloc(ino, &pipe_ops, O_WRONLY | (flags & O_NONBLOCK), p) : 0;
        inode_put(ino); /* the files hold it now */
        if (ends[1]) {
            return 0;
        }
        if (ends[0]) {
            ends[0]->ops = 0; /* not a live end: no release */
            file_put(ends[0]);
        }
    }
    if (page) {
        page_free(page);
    }
    if (p) {
        kmem_free(p, sizeof(*p));
    }
    return -ENOMEM;
}

long sys_pipe2(struct trap_frame *f)
{
    unsigned flags = (unsigned)arch_frame_arg(f, 1);
    struct file *ends[2];
    if (flags & ~(unsigned)(O_CLOEXEC | O_NONBLOCK)) {
        return -EINVAL;
    }
    if (vm_check_range(current_vm(), arch_frame_arg(f, 0), 2 * sizeof(int), PROT_WRITE)) {
        return -EFAULT;
    }
    int r = pipe_create(flags, ends);
    if (r) {
        return r;
    }
    int fds[2];
    fds[0] = fd_install(ends[0], 0, flags & O_CLOEXEC);
    fds[1] = fds[0] < 0 ? -EMFILE : fd_install(ends[1], 0, flags & O_CLOEXEC);
    if (fds[1] < 0) {
        if (fds[0] >= 0) {
            fd_close(fds[0]); /* drops ends[0] */
        } else {
            file_put(ends[0]);
        }
        file_put(ends[1]);
        return -EMFILE;
    }
    if (copy_to_user(current_vm(), arch_frame_arg(f, 0), fds, sizeof(fds))) {
        return -EFAULT; /* checked above: only another thread unmapping it gets here */
    }
    return 0;
}
