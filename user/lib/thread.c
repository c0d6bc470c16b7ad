/* SPDX-License-Identifier: MIT */
/*
 * thread.c — threads of one process: zt_thread_create() / zt_thread_join().
 *
 * One anonymous mapping per thread holds, from the top down, the zt_thread record, the
 * thread's TLS area and its stack.  The kernel populates it at once (no demand paging), so a
 * thread on a dataplane CPU never faults on its own stack; under Linux (linux.c) the mapping
 * asks for MAP_POPULATE to the same end.
 *
 * clone(CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM|CLONE_SETTLS|
 *       CLONE_PARENT_SETTID|CLONE_CHILD_CLEARTID, stack, &ptid, tp, &ctid)
 * starts it (zt_clone_thread in syscall.S).  Handshakes, both through futexes:
 *   - start: the new thread first moves itself to its CPU (sched_setaffinity on itself), then
 *     publishes 1 (or -errno) in `start` and wakes the creator, which waits for that; so
 *     create() returns only once the thread runs where it was asked to.
 *   - end: `ctid` starts non-zero; at thread exit the kernel writes 0 there and FUTEX_WAKEs
 *     it (CLONE_CHILD_CLEARTID; a shared wake under Linux, so join's wait is shared too: a
 *     private one would sleep forever there).  join() waits for 0, after which the thread never
 * touches its mapping again and the creator unmaps it.
 */
#include "tls.h"
#include "zt.h"

#define THREAD_STACK_BYTES (128 * 1024)
#define PAGE_BYTES         4096
#define MAP_POPULATE_LINUX 0x8000 /* Linux: fault the pages in now (zerotick always does) */

#define THREAD_CLONE_FLAGS                                                                         \
    (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |            \
     CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID)

struct zt_thread {
    int ctid;  /* -1 while the thread may run; the kernel clears it to 0 at its exit */
    int ptid;  /* the thread's tid (CLONE_PARENT_SETTID) */
    int start; /* 0 starting, 1 running fn, -errno: gave up before running fn */
    int cpu;   /* CPU to pin to, or -1 */
    long (*fn)(void *arg);
    void *arg;
    long result;
    void *map;
    size_t map_bytes;
};

long zt_clone_thread(unsigned long flags, void *stack, int *ptid, void *tls, int *ctid,
                     void (*start)(void *), void *arg);

static uintptr_t align_down(uintptr_t v, uintptr_t a)
{
    return v & ~(a - 1);
}

static void publish_start(struct zt_thread *t, int state)
{
    __atomic_store_n(&t->start, state, __ATOMIC_RELEASE);
    zt_futex_wake(&t->start, 1);
}

/* First C code of a new thread: on its own stack, with TPIDR_EL0 already set by clone. */
static void thread_main(void *p)
{
    struct zt_thread *t = p;

    if (t->cpu >= 0) {
        long r = zt_pin(t->cpu);

        if (r < 0) {
            publish_start(t, (int)r);
            zt_exit(0);
        }
    }
    publish_start(t, 1);
    t->result = t->fn(t->arg);
    zt_stdio_flush();
    zt_exit(0);
}

static void wait_for_exit(struct zt_thread *t)
{
    int v;

    /* A shared (not FUTEX_PRIVATE) wait: Linux wakes a CLONE_CHILD_CLEARTID word with a
     * shared FUTEX_WAKE, whose key never matches a private waiter's (glibc waits shared here
     * too); zerotick treats both alike. */
    while ((v = __atomic_load_n(&t->ctid, __ATOMIC_ACQUIRE)) != 0) {
        zt_futex(&t->ctid, FUTEX_WAIT, v, NULL);
    }
}

static int wait_for_start(struct zt_thread *t)
{
    int v;

    while ((v = __atomic_load_n(&t->start, __ATOMIC_ACQUIRE)) == 0) {
        zt_futex_wait(&t->start, 0, NULL);
    }
    return v;
}

/* Map and lay out the thread's memory; returns the record at the top, or NULL. */
static struct zt_thread *thread_alloc(void **tp, void **stack_top)
{
    size_t bytes = THREAD_STACK_BYTES + tls_area_size() + tls_area_align() + PAGE_BYTES;
    long m;
    uintptr_t top, tls;
    struct zt_thread *t;

    bytes = (bytes + PAGE_BYTES - 1) & ~(size_t)(PAGE_BYTES - 1);
    m = zt_mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | (zt_on_linux() ? MAP_POPULATE_LINUX : 0), -1, 0);
    if (m < 0) {
        errno = (int)-m;
        return NULL;
    }
    top = (uintptr_t)m + bytes;
    t = (struct zt_thread *)align_down(top - sizeof(*t), 16);
    tls = align_down((uintptr_t)t - tls_area_size(), tls_area_align());
    *tp = tls_area_init((void *)tls);
    *stack_top = (void *)align_down(tls, 16);
    t->map = (void *)m;
    t->map_bytes = bytes;
    return t;
}

zt_thread_t *zt_thread_create(long (*fn)(void *arg), void *arg, int cpu)
{
    void *tp, *stack_top;
    struct zt_thread *t;
    long tid;
    int state;

    if (cpu >= ZT_MAX_CPUS) {
        errno = EINVAL;
        return NULL;
    }
    t = thread_alloc(&tp, &stack_top);
    if (t == NULL) {
        return NULL;
    }
    t->ctid = -1;
    t->ptid = 0;
    t->start = 0;
    t->cpu = cpu < 0 ? -1 : cpu;
    t->fn = fn;
    t->arg = arg;
    tid = zt_clone_thread(THREAD_CLONE_FLAGS, stack_top, &t->ptid, tp, &t->ctid, thread_main, t);
    if (tid < 0) {
        zt_munmap(t->map, t->map_bytes);
        errno = (int)-tid;
        return NULL;
    }
    state = wait_for_start(t);
    if (state < 0) {
        wait_for_exit(t);
        zt_munmap(t->map, t->map_bytes);
        errno = -state;
        return NULL;
    }
    return t;
}

long zt_thread_join(zt_thread_t *t)
{
    long result;

    wait_for_exit(t);
    result = t->result;
    zt_munmap(t->map, t->map_bytes);
    return result;
}

int zt_thread_tid(const zt_thread_t *t)
{
    return t->ptid;
}
