/* SPDX-License-Identifier: MIT */
/*
 * sysdebug.c — syscall_debug=1: the porting aid.  Each system call number a process makes
 * that the kernel does not implement is reported once per process, with its Linux name:
 *
 *     syscall_debug: pid 7 (prog) called 293 (rseq): not implemented, returned -ENOSYS
 *
 * Lines go through hklog: printed at once on a housekeeping CPU, queued for the
 * housekeeping worker on a dataplane CPU (which must not spend time on the console).  The
 * per-process "already reported" bits live in struct process (nosys_seen), set atomically.
 */
#include "kernel/sysdebug.h"
#include "kernel/hklog.h"
#include "kernel/syscall.h"
#include "kernel/task.h"

static bool enabled;

const char *linux_syscall_name(uint64_t nr)
{
    const char *n = nr < LINUX_NR_SYSCALLS ? linux_syscall_names[nr] : 0;
    return n ? n : "not a Linux system call";
}

void sysdebug_init(bool on)
{
    enabled = on;
}

/* Has p reported nr already?  Marks it.  Numbers past the bitmap share its last bit. */
static bool seen_before(struct process *p, uint64_t nr)
{
    unsigned bit = nr < 64 * PROC_NOSYS_WORDS - 1 ? (unsigned)nr : 64 * PROC_NOSYS_WORDS - 1;
    uint64_t mask = 1ull << (bit % 64);
    return __atomic_fetch_or(&p->nosys_seen[bit / 64], mask, __ATOMIC_RELAXED) & mask;
}

void sysdebug_unknown(uint64_t nr)
{
    struct process *p = current()->proc;
    if (!enabled || !p || seen_before(p, nr)) {
        return;
    }
    hklog("syscall_debug: pid %d (%pE) called %lu (%s): not implemented, returned -ENOSYS", p->pid,
          p->name, (unsigned long)nr, linux_syscall_name(nr));
}
