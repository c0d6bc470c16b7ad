/* SPDX-License-Identifier: MIT */
/*
 * dev.c — system-call wrappers for devices handed to user space (contract in dev.h).
 */
#include "dev.h"

#include "zt.h"

static struct zt_device_info list[ZT_DEVICE_SLOTS];

long zt_devices(struct zt_device_info *buf, size_t n)
{
    return zt_syscall2(SYS_zt_devices, buf, n | ZT_DEVICES_V2);
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

int dev_find(uint32_t device_id, uint32_t kind)
{
    long n = zt_devices(list, ZT_DEVICE_SLOTS);
    for (long i = 0; i < n && i < ZT_DEVICE_SLOTS; i++) {
        if (list[i].device_id == device_id && (!kind || list[i].kind == kind)) {
            return (int)list[i].slot;
        }
    }
    return -1;
}

int dev_info(unsigned slot, struct zt_device_info *out)
{
    long n = zt_devices(list, ZT_DEVICE_SLOTS);
    for (long i = 0; i < n && i < ZT_DEVICE_SLOTS; i++) {
        if (list[i].slot == slot) {
            *out = list[i];
            return 0;
        }
    }
    return -1;
}
