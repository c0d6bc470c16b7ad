/* SPDX-License-Identifier: MIT */
/*
 * hklog.c — lines printed on housekeeping (contract in include/kernel/hklog.h).
 */
#include "kernel/hklog.h"
#include "kernel/cpu.h"
#include "kernel/lib.h"
#include "kernel/printk.h"
#include "kernel/spinlock.h"
#include "kernel/work.h"

#define LINES 32

struct line {
    char text[160];
    const char *label; /* for the call-path line; NULL when none */
    uint64_t bt[HKLOG_BT_DEPTH];
};

static spinlock_t ring_lock = SPINLOCK_INIT_RANK(LOCK_LEAF);
static struct line ring[LINES];
static unsigned head, tail;
static unsigned dropped;
static struct work print_work;

static void print_line(const struct line *l)
{
    printk("%s\n", l->text);
    if (l->label && l->bt[0]) {
        printk("%s", l->label);
        for (int i = 0; i < HKLOG_BT_DEPTH && l->bt[i]; i++) {
            printk(" %lx", (unsigned long)l->bt[i]);
        }
        printk("\n");
    }
}

void hklog_flush(void)
{
    unsigned lost = __atomic_exchange_n(&dropped, 0, __ATOMIC_RELAXED);
    if (lost) {
        printk("hklog: %u lines dropped (the ring was full)\n", lost);
    }
    for (;;) {
        struct line l;
        unsigned long flags = spin_lock_irqsave(&ring_lock);
        ASSERT(head - tail <= LINES);
        bool any = tail != head;
        if (any) {
            l = ring[tail++ % LINES];
        }
        spin_unlock_irqrestore(&ring_lock, flags);
        if (!any) {
            return;
        }
        print_line(&l);
    }
}

/* The worker, on a housekeeping CPU. */
static void print_queued(struct work *w)
{
    hklog_flush();
}

void hklog_init(void)
{
    work_init(&print_work, "hklog", print_queued);
}

static void vhklog(const char *label, const uint64_t *bt, const char *fmt, va_list ap)
{
    struct line l = {.label = label};
    kvsnprintf(l.text, sizeof(l.text), fmt, ap);
    if (bt) {
        memcpy(l.bt, bt, sizeof(l.bt));
    }
    if (!this_cpu()->dataplane) {
        print_line(&l);
        return;
    }
    unsigned long flags = spin_lock_irqsave(&ring_lock);
    ASSERT(head - tail <= LINES);
    if (head - tail == LINES) {
        __atomic_fetch_add(&dropped, 1, __ATOMIC_RELAXED);
    } else {
        ring[head++ % LINES] = l;
    }
    spin_unlock_irqrestore(&ring_lock, flags);
    work_queue(&print_work);
}

void hklog(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vhklog(0, 0, fmt, ap);
    va_end(ap);
}

void hklog_bt(const char *label, const uint64_t *bt, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vhklog(label, bt, fmt, ap);
    va_end(ap);
}
