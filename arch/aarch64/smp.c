/* SPDX-License-Identifier: MIT */
/*
 * smp.c — bringing CPUs up and down on QEMU virt: the boot CPU's platform setup (device
 * tree, console, MMU, GIC, timer), secondary CPU start through PSCI CPU_ON, and power-off.
 *
 * Order on the boot CPU (arch_boot_init): per-CPU pointer, device tree (stop with one
 * message if unusable), console at the tree's address, page allocator fed with RAM, final
 * page tables, distributor, this CPU's redistributor and timer.  A secondary CPU runs
 * boot.S (which switches TTBR1 to the final tables before touching its stack), then
 * secondary_main() calls arch_secondary_init() to empty TTBR0 and set up its
 * redistributor and timer.
 */
#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/lib.h"
#include "kernel/page.h"
#include "kernel/panic.h"
#include "kernel/printk.h"
#include "platform.h"

extern char __kernel_end[];
extern const unsigned long __percpu_sizes_start[], __percpu_sizes_end[];

/* What the per-CPU arrays cost one CPU: their sizes (PERCPU_ARRAY) over MAX_CPUS. */
static unsigned long percpu_bytes(void)
{
    unsigned long sum = 0;
    for (const unsigned long *p = __percpu_sizes_start; p < __percpu_sizes_end; p++) {
        sum += *p;
    }
    return sum / MAX_CPUS;
}

struct dt_info platform;
struct arch_cpu *arch_cpus[ARCH_MAX_CPUS];
PERCPU_ARRAY(arch_cpus);
static struct arch_boot_info boot_info;
static char cmdline[512];
/* The device tree's physical address a Linux boot loader passed in x0 (boot.S), or 0. */
uint64_t boot_fdt_pa;

/* The machine cannot be described: say why, then leave (QEMU exits via semihosting).  A
 * tree that failed to parse names no PSCI conduit either (dt_parse clears its output), so
 * without semihosting the CPU can only halt. */
static _Noreturn void boot_stop(const char *why)
{
    printk("zerotick: cannot boot: %s\n", why);
    printk("zerotick: boot stopped\n");
    semihost_exit(PANIC_EXIT_STATUS);
    printk("zerotick: no semihosting and no PSCI to power off with: halted\n");
    arch_halt_cpu();
}

/* Logical CPU 0 must be the CPU running this code: find it in the tree's list (whose
 * "reg" values lack MPIDR_EL1's RES1 bit 31, hence the mask) and swap it to the front. */
static void put_boot_cpu_first(void)
{
    uint64_t me = sysreg_read(mpidr_el1) & 0xff00ffffffull;
    for (unsigned i = 1; i < platform.ncpus; i++) {
        if ((platform.cpu_mpidr[i] & 0xff00ffffffull) == me) {
            uint64_t t = platform.cpu_mpidr[0];
            platform.cpu_mpidr[0] = platform.cpu_mpidr[i];
            platform.cpu_mpidr[i] = t;
        }
    }
}

static void fill_boot_info(uint64_t entry_counter)
{
    put_boot_cpu_first();
    boot_info.ncpus_total = platform.ncpus_total;
    boot_info.ncpus = platform.ncpus;
    for (unsigned i = 0; i < platform.ncpus; i++) {
        boot_info.hwid[i] = platform.cpu_mpidr[i];
    }
    boot_info.nmem = platform.nmem < ARCH_MAX_MEM ? platform.nmem : ARCH_MAX_MEM;
    for (unsigned i = 0; i < boot_info.nmem; i++) {
        boot_info.mem_base[i] = platform.mem[i].base;
        boot_info.mem_size[i] = platform.mem[i].size;
    }
    size_t n = platform.bootargs ? platform.bootargs_len : 0;
    if (n >= sizeof(cmdline)) {
        printk("zerotick: command line longer than %zu bytes; truncated\n", sizeof(cmdline) - 1);
        n = sizeof(cmdline) - 1;
    }
    memcpy(cmdline, platform.bootargs ? platform.bootargs : "", n);
    cmdline[n] = 0;
    boot_info.cmdline = cmdline;
    boot_info.entry_counter = entry_counter;
    boot_info.percpu_bytes = percpu_bytes();
    mmio_fill_devices(&boot_info);
    rtc_read_boot_time(phys_to_virt(DTB_PA), DTB_MAX_SIZE, &boot_info);
}

/* What the page allocator must not hand out: from RAM's start to the end of the kernel image
 * (QEMU's boot code, the device tree when it sits at DTB_PA, the image), the device tree
 * wherever a boot loader put it, and the initrd it handed over, which the file tree reads in
 * place for good.  Page-aligned outward. */
struct hole {
    paddr_t start, end;
};

static unsigned reserved(struct hole *h, paddr_t dtb)
{
    unsigned n = 0;
    h[n++] = (struct hole){DTB_PA, virt_to_phys(__kernel_end)};
    h[n++] = (struct hole){dtb & ~(paddr_t)(PAGE_SIZE - 1), dtb + platform.totalsize};
    if (boot_info.initrd_size) {
        h[n++] = (struct hole){boot_info.initrd_pa & ~(paddr_t)(PAGE_SIZE - 1),
                               boot_info.initrd_pa + boot_info.initrd_size};
    }
    return n;
}

/* [base, end) minus the holes, to the page allocator (the holes do not overlap each other's
 * edges in a way that matters: each piece between them is checked against all). */
static void add_ram(paddr_t base, paddr_t end, const struct hole *h, unsigned n)
{
    while (base < end) {
        paddr_t stop = end;
        bool moved = false;
        for (unsigned i = 0; i < n; i++) {
            paddr_t hs = h[i].start, he = (h[i].end + PAGE_SIZE - 1) & ~(paddr_t)(PAGE_SIZE - 1);
            if (hs <= base && base < he) {
                base = he; /* inside a hole: skip to its end */
                moved = true;
            } else if (base < hs && hs < stop) {
                stop = hs; /* a hole ahead: this piece ends there */
            }
        }
        if (!moved) {
            page_add_range(base, stop - base);
            base = stop;
        }
    }
}

static void feed_page_allocator(paddr_t dtb)
{
    struct hole h[3];
    unsigned n = reserved(h, dtb);
    for (unsigned i = 0; i < platform.nmem; i++) {
        add_ram(platform.mem[i].base, platform.mem[i].base + platform.mem[i].size, h, n);
    }
}

/* The initrd the boot loader handed over, if the device tree names one that lies in RAM
 * above the kernel image; else none, with a line saying why. */
static void take_initrd(void)
{
    uint64_t start = platform.initrd_start, end = platform.initrd_end;
    bool in_ram = false;
    for (unsigned i = 0; i < platform.nmem; i++) {
        in_ram |=
            start >= platform.mem[i].base && end <= platform.mem[i].base + platform.mem[i].size;
    }
    if (platform.initrd_note) {
        printk("initrd: the boot loader's is ignored: %s\n", platform.initrd_note);
    } else if (end && (!in_ram || start < virt_to_phys(__kernel_end))) {
        printk("initrd: the boot loader's [%lx, %lx) is ignored: not in RAM above the kernel\n",
               (unsigned long)start, (unsigned long)end);
    } else if (end) {
        boot_info.initrd_pa = start;
        boot_info.initrd_size = end - start;
    }
}

static void setup_overflow_stack(struct cpu *c)
{
    paddr_t pa = page_alloc();
    if (!pa) {
        panic("smp: no memory for CPU %u's emergency stack", c->id);
    }
    c->arch.overflow_sp = (uint64_t)phys_to_virt(pa) + PAGE_SIZE;
}

static void setup_this_cpu_irqs(struct cpu *c)
{
    if (gic_init_cpu(c->id, c->arch.hwid) != 0) {
        panic("gic: no redistributor for CPU %u (MPIDR %lx)", c->id, (unsigned long)c->arch.hwid);
    }
    gtimer_init_cpu();
    pmu_init_cpu();
}

void arch_boot_init(struct cpu *boot_cpu, uint64_t entry_counter)
{
    char err[128];
    boot_cpu->arch.id = 0;
    arch_set_this_cpu(boot_cpu);
    /* A boot loader's pointer counts if a device tree is there; else QEMU's ELF placement. */
    paddr_t dtb =
        boot_fdt_pa && fdt_be32(phys_to_virt(boot_fdt_pa)) == FDT_MAGIC ? boot_fdt_pa : DTB_PA;
    if (dt_parse(phys_to_virt(dtb), DTB_MAX_SIZE, &platform, err, sizeof(err)) != 0) {
        boot_stop(err);
    }
    pl011_init(platform.uart.base, platform.uart_intid);
    fill_boot_info(entry_counter);
    take_initrd();
    boot_cpu->arch.hwid = platform.cpu_mpidr[0];
    boot_cpu->arch.midr = (uint32_t)sysreg_read(midr_el1);
    arch_cpus[0] = &boot_cpu->arch;
    feed_page_allocator(dtb);
    mmu_init();
    mmio_map_windows(&boot_info); /* device windows above the first GiB (the ECAM space) */
    boot_info.protection = mmu_has_pan() ? "W^X kernel, PXN on user pages, PAN on"
                                         : "W^X kernel, PXN on user pages, no PAN (CPU lacks "
                                           "FEAT_PAN)";
    setup_overflow_stack(boot_cpu);
    gic_init_distributor();
    setup_this_cpu_irqs(boot_cpu);
}

const struct arch_boot_info *arch_boot_info(void)
{
    return &boot_info;
}

void arch_secondary_init(struct cpu *c)
{
    c->arch.midr = (uint32_t)sysreg_read(midr_el1);
    mmu_init_secondary();
    setup_this_cpu_irqs(c);
}

int arch_cpu_start(unsigned id, struct cpu *c)
{
    c->arch.id = id;
    c->arch.hwid = boot_info.hwid[id];
    setup_overflow_stack(c);
    arch_cpus[id] = &c->arch;
    dsb(ish); /* the struct is written before the CPU can run */
    int err = psci_cpu_on(c->arch.hwid, virt_to_phys(secondary_entry), (uint64_t)c);
    if (err) {
        arch_cpus[id] = 0;
    }
    return err;
}

/* The timer is stopped and the redistributor told this CPU is asleep (GICR_WAKER, IHI 0069
 * 9.11.46), so nothing is forwarded to a CPU that is off; gic_init_cpu wakes it again when
 * CPU_ON restarts it. */
_Noreturn void arch_cpu_off(void)
{
    arch_irq_disable();
    sysreg_write(cntv_ctl_el0, 0);
    isb(); /* the timer is off before the CPU is */
    gic_sleep_cpu(arch_this_cpu_id());
    psci_cpu_off();
}

bool arch_cpu_is_off(unsigned id)
{
    return id < ARCH_MAX_CPUS && psci_affinity_info(boot_info.hwid[id]) == 1; /* 1: OFF */
}

void arch_cpu_release(unsigned id, struct cpu *c)
{
    if (c->arch.overflow_sp) {
        page_free(virt_to_phys((void *)(c->arch.overflow_sp - PAGE_SIZE)));
        c->arch.overflow_sp = 0;
    }
}

_Noreturn void arch_halt_cpu(void)
{
    arch_irq_disable();
    for (;;) {
        arch_wait_for_interrupt();
    }
}

_Noreturn void arch_poweroff(int status)
{
    semihost_exit(status & 0xff);
    psci_system_off();
}
