/* SPDX-License-Identifier: MIT */
/*
 * vdso.c — the vDSO's functions: clock_gettime, gettimeofday and clock_getres without a
 * system call (ABI in include/uapi/zt_vdso.h).  User code: it runs at EL0 in every process,
 * linked into a small position-independent shared object (vdso.lds) that the kernel maps
 * read-only at ZT_VDSO_VA.
 *
 * A clock zt_clock.h calls counter time (MONOTONIC and its variants, BOOTTIME; REALTIME and its
 * variants, TAI, with the wall offset) is read here: CNTVCT_EL0, which EL0 may read
 * (CNTKCTL_EL1.EL0VCTEN), converted to nanoseconds exactly as the kernel's cycles_to_ns does,
 * so the system call and this agree to the nanosecond.  Every other clock id (CPU time, the
 * alarm clocks, bad ids) is the system call, which also gives the errors.  The conversion
 * needs no division when the counter's period is a whole number of nanoseconds (16 ns on QEMU
 * virt): that is the path whose cost make bench measures.
 *
 * Like Linux's vDSO, a bad pointer here is a fault in the caller (SIGSEGV), not -EFAULT.
 * Nothing here may need relocating (nobody relocates the vDSO): no global data, no
 * addresses but the data page's fixed one; the Makefile refuses an image with relocations.
 */
#include <stdint.h>

#include "uapi/zt_clock.h"
#include "uapi/zt_vdso.h"

#define NS_PER_SEC       1000000000ull
#define NR_GETTIMEOFDAY  169 /* Linux's numbers (asm-generic/unistd.h) */
#define NR_CLOCK_GETTIME 113
#define NR_CLOCK_GETRES  114
#define EXPORT           __attribute__((visibility("default")))

struct ts {
    int64_t sec, nsec;
};

struct tv {
    int64_t sec, usec;
};

static inline const struct zt_vdso_data *data(void)
{
    return (const struct zt_vdso_data *)(uintptr_t)ZT_VDSO_DATA_VA;
}

/* The counter, read after every instruction before it (as the kernel's arch_counter_read):
 * ISB keeps the read from being taken early (ARM ARM D11.2.2, "the virtual counter"). */
static inline uint64_t counter(void)
{
    uint64_t c;
    __asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(c)); /* no memory touched */
    return c;
}

/* Counter-time clock `id` now, in seconds and nanoseconds: the counter's time split exactly as
 * the kernel's cycles_to_ns(c) = c / f * 10^9 + c % f * 10^9 / f would split (whole seconds
 * are c / f), plus the wall offset for the wall clocks (zt_clock.h's rule).  With a whole
 * number of nanoseconds per cycle the remainder needs one multiplication, no division. */
static inline void clock_now(int id, struct ts *out)
{
    const struct zt_vdso_data *d = data();
    uint64_t f = d->counter_freq, npc = d->ns_per_cycle;
    uint64_t off = zt_clock_counter_time_ns(id, 0, d->wall_offset_ns);
    uint64_t c = counter();
    uint64_t sec = c / f, rem = c - sec * f;
    uint64_t nsec = npc ? rem * npc : rem * NS_PER_SEC / f;
    if (off) {
        nsec += off % NS_PER_SEC;
        sec += off / NS_PER_SEC + (nsec >= NS_PER_SEC);
        nsec -= nsec >= NS_PER_SEC ? NS_PER_SEC : 0;
    }
    out->sec = (int64_t)sec;
    out->nsec = (int64_t)nsec;
}

static inline long syscall2(long nr, long a0, long a1)
{
    register long x0 __asm__("x0") = a0;
    register long x1 __asm__("x1") = a1;
    register long x8 __asm__("x8") = nr;
    __asm__ volatile("svc #0" : "+r"(x0) : "r"(x1), "r"(x8) : "memory");
    return x0;
}

EXPORT int __kernel_clock_gettime(int id, struct ts *ts)
{
    if (__builtin_expect(!zt_clock_is_counter_time(id), 0)) {
        return (int)syscall2(NR_CLOCK_GETTIME, id, (long)ts);
    }
    clock_now(id, ts);
    return 0;
}

/* The timezone argument is obsolete: ignored, as the system call ignores it. */
EXPORT int __kernel_gettimeofday(struct tv *tv, void *tz)
{
    (void)tz;
    if (tv) {
        struct ts now;
        clock_now(ZT_CLOCK_REALTIME, &now);
        tv->sec = now.sec;
        tv->usec = now.nsec / 1000;
    }
    return 0;
}

EXPORT int __kernel_clock_getres(int id, struct ts *res)
{
    if (__builtin_expect(!zt_clock_is_counter_time(id), 0)) {
        return (int)syscall2(NR_CLOCK_GETRES, id, (long)res);
    }
    if (res) {
        res->sec = 0;
        res->nsec = (int64_t)data()->res_ns;
    }
    return 0;
}
