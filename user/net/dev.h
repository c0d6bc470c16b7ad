/* SPDX-License-Identifier: MIT */
/*
 * dev.h — the device system calls (uapi/zt_device.h) for user programs, and the helpers
 * around them that lsdev, devtest and udpecho share.
 */
#ifndef ZT_NET_DEV_H
#define ZT_NET_DEV_H

#include <stddef.h>
#include <stdint.h>

#include "uapi/zt_device.h"

long zt_devices(struct zt_device_info *buf, size_t n); /* transports in total, or -errno */
long zt_claim(unsigned slot, uint64_t dma_bytes, unsigned flags, struct zt_claim *out);
long zt_release(unsigned slot);

/* "net", "block", ... for a virtio device id ("-" for an empty transport). */
const char *dev_type_name(uint32_t device_id);
/* The lowest slot holding a device of type device_id, or -1. */
int dev_find(uint32_t device_id);

#endif
