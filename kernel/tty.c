/*
 * tty.c — console input (contract in include/kernel/tty.h).
 *
 * A ring buffer filled by the UART interrupt and drained by tty_read, under rx.lock (taken
 * with IRQs masked; the handler runs with them masked already).  Readers sleep on rx.wq.
 */
#include "kernel/tty.h"
#include "arch.h"
#include "kernel/irq.h"
#include "kernel/lib.h"
#include "kernel/panic.h"
#include "kernel/signal.h"
#include "kernel/task.h"
#include "kernel/wait.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_syscall.h"

#define RX_SIZE 1024

static struct {
    struct waitq wq; /* its lock guards everything here */
    char buf[RX_SIZE];
    unsigned head, tail; /* head: next to read; tail: next to write */
    int foreground;      /* pid that gets SIGINT for Ctrl-C, 0 = none */
    uint64_t received, dropped;
} rx;

/* Called by arch_console_rx for each byte, with rx.wq.lock held.  Ctrl-C for a foreground
 * process is only counted here: signalling takes proc_lock, which must not be taken under
 * a wait queue lock (lock order), so tty_interrupt sends it after dropping rx.wq.lock. */
static unsigned pending_interrupts;

static void rx_byte(char c)
{
    rx.received++;
    if (c == 0x03 && rx.foreground > 0) {
        pending_interrupts++;
        return;
    }
    if (rx.tail - rx.head == RX_SIZE) {
        rx.dropped++;
        return;
    }
    rx.buf[rx.tail++ % RX_SIZE] = c;
}

static void tty_interrupt(unsigned irq)
{
    spin_lock(&rx.wq.lock);
    unsigned before = rx.tail;
    pending_interrupts = 0;
    arch_console_rx(rx_byte);
    if (rx.tail != before) {
        waitq_wake_locked(&rx.wq, 1 << 30);
    }
    unsigned interrupts = pending_interrupts;
    int fg = rx.foreground;
    spin_unlock(&rx.wq.lock);
    if (interrupts) {
        spin_lock(&proc_lock);
        struct process *p = proc_find_locked(fg);
        if (p) {
            signal_send_proc_locked(p, SIGINT);
        }
        spin_unlock(&proc_lock);
    }
}

void tty_init(void)
{
    waitq_init(&rx.wq);
    unsigned irq = arch_console_irq();
    if (!irq) {
        return;
    }
    if (irq_register(irq, tty_interrupt) != 0) {
        panic("tty: cannot take the console interrupt %u", irq);
    }
    arch_irq_set_enabled(irq, true);
}

long tty_read(uint64_t ubuf, size_t n)
{
    char tmp[128];
    if (n == 0) {
        return 0;
    }
    if (vm_check_range(&current()->proc->vm, ubuf, MIN(n, sizeof(tmp)), PROT_WRITE)) {
        return -EFAULT; /* before waiting: a bad buffer must not block or lose input */
    }
    for (;;) {
        unsigned long flags = spin_lock_irqsave(&rx.wq.lock);
        if (rx.tail != rx.head) {
            size_t k = 0;
            while (k < n && k < sizeof(tmp) && rx.head != rx.tail) {
                tmp[k++] = rx.buf[rx.head++ % RX_SIZE];
            }
            spin_unlock_irqrestore(&rx.wq.lock, flags);
            return copy_to_user(&current()->proc->vm, ubuf, tmp, k) ? -EFAULT : (long)k;
        }
        int r = waitq_sleep_locked(&rx.wq, flags, 0);
        if (r == -EINTR) {
            return r;
        }
    }
}

void tty_set_foreground(int pid)
{
    __atomic_store_n(&rx.foreground, pid, __ATOMIC_RELAXED);
}

int tty_foreground(void)
{
    return __atomic_load_n(&rx.foreground, __ATOMIC_RELAXED);
}

uint64_t tty_rx_bytes(void)
{
    return __atomic_load_n(&rx.received, __ATOMIC_RELAXED);
}
