/* SPDX-License-Identifier: MIT */
/*
 * hwnoise.h — the kernel half of `osnoise -w` (kernel/sys/hwnoise.c): sampling the counter with
 * IRQs masked on a dataplane CPU, so the only gaps left are the ones no kernel sees (the
 * hardware, or under QEMU the host), as Linux's rtla hwnoise does with its osnoise tracer.
 */
#ifndef ZT_KERNEL_HWNOISE_H
#define ZT_KERNEL_HWNOISE_H

#include <stdint.h>

#include "uapi/zt_syscall.h"

struct trap_frame;

/* Account one gap of `gap` counter cycles into r: a noise sample when over threshold_cycles,
 * bucketed by whole microseconds at `freq` counter cycles per second.  Pure. */
void hwnoise_account(struct zt_hwnoise *r, uint64_t gap, uint64_t threshold_cycles, uint64_t freq);

/* zt_hwnoise(duration_us, threshold_us, out, size): 0 or -errno, nothing sampled on error. */
long sys_zt_hwnoise(struct trap_frame *f);

#endif
