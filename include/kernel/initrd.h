/* SPDX-License-Identifier: MIT */
/*
 * initrd.h — the archive of user programs linked into the kernel image (cpio "newc" format,
 * built by the Makefile from build/initrd/), and the one a boot loader may hand over, layered
 * over it (kernel/fs/initrd.c).  Read-only; no locking needed.
 */
#ifndef ZT_KERNEL_INITRD_H
#define ZT_KERNEL_INITRD_H

#include <stdbool.h>
#include <stddef.h>

/* Find `path` ("/bin/sh" or "bin/sh") in the archive at [blob, blob+len).
 * Returns 0 and sets *data and *size, or -ENOENT; -EINVAL if the archive is malformed.  The
 * archive reader initrd_walk uses, on any archive: test_cpio feeds it hostile ones. */
int cpio_find(const void *blob, size_t len, const char *path, const void **data, size_t *size);
/* Bytes of the archives the tree was built from (statfs of the root). */
size_t initrd_bytes(void);
/* Call fn for every member but "." (a leading "./" dropped from its name): its cpio mode
 * (S_IF* type and permission bits), data and size, and whether it comes from the archive a
 * boot loader handed over (`over`: it may replace a built-in member of the same path): first
 * every member of the built-in archive, then the boot loader's.  Returns the number of
 * built-in members.  A boot loader's archive that is compressed or malformed is reported on
 * the console (what came before the damage is used). */
typedef void (*initrd_fn)(const char *name, unsigned mode, const void *data, size_t size,
                          bool over);
int initrd_walk(initrd_fn fn);

#endif
