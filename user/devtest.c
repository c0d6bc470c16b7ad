/* SPDX-License-Identifier: MIT */
/*
 * devtest — checks of the device claim system calls (zt_devices, zt_claim, zt_release) from
 * user space, on a virtio-mmio transport or a virtio-pci function: argument errors, one
 * holder, the reset on release, exit and kill (while the device is running, receiving what the
 * host sends), a holder's execve (the claim ends with the image that made it), a holder's fork
 * (the child inherits none of the device's mappings), madvise over the device's pages, the other
 * functions of the bus (one with a BAR that got no address, one that cannot DMA), and free
 * memory and kernel stacks back at their baseline after 200 claim/release cycles.
 *
 *   devtest [-s SLOT]           run every check on the network device (or SLOT)
 *   devtest -b SLOT             (child) expect -EBUSY from a claim of SLOT: exit 0 if so
 *   devtest -h SLOT             (child) claim SLOT, start the device, exit without releasing
 *   devtest -w SLOT             (child) claim SLOT, bring the NIC up and poll it until killed
 *   devtest -e SLOT             (child) claim SLOT, start the device, execve devtest -E SLOT
 *   devtest -E SLOT             (the same child after execve) exit 0 if the claim ended with the
 *                               old image: release says -EPERM, the device is free and reset
 *
 * Each check prints "devtest: NAME: ok" or "devtest: NAME: FAIL (...)"; the last line is
 * "devtest: N checks, M failed" and the exit status is 1 if M > 0.  The baselines are taken
 * after one claim/release of our own (whatever a first claim leaves cached stays with this
 * process) and after the shell that started us has settled.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/dev.h"
#include "net/nic.h"
#include "zt.h"

#define DMA_BYTES (64 * 1024)
#define MAGIC     0x74726976
#define CYCLES    200

static int checks, failed, slot = -1;
static unsigned flags; /* what a claim of `slot` needs: ZT_CLAIM_V2, and the no-IOMMU consent
                          when nothing confines its DMA */
static bool pci, unconfined;
static struct nic nic;

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

static struct zt_meminfo meminfo(void)
{
    struct zt_meminfo mi;
    zt_meminfo(&mi);
    return mi;
}

/* The device's virtio status through whichever transport it has, or -1. */
static long status_of(const struct zt_claim *c)
{
    struct vdev v;
    char err[160];
    return vdev_open(&v, c, err, sizeof(err)) == 0 ? (long)vdev_status(&v) : -1;
}

static void set_status(const struct zt_claim *c, uint8_t s)
{
    struct vdev v;
    char err[160];
    if (vdev_open(&v, c, err, sizeof(err)) == 0) {
        vdev_set_status(&v, s);
    }
}

static long claim(unsigned s, uint64_t bytes, struct zt_claim *c)
{
    return zt_claim(s, bytes, flags, c);
}

/* The child after its execve (-E): the claim ended with the old image.  0, or which part
 * failed. */
static int after_exec(int s)
{
    struct zt_device_info info;
    struct zt_claim c;
    if (zt_release((unsigned)s) != -EPERM) {
        return 2; /* still the holder */
    }
    if (dev_info((unsigned)s, &info) != 0 || info.holder != 0) {
        return 3;
    }
    if (claim((unsigned)s, DMA_BYTES, &c) != 0) {
        return 4;
    }
    int reset = status_of(&c) == 0;
    zt_release((unsigned)s);
    return reset ? 0 : 5;
}

static int child_main(char mode, int s)
{
    struct zt_claim c;
    static const uint8_t ip[4] = {10, 0, 2, 15};
    if (mode == 'E') {
        return after_exec(s);
    }
    long r = claim((unsigned)s, mode == 'w' ? nic_dma_bytes() : DMA_BYTES, &c);
    if (mode == 'b') {
        return r == -EBUSY ? 0 : 1;
    }
    if (r) {
        return 1;
    }
    if (mode == 'h') {
        set_status(&c, 3); /* ACKNOWLEDGE | DRIVER: a device someone started to drive */
        return 0;          /* exit holding it: the kernel must reset and free */
    }
    if (mode == 'e') { /* exec holding it: the claim must end with this image */
        set_status(&c, 3);
        char sl[8];
        snprintf(sl, sizeof(sl), "%d", s);
        char *argv[] = {"devtest", "-E", sl, NULL}, *envp[] = {NULL};
        zt_syscall3(SYS_execve, (long)"/bin/devtest", (long)argv, (long)envp);
        return 6;
    }
    char err[200];
    if (nic_open(&nic, &c, ip, 7, err, sizeof(err)) != 0) {
        printf("devtest: child: %s\n", err);
        return 1;
    }
    printf("devtest: child %d polls the device\n", (int)zt_getpid());
    fflush(stdout);
    for (;;) {
        nic_poll(&nic); /* receive buffers posted, the device writing them: killed mid-transfer */
    }
}

static int spawn(char mode)
{
    char m[3] = {'-', mode, 0}, s[8];
    snprintf(s, sizeof(s), "%d", slot);
    char *argv[] = {"devtest", m, s, NULL};
    return (int)zt_spawn("/bin/devtest", argv, 0);
}

/* A slot whose entry matches, or -1. */
static int find_slot(bool (*want)(const struct zt_device_info *d))
{
    static struct zt_device_info info[ZT_DEVICE_SLOTS];
    long n = zt_devices(info, ZT_DEVICE_SLOTS);
    for (long i = 0; i < n && i < ZT_DEVICE_SLOTS; i++) {
        if (want(&info[i])) {
            return (int)info[i].slot;
        }
    }
    return -1;
}

static bool is_empty_transport(const struct zt_device_info *d)
{
    return d->kind == ZT_DEV_VIRTIO_MMIO && d->device_id == 0;
}

static bool has_no_address(const struct zt_device_info *d)
{
    return d->flags & ZT_DEV_NO_ADDRESS;
}

static bool cannot_dma(const struct zt_device_info *d)
{
    return d->kind == ZT_DEV_PCI && !(d->flags & (ZT_DEV_DMA | ZT_DEV_NO_ADDRESS | ZT_DEV_BROKEN));
}

static void bad_arguments(void)
{
    struct zt_claim c;
    expect_err("claim slot 99 -> EINVAL", zt_claim(99, DMA_BYTES, flags, &c), EINVAL);
    int empty = find_slot(is_empty_transport);
    if (empty >= 0) {
        expect_err("claim an empty transport -> EINVAL",
                   zt_claim((unsigned)empty, DMA_BYTES, flags, &c), EINVAL);
    }
    expect_err("claim size 0 -> EINVAL", claim(slot, 0, &c), EINVAL);
    expect_err("claim size 4095 -> EINVAL", claim(slot, 4095, &c), EINVAL);
    expect_err("claim an unknown flag -> EINVAL", zt_claim(slot, DMA_BYTES, flags | 0x8, &c),
               EINVAL);
    expect_err("claim past ZT_DMA_MAX -> ENOMEM", claim(slot, ZT_DMA_MAX + 4096, &c), ENOMEM);
    expect_err("claim with a bad out pointer -> EFAULT",
               zt_claim(slot, DMA_BYTES, flags, (struct zt_claim *)16), EFAULT);
    if (unconfined) {
        expect_err("claim without ZT_CLAIM_UNCONFINED_DMA (no IOMMU) -> EPERM",
                   zt_claim(slot, DMA_BYTES, flags & ~ZT_CLAIM_UNCONFINED_DMA, &c), EPERM);
    }
    if (pci) {
        expect_err("claim a PCI function without ZT_CLAIM_V2 -> EINVAL",
                   zt_claim(slot, DMA_BYTES, flags & ~ZT_CLAIM_V2, &c), EINVAL);
    }
    expect_err("release a slot not held -> EPERM", zt_release(slot), EPERM);
    expect_err("release slot 99 -> EINVAL", zt_release(99), EINVAL);
}

/* Version 1 of the ABI: a caller that knows only 48-byte entries and the 56-byte claim gets
 * exactly those bytes, and the same fields. */
static void version_1(void)
{
    static uint8_t buf[ZT_DEVICE_SLOTS * 48 + 64];
    static struct zt_device_info v2[ZT_DEVICE_SLOTS];
    memset(buf, 0xa5, sizeof(buf));
    long n = zt_syscall2(SYS_zt_devices, buf, ZT_DEVICE_SLOTS);
    long n2 = zt_devices(v2, ZT_DEVICE_SLOTS);
    bool same = n == n2 && n > 0 && n <= ZT_DEVICE_SLOTS;
    for (long k = 0; same && k < n; k++) {
        same = !memcmp(buf + 48 * k, &v2[k], 48); /* the version-1 prefix, entry by entry */
    }
    check("zt_devices version 1: 48-byte entries, the same fields", same && buf[48 * n] == 0xa5,
          "%ld devices, %ld in version 2", n, n2);
    if (pci) {
        return; /* a PCI function needs ZT_CLAIM_V2 (checked with the bad arguments) */
    }
    uint8_t out[sizeof(struct zt_claim)];
    memset(out, 0xa5, sizeof(out));
    long r = zt_claim(slot, DMA_BYTES, flags & ~ZT_CLAIM_V2, (struct zt_claim *)out);
    bool tail = true;
    for (size_t i = 56; i < sizeof(out); i++) {
        tail = tail && out[i] == 0xa5;
    }
    check("zt_claim version 1: 56 bytes written, no more", r == 0 && tail && out[0] != 0xa5,
          "claim %ld, tail untouched %ld", r, tail);
    if (r == 0) {
        zt_release(slot);
    }
}

/* The other functions of the bus, where there are such: a BAR that got no address; a
 * function that cannot DMA (the host bridge). */
static void other_functions(void)
{
    struct zt_claim c;
    int s = find_slot(has_no_address);
    if (s >= 0) {
        expect_err("claim a function whose BAR fits no window -> ENXIO",
                   zt_claim((unsigned)s, DMA_BYTES, ZT_CLAIM_V2 | ZT_CLAIM_UNCONFINED_DMA, &c),
                   ENXIO);
    }
    s = find_slot(cannot_dma);
    if (s >= 0) {
        expect_err("claim a function that cannot DMA with ZT_CLAIM_UNCONFINED_DMA -> EINVAL",
                   zt_claim((unsigned)s, 0, ZT_CLAIM_V2 | ZT_CLAIM_UNCONFINED_DMA, &c), EINVAL);
        expect_err("claim a function that cannot DMA with a DMA region -> EINVAL",
                   zt_claim((unsigned)s, DMA_BYTES, ZT_CLAIM_V2, &c), EINVAL);
        long r = zt_claim((unsigned)s, 0, ZT_CLAIM_V2, &c);
        check("claim a function that cannot DMA, registers only", r == 0 && c.dma == 0,
              "got %ld, dma %ld", r, r ? 0 : (long)c.dma);
        zt_release((unsigned)s);
    }
}

/* Claim, look through the mappings, check one holder, release, see the reset. */
static void claim_and_release(void)
{
    struct zt_claim c, c2;
    long r = claim(slot, DMA_BYTES, &c);
    check("claim", r == 0, "got %ld, want %ld", r, 0);
    if (r) {
        return;
    }
    check("registers mapped: a virtio network device", status_of(&c) >= 0, "status %ld",
          status_of(&c), 0);
    volatile uint64_t *dma = (volatile uint64_t *)(uintptr_t)c.dma;
    bool zero = true;
    for (size_t i = 0; i < DMA_BYTES / 8; i++) {
        zero = zero && dma[i] == 0;
        dma[i] = i;
    }
    check("DMA region zeroed and writable", zero && dma[5] == 5, "zero %ld", zero, 0);
    if (c.dma_mode == ZT_DEV_IOMMU) {
        check("DMA region at the I/O address ZT_IOVA_BASE (behind the SMMU)",
              c.dma_phys == ZT_IOVA_BASE, "0x%lx", (long)c.dma_phys, 0);
    } else {
        check("DMA region physical address page-aligned, unconfined",
              c.dma_phys && !(c.dma_phys & 4095) && c.dma_mode == ZT_DEV_UNCONFINED,
              "0x%lx mode %ld", (long)c.dma_phys, (long)c.dma_mode);
    }
    expect_err("second claim, same process -> EBUSY", claim(slot, DMA_BYTES, &c2), EBUSY);
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
          m1 == 0 && m2 == 0 && status_of(&c) >= 0 && dma[5] == 5, "madvise %ld, %ld", m1 ? m1 : m2,
          m1 || m2 ? 0 : (long)dma[5]);
    set_status(&c, 3);
    r = zt_release(slot);
    check("release", r == 0, "got %ld, want %ld", r, 0);
    r = claim(slot, DMA_BYTES, &c);
    check("released device was reset (status 0)", r == 0 && status_of(&c) == 0,
          "claim %ld status %ld", r, r ? -1 : status_of(&c));
    zt_release(slot);
}

/* fork() of a holder: the child does not inherit the device's mappings (reading the DMA
 * region is SIGSEGV there); the holder keeps them, contents and all. */
static void holder_forks(void)
{
    struct zt_claim c;
    int status = -1;
    if (claim(slot, DMA_BYTES, &c) != 0) {
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
    check("holder forks: the holder keeps its mappings", dma[7] == 0x600d && status_of(&c) >= 0,
          "dma[7] 0x%lx", (long)dma[7], 0);
    zt_release(slot);
}

/* A child that holds the device ends by exit or by SIGKILL: the device comes back reset. */
static void holder_ends(char mode, const char *name)
{
    struct zt_claim c;
    struct zt_device_info info;
    int status = -1, pid = spawn(mode);
    if (mode == 'w') {
        for (int i = 0; i < 1000; i++) {
            if (dev_info((unsigned)slot, &info) == 0 && info.holder == pid) {
                break;
            }
            zt_sleep_ns(10000000);
        }
        zt_sleep_ns(500000000); /* let it bring the NIC up and receive for a while */
        zt_kill(pid, SIGKILL);
    }
    zt_wait(pid, &status);
    long r = claim(slot, DMA_BYTES, &c);
    check(name, r == 0 && status_of(&c) == 0, "claim %ld status %ld", r, r ? -1 : status_of(&c));
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

static void pick_flags(void)
{
    struct zt_device_info info;
    if (dev_info((unsigned)slot, &info) != 0) {
        return;
    }
    pci = info.kind == ZT_DEV_PCI;
    unconfined = info.flags & ZT_DEV_UNCONFINED;
    flags = ZT_CLAIM_V2 | (unconfined ? ZT_CLAIM_UNCONFINED_DMA : 0);
    printf("devtest: slot %d: %s, DMA %s\n", slot, pci ? "virtio-pci" : "virtio-mmio",
           unconfined ? "unconfined (no IOMMU)" : "confined by the SMMU");
}

int main(int argc, char **argv)
{
    if (argc == 3 && argv[1][0] == '-' && strchr("bhweE", argv[1][1])) {
        slot = atoi(argv[2]);
        pick_flags();
        return child_main(argv[1][1], slot);
    }
    if (argc == 3 && !strcmp(argv[1], "-s")) {
        slot = atoi(argv[2]);
    } else if (argc != 1) {
        fprintf(stderr, "usage: devtest [-s SLOT]\n");
        return 2;
    }
    if (slot < 0 && (slot = dev_find(ZT_VIRTIO_ID_NET, 0)) < 0) {
        printf("devtest: no network device\n");
        return 1;
    }
    pick_flags();
    struct zt_claim c;
    claim(slot, DMA_BYTES, &c); /* warm up: anything a first claim caches */
    zt_release(slot);
    zt_sleep_ns(200 * 1000 * 1000); /* let the shell settle into wait4 */
    struct zt_meminfo base = meminfo();
    bad_arguments();
    version_1();
    other_functions();
    claim_and_release();
    holder_forks();
    holder_ends('h', "holder exited: device reset, claimable again");
    holder_ends('w', "holder killed while receiving: device reset, claimable again");
    holder_execs();
    long bad = 0;
    for (int i = 0; i < CYCLES; i++) {
        bad += claim(slot, DMA_BYTES, &c) != 0;
        bad += zt_release(slot) != 0;
    }
    check("200 claim/release cycles", bad == 0, "%ld failed calls", bad, 0);
    zt_sleep_ns(200 * 1000 * 1000); /* the children's teardown and stacks: freed by now */
    struct zt_meminfo after = meminfo();
    printf("devtest: free pages %llu before, %llu after; kernel stacks %llu before, %llu after\n",
           (unsigned long long)base.free_pages, (unsigned long long)after.free_pages,
           (unsigned long long)base.kstacks_used, (unsigned long long)after.kstacks_used);
    check("free pages back at the baseline", after.free_pages == base.free_pages,
          "%ld before, %ld after", (long)base.free_pages, (long)after.free_pages);
    check("kernel stacks back at the baseline", after.kstacks_used == base.kstacks_used,
          "%ld before, %ld after", (long)base.kstacks_used, (long)after.kstacks_used);
    printf("devtest: %d checks, %d failed\n", checks, failed);
    return failed != 0;
}
