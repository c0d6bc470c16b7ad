/* SPDX-License-Identifier: MIT */
/*
 * test_bootargs.c — host unit tests of kernel/lib/bootargs.c: the command line and the
 * housekeeping/dataplane partition.
 *
 * Each test has a stable ID (BA-nn for bootargs_parse, PD-nn for partition_decide) and proves
 * one behaviour.  Warnings are compared as exact text: they are what a user reads at boot.
 * The struct under test sits between guard bytes, so a write past it fails a test even where
 * ASan (which sees only whole objects) cannot.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/bootargs.h"
#include "kernel/partition.h"
#include "masks.h"
#include "unit.h"

/* cmocka passes every test a state pointer; these tests need none. */
#define GUARD_BYTE 0xa5

static struct {
    unsigned char before[64];
    struct bootargs ba;
    unsigned char after[64];
} g;

/* Parse s (a C string, len = strlen) into g.ba, which starts out full of garbage. */
static struct bootargs *parse_len(const char *s, size_t len)
{
    memset(&g, GUARD_BYTE, sizeof(g));
    bootargs_parse(s, len, &g.ba);
    for (size_t i = 0; i < sizeof(g.before); i++) {
        if (g.before[i] != GUARD_BYTE || g.after[i] != GUARD_BYTE) {
            fail_msg("guard byte %zu around struct bootargs overwritten", i);
        }
    }
    return &g.ba;
}

static struct bootargs *parse(const char *s)
{
    return parse_len(s, s ? strlen(s) : 0);
}

/* Every warning slot in use is NUL-terminated inside its slot. */
static void check_warn_slots(const struct bootargs *ba)
{
    assert_in_range(ba->nwarn, 0, BOOTARGS_MAX_WARN);
    for (int i = 0; i < ba->nwarn; i++) {
        if (memchr(ba->warn[i], '\0', BOOTARGS_WARN_LEN) == NULL) {
            fail_msg("warn[%d] is not NUL-terminated", i);
        }
    }
}

/* The warnings are exactly the NULL-terminated list given. */
static void expect_warnings(const struct bootargs *ba, ...)
{
    va_list ap;
    const char *want;
    int i = 0;

    check_warn_slots(ba);
    va_start(ap, ba);
    while ((want = va_arg(ap, const char *)) != NULL) {
        if (i >= ba->nwarn) {
            fail_msg("only %d warnings; missing \"%s\"", ba->nwarn, want);
        }
        assert_string_equal(ba->warn[i], want);
        i++;
    }
    va_end(ap);
    if (i != ba->nwarn) {
        fail_msg("%d warnings, want %d; first extra: \"%s\"", ba->nwarn, i, ba->warn[i]);
    }
}

/* One warning, exactly this text, for this command line. */
static struct bootargs *expect_one_warning(const char *cmdline, const char *want)
{
    struct bootargs *ba = parse(cmdline);

    expect_warnings(ba, want, NULL);
    return ba;
}

/* The init arguments are exactly the NULL-terminated list given, all inside argbuf. */
static void expect_args(const struct bootargs *ba, ...)
{
    va_list ap;
    const char *want;
    int i = 0;

    va_start(ap, ba);
    while ((want = va_arg(ap, const char *)) != NULL) {
        if (i >= ba->init_argc) {
            fail_msg("init_argc %d; missing argument \"%s\"", ba->init_argc, want);
        }
        assert_string_equal(ba->init_argv[i], want);
        i++;
    }
    va_end(ap);
    assert_int_equal(ba->init_argc, i);
    for (i = 0; i < ba->init_argc; i++) {
        const char *a = ba->init_argv[i];
        assert_true(a >= ba->argbuf && a + strlen(a) < ba->argbuf + sizeof(ba->argbuf));
    }
    for (; i < BOOTARGS_MAX_INIT_ARGS; i++) {
        assert_null(ba->init_argv[i]);
    }
}

static void expect_defaults(const struct bootargs *ba)
{
    assert_false(ba->has_dataplane);
    assert_int_equal(low64(ba->dataplane), 0);
    assert_int_equal(ba->tick, TICK_NOHZ);
    assert_int_equal(ba->hz, 100);
    assert_false(ba->tick_residual);
    assert_false(ba->isol_debug);
    assert_false(ba->quiet);
    assert_int_equal(ba->debug_fault, DEBUG_FAULT_NONE);
    assert_int_equal(ba->debug_exit, -1);
    assert_string_equal(ba->init_path, "");
    expect_args(ba, NULL);
    expect_warnings(ba, NULL);
}

/* ------------------------------------------------------------------ defaults, parameters */

/* BA-01: NULL, empty and blank command lines give the defaults and no warnings */
static void ba01_defaults(TEST_STATE)
{
    expect_defaults(parse(NULL));
    expect_defaults(parse_len(NULL, 100));
    expect_defaults(parse(""));
    expect_defaults(parse(" \t\n\r "));
}

/* BA-02: dataplane=LIST sets the requested set */
static void ba02_dataplane(TEST_STATE)
{
    struct bootargs *ba = parse("dataplane=1-3");

    assert_true(ba->has_dataplane);
    assert_int_equal(low64(ba->dataplane), 0xe);
    expect_warnings(ba, NULL);
    ba = parse("dataplane=2-9:1/4,63");
    assert_int_equal(low64(ba->dataplane), 0x8000000000000044ull);
    ba = parse("dataplane=1-511"); /* past 64 CPUs: every word of the set */
    assert_true(ba->has_dataplane);
    assert_true(cpumask_equal(ba->dataplane, cpumask_andnot(cpumask_first_n(512), M64(1))));
    ba = parse("dataplane=63-64,122-123,511");
    assert_int_equal(cpumask_weight(ba->dataplane), 5);
    assert_true(cpumask_has(ba->dataplane, 64) && cpumask_has(ba->dataplane, 123) &&
                cpumask_has(ba->dataplane, 511) && !cpumask_has(ba->dataplane, 124));
    expect_warnings(ba, NULL);
}

/* BA-03: nohz_full= and isolcpus= are aliases of dataplane= */
static void ba03_dataplane_aliases(TEST_STATE)
{
    struct bootargs *ba = parse("nohz_full=2,3");

    assert_true(ba->has_dataplane);
    assert_int_equal(low64(ba->dataplane), 0xc);
    ba = parse("isolcpus=1-2");
    assert_true(ba->has_dataplane);
    assert_int_equal(low64(ba->dataplane), 0x6);
    expect_warnings(ba, NULL);
}

/* BA-04: isolcpus= skips Linux's leading flag words in any combination */
static void ba04_isolcpus_flags(TEST_STATE)
{
    assert_int_equal(low64(parse("isolcpus=nohz,domain,1-3")->dataplane), 0xe);
    assert_int_equal(low64(parse("isolcpus=managed_irq,domain,nohz,5")->dataplane), 0x20);
    assert_int_equal(low64(parse("isolcpus=domain,managed_irq,2")->dataplane), 0x4);
    assert_int_equal(low64(parse("isolcpus=nohz,nohz,2")->dataplane), 0x4);
    expect_warnings(&g.ba, NULL);
    expect_one_warning("isolcpus=nohz",
                       "bootargs: isolcpus=nohz is not a CPU list; no dataplane CPUs");
    expect_one_warning("isolcpus=foo,1",
                       "bootargs: isolcpus=foo,1 is not a CPU list; no dataplane CPUs");
    /* Flag words are isolcpus' only: dataplane= does not skip them. */
    expect_one_warning("dataplane=nohz,1",
                       "bootargs: dataplane=nohz,1 is not a CPU list; no dataplane CPUs");
}

/* NEW-06: dataplane=, nohz_full= and isolcpus= given together: the set is the union of their
 * lists, and when the lists differ one line says so and what is used (issue 21, item 5);
 * equal lists (the usual nohz_full=L isolcpus=nohz,domain,L) say nothing.  A name given twice
 * replaces its own list only; a bad list leaves the union as it was. */
static void new06_dataplane_names_union(TEST_STATE)
{
    struct bootargs *ba = expect_one_warning(
        "nohz_full=2-3 isolcpus=1", "bootargs: nohz_full=2-3 and isolcpus=1 differ; using their "
                                    "union, dataplane=1-3 (a CPU any of them names leaves "
                                    "housekeeping)");
    assert_true(ba->has_dataplane);
    assert_int_equal(low64(ba->dataplane), 0xe);
    ba = parse("nohz_full=2-3 isolcpus=nohz,domain,managed_irq,2-3");
    expect_warnings(ba, NULL);
    assert_int_equal(low64(ba->dataplane), 0xc);
    ba = expect_one_warning("isolcpus=5 dataplane=1 nohz_full=2 dataplane=3",
                            "bootargs: dataplane=3, nohz_full=2 and isolcpus=5 differ; using their "
                            "union, dataplane=2-3,5 (a CPU any of them names leaves housekeeping)");
    assert_int_equal(low64(ba->dataplane), 0x2c);
    ba = parse("nohz_full=2-3 isolcpus=x");
    assert_int_equal(low64(ba->dataplane), 0xc);
    expect_warnings(ba, "bootargs: isolcpus=x is not a CPU list; using dataplane=2-3", NULL);
    ba = parse("dataplane=1-2 nohz_full=1-2 isolcpus=1-2");
    expect_warnings(ba, NULL);
    assert_int_equal(low64(ba->dataplane), 0x6);
}

/* BA-05: tick=nohz|periodic */
static void ba05_tick(TEST_STATE)
{
    assert_int_equal(parse("tick=periodic")->tick, TICK_PERIODIC);
    assert_int_equal(parse("tick=nohz")->tick, TICK_NOHZ);
    expect_warnings(&g.ba, NULL);
}

/* BA-06: hz= accepts 1..1000 */
static void ba06_hz(TEST_STATE)
{
    assert_int_equal(parse("hz=1")->hz, 1);
    assert_int_equal(parse("hz=1000")->hz, 1000);
    assert_int_equal(parse("hz=250")->hz, 250);
    assert_int_equal(parse("hz=0250")->hz, 250);
    expect_warnings(&g.ba, NULL);
}

/* BA-07: flags and their Linux names, bare or =0/=1 */
static void ba07_flags(TEST_STATE)
{
    struct bootargs *ba = parse("tick_residual=1 isol_debug=1 quiet");

    assert_true(ba->tick_residual);
    assert_true(ba->isol_debug);
    assert_true(ba->quiet);
    ba = parse("debug_1hz_tick task_isolation_debug quiet=1");
    assert_true(ba->tick_residual);
    assert_true(ba->isol_debug);
    assert_true(ba->quiet);
    assert_false(ba->syscall_debug);
    ba = parse("syscall_debug");
    assert_true(ba->syscall_debug);
    ba = parse("tick_residual isol_debug quiet tick_residual=0 isol_debug=0 quiet=0");
    assert_false(ba->tick_residual);
    assert_false(ba->isol_debug);
    assert_false(ba->quiet);
    expect_warnings(ba, NULL);
}

/* BA-08: init=PATH, plain, value-quoted and whole-quoted */
static void ba08_init_path(TEST_STATE)
{
    assert_string_equal(parse("init=/bin/osnoise")->init_path, "/bin/osnoise");
    assert_string_equal(parse("init=\"/bin/x\"")->init_path, "/bin/x");
    assert_string_equal(parse("\"init=/bin/y\"")->init_path, "/bin/y");
    assert_string_equal(parse("init=\"/bin/my prog\" quiet")->init_path, "/bin/my prog");
    assert_true(g.ba.quiet);
    expect_warnings(&g.ba, NULL);
}

/* BA-09: debug_fault=data|undef|overflow and debug_exit=0..255 */
static void ba09_debug_params(TEST_STATE)
{
    assert_int_equal(parse("debug_fault=data")->debug_fault, DEBUG_FAULT_DATA);
    assert_int_equal(parse("debug_fault=undef")->debug_fault, DEBUG_FAULT_UNDEF);
    assert_int_equal(parse("debug_fault=overflow")->debug_fault, DEBUG_FAULT_OVERFLOW);
    assert_int_equal(parse("debug_fault=write-text")->debug_fault, DEBUG_FAULT_WRITE_TEXT);
    assert_int_equal(parse("debug_fault=exec-data")->debug_fault, DEBUG_FAULT_EXEC_DATA);
    assert_int_equal(parse("debug_fault=guard")->debug_fault, DEBUG_FAULT_GUARD);
    assert_int_equal(parse("debug_exit=0")->debug_exit, 0);
    assert_int_equal(parse("debug_exit=255")->debug_exit, 255);
    expect_warnings(&g.ba, NULL);
}

/* BA-10: every parameter at once, separated by any blanks */
static void ba10_all_together(TEST_STATE)
{
    struct bootargs *ba = parse("\tdataplane=2-7 tick=periodic\nhz=250  tick_residual=1\r\n"
                                "isol_debug=1 quiet init=/bin/osnoise debug_fault=undef "
                                "debug_exit=7 -- -c 2-7 -t 5");

    assert_int_equal(low64(ba->dataplane), 0xfc);
    assert_int_equal(ba->tick, TICK_PERIODIC);
    assert_int_equal(ba->hz, 250);
    assert_true(ba->tick_residual && ba->isol_debug && ba->quiet);
    assert_string_equal(ba->init_path, "/bin/osnoise");
    assert_int_equal(ba->debug_fault, DEBUG_FAULT_UNDEF);
    assert_int_equal(ba->debug_exit, 7);
    expect_args(ba, "-c", "2-7", "-t", "5", NULL);
    expect_warnings(ba, NULL);
}

/* ------------------------------------------------------------------ bad values */

/* BA-11: bad hz= values warn exactly and keep hz=100 */
static void ba11_bad_hz(TEST_STATE)
{
    expect_one_warning("hz=0", "bootargs: hz=0 out of range 1..1000; using hz=100");
    expect_one_warning("hz=1001", "bootargs: hz=1001 out of range 1..1000; using hz=100");
    expect_one_warning("hz=99999999999999999999",
                       "bootargs: hz=99999999999999999999 out of range 1..1000; using hz=100");
    expect_one_warning("hz=abc", "bootargs: hz=abc is not a number; using hz=100");
    expect_one_warning("hz=-5", "bootargs: hz=-5 is not a number; using hz=100");
    expect_one_warning("hz=", "bootargs: hz= is not a number; using hz=100");
    expect_one_warning("hz", "bootargs: hz= is not a number; using hz=100");
    assert_int_equal(g.ba.hz, 100);
}

/* BA-12: bad dataplane lists warn exactly and leave no dataplane CPUs */
static void ba12_bad_dataplane(TEST_STATE)
{
    struct bootargs *ba;

    expect_one_warning("dataplane=2-x",
                       "bootargs: dataplane=2-x is not a CPU list; no dataplane CPUs");
    ba = expect_one_warning(
        "dataplane=999",
        "bootargs: dataplane=999: CPU 999 does not exist (max 511); no dataplane CPUs");
    assert_false(ba->has_dataplane);
    assert_int_equal(low64(ba->dataplane), 0);
    expect_one_warning(
        "nohz_full=0-512",
        "bootargs: nohz_full=0-512: CPU 512 does not exist (max 511); no dataplane CPUs");
    expect_one_warning("dataplane=99999999999999999999",
                       "bootargs: dataplane=99999999999999999999: CPU number too large (max 511); "
                       "no dataplane CPUs");
    expect_one_warning("dataplane=", "bootargs: dataplane= is not a CPU list; no dataplane CPUs");
    expect_one_warning("dataplane", "bootargs: dataplane= is not a CPU list; no dataplane CPUs");
    expect_one_warning("dataplane=3-1",
                       "bootargs: dataplane=3-1 is not a CPU list; no dataplane CPUs");
}

/* BA-13: a bad dataplane= after a good one keeps the good one and says so */
static void ba13_bad_dataplane_keeps_earlier(TEST_STATE)
{
    struct bootargs *ba =
        expect_one_warning("dataplane=1-3 dataplane=x",
                           "bootargs: dataplane=x is not a CPU list; using dataplane=1-3");

    assert_true(ba->has_dataplane);
    assert_int_equal(low64(ba->dataplane), 0xe);
}

/* BA-14: bad tick= values warn exactly; values are case-sensitive */
static void ba14_bad_tick(TEST_STATE)
{
    expect_one_warning("tick=fast", "bootargs: tick=fast unknown (nohz|periodic); using tick=nohz");
    expect_one_warning("tick=NOHZ", "bootargs: tick=NOHZ unknown (nohz|periodic); using tick=nohz");
    expect_one_warning("tick=periodic tick=",
                       "bootargs: tick= unknown (nohz|periodic); using tick=periodic");
    assert_int_equal(g.ba.tick, TICK_PERIODIC);
}

/* BA-15: bad flag values warn exactly, naming the flag's own name for the value in effect */
static void ba15_bad_flags(TEST_STATE)
{
    expect_one_warning("isol_debug=yes",
                       "bootargs: isol_debug=yes is not 0 or 1; using isol_debug=0");
    expect_one_warning("task_isolation_debug task_isolation_debug=2",
                       "bootargs: task_isolation_debug=2 is not 0 or 1; using isol_debug=1");
    expect_one_warning("debug_1hz_tick=on",
                       "bootargs: debug_1hz_tick=on is not 0 or 1; using tick_residual=0");
    expect_one_warning("quiet=", "bootargs: quiet= is not 0 or 1; using quiet=0");
}

/* BA-16: bad init= values warn exactly; a 63-byte path is the longest accepted */
static void ba16_bad_init(TEST_STATE)
{
    char cmd[128];
    char path[BOOTARGS_PATH_MAX + 1];

    expect_one_warning("init=", "bootargs: init= is empty; using /bin/sh");
    expect_one_warning("init=\"\"", "bootargs: init= is empty; using /bin/sh");
    expect_one_warning("init=/bin/a init=", "bootargs: init= is empty; using /bin/a");
    memset(path, 'p', sizeof(path));
    path[0] = '/';
    path[BOOTARGS_PATH_MAX - 1] = '\0'; /* 63 characters */
    snprintf(cmd, sizeof(cmd), "init=%s", path);
    assert_string_equal(parse(cmd)->init_path, path);
    expect_warnings(&g.ba, NULL);
    path[BOOTARGS_PATH_MAX - 1] = 'p';
    path[BOOTARGS_PATH_MAX] = '\0'; /* 64 characters */
    snprintf(cmd, sizeof(cmd), "init=%s", path);
    expect_one_warning(cmd, "bootargs: init= path too long; using /bin/sh");
    assert_string_equal(g.ba.init_path, "");
}

/* BA-17: bad debug_fault= and debug_exit= values warn exactly */
/* BA-40: watchdog=MS and max_procs=N (issue 9): in range they are taken; out of range
 * the default stays, with a warning; the host build is a checked build: watchdog 1000 */
static void ba40_watchdog_and_max_procs(TEST_STATE)
{
    assert_int_equal(parse("")->watchdog_ms, 1000);
    assert_int_equal(parse("")->max_procs, 4096);
    assert_int_equal(parse("watchdog=250")->watchdog_ms, 250);
    assert_int_equal(parse("watchdog=0")->watchdog_ms, 0);
    assert_int_equal(parse("max_procs=16")->max_procs, 16);
    expect_one_warning("watchdog=2", "bootargs: watchdog=2 below 4 ms; using watchdog=1000");
    expect_one_warning("watchdog=60001",
                       "bootargs: watchdog=60001 out of range 0..60000; using watchdog=1000");
    expect_one_warning("max_procs=15",
                       "bootargs: max_procs=15 out of range 16..32767; using max_procs=4096");
}

static void ba17_bad_debug_params(TEST_STATE)
{
    expect_one_warning(
        "debug_fault=segv",
        "bootargs: debug_fault=segv unknown "
        "(data|undef|overflow|write-text|exec-data|guard|user-read|irqs-off|lock-order|bad-frame); "
        "no debug_fault");
    expect_one_warning(
        "debug_fault=data debug_fault=",
        "bootargs: debug_fault= unknown (data|undef|overflow|write-text|exec-data|guard|user-read|"
        "irqs-off|lock-order|bad-frame); "
        "using debug_fault=data");
    expect_one_warning("debug_exit=256",
                       "bootargs: debug_exit=256 out of range 0..255; no debug_exit");
    expect_one_warning("debug_exit=x", "bootargs: debug_exit=x is not a number; no debug_exit");
    expect_one_warning("debug_exit=3 debug_exit=-1",
                       "bootargs: debug_exit=-1 is not a number; using debug_exit=3");
    assert_int_equal(g.ba.debug_exit, 3);
}

/* BA-18: unknown parameters are named and ignored; names are case-sensitive */
static void ba18_unknown(TEST_STATE)
{
    expect_one_warning("foo", "bootargs: unknown parameter 'foo' ignored");
    expect_one_warning("foo=bar", "bootargs: unknown parameter 'foo=bar' ignored");
    expect_one_warning("HZ=5", "bootargs: unknown parameter 'HZ=5' ignored");
    expect_one_warning("--x", "bootargs: unknown parameter '--x' ignored");
    expect_one_warning("=5", "bootargs: unknown parameter '=5' ignored");
    expect_one_warning("quiet2", "bootargs: unknown parameter 'quiet2' ignored");
}

/* BA-19: user text in a warning is clipped to 32 characters and control bytes shown as '?' */
static void ba19_warning_text_is_clipped(TEST_STATE)
{
    expect_one_warning("abcdefghijklmnopqrstuvwxyz0123456789=1",
                       "bootargs: unknown parameter 'abcdefghijklmnopqrstuvwxyz012...' ignored");
    expect_one_warning("a\x01\x7f\xff", "bootargs: unknown parameter 'a?\?\?' ignored");
    expect_one_warning("hz=1234567890123456789012345678901234567890",
                       "bootargs: hz=12345678901234567890123456789... out of range 1..1000; "
                       "using hz=100");
}

/* BA-20: later parameters override earlier ones */
static void ba20_override_order(TEST_STATE)
{
    struct bootargs *ba = parse("hz=200 hz=300 dataplane=1 dataplane=2-3 tick=periodic "
                                "tick=nohz init=/a init=/b debug_exit=1 debug_exit=2");

    assert_int_equal(ba->hz, 300);
    assert_int_equal(low64(ba->dataplane), 0xc);
    assert_int_equal(ba->tick, TICK_NOHZ);
    assert_string_equal(ba->init_path, "/b");
    assert_int_equal(ba->debug_exit, 2);
    expect_warnings(ba, NULL);
    ba = parse("dataplane=1-3 dataplane=none");
    assert_true(ba->has_dataplane);
    assert_int_equal(low64(ba->dataplane), 0);
    expect_one_warning("hz=300 hz=0", "bootargs: hz=0 out of range 1..1000; using hz=300");
    assert_int_equal(g.ba.hz, 300);
}

/* ------------------------------------------------------------------ quoting, init arguments */

/* BA-21: the example from the design: one shell-quoted argument keeps its blanks and ';' */
static void ba21_init_args_example(TEST_STATE)
{
    struct bootargs *ba = parse("init=/bin/sh -- -c 'load -t 8 & isol -c 3 -t 5; echo done'");

    assert_string_equal(ba->init_path, "/bin/sh");
    expect_args(ba, "-c", "load -t 8 & isol -c 3 -t 5; echo done", NULL);
    expect_warnings(ba, NULL);
}

/* BA-22: shell quoting: '' literal, "" with \" and \\, backslash outside quotes, empty words */
static void ba22_shell_quoting(TEST_STATE)
{
    struct bootargs *ba = parse("-- a 'b c' \"d \\\"e\\\" \\\\f\" g\\ h \"x\\y\" '' a''b "
                                "'it'\\''s' 'q\\' \"$HOME\" end\\");

    expect_args(ba, "a", "b c", "d \"e\" \\f", "g h", "x\\y", "", "ab", "it's", "q\\", "$HOME",
                "end\\", NULL);
    expect_warnings(ba, NULL);
}

/* BA-23: blanks of any kind separate init arguments; leading and trailing blanks vanish */
static void ba23_init_arg_blanks(TEST_STATE)
{
    expect_args(parse("--\t one\ttwo\nthree  \r\n"), "one", "two", "three", NULL);
    expect_args(parse("-- 'tab\there' \"nl\nhere\""), "tab\there", "nl\nhere", NULL);
}

/* BA-24: an unterminated quote warns and takes the rest of the line as one word */
static void ba24_unterminated_init_quote(TEST_STATE)
{
    static const char *const want =
        "bootargs: unterminated quote in init arguments; rest taken as one word";

    expect_args(expect_one_warning("-- a 'b c  ", want), "a", "b c  ", NULL);
    expect_args(expect_one_warning("-- a \"b 'c", want), "a", "b 'c", NULL);
    expect_args(expect_one_warning("-- x\"", want), "x", NULL);
}

/* BA-25: after "--" nothing is a kernel parameter; "--" alone or at the end gives no args */
static void ba25_double_dash(TEST_STATE)
{
    struct bootargs *ba = parse("quiet -- hz=5 -- dataplane=1");

    assert_true(ba->quiet);
    assert_int_equal(ba->hz, 100);
    assert_false(ba->has_dataplane);
    assert_string_equal(ba->init_path, "");
    expect_args(ba, "hz=5", "--", "dataplane=1", NULL);
    expect_args(parse("--"), NULL);
    expect_args(parse("init=/bin/x --   "), NULL);
    expect_warnings(&g.ba, NULL);
}

/* BA-26: more than 16 init arguments: the first 16 are kept, the rest dropped with a warning */
static void ba26_too_many_init_args(TEST_STATE)
{
    struct bootargs *ba = expect_one_warning(
        "-- 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19",
        "bootargs: init arguments over the limit (16 words, 512 bytes); last 4 dropped");

    expect_args(ba, "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14",
                "15", NULL);
    expect_args(parse("-- 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15"), "0", "1", "2", "3", "4", "5",
                "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", NULL);
    expect_warnings(&g.ba, NULL);
}

/* BA-27: init arguments over 512 bytes: words that do not fit, and all after them, dropped */
static void ba27_argbuf_overflow(TEST_STATE)
{
    char cmd[4096];
    char word[600];
    struct bootargs *ba;

    memset(word, 'w', sizeof(word));
    word[200] = '\0';
    snprintf(cmd, sizeof(cmd), "-- %s %s %s x %s", word, word, word, word);
    ba = expect_one_warning(
        cmd, "bootargs: init arguments over the limit (16 words, 512 bytes); last 3 dropped");
    expect_args(ba, word, word, NULL);

    word[200] = 'w';
    word[511] = '\0'; /* 511 bytes + NUL fill argbuf exactly */
    snprintf(cmd, sizeof(cmd), "-- %s", word);
    expect_args(parse(cmd), word, NULL);
    expect_warnings(&g.ba, NULL);

    word[511] = 'w';
    word[512] = '\0';
    snprintf(cmd, sizeof(cmd), "-- %s", word);
    expect_args(expect_one_warning(cmd, "bootargs: init arguments over the limit (16 words, "
                                        "512 bytes); last 1 dropped"),
                NULL);
}

/* BA-28: quoted kernel parameters keep blanks; an unterminated quote swallows the rest */
static void ba28_quoted_params(TEST_STATE)
{
    struct bootargs *ba = parse("dataplane=\"1-3\" \"hz=5\"");

    assert_int_equal(low64(ba->dataplane), 0xe);
    assert_int_equal(ba->hz, 5);
    expect_warnings(ba, NULL);
    ba = parse("init=\"/bin/x hz=5");
    expect_warnings(ba,
                    "bootargs: unterminated quote in 'init=\"/bin/x hz=5'; rest of line taken as "
                    "its value",
                    NULL);
    assert_string_equal(ba->init_path, "/bin/x hz=5");
    assert_int_equal(ba->hz, 100);
}

/* BA-29: only len bytes are read; the buffer need not be NUL-terminated; a NUL ends early */
static void ba29_length_bounds(TEST_STATE)
{
    char exact[6] = {'h', 'z', '=', '2', '5', '0'}; /* no NUL: ASan catches a read past it */
    char *heap = malloc(sizeof(exact));
    struct bootargs *ba;

    memcpy(heap, exact, sizeof(exact));
    assert_int_equal(parse_len(heap, sizeof(exact))->hz, 250);
    assert_int_equal(parse_len(heap, 5)->hz, 25);
    free(heap);
    ba = parse_len("quiet hz=5", 5);
    assert_true(ba->quiet);
    assert_int_equal(ba->hz, 100);
    assert_int_equal(parse_len("hz=5\0hz=7", 9)->hz, 5);
    expect_args(parse_len("-- 'abc' def", 6), "ab", NULL); /* cut inside the quote */
    expect_warnings(&g.ba, "bootargs: unterminated quote in init arguments; rest taken as one word",
                    NULL);
}

/* BA-30: a 10 KB command line is parsed without trouble */
static void ba30_ten_kilobytes(TEST_STATE)
{
    enum { LEN = 10 * 1024 };
    char *cmd = malloc(LEN + 1);
    struct bootargs *ba;

    memset(cmd, ' ', LEN);
    for (size_t i = 0; i + 6 <= LEN; i += 6) {
        memcpy(cmd + i, "quiet", 5);
    }
    cmd[LEN] = '\0';
    ba = parse(cmd);
    assert_true(ba->quiet);
    expect_warnings(ba, NULL);

    memset(cmd, 'z', LEN); /* one 10 KB unknown parameter */
    expect_one_warning(cmd, "bootargs: unknown parameter 'zzzzzzzzzzzzzzzzzzzzzzzzzzzzz...' "
                            "ignored");

    memcpy(cmd, "init=", 5); /* one 10 KB init path */
    expect_one_warning(cmd, "bootargs: init= path too long; using /bin/sh");

    memcpy(cmd, "-- '", 4); /* one 10 KB init argument, quote never closed */
    ba = parse(cmd);
    expect_warnings(ba, "bootargs: unterminated quote in init arguments; rest taken as one word",
                    "bootargs: init arguments over the limit (16 words, 512 bytes); last 1 dropped",
                    NULL);
    expect_args(ba, NULL);
    free(cmd);
}

/* BA-31: 100 bad parameters: 7 warnings shown, the 8th counts the other 93 */
static void ba31_warnings_capped(TEST_STATE)
{
    char cmd[1024];
    size_t n = 0;
    struct bootargs *ba;

    for (int i = 0; i < 100; i++) {
        n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, "p%d ", i);
    }
    ba = parse(cmd);
    assert_int_equal(ba->nwarn, BOOTARGS_MAX_WARN);
    check_warn_slots(ba);
    for (int i = 0; i < BOOTARGS_MAX_WARN - 1; i++) {
        char want[BOOTARGS_WARN_LEN];
        snprintf(want, sizeof(want), "bootargs: unknown parameter 'p%d' ignored", i);
        assert_string_equal(ba->warn[i], want);
    }
    assert_string_equal(ba->warn[BOOTARGS_MAX_WARN - 1], "bootargs: 93 more warnings not shown");
}

/* BA-32: exactly 8 problems are all shown; 9 show 7 and "2 more" */
static void ba32_warning_cap_edge(TEST_STATE)
{
    struct bootargs *ba = parse("a b c d e f g h");

    assert_int_equal(ba->nwarn, 8);
    assert_string_equal(ba->warn[7], "bootargs: unknown parameter 'h' ignored");
    ba = parse("a b c d e f g h i");
    assert_int_equal(ba->nwarn, 8);
    assert_string_equal(ba->warn[6], "bootargs: unknown parameter 'g' ignored");
    assert_string_equal(ba->warn[7], "bootargs: 2 more warnings not shown");
}

/* BA-33: the longest possible warnings still fit their slot */
static void ba33_longest_warnings_fit(TEST_STATE)
{
    char cmd[512];
    char list[200];
    struct bootargs *ba;

    /* Longest list text: 1,3,5,...,63 is 90 characters, in the "using dataplane=" tail. */
    cpulist_format(M64(0xaaaaaaaaaaaaaaaaull), list, sizeof(list));
    snprintf(cmd, sizeof(cmd),
             "dataplane=%s isolcpus=managed_irq,99999999999999999999999999999999999", list);
    ba = parse(cmd);
    assert_int_equal(ba->nwarn, 1);
    check_warn_slots(ba);
    assert_int_equal(strlen(ba->warn[0]), BOOTARGS_WARN_LEN - 1);
    assert_memory_equal(ba->warn[0], "bootargs: isolcpus=managed_irq,99999999999999999...: CPU",
                        56);
}

/* BA-34: parsing twice gives the second line's result only */
static void ba34_reparse_reinitialises(TEST_STATE)
{
    static const char first[] = "hz=5 quiet dataplane=1 bogus -- a b";
    struct bootargs ba;

    bootargs_parse(first, strlen(first), &ba);
    assert_int_equal(ba.nwarn, 1);
    bootargs_parse("", 0, &ba);
    expect_defaults(&ba);
}

/* ------------------------------------------------------------------ partition_decide */

struct split {
    cpumask_t hk, dp;
    int n;
    char msg[4][BOOTARGS_WARN_LEN];
};

/* Partition `cmdline` on `ncpus` and check the invariants every answer must keep. */
static struct split decide(const char *cmdline, unsigned ncpus)
{
    struct bootargs *ba = parse(cmdline);
    struct split s;
    cpumask_t all = cpumask_first_n(ncpus);

    memset(&s, 0, sizeof(s));
    s.n = partition_decide(ba, ncpus, &s.hk, &s.dp, s.msg, 4);
    if (!cpumask_equal(cpumask_or(s.hk, s.dp), all) || cpumask_intersects(s.hk, s.dp) ||
        !cpumask_has(s.hk, 0)) {
        fail_msg("\"%s\" on %u CPUs: hk %#llx dp %#llx (low words)", cmdline, ncpus,
                 (unsigned long long)s.hk.w[0], (unsigned long long)s.dp.w[0]);
    }
    return s;
}

static void expect_msgs(const struct split *s, ...)
{
    va_list ap;
    const char *want;
    int i = 0;

    va_start(ap, s);
    while ((want = va_arg(ap, const char *)) != NULL) {
        if (i >= s->n) {
            fail_msg("only %d messages; missing \"%s\"", s->n, want);
        }
        assert_string_equal(s->msg[i], want);
        i++;
    }
    va_end(ap);
    if (i != s->n) {
        fail_msg("%d messages, want %d; first extra: \"%s\"", s->n, i, s->msg[i]);
    }
}

/* PD-01: no request: every CPU is housekeeping, nothing said */
static void pd01_no_request(TEST_STATE)
{
    struct split s = decide("", 4);

    assert_int_equal(low64(s.hk), 0xf);
    assert_int_equal(low64(s.dp), 0);
    expect_msgs(&s, NULL);
}

/* PD-02: a valid request is used as given, nothing said */
static void pd02_valid_request(TEST_STATE)
{
    struct split s = decide("dataplane=1-3", 4);

    assert_int_equal(low64(s.hk), 0x1);
    assert_int_equal(low64(s.dp), 0xe);
    expect_msgs(&s, NULL);
    s = decide("dataplane=none", 4);
    assert_int_equal(low64(s.dp), 0);
    expect_msgs(&s, NULL);
}

/* PD-03: CPU 0 requested: removed, the rest used */
static void pd03_cpu0_requested(TEST_STATE)
{
    struct split s = decide("dataplane=0,2-3", 4);

    assert_int_equal(low64(s.dp), 0xc);
    expect_msgs(&s, "partition: CPU 0 is always housekeeping; dataplane 2-3 used instead", NULL);
}

/* PD-04: CPUs the machine lacks are dropped; if none remain, that is said too */
static void pd04_nonexistent(TEST_STATE)
{
    struct split s = decide("dataplane=1-5", 4);

    assert_int_equal(low64(s.dp), 0xe);
    expect_msgs(&s, "partition: CPUs 4-5 do not exist on this 4-CPU machine; dropped", NULL);
    s = decide("dataplane=5", 4);
    assert_int_equal(low64(s.dp), 0);
    expect_msgs(&s, "partition: CPU 5 does not exist on this 4-CPU machine; dropped",
                "partition: no dataplane CPUs remain", NULL);
}

/* PD-05: every CPU requested: CPU 0 stays housekeeping, the rest are dataplane */
static void pd05_every_cpu(TEST_STATE)
{
    struct split s = decide("dataplane=0-7", 8);

    assert_int_equal(low64(s.hk), 0x1);
    assert_int_equal(low64(s.dp), 0xfe);
    expect_msgs(&s, "partition: CPU 0 is always housekeeping; dataplane 1-7 used instead", NULL);
    s = decide("dataplane=0-63", 8);
    assert_int_equal(low64(s.dp), 0xfe);
    expect_msgs(&s, "partition: CPUs 8-63 do not exist on this 8-CPU machine; dropped",
                "partition: CPU 0 is always housekeeping; dataplane 1-7 used instead", NULL);
}

/* PD-06: a 1-CPU machine never has dataplane CPUs */
static void pd06_one_cpu(TEST_STATE)
{
    struct split s = decide("dataplane=0", 1);

    assert_int_equal(low64(s.hk), 0x1);
    assert_int_equal(low64(s.dp), 0);
    expect_msgs(&s, "partition: CPU 0 is always housekeeping; removed from dataplane",
                "partition: no dataplane CPUs remain", NULL);
    s = decide("dataplane=1-3", 1);
    assert_int_equal(low64(s.dp), 0);
    expect_msgs(&s, "partition: CPUs 1-3 do not exist on this 1-CPU machine; dropped",
                "partition: no dataplane CPUs remain", NULL);
    s = decide("", 1);
    assert_int_equal(low64(s.hk), 0x1);
    expect_msgs(&s, NULL);
}

/* PD-07: a 64-CPU machine with dataplane=1-63 uses it as given */
static void pd07_64_cpus(TEST_STATE)
{
    struct split s = decide("dataplane=1-63", 64);

    assert_int_equal(low64(s.hk), 0x1);
    assert_int_equal(low64(s.dp), ~1ull);
    expect_msgs(&s, NULL);
    s = decide("dataplane=0-63", 64);
    assert_int_equal(low64(s.dp), ~1ull);
    expect_msgs(&s, "partition: CPU 0 is always housekeeping; dataplane 1-63 used instead", NULL);
}

/* PD-11: a 512-CPU machine: dataplane=1-511 as given; CPUs past 123 (QEMU's second
 * redistributor region) are like any other; those past the machine are dropped by number */
static void pd11_512_cpus(TEST_STATE)
{
    struct split s = decide("dataplane=1-511", 512);

    assert_true(cpumask_equal(s.hk, cpumask_of(0)));
    assert_int_equal(cpumask_weight(s.dp), 511);
    expect_msgs(&s, NULL);
    s = decide("dataplane=122-123,511", 200);
    assert_true(cpumask_has(s.dp, 122) && cpumask_has(s.dp, 123) && cpumask_weight(s.dp) == 2);
    expect_msgs(&s, "partition: CPU 511 does not exist on this 200-CPU machine; dropped", NULL);
}

/* PD-08: maxmsg caps the lines written; msg may be NULL with maxmsg 0 */
static void pd08_maxmsg(TEST_STATE)
{
    char msg[2][BOOTARGS_WARN_LEN];
    struct bootargs *ba = parse("dataplane=0,5");
    cpumask_t hk, dp;

    memset(msg, '#', sizeof(msg));
    assert_int_equal(partition_decide(ba, 4, &hk, &dp, msg, 1), 1);
    assert_string_equal(msg[0], "partition: CPU 5 does not exist on this 4-CPU machine; dropped");
    assert_int_equal((unsigned char)msg[1][0], '#');
    assert_int_equal(partition_decide(ba, 4, &hk, &dp, NULL, 0), 0);
    assert_int_equal(low64(hk), 0xf);
    assert_int_equal(low64(dp), 0);
}

/*
 * PD-09: for every machine size and many requests the split is a partition with CPU 0 in it,
 * the dataplane is what was asked for that exists (minus CPU 0), and messages come iff not.
 */
static void pd09_invariants(TEST_STATE)
{
    uint64_t x = 0x2545f4914f6cdd1dull;
    char msg[4][BOOTARGS_WARN_LEN];
    struct bootargs ba;

    bootargs_parse(NULL, 0, &ba);
    ba.has_dataplane = true;
    for (unsigned ncpus = 1; ncpus <= MAX_CPUS; ncpus++) {
        for (int i = 0; i < 200; i++) {
            cpumask_t all = cpumask_first_n(ncpus), hk, dp, want;
            int n;
            for (unsigned w = 0; w < CPUMASK_WORDS; w++) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                want.w[w] = i == 0 ? ~0ull : (i == 1 ? 0 : x);
            }
            ba.dataplane = want;
            n = partition_decide(&ba, ncpus, &hk, &dp, msg, 4);
            cpumask_t usable = cpumask_andnot(all, cpumask_of(0));
            if (!cpumask_equal(cpumask_or(hk, dp), all) || cpumask_intersects(hk, dp) ||
                !cpumask_has(hk, 0) || !cpumask_equal(dp, cpumask_and(want, usable)) ||
                (n == 0) != cpumask_empty(cpumask_andnot(want, usable))) {
                fail_msg("ncpus %u want %#llx...: hk %#llx... dp %#llx... n %d", ncpus,
                         (unsigned long long)want.w[0], (unsigned long long)hk.w[0],
                         (unsigned long long)dp.w[0], n);
            }
        }
    }
}

/* PD-10: ncpus outside 1..MAX_CPUS (512) is clamped, never a bit past the set */
static void pd10_ncpus_clamped(TEST_STATE)
{
    struct bootargs *ba = parse("dataplane=1-3");
    cpumask_t hk, dp;

    partition_decide(ba, 0, &hk, &dp, NULL, 0);
    assert_int_equal(low64(hk), 0x1);
    assert_int_equal(low64(dp), 0);
    partition_decide(ba, 1000, &hk, &dp, NULL, 0);
    assert_true(cpumask_equal(hk, cpumask_andnot(cpumask_first_n(MAX_CPUS), M64(0xe))));
    assert_int_equal(low64(dp), 0xe);
    partition_decide(NULL, 4, &hk, &dp, NULL, 0);
    assert_int_equal(low64(hk), 0xf);
    assert_int_equal(low64(dp), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ba01_defaults),
        cmocka_unit_test(ba02_dataplane),
        cmocka_unit_test(ba03_dataplane_aliases),
        cmocka_unit_test(ba04_isolcpus_flags),
        cmocka_unit_test(new06_dataplane_names_union),
        cmocka_unit_test(ba05_tick),
        cmocka_unit_test(ba06_hz),
        cmocka_unit_test(ba07_flags),
        cmocka_unit_test(ba08_init_path),
        cmocka_unit_test(ba09_debug_params),
        cmocka_unit_test(ba10_all_together),
        cmocka_unit_test(ba11_bad_hz),
        cmocka_unit_test(ba12_bad_dataplane),
        cmocka_unit_test(ba13_bad_dataplane_keeps_earlier),
        cmocka_unit_test(ba14_bad_tick),
        cmocka_unit_test(ba15_bad_flags),
        cmocka_unit_test(ba16_bad_init),
        cmocka_unit_test(ba17_bad_debug_params),
        cmocka_unit_test(ba40_watchdog_and_max_procs),
        cmocka_unit_test(ba18_unknown),
        cmocka_unit_test(ba19_warning_text_is_clipped),
        cmocka_unit_test(ba20_override_order),
        cmocka_unit_test(ba21_init_args_example),
        cmocka_unit_test(ba22_shell_quoting),
        cmocka_unit_test(ba23_init_arg_blanks),
        cmocka_unit_test(ba24_unterminated_init_quote),
        cmocka_unit_test(ba25_double_dash),
        cmocka_unit_test(ba26_too_many_init_args),
        cmocka_unit_test(ba27_argbuf_overflow),
        cmocka_unit_test(ba28_quoted_params),
        cmocka_unit_test(ba29_length_bounds),
        cmocka_unit_test(ba30_ten_kilobytes),
        cmocka_unit_test(ba31_warnings_capped),
        cmocka_unit_test(ba32_warning_cap_edge),
        cmocka_unit_test(ba33_longest_warnings_fit),
        cmocka_unit_test(ba34_reparse_reinitialises),
        cmocka_unit_test(pd01_no_request),
        cmocka_unit_test(pd02_valid_request),
        cmocka_unit_test(pd03_cpu0_requested),
        cmocka_unit_test(pd04_nonexistent),
        cmocka_unit_test(pd05_every_cpu),
        cmocka_unit_test(pd06_one_cpu),
        cmocka_unit_test(pd07_64_cpus),
        cmocka_unit_test(pd08_maxmsg),
        cmocka_unit_test(pd09_invariants),
        cmocka_unit_test(pd10_ncpus_clamped),
        cmocka_unit_test(pd11_512_cpus),
    };

    return cmocka_run_group_tests_name("bootargs", tests, NULL, NULL);
}
