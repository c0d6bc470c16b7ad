/* SPDX-License-Identifier: MIT */
/*
 * lsdev — list the devices the kernel can hand to a user-space driver.
 *
 *   lsdev [-a]
 *
 * Two tables.  The virtio-mmio transports with a device behind them (-a: every transport, empty
 * ones too): slot (what zt_claim takes), register window, interrupt (INTID; it stays disabled,
 * routed to housekeeping), virtio device type and transport version (1 legacy, 2 modern), the
 * holder's pid and its DMA region or "-", and how the DMA is confined: "UNCONFINED" (no IOMMU:
 * the device can write all memory; a claim needs ZT_CLAIM_UNCONFINED_DMA).  Then the functions of
 * the PCIe root bus: slot, bus:device.function, vendor:device, class, kind, INTx line (off),
 * DMA ("smmu" with the stream id: confined to the holder's region; "UNCONFINED"; "none": the
 * function cannot DMA; "no address": a BAR fits no window, it cannot be claimed; "broken": it
 * failed to reset), holder and region, and a line with its BARs.
 */
#include <stdio.h>
#include <string.h>

#include "net/dev.h"
#include "zt.h"

static struct zt_device_info info[ZT_DEVICE_SLOTS];

static const char *dma_text(const struct zt_device_info *d, char *buf, size_t len)
{
    if (d->flags & ZT_DEV_BROKEN) {
        return "broken";
    }
    if (d->flags & ZT_DEV_NO_ADDRESS) {
        return "no address";
    }
    if (!(d->flags & ZT_DEV_DMA)) {
        return "none";
    }
    if (d->flags & ZT_DEV_IOMMU) {
        snprintf(buf, len, "smmu:%u", (unsigned)d->sid);
        return buf;
    }
    return "UNCONFINED";
}

static void holder_text(const struct zt_device_info *d, char holder[16], char region[24])
{
    strcpy(holder, "-");
    strcpy(region, "-");
    if (d->holder) {
        snprintf(holder, 16, "%d", (int)d->holder);
        snprintf(region, 24, "%llu KiB", (unsigned long long)(d->dma_size / 1024));
    }
}

static void mmio_table(long n, bool all)
{
    bool header = false;
    for (long i = 0; i < n; i++) {
        const struct zt_device_info *d = &info[i];
        char holder[16], region[24], mode[24];
        if (d->kind != ZT_DEV_VIRTIO_MMIO || (!all && d->device_id == 0)) {
            continue;
        }
        if (!header) {
            printf("slot  base        size   intid  type     version  holder  region    dma\n");
            header = true;
        }
        holder_text(d, holder, region);
        printf("%4u  0x%08llx  0x%03llx  %5u  %-7s  %7u  %6s  %-8s  %s\n", d->slot,
               (unsigned long long)d->base, (unsigned long long)d->size, d->intid,
               dev_type_name(d->device_id), d->version, holder, region,
               d->device_id ? dma_text(d, mode, sizeof(mode)) : "-");
    }
}

/* "256 bytes", "16 KiB", "1 GiB". */
static const char *size_text(uint64_t bytes, char buf[24])
{
    static const char *const unit[] = {"bytes", "KiB", "MiB", "GiB"};
    unsigned u = 0;
    while (u < 3 && bytes >= 1024 && !(bytes & 1023)) {
        bytes >>= 10;
        u++;
    }
    snprintf(buf, 24, "%llu %s", (unsigned long long)bytes, unit[u]);
    return buf;
}

static void bars_line(const struct zt_device_info *d)
{
    char line[256];
    size_t k = 0;
    for (unsigned b = 0; b < ZT_PCI_BARS && k < sizeof(line); b++) {
        const struct zt_bar *bar = &d->bars[b];
        if (!bar->size) {
            continue;
        }
        k += (size_t)snprintf(line + k, sizeof(line) - k, "%sBAR%u ", k ? "; " : "", b);
        if (k < sizeof(line) && (bar->flags & ZT_BAR_ASSIGNED)) {
            k += (size_t)snprintf(line + k, sizeof(line) - k, "0x%llx ",
                                  (unsigned long long)bar->addr);
        } else if (k < sizeof(line)) {
            k += (size_t)snprintf(line + k, sizeof(line) - k, "unassigned ");
        }
        char size[24];
        if (k < sizeof(line)) {
            k += (size_t)snprintf(
                line + k, sizeof(line) - k, "%s%s%s%s", size_text(bar->size, size),
                (bar->flags & ZT_BAR_IO) ? " i/o" : "", (bar->flags & ZT_BAR_64) ? " 64-bit" : "",
                (bar->flags & ZT_BAR_PREFETCH) ? " prefetchable" : "");
        }
    }
    if (k) {
        printf("      %s\n", line);
    }
}

static void pci_table(long n)
{
    bool header = false;
    for (long i = 0; i < n; i++) {
        const struct zt_device_info *d = &info[i];
        char holder[16], region[24], mode[24];
        if (d->kind != ZT_DEV_PCI) {
            continue;
        }
        if (!header) {
            printf("slot  pci      id         class   type         intid  dma         holder  "
                   "region\n");
            header = true;
        }
        holder_text(d, holder, region);
        printf("%4u  %02x:%02x.%x  %04x:%04x  %06x  %-11s  %5u  %-10s  %6s  %s\n", d->slot,
               (unsigned)(d->bdf >> 8), (unsigned)(d->bdf >> 3 & 31), (unsigned)(d->bdf & 7),
               d->pci_vendor, d->pci_device, (unsigned)d->class_code,
               d->device_id == ZT_VIRTIO_ID_NET     ? "virtio net"
               : (d->class_code >> 8) == 0x0600     ? "host bridge"
               : d->device_id != ZT_DEVICE_ID_OTHER ? "virtio"
                                                    : "other",
               d->intid, dma_text(d, mode, sizeof(mode)), holder, region);
        bars_line(d);
    }
}

int main(int argc, char **argv)
{
    bool all = argc == 2 && strcmp(argv[1], "-a") == 0;
    if (argc > 2 || (argc == 2 && !all)) {
        fprintf(stderr, "usage: lsdev [-a]\n");
        return 2;
    }
    long n = zt_devices(info, ZT_DEVICE_SLOTS);
    if (n < 0) {
        printf("lsdev: zt_devices: -%s\n", zt_errno_name((int)-n));
        return 1;
    }
    n = n < ZT_DEVICE_SLOTS ? n : ZT_DEVICE_SLOTS;
    mmio_table(n, all);
    pci_table(n);
    return 0;
}
