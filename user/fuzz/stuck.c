/* SPDX-License-Identifier: MIT */
/*
 * stuck.c — what the runner prints about a stuck life before it kills it: what the kernel
 * says about every CPU, twice, one second apart (what moves and what does not), the life's
 * threads and every task that runs or waits for a CPU, and the end of every CPU's trace
 * ring as it was when the life was found stuck; for each of the life's threads, the system
 * call it sleeps in and its signal masks, from /proc.  Lines are shorter than the console's
 * 256-byte chunk, so other output cannot cut them.  Runner only (it reads the trace rings
 * with ZT_TRACE_CLEAR: they are read once).
 */
#include "fuzz.h"

#include <stdio.h>
#include <string.h>

#define NS_S        1000000000ull
#define TRACE_SHOWN 48 /* trace events shown per CPU */

static struct zt_task_info tasks[512];
static struct zt_cpu_info cpuinfo[64];
static struct zt_trace_event trace_buf[128], trace_last[64][TRACE_SHOWN];
static long trace_kept[64];

/* Each CPU as the kernel sees it now: what runs there, how many tasks want it, and the
 * counters that show whether it moves (switches, interrupts, time by kind). */
static void show_cpus(const char *when)
{
    long n = zt_cpus(cpuinfo, 64);
    for (long c = 0; c < n && c < 64; c++) {
        const struct zt_cpu_info *ci = &cpuinfo[c];
        printf("fuzz: stuck %s: cpu %u runs %d (%s), %u runnable, %llu switches, %llu irqs, "
               "%llu syscalls, user %llu sys %llu idle %llu ms\n",
               when, ci->cpu, ci->cur_tid, ci->cur_name, ci->nr_running,
               (unsigned long long)ci->ctx_switches, (unsigned long long)ci->exc_irq,
               (unsigned long long)ci->syscalls, (unsigned long long)(ci->user_ns / 1000000),
               (unsigned long long)(ci->sys_ns / 1000000),
               (unsigned long long)(ci->idle_ns / 1000000));
    }
}

/* /proc/PID/task/TID/NAME into buf ("" if unreadable). */
static void read_task_file(long pid, int tid, const char *name, char *buf, size_t n)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%ld/task/%d/%s", pid, tid, name);
    fz_read_file(path, buf, n);
}

/* What a thread of the stuck life waits in (/proc's syscall file: the call's number and
 * arguments, SP and PC) and its signals (status's SigPnd to SigCgt lines, one line). */
static void show_thread_detail(long pid, int tid)
{
    static char status[4096];
    char sc[200], sigs[200] = "";
    read_task_file(pid, tid, "syscall", sc, sizeof(sc));
    read_task_file(pid, tid, "status", status, sizeof(status));
    size_t at = 0;
    for (char *line = strstr(status, "\nSigPnd:"); line && *line && at < sizeof(sigs) - 40;) {
        char *end = strchr(line + 1, '\n');
        if (!end || (strncmp(line + 1, "Sig", 3) && strncmp(line + 1, "ShdPnd", 6))) {
            break;
        }
        at += (size_t)snprintf(sigs + at, sizeof(sigs) - at, " %.*s", (int)(end - line - 1),
                               line + 1);
        line = end;
    }
    for (char *c = sc; *c; c++) {
        *c = *c == '\n' ? 0 : *c;
    }
    for (char *c = sigs; *c; c++) {
        *c = *c == '\t' ? ' ' : *c;
    }
    printf("fuzz: stuck: task %ld.%d syscall %s;%s\n", pid, tid, sc[0] ? sc : "?", sigs);
}

/* The threads of process `pid` (none: it has exited, and has not been torn down) and every
 * task that runs or waits for a CPU, as ps shows them. */
static void show_tasks(long pid)
{
    long n = zt_tasks(tasks, 512), mine = 0;
    for (long i = 0; i < n && i < 512; i++) {
        const struct zt_task_info *t = &tasks[i];
        mine += t->pid == pid;
        if (t->pid == pid || t->state == 'R' || t->state == 'r') {
            char cpus[64];
            zt_cpulist_format(&t->affinity, cpus, sizeof(cpus));
            printf("fuzz: stuck: task %d.%d (%s, parent %d) state %c on cpu %d affinity %s "
                   "user %llu sys %llu us\n",
                   t->pid, t->tid, t->name, t->ppid, t->state, t->cpu, cpus,
                   (unsigned long long)(t->user_ns / 1000), (unsigned long long)(t->sys_ns / 1000));
            if (t->pid == pid) {
                show_thread_detail(pid, t->tid);
            }
        }
    }
    if (!mine) {
        printf("fuzz: stuck: process %ld has no thread left and is not a zombie yet\n", pid);
    }
}

#define TYPE_NAME_(n, name, str) [n] = str,
static const char *const trace_types[] = {ZT_TRACE_TYPES(TYPE_NAME_)}; /* uapi/zt_events.h */
#undef TYPE_NAME_

/* Keep the last TRACE_SHOWN events of CPU `cpu`'s trace ring before `cutoff` (the ring is
 * drained: the events of this reading itself come after the cutoff and end it). */
static void read_trace(int cpu, uint64_t cutoff)
{
    long got, kept = 0;
    bool past = false;
    while (!past && (got = zt_syscall4(SYS_zt_trace, cpu, trace_buf, 128, ZT_TRACE_CLEAR)) > 0) {
        for (long i = 0; i < got && !past; i++) {
            past = trace_buf[i].ts >= cutoff;
            if (!past) {
                trace_last[cpu][kept++ % TRACE_SHOWN] = trace_buf[i];
            }
        }
    }
    trace_kept[cpu] = kept;
}

static void show_trace(int cpu)
{
    long kept = trace_kept[cpu];
    for (long i = kept > TRACE_SHOWN ? kept - TRACE_SHOWN : 0; i < kept; i++) {
        const struct zt_trace_event *ev = &trace_last[cpu][i % TRACE_SHOWN];
        const char *type =
            ev->type < sizeof(trace_types) / sizeof(trace_types[0]) && trace_types[ev->type]
                ? trace_types[ev->type]
                : "?";
        printf("fuzz: stuck: trace cpu %u %llu %s %llu %llu\n", ev->cpu, (unsigned long long)ev->ts,
               type, (unsigned long long)ev->a, (unsigned long long)ev->b);
    }
}

/* What the kernel says about a stuck life, before it is killed: every CPU twice, 1 s apart
 * (what moves and what does not), the life's threads and its CPU's other tasks, and the end
 * of every CPU's trace before the life was found stuck. */
void fz_stuck_report(long pid)
{
    uint64_t cutoff = zt_counter();
    int n = zt_nr_cpus();
    for (int c = 0; c < n && c < 64; c++) {
        read_trace(c, cutoff);
    }
    show_cpus("now");
    show_tasks(pid);
    fflush(stdout);
    zt_sleep_ns(NS_S);
    show_cpus("1 s later");
    show_tasks(pid);
    for (int c = 0; c < n && c < 64; c++) {
        show_trace(c);
        fflush(stdout);
    }
}
