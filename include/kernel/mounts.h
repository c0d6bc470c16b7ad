/* SPDX-License-Identifier: MIT */
/*
 * mounts.h — the file systems of the tree as tools see them (kernel/fs/mounts.c): /proc/mounts,
 * statfs and fstatfs.
 */
#ifndef ZT_KERNEL_MOUNTS_H
#define ZT_KERNEL_MOUNTS_H

struct trap_frame;
struct inode;

/* Boot, once the tree is built: number each file system (st_dev) and mark its files. */
void mounts_init(void);

long sys_statfs(struct trap_frame *f);
long sys_fstatfs(struct trap_frame *f);

#endif
