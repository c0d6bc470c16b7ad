/* SPDX-License-Identifier: MIT */
/*
 * dev.c — system-call wrappers for devices handed to user space (contract in dev.h).
 */
#include "dev.h"

#include "zt.h"

#define DEV_MAX 32 /* QEMU virt has 32 transports */

long zt_devices(struct zt_device_info *buf, size_t n)
{
    return zt_syscall2(SYS_zt_devices, buf, n);
}

long zt_claim(unsigned slot, uint64_t dma_bytes, unsigned flags, struct zt_claim *out)
{
    return zt_syscall4(SYS_zt_claim, slot, dma_bytes, flags, out);
}

long zt_release(unsigned slot)
{
    return zt_syscall1(SYS_zt_release, slot);
}

const char *dev_type_name(uint32_t device_id)
{
    switch (device_id) {
    case 0:
        return "-";
    case ZT_VIRTIO_ID_NET:
        return "net";
    case ZT_VIRTIO_ID_BLOCK:
        return "block";
    case ZT_VIRTIO_ID_CONSOLE:
        return "console";
    case ZT_VIRTIO_ID_RNG:
        return "rng";
    default:
        return "other";
    }
}

int dev_find(uint32_t device_id)
{
    struct zt_device_info info[DEV_MAX];
    long n = zt_devices(info, DEV_MAX);
    for (long i = 0; i < n && i < DEV_MAX; i++) {
        if (info[i].device_id == device_id) {
            return (int)info[i].slot;
        }
    }
    return -1;
}
