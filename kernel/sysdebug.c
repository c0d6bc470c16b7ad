/*
 * sysdebug.c — syscall_debug=1: the porting aid.  Each system call number a process makes
 * that the kernel does not implement is reported once per process, with its Linux name:
 *
 *     syscall_debug: pid 7 (prog) called 293 (rseq): not implemented, returned -ENOSYS
 *
 * The calling CPU only records the report in a small ring (a dataplane CPU must not spend
 * time on the console); the housekeeping worker prints it.  Reports past the ring's size
 * are counted and the count printed instead.  The per-process "already reported" bits live
 * in struct process (nosys_seen) and are touched only by that process's own threads.
 */
#include "kernel/sysdebug.h"
#include "kernel/lib.h"
#include "kernel/printk.h"
#include "kernel/spinlock.h"
#include "kernel/syscall.h"
#include "kernel/task.h"
#include "kernel/work.h"

#define RING 16

struct nosys_report {
    int pid;
    uint64_t nr;
    char name[ZT_NAME_LEN];
};

static spinlock_t ring_lock = SPINLOCK_INIT;
static struct nosys_report ring[RING];
static unsigned head, tail, dropped;
static struct work print_work;

const char *linux_syscall_name(uint64_t nr)
{
    const char *n = nr < LINUX_NR_SYSCALLS ? linux_syscall_names[nr] : 0;
    return n ? n : "not a Linux system call";
}

static void print_reports(struct work *w)
{
    for (;;) {
        struct nosys_report r;
        unsigned long flags = spin_lock_irqsave(&ring_lock);
        bool any = head != tail;
        if (any) {
            r = ring[tail++ % RING];
        }
        unsigned lost = dropped;
        dropped = 0;
        spin_unlock_irqrestore(&ring_lock, flags);
        if (lost) {
            printk("syscall_debug: %u reports dropped (ring full)\n", lost);
        }
        if (!any) {
            return;
        }
        printk("syscall_debug: pid %d (%s) called %lu (%s): not implemented, returned -ENOSYS\n",
               r.pid, r.name, (unsigned long)r.nr, linux_syscall_name(r.nr));
    }
}

static bool enabled;

void sysdebug_init(bool on)
{
    enabled = on;
    work_init(&print_work, "syscall_debug reports", print_reports);
}

/* Has p reported nr already?  Marks it.  Numbers past the bitmap share its last bit. */
static bool seen_before(struct process *p, uint64_t nr)
{
    unsigned bit = nr < 64 * SYSDEBUG_WORDS - 1 ? (unsigned)nr : 64 * SYSDEBUG_WORDS - 1;
    uint64_t mask = 1ull << (bit % 64);
    return __atomic_fetch_or(&p->nosys_seen[bit / 64], mask, __ATOMIC_RELAXED) & mask;
}

void sysdebug_unknown(uint64_t nr)
{
    struct process *p = current()->proc;
    if (!enabled || !p || seen_before(p, nr)) {
        return;
    }
    unsigned long flags = spin_lock_irqsave(&ring_lock);
    if (head - tail < RING) {
        struct nosys_report *r = &ring[head++ % RING];
        r->pid = p->pid;
        r->nr = nr;
        kstrlcpy(r->name, p->name, sizeof(r->name));
    } else {
        dropped++;
    }
    spin_unlock_irqrestore(&ring_lock, flags);
    work_queue(&print_work);
}
