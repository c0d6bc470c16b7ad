/* SPDX-License-Identifier: MIT */
/*
 * dev.h — the device system calls (uapi/zt_device.h) for user programs, and the helpers
 * around them that lsdev, devtest, udpecho and dmatest share.
 */
#ifndef ZT_NET_DEV_H
#define ZT_NET_DEV_H

#include <stddef.h>
#include <stdint.h>

#include "uapi/zt_device.h"

/* Version-2 entries (ZT_DEVICES_V2): devices in total, or -errno. */
long zt_devices(struct zt_device_info *buf, size_t n);
long zt_claim(unsigned slot, uint64_t dma_bytes, unsigned flags, struct zt_claim *out);
long zt_release(unsigned slot);

/* "net", "block", ... for a virtio device id ("-" for an empty transport). */
const char *dev_type_name(uint32_t device_id);
/* The lowest slot holding a device of type device_id, or -1; kind 0 = any, else
 * ZT_DEV_VIRTIO_MMIO or ZT_DEV_PCI. */
int dev_find(uint32_t device_id, uint32_t kind);
/* The entry of `slot` into *out: 0, or -1 if there is no such slot. */
int dev_info(unsigned slot, struct zt_device_info *out);

#endif
