/* SPDX-License-Identifier: MIT */
/*
 * poll.c — ppoll and pselect6 over any descriptors (contract in include/kernel/poll.h).
 *
 * Both calls become one scan over (descriptor, wanted events) pairs, repeated until an
 * event is there, the timeout passes or a signal arrives.  Between scans the caller sleeps
 * on the global poll queue unless the generation moved while it scanned.  A signal mask
 * given with the call is in force while it waits (signal_set_temp_mask: restored on the way
 * out, or by the handler's sigreturn if a signal was delivered).  Interrupted calls return
 * -EINTR and are not restarted, as on Linux; the remaining time is not written back.
 */
#include "kernel/poll.h"
#include "arch.h"
#include "kernel/cycles.h"
#include "kernel/fd.h"
#include "kernel/kmem.h"
#include "kernel/lib.h"
#include "kernel/signal.h"
#include "kernel/task.h"
#include "kernel/vfs.h"
#include "kernel/wait.h"
#include "uapi/zt_errno.h"

#define POLL_MAX   512 /* descriptors in one call (a page of pollfds) */
#define SELECT_MAX 1024

static struct waitq poll_wq;
static uint64_t poll_gen;

void poll_init(void)
{
    waitq_init(&poll_wq);
}

void poll_notify(void)
{
    __atomic_add_fetch(&poll_gen, 1, __ATOMIC_SEQ_CST);
    if (!list_empty(&poll_wq.tasks)) {
        waitq_wake_all(&poll_wq);
    }
}

struct pollfd_k {
    int32_t fd;
    int16_t events, revents;
};

/* One pass: fill revents, return how many descriptors have some. */
static int scan(struct pollfd_k *p, unsigned n)
{
    ASSERT(n <= POLL_MAX); /* the caller's page of pollfds */
    int ready = 0;
    for (unsigned i = 0; i < n; i++) {
        p[i].revents = 0;
        if (p[i].fd < 0) {
            continue;
        }
        struct file *file = fd_get(p[i].fd);
        unsigned m = POLLNVAL;
        if (file) {
            m = file->ops && file->ops->poll ? file->ops->poll(file) : POLLIN | POLLOUT;
            file_put(file);
        }
        p[i].revents =
            (int16_t)(m & ((unsigned)(uint16_t)p[i].events | POLLERR | POLLHUP | POLLNVAL));
        ready += p[i].revents != 0;
    }
    return ready;
}

/* Scan until something is ready, the deadline passes (0: none; `once`: scan once) or a
 * signal comes.  The count, 0 or -EINTR. */
static int wait_ready(struct pollfd_k *p, unsigned n, uint64_t deadline, bool once)
{
    for (;;) {
        uint64_t gen = __atomic_load_n(&poll_gen, __ATOMIC_SEQ_CST);
        int ready = scan(p, n);
        if (ready || once || (deadline && arch_counter_read() >= deadline)) {
            return ready;
        }
        unsigned long flags = spin_lock_irqsave(&poll_wq.lock);
        if (__atomic_load_n(&poll_gen, __ATOMIC_SEQ_CST) != gen) {
            spin_unlock_irqrestore(&poll_wq.lock, flags);
            continue;
        }
        if (waitq_sleep_locked(&poll_wq, flags, deadline) == -EINTR) {
            return -EINTR;
        }
    }
}

/* A user timespec to an absolute deadline: *once for a zero timeout; 0 for NULL. */
static int read_timeout(uint64_t uts, uint64_t *deadline, bool *once)
{
    struct timespec_k ts;
    *deadline = 0;
    *once = false;
    if (!uts) {
        return 0;
    }
    if (copy_from_user(current_vm(), &ts, uts, sizeof(ts))) {
        return -EFAULT;
    }
    if (!timespec_is_valid(&ts)) {
        return -EINVAL; /* the one rule (cycles.h: Linux's) */
    }
    *once = ts.sec == 0 && ts.nsec == 0;
    *deadline = arch_counter_read() + timespec_to_cycles(&ts);
    return 0;
}

/* The mask argument of ppoll/pselect6, put in force for the call's duration. */
static int temp_mask(uint64_t umask, uint64_t size)
{
    uint64_t m;
    if (!umask) {
        return 0;
    }
    if (size != 8) {
        return -EINVAL;
    }
    if (copy_from_user(current_vm(), &m, umask, sizeof(m))) {
        return -EFAULT;
    }
    signal_set_temp_mask(m);
    return 0;
}

long sys_ppoll(struct trap_frame *f)
{
    unsigned n = (unsigned)arch_frame_arg(f, 1);
    uint64_t deadline;
    bool once;
    if (n > POLL_MAX) {
        return -EINVAL;
    }
    int r = read_timeout(arch_frame_arg(f, 2), &deadline, &once);
    if (r) {
        return r;
    }
    struct pollfd_k *p = kmem_alloc(PAGE_SIZE);
    if (!p) {
        return -ENOMEM;
    }
    struct vm *vm = current_vm();
    r = copy_from_user(vm, p, arch_frame_arg(f, 0), n * sizeof(*p))
            ? -EFAULT
            : temp_mask(arch_frame_arg(f, 3), arch_frame_arg(f, 4));
    if (r == 0) {
        r = wait_ready(p, n, deadline, once);
    }
    if (r >= 0 && copy_to_user(vm, arch_frame_arg(f, 0), p, n * sizeof(*p))) {
        r = -EFAULT;
    }
    kmem_free(p, PAGE_SIZE);
    return r;
}

/* ---- pselect6: fd_sets become pollfds and back ---- */

struct sets {
    uint64_t bits[3][SELECT_MAX / 64]; /* read, write, except */
};

static const unsigned select_events[3] = {POLLIN, POLLOUT, POLLPRI};

static unsigned sets_to_poll(const struct sets *s, int nfds, struct pollfd_k *p)
{
    ASSERT(nfds >= 0 && nfds <= SELECT_MAX); /* sys_pselect6 checked */
    unsigned n = 0;
    for (int fd = 0; fd < nfds; fd++) {
        unsigned ev = 0;
        for (int k = 0; k < 3; k++) {
            ev |= s->bits[k][fd / 64] & (1ull << (fd % 64)) ? select_events[k] : 0;
        }
        if (ev && n == POLL_MAX) {
            return POLL_MAX + 1; /* too many: the caller refuses the call */
        }
        if (ev) {
            p[n++] = (struct pollfd_k){fd, (int16_t)ev, 0};
        }
    }
    return n;
}

/* Ready descriptors back into the sets; the count of bits set, or -EBADF. */
static int poll_to_sets(const struct pollfd_k *p, unsigned n, struct sets *s)
{
    int count = 0;
    memset(s, 0, sizeof(*s));
    for (unsigned i = 0; i < n; i++) {
        ASSERT(p[i].fd >= 0 && p[i].fd < SELECT_MAX); /* made by sets_to_poll */
        unsigned got = (unsigned)(uint16_t)p[i].revents;
        if (got & POLLNVAL) {
            return -EBADF;
        }
        unsigned as[3] = {POLLIN | POLLHUP | POLLERR, POLLOUT | POLLERR, POLLPRI};
        for (int k = 0; k < 3; k++) {
            if ((got & as[k]) && ((unsigned)p[i].events & select_events[k])) {
                s->bits[k][p[i].fd / 64] |= 1ull << (p[i].fd % 64);
                count++;
            }
        }
    }
    return count;
}

static int copy_sets(struct trap_frame *f, struct sets *s, int nfds, bool out)
{
    size_t bytes = (size_t)(nfds + 63) / 64 * 8;
    struct vm *vm = current_vm();
    for (int k = 0; k < 3; k++) {
        uint64_t u = arch_frame_arg(f, 1 + k);
        if (!u) {
            continue;
        }
        int r =
            out ? copy_to_user(vm, u, s->bits[k], bytes) : copy_from_user(vm, s->bits[k], u, bytes);
        if (r) {
            return -EFAULT;
        }
    }
    return 0;
}

long sys_pselect6(struct trap_frame *f)
{
    int nfds = (int)arch_frame_arg(f, 0);
    uint64_t deadline, mask[2] = {0, 0};
    bool once;
    if (nfds < 0 || nfds > SELECT_MAX) {
        return -EINVAL;
    }
    int r = read_timeout(arch_frame_arg(f, 4), &deadline, &once);
    if (r == 0 && arch_frame_arg(f, 5) &&
        copy_from_user(current_vm(), mask, arch_frame_arg(f, 5), sizeof(mask))) {
        r = -EFAULT;
    }
    struct sets *s = r ? 0 : kmem_alloc(sizeof(*s));
    struct pollfd_k *p = s ? kmem_alloc(PAGE_SIZE) : 0;
    if (r == 0 && !p) {
        r = -ENOMEM;
    }
    if (r == 0) {
        r = copy_sets(f, s, nfds, false);
    }
    unsigned n = r == 0 ? sets_to_poll(s, nfds, p) : 0;
    if (r == 0 && n > POLL_MAX) {
        r = -EINVAL;
    }
    if (r == 0) {
        r = temp_mask(mask[0], mask[1]);
    }
    if (r == 0) {
        r = wait_ready(p, n, deadline, once);
    }
    if (r >= 0) {
        r = poll_to_sets(p, n, s);
    }
    if (r >= 0 && copy_sets(f, s, nfds, true)) {
        r = -EFAULT;
    }
    if (p) {
        kmem_free(p, PAGE_SIZE);
    }
    if (s) {
        kmem_free(s, sizeof(*s));
    }
    return r;
}
