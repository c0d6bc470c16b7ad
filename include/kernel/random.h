/* SPDX-License-Identifier: MIT */
/*
 * random.h — unpredictable-enough bytes for user space (AT_RANDOM, getrandom).
 *
 * QEMU's virt machine as booted here has no entropy device, so the generator is a 64-bit
 * mixing function (splitmix64) over a state stepped on every call and stirred with the
 * free-running counter: fine for stack protectors and hash seeds, NOT cryptographic.  Under
 * -icount (REPRO=1) the counter is deterministic and so are these bytes.
 * Any context; one spinlock, IRQs masked.
 */
#ifndef ZT_KERNEL_RANDOM_H
#define ZT_KERNEL_RANDOM_H

#include <stddef.h>
#include <stdint.h>

void random_bytes(void *buf, size_t n);

#endif
