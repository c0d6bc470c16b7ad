/*
 * arch.h — the only door from kernel/ to the hardware.
 *
 * kernel/ never touches a system register or a device; it calls these functions.  Two
 * implementations exist: arch/aarch64/ (the real one) and arch/host/ (a fake that lets host
 * unit tests build and run the kernel/ sources).  Each declaration carries its contract in one or
 * two lines; "this CPU" means the CPU executing the call.  Hot, tiny operations (interrupt masking,
 * the per-CPU pointer, the counter) are static inlines in <arch_inline.h>, which each arch
 * provides.
 */
#ifndef ZT_ARCH_H
#define ZT_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <arch_defs.h>

#include "uapi/zt_events.h"

struct cpu;
struct trap_frame;

/* Arch state at the start of every struct cpu (offsets used by assembly: arch_defs.h). */
struct arch_cpu {
    uint64_t overflow_sp; /* top of this CPU's emergency stack for kernel stack overflows */
    uint64_t boot_sp;     /* stack a secondary CPU starts on */
    uint64_t hwid;        /* the CPU's hardware id (aarch64: MPIDR_EL1 affinity, from the
                             device tree); printed in the boot summary */
    uint32_t id;          /* logical CPU number, 0 = boot CPU */
};

#include <arch_inline.h>
/* arch_inline.h provides, for every arch:
 *   unsigned long arch_irq_save(void)           mask IRQs on this CPU, return the old state
 *   void arch_irq_restore(unsigned long flags)  restore what arch_irq_save returned
 *   void arch_irq_enable(void), arch_irq_disable(void)
 *   bool arch_irqs_enabled(void)
 *   struct cpu *arch_this_cpu(void)             this CPU's struct cpu (set by arch_set_this_cpu)
 *   void arch_set_this_cpu(struct cpu *c)
 *   unsigned arch_this_cpu_id(void)             this CPU's logical number
 *   uint64_t arch_counter_read(void)            the free-running counter (CNTVCT_EL0)
 *   void arch_cpu_relax(void)                   hint inside spin loops
 *   void arch_wait_for_interrupt(void)          sleep until an interrupt is pending (WFI)
 */

/* ---- boot and platform ---------------------------------------------------------------- */

#define ARCH_MAX_MEM 8

struct arch_boot_info {
    unsigned ncpus;       /* CPUs usable (<= MAX_CPUS), boot CPU is 0 */
    unsigned ncpus_total; /* CPUs the device tree lists */
    uint64_t hwid[64];    /* per logical CPU (struct arch_cpu.hwid) */
    unsigned nmem;
    paddr_t mem_base[ARCH_MAX_MEM];
    uint64_t mem_size[ARCH_MAX_MEM];
    const char *cmdline;    /* /chosen/bootargs, NUL-terminated, "" if absent */
    uint64_t entry_counter; /* counter value at the boot CPU's first instruction */
    const char *protection; /* the memory protections in force, for the boot log */
};

/* Bring up the boot CPU: device tree, console, MMU, interrupt controller, timer.  Stops the
 * boot with one message if the device tree is missing or lacks a required node. */
void arch_boot_init(struct cpu *boot_cpu, uint64_t entry_counter);
const struct arch_boot_info *arch_boot_info(void);

/* Per-CPU arch init on a secondary CPU, called first thing in secondary_main. */
void arch_secondary_init(struct cpu *c);

/* Start CPU `id` at secondary_main(c).  The kernel fills c->arch.boot_sp first.
 * Returns 0, or a negative PSCI-derived error (the CPU stays off). */
int arch_cpu_start(unsigned id, struct cpu *c);

/* Power this CPU off (PSCI CPU_OFF), interrupts masked; never returns.  The kernel has moved
 * everything off it first; arch_cpu_start may start it again later, from its first
 * instruction. */
_Noreturn void arch_cpu_off(void);
/* Is CPU `id` (once started, then told to power off) off for good (PSCI AFFINITY_INFO)?
 * Only then may the memory it ran on be reused.  Any CPU; does not disturb CPU `id`. */
bool arch_cpu_is_off(unsigned id);
/* Give back what arch_cpu_start allocated for CPU `id` (its emergency stack); it is off. */
void arch_cpu_release(unsigned id, struct cpu *c);

/* Power the machine off.  Under QEMU with semihosting, `status` becomes QEMU's exit status;
 * without semihosting PSCI SYSTEM_OFF is used (status lost). */
_Noreturn void arch_poweroff(int status);

/* Stop this CPU for good (interrupts masked, WFI loop).  Used by panic on every CPU. */
_Noreturn void arch_halt_cpu(void);

/* ---- console ---------------------------------------------------------------------------- */

/* Write one byte, polling (usable with IRQs masked, in panics, before anything is set up). */
void arch_console_putc(char c);
/* The console's receive interrupt (a device interrupt number), or 0 if none. */
unsigned arch_console_irq(void);
/* Drain received bytes: call `sink(byte)` for each; acknowledges the receive interrupt. */
void arch_console_rx(void (*sink)(char c));

/* ---- interrupts ---------------------------------------------------------------------- */

/*
 * Interrupt numbers are the arch's own (GIC INTIDs on aarch64; arch_defs.h gives the ranges):
 * kernel/ never computes with them.  It learns what an interrupt is from the class the arch
 * passes to irq_dispatch() (kernel/irq.h): IRQ_CLASS_IPI n (n = the IPI's reason,
 * 0..ARCH_NR_IPIS-1), IRQ_CLASS_TIMER (the local timer), IRQ_CLASS_DEVICE n (device interrupt
 * number n, ARCH_IRQ_FIRST_DEVICE <= n < ARCH_NR_IRQS, as the device tree names it).
 */
#define IRQ_CLASS_ENUM_(n, name, str) IRQ_CLASS_##name = n,
enum irq_class { ZT_IRQ_CLASSES(IRQ_CLASS_ENUM_) IRQ_NR_CLASSES };
#undef IRQ_CLASS_ENUM_

/* Enable or disable delivery of interrupt `irq`: a per-CPU one (the timer) on this CPU only,
 * a device interrupt globally. */
void arch_irq_set_enabled(unsigned irq, bool enabled);
/* Is `irq` enabled for CPU `cpu`?  Reads the controller without disturbing that CPU. */
bool arch_irq_is_enabled(unsigned cpu, unsigned irq);
/* Route device interrupt `irq` to CPU `cpu`.  Returns 0 or -EINVAL. */
int arch_irq_route(unsigned irq, unsigned cpu);
/* The CPU a device interrupt is routed to, or -1 if it is not routed to one CPU. */
int arch_irq_route_of(unsigned irq);
/* Accept (or refuse) IPI `ipi` (0..ARCH_NR_IPIS-1) on this CPU. */
void arch_ipi_set_enabled(unsigned ipi, bool enabled);
/* Send IPI `ipi` to CPU `cpu`. */
void arch_send_ipi(unsigned cpu, unsigned ipi);
/* isolstat: fill the interrupt part of `out` for CPU `cpu` (which IPIs and per-CPU
 * interrupts it accepts, which device interrupts are routed to it and enabled, the timer's
 * number), read from the controller without disturbing that CPU. */
struct zt_isol_audit;
void arch_irq_audit(unsigned cpu, struct zt_isol_audit *out);

/* ---- timer --------------------------------------------------------------------------------- */

/* Counter frequency in Hz (CNTFRQ_EL0). */
uint64_t arch_counter_freq(void);
/* Arm this CPU's one-shot timer to fire when the counter reaches `deadline` (absolute).
 * A deadline in the past fires at once.  Replaces any earlier deadline. */
void arch_timer_set_deadline(uint64_t deadline);
/* Disarm this CPU's timer: no timer interrupt until the next arch_timer_set_deadline. */
void arch_timer_disarm(void);
/* The local timer's interrupt number (what irq_dispatch reports with IRQ_CLASS_TIMER). */
unsigned arch_timer_irq(void);

/* ---- kernel memory --------------------------------------------------------------------- */

/* Fill the page at kernel address `page` (page-aligned) with zeros, as fast as the CPU
 * can (DC ZVA where allowed). */
void arch_zero_page(void *page);
/* Map one RW, execute-never kernel page at `va` (the stack window).  0 or -1 (no memory). */
int arch_kmap_page(uint64_t va, paddr_t pa);
/* Unmap it (broadcast TLB invalidate, no IPI); returns the page that was mapped, or 0. */
paddr_t arch_kunmap_page(uint64_t va);
bool arch_kva_is_mapped(uint64_t va);
/* Allocate now every translation table that mapping pages in [va, va+len) will need, so
 * later arch_kmap_page calls there allocate nothing (boot only).  0 or -ENOMEM. */
int arch_kmap_prepare(uint64_t va, uint64_t len);

/* ---- tasks: kernel context, user registers, FP/SIMD ---------------------------------------- */

/* Each arch defines, in its arch_defs.h: struct trap_frame (the registers saved on every
 * exception, read through the arch_frame_* accessors only), struct arch_context (what a task
 * switched out in the kernel keeps) and struct arch_fpsimd (user floating-point state). */

/* Switch from the running context to `next`; returns in next's context with the value of
 * `prev_task` that was passed by whichever switch resumed it.  IRQs must be masked. */
struct task *arch_context_switch(struct arch_context *prev, struct arch_context *next,
                                 struct task *prev_task);
/* Prepare a context that, when switched to, calls first_run(prev_task) on the stack below
 * `frame` and then returns to user space with the registers in *frame. */
void arch_context_init(struct arch_context *c, struct trap_frame *frame,
                       void (*first_run)(struct task *prev));
void arch_fpsimd_save(struct arch_fpsimd *s);
void arch_fpsimd_restore(const struct arch_fpsimd *s);
/* The user thread pointer (TPIDR_EL0). */
uint64_t arch_tls_read(void);
void arch_tls_write(uint64_t v);
/* A user frame that starts at `pc` with stack pointer `sp`, all other registers 0. */
void arch_user_frame_init(struct trap_frame *f, uint64_t pc, uint64_t sp);

/* Push a signal frame for `sig` on the user stack of frame f (address space vm) and set f
 * to enter `handler` with the frame as argument and `restorer` as return address.
 * 0, or -1 if the user stack cannot hold it. */
struct vm;
int arch_signal_push(struct vm *vm, struct trap_frame *f, int sig, uint64_t handler,
                     uint64_t restorer, uint64_t blocked);
/* rt_sigreturn: restore f from the frame at the user SP.  0, or -1 if it is not a frame. */
int arch_signal_pop(struct vm *vm, struct trap_frame *f, uint64_t *blocked);

/* ---- user address spaces ----------------------------------------------------------------- */

struct arch_as {
    paddr_t root;  /* top-level table */
    uint16_t asid; /* address-space id tagging this space's TLB entries */
};

/* Create an empty address space.  0, -ENOMEM, or -EAGAIN when no ASID is free. */
int arch_as_init(struct arch_as *as);
/* Free its tables (every page must already be unmapped) and invalidate its TLB entries on
 * all CPUs (broadcast TLBI, no IPI).  The space must not be active on any CPU. */
void arch_as_destroy(struct arch_as *as);
/* Map user page `va` to `pa` with PROT_READ/WRITE/EXEC bits (zt_syscall.h).  0 or -ENOMEM. */
int arch_as_map(struct arch_as *as, uint64_t va, paddr_t pa, unsigned prot);
/* Unmap user page `va`: returns the page that was mapped there, or 0. */
paddr_t arch_as_unmap(struct arch_as *as, uint64_t va);
/* Unmap every user page in [start, end) (page-aligned) and call freed(pa, ctx) for each page
 * that was mapped, once no CPU can reach it any more (broadcast TLB invalidation, no IPI:
 * per page for a few pages, for the whole address space beyond). */
void arch_as_unmap_range(struct arch_as *as, uint64_t start, uint64_t end,
                         void (*freed)(paddr_t pa, void *ctx), void *ctx);
/* Free the translation tables of `as` that served only [start, end), now that nothing is
 * mapped there (their cached walks are invalidated by broadcast TLBI: no IPI). */
void arch_as_trim(struct arch_as *as, uint64_t start, uint64_t end);
/* Software walk: the page mapped at `va` (0 if none) and its PROT_ bits in *prot (0 for a
 * PROT_NONE page: mapped, but no access from user space nor through the kernel's copies). */
paddr_t arch_as_lookup(const struct arch_as *as, uint64_t va, unsigned *prot);
/* Make `as` this CPU's user address space (NULL: none). */
void arch_as_activate(const struct arch_as *as);
/* Make instructions the kernel wrote at kernel address `kva` (len bytes, e.g. a user page
 * seen through the linear map) visible to instruction fetch on every CPU. */
void arch_sync_icache(const void *kva, size_t len);

/* ---- synchronous exceptions ----------------------------------------------------------- */

/*
 * The arch decodes every synchronous exception from user space into a generic kind
 * (uapi/zt_events.h) and hands it over: SYNC_SYSCALL to syscall_dispatch(), every other kind
 * to user_exception() (kernel/entry.h), which maps it to a signal and a report.
 */
#define SYNC_ENUM_(n, name, str) SYNC_##name = n,
enum sync_kind { ZT_SYNC_KINDS(SYNC_ENUM_) SYNC_NR_KINDS };
#undef SYNC_ENUM_

struct exc_info {
    enum sync_kind kind;
    uint64_t pc;      /* the instruction that took it */
    uint64_t addr;    /* faults and alignment faults: the address at fault (the SP for
                         SYNC_SP_ALIGN); otherwise the pc */
    unsigned access;  /* faults: PROT_READ, PROT_WRITE or PROT_EXEC (uapi); otherwise 0 */
    const char *name; /* the arch's own name for it, for reports ("data abort (lower EL)") */
};

/* ---- diagnostics --------------------------------------------------------------------------- */

/* The return addresses of the calling code path (frame-pointer walk), up to `max`, from
 * the caller's caller outward; returns how many were stored. */
int arch_backtrace(uint64_t *out, int max);
/* Print the register dump of an exception frame (used by panic). */
void arch_dump_frame(const struct trap_frame *f);
/* Deliberately fault in the kernel (debug_fault=, enum debug_fault in bootargs.h): 1 data
 * abort, 2 undefined instruction, 3 stack overflow, 4 store to text, 5 execute data,
 * 6 read the boot stack's guard page. */
void arch_debug_fault(int kind);

#endif
