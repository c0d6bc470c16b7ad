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
#include "kernel/cpu.h"
#include "kernel/ipi.h"
#include "kernel/printk.h"
#include "kernel/task.h"

static int panicking;

int panic_in_progress(void)
{
    return __atomic_load_n(&panicking, __ATOMIC_RELAXED);
}

static void panic_begin(void)
{
    arch_irq_disable();
    if (__atomic_exchange_n(&panicking, 1, __ATOMIC_ACQ_REL)) {
        arch_halt_cpu();
    }
    printk_panic_mode(); /* a CPU that stopped holding the console lock cannot block us */
    ipi_stop_others();
}

static _Noreturn void panic_end(void)
{
    printk("panic: stopping (exit status %d)\n", PANIC_EXIT_STATUS);
    arch_poweroff(PANIC_EXIT_STATUS);
}

/* The message line: "panic: CPU N: <message>". */
static void panic_message(const char *fmt, va_list ap)
{
    printk("\npanic: CPU %u: ", this_cpu() ? this_cpu_id() : 0);
    vprintk(fmt, ap);
    printk("\n");
    const struct task *t = this_cpu() ? this_cpu()->current_task : 0;
    if (t) {
        printk("panic: CPU %u was running %pE (tid %d%s)\n", this_cpu_id(), t->name, t->tid,
               t->proc ? "" : ", kernel");
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
