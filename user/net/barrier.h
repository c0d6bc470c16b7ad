/* SPDX-License-Identifier: MIT */
/*
 * barrier.h — the memory barriers of the driver's shared rings (the device, QEMU's I/O thread
 * or a real NIC, reads and writes the same memory as the polling CPU).
 *
 * On aarch64 (ARM ARM B2.3): DMB ISHST orders the ring stores before the index store the
 * device polls; DMB ISHLD orders the used-index load before the loads of the entries and data
 * it covers; DMB ISH orders the avail-index store before the load of the device's NO_NOTIFY
 * flag (store-load); DSB ST makes the ring stores complete before an MMIO write (the notify)
 * to device memory.  The DMA region is normal, cacheable and coherent with the device (the
 * virtio-mmio nodes say "dma-coherent").  On the host (unit tests) the same orderings come
 * from C11 fences.
 */
#ifndef ZT_NET_BARRIER_H
#define ZT_NET_BARRIER_H

#if defined(__aarch64__)
#define net_wmb()      __asm__ volatile("dmb ishst" ::: "memory")
#define net_rmb()      __asm__ volatile("dmb ishld" ::: "memory")
#define net_mb()       __asm__ volatile("dmb ish" ::: "memory")
#define net_mmio_wmb() __asm__ volatile("dsb st" ::: "memory")
#else
#define net_wmb()      __atomic_thread_fence(__ATOMIC_RELEASE)
#define net_rmb()      __atomic_thread_fence(__ATOMIC_ACQUIRE)
#define net_mb()       __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define net_mmio_wmb() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#endif

#endif
