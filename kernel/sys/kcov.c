/* SPDX-License-Identifier: MIT */
/*
 * kcov.c — coverage of the kernel's code, for the coverage-guided fuzzer (contract in
 * include/kernel/kcov.h, ABI in include/uapi/zt_debug.h).  This file is compiled without
 * -fsanitize-coverage in every build: it is what the instrumented code calls.
 *
 * A block is named by the return address of its call to __sanitizer_cov_trace_pc, so one
 * bit per 4-byte instruction slot of the text names every block: bit (pc - __text_start) / 4.
 * Three bitmaps: `everywhere` (every block any CPU reached, in any context, since boot),
 * `machine` (the blocks of recorded system calls that tasks have collected), and each
 * recording task's own (struct kcov_task, in pages: no contiguous allocation).
 *
 * Who writes what: any CPU sets bits in `everywhere` (an atomic OR, only when the bit is
 * still clear: after the first minutes almost every block finds its bit set); a task's own
 * bitmap is written only by that task, on whichever CPU it runs, and read by its own
 * zt_kcov calls; `machine` is ORed into atomically by COLLECT and read by anyone.
 *
 * What a task's bitmap holds: blocks run while the task is current on its CPU, inside a
 * system call (from kernel_syscall_enter to the return to user space), and not inside an
 * interrupt handled meanwhile (kcov_irq_depth).  Blocks a call runs in the scheduler after
 * switching away are the next task's, and are not recorded unless that task records.
 */
#include "kernel/kcov.h"
#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/kmem.h"
#include "kernel/lib.h"
#include "kernel/page.h"
#include "kernel/printk.h"
#include "kernel/task.h"
#include "kernel/vm.h"
#include "uapi/zt_debug.h"
#include "uapi/zt_errno.h"

#ifdef ZT_COVER

#define KCOV_WORDS (KCOV_MAX_PAGES * KCOV_BITS_PER_PAGE / 64)

extern char __text_start[], __text_end[];

static uint64_t everywhere[KCOV_WORDS];
static uint64_t machine[KCOV_WORDS];
uint32_t kcov_irq_depth[MAX_CPUS];
PERCPU_ARRAY(kcov_irq_depth);
static bool tasks_ready; /* the boot CPU's struct cpu is in place: current_task is valid */

/* Bits set in x (not __builtin_popcountll: with -mgeneral-regs-only that is a call to
 * libgcc, which the kernel does not link; cpumask.h). */
static unsigned bits_in(uint64_t x)
{
    unsigned n = 0;
    for (; x; x &= x - 1) {
        n++;
    }
    return n;
}

/* Instruction slots of the text that have a bit (all of it, unless the text is larger than
 * KCOV_MAX_PAGES pages of bits can name: kcov_init says so). */
static uint64_t slots(void)
{
    uint64_t n = (uint64_t)(__text_end - __text_start) / 4;
    return MIN(n, (uint64_t)KCOV_WORDS * 64);
}

static uint64_t bitmap_words(void)
{
    return (slots() + 63) / 64;
}

void kcov_init(void)
{
    if ((uint64_t)(__text_end - __text_start) / 4 > (uint64_t)KCOV_WORDS * 64) {
        printk("kcov: text of %lu bytes: blocks past the first %lu are not recorded\n",
               (unsigned long)(__text_end - __text_start), (unsigned long)KCOV_WORDS * 256);
    }
    __atomic_store_n(&tasks_ready, true, __ATOMIC_RELEASE);
}

/* Called by the compiler at the start of every basic block of an instrumented file. */
void __sanitizer_cov_trace_pc(void)
{
    uint64_t slot = ((uintptr_t)__builtin_return_address(0) - (uintptr_t)__text_start) / 4;
    if (slot >= slots()) {
        return;
    }
    uint64_t bit = 1ull << (slot % 64);
    uint64_t *w = &everywhere[slot / 64];
    if (!(__atomic_load_n(w, __ATOMIC_RELAXED) & bit)) {
        __atomic_fetch_or(w, bit, __ATOMIC_RELAXED);
    }
    if (!__atomic_load_n(&tasks_ready, __ATOMIC_ACQUIRE)) {
        return;
    }
    struct cpu *c = arch_this_cpu();
    struct task *t = c->current_task;
    if (!t || !t->kcov || !t->kcov_in_call || kcov_irq_depth[c->id]) {
        return;
    }
    t->kcov->page[slot / KCOV_BITS_PER_PAGE][slot % KCOV_BITS_PER_PAGE / 64] |= bit;
}

static long enable(struct task *t)
{
    if (t->kcov) {
        return -EBUSY;
    }
    struct kcov_task *k = kmem_alloc(sizeof(*k));
    if (!k) {
        return -ENOMEM;
    }
    k->npages = (unsigned)((bitmap_words() * 8 + PAGE_SIZE - 1) / PAGE_SIZE);
    for (unsigned i = 0; i < k->npages; i++) {
        paddr_t pa = page_alloc();
        if (!pa) {
            for (unsigned j = 0; j < i; j++) {
                page_free(virt_to_phys(k->page[j]));
            }
            kmem_free(k, sizeof(*k));
            return -ENOMEM;
        }
        k->page[i] = phys_to_virt(pa);
        memset(k->page[i], 0, PAGE_SIZE);
    }
    t->kcov = k; /* its next call records */
    return 0;
}

static long disable(struct task *t)
{
    struct kcov_task *k = t->kcov;
    if (!k) {
        return -EINVAL;
    }
    t->kcov = 0;
    for (unsigned i = 0; i < k->npages; i++) {
        page_free(virt_to_phys(k->page[i]));
    }
    kmem_free(k, sizeof(*k));
    return 0;
}

static uint64_t *task_word(struct kcov_task *k, uint64_t w)
{
    return &k->page[w * 64 / KCOV_BITS_PER_PAGE][w % (KCOV_BITS_PER_PAGE / 64)];
}

/* Copy the task's bitmap out (if asked), merge it into `machine`, clear it. */
static long collect(struct task *t, uint64_t uout, uint64_t size)
{
    struct kcov_task *k = t->kcov;
    uint64_t words = bitmap_words();
    if (!k || (uout && size < words * 8)) {
        return -EINVAL;
    }
    if (uout && vm_check_range(current_vm(), uout, words * 8, PROT_WRITE)) {
        return -EFAULT;
    }
    for (uint64_t w = 0; uout && w < words; w += PAGE_SIZE / 8) {
        uint64_t n = MIN(words - w, (uint64_t)PAGE_SIZE / 8);
        if (copy_to_user(current_vm(), uout + w * 8, task_word(k, w), n * 8)) {
            return -EFAULT;
        }
    }
    long added = 0;
    for (uint64_t w = 0; w < words; w++) {
        uint64_t *tw = task_word(k, w), bits = *tw;
        if (!bits) {
            continue;
        }
        uint64_t fresh = bits & ~__atomic_fetch_or(&machine[w], bits, __ATOMIC_RELAXED);
        added += bits_in(fresh);
        *tw = 0;
    }
    return added;
}

/* Copy one of the machine's bitmaps out; the number of blocks in it. */
static long copy_bitmap(const uint64_t *map, uint64_t uout, uint64_t size)
{
    uint64_t words = bitmap_words();
    if (size < words * 8) {
        return -EINVAL;
    }
    if (vm_check_range(current_vm(), uout, words * 8, PROT_WRITE)) {
        return -EFAULT;
    }
    long blocks = 0;
    uint64_t chunk[64];
    for (uint64_t w = 0; w < words; w += 64) {
        uint64_t n = MIN(words - w, (uint64_t)64);
        for (uint64_t i = 0; i < n; i++) {
            chunk[i] = __atomic_load_n(&map[w + i], __ATOMIC_RELAXED);
            blocks += bits_in(chunk[i]);
        }
        if (copy_to_user(current_vm(), uout + w * 8, chunk, n * 8)) {
            return -EFAULT;
        }
    }
    return blocks;
}

static uint64_t count(const uint64_t *map)
{
    uint64_t blocks = 0;
    for (uint64_t w = 0; w < bitmap_words(); w++) {
        blocks += bits_in(__atomic_load_n(&map[w], __ATOMIC_RELAXED));
    }
    return blocks;
}

long sys_zt_kcov(struct trap_frame *f)
{
    struct task *t = current();
    uint64_t op = arch_frame_arg(f, 0), arg = arch_frame_arg(f, 1), size = arch_frame_arg(f, 2);
    t->kcov_in_call = false; /* this call is not recorded */
    switch (op) {
    case ZT_KCOV_INFO: {
        struct zt_kcov_info info = {(uintptr_t)__text_start, (uintptr_t)__text_start + slots() * 4,
                                    bitmap_words() * 8, count(machine), count(everywhere)};
        if (size != sizeof(info)) {
            return -EINVAL;
        }
        return copy_to_user(current_vm(), arg, &info, sizeof(info)) ? -EFAULT : 0;
    }
    case ZT_KCOV_ENABLE:
        return arg || size ? -EINVAL : enable(t);
    case ZT_KCOV_DISABLE:
        return arg || size ? -EINVAL : disable(t);
    case ZT_KCOV_COLLECT:
        return collect(t, arg, size);
    case ZT_KCOV_MACHINE:
        return copy_bitmap(machine, arg, size);
    case ZT_KCOV_EVERYWHERE:
        return copy_bitmap(everywhere, arg, size);
    default:
        return -EINVAL;
    }
}

#else /* no coverage in this build */

long sys_zt_kcov(struct trap_frame *f)
{
    return -ENODEV;
}

#endif
