/* SPDX-License-Identifier: MIT */
/*
 * tls.h — thread-local storage blocks (tls.c), shared by start.c (main thread) and thread.c.
 *
 * An area is what one thread needs: a 16-byte TCB at the thread pointer, then (at the
 * alignment of the PT_TLS segment) a copy of .tdata followed by zeroed .tbss.
 */
#ifndef ZT_USER_TLS_H
#define ZT_USER_TLS_H

#include <stddef.h>

/* Bytes and alignment an area needs. */
size_t tls_area_size(void);
size_t tls_area_align(void);
/* Fill the area at `area` (aligned to tls_area_align()); returns the value for TPIDR_EL0. */
void *tls_area_init(void *area);
/* Give the main thread its area (reserved by user.ld) and point TPIDR_EL0 at it. */
void tls_setup_main(void);

#endif
