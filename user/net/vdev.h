/* SPDX-License-Identifier: MIT */
/*
 * vdev.h — a virtio device behind either of its transports, as a user-space driver sees it
 * after zt_claim: the virtio-mmio register window (virtio 1.2, 4.2.2, modern transports only)
 * or a virtio-pci function's modern registers (4.1.4), found through its capability list in
 * the configuration space the claim copied out.
 *
 * It does the transport's part of virtio and nothing else: status, feature bits, queue setup,
 * the device-specific configuration, and where each queue's notifications go.  nic.c does the
 * network device on top.  The accessors use the width each register has (8, 16 or 32 bits;
 * 64-bit addresses as two 32-bit halves, which both transports allow).  No system call; not
 * thread-safe (the control path: one thread sets the device up, then each queue is its
 * owner's).  tests/unit/test_netnic.c runs it on the host over plain memory.
 */
#ifndef ZT_NET_VDEV_H
#define ZT_NET_VDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uapi/zt_device.h"
#include "barrier.h"

enum vdev_kind { VDEV_MMIO = 1, VDEV_PCI = 2 };

/* Status bits (virtio 1.2, 2.1) */
#define VDEV_ACKNOWLEDGE 1
#define VDEV_DRIVER      2
#define VDEV_DRIVER_OK   4
#define VDEV_FEATURES_OK 8
#define VDEV_FAILED      128

/* Feature bits of the transport (virtio 1.2, 6) */
#define VIRTIO_F_VERSION_1       (1ull << 32)
#define VIRTIO_F_ACCESS_PLATFORM (1ull << 33)

/* The virtio-pci capability types (virtio 1.2, 4.1.4) */
#define VPCI_CAP_COMMON 1
#define VPCI_CAP_NOTIFY 2
#define VPCI_CAP_ISR    3
#define VPCI_CAP_DEVICE 4

/* Where a queue's notification goes, and what is written there. */
struct vnotify {
    volatile void *addr;
    uint16_t value; /* the queue's index */
    bool wide;      /* a 32-bit write (virtio-mmio QueueNotify); else 16 bits (virtio-pci) */
};

struct vdev {
    enum vdev_kind kind;
    volatile uint8_t *regs;   /* virtio-mmio: the window */
    volatile uint8_t *common; /* virtio-pci: the common configuration */
    volatile uint8_t *notify; /* virtio-pci: the notification area */
    volatile uint8_t *devcfg; /* the device-specific configuration (both) */
    uint32_t notify_mult;     /* virtio-pci: notify_off_multiplier */
    uint32_t devcfg_len;
    unsigned slot;
};

/* Find the registers of the claimed device c: a modern virtio-mmio transport or a virtio-pci
 * function with all four capabilities inside mapped BARs.  0, or -1 with a one-line reason
 * (a legacy transport names the QEMU option that fixes it). */
int vdev_open(struct vdev *v, const struct zt_claim *c, char *err, size_t errlen);
/* The virtio device type (1 = network), from the transport. */
uint32_t vdev_device_id(const struct vdev *v, const struct zt_claim *c);
uint8_t vdev_status(const struct vdev *v);
void vdev_set_status(struct vdev *v, uint8_t s);
/* Write 0 and read it back until 0 (virtio 1.2, 4.1.4.3.2, 4.2.3.1).  0, or -1 if it never
 * does. */
int vdev_reset(struct vdev *v);
uint64_t vdev_features(struct vdev *v);
void vdev_set_features(struct vdev *v, uint64_t f);
/* Queues the device has (virtio-pci num_queues); 0 where the transport does not say. */
unsigned vdev_num_queues(const struct vdev *v);
/* Select queue i: its maximum size (0: no such queue), and whether it is already enabled. */
unsigned vdev_queue_max(struct vdev *v, unsigned i, bool *enabled);
/* Give queue i (selected) `size` entries at device addresses desc/avail/used, no interrupt
 * vector, and enable it; *n says how to notify it. */
void vdev_queue_setup(struct vdev *v, unsigned i, unsigned size, uint64_t desc, uint64_t avail,
                      uint64_t used, struct vnotify *n);
/* Device-specific configuration: byte `off`, and the generation counter that changes when the
 * device changes it (read before and after, until equal: virtio 1.2, 2.5.1). */
uint8_t vdev_cfg8(const struct vdev *v, unsigned off);
uint32_t vdev_cfg_generation(const struct vdev *v);

/* Notify the device that queue n has new buffers: ordered after every ring store before it. */
static inline void vnotify(const struct vnotify *n)
{
    net_mmio_wmb();
    if (n->wide) {
        *(volatile uint32_t *)n->addr = n->value;
    } else {
        *(volatile uint16_t *)n->addr = n->value;
    }
}

#endif
