/* SPDX-License-Identifier: MIT */
/*
 * trap.c — what happens after vectors.S has saved a frame: count the exception, decode it,
 * and hand it to the kernel in generic terms (arch.h): an interrupt as its class and number
 * to kernel/cpu/irq.c, an SVC to kernel/sys/syscall.c, any other synchronous exception from EL0 as
 * a struct exc_info to kernel/entry.c; anything unexpected at EL1 panics with a register dump. All
 * ESR decoding and GIC INTID numbering stays in this file (the ESR constants vectors.S needs too
 * are in trap.h).
 *
 * Every exception but a system call is counted here, exactly once, in this CPU's struct cpu_stats
 * (by entry kind and source; synchronous ones also by generic kind; interrupts by class and number
 * in kernel/cpu/irq.c).  Tests compare these counts with QEMU's own exception log.
 *
 * Context: called from vectors.S with IRQs masked (PSTATE.I set on exception entry).  The
 * kernel's user-return work (kernel_exit_to_user) also runs with IRQs masked and returns
 * with them masked.  Spec: ARM ARM D1.10 (exception entry), D17.2.37 (ESR_EL1).
 */
#include "trap.h"
#include "arch.h"
#include "kernel/bootargs.h"
#include "kernel/cpu.h"
#include "kernel/entry.h"
#include "kernel/irq.h"
#include "kernel/kcov.h"
#include "kernel/page.h"
#include "kernel/panic.h"
#include "kernel/printk.h"
#include "kernel/stats.h"
#include "kernel/syscall.h"
#include "uapi/zt_syscall.h"
#include "platform.h"

#define ESR_EC(esr)    ((unsigned)((esr) >> ESR_EC_SHIFT) & ESR_EC_MASK)
#define ISS_DFSC(esr)  ((esr)&0x3f)
#define DFSC_ALIGNMENT 0x21        /* data abort ISS: alignment fault (D17.2.40) */
#define ISS_WNR        (1ull << 6) /* data abort ISS: the access was a write */

static const char *const ec_names[64] = {
    [0x00] = "unknown reason",
    [0x01] = "WFI/WFE",
    [0x07] = "FP/SIMD access",
    [0x0e] = "illegal execution state",
    [0x11] = "SVC (AArch32)",
    [0x15] = "SVC",
    [0x16] = "HVC",
    [0x17] = "SMC",
    [0x18] = "system register access",
    [0x20] = "instruction abort (lower EL)",
    [0x21] = "instruction abort (same EL)",
    [0x22] = "PC alignment fault",
    [0x24] = "data abort (lower EL)",
    [0x25] = "data abort (same EL)",
    [0x26] = "SP alignment fault",
    [0x2c] = "floating-point exception",
    [0x2f] = "SError",
    [0x30] = "breakpoint (lower EL)",
    [0x31] = "breakpoint (same EL)",
    [0x32] = "software step (lower EL)",
    [0x33] = "software step (same EL)",
    [0x34] = "watchpoint (lower EL)",
    [0x35] = "watchpoint (same EL)",
    [0x38] = "BKPT (AArch32)",
    [0x3c] = "BRK",
};

static const char *ec_name(unsigned ec)
{
    const char *n = ec < 64 ? ec_names[ec] : 0;
    return n ? n : "reserved exception class";
}

/* An ESR as a generic kind (arch.h): what the kernel needs, nothing aarch64 in it. */
static enum sync_kind sync_kind_of(uint64_t esr)
{
    switch (ESR_EC(esr)) {
    case EC_SVC64:
        return SYNC_SYSCALL;
    case EC_DABT_LOW:
    case EC_DABT_CUR:
        return ISS_DFSC(esr) == DFSC_ALIGNMENT ? SYNC_DATA_ALIGN : SYNC_DATA_FAULT;
    case EC_IABT_LOW:
    case EC_IABT_CUR:
        return SYNC_INSN_FAULT;
    case EC_PC_ALIGN:
        return SYNC_PC_ALIGN;
    case EC_SP_ALIGN:
        return SYNC_SP_ALIGN;
    case EC_UNKNOWN:
        return SYNC_UNDEFINED;
    case EC_BRK64:
        return SYNC_BREAKPOINT;
    case EC_FP64:
        return SYNC_FP;
    default:
        return SYNC_OTHER;
    }
}

/* The whole description of a synchronous exception from EL0 that is not an SVC. */
static void describe(const struct trap_frame *f, uint64_t esr, struct exc_info *e)
{
    unsigned ec = ESR_EC(esr);
    e->kind = sync_kind_of(esr);
    e->pc = f->elr;
    e->addr = f->elr;
    e->access = 0;
    e->name = ec_name(ec);
    if (e->kind == SYNC_DATA_FAULT || e->kind == SYNC_DATA_ALIGN) {
        e->addr = sysreg_read(far_el1);
        e->access = (esr & ISS_WNR) ? PROT_WRITE : PROT_READ;
    } else if (e->kind == SYNC_INSN_FAULT) {
        e->addr = sysreg_read(far_el1);
        e->access = PROT_EXEC;
    } else if (e->kind == SYNC_SP_ALIGN) {
        e->addr = f->sp_el0;
    }
}

static const char *const kind_names[] = {"synchronous", "IRQ", "FIQ", "SError"};
static const char *const source_names[] = {"EL1 with SP_EL0", "EL1", "EL0 (AArch64)",
                                           "EL0 (AArch32)"};

/* Count an exception that is not decoded further (interrupts, and the unexpected ones). */
static inline void count(enum exc_kind kind, enum exc_from from)
{
    if (kind == EXC_IRQ) {
        stats_irq_exception(from);
    } else {
        stats_exception(kind, from, kind == EXC_SYNC ? SYNC_OTHER : 0);
    }
}

/* Acknowledge one interrupt, classify it by its INTID, let the kernel handle it, end it.
 * false if nothing was pending: after an exception that is a spurious interrupt (counted);
 * when polled, a wakeup from WFI that was not for an interrupt (not counted). */
static bool irq_entry(bool polled)
{
    uint32_t iar = gic_ack();
    unsigned intid = iar & 0xffffff;
    if (intid >= 1020) {
        if (!polled) {
            stats_irq_spurious(intid); /* nothing pending any more: ignore, no EOI */
        }
        return false;
    }
    if (intid < ARCH_NR_IPIS) {
        irq_dispatch(IRQ_CLASS_IPI, intid); /* SGI n carries IPI reason n */
    } else if (intid == arch_timer_irq()) {
        irq_dispatch(IRQ_CLASS_TIMER, intid);
    } else {
        irq_dispatch(IRQ_CLASS_DEVICE, intid);
    }
    gic_eoi(iar);
    return true;
}

/* Checked builds: an exception from code that ran with interrupts enabled (user space, or
 * kernel code an IRQ interrupted) masked them, so a span of the irqs-off check starts here
 * (arch.h); the return to kernel code ends it below, the return to user space in
 * kernel_exit_to_user. */
#ifdef ZT_CHECKED
#define SPAN_STARTS() irqsoff_masked()
#define SPAN_ENDS()   irqsoff_unmasked()
#else
#define SPAN_STARTS() ((void)0)
#define SPAN_ENDS()   ((void)0)
#endif

bool arch_irq_poll(void)
{
    return irq_entry(true);
}

void trap_el1_irq(struct trap_frame *f, unsigned long unused)
{
    SPAN_STARTS();
    kcov_irq_enter(); /* the coverage kernel: not the interrupted call's blocks */
    count(EXC_IRQ, FROM_KERNEL);
    irq_entry(false);
    kernel_exit_irq();
    stats_exception_exit(EXC_IRQ);
    kcov_irq_exit();
    SPAN_ENDS(); /* the eret unmasks: the interrupted code ran with interrupts enabled */
}

void trap_el1_sync(struct trap_frame *f, unsigned long unused)
{
    uint64_t esr = sysreg_read(esr_el1);
    unsigned ec = ESR_EC(esr);
    stats_exception(EXC_SYNC, FROM_KERNEL, sync_kind_of(esr));
    if (ec == EC_UNKNOWN && semihost_check_fault(f->elr)) {
        f->elr += 4; /* semihosting is off: skip the HLT, arch_poweroff falls back to PSCI */
        stats_exception_exit(EXC_SYNC);
        return;
    }
    panic_frame(f, "unexpected exception at EL1: %s (ESR 0x%08lx, FAR 0x%016lx)", ec_name(ec),
                (unsigned long)esr, (unsigned long)sysreg_read(far_el1));
}

void trap_el0_irq(struct trap_frame *f, unsigned long unused)
{
    SPAN_STARTS();
    count(EXC_IRQ, FROM_USER);
    kernel_entry_from_user(f);
    irq_entry(false);
    kernel_exit_to_user(f);
    stats_exception_exit(EXC_IRQ);
}

/* A synchronous exception from EL0 that is not an SVC (vectors.S sends those to the
 * system-call path, kernel_syscall_* in entry.c, which counts them); esr: ESR_EL1. */
void trap_el0_sync(struct trap_frame *f, uint64_t esr)
{
    struct exc_info e;
    SPAN_STARTS();
    stats_exception(EXC_SYNC, FROM_USER, sync_kind_of(esr));
    kernel_entry_from_user(f);
    describe(f, esr, &e);
    user_exception(f, &e);
    kernel_exit_to_user(f);
    stats_exception_exit(EXC_SYNC);
}

/* vectors.S's system-call path, the whole frame saved: the call's full path. */
void trap_el0_svc_full(struct trap_frame *f, uint64_t esr)
{
    kernel_syscall_slow(f, (unsigned)(esr & 0xffff)); /* the SVC immediate: traced only */
}

/* FIQ or SError from EL0: not expected on this platform; reported as the task's fault (a
 * signal: SIGILL, which kills it unless it handles it). */
void trap_el0_fiq_serror(struct trap_frame *f, unsigned long kindsrc)
{
    enum exc_kind kind = (enum exc_kind)(kindsrc & TRAP_KIND_MASK);
    SPAN_STARTS();
    count(kind, FROM_USER);
    kernel_entry_from_user(f);
    struct exc_info e = {
        .kind = SYNC_OTHER,
        .pc = f->elr,
        .addr = f->elr,
        .name = kind == EXC_SERROR ? ec_name(EC_SERROR) : "FIQ",
    };
    user_exception(f, &e);
    kernel_exit_to_user(f);
    stats_exception_exit(kind);
}

/* Vectors the kernel never expects (EL1 with SP_EL0, FIQ, SError, AArch32 EL0). */
void trap_unexpected(struct trap_frame *f, unsigned long kindsrc)
{
    unsigned kind = kindsrc & TRAP_KIND_MASK, src = (kindsrc >> TRAP_SRC_SHIFT) & TRAP_SRC_MASK;
    count((enum exc_kind)kind, src >= 2 ? FROM_USER : FROM_KERNEL);
    panic_frame(f, "unexpected %s exception from %s (ESR 0x%08lx)", kind_names[kind],
                source_names[src], (unsigned long)sysreg_read(esr_el1));
}

void trap_stack_overflow(struct trap_frame *f, uint64_t bad_sp)
{
    count(EXC_SYNC, FROM_KERNEL);
    panic_frame(f, "kernel stack overflow: SP 0x%016lx ran into the guard page (FAR 0x%016lx)",
                (unsigned long)bad_sp, (unsigned long)sysreg_read(far_el1));
}

/* The return addresses of the frame-pointer chain from fp ([fp] = the caller's fp, [fp + 8] =
 * the return address), at most max of them: the walk stops at a frame pointer that is not a
 * 16-byte-aligned, mapped kernel address, or at a zero return address (the chain's end).
 * Always inlined: arch_backtrace starts from its own frame, which a call made as a tail call
 * would have given up (and the callee's registers overwritten) before the walk reads it. */
static inline __attribute__((always_inline)) int walk_frames(uint64_t fp, uint64_t *out, int max)
{
    int n = 0;
    while (n < max && fp && (fp & 15) == 0 && fp >= KERNEL_VA_OFFSET && arch_kva_is_mapped(fp) &&
           arch_kva_is_mapped(fp + 8)) {
        uint64_t lr = ((uint64_t *)fp)[1];
        if (!lr) {
            break;
        }
        out[n++] = lr;
        fp = ((uint64_t *)fp)[0];
    }
    return n;
}

/* The panic dump's backtrace of the kernel stack the exception interrupted. */
static void backtrace(uint64_t fp)
{
    uint64_t lr[16];
    int n = walk_frames(fp, lr, 16);
    printk("  backtrace:");
    for (int i = 0; i < n; i++) {
        printk(" %lx", (unsigned long)lr[i]);
    }
    printk("\n");
}

int arch_backtrace(uint64_t *out, int max)
{
    return walk_frames((uint64_t)__builtin_frame_address(0), out, max);
}

void arch_dump_frame(const struct trap_frame *f)
{
    printk("  ELR  %016lx  SPSR %016lx  SP_EL0 %016lx  FAR %016lx\n", (unsigned long)f->elr,
           (unsigned long)f->spsr, (unsigned long)f->sp_el0, (unsigned long)sysreg_read(far_el1));
    for (int i = 0; i < 31; i += 4) {
        printk(" ");
        for (int j = i; j < i + 4 && j < 31; j++) {
            printk(" x%-2d %016lx", j, (unsigned long)f->x[j]);
        }
        printk("\n");
    }
    if ((f->spsr & 0xf) != 0) { /* the exception came from EL1: walk the kernel stack */
        backtrace(f->x[29]);
    }
}

static volatile int keep_recursing = 1;
static volatile uint64_t *volatile bad_kernel_ptr = (volatile uint64_t *)0x10;

/* Each level keeps 512 bytes live on the stack, so 16 KiB run out after ~32 levels. */
static void __attribute__((noinline)) overflow_recurse(unsigned depth)
{
    volatile uint64_t pad[64];
    pad[0] = depth;
    if (keep_recursing) {
        overflow_recurse(depth + 1);
    }
    pad[1] = pad[0];
}

extern char boot_stack[];
static volatile uint32_t data_word = 0xd65f03c0; /* "ret", in a RW, execute-never page */

/* A user address space of one page at USER_PAGE, made current, then read directly through
 * TTBR0 as no kernel code may: with PAN this is a permission fault (the panic shows it). */
#define USER_PAGE 0x400000ull

static void read_user_page_directly(void)
{
    static struct arch_as as;
    paddr_t page = page_alloc();
    if (!page || arch_as_init(&as) != 0 || arch_as_map(&as, USER_PAGE, page, PROT_READ) != 0) {
        printk("debug_fault: no memory for a user page\n");
        return;
    }
    arch_as_activate(&as);
    uint64_t v = *(volatile uint64_t *)USER_PAGE;
    arch_as_activate(0);
    printk("debug_fault: the kernel read user page 0x%lx directly (value %lu): this CPU has no "
           "PAN\n",
           (unsigned long)USER_PAGE, (unsigned long)v);
}

/* An undefined instruction with x29 on a frame record in RAM that the linear map covers with a
 * 2 MiB block (the last page of a fresh 2 MiB run: past the image, whose pages are mapped one
 * by one), so that the panic dump's backtrace walks a block-mapped frame: it must print the
 * record's return address, 0x1234, and stop at its zero link. */
static void bad_frame_undef(void)
{
    paddr_t run = page_alloc_contig(512);
    uint64_t *frame = run ? phys_to_virt(run + 511 * PAGE_SIZE) : 0;
    if (frame) {
        frame[0] = 0;      /* the chain ends here */
        frame[1] = 0x1234; /* its return address */
    }
    __asm__ volatile("mov x29, %0\n\t.inst 0x00000000" ::"r"(frame) : "memory"); /* UDF #0 */
}

void arch_debug_fault(int kind)
{
    switch (kind) {
    case DEBUG_FAULT_BAD_FRAME:
        bad_frame_undef();
        break;
    case DEBUG_FAULT_USER_READ:
        read_user_page_directly();
        break;
    case DEBUG_FAULT_WRITE_TEXT:
        *(volatile uint32_t *)(void *)arch_debug_fault = 0; /* text is read-only */
        break;
    case DEBUG_FAULT_EXEC_DATA:
        ((void (*)(void))(uintptr_t)&data_word)(); /* data is execute-never */
        break;
    case DEBUG_FAULT_GUARD:
        (void)*(volatile uint64_t *)((uintptr_t)boot_stack - 8); /* guard: unmapped */
        break;
    case DEBUG_FAULT_DATA:
        *bad_kernel_ptr = 0; /* VA 0x10: TTBR0 maps nothing while the kernel runs alone */
        break;
    case DEBUG_FAULT_UNDEF:
        __asm__ volatile(".inst 0x00000000"); /* permanently undefined (UDF #0) */
        break;
    case DEBUG_FAULT_OVERFLOW:
        overflow_recurse(0);
        break;
    }
}
