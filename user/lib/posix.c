/* SPDX-License-Identifier: MIT */
/*
 * posix.c — the POSIX-style calls picolibc and ordinary C code expect (read, write, _exit,
 * getpid, nanosleep, clock_gettime, kill, mmap, ...), each a zt_*() call that turns -E...
 * into -1 with errno set.  errno holds Linux values (see zt.h).
 *
 * Also the few libc hooks a static picolibc program links against: _exit, sbrk, isatty,
 * close/lseek (stdio may reference them), each the Linux system call.
 */
#include "zt.h"

#include <sched.h>
#include <unistd.h>

/* -E... -> -1 and errno; anything else passes through. */
static long check(long r)
{
    if (r < 0 && r >= -4095) {
        errno = (int)-r;
        return -1;
    }
    return r;
}

ssize_t read(int fd, void *buf, size_t n)
{
    return check(zt_read(fd, buf, n));
}

ssize_t write(int fd, const void *buf, size_t n)
{
    return check(zt_write(fd, buf, n));
}

/* The process ends here without flushing stdio, as POSIX says; exit() flushes first. */
void _exit(int status)
{
    zt_exit_group(status);
}

pid_t getpid(void)
{
    return (pid_t)zt_getpid();
}

pid_t getppid(void)
{
    return (pid_t)zt_getppid();
}

pid_t gettid(void)
{
    return (pid_t)zt_gettid();
}

int sched_yield(void)
{
    return (int)check(zt_sched_yield());
}

int sched_setaffinity(pid_t tid, size_t size, const void *mask)
{
    return (int)check(zt_sched_setaffinity(tid, size, mask));
}

int sched_getaffinity(pid_t tid, size_t size, void *mask)
{
    long r = check(zt_sched_getaffinity(tid, size, mask));

    return r < 0 ? -1 : 0;
}

int getcpu(unsigned *cpu, unsigned *node)
{
    return (int)check(zt_getcpu(cpu, node));
}

int nanosleep(const struct timespec *req, struct timespec *rem)
{
    return (int)check(zt_nanosleep(req, rem));
}

int clock_gettime(clockid_t clock, struct timespec *ts)
{
    return (int)check(zt_clock_gettime((int)clock, ts));
}

unsigned sleep(unsigned seconds)
{
    zt_sleep_ns((uint64_t)seconds * 1000000000ull);
    return 0;
}

int usleep(useconds_t us)
{
    zt_sleep_ns((uint64_t)us * 1000ull);
    return 0;
}

int kill(pid_t pid, int sig)
{
    return (int)check(zt_kill(pid, sig));
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    long r = zt_mmap(addr, len, prot, flags, fd, off);

    return check(r) == -1 ? MAP_FAILED : (void *)r;
}

int munmap(void *addr, size_t len)
{
    return (int)check(zt_munmap(addr, len));
}

int prctl(int option, unsigned long a2, unsigned long a3, unsigned long a4, unsigned long a5)
{
    return (int)check(zt_prctl(option, a2, a3, a4, a5));
}

pid_t wait4(pid_t pid, int *status, int options, void *rusage)
{
    return (pid_t)check(zt_wait4(pid, status, options, rusage));
}

pid_t waitpid(pid_t pid, int *status, int options)
{
    return wait4(pid, status, options, NULL);
}

int isatty(int fd)
{
    char termios[64]; /* the kernel's struct termios is 36 bytes */

    return check(zt_ioctl(fd, 0x5401 /* TCGETS */, termios)) == 0;
}

int close(int fd)
{
    return (int)check(zt_syscall1(SYS_close, fd));
}

off_t lseek(int fd, off_t off, int whence)
{
    return (off_t)check(zt_syscall3(SYS_lseek, fd, off, whence));
}

/* ---- heap: malloc grows through sbrk, sbrk through brk ---- */

static uintptr_t heap_end; /* current break; 0 until the first call asks the kernel */

int brk(void *addr)
{
    long r = zt_brk(addr);

    if (r < 0) {
        return (int)check(r);
    }
    heap_end = (uintptr_t)r;
    if ((uintptr_t)r != (uintptr_t)addr) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

/* Threads may call malloc concurrently: picolibc's malloc takes its own lock around sbrk. */
void *sbrk(ptrdiff_t incr)
{
    uintptr_t old;

    if (heap_end == 0) {
        long r = zt_brk(NULL);

        if (r < 0) {
            errno = ENOMEM;
            return (void *)-1;
        }
        heap_end = (uintptr_t)r;
    }
    old = heap_end;
    if (incr != 0 && brk((void *)(old + incr)) < 0) {
        errno = ENOMEM;
        return (void *)-1;
    }
    return (void *)old;
}
