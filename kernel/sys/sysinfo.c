/* SPDX-License-Identifier: MIT */
/*
 * sysinfo.c — zerotick's own system calls: spawn, the read-only views that ps and cpus
 * show (tasks, CPUs, memory), the irqs-off check's record (checked kernels), and power-off.
 *
 * The views read other CPUs' counters and run queues with relaxed loads: a snapshot that
 * may be a few events stale, never a request to the CPU being observed.
 */
#include "kernel/sysinfo.h"
#include "arch.h"
#include "kernel/acct.h"
#include "kernel/cpu.h"
#include "kernel/cycles.h"
#include "kernel/exec.h"
#include "kernel/ipi.h"
#include "kernel/irqsoff.h"
#include "kernel/isolate.h"
#include "kernel/kmem.h"
#include "kernel/kstack.h"
#include "kernel/lib.h"
#include "kernel/page.h"
#include "kernel/power.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/stats.h"
#include "kernel/task.h"
#include "kernel/trace.h"
#include "uapi/zt_debug.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_syscall.h"

#define PATH_MAX_LEN 256

/* spawn(path, argv, attr, envp): the new process's pid or -errno.  argv NULL: the program
 * gets its path as argv[0]; an empty argv is refused.  envp NULL: the default environment. */
long sys_zt_spawn(struct trap_frame *f)
{
    char path[PATH_MAX_LEN];
    struct zt_spawn_attr attr;
    memset(&attr, 0, sizeof(attr));
    long r = strncpy_from_user(current_vm(), path, arch_frame_arg(f, 0), sizeof(path));
    if (r < 0) {
        return r;
    }
    if (arch_frame_arg(f, 2) &&
        copy_from_user(current_vm(), &attr, arch_frame_arg(f, 2), sizeof(attr))) {
        return -EFAULT;
    }
    cpumask_t asked, affinity;
    memcpy(&asked, &attr.affinity, sizeof(asked)); /* the same layout (cpu.c) */
    affinity = cpumask_empty(asked) ? cpumask_load(&cpus_housekeeping)
                                    : cpumask_and(asked, cpumask_load(&cpus_online));
    if (attr.flags || cpumask_empty(affinity)) {
        return -EINVAL;
    }
    uint64_t first = 0;
    if (arch_frame_arg(f, 1) &&
        copy_from_user(current_vm(), &first, arch_frame_arg(f, 1), sizeof(first))) {
        return -EFAULT;
    }
    if (arch_frame_arg(f, 1) && !first) {
        return -EINVAL;
    }
    char *const own[] = {path, 0};
    struct exec_strv argv = {arch_frame_arg(f, 1) ? current_vm() : 0, arch_frame_arg(f, 1), own};
    struct exec_strv envp = {arch_frame_arg(f, 3) ? current_vm() : 0, arch_frame_arg(f, 3),
                             exec_default_env};
    return proc_spawn(path, &argv, &envp, affinity);
}

long sys_zt_tasks(struct trap_frame *f)
{
    const int chunk = (int)(PAGE_SIZE / sizeof(struct zt_task_info));
    int n = (int)arch_frame_arg(f, 1);
    if (n < 0) {
        return -EINVAL;
    }
    struct zt_task_info *tmp = kmem_alloc(PAGE_SIZE);
    if (!tmp) {
        return -ENOMEM;
    }
    /* A page of entries at a time: tasks that come and go between pages may be missed or
     * shown twice, like any snapshot taken without stopping the machine. */
    long total = 0;
    for (int done = 0;; done += chunk) {
        total = task_list_info(tmp, done, chunk);
        int copy = MIN(MIN(n, (int)total) - done, chunk);
        if (copy <= 0) {
            break;
        }
        if (copy_to_user(current_vm(), arch_frame_arg(f, 0) + (uint64_t)done * sizeof(*tmp), tmp,
                         (size_t)copy * sizeof(*tmp))) {
            total = -EFAULT;
            break;
        }
    }
    kmem_free(tmp, PAGE_SIZE);
    return total;
}

/* Interrupts by source: IPIs, the local timer, the console, every other device. */
static void count_irqs(unsigned c, struct zt_cpu_info *ci)
{
    unsigned uart = arch_console_irq();
    ci->irq_ipi = STAT_READ(c, irq_class[IRQ_CLASS_IPI]);
    ci->irq_timer = STAT_READ(c, irq_class[IRQ_CLASS_TIMER]);
    ci->irq_uart = uart && uart < ARCH_NR_IRQS ? STAT_READ(c, irq[uart]) : 0;
    ci->irq_other = STAT_READ(c, irq_class[IRQ_CLASS_DEVICE]) - ci->irq_uart;
}

static void fill_cpu(unsigned c, struct zt_cpu_info *ci)
{
    struct acct_times acct;
    memset(ci, 0, sizeof(*ci));
    ci->cpu = c;
    ci->online = cpumask_test_atomic(&cpus_online, c);
    ci->dataplane = cpu_is_dataplane(c);
    if (!ci->online) {
        return;
    }
    /* proc_lock keeps the running task from being freed while it is read (task_free takes
     * it); kernel threads have no process. */
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct task *cur = sched_current(c);
    if (cur && !sched_is_idle_task(cur)) {
        ci->cur_pid = cur->proc ? cur->proc->pid : 0;
        ci->cur_tid = cur->tid;
        kstrlcpy(ci->cur_name, cur->name, sizeof(ci->cur_name));
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    ci->nr_running = sched_nr_running(c);
    ci->exc_sync = stats_exceptions(c, EXC_SYNC);
    ci->exc_irq = stats_exceptions(c, EXC_IRQ);
    ci->exc_fiq = stats_exceptions(c, EXC_FIQ);
    ci->exc_serror = stats_exceptions(c, EXC_SERROR);
    ci->syscalls = stats_syscalls(c);
    count_irqs(c, ci);
    ci->ctx_switches = STAT_READ(c, ctx_switches);
    ci->timer_arms = STAT_READ(c, timer_arms);
    ci->timer_disarms = STAT_READ(c, timer_disarms);
    acct_cpu_read(c, &acct);
    ci->user_ns = cycles_to_ns(acct.user_cycles);
    ci->sys_ns = cycles_to_ns(acct.sys_cycles);
    ci->idle_ns = cycles_to_ns(acct.idle_cycles);
    ci->exc_per_s = stats_rate(c);
}

/* zt_cpus(buf, n): fills min(n, ncpus) entries, returns ncpus. */
long sys_zt_cpus(struct trap_frame *f)
{
    int n = (int)arch_frame_arg(f, 1);
    struct zt_cpu_info ci;
    if (n < 0) {
        return -EINVAL;
    }
    for (unsigned c = 0; c < ncpus && (int)c < n; c++) {
        fill_cpu(c, &ci);
        if (copy_to_user(current_vm(), arch_frame_arg(f, 0) + c * sizeof(ci), &ci, sizeof(ci))) {
            return -EFAULT;
        }
    }
    return (long)ncpus;
}

long sys_zt_poweroff(struct trap_frame *f)
{
    int status = (int)(arch_frame_arg(f, 0) & 0xff);
    printk("poweroff: requested by pid %d, exit status %d\n", current()->proc->pid, status);
    power_off(status);
}

long sys_zt_meminfo(struct trap_frame *f)
{
    struct zt_meminfo mi = {PAGE_SIZE, page_total_count(), page_free_count(), kstack_used_count()};
    return copy_to_user(current_vm(), arch_frame_arg(f, 0), &mi, sizeof(mi)) ? -EFAULT : 0;
}

long sys_zt_isolstat(struct trap_frame *f)
{
    struct zt_isol_audit a;
    int r = isol_audit((unsigned)arch_frame_arg(f, 0), &a);
    if (r) {
        return r;
    }
    return copy_to_user(current_vm(), arch_frame_arg(f, 1), &a, sizeof(a)) ? -EFAULT : 0;
}

/* zt_irqsoff(cpu, out, size, flags): the irqs-off check's record of a CPU (checked kernels;
 * -ENODEV otherwise).  Everything is checked before a reset is asked for. */
long sys_zt_irqsoff(struct trap_frame *f)
{
    unsigned cpu = (unsigned)arch_frame_arg(f, 0);
    struct zt_irqsoff rec;
    if (arch_frame_arg(f, 0) >= ncpus || arch_frame_arg(f, 2) != sizeof(rec) ||
        (arch_frame_arg(f, 3) & ~(uint64_t)ZT_IRQSOFF_RESET)) {
        return -EINVAL;
    }
    if (vm_check_range(current_vm(), arch_frame_arg(f, 1), sizeof(rec), PROT_WRITE)) {
        return -EFAULT;
    }
    int r = irqsoff_read(cpu, &rec, arch_frame_arg(f, 3) & ZT_IRQSOFF_RESET);
    if (r) {
        return r;
    }
    return copy_to_user(current_vm(), arch_frame_arg(f, 1), &rec, sizeof(rec)) ? -EFAULT : 0;
}

#define TRACE_CHUNK 128

long sys_zt_trace(struct trap_frame *f)
{
    unsigned cpu = (unsigned)arch_frame_arg(f, 0);
    long n = (long)arch_frame_arg(f, 2);
    if (cpu >= ncpus || n < 0 || (arch_frame_arg(f, 3) & ~(uint64_t)ZT_TRACE_CLEAR)) {
        return -EINVAL;
    }
    if (!trace_enabled()) {
        return -ENODATA; /* no rings: the kernel was booted without trace=1 */
    }
    n = MIN(n, TRACE_CHUNK);
    if (vm_check_range(current_vm(), arch_frame_arg(f, 1),
                       (size_t)n * sizeof(struct zt_trace_event), PROT_WRITE)) {
        return -EFAULT;
    }
    struct zt_trace_event *tmp = kmem_alloc(PAGE_SIZE);
    if (!tmp) {
        return -ENOMEM;
    }
    long got = trace_read(cpu, tmp, n, (int)(arch_frame_arg(f, 3) & ZT_TRACE_CLEAR));
    long r = copy_to_user(current_vm(), arch_frame_arg(f, 1), tmp, (size_t)got * sizeof(*tmp))
                 ? -EFAULT
                 : got;
    kmem_free(tmp, PAGE_SIZE);
    return r;
}
