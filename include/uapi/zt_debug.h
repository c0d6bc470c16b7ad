/* SPDX-License-Identifier: MIT */
/*
 * zt_debug.h — the views of the checked and coverage kernels: how long each CPU ran with
 * interrupts masked (zt_irqsoff), and which kernel code a task's system calls reached
 * (zt_kcov).  kernel/cpu/irqsoff.c and kernel/lib/kcov.c implement them; a kernel built
 * without the check or the coverage answers -ENODEV, so a program can tell which it runs on.
 *
 *   zt_irqsoff(cpu, struct zt_irqsoff *out, size, flags) -> 0 or -errno
 *       CPU `cpu`'s record since boot or since its last reset (flags ZT_IRQSOFF_RESET: read,
 *       then start a new record).  -EINVAL for a CPU that does not exist, a size other than
 *       sizeof(struct zt_irqsoff) or unknown flags; -EFAULT for a bad `out`; -ENODEV in a
 *       release kernel (the check is compiled into the checked kernel only).
 *
 *   zt_kcov(op, arg, size) -> see each op; -ENODEV in a kernel built without coverage
 *       (make cover builds build/cover/kernel.elf: the checked kernel with every kernel/
 *       file compiled with -fsanitize-coverage=trace-pc).
 *
 * Coverage points: the compiler calls __sanitizer_cov_trace_pc at the start of every basic
 * block of an instrumented file; the return address of that call names the block.  The
 * kernel keeps one bit per 4-byte instruction slot of its text, bit i for the block whose
 * call returns to text_start + 4 * i, so a bitmap of a thread, or of the machine, is the set
 * of blocks reached.  tools/covreport finds every point in build/cover/kernel.elf (the calls
 * to __sanitizer_cov_trace_pc) and reports the blocks reached by file.
 *
 *   ZT_KCOV_INFO     arg: struct zt_kcov_info *, size: its size.  0.
 *   ZT_KCOV_ENABLE   record the blocks the calling thread's system calls reach, from now
 *                    on (each call's own work, from its entry to its return to user space:
 *                    not interrupts taken meanwhile, not other tasks').  0; -EBUSY if the
 *                    thread records already; -ENOMEM.
 *   ZT_KCOV_DISABLE  stop recording and free the thread's bitmap.  0; -EINVAL if it does
 *                    not record.  A thread's exit ends its recording too.
 *   ZT_KCOV_COLLECT  copy the thread's bitmap to arg (size bytes, at least
 *                    zt_kcov_info.bitmap_bytes; arg 0: do not copy), add it to the
 *                    machine's bitmap of blocks reached by recorded calls, and clear it.
 *                    Returns how many of its blocks the machine's bitmap did not have yet
 *                    (0: nothing new); -EINVAL if the thread does not record or size is too
 *                    small; -EFAULT.  The call itself is not recorded.
 *   ZT_KCOV_MACHINE  copy the machine's bitmap of blocks reached by recorded calls to arg;
 *                    returns the number of blocks in it.
 *   ZT_KCOV_EVERYWHERE  the same for blocks reached in any context since boot (boot,
 *                    interrupts, every task, the idle loop).
 */
#ifndef ZT_UAPI_DEBUG_H
#define ZT_UAPI_DEBUG_H

#include <stdint.h>

#define SYS_zt_kcov    1035
#define SYS_zt_irqsoff 1036

/* ---- zt_irqsoff ---- */

#define ZT_IRQSOFF_RESET    1u
#define ZT_IRQSOFF_BT       6     /* return addresses kept where the longest span ended */
#define ZT_IRQSOFF_BUCKETS  16    /* [0] < 1 us, [k] in [2^(k-1), 2^k) us, [15] >= 16384 us */
#define ZT_IRQSOFF_PLACES   8     /* the longest spans by place (start, end) kept per CPU */
#define ZT_IRQSOFF_FLOOR_NS 32000 /* ... among the spans at least this long */

/* The longest span seen between one place that masks and one that unmasks. */
struct zt_irqsoff_place {
    uint64_t start_pc, end_pc;
    uint64_t longest_ns;
    uint64_t count; /* spans between these places at least ZT_IRQSOFF_FLOOR_NS long */
};

/*
 * One CPU's spans with interrupts masked.  A span starts where the CPU masks them (an
 * exception's entry, an arch_irq_save or spin_lock_irqsave that found them enabled) and ends
 * where it unmasks them (the return to user space or to the interrupted kernel code, an
 * arch_irq_restore or spin_unlock_irqrestore that enables them); the idle loop's wait for an
 * interrupt ends one and its wake-up starts the next.  Times are the counter's (guest time).
 * zt_hwnoise's sampling windows mask interrupts on purpose: they are kept apart, by name.
 */
struct zt_irqsoff {
    uint64_t spans;                 /* spans ended (hwnoise windows not included) */
    uint64_t longest_ns;            /* the longest of them */
    uint64_t start_pc;              /* kernel address where it began */
    uint64_t end_pc;                /* and where it ended */
    uint64_t end_bt[ZT_IRQSOFF_BT]; /* return addresses at its end, innermost first */
    uint64_t end_ns;                /* when it ended (counter, as ns since the counter's 0) */
    uint32_t dataplane;             /* 1: the CPU was a dataplane CPU then */
    uint32_t pad;
    uint64_t hist[ZT_IRQSOFF_BUCKETS]; /* spans by length */
    uint64_t hwnoise_windows;          /* zt_hwnoise windows (excluded above) */
    uint64_t hwnoise_longest_ns;       /* the longest of them */
    /* the longest spans by place, longest first (a place pair is replaced only by a longer
     * span of a pair not yet kept when all ZT_IRQSOFF_PLACES are taken); start_pc 0: unused */
    struct zt_irqsoff_place places[ZT_IRQSOFF_PLACES];
};

/* ---- zt_kcov ---- */

#define ZT_KCOV_INFO       0
#define ZT_KCOV_ENABLE     1
#define ZT_KCOV_DISABLE    2
#define ZT_KCOV_COLLECT    3
#define ZT_KCOV_MACHINE    4
#define ZT_KCOV_EVERYWHERE 5

struct zt_kcov_info {
    uint64_t text_start;   /* kernel address of the first instruction slot */
    uint64_t text_end;     /* one past the last */
    uint64_t bitmap_bytes; /* size of a bitmap: one bit per 4 bytes of text, in whole words */
    uint64_t machine;      /* blocks in the machine's bitmap (recorded calls) now */
    uint64_t everywhere;   /* blocks reached in any context now */
};

#endif
