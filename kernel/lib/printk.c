/* SPDX-License-Identifier: MIT */
/*
 * printk.c — kernel console output (contract in include/kernel/printk.h).
 *
 * Each call formats into a stack buffer, then writes it under console_lock with IRQs
 * masked, so a line is never split by another CPU's output.  Once a panic starts, the lock
 * is ignored: the panicking CPU has stopped the others and must be heard even if one of
 * them died holding it.  Output is polled (arch_console_putc), "\n" becomes "\r\n".
 */
#include "kernel/printk.h"
#include "arch.h"
#include "kernel/lib.h"
#include "kernel/spinlock.h"

static spinlock_t console_lock = SPINLOCK_INIT_RANK(LOCK_CONSOLE);
static volatile int panic_mode;

static void emit(const char *s, unsigned long n)
{
    for (unsigned long i = 0; i < n; i++) {
        if (s[i] == '\n') {
            arch_console_putc('\r');
        }
        arch_console_putc(s[i]);
    }
}

void console_write(const char *s, unsigned long n)
{
    if (panic_mode) {
        emit(s, n);
        return;
    }
    unsigned long flags = spin_lock_irqsave(&console_lock);
    emit(s, n);
    spin_unlock_irqrestore(&console_lock, flags);
}

void vprintk(const char *fmt, va_list ap)
{
    char buf[256];
    int n = kvsnprintf(buf, sizeof(buf), fmt, ap);
    console_write(buf, n < (int)sizeof(buf) ? (unsigned long)n : sizeof(buf) - 1);
}

void printk(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintk(fmt, ap);
    va_end(ap);
}

void printk_panic_mode(void)
{
    panic_mode = 1;
}
