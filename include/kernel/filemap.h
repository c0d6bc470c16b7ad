/* SPDX-License-Identifier: MIT */
/*
 * filemap.h — mmap of regular files (the initrd's, /tmp's and /dev/shm's), and msync.
 *
 * MAP_PRIVATE maps copies of the file's pages made by mmap itself (nothing is demand-paged:
 * vm.h), so later changes to the file are not seen, which POSIX allows.  MAP_SHARED of a
 * /tmp or /dev/shm file maps the file's own pages: every mapping, in every process, and
 * read/write of the file see the same bytes at once, and msync has nothing to write back.
 * MAP_SHARED of an initrd file, which can only be opened read-only, is a copy that may never
 * become writable: the file never changes, so nobody can tell the difference.  A mapping
 * holds the file (its inode) until it is unmapped, whatever happens to the descriptor: close
 * does not end it, execve and exit do (vm_destroy).
 *
 * Refusals, checked in this order before anything changes (Linux's errnos): a bad length,
 * protection or flags, or W^X, -EINVAL (vm_mmap_check); an offset not page-aligned,
 * -EINVAL; a bad descriptor, -EBADF; not a regular file, -ENODEV; a file not open for
 * reading, or MAP_SHARED with PROT_WRITE of a file not open read-write (or open for
 * appending), -EACCES; offset + length wrapping, -EOVERFLOW; an offset at or past the end of
 * the file (rounded up to a page), -ENXIO (Linux maps it and raises SIGBUS on access: there
 * is no page to map here); more pages than memory, -ENOMEM.
 */
#ifndef ZT_KERNEL_FILEMAP_H
#define ZT_KERNEL_FILEMAP_H

#include <stdint.h>

#include "kernel/vm.h"

/* mmap(addr, len, prot, flags, fd, off) without MAP_ANONYMOUS, in the current process: the
 * address or -errno (above). */
long filemap_mmap(struct vm *vm, uint64_t addr, uint64_t len, unsigned prot, unsigned flags, int fd,
                  uint64_t off);

/* mmap(addr, len, prot, MAP_SHARED|MAP_ANONYMOUS...): zeroed memory that a fork's child
 * shares with its parent, as on Linux: the pages of a tmpfs file in no directory (which
 * /tmp's bound does not count), freed when the last mapping of them goes.  The address or
 * -EINVAL/-ENOMEM. */
long filemap_mmap_anon_shared(struct vm *vm, uint64_t addr, uint64_t len, unsigned prot,
                              unsigned flags);

/* What a mapping of an inode holds (set in every inode's vmobj by inode_new). */
extern const struct vm_object_ops filemap_object_ops;

struct trap_frame;
/* msync(addr, len, flags): the flags checked (MS_ASYNC, MS_INVALIDATE, MS_SYNC; not ASYNC and
 * SYNC together: -EINVAL) and the range (-EINVAL unaligned, -ENOMEM not all mapped); then
 * nothing to do: a shared mapping's pages are the file's. */
long sys_msync(struct trap_frame *f);

#endif
