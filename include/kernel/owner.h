/* SPDX-License-Identifier: MIT */
/*
 * owner.h — chown, lchown and fchown (kernel/fs/owner.c): owners kept per inode, changed for
 * the files of /tmp.
 */
#ifndef ZT_KERNEL_OWNER_H
#define ZT_KERNEL_OWNER_H

struct trap_frame;

long sys_fchownat(struct trap_frame *f);
long sys_fchown(struct trap_frame *f);

#endif
