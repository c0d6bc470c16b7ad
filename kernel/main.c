/* SPDX-License-Identifier: MIT */
/*
 * main.c — the boot CPU's path from the first C instruction to user space.
 *
 * boot.S has zeroed .bss, turned the MMU on with 1 GiB blocks and called kernel_main on
 * the boot stack with IRQs masked.  Each step below is one call; the order matters and is
 * explained beside it.  Secondary CPUs enter through secondary_main (smp.c).
 */
#include "kernel/main.h"
#include "arch.h"
#include "kernel/bootargs.h"
#include "kernel/clock.h"
#include "kernel/cpu.h"
#include "kernel/cycles.h"
#include "kernel/device.h"
#include "kernel/entry.h"
#include "kernel/exec.h"
#include "kernel/futex.h"
#include "kernel/hklog.h"
#include "kernel/ipi.h"
#include "kernel/irq.h"
#include "kernel/irqsoff.h"
#include "kernel/isolate.h"
#include "kernel/kcov.h"
#include "kernel/kstack.h"
#include "kernel/lib.h"
#include "kernel/panic.h"
#include "kernel/partition.h"
#include "kernel/poll.h"
#include "kernel/power.h"
#include "kernel/printk.h"
#include "kernel/repartition.h"
#include "kernel/sched.h"
#include "kernel/smp.h"
#include "kernel/stats.h"
#include "kernel/synth.h"
#include "kernel/sysdebug.h"
#include "kernel/task.h"
#include "kernel/timer.h"
#include "kernel/trace.h"
#include "kernel/tty.h"
#include "kernel/vdso.h"
#include "kernel/vfs.h"
#include "kernel/watchdog.h"
#include "kernel/work.h"
#include "uapi/zt_errno.h"

static struct bootargs bootargs; /* read here only: modules get settings at init */

static void print_banner(const struct arch_boot_info *bi)
{
    uint64_t mem = 0;
    for (unsigned i = 0; i < bi->nmem; i++) {
        mem += bi->mem_size[i];
    }
    printk("zerotick: tickless SMP kernel for aarch64\n");
    printk("zerotick: %u CPUs in the device tree, %lu MiB RAM, counter %lu Hz\n", bi->ncpus_total,
           (unsigned long)(mem >> 20), (unsigned long)arch_counter_freq());
    printk("zerotick: command line \"%s\"\n", bi->cmdline);
    printk("zerotick: memory protection: %s\n", bi->protection ? bi->protection : "none");
}

/* One line per CPU: role, hardware id, when it came online, interrupts taken so far. */
static void print_cpu_summary(uint64_t entry)
{
    printk("cpu  role          hwid      online-at(us)  exceptions  irqs\n");
    for (unsigned c = 0; c < ncpus; c++) {
        struct cpu *p = &cpus[c];
        if (!p->online) {
            printk("%3u  %-12s  %08lx  offline\n", c, p->dataplane ? "dataplane" : "housekeeping",
                   (unsigned long)p->arch.hwid);
            continue;
        }
        uint64_t exc = 0, irqs = 0;
        for (int k = 0; k < EXC_NR_KINDS; k++) {
            exc += stats_exceptions(c, (enum exc_kind)k);
        }
        irqs = stats_exceptions(c, EXC_IRQ);
        printk("%3u  %-12s  %08lx  %13lu  %10lu  %4lu\n", c,
               p->dataplane ? "dataplane" : "housekeeping", (unsigned long)p->arch.hwid,
               (unsigned long)cycles_to_us(p->online_counter - entry), (unsigned long)exc,
               (unsigned long)irqs);
    }
}

/* Above this many CPUs the boot summary has one line per run of consecutive CPUs in the same
 * role and state, not one per CPU. */
#define SUMMARY_RUNS_ABOVE 16

static bool same_run(unsigned a, unsigned b)
{
    return cpus[a].online == cpus[b].online && cpus[a].dataplane == cpus[b].dataplane;
}

/* "A" or "A-B" (when they differ), each written with the one-number format `fmt`. */
static void range_text(char *buf, size_t size, const char *fmt, uint64_t a, uint64_t b)
{
    int n = ksnprintf(buf, size, fmt, (unsigned long)a);
    if (a != b && n > 0 && (size_t)n + 1 < size) {
        buf[n] = '-';
        ksnprintf(buf + n + 1, size - (size_t)n - 1, fmt, (unsigned long)b);
    }
}

/* A large machine's summary: per run, the hardware ids and online times first to last, and
 * the exceptions and interrupts of the whole run. */
static void print_cpu_runs(uint64_t entry)
{
    printk("cpus      role          hwid               online-at(us)  exceptions  irqs\n");
    for (unsigned c = 0, last; c < ncpus; c = last + 1) {
        uint64_t exc = 0, irqs = 0, first_at = ~0ull, last_at = 0;
        for (last = c; last + 1 < ncpus && same_run(c, last + 1); last++) {
        }
        for (unsigned i = c; i <= last; i++) {
            for (int k = 0; k < EXC_NR_KINDS; k++) {
                exc += STAT_READ(i, exc[k][FROM_KERNEL]) + STAT_READ(i, exc[k][FROM_USER]);
            }
            irqs += STAT_READ(i, exc[EXC_IRQ][FROM_KERNEL]) + STAT_READ(i, exc[EXC_IRQ][FROM_USER]);
            first_at = MIN(first_at, cpus[i].online_counter - entry);
            last_at = MAX(last_at, cpus[i].online_counter - entry);
        }
        char who[16], hwid[24], at[32];
        range_text(who, sizeof(who), "%lu", c, last);
        range_text(hwid, sizeof(hwid), "%08lx", cpus[c].arch.hwid, cpus[last].arch.hwid);
        if (!cpus[c].online) {
            printk("%-8s  %-12s  %-17s  offline\n", who,
                   cpus[c].dataplane ? "dataplane" : "housekeeping", hwid);
            continue;
        }
        range_text(at, sizeof(at), "%lu", cycles_to_us(first_at), cycles_to_us(last_at));
        printk("%-8s  %-12s  %-17s  %13s  %10lu  %4lu\n", who,
               cpus[c].dataplane ? "dataplane" : "housekeeping", hwid, at, (unsigned long)exc,
               (unsigned long)irqs);
    }
}

static void report_smp(const struct arch_boot_info *bi)
{
    uint64_t last = 0;
    for (unsigned c = 0; c < ncpus; c++) {
        if (cpus[c].online && cpus[c].online_counter > last) {
            last = cpus[c].online_counter;
        }
    }
    if (!bootargs.quiet && ncpus > SUMMARY_RUNS_ABOVE) {
        print_cpu_runs(bi->entry_counter);
    } else if (!bootargs.quiet) {
        print_cpu_summary(bi->entry_counter);
    }
    printk("boot: all CPUs online %lu us (%lu counter cycles) after the first instruction\n",
           (unsigned long)cycles_to_us(last - bi->entry_counter),
           (unsigned long)(last - bi->entry_counter));
    if (bi->ncpus_total > bi->ncpus) {
        printk("smp: the device tree lists %u CPUs; zerotick supports %u, the rest stay off\n",
               bi->ncpus_total, bi->ncpus);
    }
    unsigned long dynamic = smp_boot_bytes_per_cpu();
    if (dynamic) { /* what one more CPU costs (docs/boot.md, "What a CPU costs") */
        printk("smp: per-CPU memory %lu bytes: %lu static (per-CPU arrays), %lu allocated at "
               "boot\n",
               bi->percpu_bytes + dynamic, bi->percpu_bytes, dynamic);
    }
    printk("smp: %u of %u CPUs online\n", cpumask_weight(cpus_online), bi->ncpus_total); /* last */
}

/* The first user process: /bin/init, told what to run by init= and the words after "--". */
static void start_init(void)
{
    char *argv[BOOTARGS_MAX_INIT_ARGS + 3];
    int argc = 0;
    argv[argc++] = "/bin/init";
    if (bootargs.init_path[0]) {
        argv[argc++] = bootargs.init_path;
        for (int i = 0; i < bootargs.init_argc; i++) {
            argv[argc++] = bootargs.init_argv[i];
        }
    }
    argv[argc] = 0;
    int r = proc_start_init(argv);
    if (r < 0) {
        printk("init: cannot start /bin/init (error %d); powering off\n", r);
        power_off(127);
    }
}

/* The debug faults that are the kernel's, not the CPU's: a long stretch with interrupts
 * masked (the watchdog reports it, the irqs-off check records it) and a lock taken against the
 * order (the checked kernel panics; the release kernel does not look). */
static void kernel_debug_fault(enum debug_fault kind)
{
    static spinlock_t a_run_queue = SPINLOCK_INIT_RANK(LOCK_RQ);
    static spinlock_t a_proc_lock = SPINLOCK_INIT_RANK(LOCK_PROC);
    unsigned long flags;
    switch (kind) {
    case DEBUG_FAULT_IRQS_OFF:
        flags = arch_irq_save();
        irqsoff_note_masked(); /* the boot runs masked: this is a span of its own for the
                                  checked kernel's irqs-off check (IRQO-03) */
        for (uint64_t end = arch_counter_read() + cycles_from_ns(2 * NS_PER_SEC);
             arch_counter_read() < end;) {
            arch_cpu_relax();
        }
        irqsoff_note_unmasked();
        arch_irq_restore(flags);
        printk("debug_fault: cpu %u kept interrupts masked for 2 s\n", this_cpu_id());
        break;
    case DEBUG_FAULT_LOCK_ORDER:
        flags = spin_lock_irqsave(&a_run_queue);
        spin_lock(&a_proc_lock); /* proc_lock ranks below a run queue: wrong order */
        spin_unlock(&a_proc_lock);
        spin_unlock_irqrestore(&a_run_queue, flags);
        printk("debug_fault: took proc_lock's rank inside a run queue's: this kernel does not "
               "check the lock order\n");
        break;
    default:
        arch_debug_fault(kind);
        break;
    }
}

void kernel_late_init(void)
{
    watchdog_start(bootargs.watchdog_ms); /* housekeeping CPUs that stop taking interrupts */
    if (bootargs.debug_fault != DEBUG_FAULT_NONE) {
        printk("debug_fault: faulting on purpose now\n");
        kernel_debug_fault(bootargs.debug_fault);
    }
    if (bootargs.debug_exit >= 0) {
        printk("debug_exit: powering off with status %d\n", bootargs.debug_exit);
        power_off(bootargs.debug_exit);
    }
    hklog_init();                          /* lines from dataplane CPUs, printed on housekeeping */
    isol_init(bootargs.isol_debug);        /* task isolation's settings */
    repartition_init();                    /* CPU roles change at run time (zt_partition) */
    sysdebug_init(bootargs.syscall_debug); /* syscall_debug=1 */
    proc_set_limit(bootargs.max_procs);    /* processes alive or zombie */
    task_set_first_run(kernel_task_first_run); /* where new user tasks start (entry.c) */
    start_init();                              /* first: init is pid 1 */
    work_start();                              /* the housekeeping worker thread */
    stats_start_sampler(); /* rates for `cpus`, folded on housekeeping once a second */
    procfs_start();        /* load averages (/proc/loadavg), sampled every 5 s on housekeeping */
}

/* The local timer's settings from the command line (timer.h). */
static void configure_timer(void)
{
    struct timer_config tc = {
        .hz = bootargs.hz,
        .periodic = bootargs.tick == TICK_PERIODIC,
        .residual = bootargs.tick_residual,
    };
    timer_configure(&tc);
}

void kernel_main(uint64_t entry_counter)
{
    struct cpu *boot = &cpus[0];
    arch_boot_init(boot, entry_counter); /* device tree, console, MMU, interrupts, timer */
    panic_set_hooks(ipi_stop_others, task_panic_describe); /* a panic stops and names */
    irqsoff_init(); /* checked builds: time every span with interrupts masked from here */
    kcov_init();    /* the coverage kernel: tasks' system calls may record from here */
    const struct arch_boot_info *bi = arch_boot_info();
    ncpus = bi->ncpus;
    ASSERT(ncpus >= 1 && ncpus <= MAX_CPUS && this_cpu() == boot); /* arch_boot_init's */
    clock_init(bi->rtc_seconds, bi->rtc_counter); /* wall time: the RTC at boot + the counter */
    bootargs_parse(bi->cmdline, strlen(bi->cmdline), &bootargs);
    print_banner(bi);
    for (int i = 0; i < bootargs.nwarn; i++) {
        printk("%s\n", bootargs.warn[i]); /* bad parameters: what was done instead */
    }
    partition_setup(&bootargs, ncpus); /* before any CPU runs: routing depends on it */
    power_init(bootargs.exit_stats);   /* exit_stats=1: counts printed at power-off */
    kstack_init();                     /* page tables of the kernel stack window */
    trace_setup(bootargs.trace);       /* trace=1: per-CPU trace rings */
    (void)trace_init_cpu(0);           /* the boot CPU's trace ring (the others' in smp_boot) */
    stats_init_cpu(0);                 /* its public counter page */
    futex_init();                      /* wait queues user space will sleep on */
    exec_init();                       /* the signal-return page every process maps */
    vdso_init(clock_wall_offset_ns()); /* the vDSO's pages, with the wall offset just read */
    vfs_init();                        /* the file tree: the initrd, /tmp, /dev, /proc, /sys */
    poll_init();                       /* where ppoll and pselect6 wait */
    sched_init_cpu(boot);              /* the boot CPU's run queue and idle task */
    configure_timer();                 /* hz=, tick=, tick_residual= */
    timer_init_cpu(0);                 /* its timer queue; timer interrupt handler */
    ipi_init_cpu();                    /* IPIs: the only way other CPUs reach it */
    tty_init();                        /* console input interrupt */
    smp_boot();                        /* start the others (arch_cpu_start), wait for them */
    partition_boot_print();            /* "partition: housekeeping LIST, dataplane LIST" */
    irq_route_all_devices();           /* device interrupts: housekeeping CPUs only, spread */
    report_smp(bi);                    /* ends with "smp: N of N CPUs online" */
    device_init(bootargs.quiet);       /* the SMMU, PCIe, virtio-mmio: for user-space drivers */
    kernel_late_init();                /* user space, or the debug hooks */
    sched_idle();                      /* the boot stack becomes CPU 0's idle task */
}
