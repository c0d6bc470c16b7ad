/* SPDX-License-Identifier: MIT */
/*
 * lib.h — the few C library functions the kernel uses (kernel/lib/lib.c), and small helpers.
 * On the host (ZT_HOST) the C library's own versions are used instead.
 */
#ifndef ZT_KERNEL_LIB_H
#define ZT_KERNEL_LIB_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef ZT_HOST
#include <string.h>
#else
void *memset(void *dst, int c, size_t n);
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t max);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
#endif

/* snprintf/vsnprintf subset: %d %i %u %x %X %p %s %c %%, flags '-' '0', width, precision for
 * %s, length modifiers l ll z.  Returns the length the full output needs.
 * %pE (as Linux's): a string user space chose (a task's or process's name, a file name),
 * escaped: printable ASCII as is but '\', which doubles, and every other byte as \xHH, so no
 * control character it holds reaches the console. */
int ksnprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int kvsnprintf(char *buf, size_t size, const char *fmt, va_list ap);

/* A bounded text builder for code that cannot use ksnprintf's format strings comfortably:
 * appends what fits, keeps the text NUL-terminated (when size > 0), and counts in `need`
 * the length the whole text would have, like snprintf's return value. */
struct tbuf {
    char *buf;
    size_t size;
    size_t need;
};

void tbuf_init(struct tbuf *t, char *buf, size_t size);
void tbuf_char(struct tbuf *t, char c);
void tbuf_str(struct tbuf *t, const char *s);
void tbuf_dec(struct tbuf *t, uint64_t v);
/* v in hex digits (no "0x"), at least min_digits of them. */
void tbuf_hex(struct tbuf *t, uint64_t v, int min_digits);

/* Copy at most size-1 bytes and NUL-terminate; returns strlen(src). */
size_t kstrlcpy(char *dst, const char *src, size_t size);

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b)     ((a) < (b) ? (a) : (b))
#define MAX(a, b)     ((a) > (b) ? (a) : (b))

#endif
