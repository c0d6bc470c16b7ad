/* SPDX-License-Identifier: MIT */
/*
 * tty.h — the console as a terminal: a line discipline (canonical editing with echo and
 * erase, or raw bytes), termios settings, the window size and the foreground process group
 * (Ctrl-C sends it SIGINT).  /dev/console and /dev/tty are this one terminal (devfs.c),
 * and it is every process's controlling terminal.  Bytes typed on the UART are taken by its
 * interrupt handler, on the housekeeping CPU the UART's SPI is routed to.
 */
#ifndef ZT_KERNEL_TTY_H
#define ZT_KERNEL_TTY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* struct termios as the Linux kernel's TCGETS/TCSETS exchange it (asm-generic/termbits.h). */
#define TTY_NCCS 19
struct termios_k {
    uint32_t iflag, oflag, cflag, lflag;
    uint8_t line;
    uint8_t cc[TTY_NCCS];
};

struct winsize_k {
    uint16_t rows, cols, xpixel, ypixel;
};

/* c_cc indices */
#define VINTR    0
#define VQUIT    1
#define VERASE   2
#define VKILL    3
#define VEOF     4
#define VTIME    5
#define VMIN     6
#define VSTART   8
#define VSTOP    9
#define VSUSP    10
#define VREPRINT 12
#define VDISCARD 13
#define VWERASE  14
#define VLNEXT   15
/* c_iflag */
#define INLCR 0000100
#define IGNCR 0000200
#define ICRNL 0000400
#define IXON  0002000
/* c_oflag */
#define OPOST 0000001
#define ONLCR 0000004
/* c_lflag */
#define ISIG    0000001
#define ICANON  0000002
#define ECHO    0000010
#define ECHOE   0000020
#define ECHOK   0000040
#define ECHOCTL 0001000
#define ECHOKE  0004000
#define IEXTEN  0100000

/* Boot: settings to Linux's defaults; register and enable the console's receive interrupt. */
void tty_init(void);
/* read(): up to n bytes to user memory at ubuf, sleeping until the line discipline has
 * some (a line in canonical mode).  0 at end of file (Ctrl-D), -EAGAIN (nonblock, nothing
 * there), -ERESTARTSYS (a signal), -EFAULT. */
long tty_read(uint64_t ubuf, size_t n, bool nonblock);
/* POLLIN when a read would not block; POLLOUT always. */
unsigned tty_poll(void);
/* Bytes a read could take now (FIONREAD). */
unsigned tty_readable(void);
void tty_get_termios(struct termios_k *t);
/* TCSETS (flush: TCSETSF drops unread input). */
void tty_set_termios(const struct termios_k *t, bool flush);
/* The window size into *ws, after setting it from *set when set is not NULL. */
void tty_winsize(struct winsize_k *ws, const struct winsize_k *set);
void tty_flush_input(void);
/* The foreground process group (0 = none). */
void tty_set_foreground(int pgrp);
int tty_foreground(void);

#endif
