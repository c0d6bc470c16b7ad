/* SPDX-License-Identifier: MIT */
/*
 * printk.h — kernel console output.  printk formats into a local buffer and writes it to
 * the console under console_lock, so lines from different CPUs never interleave.  Callable
 * from any context; a panic takes the console over (printk_panic_mode) so output goes out
 * even if another CPU died holding the lock.
 */
#ifndef ZT_KERNEL_PRINTK_H
#define ZT_KERNEL_PRINTK_H

#include <stdarg.h>

void printk(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void vprintk(const char *fmt, va_list ap);
/* Write raw bytes (the tty's write path). */
void console_write(const char *s, unsigned long n);
void printk_panic_mode(void);

#endif
