/* SPDX-License-Identifier: MIT */
/*
 * isolstat_test.c — a test of the zt_isolstat call, written against its contract (zt.h):
 * a valid call fills the audit of the CPU asked for; a CPU that does not exist is -EINVAL;
 * memory the process cannot write is -EFAULT.  Lab syscall (labs/syscall) has students
 * write it; /bin/labcheck runs it against the real call and against broken ones.
 */
#include "labcheck/labcheck.h"

#include <string.h>

void isolstat_test(isolstat_fn call, struct lab_run *run)
{
    struct zt_isol_audit a;
    int n = zt_nr_cpus();
    long r;

    for (int cpu = 0; cpu<n; cpu += n - 1> 0 ? n - 1 : 1) { /* the first and the last */
        memset(&a, 0xa5, sizeof(a));
        r = call((unsigned)cpu, &a);
        LAB_CHECK(run, r == 0, "cpu %d: returned %ld, expected 0", cpu, r);
        LAB_CHECK(run, a.cpu == (unsigned)cpu, "cpu %d: the audit names cpu %u", cpu, a.cpu);
    }
    r = call((unsigned)n, &a);
    LAB_CHECK(run, r == -EINVAL, "cpu %d (one past the last): returned %ld, expected -EINVAL", n,
              r);
    r = call(0xffffffffu, &a);
    LAB_CHECK(run, r == -EINVAL, "cpu 0xffffffff: returned %ld, expected -EINVAL", r);
    r = call(0, NULL);
    LAB_CHECK(run, r == -EFAULT, "a NULL buffer: returned %ld, expected -EFAULT", r);
    r = call(0, (struct zt_isol_audit *)(uintptr_t)0xffffff8040200000ul);
    LAB_CHECK(run, r == -EFAULT, "a kernel address: returned %ld, expected -EFAULT", r);
}
