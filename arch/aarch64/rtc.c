/* SPDX-License-Identifier: MIT */
/*
 * rtc.c — the wall-clock time at boot, read once from QEMU virt's PL031 real-time clock.
 *
 * What it does: finds the "arm,pl031" node among the device tree's root children, checks the
 * device's PrimeCell identification (part 0x031, designer 0x41, ARM DDI 0224 "PrimeCell Real
 * Time Clock (PL031) Technical Reference Manual", 3.3: RTCPeriphID0-3), and reads the data
 * register RTCDR (seconds since the Epoch under QEMU, which starts it from the host's clock)
 * together with the counter.  kernel/lib/clock.c turns the pair into wall time.  What it does
 * not do: set the RTC, take its interrupt (alarms: none, so CLOCK_*_ALARM are refused), or
 * read it again: after boot wall time is the counter's time plus a fixed offset.
 *
 * Boot CPU only, before any other CPU runs; the node's registers must lie in the first GiB,
 * which the early and final page tables map as Device-nGnRnE at phys_to_virt (mmu.c).
 */
#include "arch.h"
#include "platform.h"

#define RTC_DR        0x000 /* data register: the current time in seconds */
#define RTC_PERIPH_ID 0xfe0 /* four registers, 8 bits each */
#define DEVICE_LIMIT  (1ull << 30)

static uint32_t rtc_reg(paddr_t base, unsigned off)
{
    return *(volatile uint32_t *)phys_to_virt(base + off);
}

/* Is the window at base a PL031 (part number 0x031, designer 0x41 = ARM)? */
static bool is_pl031(paddr_t base)
{
    uint32_t id[4];
    for (unsigned i = 0; i < 4; i++) {
        id[i] = rtc_reg(base, RTC_PERIPH_ID + 4 * i) & 0xff;
    }
    uint32_t part = id[0] | (id[1] & 0xf) << 8, designer = id[1] >> 4 | (id[2] & 0xf) << 4;
    return part == 0x031 && designer == 0x41;
}

void rtc_read_boot_time(const void *blob, size_t max_len, struct arch_boot_info *info)
{
    static struct fdt_tree x; /* 1 KiB of root children: not on the boot stack */
    struct fdt_prop reg;
    struct fdt_range r;
    uint32_t node;

    info->rtc_seconds = info->rtc_counter = 0;
    if (fdt_open(&x, blob, max_len, 0, 0) != 0 ||
        !fdt_root_child_compatible(&x, "arm,pl031", &node) ||
        fdt_node_reg(&x, "/", node, x.root_cells, &reg) != 0 ||
        !fdt_reg_entry(&reg, x.root_cells, 0, &r) || r.size < 0x1000 ||
        r.base + r.size > DEVICE_LIMIT || r.base + r.size < r.base || !is_pl031(r.base)) {
        return; /* no RTC: wall time starts at the counter's 0 */
    }
    info->rtc_seconds = rtc_reg(r.base, RTC_DR);
    info->rtc_counter = arch_counter_read();
}
