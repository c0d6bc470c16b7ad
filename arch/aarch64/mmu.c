/* SPDX-License-Identifier: MIT */
/*
 * mmu.c — the kernel's translation tables (ARM ARM D8, VMSAv8-64 with 4 KiB granules and
 * 39-bit virtual addresses: three levels, L1 entries 1 GiB, L2 2 MiB, L3 4 KiB).
 *
 * What it does: builds the final TTBR1 tables once at boot, replacing boot.S's 1 GiB
 * early_pgd blocks: RAM is mapped RW + execute-never (2 MiB blocks where alignment allows),
 * the kernel image W^X page by page (text RX, rodata R, data/bss RW XN), the boot stack's
 * guard regions not at all, MMIO (the first GiB) as Device-nGnRnE XN.  Afterwards it maps
 * and unmaps single kernel pages (the kernel stack window) on request, and maps device
 * regions above the first GiB into the MMIO window (boot only).  User address spaces (TTBR0)
 * are elsewhere.
 *
 * Invariants: kernel mappings are global (nG = 0) and never executable from EL0 (UXN);
 * only text is executable at EL1.  A mapping is removed by writing an invalid entry and
 * then a broadcast TLBI (…IS), so no other CPU is ever interrupted for TLB maintenance.
 * Lock: kmap_lock serialises changes to the shared kernel tables (leaf lock, IRQs masked).
 */
#include "arch.h"
#include "kernel/lib.h"
#include "kernel/page.h"
#include "kernel/panic.h"
#include "kernel/spinlock.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_syscall.h"
#include "platform.h"

extern char __kernel_start[], __kernel_end[], __text_start[], __text_end[];
extern char __rodata_start[], __rodata_end[], __data_start[];
extern char boot_stack_guard_lo[], boot_stack[], boot_stack_top[], boot_stack_guard_end[];

#define L1_SHIFT       30
#define L2_SHIFT       21
#define L2_SIZE        (1ull << L2_SHIFT)
#define IDX(va, shift) (((va) >> (shift)) & 0x1ff)

#define K_NORMAL (PTE_VALID | PTE_ATTR(MT_NORMAL) | PTE_SH_INNER | PTE_AF | PTE_UXN)
#define K_RW     (K_NORMAL | PTE_PXN)
#define K_RO     (K_NORMAL | PTE_PXN | PTE_AP_RO)
#define K_RX     (K_NORMAL | PTE_AP_RO)
#define K_DEVICE (PTE_VALID | PTE_ATTR(MT_DEVICE_nGnRnE) | PTE_AF | PTE_PXN | PTE_UXN)

static uint64_t *kernel_l1;
paddr_t kernel_ttbr1_pa; /* read by boot.S on secondary CPUs */
static spinlock_t kmap_lock = SPINLOCK_INIT_RANK(LOCK_ALLOC);
/* An all-invalid table for TTBR0 while no user address space is active. */
static uint64_t empty_l1[512] __attribute__((aligned(PAGE_SIZE)));

static inline uint64_t va_of(const void *p)
{
    return (uint64_t)p;
}

/* The next-level table behind table[idx], allocating an empty one if `alloc`. */
static uint64_t *next_table(uint64_t *table, unsigned idx, bool alloc)
{
    uint64_t e = table[idx];
    if (e & PTE_VALID) {
        if (!(e & PTE_TABLE)) {
            panic("mmu: block mapping where a table was expected (entry %lx)", e);
        }
        return phys_to_virt(e & PTE_ADDR_MASK);
    }
    if (!alloc) {
        return 0;
    }
    paddr_t pa = page_alloc();
    if (!pa) {
        return 0;
    }
    dsb(ishst); /* the zeroed table is visible to the walker before it is linked */
    table[idx] = pa | PTE_VALID | PTE_TABLE;
    return phys_to_virt(pa);
}

/* Map [va, va+size) to [pa, ...) in the kernel tables: 2 MiB blocks where possible. */
static void map_range(uint64_t va, paddr_t pa, uint64_t size, uint64_t attr)
{
    while (size) {
        uint64_t *l2 = next_table(kernel_l1, IDX(va, L1_SHIFT), true);
        if (!l2) {
            panic("mmu: out of memory for kernel page tables");
        }
        if ((va | pa) % L2_SIZE == 0 && size >= L2_SIZE) {
            l2[IDX(va, L2_SHIFT)] = pa | attr; /* block: bits[1:0] = 01 */
            va += L2_SIZE, pa += L2_SIZE, size -= L2_SIZE;
            continue;
        }
        uint64_t *l3 = next_table(l2, IDX(va, L2_SHIFT), true);
        if (!l3) {
            panic("mmu: out of memory for kernel page tables");
        }
        l3[IDX(va, PAGE_SHIFT)] = pa | attr | PTE_PAGE;
        va += PAGE_SIZE, pa += PAGE_SIZE, size -= PAGE_SIZE;
    }
}

static void map_va_range(const void *start, const void *end, uint64_t attr)
{
    if (end > start) {
        map_range(va_of(start), virt_to_phys(start), va_of(end) - va_of(start), attr);
    }
}

/* Map one RAM range, carving the kernel image out of it with its own permissions. */
static void map_ram(paddr_t base, uint64_t size)
{
    paddr_t kstart = virt_to_phys(__kernel_start), kend = virt_to_phys(__kernel_end);
    paddr_t end = base + size;
    if (kend <= base || kstart >= end) {
        map_range(va_of(phys_to_virt(base)), base, size, K_RW);
        return;
    }
    if (kstart > base) {
        map_range(va_of(phys_to_virt(base)), base, kstart - base, K_RW);
    }
    map_va_range(__text_start, __text_end, K_RX);
    map_va_range(__rodata_start, __rodata_end, K_RO);
    map_va_range(__data_start, boot_stack_guard_lo, K_RW);
    map_va_range(boot_stack, boot_stack_top, K_RW); /* guards on both sides stay unmapped */
    map_va_range(boot_stack_guard_end, __kernel_end, K_RW);
    if (end > kend) {
        map_range(va_of(__kernel_end), kend, end - kend, K_RW);
    }
}

/* Boot CPU: build the final kernel tables and switch TTBR1 to them. */
void mmu_init(void)
{
    kernel_ttbr1_pa = page_alloc();
    if (!kernel_ttbr1_pa) {
        panic("mmu: no memory for the kernel's top-level table");
    }
    kernel_l1 = phys_to_virt(kernel_ttbr1_pa);
    kernel_l1[0] = 0 | K_DEVICE; /* first GiB: GIC, UART, flash, PCIe windows (L1 block) */
    for (unsigned i = 0; i < platform.nmem; i++) {
        map_ram(platform.mem[i].base, platform.mem[i].size);
    }
    mmu_switch_ttbr1(kernel_ttbr1_pa);
    mmu_init_secondary();
}

void *mmu_map_device(paddr_t pa, uint64_t size)
{
    static uint64_t window_used; /* boot CPU only: bytes of the MMIO window handed out */
    if (pa + size <= (1ull << L1_SHIFT)) {
        return phys_to_virt(pa); /* inside the first GiB's device block */
    }
    uint64_t offset = pa % L2_SIZE, len = (offset + size + L2_SIZE - 1) & ~(L2_SIZE - 1);
    if (len > MMIO_WINDOW_SIZE - window_used) {
        return 0;
    }
    uint64_t va = MMIO_WINDOW + window_used;
    window_used += len;
    unsigned long flags = spin_lock_irqsave(&kmap_lock);
    map_range(va, pa - offset, len, K_DEVICE);
    spin_unlock_irqrestore(&kmap_lock, flags);
    dsb(ishst); /* the entries are visible to the walker (invalid -> valid: no TLBI) */
    isb();
    return (void *)(va + offset);
}

bool mmu_has_pan(void)
{
    return ((sysreg_read(id_aa64mmfr1_el1) >> 20) & 0xf) != 0; /* ID_AA64MMFR1_EL1.PAN */
}

/* Privileged Access Never (FEAT_PAN, ARMv8.1; ARM ARM D5.4.2): with PSTATE.PAN set, an EL1
 * load or store to a page EL0 may access faults.  The kernel reaches user memory only
 * through the linear map after a software walk (vm.c's copies), never through TTBR0, so
 * with PAN on a stray user pointer in the kernel is a permission fault, not a silent read
 * of what user space put there.  SCTLR_EL1.SPAN = 0 makes every exception into EL1 set
 * PAN again; MSR PAN, #1 (encoded by hand: the kernel is built for ARMv8.0) sets it now.
 * Without FEAT_PAN (cortex-a72) bit 23 is RES1 and stays set. */
static void pan_enable(void)
{
    if (!mmu_has_pan()) {
        return;
    }
    sysreg_write(sctlr_el1, sysreg_read(sctlr_el1) & ~SCTLR_SPAN);
    isb();                                             /* SPAN in force before the next exception */
    __asm__ volatile(".inst 0xd500419f" ::: "memory"); /* msr pan, #1 */
    isb();
}

/* Every CPU, once TTBR1 holds the final tables: TTBR0 empty (no identity map any more), and
 * PAN on where the CPU has it. */
void mmu_init_secondary(void)
{
    sysreg_write(ttbr0_el1, virt_to_phys(empty_l1));
    isb();                                         /* walks use the empty table from here */
    __asm__ volatile("tlbi vmalle1" ::: "memory"); /* and nothing of the identity map stays */
    dsb(nsh);                                      /* invalidation complete... */
    isb();                                         /* ...before the next fetch */
    pan_enable();
}

/* The level-3 entry for a kernel VA in the stack window, allocating tables if asked. */
static uint64_t *kernel_pte(uint64_t va, bool alloc)
{
    uint64_t *l2 = next_table(kernel_l1, IDX(va, L1_SHIFT), alloc);
    uint64_t *l3 = l2 ? next_table(l2, IDX(va, L2_SHIFT), alloc) : 0;
    return l3 ? &l3[IDX(va, PAGE_SHIFT)] : 0;
}

int arch_kmap_page(uint64_t va, paddr_t pa)
{
    unsigned long flags = spin_lock_irqsave(&kmap_lock);
    uint64_t *pte = kernel_pte(va, true);
    if (pte) {
        *pte = pa | K_RW | PTE_PAGE;
        dsb(ishst); /* invalid -> valid needs no TLB maintenance, only visibility */
        isb();
    }
    spin_unlock_irqrestore(&kmap_lock, flags);
    return pte ? 0 : -1;
}

paddr_t arch_kunmap_page(uint64_t va)
{
    unsigned long flags = spin_lock_irqsave(&kmap_lock);
    uint64_t *pte = kernel_pte(va, false);
    paddr_t pa = 0;
    if (pte && (*pte & PTE_VALID)) {
        pa = *pte & PTE_ADDR_MASK;
        *pte = 0;
        dsb(ishst);
        __asm__ volatile("tlbi vaae1is, %0" ::"r"(va >> PAGE_SHIFT) : "memory");
        dsb(ish);
        isb();
    }
    spin_unlock_irqrestore(&kmap_lock, flags);
    return pa;
}

/* A look only, so any address may be asked about (the panic dump asks about whatever a frame
 * pointer holds): a block at level 1 or 2 (the linear map past the image) answers at that
 * level, where kernel_pte would take it for a table and panic. */
bool arch_kva_is_mapped(uint64_t va)
{
    uint64_t e = kernel_l1[IDX(va, L1_SHIFT)];
    if ((e & PTE_VALID) && (e & PTE_TABLE)) {
        e = ((uint64_t *)phys_to_virt(e & PTE_ADDR_MASK))[IDX(va, L2_SHIFT)];
        if ((e & PTE_VALID) && (e & PTE_TABLE)) {
            e = ((uint64_t *)phys_to_virt(e & PTE_ADDR_MASK))[IDX(va, PAGE_SHIFT)];
        }
    }
    return e & PTE_VALID;
}

/* ---- user address spaces (TTBR0) ------------------------------------------------------ */

#define ASID_MAX 4096 /* plenty for this kernel; 0 is reserved for "none" */

static spinlock_t asid_lock = SPINLOCK_INIT_RANK(LOCK_LEAF);
static uint64_t asid_used[ASID_MAX / 64];
static unsigned asid_next = 1;

static int asid_alloc(void)
{
    unsigned long flags = spin_lock_irqsave(&asid_lock);
    int asid = -1;
    for (unsigned n = 0; n < ASID_MAX; n++) {
        unsigned a = (asid_next + n) % ASID_MAX;
        if (a && !(asid_used[a / 64] & (1ull << (a % 64)))) {
            asid_used[a / 64] |= 1ull << (a % 64);
            asid_next = a + 1;
            asid = (int)a;
            break;
        }
    }
    spin_unlock_irqrestore(&asid_lock, flags);
    return asid;
}

static void asid_free(unsigned a)
{
    unsigned long flags = spin_lock_irqsave(&asid_lock);
    asid_used[a / 64] &= ~(1ull << (a % 64));
    spin_unlock_irqrestore(&asid_lock, flags);
}

int arch_as_init(struct arch_as *as)
{
    int asid = asid_alloc();
    if (asid < 0) {
        return -EAGAIN;
    }
    as->root = page_alloc();
    if (!as->root) {
        asid_free((unsigned)asid);
        return -ENOMEM;
    }
    as->asid = (uint16_t)asid;
    as->ntables = 0;
    return 0;
}

/* Free every table below the root by walking the tree (when as->tables lost count). */
static void free_tree(const uint64_t *l1)
{
    for (unsigned i = 0; i < 512; i++) {
        if (!(l1[i] & PTE_VALID)) {
            continue;
        }
        const uint64_t *l2 = phys_to_virt(l1[i] & PTE_ADDR_MASK);
        for (unsigned j = 0; j < 512; j++) {
            if (l2[j] & PTE_VALID) {
                page_free(l2[j] & PTE_ADDR_MASK);
            }
        }
        page_free(l1[i] & PTE_ADDR_MASK);
    }
}

void arch_as_destroy(struct arch_as *as)
{
    if (as->ntables <= ARCH_AS_TABLES) {
        for (unsigned i = 0; i < as->ntables; i++) {
            page_free(as->tables[i]); /* every table it made and still has: no walk */
        }
    } else {
        free_tree(phys_to_virt(as->root));
    }
    page_free(as->root);
    /* Drop every TLB entry tagged with this ASID on all CPUs before it can be reused. */
    dsb(ishst);
    __asm__ volatile("tlbi aside1is, %0" ::"r"((uint64_t)as->asid << 48) : "memory");
    dsb(ish);
    asid_free(as->asid);
    as->root = 0;
}

/* User page attributes.  PROT_NONE leaves AP[1] clear: EL0 may not touch the page (and the
 * kernel reaches user pages only through the linear map, after arch_as_lookup said the
 * access is allowed).  Without PROT_WRITE the page is read-only; AArch64 has no write-only
 * or, without FEAT_EPAN, execute-only EL0 pages, so those read as readable, as on Linux. */
static uint64_t user_pte_bits(unsigned prot)
{
    uint64_t e = PTE_VALID | PTE_PAGE | PTE_ATTR(MT_NORMAL) | PTE_SH_INNER | PTE_AF | PTE_NG |
                 PTE_PXN; /* the kernel never executes user pages */
    if (prot & (PROT_READ | PROT_WRITE | PROT_EXEC)) {
        e |= PTE_AP_EL0;
    }
    if (!(prot & PROT_WRITE)) {
        e |= PTE_AP_RO;
    }
    if (!(prot & PROT_EXEC)) {
        e |= PTE_UXN;
    }
    return e;
}

/* The table an entry of a user table points to, or NULL if the entry is invalid (never a
 * block: user mappings are pages).  The read-only walk, inline: every user copy takes it. */
static inline const uint64_t *walk_step(uint64_t e)
{
    if (!(e & PTE_VALID)) {
        return 0;
    }
    if (!(e & PTE_TABLE)) {
        panic("mmu: block mapping where a table was expected (entry %lx)", e);
    }
    return phys_to_virt(e & PTE_ADDR_MASK);
}

/* The last-level table holding va's entry, or NULL if there is none (no allocation). */
static inline uint64_t *user_l3(const struct arch_as *as, uint64_t va)
{
    const uint64_t *l1 = phys_to_virt(as->root);
    const uint64_t *l2 = walk_step(l1[IDX(va, L1_SHIFT)]);
    return l2 ? (uint64_t *)walk_step(l2[IDX(va, L2_SHIFT)]) : 0;
}

/* The table entry `idx` of a user table points to, a new one if none (noted in as->tables
 * while there is room); NULL when out of memory. */
static uint64_t *user_next_table(struct arch_as *as, uint64_t *table, unsigned idx)
{
    bool fresh = !(table[idx] & PTE_VALID);
    uint64_t *next = next_table(table, idx, true);
    if (fresh && next) {
        if (as->ntables < ARCH_AS_TABLES) {
            as->tables[as->ntables++] = virt_to_phys(next);
        } else {
            as->ntables = ARCH_AS_TABLES + 1; /* lost count: arch_as_destroy walks the tree */
        }
    }
    return next;
}

/* A table page given back by arch_as_trim leaves the list. */
static void forget_table(struct arch_as *as, paddr_t pa)
{
    for (unsigned i = 0; as->ntables <= ARCH_AS_TABLES && i < as->ntables; i++) {
        if (as->tables[i] == pa) {
            as->tables[i] = as->tables[--as->ntables];
            return;
        }
    }
}

/* va's entry, its tables made as needed (user_l3 only looks). */
static uint64_t *user_pte_alloc(struct arch_as *as, uint64_t va)
{
    uint64_t *l1 = phys_to_virt(as->root);
    uint64_t *l2 = user_next_table(as, l1, IDX(va, L1_SHIFT));
    uint64_t *l3 = l2 ? user_next_table(as, l2, IDX(va, L2_SHIFT)) : 0;
    return l3 ? &l3[IDX(va, PAGE_SHIFT)] : 0;
}

static int as_map_pte(struct arch_as *as, uint64_t va, uint64_t entry)
{
    if (va >= USER_VA_TOP) {
        return -EINVAL;
    }
    uint64_t *pte = user_pte_alloc(as, va);
    if (!pte) {
        return -ENOMEM;
    }
    *pte = entry;
    dsb(ishst); /* invalid -> valid: visible to the walker, no TLB maintenance needed */
    return 0;
}

int arch_as_map(struct arch_as *as, uint64_t va, paddr_t pa, unsigned prot)
{
    return as_map_pte(as, va, pa | user_pte_bits(prot));
}

/* A user driver's register window: Device-nGnRnE (uncached, no merging or reordering, as the
 * kernel maps MMIO), execute-never at both levels; shareability does not apply to device
 * memory (ARM ARM D8.5.2). */
int arch_as_map_device(struct arch_as *as, uint64_t va, paddr_t pa, unsigned prot)
{
    uint64_t e = PTE_VALID | PTE_PAGE | PTE_ATTR(MT_DEVICE_nGnRnE) | PTE_AF | PTE_NG | PTE_AP_EL0 |
                 PTE_PXN | PTE_UXN | (prot & PROT_WRITE ? 0 : PTE_AP_RO);
    return as_map_pte(as, va, pa | e);
}

paddr_t arch_as_unmap(struct arch_as *as, uint64_t va)
{
    uint64_t *l3 = va < USER_VA_TOP ? user_l3(as, va) : 0;
    uint64_t *pte = l3 ? &l3[IDX(va, PAGE_SHIFT)] : 0;
    if (!pte || !(*pte & PTE_VALID)) {
        return 0;
    }
    paddr_t pa = *pte & PTE_ADDR_MASK;
    *pte = 0;
    dsb(ishst);
    __asm__ volatile("tlbi vae1is, %0" ::"r"((uint64_t)as->asid << 48 | (va >> PAGE_SHIFT))
                     : "memory");
    dsb(ish);
    return pa;
}

/* More pages than this in one unmap: one TLBI ASIDE1IS for the whole space, not one per
 * page (each broadcast invalidation is costly, most of all under emulation). */
#define UNMAP_TLBI_PAGES 16

/* Collected pages wait in a small array until the TLB no longer holds them. */
struct unmap_batch {
    paddr_t pa[64];
    unsigned n;
};

static void batch_flush(const struct arch_as *as, struct unmap_batch *b,
                        void (*freed)(paddr_t, void *), void *ctx)
{
    if (!b->n) {
        return;
    }
    dsb(ishst); /* the cleared entries are visible to every walker */
    __asm__ volatile("tlbi aside1is, %0" ::"r"((uint64_t)as->asid << 48) : "memory");
    dsb(ish); /* ...and no CPU holds a translation for them any more */
    for (unsigned i = 0; i < b->n; i++) {
        freed(b->pa[i], ctx);
    }
    b->n = 0;
}

void arch_as_unmap_range(struct arch_as *as, uint64_t start, uint64_t end,
                         void (*freed)(paddr_t pa, void *ctx), void *ctx)
{
    end = MIN(end, (uint64_t)USER_VA_TOP);
    if (end <= start) {
        return;
    }
    if ((end - start) / PAGE_SIZE <= UNMAP_TLBI_PAGES) {
        for (uint64_t va = start; va < end; va += PAGE_SIZE) {
            paddr_t pa = arch_as_unmap(as, va);
            if (pa) {
                freed(pa, ctx);
            }
        }
        return;
    }
    struct unmap_batch b = {.n = 0};
    for (uint64_t va = start; va < end;) { /* a last-level table (2 MiB) at a time */
        uint64_t table_end = MIN(end, (va | (L2_SIZE - 1)) + 1);
        uint64_t *l3 = user_l3(as, va);
        for (; l3 && va < table_end; va += PAGE_SIZE) {
            uint64_t *pte = &l3[IDX(va, PAGE_SHIFT)];
            if (*pte & PTE_VALID) {
                b.pa[b.n++] = *pte & PTE_ADDR_MASK;
                *pte = 0;
                if (b.n == sizeof(b.pa) / sizeof(b.pa[0])) {
                    batch_flush(as, &b, freed, ctx);
                }
            }
        }
        va = table_end; /* (no table here: its 2 MiB skipped) */
    }
    batch_flush(as, &b, freed, ctx);
}

paddr_t arch_as_lookup(const struct arch_as *as, uint64_t va, unsigned *prot)
{
    if (va >= USER_VA_TOP) {
        return 0;
    }
    const uint64_t *l3 = user_l3(as, va);
    uint64_t e = l3 ? l3[IDX(va, PAGE_SHIFT)] : 0;
    if (!(e & PTE_VALID)) {
        return 0;
    }
    if (prot && !(e & PTE_AP_EL0)) {
        *prot = 0; /* PROT_NONE */
    } else if (prot) {
        *prot = PROT_READ | (e & PTE_AP_RO ? 0 : PROT_WRITE) | (e & PTE_UXN ? 0 : PROT_EXEC);
        if ((e & PTE_ATTR(7)) == PTE_ATTR(MT_DEVICE_nGnRnE)) {
            *prot |= ARCH_PROT_DEVICE;
        }
    }
    return e & PTE_ADDR_MASK;
}

static bool table_is_empty(const uint64_t *table)
{
    for (unsigned i = 0; i < 512; i++) {
        if (table[i] & PTE_VALID) {
            return false;
        }
    }
    return true;
}

/* Unlink the table behind parent[idx] and free it.  The walker may have cached the link:
 * TLBI VAE1IS (not the last-level-only VALE1IS) for an address it covered drops cached
 * walks through it on every CPU (ARM ARM D8.13), after the cleared entry is visible. */
static void free_table(struct arch_as *as, uint64_t *parent, unsigned idx, uint64_t va)
{
    paddr_t pa = parent[idx] & PTE_ADDR_MASK;
    forget_table(as, pa);
    parent[idx] = 0;
    dsb(ishst);
    __asm__ volatile("tlbi vae1is, %0" ::"r"((uint64_t)as->asid << 48 | (va >> PAGE_SHIFT))
                     : "memory");
    dsb(ish);
    page_free(pa);
}

void arch_as_trim(struct arch_as *as, uint64_t start, uint64_t end)
{
    uint64_t *l1 = phys_to_virt(as->root);
    end = MIN(end, (uint64_t)USER_VA_TOP);
    for (uint64_t gb = start & ~((1ull << L1_SHIFT) - 1); gb < end; gb += 1ull << L1_SHIFT) {
        uint64_t *l2 = next_table(l1, IDX(gb, L1_SHIFT), false);
        if (!l2) {
            continue;
        }
        uint64_t from = MAX(start, gb), to = MIN(end, gb + (1ull << L1_SHIFT));
        for (uint64_t mb = from & ~(L2_SIZE - 1); mb < to; mb += L2_SIZE) {
            uint64_t *l3 = next_table(l2, IDX(mb, L2_SHIFT), false);
            if (l3 && table_is_empty(l3)) {
                free_table(as, l2, IDX(mb, L2_SHIFT), mb);
            }
        }
        if (table_is_empty(l2)) {
            free_table(as, l1, IDX(gb, L1_SHIFT), gb);
        }
    }
}

void arch_as_activate(const struct arch_as *as)
{
    uint64_t ttbr = as ? (as->root | (uint64_t)as->asid << 48) : virt_to_phys(empty_l1);
    sysreg_write(ttbr0_el1, ttbr);
    isb(); /* the new space is in effect before the return to EL0 (ASID-tagged: no TLBI) */
}

void arch_sync_icache(const void *kva, size_t len)
{
    /* The kernel wrote code through its linear-map alias: clean those data cache lines to
     * the point of unification, then invalidate every CPU's instruction cache by broadcast
     * (ARM ARM B2.4.4, "concurrent modification and execution of instructions"). */
    uint64_t line = 4u << (sysreg_read(ctr_el0) >> 16 & 0xf); /* DminLine, bytes */
    uint64_t end = (uint64_t)kva + len;
    for (uint64_t a = (uint64_t)kva & ~(line - 1); a < end; a += line) {
        __asm__ volatile("dc cvau, %0" ::"r"(a) : "memory");
    }
    dsb(ish);
    __asm__ volatile("ic ialluis" ::: "memory");
    dsb(ish);
    isb();
}

int arch_kmap_prepare(uint64_t va, uint64_t len)
{
    int r = 0;
    unsigned long flags = spin_lock_irqsave(&kmap_lock);
    for (uint64_t a = va & ~(L2_SIZE - 1); a < va + len && r == 0; a += L2_SIZE) {
        r = kernel_pte(a, true) ? 0 : -ENOMEM;
    }
    spin_unlock_irqrestore(&kmap_lock, flags);
    return r;
}

/* DC ZVA zeroes a whole block (4 << DCZID_EL0.BS bytes) per instruction; DCZID_EL0.DZP
 * says whether it is allowed (ARM ARM D17.2.35). */
void arch_zero_page(void *page)
{
    uint64_t dczid = sysreg_read(dczid_el0);
    if (dczid & (1u << 4)) {
        memset(page, 0, PAGE_SIZE);
        return;
    }
    uint64_t block = 4u << (dczid & 0xf); /* at most 2 KiB (BS <= 9): 4 blocks fit a page */
    for (uint64_t a = (uint64_t)page; a < (uint64_t)page + PAGE_SIZE; a += 4 * block) {
        __asm__ volatile("dc zva, %0\n\tdc zva, %1\n\tdc zva, %2\n\tdc zva, %3" ::"r"(a),
                         "r"(a + block), "r"(a + 2 * block), "r"(a + 3 * block)
                         : "memory");
    }
}
