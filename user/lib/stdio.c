/* SPDX-License-Identifier: MIT */
/*
 * stdio.c — picolibc's tinystdio streams stdin/stdout/stderr on the console fds 0/1/2.
 *
 * Output is line-buffered per thread: each thread collects bytes in its own TLS buffer and
 * writes a whole line (or a full buffer) with one write(), so lines from different threads
 * or processes never interleave mid-line and nothing needs a lock.  The buffer is written out
 * at '\n', when full, on fflush(), before reading stdin, at exit() (start.c registers
 * zt_stdio_flush with atexit) and when a zt thread ends (thread.c).  _exit() does not flush.
 *
 * Input reads one byte per read() call: the console hands over bytes as they are typed.
 */
#include "zt.h"

#include <stdio.h>

#define LINE_BYTES 256

struct line_buf {
    unsigned len;
    char bytes[LINE_BYTES];
};

/* [0] for stdout (fd 1), [1] for stderr (fd 2). */
static __thread struct line_buf out_lines[2];

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        long r = zt_write(fd, p, n);

        if (r == -EINTR) {
            continue;
        }
        if (r <= 0) {
            return -1;
        }
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static int line_flush(int fd)
{
    struct line_buf *lb = &out_lines[fd - 1];
    int r = write_all(fd, lb->bytes, lb->len);

    lb->len = 0;
    return r;
}

static int line_put(int fd, char c)
{
    struct line_buf *lb = &out_lines[fd - 1];

    lb->bytes[lb->len++] = c;
    if ((c == '\n' || lb->len == LINE_BYTES) && line_flush(fd) < 0) {
        return EOF;
    }
    return (unsigned char)c;
}

static int stdout_put(char c, FILE *f)
{
    return line_put(1, c);
}

static int stderr_put(char c, FILE *f)
{
    return line_put(2, c);
}

static int stdout_flush(FILE *f)
{
    return line_flush(1);
}

static int stderr_flush(FILE *f)
{
    return line_flush(2);
}

static int stdin_get(FILE *f)
{
    unsigned char c;
    long r;

    /* A prompt printed without '\n' must be visible before we wait for the answer. */
    zt_stdio_flush();
    do {
        r = zt_read(0, &c, 1);
    } while (r == -EINTR);
    if (r == 1) {
        return c;
    }
    return r == 0 ? _FDEV_EOF : _FDEV_ERR;
}

static FILE stdin_file = FDEV_SETUP_STREAM(NULL, stdin_get, NULL, _FDEV_SETUP_READ);
static FILE stdout_file = FDEV_SETUP_STREAM(stdout_put, NULL, stdout_flush, _FDEV_SETUP_WRITE);
static FILE stderr_file = FDEV_SETUP_STREAM(stderr_put, NULL, stderr_flush, _FDEV_SETUP_WRITE);

FILE *const stdin = &stdin_file;
FILE *const stdout = &stdout_file;
FILE *const stderr = &stderr_file;

void zt_stdio_flush(void)
{
    line_flush(1);
    line_flush(2);
}
