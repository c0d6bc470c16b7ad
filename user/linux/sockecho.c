/* SPDX-License-Identifier: MIT */
/*
 * sockecho — the UDP echo /bin/pipeline does, written the way a Linux programmer would with
 * the kernel's own network stack: one thread per CPU, each with its own UDP socket bound to
 * the echo port with SO_REUSEPORT (the kernel spreads flows over the sockets by their hash),
 * receiving with recvmmsg and answering with sendmmsg in batches.  make compare runs it under
 * Debian's Linux on the same QEMU machine as zerotick's pipeline (tools/compare).
 *
 *   sockecho -c CPULIST [-p PORT] [-x CTLPORT] [-n COUNT] [-b BATCH] [-B SECONDS]
 *   sockecho -M open|close -c CPU   only the window marker, issued on CPU (for a program that
 *                                   issues none itself, e.g. DPDK's testpmd: tools/dpdkvm.py)
 *
 * -c  the CPUs, comma-separated: one echo thread pinned to each (sched_setaffinity)
 * -p  the echo port (default 7); -x the control port (default 9): a datagram there ends the
 *     run; -n: end after COUNT echoes; -b: datagrams per recvmmsg/sendmmsg (default 32)
 * -B  first count the instructions of SECONDS with every thread waiting and nothing to echo
 *     (the machine's background: the housekeeping CPUs' ticks and the like), printed as
 *       sockecho: idle: instructions X in S s
 * Each echo thread opens and closes its CPU's measurement window with a getpid issued as
 * `svc #0x5a5a` / `svc #0xa5a5` (Linux ignores the immediate; QEMU's log shows it, so
 * tools/exclog counts each CPU's exceptions between the two).  The main thread (on the CPU
 * it started on) reads the PMU's instruction count through perf_event_open (a counter on CPU
 * 0 for every task: under QEMU -icount the count is QEMU's one instruction count of every
 * vCPU) when the first echo thread is ready and after the last one ends, and prints:
 *   sockecho: ready: N threads on cpus LIST, udp port P
 *   sockecho: thread I cpu C: echoed E batches B
 *   sockecho: done: echoed E in S s, instructions X (all cpus) | n/a (why)
 * Ending: the thread that sees the control datagram or the COUNTth echo shuts every socket
 * down for reading (a blocked recvmmsg on a UDP socket then returns 0: no timer, no signal).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 16
#define MAX_BATCH   64
#define BUF_BYTES   2048

struct worker {
    pthread_t thread;
    int cpu, fd, index;
    unsigned long long echoed, batches;
};

static struct worker workers[MAX_THREADS];
static int nworkers, ctl_fd = -1;
static unsigned port = 7, ctl_port = 9, batch = 32;
static long count;
static double baseline_s;
static const char *marker;
static unsigned long long total_echoed;
static int stopping, ready;

static void usage(void)
{
    fprintf(stderr, "usage: sockecho -c CPULIST [-p PORT] [-x CTLPORT] [-n COUNT] [-b BATCH]\n");
    exit(2);
}

/* getpid with the window-marker immediate (what zerotick's zt_window_open/close issue). */
static void mark(int open)
{
    register long x8 __asm__("x8") = SYS_getpid;
    register long x0 __asm__("x0");
    if (open) {
        __asm__ volatile("svc #0x5a5a" : "=r"(x0) : "r"(x8) : "memory");
    } else {
        __asm__ volatile("svc #0xa5a5" : "=r"(x0) : "r"(x8) : "memory");
    }
}

static int udp_socket(unsigned p, int reuseport)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0), one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)p)};
    if (fd < 0 || (reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one))) ||
        bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        fprintf(stderr, "sockecho: udp port %u: %s\n", p, strerror(errno));
        exit(1);
    }
    return fd;
}

static void stop_all(void)
{
    if (__atomic_exchange_n(&stopping, 1, __ATOMIC_ACQ_REL)) {
        return;
    }
    for (int i = 0; i < nworkers; i++) {
        shutdown(workers[i].fd, SHUT_RD);
    }
    shutdown(ctl_fd, SHUT_RD);
}

static void *echo_main(void *arg)
{
    struct worker *w = arg;
    static __thread char bufs[MAX_BATCH][BUF_BYTES];
    struct mmsghdr msgs[MAX_BATCH];
    struct iovec iov[MAX_BATCH];
    struct sockaddr_in from[MAX_BATCH];
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(w->cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0) {
        fprintf(stderr, "sockecho: cpu %d: %s\n", w->cpu, strerror(errno));
        exit(1);
    }
    sched_yield(); /* now on that CPU */
    mark(1);
    __atomic_fetch_add(&ready, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&stopping, __ATOMIC_ACQUIRE)) {
        for (unsigned i = 0; i < batch; i++) {
            iov[i] = (struct iovec){bufs[i], BUF_BYTES};
            msgs[i].msg_hdr = (struct msghdr){.msg_name = &from[i],
                                              .msg_namelen = sizeof(from[i]),
                                              .msg_iov = &iov[i],
                                              .msg_iovlen = 1};
        }
        int n = recvmmsg(w->fd, msgs, batch, MSG_WAITFORONE, NULL);
        if (n <= 0) {
            if (n < 0 && errno == EINTR) {
                continue;
            }
            break; /* shut down (0) or an error */
        }
        for (int i = 0; i < n; i++) { /* the reply: the same bytes back to the sender */
            iov[i].iov_len = msgs[i].msg_len;
        }
        for (int sent = 0; sent < n;) {
            int k = sendmmsg(w->fd, msgs + sent, (unsigned)(n - sent), 0);
            if (k <= 0) {
                break;
            }
            sent += k;
        }
        w->echoed += (unsigned long long)n;
        w->batches++;
        unsigned long long t =
            __atomic_add_fetch(&total_echoed, (unsigned long long)n, __ATOMIC_RELAXED);
        if (count && (long)t >= count) {
            stop_all();
        }
    }
    mark(0);
    return NULL;
}

static void *ctl_main(void *arg)
{
    char b[64];
    (void)arg;
    if (recv(ctl_fd, b, sizeof(b), 0) >= 0) {
        stop_all();
    }
    return NULL;
}

/* A counting PMU event for instructions on CPU 0, every task (what perf stat -a -C 0 does);
 * -1 with the reason in why. */
static int open_counter(char *why, size_t n)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.type = PERF_TYPE_HARDWARE;
    a.size = sizeof(a);
    a.config = PERF_COUNT_HW_INSTRUCTIONS;
    a.disabled = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, -1, 0, -1, 0);
    if (fd < 0) {
        snprintf(why, n, "perf_event_open: %s", strerror(errno));
    }
    return fd;
}

static unsigned long long read_counter(int fd)
{
    unsigned long long v = 0;
    if (fd < 0 || read(fd, &v, sizeof(v)) != sizeof(v)) {
        return 0;
    }
    return v;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void parse(int argc, char **argv)
{
    int opt;
    while ((opt = getopt(argc, argv, "c:p:x:n:b:B:M:")) != -1) {
        switch (opt) {
        case 'c':
            for (char *s = optarg, *end; *s; s = *end ? end + 1 : end) {
                long v = strtol(s, &end, 10);
                if (end == s || v < 0 || v >= CPU_SETSIZE || nworkers == MAX_THREADS ||
                    (*end && *end != ',')) {
                    usage();
                }
                workers[nworkers].index = nworkers;
                workers[nworkers++].cpu = (int)v;
            }
            break;
        case 'p':
            port = (unsigned)atoi(optarg);
            break;
        case 'x':
            ctl_port = (unsigned)atoi(optarg);
            break;
        case 'n':
            count = atol(optarg);
            break;
        case 'b':
            batch = (unsigned)atoi(optarg);
            break;
        case 'B':
            baseline_s = atof(optarg);
            break;
        case 'M':
            marker = optarg;
            if (strcmp(marker, "open") && strcmp(marker, "close")) {
                usage();
            }
            break;
        default:
            usage();
        }
    }
    if (nworkers == 0 || batch == 0 || batch > MAX_BATCH || port == 0 || port > 65535 ||
        ctl_port == 0 || ctl_port > 65535 || ctl_port == port) {
        usage();
    }
}

/* -M: pin to the one CPU of -c, issue the marker there, end. */
static int only_marker(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(workers[0].cpu, &set);
    if (nworkers != 1 || sched_setaffinity(0, sizeof(set), &set) != 0) {
        fprintf(stderr, "sockecho: -M needs one usable cpu in -c\n");
        return 1;
    }
    sched_yield();
    mark(!strcmp(marker, "open"));
    return 0;
}

int main(int argc, char **argv)
{
    parse(argc, argv);
    if (marker) {
        return only_marker();
    }
    for (int i = 0; i < nworkers; i++) {
        workers[i].fd = udp_socket(port, 1);
    }
    ctl_fd = udp_socket(ctl_port, 0);
    char why[120] = "";
    int counter = open_counter(why, sizeof(why));
    pthread_t ctl;
    pthread_create(&ctl, NULL, ctl_main, NULL);
    for (int i = 0; i < nworkers; i++) {
        pthread_create(&workers[i].thread, NULL, echo_main, &workers[i]);
    }
    while (__atomic_load_n(&ready, __ATOMIC_ACQUIRE) < nworkers) {
        usleep(1000);
    }
    if (counter >= 0) {
        ioctl(counter, PERF_EVENT_IOC_RESET, 0);
        ioctl(counter, PERF_EVENT_IOC_ENABLE, 0);
    }
    if (baseline_s > 0 && counter >= 0) {
        unsigned long long b0 = read_counter(counter);
        double s0 = now_s();
        struct timespec ts = {(time_t)baseline_s,
                              (long)((baseline_s - (double)(time_t)baseline_s) * 1e9)};
        nanosleep(&ts, NULL);
        printf("sockecho: idle: instructions %llu in %.3f s\n", read_counter(counter) - b0,
               now_s() - s0);
    }
    unsigned long long i0 = read_counter(counter);
    double t0 = now_s();
    printf("sockecho: ready: %d threads on cpus", nworkers);
    for (int i = 0; i < nworkers; i++) {
        printf("%s%d", i ? "," : " ", workers[i].cpu);
    }
    printf(", udp port %u\n", port);
    fflush(stdout);
    for (int i = 0; i < nworkers; i++) {
        pthread_join(workers[i].thread, NULL);
    }
    unsigned long long i1 = read_counter(counter);
    double t1 = now_s();
    stop_all();
    pthread_join(ctl, NULL);
    unsigned long long total = 0;
    for (int i = 0; i < nworkers; i++) {
        printf("sockecho: thread %d cpu %d: echoed %llu batches %llu\n", i, workers[i].cpu,
               workers[i].echoed, workers[i].batches);
        total += workers[i].echoed;
    }
    if (counter >= 0) {
        printf("sockecho: done: echoed %llu in %.3f s, instructions %llu (all cpus)\n", total,
               t1 - t0, i1 - i0);
    } else {
        printf("sockecho: done: echoed %llu in %.3f s, instructions n/a (%s)\n", total, t1 - t0,
               why);
    }
    return count && (long)total < count;
}
