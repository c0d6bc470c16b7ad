/* SPDX-License-Identifier: MIT */
/*
 * test_device.c — host unit tests of kernel/sys/device.c (handing a device to a process) and of
 * the pieces it stands on: vm_map_phys/vm_unmap_phys (kernel/mm/vm.c) and
 * page_alloc_contig/page_free_contig (kernel/mm/page.c), over the fake arch (fake device
 * registers in fake.mmio, user page tables in fake.ptes).
 *
 * Four transports, as QEMU lays them out: slots 0 and 1 are virtio-net devices whose
 * registers share one 4 KiB page, slot 2 an empty transport (device id 0), slot 3 a net
 * device alone in its page, used by the test of a device that never resets (DEV-08), which
 * leaves it broken for good and so runs last.  Every test starts from no holder and checks
 * in its teardown that no page leaked and nothing stays mapped.
 * IDs: DEV-0n; HRD-22 (issue 20, item 5: a claim ends at the holder's execve).
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
#include "kernel/kmem.h"
#include "kernel/page.h"
#include "kernel/task.h"
#include "kernel/vm.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_syscall.h"
#include "fake.h"
#include "fixture.h"
#include "unit.h"

#define P          ((uint64_t)PAGE_SIZE)
#define POOL_PAGES 2048
#define RW         (PROT_READ | PROT_WRITE)
#define STATUS     0x070
#define DMA        (16 * P)

static const struct arch_device hw[4] = {
    {0x0a003c00, 0x200, 78},
    {0x0a003e00, 0x200, 79},
    {0x0a004000, 0x200, 80},
    {0x0a006000, 0x200, 81},
};

static void *pool;
static struct process p1, p2;
static size_t free0;
static size_t vm_objects_pages; /* what the two processes' address spaces took at setup */

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
    p->pid = pid;
    p->vm->brk_start = p->vm->brk = 0x500000;
}

static int group_setup(void **state)
{
    pool = fixture_pages_and_cpu0(POOL_PAGES);
    if (!pool) {
        return -1;
    }
    fake_reset();
    fake_boot_info.ndevices = 4;
    memcpy(fake_boot_info.devices, hw, sizeof(hw));
    preset_registers();
    device_init(true);
    return 0;
}

static int test_setup(void **state)
{
    fake_reset();
    preset_registers();
    size_t before = page_free_count();
    process_init(&p1, 10);
    process_init(&p2, 11);
    free0 = page_free_count();
    vm_objects_pages = before - free0;
    return 0;
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
    assert_int_equal(device_claim(&p1, 1, DMA, 0, &c), 0);
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

/* DEV-03: bad slot, empty transport, flags, size 0 or not page-aligned get -EINVAL; past
 * ZT_DMA_MAX -ENOMEM; none of them maps, allocates or holds anything */
static void dev03_claim_errors(TEST_STATE)
{
    struct zt_claim c;
    assert_int_equal(device_claim(&p1, 4, DMA, 0, &c), -EINVAL);
    assert_int_equal(device_claim(&p1, 99, DMA, 0, &c), -EINVAL);
    assert_int_equal(device_claim(&p1, 2, DMA, 0, &c), -EINVAL);
    assert_int_equal(device_claim(&p1, 1, DMA, 1, &c), -EINVAL);
    assert_int_equal(device_claim(&p1, 1, 0, 0, &c), -EINVAL);
    assert_int_equal(device_claim(&p1, 1, DMA + 1, 0, &c), -EINVAL);
    assert_int_equal(device_claim(&p1, 1, ZT_DMA_MAX + P, 0, &c), -ENOMEM);
    assert_int_equal(device_claim(&p1, 1, UINT64_MAX & ~(P - 1), 0, &c), -ENOMEM);
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
    assert_int_equal(device_claim(&p1, 1, DMA, 0, &c), 0);
    mapped = fake.mapped_pages;
    assert_int_equal(device_claim(&p1, 1, DMA, 0, &c), -EBUSY);
    assert_int_equal(device_claim(&p2, 1, DMA, 0, &c), -EBUSY);
    assert_int_equal(device_claim(&p2, 0, DMA, 0, &c), -EBUSY);
    assert_int_equal(fake.mapped_pages, mapped);
    assert_int_equal(device_claim(&p2, 3, P, 0, &c), 0); /* its own page: free */
    assert_int_equal(device_claim(&p1, 0, P, 0, &c), 0);
}

/* DEV-05: release by a process that does not hold the slot: -EPERM; by the holder: the device
 * is reset (status 0) and unmapped and its DMA pages come back; it can be claimed again */
static void dev05_release(TEST_STATE)
{
    struct zt_claim c;
    assert_int_equal(device_claim(&p1, 1, DMA, 0, &c), 0);
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
    assert_int_equal(device_claim(&p2, 1, DMA, 0, &c), 0);
}

/* DEV-06: the teardown path releases every device of that process and none of another's */
static void dev06_release_all(TEST_STATE)
{
    struct zt_claim c;
    assert_int_equal(device_claim(&p1, 0, DMA, 0, &c), 0);
    assert_int_equal(device_claim(&p1, 1, 2 * DMA, 0, &c), 0);
    assert_int_equal(device_claim(&p2, 3, DMA, 0, &c), 0);
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
    assert_int_equal(device_claim(&p1, 1, DMA, 0, &c), 0);
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
        assert_int_equal(device_claim(&p1, 1, ZT_DMA_MAX / 2, 0, &c), 0);
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
    assert_int_equal(device_claim(&p1, 1, ZT_DMA_MAX, 0, &c), -ENOMEM);
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
    assert_int_equal(device_claim(&p1, 1, DMA, 0, &c), 0);
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
    assert_int_equal(device_claim(&p2, 1, DMA, 0, &c), 0);
}

/* DEV-10 (last: it breaks slot 3 for good): a device whose status never reads back 0 keeps
 * its DMA pages out of use (no DMA can land in reused memory), says so on the console, and
 * refuses later claims with -EIO; its window is unmapped all the same */
static void dev10_reset_fails(TEST_STATE)
{
    struct zt_claim c;
    assert_int_equal(device_claim(&p1, 3, DMA, 0, &c), 0);
    arch_mmio_write32(hw[3].base + STATUS, 0x7);
    fake.mmio_stuck_pa = hw[3].base + STATUS;
    assert_int_equal(device_release(&p1, 3), 0);
    assert_int_equal(fake.mapped_pages, 0);
    assert_int_equal(page_free_count(), free0 - DMA / P);
    assert_non_null(strstr(fake.console, "slot 3 did not reset (status still 7)"));
    assert_int_equal(device_claim(&p2, 3, DMA, 0, &c), -EIO);
    free0 -= DMA / P; /* those pages are gone on purpose */
}

#define T_(f) cmocka_unit_test_setup_teardown(f, test_setup, test_teardown)

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
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
