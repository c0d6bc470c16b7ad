/* SPDX-License-Identifier: MIT */
/*
 * test_netpci.c — host unit tests of user/net/vdev.c's virtio-pci transport and of nic.c's
 * checks before it drives a device with several queue pairs, over a claim whose BARs are plain
 * memory and whose configuration space is QEMU's virtio-net-pci's (its capability list: common
 * configuration in BAR 4 at 0, ISR at 0x1000, device configuration at 0x2000, notifications at
 * 0x3000 with multiplier 4).  Queue setup, the control queue and RSS need a device that reacts
 * to its registers: those are proven under QEMU (NETP-01..04).
 * IDs: NETP-1n.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nic.h"
#include "vdev.h"

#define TEST_STATE void **state __attribute__((unused))

static uint8_t bar4[0x4000] __attribute__((aligned(4096)));
static uint8_t bar1[0x1000] __attribute__((aligned(4096)));
static struct zt_claim c;
static struct nic n;
static char err[256];
static const uint8_t ip[4] = {10, 0, 2, 15};

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static void cap(unsigned at, unsigned next, uint8_t type, uint8_t bar, uint32_t off, uint32_t len)
{
    c.config[at] = 0x09;
    c.config[at + 1] = (uint8_t)next;
    c.config[at + 2] = type == VPCI_CAP_NOTIFY ? 20 : 16;
    c.config[at + 3] = type;
    c.config[at + 4] = bar;
    put32(c.config + at + 8, off);
    put32(c.config + at + 12, len);
}

/* What device_feature shows: in plain memory the select does nothing, so both 32-bit halves of
 * the 64 feature bits read `word` (its bit 0 is bit 32, VERSION_1, in the upper half). */
static void device_features(uint32_t word)
{
    put32(bar4 + 0x04, word);
}

static int setup(void **state)
{
    memset(bar4, 0, sizeof(bar4));
    memset(&c, 0, sizeof(c));
    c.kind = ZT_DEV_PCI;
    c.slot = 33;
    c.config[0] = 0xf4, c.config[1] = 0x1a, c.config[2] = 0x41, c.config[3] = 0x10;
    c.config[0x34] = 0x40;
    cap(0x40, 0x50, VPCI_CAP_COMMON, 4, 0x0000, 0x1000);
    cap(0x50, 0x68, VPCI_CAP_NOTIFY, 4, 0x3000, 0x1000);
    put32(c.config + 0x50 + 16, 4);
    cap(0x68, 0x78, VPCI_CAP_ISR, 4, 0x1000, 0x1000);
    cap(0x78, 0x00, VPCI_CAP_DEVICE, 4, 0x2000, 0x1000);
    c.bars[1] = (struct zt_bar){(uint64_t)(uintptr_t)bar1, sizeof(bar1), ZT_BAR_ASSIGNED, 0};
    c.bars[4] = (struct zt_bar){(uint64_t)(uintptr_t)bar4, sizeof(bar4),
                                ZT_BAR_ASSIGNED | ZT_BAR_64 | ZT_BAR_PREFETCH, 0};
    c.dma_size = nic_dma_bytes_n(4);
    bar4[0x12] = 9; /* num_queues: 4 pairs and the control queue */
    err[0] = 0;
    return 0;
}

/* NETP-10: the capability list gives the common configuration, the notification area with
 * its multiplier, the ISR and the device configuration, each at its BAR and offset; the
 * device is a network device (0x1041 - 0x1040); status and the MAC read through them */
static void netp10_capabilities(TEST_STATE)
{
    struct vdev v;
    assert_int_equal(vdev_open(&v, &c, err, sizeof(err)), 0);
    assert_int_equal(v.kind, VDEV_PCI);
    assert_ptr_equal(v.common, bar4);
    assert_ptr_equal(v.notify, bar4 + 0x3000);
    assert_ptr_equal(v.devcfg, bar4 + 0x2000);
    assert_int_equal(v.devcfg_len, 0x1000);
    assert_int_equal(v.notify_mult, 4);
    assert_int_equal(vdev_device_id(&v, &c), 1);
    assert_int_equal(vdev_num_queues(&v), 9);
    bar4[0x2000 + 3] = 0x12;
    assert_int_equal(vdev_cfg8(&v, 3), 0x12);
    assert_int_equal(vdev_cfg8(&v, 0x1000), 0); /* past the region: nothing read */
    vdev_set_status(&v, VDEV_ACKNOWLEDGE);
    assert_int_equal(bar4[0x14], VDEV_ACKNOWLEDGE);
    assert_int_equal(vdev_status(&v), VDEV_ACKNOWLEDGE);
    /* a transitional device (0x1000) names its type in the subsystem id */
    c.config[2] = 0x00, c.config[3] = 0x10, c.config[0x2e] = 1;
    assert_int_equal(vdev_device_id(&v, &c), 1);
}

/* NETP-11: a function without one of the four capabilities, with a capability whose region
 * runs past its BAR or lies in an unmapped BAR, or that is no virtio function, is refused
 * with the reason */
static void netp11_capabilities_refused(TEST_STATE)
{
    struct vdev v;
    c.config[0x68 + 1] = 0x00; /* the list ends before the device configuration */
    c.config[0x50 + 1] = 0x78; /* and skips the ISR */
    assert_int_equal(vdev_open(&v, &c, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "lacks a modern virtio-pci capability"));
    setup(0);
    put32(c.config + 0x78 + 12, 0x3000); /* device configuration: 0x2000 + 0x3000 > 16 KiB */
    assert_int_equal(vdev_open(&v, &c, err, sizeof(err)), -1);
    setup(0);
    c.config[0x40 + 4] = 2; /* common configuration in BAR 2, which is not mapped */
    assert_int_equal(vdev_open(&v, &c, err, sizeof(err)), -1);
    setup(0);
    c.config[2] = 0x10, c.config[3] = 0x11; /* 1af4:1110, ivshmem: not virtio */
    assert_int_equal(vdev_open(&v, &c, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "not a virtio-pci function"));
    setup(0);
    c.config[0x34] = 0x40;
    c.config[0x40 + 1] = 0x40; /* a list that loops on itself: ends, refused */
    assert_int_equal(vdev_open(&v, &c, err, sizeof(err)), -1);
}

/* NETP-12: nic_open_queues refuses before driving the device: 0 or more than NIC_MAX_QUEUES
 * pairs, a DMA region too small for the pairs asked for, a device without VERSION_1 (marked
 * FAILED), and two pairs on a device without VIRTIO_NET_F_MQ, naming what QEMU needs */
static void netp12_queue_refusals(TEST_STATE)
{
    assert_int_equal(nic_open_queues(&n, &c, 0, ip, 7, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "the driver handles 1 to 8"));
    assert_int_equal(nic_open_queues(&n, &c, NIC_MAX_QUEUES + 1, ip, 7, err, sizeof(err)), -1);
    c.dma_size = nic_dma_bytes_n(2) - 4096;
    assert_int_equal(nic_open_queues(&n, &c, 2, ip, 7, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "DMA region is too small"));
    c.dma_size = nic_dma_bytes_n(4);
    device_features(1u << 5); /* MAC, in both halves: no VERSION_1 (bit 32) */
    assert_int_equal(nic_open_queues(&n, &c, 2, ip, 7, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "does not offer VIRTIO_F_VERSION_1"));
    assert_int_equal(bar4[0x14], VDEV_FAILED);
    device_features(1u << 0 | 1u << 5); /* bit 32 (VERSION_1) and MAC; no MQ (bit 22) */
    assert_int_equal(nic_open_queues(&n, &c, 2, ip, 7, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "2 queue pairs asked for, but the device has one (no "
                                "VIRTIO_NET_F_MQ: QEMU needs -device virtio-net-pci,mq=on and a "
                                "backend with queues=2)"));
    assert_int_equal(bar4[0x14], VDEV_FAILED);
}

/* NETP-13: the DMA layout: N pairs and the control queue fit the size nic_dma_bytes_n says,
 * which grows by the same amount for each pair and stays within ZT_DMA_MAX for 8 pairs */
static void netp13_dma_layout(TEST_STATE)
{
    size_t one = nic_dma_bytes_n(1), two = nic_dma_bytes_n(2);
    assert_int_equal(one % 4096, 0);
    assert_int_equal(nic_dma_bytes(), one);
    assert_true(two > one);
    assert_int_equal(nic_dma_bytes_n(4) - nic_dma_bytes_n(3), two - one);
    assert_true(two - one >= 2 * NIC_QUEUE_SIZE * NIC_BUF_SIZE + 2 * virtq_bytes(NIC_QUEUE_SIZE));
    assert_true(nic_dma_bytes_n(NIC_MAX_QUEUES) <= ZT_DMA_MAX);
}

int main(void)
{
#define T_(f) cmocka_unit_test_setup(f, setup)
    const struct CMUnitTest tests[] = {
        T_(netp10_capabilities),
        T_(netp11_capabilities_refused),
        T_(netp12_queue_refusals),
        T_(netp13_dma_layout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
