/* SPDX-License-Identifier: MIT */
/*
 * device.h — devices handed to user space (the control plane of a user-space driver).
 *
 * At boot the kernel takes the SMMU (every PCI function's DMA aborts), enumerates the PCIe root
 * bus and probes every virtio-mmio transport, and leaves each device alone.  A process may then
 * claim one (uapi/zt_device.h has the ABI and its errors): the kernel maps its registers and a
 * contiguous DMA region into the process — behind the SMMU, at an I/O address the SMMU
 * translates to that region only — and keeps the device's interrupt off.  Release — explicit,
 * when the holder calls execve, at its teardown, or on a DMA fault — resets the device and makes
 * the SMMU forget the region before anything is freed; it is one function (device_release for one
 * slot, device_release_all for every slot a process holds).  Nothing here runs on a dataplane CPU
 * unless its own task asked (claim and release run on the caller's CPU, teardown and fault
 * reports on housekeeping), and nothing sends an IPI (a faulting holder's signal excepted: it
 * is the holder's own doing).
 */
#ifndef ZT_KERNEL_DEVICE_H
#define ZT_KERNEL_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

#include "uapi/zt_device.h"

struct process;
struct trap_frame;
struct smmu_fault;

/* Boot, after interrupts are routed: the SMMU, the PCIe root bus, the virtio-mmio transports;
 * one line per device found unless `quiet`, and always the lines that say whether DMA is
 * confined. */
void device_init(bool quiet);
/* Fill up to n entries (out may be NULL when n is 0), in slot order; returns the number of
 * devices. */
unsigned device_list(struct zt_device_info *out, unsigned n);
/* The k-th device of that list into *out; false past the end. */
bool device_info_at(unsigned k, struct zt_device_info *out);
/* Claim `slot` for p with a DMA region of dma_bytes (uapi/zt_device.h).  0 or -errno; *out is
 * the whole version-2 result. */
int device_claim(struct process *p, unsigned slot, uint64_t dma_bytes, unsigned flags,
                 struct zt_claim *out);
/* Take back the device p holds in `slot`: unmap, reset, SMMU abort and invalidation, free the
 * DMA region.  0, -EINVAL (no such slot), -EPERM (p does not hold it), -EBUSY (another context
 * is releasing it). */
int device_release(struct process *p, unsigned slot);
/* Release every device p holds: its teardown, before its address space is destroyed, and
 * execve, before the old image is (a claim ends with the image that made it); waits for a
 * release another context has under way. */
void device_release_all(struct process *p);
/* A DMA fault the SMMU reported (smmu.c's worker): report it and end the claim. */
void device_dma_fault(const struct smmu_fault *f);

long sys_zt_devices(struct trap_frame *f);
long sys_zt_claim(struct trap_frame *f);
long sys_zt_release(struct trap_frame *f);

#endif
