/*
 * tty.h — the console as a terminal: bytes typed on the UART are buffered by its interrupt
 * handler (on the housekeeping CPU the UART's SPI is routed to) and read with read(0);
 * Ctrl-C becomes SIGINT for the foreground process when one is set (TIOCSPGRP).
 */
#ifndef ZT_KERNEL_TTY_H
#define ZT_KERNEL_TTY_H

#include <stddef.h>
#include <stdint.h>

/* Boot: register and enable the console's receive interrupt (irq.c routes it). */
void tty_init(void);
/* read(0): copy up to n bytes to user memory at ubuf, sleeping until at least one is
 * available.  Returns the count, -EINTR or -EFAULT. */
long tty_read(uint64_t ubuf, size_t n);
/* ioctl(0, TIOCSPGRP/TIOCGPGRP): the foreground process (0 = none). */
void tty_set_foreground(int pid);
int tty_foreground(void);
/* Bytes received since boot and dropped because the buffer was full. */
uint64_t tty_rx_bytes(void);

#endif
