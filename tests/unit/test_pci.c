/* SPDX-License-Identifier: MIT */
/*
 * test_pci.c — host unit tests of the PCIe side of kernel/dev/: what arch/aarch64/dt.c reads of
 * the host bridge and the SMMU from QEMU's own device tree (build/dtb/virt-4-smmu.dtb, dumped
 * with -M virt,iommu=smmuv3 by make unit; virt-4.dtb without the SMMU), and kernel/dev/pci.c's
 * enumeration, BAR sizing and assignment, INTx and stream ids, reset and enable over the fake
 * arch's ECAM space (tests/unit/fakebus.h: QEMU's bridge and functions).
 * The binary runs with the repository root as its working directory.  IDs: PCI-nn.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/pci.h"
#include "../../arch/aarch64/dt.h"
#include "fakebus.h"
#include "fixture.h"

#define TEST_STATE void **state __attribute__((unused))
#define ERRLEN     256

struct blob {
    uint8_t *data;
    size_t len;
};

static struct blob load(const char *path)
{
    struct blob b = {0, 0};
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        fail_msg("cannot open %s (make unit dumps it with QEMU)", path);
    }
    fseek(fp, 0, SEEK_END);
    b.len = (size_t)ftell(fp);
    rewind(fp);
    b.data = malloc(b.len);
    assert_non_null(b.data);
    assert_int_equal(fread(b.data, 1, b.len, fp), b.len);
    fclose(fp);
    return b;
}

static void parse_ok(const struct blob *b, struct dt_info *info)
{
    char err[ERRLEN];
    int rc = dt_parse(b->data, b->len, info, err, ERRLEN);
    if (rc != 0) {
        fail_msg("dt_parse returned %d: %s", rc, err);
    }
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* The value bytes of property `prop` of the first node named `node` (a trusting walk of a
 * known-good blob, to corrupt it precisely). */
static uint8_t *prop_value(struct blob *b, const char *node, const char *prop, uint32_t *len)
{
    const uint8_t *s = b->data + get32(b->data + 8);
    const char *strings = (const char *)b->data + get32(b->data + 12);
    bool in = false;
    for (uint32_t off = 0; get32(s + off) != 9;) {
        uint32_t tok = get32(s + off);
        if (tok == 1) {
            const char *name = (const char *)s + off + 4;
            in = strcmp(name, node) == 0;
            off = (off + 4 + (uint32_t)strlen(name) + 1 + 3) & ~3u;
        } else if (tok == 3) {
            uint32_t plen = get32(s + off + 4);
            if (in && strcmp(strings + get32(s + off + 8), prop) == 0) {
                *len = plen;
                return (uint8_t *)s + off + 12;
            }
            off = (off + 12 + plen + 3) & ~3u;
        } else {
            off += 4;
        }
    }
    fail_msg("%s/%s not found", node, prop);
    return 0;
}

/* ---------------------------------------------------------------- the device tree */

/* PCI-01: QEMU's iommu=smmuv3 tree: the ECAM bridge (256 MiB at 0x4010000000, buses 0-255),
 * its I/O, 32-bit and 64-bit windows, 16 INTx entries onto SPIs 3-6, iommu-map rid = sid over
 * 64 Ki ids naming the SMMU; the SMMU's 128 KiB at 0x9050000 with eventq SPI 74 and gerror
 * SPI 77 (INTIDs 106, 109) */
static void pci01_dt_smmu_tree(TEST_STATE)
{
    struct blob b = load("build/dtb/virt-4-smmu.dtb");
    struct dt_info info;
    parse_ok(&b, &info);
    assert_int_equal(info.pcie, 1);
    assert_int_equal(info.ecam.base, 0x4010000000ull);
    assert_int_equal(info.ecam.size, 0x10000000);
    assert_int_equal(info.bus_start, 0);
    assert_int_equal(info.bus_end, 255);
    assert_int_equal(info.npci_windows, 3);
    assert_int_equal(info.pci_window[0].space, DT_PCI_IO);
    assert_int_equal(info.pci_window[0].cpu, 0x3eff0000);
    assert_int_equal(info.pci_window[0].pci, 0);
    assert_int_equal(info.pci_window[0].size, 0x10000);
    assert_int_equal(info.pci_window[1].space, DT_PCI_MEM32);
    assert_int_equal(info.pci_window[1].cpu, FB_MEM32);
    assert_int_equal(info.pci_window[1].pci, FB_MEM32);
    assert_int_equal(info.pci_window[1].size, FB_MEM32_SIZE);
    assert_int_equal(info.pci_window[2].space, DT_PCI_MEM64);
    assert_int_equal(info.pci_window[2].cpu, 0x8000000000ull);
    assert_int_equal(info.pci_window[2].size, 0x8000000000ull);
    assert_int_equal(info.nintx, 16);
    assert_int_equal(info.intx_mask_dev, 0x1800);
    assert_int_equal(info.intx_mask_pin, 7);
    for (unsigned i = 0; i < 16; i++) {
        uint32_t d = info.intx[i].dev >> 11, pin = info.intx[i].pin;
        assert_int_equal(info.intx[i].intid, 32 + 3 + (d + pin - 1) % 4);
    }
    assert_int_equal(info.iommu_map, 1);
    assert_int_equal(info.rid_base, 0);
    assert_int_equal(info.sid_base, 0);
    assert_int_equal(info.sid_count, 0x10000);
    assert_int_equal(info.smmu, 1);
    assert_int_equal(info.smmu_regs.base, FB_SMMU);
    assert_int_equal(info.smmu_regs.size, 0x20000);
    assert_int_equal(info.smmu_eventq_intid, 32 + 74);
    assert_int_equal(info.smmu_gerror_intid, 32 + 77);
    free(b.data);
}

/* PCI-02: without iommu=smmuv3 the bridge is the same but no SMMU is found and no iommu-map
 * is taken: PCI DMA there is unconfined */
static void pci02_dt_no_smmu(TEST_STATE)
{
    struct blob b = load("build/dtb/virt-4.dtb");
    struct dt_info info;
    parse_ok(&b, &info);
    assert_int_equal(info.pcie, 1);
    assert_int_equal(info.npci_windows, 3);
    assert_int_equal(info.smmu, 0);
    assert_int_equal(info.smmu_problem, 0);
    assert_int_equal(info.iommu_map, 0);
    free(b.data);
}

/* Parse a corrupted copy: the boot must go on (rc 0) with the node left out for `why`. */
static void expect_left_out(struct blob *b, bool smmu, uint32_t why)
{
    struct dt_info info;
    parse_ok(b, &info);
    if (smmu) {
        assert_int_equal(info.smmu, 0);
        assert_int_equal(info.smmu_problem, why);
        assert_int_equal(info.iommu_map, 0); /* a bridge whose SMMU is gone has no iommu-map */
    } else {
        assert_int_equal(info.pcie, 0);
        assert_int_equal(info.pcie_problem, why);
        assert_int_equal(info.npci_windows, 0);
    }
    assert_int_equal(info.ncpus, 4); /* the rest is read as before */
}

/* PCI-03: a malformed bridge or SMMU is left out with its reason and never fails the boot:
 * ranges cut short, bus-range reversed, #address-cells 2, an ECAM window smaller than its
 * buses, an SMMU without its interrupt names */
static void pci03_dt_malformed(TEST_STATE)
{
    const char *bridge = "pcie@10000000", *smmu = "smmuv3@9050000";
    uint32_t len;
    struct blob b = load("build/dtb/virt-4-smmu.dtb");
    uint8_t *v = prop_value(&b, bridge, "ranges", &len);
    for (uint32_t off = 0; off < len; off += 28) {
        put32(v + off, 0); /* every window in configuration space: none usable */
    }
    expect_left_out(&b, false, DT_BAD_RANGES);
    free(b.data);

    b = load("build/dtb/virt-4-smmu.dtb");
    v = prop_value(&b, bridge, "bus-range", &len);
    put32(v, 9), put32(v + 4, 3);
    expect_left_out(&b, false, DT_BAD_BUS_RANGE);
    free(b.data);

    b = load("build/dtb/virt-4-smmu.dtb");
    v = prop_value(&b, bridge, "#address-cells", &len);
    put32(v, 2);
    expect_left_out(&b, false, DT_BAD_CELLS);
    free(b.data);

    b = load("build/dtb/virt-4-smmu.dtb");
    v = prop_value(&b, bridge, "reg", &len);
    put32(v + 12, 0x80000); /* 512 KiB: not even one bus */
    expect_left_out(&b, false, DT_BAD_ECAM_SIZE);
    free(b.data);

    b = load("build/dtb/virt-4-smmu.dtb");
    v = prop_value(&b, smmu, "interrupt-names", &len);
    memcpy(v, "evntq", 5);
    expect_left_out(&b, true, DT_BAD_INTERRUPTS);
    free(b.data);
}

/* ---------------------------------------------------------------- enumeration */

static void *pool;

static int group_setup(void **state)
{
    pool = fixture_pages_and_cpu0(256);
    return pool ? 0 : -1;
}

static int test_setup(void **state)
{
    fake_reset();
    memset(&fake_boot_info, 0, sizeof(fake_boot_info));
    fakebus_boot_info(true);
    return 0;
}

static const struct pci_fn *find_fn(unsigned dev, unsigned fn)
{
    for (unsigned i = 0; i < pci_count(); i++) {
        if (pci_get(i)->dev == dev && pci_get(i)->fn == fn) {
            return pci_get(i);
        }
    }
    fail_msg("no function %02x.%x", dev, fn);
    return 0;
}

/* PCI-10: every function of the root bus in device/function order (functions 1-7 only of a
 * multi-function device), with vendor, device, class and header type; each left with decoding
 * and bus mastering off and INTx disabled; an endpoint can DMA, the host bridge cannot; a
 * second device at 00:02 has functions 0 and 3 */
static void pci10_enumerate(TEST_STATE)
{
    fakebus_qemu();
    struct fake_pci_fn *m0 = fake_pci_add(2, 0, 0x1234, 0x0001, 0x058000);
    struct fake_pci_fn *m3 = fake_pci_add(2, 3, 0x1234, 0x0002, 0x058000);
    m0->cfg[3] = 0x80u << 16;                                                /* multi-function */
    struct fake_pci_fn *lone = fake_pci_add(4, 5, 0x1234, 0x0003, 0x058000); /* fn 0 absent */
    m0->cfg[1] = m3->cfg[1] = PCI_CMD_MEMORY | PCI_CMD_MASTER; /* left on by "firmware" */
    assert_int_equal(pci_init(&fake_boot_info.pci, true), 4);
    const struct pci_fn *hb = pci_get(0), *net = pci_get(1);
    assert_int_equal(hb->rid, 0x00);
    assert_int_equal(hb->vendor, 0x1b36);
    assert_int_equal(hb->class_code, 0x060000);
    assert_false(hb->can_dma);
    assert_int_equal(net->rid, 0x08);
    assert_int_equal(net->device, 0x1041);
    assert_true(net->can_dma);
    assert_int_equal(pci_get(2)->rid, 0x10);
    assert_int_equal(pci_get(3)->rid, 0x13);
    assert_int_equal(pci_get(3)->device, 2);
    for (unsigned i = 0; i < FAKE_PCI_FNS; i++) {
        if (fake.pci[i].present && &fake.pci[i] != lone) {
            assert_int_equal(fake.pci[i].cfg[1] & 0xffff, PCI_CMD_INTX_OFF);
        }
    }
    char name[8];
    assert_string_equal(pci_name(pci_get(3), name), "00:02.3");
}

/* Is every assigned BAR of every function inside the 32-bit window, aligned to its size and to
 * a page, written to its register, and alone in its pages? */
static void check_assignment(void)
{
    for (unsigned i = 0; i < pci_count(); i++) {
        const struct pci_fn *f = pci_get(i);
        for (unsigned b = 0; b < PCI_BARS; b++) {
            const struct pci_bar *bar = &f->bar[b];
            if (!(bar->flags & PCI_BAR_ASSIGNED)) {
                continue;
            }
            uint64_t align = bar->size > 4096 ? bar->size : 4096;
            assert_int_equal(bar->cpu % align, 0);
            assert_true(bar->cpu >= FB_MEM32 && bar->cpu + bar->size <= FB_MEM32 + FB_MEM32_SIZE);
            assert_int_equal(bar->bus, bar->cpu); /* QEMU's window maps 1:1 */
            assert_int_equal(pci_cfg_read32(f, PCI_CFG_BAR0 + 4 * b) & ~0xfu, (uint32_t)bar->bus);
            for (unsigned j = 0; j < pci_count(); j++) {
                for (unsigned c = 0; c < PCI_BARS; c++) {
                    const struct pci_bar *o = &pci_get(j)->bar[c];
                    uint64_t oend = o->cpu + (o->size > 4096 ? o->size : 4096);
                    uint64_t end = bar->cpu + align;
                    if ((i != j || b != c) && (o->flags & PCI_BAR_ASSIGNED) && o->cpu < end &&
                        bar->cpu < oend) {
                        fail_msg("BARs %u.%u and %u.%u share pages", i, b, j, c);
                    }
                }
            }
        }
    }
}

/* PCI-11: BARs are sized (32-bit, 64-bit prefetchable, I/O, one of 256 bytes) and every memory
 * BAR gets an address of its own in the 32-bit window, aligned to its size and to a page, never
 * sharing a page with another; a 64-bit BAR's upper half is written; I/O BARs are sized but get
 * no address; every function with memory BARs is claimable */
static void pci11_bars(TEST_STATE)
{
    fakebus_qemu();
    struct fake_pci_fn *x = fake_pci_add(3, 0, 0x1234, 0x0010, 0x020000);
    fake_pci_bar(x, 0, 0x100, false, false, false);  /* 256 bytes: gets a page of its own */
    fake_pci_bar(x, 1, 0x40, true, false, false);    /* I/O */
    fake_pci_bar(x, 2, 0x100000, false, true, true); /* 1 MiB, 64-bit */
    fake_pci_bar(x, 5, 0x2000, false, false, false);
    pci_init(&fake_boot_info.pci, true);
    const struct pci_fn *net = find_fn(1, 0), *f = find_fn(3, 0);
    assert_int_equal(net->bar[1].size, 0x1000);
    assert_int_equal(net->bar[4].size, 0x4000);
    assert_int_equal(net->bar[4].flags & (PCI_BAR_64 | PCI_BAR_PREFETCH),
                     PCI_BAR_64 | PCI_BAR_PREFETCH);
    assert_int_equal(net->bar[5].size, 0); /* the upper half is no BAR of its own */
    assert_int_equal(f->bar[0].size, 0x100);
    assert_int_equal(f->bar[1].size, 0x40);
    assert_int_equal(f->bar[1].flags, PCI_BAR_IO);
    assert_int_equal(f->bar[2].size, 0x100000);
    assert_int_equal(f->bar[5].size, 0x2000);
    assert_true(net->claimable && f->claimable);
    check_assignment();
    assert_int_equal(x->cfg[4 + 3], 0); /* the 1 MiB BAR's upper half: below 4 GiB */
    assert_int_equal(fakebus_bar(x, 2), f->bar[2].bus);
}

/* PCI-12: a BAR too large for every reachable window (1 GiB against 752 MiB; the 64-bit window
 * is beyond the kernel's reach) gets no address: its function is not claimable and the boot
 * says so, while the other functions are assigned as usual */
static void pci12_bar_does_not_fit(TEST_STATE)
{
    fakebus_qemu();
    struct fake_pci_fn *big = fake_pci_add(3, 0, 0x1af4, 0x1110, 0x050000); /* ivshmem-like */
    fake_pci_bar(big, 0, 0x100, false, false, false);
    fake_pci_bar(big, 2, 1ull << 30, false, true, true);
    fake.console_len = 0;
    pci_init(&fake_boot_info.pci, true);
    const struct pci_fn *f = find_fn(3, 0);
    assert_false(f->claimable);
    assert_int_equal(f->bad_bar, 2);
    assert_false(f->bar[2].flags & PCI_BAR_ASSIGNED);
    assert_true(f->bar[0].flags & PCI_BAR_ASSIGNED);
    assert_true(find_fn(1, 0)->claimable);
    check_assignment();
    assert_non_null(strstr(fake.console, "pci 00:03.0: BAR2 (1 GiB, 64-bit) fits no memory window "
                                         "of the host bridge: the function stays disabled and "
                                         "cannot be claimed"));
}

/* PCI-13: INTx: device d's pin p raises SPI 3 + (d + p - 1) % 4 through the interrupt-map; the
 * stream id is the requester id through iommu-map; without an iommu-map there is no stream */
static void pci13_intx_and_streams(TEST_STATE)
{
    fakebus_qemu();
    struct fake_pci_fn *x = fake_pci_add(6, 0, 0x1234, 0x0010, 0x020000);
    x->cfg[15] = 3u << 8; /* INTC */
    pci_init(&fake_boot_info.pci, true);
    assert_int_equal(find_fn(1, 0)->intx_intid, 32 + 3 + (1 + 1 - 1) % 4);
    assert_int_equal(find_fn(6, 0)->intx_intid, 32 + 3 + (6 + 3 - 1) % 4);
    assert_int_equal(find_fn(0, 0)->intx_intid, 0); /* no pin */
    assert_true(find_fn(1, 0)->has_sid);
    assert_int_equal(find_fn(1, 0)->sid, 0x08);
    assert_int_equal(find_fn(6, 0)->sid, 0x30);
    fake_boot_info.pci.iommu_mapped = false;
    pci_init(&fake_boot_info.pci, true);
    assert_false(find_fn(1, 0)->has_sid);
}

/* PCI-14: a modern virtio function's common configuration is found through its capability
 * list; it offers VIRTIO_F_ACCESS_PLATFORM, or it is marked as bypassing the IOMMU; enable
 * turns decoding (and bus mastering) on with INTx still off; reset writes device_status 0,
 * reads it back and turns bus mastering and decoding off */
static void pci14_virtio_enable_reset(TEST_STATE)
{
    fakebus_qemu();
    pci_init(&fake_boot_info.pci, true);
    const struct pci_fn *net = find_fn(1, 0);
    assert_int_equal(net->virtio_common_bar, 4);
    assert_int_equal(net->virtio_common_off, 0);
    assert_true(net->bypasses_iommu); /* device_feature reads 0: no ACCESS_PLATFORM */
    uint64_t common = fakebus_bar(&fake.pci[1], 4);
    fake_mmio_set(common + 0x04, 1u << 1 | 1u << 0); /* upper features: ACCESS_PLATFORM, V1 */
    pci_init(&fake_boot_info.pci, true);
    net = find_fn(1, 0);
    assert_false(net->bypasses_iommu);
    assert_int_equal(fake.pci[1].cfg[1] & 0xffff, PCI_CMD_INTX_OFF); /* the read left it off */
    pci_enable(net, true);
    assert_int_equal(fake.pci[1].cfg[1] & 0xffff,
                     PCI_CMD_INTX_OFF | PCI_CMD_MEMORY | PCI_CMD_MASTER);
    fake_mmio_set(common + 0x14, 0x0f); /* the driver had it running */
    assert_true(pci_reset(net));
    assert_int_equal(fake_mmio_get(common + 0x14), 0);
    assert_int_equal(fake.pci[1].cfg[1] & 0xffff, PCI_CMD_INTX_OFF);
    /* a device that never finishes its reset: reported as not stopped, mastering off anyway */
    pci_enable(net, true);
    fake_mmio_set(common + 0x14, 0x0f);
    fake.mmio_stuck_pa = common + 0x14;
    assert_false(pci_reset(net));
    assert_int_equal(fake.pci[1].cfg[1] & 0xffff, PCI_CMD_INTX_OFF);
    /* with decoding off the kernel never touches the BAR (it would fault): not stopped */
    fake.mmio_stuck_pa = 0;
    unsigned writes = fake.mmio_writes;
    assert_false(pci_reset(net));
    assert_int_equal(fake.mmio_writes, writes);
}

/* PCI-15: an endpoint whose bus-master bit is hardwired to 0 cannot DMA; enabling it turns
 * only decoding on */
static void pci15_no_master(TEST_STATE)
{
    struct fake_pci_fn *x = fake_pci_add(5, 0, 0x1234, 0x0020, 0x078000);
    fake_pci_bar(x, 0, 0x1000, false, false, false);
    x->cmd_wmask = PCI_CMD_MEMORY | PCI_CMD_INTX_OFF;
    pci_init(&fake_boot_info.pci, true);
    const struct pci_fn *f = find_fn(5, 0);
    assert_false(f->can_dma);
    assert_true(f->claimable);
    pci_enable(f, true);
    assert_int_equal(x->cfg[1] & 0xffff, PCI_CMD_INTX_OFF | PCI_CMD_MEMORY);
    assert_true(pci_reset(f)); /* not virtio: stopped once the master bit reads clear */
}

/* PCI-16: the boot lines name each function but the bridges with its ids, class, BARs and INTx
 * line */
static void pci16_boot_lines(TEST_STATE)
{
    fakebus_qemu();
    fake.console_len = 0;
    pci_init(&fake_boot_info.pci, false);
    assert_null(strstr(fake.console, "pci 00:00.0")); /* the host bridge: no line */
    char want[160];
    const struct pci_fn *net = find_fn(1, 0);
    snprintf(want, sizeof(want),
             "pci 00:01.0: 1af4:1041 class 020000 (virtio net), BAR1 0x%lx (4 KiB), BAR4 0x%lx "
             "(16 KiB), INTA INTID 36 (off)\r\n",
             (unsigned long)net->bar[1].cpu, (unsigned long)net->bar[4].cpu);
    assert_non_null(strstr(fake.console, want));
}

#define T_(f) cmocka_unit_test_setup(f, test_setup)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pci01_dt_smmu_tree),
        cmocka_unit_test(pci02_dt_no_smmu),
        cmocka_unit_test(pci03_dt_malformed),
        T_(pci10_enumerate),
        T_(pci11_bars),
        T_(pci12_bar_does_not_fit),
        T_(pci13_intx_and_streams),
        T_(pci14_virtio_enable_reset),
        T_(pci15_no_master),
        T_(pci16_boot_lines),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
