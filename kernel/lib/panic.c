/* SPDX-License-Identifier: MIT */
/*
 * panic.c — stop everything when a kernel invariant breaks (contract in panic.h).
 *
 * The first CPU to panic wins; a CPU that panics while another panic is under way halts
 * quietly.  Order: claim, stop the other CPUs (IPI_STOP; a CPU with IRQs masked may miss
 * it, which only matters if it keeps printing), take over the console, print, power off
 * with PANIC_EXIT_STATUS.
 */
#include "kernel/panic.h"
#include "arch.h"
#include "kernel/printk.h"

static int panicking; /* claimed by the first CPU to panic */

/* What a panic does above lib/ (docs/layout.md): handed in at boot by main.c, so a panic
 * before then only prints and powers off. */
static void (*stop_others)(void);
static void (*describe_cpu)(void);

void panic_set_hooks(void (*stop)(void), void (*describe)(void))
{
    stop_others = stop;
    describe_cpu = describe;
}

static void panic_begin(void)
{
    arch_irq_disable();
    if (__atomic_exchange_n(&panicking, 1, __ATOMIC_ACQ_REL)) {
        arch_halt_cpu();
    }
    printk_panic_mode(); /* a CPU that stopped holding the console lock cannot block us */
    if (stop_others) {
        stop_others();
    }
}

static _Noreturn void panic_end(void)
{
    printk("panic: stopping (exit status %d)\n", PANIC_EXIT_STATUS);
    arch_poweroff(PANIC_EXIT_STATUS);
}

/* The message line: "panic: CPU N: <message>". */
static void panic_message(const char *fmt, va_list ap)
{
    printk("\npanic: CPU %u: ", arch_this_cpu() ? arch_this_cpu_id() : 0);
    vprintk(fmt, ap);
    printk("\n");
    if (describe_cpu && arch_this_cpu()) {
        describe_cpu();
    }
}

_Noreturn void panic(const char *fmt, ...)
{
    va_list ap;
    panic_begin();
    va_start(ap, fmt);
    panic_message(fmt, ap);
    va_end(ap);
    panic_end();
}

_Noreturn void panic_frame(const struct trap_frame *f, const char *fmt, ...)
{
    va_list ap;
    panic_begin();
    va_start(ap, fmt);
    panic_message(fmt, ap);
    va_end(ap);
    arch_dump_frame(f);
    panic_end();
}
