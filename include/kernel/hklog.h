/* SPDX-License-Identifier: MIT */
/*
 * hklog.h — console lines that must not cost a dataplane CPU anything.
 *
 * Code that can run on a dataplane CPU because of what a user task did (a fault that kills
 * it, an isolation report) prints through hklog instead of printk: on a housekeeping CPU
 * the line is printed at once, as printk would; on a dataplane CPU it is copied into a small
 * ring and the housekeeping worker (work.c) prints it, so the dataplane CPU never waits on
 * the UART.  A full ring drops lines and the next print says how many.  Any CPU, any
 * context (IRQs masked or not); the ring's lock is a leaf.
 */
#ifndef ZT_KERNEL_HKLOG_H
#define ZT_KERNEL_HKLOG_H

#include <stdint.h>

#define HKLOG_BT_DEPTH 6

/* Boot, before any user task runs. */
void hklog_init(void);
/* Print every queued line now (the worker; power-off; tests). */
void hklog_flush(void);
/* One line (the text without its newline). */
void hklog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* One line, then a second one: `label` and the return addresses in bt[0..depth) (up to the
 * first 0). */
void hklog_bt(const char *label, const uint64_t *bt, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
