/* SPDX-License-Identifier: MIT */
/*
 * zt_clock.h — the clock ids and what each one reads: the one statement of the rules, shared
 * by the system calls (kernel/sys/time.c) and any user-space reader such as a vDSO's
 * clock_gettime, so that the two cannot disagree.  Plain C, no includes but the error
 * numbers: usable from the kernel, picolibc, glibc and freestanding code.
 *
 * The numbers and their meaning are Linux's (include/uapi/linux/time.h; the table of
 * kernel/time/posix-timers.c, kernel/time/posix-cpu-timers.c, kernel/time/alarmtimer.c):
 *
 *   id  name                what it reads here                        clock_nanosleep
 *    0  REALTIME            wall time: the RTC at boot + the counter  yes
 *    1  MONOTONIC           the counter (CNTVCT_EL0) as time          yes
 *    2  PROCESS_CPUTIME_ID  the calling process's CPU time            yes (until it has used it)
 *    3  THREAD_CPUTIME_ID   the calling thread's CPU time             -EINVAL
 *    4  MONOTONIC_RAW       = MONOTONIC (nothing adjusts the rate)    -EOPNOTSUPP
 *    5  REALTIME_COARSE     = REALTIME (reading it costs the same)    -EOPNOTSUPP
 *    6  MONOTONIC_COARSE    = MONOTONIC                               -EOPNOTSUPP
 *    7  BOOTTIME            = MONOTONIC (the machine never suspends)  yes
 *    8  REALTIME_ALARM      -EINVAL: no RTC that can wake the machine -EOPNOTSUPP
 *    9  BOOTTIME_ALARM      -EINVAL, as 8                             -EOPNOTSUPP
 *   10  (SGI_CYCLE, gone)   -EINVAL                                   -EINVAL
 *   11  TAI                 = REALTIME (TAI offset 0: Linux's default until adjtimex sets one)
 *   12.. and 16..           -EINVAL                                   -EINVAL
 *   < 0 CPU-time clock ids (clock_getcpuclockid, pthread_getcpuclockid), below; those whose
 *       low three bits are 3 name a clock behind a file descriptor (PTP): none exists here,
 *       so -EINVAL, and -EOPNOTSUPP from clock_nanosleep.
 *
 * Wall time is the counter's time plus one offset fixed at boot (seconds read from QEMU
 * virt's PL031 real-time clock, minus the counter's time at that read); without an RTC the
 * offset is 0 and wall time starts in 1970, as it did before.  Nothing sets the clocks
 * (clock_settime and adjtimex are not implemented), so none ever jumps.  Every clock
 * resolves to one counter cycle (16 ns at 62.5 MHz), CPU-time clocks too: accounting is done
 * with the same counter at every kernel entry and exit (kernel/proc/acct.c).
 *
 * CPU-time clock ids (Linux's include/linux/posix-timers.h encoding): bits 0-1 the kind
 * (PROF: user + system time, VIRT: user time, SCHED: time on the CPU, here PROF's), bit 2
 * set for a thread's clock, the bits above it the complement of the pid or tid (0: the
 * caller).  A thread's clock may be read only by a thread of its process; a process's by
 * anyone.  clock_nanosleep on a thread's own clock is -EINVAL (Linux's rule).
 */
#ifndef ZT_UAPI_CLOCK_H
#define ZT_UAPI_CLOCK_H

#include "zt_errno.h"

#define ZT_CLOCK_REALTIME           0
#define ZT_CLOCK_MONOTONIC          1
#define ZT_CLOCK_PROCESS_CPUTIME_ID 2
#define ZT_CLOCK_THREAD_CPUTIME_ID  3
#define ZT_CLOCK_MONOTONIC_RAW      4
#define ZT_CLOCK_REALTIME_COARSE    5
#define ZT_CLOCK_MONOTONIC_COARSE   6
#define ZT_CLOCK_BOOTTIME           7
#define ZT_CLOCK_REALTIME_ALARM     8
#define ZT_CLOCK_BOOTTIME_ALARM     9
#define ZT_CLOCK_SGI_CYCLE          10
#define ZT_CLOCK_TAI                11
#define ZT_MAX_CLOCKS               16
#define ZT_TIMER_ABSTIME            1

/* The names C programs use, where their C library has not defined them already (glibc's
 * values are these; zt.h removes picolibc's, which differ). */
#ifndef CLOCK_REALTIME
#define CLOCK_REALTIME ZT_CLOCK_REALTIME
#endif
#ifndef CLOCK_MONOTONIC
#define CLOCK_MONOTONIC ZT_CLOCK_MONOTONIC
#endif
#ifndef CLOCK_PROCESS_CPUTIME_ID
#define CLOCK_PROCESS_CPUTIME_ID ZT_CLOCK_PROCESS_CPUTIME_ID
#endif
#ifndef CLOCK_THREAD_CPUTIME_ID
#define CLOCK_THREAD_CPUTIME_ID ZT_CLOCK_THREAD_CPUTIME_ID
#endif
#ifndef CLOCK_MONOTONIC_RAW
#define CLOCK_MONOTONIC_RAW ZT_CLOCK_MONOTONIC_RAW
#endif
#ifndef CLOCK_REALTIME_COARSE
#define CLOCK_REALTIME_COARSE ZT_CLOCK_REALTIME_COARSE
#endif
#ifndef CLOCK_MONOTONIC_COARSE
#define CLOCK_MONOTONIC_COARSE ZT_CLOCK_MONOTONIC_COARSE
#endif
#ifndef CLOCK_BOOTTIME
#define CLOCK_BOOTTIME ZT_CLOCK_BOOTTIME
#endif
#ifndef TIMER_ABSTIME
#define TIMER_ABSTIME ZT_TIMER_ABSTIME
#endif

/* CPU-time clock ids. */
#define ZT_CPUCLOCK_PROF                     0
#define ZT_CPUCLOCK_VIRT                     1
#define ZT_CPUCLOCK_SCHED                    2
#define ZT_CPUCLOCK_FD                       3 /* not a CPU clock: a clock behind a file descriptor */
#define ZT_CPUCLOCK_WHICH(id)                ((id)&3)
#define ZT_CPUCLOCK_PERTHREAD(id)            (((id)&4) != 0)
#define ZT_CPUCLOCK_PID(id)                  ((int)~((id) >> 3))
#define ZT_MAKE_PROCESS_CPUCLOCK(pid, which) ((int)((~(unsigned)(pid) << 3) | (unsigned)(which)))
#define ZT_MAKE_THREAD_CPUCLOCK(tid, which)  ZT_MAKE_PROCESS_CPUCLOCK((tid), (which) | 4)

/* What a clock id reads. */
enum zt_clock_kind {
    ZT_CLOCK_NONE = 0, /* no such clock: -EINVAL from every call */
    ZT_CLOCK_COUNTER,  /* the counter's time: MONOTONIC, MONOTONIC_RAW/_COARSE, BOOTTIME */
    ZT_CLOCK_WALL,     /* the counter's time + the wall offset: REALTIME, REALTIME_COARSE, TAI */
    ZT_CLOCK_ALARM,    /* REALTIME_ALARM, BOOTTIME_ALARM: no wake-capable RTC */
    ZT_CLOCK_CPU,      /* a process's or a thread's CPU time (2, 3 and the encoded ids) */
    ZT_CLOCK_FD,       /* a clock behind a file descriptor: none exists */
};

static inline enum zt_clock_kind zt_clock_kind(int id)
{
    if (id < 0) {
        return ZT_CPUCLOCK_WHICH(id) == ZT_CPUCLOCK_FD && !ZT_CPUCLOCK_PERTHREAD(id) ? ZT_CLOCK_FD
               : ZT_CPUCLOCK_WHICH(id) == ZT_CPUCLOCK_FD                             ? ZT_CLOCK_NONE
                                                                                     : ZT_CLOCK_CPU;
    }
    switch (id) {
    case ZT_CLOCK_MONOTONIC:
    case ZT_CLOCK_MONOTONIC_RAW:
    case ZT_CLOCK_MONOTONIC_COARSE:
    case ZT_CLOCK_BOOTTIME:
        return ZT_CLOCK_COUNTER;
    case ZT_CLOCK_REALTIME:
    case ZT_CLOCK_REALTIME_COARSE:
    case ZT_CLOCK_TAI:
        return ZT_CLOCK_WALL;
    case ZT_CLOCK_REALTIME_ALARM:
    case ZT_CLOCK_BOOTTIME_ALARM:
        return ZT_CLOCK_ALARM;
    case ZT_CLOCK_PROCESS_CPUTIME_ID:
    case ZT_CLOCK_THREAD_CPUTIME_ID:
        return ZT_CLOCK_CPU;
    default:
        return ZT_CLOCK_NONE; /* 10 (SGI_CYCLE, removed from Linux), 12 and up */
    }
}

/* Is this a clock a reader can compute from the counter alone (plus the wall offset), with
 * no system call?  What a vDSO may answer itself; the rest goes to the kernel. */
static inline int zt_clock_is_counter_time(int id)
{
    enum zt_clock_kind k = zt_clock_kind(id);
    return k == ZT_CLOCK_COUNTER || k == ZT_CLOCK_WALL;
}

/* The time of a counter-time clock in ns: the counter's time, plus the wall offset for the
 * wall clocks (both from the kernel: the offset is fixed at boot). */
static inline unsigned long long zt_clock_counter_time_ns(int id, unsigned long long counter_ns,
                                                          unsigned long long wall_offset_ns)
{
    return zt_clock_kind(id) == ZT_CLOCK_WALL ? counter_ns + wall_offset_ns : counter_ns;
}

/* clock_gettime's and clock_getres's answer before any pid is looked up: 0, or -EINVAL. */
static inline int zt_clock_read_error(int id)
{
    enum zt_clock_kind k = zt_clock_kind(id);
    return k == ZT_CLOCK_NONE || k == ZT_CLOCK_ALARM || k == ZT_CLOCK_FD ? -EINVAL : 0;
}

/* clock_nanosleep's answer before any pid is looked up: 0, -EINVAL (no such clock, or the
 * calling thread's own CPU clock: `own_tid` is the caller's tid) or -EOPNOTSUPP (a clock
 * that cannot be slept on: MONOTONIC_RAW, the coarse ones, the alarm clocks, an fd clock). */
static inline int zt_clock_nanosleep_error(int id, int own_tid)
{
    switch (zt_clock_kind(id)) {
    case ZT_CLOCK_NONE:
        return -EINVAL;
    case ZT_CLOCK_ALARM:
    case ZT_CLOCK_FD:
        return -EOPNOTSUPP;
    case ZT_CLOCK_COUNTER:
        return id == ZT_CLOCK_MONOTONIC_RAW || id == ZT_CLOCK_MONOTONIC_COARSE ? -EOPNOTSUPP : 0;
    case ZT_CLOCK_WALL:
        return id == ZT_CLOCK_REALTIME_COARSE ? -EOPNOTSUPP : 0;
    case ZT_CLOCK_CPU:
    default:
        if (id == ZT_CLOCK_THREAD_CPUTIME_ID) {
            return -EINVAL;
        }
        if (id < 0 && ZT_CPUCLOCK_PERTHREAD(id) &&
            (ZT_CPUCLOCK_PID(id) == 0 || ZT_CPUCLOCK_PID(id) == own_tid)) {
            return -EINVAL;
        }
        return 0;
    }
}

#endif
