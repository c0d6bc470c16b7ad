/* SPDX-License-Identifier: MIT */
/*
 * device.h — devices handed to user space (the control plane of a user-space driver).
 *
 * At boot the kernel probes every virtio-mmio transport the device tree lists (magic,
 * version, device id) and leaves each device alone.  A process may then claim one
 * (uapi/zt_device.h has the ABI and its errors): the kernel maps its registers and a
 * contiguous DMA region into the process and keeps the device's interrupt off.  Release —
 * explicit, when the holder calls execve, or when its teardown runs — resets the device before
 * anything is unmapped or freed.
 * Nothing here runs on a dataplane CPU unless its own task asked (claim and release run on the
 * caller's CPU, teardown on housekeeping), and nothing sends an IPI.
 */
#ifndef ZT_KERNEL_DEVICE_H
#define ZT_KERNEL_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

#include "uapi/zt_device.h"

struct process;
struct trap_frame;

/* Boot, after interrupts are routed: probe every transport arch_boot_info() lists; print one
 * line per device found unless `quiet`. */
void device_init(bool quiet);
/* Fill up to n entries; returns the number of transports. */
unsigned device_list(struct zt_device_info *out, unsigned n);
/* Claim `slot` for p with a DMA region of dma_bytes (uapi/zt_device.h).  0 or -errno. */
int device_claim(struct process *p, unsigned slot, uint64_t dma_bytes, unsigned flags,
                 struct zt_claim *out);
/* Reset the device p holds in `slot`, unmap it from p, free its DMA region.  0 or -errno. */
int device_release(struct process *p, unsigned slot);
/* Release every device p holds: its teardown, before its address space is destroyed, and
 * execve, before the old image is (a claim ends with the image that made it). */
void device_release_all(struct process *p);

long sys_zt_devices(struct trap_frame *f);
long sys_zt_claim(struct trap_frame *f);
long sys_zt_release(struct trap_frame *f);

#endif
