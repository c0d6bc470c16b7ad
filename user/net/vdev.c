/* SPDX-License-Identifier: MIT */
/*
 * vdev.c — the virtio transports, virtio-mmio and virtio-pci modern (contract in vdev.h).
 *
 * virtio-pci (virtio 1.2, 4.1.4): the capability list starts at configuration offset 0x34;
 * each vendor-specific capability (cap_vndr 0x09) has cfg_type at +3, bar at +4, offset (le32)
 * at +8 and length (le32) at +12; the notification capability adds notify_off_multiplier (le32)
 * at +16.  The first capability of each type whose region lies inside a mapped BAR is used
 * (4.1.4.1: the driver may use the first it understands).  A queue's notification address is
 * the notification area + queue_notify_off * notify_off_multiplier (4.1.4.4), where the driver
 * writes the queue's index as 16 bits (no VIRTIO_F_NOTIFICATION_DATA).
 */
#include "vdev.h"

#include <stdio.h>

/* virtio-mmio registers (virtio 1.2, 4.2.2) */
#define MMIO_MAGIC         0x000
#define MMIO_VERSION       0x004
#define MMIO_DEVICE_ID     0x008
#define MMIO_DEV_FEATURES  0x010
#define MMIO_DEV_FEAT_SEL  0x014
#define MMIO_DRV_FEATURES  0x020
#define MMIO_DRV_FEAT_SEL  0x024
#define MMIO_QUEUE_SEL     0x030
#define MMIO_QUEUE_NUM_MAX 0x034
#define MMIO_QUEUE_NUM     0x038
#define MMIO_QUEUE_READY   0x044
#define MMIO_QUEUE_NOTIFY  0x050
#define MMIO_STATUS        0x070
#define MMIO_QUEUE_DESC    0x080
#define MMIO_QUEUE_DRIVER  0x090
#define MMIO_QUEUE_DEVICE  0x0a0
#define MMIO_CONFIG_GEN    0x0fc
#define MMIO_CONFIG        0x100
#define MMIO_MAGIC_VALUE   0x74726976

/* virtio-pci common configuration (virtio 1.2, 4.1.4.3) */
#define PCI_DFSELECT   0x00
#define PCI_DF         0x04
#define PCI_GFSELECT   0x08
#define PCI_GF         0x0c
#define PCI_NUM_QUEUES 0x12
#define PCI_STATUS     0x14
#define PCI_CFG_GEN    0x15
#define PCI_Q_SELECT   0x16
#define PCI_Q_SIZE     0x18
#define PCI_Q_MSIX     0x1a
#define PCI_Q_ENABLE   0x1c
#define PCI_Q_NOTIFY   0x1e
#define PCI_Q_DESC     0x20
#define PCI_Q_DRIVER   0x28
#define PCI_Q_DEVICE   0x30
#define PCI_COMMON_LEN 0x38
#define NO_VECTOR      0xffff
#define VIRTIO_MODERN  0x1040
#define RESET_READS    100000
#define MAX_CAPS       48

static uint32_t rd32(volatile uint8_t *base, unsigned off)
{
    return *(volatile uint32_t *)(base + off);
}

static void wr32(volatile uint8_t *base, unsigned off, uint32_t v)
{
    *(volatile uint32_t *)(base + off) = v;
}

static uint16_t rd16(volatile uint8_t *base, unsigned off)
{
    return *(volatile uint16_t *)(base + off);
}

static void wr16(volatile uint8_t *base, unsigned off, uint16_t v)
{
    *(volatile uint16_t *)(base + off) = v;
}

static void wr64(volatile uint8_t *base, unsigned off, uint64_t v)
{
    wr32(base, off, (uint32_t)v);
    wr32(base, off + 4, (uint32_t)(v >> 32));
}

static int fail(char *err, size_t errlen, const char *msg, unsigned long a)
{
    snprintf(err, errlen, msg, a);
    return -1;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ---- opening ---- */

static int open_mmio(struct vdev *v, const struct zt_claim *c, char *err, size_t errlen)
{
    v->regs = (volatile uint8_t *)(uintptr_t)c->regs;
    if (c->regs_size < MMIO_CONFIG + 8 || rd32(v->regs, MMIO_MAGIC) != MMIO_MAGIC_VALUE) {
        return fail(err, errlen, "slot %lu is not a virtio-mmio transport", c->slot);
    }
    if (rd32(v->regs, MMIO_VERSION) != 2) {
        return fail(err, errlen,
                    "slot %lu is a legacy (version 1) virtio-mmio transport; only virtio 1.x "
                    "(version 2) is supported: give QEMU -global virtio-mmio.force-legacy=false",
                    c->slot);
    }
    v->devcfg = v->regs + MMIO_CONFIG;
    v->devcfg_len = (uint32_t)(c->regs_size - MMIO_CONFIG);
    return 0;
}

/* The user address of a capability's region, or NULL if its BAR is not mapped or too small. */
static volatile uint8_t *cap_region(const struct zt_claim *c, const uint8_t *cap, uint32_t need,
                                    uint32_t *len)
{
    unsigned bar = cap[4];
    uint32_t off = le32(cap + 8);
    *len = le32(cap + 12);
    if (bar >= ZT_PCI_BARS || !c->bars[bar].addr || *len < need ||
        (uint64_t)off + *len > c->bars[bar].size) {
        return 0;
    }
    return (volatile uint8_t *)(uintptr_t)(c->bars[bar].addr + off);
}

static int open_pci(struct vdev *v, const struct zt_claim *c, char *err, size_t errlen)
{
    const uint8_t *cfg = c->config;
    bool isr = false;
    uint32_t len;
    unsigned id = (unsigned)(cfg[2] | cfg[3] << 8);
    if ((cfg[0] | cfg[1] << 8) != 0x1af4 || id < 0x1000 || id > 0x107f) {
        return fail(err, errlen, "slot %lu is not a virtio-pci function", c->slot);
    }
    unsigned ptr = cfg[0x34] & 0xfc;
    for (int k = 0; ptr >= 0x40 && ptr + 20 <= ZT_PCI_CFG_BYTES && k < MAX_CAPS; k++) {
        const uint8_t *cap = cfg + ptr;
        if (cap[0] == 0x09) {
            volatile uint8_t *r;
            switch (cap[3]) {
            case VPCI_CAP_COMMON:
                r = cap_region(c, cap, PCI_COMMON_LEN, &len);
                v->common = v->common ? v->common : r;
                break;
            case VPCI_CAP_NOTIFY:
                r = cap_region(c, cap, 2, &len);
                if (!v->notify && r) {
                    v->notify = r;
                    v->notify_mult = le32(cap + 16);
                }
                break;
            case VPCI_CAP_ISR:
                isr = isr || cap_region(c, cap, 1, &len);
                break;
            case VPCI_CAP_DEVICE:
                r = cap_region(c, cap, 1, &len);
                if (!v->devcfg && r) {
                    v->devcfg = r;
                    v->devcfg_len = len;
                }
                break;
            }
        }
        ptr = cap[1] & 0xfc;
    }
    if (!v->common || !v->notify || !isr || !v->devcfg) {
        return fail(err, errlen,
                    "slot %lu lacks a modern virtio-pci capability (common, notify, ISR, device "
                    "configuration) inside a mapped BAR",
                    c->slot);
    }
    return 0;
}

int vdev_open(struct vdev *v, const struct zt_claim *c, char *err, size_t errlen)
{
    *v = (struct vdev){.kind = c->kind == ZT_DEV_PCI ? VDEV_PCI : VDEV_MMIO, .slot = c->slot};
    return v->kind == VDEV_PCI ? open_pci(v, c, err, errlen) : open_mmio(v, c, err, errlen);
}

uint32_t vdev_device_id(const struct vdev *v, const struct zt_claim *c)
{
    if (v->kind == VDEV_MMIO) {
        return rd32(v->regs, MMIO_DEVICE_ID);
    }
    uint32_t id = (uint32_t)(c->config[2] | c->config[3] << 8);
    if (id < VIRTIO_MODERN) { /* transitional (0x1000-0x103f): the subsystem id says */
        return (uint32_t)(c->config[0x2e] | c->config[0x2f] << 8);
    }
    return id - VIRTIO_MODERN;
}

/* ---- status and features ---- */

uint8_t vdev_status(const struct vdev *v)
{
    return v->kind == VDEV_MMIO ? (uint8_t)rd32(v->regs, MMIO_STATUS) : v->common[PCI_STATUS];
}

void vdev_set_status(struct vdev *v, uint8_t s)
{
    if (v->kind == VDEV_MMIO) {
        wr32(v->regs, MMIO_STATUS, s);
    } else {
        v->common[PCI_STATUS] = s;
    }
}

int vdev_reset(struct vdev *v)
{
    vdev_set_status(v, 0);
    for (int i = 0; i < RESET_READS; i++) {
        if (vdev_status(v) == 0) {
            return 0;
        }
    }
    return -1;
}

uint64_t vdev_features(struct vdev *v)
{
    volatile uint8_t *b = v->kind == VDEV_MMIO ? v->regs : v->common;
    unsigned sel = v->kind == VDEV_MMIO ? MMIO_DEV_FEAT_SEL : PCI_DFSELECT;
    unsigned val = v->kind == VDEV_MMIO ? MMIO_DEV_FEATURES : PCI_DF;
    wr32(b, sel, 0);
    uint64_t lo = rd32(b, val);
    wr32(b, sel, 1);
    return lo | (uint64_t)rd32(b, val) << 32;
}

void vdev_set_features(struct vdev *v, uint64_t f)
{
    volatile uint8_t *b = v->kind == VDEV_MMIO ? v->regs : v->common;
    unsigned sel = v->kind == VDEV_MMIO ? MMIO_DRV_FEAT_SEL : PCI_GFSELECT;
    unsigned val = v->kind == VDEV_MMIO ? MMIO_DRV_FEATURES : PCI_GF;
    wr32(b, sel, 0);
    wr32(b, val, (uint32_t)f);
    wr32(b, sel, 1);
    wr32(b, val, (uint32_t)(f >> 32));
}

/* ---- queues ---- */

unsigned vdev_num_queues(const struct vdev *v)
{
    return v->kind == VDEV_PCI ? rd16(v->common, PCI_NUM_QUEUES) : 0;
}

unsigned vdev_queue_max(struct vdev *v, unsigned i, bool *enabled)
{
    if (v->kind == VDEV_MMIO) {
        wr32(v->regs, MMIO_QUEUE_SEL, i);
        *enabled = rd32(v->regs, MMIO_QUEUE_READY) != 0;
        return rd32(v->regs, MMIO_QUEUE_NUM_MAX);
    }
    if (i >= vdev_num_queues(v)) {
        *enabled = false;
        return 0;
    }
    wr16(v->common, PCI_Q_SELECT, (uint16_t)i);
    *enabled = rd16(v->common, PCI_Q_ENABLE) != 0;
    return rd16(v->common, PCI_Q_SIZE);
}

void vdev_queue_setup(struct vdev *v, unsigned i, unsigned size, uint64_t desc, uint64_t avail,
                      uint64_t used, struct vnotify *n)
{
    n->value = (uint16_t)i;
    if (v->kind == VDEV_MMIO) {
        wr32(v->regs, MMIO_QUEUE_NUM, size);
        wr64(v->regs, MMIO_QUEUE_DESC, desc);
        wr64(v->regs, MMIO_QUEUE_DRIVER, avail);
        wr64(v->regs, MMIO_QUEUE_DEVICE, used);
        wr32(v->regs, MMIO_QUEUE_READY, 1);
        n->addr = v->regs + MMIO_QUEUE_NOTIFY;
        n->wide = true;
        return;
    }
    wr16(v->common, PCI_Q_SIZE, (uint16_t)size);
    wr16(v->common, PCI_Q_MSIX, NO_VECTOR); /* polled: no interrupt (MSI-X stays off anyway) */
    wr64(v->common, PCI_Q_DESC, desc);
    wr64(v->common, PCI_Q_DRIVER, avail);
    wr64(v->common, PCI_Q_DEVICE, used);
    n->addr = v->notify + (uint32_t)rd16(v->common, PCI_Q_NOTIFY) * v->notify_mult;
    n->wide = false;
    wr16(v->common, PCI_Q_ENABLE, 1);
}

/* ---- device configuration ---- */

uint8_t vdev_cfg8(const struct vdev *v, unsigned off)
{
    return off < v->devcfg_len ? v->devcfg[off] : 0;
}

uint32_t vdev_cfg_generation(const struct vdev *v)
{
    return v->kind == VDEV_MMIO ? rd32(v->regs, MMIO_CONFIG_GEN) : v->common[PCI_CFG_GEN];
}
