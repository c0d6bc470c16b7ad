/* SPDX-License-Identifier: MIT */
/*
 * test_checks.c — host unit tests that the checked invariants of include/kernel/panic.h and
 * spinlock.h hold and fire: spinlock owner tracking, the held-lock count, and ASSERTs at the
 * top of functions that state a contract ("proc_lock held", "IRQs masked").
 *
 * CHK-0n: owner tracking and counts.  CHK-1n: a broken contract panics (in a child process,
 * fixture_panics), naming the condition, file and line.  CHK-20 on: a sample of the invariants
 * each module states (locks, IRQs masked, ranges, counts, refcounts, list membership, states)
 * fires when a caller breaks it; each test breaks one contract the way a bug would.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kernel/acct.h"
#include "kernel/cpu.h"
#include "kernel/elf.h"
#include "kernel/entry.h"
#include "kernel/ipi.h"
#include "kernel/irq.h"
#include "kernel/kmem.h"
#include "kernel/kstack.h"
#include "kernel/page.h"
#include "kernel/pid.h"
#include "kernel/sched.h"
#include "kernel/signal.h"
#include "kernel/spinlock.h"
#include "kernel/stats.h"
#include "kernel/task.h"
#include "kernel/timer.h"
#include "kernel/trace.h"
#include "kernel/vfs.h"
#include "kernel/vm.h"
#include "kernel/wait.h"
#include "uapi/zt_errno.h"
#include "fake.h"
#include "fixture.h"
#include "unit.h"

static spinlock_t a = SPINLOCK_INIT, b = SPINLOCK_INIT;

static void on_cpu(unsigned id)
{
    cpus[id].id = id;
    cpus[id].arch.id = id;
    fake_cpu = &cpus[id];
}

/* CHK-01: a lock is held by the CPU that took it, and by no other, until released */
static void chk01_owner(TEST_STATE)
{
    on_cpu(0);
    assert_false(spin_is_held(&a));
    spin_lock(&a);
    assert_true(spin_is_held(&a));
    on_cpu(1);
    assert_false(spin_is_held(&a)); /* CPU 1 does not hold it */
    on_cpu(0);
    spin_unlock(&a);
    assert_false(spin_is_held(&a));
    assert_false(spin_is_locked(&a));
}

/* CHK-02: each CPU's count of held locks follows nesting, per CPU */
static void chk02_count(TEST_STATE)
{
    on_cpu(0);
    assert_int_equal(spin_held_count(), 0);
    spin_lock(&a);
    spin_lock(&b);
    assert_int_equal(spin_held_count(), 2);
    on_cpu(1);
    assert_int_equal(spin_held_count(), 0);
    on_cpu(0);
    spin_unlock(&b);
    assert_int_equal(spin_held_count(), 1);
    spin_unlock(&a);
    assert_int_equal(spin_held_count(), 0);
}

static void expect_panic(void (*fn)(void), const char *needle)
{
    char why[400];
    if (!fixture_panics(fn, needle, why, sizeof(why))) {
        fail_msg("expected a panic mentioning \"%s\": %s", needle, why);
    }
}

static void lock_twice(void)
{
    on_cpu(0);
    spin_lock(&a);
    spin_lock(&a); /* would spin forever: the check panics first */
}

static void unlock_foreign(void)
{
    on_cpu(0);
    spin_lock(&a);
    on_cpu(1);
    spin_unlock(&a);
}

static void unlock_free(void)
{
    on_cpu(0);
    spin_unlock(&b);
}

/* CHK-10: taking a lock this CPU holds, releasing one it does not hold, panic */
static void chk10_lock_misuse_panics(TEST_STATE)
{
    expect_panic(lock_twice, "spin_lock: CPU 0 already holds lock");
    expect_panic(unlock_foreign, "spin_unlock: CPU 1 releases lock");
    expect_panic(unlock_free, "spin_unlock: CPU 0 releases lock");
}

static struct process proc;

static void send_without_proc_lock(void)
{
    on_cpu(0);
    signal_send_proc_locked(&proc, SIGUSR1, &signal_info_kernel);
}

static void find_without_proc_lock(void)
{
    on_cpu(0);
    task_find_locked(1);
}

/* CHK-11: a function whose contract is "proc_lock held" panics when called without it */
static void chk11_lock_contract_panics(TEST_STATE)
{
    expect_panic(send_without_proc_lock, "assertion failed: spin_is_held(&proc_lock)");
    expect_panic(find_without_proc_lock, "kernel/proc/task.c");
}

static void reprogram_with_irqs_on(void)
{
    on_cpu(0);
    fake_irq_masked = 0;
    timer_reprogram();
}

/* CHK-12: timer_reprogram with IRQs enabled (its contract: masked) panics */
static void chk12_irq_contract_panics(TEST_STATE)
{
    expect_panic(reprogram_with_irqs_on, "assertion failed: !arch_irqs_enabled() (kernel/timer.c");
}

/* ---- CHK-20 on: the modules' own invariants ---- */

/* A constant as the panic message spells it: the condition is printed after macro expansion. */
#define STR_(x) #x
#define STR(x)  STR_(x)

static void page_free_foreign(void)
{
    page_free(PAGE_SIZE); /* never RAM the allocator was given */
}

static void page_free_contig_foreign(void)
{
    page_free_contig(PAGE_SIZE, 2);
}

/* CHK-20: the page allocator takes back only pages of its own RAM (page_free, free_contig) */
static void chk20_page_free_foreign_panics(TEST_STATE)
{
    expect_panic(page_free_foreign, "assertion failed: is_managed_page(pa) (kernel/mm/page.c");
    expect_panic(page_free_contig_foreign,
                 "n && is_managed_page(pa) && is_managed_page(pa + (n - 1) *");
}

static void kmem_free_other_size(void)
{
    on_cpu(0);
    void *p = kmem_alloc(64);
    kmem_free(p, 32); /* another size class than it came from */
}

static void kmem_free_inside_object(void)
{
    on_cpu(0);
    char *p = kmem_alloc(64);
    kmem_free(p + 8, 64); /* not where an object starts */
}

/* CHK-21: kmem_free checks the size names the object's class and the pointer an object */
static void chk21_kmem_free_mismatch_panics(TEST_STATE)
{
    expect_panic(kmem_free_other_size, "assertion failed: s->cls == class_of(size)");
    expect_panic(kmem_free_inside_object, "class_size(s->cls) - 1");
}

static void vm_destroy_with_pages_outside_regions(void)
{
    on_cpu(0);
    static struct vm vm;
    vm_init(&vm);
    vm.pages = 1; /* a page counted that no region holds: a leak */
    vm_destroy(&vm);
}

/* CHK-22: an address space ends with no page counted and no region left */
static void chk22_vm_destroy_leak_panics(TEST_STATE)
{
    expect_panic(vm_destroy_with_pages_outside_regions,
                 "assertion failed: vm->pages == 0 && vm->nregions == 0 (kernel/mm/vm.c");
}

static void kstack_free_bogus(void)
{
    kstack_free(0x1234); /* not a top kstack_alloc returned */
}

/* CHK-23: a kernel stack given back must be one kstack_alloc handed out */
static void chk23_kstack_free_bogus_panics(TEST_STATE)
{
    expect_panic(kstack_free_bogus, "kernel/mm/kstack.c");
}

static struct inode dead_inode, linked_inode;
static struct file dead_file;

static void inode_get_dead(void)
{
    inode_get(&dead_inode); /* refs 0: already freed */
}

static void file_put_dead(void)
{
    file_put(&dead_file); /* the last reference was dropped already */
}

static void inode_put_linked(void)
{
    linked_inode.refs = 1;
    linked_inode.in_tree = true; /* the tree's own reference dropped while still linked */
    inode_put(&linked_inode);
}

/* CHK-24: references are taken only from live inodes and files, never dropped below zero,
 * and an inode still in the tree never loses its last one */
static void chk24_refcounts_panic(TEST_STATE)
{
    expect_panic(inode_get_dead, "assertion failed: refs > 1 (kernel/fs/vfs.c");
    expect_panic(file_put_dead, "assertion failed: refs >= 0 (kernel/fs/vfs.c");
    expect_panic(inode_put_linked, "!ino->in_tree && ino != vfs_root");
}

static void link_without_vfs_lock(void)
{
    on_cpu(0);
    vfs_link_locked(&dead_inode, &linked_inode, "x");
}

static void truncate_without_vfs_lock(void)
{
    on_cpu(0);
    tmpfs_truncate_locked(&dead_inode, 0);
}

/* CHK-25: the tree's _locked helpers panic without vfs_lock */
static void chk25_vfs_lock_contract_panics(TEST_STATE)
{
    expect_panic(link_without_vfs_lock, "spin_is_held(&vfs_lock) (kernel/fs/vfs.c");
    expect_panic(truncate_without_vfs_lock, "spin_is_held(&vfs_lock) (kernel/fs/tmpfs.c");
}

static void pgrp_signal_without_proc_lock(void)
{
    on_cpu(0);
    signal_send_pgrp_locked(5, SIGUSR1, &signal_info_kernel);
}

static void signal_a_zombie(void)
{
    on_cpu(0);
    proc.state = PROC_ZOMBIE;
    spin_lock(&proc_lock);
    signal_send_proc_locked(&proc, SIGUSR1, &signal_info_kernel);
}

/* CHK-26: a group signal needs proc_lock; no signal is sent to a zombie */
static void chk26_signal_contracts_panic(TEST_STATE)
{
    expect_panic(pgrp_signal_without_proc_lock, "spin_is_held(&proc_lock) (kernel/proc/signal.c");
    expect_panic(signal_a_zombie, "assertion failed: p->state == PROC_ALIVE");
}

static struct task some_task;

static void release_running_task(void)
{
    some_task.state = TASK_RUNNABLE; /* still scheduled */
    task_release(&some_task);
}

static void free_listed_process(void)
{
    static struct process p;
    static struct list all = LIST_INIT(all);
    list_init(&p.threads);
    list_init(&p.children);
    list_init(&p.all_link);
    list_add_tail(&all, &p.sibling); /* still its parent's child */
    proc_free(&p);
}

/* CHK-27: a task's memory goes only once it never ran or is dead; a process record only
 * once it is off every list */
static void chk27_lifetimes_panic(TEST_STATE)
{
    expect_panic(release_running_task, "t->state == TASK_WAKING || t->state == TASK_DEAD");
    expect_panic(free_listed_process, "list_empty(&p->sibling)");
}

static void sleep_timer_of_another(void)
{
    on_cpu(0);
    waitq_arm_sleep_timer(&some_task, 100); /* not the task about to sleep */
}

static void prepare_sleep_irqs_on(void)
{
    on_cpu(0);
    fake_irq_masked = 0;
    sched_prepare_sleep(current());
}

/* CHK-28: only the current task arms its sleep timer, and prepares its sleep IRQs masked */
static void chk28_sleep_contracts_panic(TEST_STATE)
{
    expect_panic(sleep_timer_of_another, "assertion failed: t == current() && deadline");
    expect_panic(prepare_sleep_irqs_on, "!arch_irqs_enabled() (kernel/sched.c");
}

static void noop_timer(struct timer *t)
{
}

static void arm_at_zero(void)
{
    on_cpu(0);
    static struct timer tm;
    timer_init(&tm, noop_timer);
    timer_arm(&tm, 0); /* 0 reads as "no timer" in the queue's earliest */
}

static void arm_without_callback(void)
{
    on_cpu(0);
    static struct timer tm;
    timer_init(&tm, 0);
    timer_arm(&tm, 100);
}

/* CHK-29: a timer is armed with a callback and a deadline */
static void chk29_timer_arm_contract_panics(TEST_STATE)
{
    expect_panic(arm_at_zero, "assertion failed: t->fn && deadline (kernel/timer.c");
    expect_panic(arm_without_callback, "assertion failed: t->fn && deadline (kernel/timer.c");
}

static void run_calls_irqs_on(void)
{
    on_cpu(0);
    fake_irq_masked = 0;
    ipi_run_calls();
}

/* CHK-30: requests other CPUs made of this one run with IRQs masked */
static void chk30_ipi_calls_irq_contract_panics(TEST_STATE)
{
    expect_panic(run_calls_irqs_on, "!arch_irqs_enabled() (kernel/cpu/ipi.c");
}

static spinlock_t ranked = SPINLOCK_INIT_RANK(LOCK_LEAF);

static void release_unrecorded(void)
{
    on_cpu(0);
    lockcheck_release(&ranked); /* never acquired: the lock-order stack lost track */
}

/* CHK-31: the lock-order check releases only a lock it recorded */
static void chk31_lockcheck_release_panics(TEST_STATE)
{
    expect_panic(release_unrecorded, "assertion failed: found (kernel/lib/lockcheck.c");
}

static void free_own_trace_ring(void)
{
    on_cpu(0);
    trace_free_cpu(0); /* the ring this CPU writes without a lock */
}

/* CHK-32: a trace ring is freed only from another CPU, once its owner is offline */
static void chk32_trace_free_running_panics(TEST_STATE)
{
    expect_panic(free_own_trace_ring, "kernel/cpu/trace.c");
}

static void read_past_cpus(void)
{
    struct acct_times t;
    acct_cpu_read(MAX_CPUS, &t);
}

static void counters_past_cpus(void)
{
    stats_public(MAX_CPUS);
}

static void route_away_past_cpus(void)
{
    on_cpu(0);
    irq_route_away(ncpus, cpumask_of(0));
}

/* CHK-33: per-CPU tables are indexed by CPUs that exist */
static void chk33_cpu_ranges_panic(TEST_STATE)
{
    expect_panic(read_past_cpus, "assertion failed: cpu < " STR(MAX_CPUS) " (kernel/proc/acct.c");
    expect_panic(counters_past_cpus,
                 "assertion failed: cpu < " STR(MAX_CPUS) " (kernel/cpu/stats.c");
    expect_panic(route_away_past_cpus, "assertion failed: cpu < ncpus (kernel/cpu/irq.c");
}

static void pid_map_uninitialised(void)
{
    static struct pid_map m; /* pid_map_init never ran: 0 would be handed out */
    pid_map_alloc(&m);
}

/* CHK-34: an id map is initialised before use, so 0 is never an id */
static void chk34_pid_map_init_panics(TEST_STATE)
{
    expect_panic(pid_map_uninitialised, "assertion failed: m->used[0] & 1 (kernel/proc/pid.c");
}

static void load_unchecked_image(void)
{
    on_cpu(0);
    static struct vm vm;
    static const char bytes[64];
    const struct elf_file file = {.size = sizeof(bytes), .mem = bytes};
    struct elf_image img = {.nseg = 1};
    img.seg[0] = (struct elf_segment){.vaddr = 0x400000, .memsz = 16, .filesz = 32};
    vm_init(&vm);
    elf_load(&vm, &file, &img); /* more file bytes than memory: elf_check refuses that */
}

/* CHK-35: elf_load loads only what elf_check accepted */
static void chk35_elf_load_unchecked_panics(TEST_STATE)
{
    expect_panic(load_unchecked_image,
                 "s->filesz <= s->memsz && s->vaddr >= " STR(PAGE_SIZE) " (kernel/proc/elf.c");
}

static void restart_without_erestartsys(void)
{
    static struct trap_frame f;
    kernel_syscall_exit_restart(&f, 0);
}

/* CHK-36: the restart exit is taken only for a call that returned -ERESTARTSYS */
static void chk36_restart_exit_contract_panics(TEST_STATE)
{
    expect_panic(restart_without_erestartsys,
                 "assertion failed: r == -" STR(ERESTARTSYS) " (kernel/entry.c");
}

static int setup(void **state)
{
    /* pages for the allocator and CPU 0 as the running CPU, in the parent: every child that
     * breaks a contract inherits them */
    return fixture_pages_and_cpu0(256) ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(chk01_owner),
        cmocka_unit_test(chk02_count),
        cmocka_unit_test(chk10_lock_misuse_panics),
        cmocka_unit_test(chk11_lock_contract_panics),
        cmocka_unit_test(chk12_irq_contract_panics),
        cmocka_unit_test(chk20_page_free_foreign_panics),
        cmocka_unit_test(chk21_kmem_free_mismatch_panics),
        cmocka_unit_test(chk22_vm_destroy_leak_panics),
        cmocka_unit_test(chk23_kstack_free_bogus_panics),
        cmocka_unit_test(chk24_refcounts_panic),
        cmocka_unit_test(chk25_vfs_lock_contract_panics),
        cmocka_unit_test(chk26_signal_contracts_panic),
        cmocka_unit_test(chk27_lifetimes_panic),
        cmocka_unit_test(chk28_sleep_contracts_panic),
        cmocka_unit_test(chk29_timer_arm_contract_panics),
        cmocka_unit_test(chk30_ipi_calls_irq_contract_panics),
        cmocka_unit_test(chk31_lockcheck_release_panics),
        cmocka_unit_test(chk32_trace_free_running_panics),
        cmocka_unit_test(chk33_cpu_ranges_panic),
        cmocka_unit_test(chk34_pid_map_init_panics),
        cmocka_unit_test(chk35_elf_load_unchecked_panics),
        cmocka_unit_test(chk36_restart_exit_contract_panics),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
