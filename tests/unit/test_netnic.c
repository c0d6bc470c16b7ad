/* SPDX-License-Identifier: MIT */
/*
 * test_netnic.c — host unit tests of user/net/nic.c's refusals: nic_open over a register
 * window that is plain memory (a "device" that shows fixed register values and keeps what is
 * written), so every check before the device is driven can be made to fail on purpose.
 * IDs: NETD-0n.
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
#include "unit.h"

static uint32_t regs[0x200 / 4];
static struct nic n;
static struct zt_claim c;
static char err[256];
static const uint8_t ip[4] = {10, 0, 2, 15};

static void reg_set(unsigned off, uint32_t v)
{
    regs[off / 4] = v;
}

static int setup(void **state)
{
    memset(regs, 0, sizeof(regs));
    reg_set(0x000, 0x74726976);
    reg_set(0x004, 2);
    reg_set(0x008, 1);
    reg_set(0x010, 1); /* device features: both halves read this cell: bit 32 (VERSION_1) */
    c = (struct zt_claim){.regs = (uint64_t)(uintptr_t)regs,
                          .regs_size = 0x200,
                          .slot = 31,
                          .dma_size = nic_dma_bytes()};
    err[0] = 0;
    return 0;
}

/* NETD-01: a legacy (version 1) transport is refused, naming the QEMU option that fixes it */
static void netd01_legacy(TEST_STATE)
{
    reg_set(0x004, 1);
    assert_int_equal(nic_open(&n, &c, ip, 7, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "legacy (version 1)"));
    assert_non_null(strstr(err, "-global virtio-mmio.force-legacy=false"));
}

/* NETD-02: a device without VIRTIO_F_VERSION_1 is refused with that name, and marked FAILED */
static void netd02_no_version_1(TEST_STATE)
{
    reg_set(0x010, 1u << 5); /* VIRTIO_NET_F_MAC in both halves: bit 32 clear */
    assert_int_equal(nic_open(&n, &c, ip, 7, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "does not offer VIRTIO_F_VERSION_1"));
    assert_int_equal(regs[0x070 / 4], 128); /* STATUS_FAILED */
}

/* NETD-03: not a virtio transport, not a network device, a DMA region too small */
static void netd03_other_refusals(TEST_STATE)
{
    reg_set(0x008, 2);
    assert_int_equal(nic_open(&n, &c, ip, 7, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "not a network device"));
    reg_set(0x008, 1);
    c.dma_size = nic_dma_bytes() - 4096;
    assert_int_equal(nic_open(&n, &c, ip, 7, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "DMA region is too small"));
    reg_set(0x000, 0);
    assert_int_equal(nic_open(&n, &c, ip, 7, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "not a virtio-mmio transport"));
}

int main(void)
{
#define T_(f) cmocka_unit_test_setup(f, setup)
    const struct CMUnitTest tests[] = {
        T_(netd01_legacy),
        T_(netd02_no_version_1),
        T_(netd03_other_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
