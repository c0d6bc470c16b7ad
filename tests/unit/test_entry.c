/* SPDX-License-Identifier: MIT */
/*
 * test_entry.c — host unit tests of the system-call fast path's decisions (kernel/entry.c)
 * and of tick-free accounting (kernel/proc/acct.c) against the fake arch.
 *
 * ENT-0n: acct.c's buckets: every counter cycle is charged exactly once, to user, system or
 * idle time of the CPU and to the task that ran, whatever order the transitions come in, and a
 * reader sees the interval in progress.  ENT-1n: kernel_syscall_enter/kernel_syscall_exit:
 * one counter per call, which calls the fast path runs, and every reason that sends a call
 * down the slow path.
 *
 * CPU 0 is the running CPU (fake_cpu), with one user task `t` of process `p` as its current
 * task; the counter (fake_counter) is set by each test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "arch.h"
#include "kernel/acct.h"
#include "kernel/cpu.h"
#include "kernel/entry.h"
#include "kernel/stats.h"
#include "kernel/syscall.h"
#include "kernel/task.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_syscall.h"
#include "fake.h"
#include "unit.h"

static struct task t, idle;
static struct process p;
static struct trap_frame frame;

static int setup(TEST_STATE)
{
    memset(&t, 0, sizeof(t));
    memset(&idle, 0, sizeof(idle));
    memset(&p, 0, sizeof(p));
    t.proc = &p;
    idle.is_idle = true;
    cpus[0].id = 0;
    cpus[0].slow_work = 0;
    fake_cpu = &cpus[0];
    ncpus = 1;
    stats_init_cpu(0);
    fake_counter = 1000;
    acct_init_cpu(0);          /* idle since 1000 */
    cpus[0].current_task = &t; /* what the exit check reads */
    memset(&frame, 0, sizeof(frame));
    t.frame = &frame;             /* where the exit puts the result */
    fake_irq_masked = 1;          /* the entry paths run with IRQs masked */
    acct_switch(&idle, &t, 1000); /* t runs from 1000, in the kernel */
    return 0;
}

static void times(uint64_t *user, uint64_t *sys, uint64_t *idle_out)
{
    struct acct_times a;
    acct_cpu_read(0, &a);
    *user = a.user_cycles;
    *sys = a.sys_cycles;
    *idle_out = a.idle_cycles;
}

/* ENT-01: a run of transitions charges each interval to its bucket and the task, exactly */
static void ent01_buckets_exact(TEST_STATE)
{
    uint64_t u, s, i, tu, ts;
    fake_counter = 1100;
    acct_exit_kernel(); /* sys 1000..1100 */
    fake_counter = 1350;
    acct_enter_kernel(); /* user 1100..1350 */
    fake_counter = 1400;
    acct_exit_kernel(); /* sys 1350..1400 */
    fake_counter = 2000;
    times(&u, &s, &i);
    assert_int_equal(u, 250 + 600); /* 1100..1350, and 1400..2000 in progress */
    assert_int_equal(s, 150);
    assert_int_equal(i, 0);
    acct_task_read(&t, &tu, &ts);
    assert_int_equal(tu, 850);
    assert_int_equal(ts, 150);
    acct_enter_kernel(); /* user until 2000 */
    fake_counter = 2100;
    acct_switch(&t, &idle, 2100); /* sys 2000..2100, then idle */
    cpus[0].current_task = &idle;
    fake_counter = 2500;
    times(&u, &s, &i);
    assert_int_equal(u, 850);
    assert_int_equal(s, 250);
    assert_int_equal(i, 400);
    assert_int_equal(u + s + i, 2500 - 1000); /* every cycle since t's start, once */
    acct_task_read(&t, &tu, &ts);             /* not running: its folded totals */
    assert_int_equal(tu, 850);
    assert_int_equal(ts, 250);
}

/* ENT-02: a task switched in later owns only what its CPU did while it ran */
static void ent02_task_owns_its_share(TEST_STATE)
{
    static struct task t2;
    uint64_t tu, ts;
    memset(&t2, 0, sizeof(t2));
    t2.proc = &p;
    fake_counter = 1200;
    acct_exit_kernel(); /* t: sys 1000..1200 */
    fake_counter = 1500;
    acct_enter_kernel();        /* t: user 1200..1500 */
    acct_switch(&t, &t2, 1600); /* t: sys 1500..1600 */
    cpus[0].current_task = &t2;
    fake_counter = 1700;
    acct_exit_kernel(); /* t2: sys 1600..1700 */
    fake_counter = 1900;
    acct_task_read(&t2, &tu, &ts);
    assert_int_equal(tu, 200); /* in progress since 1700 */
    assert_int_equal(ts, 100);
    acct_task_read(&t, &tu, &ts);
    assert_int_equal(tu, 300);
    assert_int_equal(ts, 300);
}

/* ENT-03: the reader names the bucket in progress */
static void ent03_mode_in_progress(TEST_STATE)
{
    struct acct_times a;
    acct_cpu_read(0, &a);
    assert_int_equal(a.mode, ACCT_SYS);
    fake_counter = 1010;
    acct_exit_kernel();
    acct_cpu_read(0, &a);
    assert_int_equal(a.mode, ACCT_USER);
    acct_enter_kernel();
    acct_switch(&t, &idle, 1020);
    acct_cpu_read(0, &a);
    assert_int_equal(a.mode, ACCT_IDLE);
}

/* ENT-10: getpid goes the fast way: one syscall counted, its entry charged as user time */
static void ent10_fast_call(TEST_STATE)
{
    uint64_t u, s, i, before = stats_syscalls(0);
    fake_counter = 1100;
    acct_exit_kernel(); /* in user space since 1100 */
    frame.sysno = SYS_getpid;
    fake_counter = 1300;
    syscall_fn fn = kernel_syscall_enter(frame.sysno);
    assert_non_null(fn);
    assert_int_equal(stats_syscalls(0), before + 1);
    assert_int_equal(stats_exceptions(0, EXC_SYNC), before + 1); /* totals include it */
    fake_counter = 1340;
    assert_true(kernel_syscall_exit());
    fake_counter = 1400;
    times(&u, &s, &i);
    assert_int_equal(u, 200 + 60); /* 1100..1300 and 1340..1400 */
    assert_int_equal(s, 100 + 40); /* 1000..1100 and the call, 1300..1340 */
}

/* ENT-11: calls the fast path does not run: unknown, zerotick's, and the FULL ones (those that
 * read or rewrite the user registers beyond the arguments, or leave a mask to restore) */
static void ent11_full_path_calls(TEST_STATE)
{
    static const uint64_t nrs[] = {
        SYS_clone,         SYS_rt_sigreturn, SYS_execve,   SYS_sigaltstack,
        SYS_rt_sigsuspend, SYS_ppoll,        SYS_pselect6, 999,
        SYSCALL_FAST_NR,   SYS_zt_meminfo,   SYS_zt_spawn, ~0ull};
    for (size_t k = 0; k < sizeof(nrs) / sizeof(nrs[0]); k++) {
        uint64_t before = stats_syscalls(0);
        frame.sysno = nrs[k];
        assert_null(kernel_syscall_enter(frame.sysno));
        assert_int_equal(stats_syscalls(0), before + 1); /* counted anyway, once */
    }
    assert_null(syscall_fast_table[SYS_clone]);
    assert_null(syscall_fast_table[SYS_rt_sigreturn]);
    assert_null(syscall_fast_table[SYS_execve]);
    assert_non_null(syscall_fast_table[SYS_futex]);
}

/* ENT-12: every byte of slow_work sends the entry down the slow path */
static void ent12_slow_work_entry(TEST_STATE)
{
    frame.sysno = SYS_getpid;
    for (size_t b = 0; b < sizeof(cpus[0].slow_work); b++) {
        cpus[0].slow_work = 0;
        ((unsigned char *)&cpus[0].slow_work)[b] = 1;
        assert_null(kernel_syscall_enter(frame.sysno));
    }
    cpus[0].slow_work = 0;
    cpus[0].need_resched = true;
    assert_null(kernel_syscall_enter(frame.sysno));
    cpus[0].need_resched = false;
    cpus[0].isol_owned = true;
    assert_null(kernel_syscall_enter(frame.sysno));
    cpus[0].isol_owned = false;
    cpus[0].tracing = true;
    assert_null(kernel_syscall_enter(frame.sysno));
    cpus[0].tracing = false;
    assert_non_null(kernel_syscall_enter(frame.sysno));
}

/* ENT-13: the exit goes slow for pending work, a signal (even blocked) or a dying process;
 * a dataplane CPU's role alone does not send it there (test_fastexit.c: only something to
 * quiesce does) */
static void ent13_slow_exit(TEST_STATE)
{
    assert_true(kernel_syscall_exit());
    acct_enter_kernel();
    cpus[0].need_resched = true;
    assert_false(kernel_syscall_exit());
    cpus[0].need_resched = false;
    cpus[0].quiesce = true;
    assert_false(kernel_syscall_exit());
    cpus[0].quiesce = false;
    cpus[0].isol_owned = true;
    assert_false(kernel_syscall_exit());
    cpus[0].isol_owned = false;
    acct_enter_kernel();
    cpus[0].dataplane = true;
    assert_true(kernel_syscall_exit());
    cpus[0].dataplane = false;
    acct_enter_kernel();
    t.sig_pending = 1ull << (SIGUSR1 - 1);
    t.sig_blocked = t.sig_pending;
    assert_false(kernel_syscall_exit());
    t.sig_pending = 0;
    p.sig_pending = 1ull << (SIGTERM - 1);
    assert_false(kernel_syscall_exit());
    p.sig_pending = 0;
    p.exiting = true;
    assert_false(kernel_syscall_exit());
    p.exiting = false;
    assert_true(kernel_syscall_exit());
}

/* ENT-14: a FAST call that returned -ERESTARTSYS (a signal interrupted it; the arch sends it to
 * kernel_syscall_exit_restart) is restarted with its first argument, or fails with EINTR,
 * even when the signal is gone by then (another thread took it): never -512 to user space */
static void ent14_restart_after_fast_call(TEST_STATE)
{
    frame.arg[0] = 7; /* the call's first argument, still in the frame */
    frame.pc = 0x1004;
    kernel_syscall_exit_restart(&frame, -ERESTARTSYS); /* no signal: the call starts again */
    assert_false(t.sys_restart);
    assert_int_equal(frame.pc, 0x1000);
    assert_int_equal(frame.arg[0], 7);
    assert_true(kernel_syscall_exit()); /* the next call is fast again */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(ent01_buckets_exact, setup),
        cmocka_unit_test_setup(ent02_task_owns_its_share, setup),
        cmocka_unit_test_setup(ent03_mode_in_progress, setup),
        cmocka_unit_test_setup(ent10_fast_call, setup),
        cmocka_unit_test_setup(ent11_full_path_calls, setup),
        cmocka_unit_test_setup(ent12_slow_work_entry, setup),
        cmocka_unit_test_setup(ent13_slow_exit, setup),
        cmocka_unit_test_setup(ent14_restart_after_fast_call, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
