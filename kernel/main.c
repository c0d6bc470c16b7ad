/*
 * main.c — the boot CPU's path from the first C instruction to user space.
 *
 * boot.S has zeroed .bss, turned the MMU on with 1 GiB blocks and called kernel_main on
 * the boot stack with IRQs masked.  Each step below is one call; the order matters and is
 * explained beside it.  Secondary CPUs enter through secondary_main (cpu.c).
 */
#include "arch.h"
#include "kernel/bootargs.h"
#include "kernel/cpu.h"
#include "kernel/lib.h"
#include "kernel/page.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/stats.h"
#include "kernel/sysdebug.h"
#include "kernel/main.h"
#include "kernel/exec.h"
#include "kernel/futex.h"
#include "kernel/ipi.h"
#include "kernel/irq.h"
#include "kernel/isolate.h"
#include "kernel/kstack.h"
#include "kernel/panic.h"
#include "kernel/poll.h"
#include "kernel/task.h"
#include "kernel/timer.h"
#include "kernel/trace.h"
#include "kernel/tty.h"
#include "kernel/vfs.h"
#include "kernel/work.h"
#include "uapi/zt_errno.h"

struct bootargs bootargs;

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
}

/* Decide the housekeeping/dataplane split before any other CPU runs (their setup depends
 * on their role); bad requests are reported now, the result once the CPUs are up. */
static void setup_partition(void)
{
    char msg[4][BOOTARGS_WARN_LEN];
    int n = partition_decide(&bootargs, ncpus, &cpus_housekeeping, &cpus_dataplane, msg, 4);
    for (int i = 0; i < n; i++) {
        printk("%s\n", msg[i]);
    }
    for (unsigned c = 0; c < ncpus; c++) {
        cpus[c].dataplane = cpumask_has(cpus_dataplane, c);
    }
}

/* The partition as it stands with the CPUs that came online, in Linux cpulist form. */
static void print_partition(void)
{
    cpumask_t online = __atomic_load_n(&cpus_online, __ATOMIC_ACQUIRE);
    cpumask_t offline = cpumask_first_n(ncpus) & ~online;
    cpus_housekeeping &= online;
    cpus_dataplane &= online;
    char hk[160], dp[160], off[160];
    cpulist_format(cpus_housekeeping, hk, sizeof(hk));
    cpulist_format(cpus_dataplane, dp, sizeof(dp));
    if (offline) {
        cpulist_format(offline, off, sizeof(off));
        printk("partition: %s %s %s offline and in neither set\n",
               cpumask_weight(offline) == 1 ? "CPU" : "CPUs", off,
               cpumask_weight(offline) == 1 ? "is" : "are");
    }
    printk("partition: housekeeping %s, dataplane %s\n", hk, dp);
}

static uint64_t counter_to_us(uint64_t delta)
{
    return delta * 1000000 / arch_counter_freq();
}

/* One line per CPU: role, MPIDR, when it came online, interrupts taken so far. */
static void print_cpu_summary(uint64_t entry)
{
    printk("cpu  role          mpidr     online-at(us)  exceptions  irqs\n");
    for (unsigned c = 0; c < ncpus; c++) {
        struct cpu *p = &cpus[c];
        if (!p->online) {
            printk("%3u  %-12s  %08lx  offline\n", c, p->dataplane ? "dataplane" : "housekeeping",
                   (unsigned long)p->arch.mpidr);
            continue;
        }
        uint64_t exc = 0, irqs = 0;
        for (int k = 0; k < EXC_NR_KINDS; k++) {
            exc += STAT_READ(c, exc[k][FROM_EL1]) + STAT_READ(c, exc[k][FROM_EL0]);
        }
        irqs = STAT_READ(c, exc[EXC_IRQ][FROM_EL1]) + STAT_READ(c, exc[EXC_IRQ][FROM_EL0]);
        printk("%3u  %-12s  %08lx  %13lu  %10lu  %4lu\n", c,
               p->dataplane ? "dataplane" : "housekeeping", (unsigned long)p->arch.mpidr,
               (unsigned long)counter_to_us(p->online_counter - entry), (unsigned long)exc,
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
    if (!bootargs.quiet) {
        print_cpu_summary(bi->entry_counter);
    }
    printk("boot: all CPUs online %lu us (%lu counter ticks) after the first instruction\n",
           (unsigned long)counter_to_us(last - bi->entry_counter),
           (unsigned long)(last - bi->entry_counter));
    if (bi->ncpus_total > bi->ncpus) {
        printk("smp: the device tree lists %u CPUs; zerotick supports %u, the rest stay off\n",
               bi->ncpus_total, bi->ncpus);
    }
    printk("smp: %u of %u CPUs online\n", cpumask_weight(cpus_online), bi->ncpus_total);
}

static cpumask_t cpus_stopped;

void boot_note_init_start(void)
{
    uint64_t d = arch_counter_read() - arch_boot_info()->entry_counter;
    printk("boot: init starts %lu us (%lu counter ticks) after the first instruction\n",
           (unsigned long)counter_to_us(d), (unsigned long)d);
}

_Noreturn void cpu_stop_self(void)
{
    __atomic_fetch_or(&cpus_stopped, CPUMASK_BIT(this_cpu_id()), __ATOMIC_RELEASE);
    arch_halt_cpu();
}

/* One line per CPU: every exception it took since boot, by kind (QEMU's log must agree). */
static void print_exit_stats(void)
{
    for (unsigned c = 0; c < ncpus; c++) {
        if (!cpumask_has(cpus_online, c)) {
            continue;
        }
        uint64_t k[EXC_NR_KINDS];
        for (int i = 0; i < EXC_NR_KINDS; i++) {
            k[i] = STAT_READ(c, exc[i][FROM_EL0]) + STAT_READ(c, exc[i][FROM_EL1]);
        }
        printk("exit-stats: cpu %u sync %lu irq %lu fiq %lu serror %lu svc %lu timer %lu\n", c,
               (unsigned long)k[EXC_SYNC], (unsigned long)k[EXC_IRQ], (unsigned long)k[EXC_FIQ],
               (unsigned long)k[EXC_SERROR], (unsigned long)STAT_READ(c, sync_ec[0x15]),
               (unsigned long)STAT_READ(c, irq[arch_timer_intid()]));
    }
    char cpus_used[160];
    cpulist_format(work_cpus_used(), cpus_used, sizeof(cpus_used));
    printk("exit-stats: work %lu items on cpus %s\n", (unsigned long)work_items_run(), cpus_used);
}

void cpus_stop_others(void)
{
    unsigned me = this_cpu_id();
    cpumask_t others = __atomic_load_n(&cpus_online, __ATOMIC_ACQUIRE) & ~CPUMASK_BIT(me);
    ipi_stop_others();
    uint64_t limit = arch_counter_read() + arch_counter_freq(); /* 1 s: then go anyway */
    while ((__atomic_load_n(&cpus_stopped, __ATOMIC_ACQUIRE) & others) != others &&
           arch_counter_read() < limit) {
        arch_cpu_relax();
    }
}

_Noreturn void kernel_poweroff(int status)
{
    arch_irq_disable();
    cpus_stop_others();
    if (bootargs.exit_stats) {
        print_exit_stats();
    }
    arch_poweroff(status);
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
        kernel_poweroff(127);
    }
}

void kernel_late_init(void)
{
    if (bootargs.debug_fault != DEBUG_FAULT_NONE) {
        printk("debug_fault: faulting on purpose now\n");
        arch_debug_fault(bootargs.debug_fault);
    }
    if (bootargs.debug_exit >= 0) {
        printk("debug_exit: powering off with status %d\n", bootargs.debug_exit);
        kernel_poweroff(bootargs.debug_exit);
    }
    isol_init();           /* task isolation's report printer */
    sysdebug_init();       /* syscall_debug=1's report printer */
    start_init();          /* first: init is pid 1 */
    work_start();          /* the housekeeping worker thread */
    stats_start_sampler(); /* rates for `cpus`, folded on housekeeping once a second */
}

void kernel_main(uint64_t entry_counter)
{
    struct cpu *boot = &cpus[0];
    arch_boot_init(boot, entry_counter); /* device tree, console, MMU, GIC, timer */
    const struct arch_boot_info *bi = arch_boot_info();
    ncpus = bi->ncpus;
    bootargs_parse(bi->cmdline, strlen(bi->cmdline), &bootargs);
    print_banner(bi);
    for (int i = 0; i < bootargs.nwarn; i++) {
        printk("%s\n", bootargs.warn[i]); /* bad parameters: what was done instead */
    }
    setup_partition();    /* before any CPU runs: routing depends on it */
    kstack_init();        /* page tables of the kernel stack window */
    trace_init_cpu(0);    /* the boot CPU's trace ring (the others' in smp_boot) */
    futex_init();         /* wait queues user space will sleep on */
    exec_init();          /* the signal-return page every process maps */
    vfs_init();           /* the file tree: the initrd, /tmp, /dev, /proc/self */
    poll_init();          /* where ppoll and pselect6 wait */
    sched_init_cpu(boot); /* the boot CPU's run queue and idle task */
    timer_init_cpu(0);    /* its timer queue; timer interrupt handler */
    ipi_init_cpu();       /* SGIs: the only way other CPUs reach it */
    tty_init();           /* console input interrupt */
    smp_boot();           /* PSCI CPU_ON for the others, wait for them */
    print_partition();    /* "partition: housekeeping LIST, dataplane LIST" */
    irq_route_all_spis(); /* device interrupts: housekeeping CPUs only, spread */
    report_smp(bi);       /* ends with "smp: N of N CPUs online" */
    kernel_late_init();   /* user space, or the debug hooks */
    sched_idle();         /* the boot stack becomes CPU 0's idle task */
}
