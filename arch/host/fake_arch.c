/* SPDX-License-Identifier: MIT */
/*
 * fake_arch.c — a fake implementation of include/arch.h for host unit tests.
 *
 * Hardware effects become observable variables (fake.h): the timer's programmed deadline,
 * SGIs sent, interrupt enables and routes, console output, user page tables as a flat
 * table.  What cannot be faked honestly — a real context switch — aborts the test with a
 * message instead of pretending.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_syscall.h"
#include "uapi/zt_virt.h"
#include "fake.h"

__thread struct cpu *fake_cpu; /* per host thread: a thread is one CPU */
uint64_t fake_counter;
__thread unsigned long fake_irq_masked;
__thread unsigned long fake_irq_unmasks;
struct fake_state fake;

/* An empty initrd: both ends are the same address (two separate arrays would make
 * initrd.c read whatever lies between them). */
const char __initrd_start[1];
extern const char __initrd_end[1] __attribute__((alias("__initrd_start")));
/* No vDSO image either (kernel/proc/vdso.c then maps none). */
const char __vdso_start[1];
extern const char __vdso_end[1] __attribute__((alias("__vdso_start")));

static _Noreturn void unsupported(const char *what)
{
    fprintf(stderr, "fake arch: %s is not available in host unit tests\n", what);
    abort();
}

void fake_reset(void)
{
    static __typeof__(fake.kmaps) kmaps; /* the kernel's own mappings outlive a reset */
    memcpy(kmaps, fake.kmaps, sizeof(kmaps));
    memset(&fake, 0, sizeof(fake));
    memcpy(fake.kmaps, kmaps, sizeof(kmaps));
    fake_counter = 0;
    fake_irq_masked = 0;
}

/* ---- boot, power ---- */

struct arch_boot_info fake_boot_info;

void arch_boot_init(struct cpu *boot_cpu, uint64_t entry_counter)
{
    arch_set_this_cpu(boot_cpu);
    fake_boot_info.entry_counter = entry_counter;
}

const struct arch_boot_info *arch_boot_info(void)
{
    return &fake_boot_info;
}

void arch_secondary_init(struct cpu *c)
{
}

int arch_cpu_start(unsigned id, struct cpu *c)
{
    if (!fake.cpu_start_error && fake.cpu_start_hook) {
        fake.cpu_start_hook(id); /* a test that plays the CPU coming up */
    }
    return fake.cpu_start_error;
}

/* The kernel's console goes to fake.console; a test that ends here (a panic: a failed
 * ASSERT) shows it, so the message that explains the exit is not lost. */
_Noreturn void arch_poweroff(int status)
{
    fprintf(stderr, "fake arch: poweroff(%d); console:\n%s\n", status, fake.console);
    exit(status);
}

_Noreturn void arch_cpu_off(void)
{
    unsupported("arch_cpu_off");
}

bool arch_cpu_is_off(unsigned id)
{
    return id < ARCH_MAX_CPUS && fake.cpu_off[id];
}

void arch_cpu_release(unsigned id, struct cpu *c)
{
    fake.cpu_releases++;
}

_Noreturn void arch_halt_cpu(void)
{
    unsupported("arch_halt_cpu");
}

/* ---- console ---- */

void arch_console_putc(char c)
{
    if (fake.console_len + 1 < sizeof(fake.console)) {
        fake.console[fake.console_len++] = c;
        fake.console[fake.console_len] = 0;
    }
}

unsigned arch_console_irq(void)
{
    return ZT_VIRT_UART_INTID;
}

void arch_console_rx(void (*sink)(char c))
{
    for (size_t i = 0; i < fake.rx_len; i++) {
        sink(fake.rx[i]);
    }
    fake.rx_len = 0;
}

/* ---- interrupt controller ---- */

void arch_irq_set_enabled(unsigned irq, bool enabled)
{
    if (irq < ARCH_NR_IRQS) {
        fake.irq_enabled[arch_this_cpu_id()][irq] = enabled;
    }
}

bool arch_irq_is_enabled(unsigned cpu, unsigned irq)
{
    return cpu < ARCH_MAX_CPUS && irq < ARCH_NR_IRQS && fake.irq_enabled[cpu][irq];
}

int arch_irq_route(unsigned irq, unsigned cpu)
{
    if (irq < ARCH_IRQ_FIRST_DEVICE || irq >= ARCH_NR_IRQS || cpu >= ARCH_MAX_CPUS) {
        return -EINVAL;
    }
    fake.irq_route[irq] = (int)cpu + 1;
    return 0;
}

int arch_irq_route_of(unsigned irq)
{
    return irq < ARCH_NR_IRQS ? fake.irq_route[irq] - 1 : -1;
}

void arch_ipi_set_enabled(unsigned ipi, bool enabled)
{
    if (ipi < ARCH_NR_IPIS) {
        fake.ipi_enabled[arch_this_cpu_id()][ipi] = enabled;
    }
}

/* The fake has no interrupt controller to poll: a test plays the receiver (ipi_hook). */
bool arch_irq_poll(void)
{
    return false;
}

void arch_send_ipi(unsigned cpu, unsigned ipi)
{
    if (cpu < ARCH_MAX_CPUS && ipi < ARCH_NR_IPIS) {
        fake.ipi_sent[cpu][ipi]++;
        if (fake.ipi_hook) {
            fake.ipi_hook(cpu, ipi); /* a test that plays the receiver */
        }
    }
}

/* The fake's IPIs have no interrupt numbers of their own: sgis_enabled is the IPI mask; the
 * per-CPU interrupts are numbered from ARCH_NR_IPIS as on the GIC. */
void arch_irq_audit(unsigned cpu, struct zt_isol_audit *out)
{
    for (unsigned i = 0; i < ARCH_NR_IPIS && cpu < ARCH_MAX_CPUS; i++) {
        out->sgis_enabled |= fake.ipi_enabled[cpu][i] ? 1u << i : 0;
    }
    for (unsigned irq = ARCH_NR_IPIS; irq < ARCH_IRQ_FIRST_DEVICE; irq++) {
        out->ppis_enabled |= arch_irq_is_enabled(cpu, irq) ? 1u << (irq - ARCH_NR_IPIS) : 0;
    }
    for (unsigned irq = ARCH_IRQ_FIRST_DEVICE; irq < ARCH_NR_IRQS && out->nspis < ZT_AUDIT_MAX_SPIS;
         irq++) {
        if (arch_irq_route_of(irq) == (int)cpu && arch_irq_is_enabled(cpu, irq)) {
            out->spis[out->nspis++] = (uint16_t)irq;
        }
    }
    out->timer_intid = arch_timer_irq();
}

/* ---- timer ---- */

uint64_t arch_counter_freq(void)
{
    return FAKE_COUNTER_FREQ;
}

void arch_timer_set_deadline(uint64_t deadline)
{
    fake.timer_deadline[arch_this_cpu_id()] = deadline;
    fake.timer_writes++;
}

void arch_timer_disarm(void)
{
    fake.timer_deadline[arch_this_cpu_id()] = 0;
    fake.timer_writes++;
}

unsigned arch_timer_irq(void)
{
    return ZT_VIRT_TIMER_INTID;
}

/* ---- kernel memory ---- */

void arch_zero_page(void *page)
{
    memset(page, 0, PAGE_SIZE);
}

/* The kernel stack window's pages, so that unmapping gives each page back as the real arch
 * does (a leak test counts them). */
int arch_kmap_page(uint64_t va, paddr_t pa)
{
    for (unsigned i = 0; i < FAKE_MAX_KMAPS; i++) {
        if (!fake.kmaps[i].pa) {
            fake.kmaps[i].va = va;
            fake.kmaps[i].pa = pa;
            return 0;
        }
    }
    return -1;
}

paddr_t arch_kunmap_page(uint64_t va)
{
    for (unsigned i = 0; i < FAKE_MAX_KMAPS; i++) {
        if (fake.kmaps[i].pa && fake.kmaps[i].va == va) {
            paddr_t pa = fake.kmaps[i].pa;
            fake.kmaps[i].pa = 0;
            return pa;
        }
    }
    return 0;
}

bool arch_kva_is_mapped(uint64_t va)
{
    return true;
}

int arch_kmap_prepare(uint64_t va, uint64_t len)
{
    return 0;
}

/* ---- tasks ---- */

/* With fake.switch_returns set (tests that need a CPU to be running a task), the switch
 * returns at once, as `next` itself would after it starts: schedule() then finishes the
 * switch with finish_switch(prev_task) and rq->current is `next`.  No stack changes. */
struct task *arch_context_switch(struct arch_context *prev, struct arch_context *next,
                                 struct task *prev_task)
{
    if (fake.switch_returns) {
        fake.switches++;
        return prev_task;
    }
    unsupported("a real context switch");
}

void arch_context_init(struct arch_context *c, struct trap_frame *frame,
                       void (*first_run)(struct task *prev))
{
    memset(c, 0, sizeof(*c));
    c->sp = (uint64_t)(uintptr_t)frame;
}

void arch_fpsimd_save(struct arch_fpsimd *s)
{
}

void arch_fpsimd_restore(const struct arch_fpsimd *s)
{
}

uint64_t arch_tls_read(void)
{
    return fake.tls;
}

void arch_tls_write(uint64_t v)
{
    fake.tls = v;
}

void arch_user_frame_init(struct trap_frame *f, uint64_t pc, uint64_t sp)
{
    memset(f, 0, sizeof(*f));
    f->pc = pc;
    f->sp = sp;
}

int arch_signal_push(struct vm *vm, struct trap_frame *f, const struct arch_sigsetup *s)
{
    unsupported("arch_signal_push");
    return -1;
}

int arch_signal_pop(struct vm *vm, struct trap_frame *f, struct arch_sigsetup *s)
{
    unsupported("arch_signal_pop");
    return -1;
}

/* ---- user address spaces: one flat table of (space, va) -> (pa, prot) ---- */

static int fake_asid_next = 1;

int arch_as_init(struct arch_as *as)
{
    as->root = 1;
    as->asid = (uint16_t)fake_asid_next++;
    return 0;
}

void arch_as_destroy(struct arch_as *as)
{
    as->root = 0;
}

static struct fake_pte *find_pte(const struct arch_as *as, uint64_t va)
{
    for (int i = 0; i < FAKE_MAX_PTES; i++) {
        struct fake_pte *p = &fake.ptes[i];
        if (p->pa && p->asid == as->asid && p->va == va) {
            return p;
        }
    }
    return 0;
}

/* A page-table entry written: count the run of writes made with interrupts masked since
 * they were last unmasked (fake.pte_writes_masked_max keeps the longest). */
static void count_pte_write(void)
{
    static unsigned long epoch;
    if (!fake_irq_masked) {
        return;
    }
    if (epoch != fake_irq_unmasks + 1) {
        epoch = fake_irq_unmasks + 1;
        fake.pte_writes_masked_run = 0;
    }
    fake.pte_writes_masked_run++;
    if (fake.pte_writes_masked_run > fake.pte_writes_masked_max) {
        fake.pte_writes_masked_max = fake.pte_writes_masked_run;
    }
}

int arch_as_map(struct arch_as *as, uint64_t va, paddr_t pa, unsigned prot)
{
    count_pte_write();
    if (va >= USER_VA_TOP) {
        return -EINVAL;
    }
    struct fake_pte *p = find_pte(as, va);
    for (int i = 0; !p && i < FAKE_MAX_PTES; i++) {
        if (!fake.ptes[i].pa) {
            p = &fake.ptes[i];
        }
    }
    if (!p || (fake.map_fail_after && --fake.map_fail_after == 0)) {
        return -ENOMEM;
    }
    *p = (struct fake_pte){as->asid, va, pa, prot};
    fake.mapped_pages++;
    return 0;
}

paddr_t arch_as_unmap(struct arch_as *as, uint64_t va)
{
    fake.as_unmaps++;
    struct fake_pte *p = find_pte(as, va);
    if (!p) {
        return 0;
    }
    count_pte_write();
    paddr_t pa = p->pa;
    memset(p, 0, sizeof(*p));
    fake.mapped_pages--;
    return pa;
}

paddr_t arch_as_lookup(const struct arch_as *as, uint64_t va, unsigned *prot)
{
    struct fake_pte *p = find_pte(as, va);
    if (p && prot) {
        *prot = p->prot;
    }
    return p ? p->pa : 0;
}

uint64_t arch_user_hwcap(int n)
{
    return n == 1 ? 0x3 : 0; /* FP and ASIMD, as every AArch64 CPU here */
}

void arch_as_unmap_range(struct arch_as *as, uint64_t start, uint64_t end,
                         void (*freed)(paddr_t pa, void *ctx), void *ctx)
{
    for (uint64_t va = start; va < end; va += PAGE_SIZE) {
        paddr_t pa = arch_as_unmap(as, va);
        if (pa) {
            freed(pa, ctx);
        }
    }
}

void arch_as_trim(struct arch_as *as, uint64_t start, uint64_t end)
{
    fake.as_trims++; /* a flat table has no intermediate tables to free */
}

void arch_as_activate(const struct arch_as *as)
{
}

void arch_sync_icache(const void *kva, size_t len)
{
}

int arch_as_map_device(struct arch_as *as, uint64_t va, paddr_t pa, unsigned prot)
{
    return arch_as_map(as, va, pa, prot | ARCH_PROT_DEVICE);
}

/* ---- diagnostics ---- */

void arch_dump_frame(const struct trap_frame *f)
{
}

int arch_backtrace(uint64_t *out, int max)
{
    return 0;
}

void arch_debug_fault(int kind)
{
    unsupported("arch_debug_fault");
}
