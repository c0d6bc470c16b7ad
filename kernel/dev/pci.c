/* SPDX-License-Identifier: MIT */
/*
 * pci.c — the PCIe root bus: enumeration, BAR sizing and assignment, and the few register
 * writes a claim needs (contract in include/kernel/pci.h).
 *
 * What it does, at boot on the boot CPU: reads the vendor id of every device 0-31 of the root
 * bus through ECAM (PCI Express Base 4.0, 7.2.2: function f of device d at ecam + (d << 15 |
 * f << 12)), and of functions 1-7 of multi-function devices; turns each function's decoding and
 * bus mastering off and its INTx off (command register, PCI Local Bus 3.0 6.2.2); sizes every
 * BAR (6.2.5.1: write all ones, read back, the low bits that stay 0 give the size, restore);
 * assigns every memory BAR, largest first, an address in a memory window of the host bridge's
 * `ranges` that the kernel can reach, aligned to its size and to at least a page, so no two
 * BARs ever share a 4 KiB page; notes the SPI each INTx pin would raise (interrupt-map) and the
 * SMMU stream of each function (iommu-map); finds a modern virtio function's common
 * configuration (virtio 1.2, 4.1.4.3) through its capability list, for the reset.
 *
 * What it does not do: cross bridges (only the root bus; a bridge is listed, never
 * configured), assign or decode I/O BARs (no user-space driver needs port I/O: modern virtio
 * is memory-only), use the windows the kernel cannot reach (QEMU virt's 64-bit window at 512
 * GiB), MSI or MSI-X (functions are polled; their interrupts stay off), or touch anything but
 * through arch_mmio_*.  A memory BAR that fits no window makes its function unclaimable, with a
 * boot line that says so; it never stops the boot.
 *
 * State: fns[] is written by pci_init on the boot CPU before any user task runs, then only
 * read.  The command registers are written by pci_enable/pci_disable/pci_reset on behalf of
 * the one holder of a function (device.c serialises them per function): no lock here.
 */
#include "kernel/pci.h"
#include "arch.h"
#include "kernel/lib.h"
#include "kernel/page.h"
#include "kernel/printk.h"

#define ECAM_FN(dev, fn)            ((paddr_t)(dev) << 15 | (paddr_t)(fn) << 12)
#define VENDOR_NONE                 0xffff
#define CLASS_BRIDGE                0x06 /* base class: bridge devices */
#define VIRTIO_VENDOR               0x1af4
#define VIRTIO_MODERN_BASE          0x1040 /* virtio 1.2, 4.1.2.1: device id 0x1040 + virtio type */
#define VIRTIO_MODERN_LAST          0x107f
#define VIRTIO_TRANSITIONAL_BASE    0x1000 /* 0x1000-0x103f: the type is the subsystem id */
#define VIRTIO_CAP_COMMON           1
#define VIRTIO_FEATURE_SEL          0x00 /* device_feature_select in the common configuration */
#define VIRTIO_FEATURE              0x04 /* device_feature: the 32 bits device_feature_select picks */
#define VIRTIO_STATUS               0x14      /* device_status */
#define VIRTIO_F_ACCESS_PLATFORM_HI (1u << 1) /* feature bit 33 in the upper word */
#define RESET_READS                 100000
#define MAX_CAPS                    48 /* capabilities followed before a list counts as looping */
#define MAX_BARS                    (PCI_MAX_FNS * PCI_BARS)

static struct pci_fn fns[PCI_MAX_FNS];
static unsigned nfns;
static paddr_t ecam;
static const struct arch_pci *bridge;

unsigned pci_count(void)
{
    return nfns;
}

const struct pci_fn *pci_get(unsigned i)
{
    return i < nfns ? &fns[i] : 0;
}

static uint32_t cfg_read(unsigned dev, unsigned fn, unsigned reg)
{
    return arch_mmio_read32(ecam + ECAM_FN(dev, fn) + reg);
}

static void cfg_write(unsigned dev, unsigned fn, unsigned reg, uint32_t v)
{
    arch_mmio_write32(ecam + ECAM_FN(dev, fn) + reg, v);
}

uint32_t pci_cfg_read32(const struct pci_fn *f, unsigned reg)
{
    return reg < 4096 && !(reg & 3) ? cfg_read(f->dev, f->fn, reg) : 0xffffffffu;
}

void pci_cfg_copy(const struct pci_fn *f, uint8_t out[PCI_CFG_BYTES])
{
    for (unsigned reg = 0; reg < PCI_CFG_BYTES; reg += 4) {
        uint32_t v = pci_cfg_read32(f, reg);
        for (unsigned b = 0; b < 4; b++) {
            out[reg + b] = (uint8_t)(v >> (8 * b));
        }
    }
}

static uint8_t cfg_byte(const struct pci_fn *f, unsigned off)
{
    return (uint8_t)(pci_cfg_read32(f, off & ~3u) >> (8 * (off & 3)));
}

/* Write the command register (the status half takes 0s: its bits are write-one-to-clear). */
static void set_command(const struct pci_fn *f, uint16_t cmd)
{
    cfg_write(f->dev, f->fn, PCI_CFG_COMMAND, cmd);
}

static uint16_t command(const struct pci_fn *f)
{
    return (uint16_t)pci_cfg_read32(f, PCI_CFG_COMMAND);
}

const char *pci_name(const struct pci_fn *f, char buf[8])
{
    ksnprintf(buf, 8, "%02x:%02x.%x", (unsigned)(f->rid >> 8), f->dev, f->fn);
    return buf;
}

const char *pci_kind(const struct pci_fn *f)
{
    if (f->virtio_type == 1) {
        return "virtio net";
    }
    if (f->virtio_type) {
        return "virtio";
    }
    switch (f->class_code >> 16) {
    case 0x01:
        return "storage";
    case 0x02:
        return "network";
    case 0x03:
        return "display";
    case 0x05:
        return "memory";
    case CLASS_BRIDGE:
        return (f->class_code >> 8) == 0x0600 ? "host bridge" : "bridge";
    default:
        return "other";
    }
}

/* ---- sizing ---- */

/* Write v to BAR register i, return what it reads back, restore what it held. */
static uint32_t probe_bar(const struct pci_fn *f, unsigned i, uint32_t v)
{
    unsigned reg = PCI_CFG_BAR0 + 4 * i;
    uint32_t old = pci_cfg_read32(f, reg);
    cfg_write(f->dev, f->fn, reg, v);
    uint32_t got = pci_cfg_read32(f, reg);
    cfg_write(f->dev, f->fn, reg, old);
    return got;
}

/* Size BAR i (and i + 1 for a 64-bit one); returns the next index to look at. */
static unsigned size_bar(struct pci_fn *f, unsigned i)
{
    uint32_t old = pci_cfg_read32(f, PCI_CFG_BAR0 + 4 * i);
    uint32_t mask = probe_bar(f, i, 0xffffffffu);
    struct pci_bar *b = &f->bar[i];
    if (mask == 0) {
        return i + 1; /* no BAR here */
    }
    if (old & 1) {
        uint32_t m = mask & ~3u;
        m |= (m >> 16) == 0 ? 0xffff0000u : 0; /* 16-bit I/O decoders read 0 above */
        b->size = (uint32_t)(~m + 1);
        b->flags = PCI_BAR_IO;
        return i + 1;
    }
    uint64_t m = mask & ~0xfull;
    b->flags = (old & 8) ? PCI_BAR_PREFETCH : 0;
    if ((old & 6) == 4 && i + 1 < PCI_BARS) {
        m |= (uint64_t)probe_bar(f, i + 1, 0xffffffffu) << 32;
        b->flags |= PCI_BAR_64;
    } else {
        m |= 0xffffffff00000000ull;
    }
    b->size = ~m + 1;
    return (b->flags & PCI_BAR_64) ? i + 2 : i + 1;
}

/* ---- assignment ---- */

struct bar_ref {
    struct pci_fn *f;
    unsigned i;
};

static uint64_t align_of(const struct pci_bar *b)
{
    return b->size > PAGE_SIZE ? b->size : PAGE_SIZE;
}

/* Can BAR b live in window w?  Memory, reachable, below 4 GiB for a 32-bit BAR. */
static bool window_fits_kind(const struct arch_pci_window *w, const struct pci_bar *b)
{
    if (!w->reachable || (w->space != ARCH_PCI_MEM32 && w->space != ARCH_PCI_MEM64)) {
        return false;
    }
    return (b->flags & PCI_BAR_64) || w->pci + w->size <= (1ull << 32);
}

/* Place b in the first window (same prefetchability first) with room; false if none. */
static bool place(struct pci_bar *b, uint64_t next[ARCH_MAX_PCI_WINDOWS])
{
    for (int pass = 0; pass < 2; pass++) {
        for (unsigned w = 0; w < bridge->nwindows; w++) {
            const struct arch_pci_window *win = &bridge->windows[w];
            bool same = win->prefetch == ((b->flags & PCI_BAR_PREFETCH) != 0);
            if ((pass == 0) != same || !window_fits_kind(win, b)) {
                continue;
            }
            uint64_t at = (next[w] + align_of(b) - 1) & ~(align_of(b) - 1);
            if (at >= next[w] && at + b->size <= win->pci + win->size && at + b->size > at) {
                b->bus = at;
                b->cpu = win->cpu + (at - win->pci);
                b->flags |= PCI_BAR_ASSIGNED;
                next[w] = at + (b->size > PAGE_SIZE ? b->size : PAGE_SIZE);
                return true;
            }
        }
    }
    return false;
}

static void write_bar(const struct pci_fn *f, unsigned i)
{
    const struct pci_bar *b = &f->bar[i];
    cfg_write(f->dev, f->fn, PCI_CFG_BAR0 + 4 * i, (uint32_t)b->bus);
    if (b->flags & PCI_BAR_64) {
        cfg_write(f->dev, f->fn, PCI_CFG_BAR0 + 4 * (i + 1), (uint32_t)(b->bus >> 32));
    }
}

/* Every memory BAR of every function, largest first (with natural alignment, packing them in
 * that order leaves no gaps), each into the first window with room. */
static void assign_bars(void)
{
    static struct bar_ref refs[MAX_BARS];
    uint64_t next[ARCH_MAX_PCI_WINDOWS];
    unsigned n = 0;
    for (unsigned w = 0; w < bridge->nwindows; w++) {
        next[w] = bridge->windows[w].pci ? bridge->windows[w].pci : PAGE_SIZE; /* never 0 */
    }
    for (unsigned k = 0; k < nfns; k++) {
        for (unsigned i = 0; i < PCI_BARS; i++) {
            struct pci_bar *b = &fns[k].bar[i];
            if (b->size && !(b->flags & PCI_BAR_IO)) {
                unsigned j = n++;
                for (; j > 0 && refs[j - 1].f->bar[refs[j - 1].i].size < b->size; j--) {
                    refs[j] = refs[j - 1];
                }
                refs[j] = (struct bar_ref){&fns[k], i};
            }
        }
    }
    for (unsigned j = 0; j < n; j++) {
        struct pci_fn *f = refs[j].f;
        if (place(&f->bar[refs[j].i], next)) {
            write_bar(f, refs[j].i);
        } else if (f->bad_bar < 0 || (unsigned)f->bad_bar > refs[j].i) {
            f->bad_bar = (int)refs[j].i;
        }
    }
}

/* ---- what else a function needs ---- */

static unsigned intx_intid(const struct pci_fn *f)
{
    uint32_t dev = ((uint32_t)f->rid << 8) & bridge->intx_mask_dev;
    for (unsigned i = 0; f->intx_pin && i < bridge->nintx; i++) {
        if (bridge->intx[i].dev == dev &&
            bridge->intx[i].pin == (f->intx_pin & bridge->intx_mask_pin)) {
            return bridge->intx[i].intid;
        }
    }
    return 0;
}

/* The virtio common configuration, through the vendor capabilities (virtio 1.2, 4.1.4):
 * cap_vndr 0x09, cfg_type at +3, bar at +4, offset (le32) at +8. */
static void find_virtio_common(struct pci_fn *f)
{
    f->virtio_common_bar = -1;
    if (!f->virtio_type || !((pci_cfg_read32(f, PCI_CFG_COMMAND) >> 16) & PCI_STATUS_CAP_LIST)) {
        return;
    }
    unsigned ptr = cfg_byte(f, PCI_CFG_CAP_PTR) & 0xfc;
    for (int k = 0; ptr >= 0x40 && ptr < PCI_CFG_BYTES - 16 && k < MAX_CAPS; k++) {
        if (cfg_byte(f, ptr) == PCI_CAP_VENDOR && cfg_byte(f, ptr + 3) == VIRTIO_CAP_COMMON &&
            cfg_byte(f, ptr + 4) < PCI_BARS) {
            f->virtio_common_bar = cfg_byte(f, ptr + 4);
            f->virtio_common_off = pci_cfg_read32(f, ptr + 8);
            return;
        }
        ptr = cfg_byte(f, ptr + 1) & 0xfc;
    }
}

/* Does the virtio function offer VIRTIO_F_ACCESS_PLATFORM?  Read with decoding on for the
 * moment of the read (nothing else is enabled: bus mastering stays off). */
static bool virtio_offers_access_platform(const struct pci_fn *f)
{
    const struct pci_bar *b = &f->bar[f->virtio_common_bar];
    if (!(b->flags & PCI_BAR_ASSIGNED) || f->virtio_common_off + VIRTIO_FEATURE + 4 > b->size) {
        return false;
    }
    paddr_t common = b->cpu + f->virtio_common_off;
    set_command(f, PCI_CMD_INTX_OFF | PCI_CMD_MEMORY);
    arch_mmio_write32(common + VIRTIO_FEATURE_SEL, 1);
    uint32_t hi = arch_mmio_read32(common + VIRTIO_FEATURE);
    set_command(f, PCI_CMD_INTX_OFF);
    return hi & VIRTIO_F_ACCESS_PLATFORM_HI;
}

/* Off and quiet, and can it master?  (The bit is hardwired to 0 where it cannot.) */
static void quiesce(struct pci_fn *f)
{
    if (!f->is_bridge) {
        set_command(f, PCI_CMD_INTX_OFF | PCI_CMD_MASTER);
        f->can_dma = (command(f) & PCI_CMD_MASTER) != 0;
    }
    set_command(f, PCI_CMD_INTX_OFF);
}

static void add_fn(unsigned dev, unsigned fn, uint32_t id)
{
    struct pci_fn *f = &fns[nfns++];
    *f = (struct pci_fn){.dev = (uint8_t)dev, .fn = (uint8_t)fn, .bad_bar = -1};
    f->rid = (uint16_t)(bridge->bus << 8 | dev << 3 | fn);
    f->vendor = (uint16_t)id;
    f->device = (uint16_t)(id >> 16);
    f->class_code = pci_cfg_read32(f, PCI_CFG_CLASS) >> 8;
    if (f->vendor == VIRTIO_VENDOR && f->device >= VIRTIO_MODERN_BASE &&
        f->device <= VIRTIO_MODERN_LAST) {
        f->virtio_type = f->device - VIRTIO_MODERN_BASE;
    } else if (f->vendor == VIRTIO_VENDOR && f->device >= VIRTIO_TRANSITIONAL_BASE &&
               f->device < VIRTIO_MODERN_BASE) {
        f->virtio_type = pci_cfg_read32(f, PCI_CFG_SUBSYSTEM) >> 16;
    }
    f->header_type = (uint8_t)(pci_cfg_read32(f, PCI_CFG_HEADER) >> 16 & 0x7f);
    f->is_bridge = f->header_type != 0 || (f->class_code >> 16) == CLASS_BRIDGE;
    f->intx_pin = (uint8_t)(pci_cfg_read32(f, PCI_CFG_INTERRUPT) >> 8);
    f->intx_pin = f->intx_pin <= 4 ? f->intx_pin : 0;
    quiesce(f);
    for (unsigned i = 0; f->header_type == 0 && i < PCI_BARS;) {
        i = size_bar(f, i);
    }
    uint32_t rid_off = (uint32_t)f->rid - bridge->rid_base;
    if (bridge->iommu_mapped && f->rid >= bridge->rid_base && rid_off < bridge->sid_count) {
        f->has_sid = true;
        f->sid = bridge->sid_base + rid_off;
    }
}

static void enumerate(void)
{
    for (unsigned dev = 0; dev < 32 && nfns < PCI_MAX_FNS; dev++) {
        uint32_t id = cfg_read(dev, 0, PCI_CFG_ID);
        if ((id & 0xffff) == VENDOR_NONE) {
            continue;
        }
        bool multi = cfg_read(dev, 0, PCI_CFG_HEADER) >> 23 & 1;
        add_fn(dev, 0, id);
        for (unsigned fn = 1; multi && fn < 8 && nfns < PCI_MAX_FNS; fn++) {
            id = cfg_read(dev, fn, PCI_CFG_ID);
            if ((id & 0xffff) != VENDOR_NONE) {
                add_fn(dev, fn, id);
            }
        }
    }
}

/* ---- boot lines ---- */

/* "16 KiB", "1 GiB": whole units where they divide. */
static const char *size_text(uint64_t bytes, char buf[24])
{
    static const char *const unit[] = {"bytes", "KiB", "MiB", "GiB"};
    unsigned u = 0;
    while (u < 3 && bytes >= 1024 && !(bytes & 1023)) {
        bytes >>= 10;
        u++;
    }
    ksnprintf(buf, 24, "%lu %s", (unsigned long)bytes, unit[u]);
    return buf;
}

/* One line, built whole so that nothing printed meanwhile cuts into it. */
static void print_fn(const struct pci_fn *f)
{
    char line[320], name[8], size[24];
    size_t n =
        (size_t)ksnprintf(line, sizeof(line), "pci %s: %04x:%04x class %06x (%s)",
                          pci_name(f, name), f->vendor, f->device, f->class_code, pci_kind(f));
    for (unsigned i = 0; i < PCI_BARS && n < sizeof(line); i++) {
        const struct pci_bar *b = &f->bar[i];
        if (b->size && (b->flags & PCI_BAR_ASSIGNED)) {
            n += (size_t)ksnprintf(line + n, sizeof(line) - n, ", BAR%u 0x%lx (%s)", i,
                                   (unsigned long)b->cpu, size_text(b->size, size));
        }
    }
    if (f->intx_intid && n < sizeof(line)) {
        ksnprintf(line + n, sizeof(line) - n, ", INT%c INTID %u (off)", 'A' + f->intx_pin - 1,
                  f->intx_intid);
    }
    printk("%s\n", line);
}

static void print_unclaimable(const struct pci_fn *f)
{
    char name[8], size[24];
    const struct pci_bar *b = &f->bar[f->bad_bar];
    printk("pci %s: BAR%d (%s%s) fits no memory window of the host bridge: the function stays "
           "disabled and cannot be claimed\n",
           pci_name(f, name), f->bad_bar, size_text(b->size, size),
           (b->flags & PCI_BAR_64) ? ", 64-bit" : "");
}

unsigned pci_init(const struct arch_pci *p, bool quiet)
{
    if (!p->present) {
        if (p->problem) {
            printk("pci: the PCIe host bridge is not used: %s\n", p->problem);
        }
        return 0;
    }
    bridge = p;
    ecam = p->ecam;
    nfns = 0; /* (boot runs this once; host tests run it per scenario) */
    enumerate();
    assign_bars();
    for (unsigned k = 0; k < nfns; k++) {
        struct pci_fn *f = &fns[k];
        f->claimable = f->bad_bar < 0;
        f->intx_intid = intx_intid(f);
        find_virtio_common(f);
        f->bypasses_iommu = f->virtio_common_bar >= 0 && !virtio_offers_access_platform(f);
        if (!quiet && !f->is_bridge) {
            print_fn(f); /* (a machine's host bridge is no news: QEMU's virt always has one) */
        }
        if (!f->claimable) {
            print_unclaimable(f);
        }
    }
    return nfns;
}

/* ---- claim and release ---- */

void pci_enable(const struct pci_fn *f, bool master)
{
    set_command(f, PCI_CMD_INTX_OFF | PCI_CMD_MEMORY | (master ? PCI_CMD_MASTER : 0));
}

/* Write 0 to device_status and read it back until it is 0 (virtio 1.2, 4.1.4.3.2 and 2.1.2):
 * from then on the device uses no memory.  Only while memory decoding is on: with decoding off
 * the BAR is not there, and the access would fault the kernel. */
static bool virtio_reset(const struct pci_fn *f)
{
    const struct pci_bar *b = &f->bar[f->virtio_common_bar];
    if (!(b->flags & PCI_BAR_ASSIGNED) || f->virtio_common_off + VIRTIO_STATUS >= b->size ||
        !(command(f) & PCI_CMD_MEMORY)) {
        return false;
    }
    paddr_t status = b->cpu + f->virtio_common_off + VIRTIO_STATUS;
    arch_mmio_write8(status, 0);
    for (int i = 0; i < RESET_READS; i++) {
        if (arch_mmio_read8(status) == 0) {
            return true;
        }
    }
    return false;
}

bool pci_reset(const struct pci_fn *f)
{
    bool stopped = f->virtio_common_bar >= 0 && virtio_reset(f);
    set_command(f, PCI_CMD_INTX_OFF); /* bus mastering off: no more DMA; decoding off */
    return stopped || (f->virtio_common_bar < 0 && !(command(f) & PCI_CMD_MASTER));
}
