/* SPDX-License-Identifier: MIT */
/*
 * test_signal.c — host unit tests of what a signal carries (kernel/proc/signal.c): the
 * sig_info kept while a signal is pending, and Linux's siginfo built from it for a handler.
 *
 * SIG-10: the siginfo layouts (kill and tkill: si_code, si_pid, si_uid 0; sigqueue:
 * si_value at 24; SIGCHLD: si_status at 24; a fault: si_addr at 16) with every other byte 0
 * (the frame used to leave offsets 16-127 as whatever the user stack held: "unexpected
 * signal 10 from 0"); SIG-11: a signal sent while it is pending keeps the first sender's
 * info, a thread's pending signal is taken before the process's, and taking one clears it;
 * SIG-12: a siginfo from user space (rt_sigqueueinfo) is read back with the same layout;
 * SIG-17: a send wakes a waiting thread only for a signal it will take.
 * Tasks and processes are plain structures here: no CPU runs them, so a send only records.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/signal.h"
#include "kernel/task.h"
#include "fake.h"
#include "fixture.h"

#define TEST_STATE void **state __attribute__((unused))
#define SIGURG     23 /* ignored by default */
#define SIGWINCH   28
#define SIGBIT(s)  (1ull << ((s)-1))

static struct process sender_p, target_p;
static struct task sender, target;
static struct sig_info sender_infos[ZT_NSIG], target_infos[ZT_NSIG], proc_infos[ZT_NSIG];
static struct task *idle;

static int group_setup(void **state)
{
    if (!fixture_pages_and_cpu0(16)) {
        return -1;
    }
    idle = cpus[0].current_task;
    return 0;
}

/* The sender (pid 42) runs on CPU 0; the target (pid 77, tid 78) sleeps nowhere. */
static int test_setup(void **state)
{
    memset(&sender_p, 0, sizeof(sender_p));
    memset(&target_p, 0, sizeof(target_p));
    memset(&sender, 0, sizeof(sender));
    memset(&target, 0, sizeof(target));
    sender_p.pid = 42;
    sender.tid = 42;
    sender.proc = &sender_p;
    sender.sig_infos = sender_infos;
    target_p.pid = 77;
    target_p.sig_infos = proc_infos;
    target.tid = 78;
    target.proc = &target_p;
    target.sig_infos = target_infos;
    target.cpu = 0; /* not running: a send finds no CPU to kick */
    list_init(&target_p.threads);
    list_add_tail(&target_p.threads, &target.thread_link);
    cpus[0].current_task = &sender;
    return 0;
}

static int test_teardown(void **state)
{
    cpus[0].current_task = idle;
    return 0;
}

/* Take t's next signal with its info (as signal_deliver does). */
static int take(struct task *t, struct sig_info *info)
{
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    int sig = signal_dequeue_locked(t, info);
    spin_unlock_irqrestore(&proc_lock, flags);
    return sig;
}

static void send_task(struct task *t, int sig, const struct sig_info *info)
{
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    assert_int_equal(signal_send_task_locked(t, sig, info), 0);
    spin_unlock_irqrestore(&proc_lock, flags);
}

static void send_proc(struct process *p, int sig, const struct sig_info *info)
{
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    assert_int_equal(signal_send_proc_locked(p, sig, info), 0);
    spin_unlock_irqrestore(&proc_lock, flags);
}

/* Every 32-bit word of the siginfo but those named (index, value) pairs is 0. */
static void expect_words(const int32_t *w, int n, const int32_t *pairs)
{
    for (int i = 0; i < SIGINFO_BYTES / 4; i++) {
        int32_t want = 0;
        for (int k = 0; k < n; k++) {
            if (pairs[2 * k] == i) {
                want = pairs[2 * k + 1];
            }
        }
        if (w[i] != want) {
            fail_msg("siginfo word %d (offset %d) is %d, want %d", i, 4 * i, w[i], want);
        }
    }
}

/* SIG-10: the layouts of kill, tkill, sigqueue, SIGCHLD and a fault, nothing else set */
static void sig10_siginfo_layouts(TEST_STATE)
{
    int32_t w[SIGINFO_BYTES / 4];
    struct sig_info kill = signal_info_from_caller(SI_USER);
    assert_int_equal(kill.pid, 42);
    signal_siginfo(SIGUSR1, &kill, w);
    expect_words(w, 2, (const int32_t[]){0, SIGUSR1, 4, 42});
    struct sig_info tkill = signal_info_from_caller(SI_TKILL);
    signal_siginfo(SIGUSR2, &tkill, w);
    expect_words(w, 3, (const int32_t[]){0, SIGUSR2, 2, SI_TKILL, 4, 42});
    struct sig_info queue = {SI_QUEUE, 42, 0x1122334455667788ull};
    signal_siginfo(40, &queue, w);
    expect_words(w, 5, (const int32_t[]){0, 40, 2, SI_QUEUE, 4, 42, 6, 0x55667788, 7, 0x11223344});
    struct sig_info chld = {CLD_EXITED, 99, 7};
    signal_siginfo(SIGCHLD, &chld, w);
    expect_words(w, 4, (const int32_t[]){0, SIGCHLD, 2, CLD_EXITED, 4, 99, 6, 7});
    struct sig_info fault = {SEGV_ACCERR, 0, 0x0000004000001008ull};
    signal_siginfo(SIGSEGV, &fault, w);
    expect_words(w, 4, (const int32_t[]){0, SIGSEGV, 2, SEGV_ACCERR, 4, 0x1008, 5, 0x40});
    signal_siginfo(SIGSEGV, &signal_info_kernel, w); /* SI_KERNEL: not a fault's layout */
    expect_words(w, 2, (const int32_t[]){0, SIGSEGV, 2, SI_KERNEL});
}

/* SIG-11: merged signals keep the first sender's info; the thread's own first; taken once */
static void sig11_pending_info(TEST_STATE)
{
    struct sig_info first = {SI_TKILL, 42, 0}, second = {SI_QUEUE, 5, 9}, proc = {SI_USER, 7, 0};
    struct sig_info got;
    send_task(&target, SIGUSR1, &first);
    send_task(&target, SIGUSR1, &second); /* merged: the first one's info stays */
    send_proc(&target_p, SIGUSR1, &proc);
    assert_int_equal(take(&target, &got), SIGUSR1);
    assert_memory_equal(&got, &first, sizeof(got));
    assert_int_equal(take(&target, &got), SIGUSR1); /* then the process's */
    assert_memory_equal(&got, &proc, sizeof(got));
    assert_int_equal(take(&target, &got), 0);
    send_task(&target, SIGUSR1, &second); /* taken: a new send carries its own */
    assert_int_equal(take(&target, &got), SIGUSR1);
    assert_memory_equal(&got, &second, sizeof(got));
    assert_int_equal(target.sig_pending | target_p.sig_pending, 0);
}

/* SIG-12: a siginfo from user space is read with the layout its si_code names */
static void sig12_siginfo_from_user(TEST_STATE)
{
    int32_t raw[SIGINFO_BYTES / 4], w[SIGINFO_BYTES / 4];
    memset(raw, 0x5a, sizeof(raw)); /* whatever else the caller left there is not kept */
    raw[2] = SI_QUEUE;
    raw[4] = 1234;
    raw[6] = 0x55667788;
    raw[7] = 0x11223344;
    struct sig_info info = signal_info_from_siginfo(SIGUSR1, raw);
    assert_int_equal(info.code, SI_QUEUE);
    assert_int_equal(info.pid, 1234);
    assert_int_equal(info.value, 0x1122334455667788ull);
    signal_siginfo(SIGUSR1, &info, w);
    expect_words(w, 5,
                 (const int32_t[]){0, SIGUSR1, 2, SI_QUEUE, 4, 1234, 6, 0x55667788, 7, 0x11223344});
    raw[2] = SEGV_MAPERR; /* to itself a caller may claim a fault: si_addr at 16 */
    info = signal_info_from_siginfo(SIGSEGV, raw);
    assert_int_equal(info.value, ((uint64_t)0x5a5a5a5a << 32) | 1234u);
}

static struct waitq wq;

/* The target waits on wq as waitq_sleep_locked leaves a sleeper (its state stays RUNNABLE
 * here, so a wakeup only takes it off the queue with its reason: no CPU runs it). */
static void wait_on_wq(struct task *t)
{
    waitq_init(&wq);
    unsigned long flags = spin_lock_irqsave(&wq.lock);
    list_add_tail(&wq.tasks, &t->wait_link);
    t->waiting_on = &wq;
    t->wake_reason = 0;
    spin_unlock_irqrestore(&wq.lock, flags);
}

static void expect_woken(struct task *t, bool woken)
{
    if (woken) {
        assert_null(t->waiting_on);
        assert_int_equal(t->wake_reason, -EINTR);
    } else {
        assert_ptr_equal(t->waiting_on, &wq);
        assert_false(list_empty(&wq.tasks));
    }
}

/* SIG-17: a send wakes a waiting thread only for a signal it will take (Linux's rule): not one
 * it blocks (to the thread or to its process), not one whose action is to ignore it (SIGURG
 * by default, SIGWINCH by SIG_IGN); it does for one it takes, for exit_group and for another
 * thread's execve.  The signals stay pending.  Before: every send ended the wait with -EINTR
 * (issue 20: an execve waiting for its other threads gave up, and the process went on without
 * them). */
static void sig17_only_a_signal_taken_wakes(TEST_STATE)
{
    struct sig_info info = {SI_USER, 42, 0};
    target_p.sigactions[SIGUSR1 - 1].handler = 0x400000; /* a handler */
    target_p.sigactions[SIGWINCH - 1].handler = SIG_IGN;
    target.sig_blocked = SIGBIT(SIGUSR1);
    wait_on_wq(&target);
    send_task(&target, SIGUSR1, &info);
    expect_woken(&target, false);
    send_proc(&target_p, SIGUSR1, &info);
    expect_woken(&target, false);
    send_task(&target, SIGURG, &info);
    send_proc(&target_p, SIGWINCH, &info);
    expect_woken(&target, false);
    assert_true(signal_pending(&target)); /* SIGURG and SIGWINCH: pending, dropped later */
    assert_false(signal_wakes(&target));
    assert_int_equal(target.sig_pending, SIGBIT(SIGUSR1) | SIGBIT(SIGURG));

    target.sig_blocked = 0; /* unblocked: the pending SIGUSR1 would be taken; a send wakes */
    assert_true(signal_wakes(&target));
    send_task(&target, SIGUSR1, &info);
    expect_woken(&target, true);

    target.sig_pending = target_p.sig_pending = 0;
    wait_on_wq(&target);
    target.exec_kill = true; /* another thread's execve */
    signal_kick(&target);
    expect_woken(&target, true);
    target.exec_kill = false;
    wait_on_wq(&target);
    target_p.exiting = true; /* exit_group */
    signal_kick(&target);
    expect_woken(&target, true);
}

#define T_(f) cmocka_unit_test_setup_teardown(f, test_setup, test_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T_(sig10_siginfo_layouts),
        T_(sig11_pending_info),
        T_(sig12_siginfo_from_user),
        T_(sig17_only_a_signal_taken_wakes),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
