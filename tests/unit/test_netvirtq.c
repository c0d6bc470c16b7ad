/* SPDX-License-Identifier: MIT */
/*
 * test_netvirtq.c — host unit tests of user/net/virtq.c, the split virtqueue, with the test
 * playing the device: it reads the available ring and writes used entries the way virtio 1.2
 * (2.7) says a device does, including a device that misbehaves.
 * IDs: NETQ-0n.
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

#include "unit.h"
#include "virtq.h"

#define PA 0x48000000ull

static struct virtq q;
static uint8_t *mem;
static uint16_t dev_avail_seen, dev_used_idx; /* the device's own counters */

static int setup(void **state)
{
    mem = aligned_alloc(4096, virtq_bytes(256));
    memset(mem, 0xa5, virtq_bytes(256));
    dev_avail_seen = dev_used_idx = 0;
    return virtq_init(&q, 256, mem, PA);
}

static int teardown(void **state)
{
    free(mem);
    return 0;
}

/* The device takes the next available descriptor id, if the driver published one. */
static bool dev_take(uint16_t *id)
{
    if (q.avail->idx == dev_avail_seen) {
        return false;
    }
    *id = q.avail->ring[dev_avail_seen % q.size];
    dev_avail_seen++;
    return true;
}

/* The device returns descriptor id having written len bytes. */
static void dev_use(uint32_t id, uint32_t len)
{
    q.used->ring[dev_used_idx % q.size].id = id;
    q.used->ring[dev_used_idx % q.size].len = len;
    dev_used_idx++;
    q.used->idx = dev_used_idx;
}

/* NETQ-01: layout: three 4 KiB-aligned parts at the physical addresses the device is told,
 * all zero except VIRTQ_AVAIL_F_NO_INTERRUPT; bad sizes are refused */
static void netq01_layout(TEST_STATE)
{
    assert_int_equal(virtq_bytes(256), 3 * 4096);
    assert_int_equal(q.desc_pa, PA);
    assert_int_equal(q.avail_pa, PA + 4096);
    assert_int_equal(q.used_pa, PA + 8192);
    assert_ptr_equal((void *)q.avail, mem + 4096);
    assert_ptr_equal((void *)q.used, mem + 8192);
    assert_int_equal(q.avail->flags, VIRTQ_AVAIL_F_NO_INTERRUPT);
    assert_int_equal(q.avail->idx, 0);
    assert_int_equal(q.used->idx, 0);
    assert_int_equal(q.desc[17].addr, 0);
    struct virtq bad;
    assert_int_equal(virtq_init(&bad, 0, mem, PA), -1);
    assert_int_equal(virtq_init(&bad, 100, mem, PA), -1);
    assert_int_equal(virtq_init(&bad, 512, mem, PA), -1);
}

/* NETQ-02: what is pushed is invisible to the device until published; then it sees the ids
 * in order with their descriptors */
static void netq02_publish(TEST_STATE)
{
    uint16_t id;
    for (uint16_t i = 0; i < 4; i++) {
        virtq_set_desc(&q, i, PA + 0x10000 + i * 2048u, 2048, VIRTQ_DESC_F_WRITE);
        virtq_push(&q, i);
    }
    assert_false(dev_take(&id));
    virtq_publish(&q);
    for (uint16_t i = 0; i < 4; i++) {
        assert_true(dev_take(&id));
        assert_int_equal(id, i);
        assert_int_equal(q.desc[id].addr, PA + 0x10000 + i * 2048u);
        assert_int_equal(q.desc[id].len, 2048);
        assert_int_equal(q.desc[id].flags, VIRTQ_DESC_F_WRITE);
    }
    assert_false(dev_take(&id));
}

/* NETQ-03: 200,000 buffers round-trip (the 16-bit indexes wrap three times): the driver sees
 * each used entry once, in order, with its length */
static void netq03_round_trips(TEST_STATE)
{
    uint16_t id, got;
    uint32_t len;
    for (uint16_t i = 0; i < 256; i++) {
        virtq_push(&q, i);
    }
    virtq_publish(&q);
    for (unsigned n = 0; n < 200000; n++) {
        assert_true(dev_take(&id));
        dev_use(id, 60 + n % 1000);
        assert_int_equal(virtq_used_pending(&q), 1);
        virtq_pop_used(&q, &got, &len);
        assert_int_equal(got, id);
        assert_int_equal(len, 60 + n % 1000);
        assert_int_equal(virtq_used_pending(&q), 0);
        virtq_push(&q, got);
        virtq_publish(&q);
    }
}

/* NETQ-04: the driver notifies only when the device has not set VIRTQ_USED_F_NO_NOTIFY */
static void netq04_notify(TEST_STATE)
{
    assert_true(virtq_needs_notify(&q));
    q.used->flags = VIRTQ_USED_F_NO_NOTIFY;
    assert_false(virtq_needs_notify(&q));
}

/* NETQ-05: a misbehaving device: a used index far ahead counts as one full ring, never more;
 * a descriptor id out of range comes back inside the ring */
static void netq05_hostile_device(TEST_STATE)
{
    uint16_t id;
    uint32_t len;
    q.used->idx = 40000;
    assert_int_equal(virtq_used_pending(&q), 256);
    q.used->ring[0].id = 0xfffff;
    virtq_pop_used(&q, &id, &len);
    assert_true(id < 256);
}

/* NETQ-06: the free stack hands out every descriptor once, then none, and takes them back */
static void netq06_free_stack(TEST_STATE)
{
    uint16_t id;
    bool seen[256] = {false};
    for (int i = 0; i < 256; i++) {
        assert_true(virtq_get_free(&q, &id));
        assert_false(seen[id]);
        seen[id] = true;
    }
    assert_false(virtq_get_free(&q, &id));
    virtq_put_free(&q, 7);
    assert_true(virtq_get_free(&q, &id));
    assert_int_equal(id, 7);
}

int main(void)
{
#define T_(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T_(netq01_layout), T_(netq02_publish),        T_(netq03_round_trips),
        T_(netq04_notify), T_(netq05_hostile_device), T_(netq06_free_stack),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
