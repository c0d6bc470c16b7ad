/* SPDX-License-Identifier: MIT */
/*
 * initrd.h — the archive of user programs linked into the kernel image (cpio "newc" format,
 * built by the Makefile from build/initrd/bin/).  Read-only; no locking needed.
 */
#ifndef ZT_KERNEL_INITRD_H
#define ZT_KERNEL_INITRD_H

#include <stddef.h>

/* Find `path` ("/bin/sh" or "bin/sh") in the archive at [blob, blob+len).
 * Returns 0 and sets *data and *size, or -ENOENT; -EINVAL if the archive is malformed. */
int cpio_find(const void *blob, size_t len, const char *path, const void **data, size_t *size);
/* The same in the kernel's own archive. */
int initrd_find(const char *path, const void **data, size_t *size);
/* Call fn for every member but "." (a leading "./" dropped from its name): its cpio mode
 * (S_IF* type and permission bits), data and size.  Returns the number of members. */
/* Bytes of the archives the tree was built from (statfs of the root). */
size_t initrd_bytes(void);
int initrd_walk(void (*fn)(const char *name, unsigned mode, const void *data, size_t size));

#endif
