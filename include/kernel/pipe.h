/* SPDX-License-Identifier: MIT */
/*
 * pipe.h — pipe2() (kernel/fs/pipe.c): a one-page ring between a read end and a write end,
 * two descriptors over INODE_PIPE files.
 */
#ifndef ZT_KERNEL_PIPE_H
#define ZT_KERNEL_PIPE_H

struct trap_frame;

long sys_pipe2(struct trap_frame *f);

#endif
