/* SPDX-License-Identifier: MIT */
/*
 * bootargs.h — the kernel command line (/chosen/bootargs, from QEMU's -append).
 *
 * bootargs_parse() is pure (kernel/lib/bootargs.c, unit-tested on the host): it never fails as
 * a whole.  A bad or unknown parameter is ignored (the value in effect stays: the default, or
 * what an earlier good parameter set) and adds one line to warn[] saying what was wrong and
 * what is used instead; kernel_main prints those lines once the console is up.  When there
 * are more problems than BOOTARGS_MAX_WARN, the last line says how many were not shown.
 * partition_decide() (partition.h) turns the requested dataplane set into the final
 * housekeeping/dataplane split once the number of CPUs is known.
 *
 * Parameters (Linux names where Linux has the concept):
 *   dataplane=LIST        CPUs given to dataplane tasks; nohz_full=LIST and isolcpus=LIST
 *                         mean the same (isolcpus' leading flag words such as "nohz,domain,"
 *                         or "managed_irq," are skipped).  Given together, the dataplane set
 *                         is the union of their lists (a CPU any of them names leaves
 *                         housekeeping, as Linux takes a CPU out of its housekeeping mask for
 *                         each); when the lists differ a warning line says so and names the
 *                         set used.  Each name given twice: the later list replaces its own.
 *   tick=nohz|periodic    nohz (default): timer armed only on contention; periodic: baseline
 *   hz=N                  time-slice rate, 1..1000, default 100
 *   tick_residual=0|1     1 Hz residual tick on dataplane CPUs; bare "debug_1hz_tick" too
 *   isol_debug=0|1        report every interruption of an isolated task; bare
 *                         "task_isolation_debug" too
 *   quiet                 less boot output
 *   trace=0|1             record kernel events in per-CPU trace rings (/bin/trace reads them);
 *                         off by default: then no ring is allocated and each event costs one
 *                         predictable branch
 *   exit_stats=0|1        at power-off, once every other CPU has stopped, print each CPU's
 *                         exception counts (tests compare them with QEMU's log)
 *   init=PATH             first user program (default /bin/sh); everything after a lone "--"
 *                         becomes its arguments, split like a shell does: words separated by
 *                         spaces, '...' and "..." quote, backslash escapes the next character
 *   debug_fault=KIND      deliberately fault in the kernel after boot to exercise the panic
 *                         path: "data" (data abort), "undef" (undefined instruction),
 *                         "overflow" (kernel stack overflow), "write-text" (store into
 *                         kernel text), "exec-data" (execute kernel data), "guard" (read
 *                         the unmapped page below the boot stack), "user-read" (load
 *                         a user page directly, not through the copies: with PAN a
 *                         fault, without it a message saying the CPU has no PAN),
 *                         "irqs-off" (spin 2 s with interrupts masked), "lock-order"
 *                         (take two locks against the lock order), "bad-frame" (an
 *                         undefined instruction whose frame pointer leads into RAM the
 *                         linear map covers with a block: the panic's backtrace walks it)
 *   watchdog=MS           report a housekeeping CPU that takes no interrupt for MS ms
 *                         (4..60000; 0 = off; default 1000 in the checked kernel, else 0)
 *   debug_exit=N          power off with exit status N (0..255) right after boot
 *   syscall_debug=0|1     report each system call number a process makes that the kernel
 *                         does not implement, with its Linux name, once per process
 *   max_procs=N           processes alive or not yet reaped, 16..32767, default 4096
 *                         (spawn says -EAGAIN past it)
 * "--" itself ends kernel parameters.  Values are case-sensitive.  A later parameter overrides
 * an earlier one.  The flags (tick_residual, isol_debug, quiet, trace, exit_stats and their Linux
 * names) may be bare (meaning 1), =1 or =0.  A value may be double-quoted, as on Linux
 * (init="/bin/x"). Init arguments beyond BOOTARGS_MAX_INIT_ARGS words or BOOTARGS_ARGBUF bytes are
 * dropped (from the first one that does not fit on) with a warning.
 */
#ifndef ZT_KERNEL_BOOTARGS_H
#define ZT_KERNEL_BOOTARGS_H

#include <stdbool.h>
#include <stddef.h>

#include "kernel/cpumask.h"

#define BOOTARGS_MAX_WARN      8
#define BOOTARGS_WARN_LEN      160
#define BOOTARGS_PATH_MAX      64
#define BOOTARGS_MAX_INIT_ARGS 16
#define BOOTARGS_ARGBUF        512

enum tick_mode {
    TICK_NOHZ = 0,
    TICK_PERIODIC,
};

enum debug_fault {
    DEBUG_FAULT_NONE = 0,
    DEBUG_FAULT_DATA,
    DEBUG_FAULT_UNDEF,
    DEBUG_FAULT_OVERFLOW,
    DEBUG_FAULT_WRITE_TEXT, /* store into kernel text: W^X must refuse */
    DEBUG_FAULT_EXEC_DATA,  /* jump into kernel data: W^X must refuse */
    DEBUG_FAULT_GUARD,      /* load from the boot stack's guard page */
    DEBUG_FAULT_USER_READ,  /* load from a user page directly: PAN must refuse */
    DEBUG_FAULT_IRQS_OFF,   /* spin 2 s with interrupts masked: the watchdog must see it */
    DEBUG_FAULT_LOCK_ORDER, /* take two locks against the lock order: checked builds panic */
    DEBUG_FAULT_BAD_FRAME,  /* undefined instruction, x29 on a frame in block-mapped RAM */
};

struct bootargs {
    bool has_dataplane;       /* a dataplane= (or alias) parameter parsed correctly */
    cpumask_t dataplane;      /* the set it asked for (not yet checked against the machine): the
                                 union of what each name asked for */
    unsigned dataplane_named; /* bit i: name i of dataplane=, nohz_full=, isolcpus= given */
    cpumask_t dataplane_by_name[3]; /* each name's own list */
    enum tick_mode tick;
    unsigned hz;
    bool tick_residual;
    bool isol_debug;
    bool syscall_debug;
    bool quiet;
    bool exit_stats; /* print every CPU's exception counts at power-off */
    bool trace;      /* record trace events (trace.h) */
    enum debug_fault debug_fault;
    int debug_exit; /* -1: none */
    unsigned max_procs;
    unsigned watchdog_ms; /* 0: no watchdog */

    char init_path[BOOTARGS_PATH_MAX]; /* "" when not given */
    int init_argc;                     /* arguments after "--" (not counting the program itself) */
    char *init_argv[BOOTARGS_MAX_INIT_ARGS]; /* [0, init_argc) point into argbuf; rest NULL */
    char argbuf[BOOTARGS_ARGBUF];

    int nwarn;
    char warn[BOOTARGS_MAX_WARN][BOOTARGS_WARN_LEN];
};

/*
 * Parse `len` bytes of `cmdline` (need not be NUL-terminated; a NUL ends it early; NULL means
 * empty) into *out, which is fully (re)initialised first.
 */
void bootargs_parse(const char *cmdline, size_t len, struct bootargs *out);

#endif
