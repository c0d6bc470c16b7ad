/* SPDX-License-Identifier: MIT */
/*
 * dmatest — a hostile user-space driver, and its victim: what a device holder can make its
 * device write, with and without an IOMMU.
 *
 *   dmatest hostile SLOT ADDR [SECONDS]
 *       In a child process: claim SLOT (a virtio-net function; the claim takes unconfined DMA
 *       if that is all the machine offers, and says which it got), bring it up, then aim every
 *       receive descriptor at device address ADDR (hex: a kernel physical address, another
 *       process's page, anything) and poll.  The next frame the device receives is written
 *       there — or, behind the SMMU, faults.  The parent reports how the child ended:
 *       "dmatest: hostile child killed by SIGBUS" (the fault ended the claim) or "dmatest:
 *       hostile child saw no fault in N s" (exit 3: the DMA went somewhere).
 *   dmatest victim SLOT SECONDS
 *       Claim SLOT with unconfined DMA (a virtio-mmio transport: the only way to learn a
 *       physical address of one's own memory), fill its one-page DMA region with a pattern,
 *       print "dmatest: victim page 0xPA", wait SECONDS, and check the pattern: "dmatest:
 *       victim page 0xPA intact" or "... CHANGED: N bytes" (exit 1).
 *   dmatest refuse SLOT
 *       Claim SLOT without ZT_CLAIM_UNCONFINED_DMA and print the result (-EPERM where no IOMMU
 *       confines it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/dev.h"
#include "net/nic.h"
#include "zt.h"

#define PATTERN 0x5a

static struct nic nic;

static int usage(void)
{
    fprintf(stderr, "usage: dmatest hostile SLOT ADDR [SECONDS] | victim SLOT SECONDS | "
                    "refuse SLOT\n");
    return 2;
}

static long number(const char *s, int base)
{
    char *end;
    long v = strtol(s, &end, base);
    return *s && !*end ? v : -1;
}

/* The child: claim, bring up, aim, poll until killed or `seconds` pass. */
static int hostile(unsigned slot, uint64_t target, double seconds)
{
    static const uint8_t ip[4] = {10, 0, 2, 15};
    struct zt_claim c;
    char err[200];
    long r = zt_claim(slot, nic_dma_bytes(), ZT_CLAIM_V2 | ZT_CLAIM_UNCONFINED_DMA, &c);
    if (r) {
        printf("dmatest: cannot claim slot %u: -%s\n", slot, zt_errno_name((int)-r));
        return 1;
    }
    if (nic_open(&nic, &c, ip, 7, err, sizeof(err)) != 0) {
        printf("dmatest: %s\n", err);
        return 1;
    }
    struct nic_queue *q = &nic.q[0];
    for (uint16_t i = 0; i < NIC_QUEUE_SIZE; i++) {
        virtq_set_desc(&q->rx, i, target, NIC_BUF_SIZE, VIRTQ_DESC_F_WRITE);
    }
    virtq_publish(&q->rx);
    printf("dmatest: pid %d: slot %u (dma %s): every receive buffer aimed at 0x%llx\n",
           (int)zt_getpid(), slot, c.dma_mode == ZT_DEV_IOMMU ? "confined" : "UNCONFINED",
           (unsigned long long)target);
    fflush(stdout);
    uint64_t start = zt_counter(), limit = (uint64_t)(seconds * (double)zt_counter_freq());
    while (zt_counter() - start < limit) {
        nic_poll(&nic);
    }
    printf("dmatest: hostile child saw no fault in %.0f s (rx %llu)\n", seconds,
           (unsigned long long)q->st.rx);
    return 3;
}

static int hostile_parent(unsigned slot, uint64_t target, double seconds)
{
    int status = 0;
    long pid = zt_syscall6(SYS_clone, SIGCHLD, 0, 0, 0, 0, 0);
    if (pid == 0) {
        zt_exit_group(hostile(slot, target, seconds));
    }
    if (pid < 0 || zt_wait((int)pid, &status) < 0) {
        printf("dmatest: fork failed\n");
        return 1;
    }
    if (zt_wifsignaled(status)) {
        printf("dmatest: hostile child killed by %s\n", zt_signal_name(zt_wtermsig(status)));
        return 0;
    }
    printf("dmatest: hostile child exited with status %d\n", zt_wexitstatus(status));
    return 1;
}

static int victim(unsigned slot, double seconds)
{
    struct zt_claim c;
    long r = zt_claim(slot, 4096, ZT_CLAIM_V2 | ZT_CLAIM_UNCONFINED_DMA, &c);
    if (r) {
        printf("dmatest: victim cannot claim slot %u: -%s\n", slot, zt_errno_name((int)-r));
        return 1;
    }
    uint8_t *page = (uint8_t *)(uintptr_t)c.dma;
    memset(page, PATTERN, 4096);
    printf("dmatest: victim page 0x%llx\n", (unsigned long long)c.dma_phys);
    fflush(stdout);
    zt_sleep_ns((uint64_t)(seconds * 1e9));
    unsigned changed = 0;
    for (unsigned i = 0; i < 4096; i++) {
        changed += page[i] != PATTERN;
    }
    if (changed) {
        printf("dmatest: victim page 0x%llx CHANGED: %u bytes\n", (unsigned long long)c.dma_phys,
               changed);
    } else {
        printf("dmatest: victim page 0x%llx intact\n", (unsigned long long)c.dma_phys);
    }
    zt_release(slot);
    return changed != 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        return usage();
    }
    long slot = number(argv[2], 10);
    if (slot < 0 || slot >= ZT_DEVICE_SLOTS) {
        return usage();
    }
    if (!strcmp(argv[1], "hostile") && (argc == 4 || argc == 5)) {
        double seconds = argc == 5 ? strtod(argv[4], NULL) : 20;
        char *end;
        uint64_t target = strtoull(argv[3], &end, 16);
        return *end || seconds <= 0 ? usage() : hostile_parent((unsigned)slot, target, seconds);
    }
    if (!strcmp(argv[1], "victim") && argc == 4) {
        return victim((unsigned)slot, strtod(argv[3], NULL));
    }
    if (!strcmp(argv[1], "refuse") && argc == 3) {
        struct zt_claim c;
        long r = zt_claim((unsigned)slot, 65536, ZT_CLAIM_V2, &c);
        printf("dmatest: claim of slot %ld without ZT_CLAIM_UNCONFINED_DMA: %s%s\n", slot,
               r ? "-" : "", r ? zt_errno_name((int)-r) : "0");
        if (r == 0) {
            zt_release((unsigned)slot);
        }
        return r == -EPERM ? 0 : 1;
    }
    return usage();
}
