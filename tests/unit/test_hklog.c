/* SPDX-License-Identifier: MIT */
/*
 * test_hklog.c — host unit tests of kernel/proc/hklog.c: a line from a housekeeping CPU is printed
 * at once; one from a dataplane CPU waits for the housekeeping worker (issue 9: a user fault
 * on a dataplane CPU was printed there, spending that CPU's time on the UART).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/cpu.h"
#include "kernel/hklog.h"
#include "fake.h"
#include "unit.h"

static void on_cpu(unsigned id, bool dataplane)
{
    cpus[id].id = id;
    cpus[id].arch.id = id;
    cpus[id].dataplane = dataplane;
    fake_cpu = &cpus[id];
}

/* The console as written, without the \r the console driver puts before each \n. */
static const char *console(void)
{
    static char out[sizeof(fake.console)];
    size_t n = 0;
    for (size_t i = 0; i < fake.console_len; i++) {
        if (fake.console[i] != '\r') {
            out[n++] = fake.console[i];
        }
    }
    out[n] = 0;
    return out;
}

static int setup(void **state)
{
    fake_reset();
    hklog_init();
    return 0;
}

/* HKL-01: on a housekeeping CPU the line is printed at once */
static void hkl01_housekeeping_prints_now(TEST_STATE)
{
    on_cpu(0, false);
    hklog("pid %d (%s) killed: %s", 7, "x", "data abort");
    assert_string_equal(console(), "pid 7 (x) killed: data abort\n");
}

/* HKL-02: on a dataplane CPU nothing is printed there; the flush (the worker) prints it,
 * with its call-path line, in order */
static void hkl02_dataplane_queues(TEST_STATE)
{
    uint64_t bt[HKLOG_BT_DEPTH] = {0x10, 0x20, 0};
    on_cpu(3, true);
    hklog("first");
    hklog_bt("  path:", bt, "second %d", 2);
    assert_int_equal(fake.console_len, 0);
    on_cpu(0, false);
    hklog_flush();
    assert_string_equal(console(), "first\nsecond 2\n  path: 10 20\n");
}

/* HKL-03: a full ring drops lines and says how many */
static void hkl03_full_ring_counts_drops(TEST_STATE)
{
    on_cpu(3, true);
    for (int i = 0; i < 40; i++) {
        hklog("line %d", i);
    }
    on_cpu(0, false);
    hklog_flush();
    assert_non_null(strstr(console(), "hklog: 8 lines dropped (the ring was full)\n"));
    assert_non_null(strstr(console(), "line 31\n"));
    assert_null(strstr(console(), "line 32\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(hkl01_housekeeping_prints_now, setup),
        cmocka_unit_test_setup(hkl02_dataplane_queues, setup),
        cmocka_unit_test_setup(hkl03_full_ring_counts_drops, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
