/* SPDX-License-Identifier: MIT */
/*
 * hwnoise.c — zt_hwnoise: read the counter in a loop with IRQs masked, on a dataplane CPU,
 * and report the gaps between consecutive reads (contract in include/kernel/hwnoise.h, ABI
 * in include/uapi/zt_syscall.h).
 *
 * Why in the kernel: user space cannot mask interrupts.  With IRQs masked no interrupt,
 * tick or IPI can run on the CPU, so a gap over the threshold is time the CPU was taken by
 * something no kernel sees: the hardware (SMIs, firmware, a hypervisor) or, under QEMU/TCG,
 * the host not running this vCPU.  That is rtla hwnoise's measurement (Linux's osnoise
 * tracer with its IRQ-disable option), done here by a bounded call instead of a kernel thread.
 *
 * Bounds, all checked before anything is sampled: the caller's CPU is a dataplane CPU (a
 * housekeeping CPU serves everyone's interrupts: -EPERM there); one call lasts 1 us to
 * ZT_HWNOISE_MAX_US (100 ms), so an IPI sent here (a partition change, a wake-up) waits at
 * most that long; the threshold is 1 us to 1 s; `size` is sizeof(struct
 * zt_hwnoise) and the whole result is writable (-EINVAL / -EFAULT otherwise).  The CPU is
 * looked at with IRQs already masked, so the task cannot move between the check and the
 * sampling.  Longer runs are a loop of calls (osnoise -w), IRQs open in between.
 *
 * Context: the calling task, on its own CPU; no lock is taken and nothing shared is written.
 */
#include "kernel/hwnoise.h"
#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/irqsoff.h"
#include "kernel/kmem.h"
#include "kernel/lib.h"
#include "kernel/task.h"
#include "kernel/vm.h"
#include "uapi/zt_errno.h"

_Static_assert(sizeof(struct zt_hwnoise) <= PAGE_SIZE, "one kmem page holds the result");

void hwnoise_account(struct zt_hwnoise *r, uint64_t gap, uint64_t threshold_cycles, uint64_t freq)
{
    r->samples++;
    if (gap > r->max_gap) {
        r->max_gap = gap;
    }
    if (gap <= threshold_cycles) {
        return;
    }
    uint64_t us = gap / freq * 1000000ull + gap % freq * 1000000ull / freq;
    r->count++;
    r->noise += gap;
    r->us[us < ZT_HWNOISE_BUCKETS ? us : ZT_HWNOISE_BUCKETS]++;
}

/* The loop: loads, compares and counting only, IRQs masked by the caller. */
static void sample(struct zt_hwnoise *r, uint64_t duration, uint64_t threshold, uint64_t freq)
{
    ASSERT_IRQS_MASKED(); /* nothing but the hardware may interrupt the loop */
    ASSERT(cpu_is_dataplane(this_cpu_id()));
    uint64_t prev = arch_counter_read();
    uint64_t end = prev + duration;
    r->start = prev;
    for (;;) {
        uint64_t t = arch_counter_read();
        uint64_t gap = t - prev;
        prev = t;
        if (__builtin_expect(gap > threshold || gap > r->max_gap, 0)) {
            hwnoise_account(r, gap, threshold, freq);
        } else {
            r->samples++;
        }
        if (t >= end) {
            break;
        }
    }
    r->end = prev;
}

long sys_zt_hwnoise(struct trap_frame *f)
{
    uint64_t duration_us = arch_frame_arg(f, 0), threshold_us = arch_frame_arg(f, 1),
             uout = arch_frame_arg(f, 2), size = arch_frame_arg(f, 3);
    uint64_t freq = arch_counter_freq();
    if (size != sizeof(struct zt_hwnoise) || duration_us < 1 || duration_us > ZT_HWNOISE_MAX_US ||
        threshold_us < 1 || threshold_us > 1000000) {
        return -EINVAL;
    }
    if (vm_check_range(current_vm(), uout, size, PROT_WRITE)) {
        return -EFAULT;
    }
    struct zt_hwnoise *r = kmem_alloc(PAGE_SIZE);
    if (!r) {
        return -ENOMEM;
    }
    memset(r, 0, sizeof(*r));
    unsigned long flags = arch_irq_save();
    if (!cpu_is_dataplane(this_cpu_id())) {
        arch_irq_restore(flags);
        kmem_free(r, PAGE_SIZE);
        return -EPERM;
    }
    irqsoff_hwnoise_window(); /* masked on purpose: kept apart by the irqs-off check */
    sample(r, duration_us * freq / 1000000ull, threshold_us * freq / 1000000ull, freq);
    arch_irq_restore(flags);
    long ret = copy_to_user(current_vm(), uout, r, sizeof(*r)) ? -EFAULT : 0;
    kmem_free(r, PAGE_SIZE);
    return ret;
}
