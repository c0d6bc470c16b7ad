/* SPDX-License-Identifier: MIT */
/*
 * devtest — checks of the device claim system calls (zt_devices, zt_claim, zt_release) from
 * user space: argument errors, one holder, the reset on release, exit and kill, a holder's
 * fork (the child inherits none of the device's mappings), and free memory back at its
 * baseline.
 *
 *   devtest [-s SLOT]           run every check on the network device (or SLOT)
 *   devtest -b SLOT             (child) expect -EBUSY from a claim of SLOT: exit 0 if so
 *   devtest -h SLOT             (child) claim SLOT, set its status to 3, exit without releasing
 *   devtest -w SLOT             (child) claim SLOT, set its status to 3, wait to be killed
 *   devtest -e SLOT             (child) claim SLOT, set its status to 3, execve devtest -E SLOT
 *   devtest -E SLOT             (the same child after execve) exit 0 if the claim ended with the
 *                               old image: release says -EPERM, the device is free and reset
 *
 * Each check prints "devtest: NAME: ok" or "devtest: NAME: FAIL (...)"; the last line is
 * "devtest: N checks, M failed" and the exit status is 1 if M > 0.  The free-page baseline is
 * taken after one claim/release of our own (whatever a first claim leaves cached stays with
 * this process) and after the shell that started us has settled.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/dev.h"
#include "zt.h"

#define DMA_BYTES (64 * 1024)
#define STATUS    0x070
#define MAGIC     0x74726976

static int checks, failed, slot = -1;

static void check(const char *name, bool ok, const char *fmt, long a, long b)
{
    checks++;
    if (ok) {
        printf("devtest: %s: ok\n", name);
        return;
    }
    failed++;
    printf("devtest: %s: FAIL (", name);
    printf(fmt, a, b);
    printf(")\n");
}

static void expect_err(const char *name, long r, int err)
{
    check(name, r == -err, "got %ld, want %ld", r, -err);
}

static volatile uint32_t *reg(const struct zt_claim *c, unsigned off)
{
    return (volatile uint32_t *)(uintptr_t)(c->regs + off);
}

static uint64_t free_pages(void)
{
    struct zt_meminfo mi;
    zt_meminfo(&mi);
    return mi.free_pages;
}

/* After the execve of a holder: the claim ended with the old image (a claim's addresses are
 * the old image's).  Exit 0, or which check failed. */
static int after_exec(int s)
{
    struct zt_device_info info[32];
    struct zt_claim c;
    if (zt_release((unsigned)s) != -EPERM) {
        return 2; /* still the holder */
    }
    if (zt_devices(info, 32) <= s || info[s].holder != 0) {
        return 3;
    }
    if (zt_claim((unsigned)s, DMA_BYTES, 0, &c) != 0) {
        return 4;
    }
    int reset = *reg(&c, STATUS) == 0;
    zt_release((unsigned)s);
    return reset ? 0 : 5;
}

static int child_main(char mode, int s)
{
    struct zt_claim c;
    if (mode == 'E') {
        return after_exec(s);
    }
    long r = zt_claim((unsigned)s, DMA_BYTES, 0, &c);
    if (mode == 'b') {
        return r == -EBUSY ? 0 : 1;
    }
    if (r) {
        return 1;
    }
    *reg(&c, STATUS) = 3; /* ACKNOWLEDGE | DRIVER: a device someone started to drive */
    if (mode == 'h') {
        return 0; /* exit holding it: the kernel must reset and free */
    }
    if (mode == 'e') { /* exec holding it: the claim must end with this image */
        char sl[8];
        snprintf(sl, sizeof(sl), "%d", s);
        char *argv[] = {"devtest", "-E", sl, NULL}, *envp[] = {NULL};
        zt_syscall3(SYS_execve, (long)"/bin/devtest", (long)argv, (long)envp);
        return 6;
    }
    for (;;) {
        zt_sleep_ns(1000000000ull);
    }
}

static int spawn(char mode)
{
    char m[3] = {'-', mode, 0}, s[8];
    snprintf(s, sizeof(s), "%d", slot);
    char *argv[] = {"devtest", m, s, NULL};
    return (int)zt_spawn("/bin/devtest", argv, 0);
}

static int empty_slot(void)
{
    struct zt_device_info info[32];
    long n = zt_devices(info, 32);
    for (long i = 0; i < n && i < 32; i++) {
        if (info[i].device_id == 0) {
            return (int)i;
        }
    }
    return -1;
}

static void bad_arguments(void)
{
    struct zt_claim c;
    expect_err("claim slot 99 -> EINVAL", zt_claim(99, DMA_BYTES, 0, &c), EINVAL);
    if (empty_slot() >= 0) {
        expect_err("claim an empty transport -> EINVAL",
                   zt_claim((unsigned)empty_slot(), DMA_BYTES, 0, &c), EINVAL);
    }
    expect_err("claim size 0 -> EINVAL", zt_claim(slot, 0, 0, &c), EINVAL);
    expect_err("claim size 4095 -> EINVAL", zt_claim(slot, 4095, 0, &c), EINVAL);
    expect_err("claim flags 1 -> EINVAL", zt_claim(slot, DMA_BYTES, 1, &c), EINVAL);
    expect_err("claim past ZT_DMA_MAX -> ENOMEM", zt_claim(slot, ZT_DMA_MAX + 4096, 0, &c), ENOMEM);
    expect_err("claim with a bad out pointer -> EFAULT",
               zt_claim(slot, DMA_BYTES, 0, (struct zt_claim *)16), EFAULT);
    expect_err("release a slot not held -> EPERM", zt_release(slot), EPERM);
    expect_err("release slot 99 -> EINVAL", zt_release(99), EINVAL);
}

/* Claim, look through the mappings, check one holder, release, see the reset. */
static void claim_and_release(void)
{
    struct zt_claim c, c2;
    long r = zt_claim(slot, DMA_BYTES, 0, &c);
    check("claim", r == 0, "got %ld, want %ld", r, 0);
    if (r) {
        return;
    }
    check("registers mapped: magic", *reg(&c, 0) == MAGIC, "read 0x%lx", *reg(&c, 0), 0);
    volatile uint64_t *dma = (volatile uint64_t *)(uintptr_t)c.dma;
    bool zero = true;
    for (size_t i = 0; i < DMA_BYTES / 8; i++) {
        zero = zero && dma[i] == 0;
        dma[i] = i;
    }
    check("DMA region zeroed and writable", zero && dma[5] == 5, "zero %ld", zero, 0);
    check("DMA region physical address page-aligned", c.dma_phys && !(c.dma_phys & 4095), "0x%lx",
          (long)c.dma_phys, 0);
    expect_err("second claim, same process -> EBUSY", zt_claim(slot, DMA_BYTES, 0, &c2), EBUSY);
    int status = -1, pid = spawn('b');
    zt_wait(pid, &status);
    check("second claim, another process -> EBUSY", pid > 0 && status == 0, "pid %ld status %ld",
          pid, status);
    /* madvise(MADV_DONTNEED) zeroes anonymous memory only: a device's registers and DMA
     * region are the device's (before, the kernel zeroed the register page through an
     * address that maps no RAM, and took a fault in the kernel) */
    long m1 = zt_syscall6(SYS_madvise, (long)(c.regs & ~4095ull), 4096, 4 /* DONTNEED */, 0, 0, 0);
    long m2 = zt_syscall6(SYS_madvise, (long)c.dma, 4096, 4, 0, 0, 0);
    check("madvise(DONTNEED) leaves the device's pages alone",
          m1 == 0 && m2 == 0 && *reg(&c, 0) == MAGIC && dma[5] == 5, "madvise %ld, %ld",
          m1 ? m1 : m2, m1 || m2 ? 0 : (long)dma[5]);
    *reg(&c, STATUS) = 3;
    r = zt_release(slot);
    check("release", r == 0, "got %ld, want %ld", r, 0);
    r = zt_claim(slot, DMA_BYTES, 0, &c);
    check("released device was reset (status 0)", r == 0 && *reg(&c, STATUS) == 0,
          "claim %ld status %ld", r, r ? -1 : (long)*reg(&c, STATUS));
    zt_release(slot);
}

/* fork() of a holder: the child does not inherit the device's mappings (reading the DMA
 * region is SIGSEGV there); the holder keeps them, contents and all. */
static void holder_forks(void)
{
    struct zt_claim c;
    int status = -1;
    if (zt_claim(slot, DMA_BYTES, 0, &c) != 0) {
        check("holder forks: claim", false, "claim failed %ld", 0, 0);
        return;
    }
    volatile uint64_t *dma = (volatile uint64_t *)(uintptr_t)c.dma;
    dma[7] = 0x600d;
    long pid = zt_syscall6(SYS_clone, SIGCHLD, 0, 0, 0, 0, 0);
    if (pid == 0) {
        zt_exit_group((int)(dma[7] & 0x7f)); /* must fault first */
    }
    if (pid > 0) {
        zt_wait((int)pid, &status);
    }
    check("holder forks: the child cannot reach the device (SIGSEGV)",
          pid > 0 && zt_wifsignaled(status) && zt_wtermsig(status) == SIGSEGV,
          "pid %ld status 0x%lx", pid, status);
    check("holder forks: the holder keeps its mappings", dma[7] == 0x600d && *reg(&c, 0) == MAGIC,
          "dma[7] 0x%lx", (long)dma[7], 0);
    zt_release(slot);
}

/* A child that holds the device ends by exit or by SIGKILL: the device comes back reset. */
static void holder_ends(char mode, const char *name)
{
    struct zt_claim c;
    int status = -1, pid = spawn(mode);
    if (mode == 'w') {
        struct zt_device_info info[32];
        for (int i = 0; i < 1000; i++) {
            zt_devices(info, 32);
            if (info[slot].holder == pid) {
                break;
            }
            zt_sleep_ns(10000000);
        }
        zt_kill(pid, SIGKILL);
    }
    zt_wait(pid, &status);
    long r = zt_claim(slot, DMA_BYTES, 0, &c);
    check(name, r == 0 && *reg(&c, STATUS) == 0, "claim %ld status %ld", r,
          r ? -1 : (long)*reg(&c, STATUS));
    zt_release(slot);
}

/* A holder that calls execve: the claim ends with the image that made it (the new image finds
 * the device free and reset and is not its holder). */
static void holder_execs(void)
{
    int status = -1, pid = spawn('e');
    zt_wait(pid, &status);
    check("holder execs: the claim ends, device reset, claimable again",
          pid > 0 && zt_wifexited(status) && zt_wexitstatus(status) == 0,
          "pid %ld wait status 0x%lx", pid, status);
}

int main(int argc, char **argv)
{
    if (argc == 3 && argv[1][0] == '-' && strchr("bhweE", argv[1][1])) {
        return child_main(argv[1][1], atoi(argv[2]));
    }
    if (argc == 3 && !strcmp(argv[1], "-s")) {
        slot = atoi(argv[2]);
    } else if (argc != 1) {
        fprintf(stderr, "usage: devtest [-s SLOT]\n");
        return 2;
    }
    if (slot < 0 && (slot = dev_find(ZT_VIRTIO_ID_NET)) < 0) {
        printf("devtest: no network device\n");
        return 1;
    }
    struct zt_claim c;
    zt_claim(slot, DMA_BYTES, 0, &c); /* warm up: anything a first claim caches */
    zt_release(slot);
    zt_sleep_ns(200 * 1000 * 1000); /* let the shell settle into wait4 */
    uint64_t base = free_pages();
    bad_arguments();
    claim_and_release();
    holder_forks();
    holder_ends('h', "holder exited: device reset, claimable again");
    holder_ends('w', "holder killed: device reset, claimable again");
    holder_execs();
    for (int i = 0; i < 100; i++) {
        zt_claim(slot, DMA_BYTES, 0, &c);
        zt_release(slot);
    }
    uint64_t after = free_pages();
    printf("devtest: free pages %llu before, %llu after\n", (unsigned long long)base,
           (unsigned long long)after);
    check("free pages back at the baseline", after == base, "%ld before, %ld after", (long)base,
          (long)after);
    printf("devtest: %d checks, %d failed\n", checks, failed);
    return failed != 0;
}
