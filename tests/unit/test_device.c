/* SPDX-License-Identifier: MIT */
/*
 * test_device.c — host unit tests of kernel/dev/device.c (handing a device to a process) and of
 * the pieces it stands on: vm_map_phys/vm_unmap_phys (kernel/mm/vm.c) and
 * page_alloc_contig/page_free_contig (kernel/mm/page.c), over the fake arch (fake device
 * registers in fake.mmio, user page tables in fake.ptes).
 *
 * Four transports, as QEMU lays them out: slots 0 and 1 are virtio-net devices whose
 * registers share one 4 KiB page, slot 2 an empty transport (device id 0), slot 3 a net
 * device alone in its page, used by the test of a device that never resets (DEV-08), which
 * leaves it broken for good and so runs last.  Every test starts from no holder and checks
 * in its teardown that no page leaked and nothing stays mapped.
 * The PCI tests (DEV-20..31) boot QEMU's PCIe bus and SMMU as the fake arch shows them
 * (tests/unit/fakebus.h), with an endpoint that cannot master, one with a BAR too large for
 * every window, and a virtio-net without ACCESS_PLATFORM beside the usual virtio-net.
 * IDs: DEV-0n, DEV-2n, DEV-3n; HRD-22 (issue 20, item 5: a claim ends at the holder's execve).
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

#include "kernel/device.h"
#include "kernel/exec.h"
#include "kernel/fd.h"
#include "kernel/iopt.h"
#include "kernel/kmem.h"
#include "kernel/page.h"
#include "kernel/pci.h"
#include "kernel/signal.h"
#include "kernel/smmu.h"
#include "kernel/task.h"
#include "kernel/vm.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_syscall.h"
#include "fake.h"
#include "fakebus.h"
#include "fixture.h"

#define TEST_STATE void **state __attribute__((unused))

#define P          ((uint64_t)PAGE_SIZE)
#define POOL_PAGES 2048
#define RW         (PROT_READ | PROT_WRITE)
#define STATUS     0x070
#define DMA        (16 * P)
#define U          ZT_CLAIM_UNCONFINED_DMA /* virtio-mmio has no IOMMU: every claim says so */

static const struct arch_device hw[4] = {
    {0x0a003c00, 0x200, 78},
    {0x0a003e00, 0x200, 79},
    {0x0a004000, 0x200, 80},
    {0x0a006000, 0x200, 81},
};

static void *pool;
static struct process p1, p2;
static size_t free0;
static size_t vm_objects_pages; /* the pages the two struct vm took from kmem */

/* What QEMU's transports show before anyone touches them. */
static void preset_registers(void)
{
    for (unsigned i = 0; i < 4; i++) {
        fake_mmio_set(hw[i].base + 0x000, 0x74726976); /* "virt" */
        fake_mmio_set(hw[i].base + 0x004, 2);
        fake_mmio_set(hw[i].base + 0x008, i == 2 ? 0 : 1);
        fake_mmio_set(hw[i].base + 0x00c, 0x554d4551); /* "QEMU" */
        fake_mmio_set(hw[i].base + STATUS, 0);
    }
}

static void process_init(struct process *p, int pid)
{
    memset(p, 0, sizeof(*p));
    p->vm = vm_create();
    assert_non_null(p->vm);
    list_init(&p->threads);
    p->pid = pid;
    p->vm->brk_start = p->vm->brk = 0x500000;
    snprintf(p->name, sizeof(p->name), "proc%d", pid);
}

static int group_setup(void **state)
{
    pool = fixture_pages_and_cpu0(POOL_PAGES);
    return pool ? 0 : -1;
}

/* A boot: the four transports; with `bus` QEMU's PCIe bus (the host bridge at 00:00.0, a
 * virtio-net offering ACCESS_PLATFORM at 00:01.0, an endpoint that cannot master at 00:02.0,
 * one with a 1 GiB BAR at 00:03.0, a virtio-net without ACCESS_PLATFORM at 00:04.0: slots 32
 * to 36), behind the SMMU if `smmu`. */
static void boot(bool bus, bool smmu)
{
    fake_reset();
    memset(&fake_boot_info, 0, sizeof(fake_boot_info));
    fake_boot_info.ndevices = 4;
    memcpy(fake_boot_info.devices, hw, sizeof(hw));
    preset_registers();
    if (bus) {
        fakebus_boot_info(smmu);
        fakebus_smmu_idregs();
        fakebus_qemu();
        struct fake_pci_fn *nm = fake_pci_add(2, 0, 0x1234, 0x0020, 0x078000);
        fake_pci_bar(nm, 0, 0x1000, false, false, false);
        nm->cmd_wmask = PCI_CMD_MEMORY | PCI_CMD_INTX_OFF;
        struct fake_pci_fn *big = fake_pci_add(3, 0, 0x1af4, 0x1110, 0x050000);
        fake_pci_bar(big, 2, 1ull << 30, false, true, true);
        fakebus_virtio_net(4);
        /* ACCESS_PLATFORM offered by 00:01.0 only: its common configuration is at the address
           pci.c will give BAR 4 (the largest BARs first: 00:01.0's 16 KiB goes first) */
        fake_mmio_set(FB_MEM32 + 0x04, 1u << 1 | 1u << 0);
    }
    device_init(true);
    if (bus) {
        assert_int_equal(fakebus_bar(&fake.pci[1], 4), FB_MEM32);
    }
}

/* Boot the devices (the PCIe bus and the SMMU or not), then the two processes; the free
 * pages after them are the baseline the teardown checks. */
static int setup(bool bus, bool smmu)
{
    boot(bus, smmu);
    size_t before = page_free_count();
    process_init(&p1, 10);
    process_init(&p2, 11);
    free0 = page_free_count();
    vm_objects_pages = before - free0;
    return 0;
}

static int test_setup(void **state)
{
    return setup(false, false);
}

static int test_setup_pci(void **state)
{
    return setup(true, true);
}

static int test_setup_pci_no_smmu(void **state)
{
    return setup(true, false);
}

static int test_teardown(void **state)
{
    device_release_all(&p1);
    device_release_all(&p2);
    vm_put(p1.vm);
    vm_put(p2.vm);
    if (page_free_count() != free0 + vm_objects_pages || fake.mapped_pages != 0) {
        fprintf(stderr, "leak: %zu free pages, %zu at the start; %zu pages still mapped\n",
                page_free_count(), free0, fake.mapped_pages);
        return -1;
    }
    return 0;
}

/* The DMA region's pages are out of the allocator, and at most one more page (kmem's, for
 * the region records) is in use. */
static void expect_held_pages(size_t dma_pages)
{
    size_t used = free0 - page_free_count();
    if (used < dma_pages || used > dma_pages + 1) {
        fail_msg("%zu pages in use, want %zu DMA pages (+1 for kmem)", used, dma_pages);
    }
}

static uint32_t reg(unsigned slot, unsigned off)
{
    return arch_mmio_read32(hw[slot].base + off);
}

/* DEV-01: boot probing reports every transport with its window, INTID, version and id; the
 * empty one has device id 0; nothing is held */
static void dev01_list(TEST_STATE)
{
    struct zt_device_info info[8];
    assert_int_equal(device_list(info, 8), 4);
    for (unsigned i = 0; i < 4; i++) {
        assert_int_equal(info[i].slot, i);
        assert_int_equal(info[i].base, hw[i].base);
        assert_int_equal(info[i].size, 0x200);
        assert_int_equal(info[i].intid, hw[i].intid);
        assert_int_equal(info[i].version, 2);
        assert_int_equal(info[i].device_id, i == 2 ? 0 : 1);
        assert_int_equal(info[i].vendor, 0x554d4551);
        assert_int_equal(info[i].holder, 0);
    }
    assert_int_equal(device_list(info, 1), 4); /* the total, whatever fits */
}

/* DEV-02: a claim maps the registers as device memory (at the window's offset in its page)
 * and a contiguous, zeroed DMA region as RW normal memory whose physical address it reports;
 * the interrupt is disabled and routed to housekeeping CPU 0; the holder shows in the list */
static void dev02_claim_maps(TEST_STATE)
{
    struct zt_claim c;
    fake.irq_enabled[0][79] = true;
    assert_int_equal(device_claim(&p1, 1, DMA, U, &c), 0);
    assert_int_equal(c.slot, 1);
    assert_int_equal(c.device_id, 1);
    assert_int_equal(c.version, 2);
    assert_int_equal(c.intid, 79);
    assert_int_equal(c.regs & (P - 1), 0xe00);
    assert_int_equal(c.regs_size, 0x200);
    assert_int_equal(c.dma_size, DMA);
    unsigned prot = 0;
    assert_int_equal(arch_as_lookup(&p1.vm->as, c.regs & ~(P - 1), &prot), 0x0a003000);
    assert_int_equal(prot, RW | ARCH_PROT_DEVICE);
    for (uint64_t off = 0; off < DMA; off += P) {
        assert_int_equal(arch_as_lookup(&p1.vm->as, c.dma + off, &prot), c.dma_phys + off);
        assert_int_equal(prot, RW);
        const uint8_t *page = phys_to_virt(c.dma_phys + off);
        for (unsigned b = 0; b < P; b += 512) {
            assert_int_equal(page[b], 0);
        }
    }
    expect_held_pages(DMA / P);
    assert_false(fake.irq_enabled[0][79]);
    assert_int_equal(arch_irq_route_of(79), 0);
    struct zt_device_info info[4];
    device_list(info, 4);
    assert_int_equal(info[1].holder, 10);
    assert_int_equal(info[1].dma_size, DMA);
}

/* DEV-03: bad slot, empty transport, unknown flags, size 0 or not page-aligned get -EINVAL;
 * past ZT_DMA_MAX -ENOMEM; without ZT_CLAIM_UNCONFINED_DMA -EPERM (no IOMMU in front of a
 * transport); none of them maps, allocates or holds anything */
static void dev03_claim_errors(TEST_STATE)
{
    struct zt_claim c;
    assert_int_equal(device_claim(&p1, 4, DMA, U, &c), -EINVAL);
    assert_int_equal(device_claim(&p1, 99, DMA, U, &c), -EINVAL);
    assert_int_equal(device_claim(&p1, 2, DMA, U, &c), -EINVAL);
    assert_int_equal(device_claim(&p1, 1, DMA, 4, &c), -EINVAL); /* an unknown flag */
    assert_int_equal(device_claim(&p1, 1, DMA, 0, &c), -EPERM);  /* no IOMMU, no consent */
    assert_int_equal(device_claim(&p1, 1, 0, U, &c), -EINVAL);
    assert_int_equal(device_claim(&p1, 1, DMA + 1, U, &c), -EINVAL);
    assert_int_equal(device_claim(&p1, 1, ZT_DMA_MAX + P, U, &c), -ENOMEM);
    assert_int_equal(device_claim(&p1, 1, UINT64_MAX & ~(P - 1), U, &c), -ENOMEM);
    assert_int_equal(page_free_count(), free0);
    assert_int_equal(fake.mapped_pages, 0);
    struct zt_device_info info[4];
    device_list(info, 4);
    assert_int_equal(info[1].holder, 0);
}

/* DEV-04: one holder: a second claim of the slot gets -EBUSY (from anyone), and so does
 * another process's claim of a device whose registers share the holder's page; the holder
 * itself may claim that neighbour */
static void dev04_busy(TEST_STATE)
{
    struct zt_claim c;
    size_t mapped;
    assert_int_equal(device_claim(&p1, 1, DMA, U, &c), 0);
    mapped = fake.mapped_pages;
    assert_int_equal(device_claim(&p1, 1, DMA, U, &c), -EBUSY);
    assert_int_equal(device_claim(&p2, 1, DMA, U, &c), -EBUSY);
    assert_int_equal(device_claim(&p2, 0, DMA, U, &c), -EBUSY);
    assert_int_equal(fake.mapped_pages, mapped);
    assert_int_equal(device_claim(&p2, 3, P, U, &c), 0); /* its own page: free */
    assert_int_equal(device_claim(&p1, 0, P, U, &c), 0);
}

/* DEV-05: release by a process that does not hold the slot: -EPERM; by the holder: the device
 * is reset (status 0) and unmapped and its DMA pages come back; it can be claimed again */
static void dev05_release(TEST_STATE)
{
    struct zt_claim c;
    assert_int_equal(device_claim(&p1, 1, DMA, U, &c), 0);
    arch_mmio_write32(hw[1].base + STATUS, 0xf); /* the driver set DRIVER_OK etc. */
    assert_int_equal(device_release(&p2, 1), -EPERM);
    assert_int_equal(device_release(&p1, 2), -EPERM);
    assert_int_equal(device_release(&p1, 4), -EINVAL);
    assert_int_equal(reg(1, STATUS), 0xf);
    assert_int_equal(device_release(&p1, 1), 0);
    assert_int_equal(reg(1, STATUS), 0);
    assert_int_equal(fake.mapped_pages, 0);
    assert_int_equal(page_free_count(), free0);
    assert_int_equal(device_release(&p1, 1), -EPERM); /* no longer held */
    assert_int_equal(device_claim(&p2, 1, DMA, U, &c), 0);
}

/* DEV-06: the teardown path releases every device of that process and none of another's */
static void dev06_release_all(TEST_STATE)
{
    struct zt_claim c;
    assert_int_equal(device_claim(&p1, 0, DMA, U, &c), 0);
    assert_int_equal(device_claim(&p1, 1, 2 * DMA, U, &c), 0);
    assert_int_equal(device_claim(&p2, 3, DMA, U, &c), 0);
    device_release_all(&p1);
    struct zt_device_info info[4];
    device_list(info, 4);
    assert_int_equal(info[0].holder, 0);
    assert_int_equal(info[1].holder, 0);
    assert_int_equal(info[3].holder, 11);
    expect_held_pages(DMA / P);
}

/* DEV-07: the kernel never copies through device pages (copy_from_user/copy_to_user say
 * -EFAULT) but does through the DMA region; munmap cannot remove either region */
static void dev07_user_access(TEST_STATE)
{
    struct zt_claim c;
    uint32_t v = 0x12345678, back = 0;
    assert_int_equal(device_claim(&p1, 1, DMA, U, &c), 0);
    assert_int_equal(copy_from_user(p1.vm, &back, c.regs, 4), -EFAULT);
    assert_int_equal(copy_to_user(p1.vm, c.regs, &v, 4), -EFAULT);
    assert_int_equal(vm_check_range(p1.vm, c.regs, 4, PROT_READ), -EFAULT);
    assert_int_equal(copy_to_user(p1.vm, c.dma + 8, &v, 4), 0);
    assert_int_equal(copy_from_user(p1.vm, &back, c.dma + 8, 4), 0);
    assert_int_equal(back, v);
    assert_int_equal(vm_munmap(p1.vm, c.dma, DMA), -EINVAL);
    assert_int_equal(vm_munmap(p1.vm, c.regs & ~(P - 1), P), -EINVAL);
    assert_int_equal(vm_mmap(p1.vm, c.dma, P, RW, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
                     -EINVAL);
}

/* DEV-08: 200 claim/release cycles of a 2 MiB region: every one succeeds (contiguous runs
 * are given back to where they came from) and no page is lost */
static void dev08_cycles(TEST_STATE)
{
    struct zt_claim c;
    for (int i = 0; i < 200; i++) {
        assert_int_equal(device_claim(&p1, 1, 2u << 20, U, &c), 0);
        assert_int_equal(device_release(&p1, 1), 0);
    }
    assert_int_equal(page_free_count(), free0);
}

/* DEV-09: a contiguous run larger than any free tail is refused (-ENOMEM) with nothing held */
static void dev09_no_contiguous_memory(TEST_STATE)
{
    struct zt_claim c;
    paddr_t hog = page_alloc_contig(POOL_PAGES / 2); /* leave less than 4 MiB of tail */
    assert_true(hog != 0);
    assert_int_equal(device_claim(&p1, 1, 4u << 20, U, &c), -ENOMEM);
    assert_int_equal(fake.mapped_pages, 0);
    struct zt_device_info info[4];
    device_list(info, 4);
    assert_int_equal(info[1].holder, 0);
    page_free_contig(hog, POOL_PAGES / 2);
}

/* HRD-22 (issue 20, item 5): execve of a holder ends its claim: the device is reset, its window
 * and DMA region leave the old image, the DMA pages come back, anyone may claim it; the new
 * image keeps what it has at the old addresses, and a release after the exec is -EPERM and
 * unmaps nothing.  Before the fix the claim survived the exec with the old image's addresses
 * (the device still holding p1's DMA region, the registers still in the new image's place). */
static void hrd22_exec_ends_claims(TEST_STATE)
{
    struct zt_claim c;
    static struct task t;
    struct trap_frame frame;
    memset(&t, 0, sizeof(t));
    assert_int_equal(device_claim(&p1, 1, DMA, U, &c), 0);
    arch_mmio_write32(hw[1].base + STATUS, 0xf); /* the driver set DRIVER_OK etc. */
    /* The new image, with a page where the DMA region was. */
    struct vm *image = kmem_alloc(sizeof(*image));
    assert_non_null(image);
    assert_int_equal(vm_init(image), 0);
    assert_int_equal(vm_map_region(image, c.dma, P, RW, VMA_MMAP), 0);
    paddr_t image_page = arch_as_lookup(&image->as, c.dma, 0);
    /* p1's one thread execs it. */
    t.proc = &p1;
    t.tid = p1.pid;
    t.frame = &frame;
    p1.files = fdtable_new(0, false);
    assert_non_null(p1.files);
    waitq_init(&p1.vfork_wq);
    struct task *was = cpus[0].current_task;
    cpus[0].current_task = &t;
    struct exec_start start = {0x400000, 0x7fff0000, 0};
    proc_exec_commit(image, &start, NULL, "new");
    cpus[0].current_task = was;
    fdtable_free(p1.files);
    p1.files = NULL;
    struct zt_device_info info[4];
    device_list(info, 4);
    assert_int_equal(info[1].holder, 0);
    assert_int_equal(reg(1, STATUS), 0);
    assert_int_equal(arch_as_lookup(&p1.vm->as, c.dma, 0), image_page);
    assert_int_equal(arch_as_lookup(&p1.vm->as, c.regs & ~(P - 1), 0), 0);
    assert_int_equal(fake.mapped_pages, 1); /* the new image's page only */
    expect_held_pages(1); /* the new image's page (+1 for kmem): the DMA pages are back */
    assert_int_equal(device_release(&p1, 1), -EPERM);
    assert_int_equal(arch_as_lookup(&p1.vm->as, c.dma, 0), image_page);
    assert_int_equal(device_claim(&p2, 1, DMA, U, &c), 0);
}

/* DEV-10 (last: it breaks slot 3 for good): a device whose status never reads back 0 keeps
 * its DMA pages out of use (no DMA can land in reused memory), says so on the console, and
 * refuses later claims with -EIO; its window is unmapped all the same */
static void dev10_reset_fails(TEST_STATE)
{
    struct zt_claim c;
    assert_int_equal(device_claim(&p1, 3, DMA, U, &c), 0);
    arch_mmio_write32(hw[3].base + STATUS, 0x7);
    fake.mmio_stuck_pa = hw[3].base + STATUS;
    assert_int_equal(device_release(&p1, 3), 0);
    assert_int_equal(fake.mapped_pages, 0);
    assert_int_equal(page_free_count(), free0 - DMA / P);
    assert_non_null(strstr(fake.console, "slot 3 did not reset (status still 7)"));
    assert_int_equal(device_claim(&p2, 3, DMA, U, &c), -EIO);
    free0 -= DMA / P; /* those pages are gone on purpose */
}

/* ---------------------------------------------------------------- PCI functions */

#define NET    33 /* 00:01.0, virtio-net offering ACCESS_PLATFORM */
#define NOMAST 34 /* 00:02.0, cannot master */
#define BIG    35 /* 00:03.0, a BAR that fits no window */
#define BYPASS 36 /* 00:04.0, virtio-net without ACCESS_PLATFORM */
#define V2     ZT_CLAIM_V2

static const struct pci_fn *fn_of(unsigned slot)
{
    return pci_get(slot - ZT_PCI_SLOT0);
}

static uint16_t command_of(unsigned slot)
{
    return (uint16_t)fake.pci[slot - ZT_PCI_SLOT0].cfg[1];
}

/* DEV-20: a claim behind the SMMU maps every memory BAR as device memory (each on pages of its
 * own) and a zeroed DMA region; the device is told I/O address ZT_IOVA_BASE, which the SMMU
 * translates to that region only (stream = requester id 8, ASID 9); decoding and bus mastering
 * go on, INTx stays off; the result has the BARs, the mode and the configuration space */
static void dev20_pci_claim_confined(TEST_STATE)
{
    struct zt_claim c;
    const struct pci_fn *f = fn_of(NET);
    assert_int_equal(command_of(NET), PCI_CMD_INTX_OFF);
    assert_int_equal(device_claim(&p1, NET, DMA, V2, &c), 0);
    assert_int_equal(c.kind, ZT_DEV_PCI);
    assert_int_equal(c.dma_mode, ZT_DEV_IOMMU);
    assert_int_equal(c.dma_phys, ZT_IOVA_BASE);
    assert_int_equal(c.dma_size, DMA);
    assert_int_equal(c.device_id, ZT_VIRTIO_ID_NET);
    assert_int_equal(command_of(NET), PCI_CMD_INTX_OFF | PCI_CMD_MEMORY | PCI_CMD_MASTER);
    unsigned prot;
    for (unsigned b = 0; b < ZT_PCI_BARS; b++) {
        if (f->bar[b].flags & PCI_BAR_ASSIGNED) {
            assert_int_equal(c.bars[b].size, f->bar[b].size);
            assert_int_equal(c.bars[b].flags & ZT_BAR_ASSIGNED, ZT_BAR_ASSIGNED);
            for (uint64_t off = 0; off < f->bar[b].size; off += P) {
                assert_int_equal(arch_as_lookup(&p1.vm->as, c.bars[b].addr + off, &prot),
                                 f->bar[b].cpu + off);
                assert_int_equal(prot, RW | ARCH_PROT_DEVICE);
            }
        } else {
            assert_int_equal(c.bars[b].addr, 0);
        }
    }
    assert_int_equal(c.regs, c.bars[1].addr); /* the first memory BAR */
    paddr_t dma_pa = arch_as_lookup(&p1.vm->as, c.dma, &prot);
    assert_int_equal(prot, RW);
    assert_int_equal(smmu_ste_dword(8, 0) & 0xf, 1 | 5 << 1); /* V, stage-1 translate */
    const uint64_t *cd = phys_to_virt(smmu_ste_dword(8, 0) & 0x000fffffffffffc0ull);
    assert_int_equal(cd[0] >> 48, 9);
    struct iopt walk = {.root = cd[1] & 0x000ffffffffffff0ull};
    for (uint64_t off = 0; off < DMA; off += P) {
        assert_int_equal(iopt_lookup(&walk, ZT_IOVA_BASE + off), dma_pa + off);
    }
    assert_int_equal(iopt_lookup(&walk, ZT_IOVA_BASE + DMA), 0);
    assert_int_equal(iopt_lookup(&walk, ZT_IOVA_BASE - P), 0);
    assert_int_equal(iopt_lookup(&walk, dma_pa), 0);
    assert_int_equal(c.config[0] | c.config[1] << 8, 0x1af4);
    assert_int_equal(c.config[0x34], 0x40);       /* the capability list, for the driver */
    assert_int_equal(smmu_ste_dword(0x10, 0), 1); /* everyone else still aborts */
}

/* DEV-21: release of a PCI function: the BARs leave the process first, the virtio device is
 * reset (status 0 read back) and bus mastering and decoding go off, then the stream aborts and
 * CMD_CFGI_STE, CMD_TLBI_NH_ASID and CMD_SYNC complete, and only then do the DMA pages come
 * back; with an SMMU that never completes the SYNC they are kept, and the slot too */
static void dev21_pci_release_order(TEST_STATE)
{
    struct zt_claim c;
    assert_int_equal(device_claim(&p1, NET, DMA, V2, &c), 0);
    fake_mmio_set(FB_MEM32 + 0x14, 0x0f); /* DRIVER_OK and more */
    fake.smmu.ncmds = 0;
    assert_int_equal(device_release(&p1, NET), 0);
    assert_int_equal(fake_mmio_get(FB_MEM32 + 0x14), 0);
    assert_int_equal(command_of(NET), PCI_CMD_INTX_OFF);
    assert_int_equal(smmu_ste_dword(8, 0), 1);
    assert_int_equal(fake.smmu.ncmds, 3);
    assert_int_equal((uint8_t)fake.smmu.cmd[0][0], 0x03);
    assert_int_equal((uint8_t)fake.smmu.cmd[1][0], 0x11);
    assert_int_equal(fake.smmu.cmd[1][0] >> 48, 9);
    assert_int_equal((uint8_t)fake.smmu.cmd[2][0], 0x46);
    assert_int_equal(fake.mapped_pages, 0);
    assert_int_equal(page_free_count(), free0);
    /* now a SYNC that never completes: the region cannot be proven unreachable */
    assert_int_equal(device_claim(&p1, NET, DMA, V2, &c), 0);
    fake.smmu.stuck = true;
    fake_mmio_set(FB_MEM32 + 0x14, 0x0f);
    fake.mmio_stuck_pa = FB_MEM32 + 0x14; /* and the device does not reset either */
    assert_int_equal(device_release(&p1, NET), 0);
    assert_true(page_free_count() < free0 - DMA / P);
    assert_int_equal(device_claim(&p2, NET, DMA, V2, &c), -EIO);
    assert_non_null(strstr(fake.console, "its DMA pages stay out of use for good"));
    fake.smmu.stuck = false;
    free0 = page_free_count(); /* those pages are kept on purpose */
}

/* DEV-22: a PCI function that does not reset, behind the SMMU: its stream aborts, so its pages
 * are freed, but it cannot be claimed again (-EIO) */
static void dev22_pci_no_reset_confined(TEST_STATE)
{
    struct zt_claim c;
    assert_int_equal(device_claim(&p1, NET, DMA, V2, &c), 0);
    fake_mmio_set(FB_MEM32 + 0x14, 0x0f);
    fake.mmio_stuck_pa = FB_MEM32 + 0x14;
    assert_int_equal(device_release(&p1, NET), 0);
    assert_int_equal(page_free_count(), free0);
    assert_non_null(strstr(fake.console, "the SMMU aborts its DMA, so its pages were freed"));
    assert_int_equal(device_claim(&p2, NET, DMA, V2, &c), -EIO);
    struct zt_device_info info;
    assert_true(device_info_at(4 + 1, &info)); /* 4 transports, then 32, 33 */
    assert_int_equal(info.slot, NET);
    assert_int_equal(info.flags & ZT_DEV_BROKEN, ZT_DEV_BROKEN);
}

/* DEV-23: bad claims of PCI functions, each refused before anything changes: an unknown flag,
 * no ZT_CLAIM_V2, DMA size 0, unaligned or past ZT_DMA_MAX, a BAR that fits no window
 * (-ENXIO), a second claim (-EBUSY from anyone), a release by a non-holder (-EPERM), a slot
 * past the functions */
static void dev23_pci_claim_errors(TEST_STATE)
{
    struct zt_claim c;
    assert_int_equal(device_claim(&p1, NET, DMA, V2 | 8, &c), -EINVAL);
    assert_int_equal(device_claim(&p1, NET, DMA, 0, &c), -EINVAL);
    assert_int_equal(device_claim(&p1, NET, DMA, U, &c), -EINVAL);
    assert_int_equal(device_claim(&p1, NET, 0, V2, &c), -EINVAL);
    assert_int_equal(device_claim(&p1, NET, DMA - 1, V2, &c), -EINVAL);
    assert_int_equal(device_claim(&p1, NET, ZT_DMA_MAX + P, V2, &c), -ENOMEM);
    assert_int_equal(device_claim(&p1, BIG, DMA, V2, &c), -ENXIO);
    assert_int_equal(device_claim(&p1, 37, DMA, V2, &c), -EINVAL);
    assert_int_equal(device_claim(&p1, ZT_DEVICE_SLOTS, DMA, V2, &c), -EINVAL);
    assert_int_equal(page_free_count(), free0);
    assert_int_equal(fake.mapped_pages, 0);
    assert_int_equal(smmu_ste_dword(8, 0), 1);
    assert_int_equal(command_of(NET), PCI_CMD_INTX_OFF);
    assert_int_equal(device_claim(&p1, NET, DMA, V2, &c), 0);
    assert_int_equal(device_claim(&p1, NET, DMA, V2, &c), -EBUSY);
    assert_int_equal(device_claim(&p2, NET, DMA, V2, &c), -EBUSY);
    assert_int_equal(device_release(&p2, NET), -EPERM);
    assert_int_equal(device_release(&p2, BIG), -EPERM);
    assert_int_equal(device_release(&p1, 37), -EINVAL);
}

/* DEV-24: a function that cannot DMA (the host bridge; an endpoint whose master bit is
 * hardwired to 0) is claimed with DMA size 0 and no flag: registers only, bus mastering never
 * on; the unconfined-DMA flag or a DMA size on it is -EINVAL */
static void dev24_pci_no_dma(TEST_STATE)
{
    struct zt_claim c;
    assert_int_equal(device_claim(&p1, NOMAST, 0, V2 | U, &c), -EINVAL);
    assert_int_equal(device_claim(&p1, NOMAST, DMA, V2, &c), -EINVAL);
    assert_int_equal(device_claim(&p1, 32, 0, V2 | U, &c), -EINVAL);
    assert_int_equal(device_claim(&p1, NOMAST, 0, V2, &c), 0);
    assert_int_equal(c.dma_mode, 0);
    assert_int_equal(c.dma_phys, 0);
    assert_int_equal(c.dma_size, 0);
    assert_int_equal(c.dma, 0);
    assert_true(c.bars[0].addr != 0);
    assert_int_equal(command_of(NOMAST), PCI_CMD_INTX_OFF | PCI_CMD_MEMORY);
    assert_int_equal(device_claim(&p1, 32, 0, V2, &c), 0); /* the host bridge: nothing mapped */
    assert_int_equal(device_release(&p1, 32), 0);
    assert_int_equal(device_release(&p1, NOMAST), 0);
    assert_int_equal(command_of(NOMAST), PCI_CMD_INTX_OFF);
}

/* DEV-25: without an SMMU a DMA-capable PCI function is claimed only with
 * ZT_CLAIM_UNCONFINED_DMA (-EPERM without); it is then told the region's physical address and
 * the result and the listing say its DMA is unconfined */
static void dev25_pci_no_iommu(TEST_STATE)
{
    struct zt_claim c;
    assert_int_equal(device_claim(&p1, NET, DMA, V2, &c), -EPERM);
    assert_int_equal(device_claim(&p1, NET, DMA, V2 | U, &c), 0);
    assert_int_equal(c.dma_mode, ZT_DEV_UNCONFINED);
    unsigned prot;
    assert_int_equal(c.dma_phys, arch_as_lookup(&p1.vm->as, c.dma, &prot));
    struct zt_device_info info;
    assert_true(device_info_at(4 + 1, &info));
    assert_int_equal(info.flags, ZT_DEV_DMA | ZT_DEV_UNCONFINED);
    assert_int_equal(device_release(&p1, NET), 0);
}

/* DEV-26: behind the SMMU, a virtio function that does not offer VIRTIO_F_ACCESS_PLATFORM
 * bypasses it (virtio 1.2, 6.1): it is treated as unconfined (-EPERM without the flag, the
 * physical address with it) */
static void dev26_virtio_bypass(TEST_STATE)
{
    struct zt_claim c;
    assert_true(fn_of(BYPASS)->bypasses_iommu);
    assert_int_equal(device_claim(&p1, BYPASS, DMA, V2, &c), -EPERM);
    assert_int_equal(device_claim(&p1, BYPASS, DMA, V2 | U, &c), 0);
    assert_int_equal(c.dma_mode, ZT_DEV_UNCONFINED);
    assert_true(c.dma_phys != ZT_IOVA_BASE);
    assert_int_equal(smmu_ste_dword(0x20, 0), 1); /* not attached: it would not be used */
    assert_int_equal(device_release(&p1, BYPASS), 0);
}

/* DEV-27: the unconfined-DMA flag behind the SMMU is accepted and changes nothing: the DMA is
 * confined all the same */
static void dev27_flag_behind_smmu(TEST_STATE)
{
    struct zt_claim c;
    assert_int_equal(device_claim(&p1, NET, DMA, V2 | U, &c), 0);
    assert_int_equal(c.dma_mode, ZT_DEV_IOMMU);
    assert_int_equal(c.dma_phys, ZT_IOVA_BASE);
}

/* DEV-28: a DMA fault reported by the SMMU ends the claim: the console names the process, the
 * slot, the function and the I/O address, the holder gets SIGBUS, the function is reset and
 * its stream aborts, the pages come back and the slot is free; a fault from a stream nobody
 * holds is reported and changes nothing */
static void dev28_dma_fault(TEST_STATE)
{
    struct zt_claim c;
    struct smmu_fault f = {.sid = 8, .type = 0x10, .write = true, .addr = 0x40200000};
    assert_int_equal(device_claim(&p1, NET, DMA, V2, &c), 0);
    fake_mmio_set(FB_MEM32 + 0x14, 0x0f);
    fake.console[0] = 0;
    fake.console_len = 0;
    device_dma_fault(&f);
    assert_non_null(strstr(fake.console, "smmu: DMA fault: pid 10 (proc10), slot 33 (00:01.0): "
                                         "translation fault, write to I/O address 0x40200000 "
                                         "outside [0x100000000, 0x100010000): function reset, "
                                         "claim ended, SIGBUS sent"));
    assert_true(p1.sig_pending & (1ull << (SIGBUS - 1)));
    assert_int_equal(fake_mmio_get(FB_MEM32 + 0x14), 0);
    assert_int_equal(smmu_ste_dword(8, 0), 1);
    assert_int_equal(fake.mapped_pages, 0);
    assert_int_equal(page_free_count(), free0);
    assert_int_equal(device_release(&p1, NET), -EPERM); /* ended already */
    assert_int_equal(device_claim(&p2, NET, DMA, V2, &c), 0);
    assert_int_equal(device_release(&p2, NET), 0);
    fake.console[0] = 0;
    fake.console_len = 0;
    f.write = false;
    device_dma_fault(&f);
    assert_non_null(strstr(fake.console, "smmu: translation fault, stream 8 (00:01.0, no claim): "
                                         "read of I/O address 0x40200000"));
    /* a run of faults from one transfer, reported as one line */
    f.repeats = 13;
    f.last_addr = 0x40200034;
    device_dma_fault(&f);
    assert_non_null(strstr(fake.console, "read of I/O address 0x40200000 (+13 more up to "
                                         "0x40200034)"));
    assert_int_equal(page_free_count(), free0);
}

/* DEV-29: the listing of a PCI function: version-1 fields (version ZT_DEVICE_VERSION_PCI, the
 * virtio type, the PCI vendor, the first BAR, the INTx line) and version-2 ones (kind, DMA
 * flags, bus/device/function, ids, class, stream, BARs); the holder while claimed */
static void dev29_pci_listing(TEST_STATE)
{
    struct zt_device_info all[16];
    unsigned n = device_list(all, 16);
    assert_int_equal(n, 4 + 5);
    const struct zt_device_info *hb = &all[4], *net = &all[5], *big = &all[7], *byp = &all[8];
    assert_int_equal(hb->slot, 32);
    assert_int_equal(hb->flags, 0);
    assert_int_equal(hb->device_id, ZT_DEVICE_ID_OTHER);
    assert_int_equal(net->slot, NET);
    assert_int_equal(net->kind, ZT_DEV_PCI);
    assert_int_equal(net->version, ZT_DEVICE_VERSION_PCI);
    assert_int_equal(net->device_id, ZT_VIRTIO_ID_NET);
    assert_int_equal(net->vendor, 0x1af4);
    assert_int_equal(net->flags, ZT_DEV_DMA | ZT_DEV_IOMMU);
    assert_int_equal(net->bdf, 0x08);
    assert_int_equal(net->pci_device, 0x1041);
    assert_int_equal(net->class_code, 0x020000);
    assert_int_equal(net->sid, 8);
    assert_int_equal(net->intid, 36);
    assert_int_equal(net->base, net->bars[1].addr);
    assert_int_equal(net->bars[4].size, 0x4000);
    assert_int_equal(net->bars[4].flags, ZT_BAR_64 | ZT_BAR_PREFETCH | ZT_BAR_ASSIGNED);
    assert_int_equal(big->flags & ZT_DEV_NO_ADDRESS, ZT_DEV_NO_ADDRESS);
    assert_int_equal(byp->flags, ZT_DEV_DMA | ZT_DEV_UNCONFINED);
    struct zt_claim c;
    assert_int_equal(device_claim(&p1, NET, DMA, V2, &c), 0);
    device_list(all, 16);
    assert_int_equal(all[5].holder, 10);
    assert_int_equal(all[5].dma_size, DMA);
}

/* DEV-30: 200 claim/release cycles of the PCI function behind the SMMU: every one succeeds,
 * each attaches and detaches (six commands), and no page is lost */
static void dev30_pci_cycles(TEST_STATE)
{
    struct zt_claim c;
    fake.smmu.ncmds = 0;
    for (int i = 0; i < 200; i++) {
        assert_int_equal(device_claim(&p1, NET, 2u << 20, V2, &c), 0);
        assert_int_equal(device_release(&p1, NET), 0);
    }
    assert_int_equal(fake.smmu.ncmds, FAKE_SMMU_CMDS); /* (the record is full: more ran) */
    assert_int_equal(smmu_stats().syncs >= 400, true);
    assert_int_equal(page_free_count(), free0);
    assert_int_equal(fake.mapped_pages, 0);
}

/* DEV-31: a virtio-mmio claim's result (version 2) says its DMA is unconfined, and the flag is
 * what lets it through */
static void dev31_mmio_mode(TEST_STATE)
{
    struct zt_claim c;
    assert_int_equal(device_claim(&p1, 1, DMA, U | V2, &c), 0);
    assert_int_equal(c.kind, ZT_DEV_VIRTIO_MMIO);
    assert_int_equal(c.dma_mode, ZT_DEV_UNCONFINED);
    struct zt_device_info info;
    assert_true(device_info_at(1, &info));
    assert_int_equal(info.flags, ZT_DEV_DMA | ZT_DEV_UNCONFINED);
}

#define T_(f)  cmocka_unit_test_setup_teardown(f, test_setup, test_teardown)
#define TP(f)  cmocka_unit_test_setup_teardown(f, test_setup_pci, test_teardown)
#define TPN(f) cmocka_unit_test_setup_teardown(f, test_setup_pci_no_smmu, test_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T_(dev01_list),
        T_(dev02_claim_maps),
        T_(dev03_claim_errors),
        T_(dev04_busy),
        T_(dev05_release),
        T_(dev06_release_all),
        T_(dev07_user_access),
        T_(dev08_cycles),
        T_(dev09_no_contiguous_memory),
        T_(hrd22_exec_ends_claims),
        T_(dev10_reset_fails),
        TP(dev20_pci_claim_confined),
        TP(dev21_pci_release_order),
        TP(dev22_pci_no_reset_confined),
        TP(dev23_pci_claim_errors),
        TP(dev24_pci_no_dma),
        TPN(dev25_pci_no_iommu),
        TP(dev26_virtio_bypass),
        TP(dev27_flag_behind_smmu),
        TP(dev28_dma_fault),
        TP(dev29_pci_listing),
        TP(dev30_pci_cycles),
        T_(dev31_mmio_mode),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
