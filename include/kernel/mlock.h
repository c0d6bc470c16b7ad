/* SPDX-License-Identifier: MIT */
/*
 * mlock.h — memory locking (kernel/mm/mlock.c): memory is never paged out here, so these check
 * their arguments and populate what is not populated yet (the stack).
 */
#ifndef ZT_KERNEL_MLOCK_H
#define ZT_KERNEL_MLOCK_H

#include <stdbool.h>
#include <stdint.h>

struct vm;

/* mlock2(addr, len, flags) (lock) or munlock(addr, len) (!lock, flags 0) in vm: 0, -EINVAL
 * (unknown flags), -ENOMEM (not wholly mapped, or past user space). */
int vm_mlock(struct vm *vm, uint64_t addr, uint64_t len, unsigned flags, bool lock);
/* Is [addr, addr+len) wholly covered by regions of vm (whatever their protection)?  0 or
 * -ENOMEM.  One step per region (mbind's check). */
int vm_mapped(struct vm *vm, uint64_t addr, uint64_t len);
/* mlockall(flags) in vm: 0, -EINVAL, -ENOMEM (the stack could not be populated). */
int vm_mlockall(struct vm *vm, unsigned flags);

#endif
