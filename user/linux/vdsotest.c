/* SPDX-License-Identifier: MIT */
/*
 * vdsotest — glibc's clock calls through the vDSO: ordinary glibc C, built dynamically and
 * statically with Debian's cross compiler (/bin/vdsotest, /bin/vdsotest-static).  It knows two
 * things about zerotick: the isolation prctl numbers, and that PMU event counter 0 counts
 * retired instructions and is readable at EL0 (what /bin/bench reads too).
 *
 *   vdsotest check        the vDSO is there (AT_SYSINFO_EHDR, an ELF shared object with
 *                         glibc's three symbols) and agrees with the system calls: for every
 *                         clock id from -8 to 16, clock_gettime through glibc lies between two
 *                         raw system calls of the same clock when the clock is counter time,
 *                         and gives the system call's errno otherwise; clock_getres and
 *                         gettimeofday likewise; "vdsotest check: ok" or "... FAILED: why"
 *   vdsotest isol CPU N   pin to CPU, isolate (strict), call clock_gettime(MONOTONIC),
 *                         clock_gettime(REALTIME) and gettimeofday N times each through glibc,
 *                         end isolation; the two prctl calls are bracketed by getpid calls
 *                         with marker immediates (svc #0x5a5a / #0xa5a5) for QEMU's log
 *   vdsotest clock=N      make bench's format: N calls of clock_gettime(CLOCK_MONOTONIC)
 *                         through glibc, after a warm-up: "bench: clock iterations N
 *                         guest_ns_per_op X instructions_per_op Y" (Y: n/a without -icount)
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define PR_SET_TASK_ISOLATION    48
#define PR_TASK_ISOLATION_ENABLE 1
#define PR_TASK_ISOLATION_STRICT 2
#define VDSO_VA                  0x7fdffe1000ul /* zerotick's fixed place (uapi/zt_vdso.h) */

static char fail_why[256];

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            snprintf(fail_why, sizeof(fail_why), __VA_ARGS__);                                     \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

static long long ns_of(const struct timespec *ts)
{
    return ts->tv_sec * 1000000000ll + ts->tv_nsec;
}

/* The vDSO's ELF header where AT_SYSINFO_EHDR says, with its soname and glibc's three names
 * in its dynamic symbol table. */
static int check_image(void)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
    CHECK(eh != NULL && (unsigned long)eh == VDSO_VA, "AT_SYSINFO_EHDR %p", (void *)eh);
    CHECK(memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_type == ET_DYN &&
              eh->e_machine == EM_AARCH64,
          "not an AArch64 shared object");
    const Elf64_Phdr *ph = (const Elf64_Phdr *)((const char *)eh + eh->e_phoff);
    const Elf64_Dyn *dyn = NULL;
    for (int i = 0; i < eh->e_phnum; i++) {
        dyn = ph[i].p_type == PT_DYNAMIC ? (const Elf64_Dyn *)((const char *)eh + ph[i].p_vaddr)
                                         : dyn;
    }
    CHECK(dyn != NULL, "no PT_DYNAMIC");
    const char *strtab = NULL;
    const Elf64_Sym *symtab = NULL;
    unsigned long soname = 0, nsyms = 0;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        strtab = dyn->d_tag == DT_STRTAB ? (const char *)eh + dyn->d_un.d_ptr : strtab;
        symtab = dyn->d_tag == DT_SYMTAB ? (const Elf64_Sym *)((const char *)eh + dyn->d_un.d_ptr)
                                         : symtab;
        soname = dyn->d_tag == DT_SONAME ? dyn->d_un.d_val : soname;
        if (dyn->d_tag == DT_HASH) {
            nsyms = ((const uint32_t *)((const char *)eh + dyn->d_un.d_ptr))[1]; /* nchain */
        }
    }
    CHECK(strtab && symtab && nsyms, "no string table, symbol table or DT_HASH");
    CHECK(strcmp(strtab + soname, "linux-vdso.so.1") == 0, "soname '%s'", strtab + soname);
    int found = 0;
    for (unsigned long i = 0; i < nsyms; i++) {
        const char *name = strtab + symtab[i].st_name;
        found += !strcmp(name, "__kernel_clock_gettime") ||
                 !strcmp(name, "__kernel_gettimeofday") || !strcmp(name, "__kernel_clock_getres");
    }
    CHECK(found == 3, "%d of glibc's three symbols", found);
    return 0;
}

static int counter_time(int id)
{
    return id == CLOCK_REALTIME || id == CLOCK_MONOTONIC || id == CLOCK_MONOTONIC_RAW ||
           id == CLOCK_REALTIME_COARSE || id == CLOCK_MONOTONIC_COARSE || id == CLOCK_BOOTTIME ||
           id == 11 /* CLOCK_TAI */;
}

/* Clock `id` through glibc (the vDSO for counter time) against the raw system call. */
static int check_clock(int id)
{
    struct timespec a, v, b, res_v, res_s;
    long ra = syscall(SYS_clock_gettime, id, &a);
    int ea = errno;
    int rv = clock_gettime(id, &v);
    int ev = errno;
    long rb = syscall(SYS_clock_gettime, id, &b);
    CHECK(ra == rv && rv == rb, "clock %d: system call %ld, glibc %d", id, ra, rv);
    if (rv != 0) {
        CHECK(ea == ev, "clock %d: errno %d from the system call, %d from glibc", id, ea, ev);
    } else if (counter_time(id)) {
        CHECK(ns_of(&a) <= ns_of(&v) && ns_of(&v) <= ns_of(&b),
              "clock %d: %lld, then %lld through glibc, then %lld", id, ns_of(&a), ns_of(&v),
              ns_of(&b));
        CHECK(v.tv_nsec >= 0 && v.tv_nsec < 1000000000, "clock %d: nsec %ld", id, v.tv_nsec);
    }
    long rs = syscall(SYS_clock_getres, id, &res_s);
    int rr = clock_getres(id, &res_v);
    CHECK(rs == rr, "getres %d: system call %ld, glibc %d", id, rs, rr);
    CHECK(rr != 0 || (res_v.tv_sec == res_s.tv_sec && res_v.tv_nsec == res_s.tv_nsec),
          "getres %d: %ld.%09ld, system call %ld.%09ld", id, res_v.tv_sec, res_v.tv_nsec,
          res_s.tv_sec, res_s.tv_nsec);
    CHECK(clock_getres(id, NULL) == rr, "getres %d with NULL", id);
    return 0;
}

static int check(void)
{
    if (check_image()) {
        return 1;
    }
    for (int id = -8; id <= 16; id++) {
        if (check_clock(id)) {
            return 1;
        }
    }
    struct timeval tv;
    struct timespec a, b;
    syscall(SYS_clock_gettime, CLOCK_REALTIME, &a);
    CHECK(gettimeofday(&tv, NULL) == 0, "gettimeofday");
    syscall(SYS_clock_gettime, CLOCK_REALTIME, &b);
    long long us = tv.tv_sec * 1000000ll + tv.tv_usec;
    CHECK(ns_of(&a) / 1000 <= us && us <= ns_of(&b) / 1000, "gettimeofday %lld us, around %lld", us,
          ns_of(&a) / 1000);
    struct timespec res;
    clock_getres(CLOCK_MONOTONIC, &res);
    printf("vdsotest check: the vDSO at %#lx, clock ids -8..16 agree with the system calls, "
           "resolution %ld ns\n",
           getauxval(AT_SYSINFO_EHDR), res.tv_nsec);
    return 0;
}

/* getpid issued with a marker immediate: QEMU's log shows it (tools/exclog windows). */
static void marker(int open)
{
    register long x8 __asm__("x8") = 172;
    register long x0 __asm__("x0") = 0;
    if (open) {
        __asm__ volatile("svc #0x5a5a" : "+r"(x0) : "r"(x8) : "memory");
    } else {
        __asm__ volatile("svc #0xa5a5" : "+r"(x0) : "r"(x8) : "memory");
    }
}

static int isol(int cpu, long n)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0) {
        printf("vdsotest isol: sched_setaffinity: %s\n", strerror(errno));
        return 1;
    }
    struct timespec first, t, w;
    struct timeval tv;
    long backwards = 0, calls = 0;
    marker(1);
    int r =
        prctl(PR_SET_TASK_ISOLATION, PR_TASK_ISOLATION_ENABLE | PR_TASK_ISOLATION_STRICT, 0, 0, 0);
    clock_gettime(CLOCK_MONOTONIC, &first);
    long long last = ns_of(&first);
    for (long i = 0; r == 0 && i < n; i++) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        clock_gettime(CLOCK_REALTIME, &w);
        gettimeofday(&tv, NULL);
        backwards += ns_of(&t) < last;
        last = ns_of(&t);
        calls += 3;
    }
    int r2 = prctl(PR_SET_TASK_ISOLATION, 0, 0, 0, 0);
    marker(0);
    printf("vdsotest isol: cpu %d prctl %d/%d, %ld clock calls over %lld ns, %ld backwards\n",
           sched_getcpu(), r, r2, calls, last - ns_of(&first), backwards);
    return r || r2 || backwards;
}

/* PMU event counter 0: INST_RETIRED at EL0 and EL1 (the kernel programs it on every CPU). */
static inline uint32_t inst_read(void)
{
    uint64_t v;
    __asm__ volatile("isb; mrs %0, pmevcntr0_el0" : "=r"(v)::"memory");
    return (uint32_t)v;
}

static inline uint64_t counter_now(void)
{
    uint64_t v;
    __asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v)::"memory");
    return v;
}

/* N calls of clock_gettime(CLOCK_MONOTONIC), in laps short enough for the 32-bit counter. */
static int bench(long n)
{
    enum { LAP = 10000 };
    struct timespec ts;
    uint64_t freq, insts = 0;
    __asm__ volatile("mrs %0, cntfrq_el0" : "=r"(freq));
    for (long i = 0; i < (n / 100 > 100 ? 100 : n / 100 < 2 ? 2 : n / 100); i++) {
        clock_gettime(CLOCK_MONOTONIC, &ts); /* warm-up: the loader's first call resolves */
    }
    uint64_t t0 = counter_now();
    for (long done = 0; done < n;) {
        long lap = n - done < LAP ? n - done : LAP;
        uint32_t i0 = inst_read();
        for (long i = 0; i < lap; i++) {
            clock_gettime(CLOCK_MONOTONIC, &ts);
        }
        insts += (uint32_t)(inst_read() - i0);
        done += lap;
    }
    double ns = (double)(counter_now() - t0) * 1e9 / (double)freq / (double)n;
    if (insts) {
        printf("bench: clock iterations %ld guest_ns_per_op %.1f instructions_per_op %llu\n", n, ns,
               (unsigned long long)((insts + (uint64_t)n / 2) / (uint64_t)n));
    } else {
        printf("bench: clock iterations %ld guest_ns_per_op %.1f instructions_per_op n/a\n", n, ns);
    }
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 2 && strncmp(argv[1], "clock=", 6) == 0) {
        return bench(atol(argv[1] + 6));
    }
    if (argc == 4 && strcmp(argv[1], "isol") == 0) {
        return isol(atoi(argv[2]), atol(argv[3]));
    }
    if (argc == 2 && strcmp(argv[1], "check") == 0) {
        int r = check();
        printf("vdsotest check: %s%s\n", r ? "FAILED: " : "ok", r ? fail_why : "");
        return r;
    }
    fprintf(stderr, "usage: vdsotest check | isol CPU N | clock=N\n");
    return 2;
}
