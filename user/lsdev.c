/* SPDX-License-Identifier: MIT */
/*
 * lsdev — list the devices the kernel can hand to a user-space driver.
 *
 *   lsdev [-a]
 *
 * One line per virtio-mmio transport with a device behind it (-a: every transport, empty
 * ones too): slot (what zt_claim takes), register window, interrupt (INTID; it stays
 * disabled, routed to housekeeping), virtio device type and transport version (1 legacy,
 * 2 modern), and the holder's pid with its DMA region, or "-".
 */
#include <stdio.h>
#include <string.h>

#include "net/dev.h"
#include "zt.h"

#define MAX 32

int main(int argc, char **argv)
{
    struct zt_device_info info[MAX];
    bool all = argc == 2 && strcmp(argv[1], "-a") == 0;
    if (argc > 2 || (argc == 2 && !all)) {
        fprintf(stderr, "usage: lsdev [-a]\n");
        return 2;
    }
    long n = zt_devices(info, MAX);
    if (n < 0) {
        printf("lsdev: zt_devices: -%s\n", zt_errno_name((int)-n));
        return 1;
    }
    printf("slot  base        size   intid  type     version  holder  dma\n");
    for (long i = 0; i < n && i < MAX; i++) {
        const struct zt_device_info *d = &info[i];
        if (!all && d->device_id == 0) {
            continue;
        }
        char holder[16] = "-", dma[24] = "-";
        if (d->holder) {
            snprintf(holder, sizeof(holder), "%d", (int)d->holder);
            snprintf(dma, sizeof(dma), "%llu KiB", (unsigned long long)(d->dma_size / 1024));
        }
        printf("%4u  0x%08llx  0x%03llx  %5u  %-7s  %7u  %6s  %s\n", d->slot,
               (unsigned long long)d->base, (unsigned long long)d->size, d->intid,
               dev_type_name(d->device_id), d->version, holder, dma);
    }
    return 0;
}
