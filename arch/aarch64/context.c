/* SPDX-License-Identifier: MIT */
/*
 * context.c — the arch side of tasks: preparing a new task's kernel context and first user
 * frame, and the user thread pointer.  The switch itself and FP/SIMD save/restore are in
 * switch.S.
 */
#include "arch.h"
#include "kernel/lib.h"
#include "kernel/vm.h"
#include "uapi/zt_syscall.h"

extern char task_entry[];

/* The first switch to this context lands in task_entry (switch.S), which calls
 * first_run(prev) with SP at `frame`, then returns to user space through that frame. */
void arch_context_init(struct arch_context *c, struct trap_frame *frame,
                       void (*first_run)(struct task *prev))
{
    memset(c, 0, sizeof(*c));
    c->x19_x28[0] = (uint64_t)first_run;
    c->lr = (uint64_t)task_entry;
    c->sp = (uint64_t)frame;
}

/* SPSR 0: return to EL0 (AArch64, SP_EL0) with D, A, I and F unmasked. */
void arch_user_frame_init(struct trap_frame *f, uint64_t pc, uint64_t sp)
{
    memset(f, 0, sizeof(*f));
    f->elr = pc;
    f->sp_el0 = sp;
    f->spsr = 0;
}

/* ID register field [shift+3:shift] (ARM ARM D17.2: ID_AA64ISAR0_EL1, ID_AA64ISAR1_EL1,
 * ID_AA64PFR0_EL1). */
static unsigned field(uint64_t reg, unsigned shift)
{
    return (unsigned)(reg >> shift) & 0xf;
}

/* Linux's arm64 HWCAP bits for the features an A72-class CPU may have.  Not set: EVTSTRM
 * (no event stream is enabled) and CPUID (EL0 reads of ID registers are not emulated). */
uint64_t arch_user_hwcap(int n)
{
    uint64_t isar0 = sysreg_read(id_aa64isar0_el1), isar1 = sysreg_read(id_aa64isar1_el1);
    uint64_t pfr0 = sysreg_read(id_aa64pfr0_el1), h = 0;
    if (n != 1) {
        return 0;
    }
    unsigned fp = field(pfr0, 16), simd = field(pfr0, 20), aes = field(isar0, 4);
    h |= fp != 0xf ? 1ull << 0 : 0;              /* FP */
    h |= simd != 0xf ? 1ull << 1 : 0;            /* ASIMD */
    h |= aes >= 1 ? 1ull << 3 : 0;               /* AES */
    h |= aes >= 2 ? 1ull << 4 : 0;               /* PMULL */
    h |= field(isar0, 8) >= 1 ? 1ull << 5 : 0;   /* SHA1 */
    h |= field(isar0, 12) >= 1 ? 1ull << 6 : 0;  /* SHA2 */
    h |= field(isar0, 16) >= 1 ? 1ull << 7 : 0;  /* CRC32 */
    h |= field(isar0, 20) >= 2 ? 1ull << 8 : 0;  /* ATOMICS */
    h |= fp == 1 ? 1ull << 9 : 0;                /* FPHP */
    h |= simd == 1 ? 1ull << 10 : 0;             /* ASIMDHP */
    h |= field(isar0, 28) >= 1 ? 1ull << 12 : 0; /* ASIMDRDM */
    h |= field(isar1, 12) >= 1 ? 1ull << 13 : 0; /* JSCVT */
    h |= field(isar1, 16) >= 1 ? 1ull << 14 : 0; /* FCMA */
    h |= field(isar1, 20) >= 1 ? 1ull << 15 : 0; /* LRCPC */
    h |= field(isar1, 0) >= 1 ? 1ull << 16 : 0;  /* DCPOP */
    h |= field(isar0, 32) >= 1 ? 1ull << 17 : 0; /* SHA3 */
    h |= field(isar0, 36) >= 1 ? 1ull << 18 : 0; /* SM3 */
    h |= field(isar0, 40) >= 1 ? 1ull << 19 : 0; /* SM4 */
    h |= field(isar0, 44) >= 1 ? 1ull << 20 : 0; /* ASIMDDP */
    h |= field(isar0, 12) >= 2 ? 1ull << 21 : 0; /* SHA512 */
    h |= field(isar0, 48) >= 1 ? 1ull << 23 : 0; /* ASIMDFHM */
    h |= field(isar1, 20) >= 2 ? 1ull << 26 : 0; /* ILRCPC */
    return h;
}

uint64_t arch_tls_read(void)
{
    return sysreg_read(tpidr_el0);
}

void arch_tls_write(uint64_t v)
{
    sysreg_write(tpidr_el0, v);
}

/*
 * Signal frames, in Linux's arm64 layout (arch/arm64/include/uapi/asm/sigcontext.h and
 * ucontext.h), so a C library's SA_SIGINFO handlers read the interrupted registers where
 * they expect them: struct rt_sigframe { siginfo (128 bytes); ucontext }, the ucontext's
 * mcontext holding fault_address, x0-x30, sp, pc, pstate and a 4096-byte record area with
 * one fpsimd_context record (magic 0x46508001, 528 bytes) and the empty terminator; then a
 * frame record {x29, x30} that x29 points to, so unwinders walk through the handler.
 * The handler runs with x0 = signal, x1 = &info, x2 = &ucontext, x30 = the restorer.
 */
#define FPSIMD_MAGIC 0x46508001u

struct sigcontext_k {
    uint64_t fault_address;
    uint64_t regs[31];
    uint64_t sp, pc, pstate;
    uint8_t reserved[4096] __attribute__((aligned(16)));
};

struct ucontext_k {
    uint64_t flags;
    uint64_t link;
    uint64_t ss_sp;
    int32_t ss_flags, pad;
    uint64_t ss_size;
    uint64_t sigmask;
    uint8_t unused[128 - 8];
    struct sigcontext_k mc __attribute__((aligned(16)));
};

struct rt_sigframe_k {
    int32_t info[32]; /* siginfo, as signal.c built it: signo, errno, code, pad, the union */
    struct ucontext_k uc;
    uint64_t frame_record[2];
};

struct fpsimd_record {
    uint32_t magic, size;
    uint32_t fpsr, fpcr;
    uint64_t vregs[64];
};

_Static_assert(sizeof(struct rt_sigframe_k) == ARCH_SIGFRAME_BYTES, "AT_MINSIGSTKSZ");
_Static_assert(__builtin_offsetof(struct rt_sigframe_k, uc.mc) == 304, "Linux layout");

/* Field at offset `off` of the frame at user address `at`. */
static int put(struct vm *vm, uint64_t at, size_t off, const void *v, size_t n)
{
    return copy_to_user(vm, at + off, v, n);
}

#define PUT(field, v)                                                                              \
    put(vm, sp, __builtin_offsetof(struct rt_sigframe_k, field), (v), sizeof(*(v)))

int arch_signal_push(struct vm *vm, struct trap_frame *f, const struct arch_sigsetup *s)
{
    uint64_t sp = (s->frame_top - sizeof(struct rt_sigframe_k)) & ~(uint64_t)15;
    struct arch_fpsimd fp;
    struct fpsimd_record rec = {FPSIMD_MAGIC, sizeof(rec), 0, 0, {0}};
    uint64_t end[2] = {0, 0}, zero = 0, pstate = f->spsr, fr[2] = {f->x[29], f->x[30]};
    arch_fpsimd_save(&fp);
    rec.fpsr = (uint32_t)fp.fpsr;
    rec.fpcr = (uint32_t)fp.fpcr;
    memcpy(rec.vregs, fp.q, sizeof(rec.vregs));
    if (s->frame_top < sizeof(struct rt_sigframe_k) + 4096 ||
        vm_check_range(vm, sp, sizeof(struct rt_sigframe_k), PROT_WRITE)) {
        return -1;
    }
    int r = put(vm, sp, __builtin_offsetof(struct rt_sigframe_k, info), s->info,
                sizeof(((struct rt_sigframe_k *)0)->info)) |
            PUT(uc.flags, &zero) | PUT(uc.link, &zero) | PUT(uc.ss_sp, &s->ss_sp) |
            PUT(uc.ss_flags, &s->ss_flags) | PUT(uc.ss_size, &s->ss_size) |
            PUT(uc.sigmask, &s->blocked) | PUT(uc.mc.fault_address, &s->fault_address) |
            PUT(uc.mc.regs, &f->x) | PUT(uc.mc.sp, &f->sp_el0) | PUT(uc.mc.pc, &f->elr) |
            PUT(uc.mc.pstate, &pstate) | PUT(uc.mc.reserved, &rec) | PUT(frame_record, &fr);
    r |= put(vm, sp, __builtin_offsetof(struct rt_sigframe_k, uc.mc.reserved) + sizeof(rec), end,
             sizeof(end));
    if (r) {
        return -1;
    }
    f->x[0] = (uint64_t)s->sig;
    f->x[1] = sp;
    f->x[2] = sp + __builtin_offsetof(struct rt_sigframe_k, uc);
    f->x[29] = sp + __builtin_offsetof(struct rt_sigframe_k, frame_record);
    f->x[30] = s->restorer;
    f->sp_el0 = sp;
    f->elr = s->handler;
    return 0;
}

#define GET(field, v)                                                                              \
    copy_from_user(vm, (v), sp + __builtin_offsetof(struct rt_sigframe_k, field), sizeof(*(v)))

int arch_signal_pop(struct vm *vm, struct trap_frame *f, struct arch_sigsetup *s)
{
    uint64_t sp = f->sp_el0, regs[31], usp, pc, pstate;
    struct fpsimd_record rec;
    if (sp & 15) {
        return -1;
    }
    int r = GET(uc.sigmask, &s->blocked) | GET(uc.ss_sp, &s->ss_sp) |
            GET(uc.ss_flags, &s->ss_flags) | GET(uc.ss_size, &s->ss_size) | GET(uc.mc.regs, &regs) |
            GET(uc.mc.sp, &usp) | GET(uc.mc.pc, &pc) | GET(uc.mc.pstate, &pstate) |
            GET(uc.mc.reserved, &rec);
    if (r || rec.magic != FPSIMD_MAGIC || rec.size != sizeof(rec)) {
        return -1;
    }
    memcpy(f->x, regs, sizeof(regs));
    f->sp_el0 = usp;
    f->elr = pc;
    f->spsr = pstate & 0xf0000000; /* only the flags: EL0t, nothing masked */
    struct arch_fpsimd fp;
    memcpy(fp.q, rec.vregs, sizeof(fp.q));
    fp.fpsr = rec.fpsr;
    fp.fpcr = rec.fpcr;
    arch_fpsimd_restore(&fp);
    return 0;
}
