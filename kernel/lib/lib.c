/* SPDX-License-Identifier: MIT */
/*
 * lib.c — memory and string functions for the kernel (it links no C library), and a small
 * snprintf.  The compiler may emit calls to memset/memcpy on its own, so these exist under
 * their standard names.  On the host (ZT_HOST) libc provides the standard ones.
 */
#include "kernel/lib.h"
#include "kernel/panic.h"

#include <stdbool.h>

#ifndef ZT_HOST
void *memset(void *dst, int c, size_t n)
{
    unsigned char *d = dst;
    if (((uintptr_t)d & 7) == 0 && (c & 0xff) == 0) {
        for (; n >= 8; n -= 8, d += 8) {
            *(uint64_t *)d = 0;
        }
    }
    while (n--) {
        *d++ = (unsigned char)c;
    }
    return dst;
}

/* A 64-bit word at any alignment: the kernel copies only normal memory, where unaligned
 * accesses are allowed (SCTLR_EL1.A is clear, and the MMU is on before any C code runs); a
 * byte loop for a source only 4-byte aligned, as a file in the initrd is, cost ~6
 * instructions a byte. */
typedef uint64_t __attribute__((may_alias, aligned(1))) word_any_t;
typedef uint32_t __attribute__((may_alias, aligned(1))) half_any_t;

void *memcpy(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    for (; n >= 32; n -= 32, d += 32, s += 32) {
        const word_any_t *from = (const word_any_t *)s;
        word_any_t *to = (word_any_t *)d;
        uint64_t a = from[0], b = from[1], c = from[2], e = from[3];
        to[0] = a;
        to[1] = b;
        to[2] = c;
        to[3] = e;
    }
    for (; n >= 8; n -= 8, d += 8, s += 8) {
        *(word_any_t *)d = *(const word_any_t *)s;
    }
    if (n >= 4) { /* a futex word, an int */
        *(half_any_t *)d = *(const half_any_t *)s;
        n -= 4, d += 4, s += 4;
    }
    while (n--) {
        *d++ = *s++;
    }
    return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (d <= s || d >= s + n) {
        return memcpy(dst, src, n);
    }
    while (n--) {
        d[n] = s[n];
    }
    return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (size_t i = 0; i < n; i++) {
        if (x[i] != y[i]) {
            return x[i] - y[i];
        }
    }
    return 0;
}

size_t strlen(const char *s)
{
    size_t n = 0;
    while (s[n]) {
        n++;
    }
    return n;
}

size_t strnlen(const char *s, size_t max)
{
    size_t n = 0;
    while (n < max && s[n]) {
        n++;
    }
    return n;
}

int strcmp(const char *a, const char *b)
{
    while (*a && *a == *b) {
        a++, b++;
    }
    return (unsigned char)*a - (unsigned char)*b;
}

int strncmp(const char *a, const char *b, size_t n)
{
    for (; n; n--, a++, b++) {
        if (*a != *b || !*a) {
            return (unsigned char)*a - (unsigned char)*b;
        }
    }
    return 0;
}
#endif

size_t kstrlcpy(char *dst, const char *src, size_t size)
{
    size_t n = strlen(src);
    if (size) {
        size_t k = n < size - 1 ? n : size - 1;
        memcpy(dst, src, k);
        dst[k] = 0;
    }
    return n;
}

/* ---- text builder ---- */

void tbuf_init(struct tbuf *t, char *buf, size_t size)
{
    t->buf = buf;
    t->size = buf ? size : 0;
    t->need = 0;
    if (t->size) {
        buf[0] = 0;
    }
}

void tbuf_char(struct tbuf *t, char c)
{
    if (t->need + 1 < t->size) {
        t->buf[t->need] = c;
        t->buf[t->need + 1] = 0;
    }
    t->need++;
}

void tbuf_str(struct tbuf *t, const char *s)
{
    while (*s) {
        tbuf_char(t, *s++);
    }
}

void tbuf_dec(struct tbuf *t, uint64_t v)
{
    char digits[20];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n > 0) {
        tbuf_char(t, digits[--n]);
    }
}

void tbuf_hex(struct tbuf *t, uint64_t v, int min_digits)
{
    int digits = 1;
    while (digits < 16 && (v >> (4 * digits)) != 0) {
        digits++;
    }
    digits = digits < min_digits ? min_digits : digits;
    while (digits-- > 0) {
        tbuf_char(t, "0123456789abcdef"[(v >> (4 * digits)) & 0xf]);
    }
}

/* ---- formatted output ---- */

struct out {
    char *buf;
    size_t size;
    size_t len; /* length the full output needs */
};

static void put(struct out *o, char c)
{
    if (o->len + 1 < o->size) {
        o->buf[o->len] = c;
    }
    o->len++;
}

static void put_padded(struct out *o, const char *s, size_t n, int width, bool left, char pad)
{
    int fill = width > (int)n ? width - (int)n : 0;
    if (!left && pad == '0' && n && (s[0] == '-')) {
        put(o, *s++), n--; /* sign before zero padding */
    }
    for (; !left && fill > 0; fill--) {
        put(o, pad);
    }
    for (size_t i = 0; i < n; i++) {
        put(o, s[i]);
    }
    for (; left && fill > 0; fill--) {
        put(o, ' ');
    }
}

static size_t fmt_unsigned(char *tmp, unsigned long long v, unsigned base, bool upper)
{
    ASSERT(base == 10 || base == 16); /* fmt_one's conversions */
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    char rev[24];
    size_t n = 0;
    do {
        rev[n++] = digits[v % base];
        v /= base;
    } while (v);
    for (size_t i = 0; i < n; i++) {
        tmp[i] = rev[n - 1 - i];
    }
    return n;
}

/* Fetch an integer argument of the given length modifier (0 int, 1 long, 2 long long, 3 size_t). */
static unsigned long long arg_unsigned(va_list *ap, int lmod)
{
    switch (lmod) {
    case 0:
        return va_arg(*ap, unsigned int);
    case 1:
        return va_arg(*ap, unsigned long);
    case 2:
        return va_arg(*ap, unsigned long long);
    default:
        return va_arg(*ap, size_t);
    }
}

static long long arg_signed(va_list *ap, int lmod)
{
    switch (lmod) {
    case 0:
        return va_arg(*ap, int);
    case 1:
        return va_arg(*ap, long);
    case 2:
        return va_arg(*ap, long long);
    default:
        return (long long)va_arg(*ap, size_t);
    }
}

/* %pE: s with every byte a terminal could act on escaped (lib.h), at most prec bytes read. */
static void put_escaped(struct out *o, const char *s, int prec)
{
    static const char hex[] = "0123456789abcdef";
    s = s ? s : "(null)";
    for (size_t i = 0; s[i] && (prec < 0 || i < (size_t)prec); i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\\') {
            put(o, '\\'), put(o, '\\');
        } else if (c >= 0x20 && c < 0x7f) {
            put(o, (char)c);
        } else {
            put(o, '\\'), put(o, 'x'), put(o, hex[c >> 4]), put(o, hex[c & 15]);
        }
    }
}

static void fmt_one(struct out *o, char conv, va_list *ap, int lmod, int width, int prec, bool left,
                    char pad)
{
    char tmp[32];
    size_t n;
    switch (conv) {
    case 'd':
    case 'i': {
        long long v = arg_signed(ap, lmod);
        unsigned long long mag = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
        tmp[0] = '-';
        n = fmt_unsigned(tmp + (v < 0), mag, 10, false) + (v < 0);
        put_padded(o, tmp, n, width, left, pad);
        break;
    }
    case 'u':
    case 'x':
    case 'X':
        n = fmt_unsigned(tmp, arg_unsigned(ap, lmod), conv == 'u' ? 10 : 16, conv == 'X');
        put_padded(o, tmp, n, width, left, pad);
        break;
    case 'p':
        tmp[0] = '0', tmp[1] = 'x';
        n = 2 + fmt_unsigned(tmp + 2, (uintptr_t)va_arg(*ap, void *), 16, false);
        put_padded(o, tmp, n, width, left, ' ');
        break;
    case 's': {
        const char *s = va_arg(*ap, const char *);
        s = s ? s : "(null)";
        n = prec >= 0 ? strnlen(s, (size_t)prec) : strlen(s);
        put_padded(o, s, n, width, left, ' ');
        break;
    }
    case 'c':
        tmp[0] = (char)va_arg(*ap, int);
        put_padded(o, tmp, 1, width, left, ' ');
        break;
    default:
        put(o, '%'), put(o, conv);
        break;
    }
}

int kvsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
    struct out o = {buf, size, 0};
    va_list args;
    va_copy(args, ap);
    for (const char *p = fmt; *p; p++) {
        if (*p != '%') {
            put(&o, *p);
            continue;
        }
        p++;
        bool left = false;
        char pad = ' ';
        for (; *p == '-' || *p == '0'; p++) {
            left |= *p == '-';
            pad = *p == '0' ? '0' : pad;
        }
        int width = 0, prec = -1, lmod = 0;
        for (; *p >= '0' && *p <= '9'; p++) {
            width = width * 10 + (*p - '0');
        }
        if (*p == '.') {
            for (prec = 0, p++; *p >= '0' && *p <= '9'; p++) {
                prec = prec * 10 + (*p - '0');
            }
        }
        for (; *p == 'l'; p++) {
            lmod++;
        }
        if (*p == 'z') {
            lmod = 3, p++;
        }
        if (!*p) {
            break;
        }
        if (*p == '%') {
            put(&o, '%');
            continue;
        }
        if (p[0] == 'p' && p[1] == 'E') {
            put_escaped(&o, va_arg(args, const char *), prec);
            p++;
            continue;
        }
        fmt_one(&o, *p, &args, lmod, width, prec, left, left ? ' ' : pad);
    }
    va_end(args);
    if (size) {
        buf[o.len < size ? o.len : size - 1] = 0;
    }
    return (int)o.len;
}

int ksnprintf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = kvsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}
